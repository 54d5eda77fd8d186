/*
 * pw-replay: runs one replay scenario (SPEC §6) through the C API only
 * (include/polyweave_tool_adapter.h) on a simulated clock and prints what
 * happened, one NDJSON event per line: the same events, in the same order, as
 * the Rust replay program (examples/replay/src/main.rs).
 *
 *     pw-replay SCENARIO.json
 *
 * Exit codes: 0 when the scenario ran (whatever it printed); 2 for bad
 * arguments or a scenario it cannot run, with exactly one line on stderr
 * naming the file (and the step).
 *
 * Memory: the library's blocks (the wrapper, the standalone call) never come
 * from malloc. They are carved out of one static pool, at the size
 * pw_wrapper_size / pw_adapter_call_size report and the alignment pw_wrapper_align /
 * pw_adapter_call_align ask for; the library's output goes into a static buffer. The
 * program's own data (the file, its DOM, the steps, output lines) uses malloc
 * and is freed before exit.
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "polyweave_tool_adapter.h"

#include "buf.h"
#include "out.h"
#include "scenario.h"

/* ------------------------------------------------------------ capacities */

/* The replay's capacities: SPEC §6 minimums met or exceeded; args, results and depth exact. */
#define NAME_CAP 1024u                /* bytes of a decoded tool name, and of a decoded id */
#define ARGS_CAP 4096u                /* bytes of raw args: exactly 4096 (SPEC §7.23) */
#define RESULT_CAP 4096u              /* bytes of a raw result: exactly 4096 (SPEC §7.23) */
#define MESSAGE_CAP (64u * 1024u)     /* bytes of an error message */
#define MAX_DEPTH 32u                 /* the default depth limit, exactly 32 (SPEC §7.17) */
#define TRACE_ENTRIES 32u             /* trace entries, each kept whole */
#define TRACE_ENTRY_HEADER 12u        /* bytes the trace spends on an entry besides its texts */
#define HELD_ENDS 8u                  /* ENDs held while calls are pending... */
#define END_CAP (8u * 1024u)          /* ...of up to this many bytes each */
#define HELD_END_COST 4u              /* bytes a held END costs besides its own */
#define CALL_RESULT_CAP RESULT_CAP    /* a standalone call's result capacity (SPEC §6) */
#define CALL_OUT_CAP (64u * 1024u)    /* a standalone call's output buffer (as the Rust replay) */

/*
 * The pool the library's blocks come from: room for the largest wrapper a
 * scenario may ask for (MAX_PENDING slots at about 142 KiB each, with the
 * trace and the queue), checked against pw_wrapper_size at run time.
 */
#define POOL_BYTES ((size_t)168 << 20)
/* Where poll_transmit writes a frame: larger than any frame the capacities allow. */
#define OUT_CAP ((size_t)4 << 20)
/* The hook log: hook events between two drains, each 28 bytes plus its texts. */
#define HOOK_LOG_BYTES ((size_t)16 << 20)

union pool_unit {
    uint64_t u;
    long double ld;
    void *p;
    void (*f)(void);
};

static union pool_unit pool[POOL_BYTES / sizeof(union pool_unit)];
static uint8_t out_frame[OUT_CAP];

/* A block of `size` bytes aligned to `align` from the pool, or NULL when it does not fit. */
static void *pool_block(size_t size, size_t align) {
    uintptr_t base = (uintptr_t)(void *)pool;
    size_t skip;
    if (align == 0 || (align & (align - 1)) != 0) return NULL;
    skip = (size_t)((align - base % align) % align);
    if (skip > sizeof pool || size > sizeof pool - skip) return NULL;
    return (unsigned char *)pool + skip;
}

/* ------------------------------------------------------------ the run */

/* What a wrapper step refers to by call number. */
struct known {
    int pending; /* took a slot: `handle` names it (else it completed at once) */
    pw_call_handle handle;
};

struct run {
    struct buf line;        /* the line being built */
    struct known *known;
    size_t n_known, cap_known;
    struct buf err;         /* why the scenario cannot run */
    int has_step;
    size_t step;
};

static const uint8_t no_bytes[1] = {0};

/* A pointer the library accepts for the buffer's bytes (never NULL, even when empty). */
static const uint8_t *bytes_of(const struct buf *b) { return b->p != NULL ? b->p : no_bytes; }

static pw_str str_of(const struct buf *b) {
    pw_str s;
    s.ptr = bytes_of(b);
    s.len = b->len;
    return s;
}

