/*
 * C-side test of the polyweave-tool-adapter C API, built and run by
 * ffi/tests/c_api.rs (cc -std=c99 -Wall -Wextra -Werror -pedantic).
 * Every check compares exact values; the exit status is the failure count
 * (capped), 0 when all pass.
 */
#include "polyweave_tool_adapter.h"

#include <stdio.h>
#include <string.h>

#include "check.h"

static int span_is(const uint8_t *p, size_t n, const char *want)
{
    return p != NULL && n == strlen(want) && memcmp(p, want, n) == 0;
}

static void test_version_and_text(void)
{
    const char *v = pw_version();
    uint8_t buf[64];
    size_t n = 12345;

    CHECK(v != NULL);
    CHECK(strncmp(v, "polyweave-tool-adapter-ffi/", 27) == 0);
    CHECK(strlen(v) > 27);

    CHECK_RC(pw_result_text(PW_OK, buf, sizeof buf, &n), PW_OK);
    CHECK(span_is(buf, n, "ok"));
    CHECK_RC(pw_result_text(PW_LINE_TOO_LONG, buf, sizeof buf, &n), PW_OK);
    CHECK(span_is(buf, n, "line longer than the line buffer (dropped)"));
    CHECK_RC(pw_result_text(4242, buf, sizeof buf, &n), PW_OK);
    CHECK(span_is(buf, n, "unknown pw_result code"));

    /* Too small: the needed size, and nothing written. */
    memset(buf, 0xAA, sizeof buf);
    n = 0;
    CHECK_RC(pw_result_text(PW_NULL_POINTER, buf, 5, &n), PW_BUFFER_TOO_SMALL);
    CHECK(n == strlen("a pointer argument was NULL"));
    CHECK(buf[0] == 0xAA && buf[4] == 0xAA);

    n = 777;
    CHECK_RC(pw_result_text(PW_OK, NULL, 10, &n), PW_NULL_POINTER);
    CHECK(n == 777);
    CHECK_RC(pw_result_text(PW_OK, buf, sizeof buf, NULL), PW_NULL_POINTER);
}

static void test_null_pointers(void)
{
    static const char frame[] = "{\"type\":\"END\"}";
    const uint8_t *bytes = (const uint8_t *)frame;
    size_t len = sizeof frame - 1;
    size_t off = 99, n = 99;
    pw_frame_kind kind = PW_FRAME_KIND_OTHER;
    const uint8_t *other = (const uint8_t *)"sentinel";
    pw_tool_call call;
    uint8_t out[8];
    pw_line_splitter *f = NULL;

    CHECK_RC(pw_json_validate(NULL, 0, 32, &off), PW_NULL_POINTER);
    CHECK_RC(pw_json_validate(bytes, len, 32, NULL), PW_NULL_POINTER);
    CHECK(off == 99);

    CHECK_RC(pw_frame_peek_kind(NULL, len, &kind, &other, &n), PW_NULL_POINTER);
    CHECK_RC(pw_frame_peek_kind(bytes, len, NULL, &other, &n), PW_NULL_POINTER);
    CHECK_RC(pw_frame_peek_kind(bytes, len, &kind, NULL, &n), PW_NULL_POINTER);
    CHECK_RC(pw_frame_peek_kind(bytes, len, &kind, &other, NULL), PW_NULL_POINTER);
    CHECK(kind == PW_FRAME_KIND_OTHER && n == 99);
    CHECK(span_is(other, 8, "sentinel"));

    CHECK_RC(pw_frame_validate(NULL, len, 32, &kind), PW_NULL_POINTER);
    CHECK_RC(pw_frame_validate(bytes, len, 32, NULL), PW_NULL_POINTER);
    CHECK_RC(pw_tool_call_fields(NULL, len, 32, &call), PW_NULL_POINTER);
    CHECK_RC(pw_tool_call_fields(bytes, len, 32, NULL), PW_NULL_POINTER);

    CHECK_RC(pw_json_string_decode(NULL, 3, out, sizeof out, &n), PW_NULL_POINTER);
    CHECK_RC(pw_json_string_decode(LIT("\"a\""), NULL, sizeof out, &n), PW_NULL_POINTER);
    CHECK_RC(pw_json_string_decode(LIT("\"a\""), out, sizeof out, NULL), PW_NULL_POINTER);
    CHECK(n == 99);

    CHECK_RC(pw_line_splitter_init(NULL, 256, out, sizeof out, &f), PW_NULL_POINTER);
    CHECK_RC(pw_line_splitter_feed(NULL, bytes, len, &n), PW_NULL_POINTER);
    CHECK_RC(pw_line_splitter_next_line(NULL, &other, &n), PW_NULL_POINTER);
    CHECK_RC(pw_line_splitter_finish(NULL, &other, &n), PW_NULL_POINTER);
    CHECK(f == NULL && n == 99);
}

