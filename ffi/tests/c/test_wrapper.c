/*
 * C-side test of the wrapper's C API (pw_wrapper_* and pw_writer_write),
 * built and run by ffi/tests/c_api.rs (cc -std=c99 -Wall -Wextra -Werror
 * -pedantic) next to test_api.c.
 *
 * Every bad argument or input gets its own documented code, changes nothing,
 * and the wrapper stays usable: each case is followed by a call that succeeds.
 * All memory is static: large uint64_t arrays, checked at run time against
 * pw_wrapper_size and pw_wrapper_align. The exit status is the failure count
 * (capped), 0 when all pass.
 */
#include "polyweave_tool_adapter.h"

#include <stdio.h>
#include <string.h>

#include "check.h"

/* Expects exactly these queued frames, each "M <frame>" (to the model), "C <frame>"
 * (to the consumer) or "A <frame>" (to a call's adapter), and drains them. */
#define EXPECT_FRAMES(w, ...)                                                  \
    do {                                                                       \
        static const char *const want_[] = {__VA_ARGS__};                      \
        expect_frames(__LINE__, (w), want_, sizeof want_ / sizeof want_[0]);   \
    } while (0)

/* Memory for two wrappers, aligned for anything a wrapper holds (uint64_t). */
#define MEM_WORDS 8192
static uint64_t mem_a[MEM_WORDS];
static uint64_t mem_b[MEM_WORDS];

/* Hook calls, logged as text. */
static char hook_log[2048];

static void log_append(const char *prefix, pw_str s)
{
    size_t used = strlen(hook_log);
    size_t n = strlen(prefix);
    if (used + n + s.len + 2 >= sizeof hook_log) {
        return;
    }
    memcpy(hook_log + used, prefix, n);
    if (s.len > 0) {
        memcpy(hook_log + used + n, s.ptr, s.len);
    }
    hook_log[used + n + s.len] = '|';
    hook_log[used + n + s.len + 1] = '\0';
}

static void on_call(void *ud, const pw_call_info *c)
{
    (void)ud;
    log_append("call ", c->name);
}

static void on_result(void *ud, const pw_call_info *c, const pw_outcome *o)
{
    (void)ud;
    log_append("result ", c->name);
    log_append(o->is_error ? "error " : "ok ", o->text);
}

/* ----- sync tools ------------------------------------------------------ */

static uint32_t echo(void *ud, pw_str args, pw_writer *out)
{
    (void)ud;
    pw_writer_write(out, args.ptr, args.len);
    return PW_TOOL_STATUS_OK;
}

/* Returns garbage (neither PW_TOOL_STATUS_OK nor PW_TOOL_STATUS_FAILED): a failure with what it wrote. */
static uint32_t garbage(void *ud, pw_str args, pw_writer *out)
{
    (void)ud;
    (void)args;
    pw_writer_write(out, LIT("it "));
    pw_writer_write(out, LIT("broke"));
    return 0xDEADBEEFu;
}

/* Writes more than result_cap (32 bytes, no white space to drop). */
static uint32_t big(void *ud, pw_str args, pw_writer *out)
{
    (void)ud;
    (void)args;
    pw_writer_write(out, LIT("[\"0123456789\",\"0123456789\","));
    pw_writer_write(out, LIT("\"0123456789\"]"));
    return PW_TOOL_STATUS_OK;
}

/* Writes white space past result_cap: it is dropped, the compact result fits. */
static uint32_t spacey(void *ud, pw_str args, pw_writer *out)
{
    (void)ud;
    (void)args;
    pw_writer_write(out, LIT("[ 1,    2,    3,    4,    5,    6,    7 ]"));
    return PW_TOOL_STATUS_OK;
}

/* What pw_writer_write said to a NULL `bytes` from inside a tool. */
static pw_result null_write_rc = PW_OK;

static uint32_t null_bytes(void *ud, pw_str args, pw_writer *out)
{
    (void)args;
    (void)ud;
    null_write_rc = pw_writer_write(out, NULL, 0);
    pw_writer_write(out, LIT("\"x\""));
    return PW_TOOL_STATUS_OK;
}

/* Claims success but writes something that is not JSON. */
static uint32_t not_json(void *ud, pw_str args, pw_writer *out)
{
    (void)ud;
    (void)args;
    pw_writer_write(out, LIT("{oops"));
    return PW_TOOL_STATUS_OK;
}

enum { T_ECHO, T_GARBAGE, T_BIG, T_SPACEY, T_NULLW, T_NOT_JSON, T_LATER, T_QUICK, T_FILES, N_TOOLS };

static pw_tool tools[N_TOOLS];

static pw_tool tool(const char *name, uint32_t kind, pw_sync_fn fn)
{
    pw_tool t;
    t.name.ptr = (const uint8_t *)name;
    t.name.len = strlen(name);
    t.kind = kind;
    t.timeout_ms = PW_TOOL_DEFAULT_TIMEOUT;
    t.call = fn;
    t.userdata = NULL;
    t.schema.ptr = NULL; /* no schema */
    t.schema.len = 0;
    t.schema_index = NULL; /* the schema, if any, read from its text */
    t.schema_index_words = 0;
    return t;
}

static void setup_tools(void)
{
    tools[T_ECHO] = tool("echo", PW_TOOL_KIND_SYNC, echo);
    tools[T_GARBAGE] = tool("garbage", PW_TOOL_KIND_SYNC, garbage);
    tools[T_BIG] = tool("big", PW_TOOL_KIND_SYNC, big);
    tools[T_SPACEY] = tool("spacey", PW_TOOL_KIND_SYNC, spacey);
    tools[T_NULLW] = tool("nullw", PW_TOOL_KIND_SYNC, null_bytes);
    tools[T_NOT_JSON] = tool("notjson", PW_TOOL_KIND_SYNC, not_json);
    tools[T_LATER] = tool("later", PW_TOOL_KIND_DEFERRED, NULL);
    tools[T_QUICK] = tool("quick", PW_TOOL_KIND_DEFERRED, NULL);
    tools[T_QUICK].timeout_ms = 100;
    tools[T_FILES] = tool("files", PW_TOOL_KIND_ADAPTER, NULL);
}

/* The test configuration: small caps so that every limit is easy to reach. */
/* The test configuration's capacities by name, as a host writes them for static storage. */
#define TEST_NAME_CAP 16
#define TEST_ID_CAP 16
#define TEST_ARGS_CAP 64
#define TEST_RESULT_CAP 32
#define TEST_MESSAGE_CAP 96
#define TEST_TRACE_BYTES 2048
#define TEST_HELD_BYTES 40
#define TEST_HOOK_LOG_BYTES 0
static pw_wrapper_config test_config(void)
{
    pw_wrapper_config c;
    memset(&c, 0, sizeof c);
    CHECK_RC(pw_wrapper_config_default(&c), PW_OK);
    c.name_cap = TEST_NAME_CAP;
    c.id_cap = TEST_ID_CAP;
    c.args_cap = TEST_ARGS_CAP;
    c.result_cap = TEST_RESULT_CAP;
    c.message_cap = TEST_MESSAGE_CAP;
    c.held_bytes = TEST_HELD_BYTES;
    return c;
}

static pw_hooks test_hooks(void)
{
    pw_hooks h;
    h.userdata = NULL;
    h.on_tool_call = on_call;
    h.on_tool_result = on_result;
    return h;
}

static size_t need_for(const pw_wrapper_config *cfg, size_t slots, size_t n_tools)
{
    size_t n = 0;
    CHECK_RC(pw_wrapper_size(cfg, slots, n_tools, &n), PW_OK);
    CHECK(n > 0 && n <= sizeof mem_a);
    return n;
}

/* A wrapper over every test tool, 2 slots, in `mem` (checked to be big and aligned enough). */
static pw_wrapper *make(uint64_t *mem)
{
    pw_wrapper_config cfg = test_config();
    pw_hooks hooks = test_hooks();
    size_t need = need_for(&cfg, 2, N_TOOLS);
    pw_wrapper *w = NULL;

    CHECK((uintptr_t)mem % pw_wrapper_align() == 0);
    if (need > MEM_WORDS * sizeof(uint64_t)) {
        fprintf(stderr, "the wrapper needs %lu bytes, the static block has %lu\n",
                (unsigned long)need, (unsigned long)(MEM_WORDS * sizeof(uint64_t)));
        return NULL;
    }
    CHECK_RC(pw_wrapper_init(mem, need, &cfg, 2, tools, N_TOOLS, &hooks, &w), PW_OK);
    CHECK((void *)w == (void *)mem);
    hook_log[0] = '\0';
    return w;
}

/* ----- helpers ---------------------------------------------------------- */

static pw_result respond(pw_wrapper *w, uint64_t now, const char *frame, pw_disposition *d)
{
    return pw_wrapper_handle_response(w, now, (const uint8_t *)frame, strlen(frame), d);
}

static pw_result complete(pw_wrapper *w, uint64_t now, pw_call_handle h, uint8_t is_error,
                          const char *text, uint32_t *completed)
{
    pw_outcome o;
    o.is_error = is_error;
    o.text.ptr = (const uint8_t *)text;
    o.text.len = strlen(text);
    return pw_wrapper_complete(w, now, h, &o, completed);
}

static char route_letter(uint32_t route)
{
    switch (route) {
    case PW_ROUTE_MODEL:
        return 'M';
    case PW_ROUTE_CONSUMER:
        return 'C';
    case PW_ROUTE_ADAPTER:
        return 'A';
    default:
        return '?';
    }
}

