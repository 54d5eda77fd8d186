//! The pattern's text into a [`Program`], in one pass without recursion: open groups are
//! kept on a fixed stack, and a quantifier rewrites the program after its atom.

use super::super::text::{code_points, CodePoints};
use super::{
    probe, Inst, Op, PatternError, PatternErrorKind, Program, SetKind, CAPACITY, MAX_DEPTH,
    OPERAND_MAX,
};

/// What a class holds, one entry read at a time.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(super) enum ClassItem {
    /// The code points from the first to the second, both included.
    Range(u32, u32),
    /// A class escape's set (`\d`, `\S`, ...).
    Set(SetKind),
}

impl ClassItem {
    pub(super) fn contains(self, c: u32) -> bool {
        match self {
            ClassItem::Range(lo, hi) => (lo..=hi).contains(&c),
            ClassItem::Set(kind) => kind.contains(c),
        }
    }
}

/// The error of a class left open: its `[`'s offset replaces this one.
const UNCLOSED: usize = usize::MAX;

/// The next entry of a class (`None` past its `]`), `cp` at the entry.
pub(super) fn class_item(cp: &mut CodePoints<'_>) -> Result<Option<ClassItem>, PatternError> {
    if cp.peek() == Some(u32::from(b']')) {
        cp.next();
        return Ok(None);
    }
    let at = cp.pos();
    let first = class_atom(cp)?;
    let mut ahead = *cp;
    if ahead.next() == Some(u32::from(b'-')) && !matches!(ahead.peek(), None | Some(0x5D)) {
        *cp = ahead;
        let last = class_atom(cp)?;
        return match (first, last) {
            (ClassItem::Range(lo, _), ClassItem::Range(hi, _)) if lo <= hi => {
                Ok(Some(ClassItem::Range(lo, hi)))
            }
            _ => Err(syntax(at)),
        };
    }
    Ok(Some(first))
}

/// One code point or class escape inside a class.
fn class_atom(cp: &mut CodePoints<'_>) -> Result<ClassItem, PatternError> {
    let at = cp.pos();
    let c = cp.next().ok_or(syntax(UNCLOSED))?;
    if c != u32::from(b'\\') {
        return Ok(ClassItem::Range(c, c));
    }
    let e = cp.next().ok_or(syntax(UNCLOSED))?;
    if let Some(kind) = SetKind::from_letter(e) {
        return Ok(ClassItem::Set(kind));
    }
    let c = match char::from_u32(e) {
        Some('b') => 0x08,
        Some('-') => e,
        Some('p' | 'P') => return Err(property_escape(cp, at)),
        _ => char_escape(cp, e, at)?,
    };
    Ok(ClassItem::Range(c, c))
}

fn syntax(at: usize) -> PatternError {
    PatternError {
        at,
        kind: PatternErrorKind::Syntax,
    }
}

fn unsupported(at: usize) -> PatternError {
    PatternError {
        at,
        kind: PatternErrorKind::Unsupported,
    }
}

fn too_large(at: usize) -> PatternError {
    PatternError {
        at,
        kind: PatternErrorKind::TooLarge,
    }
}

/// `\p{…}` and `\P{…}` are valid but not read; without the brace they are not valid.
fn property_escape(cp: &CodePoints<'_>, at: usize) -> PatternError {
    if cp.peek() == Some(u32::from(b'{')) {
        unsupported(at)
    } else {
        syntax(at)
    }
}

/// The value of a character escape whose letter `e` was just read (its `\` at `at`).
fn char_escape(cp: &mut CodePoints<'_>, e: u32, at: usize) -> Result<u32, PatternError> {
    let Some(letter) = char::from_u32(e) else {
        return Err(syntax(at));
    };
    Ok(match letter {
        't' => 0x09,
        'n' => 0x0A,
        'v' => 0x0B,
        'f' => 0x0C,
        'r' => 0x0D,
        'c' => match cp.peek().and_then(char::from_u32) {
            Some(l) if l.is_ascii_alphabetic() => {
                cp.next();
                u32::from(l) % 32
            }
            _ => return Err(syntax(at)),
        },
        // `\0` followed by a digit is an octal escape, which the `u` flag refuses.
        '0' if cp.peek().is_some_and(super::is_digit) => return Err(syntax(at)),
        '0' => 0,
        'x' => hex(cp, 2).ok_or(syntax(at))?,
        'u' => unicode_escape(cp).ok_or(syntax(at))?,
        '^' | '$' | '\\' | '.' | '*' | '+' | '?' | '(' | ')' | '[' | ']' | '{' | '}' | '|'
        | '/' => e,
        _ => return Err(syntax(at)),
    })
}

