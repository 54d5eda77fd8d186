//! One validation: the schema's keywords applied to the value, subschema by subschema.
//!
//! `Run::check` is the one recursive step (a level of [`Limits::max_depth`]); each keyword's
//! work is a function of its own, kept out of line so the recursion's frame stays small.
//! The first failure found is the answer, in the order the schema writes its keywords.
//!
//! [`Limits::max_depth`]: super::Limits::max_depth

use super::super::valid::{self, Arr, Obj};
use super::super::{trim_ws, JsonStr};
use super::document::{keyword, offset, Draft, Schema};
use super::equal::json_eq;
use super::index::{self, Record, INTEGER};
use super::number::Decimal;
use super::pattern::{self, PatternFault};
use super::vocabulary::Kw;
use super::why::{Invalid, Why};
use super::{names, refs, text};

mod objects;

impl Schema<'_> {
    /// Checks a value's JSON text (any white space): `Ok` when it satisfies the schema.
    pub fn validate(&self, value: &[u8]) -> Result<(), Invalid> {
        if let Err(e) = super::super::validate(value, self.limits.max_depth) {
            let why = match e.kind {
                super::super::JsonErrorKind::TooDeep => Why::TooDeep,
                _ => Why::NotJson,
            };
            return Err(Invalid::new(0, why));
        }
        self.validate_valid(value)
    }

    /// [`validate`](Self::validate) for a value already known to be valid JSON (a frame's args).
    pub(crate) fn validate_valid(&self, value: &[u8]) -> Result<(), Invalid> {
        run(self, value)
    }
}

/// Validates `value` (valid JSON) against the schema.
pub(super) fn run(schema: &Schema<'_>, value: &[u8]) -> Result<(), Invalid> {
    let mut run = Run {
        schema,
        value,
        subschemas: schema.limits.max_subschemas,
        steps: schema.limits.max_pattern_steps,
    };
    let root = trim_ws(value);
    // A name given twice would leave one of its values unchecked (lookups read the first; a
    // tool's parser may keep the last): such a value is refused before the schema is read.
    names::once(root, schema.limits.max_depth, &mut run.subschemas).map_err(|(fault, at)| {
        let why = match fault {
            names::Fault::Repeated => Why::RepeatedName,
            names::Fault::TooDeep => Why::TooDeep,
            names::Fault::OverBudget => Why::TooManySubschemas,
        };
        run.fail(at, why)
    })?;
    run.check(schema.root(), root, schema.limits.max_depth, schema.root())
}

/// What one validation carries down: the two documents and the work left.
struct Run<'r, 's, 'v> {
    schema: &'r Schema<'s>,
    value: &'v [u8],
    subschemas: u32,
    steps: u32,
}

/// What a value is, as `type` names it (`integer` is a number checked further).
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
enum Kind {
    Object,
    Array,
    String,
    Number,
    Boolean,
    Null,
}

impl Kind {
    fn of(v: &[u8]) -> Self {
        match v.first() {
            Some(b'{') => Kind::Object,
            Some(b'[') => Kind::Array,
            Some(b'"') => Kind::String,
            Some(b't' | b'f') => Kind::Boolean,
            Some(b'n') => Kind::Null,
            _ => Kind::Number,
        }
    }
}

type Res = Result<(), Invalid>;

