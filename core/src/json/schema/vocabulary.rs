//! The keywords a validation reads, as numbers: a member's name is compared with them once
//! (when the schema is indexed, or as a walk passes it), and every check after that
//! dispatches on the number.

/// One keyword the validator reads; any other member of a schema (an annotation, `$defs`,
/// an unknown name) checks nothing.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
#[repr(u8)]
pub(super) enum Kw {
    Type,
    Enum,
    Const,
    Ref,
    AllOf,
    AnyOf,
    OneOf,
    Not,
    If,
    Then,
    Else,
    Minimum,
    Maximum,
    ExclusiveMinimum,
    ExclusiveMaximum,
    MultipleOf,
    MinLength,
    MaxLength,
    Pattern,
    Properties,
    PatternProperties,
    AdditionalProperties,
    Required,
    PropertyNames,
    MinProperties,
    MaxProperties,
    DependentRequired,
    DependentSchemas,
    Dependencies,
    PrefixItems,
    Items,
    AdditionalItems,
    Contains,
    MinContains,
    MaxContains,
    MinItems,
    MaxItems,
    UniqueItems,
}

/// Every keyword, in the order of its number.
const ALL: [Kw; 38] = [
    Kw::Type,
    Kw::Enum,
    Kw::Const,
    Kw::Ref,
    Kw::AllOf,
    Kw::AnyOf,
    Kw::OneOf,
    Kw::Not,
    Kw::If,
    Kw::Then,
    Kw::Else,
    Kw::Minimum,
    Kw::Maximum,
    Kw::ExclusiveMinimum,
    Kw::ExclusiveMaximum,
    Kw::MultipleOf,
    Kw::MinLength,
    Kw::MaxLength,
    Kw::Pattern,
    Kw::Properties,
    Kw::PatternProperties,
    Kw::AdditionalProperties,
    Kw::Required,
    Kw::PropertyNames,
    Kw::MinProperties,
    Kw::MaxProperties,
    Kw::DependentRequired,
    Kw::DependentSchemas,
    Kw::Dependencies,
    Kw::PrefixItems,
    Kw::Items,
    Kw::AdditionalItems,
    Kw::Contains,
    Kw::MinContains,
    Kw::MaxContains,
    Kw::MinItems,
    Kw::MaxItems,
    Kw::UniqueItems,
];

impl Kw {
    /// The keyword a member's decoded name is, if the validator reads it.
    pub(super) fn of(name: &[u8]) -> Option<Self> {
        Some(match name {
            b"type" => Kw::Type,
            b"enum" => Kw::Enum,
            b"const" => Kw::Const,
            b"$ref" => Kw::Ref,
            b"allOf" => Kw::AllOf,
            b"anyOf" => Kw::AnyOf,
            b"oneOf" => Kw::OneOf,
            b"not" => Kw::Not,
            b"if" => Kw::If,
            b"then" => Kw::Then,
            b"else" => Kw::Else,
            b"minimum" => Kw::Minimum,
            b"maximum" => Kw::Maximum,
            b"exclusiveMinimum" => Kw::ExclusiveMinimum,
            b"exclusiveMaximum" => Kw::ExclusiveMaximum,
            b"multipleOf" => Kw::MultipleOf,
            b"minLength" => Kw::MinLength,
            b"maxLength" => Kw::MaxLength,
            b"pattern" => Kw::Pattern,
            b"properties" => Kw::Properties,
            b"patternProperties" => Kw::PatternProperties,
            b"additionalProperties" => Kw::AdditionalProperties,
            b"required" => Kw::Required,
            b"propertyNames" => Kw::PropertyNames,
            b"minProperties" => Kw::MinProperties,
            b"maxProperties" => Kw::MaxProperties,
            b"dependentRequired" => Kw::DependentRequired,
            b"dependentSchemas" => Kw::DependentSchemas,
            b"dependencies" => Kw::Dependencies,
            b"prefixItems" => Kw::PrefixItems,
            b"items" => Kw::Items,
            b"additionalItems" => Kw::AdditionalItems,
            b"contains" => Kw::Contains,
            b"minContains" => Kw::MinContains,
            b"maxContains" => Kw::MaxContains,
            b"minItems" => Kw::MinItems,
            b"maxItems" => Kw::MaxItems,
            b"uniqueItems" => Kw::UniqueItems,
            _ => return None,
        })
    }

    /// The keyword numbered `n` (an index's word), if any.
    pub(super) fn from_number(n: u32) -> Option<Self> {
        ALL.get(n as usize).copied()
    }

    /// The keyword's name, as a schema spells it without escapes.
    pub(super) fn name(self) -> &'static [u8] {
        match self {
            Kw::Type => b"type",
            Kw::Enum => b"enum",
            Kw::Const => b"const",
            Kw::Ref => b"$ref",
            Kw::AllOf => b"allOf",
            Kw::AnyOf => b"anyOf",
            Kw::OneOf => b"oneOf",
            Kw::Not => b"not",
            Kw::If => b"if",
            Kw::Then => b"then",
            Kw::Else => b"else",
            Kw::Minimum => b"minimum",
            Kw::Maximum => b"maximum",
            Kw::ExclusiveMinimum => b"exclusiveMinimum",
            Kw::ExclusiveMaximum => b"exclusiveMaximum",
            Kw::MultipleOf => b"multipleOf",
            Kw::MinLength => b"minLength",
            Kw::MaxLength => b"maxLength",
            Kw::Pattern => b"pattern",
            Kw::Properties => b"properties",
            Kw::PatternProperties => b"patternProperties",
            Kw::AdditionalProperties => b"additionalProperties",
            Kw::Required => b"required",
            Kw::PropertyNames => b"propertyNames",
            Kw::MinProperties => b"minProperties",
            Kw::MaxProperties => b"maxProperties",
            Kw::DependentRequired => b"dependentRequired",
            Kw::DependentSchemas => b"dependentSchemas",
            Kw::Dependencies => b"dependencies",
            Kw::PrefixItems => b"prefixItems",
            Kw::Items => b"items",
            Kw::AdditionalItems => b"additionalItems",
            Kw::Contains => b"contains",
            Kw::MinContains => b"minContains",
            Kw::MaxContains => b"maxContains",
            Kw::MinItems => b"minItems",
            Kw::MaxItems => b"maxItems",
            Kw::UniqueItems => b"uniqueItems",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_keyword_is_its_number_and_its_name() {
        for (n, kw) in ALL.iter().enumerate() {
            assert_eq!(*kw as usize, n);
            assert_eq!(Kw::from_number(n as u32), Some(*kw));
            assert_eq!(Kw::of(kw.name()), Some(*kw));
        }
        assert_eq!(Kw::from_number(ALL.len() as u32), None);
        assert_eq!(Kw::of(b"description"), None);
        assert_eq!(Kw::of(b"$defs"), None);
    }
}
