/*
 * C-side test of the MCP client over Streamable HTTP (pw_mcp_http_init, pw_mcp_poll_request,
 * pw_mcp_handle_response, pw_mcp_feed_response, pw_mcp_handle_response_end), built and run
 * by ffi/tests/c_api.rs (cc -std=c99 -Wall -Wextra -Werror -pedantic) against the header
 * only.
 *
 * The test plays the host and a recorded server: it checks each POST's body and header
 * lines byte for byte and reports each response as its stream, the bodies in pieces of a
 * few bytes: a 2026-07-28 server with JSON and event-stream responses, a 2025-11-25 server
 * with its session id, an HTTP 500, a cancel that closes its stream, and every refusal
 * code with nothing changed. All memory is static. The exit status is the failure count
 * (capped), 0 when all pass.
 */
#include "polyweave_tool_adapter.h"

#include <stdio.h>
#include <string.h>

#include "check.h"

/* Sized by the header's bound for the most streams used here (3) and 4 call slots. */
static uint64_t client_mem[PW_MCP_HTTP_DEFAULT_SIZE_BOUND(4, 3) / sizeof(uint64_t) + 1];
static char body[8192];
static char headers[16384];
static char seen[8192];

#define COMMON "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
#define ENVELOPE                                                          \
    "\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","         \
    "\"io.modelcontextprotocol/clientCapabilities\":{},"                  \
    "\"io.modelcontextprotocol/clientInfo\":{\"name\":\"t\",\"version\":\"1\"}"
#define RESULT(id) "{\"jsonrpc\":\"2.0\",\"id\":" id ",\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"hi\"}]}}"
#define ECHO_FRAMES(index)                                                                    \
    "F" index " {\"type\":\"TOOL_RESULT\",\"content\":{\"name\":\"echo\",\"result\":[{\"type\":" \
    "\"text\",\"text\":\"hi\"}]}}\nF" index " {\"type\":\"END\"}\n"

static void append(const char *a, const uint8_t *b, size_t len)
{
    size_t used = strlen(seen);
    if (used + strlen(a) + len + 2 >= sizeof seen) return;
    memcpy(seen + used, a, strlen(a));
    used += strlen(a);
    memcpy(seen + used, b, len);
    used += len;
    seen[used++] = '\n';
    seen[used] = '\0';
}

/* Drains events ("E <kind> <text>") and frames ("F<index> <frame>") into `seen`. */
static void drain(pw_mcp *c)
{
    int moved = 1;
    while (moved) {
        pw_mcp_event ev;
        pw_mcp_frame f;
        static uint8_t frame[1024];
        moved = 0;
        while (pw_mcp_poll_event(c, &ev) == PW_OK) {
            char tag[32];
            moved = 1;
            sprintf(tag, "E%u ", (unsigned)ev.kind);
            if (ev.kind == PW_MCP_EVENT_INITIALIZED) {
                append(tag, ev.version.ptr, ev.version.len);
            } else if (ev.kind == PW_MCP_EVENT_TOOL) {
                append(tag, ev.name.ptr, ev.name.len);
            } else {
                append(tag, (const uint8_t *)"", 0);
            }
        }
        while (pw_mcp_poll_frame(c, frame, sizeof frame, &f) == PW_OK) {
            char tag[32];
            moved = 1;
            sprintf(tag, "F%u ", (unsigned)f.index);
            append(tag, frame, f.len);
        }
    }
}

/* Checks what was seen since the last call, then forgets it. */
static void expect_seen(int at, const char *want)
{
    if (strcmp(seen, want) != 0) {
        fprintf(stderr, "line %d: seen\n%s\nwant\n%s\n", at, seen, want);
    }
    CHECK(strcmp(seen, want) == 0);
    seen[0] = '\0';
}

