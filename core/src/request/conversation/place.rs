//! Writing the conversation's bytes in place: opening and closing room inside the buffer,
//! and the lengths of entries, parts and fields that follow.

use super::escaping::last_field_len;
use super::*;
use crate::sink::Exact;

impl Conversation<'_> {
    /// Opens `n` bytes at `at`, moving what follows.
    pub(super) fn insert(&mut self, at: usize, n: usize) {
        self.buf.copy_within(at..self.len, at + n);
        self.len += n;
    }

    /// Closes `n` bytes at `at`.
    pub(super) fn remove(&mut self, at: usize, n: usize) {
        self.buf.copy_within(at + n..self.len, at);
        self.len -= n;
    }

    /// Adds `n` to the length at `at`.
    pub(super) fn grow(&mut self, at: usize, n: usize) {
        let v = read_u32(self.buf, at);
        write_u32(self.buf, at, v + n);
    }

    /// Appends a part to the open turn, the last entry.
    pub(super) fn append_part(&mut self, tag: Tag, n: usize, write: impl FnOnce(&mut dyn Sink)) {
        let Some(turn) = self.entries().last().map(|e| e.start) else {
            return;
        };
        let at = self.len;
        self.insert(at, HEAD + n);
        self.buf[at] = tag as u8;
        write_u32(self.buf, at + 1, n);
        write(&mut Exact::at(self.buf, at + HEAD));
        self.grow(turn + 1, HEAD + n);
    }

    /// Appends `n` bytes to the open turn's last part; a text part's text, the last field,
    /// grows with them.
    pub(super) fn append_to_last_part(&mut self, write: impl FnOnce(&mut dyn Sink), n: usize) {
        let Some((turn, part, tag)) = self
            .entries()
            .last()
            .and_then(|e| e.parts().last().map(|p| (e.start, p.start, p.tag)))
        else {
            return;
        };
        let at = self.len;
        self.insert(at, n);
        write(&mut Exact::at(self.buf, at));
        if self.merge == Some(tag) {
            // Merged text: the last field (the text) grows.
            self.grow(at - FIELD - last_field_len(self.buf, part, at), n);
        }
        self.grow(part + 1, n);
        self.grow(turn + 1, n);
    }

    pub(super) fn retag_last_part(&mut self, tag: Tag) {
        if let Some(start) = self.last_part().map(|p| p.start) {
            self.buf[start] = tag as u8;
        }
    }

    /// Inserts `n` bytes into the field at `field` (an offset in the part) of the open
    /// turn's part at `part`.
    pub(super) fn insert_in_part(
        &mut self,
        part: usize,
        field: usize,
        n: usize,
        write: impl FnOnce(&mut dyn Sink),
    ) {
        let Some(turn) = self.entries().last().map(|e| e.start) else {
            return;
        };
        let flen = read_u32(self.buf, part + field);
        let at = part + field + FIELD + flen;
        self.insert(at, n);
        write(&mut Exact::at(self.buf, at));
        self.grow(part + field, n);
        self.grow(part + 1, n);
        self.grow(turn + 1, n);
    }
}
