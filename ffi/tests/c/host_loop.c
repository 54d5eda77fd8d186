/* The README's host loop: a sync tool and a deferred one, no malloc, every size known at
 * compile time or asked once. */
#include <stdio.h>
#include <string.h>
#include "polyweave_tool_adapter.h"

#define SLOTS 2
#define TOOLS 2
/* pw_wrapper_config_default's capacities, by slots and tools only. */
static uint64_t mem[PW_WRAPPER_DEFAULT_SIZE_BOUND(SLOTS, TOOLS) / sizeof(uint64_t) + 1];
static uint8_t out[2048]; /* at least pw_wrapper_max_frame_len: checked in main */

static pw_tool_status add(void *ud, pw_str args, pw_writer *w) {
    (void)ud; (void)args; /* a real tool parses args */
    pw_writer_write(w, (const uint8_t *)"5", 1);
    return PW_TOOL_STATUS_OK;
}

/* The loop of the header's preamble: frames first, then calls to start, then the timer. */
static int drain(pw_wrapper *w) {
    pw_transmit t;
    pw_event ev;
    pw_result r;
    while ((r = pw_wrapper_poll_transmit(w, out, sizeof out, &t)) != PW_NOTHING) {
        if (r == PW_BUFFER_TOO_SMALL) { /* t.len is the size needed; the frame stays queued */
            fprintf(stderr, "a %lu-byte frame: a bigger buffer is needed\n", (unsigned long)t.len);
            return 1;
        }
        if (r != PW_OK) return 1; /* a bug: see pw_result_text */
        printf("%s %.*s\n", t.route == PW_ROUTE_MODEL ? "model" : t.route == PW_ROUTE_CONSUMER
               ? "consumer" : "adapter", (int)t.len, (const char *)out);
    }
    while (pw_wrapper_poll_event(w, &ev) == PW_OK) /* a deferred call to run */
        printf("run %.*s %.*s\n", (int)ev.name.len, (const char *)ev.name.ptr,
               (int)ev.args.len, (const char *)ev.args.ptr);
    printf("deadline %llu\n", (unsigned long long)pw_wrapper_poll_timeout(w));
    return 0;
}

int main(void) {
    pw_tool tools[TOOLS] = {
        {{(const uint8_t *)"add", 3}, PW_TOOL_KIND_SYNC, PW_TOOL_DEFAULT_TIMEOUT, add, NULL, {NULL, 0}, NULL, 0},
        {{(const uint8_t *)"lookup", 6}, PW_TOOL_KIND_DEFERRED, PW_TOOL_DEFAULT_TIMEOUT, NULL, NULL, {NULL, 0}, NULL, 0},
    };
    pw_hooks hooks = {NULL, NULL, NULL};
    pw_wrapper_config cfg;
    pw_wrapper *w;
    pw_disposition d;
    size_t need, longest;
    pw_completed how;
    const char *call = "{\"type\":\"TOOL_CALL\",\"content\":{\"id\":\"c1\",\"name\":\"add\",\"args\":{}}}";
    const char *later = "{\"type\":\"TOOL_CALL\",\"content\":{\"name\":\"lookup\",\"args\":{\"q\":1}}}";
    pw_outcome result = {0, {(const uint8_t *)"\"8259\"", 6}};

    pw_wrapper_config_default(&cfg);
    if (pw_wrapper_size(&cfg, SLOTS, TOOLS, &need) != PW_OK || need > sizeof mem) return 1;
    if (pw_wrapper_max_frame_len(&cfg, &longest) != PW_OK || longest > sizeof out) return 1;
    if (pw_wrapper_init(mem, sizeof mem, &cfg, SLOTS, tools, TOOLS, &hooks, &w) != PW_OK) return 1;

    if (pw_wrapper_handle_response(w, 10, (const uint8_t *)call, strlen(call), &d) != PW_OK) return 1;
    if (drain(w)) return 1; /* TOOL_RESULT to the model, the prompt to model and consumer */

    if (pw_wrapper_handle_response(w, 11, (const uint8_t *)later, strlen(later), &d) != PW_OK) return 1;
    if (drain(w)) return 1; /* the call to run, and its deadline */
    if (pw_wrapper_complete(w, 50, d.handle, &result, &how) != PW_OK) return 1;
    if (drain(w)) return 1;
    return pw_wrapper_pending(w) == 0 ? 0 : 1;
}
