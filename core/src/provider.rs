//! Leaf: the model APIs a decoder reads and an encoder writes for (SPEC §8), shared by
//! [`decode`](crate::decode) and [`encode`](crate::encode).

/// The model APIs the decoders read and the encoders write for (one cargo feature each).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum Provider {
    /// OpenAI Chat Completions SSE, and every OpenAI-compatible server.
    #[cfg(feature = "openai-chat")]
    OpenAiChat,
    /// OpenAI Responses API SSE.
    #[cfg(feature = "openai-responses")]
    OpenAiResponses,
    /// Anthropic Messages SSE.
    #[cfg(feature = "anthropic")]
    Anthropic,
    /// Gemini / Vertex `streamGenerateContent?alt=sse`.
    #[cfg(feature = "gemini")]
    Gemini,
    /// Ollama `/api/chat` NDJSON.
    #[cfg(feature = "ollama")]
    Ollama,
}

impl Provider {
    /// Every provider this build has.
    pub const ALL: &'static [Provider] = &[
        #[cfg(feature = "openai-chat")]
        Provider::OpenAiChat,
        #[cfg(feature = "openai-responses")]
        Provider::OpenAiResponses,
        #[cfg(feature = "anthropic")]
        Provider::Anthropic,
        #[cfg(feature = "gemini")]
        Provider::Gemini,
        #[cfg(feature = "ollama")]
        Provider::Ollama,
    ];

    /// The provider's name in SPEC §8 (`openai-chat`, `openai-responses`, …).
    pub const fn name(self) -> &'static str {
        match self {
            #[cfg(feature = "openai-chat")]
            Provider::OpenAiChat => "openai-chat",
            #[cfg(feature = "openai-responses")]
            Provider::OpenAiResponses => "openai-responses",
            #[cfg(feature = "anthropic")]
            Provider::Anthropic => "anthropic",
            #[cfg(feature = "gemini")]
            Provider::Gemini => "gemini",
            #[cfg(feature = "ollama")]
            Provider::Ollama => "ollama",
        }
    }

    /// The provider with this name, when this build has it.
    pub fn from_name(name: &[u8]) -> Option<Self> {
        Self::ALL
            .iter()
            .copied()
            .find(|p| p.name().as_bytes() == name)
    }
}