static void test_json_validate(void)
{
    size_t off = 99;

    CHECK_RC(pw_json_validate(LIT(" {\"a\":[1,{\"b\":null}]} "), PW_DEFAULT_MAX_DEPTH, &off), PW_OK);
    CHECK(off == 0);
    CHECK_RC(pw_json_validate(LIT("[1,]"), 32, &off), PW_INVALID_JSON);
    CHECK(off == 3);
    CHECK_RC(pw_json_validate(LIT("{} x"), 32, &off), PW_INVALID_JSON);
    CHECK(off == 3);
    CHECK_RC(pw_json_validate(LIT("[[1]]"), 1, &off), PW_JSON_TOO_DEEP);
    CHECK(off == 1);
    CHECK_RC(pw_json_validate(LIT("\"\xff\""), 32, &off), PW_INVALID_UTF8);
    CHECK(off == 1);
    CHECK_RC(pw_json_validate(LIT(""), 32, &off), PW_INVALID_JSON);
    CHECK(off == 0);
}

static void expect_kind(const char *frame, pw_frame_kind want)
{
    pw_frame_kind kind = (pw_frame_kind)99;
    const uint8_t *other = (const uint8_t *)"x";
    size_t other_len = 99;

    CHECK_RC(pw_frame_peek_kind((const uint8_t *)frame, strlen(frame), &kind, &other, &other_len), PW_OK);
    CHECK(kind == want);
    CHECK(other == NULL && other_len == 0);
    kind = (pw_frame_kind)99;
    CHECK_RC(pw_frame_validate((const uint8_t *)frame, strlen(frame), 32, &kind), PW_OK);
    CHECK(kind == want);
}

static void expect_malformed(const char *frame, uint8_t depth, pw_result lazy, pw_result full)
{
    pw_frame_kind kind = (pw_frame_kind)99;
    const uint8_t *other = NULL;
    size_t other_len = 99;
    size_t len = strlen(frame);

    CHECK_RC(pw_frame_peek_kind((const uint8_t *)frame, len, &kind, &other, &other_len), lazy);
    if (lazy != PW_OK) {
        CHECK(other_len == 99); /* nothing written on error */
    }
    kind = (pw_frame_kind)99;
    CHECK_RC(pw_frame_validate((const uint8_t *)frame, len, depth, &kind), full);
    if (full != PW_OK) {
        CHECK(kind == (pw_frame_kind)99);
    }
}

