//! What the `decode_*` targets share: one provider's stream decoder on an arbitrary body, at
//! capacities, a frame buffer and feed sizes the input's first [`HEADER`] bytes choose.
//!
//! Checked on every body: nothing panics; every frame is one JSON line, a valid frame, and
//! within `max_frame_len`; a `TOOL_CALL` has a name; a buffer too small reports more than
//! it had, changes nothing, and the frame then written is exactly that long; `feed` takes
//! bytes whenever no frame waits; after `finish` there is one `END`, last; every call that
//! started is written once, as one `TOOL_CALL`. Then the frames equal those of a fresh
//! decoder fed the body whole into a big buffer (bytes split anywhere decode alike), and
//! the same decoder decodes a recorded body of its provider as a fresh one does (what
//! `finish` leaves is ready for the next body, whatever the last one was).

use polyweave_tool_adapter::decode::{CallSlot, Decoder, DecoderConfig};
use polyweave_tool_adapter::{BufferTooSmall, Provider};
use polyweave_tool_adapter::{Frame, FrameKind};

/// Input bytes read as choices before the body (missing ones count as 0). `fuzz.sh` writes
/// seeds in this layout: keep the two in step.
pub const HEADER: usize = 11;

/// How a body is fed and its frames polled.
struct Feeding {
    /// Piece sizes, in turn; `None` feeds the body whole.
    cuts: Option<[u8; 4]>,
    /// The frame buffer first tried, at most `max_frame_len` (which the retry has).
    buf: usize,
}

impl Feeding {
    const WHOLE: Self = Self {
        cuts: None,
        buf: usize::MAX,
    };

    fn piece(&self, k: usize) -> usize {
        match self.cuts {
            // Squared, so short pieces (a 0 byte: one byte) are as likely as long ones.
            Some(c) => square(c[k % c.len()], 4) + 1,
            None => usize::MAX,
        }
    }
}

fn square(b: u8, over: usize) -> usize {
    b as usize * b as usize / over
}

/// The capacities, slots and feeding the header chooses, and the body after it.
fn shape(data: &[u8]) -> (DecoderConfig, usize, Feeding, &[u8]) {
    let mut h = [0u8; HEADER];
    let n = data.len().min(HEADER);
    h[..n].copy_from_slice(&data[..n]);
    let cfg = DecoderConfig {
        // Squared too: the small capacities, where events and calls overflow, get most values.
        event_cap: 16 + square(h[0], 8),
        args_cap: square(h[1], 16),
        name_cap: 1 + h[2] as usize / 4,
        id_cap: 1 + h[3] as usize / 4,
        // The args value is level 1 here and level 3 in its frame, which
        // `parse_validated_default` reads to depth 32.
        max_depth: 1 + h[4] % 30,
    };
    let slots = h[5] as usize % 5;
    let buf = match h[6] {
        // Up to 573 bytes: sometimes enough for a frame, sometimes not.
        b @ 0..=0xbf => b as usize * 3,
        _ => cfg.max_frame_len(),
    };
    let cuts = [h[7], h[8], h[9], h[10]];
    let feeding = Feeding {
        cuts: Some(cuts),
        buf,
    };
    (cfg, slots, feeding, &data[n..])
}

/// Checks one frame as written; returns its kind and text.
fn check_frame(frame: &[u8], max: usize, provider: Provider) -> (Kind, String) {
    let what = provider.name();
    assert!(
        frame.len() <= max,
        "{what}: a frame of {} bytes, max_frame_len {max}",
        frame.len()
    );
    if let Err(e) = polyweave_tests::is_one_json_line(frame) {
        panic!(
            "{what}: frame is not one JSON line ({e}): {:?}",
            String::from_utf8_lossy(frame)
        );
    }
    let text = String::from_utf8(frame.to_vec()).expect("checked UTF-8");
    let parsed = Frame::parse_validated_default(frame)
        .unwrap_or_else(|e| panic!("{what}: frame does not parse ({e:?}): {text}"));
    let kind = match parsed.kind() {
        FrameKind::ToolCall => {
            let call = parsed
                .tool_call()
                .unwrap_or_else(|e| panic!("{what}: TOOL_CALL fields ({e:?}): {text}"));
            assert!(
                call.name.is_some(),
                "{what}: TOOL_CALL with no name: {text}"
            );
            Kind::Call
        }
        FrameKind::End => Kind::End,
        _ => Kind::Other,
    };
    (kind, text)
}

#[derive(Copy, Clone, PartialEq, Eq)]
enum Kind {
    Call,
    End,
    Other,
}

