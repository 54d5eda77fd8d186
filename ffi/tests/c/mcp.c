/*
 * C-side test of the MCP client's C API (pw_mcp_*), built and run by ffi/tests/c_api.rs
 * (cc -std=c99 -Wall -Wextra -Werror -pedantic) against the header only.
 *
 * The test plays the MCP server: it reads the lines the client writes and feeds it
 * scripted answers. Calls come from a wrapper whose adapter tools the client serves, as a
 * host would wire them: the wrapper's PW_ROUTE_ADAPTER frames go to pw_mcp_handle_frame
 * (slot and index of the handle), the client's frames back to
 * pw_wrapper_handle_adapter_frame. All memory is static. The exit status is the failure
 * count (capped), 0 when all pass.
 */
#include "polyweave_tool_adapter.h"

#include <stdio.h>
#include <string.h>

#include "check.h"

#define WORDS 16384
static uint64_t wrapper_mem[WORDS];
static uint64_t client_mem[WORDS];
static uint8_t frame_buf[8192];
static char line[8192];
static char log_text[16384];

/* The next line the client writes for the server, NUL-terminated in `line` ("" for none). */
static const char *next_line(pw_mcp *c)
{
    size_t n = 0;
    pw_result r = pw_mcp_poll_transmit(c, (uint8_t *)line, sizeof line - 1, &n);
    CHECK(r == PW_OK || r == PW_NOTHING);
    line[r == PW_OK ? n : 0] = '\0';
    return line;
}

/* Feeds one line, which must be taken whole. */
static void feed(pw_mcp *c, const char *text)
{
    size_t used = 0;
    CHECK_RC(pw_mcp_feed(c, (const uint8_t *)text, strlen(text), &used), PW_OK);
    CHECK(used == strlen(text));
}

static void log_frame(const char *to, const uint8_t *bytes, size_t len)
{
    size_t used = strlen(log_text);
    if (used + strlen(to) + len + 2 >= sizeof log_text) return;
    memcpy(log_text + used, to, strlen(to));
    used += strlen(to);
    memcpy(log_text + used, bytes, len);
    used += len;
    log_text[used++] = '\n';
    log_text[used] = '\0';
}

/*
 * Moves frames between the wrapper and the client until neither has any: model and
 * consumer frames go to the log ("M ..." / "C ..."), adapter frames to the client, the
 * client's frames to the wrapper. Lines for the server stay in the client's outbox.
 */
static void pump(pw_wrapper *w, pw_mcp *c, uint64_t now)
{
    int moved = 1;
    while (moved) {
        pw_transmit t;
        pw_mcp_frame f;
        pw_event ev;
        pw_result r;
        moved = 0;
        while ((r = pw_wrapper_poll_transmit(w, frame_buf, sizeof frame_buf, &t)) == PW_OK) {
            moved = 1;
            if (t.route == PW_ROUTE_MODEL) {
                log_frame("M ", frame_buf, t.len);
            } else if (t.route == PW_ROUTE_CONSUMER) {
                log_frame("C ", frame_buf, t.len);
            } else {
                pw_mcp_handled h;
                CHECK_RC(pw_mcp_handle_frame(c, t.handle.slot, t.handle.index, frame_buf, t.len, &h), PW_OK);
            }
        }
        CHECK(r == PW_NOTHING);
        while (pw_wrapper_poll_event(w, &ev) == PW_OK) CHECK(ev.kind == PW_PENDING_ADAPTER);
        while ((r = pw_mcp_poll_frame(c, frame_buf, sizeof frame_buf, &f)) == PW_OK) {
            pw_call_handle h;
            moved = 1;
            h.index = f.index;
            h.slot = f.slot;
            h.reserved = 0;
            h.owner = (size_t)(uintptr_t)w;
            CHECK_RC(pw_wrapper_handle_adapter_frame(w, now, h, frame_buf, f.len), PW_OK);
        }
        CHECK(r == PW_NOTHING);
    }
}

/* A model frame into the wrapper, then a pump. */
static void model(pw_wrapper *w, pw_mcp *c, uint64_t now, const char *frame)
{
    pw_disposition d;
    CHECK_RC(pw_wrapper_handle_response(w, now, (const uint8_t *)frame, strlen(frame), &d), PW_OK);
    if (d.kind == PW_DISPOSITION_FORWARD) log_frame("C ", (const uint8_t *)frame, strlen(frame));
    pump(w, c, now);
}

/* The log so far equals `want`; then it is cleared. */
static void expect_log(int at, const char *want)
{
    checks++;
    if (strcmp(log_text, want) != 0) {
        failures++;
        fprintf(stderr, "mcp.c:%d: frames\n%s\nwant\n%s\n", at, log_text, want);
    }
    log_text[0] = '\0';
}

static void expect_line(int at, pw_mcp *c, const char *want)
{
    const char *got = next_line(c);
    checks++;
    if (strcmp(got, want) != 0) {
        failures++;
        fprintf(stderr, "mcp.c:%d: line\n%s\nwant\n%s\n", at, got, want);
    }
}

static int span_is(pw_str s, const char *text)
{
    return s.len == strlen(text) && (s.len == 0 || memcmp(s.ptr, text, s.len) == 0);
}

