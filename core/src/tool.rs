//! Tool registrations: what a `TOOL_CALL` name maps to.

/// Written by a sync tool: its JSON result, or (when it returns `Err`) its error message.
///
/// A result's size counts without the white space between its tokens (SPEC §7.23): when a
/// write would overflow the buffer, what was written is compacted in place and later writes
/// are compacted as they come, so only a value too large even when compact overflows.
#[derive(Debug)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct ResultWriter<'b> {
    buf: &'b mut [u8],
    len: usize,
    overflow: bool,
    /// `Some` once compacting: where the stream stands in JSON's string syntax.
    compacting: Option<Compactor>,
}

/// Drops white space outside JSON strings from a byte stream, one byte at a time.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
struct Compactor {
    in_string: bool,
    escaped: bool,
}

impl Compactor {
    /// Whether `b` stays in the compact form.
    fn keep(&mut self, b: u8) -> bool {
        if self.in_string {
            self.in_string = self.escaped || b != b'"';
            self.escaped = !self.escaped && b == b'\\';
            true
        } else if matches!(b, b' ' | b'\t' | b'\n' | b'\r') {
            false
        } else {
            self.in_string = b == b'"';
            true
        }
    }
}

impl<'b> ResultWriter<'b> {
    /// A writer over `buf`.
    pub fn new(buf: &'b mut [u8]) -> Self {
        Self {
            buf,
            len: 0,
            overflow: false,
            compacting: None,
        }
    }

    /// Appends bytes; what does not fit even compacted is dropped and the writer records that
    /// it overflowed (a result is then too large; an error message keeps the part that fit).
    pub fn write(&mut self, bytes: &[u8]) {
        if self.overflow {
            return;
        }
        if self.compacting.is_none() {
            if let Some(dst) = self.buf.get_mut(self.len..self.len + bytes.len()) {
                dst.copy_from_slice(bytes);
                self.len += bytes.len();
                return;
            }
            self.start_compacting();
        }
        let mut c = self.compacting.unwrap_or_default();
        for &b in bytes {
            if !c.keep(b) {
                continue;
            }
            let Some(dst) = self.buf.get_mut(self.len) else {
                self.overflow = true;
                break;
            };
            *dst = b;
            self.len += 1;
        }
        self.compacting = Some(c);
    }

    /// Compacts what was written so far, in place.
    fn start_compacting(&mut self) {
        let mut c = Compactor::default();
        let mut kept = 0;
        for i in 0..self.len {
            let b = self.buf[i];
            if c.keep(b) {
                self.buf[kept] = b;
                kept += 1;
            }
        }
        self.len = kept;
        self.compacting = Some(c);
    }

    /// The space left.
    pub fn remaining(&mut self) -> &mut [u8] {
        &mut self.buf[self.len..]
    }

    /// Marks `n` bytes of [`remaining`](Self::remaining) as written (e.g. after `typed::write_result`).
    pub fn advance(&mut self, n: usize) {
        match self.len.checked_add(n) {
            Some(end) if end <= self.buf.len() => self.len = end,
            _ => self.overflow = true,
        }
    }

    /// Serialises `value` with `serde-json-core` as the result.
    pub fn write_typed<T: serde::Serialize + ?Sized>(&mut self, value: &T) {
        match crate::wrapper::typed::write_result(value, self.remaining()) {
            Ok(n) => self.advance(n),
            Err(_) => self.overflow = true,
        }
    }

    /// What was written so far (compacted when it had to be, see [`was_compacted`](Self::was_compacted)).
    pub fn written(&self) -> &[u8] {
        &self.buf[..self.len]
    }

    /// True when a write did not fit, even compacted.
    pub fn overflowed(&self) -> bool {
        self.overflow
    }

    /// True when the output was compacted to fit: as an error message, it lost its white space.
    pub fn was_compacted(&self) -> bool {
        self.compacting.is_some()
    }

    /// The capacity in bytes.
    pub fn capacity(&self) -> usize {
        self.buf.len()
    }
}

impl core::fmt::Write for ResultWriter<'_> {
    fn write_str(&mut self, s: &str) -> core::fmt::Result {
        self.write(s.as_bytes());
        if self.overflow {
            Err(core::fmt::Error)
        } else {
            Ok(())
        }
    }
}

/// A sync tool failed; the text it wrote to its [`ResultWriter`] is the message.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct ToolFailed;

impl core::fmt::Display for ToolFailed {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("tool failed")
    }
}

impl core::error::Error for ToolFailed {}

