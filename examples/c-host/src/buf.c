#include "buf.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *oom_file = "";

void buf_set_file(const char *file) { oom_file = file; }

void buf_oom(void) {
    fflush(stdout);
    fprintf(stderr, "pw-replay: %s: out of memory\n", oom_file);
    exit(2);
}

void *xmalloc(size_t n, size_t size) { return xrealloc(NULL, n, size); }

void *xrealloc(void *p, size_t n, size_t size) {
    void *q;
    if (size != 0 && n > SIZE_MAX / size) buf_oom();
    q = realloc(p, n * size == 0 ? 1 : n * size);
    if (q == NULL) buf_oom();
    return q;
}

static void reserve(struct buf *b, size_t more) {
    size_t cap;
    if (more <= b->cap - b->len) return;
    if (more > SIZE_MAX - b->len) buf_oom();
    cap = b->cap < 64 ? 64 : b->cap;
    while (cap < b->len + more) {
        if (cap > SIZE_MAX / 2) {
            cap = b->len + more;
            break;
        }
        cap *= 2;
    }
    b->p = xrealloc(b->p, cap, 1);
    b->cap = cap;
}

void buf_put(struct buf *b, const void *bytes, size_t n) {
    if (n == 0) return;
    reserve(b, n);
    memcpy(b->p + b->len, bytes, n);
    b->len += n;
}

void buf_putc(struct buf *b, int c) {
    reserve(b, 1);
    b->p[b->len++] = (unsigned char)c;
}

void buf_puts(struct buf *b, const char *s) { buf_put(b, s, strlen(s)); }

void buf_printf(struct buf *b, const char *fmt, ...) {
    va_list ap;
    int n;
    va_start(ap, fmt);
    n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    reserve(b, (size_t)n + 1);
    va_start(ap, fmt);
    vsnprintf((char *)b->p + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

int buf_is(const struct buf *b, const char *s) {
    size_t n = strlen(s);
    return b->len == n && (n == 0 || memcmp(b->p, s, n) == 0);
}

void buf_free(struct buf *b) {
    free(b->p);
    b->p = NULL;
    b->len = b->cap = 0;
}
