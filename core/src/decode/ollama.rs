//! Ollama `/api/chat` lines: `message.thinking` and `message.content` deltas, each
//! `message.tool_calls` entry a whole call as it arrives, `done` with its `done_reason`,
//! and an `error` line ending the response.

use super::calls::Close;
use super::step::{element_step, error_emit, text_step, Cursor, Emit, Event, State, Step};
use crate::json::trim_ws;
use crate::json::valid::{self, Obj};

/// The spans the first step keeps: `[thinking, content, tool_calls, done_reason]`.
const THINKING: usize = 0;
const CONTENT: usize = 1;
const TOOL_CALLS: usize = 2;
const DONE_REASON: usize = 3;

pub(crate) fn step(ev: &Event<'_>, cur: Cursor, st: &mut State<'_>) -> Step {
    match cur.step {
        0 => {
            let Some(fields) = ev.members() else {
                st.skipped.bad_shape += 1;
                return Step::Done;
            };
            let mut cur = Cursor::at(1);
            let mut message = None;
            for (k, v) in fields {
                match k.raw() {
                    b"error" if trim_ws(v) != b"null" => return Step::Fail(error_emit(ev, v)),
                    b"message" => message = Some(v),
                    b"done" => cur.flag = valid::is_true(v),
                    b"done_reason" => cur.spans[DONE_REASON] = ev.span(v),
                    _ => {}
                }
            }
            for (k, v) in message.and_then(Obj::of).into_iter().flatten() {
                match k.raw() {
                    b"thinking" => cur.spans[THINKING] = ev.span(v),
                    b"content" => cur.spans[CONTENT] = ev.span(v),
                    b"tool_calls" => cur.spans[TOOL_CALLS] = ev.span(v),
                    _ => {}
                }
            }
            Step::Next(cur)
        }
        1 => text_step(ev, cur, THINKING, true, 2),
        2 => text_step(ev, cur, CONTENT, false, 3),
        3 => element_step(ev, cur, TOOL_CALLS, 4, st, tool_call),
        _ => {
            if !cur.flag {
                return Step::Done;
            }
            if let Some(reason) = ev.member(cur.spans[DONE_REASON]).and_then(valid::string) {
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