static void print_line(const struct buf *line) {
    fwrite(line->p, 1, line->len, stdout);
    putchar('\n');
}

/* The line in run->line, printed. */
static void emit(struct run *run) {
    print_line(&run->line);
    run->line.len = 0;
}

static void result_text(struct buf *b, pw_result r) {
    uint8_t text[256];
    size_t len = 0;
    if (pw_result_text((uint32_t)r, text, sizeof text, &len) != PW_OK) len = 0;
    buf_put(b, text, len);
    buf_printf(b, " (code %u)", (unsigned)r);
}

/* Fails the run: "<what>: <text of r>". */
static int fail(struct run *run, const char *what, pw_result r) {
    buf_puts(&run->err, what);
    buf_puts(&run->err, ": ");
    result_text(&run->err, r);
    return -1;
}

/* Malformed frames (not a JSON object with a string `type`, invalid JSON, too deep...). */
static int is_malformed(pw_result r) {
    return r >= PW_FRAME_NOT_OBJECT && r <= PW_FRAME_DUPLICATE_TYPE && r != PW_WRONG_FRAME_KIND;
}

/* A completion or adapter input for a call that is not waiting for it. */
static int is_waiting_error(pw_result r) { return r >= PW_CALL_UNKNOWN && r <= PW_CALL_WRONG_KIND; }

static void put_name(struct buf *b, uint8_t has, pw_str name) {
    if (has) {
        out_string(b, name.ptr, name.len);
    } else {
        buf_puts(b, "null");
    }
}

/* `"result":R,"error":E` of an outcome (the other one null). */
static void put_outcome(struct buf *b, const pw_outcome *o) {
    buf_puts(b, "\"result\":");
    if (o->is_error) {
        buf_puts(b, "null,\"error\":");
        out_string(b, o->text.ptr, o->text.len);
    } else {
        out_value(b, o->text.ptr, o->text.len);
        buf_puts(b, ",\"error\":null");
    }
}

/* ------------------------------------------------------------ wrapper mode */

/* A hook event, as the library hands it out in its place among the frames. */
static void print_hook(struct run *run, const pw_call_info *call, const pw_outcome *outcome) {
    buf_puts(&run->line, outcome ? "{\"hook\":\"toolResult\",\"name\":" : "{\"hook\":\"toolCall\",\"name\":");
    put_name(&run->line, call->has_name, call->name);
    buf_puts(&run->line, ",\"args\":");
    out_value(&run->line, call->args.ptr, call->args.len);
    if (outcome) {
        buf_putc(&run->line, ',');
        put_outcome(&run->line, outcome);
    }
    buf_putc(&run->line, '}');
    emit(run);
}

/* A sync tool of the scenario: a fixed result, an echo of the args, or a fixed error. */
static uint32_t sync_tool(void *userdata, pw_str args, pw_writer *out) {
    const struct tool_spec *t = userdata;
    switch (t->kind) {
    case TOOL_SYNC_RESULT:
        pw_writer_write(out, bytes_of(&t->text), t->text.len);
        return PW_TOOL_STATUS_OK;
    case TOOL_SYNC_ECHO:
        pw_writer_write(out, args.len ? args.ptr : no_bytes, args.len);
        return PW_TOOL_STATUS_OK;
    case TOOL_SYNC_ERROR:
        pw_writer_write(out, bytes_of(&t->text), t->text.len);
        return PW_TOOL_STATUS_FAILED;
    default:
        return PW_TOOL_STATUS_FAILED;
    }
}

/*
 * Prints what the wrapper owes in the order it happened — frames and hook events, as
 * pw_wrapper_poll_output orders them — then takes the calls that started (the steps
 * start them: they print nothing), until nothing is left.
 */