static void expect_frames(int line, pw_wrapper *w, const char *const *want, size_t n)
{
    uint8_t buf[512];
    size_t i;
    for (i = 0;; i++) {
        pw_transmit t;
        pw_result rc = pw_wrapper_poll_transmit(w, buf, sizeof buf, &t);
        checks++;
        if (rc == PW_NOTHING) {
            if (i != n) {
                failures++;
                fprintf(stderr, "%s:%d: %lu frames queued, want %lu\n", __FILE__, line,
                        (unsigned long)i, (unsigned long)n);
            }
            return;
        }
        if (rc != PW_OK) {
            failures++;
            fprintf(stderr, "%s:%d: poll_transmit returned %u\n", __FILE__, line, (unsigned)rc);
            return;
        }
        if (i >= n || route_letter(t.route) != want[i][0] || t.len != strlen(want[i] + 2) ||
            memcmp(buf, want[i] + 2, t.len) != 0) {
            failures++;
            fprintf(stderr, "%s:%d: frame %lu is %c %.*s, want %s\n", __FILE__, line,
                    (unsigned long)i, route_letter(t.route), (int)t.len, (const char *)buf,
                    i < n ? want[i] : "none");
        }
    }
}

static void expect_no_frames(int line, pw_wrapper *w)
{
    expect_frames(line, w, NULL, 0);
}

/* Expects one call's error round: its TOOL_RESULT with `error` (plain text, nothing to
 * escape), then the prompt naming it, to the model and mirrored to the consumer. */
static void expect_error_round(int line, pw_wrapper *w, const char *name, const char *error)
{
    static char frames[3][256];
    const char *want[3] = {frames[0], frames[1], frames[2]};
    snprintf(frames[0], sizeof frames[0],
             "M {\"type\":\"TOOL_RESULT\",\"content\":{\"name\":\"%s\",\"error\":\"%s\"}}",
             name, error);
    snprintf(frames[1], sizeof frames[1],
             "M {\"type\":\"TEXT\",\"content\":\"Tool results above. Last tool error: %s\"}",
             error);
    snprintf(frames[2], sizeof frames[2],
             "C {\"type\":\"TEXT\",\"content\":\"Tool results above. Last tool error: %s\"}",
             error);
    expect_frames(line, w, want, 3);
}

/* The wrapper still works: a TEXT frame is forwarded both ways, nothing queued. */
static void check_usable(int line, pw_wrapper *w, uint64_t now)
{
    pw_disposition d;
    pw_result rc;
    d.kind = 99;
    rc = respond(w, now, "{\"type\":\"TEXT\",\"content\":\"still here\"}", &d);
    checks++;
    if (rc != PW_OK || d.kind != PW_DISPOSITION_FORWARD) {
        failures++;
        fprintf(stderr, "%s:%d: wrapper not usable: %u, kind %u\n", __FILE__, line,
                (unsigned)rc, (unsigned)d.kind);
    }
    rc = pw_wrapper_handle_request(w, now, LIT("{\"type\":\"TEXT\",\"content\":\"hi\"}"));
    checks++;
    if (rc != PW_OK) {
        failures++;
        fprintf(stderr, "%s:%d: request refused: %u\n", __FILE__, line, (unsigned)rc);
    }
}

#define USABLE(w, now) check_usable(__LINE__, (w), (now))
#define NO_FRAMES(w) expect_no_frames(__LINE__, (w))

static int span_is(pw_str s, const char *want)
{
    return s.len == strlen(want) && (s.len == 0 || memcmp(s.ptr, want, s.len) == 0);
}

/* Starts a call to `name` (deferred or adapter) and returns its handle. */
static pw_call_handle start(pw_wrapper *w, uint64_t now, const char *frame)
{
    pw_disposition d;
    memset(&d, 0, sizeof d);
    CHECK_RC(respond(w, now, frame, &d), PW_OK);
    CHECK(d.kind == PW_DISPOSITION_INTERCEPTED && d.has_handle == 1);
    return d.handle;
}

/* ----- tests ------------------------------------------------------------ */

static void test_config_and_size(void)
{
    pw_wrapper_config cfg = test_config();
    pw_wrapper_config bad;
    pw_hooks hooks = test_hooks();
    size_t n = 12345;
    size_t need = need_for(&cfg, 2, N_TOOLS);
    pw_wrapper *w = NULL;

    CHECK(pw_wrapper_align() > 0 && (pw_wrapper_align() & (pw_wrapper_align() - 1)) == 0);
    CHECK(pw_wrapper_align() <= sizeof(uint64_t));

    CHECK_RC(pw_wrapper_config_default(NULL), PW_NULL_POINTER);
    CHECK_RC(pw_wrapper_size(NULL, 2, N_TOOLS, &n), PW_NULL_POINTER);
    CHECK_RC(pw_wrapper_size(&cfg, 2, N_TOOLS, NULL), PW_NULL_POINTER);
    CHECK(n == 12345);

    /* More slots or tools need more memory. */
    CHECK(need_for(&cfg, 3, N_TOOLS) > need);
    CHECK(need_for(&cfg, 2, N_TOOLS + 1) > need);

    /* A flag that is neither 0 nor 1. */
    bad = cfg;
    bad.mirror_continue = 2;
    CHECK_RC(pw_wrapper_size(&bad, 2, N_TOOLS, &n), PW_BAD_CONFIG);
    CHECK_RC(pw_wrapper_init(mem_a, need, &bad, 2, tools, N_TOOLS, &hooks, &w), PW_BAD_CONFIG);
    bad = cfg;
    bad.full_validation = 255;
    CHECK_RC(pw_wrapper_size(&bad, 2, N_TOOLS, &n), PW_BAD_CONFIG);
    CHECK_RC(pw_wrapper_init(mem_a, need, &bad, 2, tools, N_TOOLS, &hooks, &w), PW_BAD_CONFIG);
    /* A depth limit below 3, a message cap too small for a name, an arena past usize. */
    bad = cfg;
    bad.max_depth = 2;
    CHECK_RC(pw_wrapper_init(mem_a, need, &bad, 2, tools, N_TOOLS, &hooks, &w), PW_BAD_CONFIG);
    bad = cfg;
    bad.message_cap = bad.name_cap + 10;
    CHECK_RC(pw_wrapper_init(mem_a, need, &bad, 2, tools, N_TOOLS, &hooks, &w), PW_BAD_CONFIG);
    bad = cfg;
    bad.args_cap = SIZE_MAX;
    CHECK_RC(pw_wrapper_size(&bad, 2, N_TOOLS, &n), PW_BAD_CONFIG);
    CHECK(n == 12345);
    CHECK(w == NULL); /* nothing written on error */

    /* The configuration is still good for a wrapper. */
    CHECK_RC(pw_wrapper_init(mem_a, need, &cfg, 2, tools, N_TOOLS, &hooks, &w), PW_OK);
    USABLE(w, 0);
}

/* PW_WRAPPER_SIZE_BOUND, in constant expressions: over pw_wrapper_size by the same amount for
 * every configuration with the same slots and tools (so its arena formula is the core's
 * exactly), and by at most the per-part bounds. pw_wrapper_max_frame_len as the core says. */
#define BOUND_OF(c, s, t)                                                                     \
    PW_WRAPPER_SIZE_BOUND_((c).name_cap, (c).id_cap, (c).args_cap, (c).result_cap,            \
                           (c).message_cap, (c).trace_bytes, (c).held_bytes,                  \
                           (c).hook_log_bytes, (s), (t))
static uint64_t static_block[PW_WRAPPER_SIZE_BOUND(TEST, 2, N_TOOLS) / sizeof(uint64_t) + 1];
static uint8_t static_frame[PW_WRAPPER_MAX_FRAME_LEN(TEST)];
/* The default configuration, by slots and tools only. */
static uint64_t default_block[PW_WRAPPER_DEFAULT_SIZE_BOUND(2, N_TOOLS) / sizeof(uint64_t) + 1];

