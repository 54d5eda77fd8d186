/*
 * A replay scenario (SPEC §6) read into steps, as the Rust replay reads it
 * (examples/replay/src/scenario.rs): frames, results and args are the file's
 * own bytes under each value's span; names, ids, error messages and cancel
 * reasons are decoded strings (an escaped lone surrogate gives U+FFFD); a
 * frame written as a JSON string is the decoded string's bytes.
 */
#ifndef PW_REPLAY_SCENARIO_H
#define PW_REPLAY_SCENARIO_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"

/* Most pending-call slots a scenario may ask for (as the Rust replay). */
#define MAX_PENDING 1024u

enum tool_kind { TOOL_SYNC_RESULT, TOOL_SYNC_ECHO, TOOL_SYNC_ERROR, TOOL_DEFERRED, TOOL_ADAPTER };

struct tool_spec {
    struct buf name; /* the decoded key */
    enum tool_kind kind;
    struct buf text; /* TOOL_SYNC_RESULT: raw JSON; TOOL_SYNC_ERROR: the message */
};

enum step_kind {
    STEP_RESPONSE,
    STEP_REQUEST,
    STEP_COMPLETE,
    STEP_ADAPTER,
    STEP_ABORT,
    STEP_CANCEL,
    STEP_CLEAR_TRACE,
    STEP_TICK,
    STEP_CALL_FRAME,
    STEP_CALL_CLOSE
};

struct step {
    int has_at;
    uint64_t at;
    enum step_kind kind;
    uint64_t call;    /* STEP_COMPLETE, STEP_ADAPTER: the call number */
    int has_frame;    /* STEP_ADAPTER (the others always have one) */
    struct buf frame; /* STEP_RESPONSE, STEP_REQUEST, STEP_ADAPTER, STEP_CALL_FRAME */
    int close;        /* STEP_ADAPTER: then close */
    int has_error;    /* STEP_COMPLETE: fail with `text` */
    struct buf text;  /* STEP_COMPLETE: message or raw result; STEP_CANCEL: the reason */
};

struct scenario {
    int call_mode;
    /* Wrapper mode. */
    struct tool_spec *tools;
    size_t n_tools;
    int mirror_continue, aborted, full_validation;
    uint32_t tool_timeout_ms, max_rounds;
    uint32_t max_total_timeout_ms; /* SPEC §5's progress cap, 0: off (both modes) */
    size_t max_pending;
    /* Call mode. */
    struct buf name, id, args;
    int has_id;
    uint32_t timeout_ms;
    /* Both. */
    struct step *steps;
    size_t n_steps;
};

/* Reads and checks a scenario file: 0, or -1 with the reason in `err` (one line). */
int scenario_load(const char *path, struct scenario *sc, struct buf *err);

void scenario_free(struct scenario *sc);

#endif
