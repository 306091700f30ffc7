/* The Fortran bindings written by hand: the common blocks of the special
 * addresses, the helpers of the generated wrappers (fortran_gen.c), and
 * the procedures a generator does not express well: those taking
 * procedures (user operations, attribute callbacks, error handlers,
 * generalized requests, data representations, each called back with
 * Fortran's conventions), attributes (INTEGER values, predefined ones read
 * through their C pointers), argument vectors of MPI_COMM_SPAWN, and the
 * functions without IERROR. */
#include "fortran/fortran.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "binding/binding.h"
#include "coll/op.h"
#include "core/attr.h"
#include "core/errhandler.h"
#include "core/errors.h"
#include "core/obj.h"

#pragma GCC diagnostic ignored "-Wmissing-prototypes"


/* ---------------------------------------------------------------- common blocks */

/* One variable per block, at least the size mpif.h gives it. */
HALO_F_EXPORT MPI_Fint halof_bottom_, halof_in_place_, halof_buffer_automatic_;
HALO_F_EXPORT MPI_Fint halof_status_ignore_[MPI_F_STATUS_SIZE], halof_statuses_ignore_[MPI_F_STATUS_SIZE];
HALO_F_EXPORT MPI_Fint halof_errcodes_ignore_, halof_unweighted_, halof_weights_empty_;
HALO_F_EXPORT char halof_argv_null_, halof_argvs_null_;

/* ---------------------------------------------------------------- helpers */

char *halo_f_str_in(const char *s, size_t len)
{
    while (len > 0 && s[len - 1] == ' ')
        len--;
    char *c = malloc(len + 1);
    if (!c)
        abort();
    memcpy(c, s, len);
    c[len] = '\0';
    return c;
}

char *halo_f_str_trim(const char *s, size_t len)
{
    while (len > 0 && *s == ' ') {
        s++;
        len--;
    }
    return halo_f_str_in(s, len);
}

char *halo_f_str_buf(size_t len)
{
    char *c = calloc(len + MPI_MAX_LIBRARY_VERSION_STRING + 1, 1);
    if (!c)
        abort();
    return c;
}

void halo_f_str_out(char *f, size_t len, char *c)
{
    size_t n = strlen(c);
    if (n > len)
        n = len;
    memcpy(f, c, n);
    memset(f + n, ' ', len - n);
    free(c);
}

void *halo_f_alloc(MPI_Fint n, size_t size)
{
    void *p = calloc(n > 0 ? (size_t)n : 1, size);
    if (!p)
        abort();
    return p;
}

int halo_f_w_count(MPI_Comm comm, int neighbor, int recv)
{
    int n = 0, flag = 0;
    if (!neighbor) {
        if (MPI_Comm_test_inter(comm, &flag) != MPI_SUCCESS)
            return 0;
        if (flag)
            MPI_Comm_remote_size(comm, &n);
        else
            MPI_Comm_size(comm, &n);
        return n;
    }
    int topo = MPI_UNDEFINED;
    if (MPI_Topo_test(comm, &topo) != MPI_SUCCESS)
        return 0;
    if (topo == MPI_CART) {
        MPI_Cartdim_get(comm, &n);
        return 2 * n;
    }
    if (topo == MPI_GRAPH) {
        int rank;
        MPI_Comm_rank(comm, &rank);
        MPI_Graph_neighbors_count(comm, rank, &n);
        return n;
    }
    if (topo == MPI_DIST_GRAPH) {
        int in = 0, out = 0;
        MPI_Dist_graph_neighbors_count(comm, &in, &out, &flag);
        return recv ? in : out;
    }
    return 0;
}

/* ---------------------------------------------------------------- no IERROR */

HALO_F_EXPORT double pmpi_wtime_(void)
{
    return MPI_Wtime();
}
HALO_F_EXPORT double mpi_wtime_(void) __attribute__((weak, alias("pmpi_wtime_")));

HALO_F_EXPORT double pmpi_wtick_(void)
{
    return MPI_Wtick();
}
HALO_F_EXPORT double mpi_wtick_(void) __attribute__((weak, alias("pmpi_wtick_")));

HALO_F_EXPORT MPI_Aint pmpi_aint_add_(MPI_Aint *base, MPI_Aint *disp)
{
    return MPI_Aint_add(*base, *disp);
}
HALO_F_EXPORT MPI_Aint mpi_aint_add_(MPI_Aint *base, MPI_Aint *disp) __attribute__((weak, alias("pmpi_aint_add_")));

HALO_F_EXPORT MPI_Aint pmpi_aint_diff_(MPI_Aint *addr1, MPI_Aint *addr2)
{
    return MPI_Aint_diff(*addr1, *addr2);
}
HALO_F_EXPORT MPI_Aint mpi_aint_diff_(MPI_Aint *addr1, MPI_Aint *addr2) __attribute__((weak, alias("pmpi_aint_diff_")));

/* MPI_SIZEOF: the module's generic picks one of these by the argument's
 * type and kind (the argument itself, a descriptor, is not read). */
#define F_SIZEOF(tag, n)                                                                           \
    HALO_F_EXPORT void halo_sizeof_##tag##_(void *x, MPI_Fint *size, MPI_Fint *ierror)              \
    {                                                                                              \
        (void)x;                                                                                   \
        *size = n;                                                                                 \
        F_RETURN(ierror, MPI_SUCCESS);                                                              \
    }
F_SIZEOF(i1, 1)
F_SIZEOF(i2, 2)
F_SIZEOF(i4, 4)
F_SIZEOF(i8, 8)
F_SIZEOF(i16, 16)
F_SIZEOF(r4, 4)
F_SIZEOF(r8, 8)
F_SIZEOF(r16, 16)
F_SIZEOF(c4, 8)
F_SIZEOF(c8, 16)
F_SIZEOF(c16, 32)
F_SIZEOF(l1, 1)
F_SIZEOF(l2, 2)
F_SIZEOF(l4, 4)
F_SIZEOF(l8, 8)
F_SIZEOF(c1, 1)

/* MPI_F_SYNC_REG: the call itself is the point (the compiler must assume
 * the buffer read and written). */
