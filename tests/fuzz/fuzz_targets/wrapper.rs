//! Sequences of operations from bytes through the wrapper and the reference model of
//! `tests/tests/model.rs` (`polyweave_tests::model`): after every step they agree on every
//! frame, hook event, status, pending count, trace and deadline, and the model-free
//! invariants hold (one `TOOL_RESULT` per call, held `END`s released once and in order,
//! every frame one JSON line, nothing but results and releases after abort).
#![no_main]

use libfuzzer_sys::fuzz_target;
use polyweave_tests::model::{case_from_bytes, run};

fuzz_target!(|data: &[u8]| {
    run(&case_from_bytes(data));
});
