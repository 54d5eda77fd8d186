//! Where encoded bytes go ([`Sink`]: a counter, a buffer, a host's writer), and the small
//! writers every encoder shares: JSON strings and decimal numbers.

use crate::json::escape::write_escaped;

/// Where encoded bytes go: a counter or a buffer.
pub trait Sink {
    /// Appends bytes.
    fn put(&mut self, bytes: &[u8]);

    /// Appends a raw JSON value in its compact form (no white space between tokens).
    fn put_raw(&mut self, value: &[u8]) {
        crate::json::for_each_compact_run(value, |run| self.put(run));
    }

    /// Appends a call's id or name as a JSON string (quoted, escaped).
    fn put_name(&mut self, text: &[u8]) {
        put_json_string(self, text);
    }

    /// Appends `text` escaped for the inside of a JSON string (no quotes).
    fn put_escaped(&mut self, text: &[u8]) {
        // A method, so that a `dyn Sink` pays one dynamic call for the text and each of its
        // pieces (a few bytes between quotes, for JSON written as a string) a static one.
        write_escaped(text, |piece| self.put(piece));
    }

    /// Appends `text` escaped, as [`put_escaped`](Sink::put_escaped), when the caller already
    /// knows its escaped length `escaped` (a stored text's): a counter need not read it.
    fn put_escaped_sized(&mut self, text: &[u8], escaped: usize) {
        let _ = escaped;
        self.put_escaped(text);
    }
}

/// A sink that only counts.
#[derive(Default, Debug, Clone, Copy)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Counter(pub usize);

impl Sink for Counter {
    #[inline]
    fn put(&mut self, bytes: &[u8]) {
        self.0 += bytes.len();
    }

    fn put_escaped(&mut self, text: &[u8]) {
        self.0 += crate::json::escape::escaped_len(text);
    }

    fn put_escaped_sized(&mut self, _text: &[u8], escaped: usize) {
        self.0 += escaped;
    }
}

with_counted_writers! {
    /// Writes what `write` puts into `out` when it fits, and returns its length; it is counted
    /// first, so a short buffer gets the size needed and is left untouched.
    pub(crate) fn write_counted(
        out: &mut [u8],
        write: impl Fn(&mut dyn Sink),
    ) -> Result<usize, crate::json::BufferTooSmall> {
        write_passes::<false>(out, false, write)
    }

    /// [`write_counted`], told whether `out` is at least as long as anything `write` puts: then
    /// it writes in one pass, with no count first (the count is a second run of every escaper
    /// and copy of the frame).
    #[cfg(feature = "_providers")]
    pub(crate) fn write_within(
        out: &mut [u8],
        whole: bool,
        write: impl Fn(&mut dyn Sink),
    ) -> Result<usize, crate::json::BufferTooSmall> {
        write_passes::<true>(out, whole, write)
    }

    /// The two: `ONE_PASS` false compiles `whole` away, so that `write_counted`'s many callers
    /// (the MCP client's) carry no test of it.
    fn write_passes<const ONE_PASS: bool>(
        out: &mut [u8],
        whole: bool,
        write: impl Fn(&mut dyn Sink),
    ) -> Result<usize, crate::json::BufferTooSmall> {
        // Both passes go through one call of `write` on one sink type: with two calls, the
        // compiler inlined the writer into each (the MCP client's `poll_frame` twice over).
        let mut room = (ONE_PASS && whole).then_some(out.len());
        loop {
            let buf = match room {
                // The count: over no room, every byte is counted and none written.
                None => &mut [][..],
                Some(n) => match out.get_mut(..n) {
                    Some(dst) => dst,
                    None => return Err(crate::json::BufferTooSmall { needed: n }),
                },
            };
            let mut sink = Exact { buf, pos: 0 };
            write(&mut sink);
            match room {
                // The round after the count: the size counted.
                Some(n) if !ONE_PASS => return Ok(n),
                Some(n) if sink.pos <= n => return Ok(sink.pos),
                // Past a length the caller said `write` keeps to: what was written is cut, and
                // the caller is told the size needed, as from a count.
                Some(_) => return Err(crate::json::BufferTooSmall { needed: sink.pos }),
                None => room = Some(sink.pos),
            }
        }
    }

    /// A sink over a slice from an offset: the bytes that fit are written, every byte is
    /// counted (the request layer writes into room it opened with it too).
    pub(crate) struct Exact<'b> {
        buf: &'b mut [u8],
        pos: usize,
    }

    impl<'b> Exact<'b> {
        /// Writing into `buf` from `pos` on.
        pub(crate) fn at(buf: &'b mut [u8], pos: usize) -> Self {
            Self { buf, pos }
        }
    }

    impl Sink for Exact<'_> {
        fn put(&mut self, bytes: &[u8]) {
            if let Some(dst) = self.buf.get_mut(self.pos..self.pos + bytes.len()) {
                dst.copy_from_slice(bytes);
            }
            self.pos += bytes.len();
        }
    }
}

/// Writes `text` as a JSON string with quotes and minimal escapes.
pub fn put_json_string<S: Sink + ?Sized>(s: &mut S, text: &[u8]) {
    put_quoted(s, text, false);
}