/* The next POST: its stream, or -1 for none; body and headers NUL-terminated. */
static int post(pw_mcp *c)
{
    pw_mcp_post p;
    pw_result r;
    drain(c);
    body[0] = headers[0] = '\0';
    r = pw_mcp_poll_request(c, (uint8_t *)body, sizeof body - 1, (uint8_t *)headers, sizeof headers - 1, &p);
    if (r == PW_NOTHING) {
        CHECK(p.body_len == 0 && p.headers_len == 0);
        return -1;
    }
    CHECK_RC(r, PW_OK);
    CHECK(p.kind == PW_MCP_POST);
    body[p.body_len] = '\0';
    headers[p.headers_len] = '\0';
    return p.stream;
}

static void expect_post(int at, int stream, const char *want_body, const char *want_headers)
{
    if (strcmp(body, want_body) != 0 || strcmp(headers, want_headers) != 0) {
        fprintf(stderr, "line %d: posted\n%s\n%s\n", at, body, headers);
    }
    CHECK(stream >= 0);
    CHECK(strcmp(body, want_body) == 0);
    CHECK(strcmp(headers, want_headers) == 0);
}

/* A whole response: head, the body in pieces of `piece` bytes (draining between), end. */
static void respond(pw_mcp *c, int stream, uint16_t status, const char *ct, const char *session,
                    const char *text, size_t piece)
{
    size_t at = 0, len = strlen(text);
    drain(c);
    CHECK_RC(pw_mcp_handle_response(c, (uint16_t)stream, status, (const uint8_t *)ct, strlen(ct),
                                    (const uint8_t *)session, session ? strlen(session) : 0),
             PW_OK);
    while (at < len) {
        size_t n = len - at < piece ? len - at : piece, used = 0;
        CHECK_RC(pw_mcp_feed_response(c, (uint16_t)stream, (const uint8_t *)text + at, n, &used), PW_OK);
        if (used == 0) {
            CHECK(used > 0);
            break;
        }
        at += used;
        drain(c);
    }
    CHECK_RC(pw_mcp_handle_response_end(c, (uint16_t)stream), PW_OK);
    drain(c);
}

static void call(pw_mcp *c, uint32_t index)
{
    pw_mcp_handled h;
    CHECK_RC(pw_mcp_handle_frame(c, 0, index, LIT("{\"type\":\"TOOL_CALL\",\"content\":{\"name\":\"echo\",\"args\":{\"m\":\"hi\"}}}"), &h), PW_OK);
    CHECK(h.kind == PW_MCP_HANDLED_SENT);
}

static pw_mcp *new_client(size_t streams)
{
    pw_mcp_config cfg;
    pw_mcp *c = NULL;
    size_t size = 0;
    CHECK_RC(pw_mcp_config_default(&cfg), PW_OK);
    CHECK_RC(pw_mcp_http_size(&cfg, 4, streams, &size), PW_OK);
    CHECK(size <= sizeof client_mem);
    CHECK_RC(pw_mcp_http_init(client_mem, size, &cfg, 4, streams, LIT("t"), LIT("1"), &c), PW_OK);
    CHECK(pw_mcp_is_http(c) == 1);
    CHECK_RC(pw_mcp_start(c, 0), PW_OK);
    return c;
}

/* A 2026-07-28 client through server/discover and tools/list. */
static pw_mcp *modern(size_t streams)
{
    pw_mcp *c = new_client(streams);
    int s = post(c);
    expect_post(__LINE__, s,
                "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"server/discover\",\"params\":{\"_meta\":{" ENVELOPE "}}}",
                COMMON "MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: server/discover\r\n");
    CHECK(post(c) == -1);
    respond(c, s, 200, "application/json", NULL,
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"resultType\":\"complete\",\"supportedVersions\":"
            "[\"2026-07-28\"],\"capabilities\":{\"tools\":{\"listChanged\":false}}}}",
            7);
    s = post(c);
    expect_post(__LINE__, s,
                "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\",\"params\":{\"_meta\":{" ENVELOPE "}}}",
                COMMON "MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/list\r\n");
    respond(c, s, 200, "application/json", NULL,
            "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"resultType\":\"complete\",\"tools\":[{\"name\":\"echo\"}]}}", 3);
    expect_seen(__LINE__, "E0 2026-07-28\nE1 echo\nE3 \n");
    return c;
}

