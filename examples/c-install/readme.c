#include <stdio.h>
#include <string.h>
#include <polyweave_tool_adapter.h>

/* A wrapper with the default capacities, 1 pending call, 1 tool; its longest frame. */
static uint64_t mem[PW_WRAPPER_DEFAULT_SIZE_BOUND(1, 1) / sizeof(uint64_t) + 1];
static uint8_t out[PW_WRAPPER_DEFAULT_MAX_FRAME_LEN];

static pw_tool_status add(void *ud, pw_str args, pw_writer *w) {
    (void)ud; (void)args;
    pw_writer_write(w, (const uint8_t *)"5", 1);
    return PW_TOOL_STATUS_OK;
}

int main(void) {
    pw_tool tools[1] = {{{(const uint8_t *)"add", 3}, PW_TOOL_KIND_SYNC, PW_TOOL_DEFAULT_TIMEOUT, add, NULL, {NULL, 0}, NULL, 0}};
    pw_hooks hooks = {NULL, NULL, NULL};
    pw_wrapper_config cfg;
    pw_wrapper *w;
    pw_disposition d;
    pw_transmit t;
    const char *call = "{\"type\":\"TOOL_CALL\",\"content\":{\"id\":\"c1\",\"name\":\"add\",\"args\":{}}}";

    pw_wrapper_config_default(&cfg);
    if (pw_wrapper_init(mem, sizeof mem, &cfg, 1, tools, 1, &hooks, &w) != PW_OK) return 1;
    if (pw_wrapper_handle_response(w, 0, (const uint8_t *)call, strlen(call), &d) != PW_OK) return 1;
    while (pw_wrapper_poll_transmit(w, out, sizeof out, &t) == PW_OK)
        printf("%s %.*s\n", t.route == PW_ROUTE_MODEL ? "model" : "consumer", (int)t.len, (const char *)out);
    return 0;
}
