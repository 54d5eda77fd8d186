//! The call trace: a bounded ring of `{name, args, result, error}` entries.
//!
//! Entries live in a byte region the caller hands in, each stored contiguously
//! (a record that would straddle the end starts again at offset 0). When an
//! entry does not fit, the oldest entries are dropped first and counted; an
//! entry larger than the whole region is cut to fit and flagged, never silently.

use crate::json::escape::utf8_prefix;
use crate::outcome::CallOutcome;

/// Bytes each entry costs on top of its name, args and result or error.
pub const ENTRY_HEADER: usize = 12;

const HAS_NAME: u8 = 1;
const IS_ERROR: u8 = 2;
const TRUNCATED: u8 = 4;

/// One trace entry.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct TraceEntry<'a> {
    /// The tool name; `None` for a malformed call.
    pub name: Option<&'a str>,
    /// Raw JSON args, without white space between tokens.
    pub args: &'a [u8],
    /// The result (raw JSON, without white space between tokens) or the error.
    pub outcome: CallOutcome<'a>,
    /// Some part was cut to fit the trace region (args or result then are not whole JSON).
    pub truncated: bool,
}

/// The trace ring.
#[derive(Debug)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Trace<'a> {
    buf: &'a mut [u8],
    max_entries: usize,
    head: usize,
    tail: usize,
    /// Where valid data ends when the ring has wrapped.
    wrap_end: Option<usize>,
    count: usize,
    dropped: u32,
    truncated: u32,
}

impl<'a> Trace<'a> {
    /// A ring of at most `max_entries` entries in `buf`.
    pub(crate) fn new(buf: &'a mut [u8], max_entries: usize) -> Self {
        Self {
            buf,
            max_entries,
            head: 0,
            tail: 0,
            wrap_end: None,
            count: 0,
            dropped: 0,
            truncated: 0,
        }
    }

    /// Entries held.
    pub fn len(&self) -> usize {
        self.count
    }

    /// True when no entry is held.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Entries dropped (oldest first) to make room, since creation.
    pub fn dropped(&self) -> u32 {
        self.dropped
    }

    /// Entries cut to fit, since creation.
    pub fn truncated(&self) -> u32 {
        self.truncated
    }

    /// Forgets every entry (the drop and truncation counts stay).
    pub fn clear(&mut self) {
        self.head = 0;
        self.tail = 0;
        self.wrap_end = None;
        self.count = 0;
    }

