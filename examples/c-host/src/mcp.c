/*
 * pw-mcp: an MCP server's tools as a wrapper's adapter tools, through the C API only
 * (include/polyweave_tool_adapter.h). The Rust twin is examples/polyweave-mcp (same flags,
 * same output).
 *
 *     pw-mcp [--timeout-ms T] [--max-total-ms M] [--extra-tool NAME]... -- SERVER CMD...
 *
 * Runs the server with its stdin and stdout on pipes (POSIX), starts an MCP client over
 * them (SPEC §9) and registers every tool the server lists as an adapter tool of a wrapper
 * (SPEC §3). Then reads the model's frames, NDJSON, from stdin and prints what the wrapper
 * sends, one SPEC §6 event a line on stdout: `{"to":"model","frame":F}` and
 * `{"to":"consumer","frame":F}` (frames the wrapper forwards included), and
 * `{"rejected":{"path":"response"}}` for a malformed model frame. The server's lines are
 * served as they come; calls time out after T ms (default 30000) without progress, never
 * later than M ms after they started (default 0: progress restarts nothing). `--extra-tool
 * NAME` also registers NAME, unlisted, so calls to it reach the server (which answers for a
 * name it does not know). When stdin has ended and no call is pending, it closes the
 * server's stdin and waits for it (killing it after 5 s). A server that dies fails the calls
 * in flight with `Tool <name> failed: the MCP server closed the connection`, later ones at
 * once.
 *
 * Exit codes: 0 when stdin was served to its end; 2 for bad arguments, a server that cannot
 * be started, or a start-up that fails or takes over 10 s (one line on stderr says why); 1
 * when stdout cannot be written.
 *
 * Memory: the wrapper, the client, the line splitter and every buffer are static, sized at
 * compile time and checked against the library's _size() queries at start-up; nothing
 * comes from malloc.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "polyweave_tool_adapter.h"

#include "mcp_print.h"
#include "mcp_proc.h"

/* ------------------------------------------------------------ capacities */

/* The Rust twin's capacities, so that both say the same (limits appear in messages). */
#define SLOTS 16u                   /* calls pending at once (wrapper and client slots) */
#define MAX_TOOLS 512u              /* tools registered */
#define NAME_CAP 256u               /* bytes of a tool name */
#define ID_CAP NAME_CAP             /* bytes of a call id */
#define ARGS_CAP (64u * 1024u)      /* bytes of a call's args */
#define LINE_CAP (1024u * 1024u)    /* bytes of a line from the server (a tools/list page, a result) */
#define RESULT_CAP LINE_CAP         /* bytes of a result: as long as a line can carry */
#define MESSAGE_CAP (64u * 1024u)   /* bytes of an error message */
#define TRACE_ENTRIES 4u
#define TRACE_BYTES (16u * 1024u)
#define HELD_BYTES (64u * 1024u)    /* ENDs held while calls are pending */
/* Lines waiting for the server: every slot's tools/call, or its notifications/cancelled. */
#define OUTBOX_CAP (SLOTS * (ARGS_CAP + 6u * NAME_CAP + 256u + PW_MCP_MIN_OUTBOX + 12u))
#define CURSOR_CAP 4096u            /* a tools/list cursor */
#define IN_LINE_CAP (1024u * 1024u) /* a model frame */
#define STARTUP_MS 10000u           /* for server/discover, initialize and tools/list */
#define GRACE_MS 5000               /* for the server to exit once its stdin is closed */

/* The wrapper's and the client's capacities under the names the header's size macros read
 * (PW_WRAPPER_SIZE_BOUND(P, ...) reads P_NAME_CAP and so on). */