static int flush_wrapper(struct run *run, pw_wrapper *w) {
    for (;;) {
        size_t started = 0;
        pw_event ev;
        pw_output o;
        pw_wrapper_stats st;
        pw_result r;
        while ((r = pw_wrapper_poll_output(w, out_frame, sizeof out_frame, &o)) != PW_NOTHING) {
            if (r == PW_BUFFER_TOO_SMALL) {
                buf_printf(&run->err, "frame of %zu bytes exceeds the output buffer", o.frame.len);
                return -1;
            }
            if (r != PW_OK) return fail(run, "poll_output", r);
            if (o.cut) {
                buf_printf(&run->err, "the hook log (%zu bytes) lacked room for call %" PRIu32,
                           (size_t)HOOK_LOG_BYTES, o.call.index);
                return -1;
            }
            if (o.kind == PW_OUTPUT_TOOL_CALL) {
                print_hook(run, &o.call, NULL);
                continue;
            }
            if (o.kind == PW_OUTPUT_TOOL_RESULT) {
                print_hook(run, &o.call, &o.outcome);
                continue;
            }
            if (o.frame.route == PW_ROUTE_MODEL) {
                buf_puts(&run->line, "{\"to\":\"model\",\"frame\":");
            } else if (o.frame.route == PW_ROUTE_CONSUMER) {
                buf_puts(&run->line, "{\"to\":\"consumer\",\"frame\":");
            } else {
                buf_printf(&run->line, "{\"to\":\"adapter\",\"call\":%" PRIu32 ",\"frame\":",
                           o.frame.handle.index);
            }
            out_value(&run->line, out_frame, o.frame.len);
            buf_putc(&run->line, '}');
            emit(run);
        }
        if ((r = pw_wrapper_get_stats(w, &st)) != PW_OK) return fail(run, "stats", r);
        if (st.hook_events_dropped != 0) {
            buf_printf(&run->err, "the hook log (%zu bytes) dropped %" PRIu32 " events",
                       (size_t)HOOK_LOG_BYTES, st.hook_events_dropped);
            return -1;
        }
        while ((r = pw_wrapper_poll_event(w, &ev)) == PW_OK) started++;
        if (r != PW_NOTHING) return fail(run, "poll_event", r);
        if (started == 0) return 0;
    }
}

static void refused(struct run *run, uint64_t call) {
    buf_printf(&run->line, "{\"refused\":{\"call\":%" PRIu64 "}}", call);
    emit(run);
}

/* The pending call a step names, or NULL (never seen, or completed at once). */
static const pw_call_handle *pending_call(const struct run *run, uint64_t call) {
    if (call >= run->n_known || !run->known[call].pending) return NULL;
    return &run->known[call].handle;
}

static void remember(struct run *run, const pw_disposition *d) {
    size_t idx = d->index;
    if (idx >= run->cap_known) {
        size_t cap = run->cap_known ? run->cap_known : 16;
        while (cap <= idx) cap *= 2;
        run->known = xrealloc(run->known, cap, sizeof *run->known);
        memset(run->known + run->cap_known, 0, (cap - run->cap_known) * sizeof *run->known);
        run->cap_known = cap;
    }
    if (idx >= run->n_known) run->n_known = idx + 1;
    run->known[idx].pending = d->has_handle != 0;
    run->known[idx].handle = d->handle;
}