/// A tool that runs at once, inside the call that delivered its `TOOL_CALL`.
pub trait SyncTool {
    /// Runs with the call's raw JSON args; writes a JSON result, or a message and returns `Err`.
    fn call(&self, args: &[u8], out: &mut ResultWriter<'_>) -> Result<(), ToolFailed>;
}

impl<F> SyncTool for F
where
    F: Fn(&[u8], &mut ResultWriter<'_>) -> Result<(), ToolFailed>,
{
    fn call(&self, args: &[u8], out: &mut ResultWriter<'_>) -> Result<(), ToolFailed> {
        self(args, out)
    }
}

/// How a registered tool runs.
#[derive(Copy, Clone)]
pub enum ToolKind<'t> {
    /// Runs at once (SPEC §3, function form): its call never waits.
    Sync(&'t dyn SyncTool),
    /// Its call waits in a slot until it ends, run by the host or by a tool adapter.
    Pending(PendingKind),
}

/// How a call that waits is run.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum PendingKind {
    /// The host is told through [`Event`](crate::wrapper::Event) and completes it with
    /// [`Wrapper::complete`](crate::Wrapper::complete).
    Deferred,
    /// A frame-speaking tool adapter, driven by the §2 `AdapterCall` rules; its frames go to
    /// [`Wrapper::handle_adapter_frame`](crate::Wrapper::handle_adapter_frame).
    Adapter,
}

impl core::fmt::Debug for ToolKind<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            ToolKind::Sync(_) => f.write_str("Sync"),
            ToolKind::Pending(kind) => write!(f, "Pending({kind:?})"),
        }
    }
}

// Equivalent mutant (unkillable on the host): compiled only with `defmt`, as for `Wrapper`.
#[cfg(feature = "defmt")]
impl defmt::Format for ToolKind<'_> {
    fn format(&self, f: defmt::Formatter<'_>) {
        match self {
            ToolKind::Sync(_) => defmt::write!(f, "Sync"),
            ToolKind::Pending(kind) => defmt::write!(f, "Pending({})", kind),
        }
    }
}

/// The registrations, and how to find one by name.
#[derive(Copy, Clone, Debug)]
pub(crate) struct Registry<'t> {
    tools: &'t [Tool<'t>],
    /// Strictly sorted by name, so lookups can bisect.
    sorted: bool,
}

impl<'t> Registry<'t> {
    pub(crate) fn new(tools: &'t [Tool<'t>]) -> Self {
        Self {
            tools,
            sorted: tools.windows(2).all(|w| w[0].name < w[1].name),
        }
    }

    /// The registration for a decoded tool name: a binary search when the tools are sorted
    /// by name (no duplicates), else a scan in which the first registration of a name wins.
    pub(crate) fn find(&self, name: &[u8]) -> Option<usize> {
        if self.sorted {
            self.tools
                .binary_search_by(|t| cmp_names(t.name.as_bytes(), name))
                .ok()
        } else {
            self.tools.iter().position(|t| t.name.as_bytes() == name)
        }
    }

    pub(crate) fn get(&self, index: usize) -> &'t Tool<'t> {
        &self.tools[index]
    }
}

/// Byte-wise order of two names, as `<[u8]>::cmp`. Their first eight bytes, read as
/// big-endian words (zero after a short name's end), usually settle it without a call to
/// `memcmp`: where the words differ, so do the names, in the same order.
#[inline]
fn cmp_names(a: &[u8], b: &[u8]) -> core::cmp::Ordering {
    fn head(s: &[u8]) -> u64 {
        let mut word = [0u8; 8];
        match s.get(..8) {
            Some(eight) => word.copy_from_slice(eight),
            // Byte by byte: a copy of a variable length would be a call to `memcpy`.
            None => s.iter().zip(word.iter_mut()).for_each(|(b, w)| *w = *b),
        }
        u64::from_be_bytes(word)
    }
    // Equivalent mutant: `head` -> `0` or `1`: equal heads fall back to the full comparison.
    match head(a).cmp(&head(b)) {
        core::cmp::Ordering::Equal => a.cmp(b),
        unequal => unequal,
    }
}

/// One registered tool.
#[derive(Copy, Clone, Debug)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Tool<'t> {
    /// The name a `TOOL_CALL` uses (compared with the decoded `content.name`, exactly).
    pub name: &'t str,
    /// How it runs.
    pub kind: ToolKind<'t>,
    /// Its own timeout, overriding the wrapper's `tool_timeout_ms`.
    pub timeout_ms: Option<u32>,
    /// Its input schema: a call whose args do not satisfy it is not run (SPEC §11).
    #[cfg(feature = "schema")]
    pub schema: Option<&'t crate::json::schema::Schema<'t>>,
}

impl<'t> Tool<'t> {
    /// A sync tool.
    pub const fn sync(name: &'t str, f: &'t dyn SyncTool) -> Self {
        Self {
            name,
            kind: ToolKind::Sync(f),
            timeout_ms: None,
            #[cfg(feature = "schema")]
            schema: None,
        }
    }

    /// A deferred tool.
    pub const fn deferred(name: &'t str) -> Self {
        Self {
            name,
            kind: ToolKind::Pending(PendingKind::Deferred),
            timeout_ms: None,
            #[cfg(feature = "schema")]
            schema: None,
        }
    }

    /// A tool adapter.
    pub const fn adapter(name: &'t str) -> Self {
        Self {
            name,
            kind: ToolKind::Pending(PendingKind::Adapter),
            timeout_ms: None,
            #[cfg(feature = "schema")]
            schema: None,
        }
    }

