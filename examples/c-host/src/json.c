#include "json.h"

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ UTF-8 */

size_t utf8_scan(const unsigned char *p, size_t avail, int *ok) {
    unsigned c = p[0], lo = 0x80, hi = 0xBF;
    size_t need, k;
    *ok = 0;
    if (c < 0x80) {
        *ok = 1;
        return 1;
    }
    if (c >= 0xC2 && c <= 0xDF) {
        need = 1;
    } else if (c >= 0xE0 && c <= 0xEF) {
        need = 2;
        if (c == 0xE0) lo = 0xA0; /* no overlong forms */
        if (c == 0xED) hi = 0x9F; /* no encoded surrogates */
    } else if (c >= 0xF0 && c <= 0xF4) {
        need = 3;
        if (c == 0xF0) lo = 0x90;
        if (c == 0xF4) hi = 0x8F; /* nothing above U+10FFFF */
    } else {
        return 1;
    }
    for (k = 1; k <= need; k++) {
        if (k >= avail || p[k] < lo || p[k] > hi) return k;
        lo = 0x80;
        hi = 0xBF;
    }
    *ok = 1;
    return need + 1;
}

static void put_utf8(struct buf *out, unsigned long cp) {
    unsigned char b[4];
    size_t n;
    if (cp < 0x80) {
        b[0] = (unsigned char)cp;
        n = 1;
    } else if (cp < 0x800) {
        b[0] = (unsigned char)(0xC0 | (cp >> 6));
        b[1] = (unsigned char)(0x80 | (cp & 0x3F));
        n = 2;
    } else if (cp < 0x10000) {
        b[0] = (unsigned char)(0xE0 | (cp >> 12));
        b[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
        b[2] = (unsigned char)(0x80 | (cp & 0x3F));
        n = 3;
    } else {
        b[0] = (unsigned char)(0xF0 | (cp >> 18));
        b[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3F));
        b[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
        b[3] = (unsigned char)(0x80 | (cp & 0x3F));
        n = 4;
    }
    buf_put(out, b, n);
}

/* ------------------------------------------------------------ tokens */

static int is_ws(unsigned char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

static int is_digit(unsigned char c) { return c >= '0' && c <= '9'; }

static int hex_value(unsigned char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* The four hex digits at p as a number, or -1. */
static long hex4(const unsigned char *p) {
    long v = 0;
    int k, d;
    for (k = 0; k < 4; k++) {
        d = hex_value(p[k]);
        if (d < 0) return -1;
        v = v * 16 + d;
    }
    return v;
}

static size_t skip_ws(const unsigned char *s, size_t len, size_t i) {
    while (i < len && is_ws(s[i])) i++;
    return i;
}

static int fail(struct json_error *err, const char *what, size_t at) {
    if (err != NULL) {
        err->what = what;
        err->offset = at;
    }
    return -1;
}

/* A string token starting at s[i] == '"': *end is just past its closing quote. */
static int scan_string(const unsigned char *s, size_t len, size_t i, size_t *end,
                       struct json_error *err) {
    int ok;
    for (i++;;) {
        unsigned char c;
        if (i >= len) return fail(err, "end of file inside a string", i);
        c = s[i];
        if (c == '"') {
            *end = i + 1;
            return 0;
        }
        if (c < 0x20) return fail(err, "control character inside a string", i);
        if (c == '\\') {
            if (i + 1 >= len) return fail(err, "end of file inside a string", i);
            c = s[i + 1];
            if (c == 'u') {
                /* Any four hex digits: a lone surrogate is accepted (SPEC §7.24). */
                if (len - i < 6 || hex4(s + i + 2) < 0) return fail(err, "invalid \\u escape", i);
                i += 6;
            } else if (c == '"' || c == '\\' || c == '/' || c == 'b' || c == 'f' || c == 'n' ||
                       c == 'r' || c == 't') {
                i += 2;
            } else {
                return fail(err, "invalid escape", i);
            }
            continue;
        }
        i += utf8_scan(s + i, len - i, &ok);
        if (!ok) return fail(err, "invalid UTF-8 inside a string", i);
    }
}

static int scan_number(const unsigned char *s, size_t len, size_t i, size_t *end,
                       struct json_error *err) {
    size_t at = i;
    if (i < len && s[i] == '-') i++;
    if (i >= len || !is_digit(s[i])) return fail(err, "invalid number", at);
    if (s[i] == '0') {
        i++;
    } else {
        while (i < len && is_digit(s[i])) i++;
    }
    if (i < len && s[i] == '.') {
        i++;
        if (i >= len || !is_digit(s[i])) return fail(err, "invalid number", at);
        while (i < len && is_digit(s[i])) i++;
    }
    if (i < len && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        if (i < len && (s[i] == '+' || s[i] == '-')) i++;
        if (i >= len || !is_digit(s[i])) return fail(err, "invalid number", at);
        while (i < len && is_digit(s[i])) i++;
    }
    *end = i;
    return 0;
}

/* ------------------------------------------------------------ the parser */

/* An array or object not closed yet. */
struct open {
    unsigned char close; /* ']' or '}' */
    size_t node;
};

static size_t add_node(struct json_doc *doc, enum json_type type, size_t start, size_t parent,
                       int has_parent, size_t key_start, size_t key_end) {
    struct json_node *n;
    size_t at;
    if (doc->n == doc->cap) {
        doc->cap = doc->cap ? doc->cap * 2 : 64;
        doc->nodes = xrealloc(doc->nodes, doc->cap, sizeof *doc->nodes);
    }
    at = doc->n++;
    n = &doc->nodes[at];
    memset(n, 0, sizeof *n);
    n->type = type;
    n->start = start;
    n->end = start;
    n->key_start = key_start;
    n->key_end = key_end;
    if (has_parent) {
        struct json_node *p = &doc->nodes[parent];
        if (p->first == 0) {
            p->first = at;
        } else {
            doc->nodes[p->last].next = at;
        }
        p->last = at;
    }
    return at;
}

/* An object member's key and colon at s[*i]; *i ends on the value. */
static int scan_key(const unsigned char *s, size_t len, size_t *i, size_t *key_start,
                    size_t *key_end, struct json_error *err) {
    if (*i >= len || s[*i] != '"') return fail(err, "expected a member name", *i);
    *key_start = *i;
    if (scan_string(s, len, *i, key_end, err) != 0) return -1;
    *i = skip_ws(s, len, *key_end);
    if (*i >= len || s[*i] != ':') return fail(err, "expected ':'", *i);
    *i = skip_ws(s, len, *i + 1);
    return 0;
}

int json_parse(const unsigned char *s, size_t len, struct json_doc *doc, struct json_error *err) {
    struct open *stack = NULL;
    size_t depth = 0, cap = 0, i, node = 0, key_start = 0, key_end = 0, end;
    int rc = -1;

    if (doc != NULL) {
        memset(doc, 0, sizeof *doc);
        doc->text = s;
        doc->len = len;
    }
    i = skip_ws(s, len, 0);
    for (;;) {
        enum json_type type;
        unsigned char c;
        /* A value starts at s[i]. */
        if (i >= len) {
            fail(err, "end of file where a value was expected", i);
            goto out;
        }
        c = s[i];
        if (c == '{' || c == '[') {
            type = c == '{' ? J_OBJECT : J_ARRAY;
        } else if (c == '"') {
            type = J_STRING;
        } else if (c == 't') {
            type = J_TRUE;
        } else if (c == 'f') {
            type = J_FALSE;
        } else if (c == 'n') {
            type = J_NULL;
        } else if (c == '-' || is_digit(c)) {
            type = J_NUMBER;
        } else {
            fail(err, "expected a value", i);
            goto out;
        }
        if (doc != NULL) {
            int in_object = depth > 0 && stack[depth - 1].close == '}';
            node = add_node(doc, type, i, depth > 0 ? stack[depth - 1].node : 0, depth > 0,
                            in_object ? key_start : 0, in_object ? key_end : 0);
        }
        if (type == J_OBJECT || type == J_ARRAY) {
            if (depth == cap) {
                cap = cap ? cap * 2 : 16;
                stack = xrealloc(stack, cap, sizeof *stack);
            }
            stack[depth].close = type == J_OBJECT ? '}' : ']';
            stack[depth].node = node;
            depth++;
            i = skip_ws(s, len, i + 1);
            if (i < len && s[i] == stack[depth - 1].close) {
                /* Empty: closed below. */
            } else {
                if (type == J_OBJECT && scan_key(s, len, &i, &key_start, &key_end, err) != 0)
                    goto out;
                continue;
            }
        } else {
            if (type == J_STRING) {
                if (scan_string(s, len, i, &end, err) != 0) goto out;
            } else if (type == J_NUMBER) {
                if (scan_number(s, len, i, &end, err) != 0) goto out;
            } else {
                const char *word = type == J_TRUE ? "true" : type == J_FALSE ? "false" : "null";
                size_t n = strlen(word);
                if (len - i < n || memcmp(s + i, word, n) != 0) {
                    fail(err, "expected a value", i);
                    goto out;
                }
                end = i + n;
            }
            if (doc != NULL) doc->nodes[node].end = end;
            i = end;
        }
        /* After a value: close what ends here, then find the next value. */
        for (;;) {
            i = skip_ws(s, len, i);
            if (depth == 0) {
                if (i != len) {
                    fail(err, "trailing characters after the value", i);
                    goto out;
                }
                rc = 0;
                goto out;
            }
            if (i >= len) {
                fail(err, "end of file inside an array or object", i);
                goto out;
            }
            if (s[i] == stack[depth - 1].close) {
                i++;
                depth--;
                if (doc != NULL) doc->nodes[stack[depth].node].end = i;
                continue;
            }
            if (s[i] != ',') {
                fail(err, "expected ',' or the closing bracket", i);
                goto out;
            }
            i = skip_ws(s, len, i + 1);
            if (stack[depth - 1].close == '}' &&
                scan_key(s, len, &i, &key_start, &key_end, err) != 0)
                goto out;
            break;
        }
    }
out:
    free(stack);
    if (rc != 0 && doc != NULL) json_free(doc);
    return rc;
}

int json_is_valid(const unsigned char *text, size_t len) {
    return json_parse(text, len, NULL, NULL) == 0;
}

void json_free(struct json_doc *doc) {
    free(doc->nodes);
    doc->nodes = NULL;
    doc->n = doc->cap = 0;
}

/* ------------------------------------------------------------ reading the DOM */

const unsigned char *json_raw(const struct json_doc *doc, size_t node, size_t *len) {
    const struct json_node *n = &doc->nodes[node];
    *len = n->end - n->start;
    return doc->text + n->start;
}

int json_raw_is(const struct json_doc *doc, size_t node, const char *word) {
    size_t len, n = strlen(word);
    const unsigned char *raw = json_raw(doc, node, &len);
    return len == n && memcmp(raw, word, n) == 0;
}

void json_string_decode(const unsigned char *t, size_t len, struct buf *out) {
    size_t i = 1, last = len - 1; /* between the quotes */
    while (i < last) {
        size_t run = i;
        unsigned char e;
        long cp, lo;
        while (run < last && t[run] != '\\') run++;
        buf_put(out, t + i, run - i);
        i = run;
        if (i >= last) break;
        e = t[i + 1];
        i += 2;
        switch (e) {
        case 'b': buf_putc(out, '\b'); continue;
        case 'f': buf_putc(out, '\f'); continue;
        case 'n': buf_putc(out, '\n'); continue;
        case 'r': buf_putc(out, '\r'); continue;
        case 't': buf_putc(out, '\t'); continue;
        case 'u': break;
        default: buf_putc(out, e); continue; /* '"', '\\', '/' */
        }
        cp = hex4(t + i);
        i += 4;
        if (cp >= 0xD800 && cp <= 0xDBFF && i + 1 < last && t[i] == '\\' && t[i + 1] == 'u' &&
            (lo = hex4(t + i + 2)) >= 0xDC00 && lo <= 0xDFFF) {
            /* An escaped pair: one character. */
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            i += 6;
        } else if (cp >= 0xD800 && cp <= 0xDFFF) {
            cp = 0xFFFD; /* unpaired (SPEC §7.24) */
        }
        put_utf8(out, (unsigned long)cp);
    }
}

void json_node_string(const struct json_doc *doc, size_t node, struct buf *out) {
    size_t len;
    const unsigned char *raw = json_raw(doc, node, &len);
    json_string_decode(raw, len, out);
}

size_t json_get(const struct json_doc *doc, size_t obj, const char *key) {
    struct buf name = BUF_INIT;
    size_t m, found = 0;
    for (m = doc->nodes[obj].first; m != 0; m = doc->nodes[m].next) {
        const struct json_node *n = &doc->nodes[m];
        name.len = 0;
        json_string_decode(doc->text + n->key_start, n->key_end - n->key_start, &name);
        if (buf_is(&name, key)) found = m;
    }
    buf_free(&name);
    return found;
}

int json_u64(const struct json_doc *doc, size_t node, uint64_t *out) {
    size_t len, k;
    const unsigned char *raw;
    uint64_t v = 0;
    if (doc->nodes[node].type != J_NUMBER) return -1;
    raw = json_raw(doc, node, &len);
    for (k = 0; k < len; k++) {
        unsigned d;
        if (!is_digit(raw[k])) return -1;
        d = (unsigned)(raw[k] - '0');
        if (v > (UINT64_MAX - d) / 10) return -1;
        v = v * 10 + d;
    }
    *out = v;
    return 0;
}