static void test_size_bound_and_frame_len(void)
{
    static const size_t caps[][7] = {
        /* name, id, args, result, message, trace_bytes, held_bytes */
        {64, 64, 512, 512, 192, 2048, 256}, /* WrapperConfig::DEFAULT */
        {32, 32, 256, 256, 96, 1024, 256},  /* Config::SMALL */
        {16, 16, 64, 32, 96, 2048, 40},
        {1024, 8, 4096, 4096, 65536, 1 << 20, 65540},
        {5, 200, 1, 70000, 300, 0, 0},
    };
    static const size_t logs[] = {0, 0, 4096, 1, 100000};
    size_t s, t, k, n = 0;
    pw_wrapper_config cfg = test_config();
    pw_hooks hooks = test_hooks();
    pw_wrapper *w = NULL;
    for (s = 0; s < 4; s++) {
        for (t = 0; t < 3; t++) {
            size_t first = 0;
            for (k = 0; k < sizeof caps / sizeof caps[0]; k++) {
                pw_wrapper_config c;
                size_t need = 0, over;
                CHECK_RC(pw_wrapper_config_default(&c), PW_OK);
                c.name_cap = caps[k][0];
                c.id_cap = caps[k][1];
                c.args_cap = caps[k][2];
                c.result_cap = caps[k][3];
                c.message_cap = caps[k][4];
                c.trace_bytes = caps[k][5];
                c.held_bytes = caps[k][6];
                c.hook_log_bytes = logs[k];
                CHECK_RC(pw_wrapper_size(&c, s, t, &need), PW_OK);
                CHECK(BOUND_OF(c, s, t) >= need);
                over = BOUND_OF(c, s, t) - need;
                CHECK(over <= PW_WRAPPER_MAX_BASE_SIZE + s * PW_WRAPPER_MAX_SLOT_SIZE +
                                  t * PW_WRAPPER_MAX_TOOL_SIZE);
                if (k == 0) {
                    first = over;
                }
                CHECK(over == first); /* the arena part is exact */
                CHECK_RC(pw_wrapper_max_frame_len(&c, &n), PW_OK);
                CHECK(n == PW_WRAPPER_MAX_FRAME_LEN_(c.name_cap, c.id_cap, c.args_cap,
                                                     c.result_cap, c.message_cap, c.held_bytes));
            }
        }
    }
    /* A static block from the macro takes the test configuration's wrapper. */
    CHECK_RC(pw_wrapper_size(&cfg, 2, N_TOOLS, &n), PW_OK);
    CHECK(n <= sizeof static_block);
    CHECK_RC(pw_wrapper_init(static_block, sizeof static_block, &cfg, 2, tools, N_TOOLS, &hooks,
                             &w),
             PW_OK);
    USABLE(w, 0);

    /* The longest frame: 64 + 6 * (16 + 16) + 6 * 16 + 64 for the test configuration. */
    n = 0;
    CHECK_RC(pw_wrapper_max_frame_len(&cfg, &n), PW_OK);
    CHECK(n == 64 + 6 * 32 + 6 * 16 + 64);
    CHECK(n == sizeof static_frame);

    /* The named defaults are pw_wrapper_config_default's, and its block fits the default
     * bound; the default frame length is pw_wrapper_max_frame_len's. */
    {
        pw_wrapper_config d;
        CHECK_RC(pw_wrapper_config_default(&d), PW_OK);
        CHECK(d.name_cap == PW_WRAPPER_DEFAULT_NAME_CAP && d.id_cap == PW_WRAPPER_DEFAULT_ID_CAP);
        CHECK(d.args_cap == PW_WRAPPER_DEFAULT_ARGS_CAP);
        CHECK(d.result_cap == PW_WRAPPER_DEFAULT_RESULT_CAP);
        CHECK(d.message_cap == PW_WRAPPER_DEFAULT_MESSAGE_CAP);
        CHECK(d.trace_bytes == PW_WRAPPER_DEFAULT_TRACE_BYTES);
        CHECK(d.held_bytes == PW_WRAPPER_DEFAULT_HELD_BYTES);
        CHECK(d.hook_log_bytes == PW_WRAPPER_DEFAULT_HOOK_LOG_BYTES);
        CHECK(PW_WRAPPER_DEFAULT_SIZE_BOUND(2, N_TOOLS) == BOUND_OF(d, 2, N_TOOLS));
        CHECK_RC(pw_wrapper_max_frame_len(&d, &n), PW_OK);
        CHECK(n == PW_WRAPPER_DEFAULT_MAX_FRAME_LEN);
        CHECK_RC(pw_wrapper_init(default_block, sizeof default_block, &d, 2, tools, N_TOOLS,
                                 &hooks, &w),
                 PW_OK);
        USABLE(w, 0);
    }
    CHECK_RC(pw_wrapper_max_frame_len(NULL, &n), PW_NULL_POINTER);
    CHECK_RC(pw_wrapper_max_frame_len(&cfg, NULL), PW_NULL_POINTER);
    cfg.mirror_continue = 7;
    n = 12345;
    CHECK_RC(pw_wrapper_max_frame_len(&cfg, &n), PW_BAD_CONFIG);
    CHECK(n == 12345);
}

/* pw_wrapper_poll_output: hook events in their place among the frames; a log too small
 * keeps an event's name without its args (flagged), or drops it (counted). */
static void expect_output(int line, pw_wrapper *w, pw_output_kind kind, const char *text)
{
    static uint8_t buf[1024];
    pw_output o;
    pw_result r = pw_wrapper_poll_output(w, buf, sizeof buf, &o);
    checks++;
    if (r != PW_OK || o.kind != kind) {
        failures++;
        fprintf(stderr, "%s:%d: poll_output: %u, kind %u, want kind %u\n", __FILE__, line,
                (unsigned)r, (unsigned)o.kind, (unsigned)kind);
        return;
    }
    checks++;
    if (kind == PW_OUTPUT_FRAME ? !(o.frame.len == strlen(text) && memcmp(buf, text, o.frame.len) == 0)
                                : !span_is(o.call.args, text)) {
        failures++;
        fprintf(stderr, "%s:%d: poll_output gave %.*s, want %s\n", __FILE__, line,
                (int)(kind == PW_OUTPUT_FRAME ? o.frame.len : o.call.args.len),
                kind == PW_OUTPUT_FRAME ? (const char *)buf : (const char *)o.call.args.ptr, text);
    }
}

static void test_poll_output(void)
{
    pw_wrapper_config cfg = test_config();
    pw_hooks hooks = test_hooks();
    pw_wrapper *w = NULL;
    pw_disposition d;
    pw_output o;
    pw_wrapper_stats st;
    uint8_t buf[8];
    size_t need = 0;
    const char *call = "{\"type\":\"TOOL_CALL\",\"content\":{\"name\":\"echo\",\"args\":[1]}}";

    cfg.hook_log_bytes = 4096;
    CHECK_RC(pw_wrapper_size(&cfg, 2, N_TOOLS, &need), PW_OK);
    CHECK(need <= sizeof mem_b);
    CHECK_RC(pw_wrapper_init(mem_b, need, &cfg, 2, tools, N_TOOLS, &hooks, &w), PW_OK);
    hook_log[0] = '\0';
    CHECK_RC(respond(w, 1, call, &d), PW_OK);
    /* The hook functions were called at once, as ever. */
    CHECK(strcmp(hook_log, "call echo|result echo|ok [1]|") == 0);
    /* A short buffer refuses the frame (the hook before it comes first), nothing lost. */
    CHECK_RC(pw_wrapper_poll_output(w, buf, sizeof buf, &o), PW_OK);
    CHECK(o.kind == PW_OUTPUT_TOOL_CALL && o.call.index == 0 && span_is(o.call.name, "echo"));
    CHECK_RC(pw_wrapper_poll_output(w, buf, sizeof buf, &o), PW_BUFFER_TOO_SMALL);
    CHECK(o.frame.len == strlen("{\"type\":\"TOOL_RESULT\",\"content\":{\"name\":\"echo\",\"result\":[1]}}"));
    expect_output(__LINE__, w, PW_OUTPUT_FRAME,
                  "{\"type\":\"TOOL_RESULT\",\"content\":{\"name\":\"echo\",\"result\":[1]}}");
    expect_output(__LINE__, w, PW_OUTPUT_TOOL_RESULT, "[1]");
    expect_output(__LINE__, w, PW_OUTPUT_FRAME,
                  "{\"type\":\"TEXT\",\"content\":\"Tool results above.\"}");
    expect_output(__LINE__, w, PW_OUTPUT_FRAME,
                  "{\"type\":\"TEXT\",\"content\":\"Tool results above.\"}");
    CHECK_RC(pw_wrapper_poll_output(w, buf, sizeof buf, &o), PW_NOTHING);
    CHECK_RC(pw_wrapper_get_stats(w, &st), PW_OK);
    CHECK(st.rounds == 1 && st.hook_events_cut == 0 && st.hook_events_dropped == 0);

    /* A 40-byte log: the first event (28 + 4 + 17 bytes whole, 28 + 4 + 4 cut) keeps its
     * name, its args read null; the second does not fit at all and is counted. */
    cfg.hook_log_bytes = 40;
    CHECK_RC(pw_wrapper_size(&cfg, 2, N_TOOLS, &need), PW_OK);
    CHECK_RC(pw_wrapper_init(mem_b, need, &cfg, 2, tools, N_TOOLS, &hooks, &w), PW_OK);
    CHECK_RC(respond(w, 1,
                     "{\"type\":\"TOOL_CALL\",\"content\":{\"name\":\"echo\",\"args\":[1,2,3,4,5,6,7,8]}}",
                     &d),
             PW_OK);
    CHECK_RC(pw_wrapper_poll_output(w, buf, sizeof buf, &o), PW_OK);
    CHECK(o.kind == PW_OUTPUT_TOOL_CALL && o.cut == 1 && span_is(o.call.args, "null"));
    CHECK_RC(pw_wrapper_get_stats(w, &st), PW_OK);
    CHECK(st.hook_events_cut == 1 && st.hook_events_dropped == 1);
    CHECK_RC(pw_wrapper_get_stats(NULL, &st), PW_NULL_POINTER);
    CHECK_RC(pw_wrapper_poll_output(w, NULL, 0, &o), PW_NULL_POINTER);
    USABLE(w, 2);
}