HALO_F_EXPORT void pmpi_f_sync_reg_(void *buf)
{
    (void)buf;
}
HALO_F_EXPORT void mpi_f_sync_reg_(void *buf) __attribute__((weak, alias("pmpi_f_sync_reg_")));

/* ---------------------------------------------------------------- start-up */

HALO_F_EXPORT void pmpi_init_(MPI_Fint *ierror)
{
    F_RETURN(ierror, MPI_Init(NULL, NULL));
}
HALO_F_EXPORT void mpi_init_(MPI_Fint *ierror) __attribute__((weak, alias("pmpi_init_")));

HALO_F_EXPORT void pmpi_init_thread_(MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierror)
{
    F_RETURN(ierror, MPI_Init_thread(NULL, NULL, *required, provided));
}
HALO_F_EXPORT void mpi_init_thread_(MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierror)
    __attribute__((weak, alias("pmpi_init_thread_")));

HALO_F_EXPORT void pmpi_info_create_env_(MPI_Fint *info, MPI_Fint *ierror)
{
    MPI_Info c;
    int rc = MPI_Info_create_env(0, NULL, &c);
    if (rc == MPI_SUCCESS)
        *info = MPI_Info_c2f(c);
    F_RETURN(ierror, rc);
}
HALO_F_EXPORT void mpi_info_create_env_(MPI_Fint *info, MPI_Fint *ierror)
    __attribute__((weak, alias("pmpi_info_create_env_")));

/* MPI_PCONTROL(LEVEL): no IERROR in Fortran. */
HALO_F_EXPORT void pmpi_pcontrol_(MPI_Fint *level)
{
    MPI_Pcontrol(*level);
}
HALO_F_EXPORT void mpi_pcontrol_(MPI_Fint *level) __attribute__((weak, alias("pmpi_pcontrol_")));

/* ---------------------------------------------------------------- user operations */

HALO_F_EXPORT void pmpi_op_create_(void (*user_fn)(void), MPI_Fint *commute, MPI_Fint *op, MPI_Fint *ierror)
{
    MPI_Op c;
    int rc = MPI_Op_create((MPI_User_function *)user_fn, *commute != 0, &c);
    if (rc == MPI_SUCCESS) {
        halo_op_t *o = halo_obj_lookup(HALO_KIND_OP, c);
        o->is_fortran = 1;
        *op = MPI_Op_c2f(c);
    }
    F_RETURN(ierror, rc);
}
HALO_F_EXPORT void mpi_op_create_(void (*user_fn)(void), MPI_Fint *commute, MPI_Fint *op, MPI_Fint *ierror)
    __attribute__((weak, alias("pmpi_op_create_")));

/* ---------------------------------------------------------------- error handlers */

static void errh_fortran(MPI_Errhandler e)
{
    halo_errhandler_t *h = halo_obj_lookup(HALO_KIND_ERRHANDLER, e);
    h->fortran = 1;
}

#define F_CREATE_ERRH(lname, Cname, Ftype)                                                         \
    HALO_F_EXPORT void p##lname##_(void (*fn)(void), MPI_Fint *errhandler, MPI_Fint *ierror)        \
    {                                                                                               \
        MPI_Errhandler c;                                                                           \
        int rc = Cname((Ftype *)fn, &c);                                                            \
        if (rc == MPI_SUCCESS) {                                                                    \
            errh_fortran(c);                                                                        \
            *errhandler = MPI_Errhandler_c2f(c);                                                    \
        }                                                                                           \
        F_RETURN(ierror, rc);                                                                       \
    }                                                                                               \
    HALO_F_EXPORT void lname##_(void (*fn)(void), MPI_Fint *errhandler, MPI_Fint *ierror)           \
        __attribute__((weak, alias("p" #lname "_")));

F_CREATE_ERRH(mpi_comm_create_errhandler, MPI_Comm_create_errhandler, MPI_Comm_errhandler_function)
F_CREATE_ERRH(mpi_win_create_errhandler, MPI_Win_create_errhandler, MPI_Win_errhandler_function)
F_CREATE_ERRH(mpi_file_create_errhandler, MPI_File_create_errhandler, MPI_File_errhandler_function)
F_CREATE_ERRH(mpi_session_create_errhandler, MPI_Session_create_errhandler, MPI_Session_errhandler_function)

/* ---------------------------------------------------------------- attributes */

/* The predefined callbacks as Fortran procedures: callable, and known by
 * address to the keyval constructors, which pass C's constants instead. */
typedef void f_copy_fn_t(MPI_Fint *, MPI_Fint *, void *, void *, void *, MPI_Fint *, MPI_Fint *);
typedef void f_delete_fn_t(MPI_Fint *, MPI_Fint *, void *, void *, MPI_Fint *);

#define F_NULL_COPY(lname, Vtype)                                                                  \
    HALO_F_EXPORT void lname##_(MPI_Fint *old, MPI_Fint *keyval, Vtype *extra, Vtype *in, Vtype *out, \
                                MPI_Fint *flag, MPI_Fint *ierror)                                   \
    {                                                                                               \
        (void)old, (void)keyval, (void)extra, (void)in, (void)out;                                  \
        *flag = 0;                                                                                  \
        F_RETURN(ierror, MPI_SUCCESS);                                                              \
    }
#define F_DUP(lname, Vtype)                                                                        \
    HALO_F_EXPORT void lname##_(MPI_Fint *old, MPI_Fint *keyval, Vtype *extra, Vtype *in, Vtype *out, \
                                MPI_Fint *flag, MPI_Fint *ierror)                                   \
    {                                                                                               \
        (void)old, (void)keyval, (void)extra;                                                       \
        *out = *in;                                                                                 \
        *flag = 1;                                                                                  \
        F_RETURN(ierror, MPI_SUCCESS);                                                              \
    }
#define F_NULL_DELETE(lname, Vtype)                                                                \
    HALO_F_EXPORT void lname##_(MPI_Fint *obj, MPI_Fint *keyval, Vtype *val, Vtype *extra,          \
                                MPI_Fint *ierror)                                                   \
    {                                                                                               \
        (void)obj, (void)keyval, (void)val, (void)extra;                                            \
        F_RETURN(ierror, MPI_SUCCESS);                                                              \
    }

