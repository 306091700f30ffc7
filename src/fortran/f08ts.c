/* Array sections as choice buffers of the mpi_f08 module
 * (MPI_SUBARRAYS_SUPPORTED = .TRUE., MPI 5.0 19.1.12).
 *
 * The module's specifics MPI_X_f08ts take their choice buffers as assumed
 * rank (TYPE(*), DIMENSION(..)), so a program may pass any array section,
 * a(1, :) or b(10:1:-2, 3:7), and the call sees the section's elements as
 * if they lay one after the other in array element order. The wrappers
 * (mpi_f08ts.f90, generated) hand each buffer's descriptor to
 * halo_f08ts_begin, call the C wrapper of the procedure (fortran_gen.c)
 * with what it gives back, then call halo_f08ts_end. A contiguous buffer
 * (the usual case, a scalar, an assumed-size array) goes through as its
 * address. A non-contiguous one goes as the procedure's kind asks:
 *
 *   COPY      blocking calls: the section is copied into a contiguous
 *             temporary, the call works on that, and what the call may
 *             have written is copied back (as a compiler does for an
 *             assumed-size dummy), whatever the datatypes and operation;
 *   MAP       nonblocking and persistent point-to-point, Ibcast and
 *             Bcast_init, the buffers of nonblocking and persistent
 *             collectives whose count is the whole buffer's (send buffers
 *             of gathers, receive buffers of scatters), one-sided origin
 *             buffers, files: the data must
 *             stay in place, so the buffer's (count, datatype) becomes
 *             (1, a datatype that picks those elements out of the section)
 *             when a datatype's extent is the array element's length, or
 *             the element is a whole number of a dense datatype; where no
 *             datatype fits, a call that makes a request goes as KEEP,
 *             others (one-sided calls, split collective I/O) refuse it;
 *   KEEP      the other buffers of nonblocking and persistent collectives
 *             (a count per rank, two buffers under one datatype) and of
 *             partitioned communication: copied as for a blocking call, the
 *             temporary kept with the request (halo_f08ts_attach), copied
 *             back at each completion, copied in again at each start (and,
 *             partitioned sends, when the last partition is ready: the
 *             message leaves then), freed with the request;
 *   CONTIG    memory the library keeps (attached buffers, window memory):
 *             must be contiguous, else MPI_ERR_BUFFER;
 *   ADDR      only the address of the first element counts (Get_address,
 *             Free_mem, the ends of split collectives, one-element
 *             atomics).
 *
 * The datatype of a mapped buffer is freed right after the call: requests,
 * schedules and files hold their own references. */
#include "fortran/fortran.h"

#if HALO_F08TS

#include "binding/binding.h"
#include "core/errors.h"
#include "pt2pt/pt2pt.h"

#include <ISO_Fortran_binding.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Kinds of buffer, as the generated wrappers pass them. */
enum { F08TS_ADDR = 0, F08TS_CONTIG, F08TS_COPY, F08TS_MAP, F08TS_KEEP, F08TS_KIND = 0xf };
/* ... and flags: the call may write the buffer; (MAP) the call makes a
 * request that can keep a copy where no datatype fits. */
enum { F08TS_WRITTEN = 0x10, F08TS_KEEPABLE = 0x20 };

/* TYPE(halo_f08ts_buf) of mpi_f08ts.f90. */
typedef struct halo_f08ts_buf {
    void *addr;       /* what the call gets as the buffer */
    void *tmp;        /* COPY, KEEP: the temporary */
    int64_t count;    /* MAP: the count the call gets */
    int32_t dtype;    /* MAP: the datatype the call gets */
    int32_t mode;
    int32_t own_type; /* dtype was made here: freed by halo_f08ts_end */
    int32_t pad;
} halo_f08ts_buf_t;

void halo_f08ts_begin(halo_f08ts_buf_t *b, CFI_cdesc_t *d, const int *mode, const int64_t *count,
                      const MPI_Fint *dtype, const int *objkind, const MPI_Fint *handle, const char *where,
                      MPI_Fint *ierr);