    /// Entries, oldest first.
    pub fn iter(&self) -> TraceIter<'_> {
        TraceIter {
            trace: self,
            pos: self.head,
            wrapped: false,
            left: self.count,
        }
    }

    fn drop_oldest(&mut self) {
        let len = record_len(&self.buf[self.head..]);
        self.head += len;
        self.count -= 1;
        if let Some(end) = self.wrap_end {
            if self.head >= end {
                self.head = 0;
                self.wrap_end = None;
            }
        }
        if self.count == 0 {
            self.clear();
        }
        self.dropped = self.dropped.saturating_add(1);
    }

    /// Where a record of `need` bytes can go now, if anywhere.
    fn place(&mut self, need: usize) -> Option<usize> {
        match self.wrap_end {
            None if self.buf.len() - self.tail >= need => Some(self.tail),
            // Equivalent mutant: `count > 0` -> `>= 0`: an empty trace is cleared, so `head == 0`
            // fails `head >= need`.
            None if self.head >= need && self.count > 0 => {
                self.wrap_end = Some(self.tail);
                self.tail = 0;
                Some(0)
            }
            Some(_) if self.head - self.tail >= need => Some(self.tail),
            _ => None,
        }
    }

    /// Adds an entry, dropping the oldest as needed.
    #[cfg(any(test, feature = "_internals"))]
    pub(crate) fn push(&mut self, name: Option<&[u8]>, args: &[u8], outcome: CallOutcome<'_>) {
        self.push_known(name, (args, false), outcome, false);
    }

    /// [`push`](Self::push), told which raw values are known to be compact already (each
    /// with its flag), so that they are copied rather than compacted.
    pub(crate) fn push_known(
        &mut self,
        name: Option<&[u8]>,
        (args, args_compact): (&[u8], bool),
        outcome: CallOutcome<'_>,
        result_compact: bool,
    ) {
        if self.max_entries == 0 || self.buf.len() < ENTRY_HEADER {
            self.dropped = self.dropped.saturating_add(1);
            return;
        }
        let (out, is_error) = match outcome {
            CallOutcome::Result(r) => (r, false),
            CallOutcome::Error(e) => (e.as_bytes(), true),
        };
        let name_bytes = name.unwrap_or(b"");
        // Raw values are kept as the frames carry them: without white space (SPEC §7.22).
        let compact_len = |raw: &[u8], known: bool| match known {
            true => raw.len(),
            false => crate::json::compact_len(raw),
        };
        let args_full = compact_len(args, args_compact);
        let out_full = match is_error {
            true => out.len(),
            false => compact_len(out, result_compact),
        };
        // Cut the largest parts first so an oversized entry still fits the region.
        let room = self.buf.len() - ENTRY_HEADER;
        let name_len = utf8_prefix(name_bytes, room.min(u16::MAX as usize));
        let args_len = args_full.min(room - name_len);
        let out_len = if is_error {
            utf8_prefix(out, room - name_len - args_len)
        } else {
            out_full.min(room - name_len - args_len)
        };
        let cut = name_len < name_bytes.len() || args_len < args_full || out_len < out_full;
        let need = ENTRY_HEADER + name_len + args_len + out_len;
        while self.count >= self.max_entries {
            self.drop_oldest();
        }
        let at = loop {
            if let Some(at) = self.place(need) {
                break at;
            }
            if self.count == 0 {
                self.clear();
                break 0;
            }
            self.drop_oldest();
        };
        // Equivalent mutant: `|` -> `^`: the three flags are distinct bits, so they share no bit.
        let flags = if name.is_some() { HAS_NAME } else { 0 }
            | if is_error { IS_ERROR } else { 0 }
            | if cut { TRUNCATED } else { 0 };
        let rec = &mut self.buf[at..at + need];
        rec[0] = flags;
        rec[1] = 0;
        rec[2..4].copy_from_slice(&(name_len as u16).to_le_bytes());
        rec[4..8].copy_from_slice(&(args_len as u32).to_le_bytes());
        rec[8..12].copy_from_slice(&(out_len as u32).to_le_bytes());
        let mut p = ENTRY_HEADER;
        rec[p..p + name_len].copy_from_slice(&name_bytes[..name_len]);
        p += name_len;
        copy_compact(args, args_compact, &mut rec[p..p + args_len]);
        p += args_len;
        match is_error {
            true => rec[p..p + out_len].copy_from_slice(&out[..out_len]),
            false => copy_compact(out, result_compact, &mut rec[p..p + out_len]),
        }
        self.tail = at + need;
        self.count += 1;
        if cut {
            self.truncated = self.truncated.saturating_add(1);
        }
    }
}

/// Fills `dst` with the start of `raw`'s compact form (a plain copy when `compact`).
fn copy_compact(raw: &[u8], compact: bool, dst: &mut [u8]) {
    match compact {
        true => dst.copy_from_slice(&raw[..dst.len()]),
        false => _ = crate::json::compact_into(raw, dst),
    }
}

fn record_len(rec: &[u8]) -> usize {
    let name = u16::from_le_bytes([rec[2], rec[3]]) as usize;
    let args = u32::from_le_bytes([rec[4], rec[5], rec[6], rec[7]]) as usize;
    let out = u32::from_le_bytes([rec[8], rec[9], rec[10], rec[11]]) as usize;
    ENTRY_HEADER + name + args + out
}