/// Polls until `Ok(None)`, each frame into `small` first and, when it does not fit, into `big`.
fn drain(d: &mut Decoder<'_>, small: &mut [u8], big: &mut [u8], frames: &mut Vec<(Kind, String)>) {
    let provider = d.provider();
    loop {
        let frame = match d.poll_frame(small) {
            Ok(None) => return,
            Ok(Some(n)) => &small[..n],
            Err(BufferTooSmall { needed }) => {
                assert!(
                    needed > small.len(),
                    "{}: {needed} bytes needed, {} given",
                    provider.name(),
                    small.len()
                );
                assert_eq!(
                    d.poll_frame(small),
                    Err(BufferTooSmall { needed }),
                    "{}: a buffer too small changed something",
                    provider.name()
                );
                match d.poll_frame(big) {
                    Ok(Some(n)) => {
                        assert_eq!(n, needed, "{}: frame length vs needed", provider.name());
                        &big[..n]
                    }
                    other => panic!(
                        "{}: {needed} bytes needed, then {other:?} into {} bytes",
                        provider.name(),
                        big.len()
                    ),
                }
            }
        };
        frames.push(check_frame(frame, big.len(), provider));
    }
}

/// Decodes one body to its end (`finish` and drained); checks what a body's frames must be.
fn decode_body(d: &mut Decoder<'_>, body: &[u8], how: &Feeding) -> Vec<String> {
    let what = d.provider().name();
    let max = d.config().max_frame_len();
    let mut small = vec![0u8; how.buf.min(max)];
    let mut big = vec![0u8; max];
    let before = d.stats();
    let mut frames = Vec::new();
    let mut rest = body;
    let mut k = 0;
    while !rest.is_empty() {
        let (mut piece, after) = rest.split_at(how.piece(k).min(rest.len()));
        k += 1;
        while !piece.is_empty() {
            assert!(
                !d.has_frames(),
                "{what}: frames wait after poll_frame said none"
            );
            // With no frame waiting, a stuck decoder is the only reason to take nothing.
            let n = d.feed(piece);
            assert!(
                n > 0 && n <= piece.len(),
                "{what}: feed took {n} of {}",
                piece.len()
            );
            piece = &piece[n..];
            drain(d, &mut small, &mut big, &mut frames);
        }
        rest = after;
    }
    d.finish();
    drain(d, &mut small, &mut big, &mut frames);
    assert!(
        !d.has_frames(),
        "{what}: frames wait after the body was drained"
    );
    let texts: Vec<String> = frames.iter().map(|(_, t)| t.clone()).collect();
    let ends = frames.iter().filter(|(k, _)| *k == Kind::End).count();
    assert_eq!(ends, 1, "{what}: END frames of one body: {texts:#?}");
    assert!(
        frames.last().is_some_and(|(k, _)| *k == Kind::End),
        "{what}: frames after END: {texts:#?}"
    );
    let calls = frames.iter().filter(|(k, _)| *k == Kind::Call).count() as u64;
    let after = d.stats();
    assert_eq!(
        after.calls_started, after.calls_written,
        "{what}: calls started and written: {texts:#?}"
    );
    assert_eq!(
        after.calls_written - before.calls_written,
        calls,
        "{what}: TOOL_CALLs counted and written: {texts:#?}"
    );
    texts
}

/// The frames a fresh decoder gives for `body`, fed whole into a buffer of `max_frame_len`.
fn fresh(provider: Provider, cfg: DecoderConfig, slots: usize, body: &[u8]) -> Vec<String> {
    let mut slot_store = vec![CallSlot::EMPTY; slots];
    let mut arena = vec![0u8; cfg.arena_len(slots)];
    let mut d = Decoder::new(provider, cfg, &mut slot_store, &mut arena).expect("a decoder");
    decode_body(&mut d, body, &Feeding::WHOLE)
}

/// The target: `data` (header, then body) through `provider`'s decoder, then `recorded`,
/// a valid body of that provider, through the same decoder.
pub fn run(provider: Provider, recorded: &[u8], data: &[u8]) {
    let (cfg, slots, feeding, body) = shape(data);
    let mut slot_store = vec![CallSlot::EMPTY; slots];
    let mut arena = vec![0u8; cfg.arena_len(slots)];
    let mut d = Decoder::new(provider, cfg, &mut slot_store, &mut arena)
        .unwrap_or_else(|e| panic!("{}: a decoder at {cfg:?}: {e}", provider.name()));
    let got = decode_body(&mut d, body, &feeding);
    assert_eq!(
        got,
        fresh(provider, cfg, slots, body),
        "{}: in pieces vs whole",
        provider.name()
    );
    let next = decode_body(&mut d, recorded, &feeding);
    assert_eq!(
        next,
        fresh(provider, cfg, slots, recorded),
        "{}: the recorded body after this one vs on a fresh decoder",
        provider.name()
    );
}
