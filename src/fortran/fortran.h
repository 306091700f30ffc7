/* The Fortran bindings (mpif.h and the mpi module): what the generated
 * wrappers (fortran_gen.c) share with the hand-written ones (fortran.c).
 *
 * A Fortran program calls mpi_send_(...) with every argument by address,
 * integer handles (MPI_Fint), and for each CHARACTER argument a hidden
 * length (size_t) after the others, as gfortran passes them. A wrapper turns
 * these into a call of the C function and gives the result back in IERROR.
 * The special addresses (MPI_BOTTOM, MPI_IN_PLACE, MPI_STATUS_IGNORE, ...)
 * are variables of common blocks that mpif.h declares and this library
 * defines: a wrapper compares an argument's address with theirs. */
#ifndef HALO_FORTRAN_H
#define HALO_FORTRAN_H

#include <mpi.h>
#include <stddef.h>

#define HALO_F_EXPORT __attribute__((visibility("default")))

/* Stores a wrapper's result; IERROR is optional in the mpi_f08 interfaces
 * (absent: a null address). */
#define F_RETURN(ierror, rc)                                                                      \
    do {                                                                                          \
        int f_rc_ = (rc);                                                                         \
        if (ierror)                                                                               \
            *(ierror) = f_rc_;                                                                    \
    } while (0)

/* The common blocks (one variable each; names as gfortran spells them). */
extern MPI_Fint halof_bottom_, halof_in_place_, halof_buffer_automatic_;
extern MPI_Fint halof_status_ignore_[MPI_F_STATUS_SIZE], halof_statuses_ignore_[MPI_F_STATUS_SIZE];
extern MPI_Fint halof_errcodes_ignore_, halof_unweighted_, halof_weights_empty_;
extern char halof_argv_null_, halof_argvs_null_;

static inline void *halo_f_buf(void *p)
{
    if (p == (void *)&halof_bottom_)
        return MPI_BOTTOM;
    if (p == (void *)&halof_in_place_)
        return MPI_IN_PLACE;
    if (p == (void *)&halof_buffer_automatic_)
        return MPI_BUFFER_AUTOMATIC;
    return p;
}

static inline MPI_Status *halo_f_status(MPI_Fint *s)
{
    if (s == halof_status_ignore_)
        return MPI_STATUS_IGNORE;
    return (MPI_Status *)(void *)s;
}

static inline MPI_Status *halo_f_statuses(MPI_Fint *s)
{
    if (s == halof_statuses_ignore_ || s == halof_status_ignore_)
        return MPI_STATUSES_IGNORE;
    return (MPI_Status *)(void *)s;
}

static inline int *halo_f_weights(MPI_Fint *w)
{
    if (w == &halof_unweighted_)
        return MPI_UNWEIGHTED;
    if (w == &halof_weights_empty_)
        return MPI_WEIGHTS_EMPTY;
    return w;
}

/* A CHARACTER argument as a C string: trailing blanks dropped (a copy the
 * caller frees). */
char *halo_f_str_in(const char *s, size_t len);
/* The same without leading blanks either (info keys and values, the
 * command and arguments of MPI_COMM_SPAWN). */
char *halo_f_str_trim(const char *s, size_t len);
/* A buffer for a C string the call writes (at least len + 1 bytes, and
 * room for the longest string MPI writes). */
char *halo_f_str_buf(size_t len);
/* Copies a C string into a CHARACTER argument, padded with blanks, and
 * frees the C string. */
void halo_f_str_out(char *f, size_t len, char *c);

/* A temporary array of n handles (n may be 0). */
void *halo_f_alloc(MPI_Fint n, size_t size);

/* The length of an Alltoallw-like datatype array that the Fortran
 * interface gives without a length: the communicator's (remote) size, or
 * its topology's in- or out-degree for the neighbourhood forms. */
int halo_f_w_count(MPI_Comm comm, int neighbor, int recv);

#endif
