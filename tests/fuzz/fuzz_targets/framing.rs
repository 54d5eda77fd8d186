//! The line framer on arbitrary bytes cut at arbitrary points: what comes out (lines and
//! over-long-line reports) equals what the same bytes fed whole give, and what a plain
//! reference split gives; no line is longer than the buffer.
#![no_main]

use libfuzzer_sys::fuzz_target;
use polyweave_tool_adapter::frame::{LineSplitter, LineTooLong};

#[derive(Debug, PartialEq)]
enum Out {
    Line(Vec<u8>),
    TooLong(usize),
}

fn take(r: Result<&[u8], LineTooLong>, cap: usize, out: &mut Vec<Out>) {
    match r {
        Ok(line) => {
            assert!(
                line.len() <= cap,
                "a line of {} from a {cap}-byte buffer",
                line.len()
            );
            out.push(Out::Line(line.to_vec()));
        }
        Err(e) => out.push(Out::TooLong(e.len)),
    }
}

/// Feeds `stream` in the pieces `cuts` gives (each at least one byte), then finishes.
fn run(cap: usize, stream: &[u8], cuts: &[u8]) -> Vec<Out> {
    let mut buf = vec![0u8; cap];
    let mut f = LineSplitter::new(&mut buf);
    let mut out = Vec::new();
    let mut rest = stream;
    let mut k = 0;
    while !rest.is_empty() {
        let piece = match cuts.is_empty() {
            true => rest.len(),
            false => (cuts[k % cuts.len()] as usize % 17 + 1).min(rest.len()),
        };
        k += 1;
        let mut chunk = &rest[..piece];
        while !chunk.is_empty() {
            let n = f.feed(chunk);
            chunk = &chunk[n..];
            while let Some(r) = f.next_line() {
                take(r, cap, &mut out);
            }
        }
        rest = &rest[piece..];
    }
    while let Some(r) = f.finish() {
        take(r, cap, &mut out);
    }
    out
}

fn blank(b: &[u8]) -> bool {
    b.iter().all(|c| matches!(c, b' ' | b'\t' | b'\r'))
}

/// The module's rules, written plainly: lines end at `\n`; one `\r` before it is dropped;
/// blank lines are skipped; a line (its `\r` counted) longer than the buffer is reported.
fn reference(cap: usize, stream: &[u8]) -> Vec<Out> {
    let mut out = Vec::new();
    let mut lines: Vec<&[u8]> = stream.split(|&b| b == b'\n').collect();
    if lines.last().is_some_and(|l| l.is_empty()) {
        lines.pop();
    }
    for body in lines {
        if blank(body) {
            continue;
        }
        let content = body.strip_suffix(b"\r").unwrap_or(body);
        match body.len() > cap {
            true => out.push(Out::TooLong(content.len())),
            false => out.push(Out::Line(content.to_vec())),
        }
    }
    out
}

fuzz_target!(|data: &[u8]| {
    let Some((&first, rest)) = data.split_first() else {
        return;
    };
    let cap = first as usize % 40 + 1;
    let split = rest.len().min(8);
    let (cuts, stream) = rest.split_at(split);
    let whole = run(cap, stream, &[]);
    assert_eq!(run(cap, stream, cuts), whole, "cut at other points");
    assert_eq!(whole, reference(cap, stream), "against the reference split");
});
