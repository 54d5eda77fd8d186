//! Gemini `GenerateContentResponse` chunks: text and thought parts of candidate 0,
//! `functionCall` parts as whole calls, and Gemini 3's streamed arguments (`partialArgs`
//! by `jsonPath`, continued while `willContinue`) assembled into one args object;
//! the last `finishReason` before the body ends is the finish reason.

use super::calls::Close;
use super::config::PATH_CAP;
use super::step::{
    error_emit, next_element, state_emit, text_emit, Cursor, Emit, Event, State, StateKind, Step,
};
use crate::json::valid::{self, Arr, Obj};
use crate::json::{trim_ws, JsonStr};
use crate::sink::{put_escaped, put_json_string, Sink};

use super::json_path::{parse_path, Assembler, Seg, MAX_LEVELS};

pub(crate) fn step(ev: &Event<'_>, cur: Cursor, st: &mut State<'_>) -> Step {
    match cur.step {
        0 => {
            if ev.name.is_some_and(|n| n != b"message") {
                st.skipped.unknown_event += 1;
                return Step::Done;
            }
            let Some(fields) = ev.members() else {
                st.skipped.bad_shape += 1;
                return Step::Done;
            };
            let mut candidates = None;
            for (k, v) in fields {
                if k.raw() == b"error" && trim_ws(v) != b"null" {
                    return Step::Fail(error_emit(ev, v));
                }
                if k.raw() == b"candidates" {
                    candidates = Some(v);
                }
            }
            let Some(candidate) = candidates.and_then(|c| Arr::of(c)?.next()) else {
                return Step::Done;
            };
            let (mut content, mut finish) = (None, None);
            for (k, v) in Obj::of(candidate).into_iter().flatten() {
                match k.raw() {
                    b"content" => content = Some(v),
                    b"finishReason" => finish = Some(v),
                    _ => {}
                }
            }
            let mut cur = Cursor::at(1);
            cur.spans[0] = ev.span_of(finish);
            cur.spans[1] = ev.span_of(content.and_then(|c| valid::get(c, b"parts")));
            Step::Next(cur)
        }
        1 => {
            let mut next = cur;
            let Some(part) = next_element(ev, &mut next, 1, 2, st) else {
                return Step::Next(next);
            };
            // A signed part is visited twice: the reader stays at it after its `STATE` (so a
            // frame that did not fit is written again from the same point), `flag` saying so.
            next.flag = false;
            match read_part(ev, part, st, cur.flag) {
                Some((e, true)) => Step::Emit(e, Cursor { flag: true, ..cur }),
                Some((e, false)) => Step::Emit(e, next),
                None => Step::Next(next),
            }
        }
        // A finish reason does not end the body: server-side tools may be answered in the
        // same response, then more text and another reason. `END` carries the last one.
        _ => {
            if let Some(reason) = ev.member(cur.spans[0]).and_then(valid::string) {
                st.reason.set(reason, &mut st.skipped);
            }
            Step::Done
        }
    }
}

