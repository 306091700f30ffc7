/* The standard ABI's own functions: version and layout queries, the
 * Fortran-interoperability settings, and the integer forms of handles
 * (MPI_<Handle>_toint/_fromint, which cannot fail; the legacy c2f/f2c
 * conversions map onto them). */
#include "binding/api_gen.h"
#include "core/errors.h"
#include "core/info.h"
#include "datatype/dtype.h"

int halo_api_abi_get_version(int *abi_major, int *abi_minor)
{
    *abi_major = MPI_ABI_VERSION;
    *abi_minor = MPI_ABI_SUBVERSION;
    return MPI_SUCCESS;
}

static void set_int(halo_info_t *in, const char *key, long v)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%ld", v);
    halo_info_set(in, key, buf);
}

int halo_api_abi_get_info(MPI_Info *info)
{
    halo_info_t *in = halo_info_new();
    if (!in)
        return halo_err(MPI_ERR_NO_MEM, ": out of info objects");
    set_int(in, "mpi_aint_size", (long)sizeof(MPI_Aint));
    set_int(in, "mpi_count_size", (long)sizeof(MPI_Count));
    set_int(in, "mpi_offset_size", (long)sizeof(MPI_Offset));
    set_int(in, "mpi_status_size", (long)sizeof(MPI_Status));
    *info = (MPI_Info)in;
    return MPI_SUCCESS;
}

/* Fortran settings: Halo's Fortran datatypes have gfortran's default
 * sizes; the supported sized types are the ones the reduction kernels
 * implement. */
static const struct {
    const char *key;
    int supported;
} fortran_sized[] = {
    {"mpi_logical1_supported", 1},  {"mpi_logical2_supported", 1},  {"mpi_logical4_supported", 1},
    {"mpi_logical8_supported", 1},  {"mpi_logical16_supported", 1}, {"mpi_integer1_supported", 1},
    {"mpi_integer2_supported", 1},  {"mpi_integer4_supported", 1},  {"mpi_integer8_supported", 1},
    {"mpi_integer16_supported", 1}, {"mpi_real2_supported", 1},     {"mpi_real4_supported", 1},
    {"mpi_real8_supported", 1},     {"mpi_real16_supported", 1},    {"mpi_complex4_supported", 1},
    {"mpi_complex8_supported", 1},  {"mpi_complex16_supported", 1}, {"mpi_complex32_supported", 1},
    {"mpi_double_complex_supported", 1},
};

int halo_api_abi_get_fortran_info(MPI_Info *info)
{
    halo_info_t *in = halo_info_new();
    if (!in)
        return halo_err(MPI_ERR_NO_MEM, ": out of info objects");
    set_int(in, "mpi_logical_size", halo_dtype_ptr(MPI_LOGICAL)->size);
    set_int(in, "mpi_integer_size", halo_dtype_ptr(MPI_INTEGER)->size);
    set_int(in, "mpi_real_size", halo_dtype_ptr(MPI_REAL)->size);
    set_int(in, "mpi_double_precision_size", halo_dtype_ptr(MPI_DOUBLE_PRECISION)->size);
    for (size_t i = 0; i < HALO_ARRAY_LEN(fortran_sized); i++)
        halo_info_set(in, fortran_sized[i].key, fortran_sized[i].supported ? "true" : "false");
    *info = (MPI_Info)in;
    return MPI_SUCCESS;
}

int halo_api_abi_set_fortran_info(MPI_Info info)
{
    halo_info_t *in = halo_obj_lookup(HALO_KIND_INFO, info);
    if (!in)
        return halo_err(MPI_ERR_INFO, "(info=%p): not a valid info object", (void *)info);
    static const struct {
        const char *key;
        MPI_Datatype type;
    } sizes[] = {{"mpi_logical_size", MPI_LOGICAL}, {"mpi_integer_size", MPI_INTEGER},
                 {"mpi_real_size", MPI_REAL}, {"mpi_double_precision_size", MPI_DOUBLE_PRECISION}};
    for (size_t i = 0; i < HALO_ARRAY_LEN(sizes); i++) {
        const char *v = halo_info_lookup(in, sizes[i].key);
        if (v && atol(v) != halo_dtype_ptr(sizes[i].type)->size)
            return halo_err(MPI_ERR_UNSUPPORTED_OPERATION,
                            "(%s=%s): Halo's Fortran types have gfortran's default sizes (%lld bytes "
                            "here); other sizes are not supported yet", sizes[i].key, v,
                            (long long)halo_dtype_ptr(sizes[i].type)->size);
    }
    return MPI_SUCCESS;
}

/* .TRUE. and .FALSE. per LOGICAL size (1, 2, 4, 8, 16 bytes). */
static struct {
    unsigned char t[16], f[16];
    int set;
} booleans[5];

static int bool_slot(int size)
{
    switch (size) {
    case 1: return 0;
    case 2: return 1;
    case 4: return 2;
    case 8: return 3;
    case 16: return 4;
    default: return -1;
    }
}

int halo_api_abi_get_fortran_booleans(int logical_size, void *logical_true, void *logical_false,
                                      int *is_set)
{
    int s = bool_slot(logical_size);
    if (s < 0)
        return halo_err(MPI_ERR_ARG, "(logical_size=%d): must be 1, 2, 4, 8 or 16", logical_size);
    if (booleans[s].set) {
        memcpy(logical_true, booleans[s].t, (size_t)logical_size);
        memcpy(logical_false, booleans[s].f, (size_t)logical_size);
    } else {
        /* gfortran: .TRUE. is 1, .FALSE. is 0. */
        memset(logical_true, 0, (size_t)logical_size);
        memset(logical_false, 0, (size_t)logical_size);
        *(unsigned char *)logical_true = 1;
    }
    *is_set = booleans[s].set;
    return MPI_SUCCESS;
}