static void test_sizes(void)
{
    pw_mcp_config cfg;
    size_t line = 0, one = 0, n = 0;
    pw_mcp *c = NULL;
    CHECK_RC(pw_mcp_config_default(&cfg), PW_OK);
    CHECK_RC(pw_mcp_size(&cfg, 4, &line), PW_OK);
    CHECK_RC(pw_mcp_http_size(&cfg, 4, 1, &one), PW_OK);
    CHECK(one > line && one - line <= PW_MCP_MAX_STREAM_SIZE + PW_MAX_ALIGN);
    CHECK(one <= PW_MCP_HTTP_DEFAULT_SIZE_BOUND(4, 1));
    CHECK_RC(pw_mcp_http_size(&cfg, 4, 3, &n), PW_OK);
    CHECK(n <= PW_MCP_HTTP_DEFAULT_SIZE_BOUND(4, 3) && n > PW_MCP_HTTP_DEFAULT_SIZE_BOUND(4, 3) / 2);
    CHECK_RC(pw_mcp_http_size(&cfg, 4, 0, &n), PW_BAD_ARGUMENT);
    CHECK_RC(pw_mcp_http_size(&cfg, 4, 65536, &n), PW_TOO_MANY);
    CHECK_RC(pw_mcp_max_headers_len(&cfg, &n), PW_OK);
    /* 308 for the fixed lines, a Base64 name and a session; 8 per byte of the x-mcp-header
     * table; the Base64 of an outbox's worth of values. */
    CHECK(n == 308 + 8 * cfg.header_table_cap + 11 + 4 * ((cfg.outbox_cap + 2) / 3));
    CHECK_RC(pw_mcp_http_init(client_mem, one - 1, &cfg, 4, 1, LIT("t"), LIT("1"), &c), PW_STORAGE_TOO_SMALL);
    CHECK(c == NULL);
    /* A line client refuses the HTTP entries. */
    CHECK_RC(pw_mcp_init(client_mem, sizeof client_mem, &cfg, 4, LIT("t"), LIT("1"), &c), PW_OK);
    CHECK(pw_mcp_is_http(c) == 0);
    {
        pw_mcp_post p;
        size_t used = 0;
        CHECK_RC(pw_mcp_poll_request(c, (uint8_t *)body, sizeof body, (uint8_t *)headers, sizeof headers, &p),
                 PW_MCP_NOT_HTTP);
        CHECK_RC(pw_mcp_handle_response(c, 0, 200, LIT("application/json"), NULL, 0), PW_MCP_NOT_HTTP);
        CHECK_RC(pw_mcp_feed_response(c, 0, LIT("{}"), &used), PW_MCP_NOT_HTTP);
        CHECK_RC(pw_mcp_handle_response_end(c, 0), PW_MCP_NOT_HTTP);
    }
}

static void test_2026_json_and_event_stream(void)
{
    pw_mcp *c = modern(2);
    int s;
    call(c, 0);
    s = post(c);
    expect_post(__LINE__, s,
                "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":"
                "{\"m\":\"hi\"},\"_meta\":{\"progressToken\":3," ENVELOPE "}}}",
                COMMON "MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: echo\r\n");
    respond(c, s, 200, "application/json", NULL, RESULT("3"), 5);
    expect_seen(__LINE__, ECHO_FRAMES("0"));
    call(c, 1);
    s = post(c);
    CHECK(s >= 0);
    respond(c, s, 200, "text/event-stream", NULL,
            "id: 0\ndata: \n\n: keep-alive\r\nevent: message\r\ndata: {\"jsonrpc\":\"2.0\",\"method\":"
            "\"notifications/progress\",\"params\":{\"progressToken\":4,\"progress\":1}}\r\n\r\ndata: " RESULT("4") "\n\n",
            2);
    expect_seen(__LINE__, "F1 {\"type\":\"PROGRESS\",\"content\":{\"progressToken\":4,\"progress\":1}}\n" ECHO_FRAMES("1"));
    CHECK(pw_mcp_in_flight(c) == 0);
    CHECK(post(c) == -1);
}