/// `digits` hex digits, as their value.
fn hex(cp: &mut CodePoints<'_>, digits: usize) -> Option<u32> {
    let mut value = 0;
    for _ in 0..digits {
        value = (value << 4) | char::from_u32(cp.next()?)?.to_digit(16)?;
    }
    Some(value)
}

/// The rest of a `\u` escape: `{H…}`, or `HHHH` (a lead surrogate joined with a trail
/// surrogate escape right after it, as the `u` flag reads them).
fn unicode_escape(cp: &mut CodePoints<'_>) -> Option<u32> {
    if cp.peek() == Some(u32::from(b'{')) {
        cp.next();
        let mut value: u32 = 0;
        let mut digits = 0;
        loop {
            let c = cp.next()?;
            if c == u32::from(b'}') && digits > 0 {
                return Some(value);
            }
            value = (value << 4) | char::from_u32(c)?.to_digit(16)?;
            digits += 1;
            if value > 0x10FFFF {
                return None;
            }
        }
    }
    let value = hex(cp, 4)?;
    if (0xD800..0xDC00).contains(&value) {
        let mut ahead = *cp;
        if ahead.next() == Some(u32::from(b'\\')) && ahead.next() == Some(u32::from(b'u')) {
            if let Some(trail @ 0xDC00..=0xDFFF) = hex(&mut ahead, 4) {
                *cp = ahead;
                return Some(0x10000 + ((value - 0xD800) << 10) + (trail - 0xDC00));
            }
        }
    }
    Some(value)
}

/// The places for instructions before the final [`Op::Match`].
const ROOM: usize = CAPACITY - 1;

/// A group open while compiling.
#[derive(Copy, Clone)]
struct Frame {
    /// Where its code starts in the program.
    start: u16,
    /// Where its current alternative's code starts.
    alternative: u16,
    /// Its `(`'s offset in the pattern (which is at most [`OPERAND_MAX`] bytes).
    open_at: u32,
}

/// The pattern's text into `program`.
pub(super) fn compile(raw: &[u8], program: &mut Program) -> Result<(), PatternError> {
    if raw.len() > OPERAND_MAX {
        return Err(too_large(0));
    }
    program.len = 0;
    let top = Frame {
        start: 0,
        alternative: 0,
        open_at: 0,
    };
    let mut c = Compiler {
        cp: code_points(raw),
        program,
        frames: [top; MAX_DEPTH + 1],
        depth: 0,
        atom: None,
    };
    while c.term()? {}
    if c.depth > 0 {
        return Err(syntax(c.frames[c.depth].open_at as usize));
    }
    c.close_alternatives(0);
    c.emit(Inst::new(Op::Match), raw.len())
}

struct Compiler<'p, 'r> {
    cp: CodePoints<'r>,
    program: &'p mut Program,
    /// The open groups, the whole pattern at 0.
    frames: [Frame; MAX_DEPTH + 1],
    depth: usize,
    /// Where the atom a quantifier would repeat starts, if one was just read.
    atom: Option<usize>,
}

impl Compiler<'_, '_> {
    /// Reads one term (or `|`, `(`, `)`); `false` at the end of the pattern.
    fn term(&mut self) -> Result<bool, PatternError> {
        probe();
        let at = self.cp.pos();
        let Some(c) = self.cp.next() else {
            return Ok(false);
        };
        let Some(ch) = char::from_u32(c) else {
            self.atom(Op::Char(c), at)?;
            return Ok(true);
        };
        match ch {
            '|' => self.alternative(at)?,
            '(' => self.open(at)?,
            ')' => self.close(at)?,
            '*' => self.quantify(at, 0, None)?,
            '+' => self.quantify(at, 1, None)?,
            '?' => self.quantify(at, 0, Some(1))?,
            '{' => {
                let (min, max) = self.braces(at)?;
                self.quantify(at, min, max)?;
            }
            '}' | ']' => return Err(syntax(at)),
            '^' => self.assertion(Op::Start, at)?,
            '$' => self.assertion(Op::End, at)?,
            '.' => self.atom(Op::Any, at)?,
            '[' => self.class(at)?,
            '\\' => self.escape(at)?,
            _ => self.atom(Op::Char(c), at)?,
        }
        Ok(true)
    }

    /// Appends `inst`, leaving the program's last place to the final [`Op::Match`].
    fn emit(&mut self, inst: Inst, at: usize) -> Result<(), PatternError> {
        let p = &mut *self.program;
        if p.len >= ROOM && inst.op() != Op::Match {
            return Err(too_large(at));
        }
        let slot = p.code.get_mut(p.len).ok_or(too_large(at))?;
        *slot = inst;
        p.len += 1;
        Ok(())
    }

