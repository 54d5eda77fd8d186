//! Ollama `/api/chat` lines: `message.thinking` and `message.content` deltas, each
//! `message.tool_calls` entry a whole call as it arrives, `done` with its `done_reason`,
//! and an `error` line ending the response.

use super::calls::Close;
use super::step::{error_emit, text_emit, Cursor, Emit, Event, State, Step};
use crate::json::trim_ws;
use crate::json::valid::{self, Arr, Obj};

pub(crate) fn step(ev: &Event<'_>, cur: Cursor, st: &mut State<'_>) -> Step {
    let data = ev.data;
    match cur.step {
        0 => {
            let Some(fields) = Obj::of(data) else {
                st.skipped.bad_shape += 1;
                return Step::Done;
            };
            let mut message = None;
            for (k, v) in fields {
                if k.raw() == b"error" && trim_ws(v) != b"null" {
                    return Step::Fail(error_emit(ev, v));
                }
                if k.raw() == b"message" {
                    message = Some(v);
                }
            }
            let a = message
                .filter(|m| Obj::of(m).is_some())
                .map_or((0, 0), |m| ev.span(m));
            Step::Next(Cursor { a, ..Cursor::at(1) })
        }
        1 => match text_emit(ev, valid::get(ev.at(cur.a), b"thinking"), true) {
            Some(e) => Step::Emit(e, cur.then(2, 0)),
            None => Step::Next(cur.then(2, 0)),
        },
        2 => match text_emit(ev, valid::get(ev.at(cur.a), b"content"), false) {
            Some(e) => Step::Emit(e, cur.then(3, 0)),
            None => Step::Next(cur.then(3, 0)),
        },
        3 => {
            let pos = match cur.pos {
                0 => match valid::get(ev.at(cur.a), b"tool_calls") {
                    Some(v) if Arr::of(v).is_some() => ev.span(v).0 + 1,
                    _ => return Step::Next(cur.then(4, 0)),
                },
                pos => pos,
            };
            let mut list = Arr::resume(data, pos as usize);
            let Some(entry) = list.next() else {
                return Step::Next(cur.then(4, 0));
            };
            let next = cur.then(3, list.pos() as u32);
            match tool_call(ev, entry, st) {
                Some(e) => Step::Emit(e, next),
                None => Step::Next(next),
            }
        }
        _ => {
            if !valid::get(data, b"done").is_some_and(valid::is_true) {
                return Step::Done;
            }
            if let Some(reason) = valid::get_str(data, b"done_reason") {
                st.reason.set(reason, &mut st.skipped);
            }
            Step::End(Close::Complete)
        }
    }
}

/// One whole call; the frame to write when it finds no free slot.
fn tool_call(ev: &Event<'_>, entry: &[u8], st: &mut State<'_>) -> Option<Emit> {
    let Some(function) = valid::get(entry, b"function").filter(|f| Obj::of(f).is_some()) else {
        st.skipped.bad_shape += 1;
        return None;
    };
    let id = valid::get(entry, b"id");
    let i = match st.open_or_refuse(ev, 0, id, valid::get(function, b"name")) {
        Ok(i) => i,
        Err(e) => return Some(e),
    };
    match valid::get(function, b"arguments") {
        Some(args) => match valid::string(args) {
            Some(text) => st.calls.set_text(i, text),
            None => st.calls.set_raw(i, args),
        },
        None => st.calls.set_raw(i, b"{}"),
    }
    st.calls.ready(i, Close::Complete);
    None
}

/// An over-long line: nothing in it can be read safely.
pub(crate) fn overlong(_ev: &Event<'_>, _st: &mut State<'_>) -> Step {
    Step::Done
}
