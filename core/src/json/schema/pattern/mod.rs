//! The `pattern` keyword's matcher: ECMA-262 regular expressions (the `u` flag's syntax and
//! semantics: matched by code point), searched unanchored, with no flags.
//!
//! Both the pattern and the subject are the raw contents of JSON strings, read in place
//! through [`CodePoints`](super::text::CodePoints): nothing is decoded or allocated.
//!
//! Each call compiles the pattern into a fixed-capacity program of [`CAPACITY`] small
//! instructions ([`compile`]) and runs it as a Thompson NFA simulation ([`run`]): the live
//! states are bitsets, one pass over the subject, so the time is O(pattern × subject) and
//! never exponential, and nothing recurses. A character class is kept as its offset in the
//! pattern text and read again when tested, so a class of any size is one instruction.
//! `{n,m}` is expanded into copies of its atom; a pattern whose program would not fit is
//! refused by [`check`] as [`PatternErrorKind::TooLarge`].
//!
//! Stack: the program is 4 × [`CAPACITY`] = 1,536 bytes in [`is_match`]'s frame; the run
//! adds three state bitsets of 48 bytes (the states before and after a code point, and
//! those still to follow while closing over jumps); the compiler (which returns before the
//! run starts) adds its stack of open groups, 8 bytes for each of [`MAX_DEPTH`] + 1. The
//! `stack_use` test measures a whole call, from the caller's frame to the deepest one: 2,130
//! bytes for a match and 2,032 for a [`check`] (x86-64, the core built at `opt-level = 2`).
//!
//! Cost: the step budget pays one step per byte of the pattern (compiling it), one per
//! state a code point is tested against (plus one per entry of a class read), and one per
//! state reached without consuming.
//!
//! Read: literals, `.`, classes (`[…]`, `[^…]`, ranges, escapes), `\d \D \w \W \s \S`, `\b
//! \B`, `^ $`, groups (capturing, `(?:…)`, named), alternation, the quantifiers `* + ?
//! {n} {n,} {n,m}` and their lazy forms (a yes/no answer does not depend on laziness),
//! and the character escapes `\t \n \v \f \r \0 \cX \xHH \uHHHH \u{H…}` and every
//! syntax character escaped. Refused as [`PatternErrorKind::Unsupported`]: backreferences
//! (`\1`, `\k<n>`), lookaround (`(?=`, `(?!`, `(?<=`, `(?<!`), property escapes (`\p{…}`,
//! `\P{…}`) and modifiers (`(?i:…)`).

mod compile;
mod run;

#[cfg(test)]
mod differential;
#[cfg(test)]
mod tests;

use super::text::code_points;

#[cfg(test)]
extern crate std;

/// In tests, notes how deep the stack is here (the `stack_use` test reads it).
#[cfg(test)]
fn probe() {
    tests::note_stack();
}

#[cfg(not(test))]
#[inline(always)]
fn probe() {}

/// The program's capacity, in instructions.
const CAPACITY: usize = 384;

/// The most groups open at once.
const MAX_DEPTH: usize = 32;

/// A pattern the matcher cannot read, and where.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) struct PatternError {
    /// The byte offset in the pattern's raw text of the construct refused.
    pub(crate) at: usize,
    /// Why it is refused.
    pub(crate) kind: PatternErrorKind,
}

/// Why a pattern is refused.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum PatternErrorKind {
    /// Not a regular expression ECMA-262 accepts with the `u` flag.
    Syntax,
    /// Valid ECMA-262, but beyond this matcher (backreferences, lookaround, `\p{…}`).
    Unsupported,
    /// Its program would not fit the matcher's fixed capacity.
    TooLarge,
}

/// Why a match gave no answer.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum PatternFault {
    /// The step budget ran out first.
    TooCostly,
    /// The pattern is one [`check`] refuses.
    Unreadable,
}

/// Whether the matcher reads this pattern (called once when a tool is registered).
pub(crate) fn check(pattern_raw: &[u8]) -> Result<(), PatternError> {
    compile::compile(pattern_raw, &mut Program::new()).map(drop)
}

/// Whether the pattern matches somewhere in the subject. `steps` is a budget decremented
/// per unit of work; `Err(TooCostly)` when it runs out.
pub(crate) fn is_match(
    pattern_raw: &[u8],
    subject_raw: &[u8],
    steps: &mut u32,
) -> Result<bool, PatternFault> {
    let mut program = Program::new();
    compile::compile(pattern_raw, &mut program).map_err(|_| PatternFault::Unreadable)?;
    // Compiling reads each byte of the pattern once (and moves at most the whole program
    // per instruction added): one step per byte.
    let cost = u32::try_from(pattern_raw.len()).unwrap_or(u32::MAX);
    *steps = steps.checked_sub(cost).ok_or(PatternFault::TooCostly)?;
    run::run(&program, pattern_raw, code_points(subject_raw), steps)
}

/// The compiled pattern: instructions, the last a [`Op::Match`].
struct Program {
    code: [Inst; CAPACITY],
    len: usize,
}

impl Program {
    fn new() -> Self {
        Program {
            code: [Inst(0); CAPACITY],
            len: 0,
        }
    }
}

/// A set of code points a class escape names (`\d`, `\W`, ...).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum SetKind {
    Digit,
    NotDigit,
    Word,
    NotWord,
    Space,
    NotSpace,
}

impl SetKind {
    const ALL: [SetKind; 6] = [
        SetKind::Digit,
        SetKind::NotDigit,
        SetKind::Word,
        SetKind::NotWord,
        SetKind::Space,
        SetKind::NotSpace,
    ];