static void test_init_memory_and_tools(void)
{
    pw_wrapper_config cfg = test_config();
    pw_hooks hooks = test_hooks();
    size_t need = need_for(&cfg, 2, N_TOOLS);
    pw_tool bad[N_TOOLS];
    pw_wrapper *w = NULL;
    unsigned char *bytes = (unsigned char *)mem_a;

    /* NULL, each argument in turn. */
    CHECK_RC(pw_wrapper_init(NULL, need, &cfg, 2, tools, N_TOOLS, &hooks, &w), PW_NULL_POINTER);
    CHECK_RC(pw_wrapper_init(mem_a, need, NULL, 2, tools, N_TOOLS, &hooks, &w), PW_NULL_POINTER);
    CHECK_RC(pw_wrapper_init(mem_a, need, &cfg, 2, NULL, N_TOOLS, &hooks, &w), PW_NULL_POINTER);
    CHECK_RC(pw_wrapper_init(mem_a, need, &cfg, 2, tools, N_TOOLS, NULL, &w), PW_NULL_POINTER);
    CHECK_RC(pw_wrapper_init(mem_a, need, &cfg, 2, tools, N_TOOLS, &hooks, NULL), PW_NULL_POINTER);

    /* A zero-length block, one byte short, misaligned; the size is checked first. */
    CHECK_RC(pw_wrapper_init(mem_a, 0, &cfg, 2, tools, N_TOOLS, &hooks, &w), PW_STORAGE_TOO_SMALL);
    CHECK_RC(pw_wrapper_init(mem_a, need - 1, &cfg, 2, tools, N_TOOLS, &hooks, &w),
             PW_STORAGE_TOO_SMALL);
    CHECK_RC(pw_wrapper_init(bytes + 1, need, &cfg, 2, tools, N_TOOLS, &hooks, &w),
             PW_STORAGE_MISALIGNED);
    CHECK_RC(pw_wrapper_init(bytes + 1, need - 1, &cfg, 2, tools, N_TOOLS, &hooks, &w),
             PW_STORAGE_TOO_SMALL);
    /* The hooks handed in from inside the block. */
    memcpy(mem_a + 8, &hooks, sizeof hooks);
    CHECK_RC(pw_wrapper_init(mem_a, need, &cfg, 2, tools, N_TOOLS,
                             (const pw_hooks *)(void *)(mem_a + 8), &w),
             PW_STORAGE_OVERLAP);
    CHECK(w == NULL);

    /* Bad registrations: an unknown kind, a sync tool without a function, a name that is
     * not UTF-8, a NULL name, a name longer than name_cap. */
    memcpy(bad, tools, sizeof bad);
    bad[T_LATER].kind = 3;
    CHECK_RC(pw_wrapper_init(mem_a, need, &cfg, 2, bad, N_TOOLS, &hooks, &w), PW_BAD_TOOL);
    memcpy(bad, tools, sizeof bad);
    bad[T_ECHO].call = NULL;
    CHECK_RC(pw_wrapper_init(mem_a, need, &cfg, 2, bad, N_TOOLS, &hooks, &w), PW_BAD_TOOL);
    memcpy(bad, tools, sizeof bad);
    bad[T_FILES].name.ptr = (const uint8_t *)"fi\xff";
    bad[T_FILES].name.len = 3;
    CHECK_RC(pw_wrapper_init(mem_a, need, &cfg, 2, bad, N_TOOLS, &hooks, &w), PW_BAD_TOOL);
    memcpy(bad, tools, sizeof bad);
    bad[T_ECHO].name.ptr = NULL;
    bad[T_ECHO].name.len = 0;
    CHECK_RC(pw_wrapper_init(mem_a, need, &cfg, 2, bad, N_TOOLS, &hooks, &w), PW_NULL_POINTER);
    memcpy(bad, tools, sizeof bad);
    bad[T_ECHO].name.ptr = (const uint8_t *)"a_tool_name_of_17";
    bad[T_ECHO].name.len = 17;
    CHECK_RC(pw_wrapper_init(mem_a, need, &cfg, 2, bad, N_TOOLS, &hooks, &w),
             PW_NAME_TOO_LONG);
    bad[T_ECHO].name.len = 16; /* exactly name_cap is fine */
    CHECK_RC(pw_wrapper_init(mem_a, need, &cfg, 2, bad, N_TOOLS, &hooks, &w), PW_OK);
    CHECK((void *)w == (void *)mem_a);
    USABLE(w, 0);

    /* No tools at all, no hooks: a wrapper that only forwards. */
    {
        pw_hooks none;
        size_t need0 = need_for(&cfg, 1, 0);
        none.userdata = NULL;
        none.on_tool_call = NULL;
        none.on_tool_result = NULL;
        w = NULL;
        CHECK_RC(pw_wrapper_init(mem_b, need0, &cfg, 1, tools, 0, &none, &w), PW_OK);
        USABLE(w, 0);
        CHECK_RC(respond(w, 1, "{\"type\":\"TOOL_CALL\",\"content\":{\"name\":\"echo\"}}", NULL),
                 PW_NULL_POINTER);
        {
            pw_disposition d;
            CHECK_RC(respond(w, 1, "{\"type\":\"TOOL_CALL\",\"content\":{\"name\":\"echo\"}}", &d),
                     PW_OK);
            CHECK(d.kind == PW_DISPOSITION_INTERCEPTED && d.has_handle == 0);
        }
        EXPECT_FRAMES(w,
                      "M {\"type\":\"TOOL_RESULT\",\"content\":{\"name\":\"echo\",\"error\":"
                      "\"Tool \\\"echo\\\" not found\"}}",
                      "M {\"type\":\"TEXT\",\"content\":\"Tool results above. Last tool error: "
                      "Tool \\\"echo\\\" not found\"}",
                      "C {\"type\":\"TEXT\",\"content\":\"Tool results above. Last tool error: "
                      "Tool \\\"echo\\\" not found\"}");
    }
}

/* Every function, given NULL for each pointer argument in turn. */
static void test_null_arguments(void)
{
    pw_wrapper *w = make(mem_a);
    pw_disposition d;
    pw_transmit t;
    pw_event e;
    pw_trace_entry te;
    pw_outcome o;
    pw_call_handle h;
    uint8_t buf[64];
    uint32_t completed = 77;
    size_t left = 77;
    static const char text[] = "{\"type\":\"TEXT\",\"content\":\"x\"}";

    h = start(w, 0, "{\"type\":\"TOOL_CALL\",\"content\":{\"name\":\"files\"}}");
    o.is_error = 0;
    o.text.ptr = (const uint8_t *)"1";
    o.text.len = 1;

    CHECK_RC(pw_writer_write(NULL, LIT("1")), PW_NULL_POINTER);
    CHECK_RC(pw_wrapper_handle_response(NULL, 1, LIT(text), &d), PW_NULL_POINTER);
    CHECK_RC(pw_wrapper_handle_response(w, 1, NULL, 0, &d), PW_NULL_POINTER);
    CHECK_RC(pw_wrapper_handle_response(w, 1, LIT(text), NULL), PW_NULL_POINTER);
    CHECK_RC(pw_wrapper_handle_request(NULL, 1, LIT(text)), PW_NULL_POINTER);
    CHECK_RC(pw_wrapper_handle_request(w, 1, NULL, 0), PW_NULL_POINTER);
    CHECK_RC(pw_wrapper_complete(NULL, 1, h, &o, &completed), PW_NULL_POINTER);
    CHECK_RC(pw_wrapper_complete(w, 1, h, NULL, &completed), PW_NULL_POINTER);
    CHECK_RC(pw_wrapper_complete(w, 1, h, &o, NULL), PW_NULL_POINTER);
    o.text.ptr = NULL;
    CHECK_RC(pw_wrapper_complete(w, 1, h, &o, &completed), PW_NULL_POINTER);
    CHECK(completed == 77);
    CHECK_RC(pw_wrapper_handle_adapter_frame(NULL, 1, h, LIT(text)), PW_NULL_POINTER);
    CHECK_RC(pw_wrapper_handle_adapter_frame(w, 1, h, NULL, 0), PW_NULL_POINTER);
    CHECK_RC(pw_wrapper_handle_adapter_closed(NULL, 1, h), PW_NULL_POINTER);
    CHECK_RC(pw_wrapper_handle_timeout(NULL, 1), PW_NULL_POINTER);
    CHECK_RC(pw_wrapper_cancel(NULL, 1, LIT("r"), &left), PW_NULL_POINTER);
    CHECK_RC(pw_wrapper_cancel(w, 1, NULL, 0, &left), PW_NULL_POINTER);
    CHECK_RC(pw_wrapper_cancel(w, 1, LIT("r"), NULL), PW_NULL_POINTER);
    CHECK(left == 77);
    CHECK_RC(pw_wrapper_abort(NULL), PW_NULL_POINTER);
    CHECK_RC(pw_wrapper_clear_trace(NULL), PW_NULL_POINTER);
    CHECK_RC(pw_wrapper_poll_transmit(NULL, buf, sizeof buf, &t), PW_NULL_POINTER);
    CHECK_RC(pw_wrapper_poll_transmit(w, NULL, 0, &t), PW_NULL_POINTER);
    CHECK_RC(pw_wrapper_poll_transmit(w, buf, sizeof buf, NULL), PW_NULL_POINTER);
    CHECK_RC(pw_wrapper_poll_event(NULL, &e), PW_NULL_POINTER);
    CHECK_RC(pw_wrapper_poll_event(w, NULL), PW_NULL_POINTER);
    CHECK(pw_wrapper_poll_timeout(NULL) == PW_NO_TIMEOUT);
    CHECK(pw_wrapper_pending(NULL) == 0);
    CHECK_RC(pw_wrapper_trace_entry(NULL, 0, &te), PW_NULL_POINTER);
    CHECK_RC(pw_wrapper_trace_entry(w, 0, NULL), PW_NULL_POINTER);

    /* Nothing changed: the call is pending, its event and TOOL_CALL are still queued. */
    CHECK(pw_wrapper_pending(w) == 1);
    CHECK(pw_wrapper_poll_timeout(w) == 30000);
    CHECK_RC(pw_wrapper_poll_event(w, &e), PW_OK);
    CHECK(e.kind == PW_PENDING_ADAPTER && e.tool == T_FILES && span_is(e.name, "files"));
    CHECK(e.handle.index == h.index && e.handle.slot == h.slot && e.handle.owner == h.owner);
    CHECK_RC(pw_wrapper_poll_event(w, &e), PW_NOTHING);
    EXPECT_FRAMES(w, "A {\"type\":\"TOOL_CALL\",\"content\":{\"name\":\"files\",\"args\":{}}}");
    CHECK_RC(pw_wrapper_handle_adapter_closed(w, 2, h), PW_OK);
    EXPECT_FRAMES(w, "M {\"type\":\"TOOL_RESULT\",\"content\":{\"name\":\"files\",\"result\":null}}",
                  "M {\"type\":\"TEXT\",\"content\":\"Tool results above.\"}",
                  "C {\"type\":\"TEXT\",\"content\":\"Tool results above.\"}");
    USABLE(w, 2);

    /* A NULL `bytes` from inside a sync tool. */
    null_write_rc = PW_OK;
    CHECK_RC(respond(w, 3, "{\"type\":\"TOOL_CALL\",\"content\":{\"name\":\"nullw\"}}", &d), PW_OK);
    CHECK_RC(null_write_rc, PW_NULL_POINTER);
    EXPECT_FRAMES(w, "M {\"type\":\"TOOL_RESULT\",\"content\":{\"name\":\"nullw\",\"result\":\"x\"}}",
                  "M {\"type\":\"TEXT\",\"content\":\"Tool results above.\"}",
                  "C {\"type\":\"TEXT\",\"content\":\"Tool results above.\"}");
}

