/*
 * Output values of the replay's NDJSON lines (SPEC §6): every line is one
 * JSON value, whatever the scenario holds.
 */
#ifndef PW_REPLAY_OUT_H
#define PW_REPLAY_OUT_H

#include <stddef.h>

#include "buf.h"

/*
 * A JSON string token for `text` (bytes that are not UTF-8 become U+FFFD,
 * one per maximal ill-formed subpart).
 */
void out_string(struct buf *b, const unsigned char *text, size_t len);

/*
 * A raw JSON value (a frame, args, a result) as it goes into an output line:
 * when it is one JSON value, its own text without white space outside
 * strings (number text, escapes and member order as written, an escaped lone
 * surrogate kept); anything else (a pass-through frame broken after `type`,
 * a trace value cut to fit) as a JSON string of its text.
 */
void out_value(struct buf *b, const unsigned char *raw, size_t len);

#endif