int halo_api_abi_set_fortran_booleans(int logical_size, void *logical_true, void *logical_false)
{
    int s = bool_slot(logical_size);
    if (s < 0)
        return halo_err(MPI_ERR_ARG, "(logical_size=%d): must be 1, 2, 4, 8 or 16", logical_size);
    if (!memcmp(logical_true, logical_false, (size_t)logical_size))
        return halo_err(MPI_ERR_ARG, ": .TRUE. and .FALSE. must differ");
    memcpy(booleans[s].t, logical_true, (size_t)logical_size);
    memcpy(booleans[s].f, logical_false, (size_t)logical_size);
    booleans[s].set = 1;
    return MPI_SUCCESS;
}

/* ---------------------------------------------------------------- integer handles */

static int toint(void *h)
{
    uintptr_t v = (uintptr_t)h;
    if (v < HALO_PREDEF_LIMIT)
        return (int)v;
    return ((halo_obj_t *)h)->id;
}

static void *fromint(halo_kind_t kind, int i, uintptr_t null_handle)
{
    if (i >= 0 && i < HALO_PREDEF_LIMIT)
        return (void *)(uintptr_t)i;
    void *o = halo_obj_from_id(kind, i);
    return o ? o : (void *)null_handle;
}

#define HANDLE_INT(Name, lname, Type, kind, NULLH)                                            \
    int halo_api_##lname##_toint(Type h) { return toint((void *)h); }                         \
    Type halo_api_##lname##_fromint(int i) { return (Type)fromint(kind, i, (uintptr_t)NULLH); } \
    MPI_Fint halo_api_##lname##_c2f(Type h) { return toint((void *)h); }                      \
    Type halo_api_##lname##_f2c(MPI_Fint i) { return (Type)fromint(kind, i, (uintptr_t)NULLH); }

HANDLE_INT(Comm, comm, MPI_Comm, HALO_KIND_COMM, MPI_COMM_NULL)
HANDLE_INT(Errhandler, errhandler, MPI_Errhandler, HALO_KIND_ERRHANDLER, MPI_ERRHANDLER_NULL)
HANDLE_INT(File, file, MPI_File, HALO_KIND_FILE, MPI_FILE_NULL)
HANDLE_INT(Group, group, MPI_Group, HALO_KIND_GROUP, MPI_GROUP_NULL)
HANDLE_INT(Info, info, MPI_Info, HALO_KIND_INFO, MPI_INFO_NULL)
HANDLE_INT(Message, message, MPI_Message, HALO_KIND_MESSAGE, MPI_MESSAGE_NULL)
HANDLE_INT(Op, op, MPI_Op, HALO_KIND_OP, MPI_OP_NULL)
HANDLE_INT(Request, request, MPI_Request, HALO_KIND_REQUEST, MPI_REQUEST_NULL)
HANDLE_INT(Session, session, MPI_Session, HALO_KIND_SESSION, MPI_SESSION_NULL)
HANDLE_INT(Type, type, MPI_Datatype, HALO_KIND_DTYPE, MPI_DATATYPE_NULL)
HANDLE_INT(Win, win, MPI_Win, HALO_KIND_WIN, MPI_WIN_NULL)

/* Fortran statuses have the C layout: MPI_SOURCE, MPI_TAG, MPI_ERROR and
 * five internal integers. */
int halo_api_status_c2f(const MPI_Status *c_status, MPI_Fint *f_status)
{
    memcpy(f_status, c_status, sizeof *c_status);
    return MPI_SUCCESS;
}
int halo_api_status_f2c(const MPI_Fint *f_status, MPI_Status *c_status)
{
    memcpy(c_status, f_status, sizeof *c_status);
    return MPI_SUCCESS;
}
int halo_api_status_c2f08(const MPI_Status *c_status, MPI_F08_status *f08_status)
{
    memcpy(f08_status, c_status, sizeof *c_status);
    return MPI_SUCCESS;
}
int halo_api_status_f082c(const MPI_F08_status *f08_status, MPI_Status *c_status)
{
    memcpy(c_status, f08_status, sizeof *c_status);
    return MPI_SUCCESS;
}
int halo_api_status_f082f(const MPI_F08_status *f08_status, MPI_Fint *f_status)
{
    memcpy(f_status, f08_status, sizeof *f08_status);
    return MPI_SUCCESS;
}
int halo_api_status_f2f08(const MPI_Fint *f_status, MPI_F08_status *f08_status)
{
    memcpy(f08_status, f_status, sizeof *f08_status);
    return MPI_SUCCESS;
}

MPI_Aint halo_api_aint_add(MPI_Aint base, MPI_Aint disp)
{
    return (MPI_Aint)((char *)base + disp);
}

MPI_Aint halo_api_aint_diff(MPI_Aint addr1, MPI_Aint addr2)
{
    return (MPI_Aint)((char *)addr1 - (char *)addr2);
}

int halo_api_get_address(const void *location, MPI_Aint *address)
{
    *address = (MPI_Aint)location;
    return MPI_SUCCESS;
}
