//! JSON numbers compared by value, read from their text: exact for any length, no float.
//!
//! A number is kept as its significant digits (leading and trailing zeros dropped) and the
//! position of the decimal point, so `1`, `1.0`, `10e-1` and `0.1e1` are one value, and
//! `minimum`, `enum` and `multipleOf` never meet rounding.

use core::cmp::Ordering;

/// A number token's value: `±0.d₁d₂…dₙ × 10^point`, `d₁` and `dₙ` non-zero (or no digits: zero).
#[derive(Copy, Clone, Debug)]
pub(super) struct Decimal<'a> {
    neg: bool,
    /// The integer part's digits and the fraction's, read as one run.
    int: &'a [u8],
    frac: &'a [u8],
    /// Digits skipped at the front of `int ++ frac` (leading zeros) and kept after them.
    skip: usize,
    len: usize,
    point: i64,
}

impl<'a> Decimal<'a> {
    /// Reads a number token as RFC 8259 writes one; `None` for anything else.
    pub(super) fn parse(token: &'a [u8]) -> Option<Self> {
        let (neg, rest) = match token.split_first() {
            Some((b'-', rest)) => (true, rest),
            _ => (false, token),
        };
        let int_len = rest.iter().take_while(|b| b.is_ascii_digit()).count();
        let (int, mut rest) = rest.split_at(int_len);
        let mut frac: &[u8] = &[];
        if let Some((b'.', r)) = rest.split_first() {
            let n = r.iter().take_while(|b| b.is_ascii_digit()).count();
            frac = &r[..n];
            rest = &r[n..];
        }
        let mut exp: i64 = 0;
        if let Some((b'e' | b'E', r)) = rest.split_first() {
            let (eneg, r) = match r.split_first() {
                Some((b'-', r)) => (true, r),
                Some((b'+', r)) => (false, r),
                _ => (false, r),
            };
            for &d in r {
                if !d.is_ascii_digit() {
                    return None;
                }
                // Saturates far beyond any digit count a document can hold.
                exp = (exp * 10 + i64::from(d - b'0')).min(1 << 40);
            }
            if eneg {
                exp = -exp;
            }
        } else if !rest.is_empty() {
            return None;
        }
        if int.is_empty() {
            return None;
        }
        let all = int.len() + frac.len();
        let digit = |i: usize| {
            if i < int.len() {
                int[i]
            } else {
                frac[i - int.len()]
            }
        };
        let skip = (0..all).take_while(|&i| digit(i) == b'0').count();
        let tail = (skip..all).rev().take_while(|&i| digit(i) == b'0').count();
        let len = all - skip - tail;
        let point = int.len() as i64 - skip as i64 + exp;
        Some(Self {
            neg,
            int,
            frac,
            skip,
            len,
            point,
        })
    }

    /// The `i`th significant digit's value.
    fn digit(&self, i: usize) -> u8 {
        let i = i + self.skip;
        let d = if i < self.int.len() {
            self.int[i]
        } else {
            self.frac[i - self.int.len()]
        };
        d - b'0'
    }

    fn is_zero(&self) -> bool {
        self.len == 0
    }

    /// True when the value has no fraction: `1.0` and `1e2` are integers.
    pub(super) fn is_integer(&self) -> bool {
        self.is_zero() || self.point >= self.len as i64
    }

    /// The value as a `u64` when it is a non-negative integer that fits; `None` otherwise.
    pub(super) fn as_u64(&self) -> Option<u64> {
        if self.is_zero() {
            return Some(0);
        }
        if self.neg || !self.is_integer() || self.point > 20 {
            return None;
        }
        let mut v: u64 = 0;
        for i in 0..self.point as usize {
            let d = if i < self.len { self.digit(i) } else { 0 };
            v = v.checked_mul(10)?.checked_add(u64::from(d))?;
        }
        Some(v)
    }

    /// The two values' order.
    pub(super) fn cmp(&self, other: &Self) -> Ordering {
        let sign = |d: &Self| match (d.is_zero(), d.neg) {
            (true, _) => 0i8,
            (false, true) => -1,
            (false, false) => 1,
        };
        let (a, b) = (sign(self), sign(other));
        if a != b || a == 0 {
            return a.cmp(&b);
        }
        let magnitude = self.point.cmp(&other.point).then_with(|| {
            (0..self.len.max(other.len))
                .map(|i| {
                    let x = if i < self.len { self.digit(i) } else { 0 };
                    let y = if i < other.len { other.digit(i) } else { 0 };
                    x.cmp(&y)
                })
                .find(|o| o.is_ne())
                .unwrap_or(Ordering::Equal)
        });
        match a {
            1 => magnitude,
            _ => magnitude.reverse(),
        }
    }

