/* Building a type's program (see dtype.h): node constructors that simplify
 * as they go, import of a child type's program, and compaction. Internal to
 * datatype/. Node indices are int32_t; -1 stands for "no data". */
#ifndef HALO_DATATYPE_PROG_H
#define HALO_DATATYPE_PROG_H

#include "datatype/dtype.h"

typedef struct halo_dt_build {
    halo_dt_prog_t p;
    int32_t cap_nodes;
    MPI_Count cap_blk, cap_ent;
    /* Types already imported into this build, so a struct that names the
     * same type several times shares one copy of its program. */
    struct hb_imp {
        const halo_dtype_t *t;
        int32_t root;
    } imp[16];
    int nimp;
} halo_dt_build_t;

void hb_init(halo_dt_build_t *b);
/* Root of a copy of t's program inside b (-1 when t has no data). */
int32_t hb_import(halo_dt_build_t *b, const halo_dtype_t *t);
int32_t hb_run(halo_dt_build_t *b, MPI_Count off, MPI_Count len);
/* `count` instances of node `child`, `stride` bytes apart, from `off`. */
int32_t hb_loop(halo_dt_build_t *b, MPI_Count off, MPI_Count count, MPI_Count stride, int32_t child);
/* The node moved by delta bytes. */
int32_t hb_shift(halo_dt_build_t *b, int32_t node, MPI_Count delta);
/* Runs (off[i], len[i]) in packed order, as one list (or simpler). */
int32_t hb_runs(halo_dt_build_t *b, const MPI_Count *off, const MPI_Count *len, MPI_Count n);
/* The nodes one after the other in packed order (each placed by its own
 * offset); -1 entries are skipped. */
int32_t hb_list(halo_dt_build_t *b, const int32_t *nodes, MPI_Count n);
/* Moves the reachable part of the build into out (root = -1 for none). */
void hb_finish(halo_dt_build_t *b, int32_t root, halo_dt_prog_t *out);

static inline halo_dt_node_t *hb_node(halo_dt_build_t *b, int32_t i)
{
    return &b->p.nodes[i];
}

#endif