#define WRAPPER_NAME_CAP NAME_CAP
#define WRAPPER_ID_CAP ID_CAP
#define WRAPPER_ARGS_CAP ARGS_CAP
#define WRAPPER_RESULT_CAP RESULT_CAP
#define WRAPPER_MESSAGE_CAP MESSAGE_CAP
#define WRAPPER_TRACE_BYTES TRACE_BYTES
#define WRAPPER_HELD_BYTES HELD_BYTES
#define WRAPPER_HOOK_LOG_BYTES 0u
#define CLIENT_LINE_CAP LINE_CAP
#define CLIENT_OUTBOX_CAP OUTBOX_CAP
#define CLIENT_NAME_CAP NAME_CAP
#define CLIENT_CURSOR_CAP CURSOR_CAP
#define CLIENT_HEADER_TABLE_CAP 0u /* a line client: no x-mcp-header table */
#define WRAPPER_BYTES PW_WRAPPER_SIZE_BOUND(WRAPPER, SLOTS, MAX_TOOLS)
#define WRAPPER_FRAME_CAP PW_WRAPPER_MAX_FRAME_LEN(WRAPPER)
#define CLIENT_BYTES PW_MCP_SIZE_BOUND(CLIENT, SLOTS)
/* The longest frame the client writes: an error message from a line's texts, escaped. */
#define CLIENT_FRAME_CAP (6u * LINE_CAP + 6u * NAME_CAP + 160u)
/* The longest line it writes: a queued request, or a reply echoing a line's id. */
#define TX_CAP (LINE_CAP + OUTBOX_CAP + 1024u)
/* Frames from the wrapper the client has not taken yet (it may ask to be polled first). */
#define FIFO_BYTES (2u * (WRAPPER_FRAME_CAP + 64u))

static uint64_t wrapper_mem[WRAPPER_BYTES / sizeof(uint64_t) + 1];
static uint64_t client_mem[CLIENT_BYTES / sizeof(uint64_t) + 1];
static uint64_t splitter_mem[PW_LINE_SPLITTER_SIZE_BOUND / sizeof(uint64_t) + 1];
static uint8_t in_line[IN_LINE_CAP];
static uint8_t in_buf[64 * 1024];
static uint8_t rx[64 * 1024];
static uint8_t tx[TX_CAP];
static uint8_t wrapper_out[WRAPPER_FRAME_CAP];
static uint8_t client_out[CLIENT_FRAME_CAP];
static uint8_t fifo[FIFO_BYTES];

static pw_tool tools[MAX_TOOLS];
static char names[MAX_TOOLS][NAME_CAP];

/* ------------------------------------------------------------ state */

static struct {
    pw_wrapper *w;        /* NULL during the start-up */
    pw_mcp *c;
    pw_line_splitter *splitter;
    struct server srv;
    size_t n_tools;
    int ready, start_failed;
    int closed;           /* the client was told the transport closed */
    /* stdin */
    int stdin_eof, stdin_done, have_line;
    const uint8_t *line;
    size_t line_len, in_len, in_off;
    /* the server's bytes: read and not yet fed; the line being written */
    size_t rx_len, rx_off, tx_len, tx_off;
    /* a frame of the client the wrapper could not take yet (in client_out) */
    int held;
    pw_mcp_frame held_frame;
    size_t fifo_start, fifo_end;
} st;

/* ------------------------------------------------------------ frames for the client */

struct fifo_head {
    size_t len;
    uint32_t index;
    uint16_t slot;
};

static size_t fifo_room(void) { return sizeof fifo - (st.fifo_end - st.fifo_start); }

static void fifo_push(uint16_t slot, uint32_t index, const uint8_t *bytes, size_t len) {
    struct fifo_head h;
    if (st.fifo_end + sizeof h + len > sizeof fifo) {
        memmove(fifo, fifo + st.fifo_start, st.fifo_end - st.fifo_start);
        st.fifo_end -= st.fifo_start;
        st.fifo_start = 0;
    }
    h.len = len;
    h.index = index;
    h.slot = slot;
    memcpy(fifo + st.fifo_end, &h, sizeof h);
    memcpy(fifo + st.fifo_end + sizeof h, bytes, len);
    st.fifo_end += sizeof h + len;
}

static int fifo_front(struct fifo_head *h, const uint8_t **bytes) {
    if (st.fifo_start == st.fifo_end) return 0;
    memcpy(h, fifo + st.fifo_start, sizeof *h);
    *bytes = fifo + st.fifo_start + sizeof *h;
    return 1;
}

static void fifo_pop(const struct fifo_head *h) {
    st.fifo_start += sizeof *h + h->len;
    if (st.fifo_start == st.fifo_end) st.fifo_start = st.fifo_end = 0;
}

/* ------------------------------------------------------------ the pump */

/* A bug (the buffers are sized for every output): said, and the end. */
static void die_code(const char *what, pw_result r) {
    note_code(what, (uint32_t)r);
    fflush(stdout);
    exit(1);
}

