//! The compact form of a raw value: the white space between its tokens dropped (SPEC §7.22).

use super::bytes::{is_ws, skip_ws, string_end, HI, LO};

/// Hands `emit` the runs of a valid JSON value that remain once the white space between
/// its tokens is dropped (SPEC §7.22): strings, number text and member order stay as written.
///
/// The runs, joined, are the *compact* form of the value; a value without such white
/// space is one run (itself). Bytes that are not valid JSON are passed through the same
/// way, so the result is defined but meaningless for them.
pub fn for_each_compact_run(value: &[u8], mut emit: impl FnMut(&[u8])) {
    // Most values hold no byte at or below a space at all: then they are their compact form.
    let Some(first) = first_space_or_below(value) else {
        if !value.is_empty() {
            emit(value);
        }
        return;
    };
    // The bytes before the first such byte hold no white space; strings may span it.
    let mut run = 0;
    let mut i = 0;
    while let Some(&b) = value.get(i) {
        if b == b'"' {
            i = string_end(value, i);
        } else if is_ws(b) {
            if run < i {
                emit(&value[run..i]);
            }
            i = skip_ws(value, i);
            run = i;
        } else if i < first {
            // Nothing but tokens before `first`: jump to the next quote or to `first`.
            i = value[i..first]
                .iter()
                .position(|&b| b == b'"')
                .map_or(first, |p| i + p);
        } else {
            i += 1;
        }
    }
    if run < value.len() {
        emit(&value[run..]);
    }
}

// Equivalent mutant: flagging more bytes (an earlier `first`, or `Some` for `None`) only has
// `for_each_compact_run` step byte by byte sooner, to the same runs.
/// The offset of the first byte at or below a space (white space, or a control character),
/// eight bytes at a time.
fn first_space_or_below(bytes: &[u8]) -> Option<usize> {
    let mut pos = 0;
    while let Some(chunk) = bytes.get(pos..pos + 8) {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let x = u64::from_le_bytes(word);
        let m = x.wrapping_sub(LO * 0x21) & !x & HI;
        if m != 0 {
            return Some(pos + (m.trailing_zeros() / 8) as usize);
        }
        pos += 8;
    }
    bytes[pos..]
        .iter()
        .position(|&b| b <= b' ')
        .map(|p| pos + p)
}

/// The length of `value`'s compact form (see [`for_each_compact_run`]).
pub fn compact_len(value: &[u8]) -> usize {
    let mut n = 0;
    for_each_compact_run(value, |run| n += run.len());
    n
}

