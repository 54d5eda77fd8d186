/* The wrapper's C ABI on a microcontroller: the same conversation as examples/firmware
 * (a TEXT passed through, a sync tool, a deferred tool completed 50 ms later, a deferred
 * tool that times out at exactly 100 ms, the held END released), from a C main with static
 * memory, SysTick time and semihosting output. main's return value is QEMU's exit status:
 * 0 when every frame written was the one expected. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "board.h"
#include "polyweave_tool_adapter.h"

#define FAIL(...) (printf("FAIL: " __VA_ARGS__), printf("\n"), 1)
#define S(lit) {(const uint8_t *)(lit), sizeof(lit) - 1}

/* Deferred calls that can be pending at once (the sync `add` needs no slot). */
#define SLOTS 2
#define N_TOOLS 3

/* The wrapper's block, sized at compile time for the default capacities (those of
 * pw_wrapper_config_default; no hook log): PW_WRAPPER_DEFAULT_SIZE_BOUND is at least what
 * pw_wrapper_size says (checked at run time too); uint64_t elements give it PW_MAX_ALIGN
 * (pw_wrapper_align, checked too). */
static uint64_t wrapper_mem[PW_WRAPPER_DEFAULT_SIZE_BOUND(SLOTS, N_TOOLS) / sizeof(uint64_t) + 1];
static uint64_t splitter_mem[(PW_LINE_SPLITTER_SIZE_BOUND + sizeof(uint64_t) - 1) /
                             sizeof(uint64_t)];
/* The longest model line the line splitter holds. */
static uint8_t line_buf[256];
/* Where pw_wrapper_poll_transmit writes each frame: as long as the longest frame
 * (name, id, args, result and message caps; held_bytes), so never refused as too small. */
static uint8_t tx[PW_WRAPPER_DEFAULT_MAX_FRAME_LEN];

/* What the model says, as NDJSON; it arrives in chunks of CHUNK bytes. */
static const char model[] =
    "{\"type\":\"TEXT\",\"content\":\"Let me check.\"}\n"
    "{\"type\":\"TOOL_CALL\",\"content\":{\"id\":\"c1\",\"name\":\"lookup\",\"args\":{\"q\":\"json\"}}}\n"
    "{\"type\":\"TOOL_CALL\",\"content\":{\"id\":\"c2\",\"name\":\"slow\",\"args\":{}}}\n"
    "{\"type\":\"TOOL_CALL\",\"content\":{\"id\":\"c3\",\"name\":\"add\",\"args\":{\"a\":2,\"b\":40}}}\n"
    "{\"type\":\"END\"}\n";
#define CHUNK 7u

#define PROMPT "Tool results above. Last tool error: Tool slow timed out after 100ms"

/* Every frame the host must write, in order (forwarded text included). */
static const struct {
    uint32_t route;
    const char *frame;
} expected[] = {
    {PW_ROUTE_CONSUMER, "{\"type\":\"TEXT\",\"content\":\"Let me check.\"}"},
    {PW_ROUTE_MODEL, "{\"type\":\"TOOL_RESULT\",\"content\":{\"id\":\"c3\",\"name\":\"add\",\"result\":42}}"},
    {PW_ROUTE_MODEL, "{\"type\":\"TOOL_RESULT\",\"content\":{\"id\":\"c1\",\"name\":\"lookup\",\"result\":{\"rfc\":8259}}}"},
    {PW_ROUTE_MODEL, "{\"type\":\"TOOL_RESULT\",\"content\":{\"id\":\"c2\",\"name\":\"slow\",\"error\":\"Tool slow timed out after 100ms\"}}"},
    {PW_ROUTE_MODEL, "{\"type\":\"TEXT\",\"content\":\"" PROMPT "\"}"},
    {PW_ROUTE_CONSUMER, "{\"type\":\"TEXT\",\"content\":\"" PROMPT "\"}"},
    {PW_ROUTE_CONSUMER, "{\"type\":\"END\"}"},
};
#define N_EXPECTED (sizeof expected / sizeof expected[0])

/* The lookup's backend answers each call 50 ms after it started. */
#define LOOKUP_DELAY_MS 50u
static const char lookup_result[] = "{\"rfc\":8259}";

