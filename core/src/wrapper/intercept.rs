//! Taking a model's `TOOL_CALL` (SPEC §3.1, §7.4, §7.23): the checks, in order, then the
//! tool runs (sync), or the call takes a slot (deferred, adapter), or fails at once.

use crate::clock::Instant;
use crate::error::Error;
use crate::frame::write::{escaped_len, Known};
use crate::frame::Frame;
use crate::hooks::Hooks;

use crate::json::escape::escaped_prefix;
use crate::json::{self, JsonStr};
use crate::outcome::CallOutcome;
use crate::queue::SlotFrame;
use crate::room::record_cost;
use crate::room::AROUND_NAME_BOUND;
use crate::route::Route;
use crate::texts::Message;
use crate::tool::{PendingKind, ResultWriter, ToolKind};

use super::pipeline::{CallRef, Delivery};
use super::result::{check_result, ResultCheck};
use super::scratch::{compose_into, valid_utf8_prefix};
use super::slots::NewCall;
use super::{Disposition, Wrapper};

/// What a call will do, decided before anything changes.
enum Plan {
    /// Fail at once with the message in the message buffer (this many bytes; `cut` when it
    /// is the model's own `args_error`, cut to fit `message_cap` once escaped).
    Fail { len: usize, cut: bool },
    /// Run this sync tool.
    Sync(usize),
    /// Take this slot for this deferred or adapter tool, after encoding into the queue the
    /// frames an ended call in it still has there (`reclaim`).
    Occupy {
        tool: usize,
        slot: usize,
        reclaim: bool,
    },
}

/// Bounds, quotes included, the escaped length of a message the wrapper composes around a
/// tool name (`Tool <name> timed out after <ms>ms`, `… result exceeds <N> bytes`, …).
pub(super) fn own_message_bound(name_escaped: Option<usize>) -> usize {
    name_escaped.unwrap_or(0) + AROUND_NAME_BOUND
}

/// Length bound of an error message as a JSON string in a `TOOL_RESULT`: escaped, quoted.
pub(super) fn message_len(msg: &Message<'_>) -> usize {
    struct Esc(usize);
    impl crate::sink::Sink for Esc {
        fn put(&mut self, bytes: &[u8]) {
            self.0 += escaped_len(bytes);
        }
    }
    let mut c = Esc(0);
    msg.write_to(&mut c);
    // `completion_cost` counts `"result"`, one byte more than `"error"`, so this is a bound.
    c.0 + 2
}

/// A name's or id's text, or how long it is when longer than its buffer (exactly its
/// capacity). Written without escapes (almost always), it is the frame's own bytes; only an
/// escaped one is decoded into the buffer, and clears `plain`. (Not inlined: it is called
/// twice.)
#[inline(never)]
fn decode<'b>(
    text: Option<JsonStr<'b>>,
    buf: &'b mut [u8],
    plain: &mut bool,
    too_long: fn(usize, usize) -> Error,
) -> Result<Option<&'b str>, Error> {
    let cap = buf.len();
    text.map(|t| match t.as_plain_str() {
        // Equivalent mutant: the guard -> `false`: the name is decoded into `buf` and escaped when
        // written, which gives the same bytes.
        Some(plain) if plain.len() <= cap => Ok(plain),
        _ => {
            *plain = false;
            t.decode_escaped_into(buf)
                .map_err(|e| too_long(e.needed, cap))
        }
    })
    .transpose()
}

