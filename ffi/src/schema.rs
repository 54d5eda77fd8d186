//! JSON Schema validation for C (SPEC §11): whether the validator reads a schema, and a
//! value checked against one, its `<where>: <why>` text written into the caller's buffer.

#![allow(non_camel_case_types)]

use polyweave_tool_adapter::json::schema::{write_cut, Schema, SchemaError, SchemaErrorKind, Why};

use crate::boundary::{disjoint, ffi, in_bytes, out_bytes, out_slot, require_non_null, span};
use crate::codes::pw_result;

/// Why the validator refuses a schema (`pw_schema_error.kind`, the Rust `SchemaErrorKind`).
#[repr(u32)]
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum pw_schema_error_kind {
    /// The text is not JSON.
    PW_SCHEMA_ERROR_NOT_JSON = 0,
    /// A schema (the root or a subschema) that is neither an object nor a boolean.
    PW_SCHEMA_ERROR_NOT_A_SCHEMA = 1,
    /// A keyword whose value has the wrong shape (`"minimum":"1"`, `"required":{}`).
    PW_SCHEMA_ERROR_BAD_KEYWORD = 2,
    /// A `$ref` to another document: the validator never fetches one.
    PW_SCHEMA_ERROR_REMOTE_REF = 3,
    /// A `$ref` inside the document that names nothing there (or is longer than 256 bytes).
    PW_SCHEMA_ERROR_UNRESOLVED_REF = 4,
    /// A `pattern` (or `patternProperties` name) using syntax the matcher does not read.
    PW_SCHEMA_ERROR_UNSUPPORTED_PATTERN = 5,
    /// A `pattern` that is not an ECMA-262 regular expression.
    PW_SCHEMA_ERROR_BAD_PATTERN = 6,
    /// A `pattern` too large for the matcher's fixed program.
    PW_SCHEMA_ERROR_PATTERN_TOO_LARGE = 7,
    /// Containers nested deeper than the validator's depth limit (32).
    PW_SCHEMA_ERROR_TOO_DEEP = 8,
    /// A `$ref` to an `$anchor` or `$id` the document gives twice: which one it means is
    /// undefined.
    PW_SCHEMA_ERROR_AMBIGUOUS_REF = 9,
    /// An object that gives a name twice (a keyword, a property, a member of an `enum`
    /// value): the validator would read the first where other readers keep the last.
    PW_SCHEMA_ERROR_REPEATED_NAME = 10,
    /// Finding that no object repeats a name compared more pairs of names than the work
    /// limit (100,000) allows.
    PW_SCHEMA_ERROR_TOO_COSTLY = 11,
}

impl From<SchemaErrorKind> for pw_schema_error_kind {
    fn from(kind: SchemaErrorKind) -> Self {
        match kind {
            SchemaErrorKind::NotJson => Self::PW_SCHEMA_ERROR_NOT_JSON,
            SchemaErrorKind::NotASchema => Self::PW_SCHEMA_ERROR_NOT_A_SCHEMA,
            SchemaErrorKind::RemoteRef => Self::PW_SCHEMA_ERROR_REMOTE_REF,
            SchemaErrorKind::UnresolvedRef => Self::PW_SCHEMA_ERROR_UNRESOLVED_REF,
            SchemaErrorKind::AmbiguousRef => Self::PW_SCHEMA_ERROR_AMBIGUOUS_REF,
            SchemaErrorKind::UnsupportedPattern => Self::PW_SCHEMA_ERROR_UNSUPPORTED_PATTERN,
            SchemaErrorKind::BadPattern => Self::PW_SCHEMA_ERROR_BAD_PATTERN,
            SchemaErrorKind::PatternTooLarge => Self::PW_SCHEMA_ERROR_PATTERN_TOO_LARGE,
            SchemaErrorKind::TooDeep => Self::PW_SCHEMA_ERROR_TOO_DEEP,
            SchemaErrorKind::RepeatedName => Self::PW_SCHEMA_ERROR_REPEATED_NAME,
            SchemaErrorKind::TooCostly => Self::PW_SCHEMA_ERROR_TOO_COSTLY,
            // `BadKeyword`, and a kind newer than this table: some keyword the host must fix.
            _ => Self::PW_SCHEMA_ERROR_BAD_KEYWORD,
        }
    }
}

/// Why and where a schema is refused (`pw_schema_check`).
#[repr(C)]
#[derive(Copy, Clone, Debug)]
pub struct pw_schema_error {
    /// What is wrong.
    pub kind: pw_schema_error_kind,
    /// The byte offset in the schema's text.
    pub at: usize,
}

impl From<SchemaError> for pw_schema_error {
    fn from(e: SchemaError) -> Self {
        Self {
            kind: e.kind.into(),
            at: e.at,
        }
    }
}