/// Copies as much of `value`'s compact form as fits into `out`; returns the bytes written.
///
/// The copy is whole when the return equals [`compact_len`]; otherwise it is a prefix.
pub fn compact_into(value: &[u8], out: &mut [u8]) -> usize {
    let mut n = 0;
    for_each_compact_run(value, |run| {
        let take = run.len().min(out.len() - n);
        out[n..n + take].copy_from_slice(&run[..take]);
        n += take;
    });
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compaction_drops_only_white_space_between_tokens() {
        let value = b" {\"a b\" :\t[ 1 , -0.50e+3 ,\r\n\"x\\\" y\" ] , \"\\\\\" : { } }\n";
        let want = b"{\"a b\":[1,-0.50e+3,\"x\\\" y\"],\"\\\\\":{}}";
        assert_eq!(compact_len(value), want.len());
        let mut out = [0u8; 64];
        let n = compact_into(value, &mut out);
        assert_eq!(&out[..n], want);
        // A short buffer takes a prefix of the compact form.
        let mut short = [0u8; 10];
        assert_eq!(compact_into(value, &mut short), 10);
        assert_eq!(&short, &want[..10]);
        // The word-at-a-time scan agrees with a byte-at-a-time reference on every shape.
        let alphabet: &[u8] = b" \t\r\n\"\\ab{}[]:,1";
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        // (Fewer under miri, which runs the same code a thousand times slower.)
        for n in 0..if cfg!(miri) { 200 } else { 4000 } {
            let mut v = [0u8; 40];
            let len = n % 40;
            for b in v.iter_mut().take(len) {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                *b = alphabet[(x >> 8) as usize % alphabet.len()];
            }
            let v = &v[..len];
            let (mut reference, mut r) = ([0u8; 40], 0);
            let (mut in_string, mut escaped) = (false, false);
            for &b in v {
                if in_string {
                    in_string = escaped || b != b'"';
                    escaped = !escaped && b == b'\\';
                } else if is_ws(b) {
                    continue;
                } else {
                    in_string = b == b'"';
                }
                reference[r] = b;
                r += 1;
            }
            let mut out = [0u8; 40];
            let got = compact_into(v, &mut out);
            assert_eq!(&out[..got], &reference[..r], "{v:?}");
            assert_eq!(compact_len(v), r);
        }
    }

    /// The scanner's note of white space agrees with compaction: a valid value is reported
    /// compact exactly when its compact form is itself (white space around it aside), so
    /// copying it instead of compacting it changes nothing.
    #[test]
    fn validation_knows_when_a_value_is_already_compact() {
        let bases: [&[u8]; 6] = [
            b"{\"a\":[1,{\"b\":\"c d\"}],\"e\":{}}",
            b"[true,false,null,-1.5e3,\"x\\\"y\"]",
            b"{\"k\":\"v\",\"l\":[[],[{}]]}",
            b"\"a b\"",
            b"12",
            b"{}",
        ];
        let mut x: u64 = 0x2545_F491_4F6C_DD1D;
        let (mut compact, mut spaced) = (0, 0);
        for n in 0..if cfg!(miri) { 60 } else { 3000 } {
            let base = bases[n % bases.len()];
            // Up to three white space bytes inserted anywhere (inside strings too).
            let mut v = [0u8; 64];
            v[..base.len()].copy_from_slice(base);
            let mut len = base.len();
            for _ in 0..(n / bases.len()) % 4 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let at = (x >> 8) as usize % (len + 1);
                v.copy_within(at..len, at + 1);
                v[at] = b" \t\n\r"[(x >> 40) as usize % 4];
                len += 1;
            }
            let v = &v[..len];
            let Ok(is_compact) = crate::json::validate_compact(v, 32) else {
                continue; // white space inside a string can make it invalid (a raw tab)
            };
            let trimmed = crate::json::trim_ws(v);
            assert_eq!(is_compact, compact_len(trimmed) == trimmed.len(), "{v:?}");
            if is_compact {
                compact += 1;
            } else {
                spaced += 1;
            }
            // An object's members say the same once read to the end.
            if crate::json::is_object(trimmed) {
                let mut m = crate::json::Members::new(trimmed, 0, 32).unwrap();
                assert!(m.by_ref().all(|r| r.is_ok()));
                assert_eq!(!m.spaced(), is_compact, "{v:?}");
            }
        }
        assert!(compact > 0 && spaced > 0, "{compact} {spaced}");
    }

    /// The runs themselves: never empty, split exactly at white space.
    #[test]
    fn runs_are_the_pieces_between_white_space() {
        let cases: [(&[u8], &[&[u8]]); 6] = [
            (b"[1,2]", &[b"[1,2]"]),
            (b" 1", &[b"1"]),
            (b"1 ", &[b"1"]),
            (b" [ 1 , \"a b\" ] ", &[b"[", b"1", b",", b"\"a b\"", b"]"]),
            (b"{\"k\":\"v w\"}", &[b"{\"k\":\"v w\"}"]),
            (b"  ", &[]),
        ];
        for (value, want) in cases {
            let mut runs: heapless::Vec<heapless::Vec<u8, 16>, 8> = heapless::Vec::new();
            for_each_compact_run(value, |r| {
                runs.push(heapless::Vec::from_slice(r).unwrap()).unwrap()
            });
            let runs: heapless::Vec<&[u8], 8> = runs.iter().map(|r| r.as_slice()).collect();
            assert_eq!(runs.as_slice(), want, "{value:?}");
        }
    }

    /// Bytes that are not JSON pass through and the walk ends (a control character outside a
    /// string is neither white space nor a token).
    #[test]
    fn a_control_character_outside_strings_passes_through() {
        let mut out = [0u8; 16];
        for (value, want) in [
            (&b"[\x01]"[..], &b"[\x01]"[..]),
            (b"[1, \x02 ,2]", b"[1,\x02,2]"),
            (b"\x00", b"\x00"),
        ] {
            let n = compact_into(value, &mut out);
            assert_eq!(&out[..n], want, "{value:?}");
        }
    }
}
