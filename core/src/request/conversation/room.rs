//! Room (SPEC §10.2 rule 3): which state goes and which entries are evicted, planned whole
//! before anything moves, so an entry that cannot fit changes nothing.

use super::*;

impl Conversation<'_> {
    /// Makes `needed` bytes free, dropping state and then evicting as SPEC §10.2 rule 3
    /// says, or refuses with nothing changed. `keep` is a call whose turn must stay.
    pub(super) fn make_room(
        &mut self,
        needed: usize,
        keep: Option<u32>,
    ) -> Result<(), ConversationError> {
        let cap = self.buf.len();
        if self.len + needed <= cap {
            return Ok(());
        }
        let plan = self
            .plan(needed, keep)
            .ok_or(ConversationError::NoRoom { needed })?;
        self.apply(plan, keep);
        Ok(())
    }

    /// Which entries are spared: the latest exchange, the open turn, the turn of `keep`,
    /// the system text and a pinned first user text.
    pub(super) fn spared(&self, e: &Entry<'_>, latest: Option<usize>, keep: Option<usize>) -> bool {
        let open = self.open && e.start + e.size() == self.len;
        e.kind == Kind::System
            || e.kind == Kind::PinnedUser
            || open
            || Some(e.start) == latest
            || Some(e.start) == keep
    }

    pub(super) fn latest_exchange(&self) -> Option<usize> {
        self.entries()
            .filter(|e| e.has_calls())
            .last()
            .map(|e| e.start)
    }

    pub(super) fn keep_start(&self, keep: Option<u32>) -> Option<usize> {
        keep.and_then(|s| self.call_by_seq(s))
            .map(|(_, start)| start)
    }

    /// How many turns to strip and entries to evict, oldest first, for `needed` bytes.
    pub(super) fn plan(&self, needed: usize, keep: Option<u32>) -> Option<Plan> {
        let cap = self.buf.len();
        let (latest, keep) = (self.latest_exchange(), self.keep_start(keep));
        let mut free = cap - self.len;
        let mut plan = Plan::default();
        // First the state of every turn but the spared ones, oldest first.
        for e in self.entries() {
            if free >= needed {
                return Some(plan);
            }
            if e.kind == Kind::Turn && !self.spared(&e, latest, keep) {
                free += strip_saving(&e);
                plan.strip += 1;
            }
        }
        // Then whole entries, oldest first (every turn among them stripped by now), until
        // what is kept starts with a user text.
        let pinned = self.entries().any(|e| e.kind == Kind::PinnedUser);
        let mut first_kept = false;
        for e in self.entries() {
            if e.kind == Kind::System || e.kind == Kind::PinnedUser {
                continue;
            }
            let spared = self.spared(&e, latest, keep);
            if free >= needed && (plan.evict == 0 || pinned || first_kept || e.kind.is_user()) {
                break;
            }
            if spared {
                first_kept = true;
                continue;
            }
            free += match e.kind {
                Kind::Turn => e.size() - strip_saving(&e),
                _ => e.size(),
            };
            plan.evict += 1;
        }
        (free >= needed).then_some(plan)
    }

    pub(super) fn apply(&mut self, plan: Plan, keep: Option<u32>) {
        let mut stripped = 0;
        while stripped < plan.strip {
            let (latest, keep_at) = (self.latest_exchange(), self.keep_start(keep));
            let target = self
                .entries()
                .filter(|e| e.kind == Kind::Turn && !self.spared(e, latest, keep_at))
                .nth(stripped)
                .map(|e| e.start);
            match target {
                Some(at) => self.strip(at),
                None => break,
            }
            stripped += 1;
        }
        for _ in 0..plan.evict {
            let (latest, keep_at) = (self.latest_exchange(), self.keep_start(keep));
            let target = self
                .entries()
                .find(|e| {
                    e.kind != Kind::System
                        && e.kind != Kind::PinnedUser
                        && !self.spared(e, latest, keep_at)
                })
                .map(|e| (e.start, e.size()));
            if let Some((at, size)) = target {
                self.remove(at, size);
                self.evicted += 1;
            }
        }
    }

    /// Drops a turn's reasoning and provider state in place.
    pub(super) fn strip(&mut self, entry: usize) {
        let total = HEAD + read_u32(self.buf, entry + 1);
        let end = entry + total;
        let mut r = entry + HEAD + 1;
        let mut w = r;
        while r < end {
            let tag = Tag::of(self.buf[r]);
            let size = HEAD + read_u32(self.buf, r + 1);
            let sig = read_u32(self.buf, r + HEAD);
            match tag {
                Some(t) if t.is_state() => {}
                Some(Tag::Text | Tag::Call) if sig > 0 => {
                    // The part without its signature: head, an empty sig field, the rest.
                    let rest = r + SIG_FIELD + FIELD + sig;
                    self.buf.copy_within(r..r + HEAD, w);
                    write_u32(self.buf, w + 1, size - HEAD - sig);
                    write_u32(self.buf, w + SIG_FIELD, 0);
                    self.buf.copy_within(rest..r + size, w + SIG_FIELD + FIELD);
                    w += size - sig;
                }
                _ => {
                    self.buf.copy_within(r..r + size, w);
                    w += size;
                }
            }
            r += size;
        }
        let saved = end - w;
        write_u32(self.buf, entry + 1, total - HEAD - saved);
        self.remove(w, saved);
    }
}

#[derive(Copy, Clone, Debug, Default)]
pub(super) struct Plan {
    strip: usize,
    evict: usize,
}

/// Bytes a turn gives back when its reasoning and provider state go.
pub(super) fn strip_saving(e: &Entry<'_>) -> usize {
    e.parts()
        .map(|p| match p.tag {
            t if t.is_state() => p.size(),
            Tag::Text | Tag::Call => p.sig().len(),
            _ => 0,
        })
        .sum()
}
