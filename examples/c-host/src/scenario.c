#include "scenario.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "out.h"

/* No object to read options from: every option takes its default. */
#define NO_OBJECT ((size_t)-1)

struct reader {
    struct json_doc doc;
    struct buf *err;
};

static int failf(struct reader *r, const char *msg) {
    buf_puts(r->err, msg);
    return -1;
}

static enum json_type type_of(const struct reader *r, size_t node) {
    return r->doc.nodes[node].type;
}

/* The raw text of a value, copied into `out`. */
static void raw_copy(const struct reader *r, size_t node, struct buf *out) {
    size_t len;
    const unsigned char *raw = json_raw(&r->doc, node, &len);
    buf_put(out, raw, len);
}

/* A frame: a string is the frame's text (decoded), anything else is its text as written. */
static void frame_copy(const struct reader *r, size_t node, struct buf *out) {
    if (type_of(r, node) == J_STRING) {
        json_node_string(&r->doc, node, out);
    } else {
        raw_copy(r, node, out);
    }
}

/* A whole number of at most 4294967295, `def` when absent. */
static int u32_opt(struct reader *r, size_t obj, const char *key, uint32_t def, uint32_t *out) {
    size_t v = obj != NO_OBJECT ? json_get(&r->doc, obj, key) : 0;
    uint64_t n;
    if (v == 0) {
        *out = def;
        return 0;
    }
    if (json_u64(&r->doc, v, &n) != 0 || n > UINT32_MAX) {
        buf_printf(r->err, "%s must be a whole number of at most 4294967295", key);
        return -1;
    }
    *out = (uint32_t)n;
    return 0;
}

static int bool_opt(struct reader *r, size_t obj, const char *key, int def, int *out) {
    size_t v = obj != NO_OBJECT ? json_get(&r->doc, obj, key) : 0;
    if (v == 0) {
        *out = def;
        return 0;
    }
    if (type_of(r, v) != J_TRUE && type_of(r, v) != J_FALSE) {
        buf_printf(r->err, "%s must be true or false", key);
        return -1;
    }
    *out = type_of(r, v) == J_TRUE;
    return 0;
}

/* Whether the member is `true`. */
static int is_true(const struct reader *r, size_t obj, const char *key) {
    size_t v = json_get(&r->doc, obj, key);
    return v != 0 && type_of(r, v) == J_TRUE;
}

static int call_index(struct reader *r, size_t step, const char *key, uint64_t *out) {
    size_t v = json_get(&r->doc, step, key);
    if (v == 0 || json_u64(&r->doc, v, out) != 0) {
        buf_printf(r->err, "%s must be a call number (0 or more)", key);
        return -1;
    }
    return 0;
}

