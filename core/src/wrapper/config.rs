//! A wrapper's capacities and options, and the arena they size.
//!
//! Every size is a `const fn` with saturating arithmetic, so a host can size a
//! `static` arena at compile time; a configuration whose arena does not fit in
//! `usize` comes out as `usize::MAX`, which [`Wrapper::new`](super::Wrapper::new)
//! refuses as [`StorageError::BadConfig`].

use crate::error::StorageError;
use crate::json::DEFAULT_MAX_DEPTH;
use crate::room::{
    record_cost, AROUND_NAME_BOUND, FRAME_AROUND_BOUND, HELD_HEADER, PROMPT_BASE_LEN,
    RELEASE_COST_BOUND, ROUND_LIMIT_LEN_BOUND,
};

/// Capacities and options of a wrapper (SPEC §3, §5 options; §4 limits).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct WrapperConfig {
    /// Timeout of deferred and adapter calls, unless a tool sets its own.
    pub tool_timeout_ms: u32,
    /// The cap on an adapter call's life when its `PROGRESS` frames restart its timeout
    /// (SPEC §5): a deadline never passes `start + max_total_timeout_ms`. 0: progress
    /// restarts nothing.
    pub max_total_timeout_ms: u32,
    /// Also send the continue prompt to the consumer.
    pub mirror_continue: bool,
    /// Continue prompts allowed (0: no limit).
    pub max_rounds: u32,
    /// JSON depth limit of validated frames (the frame object is level 1) and of results
    /// from the host (the result is level 1).
    pub max_depth: u8,
    /// Validate every frame on both paths, not only the ones the wrapper acts on (SPEC §7.25):
    /// a frame broken after its `type`, or with two `type` members, is then malformed
    /// everywhere. Costs a scan of every pass-through frame.
    pub full_validation: bool,
    /// Bytes of a decoded tool name.
    pub name_cap: usize,
    /// Bytes of a decoded call id.
    pub id_cap: usize,
    /// Bytes of a pending call's args, without white space between tokens (SPEC §7.23).
    pub args_cap: usize,
    /// Bytes of a result (adapter-recorded, completed, or written by a sync tool), without
    /// white space between tokens.
    pub result_cap: usize,
    /// Bytes of an error message; also of the escaped last tool error in the prompt.
    pub message_cap: usize,
    /// Trace entries kept.
    pub trace_entries: usize,
    /// Bytes of the trace ring.
    pub trace_bytes: usize,
    /// Bytes for `END`s held while calls are pending (each costs 4 more).
    pub held_bytes: usize,
}

impl WrapperConfig {
    /// SPEC defaults, with capacities for a small microcontroller.
    pub const DEFAULT: WrapperConfig = WrapperConfig {
        tool_timeout_ms: 30_000,
        max_total_timeout_ms: 0,
        mirror_continue: true,
        max_rounds: 0,
        max_depth: DEFAULT_MAX_DEPTH,
        full_validation: false,
        name_cap: 64,
        id_cap: 64,
        args_cap: 512,
        result_cap: 512,
        message_cap: 192,
        trace_entries: 8,
        trace_bytes: 2048,
        held_bytes: 256,
    };

    /// `DEFAULT` with half the capacities, for a few KiB of RAM: names and ids 32 B, args and
    /// results 256 B, messages 96 B (the least allowed: `max(name_cap, id_cap) + 64`), 8 trace
    /// entries in 1 KiB.
    pub const SMALL: WrapperConfig = WrapperConfig {
        name_cap: 32,
        id_cap: 32,
        args_cap: 256,
        result_cap: 256,
        message_cap: 96,
        trace_bytes: 1024,
        ..WrapperConfig::DEFAULT
    };

    /// Bytes of one slot's name, id, args and outcome.
    pub(crate) const fn per_slot(&self) -> usize {
        add(
            add(self.name_cap, self.id_cap),
            add(self.args_cap, self.outcome_area()),
        )
    }

