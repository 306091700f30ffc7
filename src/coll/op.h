/* Reduction operations: predefined and user-defined op objects, and the
 * one entry point every reduction uses to combine two buffers. */
#ifndef HALO_COLL_OP_H
#define HALO_COLL_OP_H

#include "datatype/dtype.h"

typedef struct halo_op {
    halo_obj_t hdr;
    int commutative;
    int is_c;                        /* made by MPI_Op_create_c */
    int is_fortran;                  /* made by the Fortran MPI_OP_CREATE: fn takes
                                      * (in, inout, INTEGER len, INTEGER datatype) */
    MPI_User_function *fn;
    MPI_User_function_c *fn_c;
} halo_op_t;

void halo_op_init(void);
static inline halo_op_t *halo_op_ptr(MPI_Op op)
{
    return (halo_op_t *)halo_obj_fast(op);
}
halo_op_t *halo_op_get(MPI_Op op);   /* validated, or NULL */

/* Checks that op is valid and defined for dt; an error code otherwise. */
int halo_op_check(MPI_Op op, halo_dtype_t *dt, const char *opname);

/* inout = in op inout, elementwise over `count` elements of dt (in is the
 * lower rank's contribution). */
int halo_op_apply(MPI_Op op, halo_dtype_t *dt, const void *in, void *inout, MPI_Count count);
/* When halo_op_apply(op, dt, in, inout, count) amounts to one loop over
 * contiguous elements of a predefined op: that loop (halo_op_predef_kernel),
 * to run as halo_op_kernel_run(k, in, inout, *n_p); 0 otherwise. */
int halo_op_kernel(MPI_Op op, const halo_dtype_t *dt, MPI_Count count, size_t *n_p);

#endif
