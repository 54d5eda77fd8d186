//! MCP over Streamable HTTP (SPEC §9.11), sans-IO: the client does no HTTP itself. For each
//! message it gives the host a POST to make (the body and the headers the revision asks
//! for), and reads back each response — its status, content type and session header, then
//! its body in pieces split anywhere (one JSON message, or events through the crate's one
//! SSE reader, or nothing for a `202`). Every request has its own response stream, so a
//! stream that breaks fails exactly the call it carried, and a call is never sent twice.
//!
//! # Methods by role
//!
//! - Set-up: [`McpClient::new_http`](super::McpClient::new_http) with one [`McpStream`] per response read at once.
//! - Effects: [`McpClient::poll_request`](super::McpClient::poll_request) (a POST to make, or a stream to close).
//! - Inputs: [`McpClient::handle_response`](super::McpClient::handle_response) (status and headers),
//!   [`McpClient::feed_response`](super::McpClient::feed_response) (body bytes), [`McpClient::handle_response_end`](super::McpClient::handle_response_end).
//!
//! The rest is the line client's: `start`, `poll_event`, `poll_frame`, `handle_frame`,
//! `poll_timeout`, `handle_timeout`.

mod headers;
mod streams;

pub use headers::SESSION_CAP;
pub(crate) use streams::Http;
pub use streams::{McpPost, McpStream, McpStreamError};