/// One part: a text or thought delta, or a call (whole, opening a streamed one, or
/// continuing it); the frame to write, when there is one, and whether the reader stays at
/// the part. A part with a `thoughtSignature` is read twice (`stated` the second time): its
/// `STATE` comes first, before the part's own frames — a text or thought part's (a whole
/// empty part when it has no text to write), or the call it opens. A part continuing a
/// streamed call gives none: the signature belongs to the part that opened it.
fn read_part(
    ev: &Event<'_>,
    part: &[u8],
    st: &mut State<'_>,
    stated: bool,
) -> Option<(Emit, bool)> {
    let (mut sig, mut text, mut thought, mut call) = (None, None, false, None);
    for (k, v) in Obj::of(part)? {
        match k.raw() {
            b"thoughtSignature" => sig = Some(v).filter(|s| !stated && valid::string(s).is_some()),
            b"text" => text = Some(v),
            b"thought" => thought = valid::is_true(v),
            b"functionCall" => call = Some(v),
            _ => {}
        }
    }
    let state = |kind| state_emit(ev, sig, kind).map(|e| (e, true));
    if let Some(text) = text {
        let delta = text_emit(ev, Some(text), thought);
        return match (delta, thought) {
            (Some(_), _) if sig.is_some() => state(StateKind::ThoughtSignature),
            (Some(e), _) => Some((e, false)),
            (None, true) => state(StateKind::EmptyThought),
            (None, false) => state(StateKind::EmptyText),
        };
    }
    let Some(call) = call else {
        return state(match thought {
            true => StateKind::EmptyThought,
            false => StateKind::EmptyText,
        });
    };
    let (mut name, mut more, mut args, mut id, mut pieces) = (None, false, None, None, None);
    for (k, v) in Obj::of(call)? {
        match k.raw() {
            b"name" => {
                name = Some(v).filter(|n| valid::string(n).is_some_and(|s| !s.raw().is_empty()))
            }
            b"willContinue" => more = valid::is_true(v),
            b"args" => args = Some(v).filter(|a| trim_ws(a) != b"null"),
            b"id" => id = Some(v),
            b"partialArgs" => pieces = Some(v),
            _ => {}
        }
    }
    if let Some(name) = name {
        // A new call ends a streamed one still open (whose `TOOL_CALL` so comes before this
        // part's `STATE`).
        close_streamed(st);
        if sig.is_some() {
            return state(StateKind::ThoughtSignature);
        }
        let i = match st.open_or_refuse(ev, 0, id, Some(name)) {
            Ok(i) => i,
            Err(e) => {
                st.gemini.refused = more;
                return Some((e, false));
            }
        };
        match (more || pieces.is_some(), args) {
            // Streamed arguments; a part with `partialArgs` and no `willContinue` is a whole
            // call whose args are those values (Vertex sends these).
            (true, None) => {
                st.gemini.reset();
                st.gemini.slot = Some(i);
                st.calls.write_args(i, |s| s.put(b"{"));
                streamed_pieces(pieces, st);
                if !more {
                    close_streamed(st);
                }
            }
            (_, args) => {
                st.calls.set_raw(i, args.unwrap_or(b"{}"));
                st.calls.ready(i, Close::Complete);
            }
        }
        return None;
    }
    if st.gemini.slot.is_some() {
        streamed_pieces(pieces, st);
        if !more {
            close_streamed(st);
        }
    } else if st.gemini.refused {
        st.gemini.refused = more;
    } else if !more {
        st.skipped.bad_shape += 1;
    }
    None
}

/// Places each entry of a part's `partialArgs` into the streamed call's arguments.
fn streamed_pieces(pieces: Option<&[u8]>, st: &mut State<'_>) {
    let Some(list) = pieces.and_then(Arr::of) else {
        return;
    };
    for entry in list {
        place(entry, st);
    }
}

