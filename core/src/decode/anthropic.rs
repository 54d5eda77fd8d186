//! Anthropic Messages events: text and thinking deltas, `tool_use` blocks keyed by their
//! `index` (their `input` from the block start, or the `partial_json` pieces joined),
//! complete at `content_block_stop`; `message_delta`'s `stop_reason` is the finish reason.

use super::calls::Close;
use super::step::{error_emit, state_emit, text_emit, Cursor, Emit, Event, State, StateKind, Step};
use crate::json::valid;

/// The event names the SDK reads; others (and events without a name) are skipped.
const KNOWN: [&[u8]; 8] = [
    b"message_start",
    b"message_delta",
    b"message_stop",
    b"content_block_start",
    b"content_block_delta",
    b"content_block_stop",
    b"ping",
    b"error",
];

pub(crate) fn step(ev: &Event<'_>, cur: Cursor, st: &mut State<'_>) -> Step {
    if cur.step > 0 {
        return Step::Done;
    }
    if !ev.name.is_some_and(|n| KNOWN.contains(&n)) {
        st.skipped.unknown_event += 1;
        return Step::Done;
    }
    let data = ev.data;
    let Some(fields) = ev.members() else {
        st.skipped.bad_shape += 1;
        return Step::Done;
    };
    let (mut ty, mut index, mut block, mut delta, mut error) = (None, None, None, None, None);
    for (k, v) in fields {
        match k.raw() {
            b"type" => ty = valid::string(v).map(|t| t.raw()),
            b"index" => index = super::step::as_u32(v),
            b"content_block" => block = Some(v),
            b"delta" => delta = Some(v),
            b"error" => error = Some(v),
            _ => {}
        }
    }
    let ty = ty.or(ev.name).unwrap_or(b"");
    let done = Cursor::at(1);
    let shown = |e: Option<Emit>| match e {
        Some(e) => Step::Emit(e, done),
        None => Step::Done,
    };
    match ty {
        b"error" => Step::Fail(error_emit(ev, error.unwrap_or(data))),
        b"content_block_start" => {
            let (Some(block), Some(key)) = (block, index) else {
                st.skipped.bad_shape += 1;
                return Step::Done;
            };
            let [kind, id, name, input, text, thinking, data] = valid::pick(
                block,
                [
                    b"type",
                    b"id",
                    b"name",
                    b"input",
                    b"text",
                    b"thinking",
                    b"data",
                ],
            );
            match kind.and_then(valid::string).map(|t| t.raw()) {
                Some(b"tool_use") => {
                    if st.calls.find(key).is_some() || st.is_gone(key) {
                        st.skipped.bad_shape += 1;
                        return Step::Done;
                    }
                    match st.open_or_refuse(ev, key, id, name) {
                        Ok(i) => {
                            if let Some(input) = input {
                                if crate::json::is_object(crate::json::trim_ws(input)) {
                                    st.calls.set_raw(i, input);
                                }
                            }
                            Step::Done
                        }
                        Err(e) => Step::Emit(e, done),
                    }
                }
                Some(b"text") => shown(text_emit(ev, text, false)),
                Some(b"thinking") => shown(text_emit(ev, thinking, true)),
                Some(b"redacted_thinking") => {
                    shown(state_emit(ev, data, StateKind::RedactedThinking))
                }
                _ => Step::Done,
            }
        }
        b"content_block_delta" => {
            let Some(delta) = delta else {
                st.skipped.bad_shape += 1;
                return Step::Done;
            };
            let [kind, text, thinking, piece, signature] = valid::pick(
                delta,
                [b"type", b"text", b"thinking", b"partial_json", b"signature"],
            );
            match kind.and_then(valid::string).map(|t| t.raw()) {
                Some(b"text_delta") => shown(text_emit(ev, text, false)),
                Some(b"thinking_delta") => shown(text_emit(ev, thinking, true)),
                // It closes the thinking block whose deltas came as `REASONING` frames.
                Some(b"signature_delta") => shown(state_emit(ev, signature, StateKind::Signature)),
                Some(b"input_json_delta") => {
                    let piece = piece.and_then(valid::string);
                    if let (Some(i), Some(piece)) = (index.and_then(|k| st.calls.find(k)), piece) {
                        st.calls.append_text(i, piece);
                    }
                    Step::Done
                }
                _ => Step::Done,
            }
        }
        b"content_block_stop" => {
            if let Some((key, i)) = index.and_then(|k| Some((k, st.calls.find(k)?))) {
                st.ready(i, key);
            }
            Step::Done
        }
        b"message_delta" => {
            if let Some(reason) = delta.and_then(|d| valid::get_str(d, b"stop_reason")) {
                st.reason.set(reason, &mut st.skipped);
            }
            Step::Done
        }
        b"message_stop" => Step::End(Close::Complete),
        b"message_start" | b"ping" => Step::Done,
        _ => {
            st.skipped.unknown_event += 1;
            Step::Done
        }
    }
}

/// An over-long event: the block whose input it carried fails.
pub(crate) fn overlong(ev: &Event<'_>, st: &mut State<'_>) -> Step {
    if ev.name == Some(b"content_block_delta") {
        let key = valid::get(ev.data, b"index").and_then(super::step::as_u32);
        match key.and_then(|k| st.calls.find(k)) {
            Some(i) => st.calls.break_args(i),
            None => st.calls.break_all_open(),
        }
    }
    Step::Done
}
