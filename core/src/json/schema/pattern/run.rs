//! A [`Program`] over a subject, as a Thompson NFA simulation: the set of live
//! instructions before each code point, one pass, no backtracking and no recursion.

use super::super::text::CodePoints;
use super::compile::class_item;
use super::{is_line_terminator, is_word, probe, Inst, Op, PatternFault, Program, CAPACITY};

/// One bit per instruction.
type States = [u64; CAPACITY.div_ceil(64)];

/// The code points on either side of the position the states are at.
#[derive(Copy, Clone)]
struct Around {
    before: Option<u32>,
    after: Option<u32>,
}

/// Takes one step from the budget.
fn spend(steps: &mut u32, n: u32) -> Result<(), PatternFault> {
    *steps = steps.checked_sub(n).ok_or(PatternFault::TooCostly)?;
    Ok(())
}

/// Whether the program matches somewhere in `subject`.
pub(super) fn run(
    program: &Program,
    pattern_raw: &[u8],
    mut subject: CodePoints<'_>,
    steps: &mut u32,
) -> Result<bool, PatternFault> {
    let mut current: States = [0; CAPACITY.div_ceil(64)];
    let mut next: States = [0; CAPACITY.div_ceil(64)];
    // A program that starts with `^` can only start at the subject's start.
    let anchored = program.code[0].op() == Op::Start;
    let mut before = None;
    loop {
        let after = subject.peek();
        let around = Around { before, after };
        if before.is_none() || !anchored {
            if closure(program, &mut current, 0, around, steps)? {
                return Ok(true);
            }
        } else if current.iter().all(|&w| w == 0) {
            return Ok(false);
        }
        let Some(c) = subject.next() else {
            return Ok(false);
        };
        let around = Around {
            before: Some(c),
            after: subject.peek(),
        };
        next.fill(0);
        for (w, &word) in current.iter().enumerate() {
            let mut bits = word;
            while bits != 0 {
                let pc = w * 64 + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                let inst = program.code[pc];
                if inst.consumes()
                    && accepts(inst, c, pattern_raw, steps)?
                    && closure(program, &mut next, pc + 1, around, steps)?
                {
                    return Ok(true);
                }
            }
        }
        core::mem::swap(&mut current, &mut next);
        before = Some(c);
    }
}

/// Whether the consuming instruction `inst` takes `c`.
fn accepts(inst: Inst, c: u32, pattern_raw: &[u8], steps: &mut u32) -> Result<bool, PatternFault> {
    spend(steps, 1)?;
    Ok(match inst.op() {
        Op::Char(x) => x == c,
        Op::Any => !is_line_terminator(c),
        Op::Set(kind) => kind.contains(c),
        Op::Class { at, negated } => {
            let mut cp = CodePoints::at(pattern_raw, at);
            let mut found = false;
            while let Ok(Some(item)) = class_item(&mut cp) {
                probe();
                spend(steps, 1)?;
                if item.contains(c) {
                    found = true;
                    break;
                }
            }
            found != negated
        }
        _ => false,
    })
}

/// Adds `pc` to `states` with every instruction reached from it without consuming;
/// `true` when that reaches [`Op::Match`]. The instructions still to follow are a set too
/// (each enters `states` once), not a stack: its size is fixed and small.
fn closure(
    program: &Program,
    states: &mut States,
    pc: usize,
    around: Around,
    steps: &mut u32,
) -> Result<bool, PatternFault> {
    probe();
    let mut todo: States = [0; CAPACITY.div_ceil(64)];
    add(program, states, &mut todo, pc);
    while let Some(w) = todo.iter().position(|&w| w != 0) {
        let pc = w * 64 + todo[w].trailing_zeros() as usize;
        todo[w] &= todo[w] - 1;
        spend(steps, 1)?;
        let inst = program.code[pc];
        let (first, second) = match inst.op() {
            Op::Match => return Ok(true),
            Op::Jmp(t) => (Some(t), None),
            Op::Fork(t) => (Some(pc + 1), Some(t)),
            Op::Start => (around.before.is_none().then_some(pc + 1), None),
            Op::End => (around.after.is_none().then_some(pc + 1), None),
            Op::WordBoundary { negated } => {
                let before = around.before.is_some_and(is_word);
                let boundary = before != around.after.is_some_and(is_word);
                ((boundary != negated).then_some(pc + 1), None)
            }
            Op::Pending => (None, None),
            Op::Char(_) | Op::Any | Op::Class { .. } | Op::Set(_) => {
                (inst.optional().then_some(pc + 1), None)
            }
        };
        for t in [first, second].into_iter().flatten() {
            add(program, states, &mut todo, t);
        }
    }
    Ok(false)
}

/// Puts `pc` in `states` and in `todo`, unless it is in `states` already.
fn add(program: &Program, states: &mut States, todo: &mut States, pc: usize) {
    if pc >= program.len {
        return;
    }
    let (w, bit) = (pc / 64, 1u64 << (pc % 64));
    if states[w] & bit == 0 {
        states[w] |= bit;
        todo[w] |= bit;
    }
}
