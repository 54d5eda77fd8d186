#include "mcp_print.h"

#include <stdio.h>

#include "polyweave_tool_adapter.h"

/* The most a frame checked before printing may nest (the library's deepest limit): a frame
 * passed through prints as a value whatever its depth up to there. */
#define PRINT_DEPTH 255u

/*
 * UTF-8 at p[0..avail) (avail >= 1): the length of the next well-formed sequence with
 * *ok = 1, or of the maximal ill-formed subpart there (at least 1) with *ok = 0, as
 * Unicode's "substitution of maximal subparts" counts it.
 */
static size_t utf8_next(const uint8_t *p, size_t avail, int *ok) {
    uint8_t c = p[0], lo = 0x80, hi = 0xBF;
    size_t need, i;
    *ok = 1;
    if (c < 0x80) return 1;
    if (c >= 0xC2 && c <= 0xDF) {
        need = 1;
    } else if (c >= 0xE0 && c <= 0xEF) {
        need = 2;
        if (c == 0xE0) lo = 0xA0;
        if (c == 0xED) hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        need = 3;
        if (c == 0xF0) lo = 0x90;
        if (c == 0xF4) hi = 0x8F;
    } else {
        *ok = 0;
        return 1;
    }
    for (i = 1; i <= need; i++) {
        uint8_t b = i < avail ? p[i] : 0;
        uint8_t min = i == 1 ? lo : 0x80, max = i == 1 ? hi : 0xBF;
        if (i >= avail || b < min || b > max) {
            *ok = 0;
            return i;
        }
    }
    return need + 1;
}

/* `text` as a JSON string token, escaped minimally (SPEC §1). */
static void put_string(const uint8_t *s, size_t len) {
    static const char hex[] = "0123456789abcdef";
    size_t i = 0;
    putchar('"');
    while (i < len) {
        int ok;
        size_t n = utf8_next(s + i, len - i, &ok);
        uint8_t c = s[i];
        if (!ok) {
            fputs("\xEF\xBF\xBD", stdout);
        } else if (n > 1) {
            fwrite(s + i, 1, n, stdout);
        } else if (c == '"' || c == '\\') {
            putchar('\\');
            putchar(c);
        } else if (c >= 0x20) {
            putchar(c);
        } else if (c == '\n') {
            fputs("\\n", stdout);
        } else if (c == '\r') {
            fputs("\\r", stdout);
        } else if (c == '\t') {
            fputs("\\t", stdout);
        } else if (c == '\b') {
            fputs("\\b", stdout);
        } else if (c == '\f') {
            fputs("\\f", stdout);
        } else {
            fputs("\\u00", stdout);
            putchar(hex[c >> 4]);
            putchar(hex[c & 15]);
        }
        i += n;
    }
    putchar('"');
}

/* A valid JSON value without the white space outside its strings. */
static void put_compact(const uint8_t *raw, size_t len) {
    size_t i, run = 0;
    int in_string = 0, escaped = 0;
    for (i = 0; i < len; i++) {
        uint8_t c = raw[i];
        if (in_string) {
            if (escaped) {
                escaped = 0;
            } else if (c == '\\') {
                escaped = 1;
            } else if (c == '"') {
                in_string = 0;
            }
        } else if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
            fwrite(raw + run, 1, i - run, stdout);
            run = i + 1;
        } else if (c == '"') {
            in_string = 1;
        }
    }
    fwrite(raw + run, 1, len - run, stdout);
}

void print_event(const char *to, const uint8_t *frame, size_t len) {
    size_t at = 0;
    printf("{\"to\":\"%s\",\"frame\":", to);
    if (pw_json_validate(frame, len, PRINT_DEPTH, &at) == PW_OK) {
        put_compact(frame, len);
    } else {
        put_string(frame, len);
    }
    fputs("}\n", stdout);
}

void print_rejected(void) { fputs("{\"rejected\":{\"path\":\"response\"}}\n", stdout); }

void note(const char *what, const uint8_t *text, size_t len) {
    size_t i, shown = len < 160 ? len : 160;
    fprintf(stderr, "pw-mcp: %s", what);
    for (i = 0; i < shown; i++) fputc(text[i] < 0x20 ? ' ' : text[i], stderr);
    if (shown < len) fputs("...", stderr);
    fputc('\n', stderr);
}

void note_code(const char *what, uint32_t code) {
    uint8_t text[128];
    size_t n = 0;
    if (pw_result_text(code, text, sizeof text, &n) != PW_OK) n = 0;
    fprintf(stderr, "pw-mcp: %s: %.*s (code %u)\n", what, (int)n, (const char *)text, (unsigned)code);
}
