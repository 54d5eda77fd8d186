//! The parts of a `std` host of the core's MCP client that `polyweave-mcp` and
//! `polyweave-agent` share: the server as a child over its stdio or at a Streamable HTTP
//! endpoint, the byte pumps, the loop
//! between the [`McpClient`](polyweave_tool_adapter::mcp::McpClient) and a
//! [`Wrapper`](polyweave_tool_adapter::Wrapper), the listed tools' schemas read for
//! validation, and the log and event lines.

pub mod host;
pub mod http;
pub mod lines;
pub mod pipes;
pub mod schemas;