static void test_frames(void)
{
    static const char other_frame[] = "{\"content\":[1,2],\"type\":\"PING\"}";
    static const char truncated[] = "{\"type\":\"TEXT\",\"content\":";
    pw_frame_kind kind = (pw_frame_kind)99;
    const uint8_t *other = NULL;
    size_t other_len = 0;

    expect_kind("{\"type\":\"TEXT\",\"content\":\"hi\"}", PW_FRAME_KIND_TEXT);
    expect_kind("{\"type\":\"TOOL_CALL\",\"content\":{\"name\":\"calc\"}}", PW_FRAME_KIND_TOOL_CALL);
    expect_kind("{\"type\":\"TOOL_RESULT\",\"content\":{\"name\":\"calc\",\"result\":3}}",
                PW_FRAME_KIND_TOOL_RESULT);
    expect_kind("{\"type\":\"ERROR\",\"content\":{\"message\":\"x\"}}", PW_FRAME_KIND_ERROR);
    expect_kind(" {\"type\":\"END\"}\r\n", PW_FRAME_KIND_END);
    expect_kind("{\"type\":\"\\u0045ND\"}", PW_FRAME_KIND_END);

    /* Another type: its string token, pointing into the input. */
    CHECK_RC(pw_frame_peek_kind(LIT(other_frame), &kind, &other, &other_len), PW_OK);
    CHECK(kind == PW_FRAME_KIND_OTHER);
    CHECK(span_is(other, other_len, "\"PING\""));
    CHECK(other == (const uint8_t *)other_frame + 24);
    CHECK_RC(pw_frame_validate(LIT(other_frame), 32, &kind), PW_OK);
    CHECK(kind == PW_FRAME_KIND_OTHER);

    /* Lazy: reads only up to `type`; the full check sees the cut. */
    CHECK_RC(pw_frame_peek_kind(LIT(truncated), &kind, &other, &other_len), PW_OK);
    CHECK(kind == PW_FRAME_KIND_TEXT);
    kind = (pw_frame_kind)99;
    CHECK_RC(pw_frame_validate(LIT(truncated), 32, &kind), PW_INVALID_JSON);
    CHECK(kind == (pw_frame_kind)99);

    expect_malformed("[1]", 32, PW_FRAME_NOT_OBJECT, PW_FRAME_NOT_OBJECT);
    expect_malformed("", 32, PW_FRAME_NOT_OBJECT, PW_FRAME_NOT_OBJECT);
    expect_malformed("\xef\xbb\xbf{\"type\":\"END\"}", 32, PW_FRAME_NOT_OBJECT, PW_FRAME_NOT_OBJECT);
    expect_malformed("{\"content\":1}", 32, PW_FRAME_MISSING_TYPE, PW_FRAME_MISSING_TYPE);
    expect_malformed("{\"type\":7}", 32, PW_FRAME_TYPE_NOT_STRING, PW_FRAME_TYPE_NOT_STRING);
    expect_malformed("{\"type\":\"END\",}", 32, PW_OK, PW_INVALID_JSON);
    expect_malformed("{\"type\":\"END\",\"content\":[[1]]}", 2, PW_OK, PW_JSON_TOO_DEEP);
    expect_malformed("{\"type\":\"END\",\"content\":[[1]]}", 3, PW_OK, PW_OK);
    expect_malformed("{\"type\":\"TEXT\",\"content\":\"\xff\"}", 32, PW_OK, PW_INVALID_UTF8);
    expect_malformed("{\"a\":\"\xc3\",\"type\":\"END\"}", 32, PW_INVALID_UTF8, PW_INVALID_UTF8);
}

static void test_tool_call_fields(void)
{
    static const char full[] =
        "{\"type\":\"TOOL_CALL\",\"content\":{\"id\":\"c1\",\"name\":\"w\\u00e9\",\"args\":{\"a\":1.50}}}";
    static const char bare[] = "{\"type\":\"TOOL_CALL\",\"content\":{\"name\":\"calc\"}}";
    static const char bad[] = "{\"type\":\"TOOL_CALL\",\"content\":{\"id\":5,\"name\":42}}";
    static const char not_object[] = "{\"type\":\"TOOL_CALL\",\"content\":\"x\"}";
    pw_tool_call call;
    uint8_t text[16];
    size_t n = 0;

    CHECK_RC(pw_tool_call_fields(LIT(full), 32, &call), PW_OK);
    CHECK(call.flags == (PW_TOOL_CALL_HAS_ID | PW_TOOL_CALL_HAS_NAME | PW_TOOL_CALL_HAS_ARGS |
                         PW_TOOL_CALL_CONTENT_IS_OBJECT));
    CHECK(span_is(call.id, call.id_len, "\"c1\""));
    CHECK(call.id == (const uint8_t *)full + 36);
    CHECK(span_is(call.name, call.name_len, "\"w\\u00e9\""));
    CHECK(span_is(call.args, call.args_len, "{\"a\":1.50}"));
    CHECK(call.args > (const uint8_t *)full && call.args < (const uint8_t *)full + sizeof full);
    CHECK_RC(pw_json_string_decode(call.name, call.name_len, text, sizeof text, &n), PW_OK);
    CHECK(span_is(text, n, "w\xc3\xa9"));

    CHECK_RC(pw_tool_call_fields(LIT(bare), 32, &call), PW_OK);
    CHECK(call.flags == (PW_TOOL_CALL_HAS_NAME | PW_TOOL_CALL_CONTENT_IS_OBJECT));
    CHECK(call.id == NULL && call.id_len == 0);
    CHECK(span_is(call.name, call.name_len, "\"calc\""));
    CHECK(span_is(call.args, call.args_len, "{}"));

    CHECK_RC(pw_tool_call_fields(LIT(bad), 32, &call), PW_OK);
    CHECK(call.flags == PW_TOOL_CALL_CONTENT_IS_OBJECT);
    CHECK(call.id == NULL && call.id_len == 0 && call.name == NULL && call.name_len == 0);
    CHECK(span_is(call.args, call.args_len, "{}"));

    CHECK_RC(pw_tool_call_fields(LIT(not_object), 32, &call), PW_OK);
    CHECK(call.flags == 0);

    memset(&call, 0x5A, sizeof call);
    CHECK_RC(pw_tool_call_fields(LIT("{\"type\":\"TEXT\",\"content\":\"x\"}"), 32, &call),
             PW_WRONG_FRAME_KIND);
    CHECK_RC(pw_tool_call_fields(LIT("{\"type\":\"TOOL_CALL\",\"content\":{\"name\":\"x\",}}"), 32,
                                 &call),
             PW_INVALID_JSON);
    CHECK(call.flags == 0x5A5A5A5Au);
}

