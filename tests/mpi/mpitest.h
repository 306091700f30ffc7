/* Helpers for Halo's MPI test programs: checks that report the rank, the
 * line and what differed, and end the job with a failure status. */
#ifndef HALO_TESTS_MPITEST_H
#define HALO_TESTS_MPITEST_H

#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int mt_rank = -1;

/* Sleeps ms milliseconds (a rank that should arrive late). */
static inline void mt_sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static inline int mt_world_rank(void)
{
    int init = 0, fin = 0;
    MPI_Initialized(&init);
    MPI_Finalized(&fin);
    if (mt_rank < 0 && init && !fin)
        MPI_Comm_rank(MPI_COMM_WORLD, &mt_rank);
    return mt_rank;
}

#define MT_FAIL(...)                                                                          \
    do {                                                                                      \
        fprintf(stderr, "FAIL rank %d %s:%d: ", mt_world_rank(), __FILE__, __LINE__);         \
        fprintf(stderr, __VA_ARGS__);                                                         \
        fprintf(stderr, "\n");                                                                \
        fflush(stderr);                                                                       \
        MPI_Abort(MPI_COMM_WORLD, 3);                                                         \
        exit(3);                                                                              \
    } while (0)

/* The condition's text goes in as an argument, never into the format. */
static void mt_check_failed(const char *file, int line, const char *cond, const char *fmt, ...)
    __attribute__((format(printf, 4, 5), noreturn, unused));
static void mt_check_failed(const char *file, int line, const char *cond, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "FAIL rank %d %s:%d: check failed: %s: ", mt_world_rank(), file, line, cond);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n");
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 3);
    exit(3);
}

#define CHECK(cond, ...)                                                                      \
    do {                                                                                      \
        if (!(cond))                                                                          \
            mt_check_failed(__FILE__, __LINE__, #cond, __VA_ARGS__);                          \
    } while (0)

/* An MPI call that must succeed. */
#define MPI_OK(call)                                                                          \
    do {                                                                                      \
        int mt_rc_ = (call);                                                                  \
        if (mt_rc_ != MPI_SUCCESS) {                                                          \
            char mt_msg_[MPI_MAX_ERROR_STRING];                                               \
            int mt_len_ = 0;                                                                  \
            MPI_Error_string(mt_rc_, mt_msg_, &mt_len_);                                      \
            MT_FAIL("%s returned %d: %s", #call, mt_rc_, mt_msg_);                            \
        }                                                                                     \
    } while (0)

/* An MPI call that must fail with the given error class (the caller has set
 * MPI_ERRORS_RETURN). */
#define MPI_FAILS(cls, call)                                                                  \
    do {                                                                                      \
        int mt_rc_ = (call), mt_cls_ = -1;                                                    \
        if (mt_rc_ == MPI_SUCCESS)                                                            \
            MT_FAIL("%s succeeded, expected error class %d", #call, (int)(cls));              \
        MPI_Error_class(mt_rc_, &mt_cls_);                                                    \
        if (mt_cls_ != (cls))                                                                 \
            MT_FAIL("%s: error class %d, expected %d", #call, mt_cls_, (int)(cls));           \
    } while (0)

#define CHECK_INT(got, want)                                                                  \
    do {                                                                                      \
        long long mt_g_ = (long long)(got), mt_w_ = (long long)(want);                        \
        if (mt_g_ != mt_w_)                                                                   \
            MT_FAIL("%s = %lld, expected %lld", #got, mt_g_, mt_w_);                          \
    } while (0)

#endif
