/* Output (OSU-style text, CSV or JSON lines) and statistics across ranks.
 * Only rank 0 prints; every rank calls these functions, in the same order. */
#include "hb.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int hb_mpi_initialized;

/* The first line of MPI_Get_library_version, without trailing blanks. */
const char *hb_library(void)
{
    static char lib[MPI_MAX_LIBRARY_VERSION_STRING + 1];
    if (!lib[0]) {
        int len = 0;
        MPI_Get_library_version(lib, &len);
        lib[MPI_MAX_LIBRARY_VERSION_STRING] = 0;
        lib[strcspn(lib, "\r\n")] = 0;
        size_t n = strlen(lib);
        while (n > 0 && (lib[n - 1] == ' ' || lib[n - 1] == '\t' || lib[n - 1] == ','))
            lib[--n] = 0;
    }
    return lib;
}

static void json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            fprintf(f, "\\%c", *s);
        else if ((unsigned char)*s < 0x20)
            fprintf(f, "\\u%04x", (unsigned char)*s);
        else
            fputc(*s, f);
    }
    fputc('"', f);
}

static void csv_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

/* JSON rows are collected and printed with the whole object at the end. */
static char *json_rows;
static size_t json_len, json_cap;

static void json_add(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void json_add(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int need = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (json_len + (size_t)need + 1 > json_cap) {
        json_cap = 2 * (json_len + (size_t)need + 1) + 256;
        json_rows = realloc(json_rows, json_cap);
    }
    va_start(ap, fmt);
    vsnprintf(json_rows + json_len, json_cap - json_len, fmt, ap);
    va_end(ap);
    json_len += (size_t)need;
}

static void text_header(hb_run_t *r)
{
    if (r->header_done)
        return;
    r->header_done = 1;
    if (r->rank != 0)
        return;
    const hb_opts_t *o = r->o;
    if (o->output == HB_OUT_TEXT) {
        printf("# halo-bench %s: MPI %s v%s\n", r->bench, r->title, HB_VERSION);
        printf("# Library: %s\n", hb_library());
        printf("# Ranks: %d\n", r->nranks);
        if (o->validate)
            printf("# Validation: on (timings include filling and checking buffers)\n");
        char line[512];
        int n = 0;
        if (!r->no_size)
            n += snprintf(line + n, sizeof line - (size_t)n, "%-10s", "# Size");
        else
            n += snprintf(line + n, sizeof line - (size_t)n, "#");
        for (int i = 0; i < r->ncols; i++) {
            if (r->cols[i].full_only && !o->full)
                continue;
            n += snprintf(line + n, sizeof line - (size_t)n, "%*s", (i == 0 && r->no_size) ? 17 : 20,
                          r->cols[i].head);
        }
        if (o->validate)
            n += snprintf(line + n, sizeof line - (size_t)n, "%14s", "Validation");
        printf("%s\n", line);
    } else if (o->output == HB_OUT_CSV) {
        printf("benchmark,library,ranks,size");
        for (int i = 0; i < r->ncols; i++)
            printf(",%s", r->cols[i].key);
        printf(",validation\n");
    }
    fflush(stdout);
}

void hb_report_begin(hb_run_t *r, const hb_col_t *cols, int ncols, int no_size)
{
    r->cols = cols;
    r->ncols = ncols;
    r->no_size = no_size;
    r->header_done = 0;
    r->nrows = 0;
    json_len = 0;
    if (json_rows)
        json_rows[0] = 0;
}

static const char *vstate(int validated, int ok)
{
    return !validated ? "off" : ok ? "pass" : "fail";
}

void hb_report_row(hb_run_t *r, size_t size, const double *vals, int validated, int ok)
{
    text_header(r);
    if (validated && !ok)
        r->failed = 1;
    r->nrows++;
    if (r->rank != 0)
        return;
    const hb_opts_t *o = r->o;
    if (o->output == HB_OUT_TEXT) {
        if (!r->no_size)
            printf("%-10zu", size);
        for (int i = 0; i < r->ncols; i++) {
            const hb_col_t *c = &r->cols[i];
            if (c->full_only && !o->full)
                continue;
            int w = (i == 0 && r->no_size) ? 18 : 20;
            if (c->precision < 0)
                printf("%*.0f", w, vals[i]);
            else
                printf("%*.*f", w, c->precision, vals[i]);
        }
        if (validated)
            printf("%14s", ok ? "Pass" : "Fail");
        printf("\n");
    } else if (o->output == HB_OUT_CSV) {
        printf("%s,", r->bench);
        csv_str(stdout, hb_library());
        printf(",%d,%zu", r->nranks, size);
        for (int i = 0; i < r->ncols; i++)
            printf(",%.*f", r->cols[i].precision < 0 ? 0 : r->cols[i].precision + 2, vals[i]);
        printf(",%s\n", vstate(validated, ok));
    } else {
        json_add("%s{\"size\":%zu", r->nrows > 1 ? "," : "", size);
        for (int i = 0; i < r->ncols; i++)
            json_add(",\"%s\":%.*f", r->cols[i].key, r->cols[i].precision < 0 ? 0 : r->cols[i].precision + 2,
                     vals[i]);
        json_add(",\"validation\":\"%s\"}", vstate(validated, ok));
    }
    fflush(stdout);
}

void hb_report_na(hb_run_t *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->note, sizeof r->note, fmt, ap);
    va_end(ap);
    r->na = 1;
    text_header(r);
    if (r->rank != 0)
        return;
    if (r->o->output == HB_OUT_TEXT)
        printf("n/a       (%s)\n", r->note);
    else if (r->o->output == HB_OUT_CSV) {
        printf("%s,", r->bench);
        csv_str(stdout, hb_library());
        printf(",%d,,n/a,", r->nranks);
        csv_str(stdout, r->note);
        printf("\n");
    }
    fflush(stdout);
}