/// Iterator over trace entries, oldest first.
#[derive(Debug)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct TraceIter<'t> {
    trace: &'t Trace<'t>,
    pos: usize,
    wrapped: bool,
    left: usize,
}

impl<'t> Iterator for TraceIter<'t> {
    type Item = TraceEntry<'t>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.left == 0 {
            return None;
        }
        if let Some(end) = self.trace.wrap_end {
            if !self.wrapped && self.pos >= end {
                self.pos = 0;
                self.wrapped = true;
            }
        }
        let buf: &'t [u8] = self.trace.buf;
        let rec = &buf[self.pos..];
        let len = record_len(rec);
        let flags = rec[0];
        let name_len = u16::from_le_bytes([rec[2], rec[3]]) as usize;
        let args_len = u32::from_le_bytes([rec[4], rec[5], rec[6], rec[7]]) as usize;
        let name = &rec[ENTRY_HEADER..ENTRY_HEADER + name_len];
        let args = &rec[ENTRY_HEADER + name_len..ENTRY_HEADER + name_len + args_len];
        let out = &rec[ENTRY_HEADER + name_len + args_len..len];
        self.pos += len;
        self.left -= 1;
        let text = |b: &'t [u8]| core::str::from_utf8(b).unwrap_or("");
        Some(TraceEntry {
            name: (flags & HAS_NAME != 0).then(|| text(name)),
            args,
            outcome: if flags & IS_ERROR != 0 {
                CallOutcome::Error(text(out))
            } else {
                CallOutcome::Result(out)
            },
            truncated: flags & TRUNCATED != 0,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ring_drops_oldest_and_wraps() {
        let mut buf = [0u8; 64];
        let mut t = Trace::new(&mut buf, 3);
        for i in 0..10u8 {
            let args = [b'0' + i];
            t.push(Some(b"tool"), &args, CallOutcome::Result(b"12345"));
            let firsts: heapless::Vec<u8, 4> = t.iter().map(|e| e.args[0]).collect();
            // 22 bytes a record: two fit in 64 bytes.
            assert_eq!(firsts.last(), Some(&(b'0' + i)));
            assert!(firsts.len() <= 2);
            assert!(firsts.windows(2).all(|w| w[1] == w[0] + 1));
        }
        assert_eq!(t.dropped(), 8);
    }

    #[test]
    fn len_and_is_empty_follow_pushes_and_clear() {
        let mut buf = [0u8; 128];
        let mut t = Trace::new(&mut buf, 3);
        assert_eq!((t.len(), t.is_empty()), (0, true));
        t.push(Some(b"a"), b"{}", CallOutcome::Result(b"1"));
        assert_eq!((t.len(), t.is_empty()), (1, false));
        t.push(Some(b"b"), b"{}", CallOutcome::Result(b"2"));
        assert_eq!((t.len(), t.is_empty()), (2, false));
        t.clear();
        assert_eq!((t.len(), t.is_empty()), (0, true));
    }

    #[test]
    fn an_entry_cut_only_in_its_name_is_flagged() {
        let mut buf = [0u8; ENTRY_HEADER + 4];
        let mut t = Trace::new(&mut buf, 2);
        t.push(Some(b"abcdefgh"), b"", CallOutcome::Error(""));
        let e = t.iter().next().unwrap();
        assert_eq!((e.name, e.truncated), (Some("abcd"), true));
        assert_eq!(t.truncated(), 1);
    }

    #[test]
    fn oversized_entry_is_cut_and_flagged() {
        let mut buf = [0u8; 20];
        let mut t = Trace::new(&mut buf, 4);
        t.push(None, b"[1,2,3,4,5,6,7,8]", CallOutcome::Error("boom"));
        let e = t.iter().next().unwrap();
        assert!(e.truncated);
        assert_eq!(e.args, b"[1,2,3,4");
        assert_eq!(e.outcome, CallOutcome::Error(""));
        assert_eq!(t.truncated(), 1);
    }
}
