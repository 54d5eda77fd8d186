//! SPEC §11 for MCP results: a `structuredContent` is checked against its tool's
//! `outputSchema` when the host registered one; one that does not satisfy it fails the call
//! with the text SPEC gives, and the call still gets exactly one result.

use polyweave_tests::mcp_loop::{call, McpLoop};
use polyweave_tool_adapter::json::schema::Schema;
use polyweave_tool_adapter::mcp::{McpConfig, McpOutputSchema, McpRevision};
use polyweave_tool_adapter::wrapper::WrapperConfig;

fn ready_with(schema: &'static [u8]) -> McpLoop<'static> {
    let cfg = WrapperConfig::DEFAULT;
    let mcp = McpConfig {
        revision: McpRevision::V2025_11_25,
        ..McpConfig::DEFAULT
    };
    let mut l = McpLoop::ready(cfg, mcp.fit(&cfg), &["echo", "plain"], 4, 4);
    let schema: &'static Schema<'static> = Box::leak(Box::new(Schema::new(schema).unwrap()));
    let outputs = Box::leak(Box::new([McpOutputSchema {
        tool: "echo",
        schema,
    }]));
    l.client.set_output_schemas(outputs);
    l
}

fn structured(id: u64, content: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":"x"}}],"structuredContent":{content}}}}}"#
    )
}

// SPEC §11
#[test]
fn structured_content_is_checked_against_the_output_schema() {
    let schema: &[u8] = br#"{"type":"object","required":["t"],"properties":{"t":{"type":"number"},"c":{"enum":["rain","sun"]}}}"#;
    let cases = [
        (r#"{"t":36,"c":"rain"}"#, r#""result":{"t":36,"c":"rain"}"#),
        (
            r#"{"c":"rain"}"#,
            r#""error":"Tool echo returned a result that does not match its output schema: (result): missing required property \"t\"""#,
        ),
        (
            r#"{"t":1,"c":"snow"}"#,
            r#""error":"Tool echo returned a result that does not match its output schema: /c: not one of the allowed values""#,
        ),
    ];
    for (content, expected) in cases {
        let mut l = ready_with(schema);
        l.model(10, &call("c1", "echo", "{}"));
        assert_eq!(l.take_server().len(), 1);
        l.server(&structured(3, content));
        let model = l.take_model();
        assert_eq!(
            model[0],
            format!(r#"{{"type":"TOOL_RESULT","content":{{"id":"c1","name":"echo",{expected}}}}}"#),
            "{content}"
        );
        assert_eq!(l.client.in_flight(), 0);
        assert_eq!(l.wrapper.pending(), 0);
    }
}

/// A tool without a registered schema, and a result without `structuredContent`, pass as before.
// SPEC §11
#[test]
fn results_without_a_schema_or_structured_content_pass_unchecked() {
    let mut l = ready_with(br#"{"type":"object","required":["t"]}"#);
    l.model(10, &call("c1", "plain", "{}"));
    l.take_server();
    l.server(&structured(3, r#"{"c":"rain"}"#));
    assert_eq!(
        l.take_model()[0],
        r#"{"type":"TOOL_RESULT","content":{"id":"c1","name":"plain","result":{"c":"rain"}}}"#
    );
    l.model(20, &call("c2", "echo", "{}"));
    l.take_server();
    l.server(r#"{"jsonrpc":"2.0","id":4,"result":{"content":[{"type":"text","text":"hi"}]}}"#);
    assert_eq!(
        l.take_model()[0],
        r#"{"type":"TOOL_RESULT","content":{"id":"c2","name":"echo","result":[{"type":"text","text":"hi"}]}}"#
    );
}

/// The `<where>: <why>` part is cut to the line's capacity, escaped, so the `ERROR` frame
/// keeps to `McpConfig::max_frame_len`.
// SPEC §11
#[test]
fn a_long_text_keeps_to_the_frame_bound() {
    // The wrapper would cut the message to its own `message_cap`: here it takes it whole.
    let cfg = WrapperConfig {
        message_cap: 4096,
        ..WrapperConfig::DEFAULT
    };
    let mcp = McpConfig {
        revision: McpRevision::V2025_11_25,
        line_cap: 600,
        ..McpConfig::DEFAULT
    }
    .fit(&cfg);
    let mut l = McpLoop::ready(cfg, mcp, &["echo"], 4, 4);
    let schema: &'static Schema<'static> = Box::leak(Box::new(
        Schema::new(br#"{"additionalProperties":false}"#).unwrap(),
    ));
    l.client
        .set_output_schemas(Box::leak(Box::new([McpOutputSchema {
            tool: "echo",
            schema,
        }])));
    l.model(10, &call("c1", "echo", "{}"));
    l.take_server();
    // Each `~` is `~0` in a JSON Pointer: the text outgrows the line that carried it.
    let key = "~".repeat(400);
    l.server(&structured(3, &format!(r#"{{"{key}":1}}"#)));
    let model = l.take_model();
    let prefix = r#"{"type":"TOOL_RESULT","content":{"id":"c1","name":"echo","error":"Tool echo returned a result that does not match its output schema: /"#;
    assert!(model[0].starts_with(prefix), "{}", model[0]);
    let cut = format!("{prefix}{}~\"}}}}", "~0".repeat(299));
    assert_eq!(model[0], cut);
    assert!(model[0].len() <= mcp.max_frame_len());
}