    /// The same tool with its own timeout.
    pub const fn with_timeout_ms(mut self, ms: u32) -> Self {
        self.timeout_ms = Some(ms);
        self
    }

    /// The same tool, its calls' args checked against `schema` before it runs (SPEC §11).
    #[cfg(feature = "schema")]
    pub const fn with_schema(mut self, schema: &'t crate::json::schema::Schema<'t>) -> Self {
        self.schema = Some(schema);
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The word-first comparison orders names exactly as the slice order does, around its
    /// edges: names of 0–10 bytes, equal eight-byte heads, NUL and high bytes.
    #[test]
    fn names_compare_as_byte_slices() {
        let alphabet: &[u8] = &[0, 1, b'a', b'b', 0x7f, 0x80, 0xff];
        let mut names: heapless::Vec<heapless::Vec<u8, 10>, 64> = heapless::Vec::new();
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        while !names.is_full() {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let len = (x % 11) as usize;
            let name = (0..len)
                .map(|i| alphabet[((x >> (8 + 4 * i)) % 7) as usize])
                .collect();
            names.push(name).unwrap();
        }
        // A shared eight-byte head, so the words tie and the fall-back decides.
        names[0] = heapless::Vec::from_slice(b"abababab\x00").unwrap();
        names[1] = heapless::Vec::from_slice(b"abababab").unwrap();
        names[2] = heapless::Vec::from_slice(b"abababa").unwrap();
        names[3] = heapless::Vec::from_slice(b"abababa\x00").unwrap();
        for a in &names {
            for b in &names {
                assert_eq!(
                    cmp_names(a, b),
                    a.as_slice().cmp(b.as_slice()),
                    "{a:?} {b:?}"
                );
            }
        }
    }

    #[test]
    fn a_result_is_compacted_only_when_it_would_overflow() {
        let mut buf = [0u8; 20];
        let mut w = ResultWriter::new(&mut buf);
        w.write(b"{ \"a b\" : ");
        assert_eq!(
            (w.written(), w.was_compacted()),
            (&b"{ \"a b\" : "[..], false)
        );
        // Split across writes, inside a string and after an escaped quote.
        w.write(b"[ 1 ,\n\"x\\\" ");
        w.write(b"y\" ] }");
        assert_eq!(w.written(), br#"{"a b":[1,"x\" y"]}"#);
        assert!(w.was_compacted() && !w.overflowed());
        // Too large even compact: overflow, and nothing more is taken.
        w.write(b"12");
        assert!(w.overflowed());
        assert_eq!(w.written(), br#"{"a b":[1,"x\" y"]}1"#);
    }

    #[test]
    fn advance_takes_what_fits_and_flags_the_rest() {
        let mut buf = [0u8; 4];
        let mut w = ResultWriter::new(&mut buf);
        assert_eq!(w.capacity(), 4);
        w.remaining()[..2].copy_from_slice(b"[1");
        w.advance(2);
        assert_eq!((w.written(), w.overflowed()), (&b"[1"[..], false));
        w.remaining()[..2].copy_from_slice(b"2]");
        w.advance(2);
        assert_eq!((w.written(), w.overflowed()), (&b"[12]"[..], false));
        w.advance(1);
        assert_eq!((w.written(), w.overflowed()), (&b"[12]"[..], true));
        let mut buf = [0u8; 4];
        let mut w = ResultWriter::new(&mut buf);
        w.advance(usize::MAX);
        assert_eq!((w.written(), w.overflowed()), (&b""[..], true));
    }

    #[test]
    fn typed_and_formatted_writes() {
        #[derive(serde::Serialize)]
        struct Sum {
            sum: i32,
            ok: bool,
        }
        let mut buf = [0u8; 32];
        let mut w = ResultWriter::new(&mut buf);
        w.write_typed(&Sum { sum: -3, ok: true });
        assert_eq!(
            (w.written(), w.overflowed()),
            (&br#"{"sum":-3,"ok":true}"#[..], false)
        );
        let mut buf = [0u8; 8];
        let mut w = ResultWriter::new(&mut buf);
        w.write_typed(&Sum { sum: 1, ok: false });
        assert!(w.overflowed());

        use core::fmt::Write;
        let mut buf = [0u8; 6];
        let mut w = ResultWriter::new(&mut buf);
        assert_eq!(write!(w, "[{}]", 42), Ok(()));
        assert_eq!(w.written(), b"[42]");
        assert_eq!(write!(w, "{}", 123), Err(core::fmt::Error));
        assert!(w.overflowed());
    }

    #[test]
    fn tool_kinds_print_their_names() {
        fn noop(_: &[u8], _: &mut ResultWriter<'_>) -> Result<(), ToolFailed> {
            Ok(())
        }
        let mut s: heapless::String<64> = heapless::String::new();
        use core::fmt::Write;
        write!(
            s,
            "{:?} {:?} {:?}",
            ToolKind::Sync(&noop),
            ToolKind::Pending(PendingKind::Deferred),
            ToolKind::Pending(PendingKind::Adapter)
        )
        .unwrap();
        assert_eq!(s.as_str(), "Sync Pending(Deferred) Pending(Adapter)");
    }
}