/// Checks that the validator reads `text` (a schema's JSON text) whole: `PW_OK`, or
/// `PW_BAD_SCHEMA` with `*out` saying why and where. `*out` is written only with
/// `PW_BAD_SCHEMA`. A schema `pw_tool.schema` names is checked the same way by
/// `pw_wrapper_init`, which gives only the code.
///
/// The caller must pass `text` valid for `len` reads and `out` for one write, outside `text`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pw_schema_check(
    text: *const u8,
    len: usize,
    out: *mut pw_schema_error,
) -> pw_result {
    ffi(|| {
        require_non_null!(text, out);
        disjoint(&[span(out, 1)], &[span(text, len)])?;
        // SAFETY: the caller hands `text` for `len` reads.
        let text = unsafe { in_bytes(text, len) }?;
        // SAFETY: the caller hands `out` for one write, outside `text` (checked).
        let out = unsafe { out_slot(out) }?;
        match Schema::new(text) {
            Ok(_) => Ok(()),
            Err(e) => {
                out.write(e.into());
                Err(pw_result::PW_BAD_SCHEMA)
            }
        }
    })
}

/// Sets `*out_words` to the words (`uint32_t`) of the index of the schema `text`, for
/// `pw_tool.schema_index`: `PW_OK`; `PW_BAD_SCHEMA` when the validator refuses it
/// (`pw_schema_check` says why); `PW_BAD_ARGUMENT` for a text of 4 GiB or more.
///
/// The caller must pass `text` valid for `len` reads and `out_words` for one write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pw_schema_index_words(
    text: *const u8,
    len: usize,
    out_words: *mut usize,
) -> pw_result {
    ffi(|| {
        require_non_null!(text, out_words);
        disjoint(&[span(out_words, 1)], &[span(text, len)])?;
        // SAFETY: the caller hands `text` for `len` reads.
        let text = unsafe { in_bytes(text, len) }?;
        // SAFETY: the caller hands `out_words` for one write, outside `text` (checked).
        let out = unsafe { out_slot(out_words) }?;
        let schema = Schema::new(text).map_err(|_| pw_result::PW_BAD_SCHEMA)?;
        let words = schema
            .index_words()
            .map_err(|_| pw_result::PW_BAD_ARGUMENT)?;
        out.write(words);
        Ok(())
    })
}

/// Checks a value's JSON text against a schema's (SPEC §11, the validator's default limits):
/// `PW_OK` when it satisfies the schema; `PW_SCHEMA_INVALID` when it does not, and
/// `PW_SCHEMA_LIMIT` when a limit of the validator stopped the check, each with the text
/// `<where>: <why>` (`/city: expected string`, `(args): missing required property "city"`)
/// written into `error`, cut on a UTF-8 boundary to `error_cap` bytes, and its length in
/// `*error_len`. `PW_BAD_SCHEMA` when the validator refuses the schema (`pw_schema_check` says
/// why), `PW_INVALID_JSON` when the value is not JSON: nothing written with those.
///
/// The caller must pass `schema` valid for `schema_len` reads, `value` for `value_len` reads,
/// `error` for `error_cap` writes and `error_len` for one write, the two outputs apart from
/// each other and from the inputs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pw_schema_validate(
    schema: *const u8,
    schema_len: usize,
    value: *const u8,
    value_len: usize,
    error: *mut u8,
    error_cap: usize,
    error_len: *mut usize,
) -> pw_result {
    ffi(|| {
        require_non_null!(schema, value, error, error_len);
        disjoint(
            &[span(error, error_cap), span(error_len, 1)],
            &[span(schema, schema_len), span(value, value_len)],
        )?;
        // SAFETY: the caller hands `schema` and `value` for their lengths' reads, `error` for
        // `error_cap` writes and `error_len` for one write, apart (checked).
        let (schema, value, error, error_len) = unsafe {
            (
                in_bytes(schema, schema_len)?,
                in_bytes(value, value_len)?,
                out_bytes(error, error_cap)?,
                out_slot(error_len)?,
            )
        };
        let schema = Schema::new(schema).map_err(|_| pw_result::PW_BAD_SCHEMA)?;
        let Err(invalid) = schema.validate(value) else {
            return Ok(());
        };
        if invalid.why() == Why::NotJson {
            return Err(pw_result::PW_INVALID_JSON);
        }
        let (len, _) = write_cut(error, |put| invalid.display(&schema, value).write_to(put));
        error_len.write(len);
        Err(if invalid.is_limit() {
            pw_result::PW_SCHEMA_LIMIT
        } else {
            pw_result::PW_SCHEMA_INVALID
        })
    })
}
