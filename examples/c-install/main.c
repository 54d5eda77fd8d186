/* A C host against an installed copy of the library (cargo cinstall, then pkg-config):
 *
 *     cc main.c $(pkg-config --cflags --libs polyweave-tool-adapter)
 *
 * One wrapper with one sync tool, `echo`; a model's TOOL_CALL goes in, and the frames the
 * wrapper owes come out: the TOOL_RESULT for the model, then the continue prompt. Every
 * size is a compile-time constant: no malloc. tests/install_c.sh checks its output. */
#include <stdio.h>
#include <string.h>

#include <polyweave_tool_adapter.h>

#define SLOTS 1
#define TOOLS 1
/* The capacities of pw_wrapper_config_default, as constants (checked in main). */
static uint64_t block[PW_WRAPPER_DEFAULT_SIZE_BOUND(SLOTS, TOOLS) /
                          sizeof(uint64_t) + 1];
static uint8_t frame[PW_WRAPPER_DEFAULT_MAX_FRAME_LEN];

/* The tool: its result is {"echo": ARGS}. */
static pw_tool_status echo(void *userdata, pw_str args, pw_writer *out) {
    (void)userdata;
    pw_writer_write(out, (const uint8_t *)"{\"echo\":", 8);
    pw_writer_write(out, args.ptr, args.len);
    pw_writer_write(out, (const uint8_t *)"}", 1);
    return PW_TOOL_STATUS_OK;
}

static const char *route_name(pw_route route) {
    return route == PW_ROUTE_MODEL ? "model" : route == PW_ROUTE_CONSUMER ? "consumer" : "adapter";
}

/* A refusal names its code, e.g. "pw_wrapper_init: memory block too small". */
static int fail(const char *what, pw_result r) {
    char text[128];
    size_t len = 0;
    pw_result_text(r, (uint8_t *)text, sizeof text, &len);
    fprintf(stderr, "%s: %.*s\n", what, (int)len, text);
    return 1;
}

int main(void) {
    static const char call[] =
        "{\"type\":\"TOOL_CALL\",\"content\":{\"id\":\"1\",\"name\":\"echo\",\"args\":{\"text\":\"hi\"}}}";
    pw_tool tools[TOOLS] = {
        {{(const uint8_t *)"echo", 4}, PW_TOOL_KIND_SYNC, PW_TOOL_DEFAULT_TIMEOUT, echo, NULL, {NULL, 0}, NULL, 0},
    };
    pw_hooks hooks = {NULL, NULL, NULL};
    pw_wrapper_config cfg;
    pw_wrapper *w;
    pw_disposition d;
    pw_transmit t;
    size_t need, longest;
    pw_result r;

    printf("PW_VERSION_STRING %s\n", PW_VERSION_STRING);
    printf("pw_version() %s\n", pw_version());

    pw_wrapper_config_default(&cfg);
    if ((r = pw_wrapper_size(&cfg, SLOTS, TOOLS, &need)) != PW_OK) return fail("pw_wrapper_size", r);
    if ((r = pw_wrapper_max_frame_len(&cfg, &longest)) != PW_OK) return fail("pw_wrapper_max_frame_len", r);
    if (need > sizeof block || longest > sizeof frame) {
        fprintf(stderr, "the constants are smaller than the defaults: %lu > %lu or %lu > %lu\n",
                (unsigned long)need, (unsigned long)sizeof block, (unsigned long)longest,
                (unsigned long)sizeof frame);
        return 1;
    }
    r = pw_wrapper_init(block, sizeof block, &cfg, SLOTS, tools, TOOLS, &hooks, &w);
    if (r != PW_OK) return fail("pw_wrapper_init", r);

    r = pw_wrapper_handle_response(w, 0, (const uint8_t *)call, strlen(call), &d);
    if (r != PW_OK) return fail("pw_wrapper_handle_response", r);
    printf("intercepted %d, call %u\n", d.kind == PW_DISPOSITION_INTERCEPTED, (unsigned)d.index);

    while ((r = pw_wrapper_poll_transmit(w, frame, sizeof frame, &t)) == PW_OK)
        printf("%s %.*s\n", route_name(t.route), (int)t.len, (const char *)frame);
    if (r != PW_NOTHING) return fail("pw_wrapper_poll_transmit", r);
    printf("pending %lu\n", (unsigned long)pw_wrapper_pending(w));
    return 0;
}