static void test_string_decode(void)
{
    uint8_t out[16];
    size_t n = 0;
    uint8_t token[8] = {'"', 'a', 'b', 'c', 'd', 'e', '"', 0};

    /* Too small: the needed size, nothing written. */
    memset(out, 0xAA, sizeof out);
    CHECK_RC(pw_json_string_decode(LIT("\"a\\n\\u00e9\\ud83d\\ude00\""), out, 4, &n),
             PW_BUFFER_TOO_SMALL);
    CHECK(n == 8);
    CHECK(out[0] == 0xAA && out[3] == 0xAA && out[4] == 0xAA);
    n = 0;
    CHECK_RC(pw_json_string_decode(LIT("\"a\\n\\u00e9\\ud83d\\ude00\""), out, 0, &n),
             PW_BUFFER_TOO_SMALL);
    CHECK(n == 8 && out[0] == 0xAA);
    CHECK_RC(pw_json_string_decode(LIT("\"a\\n\\u00e9\\ud83d\\ude00\""), out, 8, &n), PW_OK);
    CHECK(span_is(out, n, "a\n\xc3\xa9\xf0\x9f\x98\x80"));
    CHECK_RC(pw_json_string_decode(LIT("\"\""), out, 0, &n), PW_OK);
    CHECK(n == 0);

    n = 99;
    CHECK_RC(pw_json_string_decode(LIT("abc"), out, sizeof out, &n), PW_INVALID_JSON);
    CHECK_RC(pw_json_string_decode(LIT("\"a\" "), out, sizeof out, &n), PW_INVALID_JSON);
    CHECK_RC(pw_json_string_decode(LIT("\"\\x\""), out, sizeof out, &n), PW_INVALID_JSON);
    CHECK_RC(pw_json_string_decode(LIT("\"\xff\""), out, sizeof out, &n), PW_INVALID_UTF8);
    CHECK(n == 99);

    /* Output over its own input. */
    CHECK_RC(pw_json_string_decode(token, 7, token + 1, 5, &n), PW_STORAGE_OVERLAP);
    CHECK(token[1] == 'a' && n == 99);
}

/* Storage for a line splitter, aligned for anything it may hold. */
static union {
    uint64_t u64;
    double d;
    void *p;
    unsigned char bytes[2 * PW_LINE_SPLITTER_SIZE_BOUND];
} splitter_mem;

static void test_splitter_memory(void)
{
    size_t size = pw_line_splitter_size();
    size_t align = pw_line_splitter_align();
    uint8_t line_buf[16];
    pw_line_splitter *f = NULL;

    CHECK(size > 0 && size <= PW_LINE_SPLITTER_SIZE_BOUND);
    CHECK(align > 0 && align <= PW_MAX_ALIGN && (align & (align - 1)) == 0);
    CHECK(align > 1);

    CHECK_RC(pw_line_splitter_init(splitter_mem.bytes, size - 1, line_buf, sizeof line_buf, &f),
             PW_STORAGE_TOO_SMALL);
    CHECK_RC(pw_line_splitter_init(splitter_mem.bytes + 1, size + 8, line_buf, sizeof line_buf, &f),
             PW_STORAGE_MISALIGNED);
    /* Too small and misaligned: the size is checked first. */
    CHECK_RC(pw_line_splitter_init(splitter_mem.bytes + 1, 1, line_buf, sizeof line_buf, &f),
             PW_STORAGE_TOO_SMALL);
    /* The line buffer inside the state. */
    CHECK_RC(pw_line_splitter_init(splitter_mem.bytes, size, splitter_mem.bytes + 8, 16, &f),
             PW_STORAGE_OVERLAP);
    CHECK(f == NULL); /* nothing written on error */

    CHECK_RC(pw_line_splitter_init(splitter_mem.bytes, size, line_buf, sizeof line_buf, &f), PW_OK);
    CHECK((void *)f == (void *)splitter_mem.bytes);
}

