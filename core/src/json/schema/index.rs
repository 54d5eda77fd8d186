//! A schema's index: where each subschema's keywords stand in the text, written once into
//! memory the host hands in, so that a validation reads no annotation, skips no subschema
//! of an absent property and compares no keyword name.
//!
//! The index is a cache of what a walk of the text would find: a subschema it does not list
//! (one a `$ref` reaches somewhere no keyword holds) is read from the text, with the same
//! answer. Its words, all offsets into the schema's text:
//!
//! ```text
//! n, start[0..n] (ascending), record[0..n]           one per subschema object the walk visits
//! record:   end, words, member*                      `words`: the members' words
//! member:   keyword | aux << 8, value start, value end, extra words
//! aux:      for `properties`, its extra words: per property, name token start, end,
//!           subschema start, end; for `required`, its extra words: per name, its token's
//!           start, end; for `type`, the kinds it names (`Member::types`)
//! ```

use super::super::trim_ws;
use super::super::valid::{Arr, Obj};
use super::document::{keyword, offset, Schema};
use super::refs;
use super::vocabulary::Kw;

/// Why a schema's index could not be written.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum IndexError {
    /// The memory handed in holds fewer words than the index needs (`needed`).
    TooSmall {
        /// Words the index needs ([`Schema::index_words`] says so beforehand).
        needed: usize,
    },
    /// The schema's text is longer than an index's 32-bit offsets reach (4 GiB).
    TextTooLong,
}

impl core::fmt::Display for IndexError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::TooSmall { needed } => write!(f, "the schema's index needs {needed} words"),
            Self::TextTooLong => f.write_str("the schema's text is too long to index"),
        }
    }
}

impl core::error::Error for IndexError {}

/// Words of a member before its extra ones.
const MEMBER: usize = 3;
/// Words per name in a `required` member's extra words.
const NAME: usize = 2;
/// Words per property in a `properties` member's extra words.
const PROPERTY: usize = 4;

impl<'s> Schema<'s> {
    /// The words (`u32`) [`Schema::indexed`] writes for this schema (counted when it was read).
    pub fn index_words(&self) -> Result<usize, IndexError> {
        match self.index_need {
            TOO_LONG => Err(IndexError::TextTooLong),
            need => Ok(need as usize),
        }
    }

    /// This schema with its index written into `words` (at least [`Schema::index_words`]):
    /// validations then go straight to each subschema's keywords. Same answers as without.
    /// Too few words is [`IndexError::TooSmall`], with nothing written.
    pub fn indexed(mut self, words: &'s mut [u32]) -> Result<Self, IndexError> {
        let needed = self.index_words()?;
        let Some(words) = words.get_mut(..needed) else {
            return Err(IndexError::TooSmall { needed });
        };
        self.write_index(words);
        let words: &'s [u32] = words;
        self.index = words;
        Ok(self)
    }

    /// Whether validations read an index ([`Schema::indexed`]).
    pub fn is_indexed(&self) -> bool {
        !self.index.is_empty()
    }

    /// Writes the index into `out`, exactly [`Schema::index_words`] long.
    fn write_index(&self, out: &mut [u32]) {
        let nodes = self.index_nodes as usize;
        let (mut i, mut at) = (0usize, 1 + 2 * nodes);
        let text = self.text;
        if let Some(w) = out.first_mut() {
            *w = nodes as u32;
        }
        refs::walk(self, self.root(), self.root(), u8::MAX, &mut |node, _| {
            if node.first() == Some(&b'{') {
                if let Some(w) = out.get_mut(1 + i) {
                    *w = offset(text, node) as u32;
                }
                if let Some(w) = out.get_mut(1 + nodes + i) {
                    *w = at as u32;
                }
                at += write_record(text, node, out.get_mut(at..).unwrap_or(&mut []));
                i += 1;
            }
            false
        });
    }
}

/// [`Schema::index_words`] of a schema whose index cannot be written.
pub(super) const TOO_LONG: u32 = u32::MAX;

/// Counts a schema's index as its subschemas are read ([`Schema::new`]): one
/// [`Count::node`] per subschema object, one [`Count::member`] per member of one.
#[derive(Copy, Clone, Default)]
pub(super) struct Count {
    nodes: usize,
    words: usize,
    too_long: bool,
}

impl Count {
    /// A subschema object (its record's head and its place in the directory).
    pub(super) fn node(&mut self) {
        self.nodes += 1;
        self.words += 2;
    }

    /// A member of one, named `name` (decoded) with `value`.
    pub(super) fn member(&mut self, name: &[u8], value: &[u8]) {
        match Kw::of(name) {
            Some(Kw::Properties) => {
                let extra = PROPERTY * Obj::of(value).map_or(0, Iterator::count);
                self.too_long |= extra > (u32::MAX >> 8) as usize;
                self.words += MEMBER + extra;
            }
            Some(Kw::Required) => {
                let extra = NAME * Arr::of(value).map_or(0, Iterator::count);
                self.too_long |= extra > (u32::MAX >> 8) as usize;
                self.words += MEMBER + extra;
            }
            Some(_) => self.words += MEMBER,
            None => {}
        }
    }

