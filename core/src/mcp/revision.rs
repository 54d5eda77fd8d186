//! Which revision the server speaks (SPEC §9.9): `server/discover` first, 2026-07-28 when
//! its answer lists it, the `initialize` handshake on the same connection when it answers
//! with an error or not at all in time.

use crate::clock::Instant;
use crate::json::valid::{get, is_true, string, Arr};

use super::config::{McpRevision, PROTOCOL_VERSION_2026};
use super::jsonrpc::Outcome;
use super::listing::Listen;
use super::{span, McpClient, Owed, Phase, StartFault};

impl McpClient<'_> {
    /// When the start-up's `server/discover` counts as unanswered, while it is awaited: call
    /// [`handle_timeout`](Self::handle_timeout) then.
    pub fn poll_timeout(&self) -> Option<Instant> {
        match self.phase {
            Phase::SendDiscover | Phase::AwaitDiscover(_) => Some(self.deadline),
            _ => None,
        }
    }

    /// The time is `now`: a `server/discover` unanswered past its deadline makes the client
    /// send `initialize` (or, fixed to 2026-07-28, fails the start-up). Its late answer is
    /// then counted and ignored.
    pub fn handle_timeout(&mut self, now: Instant) {
        let waiting = matches!(self.phase, Phase::SendDiscover | Phase::AwaitDiscover(_));
        if !waiting || now < self.deadline {
            return;
        }
        self.legacy(StartFault::NoAnswer);
    }

    /// Not a 2026-07-28 server: the handshake, unless the client is fixed to 2026-07-28.
    pub(super) fn legacy(&mut self, fault: StartFault) {
        match self.cfg.revision {
            McpRevision::V2026_07_28 => self.start_failed(fault),
            _ => self.phase = Phase::SendInit,
        }
    }

    /// The answer to `server/discover`.
    pub(super) fn on_discover(&mut self, line: &[u8], outcome: Outcome<'_>) {
        let r = match outcome {
            Outcome::Result(r) => r,
            Outcome::Error(e) => return self.legacy(StartFault::Refused(span(line, e))),
            Outcome::Neither => return self.legacy(StartFault::BadResult(span(line, line))),
        };
        let Some(versions) = get(r, b"supportedVersions") else {
            return self.legacy(StartFault::BadResult(span(line, r)));
        };
        let listed = Arr::of(versions)
            .into_iter()
            .flatten()
            .filter_map(string)
            .any(|v| v.eq_text(PROTOCOL_VERSION_2026.as_bytes()));
        if !listed {
            return self.legacy(StartFault::Version(span(line, versions)));
        }
        let changes = get(r, b"capabilities")
            .and_then(|c| get(c, b"tools"))
            .and_then(|t| get(t, b"listChanged"))
            .is_some_and(is_true);
        if changes && self.can_listen() {
            self.listen = Listen::Send;
        }
        self.version = Some(PROTOCOL_VERSION_2026);
        self.owed = Owed::Initialized {
            version: PROTOCOL_VERSION_2026,
            result: span(line, r),
        };
        self.phase = Phase::SendList;
    }
}
