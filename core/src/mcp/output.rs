//! MCP results checked against their tool's `outputSchema` (SPEC §11): the host registers the
//! schemas it keeps; a `structuredContent` that does not satisfy its tool's fails the call.

use crate::frame::write::escaped_len;
use crate::json::escape::escaped_prefix;
use crate::json::schema::{Invalid, Schema};
use crate::sink::{put_escaped, Sink};

use super::config::McpOutputSchema;
use super::McpClient;

impl<'a> McpClient<'a> {
    /// Registers the output schemas results are checked against (replacing any earlier
    /// ones); a tool without one has its results passed on unchecked.
    pub fn set_output_schemas(&mut self, schemas: &'a [McpOutputSchema<'a>]) {
        self.outputs = schemas;
    }

    /// The result's `structuredContent` checked against the call's tool's schema: the
    /// failure, when it does not satisfy it.
    pub(super) fn check_output(&self, slot: usize, content: &[u8]) -> Option<(usize, Invalid)> {
        let name = self.calls.name(slot);
        let i = self
            .outputs
            .iter()
            .position(|o| o.tool.as_bytes() == name)?;
        self.outputs[i]
            .schema
            .validate_valid(content)
            .err()
            .map(|e| (i, e))
    }

    /// The schema registered at `i`.
    pub(super) fn output_schema(&self, i: usize) -> Option<&'a Schema<'a>> {
        self.outputs.get(i).map(|o| o.schema)
    }
}

/// `Tool <name> returned a result that does not match its output schema: <where>: <why>` as
/// an `ERROR` frame's escaped text; the `<where>: <why>` part is cut at `cap` bytes escaped, so the
/// frame keeps to [`McpConfig::max_frame_len`](super::McpConfig::max_frame_len).
pub(super) fn write_text(
    s: &mut dyn Sink,
    name: &[u8],
    schema: &Schema<'_>,
    invalid: Invalid,
    content: &[u8],
    cap: usize,
) {
    s.put(b"Tool ");
    put_escaped(s, name);
    s.put(b" returned a result that does not match its output schema: ");
    let (mut left, mut cut) = (cap, false);
    let mut put = |piece: &str| {
        // Once cut, nothing more: a later piece must not fill the rest of the room.
        if cut {
            return;
        }
        let n = escaped_prefix(piece.as_bytes(), left);
        put_escaped(s, &piece.as_bytes()[..n]);
        left -= escaped_len(&piece.as_bytes()[..n]);
        cut = n < piece.len();
    };
    invalid
        .display(schema, content)
        .with_root("(result)")
        .write_to(&mut put);
}