/* A wrapper pointer that is not aligned is refused before it is read. */
static void test_misaligned_wrapper(void)
{
    pw_wrapper *w = make(mem_a);
    pw_wrapper *odd = (pw_wrapper *)(void *)((unsigned char *)mem_a + 1);
    CHECK_RC(pw_wrapper_abort(odd), PW_STORAGE_MISALIGNED);
    CHECK_RC(pw_wrapper_handle_timeout(odd, 1), PW_STORAGE_MISALIGNED);
    CHECK(pw_wrapper_poll_timeout(odd) == PW_NO_TIMEOUT);
    CHECK(pw_wrapper_pending(odd) == 0);
    USABLE(w, 1);
}

static void test_round_trip(void)
{
    pw_wrapper *w = make(mem_a);
    pw_disposition d;
    pw_call_handle later, files;
    pw_event e;
    pw_trace_entry te;
    uint32_t completed = 99;

    CHECK_RC(respond(w, 0, "{\"type\":\"TOOL_CALL\",\"content\":{\"id\":\"1\",\"name\":\"echo\","
                           "\"args\":[ 1 ]}}", &d),
             PW_OK);
    CHECK(d.kind == PW_DISPOSITION_INTERCEPTED && d.index == 0 && d.has_handle == 0);
    EXPECT_FRAMES(w,
                  "M {\"type\":\"TOOL_RESULT\",\"content\":{\"id\":\"1\",\"name\":\"echo\","
                  "\"result\":[1]}}",
                  "M {\"type\":\"TEXT\",\"content\":\"Tool results above.\"}",
                  "C {\"type\":\"TEXT\",\"content\":\"Tool results above.\"}");

    later = start(w, 1, "{\"type\":\"TOOL_CALL\",\"content\":{\"name\":\"later\",\"args\":{\"q\": 1}}}");
    d.kind = 99;
    CHECK_RC(respond(w, 1, "{\"type\":\"END\"}", &d), PW_OK);
    CHECK(d.kind == PW_DISPOSITION_HELD);
    files = start(w, 2, "{\"type\":\"TOOL_CALL\",\"content\":{\"id\":\"f\",\"name\":\"files\"}}");
    CHECK(later.slot != files.slot && later.owner == files.owner && later.reserved == 0);
    CHECK(pw_wrapper_pending(w) == 2);
    CHECK(pw_wrapper_poll_timeout(w) == 30001);

    CHECK_RC(pw_wrapper_poll_event(w, &e), PW_OK);
    CHECK(e.kind == PW_PENDING_DEFERRED && e.tool == T_LATER && e.has_id == 0);
    CHECK(span_is(e.name, "later") && span_is(e.args, "{\"q\":1}"));
    CHECK_RC(pw_wrapper_poll_event(w, &e), PW_OK);
    CHECK(e.kind == PW_PENDING_ADAPTER && e.has_id == 1 && span_is(e.id, "f"));
    CHECK_RC(pw_wrapper_poll_event(w, &e), PW_NOTHING);
    EXPECT_FRAMES(w, "A {\"type\":\"TOOL_CALL\",\"content\":{\"id\":\"f\",\"name\":\"files\","
                     "\"args\":{}}}");

    CHECK_RC(complete(w, 3, later, 0, "{\"ok\": true}", &completed), PW_OK);
    CHECK(completed == PW_COMPLETED_AS_GIVEN);
    CHECK_RC(pw_wrapper_handle_adapter_frame(
                 w, 4, files, LIT("{\"type\":\"TOOL_RESULT\",\"content\":{\"result\":\"x\"}}")),
             PW_OK);
    CHECK_RC(pw_wrapper_handle_adapter_closed(w, 5, files), PW_OK);
    EXPECT_FRAMES(w,
                  "M {\"type\":\"TOOL_RESULT\",\"content\":{\"name\":\"later\","
                  "\"result\":{\"ok\":true}}}",
                  "M {\"type\":\"TOOL_RESULT\",\"content\":{\"id\":\"f\",\"name\":\"files\","
                  "\"result\":\"x\"}}",
                  "M {\"type\":\"TEXT\",\"content\":\"Tool results above.\"}",
                  "C {\"type\":\"TEXT\",\"content\":\"Tool results above.\"}",
                  "C {\"type\":\"END\"}");
    CHECK(pw_wrapper_pending(w) == 0);
    CHECK(pw_wrapper_poll_timeout(w) == PW_NO_TIMEOUT);

    CHECK_RC(pw_wrapper_trace_entry(w, 1, &te), PW_OK);
    CHECK(te.has_name == 1 && te.truncated == 0 && span_is(te.name, "later"));
    CHECK(span_is(te.args, "{\"q\":1}") && te.outcome.is_error == 0);
    CHECK(span_is(te.outcome.text, "{\"ok\":true}"));
    CHECK_RC(pw_wrapper_trace_entry(w, 3, &te), PW_NOTHING);
    CHECK(strcmp(hook_log, "call echo|result echo|ok [ 1 ]|call later|call files|result later|"
                           "ok {\"ok\": true}|result files|ok \"x\"|") == 0);
    CHECK_RC(pw_wrapper_clear_trace(w), PW_OK);
    CHECK_RC(pw_wrapper_trace_entry(w, 0, &te), PW_NOTHING);

    /* After abort, no continue prompt. */
    CHECK_RC(pw_wrapper_abort(w), PW_OK);
    CHECK_RC(respond(w, 6, "{\"type\":\"TOOL_CALL\",\"content\":{\"name\":\"echo\"}}", &d), PW_OK);
    EXPECT_FRAMES(w, "M {\"type\":\"TOOL_RESULT\",\"content\":{\"name\":\"echo\",\"result\":{}}}");
    USABLE(w, 6);
}

/* Handles of one wrapper are refused by another. */
static void test_foreign_handle(void)
{
    pw_wrapper *a = make(mem_a);
    pw_wrapper *b = make(mem_b);
    pw_call_handle ha, hb;
    uint32_t completed = 99;

    ha = start(a, 0, "{\"type\":\"TOOL_CALL\",\"content\":{\"name\":\"later\"}}");
    hb = start(b, 0, "{\"type\":\"TOOL_CALL\",\"content\":{\"name\":\"files\"}}");
    CHECK(ha.owner == (size_t)(uintptr_t)a && hb.owner == (size_t)(uintptr_t)b);
    /* Same index and slot, another owner. */
    CHECK(ha.index == hb.index && ha.slot == hb.slot);

    CHECK_RC(complete(b, 1, ha, 0, "1", &completed), PW_CALL_FOREIGN);
    CHECK(completed == 99);
    CHECK_RC(pw_wrapper_handle_adapter_frame(b, 1, ha, LIT("{\"type\":\"END\"}")), PW_CALL_FOREIGN);
    CHECK_RC(pw_wrapper_handle_adapter_closed(b, 1, ha), PW_CALL_FOREIGN);
    CHECK_RC(pw_wrapper_handle_adapter_closed(a, 1, hb), PW_CALL_FOREIGN);
    CHECK_RC(complete(a, 1, hb, 0, "1", &completed), PW_CALL_FOREIGN);
    CHECK(pw_wrapper_pending(a) == 1 && pw_wrapper_pending(b) == 1);

    /* Each wrapper's own handle still works. */
    CHECK_RC(complete(a, 1, ha, 0, "1", &completed), PW_OK);
    CHECK(completed == PW_COMPLETED_AS_GIVEN);
    CHECK_RC(pw_wrapper_handle_adapter_closed(b, 1, hb), PW_OK);
    EXPECT_FRAMES(a, "M {\"type\":\"TOOL_RESULT\",\"content\":{\"name\":\"later\",\"result\":1}}",
                  "M {\"type\":\"TEXT\",\"content\":\"Tool results above.\"}",
                  "C {\"type\":\"TEXT\",\"content\":\"Tool results above.\"}");
    EXPECT_FRAMES(b, "A {\"type\":\"TOOL_CALL\",\"content\":{\"name\":\"files\",\"args\":{}}}",
                  "M {\"type\":\"TOOL_RESULT\",\"content\":{\"name\":\"files\",\"result\":null}}",
                  "M {\"type\":\"TEXT\",\"content\":\"Tool results above.\"}",
                  "C {\"type\":\"TEXT\",\"content\":\"Tool results above.\"}");
    USABLE(a, 1);
    USABLE(b, 1);
}

