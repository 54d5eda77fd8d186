/*
 * pw-mcp's output: SPEC §6 event lines on stdout, short notes on stderr.
 */
#ifndef PW_MCP_PRINT_H
#define PW_MCP_PRINT_H

#include <stddef.h>
#include <stdint.h>

/*
 * `{"to":"<to>","frame":<frame>}` and a line feed on stdout. The frame is printed as the
 * replay programs print frames (SPEC §6): a valid JSON value without its insignificant
 * white space (number text, escapes and member order as written); anything else (a frame
 * passed through that is broken after its `type`) as a JSON string of its text, bytes that
 * are not UTF-8 as U+FFFD.
 */
void print_event(const char *to, const uint8_t *frame, size_t len);

/* `{"rejected":{"path":"response"}}`: a model frame the wrapper refused as malformed. */
void print_rejected(void);

/* "pw-mcp: <what>" on stderr, then `len` bytes of `text` (control characters as spaces, at
 * most 160 shown). */
void note(const char *what, const uint8_t *text, size_t len);

/* "pw-mcp: <what>: <the code's text>" on stderr. */
void note_code(const char *what, uint32_t code);

#endif