/* Stdout is gone: nothing more can be said. */
static void flush_stdout(void) {
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "pw-mcp: cannot write stdout\n");
        exit(1);
    }
}

/* The transport is gone: calls in flight fail, later ones at once. */
static void transport_closed(void) {
    if (!st.closed) pw_mcp_handle_closed(st.c);
    st.closed = 1;
    st.rx_len = st.rx_off = st.tx_len = st.tx_off = 0;
    server_close_input(&st.srv);
    server_close_output(&st.srv);
}

/* What the wrapper sends: model and consumer frames printed, adapter frames queued for the
 * client. */
static int drain_wrapper(void) {
    int moved = 0;
    pw_transmit t;
    pw_event ev;
    pw_result r;
    if (st.w == NULL) return 0;
    while (fifo_room() >= sizeof(struct fifo_head) + sizeof wrapper_out) {
        r = pw_wrapper_poll_transmit(st.w, wrapper_out, sizeof wrapper_out, &t);
        if (r == PW_NOTHING) break;
        if (r != PW_OK) die_code("the wrapper's output", r);
        moved = 1;
        if (t.route == PW_ROUTE_MODEL) {
            print_event("model", wrapper_out, t.len);
        } else if (t.route == PW_ROUTE_CONSUMER) {
            print_event("consumer", wrapper_out, t.len);
        } else {
            fifo_push(t.handle.slot, t.handle.index, wrapper_out, t.len);
        }
    }
    /* Adapter calls started: their TOOL_CALL is among the frames. */
    while (pw_wrapper_poll_event(st.w, &ev) == PW_OK) moved = 1;
    return moved;
}

/* The wrapper's adapter frames into the client, in order, while it takes them. */
static int frames_to_client(void) {
    int moved = 0;
    struct fifo_head h;
    const uint8_t *bytes;
    while (fifo_front(&h, &bytes)) {
        pw_mcp_handled handled;
        pw_result r = pw_mcp_handle_frame(st.c, h.slot, h.index, bytes, h.len, &handled);
        /* Taken once its lines are written, or its last failure polled. */
        if (r == PW_MCP_OUTBOX_FULL || r == PW_MCP_FRAME_PENDING) break;
        /* A CANCEL for a call the client already ended: nothing to tell. */
        if (r != PW_OK && r != PW_MCP_UNKNOWN_CALL) note_code("an adapter frame the MCP client refused", r);
        fifo_pop(&h);
        moved = 1;
    }
    return moved;
}

/* A tool registered as an adapter tool (once: `twice` is said of a second one, if set). */
static void add_tool(pw_str name, const char *twice) {
    size_t i;
    for (i = 0; i < st.n_tools; i++) {
        if (tools[i].name.len == name.len && memcmp(tools[i].name.ptr, name.ptr, name.len) == 0) {
            if (twice != NULL) note(twice, name.ptr, name.len);
            return;
        }
    }
    if (st.n_tools == MAX_TOOLS || name.len > NAME_CAP) {
        note("too many tools, skipped: ", name.ptr, name.len);
        return;
    }
    memcpy(names[st.n_tools], name.ptr, name.len);
    tools[st.n_tools].name.ptr = (const uint8_t *)names[st.n_tools];
    tools[st.n_tools].name.len = name.len;
    tools[st.n_tools].kind = PW_TOOL_KIND_ADAPTER;
    tools[st.n_tools].timeout_ms = PW_TOOL_DEFAULT_TIMEOUT;
    tools[st.n_tools].call = NULL;
    tools[st.n_tools].userdata = NULL;
    st.n_tools++;
}

static void start_failed(const pw_mcp_event *ev) {
    static const char *const why[] = {
        "failed",
        "the server chose a protocol revision this client does not speak: ",
        "the server's answer lacks what the start-up needs: ",
        "the server refused the start-up: ",
        "a tools/list cursor is longer than the client keeps",
        "the server never stops paging tools/list",
        "the server's answer is longer or deeper than the client reads",
        "the server did not answer server/discover (the client is fixed to 2026-07-28)",
    };
    unsigned k = (unsigned)ev->start_error;
    note(k < sizeof why / sizeof why[0] ? why[k] : why[0], ev->raw.ptr, ev->raw.len);
    st.start_failed = 1;
}

