#define _POSIX_C_SOURCE 200809L

#include "mcp_proc.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

uint64_t clock_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static int set_flag(int fd, int get, int set, int flag) {
    int v = fcntl(fd, get);
    return v < 0 ? -1 : fcntl(fd, set, v | flag);
}

static void close_fd(int *fd) {
    if (*fd >= 0) close(*fd);
    *fd = -1;
}

int server_spawn(char *const argv[], struct server *s, char *err, size_t err_len) {
    int to_child[2], from_child[2], report[2];
    int i, code = 0;
    ssize_t n;
    s->pid = -1;
    s->in_fd = s->out_fd = -1;
    if (pipe(to_child) != 0) goto sys;
    if (pipe(from_child) != 0) {
        close(to_child[0]);
        close(to_child[1]);
        goto sys;
    }
    if (pipe(report) != 0) {
        close(to_child[0]);
        close(to_child[1]);
        close(from_child[0]);
        close(from_child[1]);
        goto sys;
    }
    /* Every end close-on-exec: the child's stdin and stdout are dup2'ed copies, which are
     * not; the report pipe's write end closes at a successful exec, and the parent reads
     * end of file there. */
    for (i = 0; i < 2; i++) {
        set_flag(to_child[i], F_GETFD, F_SETFD, FD_CLOEXEC);
        set_flag(from_child[i], F_GETFD, F_SETFD, FD_CLOEXEC);
        set_flag(report[i], F_GETFD, F_SETFD, FD_CLOEXEC);
    }
    s->pid = fork();
    if (s->pid < 0) {
        close(to_child[0]);
        close(to_child[1]);
        close(from_child[0]);
        close(from_child[1]);
        close(report[0]);
        close(report[1]);
        goto sys;
    }
    if (s->pid == 0) {
        int e;
        signal(SIGPIPE, SIG_DFL);
        if (dup2(to_child[0], 0) >= 0 && dup2(from_child[1], 1) >= 0) execvp(argv[0], argv);
        e = errno;
        while (write(report[1], &e, sizeof e) < 0 && errno == EINTR) {
        }
        _exit(127);
    }
    close(to_child[0]);
    close(from_child[1]);
    close(report[1]);
    do {
        n = read(report[0], &code, sizeof code);
    } while (n < 0 && errno == EINTR);
    close(report[0]);
    if (n > 0) {
        snprintf(err, err_len, "cannot run %s: %s", argv[0], strerror(code));
        close(to_child[1]);
        close(from_child[0]);
        waitpid(s->pid, NULL, 0);
        s->pid = -1;
        return -1;
    }
    s->in_fd = to_child[1];
    s->out_fd = from_child[0];
    set_flag(s->in_fd, F_GETFL, F_SETFL, O_NONBLOCK);
    set_flag(s->out_fd, F_GETFL, F_SETFL, O_NONBLOCK);
    return 0;
sys:
    snprintf(err, err_len, "cannot start %s: %s", argv[0], strerror(errno));
    return -1;
}

void server_close_input(struct server *s) { close_fd(&s->in_fd); }

void server_close_output(struct server *s) { close_fd(&s->out_fd); }

/* Waits up to `ms` for the child; its status, or -1 when it is still running. */
static int wait_for(pid_t pid, int ms) {
    uint64_t end = clock_ms() + (uint64_t)ms;
    for (;;) {
        int status = 0;
        pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid) return status;
        if (r < 0 && errno != EINTR) return -1;
        if (clock_ms() >= end) return -1;
        {
            struct timespec nap = {0, 10 * 1000 * 1000};
            nanosleep(&nap, NULL);
        }
    }
}

int server_finish(struct server *s, int grace_ms) {
    uint64_t end = clock_ms() + (uint64_t)grace_ms;
    int status;
    server_close_input(s);
    while (s->out_fd >= 0) {
        char drop[4096];
        struct pollfd p;
        uint64_t now = clock_ms();
        ssize_t n;
        if (now >= end) break;
        p.fd = s->out_fd;
        p.events = POLLIN;
        p.revents = 0;
        if (poll(&p, 1, (int)(end - now)) < 0 && errno != EINTR) break;
        n = read(s->out_fd, drop, sizeof drop);
        if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) break;
    }
    server_close_output(s);
    if (s->pid <= 0) return -1;
    status = wait_for(s->pid, grace_ms);
    if (status < 0) {
        kill(s->pid, SIGTERM);
        status = wait_for(s->pid, grace_ms);
    }
    if (status < 0) {
        kill(s->pid, SIGKILL);
        while (waitpid(s->pid, &status, 0) < 0 && errno == EINTR) {
        }
    }
    s->pid = -1;
    return status;
}
