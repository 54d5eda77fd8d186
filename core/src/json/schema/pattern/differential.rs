//! The matcher against the `regex` crate, over generated patterns of the syntax both read
//! and generated subjects. ECMA and Rust differ on `.`, `\d`, `\w`, `\s` and `\b`: the Rust
//! side gets explicit classes for them, and every literal as `\x{…}`.

extern crate std;

use super::tests::json;
use super::{check, is_match};
use std::string::{String, ToString};
use std::vec::Vec;

/// A seeded xorshift generator: the same cases every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len())]
    }
}

/// The code points patterns and subjects are made of: ASCII word and non-word characters,
/// line terminators, white space beyond ASCII, and non-ASCII letters of 2, 3 and 4 bytes.
const ALPHABET: [char; 14] = [
    'a', 'b', 'c', 'Z', '0', '7', '_', '-', ' ', '\n', '\u{a0}', 'é', '\u{2028}', '😀',
];

/// ECMA's sets, as the insides of a Rust class.
const DIGIT: &str = r"0-9";
const WORD: &str = r"0-9A-Za-z_";
const SPACE: &str = r"\t\n\x{b}\x{c}\r\x20\x{a0}\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}\x{202f}\x{205f}\x{3000}\x{feff}";

/// A pattern being generated, in both syntaxes.
struct Gen {
    rng: Rng,
    ecma: String,
    rust: String,
    /// Whether it holds `\B` (Rust reads it only over bytes: the subject is kept ASCII).
    non_boundary: bool,
}

impl Gen {
    fn push(&mut self, ecma: &str, rust: &str) {
        self.ecma.push_str(ecma);
        self.rust.push_str(rust);
    }

    /// A literal code point, escaped in ECMA when it is a syntax character.
    fn literal(&mut self, c: char, in_class: bool) {
        let special = if in_class {
            "\\]-^["
        } else {
            "^$\\.*+?()[]{}|/"
        };
        if special.contains(c) {
            self.ecma.push('\\');
        }
        self.ecma.push(c);
        self.rust.push_str(&std::format!(r"\x{{{:x}}}", c as u32));
    }

    /// A class escape; `in_class` for the Rust form inside a class.
    fn set(&mut self, in_class: bool) {
        let (letter, inside) = self.rng.pick(&[('d', DIGIT), ('w', WORD), ('s', SPACE)]);
        let negated = self.rng.below(2) == 1;
        let letter = if negated {
            letter.to_ascii_uppercase()
        } else {
            letter
        };
        self.ecma.push('\\');
        self.ecma.push(letter);
        let rust = match (in_class, negated) {
            (true, false) => inside.to_string(),
            (_, true) => std::format!("[^{inside}]"),
            (false, false) => std::format!("[{inside}]"),
        };
        self.rust.push_str(&rust);
    }

    fn class(&mut self) {
        let negated = self.rng.below(3) == 0;
        self.push(
            if negated { "[^" } else { "[" },
            if negated { "[^" } else { "[" },
        );
        for _ in 0..1 + self.rng.below(3) {
            match self.rng.below(4) {
                0 => self.set(true),
                1 => {
                    let (a, b) = (self.rng.pick(&ALPHABET), self.rng.pick(&ALPHABET));
                    self.literal(a.min(b), true);
                    self.push("-", "-");
                    self.literal(a.max(b), true);
                }
                _ => {
                    let c = self.rng.pick(&ALPHABET);
                    self.literal(c, true);
                }
            }
        }
        self.push("]", "]");
    }

    fn atom(&mut self, depth: usize) {
        match self.rng.below(if depth < 3 { 9 } else { 7 }) {
            0..=2 => {
                let c = self.rng.pick(&ALPHABET);
                self.literal(c, false);
            }
            3 => self.push(".", r"[^\n\r\x{2028}\x{2029}]"),
            4 => self.set(false),
            5 => self.class(),
            6 => {
                let c = self.rng.pick(&['a', 'é', '😀', '\n']);
                let escaped = match c {
                    'a' => "\\x61",
                    'é' => "\\u00e9",
                    '😀' => "\\uD83D\\uDE00",
                    _ => "\\cJ",
                };
                self.ecma.push_str(escaped);
                self.rust.push_str(&std::format!(r"\x{{{:x}}}", c as u32));
            }
            _ => {
                let open = self.rng.pick(&["(", "(?:", "(?<g>"]);
                self.push(open, "(?:");
                self.alternation(depth + 1);
                self.push(")", ")");
            }
        }
    }