    /// The words of the index of `text`, and its subschema objects.
    pub(super) fn total(&self, text: &[u8]) -> (u32, u32) {
        let words = 1 + 2 * self.nodes + self.words;
        match (u32::try_from(text.len()), u32::try_from(words)) {
            (Ok(_), Ok(w)) if !self.too_long && w != TOO_LONG => (w, self.nodes as u32),
            _ => (TOO_LONG, 0),
        }
    }
}

/// Writes `node`'s record at the start of `out` (as [`Count`] sized it); its words.
fn write_record(text: &[u8], node: &[u8], out: &mut [u32]) -> usize {
    let at = |part: &[u8]| offset(text, part) as u32;
    let mut n = 2;
    for (key, value) in Obj::of(node).into_iter().flatten() {
        let mut buf = [0u8; 24];
        let Some(kw) = Kw::of(keyword(key, &mut buf)) else {
            continue;
        };
        let value = trim_ws(value);
        let head = n;
        let mut extra = 0u32;
        n += MEMBER;
        if kw == Kw::Properties {
            for (name, sub) in Obj::of(value).into_iter().flatten() {
                let raw = name.raw();
                let quoted = at(raw).wrapping_sub(1);
                let sub = trim_ws(sub);
                let property = [
                    quoted,
                    quoted + raw.len() as u32 + 2,
                    at(sub),
                    at(sub) + sub.len() as u32,
                ];
                if let Some(slot) = out.get_mut(n..n + PROPERTY) {
                    slot.copy_from_slice(&property);
                }
                n += PROPERTY;
                extra += PROPERTY as u32;
            }
        }
        if kw == Kw::Required {
            for name in Arr::of(value).into_iter().flatten() {
                if let Some(slot) = out.get_mut(n..n + NAME) {
                    slot.copy_from_slice(&[at(name), at(name) + name.len() as u32]);
                }
                n += NAME;
                extra += NAME as u32;
            }
        }
        let aux = match kw {
            Kw::Type => types(value),
            _ => extra,
        };
        let member = [
            kw as u32 | aux << 8,
            at(value),
            at(value) + value.len() as u32,
        ];
        if let Some(slot) = out.get_mut(head..head + MEMBER) {
            slot.copy_from_slice(&member);
        }
    }
    if let Some(slot) = out.get_mut(..2) {
        slot.copy_from_slice(&[at(node) + node.len() as u32, (n - 2) as u32]);
    }
    n
}

/// One subschema's record: its keywords in the order the text gives them.
#[derive(Copy, Clone)]
pub(super) struct Record<'s> {
    text: &'s [u8],
    /// Just past the subschema's closing brace.
    pub(super) end: usize,
    members: &'s [u32],
}

/// One keyword of a record.
#[derive(Copy, Clone)]
pub(super) struct Member<'s> {
    pub(super) kw: Kw,
    pub(super) value: &'s [u8],
    /// The word beside the keyword (see the module's layout).
    aux: u32,
    extra: &'s [u32],
}

impl<'s> Record<'s> {
    /// The record of the subschema starting at `start` in the text, if the index lists it.
    #[inline]
    pub(super) fn find(schema: &Schema<'s>, start: usize) -> Option<Self> {
        let index = schema.index;
        let n = *index.first()? as usize;
        let starts = index.get(1..1 + n)?;
        let i = starts.binary_search(&(start as u32)).ok()?;
        let at = *index.get(1 + n + i)? as usize;
        let end = *index.get(at)? as usize;
        let words = *index.get(at + 1)? as usize;
        Some(Self {
            text: schema.text,
            end,
            members: index.get(at + 2..at + 2 + words)?,
        })
    }

    /// Its keywords, in the text's order.
    pub(super) fn members(&self) -> Members<'s> {
        Members {
            text: self.text,
            rest: self.members,
        }
    }

    /// The value of its keyword `kw`, if it has one.
    pub(super) fn get(&self, kw: Kw) -> Option<&'s [u8]> {
        self.members().find(|m| m.kw == kw).map(|m| m.value)
    }
}

/// A record's keywords.
pub(super) struct Members<'s> {
    text: &'s [u8],
    rest: &'s [u32],
}

impl<'s> Iterator for Members<'s> {
    type Item = Member<'s>;

    #[inline]
    fn next(&mut self) -> Option<Member<'s>> {
        let [head, start, end, ..] = *self.rest else {
            return None;
        };
        let kw = Kw::from_number(head & 0xff)?;
        let extra = match kw {
            Kw::Properties | Kw::Required => (head >> 8) as usize,
            _ => 0,
        };
        let member = Member {
            kw,
            value: self.text.get(start as usize..end as usize)?,
            aux: head >> 8,
            extra: self.rest.get(MEMBER..MEMBER + extra)?,
        };
        self.rest = self.rest.get(MEMBER + extra..)?;
        Some(member)
    }
}

impl<'s> Member<'s> {
    /// A `type` member's kinds, as [`types`] wrote them.
    pub(super) fn types(&self) -> u32 {
        self.aux
    }

