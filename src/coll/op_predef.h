/* The predefined reduction operations (MPI 5.0, section 6.9.2 and 6.9.4) applied
 * to buffers of one predefined datatype: the arithmetic at the heart of every
 * reduction, accumulate and scan that uses a predefined op.
 *
 * Both functions answer in the same terms, so a binding can check an (op, type)
 * pair once with halo_op_predef_valid and report exactly the error that
 * halo_op_predef_apply would have returned. */
#ifndef HALO_COLL_OP_PREDEF_H
#define HALO_COLL_OP_PREDEF_H

#include <mpi.h>
#include <stddef.h>

/* inout[i] = in[i] op inout[i] for i < count, where `in` holds the contribution
 * of the lower rank (the order matters only for MPI_REPLACE, which stores in[i],
 * and MPI_NO_OP, which leaves inout alone; both take every predefined type).
 *
 * `type` must be a predefined datatype handle; its elements are laid out as the
 * C type (or, for Fortran types, the gfortran default kind) it names, and both
 * buffers must be aligned for that C type. `in` and `inout` must not overlap,
 * except for MPI_REPLACE and MPI_NO_OP.
 *
 * Returns MPI_SUCCESS; MPI_ERR_TYPE when `type` is not a predefined datatype;
 * MPI_ERR_OP when `op` is not a predefined op, or the standard does not define
 * it for `type` (MPI_BAND on MPI_FLOAT, MPI_MAXLOC on MPI_INT, anything but
 * MPI_REPLACE and MPI_NO_OP on MPI_CHAR), or the type's C representation is not
 * available in this build (MPI_REAL2 without _Float16, MPI_REAL16 without a
 * binary128 type, MPI_INTEGER16 without __int128); MPI_ERR_COUNT when count is
 * negative. Nothing is written to inout unless the result is MPI_SUCCESS. */
int halo_op_predef_apply(MPI_Op op, MPI_Datatype type, const void *in, void *inout,
                         MPI_Count count);

/* What halo_op_predef_apply would return for (op, type) and a count of zero:
 * MPI_SUCCESS when the combination is valid, else MPI_ERR_TYPE or MPI_ERR_OP.
 * Note the sense: zero means valid. */
int halo_op_predef_valid(MPI_Op op, MPI_Datatype type);

/* The loop that halo_op_predef_apply runs for (op, type), as a number
 * that means the same in every process of the job: then
 * halo_op_kernel_run(k, in, inout, count) does what the apply would. 0 for
 * MPI_REPLACE and MPI_NO_OP and for a pair that halo_op_predef_apply
 * refuses. Lets a caller that applies one pair many times (a schedule
 * rerun, in this process or a copy of it in another) resolve it once. */
int halo_op_predef_kernel(MPI_Op op, MPI_Datatype type);
void halo_op_kernel_run(int kernel, const void *in, void *inout, size_t count);

/* Which build of the kernels runs: 1 the AVX2 one (where the processor and
 * the build have it), 0 the baseline one, -1 only asks. Returns the build in
 * use after the call; the AVX2 one is taken at load when available (tests
 * run both). */
int halo_op_kernels_use_avx2(int avx2);

#endif /* HALO_COLL_OP_PREDEF_H */
