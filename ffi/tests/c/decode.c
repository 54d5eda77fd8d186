/* A stream decoder and the item encoders through the header only, with static memory (no
 * malloc): `decode PROVIDER CHUNK BODY` prints the frames of a response body fed in CHUNK-byte
 * pieces (0: whole), one a line; `decode --items PROVIDER BODY` prints, for each TOOL_CALL of
 * the body, its item for the assistant turn and the item of a result answering it. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "polyweave_tool_adapter.h"

#define CALLS 8
static uint64_t block[(1 << 20) / sizeof(uint64_t)];
static uint8_t body[1 << 20];
static uint8_t frame[64 * 1024];
static uint8_t item[64 * 1024];
static uint8_t result[64 * 1024];

static int fail(const char *what, pw_result r) {
    uint8_t text[128];
    size_t n = 0;
    pw_result_text(r, text, sizeof text, &n);
    fprintf(stderr, "decode: %s: %.*s\n", what, (int)n, (const char *)text);
    return 2;
}

/* One frame written: printed, or (items mode) encoded with a result answering it. */
static int emit(pw_provider p, int items, size_t len) {
    if (!items) {
        fwrite(frame, 1, len, stdout);
        fputc('\n', stdout);
        return 0;
    }
    static const char call_head[] = "{\"type\":\"TOOL_CALL\",";
    if (len < sizeof call_head - 1 || memcmp(frame, call_head, sizeof call_head - 1) != 0)
        return 0;
    size_t n = 0;
    pw_result r = pw_encode_item(p, frame, len, item, sizeof item, &n);
    if (r != PW_OK) return fail("pw_encode_item (call)", r);
    fwrite(item, 1, n, stdout);
    fputc('\n', stdout);
    /* The result answering it: the call's id and name, and a fixed result. */
    pw_tool_call f;
    r = pw_tool_call_fields(frame, len, PW_DEFAULT_MAX_DEPTH, &f);
    if (r != PW_OK) return fail("pw_tool_call_fields", r);
    int k = 0;
    k += snprintf((char *)result + k, sizeof result - (size_t)k, "{\"type\":\"TOOL_RESULT\",\"content\":{");
    if (f.flags & PW_TOOL_CALL_HAS_ID)
        k += snprintf((char *)result + k, sizeof result - (size_t)k, "\"id\":%.*s,", (int)f.id_len, (const char *)f.id);
    k += snprintf((char *)result + k, sizeof result - (size_t)k, "\"name\":%.*s,\"result\":{\"ok\":true}}}", (int)f.name_len, (const char *)f.name);
    r = pw_encode_item(p, result, (size_t)k, item, sizeof item, &n);
    if (r != PW_OK) return fail("pw_encode_item (result)", r);
    fwrite(item, 1, n, stdout);
    fputc('\n', stdout);
    return 0;
}

static int drain(pw_decoder *d, pw_provider p, int items) {
    for (;;) {
        size_t len = 0;
        pw_result r = pw_decoder_poll_frame(d, frame, sizeof frame, &len);
        if (r == PW_NOTHING) return 0;
        if (r != PW_OK) return fail("pw_decoder_poll_frame", r);
        int e = emit(p, items, len);
        if (e) return e;
    }
}

int main(int argc, char **argv) {
    int items = argc == 4 && strcmp(argv[1], "--items") == 0;
    if (argc != 4) {
        fprintf(stderr, "usage: decode PROVIDER CHUNK BODY | decode --items PROVIDER BODY\n");
        return 2;
    }
    const char *name = argv[items ? 2 : 1];
    size_t chunk = items ? 0 : (size_t)strtoul(argv[2], NULL, 10);
    pw_provider p;
    pw_result r = pw_provider_from_name((const uint8_t *)name, strlen(name), &p);
    if (r != PW_OK) return fail(name, r);
    FILE *in = fopen(argv[3], "rb");
    if (!in) {
        perror(argv[3]);
        return 2;
    }
    size_t total = fread(body, 1, sizeof body, in);
    fclose(in);

    pw_decoder_config cfg;
    pw_decoder_config_default(&cfg);
    cfg.event_cap = 256 * 1024;
    size_t need = 0;
    if ((r = pw_decoder_size(&cfg, CALLS, &need)) != PW_OK) return fail("pw_decoder_size", r);
    if (need > sizeof block) return fail("block", PW_STORAGE_TOO_SMALL);
    pw_decoder *d;
    if ((r = pw_decoder_init(block, sizeof block, p, &cfg, CALLS, &d)) != PW_OK) return fail("pw_decoder_init", r);

    size_t step = chunk ? chunk : (total ? total : 1);
    for (size_t at = 0; at < total;) {
        size_t end = at + step < total ? at + step : total;
        while (at < end) {
            size_t used = 0;
            if ((r = pw_decoder_feed(d, body + at, end - at, &used)) != PW_OK) return fail("pw_decoder_feed", r);
            at += used;
            int e = drain(d, p, items);
            if (e) return e;
        }
    }
    pw_decoder_finish(d);
    int e = drain(d, p, items);
    if (e) return e;
    pw_decoder_stats s;
    pw_decoder_get_stats(d, &s);
    if (s.calls_started != s.calls_written) {
        fprintf(stderr, "decode: %llu calls started, %llu written\n", (unsigned long long)s.calls_started, (unsigned long long)s.calls_written);
        return 1;
    }
    return 0;
}
