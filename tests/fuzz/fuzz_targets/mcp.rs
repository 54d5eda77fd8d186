//! A hostile MCP server, a careless model and host, from bytes (`polyweave_tests::mcp_hostile`):
//! any lines, unknown ids, wrong shapes, responses after cancel, requests from the server,
//! the transport closing. No panic, one `TOOL_RESULT` per model call, every line the client
//! writes one compact JSON value.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    polyweave_tests::mcp_hostile::run(data);
});
