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
//! A schema validated often can be indexed once into memory the host hands in
//! ([`Schema::index_words`], [`Schema::indexed`]): each subschema's keywords are then found
//! from a table of `u32` words rather than by reading the text, with the same answers.
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
//!
//! let mut words = [0u32; 64];
//! assert_eq!(schema.index_words(), Ok(41));
//! let indexed = schema.indexed(&mut words).expect("64 words are enough");
//! assert_eq!(indexed.validate(args), Err(invalid));
//! # Ok::<(), polyweave_tool_adapter::json::schema::SchemaError>(())
//! ```

mod check;
mod document;
mod equal;
mod index;
mod lint;
mod names;
mod number;
pub(crate) mod pattern;
mod refs;
pub(crate) mod text;
mod uri;
mod vocabulary;
mod why;

pub use document::{Draft, Limits, Schema, SchemaError, SchemaErrorKind};
pub use index::IndexError;
pub use why::{write_cut, Invalid, InvalidDisplay, Why};
