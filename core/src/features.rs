//! Which code the provider and MCP features turn on: the one place that lists them.

/// Items compiled only when the build writes frames or lines with counted writers: a
/// provider's decoder or the MCP client.
macro_rules! with_counted_writers {
    ($($item:item)*) => {
        $(
            #[cfg(any(
                feature = "openai-chat",
                feature = "openai-responses",
                feature = "anthropic",
                feature = "gemini",
                feature = "ollama",
                feature = "mcp"
            ))]
            $item
        )*
    };
}