static int parse_step(struct reader *r, size_t node, int call_mode, struct step *st) {
    const struct json_doc *d = &r->doc;
    size_t v;
    if (type_of(r, node) != J_OBJECT) return failf(r, "a step must be an object");
    if ((v = json_get(d, node, "at")) != 0) {
        if (json_u64(d, v, &st->at) != 0)
            return failf(r, "at must be a whole number of milliseconds");
        st->has_at = 1;
    }
    if (call_mode) {
        if ((v = json_get(d, node, "frame")) != 0) {
            st->kind = STEP_CALL_FRAME;
            frame_copy(r, v, &st->frame);
        } else if (is_true(r, node, "close")) {
            st->kind = STEP_CALL_CLOSE;
        } else if (is_true(r, node, "tick")) {
            st->kind = STEP_TICK;
        } else {
            return failf(r, "a call step needs frame, close: true or tick: true");
        }
    } else if ((v = json_get(d, node, "response")) != 0) {
        st->kind = STEP_RESPONSE;
        frame_copy(r, v, &st->frame);
    } else if ((v = json_get(d, node, "request")) != 0) {
        st->kind = STEP_REQUEST;
        frame_copy(r, v, &st->frame);
    } else if (json_get(d, node, "complete") != 0) {
        /* An error (not null) fails the call: a string decoded, anything else as written. */
        st->kind = STEP_COMPLETE;
        if ((v = json_get(d, node, "error")) != 0 && !json_raw_is(d, v, "null")) {
            st->has_error = 1;
            frame_copy(r, v, &st->text);
        } else if ((v = json_get(d, node, "result")) != 0) {
            raw_copy(r, v, &st->text);
        } else {
            buf_puts(&st->text, "null");
        }
        if (call_index(r, node, "complete", &st->call) != 0) return -1;
    } else if (json_get(d, node, "adapter") != 0) {
        st->kind = STEP_ADAPTER;
        if (call_index(r, node, "adapter", &st->call) != 0) return -1;
        if ((v = json_get(d, node, "frame")) != 0) {
            st->has_frame = 1;
            frame_copy(r, v, &st->frame);
        }
        st->close = is_true(r, node, "close");
        if (!st->has_frame && !st->close)
            return failf(r, "an adapter step needs frame or close: true");
    } else if (is_true(r, node, "abort")) {
        st->kind = STEP_ABORT;
    } else if ((v = json_get(d, node, "cancel")) != 0) {
        st->kind = STEP_CANCEL;
        if (type_of(r, v) != J_STRING) return failf(r, "cancel must be a string (the reason)");
        json_node_string(d, v, &st->text);
    } else if (is_true(r, node, "clearTrace")) {
        st->kind = STEP_CLEAR_TRACE;
    } else if (is_true(r, node, "tick")) {
        st->kind = STEP_TICK;
    } else {
        return failf(r, "unknown step: expected response, request, complete, adapter, abort, "
                        "cancel, clearTrace or tick");
    }
    return 0;
}

static int parse_steps(struct reader *r, size_t root, struct scenario *sc) {
    size_t arr = json_get(&r->doc, root, "steps"), node, n = 0, i = 0;
    uint64_t clock = 0;
    if (arr == 0 || type_of(r, arr) != J_ARRAY) return failf(r, "steps must be an array");
    for (node = r->doc.nodes[arr].first; node != 0; node = r->doc.nodes[node].next) n++;
    sc->steps = xmalloc(n, sizeof *sc->steps);
    memset(sc->steps, 0, n * sizeof *sc->steps);
    sc->n_steps = n;
    for (node = r->doc.nodes[arr].first; node != 0; node = r->doc.nodes[node].next, i++) {
        struct step *st = &sc->steps[i];
        size_t mark = r->err->len;
        if (parse_step(r, node, sc->call_mode, st) != 0) {
            /* "step N: " before the reason. */
            struct buf reason = BUF_INIT;
            buf_put(&reason, r->err->p + mark, r->err->len - mark);
            r->err->len = mark;
            buf_printf(r->err, "step %zu: ", i);
            buf_put(r->err, reason.p, reason.len);
            buf_free(&reason);
            return -1;
        }
        if (st->has_at) {
            if (st->at < clock) {
                buf_printf(r->err,
                           "step %zu: at %" PRIu64 " is earlier than the previous step's %" PRIu64,
                           i, st->at, clock);
                return -1;
            }
            clock = st->at;
        }
    }
    return 0;
}