static int apply_wrapper_step(struct run *run, pw_wrapper *w, const struct step *st, uint64_t now) {
    pw_result r;
    const pw_call_handle *h;
    switch (st->kind) {
    case STEP_RESPONSE: {
        pw_disposition d;
        r = pw_wrapper_handle_response(w, now, bytes_of(&st->frame), st->frame.len, &d);
        if (r == PW_OK && d.kind == PW_DISPOSITION_FORWARD) {
            buf_puts(&run->line, "{\"to\":\"consumer\",\"frame\":");
            out_value(&run->line, bytes_of(&st->frame), st->frame.len);
            buf_putc(&run->line, '}');
            emit(run);
        } else if (r == PW_OK && d.kind == PW_DISPOSITION_INTERCEPTED) {
            remember(run, &d);
        } else if (r == PW_OK) {
            /* PW_DISPOSITION_HELD: the END comes back through poll_transmit. */
        } else if (is_malformed(r)) {
            buf_puts(&run->line, "{\"rejected\":{\"path\":\"response\"}}");
            emit(run);
        } else {
            return fail(run, "response refused", r);
        }
        return 0;
    }
    case STEP_REQUEST:
        r = pw_wrapper_handle_request(w, now, bytes_of(&st->frame), st->frame.len);
        if (r == PW_OK) {
            buf_puts(&run->line, "{\"to\":\"model\",\"frame\":");
            out_value(&run->line, bytes_of(&st->frame), st->frame.len);
            buf_putc(&run->line, '}');
            emit(run);
        } else if (is_malformed(r)) {
            buf_puts(&run->line, "{\"rejected\":{\"path\":\"request\"}}");
            emit(run);
        } else {
            return fail(run, "request refused", r);
        }
        return 0;
    case STEP_COMPLETE: {
        pw_outcome o;
        uint32_t completed;
        if ((h = pending_call(run, st->call)) == NULL) {
            refused(run, st->call);
            return 0;
        }
        o.is_error = st->has_error ? 1 : 0;
        o.text = str_of(&st->text);
        r = pw_wrapper_complete(w, now, *h, &o, &completed);
        if (r == PW_OK) return 0;
        if (is_waiting_error(r)) {
            refused(run, st->call);
            return 0;
        }
        return fail(run, "completion refused", r);
    }
    case STEP_ADAPTER:
        if ((h = pending_call(run, st->call)) == NULL) {
            refused(run, st->call);
            return 0;
        }
        /* The frame, then the close; a refused frame (the call is not waiting) ends the step,
         * a rejected (malformed) one does not: the call still waits (SPEC §6, §7.10). */
        if (st->has_frame) {
            r = pw_wrapper_handle_adapter_frame(w, now, *h, bytes_of(&st->frame), st->frame.len);
            if (is_malformed(r)) {
                buf_printf(&run->line, "{\"rejected\":{\"path\":\"adapter\",\"call\":%" PRIu64 "}}",
                           st->call);
                emit(run);
            } else if (is_waiting_error(r)) {
                refused(run, st->call);
                return 0;
            } else if (r != PW_OK) {
                return fail(run, "adapter frame refused", r);
            }
        }
        if (st->close) {
            /* What the frame queued comes before what the close prints. */
            if (flush_wrapper(run, w) != 0) return -1;
            r = pw_wrapper_handle_adapter_closed(w, now, *h);
            if (is_waiting_error(r)) {
                refused(run, st->call);
            } else if (r != PW_OK) {
                return fail(run, "adapter close refused", r);
            }
        }
        return 0;
    case STEP_ABORT:
        r = pw_wrapper_abort(w);
        return r == PW_OK ? 0 : fail(run, "abort refused", r);
    case STEP_CANCEL: {
        /* The replay's queue holds a whole cancel; a host with a smaller one drains and repeats. */
        size_t left = 0;
        r = pw_wrapper_cancel(w, now, bytes_of(&st->text), st->text.len, &left);
        if (r != PW_OK) return fail(run, "cancel refused", r);
        if (left > 0) {
            buf_printf(&run->err, "cancel left %zu calls pending: the output queue is full", left);
            return -1;
        }
        return 0;
    }
    case STEP_CLEAR_TRACE:
        r = pw_wrapper_clear_trace(w);
        return r == PW_OK ? 0 : fail(run, "clear_trace refused", r);
    case STEP_TICK:
        return 0;
    default:
        buf_puts(&run->err, "a call-mode step in a wrapper scenario");
        return -1;
    }
}

/* The last line: every trace entry, oldest first (an entry cut to fit is flagged). */
static int print_trace(struct run *run, pw_wrapper *w) {
    size_t i;
    buf_puts(&run->line, "{\"trace\":[");
    for (i = 0;; i++) {
        pw_trace_entry e;
        pw_result r = pw_wrapper_trace_entry(w, i, &e);
        if (r == PW_NOTHING) break;
        if (r != PW_OK) return fail(run, "trace", r);
        if (i > 0) buf_putc(&run->line, ',');
        buf_puts(&run->line, "{\"name\":");
        put_name(&run->line, e.has_name, e.name);
        buf_puts(&run->line, ",\"args\":");
        out_value(&run->line, e.args.ptr, e.args.len);
        buf_putc(&run->line, ',');
        put_outcome(&run->line, &e.outcome);
        if (e.truncated) buf_puts(&run->line, ",\"truncated\":true");
        buf_putc(&run->line, '}');
    }
    buf_puts(&run->line, "]}");
    emit(run);
    return 0;
}

