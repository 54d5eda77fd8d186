//! Which byte strings came before, without keeping them: a small Bloom filter, so that a
//! check for repeats (call ids, tool names) compares exactly only when one may be a repeat.

use crate::json::bytes::{fnv1a, FNV_START};

/// The strings seen so far, two bits each in 1,024 (128 bytes): with 64 strings, a new one
/// is taken for seen about once in 70 (one bit in 256 took eight of 64 for seen).
#[derive(Clone, Debug, Default)]
pub(crate) struct Seen([u64; 16]);

impl Seen {
    /// Adds `bytes`; whether it may have been added before (false: certainly not).
    pub(crate) fn insert(&mut self, bytes: &[u8]) -> bool {
        let h = fnv1a(FNV_START, bytes);
        let bits = [(h & 1023) as usize, ((h >> 10) & 1023) as usize];
        let was = bits.iter().all(|&k| self.0[k / 64] & (1 << (k % 64)) != 0);
        for k in bits {
            self.0[k / 64] |= 1 << (k % 64);
        }
        was
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A string added is always found again; of 64 distinct ids, few are taken for seen.
    #[test]
    fn no_false_negatives_and_few_false_positives() {
        let mut s = Seen::default();
        let mut taken = 0;
        let id = |i: u32| {
            [
                b'c',
                b'a',
                b'l',
                b'l',
                b'_',
                b'0' + (i / 10) as u8,
                b'0' + (i % 10) as u8,
            ]
        };
        for i in 0..64u32 {
            taken += usize::from(s.insert(&id(i)));
        }
        assert!(taken <= 3, "{taken} of 64 new ids taken for seen");
        for i in 0..64u32 {
            assert!(s.insert(&id(i)), "call_{i} was added");
        }
        assert_eq!(fnv1a(FNV_START, b""), 0x811c_9dc5);
        assert_eq!(fnv1a(FNV_START, b"a"), 0xe40c_292c);
        assert_eq!(
            fnv1a(fnv1a(FNV_START, b"ab"), b"c"),
            fnv1a(FNV_START, b"abc")
        );
    }
}