/* Stale, finished, unknown, wrong-kind, timed-out and cancelled handles. */
static void test_handle_states(void)
{
    pw_wrapper *w = make(mem_a);
    pw_call_handle old, fresh, never, files, quick;
    uint32_t completed = 99;
    size_t left = 99;

    old = start(w, 0, "{\"type\":\"TOOL_CALL\",\"content\":{\"name\":\"later\"}}");
    CHECK_RC(complete(w, 1, old, 1, "done", &completed), PW_OK);
    /* Drained: the TOOL_RESULT written, the slot is free for the next call. */
    EXPECT_FRAMES(w, "M {\"type\":\"TOOL_RESULT\",\"content\":{\"name\":\"later\",\"error\":\"done\"}}",
                  "M {\"type\":\"TEXT\",\"content\":\"Tool results above. Last tool error: done\"}",
                  "C {\"type\":\"TEXT\",\"content\":\"Tool results above. Last tool error: done\"}");
    fresh = start(w, 2, "{\"type\":\"TOOL_CALL\",\"content\":{\"name\":\"later\"}}");
    CHECK(old.slot == fresh.slot && old.index != fresh.index);
    completed = 99;
    CHECK_RC(complete(w, 3, old, 0, "1", &completed), PW_CALL_STALE);
    CHECK_RC(pw_wrapper_handle_adapter_closed(w, 3, old), PW_CALL_STALE);
    CHECK(completed == 99 && pw_wrapper_pending(w) == 1);
    /* The new call is untouched by the stale completions. */
    CHECK_RC(complete(w, 3, fresh, 0, "2", &completed), PW_OK);
    CHECK(completed == PW_COMPLETED_AS_GIVEN);
    EXPECT_FRAMES(w, "M {\"type\":\"TOOL_RESULT\",\"content\":{\"name\":\"later\",\"result\":2}}",
                  "M {\"type\":\"TEXT\",\"content\":\"Tool results above.\"}",
                  "C {\"type\":\"TEXT\",\"content\":\"Tool results above.\"}");
    /* Completed and its slot not reused: finished. */
    CHECK_RC(complete(w, 3, fresh, 0, "3", &completed), PW_CALL_COMPLETED);
    /* A handle no call ever had. */
    never = fresh;
    never.index = 1000;
    CHECK_RC(complete(w, 3, never, 0, "3", &completed), PW_CALL_UNKNOWN);
    never.index = 0;
    never.slot = 2; /* past the slots */
    CHECK_RC(complete(w, 3, never, 0, "3", &completed), PW_CALL_UNKNOWN);

    /* Of another kind. */
    fresh = start(w, 4, "{\"type\":\"TOOL_CALL\",\"content\":{\"name\":\"later\"}}");
    files = start(w, 4, "{\"type\":\"TOOL_CALL\",\"content\":{\"name\":\"files\"}}");
    CHECK_RC(pw_wrapper_handle_adapter_closed(w, 4, fresh), PW_CALL_WRONG_KIND);
    CHECK_RC(pw_wrapper_handle_adapter_frame(w, 4, fresh, LIT("{\"type\":\"END\"}")),
             PW_CALL_WRONG_KIND);
    CHECK_RC(complete(w, 4, files, 0, "1", &completed), PW_CALL_WRONG_KIND);
    CHECK(pw_wrapper_pending(w) == 2);

    /* Cancelled: the adapter gets CANCEL first; later completions are refused. */
    CHECK_RC(pw_wrapper_cancel(w, 5, LIT("user stopped"), &left), PW_OK);
    CHECK(left == 0 && pw_wrapper_pending(w) == 0);
    CHECK_RC(complete(w, 5, fresh, 0, "1", &completed), PW_CALL_CANCELLED);
    CHECK_RC(pw_wrapper_handle_adapter_closed(w, 5, files), PW_CALL_CANCELLED);
    EXPECT_FRAMES(w, "A {\"type\":\"TOOL_CALL\",\"content\":{\"name\":\"files\",\"args\":{}}}",
                  "M {\"type\":\"TOOL_RESULT\",\"content\":{\"name\":\"later\",\"error\":"
                  "\"Tool later cancelled: user stopped\"}}",
                  "A {\"type\":\"CANCEL\",\"content\":{\"name\":\"files\",\"reason\":\"user stopped\"}}",
                  "M {\"type\":\"TOOL_RESULT\",\"content\":{\"name\":\"files\",\"error\":"
                  "\"Tool files cancelled: user stopped\"}}",
                  "M {\"type\":\"TEXT\",\"content\":\"Tool results above. Last tool error: "
                  "Tool files cancelled: user stopped\"}",
                  "C {\"type\":\"TEXT\",\"content\":\"Tool results above. Last tool error: "
                  "Tool files cancelled: user stopped\"}");

    /* Timed out (the tool's own 100 ms): a completion at or after the deadline is refused. */
    quick = start(w, 10, "{\"type\":\"TOOL_CALL\",\"content\":{\"id\":\"q\",\"name\":\"quick\"}}");
    CHECK(pw_wrapper_poll_timeout(w) == 110);
    CHECK_RC(pw_wrapper_handle_timeout(w, 109), PW_OK);
    CHECK(pw_wrapper_pending(w) == 1);
    NO_FRAMES(w);
    CHECK_RC(pw_wrapper_handle_timeout(w, 110), PW_OK);
    CHECK(pw_wrapper_pending(w) == 0);
    CHECK_RC(complete(w, 111, quick, 0, "1", &completed), PW_CALL_TIMED_OUT);
    EXPECT_FRAMES(w, "M {\"type\":\"TOOL_RESULT\",\"content\":{\"id\":\"q\",\"name\":\"quick\","
                     "\"error\":\"Tool quick timed out after 100ms\"}}",
                  "M {\"type\":\"TEXT\",\"content\":\"Tool results above. Last tool error: "
                  "Tool quick timed out after 100ms\"}",
                  "C {\"type\":\"TEXT\",\"content\":\"Tool results above. Last tool error: "
                  "Tool quick timed out after 100ms\"}");
    USABLE(w, 111);
}

/* An output buffer too small keeps the frame and reports the length needed. */
static void test_buffer_too_small(void)
{
    static const char frame[] = "{\"type\":\"TOOL_RESULT\",\"content\":{\"name\":\"echo\",\"result\":7}}";
    pw_wrapper *w = make(mem_a);
    pw_disposition d;
    pw_transmit t;
    uint64_t words[16];
    uint8_t buf[128];

    CHECK_RC(respond(w, 0, "{\"type\":\"TOOL_CALL\",\"content\":{\"name\":\"echo\",\"args\":7}}", &d),
             PW_OK);
    memset(buf, 0xAA, sizeof buf);
    t.len = 0;
    CHECK_RC(pw_wrapper_poll_transmit(w, buf, 8, &t), PW_BUFFER_TOO_SMALL);
    CHECK(t.len == sizeof frame - 1);
    CHECK(buf[0] == 0xAA && buf[7] == 0xAA);
    t.len = 0;
    CHECK_RC(pw_wrapper_poll_transmit(w, buf, 0, &t), PW_BUFFER_TOO_SMALL);
    CHECK(t.len == sizeof frame - 1);
    CHECK_RC(pw_wrapper_poll_transmit(w, buf, sizeof frame - 2, &t), PW_BUFFER_TOO_SMALL);
    CHECK(t.len == sizeof frame - 1 && buf[0] == 0xAA);

    /* The buffer inside the wrapper's block, or the output struct inside the buffer. */
    CHECK_RC(pw_wrapper_poll_transmit(w, (uint8_t *)mem_a + 64, 128, &t), PW_STORAGE_OVERLAP);
    CHECK_RC(pw_wrapper_poll_transmit(w, (uint8_t *)words, sizeof words, (pw_transmit *)(void *)words),
             PW_STORAGE_OVERLAP);

    /* Exactly big enough: the same frame, still first. */
    CHECK_RC(pw_wrapper_poll_transmit(w, buf, sizeof frame - 1, &t), PW_OK);
    CHECK(t.route == PW_ROUTE_MODEL && t.len == sizeof frame - 1);
    CHECK(memcmp(buf, frame, t.len) == 0);
    EXPECT_FRAMES(w, "M {\"type\":\"TEXT\",\"content\":\"Tool results above.\"}",
                  "C {\"type\":\"TEXT\",\"content\":\"Tool results above.\"}");
    CHECK_RC(pw_wrapper_poll_transmit(w, buf, sizeof buf, &t), PW_NOTHING);
    USABLE(w, 0);
}

/* Names, ids, held ENDs, messages and results over their capacities. */
static void test_over_capacity(void)
{
    pw_wrapper *w = make(mem_a);
    pw_disposition d;
    pw_call_handle later;
    uint32_t completed = 99;
    size_t left = 99;
    char reason[128];

    /* A name of 17 bytes (name_cap 16), an id of 17 bytes (id_cap 16): the host answers. */
    CHECK_RC(respond(w, 0, "{\"type\":\"TOOL_CALL\",\"content\":{\"name\":\"abcdefghijklmnopq\"}}",
                     &d),
             PW_NAME_TOO_LONG);
    CHECK_RC(respond(w, 0, "{\"type\":\"TOOL_CALL\",\"content\":{\"name\":\"\\u00e9bcdefghijklmnop\"}}",
                     &d),
             PW_NAME_TOO_LONG); /* 16 characters, 17 bytes decoded */
    CHECK_RC(respond(w, 0, "{\"type\":\"TOOL_CALL\",\"content\":{\"id\":\"01234567890123456\","
                           "\"name\":\"echo\"}}", &d),
             PW_ID_TOO_LONG);
    CHECK(pw_wrapper_pending(w) == 0);
    NO_FRAMES(w);
    /* A name of exactly 16 bytes is read (and not found). */
    CHECK_RC(respond(w, 0, "{\"type\":\"TOOL_CALL\",\"content\":{\"name\":\"abcdefghijklmnop\"}}",
                     &d),
             PW_OK);
    EXPECT_FRAMES(w,
                  "M {\"type\":\"TOOL_RESULT\",\"content\":{\"name\":\"abcdefghijklmnop\",\"error\":"
                  "\"Tool \\\"abcdefghijklmnop\\\" not found\"}}",
                  "M {\"type\":\"TEXT\",\"content\":\"Tool results above. Last tool error: "
                  "Tool \\\"abcdefghijklmnop\\\" not found\"}",
                  "C {\"type\":\"TEXT\",\"content\":\"Tool results above. Last tool error: "
                  "Tool \\\"abcdefghijklmnop\\\" not found\"}");

    /* Held ENDs: 40 bytes, each END costs 4 more than its length. */
    later = start(w, 1, "{\"type\":\"TOOL_CALL\",\"content\":{\"name\":\"later\"}}");
    CHECK_RC(respond(w, 1, "{\"type\":\"END\",\"content\":\"a long goodbye, too long\"}", &d),
             PW_HELD_FULL);
    d.kind = 99;
    CHECK_RC(respond(w, 1, "{\"type\":\"END\",\"content\":1}", &d), PW_OK);
    CHECK(d.kind == PW_DISPOSITION_HELD);
    CHECK_RC(respond(w, 1, "{\"type\":\"END\"}", &d), PW_HELD_FULL); /* 18 + 22 > 40 */
    CHECK(pw_wrapper_pending(w) == 1);
    NO_FRAMES(w);

    /* A result over result_cap (32) completes the call with the error the model is told. */
    CHECK_RC(complete(w, 2, later, 0, "\"0123456789012345678901234567890123\"", &completed),
             PW_OK);
    CHECK(completed == PW_COMPLETED_RESULT_TOO_LARGE);
    EXPECT_FRAMES(w,
                  "M {\"type\":\"TOOL_RESULT\",\"content\":{\"name\":\"later\",\"error\":"
                  "\"Tool later result exceeds 32 bytes\"}}",
                  "M {\"type\":\"TEXT\",\"content\":\"Tool results above. Last tool error: "
                  "Tool later result exceeds 32 bytes\"}",
                  "C {\"type\":\"TEXT\",\"content\":\"Tool results above. Last tool error: "
                  "Tool later result exceeds 32 bytes\"}",
                  "C {\"type\":\"END\",\"content\":1}");

    /* Args over args_cap (64) for a pending call: the call fails, nothing is stored. */
    CHECK_RC(respond(w, 3, "{\"type\":\"TOOL_CALL\",\"content\":{\"name\":\"later\",\"args\":"
                           "\"0123456789012345678901234567890123456789012345678901234567890123\"}}",
                     &d),
             PW_OK);
    CHECK(d.has_handle == 0 && pw_wrapper_pending(w) == 0);
    EXPECT_FRAMES(w,
                  "M {\"type\":\"TOOL_RESULT\",\"content\":{\"name\":\"later\",\"error\":"
                  "\"Tool later args exceed 64 bytes\"}}",
                  "M {\"type\":\"TEXT\",\"content\":\"Tool results above. Last tool error: "
                  "Tool later args exceed 64 bytes\"}",
                  "C {\"type\":\"TEXT\",\"content\":\"Tool results above. Last tool error: "
                  "Tool later args exceed 64 bytes\"}");

    /* An error message longer than message_cap (96) is cut to 96 and reported; a cancel
     * reason is cut so that the message fits: 22 bytes of "Tool later cancelled: ", 74 of it. */
    {
        char text[128];
        memset(reason, 'r', sizeof reason);
        reason[97] = '\0';
        later = start(w, 4, "{\"type\":\"TOOL_CALL\",\"content\":{\"name\":\"later\"}}");
        CHECK_RC(complete(w, 4, later, 1, reason, &completed), PW_OK);
        CHECK(completed == PW_COMPLETED_MESSAGE_CUT && pw_wrapper_pending(w) == 0);
        snprintf(text, sizeof text, "%.96s", reason);
        expect_error_round(__LINE__, w, "later", text);

        later = start(w, 5, "{\"type\":\"TOOL_CALL\",\"content\":{\"name\":\"later\"}}");
        (void)later;
        CHECK_RC(pw_wrapper_cancel(w, 5, (const uint8_t *)reason, 97, &left), PW_OK);
        CHECK(left == 0 && pw_wrapper_pending(w) == 0);
        snprintf(text, sizeof text, "Tool later cancelled: %.74s", reason);
        expect_error_round(__LINE__, w, "later", text);
    }
    USABLE(w, 6);
}