static int run_wrapper(struct run *run, struct scenario *sc) {
    pw_wrapper_config cfg;
    pw_hooks hooks;
    pw_tool *tools;
    pw_wrapper *w = NULL;
    size_t size = 0, i;
    uint64_t now = 0;
    void *mem;
    pw_result r;
    int rc = -1;

    pw_wrapper_config_default(&cfg);
    cfg.tool_timeout_ms = sc->tool_timeout_ms;
    cfg.max_total_timeout_ms = sc->max_total_timeout_ms;
    cfg.mirror_continue = sc->mirror_continue ? 1 : 0;
    cfg.max_rounds = sc->max_rounds;
    cfg.full_validation = sc->full_validation ? 1 : 0;
    cfg.max_depth = MAX_DEPTH;
    cfg.name_cap = NAME_CAP;
    cfg.id_cap = NAME_CAP;
    cfg.args_cap = ARGS_CAP;
    cfg.result_cap = RESULT_CAP;
    cfg.message_cap = MESSAGE_CAP;
    cfg.trace_entries = TRACE_ENTRIES;
    cfg.trace_bytes = (size_t)TRACE_ENTRIES *
                      (TRACE_ENTRY_HEADER + NAME_CAP + ARGS_CAP +
                       (RESULT_CAP > MESSAGE_CAP ? RESULT_CAP : MESSAGE_CAP));
    cfg.held_bytes = (size_t)HELD_ENDS * (END_CAP + HELD_END_COST);

    /* The registrations (the library copies them into its block; names stay borrowed). */
    tools = xmalloc(sc->n_tools ? sc->n_tools : 1, sizeof *tools);
    for (i = 0; i < sc->n_tools; i++) {
        struct tool_spec *t = &sc->tools[i];
        tools[i].name = str_of(&t->name);
        tools[i].timeout_ms = PW_TOOL_DEFAULT_TIMEOUT;
        tools[i].call = NULL;
        tools[i].userdata = t;
        tools[i].schema.ptr = NULL; /* scenarios carry no schemas */
        tools[i].schema.len = 0;
        tools[i].schema_index = NULL;
        tools[i].schema_index_words = 0;
        if (t->kind == TOOL_DEFERRED) {
            tools[i].kind = PW_TOOL_KIND_DEFERRED;
        } else if (t->kind == TOOL_ADAPTER) {
            tools[i].kind = PW_TOOL_KIND_ADAPTER;
        } else {
            tools[i].kind = PW_TOOL_KIND_SYNC;
            tools[i].call = sync_tool;
        }
    }
    /* No hook functions: the log keeps the events for pw_wrapper_poll_output. */
    hooks.userdata = run;
    hooks.on_tool_call = NULL;
    hooks.on_tool_result = NULL;
    cfg.hook_log_bytes = HOOK_LOG_BYTES;

    r = pw_wrapper_size(&cfg, sc->max_pending, sc->n_tools, &size);
    if (r != PW_OK) {
        fail(run, "cannot build the wrapper", r);
        goto out;
    }
    if ((mem = pool_block(size, pw_wrapper_align())) == NULL) {
        buf_printf(&run->err, "cannot build the wrapper: it needs %zu bytes, the pool has %zu",
                   size, sizeof pool);
        goto out;
    }
    r = pw_wrapper_init(mem, size, &cfg, sc->max_pending, tools, sc->n_tools, &hooks, &w);
    if (r != PW_OK) {
        fail(run, "cannot build the wrapper", r);
        goto out;
    }
    if (sc->aborted && (r = pw_wrapper_abort(w)) != PW_OK) {
        fail(run, "abort refused", r);
        goto out;
    }
    for (i = 0; i < sc->n_steps; i++) {
        const struct step *st = &sc->steps[i];
        run->has_step = 1;
        run->step = i;
        if (st->has_at) now = st->at;
        /* The clock first: due timeouts fire before the step. */
        if ((r = pw_wrapper_handle_timeout(w, now)) != PW_OK) {
            fail(run, "clock", r);
            goto out;
        }
        if (flush_wrapper(run, w) != 0 || apply_wrapper_step(run, w, st, now) != 0 ||
            flush_wrapper(run, w) != 0)
            goto out;
    }
    run->has_step = 0;
    rc = print_trace(run, w);
out:
    free(tools);
    return rc;
}

/* ------------------------------------------------------------ call mode */

/* Frames for the adapter, then the settlement once it is there (printed once). */
static int flush_call(struct run *run, pw_adapter_call *call, int *settled) {
    pw_outcome o;
    pw_result r;
    for (;;) {
        size_t len = 0;
        r = pw_adapter_call_poll_transmit(call, out_frame, CALL_OUT_CAP, &len);
        if (r == PW_NOTHING) break;
        if (r == PW_BUFFER_TOO_SMALL) {
            buf_printf(&run->err, "frame of %zu bytes exceeds the output buffer", len);
            return -1;
        }
        if (r != PW_OK) return fail(run, "poll_transmit", r);
        buf_puts(&run->line, "{\"to\":\"adapter\",\"call\":0,\"frame\":");
        out_value(&run->line, out_frame, len);
        buf_putc(&run->line, '}');
        emit(run);
    }
    if (*settled) return 0;
    r = pw_adapter_call_outcome(call, &o);
    if (r == PW_NOTHING) return 0;
    if (r != PW_OK) return fail(run, "settlement", r);
    *settled = 1;
    if (o.is_error) {
        buf_puts(&run->line, "{\"settled\":{\"error\":");
        out_string(&run->line, o.text.ptr, o.text.len);
    } else {
        buf_puts(&run->line, "{\"settled\":{\"result\":");
        out_value(&run->line, o.text.ptr, o.text.len);
    }
    buf_puts(&run->line, "}}");
    emit(run);
    return 0;
}

