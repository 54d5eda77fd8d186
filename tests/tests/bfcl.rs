//! The Berkeley Function Calling Leaderboard ground truth (3,302 real tool calls)
//! through the frame reader, the canonical encoder and the NDJSON framer.

use polyweave_tests::{
    bfcl_bytes, ndjson_lines, XorShift, BFCL_LINES, BFCL_LONGEST_LINE, BFCL_SHORTEST_LINE,
};
use polyweave_tool_adapter::frame::{Frame, FrameKind};
use polyweave_tool_adapter::frame::{LineSplitter, LineTooLong};
use polyweave_tool_adapter::internals::OutFrame;

fn json(bytes: &[u8]) -> serde_json::Value {
    serde_json::from_slice(bytes).unwrap_or_else(|e| {
        panic!(
            "serde_json rejects {:?}: {e}",
            String::from_utf8_lossy(bytes)
        )
    })
}

#[test]
fn corpus_shape() {
    let file = bfcl_bytes();
    assert_eq!(file.len(), 563_090);
    assert_eq!(file.last(), Some(&b'\n'));
    let lines: Vec<&[u8]> = ndjson_lines(&file).collect();
    assert_eq!(lines.len(), BFCL_LINES);
    assert_eq!(
        lines.iter().map(|l| l.len()).min(),
        Some(BFCL_SHORTEST_LINE)
    );
    assert_eq!(lines.iter().map(|l| l.len()).max(), Some(BFCL_LONGEST_LINE));
    assert!(lines.iter().all(|l| !l.is_empty() && !l.contains(&b'\r')));
}

#[test]
fn every_call_decodes_and_re_encodes() {
    let file = bfcl_bytes();
    let mut count = 0;
    let mut escaped_args = 0;
    for (i, line) in ndjson_lines(&file).enumerate() {
        let frame =
            Frame::parse_validated(line, 32).unwrap_or_else(|e| panic!("line {}: {e}", i + 1));
        assert_eq!(frame.kind(), FrameKind::ToolCall, "line {}", i + 1);
        assert!(frame.is_validated());
        let call = frame.tool_call().expect("tool_call");
        assert!(call.content_is_object, "line {}", i + 1);

        // The lazy reader finds the same kind and fields.
        let lazy = Frame::parse(line).expect("parse");
        assert_eq!(lazy.kind(), FrameKind::ToolCall);
        assert!(!lazy.is_validated());
        assert_eq!(lazy.tool_call(), Ok(call), "line {}", i + 1);

        let mut id_buf = [0u8; 128];
        let mut name_buf = [0u8; 128];
        let id = call
            .id
            .map(|id| id.decode_into(&mut id_buf).expect("id fits"));
        let name = call
            .name
            .expect("every BFCL call has a name")
            .decode_into(&mut name_buf)
            .expect("name fits");
        assert!(id.is_some(), "line {}: every BFCL call has an id", i + 1);
        if call.args.contains(&b'\\') {
            escaped_args += 1;
        }

        let out_frame = OutFrame::ToolCall {
            id: id.map(str::as_bytes),
            name: name.as_bytes(),
            args: call.args,
        };
        let mut out = [0u8; 2048];
        let n = out_frame.encode(&mut out).expect("fits");
        assert_eq!(n, out_frame.encoded_len());
        let out = &out[..n];

        // Same JSON value, and — the corpus being canonical already — the same bytes.
        assert_eq!(json(out), json(line), "line {}", i + 1);
        assert_eq!(out, line, "line {}", i + 1);
        // Args are copied byte for byte.
        let again = Frame::parse_validated(out, 32).expect("own output");
        assert_eq!(again.tool_call().expect("tool_call").args, call.args);
        count += 1;
    }
    assert_eq!(count, BFCL_LINES);
    assert_eq!(escaped_args, 12);
}

/// One framer run: feeds `file` in chunks whose sizes come from `next_size`,
/// returning every line (`Ok`) or over-long report (`Err(len)`) in order.
fn run_framer(
    file: &[u8],
    capacity: usize,
    mut next_size: impl FnMut() -> usize,
) -> Vec<Result<Vec<u8>, usize>> {
    let mut storage = vec![0u8; capacity];
    let mut framer = LineSplitter::new(&mut storage);
    assert_eq!(framer.capacity(), capacity);
    let mut got = Vec::new();
    let mut pos = 0;
    while pos < file.len() {
        let size = next_size().min(file.len() - pos);
        assert!(size >= 1);
        let mut chunk = &file[pos..pos + size];
        pos += size;
        while !chunk.is_empty() {
            let used = framer.feed(chunk);
            assert!(used >= 1, "feed made no progress with nothing ready");
            chunk = &chunk[used..];
            while let Some(item) = framer.next_line() {
                got.push(item.map(<[u8]>::to_vec).map_err(|LineTooLong { len }| len));
            }
        }
    }
    assert_eq!(framer.finish(), None, "the file ends with a newline");
    assert_eq!(framer.buffered(), 0);
    got
}

fn expected(file: &[u8], capacity: usize) -> Vec<Result<Vec<u8>, usize>> {
    ndjson_lines(file)
        .map(|l| {
            if l.len() > capacity {
                Err(l.len())
            } else {
                Ok(l.to_vec())
            }
        })
        .collect()
}

#[test]
fn framer_yields_every_line_in_any_chunking() {
    let file = bfcl_bytes();
    let want = expected(&file, BFCL_LONGEST_LINE);
    assert_eq!(want.len(), BFCL_LINES);
    assert!(want.iter().all(Result::is_ok));

    // One byte at a time, the whole file at once, and pseudo-random chunk sizes.
    assert_eq!(run_framer(&file, BFCL_LONGEST_LINE, || 1), want);
    assert_eq!(run_framer(&file, BFCL_LONGEST_LINE, || file.len()), want);
    for seed in [1, 7, 42, 0xDEAD_BEEF, 0x1234_5678_9ABC_DEF0] {
        for max in [2, 13, 255, 1024, 4096, 65_536] {
            let mut rng = XorShift::new(seed);
            let got = run_framer(&file, BFCL_LONGEST_LINE, || rng.in_1_to(max));
            assert_eq!(got.len(), BFCL_LINES, "seed {seed} max {max}");
            assert!(got == want, "seed {seed} max {max}: lines differ");
        }
    }
}

#[test]
fn framer_reports_each_over_long_line_once() {
    let file = bfcl_bytes();
    // (capacity, how many lines are longer than it)
    for (capacity, too_long) in [
        (BFCL_LONGEST_LINE - 1, 1),
        (700, 2),
        (500, 35),
        (300, 64),
        (200, 428),
    ] {
        let want = expected(&file, capacity);
        assert_eq!(want.len(), BFCL_LINES);
        assert_eq!(
            want.iter().filter(|r| r.is_err()).count(),
            too_long,
            "capacity {capacity}"
        );
        assert_eq!(
            run_framer(&file, capacity, || 1),
            want,
            "capacity {capacity}"
        );
        assert_eq!(
            run_framer(&file, capacity, || file.len()),
            want,
            "capacity {capacity}"
        );
        for seed in [3, 99, 0xC0FFEE] {
            let mut rng = XorShift::new(seed);
            let got = run_framer(&file, capacity, || rng.in_1_to(3 * capacity));
            assert!(got == want, "capacity {capacity} seed {seed}: lines differ");
        }
    }
}