/* The output queue fills up without draining; draining makes room again. */
static void test_queue_full(void)
{
    pw_wrapper *w = make(mem_a);
    pw_disposition d;
    pw_transmit t;
    uint8_t buf[256];
    pw_result rc = PW_OK;
    int calls = 0;

    while (calls < 1000) {
        rc = respond(w, 0, "{\"type\":\"TOOL_CALL\",\"content\":{\"name\":\"echo\",\"args\":[1,2,3]}}",
                     &d);
        if (rc != PW_OK) {
            break;
        }
        calls++;
    }
    CHECK_RC(rc, PW_QUEUE_FULL);
    CHECK(calls > 1);
    CHECK(pw_wrapper_pending(w) == 0);
    /* Three frames per call, none lost. */
    while (pw_wrapper_poll_transmit(w, buf, sizeof buf, &t) == PW_OK) {
        calls--;
        CHECK(pw_wrapper_poll_transmit(w, buf, sizeof buf, &t) == PW_OK && t.route == PW_ROUTE_MODEL);
        CHECK(pw_wrapper_poll_transmit(w, buf, sizeof buf, &t) == PW_OK &&
              t.route == PW_ROUTE_CONSUMER);
    }
    CHECK(calls == 0);
    CHECK_RC(respond(w, 0, "{\"type\":\"TOOL_CALL\",\"content\":{\"name\":\"echo\",\"args\":[1,2,3]}}",
                     &d),
             PW_OK);
    EXPECT_FRAMES(w, "M {\"type\":\"TOOL_RESULT\",\"content\":{\"name\":\"echo\",\"result\":[1,2,3]}}",
                  "M {\"type\":\"TEXT\",\"content\":\"Tool results above.\"}",
                  "C {\"type\":\"TEXT\",\"content\":\"Tool results above.\"}");
}

static void test_clock_backwards(void)
{
    pw_wrapper *w = make(mem_a);
    pw_disposition d;
    pw_call_handle later, files;
    uint32_t completed = 99;
    size_t left = 99;

    later = start(w, 10, "{\"type\":\"TOOL_CALL\",\"content\":{\"name\":\"later\"}}");
    files = start(w, 10, "{\"type\":\"TOOL_CALL\",\"content\":{\"name\":\"files\"}}");
    CHECK_RC(respond(w, 9, "{\"type\":\"TEXT\",\"content\":\"x\"}", &d), PW_CLOCK_WENT_BACKWARDS);
    CHECK_RC(pw_wrapper_handle_request(w, 9, LIT("{\"type\":\"TEXT\"}")), PW_CLOCK_WENT_BACKWARDS);
    CHECK_RC(complete(w, 9, later, 0, "1", &completed), PW_CLOCK_WENT_BACKWARDS);
    CHECK_RC(pw_wrapper_handle_adapter_frame(w, 9, files, LIT("{\"type\":\"END\"}")),
             PW_CLOCK_WENT_BACKWARDS);
    CHECK_RC(pw_wrapper_handle_adapter_closed(w, 9, files), PW_CLOCK_WENT_BACKWARDS);
    CHECK_RC(pw_wrapper_handle_timeout(w, 0), PW_CLOCK_WENT_BACKWARDS);
    CHECK_RC(pw_wrapper_cancel(w, 9, LIT("r"), &left), PW_CLOCK_WENT_BACKWARDS);
    CHECK(completed == 99 && left == 99 && pw_wrapper_pending(w) == 2);
    CHECK(pw_wrapper_poll_timeout(w) == 30010);
    /* The same time again is fine. */
    CHECK_RC(complete(w, 10, later, 0, "1", &completed), PW_OK);
    CHECK_RC(pw_wrapper_handle_adapter_closed(w, 10, files), PW_OK);
    EXPECT_FRAMES(w, "A {\"type\":\"TOOL_CALL\",\"content\":{\"name\":\"files\",\"args\":{}}}",
                  "M {\"type\":\"TOOL_RESULT\",\"content\":{\"name\":\"later\",\"result\":1}}",
                  "M {\"type\":\"TOOL_RESULT\",\"content\":{\"name\":\"files\",\"result\":null}}",
                  "M {\"type\":\"TEXT\",\"content\":\"Tool results above.\"}",
                  "C {\"type\":\"TEXT\",\"content\":\"Tool results above.\"}");
    USABLE(w, 10);
}

static void test_malformed_input(void)
{
    pw_wrapper *w = make(mem_a);
    pw_disposition d;
    pw_call_handle later, files;
    uint32_t completed = 99;
    size_t left = 99;

    /* Response path: pass-through frames are read as far as `type`, TOOL_CALL whole. */
    CHECK_RC(respond(w, 0, "[1]", &d), PW_FRAME_NOT_OBJECT);
    CHECK_RC(respond(w, 0, "", &d), PW_FRAME_NOT_OBJECT);
    CHECK_RC(respond(w, 0, "{\"content\":1}", &d), PW_FRAME_MISSING_TYPE);
    CHECK_RC(respond(w, 0, "{\"type\":7}", &d), PW_FRAME_TYPE_NOT_STRING);
    CHECK_RC(respond(w, 0, "{\"type\":\"TOOL_CALL\",\"content\":{\"name\":\"echo\",}}", &d),
             PW_INVALID_JSON);
    CHECK_RC(respond(w, 0, "{\"type\":\"TOOL_CALL\",\"content\":{\"name\":\"e\xff\"}}", &d),
             PW_INVALID_UTF8);
    CHECK_RC(respond(w, 0, "{\"type\":\"TOOL_CALL\",\"type\":\"TEXT\",\"content\":{\"name\":\"echo\"}}",
                     &d),
             PW_FRAME_DUPLICATE_TYPE);
    {
        /* Nested deeper than max_depth (32): the frame object is level 1. */
        char deep[128];
        size_t n = 0, i;
        const char *head = "{\"type\":\"TOOL_CALL\",\"content\":{\"name\":\"echo\",\"args\":";
        memcpy(deep, head, strlen(head));
        n = strlen(head);
        for (i = 0; i < 31; i++) {
            deep[n++] = '[';
        }
        for (i = 0; i < 31; i++) {
            deep[n++] = ']';
        }
        deep[n++] = '}';
        deep[n++] = '}';
        deep[n] = '\0';
        CHECK_RC(respond(w, 0, deep, &d), PW_JSON_TOO_DEEP);
    }
    CHECK(pw_wrapper_pending(w) == 0);
    NO_FRAMES(w);
    USABLE(w, 0);

    /* Request path. */
    CHECK_RC(pw_wrapper_handle_request(w, 0, LIT("nope")), PW_FRAME_NOT_OBJECT);
    CHECK_RC(pw_wrapper_handle_request(w, 0, LIT("{\"type\":null}")), PW_FRAME_TYPE_NOT_STRING);
    /* Input from inside the wrapper's own block. */
    CHECK_RC(pw_wrapper_handle_request(w, 0, (const uint8_t *)mem_a + 16, 4), PW_STORAGE_OVERLAP);
    USABLE(w, 0);

    /* Adapter frames are validated whole; host completions must be JSON or UTF-8 text. */
    later = start(w, 1, "{\"type\":\"TOOL_CALL\",\"content\":{\"name\":\"later\"}}");
    files = start(w, 1, "{\"type\":\"TOOL_CALL\",\"content\":{\"name\":\"files\"}}");
    CHECK_RC(pw_wrapper_handle_adapter_frame(w, 1, files, LIT("nope")), PW_FRAME_NOT_OBJECT);
    CHECK_RC(pw_wrapper_handle_adapter_frame(w, 1, files, LIT("{\"type\":\"END\",\"x\":}")),
             PW_INVALID_JSON);
    CHECK_RC(complete(w, 1, later, 0, "[1,", &completed), PW_INVALID_RESULT);
    CHECK_RC(complete(w, 1, later, 0, "", &completed), PW_INVALID_RESULT);
    CHECK_RC(complete(w, 1, later, 1, "bad \xff", &completed), PW_INVALID_UTF8);
    CHECK_RC(complete(w, 1, later, 2, "x", &completed), PW_BAD_ARGUMENT);
    CHECK_RC(pw_wrapper_cancel(w, 1, LIT("\xc3"), &left), PW_INVALID_UTF8);
    CHECK(completed == 99 && left == 99 && pw_wrapper_pending(w) == 2);
    CHECK_RC(complete(w, 2, later, 0, " [true] ", &completed), PW_OK);
    CHECK_RC(pw_wrapper_handle_adapter_frame(
                 w, 2, files, LIT("{\"type\":\"ERROR\",\"content\":{\"message\":\"no disk\"}}")),
             PW_OK);
    EXPECT_FRAMES(w, "A {\"type\":\"TOOL_CALL\",\"content\":{\"name\":\"files\",\"args\":{}}}",
                  "M {\"type\":\"TOOL_RESULT\",\"content\":{\"name\":\"later\",\"result\":[true]}}",
                  "M {\"type\":\"TOOL_RESULT\",\"content\":{\"name\":\"files\",\"error\":\"no disk\"}}",
                  "M {\"type\":\"TEXT\",\"content\":\"Tool results above. Last tool error: no disk\"}",
                  "C {\"type\":\"TEXT\",\"content\":\"Tool results above. Last tool error: no disk\"}");
    USABLE(w, 2);
}