F_NULL_COPY(mpi_null_copy_fn, MPI_Fint)
F_DUP(mpi_dup_fn, MPI_Fint)
F_NULL_DELETE(mpi_null_delete_fn, MPI_Fint)
F_NULL_COPY(mpi_comm_null_copy_fn, MPI_Aint)
F_DUP(mpi_comm_dup_fn, MPI_Aint)
F_NULL_DELETE(mpi_comm_null_delete_fn, MPI_Aint)
F_NULL_COPY(mpi_type_null_copy_fn, MPI_Aint)
F_DUP(mpi_type_dup_fn, MPI_Aint)
F_NULL_DELETE(mpi_type_null_delete_fn, MPI_Aint)
F_NULL_COPY(mpi_win_null_copy_fn, MPI_Aint)
F_DUP(mpi_win_dup_fn, MPI_Aint)
F_NULL_DELETE(mpi_win_null_delete_fn, MPI_Aint)

HALO_F_EXPORT void mpi_conversion_fn_null_(void *userbuf, MPI_Fint *datatype, MPI_Fint *count, void *filebuf,
                                           MPI_Offset *position, MPI_Aint *extra, MPI_Fint *ierror)
{
    (void)userbuf, (void)datatype, (void)count, (void)filebuf, (void)position, (void)extra;
    F_RETURN(ierror, MPI_SUCCESS);
}

/* What a keyval made in Fortran keeps as its C extra state (attr.c frees
 * it with the keyval). */
typedef struct f_keyval {
    f_copy_fn_t *copy;
    f_delete_fn_t *del;
    MPI_Aint extra;
    int kind;     /* HALO_KIND_COMM, _DTYPE or _WIN */
    int small;    /* MPI_KEYVAL_CREATE: INTEGER extra state and values */
} f_keyval_t;

static MPI_Fint f_handle(int kind, void *h)
{
    switch (kind) {
    case HALO_KIND_DTYPE: return MPI_Type_c2f((MPI_Datatype)h);
    case HALO_KIND_WIN: return MPI_Win_c2f((MPI_Win)h);
    default: return MPI_Comm_c2f((MPI_Comm)h);
    }
}

static int f_copy(void *old, int keyval, void *extra, void *in, void *out, int *flag)
{
    f_keyval_t *k = extra;
    MPI_Fint h = f_handle(k->kind, old), kv = keyval, fl = 0, ierr = MPI_SUCCESS;
    if (k->small) {
        MPI_Fint e = (MPI_Fint)k->extra, vin = (MPI_Fint)(intptr_t)in, vout = 0;
        k->copy(&h, &kv, &e, &vin, &vout, &fl, &ierr);
        *(void **)out = (void *)(intptr_t)vout;
    } else {
        MPI_Aint vin = (MPI_Aint)(intptr_t)in, vout = 0;
        k->copy(&h, &kv, &k->extra, &vin, &vout, &fl, &ierr);
        *(void **)out = (void *)(intptr_t)vout;
    }
    *flag = fl != 0;
    return ierr;
}

static int f_delete(void *obj, int keyval, void *val, void *extra)
{
    f_keyval_t *k = extra;
    MPI_Fint h = f_handle(k->kind, obj), kv = keyval, ierr = MPI_SUCCESS;
    if (k->small) {
        MPI_Fint e = (MPI_Fint)k->extra, v = (MPI_Fint)(intptr_t)val;
        k->del(&h, &kv, &v, &e, &ierr);
    } else {
        MPI_Aint v = (MPI_Aint)(intptr_t)val;
        k->del(&h, &kv, &v, &k->extra, &ierr);
    }
    return ierr;
}

/* Builds the C callbacks of a Fortran keyval: the predefined procedures
 * become C's constants, others go through f_copy and f_delete. */
static f_keyval_t *f_keyval(int kind, int small, void (*copy)(void), void (*del)(void), MPI_Aint extra,
                            void (**ccopy)(void), void (**cdel)(void))
{
    f_keyval_t *k = calloc(1, sizeof *k);
    if (!k)
        abort();
    k->copy = (f_copy_fn_t *)copy;
    k->del = (f_delete_fn_t *)del;
    k->extra = extra;
    k->kind = kind;
    k->small = small;
    void (*null_copy)(void), (*dup)(void), (*null_delete)(void);
    switch (kind) {
    case HALO_KIND_DTYPE:
        null_copy = (void (*)(void))mpi_type_null_copy_fn_;
        dup = (void (*)(void))mpi_type_dup_fn_;
        null_delete = (void (*)(void))mpi_type_null_delete_fn_;
        break;
    case HALO_KIND_WIN:
        null_copy = (void (*)(void))mpi_win_null_copy_fn_;
        dup = (void (*)(void))mpi_win_dup_fn_;
        null_delete = (void (*)(void))mpi_win_null_delete_fn_;
        break;
    default:
        null_copy = small ? (void (*)(void))mpi_null_copy_fn_ : (void (*)(void))mpi_comm_null_copy_fn_;
        dup = small ? (void (*)(void))mpi_dup_fn_ : (void (*)(void))mpi_comm_dup_fn_;
        null_delete = small ? (void (*)(void))mpi_null_delete_fn_ : (void (*)(void))mpi_comm_null_delete_fn_;
        break;
    }
    /* C's MPI_*_NULL_COPY_FN is 0 and MPI_*_DUP_FN is 1 in the standard ABI. */
    if (copy == null_copy)
        *ccopy = (void (*)(void))MPI_COMM_NULL_COPY_FN;
    else if (copy == dup)
        *ccopy = (void (*)(void))MPI_COMM_DUP_FN;
    else
        *ccopy = (void (*)(void))f_copy;
    *cdel = del == null_delete ? (void (*)(void))MPI_COMM_NULL_DELETE_FN : (void (*)(void))f_delete;
    return k;
}

