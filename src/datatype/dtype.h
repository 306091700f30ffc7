/* The datatype engine's interface.
 *
 * Layout. Every type, predefined or derived, carries a compiled "program":
 * a small tree of nodes, kept in arrays inside the type, that describes the
 * byte runs of ONE element in type map order (offsets relative to the
 * buffer address, so lb is already in them):
 *   RUN     `size` bytes at `off`
 *   LOOP    `count` instances of the child node, `stride` bytes apart
 *           (negative strides allowed), starting at `off`
 *   BLOCKS  a list of runs {off, len, pos} (what indexed types and small
 *           structs become)
 *   LIST    a list of different nodes (a struct of non-trivial fields)
 * `count` elements of a type repeat the program every `extent` bytes.
 * Constructors build the program from their children's programs with
 * simplifications (a loop of runs that touch is one run, loops whose
 * instances abut merge into one loop, regular lists become loops), so a
 * vector of 10^7 doubles is one LOOP over one RUN, and a subarray is one
 * loop per non-contiguous dimension. MPI_Type_commit "compiles" the type:
 * it flattens small trees into one BLOCKS list and records the flat run
 * list that reductions use (`blocks`, for types of at most
 * HALO_DT_FLAT_MAX runs an element).
 *
 * Moving data. Packing and unpacking take a packed byte range [pos,
 * pos+len) and can stop and resume at any byte (pipelines and the
 * rendezvous protocol need it): the walk seeks to `pos` by division in
 * loops and binary search in lists, then copies runs with loops
 * specialized for the common shapes (one memcpy for contiguous data,
 * fixed-size moves for 1..16-byte runs, a two-level loop for 2-D shapes).
 * halo_dt_iov gives the same runs as iovecs for single-copy transfers.
 *
 * Signature. Independently of the layout, each type records the sequence
 * of its children in type map order as (type, repetitions) entries; this
 * is what exact element counting (MPI_Get_elements) and the external32
 * representation walk.
 *
 * Lifetime. Derived types hold references on the types they were built
 * from; operations in flight hold a reference on their type, so a type the
 * user frees stays alive until they end. The program is self-contained
 * (copied from the children), so moving data never looks at children.
 *
 * Point-to-point and collectives only use this interface: a contiguous
 * type takes the memcpy fast path, anything else goes through the engine. */
#ifndef HALO_DATATYPE_DTYPE_H
#define HALO_DATATYPE_DTYPE_H

#include <sys/uio.h>

#include "core/obj.h"

typedef struct halo_attr halo_attr_t;
typedef struct halo_dtype halo_dtype_t;

enum {
    HALO_DT_COMMITTED = 1,
    HALO_DT_CONTIG = 2,      /* one run at offset 0, size == extent */
    HALO_DT_PREDEFINED = 4,
    HALO_DT_PAIR = 8,        /* value/index pair for MINLOC and MAXLOC */
    HALO_DT_LB_MARKED = 16,  /* lb comes from an explicit marker (resized, subarray, darray) */
    HALO_DT_UB_MARKED = 32,  /* ub likewise: no alignment padding in a struct */
    HALO_DT_F90 = 64,        /* made by MPI_Type_create_f90_*: predefined for the user */
};

/* Types whose element has at most this many runs get a flat run list. */
#define HALO_DT_FLAT_MAX 4096

typedef struct halo_dt_block {
    MPI_Count off;   /* byte offset from the element's buffer address */
    MPI_Count len;   /* bytes */
    MPI_Count pos;   /* packed position of this run inside its list */
} halo_dt_block_t;

enum { HALO_DT_RUN = 1, HALO_DT_LOOP, HALO_DT_BLOCKS, HALO_DT_LIST };

typedef struct halo_dt_node {
    int32_t kind;
    int32_t child;       /* LOOP: index of the repeated node */
    MPI_Count off;       /* bytes from the enclosing base address */
    MPI_Count size;      /* packed bytes of one instance (RUN: its length) */
    MPI_Count count;     /* LOOP: instances; BLOCKS, LIST: entries */
    MPI_Count stride;    /* LOOP: bytes between instances */
    MPI_Count first;     /* BLOCKS: first run in prog.blk; LIST: first entry in prog.ent */
} halo_dt_node_t;

