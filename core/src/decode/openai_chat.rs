//! OpenAI Chat Completions chunks (and every OpenAI-compatible server's): text and
//! reasoning deltas of choice 0, tool calls keyed by `index` and complete at
//! `finish_reason` or `[DONE]`, an `error` member ending the response.

use super::calls::Close;
use super::step::{element_step, error_emit, text_step, Cursor, Event, State, Step};
use crate::json::trim_ws;
use crate::json::valid::{self, Arr, Obj};

/// Key of a call sent without `index` (Mistral): a whole call of its own.
const WHOLE: u32 = u32::MAX;

/// The spans the first step keeps: `[reasoning, content, tool_calls, finish_reason]`.
const REASONING: usize = 0;
const CONTENT: usize = 1;
const TOOL_CALLS: usize = 2;
const FINISH: usize = 3;

pub(crate) fn step(ev: &Event<'_>, cur: Cursor, st: &mut State<'_>) -> Step {
    let data = ev.data;
    match cur.step {
        0 => {
            // The SDK reads an `error` event's `error` member as the stream's error.
            if ev.name == Some(b"error") {
                let error = valid::get(data, b"error").filter(|e| trim_ws(e) != b"null");
                return Step::Fail(error_emit(ev, error.unwrap_or(data)));
            }
            if ev.name.is_some_and(|n| n != b"message") {
                st.skipped.unknown_event += 1;
                return Step::Done;
            }
            let Some(mut chunk) = ev.members() else {
                st.skipped.bad_shape += 1;
                return Step::Done;
            };
            // `choices` is read where it stands (the last one wins), the other members
            // skipped: its elements and choice 0's `delta` are walked once, not skipped whole
            // at each level first and walked after.
            let mut choices = Choices::Absent;
            while let Some((k, start)) = chunk.next_name() {
                if k.eq_text(b"choices") {
                    let (read, end) = read_choices(ev, data, start);
                    choices = read;
                    chunk.resume(end);
                    continue;
                }
                let v = chunk.value_at(start);
                if k.eq_text(b"error") && trim_ws(v) != b"null" {
                    return Step::Fail(error_emit(ev, v));
                }
            }
            match choices {
                Choices::Found(cur) => Step::Next(cur),
                Choices::Absent | Choices::NoChoice0 => Step::Done,
                Choices::NotArray => {
                    st.skipped.bad_shape += 1;
                    Step::Done
                }
            }
        }
        1 => text_step(ev, cur, REASONING, true, 2),
        2 => text_step(ev, cur, CONTENT, false, 3),
        3 => element_step(ev, cur, TOOL_CALLS, 4, st, tool_call),
        _ => {
            let reason = ev.member(cur.spans[FINISH]).and_then(valid::string);
            if let Some(reason) = reason {
                st.reason.set(reason, &mut st.skipped);
                st.close_all(Close::Complete);
            }
            Step::Done
        }
    }
}

/// What a `choices` member held.
enum Choices {
    Absent,
    NotArray,
    NoChoice0,
    /// Choice 0's spans, for the steps after the first.
    Found(Cursor),
}

/// The `choices` member whose value starts at `start` in `data`: choice 0 (a choice without
/// `index` counts as 0; the first such wins, each of its members read once, the last of a
/// name winning) and the offset just past the value.
fn read_choices(ev: &Event<'_>, data: &[u8], start: usize) -> (Choices, usize) {
    let rest = data.get(start..).unwrap_or(&[]);
    let Some(mut list) = Arr::of(rest) else {
        return (Choices::NotArray, start + valid::skip(rest, 0));
    };
    let mut found = None;
    while let Some(at) = list.next_start() {
        if found.is_some() {
            let end = valid::skip(rest, at);
            list.resume_at(end);
            continue;
        }
        let (choice, end) = read_choice(ev, rest, at);
        list.resume_at(end);
        found = choice;
    }
    let end = start + list.pos();
    (found.map_or(Choices::NoChoice0, Choices::Found), end)
}