    /// A `required` member's names' tokens in the schema's `text`, in the schema's order.
    pub(super) fn required_names(&self, text: &'s [u8]) -> impl Iterator<Item = &'s [u8]> + '_ {
        self.extra
            .chunks_exact(NAME)
            .filter_map(move |p| text.get(p[0] as usize..p[1] as usize))
    }

    /// How many properties a `properties` member has.
    pub(super) fn property_count(&self) -> usize {
        self.extra.len() / PROPERTY
    }

    /// A `properties` member's property `i`: its name's token (quoted) and its subschema, in
    /// the schema's `text`.
    #[inline]
    pub(super) fn property(&self, text: &'s [u8], i: usize) -> Option<(&'s [u8], &'s [u8])> {
        let p = self.extra.get(i * PROPERTY..i * PROPERTY + PROPERTY)?;
        let name = text.get(p[0] as usize..p[1] as usize)?;
        let sub = text.get(p[2] as usize..p[3] as usize)?;
        Some((name, sub))
    }
}

/// The kinds `type`'s value names, one bit each ([`TYPE_BITS`]'s order): a name spelled with
/// escapes names none, as it does to the text's reading.
pub(super) fn types(value: &[u8]) -> u32 {
    let bit = |t: &[u8]| match t {
        [b'"', inside @ .., b'"'] => TYPE_BITS
            .iter()
            .position(|n| *n == inside)
            .map_or(0, |i| 1 << i),
        _ => 0,
    };
    match super::super::valid::Arr::of(value) {
        Some(names) => names.fold(0, |mask, t| mask | bit(t)),
        None => bit(value),
    }
}

/// The bit of `integer` among [`types`]' kinds.
pub(super) const INTEGER: u32 = 1 << 6;

/// The names of `type`, by bit.
pub(super) const TYPE_BITS: [&[u8]; 7] = [
    b"object", b"array", b"string", b"number", b"boolean", b"null", b"integer",
];

#[cfg(test)]
mod tests {
    use super::*;

    const SCHEMA: &[u8] = br##"{"description":"x","type":"object","required":["a"],
        "properties":{"a":{"type":["integer","null"],"title":"A"},"b":{"$ref":"#/$defs/b"}},
        "$defs":{"b":{"enum":[1,2]}},"examples":[{"type":"string"}]}"##;

    #[test]
    fn an_index_too_small_is_refused_and_nothing_is_written() {
        let schema = Schema::new(SCHEMA).unwrap();
        let needed = schema.index_words().unwrap();
        // Root, `a`, `b`, `$defs/b`: 4 records; the root's 3 keywords, 2 properties and 1
        // required name.
        assert_eq!(
            needed,
            1 + 2 * 4 + (2 + 3 * 3 + 4 * 2 + 2) + (2 + 3) + (2 + 3) + (2 + 3)
        );
        let mut words = [7u32; 64];
        let short = needed - 1;
        assert_eq!(
            schema.indexed(&mut words[..short]).map(|s| s.is_indexed()),
            Err(IndexError::TooSmall { needed })
        );
        assert!(words.iter().all(|&w| w == 7));
        let indexed = schema.indexed(&mut words).unwrap();
        assert!(indexed.is_indexed() && !schema.is_indexed());
        assert_eq!(indexed.index.len(), needed);
    }

    #[test]
    fn an_indexed_schema_answers_as_its_text_does() {
        let schema = Schema::new(SCHEMA).unwrap();
        let mut words = [0u32; 64];
        let indexed = schema.indexed(&mut words).unwrap();
        for value in [
            &br#"{"a":1}"#[..],
            br#"{"a":1.0,"b":2}"#,
            br#"{"a":null,"b":3}"#,
            br#"{"a":1.5}"#,
            br#"{"b":1}"#,
            br#"{"a":"1"}"#,
            b"[]",
        ] {
            assert_eq!(indexed.validate(value), schema.validate(value));
        }
        assert!(indexed.validate(br#"{"a":1,"b":1}"#).is_ok());
        assert!(indexed.validate(br#"{"a":1.5}"#).is_err());
    }

    #[test]
    fn a_ref_to_where_no_keyword_holds_a_schema_is_read_from_the_text() {
        // `#/examples/0` is no subschema a walk visits: the index has no record of it.
        let text = br##"{"examples":[{"type":"string"}],"$ref":"#/examples/0"}"##;
        let schema = Schema::new(text).unwrap();
        let mut words = [0u32; 16];
        let indexed = schema.indexed(&mut words).unwrap();
        assert!(Record::find(&indexed, 13).is_none());
        assert!(indexed.validate(br#""s""#).is_ok());
        assert_eq!(indexed.validate(b"1"), schema.validate(b"1"));
        assert!(indexed.validate(b"1").is_err());
    }

    #[test]
    fn type_bits_are_in_the_order_of_kinds() {
        assert_eq!(types(br#""object""#), 1);
        assert_eq!(types(br#"["null","integer"]"#), 1 << 5 | 1 << 6);
        // A name spelled with escapes names nothing, as it does to the text's reading.
        assert_eq!(types(br#""\u006eull""#), 0);
    }
}