void halo_f08ts_end(halo_f08ts_buf_t *b, CFI_cdesc_t *d);
void halo_f08ts_attach(halo_f08ts_buf_t *b, CFI_cdesc_t *d, const MPI_Fint *request);

static bool section_empty(const CFI_cdesc_t *d)
{
    for (int i = 0; i < d->rank; i++)
        if (d->dim[i].extent == 0)
            return true;
    return false;
}

/* Whether the elements lie one after the other (a scalar, an assumed-size
 * array: always). */
static bool section_contiguous(const CFI_cdesc_t *d)
{
    CFI_index_t want = (CFI_index_t)d->elem_len;
    for (int i = 0; i < d->rank; i++) {
        CFI_index_t e = d->dim[i].extent;
        if (e < 0)
            return true;   /* the last dimension of an assumed-size array */
        if (e > 1 && d->dim[i].sm != want)
            return false;
        want *= e;
    }
    return true;
}

static size_t section_elements(const CFI_cdesc_t *d)
{
    size_t n = 1;
    for (int i = 0; i < d->rank; i++)
        n *= (size_t)d->dim[i].extent;
    return n;
}

/* One run of the first dimension: n elements of `len` bytes, `sm` bytes
 * apart in the array, one after the other in tmp; the common element sizes
 * as fixed-size copies the compiler turns into single moves. */
#define RUN_COPY(L)                                                                                \
    do {                                                                                           \
        for (CFI_index_t j = 0; j < n; j++, p += sm, tmp += (L)) {                                 \
            if (out)                                                                               \
                memcpy(p, tmp, (L));                                                               \
            else                                                                                   \
                memcpy(tmp, p, (L));                                                               \
        }                                                                                          \
    } while (0)

static char *run_copy(char *p, CFI_index_t sm, CFI_index_t n, size_t len, char *tmp, bool out)
{
    switch (len) {
    case 4: RUN_COPY(4); break;
    case 8: RUN_COPY(8); break;
    case 16: RUN_COPY(16); break;
    case 1: RUN_COPY(1); break;
    case 2: RUN_COPY(2); break;
    default: RUN_COPY(len); break;
    }
    return tmp;
}

/* Copies the section into tmp (out: back from tmp) in array element
 * order, the first dimension as the inner loop. */
static void section_copy(const CFI_cdesc_t *d, char *tmp, bool out)
{
    size_t len = d->elem_len;
    CFI_index_t idx[CFI_MAX_RANK] = {0};
    CFI_index_t n0 = d->dim[0].extent, sm0 = d->dim[0].sm;
    for (;;) {
        char *p = d->base_addr;
        for (int i = 1; i < d->rank; i++)
            p += idx[i] * d->dim[i].sm;
        tmp = run_copy(p, sm0, n0, len, tmp, out);
        int i = 1;
        while (i < d->rank && ++idx[i] == d->dim[i].extent)
            idx[i++] = 0;
        if (i >= d->rank)
            return;
    }
}

/* Byte offset of element n (array element order) from the first. */
static MPI_Count section_offset(const CFI_cdesc_t *d, MPI_Count n)
{
    MPI_Count off = 0;
    for (int i = 0; i < d->rank; i++) {
        off += (n % d->dim[i].extent) * d->dim[i].sm;
        n /= d->dim[i].extent;
    }
    return off;
}

/* The datatype of parts[0 .. np), one of each at displs (np is 1 or 2),
 * which it takes over: a single part at displacement 0 is the datatype. */
static int join_parts(int np, MPI_Datatype parts[], const MPI_Count displs[], MPI_Datatype *out)
{
    if (np == 1 && displs[0] == 0) {
        *out = parts[0];
        return MPI_SUCCESS;
    }
    const MPI_Count blens[2] = {1, 1};
    int rc = PMPI_Type_create_struct_c(np, blens, displs, parts, out);
    for (int i = 0; i < np; i++)
        PMPI_Type_free(&parts[i]);
    return rc;
}