void hb_report_error(hb_run_t *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->note, sizeof r->note, fmt, ap);
    va_end(ap);
    r->failed = 1;
    text_header(r);
    fprintf(stderr, "halo-bench %s: rank %d: %s\n", r->bench, r->rank, r->note);
    if (r->rank == 0 && r->o->output == HB_OUT_TEXT)
        printf("# ERROR: %s\n", r->note);
    fflush(stdout);
}

void hb_report_end(hb_run_t *r)
{
    text_header(r);
    if (r->rank != 0)
        return;
    const hb_opts_t *o = r->o;
    if (o->output == HB_OUT_JSON) {
        const char *status = r->na ? "n/a" : r->failed ? "fail" : "ok";
        printf("{\"benchmark\":");
        json_str(stdout, r->bench);
        printf(",\"title\":");
        json_str(stdout, r->title);
        printf(",\"library\":");
        json_str(stdout, hb_library());
        printf(",\"mpi_version\":\"%d.%d\",\"ranks\":%d,\"validate\":%s,\"status\":\"%s\"", MPI_VERSION,
               MPI_SUBVERSION, r->nranks, o->validate ? "true" : "false", status);
        if (r->note[0]) {
            printf(",\"note\":");
            json_str(stdout, r->note);
        }
        printf(",\"rows\":[%s]}\n", json_rows ? json_rows : "");
    } else if (o->output == HB_OUT_TEXT) {
        if (r->nrows == 0 && !r->na && !r->failed)
            printf("# (no message size to run: see -m)\n");
    }
    fflush(stdout);
}

/* min, max, average and sum of v over the ranks that participate. */
void hb_stats(MPI_Comm comm, double v, int participates, double *min_p, double *max_p, double *avg_p,
              double *sum_p)
{
    double in[3] = {participates ? v : 1e300, participates ? -v : 1e300, 0};
    double out[3];
    MPI_Allreduce(in, out, 2, MPI_DOUBLE, MPI_MIN, comm);
    double s[2] = {participates ? v : 0.0, participates ? 1.0 : 0.0}, so[2];
    MPI_Allreduce(s, so, 2, MPI_DOUBLE, MPI_SUM, comm);
    if (min_p)
        *min_p = out[0];
    if (max_p)
        *max_p = -out[1];
    if (avg_p)
        *avg_p = so[1] > 0 ? so[0] / so[1] : 0.0;
    if (sum_p)
        *sum_p = so[0];
}

int hb_all_ok(MPI_Comm comm, int ok_local)
{
    int ok = 0;
    MPI_Allreduce(&ok_local, &ok, 1, MPI_INT, MPI_MIN, comm);
    return ok;
}

int hb_max_int(MPI_Comm comm, int v)
{
    int m = 0;
    MPI_Allreduce(&v, &m, 1, MPI_INT, MPI_MAX, comm);
    return m;
}