/* Feeds `len` bytes one at a time, collecting lines as "text|" and reports as "#len|". */
static void feed_bytewise(pw_line_splitter *f, const char *input, size_t len, char *log, size_t log_cap)
{
    size_t i;
    for (i = 0; i < len; i++) {
        size_t consumed = 99;
        const uint8_t *line = NULL;
        size_t line_len = 0;
        pw_result rc;

        CHECK_RC(pw_line_splitter_feed(f, (const uint8_t *)input + i, 1, &consumed), PW_OK);
        CHECK(consumed == 1);
        while ((rc = pw_line_splitter_next_line(f, &line, &line_len)) != PW_NOTHING) {
            size_t used = strlen(log);
            if (rc == PW_OK) {
                CHECK(line != NULL && line_len > 0);
                if (used + line_len + 2 < log_cap) {
                    memcpy(log + used, line, line_len);
                    log[used + line_len] = '|';
                    log[used + line_len + 1] = '\0';
                }
            } else {
                CHECK_RC(rc, PW_LINE_TOO_LONG);
                CHECK(line == NULL);
                snprintf(log + used, log_cap - used, "#%lu|", (unsigned long)line_len);
            }
        }
        CHECK(line == NULL && line_len == 0);
    }
}

static void test_line_splitter_stream(void)
{
    static const char input[] = "{\"a\":1}\r\n\n  \n0123456789ABCDEF\n{\"b\":2}\ntail";
    uint8_t line_buf[10];
    char log[256] = "";
    pw_line_splitter *f = NULL;
    const uint8_t *line = NULL;
    size_t len = 0, consumed = 0;

    CHECK_RC(pw_line_splitter_init(splitter_mem.bytes, sizeof splitter_mem, line_buf, sizeof line_buf, &f),
             PW_OK);
    feed_bytewise(f, input, sizeof input - 1, log, sizeof log);
    /* CRLF stripped, blank lines skipped, the 16-byte line reported once, the next intact. */
    CHECK(strcmp(log, "{\"a\":1}|#16|{\"b\":2}|") == 0);
    if (strcmp(log, "{\"a\":1}|#16|{\"b\":2}|") != 0) {
        fprintf(stderr, "log was: %s\n", log);
    }
    CHECK_RC(pw_line_splitter_finish(f, &line, &len), PW_OK);
    CHECK(span_is(line, len, "tail"));
    CHECK(line == line_buf);
    CHECK_RC(pw_line_splitter_finish(f, &line, &len), PW_NOTHING);
    CHECK(line == NULL && len == 0);

    /* A chunk: the line splitter stops after the first line end and waits to be drained. */
    CHECK_RC(pw_line_splitter_init(splitter_mem.bytes, sizeof splitter_mem, line_buf, sizeof line_buf, &f),
             PW_OK);
    CHECK_RC(pw_line_splitter_feed(f, LIT("{\"a\":1}\r\n{\"b\":2}\n"), &consumed), PW_OK);
    CHECK(consumed == 9);
    CHECK_RC(pw_line_splitter_feed(f, LIT("{\"b\":2}\n"), &consumed), PW_OK);
    CHECK(consumed == 0);
    CHECK_RC(pw_line_splitter_next_line(f, &line, &len), PW_OK);
    CHECK(span_is(line, len, "{\"a\":1}"));
    CHECK_RC(pw_line_splitter_next_line(f, &line, &len), PW_NOTHING);
    CHECK_RC(pw_line_splitter_feed(f, LIT("{\"b\":2}\n"), &consumed), PW_OK);
    CHECK(consumed == 8);
    CHECK_RC(pw_line_splitter_next_line(f, &line, &len), PW_OK);
    CHECK(span_is(line, len, "{\"b\":2}"));

    /* An over-long last line without a newline is reported by finish. */
    CHECK_RC(pw_line_splitter_feed(f, LIT("0123456789abc"), &consumed), PW_OK);
    CHECK(consumed == 13);
    CHECK_RC(pw_line_splitter_next_line(f, &line, &len), PW_NOTHING);
    CHECK_RC(pw_line_splitter_finish(f, &line, &len), PW_LINE_TOO_LONG);
    CHECK(line == NULL && len == 13);
    CHECK_RC(pw_line_splitter_finish(f, &line, &len), PW_NOTHING);

    /* Feeding the line splitter its own line buffer is refused. */
    CHECK_RC(pw_line_splitter_feed(f, line_buf, 4, &consumed), PW_STORAGE_OVERLAP);
}