static void test_config_memory_and_codes(void)
{
    pw_mcp_config cfg, bad;
    pw_wrapper_config wc;
    pw_mcp *c = NULL;
    size_t size = 0, n = 0;
    uint32_t code;
    CHECK_RC(pw_mcp_config_default(&cfg), PW_OK);
    CHECK(cfg.line_cap == 8192 && cfg.outbox_cap == 4096 && cfg.name_cap == 64 &&
          cfg.cursor_cap == 256 && cfg.max_depth == PW_DEFAULT_MAX_DEPTH);
    CHECK(cfg.revision == PW_MCP_REVISION_AUTO && cfg.start_timeout_ms == 10000 &&
          PW_MCP_DEFAULT_START_TIMEOUT_MS == 10000);
    CHECK_RC(pw_wrapper_config_default(&wc), PW_OK);
    wc.name_cap = 48;
    wc.max_depth = 20;
    CHECK_RC(pw_mcp_config_fit(&cfg, &wc), PW_OK);
    CHECK(cfg.name_cap == 48 && cfg.max_depth == 20 && cfg.line_cap == 8192);
    CHECK_RC(pw_mcp_config_fit(NULL, &wc), PW_NULL_POINTER);
    /* The revision is the host's: fitting keeps it, and one no enum value names is refused. */
    bad = cfg;
    bad.revision = PW_MCP_REVISION_2026_07_28;
    bad.start_timeout_ms = 7;
    CHECK_RC(pw_mcp_config_fit(&bad, &wc), PW_OK);
    CHECK(bad.revision == PW_MCP_REVISION_2026_07_28 && bad.start_timeout_ms == 7);
    bad.revision = 3;
    CHECK_RC(pw_mcp_size(&bad, 1, &n), PW_BAD_CONFIG);
    CHECK_RC(pw_mcp_max_line_len(&bad, &n), PW_BAD_CONFIG);

    CHECK_RC(pw_mcp_size(&cfg, 4, &size), PW_OK);
    CHECK(size > cfg.line_cap + cfg.outbox_cap + cfg.cursor_cap + 6 * cfg.name_cap +
                     cfg.header_table_cap);
    CHECK(size <= PW_MCP_MAX_BASE_SIZE + 4 * PW_MCP_MAX_SLOT_SIZE + cfg.line_cap +
                      cfg.outbox_cap + cfg.cursor_cap + 6 * cfg.name_cap + cfg.header_table_cap);
    CHECK(pw_mcp_align() >= 1 && pw_mcp_align() <= 8);
    CHECK_RC(pw_mcp_max_frame_len(&cfg, &n), PW_OK);
    CHECK(n > cfg.line_cap);
    CHECK_RC(pw_mcp_max_line_len(&cfg, &n), PW_OK);
    CHECK(n >= cfg.outbox_cap - 12);

    bad = cfg;
    bad.outbox_cap = PW_MCP_MIN_OUTBOX - 1;
    CHECK_RC(pw_mcp_size(&bad, 1, &n), PW_BAD_CONFIG);
    bad = cfg;
    bad.max_depth = 2;
    CHECK_RC(pw_mcp_init(client_mem, sizeof client_mem, &bad, 1, LIT("t"), LIT("1"), &c), PW_BAD_CONFIG);
    CHECK_RC(pw_mcp_init(client_mem, size - 1, &cfg, 4, LIT("t"), LIT("1"), &c), PW_STORAGE_TOO_SMALL);
    CHECK_RC(pw_mcp_init((uint8_t *)client_mem + 1, size, &cfg, 4, LIT("t"), LIT("1"), &c),
             PW_STORAGE_MISALIGNED);
    CHECK_RC(pw_mcp_init(NULL, size, &cfg, 4, LIT("t"), LIT("1"), &c), PW_NULL_POINTER);
    CHECK_RC(pw_mcp_init(client_mem, size, &cfg, 4,
                         LIT("a client name that is longer than sixty-four bytes, which is the cap"),
                         LIT("1"), &c),
             PW_MCP_CLIENT_INFO_TOO_LONG);
    CHECK_RC(pw_mcp_init(client_mem, size, &cfg, 4, LIT("t"), LIT("\xc3"), &c), PW_INVALID_UTF8);
    CHECK(c == NULL);
    CHECK_RC(pw_mcp_init(client_mem, size, &cfg, 4, LIT("t"), LIT("1"), &c), PW_OK);
    CHECK((void *)c == (void *)client_mem);
    CHECK_RC(pw_mcp_start(NULL, 0), PW_NULL_POINTER);
    CHECK_RC(pw_mcp_handle_timeout(NULL, 0), PW_NULL_POINTER);
    CHECK(pw_mcp_in_flight(NULL) == 0 && pw_mcp_queued(NULL) == 0);
    CHECK(pw_mcp_poll_timeout(NULL) == PW_NO_TIMEOUT && pw_mcp_protocol_version(NULL) == NULL);

    /* The client's codes: 500..508 but the retired 502 (a name too long is
     * PW_NAME_TOO_LONG), each with its own text. */
    for (code = PW_MCP_NOT_ADAPTER_FRAME; code <= PW_MCP_CLIENT_INFO_TOO_LONG; code++) {
        uint8_t a[128], b[128];
        size_t la = 0, lb = 0, prev = code == 503 ? 501 : code - 1;
        CHECK_RC(pw_result_text(code, a, sizeof a, &la), PW_OK);
        if (code == 502) {
            CHECK(la == 22 && memcmp(a, "unknown pw_result code", 22) == 0);
            continue;
        }
        CHECK(la > 11 && memcmp(a, "MCP client:", 11) == 0);
        if (code > PW_MCP_NOT_ADAPTER_FRAME) {
            CHECK_RC(pw_result_text((uint32_t)prev, b, sizeof b, &lb), PW_OK);
            CHECK(la != lb || memcmp(a, b, la) != 0);
        }
    }
    CHECK(PW_MCP_CLIENT_INFO_TOO_LONG == 508);
}

/* A client started against a server with `echo` and `add` on two pages, and a wrapper
 * with them as adapter tools (registered from the events, as a host would). */
static pw_tool tools[4];
static char names[4][64];

