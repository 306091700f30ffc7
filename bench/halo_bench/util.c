/* Message sizes, iteration counts, buffers, data patterns, clocks. */
#include "hb.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The sizes to run: --sizes as given, else min, 2*min, ... up to max. A
 * size is rounded down to whole elements (reductions use 4-byte floats);
 * what rounds to nothing is dropped. */
int hb_sizes(const hb_opts_t *o, size_t dflt_min, size_t dflt_max, size_t elem, size_t **sizes_p)
{
    size_t *s = malloc(64 * sizeof *s + (size_t)o->nsizes * sizeof *s);
    int n = 0;
    if (o->nsizes > 0) {
        for (int i = 0; i < o->nsizes; i++) {
            size_t v = o->sizes[i] / elem * elem;
            if ((v > 0 || dflt_min == 0) && (n == 0 || s[n - 1] != v))
                s[n++] = v;
        }
    } else {
        size_t lo = o->min_size ? o->min_size : dflt_min;
        size_t hi = o->max_size ? o->max_size : dflt_max;
        /* A benchmark whose sizes start at 0 (latency, as OSU's) reports an
         * empty message first, then 1, 2, 4, ... */
        if (lo == 0)
            s[n++] = 0;
        if (lo < elem)
            lo = elem;
        for (size_t v = lo; v <= hi && n < 64; v *= 2) {
            size_t w = v / elem * elem;
            if (w > 0 && (n == 0 || s[n - 1] != w))
                s[n++] = w;
        }
    }
    *sizes_p = s;
    return n;
}

/* OSU's split: messages above 8 KiB get fewer iterations by default. */
#define HB_LARGE 8192

int hb_iters(const hb_opts_t *o, size_t size, int small, int large)
{
    if (o->iters >= 0)
        return o->iters;
    return size > HB_LARGE ? large : small;
}

int hb_warmup(const hb_opts_t *o, size_t size, int small, int large)
{
    if (o->warmup >= 0)
        return o->warmup;
    return size > HB_LARGE ? large : small;
}

/* Page-aligned and touched, so first-touch page faults fall outside the timing. */
void *hb_alloc(size_t bytes)
{
    void *p = NULL;
    if (bytes == 0)
        bytes = 1;
    if (posix_memalign(&p, 4096, bytes) != 0) {
        fprintf(stderr, "halo-bench: out of memory (%zu bytes)\n", bytes);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    memset(p, 0, bytes);
    return p;
}

void hb_fill(void *buf, size_t n, int origin, size_t first, int iter)
{
    uint8_t *b = buf;
    for (size_t i = 0; i < n; i++)
        b[i] = hb_pat(origin, first + i, iter);
}

/* The number of bytes that differ from the pattern. */
size_t hb_check(const void *buf, size_t n, int origin, size_t first, int iter)
{
    const uint8_t *b = buf;
    size_t bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += b[i] != hb_pat(origin, first + i, iter);
    return bad;
}

double hb_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The dummy computation of the overlap benchmarks: arithmetic on a small
 * array (in cache, no memory traffic that would slow the transfer) until
 * the time is up. Time-based, as OSU's, so it lasts as long on a busy
 * machine as on a quiet one. */
static double spin_data[64];

void hb_spin(double seconds)
{
    double t0 = MPI_Wtime();
    do {
        for (int k = 0; k < 16; k++)
            for (int i = 0; i < 64; i++)
                spin_data[i] = spin_data[i] * 0.999 + 0.001 * (double)(i + k);
    } while (MPI_Wtime() - t0 < seconds);
}

int hb_err_class(int rc)
{
    int cls = rc;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &cls);
    return cls;
}

const char *hb_err_string(int rc)
{
    static char s[MPI_MAX_ERROR_STRING + 1];
    int len = 0;
    s[0] = 0;
    if (MPI_Error_string(rc, s, &len) != MPI_SUCCESS)
        snprintf(s, sizeof s, "error %d", rc);
    s[MPI_MAX_ERROR_STRING] = 0;
    return s;
}