static void test_2025_session(void)
{
    pw_mcp *c = new_client(2);
    const char *with_session = COMMON "MCP-Protocol-Version: 2025-11-25\r\nMcp-Session-Id: sess-1\r\n";
    int s = post(c);
    respond(c, s, 400, "application/json", NULL,
            "{\"jsonrpc\":\"2.0\",\"error\":{\"code\":-32000,\"message\":\"Bad Request: Server not initialized\"},\"id\":null}",
            16);
    s = post(c);
    expect_post(__LINE__, s,
                "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-11-25\","
                "\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}",
                COMMON);
    respond(c, s, 200, "text/event-stream", "sess-1",
            "event: message\nid: 1\ndata: {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"protocolVersion\":\"2025-11-25\","
            "\"capabilities\":{},\"serverInfo\":{\"name\":\"s\",\"version\":\"0\"}}}\n\n",
            13);
    s = post(c);
    expect_post(__LINE__, s, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}", with_session);
    respond(c, s, 202, "", NULL, "", 1);
    s = post(c);
    expect_post(__LINE__, s, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/list\"}", with_session);
    respond(c, s, 200, "application/json", NULL,
            "{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"tools\":[{\"name\":\"echo\"}]}}", 8);
    expect_seen(__LINE__, "E0 2025-11-25\nE1 echo\nE3 \n");
    call(c, 0);
    s = post(c);
    expect_post(__LINE__, s,
                "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":"
                "{\"m\":\"hi\"},\"_meta\":{\"progressToken\":4}}}",
                with_session);
    respond(c, s, 200, "application/json", NULL, RESULT("4"), 6);
    expect_seen(__LINE__, ECHO_FRAMES("0"));
}

static void test_http_500_and_cancel(void)
{
    pw_mcp *c = modern(2);
    pw_mcp_post p;
    pw_mcp_handled h;
    size_t used = 0;
    int s;
    call(c, 0);
    s = post(c);
    respond(c, s, 500, "text/plain", NULL, "Internal Server Error", 4);
    expect_seen(__LINE__, "F0 {\"type\":\"ERROR\",\"content\":{\"message\":\"Tool echo failed: HTTP 500\"}}\n");
    CHECK(post(c) == -1);
    /* A cancel closes the call's stream; nothing is posted for it. */
    call(c, 1);
    s = post(c);
    CHECK_RC(pw_mcp_handle_response(c, (uint16_t)s, 200, LIT("text/event-stream"), NULL, 0), PW_OK);
    CHECK_RC(pw_mcp_handle_frame(c, 0, 1, LIT("{\"type\":\"CANCEL\",\"content\":{\"reason\":\"timeout\"}}"), &h), PW_OK);
    CHECK(h.kind == PW_MCP_HANDLED_CANCELLED);
    CHECK_RC(pw_mcp_poll_request(c, (uint8_t *)body, sizeof body, (uint8_t *)headers, sizeof headers, &p), PW_OK);
    CHECK(p.kind == PW_MCP_POST_CLOSE && p.stream == s && p.body_len == 0 && p.headers_len == 0);
    CHECK(post(c) == -1);
    CHECK_RC(pw_mcp_feed_response(c, (uint16_t)s, LIT("data: " RESULT("4") "\n\n"), &used), PW_MCP_UNKNOWN_STREAM);
    CHECK_RC(pw_mcp_handle_response_end(c, (uint16_t)s), PW_MCP_UNKNOWN_STREAM);
    drain(c);
    expect_seen(__LINE__, "");
    CHECK(pw_mcp_in_flight(c) == 0);
}