/* Start-up, listed tools, notifications. */
static int client_events(void) {
    int moved = 0;
    pw_mcp_event ev;
    while (pw_mcp_poll_event(st.c, &ev) == PW_OK) {
        moved = 1;
        switch (ev.kind) {
        case PW_MCP_EVENT_TOOL:
            /* Listed again after a change (TOOLS_CHANGED follows): the wrapper is built. */
            if (!st.ready) add_tool(ev.name, "a tool listed twice, registered once: ");
            break;
        case PW_MCP_EVENT_TOOL_SKIPPED:
            note(ev.skip == PW_MCP_SKIP_NAME_TOO_LONG ? "a tool whose name is too long, skipped: "
                                                      : "a tool without a name, skipped: ",
                 ev.raw.ptr, ev.raw.len);
            break;
        case PW_MCP_EVENT_READY:
            st.ready = 1;
            break;
        case PW_MCP_EVENT_TOOLS_CHANGED:
            /* The wrapper's tools are fixed once it is built: the ones listed at start-up
             * are served (one removed since fails at the server with its own error). */
            break;
        case PW_MCP_EVENT_START_FAILED:
            start_failed(&ev);
            break;
        default:
            /* INITIALIZED, and notifications: nothing to do. */
            break;
        }
    }
    return moved;
}

/* The client's frames into the wrapper; one it cannot take yet waits for a drain. */
static int frames_to_wrapper(uint64_t now) {
    int moved = 0;
    if (st.w == NULL) return 0;
    for (;;) {
        pw_call_handle h;
        pw_result r;
        if (!st.held) {
            r = pw_mcp_poll_frame(st.c, client_out, sizeof client_out, &st.held_frame);
            if (r == PW_NOTHING) break;
            if (r != PW_OK) die_code("the MCP client's frames", r);
            st.held = 1;
            moved = 1;
        }
        h.index = st.held_frame.index;
        h.slot = st.held_frame.slot;
        h.reserved = 0;
        h.owner = (size_t)(uintptr_t)st.w;
        r = pw_wrapper_handle_adapter_frame(st.w, now, h, client_out, st.held_frame.len);
        if (r == PW_QUEUE_FULL) break;
        st.held = 0;
        moved = 1;
        /* A call that timed out meanwhile refuses its frames: nothing lost. */
        if (r != PW_OK && !pw_result_is_not_waiting((uint32_t)r))
            note_code("a frame the wrapper refused from the MCP client", r);
    }
    return moved;
}

/* Lines for the server, written as far as its pipe takes them. */
static int client_transmit(void) {
    int moved = 0;
    while (st.srv.in_fd >= 0) {
        ssize_t n;
        if (st.tx_off == st.tx_len) {
            size_t len = 0;
            pw_result r = pw_mcp_poll_transmit(st.c, tx, sizeof tx, &len);
            st.tx_off = st.tx_len = 0;
            if (r == PW_NOTHING) break;
            if (r != PW_OK) die_code("the MCP client's lines", r);
            st.tx_len = len;
            moved = 1;
        }
        n = write(st.srv.in_fd, tx + st.tx_off, st.tx_len - st.tx_off);
        if (n > 0) {
            st.tx_off += (size_t)n;
            moved = 1;
        } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
            break;
        } else {
            transport_closed();
            return 1;
        }
    }
    return moved;
}

/* The server's bytes into the client, one line at a time. */
static int client_feed(void) {
    size_t used = 0;
    if (st.rx_off == st.rx_len) return 0;
    if (pw_mcp_feed(st.c, rx + st.rx_off, st.rx_len - st.rx_off, &used) != PW_OK) return 0;
    st.rx_off += used;
    if (st.rx_off == st.rx_len) st.rx_off = st.rx_len = 0;
    return used > 0;
}

/* Moves everything that can move until nothing does (SPEC polling order: after every input,
 * drain each output). */
static void pump(uint64_t now) {
    int moved;
    do {
        moved = drain_wrapper();
        moved |= frames_to_client();
        moved |= client_events();
        moved |= frames_to_wrapper(now);
        moved |= client_transmit();
        moved |= client_feed();
    } while (moved);
}

/* ------------------------------------------------------------ the model's frames */

