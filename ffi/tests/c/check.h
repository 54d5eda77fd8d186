/* What the C test programs share: counting checks, and reporting the failed ones. */
#ifndef PW_TEST_CHECK_H
#define PW_TEST_CHECK_H

#include <stdio.h>

static int failures = 0;
static int checks = 0;

#define CHECK(cond)                                                            \
    do {                                                                       \
        checks++;                                                              \
        if (!(cond)) {                                                         \
            failures++;                                                        \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__,  \
                    #cond);                                                    \
        }                                                                      \
    } while (0)

#define CHECK_RC(expr, want)                                                   \
    do {                                                                       \
        pw_result rc_ = (expr);                                                \
        checks++;                                                              \
        if (rc_ != (pw_result)(want)) {                                        \
            failures++;                                                        \
            fprintf(stderr, "%s:%d: %s returned %u, want %s (%u)\n", __FILE__, \
                    __LINE__, #expr, (unsigned)rc_, #want, (unsigned)(want));  \
        }                                                                      \
    } while (0)

/* Prints how many checks ran and failed, under `name`; returns the exit status: the failures,
 * at most 100. */
static int check_report(const char *name)
{
    printf("%s: %d checks, %d failed\n", name, checks, failures);
    return failures > 100 ? 100 : failures;
}

/* A string literal as (bytes, length) without its NUL. */
#define LIT(s) (const uint8_t *)(s), (sizeof(s) - 1)

#endif
