//! A hostile MCP server over Streamable HTTP, from bytes (`polyweave_tests::mcp_http_hostile`):
//! any status, content type and body, split anywhere, streams served in any order, cancels,
//! POSTs with no response. No panic, one result per call, every POST body compact JSON and
//! every header line well formed.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    polyweave_tests::mcp_http_hostile::run(data);
});
