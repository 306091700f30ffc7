/* Allocation that cannot fail quietly, and messages to stderr. */
#include <stdarg.h>
#include <unistd.h>

#include "core/halo.h"
#include "pmi.h"

static _Noreturn void out_of_memory(size_t n)
{
    halo_fatal("out of memory (allocating %zu bytes)", n);
}

void *halo_malloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        out_of_memory(n);
    return p;
}

void *halo_calloc(size_t n, size_t m)
{
    void *p = calloc(n ? n : 1, m ? m : 1);
    if (!p)
        out_of_memory(n * m);
    return p;
}

void *halo_realloc(void *q, size_t n)
{
    void *p = realloc(q, n ? n : 1);
    if (!p)
        out_of_memory(n);
    return p;
}

char *halo_strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = halo_malloc(n);
    memcpy(p, s, n);
    return p;
}

void halo_warn(const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    fprintf(stderr, "halo: rank %d: %s\n", halo_world.rank, buf);
}

void (*halo_abort_cleanup)(void);

_Noreturn void halo_fatal(const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    fprintf(stderr, "halo: rank %d: fatal: %s\n", halo_world.rank, buf);
    fflush(stderr);
    if (halo_abort_cleanup)
        halo_abort_cleanup();
    halo_pmi_abort(1, buf);
    _exit(1);
}
