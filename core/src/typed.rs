//! Typed tool data for Rust tools, through `serde-json-core` (no allocation).
//!
//! ```
//! use polyweave_tool_adapter::typed;
//! use serde::{Deserialize, Serialize};
//!
//! #[derive(Deserialize)]
//! struct Args<'a> { city: &'a str, days: u8 }
//! #[derive(Serialize)]
//! struct Forecast { high: i16, low: i16 }
//!
//! let args: Args = typed::parse_args(br#"{"city":"Oslo","days":2}"#).unwrap();
//! assert_eq!((args.city, args.days), ("Oslo", 2));
//!
//! let mut out = [0u8; 32];
//! let n = typed::write_result(&Forecast { high: 9, low: -2 }, &mut out).unwrap();
//! assert_eq!(&out[..n], br#"{"high":9,"low":-2}"#);
//! ```

use serde::{Deserialize, Serialize};

/// Why typed args or results could not be converted.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum TypedError {
    /// The args do not match the type (or are not JSON).
    Args(serde_json_core::de::Error),
    /// The args had bytes after the value.
    TrailingArgs,
    /// The result did not fit the buffer.
    ResultTooLarge,
}

impl core::fmt::Display for TypedError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            TypedError::Args(e) => write!(f, "bad args: {e}"),
            TypedError::TrailingArgs => f.write_str("bad args: trailing data"),
            TypedError::ResultTooLarge => f.write_str("result too large for its buffer"),
        }
    }
}

/// Deserialises a call's raw args into `T` (strings borrow from `args` when unescaped).
pub fn parse_args<'a, T: Deserialize<'a>>(args: &'a [u8]) -> Result<T, TypedError> {
    let (value, used) = serde_json_core::from_slice::<T>(args).map_err(TypedError::Args)?;
    if crate::json::skip_ws(args, used) != args.len() {
        return Err(TypedError::TrailingArgs);
    }
    Ok(value)
}

/// Serialises `value` as JSON into `out`, returning the length.
pub fn write_result<T: Serialize + ?Sized>(value: &T, out: &mut [u8]) -> Result<usize, TypedError> {
    serde_json_core::to_slice(value, out).map_err(|_| TypedError::ResultTooLarge)
}
