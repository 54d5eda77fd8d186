#include "out.h"

#include "json.h"

void out_string(struct buf *b, const unsigned char *s, size_t len) {
    static const char hex[] = "0123456789abcdef";
    size_t i = 0;
    buf_putc(b, '"');
    while (i < len) {
        int ok;
        size_t n = utf8_scan(s + i, len - i, &ok);
        unsigned char c = s[i];
        if (!ok) {
            buf_put(b, "\xEF\xBF\xBD", 3);
        } else if (n > 1) {
            buf_put(b, s + i, n);
        } else if (c == '"' || c == '\\') {
            buf_putc(b, '\\');
            buf_putc(b, c);
        } else if (c >= 0x20) {
            buf_putc(b, c);
        } else if (c == '\b') {
            buf_puts(b, "\\b");
        } else if (c == '\f') {
            buf_puts(b, "\\f");
        } else if (c == '\n') {
            buf_puts(b, "\\n");
        } else if (c == '\r') {
            buf_puts(b, "\\r");
        } else if (c == '\t') {
            buf_puts(b, "\\t");
        } else {
            buf_puts(b, "\\u00");
            buf_putc(b, hex[c >> 4]);
            buf_putc(b, hex[c & 15]);
        }
        i += n;
    }
    buf_putc(b, '"');
}

void out_value(struct buf *b, const unsigned char *raw, size_t len) {
    size_t i;
    int in_string = 0, escaped = 0;
    if (!json_is_valid(raw, len)) {
        out_string(b, raw, len);
        return;
    }
    for (i = 0; i < len; i++) {
        unsigned char c = raw[i];
        if (in_string) {
            if (escaped) {
                escaped = 0;
            } else if (c == '\\') {
                escaped = 1;
            } else if (c == '"') {
                in_string = 0;
            }
        } else if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
            continue;
        } else if (c == '"') {
            in_string = 1;
        }
        buf_putc(b, c);
    }
}