/* The host side of the loop. */
static struct {
    size_t next;             /* index of the next expected frame */
    int lookup_waiting;      /* 1 while the lookup backend holds a call */
    pw_call_handle lookup;   /* that call */
    uint64_t lookup_started; /* when it started */
    int slow_started_set;
    uint64_t slow_started;   /* nobody completes `slow`: it must time out */
} host;

/* A result code's message, NUL-terminated, with its number (valid until the next call). */
static const char *why(pw_result r) {
    static char text[128];
    size_t len = 0;
    int n = snprintf(text, sizeof text, "%u ", (unsigned)r);
    if (pw_result_text(r, (uint8_t *)text + n, sizeof text - (size_t)n - 1, &len) != PW_OK)
        len = 0;
    text[(size_t)n + len] = '\0';
    return text;
}

static const char *route_name(uint32_t route) {
    return route == PW_ROUTE_MODEL ? "Model" : route == PW_ROUTE_CONSUMER ? "Consumer" : "Adapter";
}

/* Prints a frame and checks it is the next one expected; 0 when it is. */
static int check(uint32_t route, const uint8_t *frame, size_t len) {
    printf("%s: %.*s\n", route_name(route), (int)len, (const char *)frame);
    if (host.next >= N_EXPECTED)
        return FAIL("frame %u not expected", (unsigned)host.next);
    if (expected[host.next].route != route || strlen(expected[host.next].frame) != len ||
        memcmp(expected[host.next].frame, frame, len) != 0)
        return FAIL("frame %u: expected %s: %s", (unsigned)host.next,
                    route_name(expected[host.next].route), expected[host.next].frame);
    host.next++;
    return 0;
}

static int span_is(pw_str s, const char *text) {
    return s.len == strlen(text) && memcmp(s.ptr, text, s.len) == 0;
}

/* After an input at `now`: drains the frames the wrapper owes, then its events (the polling
 * order it asks for). 0 when all went well. */
static int pump(pw_wrapper *w, uint64_t now) {
    pw_transmit t;
    pw_event e;
    pw_result r;
    while ((r = pw_wrapper_poll_transmit(w, tx, sizeof tx, &t)) == PW_OK)
        if (check(t.route, tx, t.len) != 0)
            return 1;
    if (r != PW_NOTHING)
        return FAIL("poll_transmit: %s", why(r));
    while ((r = pw_wrapper_poll_event(w, &e)) == PW_OK) {
        printf("%.*s started at %llu ms\n", (int)e.name.len, (const char *)e.name.ptr,
               (unsigned long long)now);
        if (span_is(e.name, "lookup")) {
            if (host.lookup_waiting)
                return FAIL("lookup queue full");
            host.lookup_waiting = 1;
            host.lookup = e.handle;
            host.lookup_started = now;
        } else {
            host.slow_started_set = 1;
            host.slow_started = now;
        }
    }
    if (r != PW_NOTHING)
        return FAIL("poll_event: %s", why(r));
    return 0;
}

/* JSON white space. */
static const uint8_t *skip_ws(const uint8_t *p, const uint8_t *end) {
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
        p++;
    return p;
}

/* Reads a JSON integer that fits in a long long; NULL when there is none. */
static const uint8_t *parse_int(const uint8_t *p, const uint8_t *end, long long *out) {
    int neg = 0;
    long long v = 0;
    const uint8_t *start;
    if (p < end && *p == '-') {
        neg = 1;
        p++;
    }
    start = p;
    while (p < end && *p >= '0' && *p <= '9') {
        if (v > (INT32_MAX * 10LL)) /* far beyond any int32_t: stop growing */
            return NULL;
        v = v * 10 + (*p - '0');
        p++;
    }
    if (p == start || (p - start > 1 && *start == '0'))
        return NULL;
    if (p < end && (*p == '.' || *p == 'e' || *p == 'E'))
        return NULL; /* not an integer */
    *out = neg ? -v : v;
    return p;
}