/* A datatype of the first n elements of the section over its dimensions
 * [0, r), each element one `elem`, displacements from the first element:
 * whole slabs of the last dimension as a vector, the rest of a slab on
 * its own. */
static int prefix_type(const CFI_cdesc_t *d, int r, MPI_Count n, MPI_Datatype elem, MPI_Datatype *out)
{
    int rc;
    if (r == 1)
        return PMPI_Type_create_hvector_c(n, 1, d->dim[0].sm, elem, out);
    MPI_Count slab = 1;
    for (int i = 0; i < r - 1; i++)
        slab *= d->dim[i].extent;
    MPI_Count q = n / slab, rest = n % slab;
    MPI_Datatype parts[2] = {MPI_DATATYPE_NULL, MPI_DATATYPE_NULL};
    MPI_Count displs[2] = {0, 0};
    int np = 0;
    if (q > 0) {
        MPI_Datatype inner;
        if ((rc = prefix_type(d, r - 1, slab, elem, &inner)) != MPI_SUCCESS)
            return rc;
        rc = PMPI_Type_create_hvector_c(q, 1, d->dim[r - 1].sm, inner, &parts[np]);
        PMPI_Type_free(&inner);
        if (rc != MPI_SUCCESS)
            return rc;
        displs[np++] = 0;
    }
    if (rest > 0) {
        if ((rc = prefix_type(d, r - 1, rest, elem, &parts[np])) != MPI_SUCCESS) {
            if (np)
                PMPI_Type_free(&parts[0]);
            return rc;
        }
        displs[np++] = q * d->dim[r - 1].sm;
    }
    return join_parts(np, parts, displs, out);
}

/* The datatype that picks `count` elements of `type` out of the section
 * where they would lie in a contiguous copy of it. MPI_ERR_TYPE when no
 * such datatype is made here. */
static int map_type(const CFI_cdesc_t *d, MPI_Count count, MPI_Datatype type, MPI_Datatype *out)
{
    MPI_Count lb, extent, tlb, textent, size;
    int rc;
    if ((rc = PMPI_Type_get_extent_c(type, &lb, &extent)) != MPI_SUCCESS ||
        (rc = PMPI_Type_get_true_extent_c(type, &tlb, &textent)) != MPI_SUCCESS ||
        (rc = PMPI_Type_size_c(type, &size)) != MPI_SUCCESS)
        return rc;
    MPI_Count len = (MPI_Count)d->elem_len, per = 1;
    MPI_Datatype elem = type;
    if (extent != len) {
        /* An element that holds a whole number of a dense datatype
         * (MPI_BYTE over an integer array, ...). */
        if (!(lb == 0 && tlb == 0 && size == extent && textent == extent && extent > 0 && len % extent == 0))
            return MPI_ERR_TYPE;
        per = len / extent;
        if ((rc = PMPI_Type_contiguous_c(per, type, &elem)) != MPI_SUCCESS)
            return rc;
    }
    MPI_Count whole = count / per, part = count % per;
    MPI_Datatype parts[2] = {MPI_DATATYPE_NULL, MPI_DATATYPE_NULL};
    MPI_Count displs[2];
    int np = 0;
    if (whole > 0) {
        if ((rc = prefix_type(d, d->rank, whole, elem, &parts[np])) == MPI_SUCCESS)
            displs[np++] = 0;
    }
    if (rc == MPI_SUCCESS && part > 0) {
        if ((rc = PMPI_Type_contiguous_c(part, type, &parts[np])) == MPI_SUCCESS)
            displs[np++] = section_offset(d, whole);
    }
    if (elem != type)
        PMPI_Type_free(&elem);
    if (rc == MPI_SUCCESS)
        rc = join_parts(np, parts, displs, out);
    else
        for (int i = 0; i < np; i++)
            PMPI_Type_free(&parts[i]);
    if (rc == MPI_SUCCESS && (rc = PMPI_Type_commit(out)) != MPI_SUCCESS)
        PMPI_Type_free(out);
    return rc;
}

