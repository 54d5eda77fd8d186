//! The schemas of the tools a server lists, read for validation (SPEC §11): a tool's
//! `inputSchema` goes to the wrapper, which checks a model call's args before the call is
//! made; its `outputSchema` to the MCP client, which checks a result's `structuredContent`.
//! Both borrow the tool's `tools/list` entry, which the host keeps for as long as the wrapper
//! and the client live.

use polyweave_tool_adapter::json::schema::Schema;
use polyweave_tool_adapter::json::{find_member, DEFAULT_MAX_DEPTH};
use polyweave_tool_adapter::mcp::McpOutputSchema;
use polyweave_tool_adapter::Tool;

use crate::host::Listed;
use crate::log;

/// A listed tool's schemas, each when it has one the validator reads whole.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct ToolSchemas<'e> {
    /// Its `inputSchema`.
    pub input: Option<Schema<'e>>,
    /// Its `outputSchema`.
    pub output: Option<Schema<'e>>,
}

impl<'e> ToolSchemas<'e> {
    /// Reads `tool`'s schemas. One the validator refuses leaves that side unchecked (SPEC
    /// §11: the tool is still registered), with a log line naming the tool and why.
    pub fn read(tool: &'e Listed) -> Self {
        Self {
            input: read_one(tool, "inputSchema"),
            output: read_one(tool, "outputSchema"),
        }
    }
}

fn read_one<'e>(tool: &'e Listed, key: &str) -> Option<Schema<'e>> {
    // The entry came in a line the client read with this depth limit: it fits.
    let text = find_member(&tool.entry, key.as_bytes(), DEFAULT_MAX_DEPTH)
        .ok()
        .flatten()?;
    Schema::new(text)
        .map_err(|e| log!("tool {}: its {key} is not checked: {e}", tool.name))
        .ok()
}

/// The words [`indexed`] needs for every schema of `schemas`.
pub fn index_words(schemas: &[ToolSchemas<'_>]) -> usize {
    let words = |s: &Option<Schema<'_>>| s.map_or(0, |s| s.index_words().unwrap_or(0));
    schemas
        .iter()
        .map(|s| words(&s.input) + words(&s.output))
        .sum()
}

/// `schemas` with each schema indexed in `words` (at least [`index_words`]): a call's args
/// and a result's `structuredContent` are then checked without reading the schema's
/// annotations or comparing keyword names (SPEC §11), with the same answers.
pub fn indexed<'e>(
    schemas: Vec<ToolSchemas<'e>>,
    mut words: &'e mut [u32],
) -> Vec<ToolSchemas<'e>> {
    let mut index = |s: Option<Schema<'e>>| {
        let s = s?;
        let n = s.index_words().unwrap_or(0);
        if n == 0 || n > words.len() {
            return Some(s);
        }
        let (mine, rest) = core::mem::take(&mut words).split_at_mut(n);
        words = rest;
        Some(s.indexed(mine).unwrap_or(s))
    };
    schemas
        .into_iter()
        .map(|s| ToolSchemas {
            input: index(s.input),
            output: index(s.output),
        })
        .collect()
}

/// The wrapper's adapter tool `name`, its calls' args checked against `input` when given.
pub fn adapter_tool<'t>(name: &'t str, input: Option<&'t Schema<'t>>) -> Tool<'t> {
    match input {
        Some(schema) => Tool::adapter(name).with_schema(schema),
        None => Tool::adapter(name),
    }
}

/// The output schemas to register with `McpClient::set_output_schemas`: `schemas[i]`'s,
/// under `names[i]` — the name the model calls the tool by, which is the name the client
/// keeps for the call (a mapped one, SPEC §10.1, included).
pub fn output_schemas<'a, S: AsRef<str>>(
    names: &'a [S],
    schemas: &'a [ToolSchemas<'a>],
) -> Vec<McpOutputSchema<'a>> {
    names
        .iter()
        .zip(schemas)
        .filter_map(|(name, s)| {
            Some(McpOutputSchema {
                tool: name.as_ref(),
                schema: s.output.as_ref()?,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listed(entry: &str) -> Listed {
        Listed {
            name: "t".into(),
            entry: entry.as_bytes().to_vec(),
        }
    }

    #[test]
    fn each_schema_read_from_the_entry_or_left_out() {
        let both = listed(
            r#"{"name":"t","inputSchema":{"type":"object","required":["a"]},"outputSchema":{"type":"object"}}"#,
        );
        let s = ToolSchemas::read(&both);
        assert_eq!(
            s.input.map(|s| s.text()),
            Some(&br#"{"type":"object","required":["a"]}"#[..])
        );
        assert_eq!(
            s.output.map(|s| s.text()),
            Some(&br#"{"type":"object"}"#[..])
        );
        let args = br#"{"b":1}"#;
        let invalid = s.input.unwrap().validate(args).unwrap_err();
        // Indexed: one subschema each, with 2 keywords and a required name (13 words) and
        // with 1 keyword (8).
        let mut words = vec![0u32; index_words(&[s])];
        assert_eq!(words.len(), (1 + 2 + 2 + 3 * 2 + 2) + (1 + 2 + 2 + 3));
        let both_indexed = indexed(vec![s], &mut words)[0];
        assert!(
            both_indexed.input.unwrap().is_indexed() && both_indexed.output.unwrap().is_indexed()
        );
        assert_eq!(both_indexed.input.unwrap().validate(args), Err(invalid));
        assert_eq!(
            invalid.display(&s.input.unwrap(), args).to_string(),
            r#"(args): missing required property "a""#
        );
        assert_eq!(
            ToolSchemas::read(&listed(r#"{"name":"t"}"#)),
            ToolSchemas::default()
        );
        // A `$ref` to another document is refused: the tool goes unchecked.
        let remote = listed(
            r#"{"name":"t","inputSchema":{"$ref":"https://example.com/a.json"},"outputSchema":{"type":"object"}}"#,
        );
        let s = ToolSchemas::read(&remote);
        assert_eq!((s.input.is_none(), s.output.is_some()), (true, true));
    }

    #[test]
    fn output_schemas_go_under_the_names_given() {
        let tools = [
            listed(r#"{"name":"a.b","outputSchema":{"type":"object"}}"#),
            listed(r#"{"name":"c"}"#),
        ];
        let schemas: Vec<ToolSchemas<'_>> = tools.iter().map(ToolSchemas::read).collect();
        let names = ["a_b", "c"];
        let outputs = output_schemas(&names, &schemas);
        assert_eq!(outputs.len(), 1);
        assert_eq!(outputs[0].tool, "a_b");
        assert_eq!(outputs[0].schema.text(), br#"{"type":"object"}"#);
        let tool = adapter_tool("c", schemas[0].output.as_ref());
        assert!(tool.schema.is_some());
        assert!(adapter_tool("c", None).schema.is_none());
    }
}