    fn quantifier(&mut self) {
        let q = match self.rng.below(12) {
            0 => "*",
            1 => "+",
            2 => "?",
            3 => "{2}",
            4 => "{0,2}",
            5 => "{1,}",
            6 => "{2,3}",
            _ => return,
        };
        let lazy = if self.rng.below(4) == 0 { "?" } else { "" };
        self.push(q, q);
        self.push(lazy, lazy);
    }

    fn term(&mut self, depth: usize) {
        match self.rng.below(12) {
            0 => self.push("^", "^"),
            1 => self.push("$", "$"),
            2 => self.push(r"\b", r"(?-u:\b)"),
            3 => {
                self.non_boundary = true;
                self.push(r"\B", r"(?-u:\B)");
            }
            _ => {
                self.atom(depth);
                self.quantifier();
            }
        }
    }

    fn alternation(&mut self, depth: usize) {
        for i in 0..1 + self.rng.below(if depth < 2 { 3 } else { 2 }) {
            if i > 0 {
                self.push("|", "|");
            }
            for _ in 0..self.rng.below(4) {
                self.term(depth);
            }
        }
    }
}

/// A subject of `len` code points, and its raw JSON text (some code points escaped).
fn subject(rng: &mut Rng, len: usize, ascii: bool) -> (String, String) {
    let mut text = String::new();
    let mut raw = String::new();
    for _ in 0..len {
        let c = if ascii {
            rng.pick(&['a', 'b', '_', '0', '-', ' ', '\n'])
        } else {
            rng.pick(&ALPHABET)
        };
        text.push(c);
        if rng.below(4) == 0 {
            let mut units = [0u16; 2];
            for u in c.encode_utf16(&mut units) {
                raw.push_str(&std::format!("\\u{u:04X}"));
            }
        } else {
            raw.push_str(&json(&c.to_string()));
        }
    }
    (text, raw)
}

// Under miri the `regex` crate alone takes minutes per pattern: the native run covers it.
#[cfg_attr(miri, ignore)]
#[test]
fn agrees_with_the_regex_crate() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let (mut cases, mut matched) = (0, 0);
    let mut shown: Vec<String> = Vec::new();
    for _ in 0..3_000 {
        let mut g = Gen {
            rng: Rng(rng.next() | 1),
            ecma: String::new(),
            rust: String::new(),
            non_boundary: false,
        };
        g.alternation(0);
        let pattern = json(&g.ecma);
        assert_eq!(check(pattern.as_bytes()), Ok(()), "{}", g.ecma);
        let reference = regex::bytes::Regex::new(&g.rust).unwrap();
        for _ in 0..4 {
            let len = rng.below(8);
            let (text, raw) = subject(&mut rng, len, g.non_boundary);
            let mut steps = 1_000_000;
            let got = is_match(pattern.as_bytes(), raw.as_bytes(), &mut steps).unwrap();
            let want = reference.is_match(text.as_bytes());
            if got != want && shown.len() < 10 {
                shown.push(std::format!(
                    "{:?} over {text:?}: {got}, regex {want}",
                    g.ecma
                ));
            }
            cases += 1;
            matched += usize::from(want);
        }
    }
    assert_eq!(shown, Vec::<String>::new());
    assert_eq!(cases, 12_000);
    // Both answers are well represented.
    assert!(matched > 2_000 && cases - matched > 2_000, "{matched}");
}

#[test]
fn never_panics_on_any_bytes() {
    // Bytes that make up regex syntax, JSON escapes and UTF-8 (whole and cut).
    const BYTES: &[u8] =
        b"\\\\\\u{}()[]?<>=!*+|^$-,.:0129aAdDbBkpPcxXu/\"\xF0\x9F\x98\x80\xC3\xA9\xE2";
    let mut rng = Rng(0x2545_F491_4F6C_DD1D);
    let (mut readable, mut refused) = (0, 0);
    let cases = if cfg!(miri) { 100 } else { 20_000 };
    for _ in 0..cases {
        let mut pattern = Vec::new();
        for _ in 0..rng.below(12) {
            pattern.push(rng.pick(BYTES));
        }
        let mut subject = Vec::new();
        for _ in 0..rng.below(12) {
            subject.push(rng.pick(BYTES));
        }
        let mut steps = 100_000;
        let answer = is_match(&pattern, &subject, &mut steps);
        match check(&pattern) {
            Ok(()) => {
                readable += 1;
                assert!(answer.is_ok(), "{pattern:?} {answer:?}");
            }
            Err(e) => {
                refused += 1;
                assert!(e.at <= pattern.len(), "{pattern:?} {e:?}");
                assert_eq!(answer, Err(super::PatternFault::Unreadable));
            }
        }
    }
    // Both kinds are common: at least a tenth of the cases each.
    assert!(
        readable > cases / 10 && refused > cases / 10,
        "{readable} {refused}"
    );
}