/* The next model frame from stdin into st.line, when one is complete. */
static int next_model_line(void) {
    for (;;) {
        pw_result r;
        int finishing = st.stdin_eof && st.in_off == st.in_len;
        if (st.stdin_done) return 0;
        r = finishing ? pw_line_splitter_finish(st.splitter, &st.line, &st.line_len)
                      : pw_line_splitter_next_line(st.splitter, &st.line, &st.line_len);
        if (r == PW_OK) {
            st.have_line = 1;
            return 1;
        }
        if (r == PW_LINE_TOO_LONG) {
            fprintf(stderr, "pw-mcp: a model frame of %zu bytes exceeds %u bytes: dropped\n",
                    st.line_len, (unsigned)IN_LINE_CAP);
            continue;
        }
        if (finishing) {
            st.stdin_done = 1;
            return 0;
        }
        if (st.in_off < st.in_len) {
            size_t used = 0;
            pw_line_splitter_feed(st.splitter, in_buf + st.in_off, st.in_len - st.in_off, &used);
            st.in_off += used;
            if (st.in_off == st.in_len) st.in_off = st.in_len = 0;
            if (used > 0) continue;
        }
        return 0;
    }
}

/* Every model frame that is in, each followed by a pump. */
static void model_frames(uint64_t now) {
    while (st.have_line || next_model_line()) {
        pw_disposition d;
        pw_result r = pw_wrapper_handle_response(st.w, now, st.line, st.line_len, &d);
        if (r == PW_QUEUE_FULL) {
            /* A drained queue takes any input; the drain may wait for the server. */
            pump(now);
            r = pw_wrapper_handle_response(st.w, now, st.line, st.line_len, &d);
            if (r == PW_QUEUE_FULL) return;
        }
        st.have_line = 0;
        if (r == PW_OK && d.kind == PW_DISPOSITION_FORWARD) {
            print_event("consumer", st.line, st.line_len);
        } else if (pw_result_is_malformed((uint32_t)r)) {
            print_rejected();
        } else if (r != PW_OK) {
            note_code("a model frame the wrapper refused", r);
        }
        pump(now);
    }
}

/* ------------------------------------------------------------ waiting */

/* Waits up to `timeout_ms` (-1: no limit) for stdin or the server, and moves their bytes;
 * -1 when there is nothing to wait for and no limit (nothing can ever move). */
static int wait_io(int timeout_ms) {
    struct pollfd p[3];
    int n = 0, in = -1, out = -1, srv_in = -1;
    size_t room;
    if (st.rx_off > 0) {
        memmove(rx, rx + st.rx_off, st.rx_len - st.rx_off);
        st.rx_len -= st.rx_off;
        st.rx_off = 0;
    }
    room = sizeof rx - st.rx_len;
    if (st.w != NULL && !st.stdin_eof && st.in_len == 0) {
        p[n].fd = 0;
        p[n].events = POLLIN;
        in = n++;
    }
    if (st.srv.out_fd >= 0 && room > 0) {
        p[n].fd = st.srv.out_fd;
        p[n].events = POLLIN;
        out = n++;
    }
    if (st.srv.in_fd >= 0 && st.tx_off < st.tx_len) {
        p[n].fd = st.srv.in_fd;
        p[n].events = POLLOUT;
        srv_in = n++;
    }
    flush_stdout();
    if (n == 0 && timeout_ms < 0) return -1;
    if (poll(p, (nfds_t)n, timeout_ms) <= 0) return 0;
    if (in >= 0 && p[in].revents != 0) {
        ssize_t k = read(0, in_buf, sizeof in_buf);
        if (k > 0) {
            st.in_len = (size_t)k;
            st.in_off = 0;
        } else if (k == 0 || (errno != EINTR && errno != EAGAIN)) {
            st.stdin_eof = 1;
        }
    }
    if (out >= 0 && p[out].revents != 0) {
        ssize_t k = read(st.srv.out_fd, rx + st.rx_len, room);
        if (k > 0) {
            st.rx_len += (size_t)k;
        } else if (k == 0 || (errno != EINTR && errno != EAGAIN && errno != EWOULDBLOCK)) {
            /* The server closed its output, or died. */
            transport_closed();
        }
    }
    if (srv_in >= 0 && (p[srv_in].revents & (POLLERR | POLLHUP)) != 0 && st.srv.in_fd >= 0)
        client_transmit(); /* the write fails and says why */
    return 0;
}

