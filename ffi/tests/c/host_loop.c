/* The README's host loop: a sync tool and a deferred one, no malloc. */
#include <stdio.h>
#include <string.h>
#include "polyweave_tool_adapter.h"

static uint64_t mem[16384]; /* 128 KiB, 8-byte aligned; pw_wrapper_size says what is needed */

static uint32_t add(void *ud, pw_str args, pw_writer *out) {
    (void)ud; (void)args; /* a real tool parses args */
    pw_writer_write(out, (const uint8_t *)"5", 1);
    return PW_TOOL_STATUS_OK;
}

static void send(pw_wrapper *w) { /* drain: write each frame where its route says */
    uint8_t buf[1024];
    pw_transmit t;
    while (pw_wrapper_poll_transmit(w, buf, sizeof buf, &t) == PW_OK)
        printf("%s %.*s\n", t.route == PW_ROUTE_MODEL ? "model" : t.route == PW_ROUTE_CONSUMER
               ? "consumer" : "adapter", (int)t.len, (const char *)buf);
}

int main(void) {
    pw_tool tools[2] = {
        {{(const uint8_t *)"add", 3}, PW_TOOL_KIND_SYNC, PW_TOOL_DEFAULT_TIMEOUT, add, NULL},
        {{(const uint8_t *)"lookup", 6}, PW_TOOL_KIND_DEFERRED, PW_TOOL_DEFAULT_TIMEOUT, NULL, NULL},
    };
    pw_hooks hooks = {NULL, NULL, NULL};
    pw_wrapper_config cfg;
    pw_wrapper *w;
    pw_disposition d;
    pw_event e;
    size_t need;
    uint32_t how;
    const char *call = "{\"type\":\"TOOL_CALL\",\"content\":{\"id\":\"c1\",\"name\":\"add\",\"args\":{}}}";
    const char *later = "{\"type\":\"TOOL_CALL\",\"content\":{\"name\":\"lookup\",\"args\":{\"q\":1}}}";
    pw_outcome result = {0, {(const uint8_t *)"\"8259\"", 6}};

    pw_wrapper_config_default(&cfg);
    if (pw_wrapper_size(&cfg, 2, 2, &need) != PW_OK || need > sizeof mem) return 1;
    if (pw_wrapper_init(mem, sizeof mem, &cfg, 2, tools, 2, &hooks, &w) != PW_OK) return 1;

    if (pw_wrapper_handle_response(w, 10, (const uint8_t *)call, strlen(call), &d) != PW_OK) return 1;
    send(w); /* TOOL_RESULT to the model, then the prompt to model and consumer */

    pw_wrapper_handle_response(w, 11, (const uint8_t *)later, strlen(later), &d);
    while (pw_wrapper_poll_event(w, &e) == PW_OK) /* a deferred call to run */
        printf("run %.*s %.*s\n", (int)e.name.len, (const char *)e.name.ptr,
               (int)e.args.len, (const char *)e.args.ptr);
    printf("deadline %llu\n", (unsigned long long)pw_wrapper_poll_timeout(w));
    if (pw_wrapper_complete(w, 50, d.handle, &result, &how) != PW_OK) return 1;
    send(w);
    return pw_wrapper_pending(w) == 0 ? 0 : 1;
}
