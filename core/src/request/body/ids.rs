//! Call ids a provider refuses twice: which ids more than one call of a conversation has,
//! found once per request, so that writing a call's id is a lookup.

use crate::json::bytes::{fnv1a, FNV_START};
use crate::request::conversation::Conversation;
use crate::request::seen::Seen;
use crate::request::store::{Entries, Kind, StoredCall, Tag};

/// Whether a call before the one numbered `seq` in the conversation `buf` has `id`.
pub(super) fn earlier_call_has(buf: &[u8], id: &[u8], seq: u32) -> bool {
    calls(buf)
        .take_while(|c| c.seq != seq)
        .any(|c| c.id == Some(id))
}

/// Every call of the conversation `buf`, oldest first.
pub(super) fn calls(buf: &[u8]) -> impl Iterator<Item = StoredCall<'_>> {
    Entries { buf, pos: 0 }
        .filter(|e| e.kind == Kind::Turn)
        .flat_map(|e| e.parts())
        .filter(|q| q.tag == Tag::Call)
        .map(|q| q.call())
}

/// The id-hash bits of the ids that more than one call of `conv` has (the exact scan runs
/// only when an id may have been seen before).
pub(super) fn shared_ids(conv: &Conversation<'_>) -> [u64; 4] {
    let buf = conv.bytes();
    let mut shared = [0u64; 4];
    let mut seen = Seen::default();
    for c in calls(buf) {
        let Some(id) = c.id else { continue };
        if seen.insert(id) && earlier_call_has(buf, id, c.seq) {
            set_bit(&mut shared, id);
        }
    }
    shared
}

/// Where `id` hashes to in a 256-bit set (FNV-1a).
pub(super) fn id_bit(id: &[u8]) -> (usize, u64) {
    let h = fnv1a(FNV_START, id);
    (((h >> 6) & 3) as usize, 1 << (h & 63))
}

pub(super) fn bit_set(set: &[u64; 4], id: &[u8]) -> bool {
    let (word, bit) = id_bit(id);
    set[word] & bit != 0
}

pub(super) fn set_bit(set: &mut [u64; 4], id: &[u8]) {
    let (word, bit) = id_bit(id);
    set[word] |= bit;
}