#define F_CREATE_KEYVAL(lname, Cname, Copy, Delete, kind)                                          \
    HALO_F_EXPORT void p##lname##_(void (*copy)(void), void (*del)(void), MPI_Fint *keyval,          \
                                   MPI_Aint *extra, MPI_Fint *ierror)                                \
    {                                                                                               \
        void (*cc)(void), (*cd)(void);                                                              \
        f_keyval_t *k = f_keyval(kind, 0, copy, del, *extra, &cc, &cd);                            \
        halo_attr_fortran = 1;                                                                      \
        int rc = Cname((Copy *)cc, (Delete *)cd, keyval, k);                                        \
        halo_attr_fortran = 0;                                                                      \
        if (rc != MPI_SUCCESS)                                                                      \
            free(k);                                                                                \
        F_RETURN(ierror, rc);                                                                       \
    }                                                                                               \
    HALO_F_EXPORT void lname##_(void (*copy)(void), void (*del)(void), MPI_Fint *keyval, MPI_Aint *extra, \
                                MPI_Fint *ierror) __attribute__((weak, alias("p" #lname "_")));

F_CREATE_KEYVAL(mpi_comm_create_keyval, MPI_Comm_create_keyval, MPI_Comm_copy_attr_function,
                MPI_Comm_delete_attr_function, HALO_KIND_COMM)
F_CREATE_KEYVAL(mpi_type_create_keyval, MPI_Type_create_keyval, MPI_Type_copy_attr_function,
                MPI_Type_delete_attr_function, HALO_KIND_DTYPE)
F_CREATE_KEYVAL(mpi_win_create_keyval, MPI_Win_create_keyval, MPI_Win_copy_attr_function,
                MPI_Win_delete_attr_function, HALO_KIND_WIN)

HALO_F_EXPORT void pmpi_keyval_create_(void (*copy)(void), void (*del)(void), MPI_Fint *keyval, MPI_Fint *extra,
                                       MPI_Fint *ierror)
{
    void (*cc)(void), (*cd)(void);
    f_keyval_t *k = f_keyval(HALO_KIND_COMM, 1, copy, del, *extra, &cc, &cd);
    halo_attr_fortran = 1;
    int rc = MPI_Keyval_create((MPI_Copy_function *)cc, (MPI_Delete_function *)cd, keyval, k);
    halo_attr_fortran = 0;
    if (rc != MPI_SUCCESS)
        free(k);
    F_RETURN(ierror, rc);
}
HALO_F_EXPORT void mpi_keyval_create_(void (*copy)(void), void (*del)(void), MPI_Fint *keyval, MPI_Fint *extra,
                                      MPI_Fint *ierror) __attribute__((weak, alias("pmpi_keyval_create_")));

#define F_ATTR(lname, Set, Get, Ftype)                                                       \
    HALO_F_EXPORT void p##lname##_set_attr_(MPI_Fint *obj, MPI_Fint *keyval, MPI_Aint *val, MPI_Fint *ierror) \
    {                                                                                               \
        halo_attr_fortran = 1;                                                                      \
        F_RETURN(ierror, Set(Ftype##_f2c(*obj), *keyval, (void *)(intptr_t)*val));                  \
        halo_attr_fortran = 0;                                                                      \
    }                                                                                               \
    HALO_F_EXPORT void lname##_set_attr_(MPI_Fint *obj, MPI_Fint *keyval, MPI_Aint *val, MPI_Fint *ierror) \
        __attribute__((weak, alias("p" #lname "_set_attr_")));                                      \
    HALO_F_EXPORT void p##lname##_get_attr_(MPI_Fint *obj, MPI_Fint *keyval, MPI_Aint *val, MPI_Fint *flag, \
                                            MPI_Fint *ierror)                                       \
    {                                                                                               \
        void *v = NULL;                                                                             \
        int fl = 0;                                                                                 \
        halo_attr_fortran = 1;                                                                      \
        int rc = Get(Ftype##_f2c(*obj), *keyval, &v, &fl);                                          \
        halo_attr_fortran = 0;                                                                      \
        if (rc == MPI_SUCCESS) {                                                                    \
            *flag = fl;                                                                             \
            if (fl)                                                                                 \
                *val = (MPI_Aint)(intptr_t)v;                                                       \
        }                                                                                           \
        F_RETURN(ierror, rc);                                                                       \
    }                                                                                               \
    HALO_F_EXPORT void lname##_get_attr_(MPI_Fint *obj, MPI_Fint *keyval, MPI_Aint *val, MPI_Fint *flag, \
                                         MPI_Fint *ierror) __attribute__((weak, alias("p" #lname "_get_attr_")));

F_ATTR(mpi_comm, MPI_Comm_set_attr, MPI_Comm_get_attr, MPI_Comm)
F_ATTR(mpi_type, MPI_Type_set_attr, MPI_Type_get_attr, MPI_Type)
F_ATTR(mpi_win, MPI_Win_set_attr, MPI_Win_get_attr, MPI_Win)

HALO_F_EXPORT void pmpi_attr_put_(MPI_Fint *comm, MPI_Fint *keyval, MPI_Fint *val, MPI_Fint *ierror)
{
    halo_attr_fortran = 1;
    F_RETURN(ierror, MPI_Attr_put(MPI_Comm_f2c(*comm), *keyval, (void *)(intptr_t)*val));
    halo_attr_fortran = 0;
}
HALO_F_EXPORT void mpi_attr_put_(MPI_Fint *comm, MPI_Fint *keyval, MPI_Fint *val, MPI_Fint *ierror)
    __attribute__((weak, alias("pmpi_attr_put_")));

HALO_F_EXPORT void pmpi_attr_get_(MPI_Fint *comm, MPI_Fint *keyval, MPI_Fint *val, MPI_Fint *flag, MPI_Fint *ierror)
{
    void *v = NULL;
    int fl = 0;
    halo_attr_fortran = 1;
    int rc = MPI_Attr_get(MPI_Comm_f2c(*comm), *keyval, &v, &fl);
    halo_attr_fortran = 0;
    if (rc == MPI_SUCCESS) {
        *flag = fl;
        if (fl)
            *val = (MPI_Fint)(intptr_t)v;
    }
    F_RETURN(ierror, rc);
}
HALO_F_EXPORT void mpi_attr_get_(MPI_Fint *comm, MPI_Fint *keyval, MPI_Fint *val, MPI_Fint *flag, MPI_Fint *ierror)
    __attribute__((weak, alias("pmpi_attr_get_")));

/* ---------------------------------------------------------------- generalized requests */

/* The callbacks get the program's own EXTRA_STATE variable (by address,
 * as it gave it), so what they store there the program sees. */
typedef struct f_greq {
    void (*query)(MPI_Aint *, MPI_Fint *, MPI_Fint *);
    void (*free)(MPI_Aint *, MPI_Fint *);
    void (*cancel)(MPI_Aint *, MPI_Fint *, MPI_Fint *);
    MPI_Aint *extra;
} f_greq_t;

static int f_greq_query(void *extra, MPI_Status *status)
{
    f_greq_t *g = extra;
    MPI_Fint ierr = MPI_SUCCESS;
    g->query(g->extra, (MPI_Fint *)(void *)status, &ierr);
    return ierr;
}

static int f_greq_free(void *extra)
{
    f_greq_t *g = extra;
    MPI_Fint ierr = MPI_SUCCESS;
    g->free(g->extra, &ierr);
    free(g);
    return ierr;
}

static int f_greq_cancel(void *extra, int complete)
{
    f_greq_t *g = extra;
    MPI_Fint ierr = MPI_SUCCESS, c = complete != 0;
    g->cancel(g->extra, &c, &ierr);
    return ierr;
}

HALO_F_EXPORT void pmpi_grequest_start_(void (*query)(void), void (*freef)(void), void (*cancel)(void),
                                        MPI_Aint *extra, MPI_Fint *request, MPI_Fint *ierror)
{
    f_greq_t *g = malloc(sizeof *g);
    if (!g)
        abort();
    g->query = (void (*)(MPI_Aint *, MPI_Fint *, MPI_Fint *))query;
    g->free = (void (*)(MPI_Aint *, MPI_Fint *))freef;
    g->cancel = (void (*)(MPI_Aint *, MPI_Fint *, MPI_Fint *))cancel;
    g->extra = extra;
    MPI_Request c;
    int rc = MPI_Grequest_start(f_greq_query, f_greq_free, f_greq_cancel, g, &c);
    if (rc == MPI_SUCCESS)
        *request = MPI_Request_c2f(c);
    else
        free(g);
    F_RETURN(ierror, rc);
}
HALO_F_EXPORT void mpi_grequest_start_(void (*query)(void), void (*freef)(void), void (*cancel)(void),
                                       MPI_Aint *extra, MPI_Fint *request, MPI_Fint *ierror)
    __attribute__((weak, alias("pmpi_grequest_start_")));

/* ---------------------------------------------------------------- info strings */

/* halo_f_str_out of at most the first n characters of c (a BUFLEN). */
static void f_str_out_first(char *f, size_t len, char *c, int n)
{
    if (strlen(c) > (size_t)n)
        c[n] = '\0';
    halo_f_str_out(f, len, c);
}

/* MPI_INFO_GET_STRING: BUFLEN counts characters (C counts the NUL too);
 * nothing is written when the key is absent or BUFLEN is 0, else the first
 * BUFLEN characters, padded with blanks. */
HALO_F_EXPORT void pmpi_info_get_string_(MPI_Fint *info, char *key, MPI_Fint *buflen, char *value, MPI_Fint *flag,
                                         MPI_Fint *ierror, size_t key_len, size_t value_len)
{
    char *ckey = halo_f_str_trim(key, key_len);
    int in = *buflen, cbl = 0, fl = 0;
    int rc = MPI_Info_get_string(MPI_Info_f2c(*info), ckey, &cbl, NULL, &fl);
    if (rc == MPI_SUCCESS && fl && in > 0) {
        char *c = halo_f_str_buf((size_t)cbl);
        rc = MPI_Info_get_string(MPI_Info_f2c(*info), ckey, &cbl, c, &fl);
        if (rc == MPI_SUCCESS)
            f_str_out_first(value, value_len, c, in);
        else
            free(c);
    }
    if (rc == MPI_SUCCESS) {
        *flag = fl;
        if (fl)
            *buflen = cbl - 1;
    }
    free(ckey);
    F_RETURN(ierror, rc);
}
HALO_F_EXPORT void mpi_info_get_string_(MPI_Fint *info, char *key, MPI_Fint *buflen, char *value, MPI_Fint *flag,
                                        MPI_Fint *ierror, size_t key_len, size_t value_len)
    __attribute__((weak, alias("pmpi_info_get_string_")));

/* MPI_SESSION_GET_NTH_PSET: PSET_LEN counts characters, as
 * MPI_INFO_GET_STRING's BUFLEN (0 asks for the length only). */
HALO_F_EXPORT void pmpi_session_get_nth_pset_(MPI_Fint *session, MPI_Fint *info, MPI_Fint *n, MPI_Fint *pset_len,
                                              char *pset_name, MPI_Fint *ierror, size_t pset_name_len)
{
    MPI_Session s = MPI_Session_f2c(*session);
    MPI_Info i = MPI_Info_f2c(*info);
    int in = *pset_len, cl = 0;
    int rc = MPI_Session_get_nth_pset(s, i, *n, &cl, NULL);
    if (rc == MPI_SUCCESS && in > 0) {
        char *c = halo_f_str_buf((size_t)cl);
        int l2 = cl;
        rc = MPI_Session_get_nth_pset(s, i, *n, &l2, c);
        if (rc == MPI_SUCCESS)
            f_str_out_first(pset_name, pset_name_len, c, in);
        else
            free(c);
    }
    if (rc == MPI_SUCCESS)
        *pset_len = cl - 1;
    F_RETURN(ierror, rc);
}
HALO_F_EXPORT void mpi_session_get_nth_pset_(MPI_Fint *session, MPI_Fint *info, MPI_Fint *n, MPI_Fint *pset_len,
                                             char *pset_name, MPI_Fint *ierror, size_t pset_name_len)
    __attribute__((weak, alias("pmpi_session_get_nth_pset_")));

/* ---------------------------------------------------------------- data representations */

typedef void f_conv_fn_t(void *, MPI_Fint *, MPI_Fint *, void *, MPI_Offset *, MPI_Aint *, MPI_Fint *);
typedef void f_extent_fn_t(MPI_Fint *, MPI_Aint *, MPI_Aint *, MPI_Fint *);

/* Registered representations live as long as the process: so does this. */
typedef struct f_datarep {
    f_conv_fn_t *read, *write;
    f_extent_fn_t *extent;
    MPI_Aint extra;
} f_datarep_t;

static int f_conv(f_conv_fn_t *fn, void *userbuf, MPI_Datatype datatype, int count, void *filebuf,
                  MPI_Offset position, f_datarep_t *d)
{
    MPI_Fint dt = MPI_Type_c2f(datatype), n = count, ierr = MPI_SUCCESS;
    fn(userbuf, &dt, &n, filebuf, &position, &d->extra, &ierr);
    return ierr;
}

static int f_read(void *userbuf, MPI_Datatype datatype, int count, void *filebuf, MPI_Offset position,
                  void *extra)
{
    f_datarep_t *d = extra;
    return f_conv(d->read, userbuf, datatype, count, filebuf, position, d);
}

static int f_write(void *userbuf, MPI_Datatype datatype, int count, void *filebuf, MPI_Offset position,
                   void *extra)
{
    f_datarep_t *d = extra;
    return f_conv(d->write, userbuf, datatype, count, filebuf, position, d);
}

static int f_extent(MPI_Datatype datatype, MPI_Aint *extent, void *extra)
{
    f_datarep_t *d = extra;
    MPI_Fint dt = MPI_Type_c2f(datatype), ierr = MPI_SUCCESS;
    d->extent(&dt, extent, &d->extra, &ierr);
    return ierr;
}

HALO_F_EXPORT void pmpi_register_datarep_(char *datarep, void (*read)(void), void (*write)(void),
                                          void (*extent)(void), MPI_Aint *extra, MPI_Fint *ierror,
                                          size_t datarep_len)
{
    f_datarep_t *d = malloc(sizeof *d);
    if (!d)
        abort();
    void (*null_fn)(void) = (void (*)(void))mpi_conversion_fn_null_;
    d->read = (f_conv_fn_t *)read;
    d->write = (f_conv_fn_t *)write;
    d->extent = (f_extent_fn_t *)extent;
    d->extra = *extra;
    char *name = halo_f_str_in(datarep, datarep_len);
    int rc = MPI_Register_datarep(name, read == null_fn ? MPI_CONVERSION_FN_NULL : f_read,
                                  write == null_fn ? MPI_CONVERSION_FN_NULL : f_write, f_extent, d);
    free(name);
    if (rc != MPI_SUCCESS)
        free(d);
    F_RETURN(ierror, rc);
}
HALO_F_EXPORT void mpi_register_datarep_(char *datarep, void (*read)(void), void (*write)(void),
                                         void (*extent)(void), MPI_Aint *extra, MPI_Fint *ierror,
                                         size_t datarep_len) __attribute__((weak, alias("pmpi_register_datarep_")));

/* ---------------------------------------------------------------- spawn */

static int f_blank(const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (s[i] != ' ')
            return 0;
    return 1;
}

/* An argument vector: the strings of `a` (each `len` long, `stride`
 * strings apart) up to the first blank one, as a NULL-terminated C array;
 * trailing blanks dropped, and leading ones too when `lead`. */
static char **f_argv(const char *a, size_t len, size_t stride, int lead)
{
    int n = 0;
    while (!f_blank(a + (size_t)n * stride * len, len))
        n++;
    char **v = calloc((size_t)n + 1, sizeof *v);
    if (!v)
        abort();
    for (int i = 0; i < n; i++)
        v[i] = (lead ? halo_f_str_trim : halo_f_str_in)(a + (size_t)i * stride * len, len);
    return v;
}

static void f_argv_free(char **v)
{
    if (!v)
        return;
    for (int i = 0; v[i]; i++)
        free(v[i]);
    free(v);
}

static int f_is_root(MPI_Comm comm, int root)
{
    int rank = -1, inter = 0;
    if (MPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter)
        return 0;
    MPI_Comm_rank(comm, &rank);
    return rank == root;
}

/* mpif.h and the mpi module drop the arguments' leading blanks too (as
 * MPICH's do); mpi_f08 keeps them. */
static void f_spawn(char *command, char *argv, MPI_Fint *maxprocs, MPI_Fint *info, MPI_Fint *root, MPI_Fint *comm,
                    MPI_Fint *intercomm, MPI_Fint *errcodes, MPI_Fint *ierror, size_t command_len, size_t argv_len,
                    int lead)
{
    MPI_Comm c = MPI_Comm_f2c(*comm), ic;
    /* The command and arguments are significant at the root only. */
    int root_here = f_is_root(c, *root);
    char *cmd = halo_f_str_trim(command, root_here ? command_len : 0);
    char **av = MPI_ARGV_NULL;
    if (root_here && argv != &halof_argv_null_)
        av = f_argv(argv, argv_len, 1, lead);
    int rc = MPI_Comm_spawn(cmd, av, *maxprocs, MPI_Info_f2c(*info), *root, c, &ic,
                            errcodes == &halof_errcodes_ignore_ ? MPI_ERRCODES_IGNORE : errcodes);
    if (rc == MPI_SUCCESS)
        *intercomm = MPI_Comm_c2f(ic);
    f_argv_free(av);
    free(cmd);
    F_RETURN(ierror, rc);
}

static void f_spawn_multiple(MPI_Fint *count, char *commands, char *argvs, MPI_Fint *maxprocs, MPI_Fint *infos,
                             MPI_Fint *root, MPI_Fint *comm, MPI_Fint *intercomm, MPI_Fint *errcodes,
                             MPI_Fint *ierror, size_t commands_len, size_t argvs_len, int lead)
{
    MPI_Comm c = MPI_Comm_f2c(*comm), ic;
    /* The arrays are significant at the root only. */
    int root_here = f_is_root(c, *root);
    int n = root_here && *count > 0 ? *count : 0;
    char **cmds = halo_f_alloc(n, sizeof *cmds);
    char ***avs = argvs == &halof_argvs_null_ ? MPI_ARGVS_NULL : halo_f_alloc(n, sizeof *avs);
    MPI_Info *cinfos = halo_f_alloc(n, sizeof *cinfos);
    for (int i = 0; i < n; i++) {
        cmds[i] = halo_f_str_trim(commands + (size_t)i * commands_len, commands_len);
        /* ARRAY_OF_ARGV(COUNT, *): command i's j-th argument is element
         * (i, j), stored column by column. */
        if (avs)
            avs[i] = f_argv(argvs + (size_t)i * argvs_len, argvs_len, (size_t)*count, lead);
        cinfos[i] = MPI_Info_f2c(infos[i]);
    }
    int rc = MPI_Comm_spawn_multiple(*count, cmds, avs, maxprocs, cinfos, *root, c, &ic,
                                     errcodes == &halof_errcodes_ignore_ ? MPI_ERRCODES_IGNORE : errcodes);
    if (rc == MPI_SUCCESS)
        *intercomm = MPI_Comm_c2f(ic);
    for (int i = 0; i < n; i++) {
        free(cmds[i]);
        if (avs)
            f_argv_free(avs[i]);
    }
    free(cmds);
    free(avs);
    free(cinfos);
    F_RETURN(ierror, rc);
}

#define F_SPAWN(lname, lead)                                                                       \
    HALO_F_EXPORT void lname(char *command, char *argv, MPI_Fint *maxprocs, MPI_Fint *info, MPI_Fint *root, \
                             MPI_Fint *comm, MPI_Fint *intercomm, MPI_Fint *errcodes, MPI_Fint *ierror,    \
                             size_t command_len, size_t argv_len)                                          \
    {                                                                                              \
        f_spawn(command, argv, maxprocs, info, root, comm, intercomm, errcodes, ierror, command_len,   \
                argv_len, lead);                                                                   \
    }
#define F_SPAWN_MULTIPLE(lname, lead)                                                              \
    HALO_F_EXPORT void lname(MPI_Fint *count, char *commands, char *argvs, MPI_Fint *maxprocs,      \
                             MPI_Fint *infos, MPI_Fint *root, MPI_Fint *comm, MPI_Fint *intercomm, \
                             MPI_Fint *errcodes, MPI_Fint *ierror, size_t commands_len,            \
                             size_t argvs_len)                                                     \
    {                                                                                              \
        f_spawn_multiple(count, commands, argvs, maxprocs, infos, root, comm, intercomm, errcodes, \
                         ierror, commands_len, argvs_len, lead);                                   \
    }
F_SPAWN(pmpi_comm_spawn_, 1)
F_SPAWN(pmpi_comm_spawn_f08_, 0)
F_SPAWN_MULTIPLE(pmpi_comm_spawn_multiple_, 1)
F_SPAWN_MULTIPLE(pmpi_comm_spawn_multiple_f08_, 0)
/* The MPI_ names, weak as every other's, so a profiling tool can wrap them. */
extern __typeof__(pmpi_comm_spawn_) mpi_comm_spawn_ HALO_F_EXPORT __attribute__((weak, alias("pmpi_comm_spawn_")));
extern __typeof__(pmpi_comm_spawn_f08_) mpi_comm_spawn_f08_ HALO_F_EXPORT
    __attribute__((weak, alias("pmpi_comm_spawn_f08_")));
extern __typeof__(pmpi_comm_spawn_multiple_) mpi_comm_spawn_multiple_ HALO_F_EXPORT
    __attribute__((weak, alias("pmpi_comm_spawn_multiple_")));
extern __typeof__(pmpi_comm_spawn_multiple_f08_) mpi_comm_spawn_multiple_f08_ HALO_F_EXPORT
    __attribute__((weak, alias("pmpi_comm_spawn_multiple_f08_")));

/* ---------------------------------------------------------------- removed in MPI-3.0 */

/* The Fortran forms of the functions MPI-3.0 removed (kept for old
 * programs, as C's are): addresses, displacements and extents are default
 * INTEGERs there. A value that does not fit gives MPI_ERR_ARG. */
static int f_fit(MPI_Aint v, MPI_Fint *out, const char *fname, const char *what)
{
    if (v != (MPI_Aint)(MPI_Fint)v) {
        int rc = halo_err(MPI_ERR_ARG, "(%s=%lld): does not fit in a default INTEGER (use the "
                          "INTEGER(KIND=MPI_ADDRESS_KIND) form of its replacement)", what, (long long)v);
        return halo_err_dispatch(HALO_EOBJ_COMM, (void *)MPI_COMM_WORLD, rc, fname);
    }
    *out = (MPI_Fint)v;
    return MPI_SUCCESS;
}

static MPI_Aint *f_aints(MPI_Fint n, const MPI_Fint *v)
{
    MPI_Aint *a = halo_f_alloc(n, sizeof *a);
    for (int i = 0; i < n; i++)
        a[i] = v[i];
    return a;
}

HALO_F_EXPORT void pmpi_address_(void *location, MPI_Fint *address, MPI_Fint *ierror)
{
    MPI_Aint a;
    int rc = MPI_Get_address(halo_f_buf(location), &a);
    if (rc == MPI_SUCCESS)
        rc = f_fit(a, address, "MPI_ADDRESS", "address");
    F_RETURN(ierror, rc);
}
HALO_F_EXPORT void mpi_address_(void *location, MPI_Fint *address, MPI_Fint *ierror)
    __attribute__((weak, alias("pmpi_address_")));

#define F_TYPE_BOUND(lname, Cname, FNAME, what)                                                     \
    HALO_F_EXPORT void p##lname##_(MPI_Fint *datatype, MPI_Fint *v, MPI_Fint *ierror)              \
    {                                                                                              \
        MPI_Aint a;                                                                                \
        int rc = Cname(MPI_Type_f2c(*datatype), &a);                                               \
        if (rc == MPI_SUCCESS)                                                                     \
            rc = f_fit(a, v, FNAME, what);                                                         \
        F_RETURN(ierror, rc);                                                                       \
    }                                                                                              \
    HALO_F_EXPORT void lname##_(MPI_Fint *datatype, MPI_Fint *v, MPI_Fint *ierror)                 \
        __attribute__((weak, alias("p" #lname "_")));

F_TYPE_BOUND(mpi_type_extent, MPI_Type_extent, "MPI_TYPE_EXTENT", "extent")
F_TYPE_BOUND(mpi_type_lb, MPI_Type_lb, "MPI_TYPE_LB", "displacement")
F_TYPE_BOUND(mpi_type_ub, MPI_Type_ub, "MPI_TYPE_UB", "displacement")

HALO_F_EXPORT void pmpi_type_hvector_(MPI_Fint *count, MPI_Fint *blocklength, MPI_Fint *stride, MPI_Fint *oldtype,
                                      MPI_Fint *newtype, MPI_Fint *ierror)
{
    MPI_Datatype c;
    int rc = MPI_Type_hvector(*count, *blocklength, *stride, MPI_Type_f2c(*oldtype), &c);
    if (rc == MPI_SUCCESS)
        *newtype = MPI_Type_c2f(c);
    F_RETURN(ierror, rc);
}
HALO_F_EXPORT void mpi_type_hvector_(MPI_Fint *count, MPI_Fint *blocklength, MPI_Fint *stride, MPI_Fint *oldtype,
                                     MPI_Fint *newtype, MPI_Fint *ierror) __attribute__((weak, alias("pmpi_type_hvector_")));

HALO_F_EXPORT void pmpi_type_hindexed_(MPI_Fint *count, MPI_Fint *blocklengths, MPI_Fint *displacements,
                                       MPI_Fint *oldtype, MPI_Fint *newtype, MPI_Fint *ierror)
{
    MPI_Datatype c;
    MPI_Aint *d = f_aints(*count, displacements);
    int rc = MPI_Type_hindexed(*count, blocklengths, d, MPI_Type_f2c(*oldtype), &c);
    free(d);
    if (rc == MPI_SUCCESS)
        *newtype = MPI_Type_c2f(c);
    F_RETURN(ierror, rc);
}
HALO_F_EXPORT void mpi_type_hindexed_(MPI_Fint *count, MPI_Fint *blocklengths, MPI_Fint *displacements,
                                      MPI_Fint *oldtype, MPI_Fint *newtype, MPI_Fint *ierror)
    __attribute__((weak, alias("pmpi_type_hindexed_")));

HALO_F_EXPORT void pmpi_type_struct_(MPI_Fint *count, MPI_Fint *blocklengths, MPI_Fint *displacements,
                                     MPI_Fint *types, MPI_Fint *newtype, MPI_Fint *ierror)
{
    MPI_Datatype c, *t = halo_f_alloc(*count, sizeof *t);
    for (int i = 0; i < *count; i++)
        t[i] = MPI_Type_f2c(types[i]);
    MPI_Aint *d = f_aints(*count, displacements);
    int rc = MPI_Type_struct(*count, blocklengths, d, t, &c);
    free(d);
    free(t);
    if (rc == MPI_SUCCESS)
        *newtype = MPI_Type_c2f(c);
    F_RETURN(ierror, rc);
}
HALO_F_EXPORT void mpi_type_struct_(MPI_Fint *count, MPI_Fint *blocklengths, MPI_Fint *displacements,
                                    MPI_Fint *types, MPI_Fint *newtype, MPI_Fint *ierror)
    __attribute__((weak, alias("pmpi_type_struct_")));

HALO_F_EXPORT void pmpi_errhandler_create_(void (*fn)(void), MPI_Fint *errhandler, MPI_Fint *ierror)
{
    MPI_Errhandler c;
    int rc = MPI_Errhandler_create((MPI_Handler_function *)fn, &c);
    if (rc == MPI_SUCCESS) {
        errh_fortran(c);
        *errhandler = MPI_Errhandler_c2f(c);
    }
    F_RETURN(ierror, rc);
}
HALO_F_EXPORT void mpi_errhandler_create_(void (*fn)(void), MPI_Fint *errhandler, MPI_Fint *ierror)
    __attribute__((weak, alias("pmpi_errhandler_create_")));

HALO_F_EXPORT void pmpi_errhandler_set_(MPI_Fint *comm, MPI_Fint *errhandler, MPI_Fint *ierror)
{
    F_RETURN(ierror, MPI_Errhandler_set(MPI_Comm_f2c(*comm), MPI_Errhandler_f2c(*errhandler)));
}
HALO_F_EXPORT void mpi_errhandler_set_(MPI_Fint *comm, MPI_Fint *errhandler, MPI_Fint *ierror)
    __attribute__((weak, alias("pmpi_errhandler_set_")));

HALO_F_EXPORT void pmpi_errhandler_get_(MPI_Fint *comm, MPI_Fint *errhandler, MPI_Fint *ierror)
{
    MPI_Errhandler c;
    int rc = MPI_Errhandler_get(MPI_Comm_f2c(*comm), &c);
    if (rc == MPI_SUCCESS)
        *errhandler = MPI_Errhandler_c2f(c);
    F_RETURN(ierror, rc);
}
HALO_F_EXPORT void mpi_errhandler_get_(MPI_Fint *comm, MPI_Fint *errhandler, MPI_Fint *ierror)
    __attribute__((weak, alias("pmpi_errhandler_get_")));

/* ---------------------------------------------------------------- mpi_f08 */

/* The == and /= of the mpi_f08 module's handle types (one INTEGER each). */
#define F08_COMPARE(h)                                                                             \
    HALO_F_EXPORT MPI_Fint halo_f08_##h##_eq_(const MPI_Fint *a, const MPI_Fint *b)                \
    {                                                                                              \
        return *a == *b;                                                                           \
    }                                                                                              \
    HALO_F_EXPORT MPI_Fint halo_f08_##h##_ne_(const MPI_Fint *a, const MPI_Fint *b)                \
    {                                                                                              \
        return *a != *b;                                                                           \
    }
F08_COMPARE(comm)
F08_COMPARE(datatype)
F08_COMPARE(errhandler)
F08_COMPARE(file)
F08_COMPARE(group)
F08_COMPARE(info)
F08_COMPARE(message)
F08_COMPARE(op)
F08_COMPARE(request)
F08_COMPARE(session)
F08_COMPARE(win)

#include "fortran/fortran_alias_gen.h"
