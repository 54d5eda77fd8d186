//! The gemini stream decoder on arbitrary bodies, then on a recorded body of its
//! own (the smallest with a call) by the same decoder; `decode_common.rs` has the checks.
#![no_main]

mod decode_common;

use libfuzzer_sys::fuzz_target;
use polyweave_tool_adapter::Provider;

const RECORDED: &[u8] =
    include_bytes!("../../data/provider-streams/gemini/vercel-ai-google-tool-call.body");

fuzz_target!(|data: &[u8]| {
    decode_common::run(Provider::Gemini, RECORDED, data);
});