/* Milliseconds until `deadline` (ms of clock_ms), for poll: -1 for none. */
static int until(uint64_t deadline, uint64_t now) {
    if (deadline == PW_NO_TIMEOUT) return -1;
    if (deadline <= now) return 0;
    return deadline - now > (uint64_t)INT_MAX ? INT_MAX : (int)(deadline - now);
}

/* ------------------------------------------------------------ set-up */

#define USAGE "usage: pw-mcp [--timeout-ms T] [--max-total-ms M] [--extra-tool NAME]... -- SERVER CMD...\n"

static int usage(void) {
    fputs(USAGE, stderr);
    return 2;
}

static int parse_ms(const char *s, uint32_t *out) {
    char *end = NULL;
    unsigned long v;
    if (s == NULL || *s < '0' || *s > '9') return -1;
    errno = 0;
    v = strtoul(s, &end, 10);
    if (errno != 0 || *end != '\0' || v > UINT32_MAX) return -1;
    *out = (uint32_t)v;
    return 0;
}

/* The client started over the server's pipes, its tools listed. */
static int start_client(const pw_wrapper_config *wc) {
    pw_mcp_config cfg;
    size_t size = 0, frame_len = 0, line_len = 0;
    char version[32];
    uint64_t deadline;
    pw_result r;
    pw_mcp_config_default(&cfg);
    cfg.line_cap = LINE_CAP;
    cfg.outbox_cap = OUTBOX_CAP;
    cfg.cursor_cap = CURSOR_CAP;
    cfg.header_table_cap = CLIENT_HEADER_TABLE_CAP;
    /* Half the start-up's time for server/discover: a server that leaves it unanswered
     * still has the other half for initialize and tools/list. */
    cfg.start_timeout_ms = STARTUP_MS / 2;
    if ((r = pw_mcp_config_fit(&cfg, wc)) != PW_OK || (r = pw_mcp_size(&cfg, SLOTS, &size)) != PW_OK ||
        (r = pw_mcp_max_frame_len(&cfg, &frame_len)) != PW_OK ||
        (r = pw_mcp_max_line_len(&cfg, &line_len)) != PW_OK) {
        note_code("cannot configure the MCP client", (uint32_t)r);
        return -1;
    }
    if (size > sizeof client_mem || frame_len > sizeof client_out || line_len > sizeof tx) {
        fprintf(stderr, "pw-mcp: the MCP client needs more memory than this build has\n");
        return -1;
    }
    snprintf(version, sizeof version, "%d.%d.%d", PW_VERSION_MAJOR, PW_VERSION_MINOR, PW_VERSION_PATCH);
    r = pw_mcp_init(client_mem, sizeof client_mem, &cfg, SLOTS, (const uint8_t *)"pw-mcp", 6,
                    (const uint8_t *)version, strlen(version), &st.c);
    if (r != PW_OK || (r = pw_mcp_start(st.c, clock_ms())) != PW_OK) {
        note_code("cannot start the MCP client", (uint32_t)r);
        return -1;
    }
    deadline = clock_ms() + STARTUP_MS;
    for (;;) {
        uint64_t now = clock_ms();
        uint64_t wake = pw_mcp_poll_timeout(st.c);
        if (wake <= now && (r = pw_mcp_handle_timeout(st.c, now)) != PW_OK) {
            note_code("the MCP client's clock", (uint32_t)r);
            return -1;
        }
        pump(now);
        if (st.start_failed) return -1;
        if (st.ready) return 0;
        if (st.closed) {
            fprintf(stderr, "pw-mcp: the MCP server closed its output before listing its tools\n");
            return -1;
        }
        if (now >= deadline) {
            fprintf(stderr, "pw-mcp: the MCP server did not finish its start-up within %u ms\n",
                    (unsigned)STARTUP_MS);
            return -1;
        }
        wake = pw_mcp_poll_timeout(st.c);
        if (wait_io(until(wake < deadline ? wake : deadline, now)) != 0) return -1;
    }
}