impl<H: Hooks> Wrapper<'_, H> {
    pub(super) fn intercept(
        &mut self,
        now: Instant,
        frame: Frame<'_>,
    ) -> Result<Disposition, Error> {
        let frame = match frame.is_validated() {
            true => frame,
            false => Frame::parse_validated(frame.bytes(), self.cfg.max_depth)?,
        };
        let call = frame.tool_call()?;
        let parts = self.scratch.parts(&self.cfg);
        // The buffers are exactly the caps, so a decode fails iff the text is too long, and
        // the failure carries the decoded length for the error.
        let mut plain = true;
        let name = decode(call.name, parts.name, &mut plain, |len, cap| {
            Error::NameTooLong { len, cap }
        })?;
        let id = decode(call.id, parts.id, &mut plain, |len, cap| Error::IdTooLong {
            len,
            cap,
        })?;
        let (msg_buf, output) = (parts.message, parts.output);
        let cref = CallRef {
            index: self.next_index,
            name,
            id,
            args: call.args,
            args_compact: frame.is_compact(),
            names_plain: plain,
        };
        let (name_bytes, id_bytes) = (cref.name_bytes(), cref.id_bytes());
        // Escaped once, for every bound below (written without escapes, they need none).
        let escaped = match plain {
            true => (id_bytes.map(<[u8]>::len), name_bytes.map(<[u8]>::len)),
            false => (id_bytes.map(escaped_len), name_bytes.map(escaped_len)),
        };

        // SPEC §5, §7.4 and §7.23: malformed → `args_error` → unknown name → duplicate id →
        // args too large for a pending call → free slot → run.
        let tool = name_bytes.and_then(|n| self.tools.find(n));
        // A slot whose call ended but whose frames are still queued counts as free: those
        // frames are encoded into the queue to reclaim it (a host that drains never needs to).
        let (free_slot, reclaim) = match self.slots.free_slot() {
            Some(slot) => (Some(slot), false),
            None => (self.slots.queued_slot(), true),
        };
        let duplicate = call.id.is_some_and(|i| self.slots.holds_id(i));
        // Args are held without white space; only a pending call's args longer than the cap
        // as written need measuring.
        let args_cap = self.cfg.args_cap;
        let args_fit = || call.args.len() <= args_cap || json::compact_len(call.args) <= args_cap;
        let failure = match (name_bytes, tool) {
            (None, _) => Some(Message::Malformed),
            (Some(n), None) => Some(Message::NotFound(n)),
            (Some(_), Some(_)) if duplicate => Some(Message::Duplicate(id_bytes.unwrap_or(b""))),
            (Some(n), Some(t)) => match self.tools.get(t).kind {
                ToolKind::Sync(_) => None,
                _ if !args_fit() => Some(Message::ArgsTooLarge(n, args_cap)),
                _ if free_slot.is_none() => Some(Message::TooMany(self.slots.len())),
                _ => None,
            },
        };
        // SPEC §11: the schema comes after the args' size and before a free slot.
        #[cfg(feature = "schema")]
        let invalid = match (tool, &failure) {
            (Some(t), None | Some(Message::TooMany(_))) => self
                .tools
                .get(t)
                .schema
                .and_then(|s| s.validate_valid(call.args).err().map(|e| (s, e))),
            _ => None,
        };
        #[cfg(not(feature = "schema"))]
        let invalid: Option<()> = None;
        // The model said its arguments are broken: answered with its words, cut (and
        // counted) like a sync tool's message, never refused, so the call gets its result.
        let given = call.args_error.filter(|_| name_bytes.is_some());
        let plan = if let Some(text) = given {
            let (decoded, cut) = text.decode_prefix_into(msg_buf);
            let len = escaped_prefix(decoded.as_bytes(), self.cfg.message_cap);
            let cut = cut || len < decoded.len();
            let bound = escaped_len(&msg_buf[..len]) + 2;
            self.out
                .reserve(self.out.completion_cost(&self.cfg, escaped, bound))?;
            Plan::Fail { len, cut }
        } else if let Some(_invalid) = invalid {
            // Its texts quote the args and the schema, so unlike the wrapper's own they can
            // be long: written cut to `message_cap`, escaped, and counted when cut.
            #[cfg(feature = "schema")]
            let (len, cut) = {
                let (schema, e) = _invalid;
                invalid_args_text(msg_buf, name_bytes.unwrap_or(b""), schema, e, call.args)
            };
            #[cfg(not(feature = "schema"))]
            let (len, cut) = (0, false);
            let len = escaped_prefix(&msg_buf[..len], self.cfg.message_cap);
            let bound = escaped_len(&msg_buf[..len]) + 2;
            self.out
                .reserve(self.out.completion_cost(&self.cfg, escaped, bound))?;
            Plan::Fail { len, cut }
        } else if let Some(msg) = failure {
            self.out.reserve(
                self.out
                    .completion_cost(&self.cfg, escaped, message_len(&msg)),
            )?;
            // The wrapper's own texts fit whole (`WrapperConfig::check` sizes `message_cap` for them
            // decoded) and embed the name as it is: they are never cut.
            Plan::Fail {
                len: msg.compose(msg_buf).len(),
                cut: false,
            }
        } else {
            let t = tool.unwrap_or(0);
            // A result, a cut error message, or one of the wrapper's own failure texts.
            let outcome = self.cfg.outcome_bound().max(own_message_bound(escaped.1));
            match self.tools.get(t).kind {
                ToolKind::Sync(_) => {
                    self.out
                        .reserve(self.out.completion_cost(&self.cfg, escaped, outcome))?;
                    Plan::Sync(t)
                }
                ToolKind::Pending(_) => {
                    let adapter = matches!(
                        self.tools.get(t).kind,
                        ToolKind::Pending(PendingKind::Adapter)
                    );
                    let slot = free_slot.unwrap_or(0);
                    // Its frames are records encoded from the slot (`TOOL_CALL` now for an
                    // adapter; then `CANCEL` and `TOOL_RESULT`), so whatever ends it fits a
                    // queue `WrapperConfig::queue_len` sized: a pending call never wedges the wrapper.
                    let mut need = match reclaim {
                        true => self.out.queue.inline_cost(slot as u16, |f| {
                            self.slots.frame(slot, f).len_as(Known::RAW_COMPACT)
                        }),
                        false => 0,
                    };
                    if adapter {
                        need += record_cost(0);
                    }
                    // Drained, the queue frees the slot itself: never too large for it.
                    let free = self.out.queue.free();
                    if reclaim && need > free {
                        return Err(Error::QueueFull { needed: need, free });
                    }
                    self.out.reserve(need)?;
                    Plan::Occupy {
                        tool: t,
                        slot,
                        reclaim,
                    }
                }
            }
        };

        // From here on nothing can fail: the state changes.
        self.next_index = self.next_index.wrapping_add(1);
        self.out.start(&cref);
        debug!("call {} intercepted", cref.index);
        let handle = match plan {
            Plan::Fail { len, cut } => {
                if cut {
                    self.out.stats.messages_truncated =
                        self.out.stats.messages_truncated.saturating_add(1);
                }
                let msg = valid_utf8_prefix(&msg_buf[..len]);
                self.out.fail(&self.cfg, cref, msg, Delivery::Now);
                None
            }
            Plan::Sync(t) => {
                let mut w = ResultWriter::new(&mut output[..self.cfg.sync_area()]);
                let ran = match self.tools.get(t).kind {
                    ToolKind::Sync(f) => f.call(call.args, &mut w),
                    _ => Ok(()),
                };
                let (overflow, compacted) = (w.overflowed(), w.was_compacted());
                let written = w.written().len();
                let n = name_bytes.unwrap_or(b"");
                // Output that cannot be carried fails the call rather than corrupt the stream.
                let failure = match ran {
                    Ok(()) if overflow => Message::ResultTooLarge(n, self.cfg.result_cap),
                    Ok(()) => match check_result(&output[..written], &self.cfg) {
                        ResultCheck::Fits {
                            last_error,
                            compact,
                        } => {
                            let result = json::trim_ws(&output[..written]);
                            self.out.complete_with(
                                &self.cfg,
                                cref,
                                CallOutcome::Result(result),
                                compact,
                                last_error,
                                Delivery::Now,
                            );
                            return Ok(Disposition::Intercepted {
                                index: cref.index,
                                handle: None,
                            });
                        }
                        ResultCheck::TooLarge(_) => Message::ResultTooLarge(n, self.cfg.result_cap),
                        ResultCheck::TooDeep => Message::ResultTooDeep(n, self.cfg.max_depth),
                        ResultCheck::Invalid(_) => Message::InvalidJson(n),
                    },
                    Err(_) => {
                        let cut = escaped_prefix(&output[..written], self.cfg.message_cap);
                        // Cut to fit, or at the first byte that is not UTF-8: flagged either way.
                        let message = valid_utf8_prefix(&output[..cut]);
                        if message.len() < written || overflow || compacted {
                            self.out.stats.messages_truncated =
                                self.out.stats.messages_truncated.saturating_add(1);
                        }
                        self.out.fail(&self.cfg, cref, message, Delivery::Now);
                        return Ok(Disposition::Intercepted {
                            index: cref.index,
                            handle: None,
                        });
                    }
                };
                let message = compose_into(msg_buf, &failure);
                self.out.fail(&self.cfg, cref, message, Delivery::Now);
                None
            }
            Plan::Occupy {
                tool,
                slot,
                reclaim,
            } => {
                if reclaim {
                    let slots = &self.slots;
                    self.out
                        .queue
                        .inline_slot(slot as u16, |f| slots.frame(slot, f));
                    self.slots.free(slot);
                }
                let t = self.tools.get(tool);
                let kind = match t.kind {
                    ToolKind::Pending(kind) => kind,
                    ToolKind::Sync(_) => PendingKind::Deferred,
                };
                let adapter = kind == PendingKind::Adapter;
                let timeout_ms = t.timeout_ms.unwrap_or(self.cfg.tool_timeout_ms);
                let handle = self.slots.occupy(
                    slot,
                    NewCall {
                        index: cref.index,
                        tool,
                        kind,
                        name: name_bytes.unwrap_or(b""),
                        id: id_bytes,
                        args: call.args,
                        args_compact: cref.args_compact,
                        timeout_ms,
                        now,
                        max_total_ms: self.cfg.max_total_timeout_ms,
                    },
                );
                if adapter {
                    let route = Route::Adapter(handle);
                    self.out
                        .queue
                        .push_slot(route, SlotFrame::ToolCall, slot as u16, cref.index);
                }
                debug!("call {} pending in slot {}", cref.index, slot);
                Some(handle)
            }
        };
        Ok(Disposition::Intercepted {
            index: cref.index,
            handle,
        })
    }
}

/// `Tool <name> arguments are invalid: <where>: <why>` (SPEC §11) written into `buf`, cut at
/// a character boundary when it does not fit: its length, and whether it was cut.
#[cfg(feature = "schema")]
fn invalid_args_text(
    buf: &mut [u8],
    name: &[u8],
    schema: &crate::json::schema::Schema<'_>,
    invalid: crate::json::schema::Invalid,
    args: &[u8],
) -> (usize, bool) {
    crate::json::schema::write_cut(buf, |put| {
        // The name is the call's decoded name: UTF-8, as the registry matched it.
        put("Tool ");
        put(core::str::from_utf8(name).unwrap_or(""));
        put(" arguments are invalid: ");
        invalid.display(schema, args).write_to(put);
    })
}