/* Every object's size bound: in a constant expression, at least what pw_<object>_size says
 * and over it by the same amount for every configuration with the same slots (so its arena
 * formula is the core's exactly), at most the per-part bounds; the default forms read the
 * named defaults, which are pw_<object>_config_default's. */
static uint64_t decoder_block[PW_DECODER_DEFAULT_SIZE_BOUND(2) / sizeof(uint64_t) + 1];
static uint64_t mcp_block[PW_MCP_DEFAULT_SIZE_BOUND(2) / sizeof(uint64_t) + 1];
static uint64_t call_block[PW_ADAPTER_CALL_SIZE_BOUND(100) / sizeof(uint64_t) + 1];
static uint64_t splitter_block[PW_LINE_SPLITTER_SIZE_BOUND / sizeof(uint64_t) + 1];

/* A bound over an exact size: at least it, over it by at most `most`, and (the arena part
 * exact) by the same amount `*first` for every configuration of one slot count. */
static void check_bound(size_t bound, size_t exact, size_t most, size_t k, size_t *first)
{
    CHECK(bound >= exact);
    CHECK(bound - exact <= most);
    if (k == 0) {
        *first = bound - exact;
    }
    CHECK(bound - exact == *first);
}

/* Runs pw_schema_validate with an error buffer of `cap` bytes; expects `want` and, when
 * `text` is not NULL, exactly that text (else nothing written). */
static void expect_verdict(int line, const char *schema, const char *value, size_t cap,
                           pw_result want, const char *text)
{
    uint8_t buf[80];
    size_t n = 999;
    pw_result rc;
    memset(buf, 0xAA, sizeof buf);
    rc = pw_schema_validate((const uint8_t *)schema, strlen(schema), (const uint8_t *)value,
                            strlen(value), buf, cap, &n);
    checks++;
    if (rc != want || (text == NULL ? n != 999 || buf[0] != 0xAA : !span_is(buf, n, text)) ||
        buf[cap] != 0xAA) {
        failures++;
        fprintf(stderr, "test_api.c:%d: pw_schema_validate gave %u, %.*s\n", line, (unsigned)rc,
                (int)(n == 999 ? 0 : n), (const char *)buf);
    }
}

/* JSON Schema (SPEC §11): a refused schema's kind and offset, each verdict's exact text, the
 * cut on a character boundary, the codes for a refused schema, a value not JSON and a limit. */