impl<'s, 'v> Run<'_, 's, 'v> {
    fn fail(&self, v: &'v [u8], why: Why) -> Invalid {
        Invalid::new(offset(self.value, v), why)
    }

    /// Where a schema token starts in the schema's text (for the texts that quote it).
    fn at(&self, s: &[u8]) -> u32 {
        offset(self.schema.text, s) as u32
    }

    /// Applies the subschema `s` to `v`; `base` is the resource `#` means here.
    fn check(&mut self, s: &'s [u8], v: &'v [u8], depth: u8, base: &'s [u8]) -> Res {
        self.check_rest(s, v, depth, base).map(|_| ())
    }

    /// Applies the subschema at the start of `rest` (the schema's text may go on after it)
    /// to `v`: the subschema's length when it is an object its walk read to the end, so that
    /// a caller walking the schema goes on there without skipping it first.
    fn check_rest(
        &mut self,
        rest: &'s [u8],
        v: &'v [u8],
        depth: u8,
        base: &'s [u8],
    ) -> Result<Option<usize>, Invalid> {
        if depth == 0 {
            return Err(self.fail(v, Why::TooDeep));
        }
        if self.subschemas == 0 {
            return Err(self.fail(v, Why::TooManySubschemas));
        }
        self.subschemas -= 1;
        match rest.first() {
            Some(b'{') => {}
            Some(b'f') => return Err(self.fail(v, Why::False)),
            _ => return Ok(None),
        }
        if let Some(done) = self.check_indexed(offset(self.schema.text, rest), v, depth, base) {
            return done;
        }
        self.check_text(rest, v, depth, base)
    }

    /// [`Run::check_rest`] for a subschema read from the text. Out of line, as is
    /// [`Run::check_indexed`]: each level of the recursion carries one of the two frames.
    #[inline(never)]
    fn check_text(
        &mut self,
        rest: &'s [u8],
        v: &'v [u8],
        depth: u8,
        base: &'s [u8],
    ) -> Result<Option<usize>, Invalid> {
        // A document with embedded `$id`s has its refs resolved by the resources' bounds: the
        // subschema is cut to its own text first. Otherwise every reading of `s` (its members,
        // a sibling keyword) stops at its closing brace anyway.
        let s = match self.schema.nested_ids {
            true => &rest[..valid::skip(rest, 0)],
            false => rest,
        };
        let base = match self.schema.nested_ids && refs::own_id(s).is_some() {
            true => s,
            false => base,
        };
        let draft7 = self.schema.draft == Draft::Draft07;
        if draft7 {
            if let Some(r) = member_text(s, b"$ref") {
                return self.follow(r, v, depth, base).map(|_| None);
            }
        }
        let kind = Kind::of(v);
        let depth = depth - 1;
        let Some(mut members) = Obj::of(s) else {
            return Ok(None);
        };
        while let Some((key, start)) = members.next_name() {
            let mut buf = [0u8; 24];
            let kw = Kw::of(keyword(key, &mut buf));
            // `properties` (most of a tool's schema) is walked where it stands, not skipped
            // first to find where it ends: the walk over its members ends there.
            if kw == Some(Kw::Properties) && matches!(kind, Kind::Object) {
                if let Some(len) = self.properties_in(&s[start..], v, depth, base)? {
                    members.resume(start + len);
                    continue;
                }
            }
            let kv = members.value_at(start);
            if let Some(kw) = kw {
                self.keyword(kw, &Node::Text(s), kv, v, kind, depth, base)?;
            }
        }
        Ok(members.closed())
    }

    /// [`Run::check_rest`] for a subschema the index lists: its keywords read from there;
    /// `None` when the index does not list it (or there is none), and the text is read.
    #[inline(never)]
    fn check_indexed(
        &mut self,
        start: usize,
        v: &'v [u8],
        depth: u8,
        base: &'s [u8],
    ) -> Option<Result<Option<usize>, Invalid>> {
        let record = Record::find(self.schema, start)?;
        Some(self.apply_record(start, record, v, depth, base))
    }

    /// The keywords of `record` (the subschema at `start`) applied to `v`.
    #[inline(always)]
    fn apply_record(
        &mut self,
        start: usize,
        record: Record<'s>,
        v: &'v [u8],
        depth: u8,
        base: &'s [u8],
    ) -> Result<Option<usize>, Invalid> {
        let base = match self.schema.nested_ids {
            true => match self.schema.text.get(start..record.end) {
                Some(s) if refs::own_id(s).is_some() => s,
                _ => base,
            },
            false => base,
        };
        if self.schema.draft == Draft::Draft07 {
            if let Some(r) = record.get(Kw::Ref) {
                return self.follow(r, v, depth, base).map(|_| None);
            }
        }
        let kind = Kind::of(v);
        let depth = depth - 1;
        let (members, len) = (record.members(), record.end - start);
        let node = Node::Indexed(record);
        for m in members {
            match (m.kw, kind) {
                (Kw::Properties, Kind::Object) => self.properties_indexed(&m, v, depth, base)?,
                (Kw::Type, _) => self.types(m.types(), m.value, v, kind)?,
                (Kw::Required, Kind::Object) => {
                    self.required(m.required_names(self.schema.text), v)?
                }
                _ => self.keyword(m.kw, &node, m.value, v, kind, depth, base)?,
            }
        }
        Ok(Some(len))
    }

    #[allow(clippy::too_many_arguments)]
    #[inline(never)]
    fn keyword(
        &mut self,
        kw: Kw,
        node: &Node<'s>,
        kv: &'s [u8],
        v: &'v [u8],
        kind: Kind,
        depth: u8,
        base: &'s [u8],
    ) -> Res {
        let draft7 = self.schema.draft == Draft::Draft07;
        match (kw, kind) {
            (Kw::Type, _) => self.types(index::types(kv), kv, v, kind),
            (Kw::Enum, _) => match Arr::of(kv).into_iter().flatten().any(|e| json_eq(e, v, 64)) {
                true => Ok(()),
                false => Err(self.fail(v, Why::Enum)),
            },
            (Kw::Const, _) => match json_eq(kv, v, 64) {
                true => Ok(()),
                false => Err(self.fail(v, Why::Const)),
            },
            (Kw::Ref, _) => self.follow(kv, v, depth + 1, base),
            (Kw::AllOf, _) => {
                for sub in Arr::of(kv).into_iter().flatten() {
                    self.check(sub, v, depth, base)?;
                }
                Ok(())
            }
            (Kw::AnyOf, _) => self.any_of(kv, v, depth, base),
            (Kw::OneOf, _) => self.one_of(kv, v, depth, base),
            (Kw::Not, _) => match self.attempt(kv, v, depth, base)? {
                true => Err(self.fail(v, Why::Not)),
                false => Ok(()),
            },
            (Kw::If, _) => {
                let branch = match self.attempt(kv, v, depth, base)? {
                    true => Kw::Then,
                    false => Kw::Else,
                };
                match node.get(branch) {
                    Some(sub) => self.check(sub, v, depth, base),
                    None => Ok(()),
                }
            }
            (
                Kw::Minimum | Kw::Maximum | Kw::ExclusiveMinimum | Kw::ExclusiveMaximum,
                Kind::Number,
            ) => self.bound(kw, kv, v),
            (Kw::MultipleOf, Kind::Number) => match (Decimal::parse(v), Decimal::parse(kv)) {
                (Some(x), Some(d)) if !x.is_multiple_of(&d) => {
                    Err(self.fail(v, Why::MultipleOf(self.at(kv))))
                }
                _ => Ok(()),
            },
            (Kw::MinLength | Kw::MaxLength, Kind::String) => self.length(kw, kv, v),
            (Kw::Pattern, Kind::String) => self.pattern(kv, v),
            (Kw::PatternProperties, Kind::Object) => self.pattern_properties(kv, v, depth, base),
            (Kw::AdditionalProperties, Kind::Object) => self.additional(node, kv, v, depth, base),
            (Kw::Required, Kind::Object) => self.required(Arr::of(kv).into_iter().flatten(), v),
            (Kw::PropertyNames, Kind::Object) => self.property_names(kv, v, depth, base),
            (Kw::MinProperties | Kw::MaxProperties, Kind::Object) => {
                let n = Obj::of(v).map_or(0, Iterator::count);
                self.count(
                    kw == Kw::MinProperties,
                    n,
                    kv,
                    v,
                    Why::MinProperties,
                    Why::MaxProperties,
                )
            }
            (Kw::DependentRequired, Kind::Object) => self.dependent(kv, v, depth, base, true),
            (Kw::DependentSchemas, Kind::Object) => self.dependent(kv, v, depth, base, false),
            (Kw::Dependencies, Kind::Object) if draft7 => self.dependent(kv, v, depth, base, true),
            (Kw::PrefixItems, Kind::Array) if !draft7 => self.positional(kv, v, depth, base),
            (Kw::Items, Kind::Array) => match draft7 && kv.first() == Some(&b'[') {
                true => self.positional(kv, v, depth, base),
                false => {
                    let before = match draft7 {
                        true => 0,
                        false => node.get(Kw::PrefixItems).map_or(0, array_len),
                    };
                    self.items_from(before, kv, v, depth, base)
                }
            },
            (Kw::AdditionalItems, Kind::Array) if draft7 => match node.get(Kw::Items) {
                Some(items) if items.first() == Some(&b'[') => {
                    self.items_from(array_len(items), kv, v, depth, base)
                }
                _ => Ok(()),
            },
            (Kw::Contains, Kind::Array) => self.contains(node, kv, v, depth, base),
            (Kw::MinItems | Kw::MaxItems, Kind::Array) => {
                let n = Arr::of(v).map_or(0, Iterator::count);
                self.count(kw == Kw::MinItems, n, kv, v, Why::MinItems, Why::MaxItems)
            }
            (Kw::UniqueItems, Kind::Array) if kv == b"true" => self.unique(v),
            _ => Ok(()),
        }
    }

    /// Whether `s` accepts `v`, for the applicators that look for a match; a limit still stops.
    fn attempt(
        &mut self,
        s: &'s [u8],
        v: &'v [u8],
        depth: u8,
        base: &'s [u8],
    ) -> Result<bool, Invalid> {
        match self.check(s, v, depth, base) {
            Ok(()) => Ok(true),
            Err(e) if e.is_limit() => Err(e),
            Err(_) => Ok(false),
        }
    }

    #[inline(never)]
    fn follow(&mut self, r: &'s [u8], v: &'v [u8], depth: u8, base: &'s [u8]) -> Res {
        let target = JsonStr::from_token(trim_ws(r))
            .ok()
            .and_then(|r| refs::resolve(self.schema, r, base, refs::Names::First).ok());
        match target {
            Some((sub, sub_base)) => self.check(sub, v, depth - 1, sub_base),
            // `Schema::new` resolved every `$ref`: a value is never let through unchecked.
            None => Err(self.fail(v, Why::False)),
        }
    }

    /// `type`, given the kinds it names as bits (`index::types`, which an index keeps): in
    /// [`Kind`]'s order, then `integer`.
    #[inline]
    fn types(&self, mask: u32, kv: &'s [u8], v: &'v [u8], kind: Kind) -> Res {
        let ok = mask & (1 << kind as u32) != 0
            || (kind == Kind::Number
                && mask & INTEGER != 0
                && Decimal::parse(v).is_some_and(|d| d.is_integer()));
        match ok {
            true => Ok(()),
            false => Err(self.fail(v, Why::Type(self.at(kv)))),
        }
    }

    #[inline(never)]
    fn any_of(&mut self, kv: &'s [u8], v: &'v [u8], depth: u8, base: &'s [u8]) -> Res {
        for sub in Arr::of(kv).into_iter().flatten() {
            if self.attempt(sub, v, depth, base)? {
                return Ok(());
            }
        }
        Err(self.fail(v, Why::AnyOf))
    }

    #[inline(never)]
    fn one_of(&mut self, kv: &'s [u8], v: &'v [u8], depth: u8, base: &'s [u8]) -> Res {
        let mut matched = false;
        for sub in Arr::of(kv).into_iter().flatten() {
            if self.attempt(sub, v, depth, base)? {
                if matched {
                    return Err(self.fail(v, Why::OneOfMany));
                }
                matched = true;
            }
        }
        match matched {
            true => Ok(()),
            false => Err(self.fail(v, Why::OneOfNone)),
        }
    }

    #[inline(never)]
    fn bound(&self, kw: Kw, kv: &'s [u8], v: &'v [u8]) -> Res {
        let (Some(x), Some(b)) = (Decimal::parse(v), Decimal::parse(kv)) else {
            // Draft-04's boolean `exclusiveMinimum` is no bound of its own.
            return Ok(());
        };
        let order = x.cmp(&b);
        let (ok, why): (bool, fn(u32) -> Why) = match kw {
            Kw::Minimum => (order.is_ge(), Why::Minimum),
            Kw::Maximum => (order.is_le(), Why::Maximum),
            Kw::ExclusiveMinimum => (order.is_gt(), Why::ExclusiveMinimum),
            _ => (order.is_lt(), Why::ExclusiveMaximum),
        };
        match ok {
            true => Ok(()),
            false => Err(self.fail(v, why(self.at(kv)))),
        }
    }

    #[inline(never)]
    fn length(&self, kw: Kw, kv: &'s [u8], v: &'v [u8]) -> Res {
        let n = text::code_point_count(JsonStr::from_scanned_lenient(v).raw());
        self.count(
            kw == Kw::MinLength,
            n,
            kv,
            v,
            Why::MinLength,
            Why::MaxLength,
        )
    }

    /// A `min…`/`max…` count bound: `n` against the bound `kv`.
    fn count(
        &self,
        min: bool,
        n: usize,
        kv: &'s [u8],
        v: &'v [u8],
        lo: fn(u32) -> Why,
        hi: fn(u32) -> Why,
    ) -> Res {
        let bound = Decimal::parse(kv).and_then(|d| d.as_u64()).unwrap_or(0);
        let n = n as u64;
        match (min, n < bound, n > bound) {
            (true, true, _) => Err(self.fail(v, lo(self.at(kv)))),
            (false, _, true) => Err(self.fail(v, hi(self.at(kv)))),
            _ => Ok(()),
        }
    }

    #[inline(never)]
    fn pattern(&mut self, kv: &'s [u8], v: &'v [u8]) -> Res {
        let p = JsonStr::from_scanned_lenient(kv).raw();
        match self.matches(p, JsonStr::from_scanned_lenient(v).raw()) {
            Ok(true) => Ok(()),
            Ok(false) => Err(self.fail(v, Why::Pattern(self.at(kv)))),
            Err(why) => Err(self.fail(v, why)),
        }
    }

    /// Whether the pattern (raw string contents) matches the subject, on this run's budget.
    fn matches(&mut self, pattern_raw: &[u8], subject_raw: &[u8]) -> Result<bool, Why> {
        match pattern::is_match(pattern_raw, subject_raw, &mut self.steps) {
            Ok(m) => Ok(m),
            Err(PatternFault::TooCostly | PatternFault::Unreadable) => Err(Why::PatternTooCostly),
        }
    }

    /// Item `i` against schema `i` (`prefixItems`, draft-07's array `items`).
    #[inline(never)]
    fn positional(&mut self, kv: &'s [u8], v: &'v [u8], depth: u8, base: &'s [u8]) -> Res {
        let subs = Arr::of(kv).into_iter().flatten();
        for (sub, item) in subs.zip(Arr::of(v).into_iter().flatten()) {
            self.check(sub, item, depth, base)?;
        }
        Ok(())
    }

    /// Every item from index `from` on against `kv`.
    #[inline(never)]
    fn items_from(
        &mut self,
        from: usize,
        kv: &'s [u8],
        v: &'v [u8],
        depth: u8,
        base: &'s [u8],
    ) -> Res {
        for item in Arr::of(v).into_iter().flatten().skip(from) {
            self.check(kv, item, depth, base)?;
        }
        Ok(())
    }

    #[inline(never)]
    fn contains(
        &mut self,
        node: &Node<'s>,
        kv: &'s [u8],
        v: &'v [u8],
        depth: u8,
        base: &'s [u8],
    ) -> Res {
        let bound = |kw: Kw| match self.schema.draft {
            Draft::Draft07 => None,
            Draft::Draft2020_12 => node.get(kw),
        };
        let (min, max) = (bound(Kw::MinContains), bound(Kw::MaxContains));
        let number = |b: Option<&[u8]>| b.and_then(Decimal::parse).and_then(|d| d.as_u64());
        let (lo, hi) = (number(min).unwrap_or(1), number(max));
        let mut n = 0u64;
        for item in Arr::of(v).into_iter().flatten() {
            if self.attempt(kv, item, depth, base)? {
                n += 1;
            }
        }
        if n < lo {
            return Err(self.fail(
                v,
                min.map_or(Why::Contains, |m| Why::MinContains(self.at(m))),
            ));
        }
        match (hi, max) {
            (Some(h), Some(m)) if n > h => Err(self.fail(v, Why::MaxContains(self.at(m)))),
            _ => Ok(()),
        }
    }

    #[inline(never)]
    fn unique(&mut self, v: &'v [u8]) -> Res {
        let mut rest = Arr::of(v).into_iter().flatten();
        while let Some(a) = rest.next() {
            for b in rest.clone() {
                // Each pair compared is work the subschema budget pays for: n items cost n².
                if self.subschemas == 0 {
                    return Err(self.fail(v, Why::TooManySubschemas));
                }
                self.subschemas -= 1;
                if json_eq(a, b, 64) {
                    return Err(self.fail(v, Why::UniqueItems));
                }
            }
        }
        Ok(())
    }
}

