/*
 * Growable byte buffers for the replay program's own data (the scenario, its
 * DOM, output lines). The library's memory never comes from here.
 */
#ifndef PW_REPLAY_BUF_H
#define PW_REPLAY_BUF_H

#include <stddef.h>

struct buf {
    unsigned char *p;
    size_t len, cap;
};

#define BUF_INIT {NULL, 0, 0}

/* The file named in the one-line message of buf_oom(). */
void buf_set_file(const char *file);

/* Out of memory: prints one line naming the file and exits 2. */
void buf_oom(void);

/* malloc / realloc that never return NULL (buf_oom() instead); n * size is checked. */
void *xmalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n, size_t size);

void buf_put(struct buf *b, const void *bytes, size_t n);
void buf_putc(struct buf *b, int c);
void buf_puts(struct buf *b, const char *s);
/* printf-style, for numbers and short texts. */
void buf_printf(struct buf *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Whether the buffer holds exactly the bytes of `s`. */
int buf_is(const struct buf *b, const char *s);
void buf_free(struct buf *b);

#endif