    fn atom(&mut self, op: Op, at: usize) -> Result<(), PatternError> {
        self.atom = Some(self.program.len);
        self.emit(Inst::new(op), at)
    }

    fn assertion(&mut self, op: Op, at: usize) -> Result<(), PatternError> {
        self.atom = None;
        self.emit(Inst::new(op), at)
    }

    /// Inserts `inst` at `p`, the code after it moved one place on (and its jumps with it).
    fn insert(&mut self, p: usize, inst: Inst, at: usize) -> Result<(), PatternError> {
        let prog = &mut *self.program;
        if prog.len >= ROOM {
            return Err(too_large(at));
        }
        for i in (p..prog.len).rev() {
            let moved = prog.code[i];
            prog.code[i + 1] = match moved.target() {
                Some(t) if t >= p => moved.retarget(t + 1),
                _ => moved,
            };
        }
        prog.code[p] = inst;
        prog.len += 1;
        Ok(())
    }

    /// Appends a copy of the `len` instructions at `p`, its jumps inside moved with it.
    fn copy(&mut self, p: usize, len: usize, at: usize) -> Result<(), PatternError> {
        let prog = &mut *self.program;
        let dst = prog.len;
        if dst + len > ROOM {
            return Err(too_large(at));
        }
        for i in 0..len {
            let inst = prog.code[p + i];
            prog.code[dst + i] = match inst.target() {
                Some(t) if (p..=p + len).contains(&t) => inst.retarget(t + dst - p),
                _ => inst,
            };
        }
        prog.len += len;
        Ok(())
    }

    /// `|`: the alternative so far gets a fork to the next one, and a jump to the group's end.
    fn alternative(&mut self, at: usize) -> Result<(), PatternError> {
        self.atom = None;
        let p = usize::from(self.frames[self.depth].alternative);
        self.insert(p, Inst::new(Op::Fork(0)), at)?;
        self.emit(Inst::new(Op::Pending), at)?;
        let next = self.program.len;
        self.program.code[p] = Inst::new(Op::Fork(next));
        self.frames[self.depth].alternative = next as u16;
        Ok(())
    }

    /// The pending jumps of the group starting at `start` now go to its end.
    fn close_alternatives(&mut self, start: usize) {
        let prog = &mut *self.program;
        let end = prog.len;
        for inst in &mut prog.code[start..end] {
            if inst.op() == Op::Pending {
                *inst = Inst::new(Op::Jmp(end));
            }
        }
    }

    fn open(&mut self, at: usize) -> Result<(), PatternError> {
        if self.cp.peek() == Some(u32::from(b'?')) {
            self.cp.next();
            match self.cp.next().and_then(char::from_u32) {
                Some(':') => {}
                Some('=' | '!') => return Err(unsupported(at)),
                Some('<') => match self.cp.peek().and_then(char::from_u32) {
                    Some('=' | '!') => return Err(unsupported(at)),
                    _ => self.group_name(at)?,
                },
                Some('i' | 'm' | 's' | '-') => return Err(unsupported(at)),
                _ => return Err(syntax(at)),
            }
        }
        if self.depth == MAX_DEPTH {
            return Err(too_large(at));
        }
        self.depth += 1;
        let start = self.program.len as u16;
        self.frames[self.depth] = Frame {
            start,
            alternative: start,
            open_at: at as u32,
        };
        self.atom = None;
        Ok(())
    }

    /// A group's name and its `>` (identifier characters; non-ASCII ones all taken as such).
    fn group_name(&mut self, at: usize) -> Result<(), PatternError> {
        let mut first = true;
        loop {
            let mut c = self.cp.next().ok_or(syntax(at))?;
            if c == u32::from(b'>') && !first {
                return Ok(());
            }
            if c == u32::from(b'\\') {
                if self.cp.next() != Some(u32::from(b'u')) {
                    return Err(syntax(at));
                }
                c = unicode_escape(&mut self.cp).ok_or(syntax(at))?;
            }
            let ok = match char::from_u32(c) {
                Some(l) if l.is_ascii() => {
                    l.is_ascii_alphabetic()
                        || l == '$'
                        || l == '_'
                        || (!first && l.is_ascii_digit())
                }
                Some(_) => true,
                None => false,
            };
            if !ok {
                return Err(syntax(at));
            }
            first = false;
        }
    }

    fn close(&mut self, at: usize) -> Result<(), PatternError> {
        if self.depth == 0 {
            return Err(syntax(at));
        }
        let start = usize::from(self.frames[self.depth].start);
        self.close_alternatives(start);
        self.depth -= 1;
        self.atom = Some(start);
        Ok(())
    }