/// [`put_json_string`], copying a `plain` text (one known to need no escapes) as it is.
pub(crate) fn put_quoted<S: Sink + ?Sized>(s: &mut S, text: &[u8], plain: bool) {
    s.put(b"\"");
    match plain {
        true => {
            debug_assert_eq!(
                crate::json::escape::next_escape(text, 0),
                text.len(),
                "not plain"
            );
            s.put(text);
        }
        // The escaper through `put_escaped`: one copy of it per sink.
        false => put_escaped(s, text),
    }
    s.put(b"\"");
}

/// Writes a JSON string token's text canonically: escapes undone, then escaped minimally.
pub fn put_json_str<S: Sink + ?Sized>(s: &mut S, text: crate::json::JsonStr<'_>) {
    s.put(b"\"");
    text.for_each_decoded_run(|run| put_escaped(s, run));
    s.put(b"\"");
}

/// Writes `text` escaped for the inside of a JSON string (no quotes): [`Sink::put_escaped`].
pub fn put_escaped<S: Sink + ?Sized>(s: &mut S, text: &[u8]) {
    s.put_escaped(text);
}

/// Decimal digits of `n` without allocation.
pub fn put_u64<S: Sink + ?Sized>(s: &mut S, mut n: u64) {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    loop {
        let (q, r) = div_rem_10(n);
        i -= 1;
        digits[i] = b'0' + r;
        n = q;
        if n == 0 {
            break;
        }
    }
    s.put(&digits[i..]);
}

/// `n / 10` and `n % 10` by long division in 16-bit limbs: 32-bit targets have no 64-bit
/// divide, and the library routine for it costs about 860 bytes of flash on a Cortex-M.
fn div_rem_10(n: u64) -> (u64, u8) {
    let (mut q, mut rem) = (0u64, 0u32);
    for shift in [48u32, 32, 16, 0] {
        let cur = (rem << 16) | ((n >> shift) as u32 & 0xFFFF);
        // Equivalent mutant: `|=` -> `^=`: `cur / 10` fits 16 bits, so the limbs share no bit.
        q |= ((cur / 10) as u64) << shift;
        rem = cur % 10;
    }
    (q, rem as u8)
}

/// A sink keeping the first bytes that fit.
pub(crate) struct Prefix<'b> {
    pub(crate) buf: &'b mut [u8],
    pub(crate) pos: usize,
}

impl Sink for Prefix<'_> {
    fn put(&mut self, bytes: &[u8]) {
        let n = bytes.len().min(self.buf.len() - self.pos);
        self.buf[self.pos..self.pos + n].copy_from_slice(&bytes[..n]);
        self.pos += n;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn u64_digits_by_long_division() {
        for n in [
            0,
            9,
            10,
            65_535,
            65_536,
            4_294_967_295,
            4_294_967_296,
            u64::MAX - 1,
            u64::MAX,
        ]
        .into_iter()
        .chain(
            (0..if cfg!(miri) { 100 } else { 2000u64 })
                .map(|k| k.wrapping_mul(0x9E37_79B9_7F4A_7C15)),
        ) {
            assert_eq!(div_rem_10(n), (n / 10, (n % 10) as u8), "{n}");
            struct Digits([u8; 20], usize);
            impl Sink for Digits {
                fn put(&mut self, bytes: &[u8]) {
                    self.0[self.1..self.1 + bytes.len()].copy_from_slice(bytes);
                    self.1 += bytes.len();
                }
            }
            let mut sink = Digits([0; 20], 0);
            put_u64(&mut sink, n);
            let len = sink.1;
            let digits = &sink.0[..len];
            assert!(len == 1 || digits[0] != b'0', "{n}");
            let back = digits.iter().fold(0u128, |v, d| {
                assert!(d.is_ascii_digit());
                v * 10 + (d - b'0') as u128
            });
            assert_eq!(back, n as u128);
        }
    }

    /// Into a buffer said to hold anything, the writer runs once; else it is counted first,
    /// and a short buffer is left untouched; a writer past the length it was said to keep to
    /// gets the size it needs, as from a count.
    #[cfg(feature = "_providers")]
    #[test]
    fn written_once_when_whole_else_counted_first() {
        use core::cell::Cell;
        let runs = Cell::new(0);
        let write = |s: &mut dyn Sink| {
            runs.set(runs.get() + 1);
            s.put(b"{\"a\":");
            s.put_escaped(b"\"x\"");
            s.put(b"}");
        };
        let want = br#"{"a":\"x\"}"#;
        for (len, whole, result, wrote, n_runs) in [
            (16, true, Ok(11), true, 1),
            (16, false, Ok(11), true, 2),
            (11, false, Ok(11), true, 2),
            (10, false, Err(11), false, 1),
            // Said whole but too short: cut, then told the size.
            (10, true, Err(11), true, 1),
        ] {
            runs.set(0);
            let mut out = [0xAA; 16];
            let got = write_within(&mut out[..len], whole, write).map_err(|e| e.needed);
            assert_eq!(got, result, "{len} {whole}");
            assert_eq!(runs.get(), n_runs, "{len} {whole}");
            match (wrote, got) {
                (true, Ok(n)) => assert_eq!(&out[..n], want),
                (false, _) => assert!(out.iter().all(|&b| b == 0xAA)),
                (true, Err(_)) => assert_eq!(&out[..10], &want[..10]),
            }
            assert!(out[len..].iter().all(|&b| b == 0xAA), "past the buffer");
        }
    }
}