    /// Bytes of a slot's outcome: an adapter's recorded result, then the call's result or
    /// error message until its `TOOL_RESULT` is transmitted.
    pub(crate) const fn outcome_area(&self) -> usize {
        max(self.result_cap, self.message_cap)
    }

    /// Where a sync tool writes: its result, or its error message.
    pub(crate) const fn sync_area(&self) -> usize {
        max(self.result_cap, self.message_cap)
    }

    /// Bytes of scratch: a decoded name and id, a message, a sync tool's output.
    const fn scratch_len(&self) -> usize {
        add(
            add(self.name_cap, self.id_cap),
            add(self.message_cap, self.sync_area()),
        )
    }

    /// Bytes of the output queue. A pending call's frames are encoded from its slot when
    /// they are transmitted, so each queues a header only (`TOOL_CALL`, `CANCEL`,
    /// `TOOL_RESULT`); a call that ends at once (a sync tool, or a failure) is encoded when
    /// it ends, names and ids escaped as heavily as they can be, with the end of the round.
    /// So a drained queue takes any input, and every pending call can end at once.
    pub const fn queue_len(&self, pending: usize) -> usize {
        // Escaping turns a byte into at most 6 (`\u001f`).
        let ids = mul(6, add(self.name_cap, self.id_cap));
        let outcome = max(self.outcome_bound(), self.own_message_bound());
        let at_once = record_cost(add(FRAME_AROUND_BOUND, add(ids, outcome)));
        let per_call = mul(3, record_cost(0));
        add(add(mul(pending, per_call), at_once), self.round_end_len())
    }

    /// Bytes of a call's outcome in its `TOOL_RESULT`: a result, or an error message cut so
    /// that, escaped and quoted, it fits `message_cap + 2`.
    pub(crate) const fn outcome_bound(&self) -> usize {
        max(self.result_cap, add(self.message_cap, 2))
    }

    /// Bytes, escaped and quoted, of the longest message the wrapper composes itself: it
    /// quotes a name or an id (each byte escaped to at most 6).
    const fn own_message_bound(&self) -> usize {
        add(mul(6, max(self.name_cap, self.id_cap)), AROUND_NAME_BOUND)
    }

    /// The longest frame [`poll_transmit`](super::Wrapper::poll_transmit) can hand out: a
    /// buffer of this many bytes is never refused as too small.
    ///
    /// The bound is of the frames the wrapper composes — a `TOOL_RESULT` (its name and id
    /// escaped, its result or message), an adapter's `TOOL_CALL` (its args, compact) or
    /// `CANCEL` (its reason), the continue prompt, the round-limit `ERROR` — and of the
    /// `END`s it holds (the host's own bytes, at most `held_bytes - 4` each).
    pub const fn max_frame_len(&self) -> usize {
        let ids = mul(6, add(self.name_cap, self.id_cap));
        // A result, a message (host texts are cut to fit `message_cap` escaped), args.
        let value = max(
            max(self.outcome_bound(), self.own_message_bound()),
            max(self.args_cap, self.message_cap),
        );
        max(
            max(add(FRAME_AROUND_BOUND, add(ids, value)), self.prompt_len()),
            max(
                ROUND_LIMIT_LEN_BOUND,
                self.held_bytes.saturating_sub(HELD_HEADER),
            ),
        )
    }

    /// Bytes of the continue prompt frame, its last tool error as long as it can be.
    pub(crate) const fn prompt_len(&self) -> usize {
        add(PROMPT_BASE_LEN, self.message_cap)
    }

    /// Most bytes the end of a round can queue: the prompt (one record, also when mirrored)
    /// or else the round-limit `ERROR`, then the held `END`s.
    pub(crate) const fn round_end_len(&self) -> usize {
        add(
            max(
                record_cost(self.prompt_len()),
                record_cost(ROUND_LIMIT_LEN_BOUND),
            ),
            RELEASE_COST_BOUND,
        )
    }