/// The value of one `partialArgs` entry, written at its path.
fn place(entry: &[u8], st: &mut State<'_>) {
    let Some(i) = st.gemini.slot else {
        return;
    };
    if st.gemini.broken || st.calls.is_over(i) {
        return;
    }
    let (mut path, mut value, mut is_string, mut more) = (None, None, false, false);
    for (k, v) in Obj::of(entry).into_iter().flatten() {
        match k.raw() {
            b"jsonPath" => path = valid::string(v),
            b"stringValue" => {
                is_string = valid::string(v).is_some();
                value = Some(v);
            }
            b"numberValue" | b"boolValue" => value = Some(v),
            b"nullValue" => value = Some(b"null"),
            b"willContinue" => more = valid::is_true(v),
            _ => {}
        }
    }
    let mut buf = [0u8; PATH_CAP];
    let new_path = match path.map(|p| p.decode_into(&mut buf)) {
        Some(Ok(p)) => p.as_bytes(),
        _ => return broken(st, i),
    };
    let Some(value) = value else {
        return broken(st, i);
    };
    let a = &mut st.gemini;
    let mut old_segs = [Seg::Key(b""); MAX_LEVELS + 1];
    let mut new_segs = [Seg::Key(b""); MAX_LEVELS + 1];
    let mut old_path = [0u8; PATH_CAP];
    let old_path = &mut old_path[..a.path_len];
    old_path.copy_from_slice(&a.path[..a.path_len]);
    let old_n = parse_path(old_path, &mut old_segs).unwrap_or(0);
    let Some(new_n) = parse_path(new_path, &mut new_segs).filter(|&n| n > 0) else {
        return broken(st, i);
    };
    let same_path = old_n > 0 && *old_path == *new_path;
    let mut ok = true;
    st.calls.write_args(i, |s| {
        if a.string_open {
            if same_path && is_string {
                put_piece(s, value);
                a.string_open = more;
                if !more {
                    s.put(b"\"");
                }
                return;
            }
            s.put(b"\"");
            a.string_open = false;
        }
        // Containers both paths share: same step to them and same kind.
        let shared = |k: usize| {
            k + 1 < old_n
                && k + 1 < new_n
                && old_segs[k] == new_segs[k]
                && old_segs[k + 1].is_key() == new_segs[k + 1].is_key()
        };
        let mut keep = 0;
        while keep < a.depth && shared(keep) {
            keep += 1;
        }
        while a.depth > keep {
            s.put(if a.objects >> a.depth & 1 == 1 {
                b"}"
            } else {
                b"]"
            });
            a.depth -= 1;
        }
        for level in keep + 1..new_n {
            if level > MAX_LEVELS || !member(s, a, level - 1, new_segs[level - 1]) {
                ok = false;
                return;
            }
            let object = new_segs[level].is_key();
            s.put(if object { b"{" } else { b"[" });
            a.objects = a.objects & !(1 << level) | (object as u64) << level;
            a.filled &= !(1 << level);
            a.depth = level;
        }
        if !member(s, a, new_n - 1, new_segs[new_n - 1]) {
            ok = false;
            return;
        }
        if is_string {
            s.put(b"\"");
            put_piece(s, value);
            a.string_open = more;
            if !more {
                s.put(b"\"");
            }
        } else {
            s.put_raw(value);
        }
    });
    if !ok || new_path.len() > a.path.len() {
        return broken(st, i);
    }
    a.path[..new_path.len()].copy_from_slice(new_path);
    a.path_len = new_path.len();
}

/// Writes what comes before a member of the container at `level`: a comma after an
/// earlier one, and its key in an object. False when the step does not fit the container.
fn member(s: &mut dyn Sink, a: &mut Assembler<'_>, level: usize, seg: Seg<'_>) -> bool {
    let object = a.objects >> level & 1 == 1;
    if object != seg.is_key() {
        return false;
    }
    if a.filled >> level & 1 == 1 {
        s.put(b",");
    }
    a.filled |= 1 << level;
    if let Seg::Key(k) = seg {
        put_json_string(s, k);
        s.put(b":");
    }
    true
}

/// A `stringValue` piece, escaped for the inside of the string being written.
fn put_piece(s: &mut dyn Sink, value: &[u8]) {
    JsonStr::from_scanned_lenient(trim_ws(value)).for_each_decoded_run(|run| put_escaped(s, run));
}

fn broken(st: &mut State<'_>, i: usize) {
    st.gemini.broken = true;
    st.calls.break_args(i);
}

/// The streamed call is complete: its open string and containers are closed.
pub(crate) fn close_streamed(st: &mut State<'_>) {
    let Some(i) = st.gemini.slot.take() else {
        st.gemini.refused = false;
        return;
    };
    let a = &mut st.gemini;
    // Broken arguments stay as they came, unclosed.
    st.calls.write_args(i, |s| {
        if a.broken {
            return;
        }
        if a.string_open {
            s.put(b"\"");
        }
        while a.depth > 0 {
            s.put(if a.objects >> a.depth & 1 == 1 {
                b"}"
            } else {
                b"]"
            });
            a.depth -= 1;
        }
        s.put(b"}");
    });
    st.calls.ready(i, Close::Complete);
    st.gemini.reset();
}

/// An over-long chunk: a streamed call it may have carried a piece of fails.
pub(crate) fn overlong(ev: &Event<'_>, st: &mut State<'_>) -> Step {
    let carries = ev
        .data
        .windows(b"\"functionCall\"".len())
        .any(|w| w == b"\"functionCall\"");
    if carries {
        if let Some(i) = st.gemini.slot {
            broken(st, i);
        }
    }
    Step::Done
}