/// A subschema, for its keywords' lookups of their siblings: its text, or its index record.
#[derive(Copy, Clone)]
enum Node<'s> {
    Text(&'s [u8]),
    Indexed(Record<'s>),
}

impl<'s> Node<'s> {
    /// The value of its keyword `kw`, if it has one.
    fn get(&self, kw: Kw) -> Option<&'s [u8]> {
        match *self {
            Node::Text(s) => member_text(s, kw.name()),
            Node::Indexed(record) => record.get(kw),
        }
    }
}

/// The value of the member named `name` (plain text) in the schema object `s`.
fn member_text<'s>(s: &'s [u8], name: &[u8]) -> Option<&'s [u8]> {
    Obj::of(s)?.find(|(k, _)| k.eq_text(name)).map(|(_, v)| v)
}

fn array_len(a: &[u8]) -> usize {
    Arr::of(a).map_or(0, Iterator::count)
}

#[cfg(test)]
mod tests {
    use super::super::index::TYPE_BITS;
    use super::*;

    /// An indexed `type`'s bit for a kind is the kind's number: the two lists agree.
    #[test]
    fn each_kind_is_its_type_bit() {
        let kinds = [
            (Kind::Object, &b"{}"[..]),
            (Kind::Array, b"[]"),
            (Kind::String, b"\"\""),
            (Kind::Number, b"1"),
            (Kind::Boolean, b"true"),
            (Kind::Null, b"null"),
        ];
        for (kind, value) in kinds {
            assert_eq!(Kind::of(value), kind);
            let name = TYPE_BITS[kind as usize];
            let mut token = [0u8; 16];
            token[0] = b'"';
            token[1..=name.len()].copy_from_slice(name);
            token[name.len() + 1] = b'"';
            let schema = &token[..name.len() + 2];
            assert_eq!(index::types(schema), 1 << kind as u32);
        }
        assert_eq!(index::types(br#""integer""#), INTEGER);
    }
}
