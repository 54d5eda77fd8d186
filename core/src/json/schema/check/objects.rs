//! The keywords of objects (`properties`, `patternProperties`, `additionalProperties`,
//! `required`, `propertyNames`, the dependencies): `Run`'s steps for an object value.

use super::super::super::valid::{Arr, Obj};
use super::super::super::JsonStr;
use super::super::document::{offset, Draft};
use super::super::equal::{member, member_from};
use super::super::index::Member;
use super::super::vocabulary::Kw;
use super::super::why::{Invalid, Why};
use super::{Node, Res, Run};

impl<'s, 'v> Run<'_, 's, 'v> {
    /// `properties` at the start of `rest`: each member of `v` it names checked against its
    /// subschema; the length of the keyword's object, or `None` when it is not one.
    #[inline(never)]
    pub(super) fn properties_in(
        &mut self,
        rest: &'s [u8],
        v: &'v [u8],
        depth: u8,
        base: &'s [u8],
    ) -> Result<Option<usize>, Invalid> {
        let Some(mut props) = Obj::of(rest) else {
            return Ok(None);
        };
        // A present property's subschema is walked once, by its check; an absent one skipped.
        let mut cursor = 0;
        while let Some((name, start)) = props.next_name() {
            let walked = match member_from(v, name, &mut cursor) {
                Some(pv) => self.check_rest(&rest[start..], pv, depth, base)?,
                None => None,
            };
            match walked {
                Some(len) => props.resume(start + len),
                None => {
                    props.value_at(start);
                }
            }
        }
        Ok(props.closed())
    }

    /// `properties` from the schema's index: each property's subschema, in the schema's
    /// order, applied to the value's member of its name.
    #[inline(never)]
    pub(super) fn properties_indexed(
        &mut self,
        m: &Member<'s>,
        v: &'v [u8],
        depth: u8,
        base: &'s [u8],
    ) -> Res {
        let mut cursor = 0;
        for i in 0..m.property_count() {
            let Some((name, sub)) = m.property(self.schema.text, i) else {
                break;
            };
            if let Some(pv) = member_from(v, JsonStr::from_scanned_lenient(name), &mut cursor) {
                // Straight to `check_rest`, as `properties_in` goes: a frame less a level.
                self.check_rest(sub, pv, depth, base)?;
            }
        }
        Ok(())
    }

    #[inline(never)]
    pub(super) fn pattern_properties(
        &mut self,
        kv: &'s [u8],
        v: &'v [u8],
        depth: u8,
        base: &'s [u8],
    ) -> Res {
        for (p, sub) in Obj::of(kv).into_iter().flatten() {
            for (name, pv) in Obj::of(v).into_iter().flatten() {
                if self
                    .matches(p.raw(), name.raw())
                    .map_err(|why| self.fail(v, why))?
                {
                    self.check(sub, pv, depth, base)?;
                }
            }
        }
        Ok(())
    }

    #[inline(never)]
    pub(super) fn additional(
        &mut self,
        node: &Node<'s>,
        kv: &'s [u8],
        v: &'v [u8],
        depth: u8,
        base: &'s [u8],
    ) -> Res {
        let props = node.get(Kw::Properties);
        let patterns = node.get(Kw::PatternProperties);
        for (name, pv) in Obj::of(v).into_iter().flatten() {
            if props.is_some_and(|p| member(p, name).is_some()) {
                continue;
            }
            let mut matched = false;
            for (p, _) in patterns.and_then(Obj::of).into_iter().flatten() {
                if self
                    .matches(p.raw(), name.raw())
                    .map_err(|why| self.fail(v, why))?
                {
                    matched = true;
                    break;
                }
            }
            match (matched, kv.first()) {
                (true, _) => {}
                (false, Some(b'f')) => return Err(self.fail(pv, Why::PropertyNotAllowed)),
                (false, _) => self.check(kv, pv, depth, base)?,
            }
        }
        Ok(())
    }

    /// `required`, its names' tokens read from the text or from the index.
    #[inline(never)]
    pub(super) fn required(&self, names: impl Iterator<Item = &'s [u8]>, v: &'v [u8]) -> Res {
        let mut cursor = 0;
        for name in names {
            if member_from(v, JsonStr::from_scanned_lenient(name), &mut cursor).is_none() {
                return Err(self.fail(v, Why::Required(self.at(name))));
            }
        }
        Ok(())
    }

    #[inline(never)]
    pub(super) fn property_names(
        &mut self,
        kv: &'s [u8],
        v: &'v [u8],
        depth: u8,
        base: &'s [u8],
    ) -> Res {
        for (name, _) in Obj::of(v).into_iter().flatten() {
            // The name's token, quotes included, read as a string value.
            let start = offset(self.value, name.raw()).saturating_sub(1);
            let token = self
                .value
                .get(start..start + name.raw().len() + 2)
                .unwrap_or(&[]);
            if !self.attempt(kv, token, depth, base)? {
                return Err(self.fail(v, Why::PropertyName(start as u32)));
            }
        }
        Ok(())
    }

    /// `dependentRequired` (names) or `dependentSchemas` (schemas), and draft-07's
    /// `dependencies`, which holds either per member.
    #[inline(never)]
    pub(super) fn dependent(
        &mut self,
        kv: &'s [u8],
        v: &'v [u8],
        depth: u8,
        base: &'s [u8],
        names: bool,
    ) -> Res {
        for (name, dep) in Obj::of(kv).into_iter().flatten() {
            if member(v, name).is_none() {
                continue;
            }
            match (names, dep.first()) {
                (true, Some(b'[')) => {
                    for r in Arr::of(dep).into_iter().flatten() {
                        if member(v, JsonStr::from_scanned_lenient(r)).is_none() {
                            let by = offset(self.schema.text, name.raw()).saturating_sub(1);
                            return Err(self.fail(v, Why::DependentRequired(self.at(r), by as u32)));
                        }
                    }
                }
                (true, _) if self.schema.draft != Draft::Draft07 => {}
                _ => self.check(dep, v, depth, base)?,
            }
        }
        Ok(())
    }
}
