use super::PatternErrorKind::{Syntax, TooLarge, Unsupported};
use super::*;
use std::cell::Cell;
use std::string::String;
use std::vec::Vec;

std::thread_local! {
    static LOWEST: Cell<usize> = const { Cell::new(usize::MAX) };
}

/// Notes the address of a local here, the lowest seen on this thread (never inlined: its
/// frame is below its caller's whole frame).
#[inline(never)]
pub(super) fn note_stack() {
    let marker = 0u8;
    let addr = core::ptr::addr_of!(marker) as usize;
    core::hint::black_box(&marker);
    LOWEST.with(|l| l.set(l.get().min(addr)));
}

/// The stack `f` uses: from a local of the caller's to the lowest one [`note_stack`] saw.
#[inline(never)]
fn stack_used(f: impl FnOnce()) -> usize {
    let marker = 0u8;
    let top = core::ptr::addr_of!(marker) as usize;
    core::hint::black_box(&marker);
    LOWEST.with(|l| l.set(usize::MAX));
    f();
    top - LOWEST.with(Cell::get)
}

/// `text` as the raw contents of a JSON string.
pub(super) fn json(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&std::format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

/// Whether the ECMA `pattern` matches `subject`, both given as text.
fn matches(pattern: &str, subject: &str) -> bool {
    let mut steps = 1_000_000;
    is_match(
        json(pattern).as_bytes(),
        json(subject).as_bytes(),
        &mut steps,
    )
    .unwrap()
}

/// The matches of `pattern` over each subject, in order.
fn over(pattern: &str, subjects: &[&str]) -> Vec<bool> {
    subjects.iter().map(|s| matches(pattern, s)).collect()
}

/// What `check` says of a pattern's raw JSON contents.
fn refused(raw: &str) -> (usize, PatternErrorKind) {
    let e = check(raw.as_bytes()).unwrap_err();
    (e.at, e.kind)
}

#[test]
fn literals_search_unanchored() {
    assert_eq!(
        over("abc", &["xabcx", "abx", "", "ABC"]),
        [true, false, false, false]
    );
    assert_eq!(over("a+", &["xxaayy", "xyz"]), [true, false]);
    assert_eq!(over("", &["", "anything"]), [true, true]);
    assert_eq!(over("é😀", &["aé😀b", "é😁"]), [true, false]);
}

#[test]
fn dot_is_one_code_point_but_no_line_terminator() {
    let subjects = ["😀", "é", "a", "\n", "\r", "\u{2028}", "\u{2029}", "ab", ""];
    assert_eq!(
        over("^.$", &subjects),
        [true, true, true, false, false, false, false, false, false]
    );
    assert_eq!(over("^..$", &["😀", "😀😀"]), [false, true]);
}

#[test]
fn anchors() {
    assert_eq!(
        over("^abc$", &["abc", "abcd", "xabc"]),
        [true, false, false]
    );
    assert_eq!(over("a$", &["ba", "ab"]), [true, false]);
    assert_eq!(over("^a", &["ab", "ba"]), [true, false]);
    assert_eq!(over("^$", &["", "a"]), [true, false]);
    assert_eq!(over("$", &["", "a"]), [true, true]);
    assert_eq!(over("(^a|b)c", &["ac", "xbc", "xac"]), [true, true, false]);
}

#[test]
fn classes() {
    let subjects = ["abc", "abC", "", "z-"];
    assert_eq!(over("^[a-z]+$", &subjects), [true, false, false, false]);
    assert_eq!(over("[^a-z]", &["abc", "ab1", "😀"]), [false, true, true]);
    assert_eq!(over("^[a-]$", &["a", "-", "b"]), [true, true, false]);
    assert_eq!(over("^[-a]$", &["a", "-", "b"]), [true, true, false]);
    assert_eq!(over(r"^[\-\]\\]+$", &["-]\\", "a"]), [true, false]);
    assert_eq!(
        over("^[%--]$", &["%", "*", "-", "."]),
        [true, true, true, false]
    );
    assert_eq!(over("[]", &["", "a", "]"]), [false, false, false]);
    assert_eq!(over("^[^]$", &["\n", "😀", ""]), [true, true, false]);
    assert_eq!(over(r"^[\b]$", &["\u{8}", "b"]), [true, false]);
    assert_eq!(over(r"^[\d.]+$", &["1.5", "1,5"]), [true, false]);
    assert_eq!(over(r"^[\w-]+$", &["a_b-9", "a b"]), [true, false]);
    assert_eq!(over(r"^[^\d\s]$", &["a", "1", " "]), [true, false, false]);
    assert_eq!(over(r"^[\D]$", &["a", "1"]), [true, false]);
    assert_eq!(over("^[😀-😂]$", &["😁", "😃", "a"]), [true, false, false]);
    assert_eq!(
        over(r"^[\u0041-\u{5A}]$", &["A", "Z", "a"]),
        [true, true, false]
    );
    assert_eq!(
        over(r"^[\uD83D\uDE00]$", &["😀", "\u{fffd}"]),
        [true, false]
    );
}

#[test]
fn class_escapes_use_ecma_sets() {
    assert_eq!(over(r"^\d+$", &["0129", "٤٢", "1a"]), [true, false, false]);
    assert_eq!(over(r"^\D$", &["a", "5", "٤"]), [true, false, true]);
    assert_eq!(over(r"^\w+$", &["aZ_09", "é", "a-b"]), [true, false, false]);
    assert_eq!(over(r"^\W$", &["é", "_", "-"]), [true, false, true]);
    let spaces = [
        "\t", "\n", "\u{b}", "\u{c}", "\r", " ", "\u{a0}", "\u{1680}", "\u{2000}", "\u{200a}",
        "\u{2028}", "\u{2029}", "\u{202f}", "\u{205f}", "\u{3000}", "\u{feff}",
    ];
    assert_eq!(over(r"^\s$", &spaces), [true; 16]);
    assert_eq!(over(r"^\S$", &spaces), [false; 16]);
    assert_eq!(
        over(r"^\s$", &["\u{200b}", "\u{180e}", "\u{85}", "a"]),
        [false; 4]
    );
}

#[test]
fn word_boundaries_are_ascii() {
    assert_eq!(
        over(r"\bfoo\b", &["a foo b", "afoob", "foo"]),
        [true, false, true]
    );
    assert_eq!(over(r"\Bo\B", &["foo", "o", "fo"]), [true, false, false]);
    assert_eq!(over(r"a\b", &["aé", "ab"]), [true, false]);
    assert_eq!(over(r"\b", &["", "é", " a"]), [false, false, true]);
    assert_eq!(over(r"^\B$", &["", "a"]), [true, false]);
}

#[test]
fn groups_and_alternation() {
    assert_eq!(
        over("^(ab|cd)+$", &["abcdab", "abc", ""]),
        [true, false, false]
    );
    assert_eq!(over("^(?:a|b)c$", &["bc", "ac", "cc"]), [true, true, false]);
    assert_eq!(over(r"^(?<year>\d{4})$", &["2024", "202"]), [true, false]);
    assert_eq!(over("a|b|c", &["zzc", "zzz"]), [true, false]);
    assert_eq!(over("^(|a)$", &["", "a", "b"]), [true, true, false]);
    assert_eq!(over("^(a|)+$", &["", "aaa", "ab"]), [true, true, false]);
    assert_eq!(over("^((a|b)c)+$", &["acbc", "abc"]), [true, false]);
    assert_eq!(over("^()$", &["", "a"]), [true, false]);
    assert_eq!(over("^(?:)*a$", &["a"]), [true]);
    assert_eq!(
        over("^x(a|bc|)y$", &["xay", "xbcy", "xy", "xby"]),
        [true, true, true, false]
    );
}

#[test]
fn quantifiers() {
    assert_eq!(over("^a*$", &["", "aaa", "aab"]), [true, true, false]);
    assert_eq!(over("^a+$", &["", "a", "aaa"]), [false, true, true]);
    assert_eq!(over("^ab?c$", &["ac", "abc", "abbc"]), [true, true, false]);
    assert_eq!(over("^a{3}$", &["aa", "aaa", "aaaa"]), [false, true, false]);
    assert_eq!(over("^a{2,}$", &["a", "aa", "aaaaa"]), [false, true, true]);
    assert_eq!(
        over("^a{2,3}$", &["a", "aa", "aaa", "aaaa"]),
        [false, true, true, false]
    );
    assert_eq!(over("^a{0,2}$", &["", "aa", "aaa"]), [true, true, false]);
    assert_eq!(over("^x{0}$", &["", "x"]), [true, false]);
    assert_eq!(over("^(ab){2}$", &["abab", "ab"]), [true, false]);
    assert_eq!(
        over("^(ab){0,2}$", &["", "abab", "ababab"]),
        [true, true, false]
    );
    assert_eq!(
        over("^(ab){1,}$", &["", "ab", "ababab"]),
        [false, true, true]
    );
    assert_eq!(over("^(ab)*$", &["", "abab", "aba"]), [true, true, false]);
    assert_eq!(over("^(ab)?$", &["", "ab", "abab"]), [true, true, false]);
    assert_eq!(
        over("^(a|b){2,3}c$", &["abc", "ac", "ababc"]),
        [true, false, false]
    );
    assert_eq!(over("^(){2,}$", &["", "a"]), [true, false]);
    assert_eq!(over("^(a*)*$", &["aaa", "aab"]), [true, false]);
    assert_eq!(over("^(a*)+b$", &["b", "aab"]), [true, true]);
}

#[test]
fn lazy_quantifiers_match_the_same_strings() {
    assert_eq!(over("^a*?$", &["", "aaa", "ab"]), [true, true, false]);
    assert_eq!(over("^a+?b$", &["aab", "b"]), [true, false]);
    assert_eq!(over("^a??b$", &["ab", "b", "aab"]), [true, true, false]);
    assert_eq!(over("^a{2,3}?$", &["aaa", "aaaa"]), [true, false]);
    assert_eq!(over("^(ab){1,}?$", &["abab", "aba"]), [true, false]);
}

#[test]
fn no_exponential_blowup() {
    let a25 = "a".repeat(25);
    let mut steps = 1_000_000;
    let pattern = json(r"^(a?){25}a{25}$");
    assert_eq!(
        is_match(pattern.as_bytes(), a25.as_bytes(), &mut steps),
        Ok(true)
    );
    let mut steps = 1_000_000;
    let subject = "a".repeat(30) + "!";
    let pattern = json("^(a+)+$");
    assert_eq!(
        is_match(pattern.as_bytes(), subject.as_bytes(), &mut steps),
        Ok(false)
    );
    assert!(steps > 990_000, "{steps}");
}

#[test]
fn character_escapes() {
    assert_eq!(over(r"^\t\n\v\f\r$", &["\t\n\u{b}\u{c}\r"]), [true]);
    assert_eq!(over(r"^\0$", &["\0", "0"]), [true, false]);
    assert_eq!(over(r"^\cJ\cj$", &["\n\n"]), [true]);
    assert_eq!(over(r"^\x41\u0042\u{43}\u{1F600}$", &["ABC😀"]), [true]);
    assert_eq!(over(r"^\uD83D\uDE00$", &["😀", "\u{fffd}"]), [true, false]);
    let syntax = r"^\^\$\\\.\*\+\?\(\)\[\]\{\}\|\/$";
    assert_eq!(over(syntax, &["^$\\.*+?()[]{}|/", "^$"]), [true, false]);
}

#[test]
fn json_escapes_in_pattern_and_subject() {
    let mut steps = 1_000;
    // JSON-level escapes: the pattern is `^😀é$`, the subject "😀é".
    let pattern = br"^\ud83d\ude00\u00e9$";
    assert_eq!(
        is_match(pattern, br"\uD83D\uDE00\u00E9", &mut steps),
        Ok(true)
    );
    assert_eq!(is_match(pattern, "😀é".as_bytes(), &mut steps), Ok(true));
    assert_eq!(is_match(pattern, br"\uD83D", &mut steps), Ok(false));
    // A lone surrogate in the subject is one code point, which a regex escape names.
    assert_eq!(is_match(br"^.$", br"\ud83d", &mut steps), Ok(true));
    assert_eq!(is_match(br"^\\uD83D$", br"\ud83d", &mut steps), Ok(true));
    assert_eq!(
        is_match(br"^\\uD83D$", br"\ud83d\ude00", &mut steps),
        Ok(false)
    );
    // `\"` and `\/` in the JSON text are plain `"` and `/` to the regex.
    assert_eq!(is_match(br#"^\"\/$"#, br#""/"#, &mut steps), Ok(true));
}

#[test]
fn json_schema_test_suite_patterns() {
    assert_eq!(over("^a*$", &["aaa", "abc", ""]), [true, false, true]);
    assert_eq!(over("a+", &["xxaayy"]), [true]);
    assert_eq!(over("^[a-z]+$", &["abc", "ab1"]), [true, false]);
    let date = r"^\d{4}-\d{2}-\d{2}$";
    let subjects = ["2024-01-31", "2024-1-31", "2024-01-311", "x2024-01-31"];
    assert_eq!(over(date, &subjects), [true, false, false, false]);
    assert_eq!(over("f.*o", &["foo", "fo", "f\no"]), [true, true, false]);
    assert_eq!(
        over("^🐲*$", &["", "🐲", "🐲🐲", "🐉"]),
        [true, true, true, false]
    );
    assert_eq!(refused(r"^\\p{Letter}+$"), (1, Unsupported));
}

// 10,000 code points through the NFA: minutes under miri, which the short cases cover.
#[cfg_attr(miri, ignore)]
#[test]
fn long_subjects_within_budget() {
    let subject = "x".repeat(10_000);
    let mut steps = 1_000_000;
    assert_eq!(is_match(b"^.*$", subject.as_bytes(), &mut steps), Ok(true));
    // 4 for compiling the pattern's 4 bytes; Start, `.` (marked optional), Fork and End at the start; per code point a test of
    // `.` and the closure of Fork, `.`, End; then Match.
    assert_eq!(1_000_000 - steps, 4 + 40_005);
    let mut steps = 10;
    assert_eq!(
        is_match(b"^.*$", subject.as_bytes(), &mut steps),
        Err(PatternFault::TooCostly)
    );
    assert_eq!(steps, 0);
    // A budget smaller than the pattern is spent before the subject is read.
    let mut steps = 3;
    assert_eq!(
        is_match(b"^.*$", b"", &mut steps),
        Err(PatternFault::TooCostly)
    );
    assert_eq!(steps, 3);
    let mut steps = 1_000_000;
    assert_eq!(is_match(b"y", subject.as_bytes(), &mut steps), Ok(false));
    assert_eq!(1_000_000 - steps, 1 + 20_001);
    // Anchored at the start: the search stops once no state is left.
    let mut steps = 1_000_000;
    assert_eq!(is_match(b"^y", subject.as_bytes(), &mut steps), Ok(false));
    assert_eq!(1_000_000 - steps, 2 + 3);
}

#[test]
fn unreadable_pattern() {
    let mut steps = 100;
    assert_eq!(
        is_match(b"(", b"", &mut steps),
        Err(PatternFault::Unreadable)
    );
    assert_eq!(steps, 100);
}

#[test]
fn unsupported_constructs() {
    assert_eq!(refused(r"a\\1"), (1, Unsupported));
    assert_eq!(refused(r"(a)\\9"), (3, Unsupported));
    assert_eq!(refused(r"\\k<n>"), (0, Unsupported));
    assert_eq!(refused(r"(?<n>a)\\k<n>"), (7, Unsupported));
    assert_eq!(refused("(?=a)"), (0, Unsupported));
    assert_eq!(refused("a(?!b)"), (1, Unsupported));
    assert_eq!(refused("(?<=a)b"), (0, Unsupported));
    assert_eq!(refused("x(?<!a)"), (1, Unsupported));
    assert_eq!(refused(r"\\p{L}"), (0, Unsupported));
    assert_eq!(refused(r"a\\P{Lu}"), (1, Unsupported));
    assert_eq!(refused(r"[a\\p{L}]"), (2, Unsupported));
    assert_eq!(refused("(?i:a)"), (0, Unsupported));
}

#[test]
fn syntax_errors() {
    let cases: [(&str, usize); 37] = [
        ("(a", 0),
        ("((a)", 0),
        ("a)", 1),
        ("a{2,1}", 1),
        ("*a", 0),
        ("a**", 2),
        ("a*??", 3),
        ("a{1}{2}", 4),
        ("a|*", 2),
        ("(*)", 1),
        ("^*", 1),
        (r"\\b+", 3),
        ("a{", 1),
        ("a{,5}", 1),
        ("a{1,2", 1),
        ("{1}", 0),
        ("}", 0),
        ("]", 0),
        ("[a", 0),
        (r"x[\\]", 1),
        ("[b-a]", 1),
        (r"[\\d-z]", 1),
        (r"[a-\\w]", 1),
        (r"\\a", 0),
        (r"\\-", 0),
        (r"\\x4", 0),
        (r"\\u12", 0),
        (r"\\u{110000}", 0),
        (r"\\u{}", 0),
        (r"\\c1", 0),
        (r"\\00", 0),
        (r"[\\B]", 1),
        (r"[\\1]", 1),
        (r"\\p", 0),
        ("(?<1a>x)", 0),
        ("(?<>x)", 0),
        ("(?x)", 0),
    ];
    for (raw, at) in cases {
        assert_eq!(refused(raw), (at, Syntax), "{raw}");
    }
    // A lone backslash at the end (the JSON text `\\`).
    assert_eq!(refused(r"ab\\"), (2, Syntax));
}

#[test]
fn too_large() {
    assert_eq!(refused("a{384}"), (1, TooLarge));
    assert_eq!(refused("xa{99999999999}"), (2, TooLarge));
    assert_eq!(refused("a{2,4294967295}"), (1, TooLarge));
    assert_eq!(refused(".{0,1000}"), (1, TooLarge));
    assert_eq!(refused("(ab){200}"), (4, TooLarge));
    let deep = "(".repeat(33) + &")".repeat(33);
    assert_eq!(refused(&deep), (32, TooLarge));
    let deep = "(".repeat(32) + &")".repeat(32);
    assert_eq!(check(deep.as_bytes()), Ok(()));
    // The program's last place is for the final Match.
    assert_eq!(check(b"a{383}"), Ok(()));
}

#[test]
fn common_schema_patterns_fit() {
    let patterns = [
        r"^[a-zA-Z0-9_-]{1,64}$",
        r"^.{1,255}$",
        r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$",
        r"^((25[0-5]|2[0-4]\d|[01]?\d\d?)\.){3}(25[0-5]|2[0-4]\d|[01]?\d\d?)$",
        r"^[^@\s]+@[^@\s]+\.[a-zA-Z]{2,}$",
        r"^https?://",
    ];
    for p in patterns {
        assert_eq!(check(json(p).as_bytes()), Ok(()), "{p}");
    }
    let ip = json(patterns[3]);
    let mut steps = 100_000;
    assert_eq!(
        is_match(ip.as_bytes(), b"192.168.0.255", &mut steps),
        Ok(true)
    );
    assert_eq!(
        is_match(ip.as_bytes(), b"192.168.0.256", &mut steps),
        Ok(false)
    );
    let name = json(patterns[0]);
    assert_eq!(
        is_match(name.as_bytes(), b"get_weather", &mut steps),
        Ok(true)
    );
    let long = "a".repeat(65);
    assert_eq!(
        is_match(name.as_bytes(), long.as_bytes(), &mut steps),
        Ok(false)
    );
}

#[test]
fn valid_edge_cases() {
    for raw in [
        "[]",
        "[^]",
        "()",
        "(?:)",
        "a{0}",
        "x{1,1}",
        "",
        "|",
        "(?<$_a9>x)",
        "a{0,0}?",
    ] {
        assert_eq!(check(raw.as_bytes()), Ok(()), "{raw}");
    }
}

// Stack addresses under miri are not the machine's: nothing to measure there.
#[cfg_attr(miri, ignore)]
#[test]
fn stack_use() {
    let subject = "ab".repeat(2_000) + "c";
    let pattern = json(r"^(?:[a-z\d_]|\s|(a|b){1,3})*?[^\w]$");
    // Called through an opaque pointer: its frame cannot merge into the measuring one.
    let is_match = core::hint::black_box(is_match as fn(&[u8], &[u8], &mut u32) -> _);
    let check = core::hint::black_box(check as fn(&[u8]) -> _);
    let used = stack_used(|| {
        let mut steps = 10_000_000;
        let r = is_match(pattern.as_bytes(), subject.as_bytes(), &mut steps);
        assert_eq!(r, Ok(false));
    });
    // The program (1,536 B), two state sets (96 B), the work list (768 B), and frames.
    assert!(used < 3 * 1024, "{used} bytes");
    std::println!("stack used by a match: {used} bytes");
    let used = stack_used(|| assert_eq!(check(pattern.as_bytes()), Ok(())));
    assert!(used < 3 * 1024, "{used} bytes");
    std::println!("stack used by a check: {used} bytes");
}
