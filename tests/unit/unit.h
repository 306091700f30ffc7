/* Minimal checks for unit tests of Halo's internals. */
#ifndef HALO_TESTS_UNIT_H
#define HALO_TESTS_UNIT_H

#include <stdio.h>
#include <stdlib.h>

static int unit_failures;

#define UCHECK(cond)                                                                          \
    do {                                                                                      \
        if (!(cond)) {                                                                        \
            fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond);                   \
            unit_failures++;                                                                  \
        }                                                                                     \
    } while (0)

#define UCHECK_EQ(got, want)                                                                  \
    do {                                                                                      \
        long long u_g_ = (long long)(got), u_w_ = (long long)(want);                          \
        if (u_g_ != u_w_) {                                                                   \
            fprintf(stderr, "FAIL %s:%d: %s = %lld, expected %lld\n", __FILE__, __LINE__,     \
                    #got, u_g_, u_w_);                                                        \
            unit_failures++;                                                                  \
        }                                                                                     \
    } while (0)

#define UNIT_DONE()                                                                           \
    do {                                                                                      \
        if (unit_failures) {                                                                  \
            fprintf(stderr, "%d check(s) failed\n", unit_failures);                           \
            return 1;                                                                         \
        }                                                                                     \
        printf("all checks passed\n");                                                        \
        return 0;                                                                             \
    } while (0)

#endif