/// The choice at `at` in `list`: its spans when it is choice 0, and the offset past it.
fn read_choice(ev: &Event<'_>, list: &[u8], at: usize) -> (Option<Cursor>, usize) {
    let text = list.get(at..).unwrap_or(&[]);
    let Some(mut members) = Obj::of(text) else {
        // Not an object: a choice with no members, so choice 0 with nothing in it.
        return (Some(Cursor::at(1)), at + valid::skip(text, 0));
    };
    let (mut index, mut delta, mut finish) = (None, Delta::default(), None);
    while let Some((k, start)) = members.next_name() {
        match k.raw() {
            b"delta" => {
                let end;
                (delta, end) = read_delta(text, start);
                members.resume(end);
            }
            b"index" => index = Some(members.value_at(start)),
            b"finish_reason" => finish = Some(members.value_at(start)),
            _ => {
                members.value_at(start);
            }
        }
    }
    let end = at + members.closed().unwrap_or(text.len());
    if index.is_some_and(|i| trim_ws(i) != b"0") {
        return (None, end);
    }
    let mut cur = Cursor::at(1);
    // Servers send one of the two; where both come, `reasoning_content` is read.
    let non_empty = |v: &&[u8]| valid::string(v).is_some_and(|s| !s.raw().is_empty());
    cur.spans[REASONING] = ev.span_of(
        delta
            .reasoning_content
            .filter(non_empty)
            .or(delta.reasoning),
    );
    cur.spans[CONTENT] = ev.span_of(delta.content);
    cur.spans[TOOL_CALLS] = ev.span_of(delta.calls);
    cur.spans[FINISH] = ev.span_of(finish);
    (Some(cur), end)
}

/// The members of a choice's `delta` the later steps read.
#[derive(Default)]
struct Delta<'a> {
    reasoning_content: Option<&'a [u8]>,
    reasoning: Option<&'a [u8]>,
    content: Option<&'a [u8]>,
    calls: Option<&'a [u8]>,
}

/// The `delta` whose value starts at `start` in `choice` (not an object: no members), and
/// the offset past it.
fn read_delta(choice: &[u8], start: usize) -> (Delta<'_>, usize) {
    let text = choice.get(start..).unwrap_or(&[]);
    let mut delta = Delta::default();
    let Some(mut members) = Obj::of(text) else {
        return (delta, start + valid::skip(text, 0));
    };
    for (k, v) in members.by_ref() {
        match k.raw() {
            b"reasoning_content" => delta.reasoning_content = Some(v),
            b"reasoning" => delta.reasoning = Some(v),
            b"content" => delta.content = Some(v),
            b"tool_calls" => delta.calls = Some(v),
            _ => {}
        }
    }
    (delta, start + members.closed().unwrap_or(text.len()))
}

/// One `tool_calls` entry: a new call, a piece of an open one, or (without `index`) a
/// whole call; the frame to write when a new call finds no free slot.
fn tool_call(ev: &Event<'_>, entry: &[u8], st: &mut State<'_>) -> Option<super::step::Emit> {
    let Some(fields) = Obj::of(entry) else {
        st.skipped.bad_shape += 1;
        return None;
    };
    let (mut index, mut id, mut function) = (None, None, None);
    for (k, v) in fields {
        if k.eq_text(b"index") {
            index = Some(v);
        } else if k.eq_text(b"id") {
            id = Some(v);
        } else if k.eq_text(b"function") {
            function = Some(v);
        }
    }
    let (mut name, mut args) = (None, None);
    for (k, v) in function.and_then(Obj::of).into_iter().flatten() {
        match k.raw() {
            b"name" => name = Some(v),
            b"arguments" => args = Some(v),
            _ => {}
        }
    }
    let key = match index {
        None => WHOLE,
        Some(i) => match super::step::as_u32(i) {
            Some(k) if k != WHOLE => k,
            _ => {
                st.skipped.bad_shape += 1;
                return None;
            }
        },
    };
    if st.is_gone(key) {
        return None;
    }
    let i = match st.calls.find(key).filter(|_| key != WHOLE) {
        Some(i) => {
            if let Some(id) = id.and_then(valid::string) {
                st.calls.set_id(i, id);
            }
            if let Some(name) = name.and_then(valid::string) {
                st.calls.set_name(i, name);
            }
            i
        }
        None => match st.open_or_refuse(ev, key, id, name) {
            Ok(i) => i,
            Err(e) => return Some(e),
        },
    };
    if let Some(args) = args {
        match valid::string(args) {
            Some(text) => st.calls.append_text(i, text),
            None if trim_ws(args) != b"null" => st.calls.set_raw(i, args),
            None => {}
        }
    }
    if key == WHOLE {
        st.calls.ready(i, Close::Complete);
    }
    None
}

/// An over-long chunk: the call whose arguments it carried fails.
pub(crate) fn overlong(ev: &Event<'_>, st: &mut State<'_>) -> Step {
    let entry = valid::get(ev.data, b"choices")
        .and_then(|c| Arr::of(c)?.next())
        .and_then(|c| valid::get(c, b"delta"))
        .and_then(|d| valid::get(d, b"tool_calls"));
    if let Some(list) = entry {
        let key = Arr::of(list)
            .and_then(|mut l| l.next())
            .and_then(|e| valid::get(e, b"index"))
            .and_then(super::step::as_u32);
        match key.and_then(|k| st.calls.find(k)) {
            Some(i) => st.calls.break_args(i),
            None => st.calls.break_all_open(),
        }
    }
    Step::Done
}