static void test_schema(void)
{
    static const char weather[] =
        "{\"type\":\"object\",\"required\":[\"city\"],\"additionalProperties\":false,"
        "\"properties\":{\"city\":{\"type\":\"string\"},\"days\":{\"minimum\":1}}}";
    static const char cafe[] = "{\"city\":\"P\",\"caf\xc3\xa9\":1}";
    char deep[81];
    uint8_t buf[8];
    size_t n = 99;
    pw_schema_error e;

    e.kind = PW_SCHEMA_ERROR_TOO_DEEP;
    e.at = 99;
    CHECK_RC(pw_schema_check(LIT(weather), &e), PW_OK);
    CHECK(e.kind == PW_SCHEMA_ERROR_TOO_DEEP && e.at == 99); /* nothing written on PW_OK */
    CHECK_RC(pw_schema_check(LIT("{\"type\":"), &e), PW_BAD_SCHEMA);
    CHECK(e.kind == PW_SCHEMA_ERROR_NOT_JSON && e.at == 8);
    CHECK_RC(pw_schema_check(LIT("{\"minimum\":\"1\"}"), &e), PW_BAD_SCHEMA);
    CHECK(e.kind == PW_SCHEMA_ERROR_BAD_KEYWORD && e.at == 11);
    CHECK_RC(pw_schema_check(LIT("{\"$ref\":\"https://example.com/s.json\"}"), &e),
             PW_BAD_SCHEMA);
    CHECK(e.kind == PW_SCHEMA_ERROR_REMOTE_REF && e.at == 8);
    CHECK_RC(pw_schema_check(LIT("{\"type\":\"string\",\"type\":\"integer\"}"), &e),
             PW_BAD_SCHEMA);
    CHECK(e.kind == PW_SCHEMA_ERROR_REPEATED_NAME && e.at == 24);
    CHECK_RC(pw_schema_check(LIT("{\"pattern\":\"(a\"}"), &e), PW_BAD_SCHEMA);
    CHECK(e.kind == PW_SCHEMA_ERROR_BAD_PATTERN && e.at == 11);

    expect_verdict(__LINE__, weather, "{\"city\":\"Paris\",\"days\":2}", 64, PW_OK, NULL);
    expect_verdict(__LINE__, weather, "{\"city\":7}", 64, PW_SCHEMA_INVALID,
                   "/city: expected string");
    expect_verdict(__LINE__, weather, "{}", 64, PW_SCHEMA_INVALID,
                   "(args): missing required property \"city\"");
    expect_verdict(__LINE__, weather, "{\"city\":\"P\",\"days\":0}", 64, PW_SCHEMA_INVALID,
                   "/days: must be >= 1");
    expect_verdict(__LINE__, weather, cafe, 64, PW_SCHEMA_INVALID,
                   "/caf\xc3\xa9: property not allowed");
    expect_verdict(__LINE__, weather, cafe, 6, PW_SCHEMA_INVALID, "/caf\xc3\xa9");
    expect_verdict(__LINE__, weather, cafe, 5, PW_SCHEMA_INVALID, "/caf"); /* not half an e */
    expect_verdict(__LINE__, weather, cafe, 0, PW_SCHEMA_INVALID, "");
    expect_verdict(__LINE__, "{\"minimum\":\"1\"}", "1", 64, PW_BAD_SCHEMA, NULL);
    expect_verdict(__LINE__, weather, "{\"city\":", 64, PW_INVALID_JSON, NULL);
    memset(deep, '[', 40);
    memset(deep + 40, ']', 40);
    deep[80] = '\0';
    expect_verdict(__LINE__, "true", deep, 64, PW_SCHEMA_LIMIT,
                   "(args): too deeply nested to check");

    CHECK_RC(pw_result_text(PW_SCHEMA_INVALID, (uint8_t *)deep, sizeof deep, &n), PW_OK);
    CHECK(span_is((const uint8_t *)deep, n, "schema: the value does not satisfy it"));
    n = 99;
    CHECK_RC(pw_schema_check(NULL, 0, &e), PW_NULL_POINTER);
    CHECK_RC(pw_schema_check(LIT("true"), NULL), PW_NULL_POINTER);
    CHECK_RC(pw_schema_validate(NULL, 0, LIT("1"), buf, sizeof buf, &n), PW_NULL_POINTER);
    CHECK_RC(pw_schema_validate(LIT("true"), NULL, 0, buf, sizeof buf, &n), PW_NULL_POINTER);
    CHECK_RC(pw_schema_validate(LIT("true"), LIT("1"), NULL, 0, &n), PW_NULL_POINTER);
    CHECK_RC(pw_schema_validate(LIT("true"), LIT("1"), buf, sizeof buf, NULL), PW_NULL_POINTER);
    buf[0] = '1'; /* the value inside the error buffer */
    CHECK_RC(pw_schema_validate(LIT("true"), buf, 1, buf, sizeof buf, &n), PW_STORAGE_OVERLAP);
    CHECK(n == 99 && e.at == 11);
}

