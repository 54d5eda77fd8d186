//! OpenAI Responses events: text and reasoning deltas, `function_call` items keyed by
//! `output_index` (their `call_id` is the call's id), complete at
//! `response.function_call_arguments.done` or `response.output_item.done`, whichever comes
//! first; the terminal `response.*` event's `status` is the finish reason.

use super::calls::Close;
use super::step::{
    element_step, error_emit, text_emit, Cursor, Emit, Event, State, StateKind, Step,
};
use crate::json::trim_ws;
use crate::json::valid::{self, Obj};

pub(crate) fn step(ev: &Event<'_>, cur: Cursor, st: &mut State<'_>) -> Step {
    match cur.step {
        0 => {}
        // The terminal response's reasoning items, as its SDK keeps them (they may differ
        // from the `output_item.done` ones: a conversation keeps the last of each id).
        TERMINAL_ITEMS => {
            return element_step(ev, cur, 0, TERMINAL_END, st, |ev, item, _| {
                is_type(item, b"reasoning").then(|| Emit::State {
                    kind: StateKind::Reasoning,
                    at: ev.span(trim_ws(item)),
                })
            })
        }
        TERMINAL_END => return Step::End(Close::Complete),
        _ => return Step::Done,
    }
    let data = ev.data;
    let Some(fields) = ev.members() else {
        st.skipped.bad_shape += 1;
        return Step::Done;
    };
    let (mut ty, mut index, mut item, mut delta, mut arguments, mut response, mut error) =
        (None, None, None, None, None, None, None);
    for (k, v) in fields {
        match k.raw() {
            b"type" => ty = valid::string(v),
            b"output_index" => index = super::step::as_u32(v),
            b"item" => item = Some(v),
            b"delta" => delta = Some(v),
            b"arguments" => arguments = valid::string(v),
            b"response" => response = Some(v),
            b"error" => error = Some(v),
            _ => {}
        }
    }
    let ty = match (ty, ev.name) {
        (Some(t), _) => t.raw(),
        (None, Some(n)) => n,
        (None, None) => {
            st.skipped.bad_shape += 1;
            return Step::Done;
        }
    };
    let done = Cursor::at(1);
    match ty {
        b"error" => Step::Fail(error_emit(
            ev,
            error.filter(|e| Obj::of(e).is_some()).unwrap_or(data),
        )),
        b"response.output_text.delta" => emit(text_emit(ev, delta, false), done),
        b"response.reasoning_text.delta" | b"response.reasoning_summary_text.delta" => {
            emit(text_emit(ev, delta, true), done)
        }
        b"response.output_item.added" | b"response.output_item.done" => {
            let whole = ty == b"response.output_item.done";
            if let Some(item) = item.filter(|i| whole && is_type(i, b"reasoning")) {
                // Given back as it came (SPEC §10.2 rule 2): the item itself, not its parts.
                let at = ev.span(trim_ws(item));
                let kind = StateKind::Reasoning;
                return Step::Emit(Emit::State { kind, at }, done);
            }
            let Some((item, key)) = function_call(item, index) else {
                return Step::Done;
            };
            let i = match st.calls.find(key) {
                Some(i) => i,
                None if st.is_gone(key) => return Step::Done,
                None => match st.open_or_refuse(
                    ev,
                    key,
                    valid::get(item, b"call_id"),
                    valid::get(item, b"name"),
                ) {
                    Ok(i) => i,
                    Err(e) => return Step::Emit(e, done),
                },
            };
            if whole {
                if let Some(text) = valid::get_str(item, b"arguments") {
                    st.calls.set_text(i, text);
                }
                st.ready(i, key);
            }
            Step::Done
        }
        b"response.function_call_arguments.delta" => {
            if let (Some(i), Some(piece)) = (
                index.and_then(|k| st.calls.find(k)),
                delta.and_then(valid::string),
            ) {
                st.calls.append_text(i, piece);
            }
            Step::Done
        }
        b"response.function_call_arguments.done" => {
            if let Some((key, i)) = index.and_then(|k| Some((k, st.calls.find(k)?))) {
                if let Some(text) = arguments {
                    st.calls.set_text(i, text);
                }
                st.ready(i, key);
            }
            Step::Done
        }
        b"response.completed" | b"response.incomplete" | b"response.failed" => {
            let response = response.unwrap_or(b"{}");
            if ty == b"response.failed" {
                if let Some(e) = valid::get(response, b"error").filter(|e| trim_ws(e) != b"null") {
                    return Step::Fail(error_emit(ev, e));
                }
            }
            if let Some(status) = valid::get_str(response, b"status") {
                st.reason.set(status, &mut st.skipped);
            }
            let mut cur = Cursor::at(TERMINAL_ITEMS);
            cur.spans[0] = ev.span_of(valid::get(response, b"output"));
            Step::Next(cur)
        }
        t if t.starts_with(b"response.") => Step::Done,
        _ => {
            st.skipped.unknown_event += 1;
            Step::Done
        }
    }
}

/// Steps of a terminal event: its `response.output` reasoning items, then the end.
const TERMINAL_ITEMS: u8 = 2;
const TERMINAL_END: u8 = 3;

fn emit(e: Option<Emit>, then: Cursor) -> Step {
    match e {
        Some(e) => Step::Emit(e, then),
        None => Step::Done,
    }
}

/// The item and its key when it is a `function_call` (other items are not calls).
fn function_call(item: Option<&[u8]>, index: Option<u32>) -> Option<(&[u8], u32)> {
    let item = item?;
    Some((item, index?)).filter(|_| is_type(item, b"function_call"))
}

/// True when `item`'s `type` is `ty`.
fn is_type(item: &[u8], ty: &[u8]) -> bool {
    valid::get_str(item, b"type").is_some_and(|t| t.eq_text(ty))
}

/// An over-long event: the call whose arguments it carried fails; a terminal event
/// still ends the response with its status.
pub(crate) fn overlong(ev: &Event<'_>, st: &mut State<'_>) -> Step {
    let ty = valid::get_str(ev.data, b"type")
        .map(|t| t.raw())
        .or(ev.name)
        .unwrap_or(b"");
    match ty {
        b"response.completed" | b"response.incomplete" | b"response.failed" => {
            if let Some(status) = valid::get(ev.data, b"response")
                .and_then(|r| valid::get_str(r, b"status"))
                .filter(|s| s.raw().len() < 32)
            {
                st.reason.set(status, &mut st.skipped);
            }
            Step::End(Close::Complete)
        }
        b"response.function_call_arguments.delta"
        | b"response.function_call_arguments.done"
        | b"response.output_item.done" => {
            let key = valid::get(ev.data, b"output_index").and_then(super::step::as_u32);
            match key.and_then(|k| st.calls.find(k)) {
                Some(i) => st.calls.break_args(i),
                None => st.calls.break_all_open(),
            }
            Step::Done
        }
        _ => Step::Done,
    }
}