static int parse_tool(struct reader *r, size_t node, struct tool_spec *t) {
    const struct json_doc *d = &r->doc;
    struct buf kind = BUF_INIT;
    size_t v = type_of(r, node) == J_OBJECT ? json_get(d, node, "kind") : 0;
    int rc = 0;
    if (v != 0 && type_of(r, v) == J_STRING) json_node_string(d, v, &kind);
    if (v != 0 && type_of(r, v) == J_STRING && buf_is(&kind, "deferred")) {
        t->kind = TOOL_DEFERRED;
    } else if (v != 0 && type_of(r, v) == J_STRING && buf_is(&kind, "adapter")) {
        t->kind = TOOL_ADAPTER;
    } else if (v != 0 && type_of(r, v) == J_STRING && buf_is(&kind, "sync")) {
        if ((v = json_get(d, node, "error")) != 0 && !json_raw_is(d, v, "null")) {
            t->kind = TOOL_SYNC_ERROR;
            frame_copy(r, v, &t->text);
        } else if (is_true(r, node, "echo")) {
            t->kind = TOOL_SYNC_ECHO;
        } else {
            t->kind = TOOL_SYNC_RESULT;
            if ((v = json_get(d, node, "result")) != 0) {
                raw_copy(r, v, &t->text);
            } else {
                buf_puts(&t->text, "null");
            }
        }
    } else {
        buf_puts(r->err, "tool ");
        out_string(r->err, t->name.p, t->name.len);
        buf_puts(r->err, ": kind must be sync, deferred or adapter");
        rc = -1;
    }
    buf_free(&kind);
    return rc;
}

static int same(const struct buf *a, const struct buf *b) {
    return a->len == b->len && (a->len == 0 || memcmp(a->p, b->p, a->len) == 0);
}

/* The tools in the order their names first appear, each with its last spec. */
static int parse_tools(struct reader *r, size_t map, struct scenario *sc) {
    const struct json_doc *d = &r->doc;
    struct buf *names;
    size_t *members, m, n = 0, i, k, last;
    int rc = 0;
    for (m = d->nodes[map].first; m != 0; m = d->nodes[m].next) n++;
    names = xmalloc(n, sizeof *names);
    members = xmalloc(n, sizeof *members);
    for (m = d->nodes[map].first, i = 0; m != 0; m = d->nodes[m].next, i++) {
        const struct json_node *member = &d->nodes[m];
        struct buf empty = BUF_INIT;
        names[i] = empty;
        members[i] = m;
        json_string_decode(d->text + member->key_start, member->key_end - member->key_start,
                           &names[i]);
    }
    sc->tools = xmalloc(n, sizeof *sc->tools);
    memset(sc->tools, 0, n * sizeof *sc->tools);
    for (i = 0; i < n && rc == 0; i++) {
        struct tool_spec *t;
        for (k = 0; k < i && !same(&names[k], &names[i]); k++) {
        }
        if (k < i) continue; /* a repeated name keeps its first place */
        for (k = i + 1, last = i; k < n; k++)
            if (same(&names[k], &names[i])) last = k;
        t = &sc->tools[sc->n_tools++];
        buf_put(&t->name, names[i].p, names[i].len);
        rc = parse_tool(r, members[last], t);
    }
    for (i = 0; i < n; i++) buf_free(&names[i]);
    free(names);
    free(members);
    return rc;
}

static int parse_wrapper(struct reader *r, size_t root, struct scenario *sc) {
    size_t opts = json_get(&r->doc, root, "options"), tools;
    uint32_t pending;
    if (opts == 0) opts = NO_OBJECT;
    if (opts != NO_OBJECT && type_of(r, opts) != J_OBJECT)
        return failf(r, "options must be an object");
    if ((tools = json_get(&r->doc, root, "tools")) != 0) {
        if (type_of(r, tools) != J_OBJECT) return failf(r, "tools must be an object");
        if (parse_tools(r, tools, sc) != 0) return -1;
    }
    if (bool_opt(r, opts, "mirrorContinue", 1, &sc->mirror_continue) != 0 ||
        u32_opt(r, opts, "toolTimeoutMs", 30000, &sc->tool_timeout_ms) != 0 ||
        u32_opt(r, opts, "maxTotalTimeoutMs", 0, &sc->max_total_timeout_ms) != 0 ||
        u32_opt(r, opts, "maxPending", 8, &pending) != 0)
        return -1;
    if (pending > MAX_PENDING) {
        buf_printf(r->err, "maxPending %" PRIu32 " exceeds the replay's %u slots", pending,
                   MAX_PENDING);
        return -1;
    }
    sc->max_pending = pending;
    if (u32_opt(r, opts, "maxRounds", 0, &sc->max_rounds) != 0 ||
        bool_opt(r, opts, "aborted", 0, &sc->aborted) != 0 ||
        bool_opt(r, opts, "fullValidation", 0, &sc->full_validation) != 0)
        return -1;
    return parse_steps(r, root, sc);
}