/* Raises an error of the call named in `where` ("MPI_X:argument") on its
 * object; returns the code the call gives back. */
static int section_error(int errclass, const char *where, int objkind, const MPI_Fint *handle,
                         const char *why)
{
    const char *colon = strchr(where, ':');
    char fname[64];
    size_t n = colon ? (size_t)(colon - where) : strlen(where);
    if (n >= sizeof fname)
        n = sizeof fname - 1;
    memcpy(fname, where, n);
    fname[n] = '\0';
    void *obj = NULL;
    switch (objkind) {
    case HALO_EOBJ_COMM: obj = (void *)MPI_Comm_f2c(*handle); break;
    case HALO_EOBJ_WIN: obj = (void *)MPI_Win_f2c(*handle); break;
    case HALO_EOBJ_FILE: obj = (void *)MPI_File_f2c(*handle); break;
    case HALO_EOBJ_SESSION: obj = (void *)MPI_Session_f2c(*handle); break;
    default: objkind = HALO_EOBJ_NONE; break;
    }
    HALO_LOCK();
    int code = halo_err(errclass, "(%s): %s", colon ? colon + 1 : "buffer", why);
    HALO_UNLOCK();
    return halo_err_dispatch(objkind, obj, code, fname);
}

/* A contiguous copy of the section for the call. */
static int section_to_copy(halo_f08ts_buf_t *b, const CFI_cdesc_t *d, int objkind, const MPI_Fint *handle,
                           const char *where)
{
    size_t bytes = section_elements(d) * d->elem_len;
    b->tmp = malloc(bytes ? bytes : 1);
    if (!b->tmp)
        return section_error(MPI_ERR_NO_MEM, where, objkind, handle,
                             "no memory for a contiguous copy of the array section");
    section_copy(d, b->tmp, false);
    b->addr = b->tmp;
    return MPI_SUCCESS;
}

HALO_F_EXPORT void halo_f08ts_begin(halo_f08ts_buf_t *b, CFI_cdesc_t *d, const int *mode, const int64_t *count,
                                    const MPI_Fint *dtype, const int *objkind, const MPI_Fint *handle,
                                    const char *where, MPI_Fint *ierr)
{
    b->addr = d->base_addr;
    b->tmp = NULL;
    b->count = *count;
    b->dtype = *dtype;
    b->mode = *mode;
    b->own_type = 0;
    *ierr = MPI_SUCCESS;
    if ((*mode & F08TS_KIND) == F08TS_ADDR || section_contiguous(d) || section_empty(d))
        return;
    switch (*mode & F08TS_KIND) {
    case F08TS_CONTIG:
        *ierr = section_error(MPI_ERR_BUFFER, where, *objkind, handle,
                              "memory the library keeps must be contiguous; this array section is not");
        return;
    case F08TS_COPY:
    case F08TS_KEEP:
        *ierr = section_to_copy(b, d, *objkind, handle, where);
        return;
    case F08TS_MAP: {
        MPI_Datatype t, type = MPI_Type_f2c(*dtype);
        if (*count <= 0 || type == MPI_DATATYPE_NULL)
            return;   /* nothing to map; or an argument error the call reports */
        int rc = map_type(d, *count, type, &t), cls = MPI_ERR_INTERN;
        if (rc == MPI_ERR_TYPE && (*mode & F08TS_KEEPABLE)) {
            /* No datatype fits: a copy the request keeps. */
            b->mode = F08TS_KEEP | (*mode & F08TS_WRITTEN);
            *ierr = section_to_copy(b, d, *objkind, handle, where);
            return;
        }
        if (rc != MPI_SUCCESS) {
            if (rc != MPI_ERR_TYPE)
                PMPI_Error_class(rc, &cls);
            *ierr = section_error(rc == MPI_ERR_TYPE ? MPI_ERR_UNSUPPORTED_OPERATION : cls, where, *objkind,
                                  handle,
                                  rc == MPI_ERR_TYPE ? "the datatype's extent is not the length of the array "
                                                       "section's elements, nor does an element hold a whole "
                                                       "number of a dense datatype"
                                                     : "no datatype could be made for the array section");
            return;
        }
        b->count = 1;
        b->dtype = MPI_Type_c2f(t);
        b->own_type = 1;
        return;
    }
    default:
        return;
    }
}

