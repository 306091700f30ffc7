/* Attributes across the C and Fortran bindings (MPI 5.0, 19.3.7), through
 * the Fortran entry points called from C (they need no Fortran compiler):
 * a value set from Fortran reads in C as a pointer to the integer and in
 * Fortran as the integer; a value set from C reads in Fortran as the
 * pointer's address; a keyval made through Fortran copies with MPI_COMM_DUP_FN
 * and keeps the Fortran view; MPI_ATTR_PUT / MPI_ATTR_GET hold default
 * INTEGERs; predefined attributes read as values in Fortran. */
#include "mpitest.h"

#include <stdint.h>

void mpi_comm_set_attr_(MPI_Fint *comm, MPI_Fint *keyval, MPI_Aint *val, MPI_Fint *ierror);
void mpi_comm_get_attr_(MPI_Fint *comm, MPI_Fint *keyval, MPI_Aint *val, MPI_Fint *flag, MPI_Fint *ierror);
void mpi_comm_create_keyval_(void (*copy)(void), void (*del)(void), MPI_Fint *keyval, MPI_Aint *extra,
                             MPI_Fint *ierror);
void mpi_attr_put_(MPI_Fint *comm, MPI_Fint *keyval, MPI_Fint *val, MPI_Fint *ierror);
void mpi_attr_get_(MPI_Fint *comm, MPI_Fint *keyval, MPI_Fint *val, MPI_Fint *flag, MPI_Fint *ierror);
void mpi_comm_dup_fn_(void);
void mpi_comm_null_delete_fn_(void);

int main(int argc, char **argv)
{
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_Fint world = MPI_Comm_c2f(MPI_COMM_WORLD), ierr = -1, flag = 0, kv;
    MPI_Aint extra = 0, v;

    /* A keyval made through Fortran, with MPI_COMM_DUP_FN. */
    mpi_comm_create_keyval_(mpi_comm_dup_fn_, mpi_comm_null_delete_fn_, &kv, &extra, &ierr);
    CHECK(ierr == MPI_SUCCESS, "MPI_COMM_CREATE_KEYVAL: %d", ierr);
    v = 0x123456789;
    mpi_comm_set_attr_(&world, &kv, &v, &ierr);
    CHECK(ierr == MPI_SUCCESS, "MPI_COMM_SET_ATTR: %d", ierr);
    /* C sees a pointer to the integer. */
    MPI_Aint *p = NULL;
    int cflag = 0;
    MPI_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, kv, &p, &cflag));
    CHECK(cflag && p && *p == 0x123456789, "C read of a Fortran attribute: %p", (void *)p);
    /* Fortran sees the integer. */
    v = 0;
    mpi_comm_get_attr_(&world, &kv, &v, &flag, &ierr);
    CHECK(ierr == MPI_SUCCESS && flag && v == 0x123456789, "Fortran read: flag %d value %lld", flag,
          (long long)v);
    /* MPI_COMM_DUP_FN copies it as it was set. */
    MPI_Comm dup;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    MPI_Fint fdup = MPI_Comm_c2f(dup);
    v = 0;
    mpi_comm_get_attr_(&fdup, &kv, &v, &flag, &ierr);
    CHECK(flag && v == 0x123456789, "Fortran read on the duplicate: %lld", (long long)v);
    p = NULL;
    MPI_OK(MPI_Comm_get_attr(dup, kv, &p, &cflag));
    CHECK(cflag && p && *p == 0x123456789, "C read on the duplicate");
    MPI_OK(MPI_Comm_free(&dup));

    /* A value set from C reads in Fortran as the address. */
    static int cval = 5;
    MPI_OK(MPI_Comm_set_attr(MPI_COMM_WORLD, kv, &cval));
    v = 0;
    mpi_comm_get_attr_(&world, &kv, &v, &flag, &ierr);
    CHECK(flag && v == (MPI_Aint)(intptr_t)&cval, "Fortran read of a C attribute: %llx",
          (unsigned long long)v);
    int *cp = NULL;
    MPI_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, kv, &cp, &cflag));
    CHECK(cflag && cp == &cval, "C read of a C attribute");

    /* MPI-1 style: default INTEGER values. */
    MPI_Fint ival = -77, iget = 0;
    mpi_attr_put_(&world, &kv, &ival, &ierr);
    mpi_attr_get_(&world, &kv, &iget, &flag, &ierr);
    CHECK(ierr == MPI_SUCCESS && flag && iget == -77, "MPI_ATTR_GET: %d", iget);
    MPI_OK(MPI_Comm_delete_attr(MPI_COMM_WORLD, kv));
    MPI_OK(MPI_Comm_free_keyval(&kv));

    /* Predefined attributes: the value in Fortran, a pointer in C. */
    MPI_Fint tag_ub = MPI_TAG_UB;
    v = 0;
    mpi_comm_get_attr_(&world, &tag_ub, &v, &flag, &ierr);
    int *ub = NULL;
    MPI_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &cflag));
    CHECK(flag && cflag && v == *ub && v >= 32767, "MPI_TAG_UB: Fortran %lld, C %d", (long long)v, *ub);

    MPI_OK(MPI_Finalize());
    printf("core_fortran_attr: ok\n");
    return 0;
}
