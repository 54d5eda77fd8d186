//! What a line from the server says: the response, request or notification it is, and what
//! the client then owes the host (frames, events, a reply) or fails.

use crate::json::valid::{get, is_true, string};
use crate::json::{self, JsonErrorKind};

use super::calls::CallState;
use super::config::SUPPORTED_VERSIONS;
use super::frames::McpFailure;
use super::jsonrpc::{self, Message, Outcome};
use super::salvage::Salvage;
use super::stats::bump32;
use super::{span, McpClient, Owed, Phase, StartFault};

impl McpClient<'_> {
    /// The message of `len` bytes in the line buffer (a line, or an HTTP response's body or
    /// event), read out of the buffer, which the handlers leave alone.
    pub(super) fn read_stored(&mut self, len: usize) {
        let buf = core::mem::take(&mut self.line);
        self.on_line(&buf[..len]);
        self.line = buf;
    }

    pub(super) fn on_line(&mut self, line: &[u8]) {
        match json::validate(line, self.cfg.max_depth) {
            Ok(()) => {}
            Err(e) if e.kind == JsonErrorKind::TooDeep => {
                bump32(&mut self.stats.too_deep);
                let mut scan = Salvage::new();
                scan.feed(line);
                let why = McpFailure::ResponseTooDeep {
                    max_depth: self.cfg.max_depth,
                };
                return self.unreadable(scan, why);
            }
            Err(_) => return bump32(&mut self.stats.not_json),
        }
        match jsonrpc::read(line) {
            None => bump32(&mut self.stats.not_jsonrpc),
            Some(Message::Response { id, outcome }) => self.on_response(line, id, outcome),
            Some(Message::Request { id, method }) => {
                // 2026-07-28 has no `ping`: every request from the server is refused.
                let ping = method.eq_text(b"ping") && !self.modern();
                bump32(match ping {
                    true => &mut self.stats.pings,
                    false => &mut self.stats.refused_requests,
                });
                self.owed = Owed::Reply {
                    id: span(line, id),
                    ping,
                };
            }
            Some(Message::Notification { method, params }) => {
                if method.eq_text(b"notifications/progress") {
                    return self.on_progress(line, params);
                }
                if method.eq_text(b"notifications/tools/list_changed") {
                    self.on_list_changed();
                }
                bump32(&mut self.stats.notifications);
                let (start, end) = span(line, method.raw());
                self.owed = Owed::Notification {
                    // With its quotes, to be read back as a string token.
                    method: (start - 1, end + 1),
                    params: params.map(|p| span(line, p)),
                };
            }
        }
    }

    /// Whether `rpc` is a request id the client issued (so a response to it is late).
    fn issued(&self, rpc: u64) -> bool {
        rpc > 0 && rpc < self.next_rpc
    }

    fn on_response(&mut self, line: &[u8], id: Option<u64>, outcome: Outcome<'_>) {
        match (self.phase, id) {
            (Phase::AwaitDiscover(r), Some(id)) if id == r => {
                return self.on_discover(line, outcome)
            }
            // An earlier-revision server may refuse the probe with `"id":null`.
            (Phase::AwaitDiscover(_), None) if matches!(outcome, Outcome::Error(_)) => {
                return self.on_discover(line, outcome)
            }
            (Phase::AwaitInit(r), Some(id)) if id == r => return self.on_initialize(line, outcome),
            (Phase::AwaitList(r), Some(id)) if id == r => return self.on_list(line, outcome),
            (_, Some(id)) if self.listing_response(line, id, outcome) => return,
            _ => {}
        }
        let Some(slot) = id.and_then(|id| self.calls.waiting_for(id)) else {
            return match id.is_some_and(|id| self.issued(id)) {
                true => bump32(&mut self.stats.late),
                false => bump32(&mut self.stats.unknown_id),
            };
        };
        self.owed = match outcome {
            Outcome::Error(e) => Owed::RpcError {
                slot,
                error: span(line, e),
            },
            Outcome::Result(r) if input_required(r) => {
                return self
                    .calls
                    .set_state(slot, CallState::Failing(McpFailure::InputRequired));
            }
            Outcome::Result(r) if get(r, b"isError").is_some_and(is_true) => Owed::IsError {
                slot,
                result: span(line, r),
            },
            Outcome::Result(r) => {
                let structured = get(r, b"structuredContent");
                #[cfg(feature = "schema")]
                if let Some(c) = structured {
                    if let Some((schema, invalid)) = self.check_output(slot, c) {
                        self.owed = Owed::OutputInvalid {
                            slot,
                            value: span(line, c),
                            schema,
                            invalid,
                        };
                        return self.calls.set_state(slot, CallState::Answering);
                    }
                }
                let value = structured.or_else(|| get(r, b"content")).unwrap_or(r);
                Owed::Result {
                    slot,
                    value: span(line, value),
                }
            }
            Outcome::Neither => {
                return self
                    .calls
                    .set_state(slot, CallState::Failing(McpFailure::NoOutcome));
            }
        };
        self.calls.set_state(slot, CallState::Answering);
    }

    fn on_initialize(&mut self, line: &[u8], outcome: Outcome<'_>) {
        let r = match outcome {
            Outcome::Result(r) => r,
            Outcome::Error(e) => return self.start_failed(StartFault::Refused(span(line, e))),
            Outcome::Neither => return self.start_failed(StartFault::BadResult(span(line, line))),
        };
        let Some(version) = get(r, b"protocolVersion") else {
            return self.start_failed(StartFault::BadResult(span(line, r)));
        };
        let known = string(version).and_then(|v| {
            SUPPORTED_VERSIONS
                .into_iter()
                .find(|s| v.eq_text(s.as_bytes()))
        });
        match known {
            Some(version) => {
                self.version = Some(version);
                self.owed = Owed::Initialized {
                    version,
                    result: span(line, r),
                };
                self.phase = Phase::SendInitialized;
            }
            None => self.start_failed(StartFault::Version(span(line, version))),
        }
    }

    pub(super) fn start_failed(&mut self, fault: StartFault) {
        // What the line owes is not lost: the failure is told after it.
        match self.owed {
            Owed::Nothing => self.owed = Owed::StartFailed(fault),
            _ => self.deferred = Some(fault),
        }
        self.phase = Phase::Failed;
        self.outbox.clear();
        self.calls.fail_waiting(McpFailure::NotStarted);
    }

    fn on_progress(&mut self, line: &[u8], params: Option<&[u8]>) {
        let token = params.and_then(jsonrpc::progress_token);
        let Some((slot, params)) = token.and_then(|t| self.calls.waiting_for(t)).zip(params) else {
            return match token.is_some_and(|t| self.issued(t)) {
                true => bump32(&mut self.stats.late),
                false => bump32(&mut self.stats.unknown_progress),
            };
        };
        self.owed = Owed::Progress {
            slot,
            params: span(line, params),
        };
    }

    /// A line the client could not read whole: a response among them fails its call.
    pub(super) fn unreadable(&mut self, scan: Salvage, why: McpFailure) {
        let Some(id) = scan.response_id() else {
            return;
        };
        match self.phase {
            Phase::AwaitDiscover(r) | Phase::AwaitInit(r) | Phase::AwaitList(r) if r == id => {
                self.start_failed(StartFault::TooLarge)
            }
            _ if self.relist == super::listing::Relist::Await(id) => {
                self.relist = super::listing::Relist::Idle;
            }
            _ => match self.calls.waiting_for(id) {
                Some(slot) => self.calls.set_state(slot, CallState::Failing(why)),
                None if self.issued(id) => bump32(&mut self.stats.late),
                None => bump32(&mut self.stats.unknown_id),
            },
        }
    }
}

/// Whether a result is 2026-07-28's `input_required` (SPEC §9.10).
fn input_required(result: &[u8]) -> bool {
    get(result, b"resultType")
        .and_then(string)
        .is_some_and(|t| t.eq_text(b"input_required"))
}
