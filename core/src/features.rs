//! Which code the provider and MCP features turn on. Each provider's feature turns on
//! `_providers` (Cargo.toml), so no list of the five is repeated here.

/// Items compiled only when the build writes frames or lines with counted writers: a
/// provider's decoder or the MCP client.
macro_rules! with_counted_writers {
    ($($item:item)*) => {
        $(
            #[cfg(any(feature = "_providers", feature = "mcp"))]
            $item
        )*
    };
}
