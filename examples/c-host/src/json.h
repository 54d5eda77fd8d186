/*
 * A small JSON reader for the replay program: a tokenizer that builds a flat
 * DOM over the file's bytes. Nothing is copied or re-serialised: every node
 * keeps the span of its raw text in the file, so a frame, a result or args
 * reach the library byte for byte as written (number text, escapes, member
 * order, repeated members, white space inside the value).
 *
 * Strings are decoded on demand (json_string_decode) into UTF-8; an escaped
 * surrogate that is not half of an escaped pair (`\ud800` alone) decodes to
 * U+FFFD, as the library decodes it (SPEC §7.24). The raw span keeps the
 * escape as written.
 *
 * The grammar is RFC 8259, strictly: no trailing commas, no leading zeros,
 * strings without raw control characters and with valid UTF-8. Nesting is
 * limited only by memory (the parser keeps its own stack, not the C stack).
 */
#ifndef PW_REPLAY_JSON_H
#define PW_REPLAY_JSON_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"

enum json_type { J_NULL, J_FALSE, J_TRUE, J_NUMBER, J_STRING, J_ARRAY, J_OBJECT };

/* One value of a document. Index 0 is the root; 0 in `first` / `next` means none. */
struct json_node {
    enum json_type type;
    size_t start, end;         /* the value's raw text: text[start..end) */
    size_t key_start, key_end; /* an object member's key token, quotes included */
    size_t first, last;        /* children (array elements, object members), in order */
    size_t next;               /* the next sibling */
};

struct json_doc {
    const unsigned char *text;
    size_t len;
    struct json_node *nodes;
    size_t n, cap;
};

/* Why a text is not JSON, and where. */
struct json_error {
    const char *what;
    size_t offset;
};

/*
 * Parses `text` as exactly one JSON value (white space around it allowed).
 * With `doc` non-NULL the DOM is built there (free it with json_free; it
 * borrows `text`); with `doc` NULL the text is only checked. Returns 0, or -1
 * with `*err` filled (when `err` is not NULL). Exits through buf_oom() when
 * memory runs out.
 */
int json_parse(const unsigned char *text, size_t len, struct json_doc *doc, struct json_error *err);

/* Whether `text` is exactly one JSON value (any depth; lone surrogate escapes allowed). */
int json_is_valid(const unsigned char *text, size_t len);

void json_free(struct json_doc *doc);

/* A node's raw text. */
const unsigned char *json_raw(const struct json_doc *doc, size_t node, size_t *len);

/* Whether a node's raw text is exactly `word` (for `true`, `null`...). */
int json_raw_is(const struct json_doc *doc, size_t node, const char *word);

/*
 * Appends the decoded text of one valid string token (quotes included) to
 * `out`: UTF-8, with U+FFFD for each escaped unpaired surrogate.
 */
void json_string_decode(const unsigned char *token, size_t len, struct buf *out);

/* A string node's decoded text appended to `out`. */
void json_node_string(const struct json_doc *doc, size_t node, struct buf *out);

/*
 * An object's member named `key` (decoded, compared exactly): the value of
 * the last member of that name, as a node index, or 0 when there is none
 * (the root is never a member). `obj` must be an object node.
 */
size_t json_get(const struct json_doc *doc, size_t obj, const char *key);

/*
 * UTF-8 at p[0..avail) (avail >= 1): the length of the next well-formed
 * sequence with *ok = 1, or of the maximal ill-formed subpart there (at least
 * 1 byte, Unicode's "substitution of maximal subparts") with *ok = 0.
 */
size_t utf8_scan(const unsigned char *p, size_t avail, int *ok);

/* The whole number a node holds (digits only, at most UINT64_MAX): 0, or -1 when it is none. */
int json_u64(const struct json_doc *doc, size_t node, uint64_t *out);

#endif