static void test_refusals(void)
{
    pw_mcp *c = modern(3);
    pw_mcp_post p;
    size_t used = 99;
    int a, b;
    call(c, 0);
    call(c, 1);
    /* Buffers too small: the size needed, the request kept. */
    size_t max_headers = 0;
    pw_mcp_config cfg;
    CHECK_RC(pw_mcp_config_default(&cfg), PW_OK);
    CHECK_RC(pw_mcp_max_headers_len(&cfg, &max_headers), PW_OK);
    CHECK_RC(pw_mcp_poll_request(c, (uint8_t *)body, sizeof body, (uint8_t *)headers, max_headers - 1, &p), PW_BUFFER_TOO_SMALL);
    CHECK(p.headers_len == max_headers && p.body_len == 0);
    CHECK_RC(pw_mcp_poll_request(c, (uint8_t *)body, 10, (uint8_t *)headers, sizeof headers, &p), PW_BUFFER_TOO_SMALL);
    CHECK(p.headers_len == 0 && p.body_len > 200);
    CHECK_RC(pw_mcp_poll_request(c, (uint8_t *)body, sizeof body, (uint8_t *)body + 100, 400, &p), PW_STORAGE_OVERLAP);
    CHECK_RC(pw_mcp_poll_request(c, NULL, 0, (uint8_t *)headers, sizeof headers, &p), PW_NULL_POINTER);
    a = post(c);
    CHECK(strncmp(body, "{\"jsonrpc\":\"2.0\",\"id\":3,", 24) == 0);
    b = post(c);
    CHECK(strncmp(body, "{\"jsonrpc\":\"2.0\",\"id\":4,", 24) == 0);
    CHECK(a == 0 && b == 1);
    CHECK_RC(pw_mcp_handle_response(c, 3, 200, LIT("application/json"), NULL, 0), PW_MCP_UNKNOWN_STREAM);
    CHECK_RC(pw_mcp_handle_response(c, 2, 200, LIT("application/json"), NULL, 0), PW_MCP_UNKNOWN_STREAM);
    CHECK_RC(pw_mcp_handle_response_end(c, 2), PW_MCP_UNKNOWN_STREAM);
    CHECK_RC(pw_mcp_feed_response(c, 0, LIT(RESULT("3")), &used), PW_MCP_NO_HEAD);
    CHECK(used == 99);
    CHECK_RC(pw_mcp_handle_response(c, 0, 200, LIT("application/json"), NULL, 0), PW_OK);
    CHECK_RC(pw_mcp_handle_response(c, 0, 500, LIT("text/plain"), NULL, 0), PW_MCP_HEAD_TWICE);
    CHECK_RC(pw_mcp_feed_response(c, 0, LIT(RESULT("3")), &used), PW_OK);
    CHECK(used == strlen(RESULT("3")));
    CHECK_RC(pw_mcp_handle_response_end(c, 0), PW_OK);
    /* A's frames are owed: B waits. */
    CHECK_RC(pw_mcp_handle_response(c, 1, 200, LIT("application/json"), NULL, 0), PW_MCP_POLL_FIRST);
    CHECK_RC(pw_mcp_handle_response_end(c, 1), PW_MCP_POLL_FIRST);
    drain(c);
    expect_seen(__LINE__, ECHO_FRAMES("0"));
    respond(c, b, 200, "application/json", NULL, RESULT("4"), 9);
    expect_seen(__LINE__, ECHO_FRAMES("1"));
    CHECK(post(c) == -1);
    CHECK(pw_mcp_in_flight(c) == 0);
    {
        uint8_t text[128];
        size_t n = 0;
        CHECK_RC(pw_result_text(PW_MCP_POLL_FIRST, text, sizeof text, &n), PW_OK);
        CHECK(n == strlen("MCP client: poll what the client owes first"));
        CHECK(memcmp(text, "MCP client: poll what the client owes first", n) == 0);
    }
}

int main(void)
{
    test_sizes();
    test_2026_json_and_event_stream();
    test_2025_session();
    test_http_500_and_cancel();
    test_refusals();
    return check_report("mcp_http");
}
