//! JSON Schema validation of a value's text against a schema's text, with no allocation
//! (SPEC §11).
//!
//! Neither document is parsed into a tree: [`Schema::validate`] walks the schema's text and
//! the value's text side by side, looking members up in place. The stack is bounded by
//! [`Limits::max_depth`] (each subschema applied to a value is a level), the work by
//! [`Limits::max_subschemas`] and, for `pattern`, [`Limits::max_pattern_steps`]; hitting one
//! is an [`Invalid`] of its own kind ([`Invalid::is_limit`]), never a panic.
//!
//! Everything a validation could need from outside the document is settled when the schema
//! is read ([`Schema::new`]): a `$ref` to another document, a `pattern` the matcher does not
//! read, or a keyword of the wrong shape is a [`SchemaError`] there, so a host knows at
//! registration whether a tool's arguments can be checked.
//!
//! ```
//! use polyweave_tool_adapter::json::schema::Schema;
//!
//! let schema = Schema::new(br#"{"type":"object","required":["city"],
//!     "properties":{"city":{"type":"string"},"days":{"type":"integer","minimum":1}}}"#)?;
//! assert!(schema.validate(br#"{"city":"Paris","days":2.0}"#).is_ok());
//!
//! let args = br#"{"city":"Paris","days":0}"#;
//! let invalid = schema.validate(args).unwrap_err();
//! assert_eq!(invalid.display(&schema, args).to_string(), "/days: must be >= 1");
//! # Ok::<(), polyweave_tool_adapter::json::schema::SchemaError>(())
//! ```

mod check;
mod document;
mod equal;
mod lint;
mod names;
mod number;
pub(crate) mod pattern;
mod refs;
pub(crate) mod text;
mod uri;
mod why;

pub use document::{Draft, Limits, Schema, SchemaError, SchemaErrorKind};
pub use why::{write_cut, Invalid, InvalidDisplay, Why};