    /// The significant digits as an integer, when they fit in a `u64`: a divisor
    /// `multipleOf` can take exactly (`Schema::new` refuses any other).
    pub(super) fn divisor_digits(&self) -> Option<u64> {
        if self.len > 20 {
            return None;
        }
        (0..self.len).try_fold(0u64, |v, i| {
            v.checked_mul(10)?.checked_add(u64::from(self.digit(i)))
        })
    }

    /// True when `self / divisor` is an integer (`divisor` is positive; JSON Schema requires it),
    /// exactly, whatever the value's length: no float.
    pub(super) fn is_multiple_of(&self, divisor: &Self) -> bool {
        if self.is_zero() {
            return true;
        }
        let Some(d) = divisor.divisor_digits().filter(|&d| d != 0) else {
            return false;
        };
        // self = V × 10^a and divisor = D × 10^b, with V and D free of trailing zeros: the
        // quotient is (V / D) × 10^(a − b). With a < b it needs V divisible by a power of ten,
        // which V, ending in a non-zero digit, is not.
        let shift = (self.point - self.len as i64) - (divisor.point - divisor.len as i64);
        if shift < 0 {
            return false;
        }
        let d = u128::from(d);
        // V mod D digit by digit (V may have any number of digits), then × 10^shift mod D by
        // squaring (shift may be in the hundreds: 1e308); every product stays below 2^128.
        let mut rem = (0..self.len).fold(0u128, |r, i| (r * 10 + u128::from(self.digit(i))) % d);
        let mut ten_pow = 10 % d;
        let mut k = shift as u64;
        while k > 0 && rem != 0 {
            if k & 1 == 1 {
                rem = rem * ten_pow % d;
            }
            ten_pow = ten_pow * ten_pow % d;
            k >>= 1;
        }
        rem == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(s: &str) -> Decimal<'_> {
        Decimal::parse(s.as_bytes()).unwrap()
    }

    #[test]
    fn equal_values_of_different_spellings() {
        for (a, b) in [
            ("1", "1.0"),
            ("1", "10e-1"),
            ("100", "1e2"),
            ("0", "-0"),
            ("0.0", "0e10"),
            ("-1.50", "-15E-1"),
        ] {
            assert_eq!(d(a).cmp(&d(b)), Ordering::Equal, "{a} {b}");
        }
        assert_eq!(d("1.1").cmp(&d("1.01")), Ordering::Greater);
        assert_eq!(d("-2").cmp(&d("-1.5")), Ordering::Less);
        assert_eq!(
            d("99999999999999999999999").cmp(&d("1e22")),
            Ordering::Greater
        );
        assert_eq!(d("0.000001").cmp(&d("0")), Ordering::Greater);
    }

    #[test]
    fn integers_and_multiples() {
        assert!(d("1.0").is_integer());
        assert!(d("1.5e1").is_integer());
        assert!(!d("1.5").is_integer());
        assert!(d("-0.0").is_integer());
        assert_eq!(d("2.0").as_u64(), Some(2));
        assert_eq!(d("-2").as_u64(), None);
        assert!(d("19.99").is_multiple_of(&d("0.01")));
        assert!(d("4.5").is_multiple_of(&d("1.5")));
        assert!(!d("35").is_multiple_of(&d("1.5")));
        assert!(d("0.0075").is_multiple_of(&d("0.0001")));
        assert!(!d("0.00751").is_multiple_of(&d("0.0001")));
        assert!(!d("1e308").is_multiple_of(&d("0.123456789")));
        assert!(d("1e308").is_multiple_of(&d("2")));
        assert!(!d("12").is_multiple_of(&d("0")));
        // Longer than any integer type: exact all the same.
        assert!(d("123456789012345678901234567890123456789012345678900").is_multiple_of(&d("25")));
        assert!(!d("123456789012345678901234567890123456789012345678901").is_multiple_of(&d("3")));
        assert!(d("1e400").is_multiple_of(&d("1e-400")));
        assert_eq!(d("18446744073709551615").divisor_digits(), Some(u64::MAX));
        assert_eq!(d("18446744073709551616").divisor_digits(), None);
    }
}