static int start_wrapper(const pw_wrapper_config *wc) {
    pw_hooks hooks;
    size_t size = 0, frame_len = 0;
    pw_result r;
    hooks.userdata = NULL;
    hooks.on_tool_call = NULL;
    hooks.on_tool_result = NULL;
    if ((r = pw_wrapper_size(wc, SLOTS, st.n_tools, &size)) != PW_OK ||
        (r = pw_wrapper_max_frame_len(wc, &frame_len)) != PW_OK) {
        note_code("cannot configure the wrapper", (uint32_t)r);
        return -1;
    }
    if (size > sizeof wrapper_mem || frame_len > sizeof wrapper_out) {
        fprintf(stderr, "pw-mcp: the wrapper needs more memory than this build has\n");
        return -1;
    }
    r = pw_wrapper_init(wrapper_mem, sizeof wrapper_mem, wc, SLOTS, tools, st.n_tools, &hooks, &st.w);
    if (r != PW_OK) {
        note_code("cannot build the wrapper", (uint32_t)r);
        return -1;
    }
    r = pw_line_splitter_init(splitter_mem, sizeof splitter_mem, in_line, sizeof in_line, &st.splitter);
    if (r != PW_OK) {
        note_code("cannot build the line splitter", (uint32_t)r);
        return -1;
    }
    return 0;
}

int main(int argc, char **argv) {
    static const char *extra[MAX_TOOLS];
    pw_wrapper_config wc;
    uint32_t timeout_ms = 30000, max_total_ms = 0;
    size_t n_extra = 0, k;
    char err[512];
    int i;

    for (i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0) {
            i++;
            break;
        } else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            fputs(USAGE, stdout);
            return 0;
        } else if (strcmp(argv[i], "--timeout-ms") == 0) {
            if (parse_ms(argv[++i], &timeout_ms) != 0) return usage();
        } else if (strcmp(argv[i], "--max-total-ms") == 0) {
            if (parse_ms(argv[++i], &max_total_ms) != 0) return usage();
        } else if (strcmp(argv[i], "--extra-tool") == 0) {
            if (++i >= argc || n_extra == MAX_TOOLS) return usage();
            if (strlen(argv[i]) == 0 || strlen(argv[i]) > NAME_CAP) {
                fprintf(stderr, "pw-mcp: --extra-tool %s: not 1 to %u bytes\n", argv[i], (unsigned)NAME_CAP);
                return 2;
            }
            extra[n_extra++] = argv[i];
        } else if (argv[i][0] == '-') {
            return usage();
        } else {
            break;
        }
    }
    if (i >= argc) return usage();

    pw_wrapper_config_default(&wc);
    wc.tool_timeout_ms = timeout_ms;
    wc.max_total_timeout_ms = max_total_ms;
    wc.name_cap = NAME_CAP;
    wc.id_cap = ID_CAP;
    wc.args_cap = ARGS_CAP;
    wc.result_cap = RESULT_CAP;
    wc.message_cap = MESSAGE_CAP;
    wc.trace_entries = TRACE_ENTRIES;
    wc.trace_bytes = TRACE_BYTES;
    wc.held_bytes = HELD_BYTES;

    /* A server gone mid-write is a closed transport, not a signal. */
    signal(SIGPIPE, SIG_IGN);
    if (server_spawn(argv + i, &st.srv, err, sizeof err) != 0) {
        fprintf(stderr, "pw-mcp: %s\n", err);
        return 2;
    }
    if (start_client(&wc) != 0) {
        server_finish(&st.srv, 0);
        return 2;
    }
    for (k = 0; k < n_extra; k++) {
        pw_str name;
        name.ptr = (const uint8_t *)extra[k];
        name.len = strlen(extra[k]);
        add_tool(name, NULL);
    }
    if (start_wrapper(&wc) != 0) {
        server_finish(&st.srv, 0);
        return 2;
    }

    for (;;) {
        uint64_t now = clock_ms();
        if (pw_wrapper_poll_timeout(st.w) <= now) {
            pw_result r = pw_wrapper_handle_timeout(st.w, now);
            if (r != PW_OK) die_code("the wrapper's clock", r);
        }
        pump(now);
        model_frames(now);
        if (st.stdin_done && !st.have_line && pw_wrapper_pending(st.w) == 0 && !st.held &&
            st.fifo_start == st.fifo_end &&
            (st.srv.in_fd < 0 || (pw_mcp_queued(st.c) == 0 && st.tx_off == st.tx_len)))
            break;
        if (wait_io(until(pw_wrapper_poll_timeout(st.w), now)) != 0) {
            fprintf(stderr, "pw-mcp: stuck: %zu calls pending with nothing to wait for\n",
                    pw_wrapper_pending(st.w));
            break;
        }
    }
    flush_stdout();
    server_finish(&st.srv, GRACE_MS);
    return 0;
}