/* Sync tools: garbage status, results over capacity, white space, invalid JSON. */
static void test_sync_tools(void)
{
    pw_wrapper *w = make(mem_a);
    pw_disposition d;
    pw_trace_entry te;

    CHECK_RC(respond(w, 0, "{\"type\":\"TOOL_CALL\",\"content\":{\"id\":\"g\",\"name\":\"garbage\"}}",
                     &d),
             PW_OK);
    CHECK(d.kind == PW_DISPOSITION_INTERCEPTED && d.has_handle == 0);
    EXPECT_FRAMES(w,
                  "M {\"type\":\"TOOL_RESULT\",\"content\":{\"id\":\"g\",\"name\":\"garbage\","
                  "\"error\":\"it broke\"}}",
                  "M {\"type\":\"TEXT\",\"content\":\"Tool results above. Last tool error: it broke\"}",
                  "C {\"type\":\"TEXT\",\"content\":\"Tool results above. Last tool error: it broke\"}");
    CHECK(strcmp(hook_log, "call garbage|result garbage|error it broke|") == 0);

    CHECK_RC(respond(w, 1, "{\"type\":\"TOOL_CALL\",\"content\":{\"name\":\"big\"}}", &d), PW_OK);
    EXPECT_FRAMES(w,
                  "M {\"type\":\"TOOL_RESULT\",\"content\":{\"name\":\"big\",\"error\":"
                  "\"Tool big result exceeds 32 bytes\"}}",
                  "M {\"type\":\"TEXT\",\"content\":\"Tool results above. Last tool error: "
                  "Tool big result exceeds 32 bytes\"}",
                  "C {\"type\":\"TEXT\",\"content\":\"Tool results above. Last tool error: "
                  "Tool big result exceeds 32 bytes\"}");

    CHECK_RC(respond(w, 2, "{\"type\":\"TOOL_CALL\",\"content\":{\"name\":\"spacey\"}}", &d), PW_OK);
    EXPECT_FRAMES(w,
                  "M {\"type\":\"TOOL_RESULT\",\"content\":{\"name\":\"spacey\","
                  "\"result\":[1,2,3,4,5,6,7]}}",
                  "M {\"type\":\"TEXT\",\"content\":\"Tool results above.\"}",
                  "C {\"type\":\"TEXT\",\"content\":\"Tool results above.\"}");

    CHECK_RC(respond(w, 3, "{\"type\":\"TOOL_CALL\",\"content\":{\"name\":\"notjson\"}}", &d), PW_OK);
    EXPECT_FRAMES(w,
                  "M {\"type\":\"TOOL_RESULT\",\"content\":{\"name\":\"notjson\",\"error\":"
                  "\"Tool notjson returned invalid JSON\"}}",
                  "M {\"type\":\"TEXT\",\"content\":\"Tool results above. Last tool error: "
                  "Tool notjson returned invalid JSON\"}",
                  "C {\"type\":\"TEXT\",\"content\":\"Tool results above. Last tool error: "
                  "Tool notjson returned invalid JSON\"}");

    /* The trace keeps each outcome, oldest first. */
    CHECK_RC(pw_wrapper_trace_entry(w, 0, &te), PW_OK);
    CHECK(span_is(te.name, "garbage") && te.outcome.is_error == 1);
    CHECK(span_is(te.outcome.text, "it broke") && span_is(te.args, "{}"));
    CHECK_RC(pw_wrapper_trace_entry(w, 1, &te), PW_OK);
    CHECK(span_is(te.outcome.text, "Tool big result exceeds 32 bytes"));
    CHECK_RC(pw_wrapper_trace_entry(w, 4, &te), PW_NOTHING);
    USABLE(w, 3);
}

/* A tool's schema (SPEC §11): args that do not satisfy it complete the call at once with the
 * validator's text, unrun (a deferred tool's call is never started); args that do run it. A
 * schema the validator refuses is PW_BAD_SCHEMA before anything is written: the wrapper in
 * the block goes on as it was. */
static void test_schema_tools(void)
{
    static uint64_t before[MEM_WORDS];
    pw_wrapper_config cfg = test_config();
    pw_hooks hooks = test_hooks();
    size_t need = need_for(&cfg, 2, N_TOOLS);
    pw_tool checked[N_TOOLS];
    pw_wrapper *w = NULL, *again = NULL;
    pw_disposition d;
    pw_event ev;

    memcpy(checked, tools, sizeof checked);
    checked[T_ECHO].schema.ptr = (const uint8_t *)"{\"type\":\"object\",\"properties\":"
                                                  "{\"city\":{\"type\":\"string\"}}}";
    checked[T_ECHO].schema.len = strlen((const char *)checked[T_ECHO].schema.ptr);
    checked[T_LATER].schema.ptr = (const uint8_t *)"{\"properties\":{\"days\":{\"minimum\":1}}}";
    checked[T_LATER].schema.len = strlen((const char *)checked[T_LATER].schema.ptr);
    CHECK_RC(pw_wrapper_init(mem_a, need, &cfg, 2, checked, N_TOOLS, &hooks, &w), PW_OK);
    hook_log[0] = '\0';

    CHECK_RC(respond(w, 0, "{\"type\":\"TOOL_CALL\",\"content\":{\"name\":\"echo\","
                           "\"args\":{\"city\":7}}}", &d), PW_OK);
    CHECK(d.kind == PW_DISPOSITION_INTERCEPTED && d.has_handle == 0);
    expect_error_round(__LINE__, w, "echo", "Tool echo arguments are invalid: /city: expected string");
    CHECK_RC(respond(w, 1, "{\"type\":\"TOOL_CALL\",\"content\":{\"name\":\"later\","
                           "\"args\":{\"days\":0}}}", &d), PW_OK);
    CHECK(d.kind == PW_DISPOSITION_INTERCEPTED && d.has_handle == 0);
    CHECK_RC(pw_wrapper_poll_event(w, &ev), PW_NOTHING);
    expect_error_round(__LINE__, w, "later", "Tool later arguments are invalid: /days: must be >= 1");
    CHECK_RC(respond(w, 2, "{\"type\":\"TOOL_CALL\",\"content\":{\"name\":\"echo\","
                           "\"args\":{\"city\":\"Paris\"}}}", &d), PW_OK);
    EXPECT_FRAMES(w,
                  "M {\"type\":\"TOOL_RESULT\",\"content\":{\"name\":\"echo\",\"result\":"
                  "{\"city\":\"Paris\"}}}",
                  "M {\"type\":\"TEXT\",\"content\":\"Tool results above.\"}",
                  "C {\"type\":\"TEXT\",\"content\":\"Tool results above.\"}");
    CHECK(strcmp(hook_log, "call echo|result echo|error Tool echo arguments are invalid: /city: "
                           "expected string|call later|result later|error Tool later arguments "
                           "are invalid: /days: must be >= 1|call echo|result echo|ok "
                           "{\"city\":\"Paris\"}|") == 0);

    /* Refused: a $ref to another document; the block is exactly as it was. */
    memcpy(before, mem_a, sizeof before);
    checked[T_FILES].schema.ptr = (const uint8_t *)"{\"$ref\":\"other.json\"}";
    checked[T_FILES].schema.len = strlen((const char *)checked[T_FILES].schema.ptr);
    CHECK_RC(pw_wrapper_init(mem_a, need, &cfg, 2, checked, N_TOOLS, &hooks, &again),
             PW_BAD_SCHEMA);
    CHECK(again == NULL);
    CHECK(memcmp(before, mem_a, sizeof before) == 0);
    USABLE(w, 3);
}

int main(void)
{
    setup_tools();
    test_config_and_size();
    test_size_bound_and_frame_len();
    test_poll_output();
    test_init_memory_and_tools();
    test_null_arguments();
    test_misaligned_wrapper();
    test_round_trip();
    test_foreign_handle();
    test_handle_states();
    test_buffer_too_small();
    test_over_capacity();
    test_queue_full();
    test_clock_backwards();
    test_malformed_input();
    test_sync_tools();
    test_schema_tools();
    return check_report("test_wrapper");
}