    /// `{n}`, `{n,}` or `{n,m}` after its `{`: the least and the most repeats.
    fn braces(&mut self, at: usize) -> Result<(u32, Option<u32>), PatternError> {
        let min = self.number().ok_or(syntax(at))?;
        let max = if self.cp.peek() == Some(u32::from(b',')) {
            self.cp.next();
            self.number()
        } else {
            Some(min)
        };
        if self.cp.next() != Some(u32::from(b'}')) {
            return Err(syntax(at));
        }
        if max.is_some_and(|max| max < min) {
            return Err(syntax(at));
        }
        Ok((min, max))
    }

    /// Decimal digits (saturating), if there are any.
    fn number(&mut self) -> Option<u32> {
        let mut value: Option<u32> = None;
        while let Some(d) = self
            .cp
            .peek()
            .and_then(char::from_u32)
            .and_then(|c| c.to_digit(10))
        {
            self.cp.next();
            value = Some(value.unwrap_or(0).saturating_mul(10).saturating_add(d));
        }
        value
    }

    /// Repeats the atom just read from `min` to `max` times (no `max`: without bound).
    fn quantify(&mut self, at: usize, min: u32, max: Option<u32>) -> Result<(), PatternError> {
        let p = self.atom.take().ok_or(syntax(at))?;
        if self.cp.peek() == Some(u32::from(b'?')) {
            // Lazy: the same strings match, only the preferred one differs.
            self.cp.next();
        }
        let len = self.program.len - p;
        if max == Some(0) || len == 0 {
            // Repeating nothing (`(?:){9999999}`) is nothing: no copies, no loop.
            self.program.len = p;
            return Ok(());
        }
        let x = self.program.code[p];
        if len == 1 && x.consumes() && !x.optional() {
            // One consuming instruction: each optional copy is that instruction marked
            // optional, with no fork.
            if min == 0 {
                self.program.code[p] = x.with_optional();
            }
            for _ in 1..min {
                self.emit(x, at)?;
            }
            match max {
                None => self.emit(Inst::new(Op::Fork(self.program.len - 1)), at),
                Some(max) => {
                    for _ in min.max(1)..max {
                        self.emit(x.with_optional(), at)?;
                    }
                    Ok(())
                }
            }
        } else if min == 0 {
            // [fork past X, X], then either a jump back to the fork or more such units.
            self.insert(p, Inst::new(Op::Fork(p + len + 1)), at)?;
            match max {
                None => {
                    self.emit(Inst::new(Op::Jmp(p)), at)?;
                    self.program.code[p] = Inst::new(Op::Fork(self.program.len));
                    Ok(())
                }
                Some(max) => {
                    for _ in 1..max {
                        self.copy(p, len + 1, at)?;
                    }
                    Ok(())
                }
            }
        } else {
            for _ in 1..min {
                self.copy(p, len, at)?;
            }
            match max {
                None => self.emit(Inst::new(Op::Fork(self.program.len - len)), at),
                Some(max) => {
                    for _ in min..max {
                        let fork = self.program.len;
                        self.emit(Inst::new(Op::Fork(fork + 1 + len)), at)?;
                        self.copy(p, len, at)?;
                    }
                    Ok(())
                }
            }
        }
    }

    fn class(&mut self, at: usize) -> Result<(), PatternError> {
        let negated = self.cp.peek() == Some(u32::from(b'^'));
        if negated {
            self.cp.next();
        }
        let start = self.cp.pos();
        loop {
            match class_item(&mut self.cp) {
                Ok(Some(_)) => {}
                Ok(None) => break,
                Err(e) if e.at == UNCLOSED => return Err(syntax(at)),
                Err(e) => return Err(e),
            }
        }
        self.atom(Op::Class { at: start, negated }, at)
    }

    /// After a `\` outside a class.
    fn escape(&mut self, at: usize) -> Result<(), PatternError> {
        let e = self.cp.next().ok_or(syntax(at))?;
        if let Some(kind) = SetKind::from_letter(e) {
            return self.atom(Op::Set(kind), at);
        }
        match char::from_u32(e) {
            Some('b') => self.assertion(Op::WordBoundary { negated: false }, at),
            Some('B') => self.assertion(Op::WordBoundary { negated: true }, at),
            // A backreference: the matcher keeps no captures.
            Some('1'..='9') => Err(unsupported(at)),
            Some('k') if self.cp.peek() == Some(u32::from(b'<')) => Err(unsupported(at)),
            Some('p' | 'P') => Err(property_escape(&self.cp, at)),
            _ => {
                let c = char_escape(&mut self.cp, e, at)?;
                self.atom(Op::Char(c), at)
            }
        }
    }
}
