//! Typed tool data for Rust tools, through `serde-json-core` (no allocation).
//!
//! ```
//! use polyweave_tool_adapter::wrapper::typed;
//! use serde::{Deserialize, Serialize};
//!
//! #[derive(Deserialize)]
//! struct Args { city: heapless::String<32>, days: u8 }
//! #[derive(Serialize)]
//! struct Forecast { high: i16, low: i16 }
//!
//! let args: Args = typed::parse_args(br#"{"city":"S\u00e3o Paulo","days":2}"#).unwrap();
//! assert_eq!((args.city.as_str(), args.days), ("São Paulo", 2));
//!
//! let mut out = [0u8; 32];
//! let n = typed::write_result(&Forecast { high: 9, low: -2 }, &mut out).unwrap();
//! assert_eq!(&out[..n], br#"{"high":9,"low":-2}"#);
//! ```

use serde::{Deserialize, Serialize};

/// Why typed args or results could not be converted.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum TypedError {
    /// The args do not match the type, are not JSON, or have bytes after the value.
    Args(serde_json_core::de::Error),
    /// The result did not fit the buffer.
    ResultTooLarge,
}

/// Bytes [`parse_args`] can unescape in one string.
pub const UNESCAPE_LEN: usize = 256;

impl core::error::Error for TypedError {}

impl core::fmt::Display for TypedError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            TypedError::Args(e) => write!(f, "bad args: {e}"),
            TypedError::ResultTooLarge => f.write_str("result too large for its buffer"),
        }
    }
}

/// Deserialises a call's raw args into `T`, resolving escapes in strings of up to [`UNESCAPE_LEN`] bytes.
///
/// A `&str` field borrows from `args`, so it only takes strings without escapes;
/// use `heapless::String<N>` for text that may be escaped (`"S\u00e3o"`).
pub fn parse_args<'a, T: Deserialize<'a>>(args: &'a [u8]) -> Result<T, TypedError> {
    parse_args_with(args, &mut [0u8; UNESCAPE_LEN])
}

/// [`parse_args`] with the caller's buffer for unescaping (one string at a time).
pub fn parse_args_with<'a, T: Deserialize<'a>>(
    args: &'a [u8],
    unescape: &mut [u8],
) -> Result<T, TypedError> {
    // serde-json-core refuses bytes after the value itself (TrailingCharacters).
    let (value, _) =
        serde_json_core::from_slice_escaped::<T>(args, unescape).map_err(TypedError::Args)?;
    Ok(value)
}

/// Serialises `value` as JSON into `out`, returning the length.
pub fn write_result<T: Serialize + ?Sized>(value: &T, out: &mut [u8]) -> Result<usize, TypedError> {
    serde_json_core::to_slice(value, out).map_err(|_| TypedError::ResultTooLarge)
}
