//! A careless host and model for the conversation and the request writer, from bytes
//! (`polyweave_tests::request_hostile`): no panic, memory never exceeded, a refusal changes
//! nothing, every body valid JSON with every call beside its result, the same bytes whatever
//! the buffer size.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    polyweave_tests::request_hostile::run(data);
});