typedef struct halo_dt_ent {
    MPI_Count pos;       /* packed position of the entry inside its list */
    int32_t node;
} halo_dt_ent_t;

/* Index of the entry holding packed position `pos` in a list of n entries
 * (runs or list entries) whose packed positions rise: the first entry's
 * `pos` field at first, the next ones `step` bytes apart. */
static inline MPI_Count halo_dt_find_pos(const MPI_Count *first, size_t step, MPI_Count n, MPI_Count pos)
{
    MPI_Count lo = 0, hi = n - 1;
    while (lo < hi) {
        MPI_Count mid = (lo + hi + 1) / 2;
        if (*(const MPI_Count *)((const char *)first + (size_t)mid * step) <= pos)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

typedef struct halo_dt_prog {
    halo_dt_node_t *nodes;
    halo_dt_block_t *blk;
    halo_dt_ent_t *ent;
    int32_t nnodes, root;   /* root < 0: no data */
    MPI_Count nblk, nent;
} halo_dt_prog_t;

/* One entry of a type's signature: `reps` copies of `type`'s signature. */
typedef struct halo_dt_sig {
    halo_dtype_t *type;
    MPI_Count reps;
} halo_dt_sig_t;

struct halo_dtype {
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
    /* Flat run list of one element, after commit, for types of at most
     * HALO_DT_FLAT_MAX runs; nblocks == 0 otherwise (use halo_dt_iov). */
    MPI_Count nblocks;
    halo_dt_block_t *blocks;
    halo_dt_block_t one_block;   /* storage when nblocks == 1 */
    halo_dt_prog_t prog;
    MPI_Count nruns;       /* runs of one element (adjacent runs merged within it) */
    /* Signature: entries in type map order (none for predefined types). */
    int nsig;
    halo_dt_sig_t *sig;
    MPI_Count nelem;       /* basic elements in one element (a pair type counts 2) */
    MPI_Count ext32_size;  /* bytes of one element in "external32" */
    MPI_Count align;       /* largest alignment of its basic types (struct padding) */
    /* Envelope and contents, as given to the constructor. */
    int ni, na, nc, nd;          /* integers, addresses, large counts, datatypes */
    int *ints;
    MPI_Aint *aints;
    MPI_Count *counts;
    MPI_Datatype *types;
    halo_attr_t *attrs;
    char name[MPI_MAX_OBJECT_NAME];
};

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

/* True when (buf, count, dt) is one run of bytes; *off_p is its offset from
 * buf (a non-contiguous type can still describe one run: a subarray plane,
 * count 1 of a type with a leading gap). Senders can then skip packing. */
bool halo_dt_one_run(const halo_dtype_t *dt, MPI_Count count, MPI_Count *off_p);

/* When the packed bytes [pos, pos + len) of (buf, count, dt), cut at the
 * data's end as halo_dt_pack cuts them, lie as one run in the buffer:
 * their number, with *off_p their offset from buf; 0 when not (or when
 * the range is empty). Lets a caller that moves the same range many times
 * decide once that a memcpy will do. */
MPI_Count halo_dt_flat_range(const halo_dtype_t *dt, MPI_Count count, MPI_Count pos, MPI_Count len,
                             MPI_Count *off_p);
/* Packs the packed bytes [pos, pos + len) of (buf, count, dt) into dst.
 * Returns the number of bytes packed (less than len only at the end). */
MPI_Count halo_dt_pack(const void *buf, MPI_Count count, const halo_dtype_t *dt,
                       MPI_Count pos, void *dst, MPI_Count len);
/* Unpacks src into the packed bytes [pos, pos + len) of (buf, count, dt). */
MPI_Count halo_dt_unpack(void *buf, MPI_Count count, const halo_dtype_t *dt,
                         MPI_Count pos, const void *src, MPI_Count len);
/* Which movers halo_dt_pack and halo_dt_unpack use for derived types:
 * with `avx2` 1 the AVX2 build (pack_avx2.c) when this processor and
 * build have it, with 0 the baseline one; -1 only asks. Returns 1 when
 * the AVX2 movers are in use after the call. halo_dtype_init chooses AVX2
 * where it can; tests call this to run both. */
int halo_dt_movers_avx2(int avx2);
#if defined(HALO_DT_AVX2)
/* pack_avx2.c: pack and unpack a range of a derived type with the movers
 * built for AVX2; `stream` picks the ones that write whole lines with
 * streaming stores. */
void halo_dt_pack_avx2(uintptr_t buf, const halo_dtype_t *dt, MPI_Count pos, MPI_Count len, void *dst,
                       bool stream);
void halo_dt_unpack_avx2(uintptr_t buf, const halo_dtype_t *dt, MPI_Count pos, MPI_Count len, const void *src,
                         bool stream);
#endif
/* Fills at most maxiov iovecs with the runs of the packed range starting at
 * *pos_p and ending at `limit` (or the end of the data), advancing *pos_p
 * past what they cover; returns the number filled. Call again from *pos_p
 * to continue. */
int halo_dt_iov(const void *buf, MPI_Count count, const halo_dtype_t *dt, MPI_Count *pos_p,
                MPI_Count limit, struct iovec *iov, int maxiov);
/* Number of iovecs (runs) the whole of (count, dt) takes, adjacent runs
 * merged within an element; a sender or receiver can compare it with the
 * byte count to choose between iovecs and a bounce buffer. */
MPI_Count halo_dt_iov_count(const halo_dtype_t *dt, MPI_Count count);

/* Basic elements in the first `bytes` packed bytes of a message of this
 * type: exact, MPI_UNDEFINED when `bytes` ends inside a basic element
 * (MPI_Get_elements). */
MPI_Count halo_dt_elements(const halo_dtype_t *dt, MPI_Count bytes);
/* Packed bytes that the first `elements` basic elements take
 * (MPI_Status_set_elements). */
MPI_Count halo_dt_elements_bytes(const halo_dtype_t *dt, MPI_Count elements);
/* Complete basic elements in the first `bytes` (< size) packed bytes of
 * one element (rounded down; kept for callers that add whole elements). */
MPI_Count halo_dt_elements_partial(const halo_dtype_t *dt, MPI_Count bytes);

/* Copies (src, scount, stype) into (dst, dcount, dtype) as a message would
 * move it; returns the bytes moved (the smaller of the two sizes). */
MPI_Count halo_dt_copy(const void *src, MPI_Count scount, const halo_dtype_t *stype, void *dst,
                       MPI_Count dcount, const halo_dtype_t *dtype);

/* Drops a reference; the last one frees the type and its references. */
void halo_dtype_release(halo_dtype_t *dt);

/* ---- internal to datatype/ ---- */

/* Compiles a type at commit (flattening, flat run list); idempotent. */
void halo_dt_compile(halo_dtype_t *dt);
/* A new type object with the same layout, signature and contents as t (and
 * references on its children): what Type_get_contents returns for a
 * derived child. */
halo_dtype_t *halo_dt_clone(halo_dtype_t *t);
/* Sets t->flags' HALO_DT_CONTIG and nruns from the program. */
void halo_dt_finish(halo_dtype_t *t);
void halo_dt_prog_free(halo_dt_prog_t *p);
void halo_dt_prog_copy(halo_dt_prog_t *dst, const halo_dt_prog_t *src);
/* Lowest and highest byte offsets (end exclusive) the program touches. */
void halo_dt_prog_bounds(const halo_dt_prog_t *p, MPI_Count *lo_p, MPI_Count *hi_p);
/* Runs of one instance of the program (adjacent runs merged). */
MPI_Count halo_dt_prog_runs(const halo_dt_prog_t *p);
/* Enumerates up to `max` runs of one element into out (merged); returns
 * the number of runs, or -1 when there are more than max. */
MPI_Count halo_dt_prog_flatten(const halo_dt_prog_t *p, halo_dt_block_t *out, MPI_Count max);

/* Called by halo_dtype_init: forgets the types of MPI_Type_create_f90_*
 * (constructors.c), and anchors dtype_api.c. Both also make a static link
 * (unit tests link libhalo_internal.a) take those objects, whose MPI
 * functions must override the binding layer's weak defaults. */
void halo_dt_f90_reset(void);
/* Called by halo_dtype_finalize: drops the library's types of
 * MPI_Type_create_f90_* (the only types the library itself keeps). */
void halo_dt_f90_free_all(void);
void halo_dt_api_anchor(void);

/* external32 sizes of predefined types (0 for types without one). */
MPI_Count halo_dt_ext32_size_predef(const halo_dtype_t *t);

#endif
