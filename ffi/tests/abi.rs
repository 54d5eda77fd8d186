//! Rust-side checks of the C ABI for cases C code cannot express without
//! undefined behaviour of its own: misaligned typed pointers and aliasing
//! out-pointers.

use core::ptr;

use polyweave_tool_adapter_ffi::*;

#[test]
fn misaligned_out_pointer_is_refused() {
    let mut words = [0usize; 3];
    let misaligned = words
        .as_mut_ptr()
        .cast::<u8>()
        .wrapping_add(1)
        .cast::<usize>();
    let json = b"[1]";
    // SAFETY: the pointer is inside `words` with room for one usize; the library checks alignment
    // before writing.
    let rc = unsafe { pw_json_validate(json.as_ptr(), json.len(), 32, misaligned) };
    assert_eq!(rc, pw_result::PW_STORAGE_MISALIGNED);
    assert_eq!(words, [0; 3]);
}

#[test]
fn out_pointer_inside_input_is_refused() {
    let mut buf = [b' '; 32];
    buf[0] = b'[';
    buf[1] = b']';
    let base = buf.as_mut_ptr();
    let inside = base.wrapping_add(8).cast::<usize>();
    // SAFETY: both regions lie in `buf`; the library refuses the overlap before touching either.
    let rc = unsafe { pw_json_validate(base, buf.len(), 32, inside) };
    assert_eq!(rc, pw_result::PW_STORAGE_OVERLAP);
    assert_eq!(&buf[8..16], &[b' '; 8]);
}

#[repr(C, align(16))]
struct Mem([u8; PW_LINE_SPLITTER_SIZE_BOUND]);

#[test]
fn framer_state_and_outputs_must_not_alias() {
    assert!(pw_line_splitter_size() <= PW_LINE_SPLITTER_SIZE_BOUND);
    assert!(pw_line_splitter_align() <= PW_MAX_ALIGN);
    let mut mem = Mem([0; PW_LINE_SPLITTER_SIZE_BOUND]);
    let mut line_buf = [0u8; 16];
    // Raw pointers taken once: the framer borrows both blocks from here on.
    let (mem_ptr, buf_ptr) = (mem.0.as_mut_ptr(), line_buf.as_mut_ptr());
    let mut f: *mut pw_line_splitter = ptr::null_mut();
    // SAFETY: `mem` and `line_buf` outlive every use of the framer below.
    let rc = unsafe {
        pw_line_splitter_init(
            mem_ptr.cast(),
            PW_LINE_SPLITTER_SIZE_BOUND,
            buf_ptr,
            16,
            &mut f,
        )
    };
    assert_eq!(rc, pw_result::PW_OK);
    assert_eq!(f.cast::<u8>(), mem_ptr);

    let mut consumed = 0usize;
    // SAFETY: `f` is live; the input is a local slice.
    let rc = unsafe { pw_line_splitter_feed(f, b"{}\n".as_ptr(), 3, &mut consumed) };
    assert_eq!((rc, consumed), (pw_result::PW_OK, 3));

    // An out-pointer inside the line buffer would let the library overwrite the line.
    let mut line: *const u8 = ptr::null();
    let len_in_buf = buf_ptr.wrapping_add(8).cast::<usize>();
    // SAFETY: refused before anything is written.
    let rc = unsafe { pw_line_splitter_next_line(f, &mut line, len_in_buf) };
    assert_eq!(rc, pw_result::PW_STORAGE_OVERLAP);
    // An out-pointer inside the framer state.
    let len_in_state = mem_ptr.wrapping_add(8).cast::<usize>();
    // SAFETY: refused before anything is written.
    let rc = unsafe { pw_line_splitter_next_line(f, &mut line, len_in_state) };
    assert_eq!(rc, pw_result::PW_STORAGE_OVERLAP);

    let mut len = 0usize;
    // SAFETY: `f` is live, outputs are locals.
    let rc = unsafe { pw_line_splitter_next_line(f, &mut line, &mut len) };
    assert_eq!((rc, len), (pw_result::PW_OK, 2));
    assert_eq!(line, buf_ptr.cast_const());

    // A misaligned framer pointer.
    let bad = f.cast::<u8>().wrapping_add(1).cast::<pw_line_splitter>();
    // SAFETY: refused before it is dereferenced.
    let rc = unsafe { pw_line_splitter_next_line(bad, &mut line, &mut len) };
    assert_eq!(rc, pw_result::PW_STORAGE_MISALIGNED);
}

#[test]
fn every_code_has_a_short_message() {
    let mut seen = Vec::new();
    let mut unknown = Vec::new();
    for code in 0..1000u32 {
        let mut buf = [0u8; 64];
        let mut n = 0usize;
        // SAFETY: local buffers.
        let rc = unsafe { pw_result_text(code, buf.as_mut_ptr(), buf.len(), &mut n) };
        assert_eq!(rc, pw_result::PW_OK);
        let text = std::str::from_utf8(&buf[..n]).unwrap().to_owned();
        assert!(text.is_ascii());
        if text != "unknown pw_result code" {
            assert!(!seen.contains(&text), "{code}: {text}");
            seen.push(text);
        } else {
            unknown.push(code);
        }
    }
    assert_eq!(seen.len(), 74);
    // The retired numbers stay unknown: never reused.
    for retired in [9, 200, 304, 308, 502] {
        assert!(unknown.contains(&retired), "{retired} is live again");
    }
}

#[test]
fn version_matches_the_crate() {
    // SAFETY: a static NUL-terminated string.
    let v = unsafe { core::ffi::CStr::from_ptr(pw_version()) };
    assert_eq!(
        v.to_str().unwrap(),
        concat!("polyweave-tool-adapter-ffi/", env!("CARGO_PKG_VERSION"))
    );
}

/// The result-class predicates bindings use instead of number ranges: exactly these codes.
#[test]
fn result_class_predicates_name_exactly_their_codes() {
    use polyweave_tool_adapter_ffi::{pw_result, pw_result_is_malformed, pw_result_is_not_waiting};
    let malformed = [100, 101, 102, 103, 104, 105, 107];
    let not_waiting = [309, 310, 311, 312, 313, 314];
    for code in 0..1000u32 {
        assert_eq!(
            pw_result_is_malformed(code) == 1,
            malformed.contains(&code),
            "{code}"
        );
        assert_eq!(
            pw_result_is_not_waiting(code) == 1,
            not_waiting.contains(&code),
            "{code}"
        );
    }
    assert_eq!(pw_result::PW_WRONG_FRAME_KIND as u32, 106);
    assert_eq!(pw_result::PW_CALL_FOREIGN as u32, 315);
    assert_eq!(pw_result_is_malformed(u32::MAX), 0);
}