    /// The set a class escape letter names.
    fn from_letter(c: u32) -> Option<Self> {
        Some(match char::from_u32(c)? {
            'd' => SetKind::Digit,
            'D' => SetKind::NotDigit,
            'w' => SetKind::Word,
            'W' => SetKind::NotWord,
            's' => SetKind::Space,
            'S' => SetKind::NotSpace,
            _ => return None,
        })
    }

    fn contains(self, c: u32) -> bool {
        match self {
            SetKind::Digit => is_digit(c),
            SetKind::NotDigit => !is_digit(c),
            SetKind::Word => is_word(c),
            SetKind::NotWord => !is_word(c),
            SetKind::Space => is_space(c),
            SetKind::NotSpace => !is_space(c),
        }
    }
}

fn is_digit(c: u32) -> bool {
    (0x30..=0x39).contains(&c)
}

/// ECMA's word characters without the `i` flag: ASCII only (`\w`, `\b`).
fn is_word(c: u32) -> bool {
    is_digit(c) || (0x41..=0x5A).contains(&c) || (0x61..=0x7A).contains(&c) || c == 0x5F
}

/// ECMA's WhiteSpace and LineTerminator code points (`\s`).
fn is_space(c: u32) -> bool {
    matches!(
        c,
        0x09..=0x0D
            | 0x20
            | 0xA0
            | 0x1680
            | 0x2000..=0x200A
            | 0x2028
            | 0x2029
            | 0x202F
            | 0x205F
            | 0x3000
            | 0xFEFF
    )
}

/// What `.` does not match: ECMA's LineTerminators.
fn is_line_terminator(c: u32) -> bool {
    matches!(c, 0x0A | 0x0D | 0x2028 | 0x2029)
}

/// One instruction, packed in 32 bits: the opcode in bits 24–30, [`Inst::OPTIONAL`] in
/// bit 31, the operand (a code point, a program index or a pattern offset) below.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
struct Inst(u32);

/// An instruction, unpacked.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Op {
    /// Consumes this code point.
    Char(u32),
    /// Consumes any code point but a line terminator.
    Any,
    /// Consumes a code point the class whose contents start at this pattern offset holds
    /// (or, negated, does not hold).
    Class { at: usize, negated: bool },
    /// Consumes a code point of this set.
    Set(SetKind),
    /// Goes on both at the next instruction and at this one.
    Fork(usize),
    /// Goes on at this instruction.
    Jmp(usize),
    /// A jump to the end of its group, not yet known (only while compiling).
    Pending,
    /// At the start of the subject.
    Start,
    /// At the end of the subject.
    End,
    /// At a word boundary (or, negated, not at one).
    WordBoundary { negated: bool },
    /// The pattern has matched.
    Match,
}

/// The largest operand: pattern offsets and code points must fit.
const OPERAND_MAX: usize = 0x00FF_FFFF;

impl Inst {
    /// Marks a consuming instruction that may also be skipped (an `x?` in one instruction).
    const OPTIONAL: u32 = 1 << 31;

    fn new(op: Op) -> Self {
        let (code, operand) = match op {
            Op::Char(c) => (0, c),
            Op::Any => (1, 0),
            Op::Class { at, negated } => (2 + u32::from(negated), at as u32),
            Op::Set(kind) => (4, kind as u32),
            Op::Fork(t) => (5, t as u32),
            Op::Jmp(t) => (6, t as u32),
            Op::Pending => (7, 0),
            Op::Start => (8, 0),
            Op::End => (9, 0),
            Op::WordBoundary { negated } => (10 + u32::from(negated), 0),
            Op::Match => (12, 0),
        };
        Inst((code << 24) | (operand & OPERAND_MAX as u32))
    }

    fn op(self) -> Op {
        let operand = self.0 & OPERAND_MAX as u32;
        match (self.0 >> 24) & 0x7F {
            0 => Op::Char(operand),
            1 => Op::Any,
            2 | 3 => Op::Class {
                at: operand as usize,
                negated: (self.0 >> 24) & 1 == 1,
            },
            4 => Op::Set(SetKind::ALL[operand as usize % SetKind::ALL.len()]),
            5 => Op::Fork(operand as usize),
            6 => Op::Jmp(operand as usize),
            7 => Op::Pending,
            8 => Op::Start,
            9 => Op::End,
            10 | 11 => Op::WordBoundary {
                negated: (self.0 >> 24) & 1 == 1,
            },
            _ => Op::Match,
        }
    }

    /// Whether it consumes a code point.
    fn consumes(self) -> bool {
        matches!(
            self.op(),
            Op::Char(_) | Op::Any | Op::Class { .. } | Op::Set(_)
        )
    }

    fn optional(self) -> bool {
        self.0 & Self::OPTIONAL != 0
    }

    fn with_optional(self) -> Self {
        Inst(self.0 | Self::OPTIONAL)
    }

    /// The program index it jumps to, if it jumps.
    fn target(self) -> Option<usize> {
        match self.op() {
            Op::Fork(t) | Op::Jmp(t) => Some(t),
            _ => None,
        }
    }

    /// The same jump to `t`.
    fn retarget(self, t: usize) -> Self {
        match self.op() {
            Op::Fork(_) => Inst::new(Op::Fork(t)),
            Op::Jmp(_) => Inst::new(Op::Jmp(t)),
            _ => self,
        }
    }
}