static void start(pw_wrapper **w_out, pw_mcp **c_out, uint32_t timeout_ms, uint32_t max_total_ms)
{
    pw_wrapper_config wc;
    pw_mcp_config cfg;
    pw_hooks hooks;
    pw_mcp_event ev;
    pw_mcp_client_state st;
    pw_mcp *c = NULL;
    pw_wrapper *w = NULL;
    size_t size = 0, n_tools = 0;

    CHECK_RC(pw_wrapper_config_default(&wc), PW_OK);
    wc.tool_timeout_ms = timeout_ms;
    wc.max_total_timeout_ms = max_total_ms;
    wc.mirror_continue = 0;
    CHECK_RC(pw_mcp_config_default(&cfg), PW_OK);
    cfg.line_cap = 2048;
    /* This script is 2025-11-25's handshake: the host fixes the revision. */
    cfg.revision = PW_MCP_REVISION_2025_11_25;
    CHECK_RC(pw_mcp_config_fit(&cfg, &wc), PW_OK);
    CHECK_RC(pw_mcp_size(&cfg, 2, &size), PW_OK);
    CHECK(size <= sizeof client_mem);
    CHECK_RC(pw_mcp_init(client_mem, sizeof client_mem, &cfg, 2, LIT("c-test"), LIT("0.1"), &c), PW_OK);
    CHECK_RC(pw_mcp_state(c, &st), PW_OK);
    CHECK(st == PW_MCP_STATE_IDLE);
    CHECK_RC(pw_mcp_start(c, 0), PW_OK);
    CHECK_RC(pw_mcp_start(c, 0), PW_MCP_ALREADY_STARTED);
    CHECK(pw_mcp_poll_timeout(c) == PW_NO_TIMEOUT && pw_mcp_protocol_version(c) == NULL);
    expect_line(__LINE__, c,
                "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
                "\"2025-11-25\",\"capabilities\":{},\"clientInfo\":{\"name\":\"c-test\",\"version\":\"0.1\"}}}\n");
    feed(c, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{\"tools\":{}}}}\n");
    CHECK_RC(pw_mcp_poll_event(c, &ev), PW_OK);
    CHECK(ev.kind == PW_MCP_EVENT_INITIALIZED && span_is(ev.version, "2025-11-25"));
    CHECK(span_is(ev.raw, "{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{\"tools\":{}}}"));
    CHECK(pw_mcp_protocol_version(c) != NULL && strcmp(pw_mcp_protocol_version(c), "2025-11-25") == 0);
    CHECK_RC(pw_mcp_poll_event(c, &ev), PW_NOTHING);
    expect_line(__LINE__, c, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n");
    expect_line(__LINE__, c, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}\n");
    expect_line(__LINE__, c, "");
    feed(c, "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"tools\":[{\"name\":\"echo\"}],\"nextCursor\":\"p2\"}}\n");
    for (;;) {
        pw_result r = pw_mcp_poll_event(c, &ev);
        if (r == PW_NOTHING) break;
        CHECK(r == PW_OK && ev.kind == PW_MCP_EVENT_TOOL);
        if (r != PW_OK || n_tools == 4 || ev.name.len >= sizeof names[0]) break;
        memcpy(names[n_tools], ev.name.ptr, ev.name.len);
        tools[n_tools].name.ptr = (const uint8_t *)names[n_tools];
        tools[n_tools].name.len = ev.name.len;
        tools[n_tools].kind = PW_TOOL_KIND_ADAPTER;
        tools[n_tools].timeout_ms = PW_TOOL_DEFAULT_TIMEOUT;
        tools[n_tools].call = NULL;
        tools[n_tools].userdata = NULL;
        n_tools++;
    }
    expect_line(__LINE__, c, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/list\",\"params\":{\"cursor\":\"p2\"}}\n");
    feed(c, "{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"tools\":[{\"name\":\"add\",\"inputSchema\":{\"type\":\"object\"}}]}}\n");
    CHECK_RC(pw_mcp_poll_event(c, &ev), PW_OK);
    CHECK(ev.kind == PW_MCP_EVENT_TOOL && span_is(ev.name, "add") &&
          span_is(ev.raw, "{\"name\":\"add\",\"inputSchema\":{\"type\":\"object\"}}"));
    memcpy(names[n_tools], ev.name.ptr, ev.name.len);
    tools[n_tools] = tools[0];
    tools[n_tools].name.ptr = (const uint8_t *)names[n_tools];
    tools[n_tools].name.len = ev.name.len;
    n_tools++;
    CHECK_RC(pw_mcp_poll_event(c, &ev), PW_OK);
    CHECK(ev.kind == PW_MCP_EVENT_READY && ev.tools == 2);
    CHECK_RC(pw_mcp_state(c, &st), PW_OK);
    CHECK(st == PW_MCP_STATE_READY);
    CHECK(n_tools == 2);

    hooks.userdata = NULL;
    hooks.on_tool_call = NULL;
    hooks.on_tool_result = NULL;
    CHECK_RC(pw_wrapper_size(&wc, 2, n_tools, &size), PW_OK);
    CHECK(size <= sizeof wrapper_mem);
    CHECK_RC(pw_wrapper_init(wrapper_mem, sizeof wrapper_mem, &wc, 2, tools, n_tools, &hooks, &w), PW_OK);
    *w_out = w;
    *c_out = c;
}

static void test_calls_through_a_wrapper(void)
{
    pw_wrapper *w;
    pw_mcp *c;
    pw_mcp_stats s;
    start(&w, &c, 1000, 5000);
    log_text[0] = '\0';

    /* A call, its result, END: the model gets the result and the prompt. */
    model(w, c, 10, "{\"type\":\"TOOL_CALL\",\"content\":{\"id\":\"c1\",\"name\":\"echo\",\"args\":{\"message\":\"hi\"}}}");
    expect_log(__LINE__, "");
    CHECK(pw_mcp_in_flight(c) == 1 && pw_mcp_queued(c) == 1);
    expect_line(__LINE__, c,
                "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\","
                "\"arguments\":{\"message\":\"hi\"},\"_meta\":{\"progressToken\":4}}}\n");
    feed(c, "{\"jsonrpc\":\"2.0\",\"id\":4,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"Echo: hi\"}]}}\n");
    pump(w, c, 20);
    expect_log(__LINE__,
               "M {\"type\":\"TOOL_RESULT\",\"content\":{\"id\":\"c1\",\"name\":\"echo\",\"result\":"
               "[{\"type\":\"text\",\"text\":\"Echo: hi\"}]}}\n"
               "M {\"type\":\"TEXT\",\"content\":\"Tool results above.\"}\n");

    /* Two calls at once: structuredContent, and an isError result. */
    model(w, c, 30, "{\"type\":\"TOOL_CALL\",\"content\":{\"id\":\"a\",\"name\":\"add\",\"args\":{\"a\":1,\"b\":2}}}");
    model(w, c, 30, "{\"type\":\"TOOL_CALL\",\"content\":{\"id\":\"b\",\"name\":\"echo\",\"args\":{}}}");
    model(w, c, 30, "{\"type\":\"END\"}");
    CHECK(strstr(next_line(c), "\"id\":5,\"method\":\"tools/call\"") != NULL);
    CHECK(strstr(next_line(c), "\"id\":6,\"method\":\"tools/call\"") != NULL);
    feed(c, "{\"jsonrpc\":\"2.0\",\"id\":6,\"result\":{\"isError\":true,\"content\":[{\"type\":\"text\",\"text\":\"no\"},{\"type\":\"text\",\"text\":\"message\"}]}}\n");
    pump(w, c, 40);
    feed(c, "{\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{\"content\":[],\"structuredContent\":{\"sum\":3}}}\n");
    pump(w, c, 50);
    expect_log(__LINE__,
               "M {\"type\":\"TOOL_RESULT\",\"content\":{\"id\":\"b\",\"name\":\"echo\",\"error\":\"no\\nmessage\"}}\n"
               "M {\"type\":\"TOOL_RESULT\",\"content\":{\"id\":\"a\",\"name\":\"add\",\"result\":{\"sum\":3}}}\n"
               "M {\"type\":\"TEXT\",\"content\":\"Tool results above. Last tool error: no\\nmessage\"}\n"
               "C {\"type\":\"END\"}\n");

    /* Progress restarts the timeout; without it the call times out and the server is told. */
    model(w, c, 100, "{\"type\":\"TOOL_CALL\",\"content\":{\"name\":\"echo\",\"args\":{\"message\":\"slow\"}}}");
    CHECK(strstr(next_line(c), "\"id\":7,") != NULL);
    CHECK(pw_wrapper_poll_timeout(w) == 1100);
    feed(c, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":7,\"progress\":1,\"total\":2}}\n");
    pump(w, c, 900);
    CHECK(pw_wrapper_poll_timeout(w) == 1900);
    CHECK_RC(pw_wrapper_handle_timeout(w, 1900), PW_OK);
    pump(w, c, 1900);
    expect_line(__LINE__, c,
                "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":7,\"reason\":\"timeout\"}}\n");
    expect_log(__LINE__,
               "M {\"type\":\"TOOL_RESULT\",\"content\":{\"name\":\"echo\",\"error\":\"Tool echo timed out after 1000ms\"}}\n"
               "M {\"type\":\"TEXT\",\"content\":\"Tool results above. Last tool error: Tool echo timed out after 1000ms\"}\n");
    /* The late answer is counted and ignored. */
    feed(c, "{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"content\":[]}}\n");
    pump(w, c, 1950);
    expect_log(__LINE__, "");

    /* The server pings and asks for something else; a notification is an event. */
    feed(c, "{\"jsonrpc\":\"2.0\",\"id\":\"x\",\"method\":\"ping\"}\n");
    expect_line(__LINE__, c, "{\"jsonrpc\":\"2.0\",\"id\":\"x\",\"result\":{}}\n");
    feed(c, "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"sampling/createMessage\",\"params\":{}}\n");
    expect_line(__LINE__, c, "{\"jsonrpc\":\"2.0\",\"id\":8,\"error\":{\"code\":-32601,\"message\":\"Method not found\"}}\n");
    feed(c, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\"x\"}}\n");
    {
        pw_mcp_event ev;
        CHECK_RC(pw_mcp_poll_event(c, &ev), PW_OK);
        CHECK(ev.kind == PW_MCP_EVENT_NOTIFICATION && ev.has_params == 1 && ev.method_cut == 0);
        CHECK(span_is(ev.method, "notifications/message"));
        CHECK(span_is(ev.params, "{\"level\":\"info\",\"data\":\"x\"}"));
    }

    /* A JSON-RPC error, then the server goes away with a call in flight. */
    model(w, c, 2000, "{\"type\":\"TOOL_CALL\",\"content\":{\"id\":\"e\",\"name\":\"add\",\"args\":{}}}");
    CHECK(strstr(next_line(c), "\"id\":8,") != NULL);
    feed(c, "{\"jsonrpc\":\"2.0\",\"id\":8,\"error\":{\"code\":-32602,\"message\":\"Invalid arguments\"}}\n");
    pump(w, c, 2010);
    model(w, c, 2020, "{\"type\":\"TOOL_CALL\",\"content\":{\"id\":\"f\",\"name\":\"add\",\"args\":{}}}");
    CHECK_RC(pw_mcp_handle_closed(c), PW_OK);
    pump(w, c, 2030);
    model(w, c, 2040, "{\"type\":\"TOOL_CALL\",\"content\":{\"id\":\"g\",\"name\":\"echo\",\"args\":7}}");
    expect_log(__LINE__,
               "M {\"type\":\"TOOL_RESULT\",\"content\":{\"id\":\"e\",\"name\":\"add\",\"error\":\"Invalid arguments\"}}\n"
               "M {\"type\":\"TEXT\",\"content\":\"Tool results above. Last tool error: Invalid arguments\"}\n"
               "M {\"type\":\"TOOL_RESULT\",\"content\":{\"id\":\"f\",\"name\":\"add\",\"error\":\"Tool add failed: the MCP server closed the connection\"}}\n"
               "M {\"type\":\"TEXT\",\"content\":\"Tool results above. Last tool error: Tool add failed: the MCP server closed the connection\"}\n"
               "M {\"type\":\"TOOL_RESULT\",\"content\":{\"id\":\"g\",\"name\":\"echo\",\"error\":\"Tool echo failed: the MCP server closed the connection\"}}\n"
               "M {\"type\":\"TEXT\",\"content\":\"Tool results above. Last tool error: Tool echo failed: the MCP server closed the connection\"}\n");
    expect_line(__LINE__, c, "");
    CHECK(pw_mcp_in_flight(c) == 0 && pw_wrapper_pending(w) == 0);
    CHECK_RC(pw_mcp_get_stats(c, &s), PW_OK);
    CHECK(s.calls == 6 && s.answered == 4 && s.failed == 2 && s.late == 1 && s.pings == 1 &&
          s.refused_requests == 1 && s.notifications == 1);
}

static void test_refusals_and_short_buffers(void)
{
    pw_wrapper *w;
    pw_mcp *c;
    pw_mcp_handled h;
    pw_mcp_frame f;
    uint8_t tiny[8];
    size_t n = 0;
    start(&w, &c, 1000, 0);
    h.request = 99;
    CHECK_RC(pw_mcp_handle_frame(c, 0, 0, LIT("{\"type\":\"TEXT\",\"content\":\"x\"}"), &h), PW_MCP_NOT_ADAPTER_FRAME);
    CHECK_RC(pw_mcp_handle_frame(c, 0, 0, LIT("{\"type\":7}"), &h), PW_FRAME_TYPE_NOT_STRING);
    CHECK(pw_result_is_malformed(PW_FRAME_TYPE_NOT_STRING) == 1);
    CHECK_RC(pw_mcp_handle_frame(c, 0, 0, LIT("{\"type\":\"TOOL_CALL\",\"content\":{}}"), &h), PW_MCP_NO_NAME);
    CHECK_RC(pw_mcp_handle_frame(c, 0, 0, LIT("{\"type\":\"CANCEL\",\"content\":{\"name\":\"echo\"}}"), &h),
             PW_MCP_UNKNOWN_CALL);
    CHECK_RC(pw_mcp_handle_frame(c, 0, 0, NULL, 0, &h), PW_NULL_POINTER);
    CHECK(h.request == 99);
    CHECK_RC(pw_mcp_handle_frame(c, 0, 0, LIT("{\"type\":\"TOOL_CALL\",\"content\":{\"name\":\"echo\",\"args\":{}}}"), &h), PW_OK);
    CHECK(h.kind == PW_MCP_HANDLED_SENT && h.request == 4);
    CHECK_RC(pw_mcp_handle_frame(c, 0, 0, LIT("{\"type\":\"TOOL_CALL\",\"content\":{\"name\":\"echo\",\"args\":{}}}"), &h),
             PW_MCP_DUPLICATE_CALL);
    /* The line stays until a buffer holds it. */
    CHECK_RC(pw_mcp_poll_transmit(c, tiny, sizeof tiny, &n), PW_BUFFER_TOO_SMALL);
    CHECK(n == strlen("{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\","
                      "\"arguments\":{},\"_meta\":{\"progressToken\":4}}}\n"));
    CHECK(strlen(next_line(c)) == n);
    /* A CANCEL before the answer; the args-not-object call fails at once, then a frame waits. */
    CHECK_RC(pw_mcp_handle_frame(c, 0, 0, LIT("{\"type\":\"CANCEL\",\"content\":{\"name\":\"echo\",\"reason\":\"user\"}}"), &h),
             PW_OK);
    CHECK(h.kind == PW_MCP_HANDLED_CANCELLED && h.notified == 1);
    CHECK_RC(pw_mcp_handle_frame(c, 1, 1, LIT("{\"type\":\"TOOL_CALL\",\"content\":{\"name\":\"echo\",\"args\":\"x\"}}"), &h),
             PW_OK);
    CHECK(h.kind == PW_MCP_HANDLED_FAILED && h.failure == PW_MCP_FAILURE_ARGS_NOT_OBJECT);
    CHECK_RC(pw_mcp_handle_frame(c, 1, 2, LIT("{\"type\":\"TOOL_CALL\",\"content\":{\"name\":\"echo\",\"args\":{}}}"), &h),
             PW_MCP_FRAME_PENDING);
    CHECK_RC(pw_mcp_poll_frame(c, tiny, sizeof tiny, &f), PW_BUFFER_TOO_SMALL);
    CHECK(f.len == strlen("{\"type\":\"ERROR\",\"content\":{\"message\":\"Tool echo arguments must be an object\"}}"));
    CHECK_RC(pw_mcp_poll_frame(c, frame_buf, sizeof frame_buf, &f), PW_OK);
    CHECK(f.slot == 1 && f.index == 1 && f.reserved == 0);
    CHECK_RC(pw_mcp_poll_frame(c, frame_buf, sizeof frame_buf, &f), PW_NOTHING);
    CHECK(f.len == 0);
    expect_line(__LINE__, c,
                "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":4,\"reason\":\"user\"}}\n");
    /* The start-up of another client fails: an old protocol revision. */
    {
        pw_mcp_config cfg;
        pw_mcp_event ev;
        pw_mcp_client_state st;
        pw_mcp *d = NULL;
        CHECK_RC(pw_mcp_config_default(&cfg), PW_OK);
        cfg.revision = PW_MCP_REVISION_2025_11_25;
        CHECK_RC(pw_mcp_init(client_mem, sizeof client_mem, &cfg, 1, LIT("t"), LIT("1"), &d), PW_OK);
        CHECK_RC(pw_mcp_start(d, 0), PW_OK);
        CHECK(strstr(next_line(d), "\"method\":\"initialize\"") != NULL);
        feed(d, "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32600,\"message\":\"nope\"}}\n");
        CHECK_RC(pw_mcp_poll_event(d, &ev), PW_OK);
        CHECK(ev.kind == PW_MCP_EVENT_START_FAILED && ev.start_error == PW_MCP_START_REFUSED);
        CHECK(span_is(ev.raw, "{\"code\":-32600,\"message\":\"nope\"}"));
        CHECK_RC(pw_mcp_state(d, &st), PW_OK);
        CHECK(st == PW_MCP_STATE_FAILED);
        CHECK_RC(pw_mcp_handle_frame(d, 0, 0, LIT("{\"type\":\"TOOL_CALL\",\"content\":{\"name\":\"echo\",\"args\":{}}}"), &h),
                 PW_OK);
        CHECK(h.kind == PW_MCP_HANDLED_FAILED && h.failure == PW_MCP_FAILURE_NOT_STARTED);
    }
}

/* 2026-07-28's `_meta` members naming the revision and the client "t" 1. */
#define ENVELOPE                                                                               \
    "\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","                              \
    "\"io.modelcontextprotocol/clientCapabilities\":{},"                                       \
    "\"io.modelcontextprotocol/clientInfo\":{\"name\":\"t\",\"version\":\"1\"}"

/* A client "t" 1 with `revision` and a start-up timeout of 500 ms, started at 1000 ms. */
static pw_mcp *started_at_1000(uint32_t revision)
{
    pw_mcp_config cfg;
    pw_mcp *c = NULL;
    CHECK_RC(pw_mcp_config_default(&cfg), PW_OK);
    cfg.revision = revision;
    cfg.start_timeout_ms = 500;
    CHECK_RC(pw_mcp_init(client_mem, sizeof client_mem, &cfg, 2, LIT("t"), LIT("1"), &c), PW_OK);
    CHECK(pw_mcp_poll_timeout(c) == PW_NO_TIMEOUT);
    CHECK_RC(pw_mcp_start(c, 1000), PW_OK);
    return c;
}

/* A server listing 2026-07-28: no handshake, the envelope on every request (SPEC §9.9),
 * `input_required` failing its call (SPEC §9.10), and the tools listed again when they change
 * (SPEC §9.12). */
static void test_revision_2026(void)
{
    pw_mcp *c = started_at_1000(PW_MCP_REVISION_AUTO);
    pw_mcp_event ev;
    pw_mcp_handled h;
    pw_mcp_frame f;
    pw_mcp_stats s;
    const char *discovered =
        "{\"supportedVersions\":[\"2025-11-25\",\"2026-07-28\"],\"capabilities\":{\"tools\":"
        "{\"listChanged\":true}},\"serverInfo\":{\"name\":\"s\",\"version\":\"2\"}}";
    char answer[512];

    CHECK(pw_mcp_poll_timeout(c) == 1500 && pw_mcp_protocol_version(c) == NULL);
    expect_line(__LINE__, c,
                "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"server/discover\",\"params\":{\"_meta\":{" ENVELOPE
                "}}}\n");
    expect_line(__LINE__, c, "");
    snprintf(answer, sizeof answer, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":%s}\n", discovered);
    feed(c, answer);
    CHECK_RC(pw_mcp_poll_event(c, &ev), PW_OK);
    CHECK(ev.kind == PW_MCP_EVENT_INITIALIZED && span_is(ev.version, "2026-07-28"));
    CHECK(span_is(ev.raw, discovered));
    CHECK(pw_mcp_protocol_version(c) != NULL && strcmp(pw_mcp_protocol_version(c), "2026-07-28") == 0);
    CHECK(pw_mcp_poll_timeout(c) == PW_NO_TIMEOUT);
    /* No notifications/initialized: the tools are listed at once, with the envelope. */
    expect_line(__LINE__, c,
                "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\",\"params\":{\"_meta\":{" ENVELOPE "}}}\n");
    feed(c, "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"tools\":[{\"name\":\"echo\"}]}}\n");
    CHECK_RC(pw_mcp_poll_event(c, &ev), PW_OK);
    CHECK(ev.kind == PW_MCP_EVENT_TOOL && span_is(ev.name, "echo"));
    CHECK_RC(pw_mcp_poll_event(c, &ev), PW_OK);
    CHECK(ev.kind == PW_MCP_EVENT_READY && ev.tools == 1);
    /* The server can tell of changes: the client listens for them. */
    expect_line(__LINE__, c,
                "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"subscriptions/listen\",\"params\":{\"notifications\":"
                "{\"toolsListChanged\":true},\"_meta\":{" ENVELOPE "}}}\n");

    /* A call carries the envelope after its progress token. */
    CHECK_RC(pw_mcp_handle_frame(c, 0, 1, LIT("{\"type\":\"TOOL_CALL\",\"content\":{\"name\":\"echo\",\"args\":{\"message\":\"hi\"}}}"), &h),
             PW_OK);
    CHECK(h.kind == PW_MCP_HANDLED_SENT && h.request == 4);
    expect_line(__LINE__, c,
                "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\","
                "\"arguments\":{\"message\":\"hi\"},\"_meta\":{\"progressToken\":4," ENVELOPE "}}}\n");
    /* The server asks for input the client cannot give: the call fails with its text. */
    feed(c, "{\"jsonrpc\":\"2.0\",\"id\":4,\"result\":{\"resultType\":\"input_required\",\"inputRequests\":{}}}\n");
    CHECK_RC(pw_mcp_poll_frame(c, frame_buf, sizeof frame_buf, &f), PW_OK);
    CHECK(f.slot == 0 && f.index == 1 &&
          span_is((pw_str){frame_buf, f.len},
                  "{\"type\":\"ERROR\",\"content\":{\"message\":\"Tool echo needs input this client cannot give\"}}"));
    CHECK_RC(pw_mcp_poll_frame(c, frame_buf, sizeof frame_buf, &f), PW_NOTHING);

    /* The tools change: the host hears the notification, the tools are listed again, then
     * TOOLS_CHANGED with the new count. */
    feed(c, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}\n");
    CHECK_RC(pw_mcp_poll_event(c, &ev), PW_OK);
    CHECK(ev.kind == PW_MCP_EVENT_NOTIFICATION && span_is(ev.method, "notifications/tools/list_changed"));
    expect_line(__LINE__, c,
                "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/list\",\"params\":{\"_meta\":{" ENVELOPE "}}}\n");
    expect_line(__LINE__, c, "");
    feed(c, "{\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{\"tools\":[{\"name\":\"echo\"},{\"name\":\"add\"}]}}\n");
    CHECK_RC(pw_mcp_poll_event(c, &ev), PW_OK);
    CHECK(ev.kind == PW_MCP_EVENT_TOOL && span_is(ev.name, "echo"));
    CHECK_RC(pw_mcp_poll_event(c, &ev), PW_OK);
    CHECK(ev.kind == PW_MCP_EVENT_TOOL && span_is(ev.name, "add") && span_is(ev.raw, "{\"name\":\"add\"}"));
    CHECK_RC(pw_mcp_poll_event(c, &ev), PW_OK);
    CHECK(ev.kind == PW_MCP_EVENT_TOOLS_CHANGED && ev.tools == 2 && ev.start_error == PW_MCP_START_NONE);
    CHECK_RC(pw_mcp_poll_event(c, &ev), PW_NOTHING);
    /* 2026-07-28 has no ping: it is refused like any request of the server's. */
    feed(c, "{\"jsonrpc\":\"2.0\",\"id\":\"p\",\"method\":\"ping\"}\n");
    expect_line(__LINE__, c, "{\"jsonrpc\":\"2.0\",\"id\":\"p\",\"error\":{\"code\":-32601,\"message\":\"Method not found\"}}\n");
    CHECK_RC(pw_mcp_get_stats(c, &s), PW_OK);
    CHECK(s.calls == 1 && s.answered == 0 && s.failed == 1 && s.pings == 0 && s.refused_requests == 1 &&
          s.notifications == 1);
}

/* A server that refuses server/discover, or does not answer it in time, gets initialize on
 * the same connection; a client fixed to 2026-07-28 fails instead (SPEC §9.9). */
static void test_revision_fallbacks(void)
{
    pw_mcp *c;
    pw_mcp_event ev;
    pw_mcp_stats s;
    pw_mcp_client_state st;
    const char *initialize =
        "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
        "\"2025-11-25\",\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}\n";

    /* Refused with an error. */
    c = started_at_1000(PW_MCP_REVISION_AUTO);
    CHECK(strstr(next_line(c), "\"id\":1,\"method\":\"server/discover\"") != NULL);
    feed(c, "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32601,\"message\":\"Method not found\"}}\n");
    CHECK_RC(pw_mcp_poll_event(c, &ev), PW_NOTHING);
    CHECK(pw_mcp_poll_timeout(c) == PW_NO_TIMEOUT);
    expect_line(__LINE__, c, initialize);
    feed(c, "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"protocolVersion\":\"2025-06-18\"}}\n");
    CHECK_RC(pw_mcp_poll_event(c, &ev), PW_OK);
    CHECK(ev.kind == PW_MCP_EVENT_INITIALIZED && span_is(ev.version, "2025-06-18"));
    CHECK(pw_mcp_protocol_version(c) != NULL && strcmp(pw_mcp_protocol_version(c), "2025-06-18") == 0);
    expect_line(__LINE__, c, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n");
    expect_line(__LINE__, c, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/list\"}\n");

    /* Not answered by the deadline: initialize at pw_mcp_handle_timeout, the late answer
     * counted and ignored. */
    c = started_at_1000(PW_MCP_REVISION_AUTO);
    CHECK(strstr(next_line(c), "\"method\":\"server/discover\"") != NULL);
    CHECK(pw_mcp_poll_timeout(c) == 1500);
    CHECK_RC(pw_mcp_handle_timeout(c, 1499), PW_OK);
    expect_line(__LINE__, c, "");
    CHECK(pw_mcp_poll_timeout(c) == 1500);
    CHECK_RC(pw_mcp_handle_timeout(c, 1500), PW_OK);
    CHECK(pw_mcp_poll_timeout(c) == PW_NO_TIMEOUT);
    expect_line(__LINE__, c, initialize);
    feed(c, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"supportedVersions\":[\"2026-07-28\"]}}\n");
    CHECK_RC(pw_mcp_poll_event(c, &ev), PW_NOTHING);
    CHECK(pw_mcp_protocol_version(c) == NULL);
    CHECK_RC(pw_mcp_get_stats(c, &s), PW_OK);
    CHECK(s.late == 1 && s.unknown_id == 0);
    expect_line(__LINE__, c, "");

    /* Fixed to 2026-07-28: no answer fails the start-up. */
    c = started_at_1000(PW_MCP_REVISION_2026_07_28);
    CHECK(strstr(next_line(c), "\"method\":\"server/discover\"") != NULL);
    CHECK_RC(pw_mcp_handle_timeout(c, 2000), PW_OK);
    CHECK_RC(pw_mcp_poll_event(c, &ev), PW_OK);
    CHECK(ev.kind == PW_MCP_EVENT_START_FAILED && ev.start_error == PW_MCP_START_NO_ANSWER && ev.raw.len == 0);
    CHECK_RC(pw_mcp_state(c, &st), PW_OK);
    CHECK(st == PW_MCP_STATE_FAILED);
    expect_line(__LINE__, c, "");

    /* Fixed to 2026-07-28: a server that does not list it fails the start-up too. */
    c = started_at_1000(PW_MCP_REVISION_2026_07_28);
    CHECK(strstr(next_line(c), "\"method\":\"server/discover\"") != NULL);
    feed(c, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"supportedVersions\":[\"2025-11-25\"]}}\n");
    CHECK_RC(pw_mcp_poll_event(c, &ev), PW_OK);
    CHECK(ev.kind == PW_MCP_EVENT_START_FAILED && ev.start_error == PW_MCP_START_UNSUPPORTED_VERSION &&
          span_is(ev.raw, "[\"2025-11-25\"]"));

    /* Fixed to 2025-11-25: initialize first, no deadline. */
    c = started_at_1000(PW_MCP_REVISION_2025_11_25);
    CHECK(pw_mcp_poll_timeout(c) == PW_NO_TIMEOUT);
    CHECK(strstr(next_line(c), "\"id\":1,\"method\":\"initialize\"") != NULL);
    CHECK_RC(pw_mcp_poll_event(c, &ev), PW_NOTHING);
}

/* Output schemas (SPEC §11) in static memory: a structuredContent that does not satisfy its
 * tool's schema fails the call with the text; a refused schema changes nothing. */
static void test_output_schemas(void)
{
    static uint64_t schema_mem[2 * PW_MCP_MAX_OUTPUT_SCHEMA_SIZE / sizeof(uint64_t)];
    pw_mcp_output_schema out[2];
    pw_wrapper *w;
    pw_mcp *c;
    size_t need = 0;
    start(&w, &c, 1000, 5000);
    log_text[0] = '\0';

    out[0].tool.ptr = (const uint8_t *)"add";
    out[0].tool.len = 3;
    out[0].schema.ptr = (const uint8_t *)"{\"required\":[\"sum\"],\"properties\":{\"sum\":{\"type\":\"integer\"}}}";
    out[0].schema.len = strlen((const char *)out[0].schema.ptr);
    out[1] = out[0];
    out[1].tool.ptr = (const uint8_t *)"echo";
    out[1].tool.len = 4;
    out[1].schema.ptr = (const uint8_t *)"{\"$ref\":\"other.json\"}";
    out[1].schema.len = strlen((const char *)out[1].schema.ptr);
    CHECK_RC(pw_mcp_output_schemas_size(2, &need), PW_OK);
    CHECK(need > 0 && need <= sizeof schema_mem);
    CHECK_RC(pw_mcp_set_output_schemas(c, schema_mem, sizeof schema_mem, out, 2), PW_BAD_SCHEMA);
    CHECK_RC(pw_mcp_set_output_schemas(c, client_mem, sizeof schema_mem, out, 1), PW_STORAGE_OVERLAP);
    CHECK_RC(pw_mcp_set_output_schemas(NULL, schema_mem, sizeof schema_mem, out, 1), PW_NULL_POINTER);
    CHECK_RC(pw_mcp_set_output_schemas(c, schema_mem, sizeof schema_mem, out, 1), PW_OK);

    model(w, c, 10, "{\"type\":\"TOOL_CALL\",\"content\":{\"id\":\"a\",\"name\":\"add\",\"args\":{}}}");
    CHECK(strstr(next_line(c), "\"id\":4,\"method\":\"tools/call\"") != NULL);
    feed(c, "{\"jsonrpc\":\"2.0\",\"id\":4,\"result\":{\"content\":[],\"structuredContent\":{\"sum\":\"3\"}}}\n");
    pump(w, c, 20);
    model(w, c, 30, "{\"type\":\"TOOL_CALL\",\"content\":{\"id\":\"b\",\"name\":\"add\",\"args\":{}}}");
    CHECK(strstr(next_line(c), "\"id\":5,\"method\":\"tools/call\"") != NULL);
    feed(c, "{\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{\"content\":[],\"structuredContent\":{\"sum\":3}}}\n");
    pump(w, c, 40);
    expect_log(__LINE__,
               "M {\"type\":\"TOOL_RESULT\",\"content\":{\"id\":\"a\",\"name\":\"add\",\"error\":\"Tool add "
               "returned a result that does not match its output schema: /sum: expected integer\"}}\n"
               "M {\"type\":\"TEXT\",\"content\":\"Tool results above. Last tool error: Tool add returned "
               "a result that does not match its output schema: /sum: expected integer\"}\n"
               "M {\"type\":\"TOOL_RESULT\",\"content\":{\"id\":\"b\",\"name\":\"add\",\"result\":{\"sum\":3}}}\n"
               "M {\"type\":\"TEXT\",\"content\":\"Tool results above.\"}\n");
}

int main(void)
{
    test_config_memory_and_codes();
    test_calls_through_a_wrapper();
    test_refusals_and_short_buffers();
    test_revision_2026();
    test_revision_fallbacks();
    test_output_schemas();
    return check_report("mcp");
}
