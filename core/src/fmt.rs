//! Logging shim: `defmt` when the feature is on, nothing otherwise.
//!
//! The macros take `defmt` format strings; without the feature their arguments
//! are still type-checked (by reference) but no code is emitted.

#![allow(unused_macros)]

#[cfg(feature = "defmt")]
macro_rules! debug {
    ($($arg:tt)*) => { ::defmt::debug!($($arg)*) };
}

#[cfg(not(feature = "defmt"))]
macro_rules! debug {
    ($fmt:literal $(, $arg:expr)* $(,)?) => {{ $( let _ = &$arg; )* }};
}
