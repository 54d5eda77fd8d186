//! Asking the model (SPEC §10): tool declarations, the conversation so far and the
//! request body, in the provider's shape, in memory the host hands in.
//!
//! The host keeps a [`Conversation`] in a buffer of its own: system text, user texts, the
//! decoder's frames of each response (text, reasoning, the provider's `STATE`, calls) and
//! the wrapper's `TOOL_RESULT`s. When the buffer runs short, reasoning and provider state of
//! older turns go first, then whole entries, oldest first: a call is never kept without its
//! result, nor a result without its call. A [`Request`] writes the body from it with the
//! [`Declaration`]s and [`RequestOptions`], into buffers of any size, its length known
//! before the first byte.
//!
//! ```text
//! decode::Decoder ─ frames ─┐      wrapper::Wrapper ─ TOOL_RESULT ─┐
//!                           ▼                                      ▼
//!              Conversation::push_frame ◄──────────────────────────┘
//!                           │
//!   Declaration[] ─► Request::new(&conversation, provider, &options, &declarations)
//!                           │  len() first, then write(&mut buf) until 0
//!                           ▼
//!                    the HTTP request body
//! ```

mod body;
mod conversation;
mod declare;
mod seen;
mod store;

pub use body::{
    gemini_path, Request, RequestError, RequestOptions, ToolChoice, DEFAULT_MAX_TOKENS,
};
pub use conversation::{Conversation, ConversationError, Pushed};
pub use declare::{find_declaration, model_name_of, Declaration, DeclarationError, MAX_NAME};