    /// Bytes of the arena [`Wrapper::new`](super::Wrapper::new) needs with `pending` slots.
    pub const fn arena_len(&self, pending: usize) -> usize {
        // Scratch, then the last tool error (`message_cap`).
        add(
            add(
                mul(pending, self.per_slot()),
                add(self.scratch_len(), self.message_cap),
            ),
            add(
                add(self.trace_bytes, self.held_bytes),
                self.queue_len(pending),
            ),
        )
    }

    /// Checks what `Wrapper::new` relies on.
    pub(crate) fn check(&self, pending: usize) -> Result<(), StorageError> {
        let ids_fit = self.name_cap <= u16::MAX as usize && self.id_cap <= u16::MAX as usize;
        // Queue records carry lengths and held-buffer offsets as `u32`.
        let values_fit = [
            self.args_cap,
            self.result_cap,
            self.message_cap,
            self.held_bytes,
        ]
        .iter()
        .all(|&cap| cap <= u32::MAX as usize);
        if !ids_fit
            || !values_fit
            || self.message_cap < self.name_cap.max(self.id_cap) + AROUND_NAME_BOUND
            || self.max_depth < 3
            || self.arena_len(pending) == usize::MAX
        {
            return Err(StorageError::BadConfig);
        }
        Ok(())
    }

    /// Carves `arena` (at least [`arena_len`](Self::arena_len) bytes) into its regions.
    pub(crate) fn carve<'a>(&self, pending: usize, arena: &'a mut [u8]) -> Regions<'a> {
        let mut rest = arena;
        Regions {
            slots: split_off(&mut rest, pending * self.per_slot()),
            scratch: split_off(&mut rest, self.scratch_len()),
            last_error: split_off(&mut rest, self.message_cap),
            trace: split_off(&mut rest, self.trace_bytes),
            held: split_off(&mut rest, self.held_bytes),
            queue: rest,
        }
    }
}

/// Takes the first `n` bytes off `rest` (which keeps the others).
pub(crate) fn split_off<'a>(rest: &mut &'a mut [u8], n: usize) -> &'a mut [u8] {
    let (head, tail) = core::mem::take(rest).split_at_mut(n);
    *rest = tail;
    head
}

/// The arena's regions, in order.
pub(crate) struct Regions<'a> {
    pub(crate) slots: &'a mut [u8],
    pub(crate) scratch: &'a mut [u8],
    pub(crate) last_error: &'a mut [u8],
    pub(crate) trace: &'a mut [u8],
    pub(crate) held: &'a mut [u8],
    pub(crate) queue: &'a mut [u8],
}

const fn add(a: usize, b: usize) -> usize {
    a.saturating_add(b)
}

const fn mul(a: usize, b: usize) -> usize {
    a.saturating_mul(b)
}

// Equivalent mutant: `>` -> `>=`: on equal values both branches give the same value.
const fn max(a: usize, b: usize) -> usize {
    if a > b {
        a
    } else {
        b
    }
}

impl Default for WrapperConfig {
    fn default() -> Self {
        WrapperConfig::DEFAULT
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_presets_pass_the_check_new_makes() {
        assert_eq!(WrapperConfig::DEFAULT.check(4), Ok(()));
        assert_eq!(WrapperConfig::SMALL.check(4), Ok(()));
        // SMALL's message_cap is the least the check allows: one byte less is refused.
        let tighter = WrapperConfig {
            message_cap: WrapperConfig::SMALL.message_cap - 1,
            ..WrapperConfig::SMALL
        };
        assert_eq!(tighter.check(4), Err(StorageError::BadConfig));
    }

    #[test]
    fn the_least_depth_is_three() {
        // A TOOL_CALL's args sit at level 3 (frame, content, args).
        let depth = |max_depth| WrapperConfig {
            max_depth,
            ..WrapperConfig::DEFAULT
        };
        assert_eq!(depth(3).check(1), Ok(()));
        assert_eq!(depth(2).check(1), Err(StorageError::BadConfig));
    }
}
