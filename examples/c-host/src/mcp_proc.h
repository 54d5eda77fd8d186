/*
 * pw-mcp's POSIX side: the MCP server as a child process on two pipes, and the clock.
 */
#ifndef PW_MCP_PROC_H
#define PW_MCP_PROC_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct server {
    pid_t pid;
    int in_fd;  /* the server's stdin (we write; non-blocking), -1 once closed */
    int out_fd; /* the server's stdout (we read; non-blocking), -1 once closed */
};

/*
 * Runs argv[0] (found on PATH) with argv, its stdin and stdout on pipes, its stderr ours.
 * Returns 0, or -1 with a message in err (a failed exec included: the child reports it).
 */
int server_spawn(char *const argv[], struct server *s, char *err, size_t err_len);

/* Closes our end of the server's stdin (it sees end of input). */
void server_close_input(struct server *s);

/* Closes our end of the server's stdout. */
void server_close_output(struct server *s);

/*
 * Ends the server: closes its stdin, reads (and drops) what it still writes until it
 * closes its stdout or `grace_ms` pass, then waits for it, sending SIGTERM (and, after
 * another `grace_ms`, SIGKILL) if it has not exited. Returns its wait status, or -1.
 */
int server_finish(struct server *s, int grace_ms);

/* Milliseconds of a monotonic clock. */
uint64_t clock_ms(void);

#endif