static void test_size_bounds(void)
{
    static const size_t decoder_caps[][4] = {
        /* event, args, name, id */
        {16384, 4096, 64, 64},
        {2048, 512, 32, 48},
        {16, 1, 1, 1},
        {1 << 20, 70000, 300, 5},
    };
    static const size_t mcp_caps[][4] = {
        /* line, outbox, name, cursor */
        {8192, 4096, 64, 256},
        {2048, PW_MCP_MIN_OUTBOX, 32, 128},
        {1 << 20, 100000, 1000, 1},
    };
    size_t calls, k, n = 0;
    pw_decoder_config dc;
    pw_mcp_config mc;
    uint8_t line_buf[8];
    pw_decoder *d = NULL;
    pw_mcp *m = NULL;
    pw_adapter_call *c = NULL;
    pw_adapter_call_options opts;
    pw_line_splitter *f = NULL;

    for (calls = 0; calls < 5; calls++) {
        size_t first = 0;
        for (k = 0; k < sizeof decoder_caps / sizeof decoder_caps[0]; k++) {
            CHECK_RC(pw_decoder_config_default(&dc), PW_OK);
            dc.event_cap = decoder_caps[k][0];
            dc.args_cap = decoder_caps[k][1];
            dc.name_cap = decoder_caps[k][2];
            dc.id_cap = decoder_caps[k][3];
            CHECK_RC(pw_decoder_size(&dc, calls, &n), PW_OK);
            check_bound(PW_DECODER_SIZE_BOUND_(dc.event_cap, dc.args_cap, dc.name_cap, dc.id_cap,
                                               calls),
                        n, PW_DECODER_MAX_BASE_SIZE + calls * PW_DECODER_MAX_SLOT_SIZE, k, &first);
        }
        for (k = 0; k < sizeof mcp_caps / sizeof mcp_caps[0]; k++) {
            CHECK_RC(pw_mcp_config_default(&mc), PW_OK);
            mc.line_cap = mcp_caps[k][0];
            mc.outbox_cap = mcp_caps[k][1];
            mc.name_cap = mcp_caps[k][2];
            mc.cursor_cap = mcp_caps[k][3];
            CHECK_RC(pw_mcp_size(&mc, calls, &n), PW_OK);
            check_bound(PW_MCP_SIZE_BOUND_(mc.line_cap, mc.outbox_cap, mc.name_cap, mc.cursor_cap,
                                           mc.header_table_cap, calls),
                        n, PW_MCP_MAX_BASE_SIZE + calls * PW_MCP_MAX_SLOT_SIZE, k, &first);
        }
    }
    {
        size_t first = 0, cap;
        for (cap = 0; cap < 100000; cap = cap * 3 + 7) {
            CHECK_RC(pw_adapter_call_size(cap, &n), PW_OK);
            check_bound(PW_ADAPTER_CALL_SIZE_BOUND(cap), n, PW_ADAPTER_CALL_MAX_BASE_SIZE, cap,
                        &first);
        }
    }
    CHECK(pw_line_splitter_size() <= PW_LINE_SPLITTER_SIZE_BOUND);
    CHECK(pw_decoder_align() <= PW_MAX_ALIGN && pw_mcp_align() <= PW_MAX_ALIGN);
    CHECK(pw_adapter_call_align() <= PW_MAX_ALIGN && pw_wrapper_align() <= PW_MAX_ALIGN);

    /* The defaults by name, and static blocks of the default bounds that take the objects. */
    CHECK_RC(pw_decoder_config_default(&dc), PW_OK);
    CHECK(dc.event_cap == PW_DECODER_DEFAULT_EVENT_CAP && dc.args_cap == PW_DECODER_DEFAULT_ARGS_CAP);
    CHECK(dc.name_cap == PW_DECODER_DEFAULT_NAME_CAP && dc.id_cap == PW_DECODER_DEFAULT_ID_CAP);
    CHECK(PW_DECODER_DEFAULT_SIZE_BOUND(2) ==
          PW_DECODER_SIZE_BOUND_(dc.event_cap, dc.args_cap, dc.name_cap, dc.id_cap, 2));
    CHECK_RC(pw_decoder_init(decoder_block, sizeof decoder_block, PW_PROVIDER_OPENAI_CHAT, &dc, 2,
                             &d),
             PW_OK);
    CHECK((void *)d == (void *)decoder_block);
    CHECK_RC(pw_mcp_config_default(&mc), PW_OK);
    CHECK(mc.line_cap == PW_MCP_DEFAULT_LINE_CAP && mc.outbox_cap == PW_MCP_DEFAULT_OUTBOX_CAP);
    CHECK(mc.name_cap == PW_MCP_DEFAULT_NAME_CAP && mc.cursor_cap == PW_MCP_DEFAULT_CURSOR_CAP);
    CHECK(PW_MCP_DEFAULT_SIZE_BOUND(2) ==
          PW_MCP_SIZE_BOUND_(mc.line_cap, mc.outbox_cap, mc.name_cap, mc.cursor_cap,
                             mc.header_table_cap, 2));
    CHECK_RC(pw_mcp_init(mcp_block, sizeof mcp_block, &mc, 2, (const uint8_t *)"t", 1,
                         (const uint8_t *)"1", 1, &m),
             PW_OK);
    CHECK((void *)m == (void *)mcp_block);
    CHECK_RC(pw_adapter_call_options_default(&opts), PW_OK);
    CHECK_RC(pw_adapter_call_init(call_block, sizeof call_block, 100, 0, &opts, &c), PW_OK);
    CHECK((void *)c == (void *)call_block);
    CHECK_RC(pw_line_splitter_init(splitter_block, sizeof splitter_block, line_buf,
                                   sizeof line_buf, &f),
             PW_OK);
    CHECK((void *)f == (void *)splitter_block);
}

int main(void)
{
    test_version_and_text();
    test_null_pointers();
    test_json_validate();
    test_frames();
    test_tool_call_fields();
    test_string_decode();
    test_splitter_memory();
    test_line_splitter_stream();
    test_size_bounds();
    test_schema();
    return check_report("test_api");
}
