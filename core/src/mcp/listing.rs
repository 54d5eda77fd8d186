//! The server's tools: listed at start-up page by page, handed to the host one by one, and
//! listed again when the server says they changed (SPEC §9.1, §9.12), with 2026-07-28's
//! subscription for that news.

use crate::json::valid::{get, get_str, string, Arr};
use crate::json::BufferTooSmall;
use crate::sink::write_counted;

use super::jsonrpc::Outcome;
use super::outgoing;
use super::{span, McpClient, McpEvent, McpToolSkip, Owed, Phase, Span, StartFault, MAX_PAGES};

/// Listing the tools again after a change, while calls go on.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub(super) enum Relist {
    Idle,
    /// A page is to be asked for.
    Send,
    /// A page was asked for by this request.
    Await(u64),
    /// A page's tools are being handed out.
    Listed,
}

/// 2026-07-28's `subscriptions/listen` for tool-list changes.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub(super) enum Listen {
    No,
    /// To be sent once the tools are listed (the server can tell of changes).
    Send,
    /// Open under this request id.
    Open(u64),
}

impl McpClient<'_> {
    /// Writes `tools/list` for the next page as request `rpc`.
    pub(super) fn write_list(&mut self, out: &mut [u8], rpc: u64) -> Result<usize, BufferTooSmall> {
        let cursor = self.cursor_len.map(|n| &self.cursor[..n]);
        let meta = self.modern().then_some(self.info);
        let n = write_counted(out, |s| outgoing::tools_list(s, rpc, cursor, meta.as_ref()))?;
        self.next_rpc += 1;
        self.pages += 1;
        Ok(n)
    }

    /// A request of the tool listing's own, once ready: a page asked again, the subscription.
    pub(super) fn poll_listing(
        &mut self,
        out: &mut [u8],
        rpc: u64,
    ) -> Result<Option<usize>, BufferTooSmall> {
        if self.relist == Relist::Send {
            let n = self.write_list(out, rpc)?;
            self.relist = Relist::Await(rpc);
            return Ok(Some(n));
        }
        if self.listen == Listen::Send {
            let info = self.info;
            let n = write_counted(out, |s| outgoing::listen(s, rpc, &info))?;
            self.next_rpc += 1;
            self.listen = Listen::Open(rpc);
            return Ok(Some(n));
        }
        Ok(None)
    }

    /// `notifications/tools/list_changed`: the tools are listed again once they can be.
    pub(super) fn on_list_changed(&mut self) {
        if self.phase == Phase::Ready && self.relist == Relist::Idle {
            self.begin_relist();
        } else if self.phase != Phase::Failed {
            self.relist_again = true;
        }
    }

    fn begin_relist(&mut self) {
        #[cfg(feature = "mcp-http")]
        if let Some(h) = self.http.as_mut() {
            h.clear_params();
        }
        self.relist = Relist::Send;
        self.relist_again = false;
        self.cursor_len = None;
        self.pages = 0;
        self.tools = 0;
    }

    /// Whether a response with id `id` is the answer to a request of the listing's own; it
    /// is then read.
    pub(super) fn listing_response(&mut self, line: &[u8], id: u64, outcome: Outcome<'_>) -> bool {
        if self.relist == Relist::Await(id) {
            self.on_list(line, outcome);
            return true;
        }
        if self.listen == Listen::Open(id) {
            // The subscription ended (or was refused): changes are no longer told.
            self.listen = Listen::No;
            return true;
        }
        false
    }

    /// A `tools/list` page's answer, at start-up or listing again.
    pub(super) fn on_list(&mut self, line: &[u8], outcome: Outcome<'_>) {
        let fault = match self.read_page(line, outcome) {
            Ok(()) => return,
            Err(fault) => fault,
        };
        match self.relist {
            // A failed re-listing leaves the host's list as it was.
            Relist::Await(_) => self.relist = Relist::Idle,
            _ => self.start_failed(fault),
        }
    }

    fn read_page(&mut self, line: &[u8], outcome: Outcome<'_>) -> Result<(), StartFault> {
        let r = match outcome {
            Outcome::Result(r) => r,
            Outcome::Error(e) => return Err(StartFault::Refused(span(line, e))),
            Outcome::Neither => return Err(StartFault::BadResult(span(line, line))),
        };
        let Some((tools, start)) = get(r, b"tools").and_then(|t| Some((t, Arr::of(t)?.pos())))
        else {
            return Err(StartFault::BadResult(span(line, r)));
        };
        let cursor = get(r, b"nextCursor").and_then(string);
        if let Some(c) = cursor {
            let c = c.raw();
            if c.len() > self.cursor.len() {
                return Err(StartFault::CursorTooLong(c.len()));
            }
            if self.pages >= MAX_PAGES {
                return Err(StartFault::TooManyPages);
            }
            self.cursor[..c.len()].copy_from_slice(c);
        }
        self.cursor_len = cursor.map(|c| c.raw().len());
        self.owed = Owed::Tools {
            list: span(line, tools),
            pos: start,
            more: cursor.is_some(),
        };
        match self.relist {
            Relist::Await(_) => self.relist = Relist::Listed,
            _ => self.phase = Phase::Listed,
        }
        Ok(())
    }

    /// A page's end: the next page asked for, or the list complete.
    fn page_done(&mut self, more: bool) -> Option<McpEvent<'static>> {
        if self.relist == Relist::Listed {
            if more {
                self.relist = Relist::Send;
                return None;
            }
            let tools = self.tools;
            self.relist = Relist::Idle;
            if self.relist_again {
                self.begin_relist();
            }
            return Some(McpEvent::ToolsChanged { tools });
        }
        if self.phase != Phase::Listed {
            return None;
        }
        if more {
            self.phase = Phase::SendList;
            return None;
        }
        self.phase = Phase::Ready;
        let tools = self.tools;
        // A change told while listing: the list just handed out may be the old one.
        if self.relist_again {
            self.begin_relist();
        }
        Some(McpEvent::Ready { tools })
    }

    /// The next tool of a `tools/list` page, or the page's end.
    pub(super) fn next_tool(&mut self, list: Span, pos: usize, more: bool) -> Option<McpEvent<'_>> {
        let next = {
            let mut tools = Arr::resume(&self.line[list.0..list.1], pos);
            tools
                .next()
                .map(|tool| (span(self.line, tool), tools.pos()))
        };
        let Some((tool, pos)) = next else {
            self.owed = Owed::Nothing;
            return self.page_done(more);
        };
        self.owed = Owed::Tools { list, pos, more };
        let tool = &self.line[tool.0..tool.1];
        let Some(name) = get_str(tool, b"name") else {
            return Some(McpEvent::ToolSkipped {
                reason: McpToolSkip::NoName,
                tool,
            });
        };
        match name.decode_into(self.scratch) {
            Ok(name) => {
                // Over HTTP a tool's `x-mcp-header` parameters are checked and kept first.
                #[cfg(feature = "mcp-http")]
                if let Some(reason) = self
                    .http
                    .as_mut()
                    .and_then(|h| h.admit(name, tool, self.cfg.header_table_cap))
                {
                    return Some(McpEvent::ToolSkipped { reason, tool });
                }
                self.tools = self.tools.saturating_add(1);
                Some(McpEvent::Tool { name, tool })
            }
            Err(_) => Some(McpEvent::ToolSkipped {
                reason: McpToolSkip::NameTooLong {
                    len: name.decoded_len(),
                    cap: self.cfg.name_cap,
                },
                tool,
            }),
        }
    }
}
