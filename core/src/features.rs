//! Which code the provider features turn on: the one place that lists them.

/// Items compiled only when the build has at least one provider's decoder.
macro_rules! with_decoders {
    ($($item:item)*) => {
        $(
            #[cfg(any(
                feature = "openai-chat",
                feature = "openai-responses",
                feature = "anthropic",
                feature = "gemini",
                feature = "ollama"
            ))]
            $item
        )*
    };
}
