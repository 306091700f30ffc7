/* The functions MPI-3.0 removed (declared at the end of mpi.h, outside the
 * standard ABI), for programs written before it: each calls its
 * replacement's PMPI entry, whose checks and error handling apply (an
 * error message names the replacement). */
#pragma GCC visibility push(default)
#include <mpi.h>
#pragma GCC visibility pop

int PMPI_Address(void *location, MPI_Aint *address)
{
    return PMPI_Get_address(location, address);
}

int PMPI_Errhandler_create(MPI_Handler_function *function, MPI_Errhandler *errhandler)
{
    return PMPI_Comm_create_errhandler((MPI_Comm_errhandler_function *)function, errhandler);
}

int PMPI_Errhandler_get(MPI_Comm comm, MPI_Errhandler *errhandler)
{
    return PMPI_Comm_get_errhandler(comm, errhandler);
}

int PMPI_Errhandler_set(MPI_Comm comm, MPI_Errhandler errhandler)
{
    return PMPI_Comm_set_errhandler(comm, errhandler);
}

int PMPI_Type_extent(MPI_Datatype datatype, MPI_Aint *extent)
{
    MPI_Aint lb;
    return PMPI_Type_get_extent(datatype, &lb, extent);
}

int PMPI_Type_lb(MPI_Datatype datatype, MPI_Aint *displacement)
{
    MPI_Aint extent;
    return PMPI_Type_get_extent(datatype, displacement, &extent);
}

int PMPI_Type_ub(MPI_Datatype datatype, MPI_Aint *displacement)
{
    MPI_Aint lb, extent;
    /* A missing output is refused by the replacement's checks. */
    int rc = PMPI_Type_get_extent(datatype, displacement ? &lb : NULL, &extent);
    if (rc == MPI_SUCCESS)
        *displacement = lb + extent;
    return rc;
}

int PMPI_Type_hindexed(int count, int array_of_blocklengths[], MPI_Aint array_of_displacements[],
                       MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    return PMPI_Type_create_hindexed(count, array_of_blocklengths, array_of_displacements, oldtype,
                                     newtype);
}

int PMPI_Type_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype,
                      MPI_Datatype *newtype)
{
    return PMPI_Type_create_hvector(count, blocklength, stride, oldtype, newtype);
}

int PMPI_Type_struct(int count, int array_of_blocklengths[], MPI_Aint array_of_displacements[],
                     MPI_Datatype array_of_types[], MPI_Datatype *newtype)
{
    return PMPI_Type_create_struct(count, array_of_blocklengths, array_of_displacements,
                                   array_of_types, newtype);
}

#define HALO_REMOVED_ALIAS(name) extern __typeof__(P##name) name __attribute__((weak, alias("P" #name)))
HALO_REMOVED_ALIAS(MPI_Address);
HALO_REMOVED_ALIAS(MPI_Errhandler_create);
HALO_REMOVED_ALIAS(MPI_Errhandler_get);
HALO_REMOVED_ALIAS(MPI_Errhandler_set);
HALO_REMOVED_ALIAS(MPI_Type_extent);
HALO_REMOVED_ALIAS(MPI_Type_lb);
HALO_REMOVED_ALIAS(MPI_Type_ub);
HALO_REMOVED_ALIAS(MPI_Type_hindexed);
HALO_REMOVED_ALIAS(MPI_Type_hvector);
HALO_REMOVED_ALIAS(MPI_Type_struct);