/* Reads {"a": int32, "b": int32} (members in any order, no others). 0 when it is one. */
static int parse_add_args(pw_str args, int32_t *a, int32_t *b) {
    const uint8_t *p = args.ptr, *end = args.ptr + args.len;
    int have_a = 0, have_b = 0;
    p = skip_ws(p, end);
    if (p == end || *p++ != '{')
        return 1;
    p = skip_ws(p, end);
    if (p < end && *p == '}')
        return 1;
    for (;;) {
        long long v;
        char key;
        p = skip_ws(p, end);
        /* A key: "a" or "b" exactly. */
        if (end - p < 3 || p[0] != '"' || (p[1] != 'a' && p[1] != 'b') || p[2] != '"')
            return 1;
        key = (char)p[1];
        p = skip_ws(p + 3, end);
        if (p == end || *p++ != ':')
            return 1;
        p = parse_int(skip_ws(p, end), end, &v);
        if (p == NULL || v < INT32_MIN || v > INT32_MAX)
            return 1;
        if (key == 'a') {
            if (have_a++)
                return 1;
            *a = (int32_t)v;
        } else {
            if (have_b++)
                return 1;
            *b = (int32_t)v;
        }
        p = skip_ws(p, end);
        if (p == end)
            return 1;
        if (*p == ',') {
            p++;
            continue;
        }
        if (*p++ != '}')
            return 1;
        break;
    }
    return skip_ws(p, end) == end && have_a && have_b ? 0 : 1;
}

/* The sync tool: {a, b} in, their (saturating) sum out. */
static uint32_t add(void *userdata, pw_str args, pw_writer *out) {
    static const char bad[] = "args must be {a, b}";
    char num[16];
    int32_t a, b;
    long long sum;
    int n;
    (void)userdata;
    if (parse_add_args(args, &a, &b) != 0) {
        pw_writer_write(out, (const uint8_t *)bad, sizeof bad - 1);
        return PW_TOOL_STATUS_FAILED;
    }
    sum = (long long)a + b;
    if (sum > INT32_MAX)
        sum = INT32_MAX;
    if (sum < INT32_MIN)
        sum = INT32_MIN;
    n = snprintf(num, sizeof num, "%ld", (long)sum);
    pw_writer_write(out, (const uint8_t *)num, (size_t)n);
    return PW_TOOL_STATUS_OK;
}

/* One model line at `now`: into the wrapper, forwarded if it says so, then the pump. */
static int handle_line(pw_wrapper *w, const uint8_t *line, size_t len) {
    uint64_t now = board_now_ms();
    pw_disposition d;
    pw_result r = pw_wrapper_handle_response(w, now, line, len, &d);
    if (r != PW_OK)
        return FAIL("handle_response: %s", why(r));
    if (d.kind == PW_DISPOSITION_FORWARD && check(PW_ROUTE_CONSUMER, line, len) != 0)
        return 1;
    return pump(w, now);
}