HALO_F_EXPORT void halo_f08ts_end(halo_f08ts_buf_t *b, CFI_cdesc_t *d)
{
    if (b->tmp) {
        if (b->mode & F08TS_WRITTEN)
            section_copy(d, b->tmp, true);
        free(b->tmp);
        b->tmp = NULL;
    }
    if (b->own_type) {
        MPI_Datatype t = MPI_Type_f2c(b->dtype);
        PMPI_Type_free(&t);
        b->own_type = 0;
    }
}

/* The temporaries of a nonblocking or persistent collective, kept with
 * its request (user_hook_arg): each with a copy of its section's
 * descriptor, whose array the program must leave in place until the
 * request completes (or, persistent, until it is freed). */
typedef struct f08ts_keep {
    struct f08ts_keep *next;
    void *tmp;
    int inout;      /* the call writes it: copied back at each completion */
    int copied;     /* copied back since the last start */
    CFI_CDESC_T(CFI_MAX_RANK) desc;
} f08ts_keep_t;

/* Once per completion (a nonblocking call's may be seen both by its hook
 * and by halo_f08ts_attach when it came during the call). */
static void keep_copy_out(f08ts_keep_t *k)
{
    if (k->inout && !k->copied) {
        section_copy((CFI_cdesc_t *)&k->desc, k->tmp, true);
        k->copied = 1;
    }
}

static void f08ts_hook(halo_request_t *r, int event)
{
    for (f08ts_keep_t *k = r->user_hook_arg, *next; k; k = next) {
        next = k->next;
        switch (event) {
        case HALO_REQ_HOOK_START:   /* the program may have changed the sections */
        case HALO_REQ_HOOK_READ:    /* a partitioned send's partitions are all ready */
            section_copy((CFI_cdesc_t *)&k->desc, k->tmp, false);
            k->copied = 0;
            break;
        case HALO_REQ_HOOK_DONE:
            keep_copy_out(k);
            break;
        default:
            free(k->tmp);
            free(k);
        }
    }
    if (event == HALO_REQ_HOOK_FREE) {
        r->user_hook = NULL;
        r->user_hook_arg = NULL;
    }
}

/* After a nonblocking or persistent collective made its request: the
 * temporary of a non-contiguous buffer stays with the request, written
 * back at each completion (also one that came during the call). */
HALO_F_EXPORT void halo_f08ts_attach(halo_f08ts_buf_t *b, CFI_cdesc_t *d, const MPI_Fint *request)
{
    if (!b->tmp)
        return;
    HALO_LOCK();
    halo_request_t *r = halo_req_get(MPI_Request_f2c(*request));
    if (!r || r == halo_req_sent) {
        HALO_UNLOCK();
        return;   /* no request to keep it: halo_f08ts_end copies back and frees */
    }
    f08ts_keep_t *k = halo_malloc(sizeof *k);
    k->tmp = b->tmp;
    k->inout = (b->mode & F08TS_WRITTEN) != 0;
    k->copied = 0;
    memcpy(&k->desc, d, sizeof(CFI_cdesc_t) + (size_t)d->rank * sizeof(CFI_dim_t));
    b->tmp = NULL;
    k->next = r->user_hook_arg;
    r->user_hook_arg = k;
    r->user_hook = f08ts_hook;
    if (!r->persistent && halo_req_done(r))
        keep_copy_out(k);
    HALO_UNLOCK();
}

#endif
