/* The datatype engine's interface.
 *
 * Every type, predefined or derived, is described for the data movers by
 * its "block list": the (offset, length) byte runs of one element, in type
 * map order, adjacent runs merged, offsets relative to the buffer address
 * (so lb is already in them). `count` elements repeat the list every
 * `extent` bytes. Packing and unpacking walk that list and can stop at any
 * packed byte and resume there, which pipelines need; iovec generation
 * gives the same runs as addresses for single-copy transfers.
 *
 * Point-to-point and collectives only use this interface: a contiguous
 * type takes the memcpy fast path, anything else goes through the list. */
#ifndef HALO_DATATYPE_DTYPE_H
#define HALO_DATATYPE_DTYPE_H

#include <sys/uio.h>

#include "core/obj.h"

typedef struct halo_attr halo_attr_t;

enum {
    HALO_DT_COMMITTED = 1,
    HALO_DT_CONTIG = 2,      /* one run, size == extent, starts at offset 0 */
    HALO_DT_PREDEFINED = 4,
    HALO_DT_PAIR = 8,        /* value/index pair for MINLOC and MAXLOC */
};

typedef struct halo_dt_block {
    MPI_Count off;   /* byte offset from the element's buffer address */
    MPI_Count len;   /* bytes */
    MPI_Count pos;   /* packed position of this run inside one element */
} halo_dt_block_t;

typedef struct halo_dtype {
    halo_obj_t hdr;
    uint32_t flags;
    int combiner;
    MPI_Count size;        /* bytes of data in one element */
    MPI_Count lb, ub;      /* extent = ub - lb */
    MPI_Count extent;
    MPI_Count true_lb, true_ub;
    /* Reductions: the predefined type all of whose data is made of, with the
     * number of such basic elements per element; MPI_DATATYPE_NULL when the
     * type mixes basic types. */
    MPI_Datatype basic;
    MPI_Count basic_count;
    MPI_Count nblocks;
    halo_dt_block_t *blocks;
    halo_dt_block_t one_block;   /* storage when nblocks == 1 */
    /* Envelope and contents, as given to the constructor. */
    int ni, na, nc, nd;          /* integers, addresses, large counts, datatypes */
    int *ints;
    MPI_Aint *aints;
    MPI_Count *counts;
    MPI_Datatype *types;
    halo_attr_t *attrs;
    char name[MPI_MAX_OBJECT_NAME];
} halo_dtype_t;

void halo_dtype_init(void);
void halo_dtype_finalize(void);

static inline halo_dtype_t *halo_dtype_ptr(MPI_Datatype t)
{
    return (halo_dtype_t *)halo_obj_fast(t);
}
halo_dtype_t *halo_dtype_get(MPI_Datatype t);   /* validated, or NULL */
static inline MPI_Datatype halo_dtype_handle(halo_dtype_t *dt)
{
    return (MPI_Datatype)halo_obj_handle(dt);
}

static inline bool halo_dt_contig(const halo_dtype_t *dt)
{
    return (dt->flags & HALO_DT_CONTIG) != 0;
}

/* Packs the packed bytes [pos, pos + len) of (buf, count, dt) into dst.
 * Returns the number of bytes packed (less than len only at the end). */
MPI_Count halo_dt_pack(const void *buf, MPI_Count count, const halo_dtype_t *dt,
                       MPI_Count pos, void *dst, MPI_Count len);
/* Unpacks src into the packed bytes [pos, pos + len) of (buf, count, dt). */
MPI_Count halo_dt_unpack(void *buf, MPI_Count count, const halo_dtype_t *dt,
                         MPI_Count pos, const void *src, MPI_Count len);
/* Fills at most maxiov iovecs with the runs of the packed range starting at
 * *pos_p, advancing *pos_p past what they cover; returns the number filled. */
int halo_dt_iov(const void *buf, MPI_Count count, const halo_dtype_t *dt, MPI_Count *pos_p,
                MPI_Count limit, struct iovec *iov, int maxiov);

/* Counts of elements and of basic elements in `bytes` packed bytes. */
MPI_Count halo_dt_elements(const halo_dtype_t *dt, MPI_Count bytes);

/* Copies (src, scount, stype) into (dst, dcount, dtype) as a message would
 * move it; returns the bytes moved (the smaller of the two sizes). */
MPI_Count halo_dt_copy(const void *src, MPI_Count scount, const halo_dtype_t *stype, void *dst,
                       MPI_Count dcount, const halo_dtype_t *dtype);

/* Builds the derived type's block list and bounds from its parts (used by
 * every constructor in datatype/constructors.c). */
void halo_dtype_release(halo_dtype_t *dt);

#endif