int main(void) {
    const pw_tool tools[N_TOOLS] = {
        {S("add"), PW_TOOL_KIND_SYNC, PW_TOOL_DEFAULT_TIMEOUT, add, NULL, {NULL, 0}, NULL, 0},
        {S("lookup"), PW_TOOL_KIND_DEFERRED, 1000, NULL, NULL, {NULL, 0}, NULL, 0},
        {S("slow"), PW_TOOL_KIND_DEFERRED, PW_TOOL_DEFAULT_TIMEOUT, NULL, NULL, {NULL, 0}, NULL, 0},
    };
    const pw_hooks hooks = {NULL, NULL, NULL};
    pw_wrapper_config cfg;
    pw_wrapper *w;
    pw_line_splitter *splitter;
    const uint8_t *line;
    size_t need, len, off, consumed;
    pw_result r;

    printf("%s on a Cortex-M4F\n", pw_version());
    board_start_tick();

    /* 100 ms for deferred calls unless a tool sets its own; capacities stay at the defaults. */
    if ((r = pw_wrapper_config_default(&cfg)) != PW_OK)
        return FAIL("config_default: %s", why(r));
    cfg.tool_timeout_ms = 100;
    if ((r = pw_wrapper_size(&cfg, SLOTS, N_TOOLS, &need)) != PW_OK)
        return FAIL("wrapper_size: %s", why(r));
    printf("wrapper: %u of %u static bytes for %d slots, %d tools\n", (unsigned)need,
           (unsigned)sizeof wrapper_mem, SLOTS, N_TOOLS);
    if (need > sizeof wrapper_mem)
        return FAIL("wrapper needs %u bytes, the static block has %u", (unsigned)need,
                    (unsigned)sizeof wrapper_mem);
    if ((r = pw_wrapper_max_frame_len(&cfg, &len)) != PW_OK || len > sizeof tx)
        return FAIL("frames of up to %u bytes, the output buffer has %u", (unsigned)len,
                    (unsigned)sizeof tx);
    if ((uintptr_t)wrapper_mem % pw_wrapper_align() != 0)
        return FAIL("wrapper block not aligned to %u", (unsigned)pw_wrapper_align());
    if ((r = pw_wrapper_init(wrapper_mem, sizeof wrapper_mem, &cfg, SLOTS, tools, N_TOOLS,
                             &hooks, &w)) != PW_OK)
        return FAIL("wrapper_init: %s", why(r));
    if (pw_line_splitter_size() > sizeof splitter_mem)
        return FAIL("line splitter needs %u bytes", (unsigned)pw_line_splitter_size());
    if ((r = pw_line_splitter_init(splitter_mem, sizeof splitter_mem, line_buf, sizeof line_buf,
                            &splitter)) != PW_OK)
        return FAIL("line_splitter_init: %s", why(r));

    /* The model's bytes, CHUNK at a time, as if from a UART. */
    for (off = 0; off < sizeof model - 1; off += CHUNK) {
        const uint8_t *rest = (const uint8_t *)model + off;
        size_t left = sizeof model - 1 - off < CHUNK ? sizeof model - 1 - off : CHUNK;
        while (left > 0) {
            if ((r = pw_line_splitter_feed(splitter, rest, left, &consumed)) != PW_OK)
                return FAIL("line_splitter_feed: %s", why(r));
            rest += consumed;
            left -= consumed;
            while ((r = pw_line_splitter_next_line(splitter, &line, &len)) == PW_OK)
                if (handle_line(w, line, len) != 0)
                    return 1;
            if (r != PW_NOTHING)
                return FAIL("line splitter: %s", why(r));
        }
    }
    if ((r = pw_line_splitter_finish(splitter, &line, &len)) != PW_NOTHING)
        return FAIL("bytes after the last line (%s)", why(r));

    /* Sleep until the lookup's answer or the earliest deadline, whichever comes first. */
    while (pw_wrapper_pending(w) > 0) {
        uint64_t deadline = pw_wrapper_poll_timeout(w);
        uint64_t lookup_due = host.lookup_started + LOOKUP_DELAY_MS;
        uint64_t now;
        if (deadline == PW_NO_TIMEOUT)
            return FAIL("%u calls pending without a deadline", (unsigned)pw_wrapper_pending(w));
        for (;;) {
            now = board_now_ms();
            if (now >= deadline || (host.lookup_waiting && now >= lookup_due))
                break;
            board_wait_for_interrupt();
        }
        if (host.lookup_waiting && now >= lookup_due) {
            const pw_outcome result = {0, S(lookup_result)};
            uint32_t how;
            printf("lookup completed after %llu ms\n",
                   (unsigned long long)(now - host.lookup_started));
            host.lookup_waiting = 0;
            if ((r = pw_wrapper_complete(w, now, host.lookup, &result, &how)) != PW_OK)
                return FAIL("complete: %s", why(r));
            if (how != PW_COMPLETED_AS_GIVEN)
                return FAIL("lookup completed with report %u", (unsigned)how);
        } else {
            uint64_t elapsed;
            if (!host.slow_started_set)
                return FAIL("slow never started");
            elapsed = now - host.slow_started;
            printf("timeout at %llu ms (deadline %llu ms): %llu ms after the call\n",
                   (unsigned long long)now, (unsigned long long)deadline,
                   (unsigned long long)elapsed);
            if (elapsed != 100)
                return FAIL("slow timed out after %llu ms, not 100 ms", (unsigned long long)elapsed);
            if ((r = pw_wrapper_handle_timeout(w, now)) != PW_OK)
                return FAIL("handle_timeout: %s", why(r));
        }
        if (pump(w, now) != 0)
            return 1;
    }

    if (host.next != N_EXPECTED)
        return FAIL("%u of %u frames seen", (unsigned)host.next, (unsigned)N_EXPECTED);
    printf("PASS (%llu ms of emulated time)\n", (unsigned long long)board_now_ms());
    return 0;
}