static int run_call(struct run *run, struct scenario *sc) {
    pw_adapter_call_options opts;
    pw_adapter_call *call = NULL;
    size_t size = 0, i;
    uint64_t now = 0;
    int settled = 0;
    void *mem;
    pw_result r;

    pw_adapter_call_options_default(&opts);
    opts.name = str_of(&sc->name);
    opts.args = str_of(&sc->args);
    opts.timeout_ms = sc->timeout_ms;
    opts.max_total_timeout_ms = sc->max_total_timeout_ms;
    if (sc->has_id) {
        opts.id = str_of(&sc->id);
        opts.has_id = 1;
    }
    if ((r = pw_adapter_call_size(CALL_RESULT_CAP, &size)) != PW_OK)
        return fail(run, "cannot start the call", r);
    if ((mem = pool_block(size, pw_adapter_call_align())) == NULL) {
        buf_printf(&run->err, "cannot start the call: it needs %zu bytes, the pool has %zu", size,
                   sizeof pool);
        return -1;
    }
    /* A standalone call starts at clock 0 (SPEC §7.6). */
    if ((r = pw_adapter_call_init(mem, size, CALL_RESULT_CAP, 0, &opts, &call)) != PW_OK)
        return fail(run, "cannot start the call", r);
    if (flush_call(run, call, &settled) != 0) return -1;
    for (i = 0; i < sc->n_steps; i++) {
        const struct step *st = &sc->steps[i];
        run->has_step = 1;
        run->step = i;
        if (st->has_at) now = st->at;
        if ((r = pw_adapter_call_handle_timeout(call, now)) != PW_OK) return fail(run, "clock", r);
        if (flush_call(run, call, &settled) != 0) return -1;
        if (st->kind == STEP_CALL_FRAME) {
            r = pw_adapter_call_handle_frame(call, now, bytes_of(&st->frame), st->frame.len);
        } else if (st->kind == STEP_CALL_CLOSE) {
            r = pw_adapter_call_handle_closed(call, now);
        } else if (st->kind == STEP_TICK) {
            r = PW_OK;
        } else {
            buf_puts(&run->err, "a wrapper step in a call scenario");
            return -1;
        }
        /* After the settlement input is refused and nothing is printed (SPEC §7.21). */
        if (is_malformed(r)) {
            buf_puts(&run->line, "{\"rejected\":{\"path\":\"adapter\",\"call\":0}}");
            emit(run);
        } else if (r != PW_OK && r != PW_CALL_COMPLETED && r != PW_CALL_TIMED_OUT) {
            return fail(run, "adapter input refused", r);
        }
        if (flush_call(run, call, &settled) != 0) return -1;
    }
    return 0;
}

/* ------------------------------------------------------------ main */

/* The one line on stderr: the file, the step (when a step failed), why. */
static void print_error(const char *file, const struct run *run) {
    fprintf(stderr, "pw-replay: %s: ", file);
    if (run->has_step) fprintf(stderr, "step %zu: ", run->step);
    if (run->err.len > 0) fwrite(run->err.p, 1, run->err.len, stderr);
    fputc('\n', stderr);
}

int main(int argc, char **argv) {
    struct scenario sc;
    struct run run;
    const char *file;
    int rc;

    if (argc == 2 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
        printf("usage: pw-replay SCENARIO.json\n");
        return 0;
    }
    if (argc != 2) {
        fprintf(stderr, "usage: pw-replay SCENARIO.json\n");
        return 2;
    }
    file = argv[1];
    buf_set_file(file);
    memset(&run, 0, sizeof run);
    if (scenario_load(file, &sc, &run.err) != 0) {
        print_error(file, &run);
        buf_free(&run.err);
        return 2;
    }
    rc = sc.call_mode ? run_call(&run, &sc) : run_wrapper(&run, &sc);
    fflush(stdout);
    if (rc != 0) print_error(file, &run);
    free(run.known);
    buf_free(&run.line);
    buf_free(&run.err);
    scenario_free(&sc);
    return rc == 0 ? 0 : 2;
}