static int parse_call(struct reader *r, size_t root, struct scenario *sc) {
    const struct json_doc *d = &r->doc;
    size_t v;
    sc->call_mode = 1;
    if ((v = json_get(d, root, "name")) == 0) {
        buf_puts(&sc->name, "unknown");
    } else if (type_of(r, v) == J_STRING) {
        json_node_string(d, v, &sc->name);
    } else {
        return failf(r, "name must be a string");
    }
    if (u32_opt(r, root, "timeoutMs", 30000, &sc->timeout_ms) != 0 ||
        u32_opt(r, root, "maxTotalTimeoutMs", 0, &sc->max_total_timeout_ms) != 0)
        return -1;
    if ((v = json_get(d, root, "id")) != 0 && !json_raw_is(d, v, "null")) {
        if (type_of(r, v) != J_STRING) return failf(r, "id must be a string");
        sc->has_id = 1;
        json_node_string(d, v, &sc->id);
    }
    if ((v = json_get(d, root, "args")) != 0) {
        raw_copy(r, v, &sc->args);
    } else {
        buf_puts(&sc->args, "{}");
    }
    return parse_steps(r, root, sc);
}

static int read_file(const char *path, struct buf *out, struct buf *err) {
    FILE *f = fopen(path, "rb");
    unsigned char chunk[65536];
    size_t n;
    int bad;
    if (f == NULL) {
        buf_printf(err, "cannot read: %s", strerror(errno));
        return -1;
    }
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) buf_put(out, chunk, n);
    bad = ferror(f);
    fclose(f);
    if (bad) {
        buf_puts(err, "cannot read: read error");
        return -1;
    }
    return 0;
}

int scenario_load(const char *path, struct scenario *sc, struct buf *err) {
    struct buf file = BUF_INIT, mode = BUF_INIT;
    struct reader r;
    struct json_error jerr;
    size_t v;
    int rc = -1;

    memset(sc, 0, sizeof *sc);
    r.err = err;
    if (read_file(path, &file, err) != 0) {
        buf_free(&file);
        return -1;
    }
    if (json_parse(file.p, file.len, &r.doc, &jerr) != 0) {
        buf_printf(err, "not JSON: %s at byte %zu", jerr.what, jerr.offset);
        buf_free(&file);
        return -1;
    }
    if (type_of(&r, 0) != J_OBJECT) {
        failf(&r, "a scenario must be a JSON object");
        goto out;
    }
    /* A missing mode means a wrapper. */
    if ((v = json_get(&r.doc, 0, "mode")) != 0 && type_of(&r, v) == J_STRING)
        json_node_string(&r.doc, v, &mode);
    if (v == 0 || (type_of(&r, v) == J_STRING && buf_is(&mode, "wrapper"))) {
        rc = parse_wrapper(&r, 0, sc);
    } else if (type_of(&r, v) == J_STRING && buf_is(&mode, "call")) {
        rc = parse_call(&r, 0, sc);
    } else {
        failf(&r, "mode must be \"wrapper\" or \"call\"");
    }
out:
    buf_free(&mode);
    json_free(&r.doc);
    buf_free(&file);
    if (rc != 0) scenario_free(sc);
    return rc;
}

void scenario_free(struct scenario *sc) {
    size_t i;
    for (i = 0; i < sc->n_tools; i++) {
        buf_free(&sc->tools[i].name);
        buf_free(&sc->tools[i].text);
    }
    free(sc->tools);
    for (i = 0; i < sc->n_steps; i++) {
        buf_free(&sc->steps[i].frame);
        buf_free(&sc->steps[i].text);
    }
    free(sc->steps);
    buf_free(&sc->name);
    buf_free(&sc->id);
    buf_free(&sc->args);
    memset(sc, 0, sizeof *sc);
}
