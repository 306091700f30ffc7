/* Keyvals and attribute lists. A list keeps the newest attribute first, so
 * deleting from the head runs delete callbacks in the reverse order of
 * setting, as MPI_Finalize must for MPI_COMM_SELF. */
#include "core/attr.h"

#include "binding/api_gen.h"
#include "core/comm.h"
#include "core/errors.h"
#include "datatype/dtype.h"

#define KEYVAL_BASE 1024

typedef int halo_copy_fn_t(void *oldobj, int keyval, void *extra, void *in, void *out, int *flag);
typedef int halo_delete_fn_t(void *obj, int keyval, void *value, void *extra);

_Thread_local int halo_attr_fortran;

typedef struct keyval {
    halo_kind_t kind;     /* kind of object it applies to */
    int fortran;          /* made through the Fortran binding (extra: its
                           * record, allocated there, freed here) */
    int live;             /* not yet freed by the user */
    int refs;             /* attributes using it, plus one while live */
    halo_copy_fn_t *copy;
    halo_delete_fn_t *del;
    void *extra;
} keyval_t;

static keyval_t *keyvals;
static int nkeyvals, capkeyvals;

/* Predefined communicator attributes: the values live here; the attribute
 * value handed out is the address of the int. */
static int attr_tag_ub, attr_host, attr_io, attr_wtime_global, attr_universe, attr_appnum,
    attr_lastused;

static keyval_t *keyval_get(int keyval)
{
    int i = keyval - KEYVAL_BASE;
    if (i < 0 || i >= nkeyvals || keyvals[i].refs == 0)
        return NULL;
    return &keyvals[i];
}

static void keyval_unref(keyval_t *k)
{
    /* The Fortran binding's record of the procedures (its extra state)
     * goes with the keyval's last use. */
    if (--k->refs == 0 && k->fortran) {
        free(k->extra);
        k->extra = NULL;
    }
}

static int keyval_create(halo_kind_t kind, void *copy, void *del, int *keyval_p, void *extra)
{
    if (nkeyvals == capkeyvals) {
        capkeyvals = capkeyvals ? 2 * capkeyvals : 32;
        keyvals = halo_realloc(keyvals, (size_t)capkeyvals * sizeof *keyvals);
    }
    keyvals[nkeyvals] = (keyval_t){kind, halo_attr_fortran, 1, 1, (halo_copy_fn_t *)copy,
                                   (halo_delete_fn_t *)del, extra};
    *keyval_p = KEYVAL_BASE + nkeyvals++;
    return MPI_SUCCESS;
}

static int keyval_free(halo_kind_t kind, int *keyval_p)
{
    keyval_t *k = keyval_get(*keyval_p);
    if (!k || k->kind != kind)
        return halo_err(MPI_ERR_KEYVAL, "(keyval=%d): not a valid keyval of this kind", *keyval_p);
    /* A copy of the handle freed again while attributes still hold the
     * keyval (a delete callback freeing "its" keyval, then the program
     * freeing it too): nothing more to release, as in MPICH. */
    if (k->live) {
        k->live = 0;
        keyval_unref(k);
    }
    *keyval_p = MPI_KEYVAL_INVALID;
    return MPI_SUCCESS;
}

static bool is_predefined_comm_key(int keyval)
{
    return keyval == MPI_TAG_UB || keyval == MPI_HOST || keyval == MPI_IO ||
           keyval == MPI_WTIME_IS_GLOBAL || keyval == MPI_UNIVERSE_SIZE || keyval == MPI_APPNUM ||
           keyval == MPI_LASTUSEDCODE;
}

/* An attribute's value as C (a pointer; for a Fortran attribute, to its
 * integer) or Fortran (the integer; for a C attribute, the pointer's
 * address) sees it. */
static void *attr_view(const halo_attr_t *a, int fortran)
{
    return fortran && a->fortran ? (void *)(intptr_t)a->fval : a->value;
}

static int check_keyval(halo_kind_t kind, int keyval, keyval_t **k_p)
{
    keyval_t *k = keyval_get(keyval);
    if (!k || k->kind != kind)
        return halo_err(MPI_ERR_KEYVAL, "(keyval=%d): not a valid keyval for this object kind", keyval);
    *k_p = k;
    return MPI_SUCCESS;
}

static int run_delete(halo_kind_t kind, void *obj, halo_attr_t *a, keyval_t *k)
{
    /* The callback runs with the (recursive) library lock held: it may call
     * MPI again, and the attribute list must not change under us. */
    (void)kind;
    if (!k->del)
        return MPI_SUCCESS;
    return k->del(halo_obj_handle(obj), a->keyval, attr_view(a, k->fortran), k->extra);
}

/* Stores a value as C or Fortran set it. */
static void attr_store(halo_attr_t *a, void *value, int fortran)
{
    a->fortran = fortran;
    a->fval = fortran ? (MPI_Aint)(intptr_t)value : 0;
    a->value = fortran ? (void *)&a->fval : value;
}

int halo_attr_set(halo_kind_t kind, void *obj, halo_attr_t **list_p, int keyval, void *value)
{
    keyval_t *k = NULL;
    int rc;
    if (kind == HALO_KIND_COMM && is_predefined_comm_key(keyval))
        return halo_err(MPI_ERR_KEYVAL, "(keyval=%d): predefined attributes cannot be set", keyval);
    if ((rc = check_keyval(kind, keyval, &k)))
        return rc;
    /* Replacing runs the old value's delete callback first, with the
     * attribute unlinked: the callback may touch the list (even delete the
     * same attribute). A failing callback leaves the old value in place. */
    for (halo_attr_t **pp = list_p; *pp; pp = &(*pp)->next) {
        halo_attr_t *a = *pp;
        if (a->keyval == keyval) {
            *pp = a->next;
            if ((rc = run_delete(kind, obj, a, k))) {
                a->next = *list_p;
                *list_p = a;
                return rc;
            }
            attr_store(a, value, halo_attr_fortran);
            a->next = *list_p;
            *list_p = a;
            return MPI_SUCCESS;
        }
    }
    halo_attr_t *a = halo_malloc(sizeof *a);
    a->keyval = keyval;
    attr_store(a, value, halo_attr_fortran);
    a->next = *list_p;
    *list_p = a;
    k->refs++;
    return MPI_SUCCESS;
}

int halo_attr_get(halo_kind_t kind, void *obj, halo_attr_t **list_p, int keyval, void *value_p,
                  int *flag_p)
{
    if (kind == HALO_KIND_COMM && is_predefined_comm_key(keyval)) {
        /* A communicator of the Sessions Model has MPI_TAG_UB only; the
         * others describe MPI_COMM_WORLD's launch (MPI 4.0, environmental
         * inquiries), which a session does not have. */
        if (keyval != MPI_TAG_UB && ((const halo_comm_t *)obj)->session) {
            *flag_p = 0;
            return MPI_SUCCESS;
        }
        int *v = NULL;
        switch (keyval) {
        case MPI_TAG_UB: v = &attr_tag_ub; break;
        case MPI_HOST: v = &attr_host; break;
        case MPI_IO: v = &attr_io; break;
        case MPI_WTIME_IS_GLOBAL: v = &attr_wtime_global; break;
        case MPI_UNIVERSE_SIZE:
            /* Set only when the launcher was told one (mpiexec -usize). */
            if (attr_universe <= 0) {
                *flag_p = 0;
                return MPI_SUCCESS;
            }
            v = &attr_universe;
            break;
        case MPI_APPNUM: v = &attr_appnum; break;
        case MPI_LASTUSEDCODE: attr_lastused = halo_err_last_used(); v = &attr_lastused; break;
        }
        /* C gets a pointer to the value, Fortran the value. */
        *(void **)value_p = halo_attr_fortran ? (void *)(intptr_t)*v : v;
        *flag_p = 1;
        return MPI_SUCCESS;
    }
    keyval_t *k = NULL;
    int rc;
    if ((rc = check_keyval(kind, keyval, &k)))
        return rc;
    for (halo_attr_t *a = *list_p; a; a = a->next) {
        if (a->keyval == keyval) {
            *(void **)value_p = attr_view(a, halo_attr_fortran);
            *flag_p = 1;
            return MPI_SUCCESS;
        }
    }
    *flag_p = 0;
    return MPI_SUCCESS;
}

int halo_attr_delete(halo_kind_t kind, void *obj, halo_attr_t **list_p, int keyval)
{
    keyval_t *k = NULL;
    int rc;
    if (kind == HALO_KIND_COMM && is_predefined_comm_key(keyval))
        return halo_err(MPI_ERR_KEYVAL, "(keyval=%d): predefined attributes cannot be deleted", keyval);
    if ((rc = check_keyval(kind, keyval, &k)))
        return rc;
    for (halo_attr_t **pp = list_p; *pp; pp = &(*pp)->next) {
        halo_attr_t *a = *pp;
        if (a->keyval == keyval) {
            /* Unlinked before the callback runs (it may change the list);
             * put back if the callback fails. */
            *pp = a->next;
            if ((rc = run_delete(kind, obj, a, k))) {
                a->next = *list_p;
                *list_p = a;
                return rc;
            }
            free(a);
            keyval_unref(k);
            return MPI_SUCCESS;
        }
    }
    return halo_err(MPI_ERR_KEYVAL, "(keyval=%d): no such attribute on this object", keyval);
}

int halo_attr_copy_all(halo_kind_t kind, void *oldobj, halo_attr_t *old, halo_attr_t **new_p)
{
    /* Copy in the old list's order reversed so the new list keeps the same
     * newest-first order. */
    (void)kind;
    int n = 0;
    for (halo_attr_t *a = old; a; a = a->next)
        n++;
    halo_attr_t **v = halo_malloc((size_t)(n ? n : 1) * sizeof *v);
    n = 0;
    for (halo_attr_t *a = old; a; a = a->next)
        v[n++] = a;
    int rc = MPI_SUCCESS;
    for (int i = n - 1; i >= 0; i--) {
        keyval_t *k = keyval_get(v[i]->keyval);
        if (!k || !k->copy)
            continue;   /* MPI_NULL_COPY_FN: not copied */
        void *out = NULL;
        int flag = 0, fortran = k->fortran;
        if ((uintptr_t)k->copy == 1) {   /* MPI_*_DUP_FN: the value as it was set */
            fortran = v[i]->fortran;
            out = attr_view(v[i], fortran);
            flag = 1;
        } else {
            rc = k->copy(halo_obj_handle(oldobj), v[i]->keyval, k->extra, attr_view(v[i], k->fortran), &out,
                         &flag);
            if (rc != MPI_SUCCESS)
                break;
        }
        if (flag) {
            halo_attr_t *a = halo_malloc(sizeof *a);
            a->keyval = v[i]->keyval;
            attr_store(a, out, fortran);
            a->next = *new_p;
            *new_p = a;
            k->refs++;
        }
    }
    free(v);
    return rc;
}

int halo_attr_delete_all(halo_kind_t kind, void *obj, halo_attr_t **list_p)
{
    int rc = MPI_SUCCESS;
    while (*list_p) {
        halo_attr_t *a = *list_p;
        *list_p = a->next;   /* unlinked first: the callback may change the list */
        keyval_t *k = keyval_get(a->keyval);
        if (k) {
            int r = run_delete(kind, obj, a, k);
            if (r != MPI_SUCCESS && rc == MPI_SUCCESS)
                rc = r;
            keyval_unref(k);
        }
        free(a);
    }
    return rc;
}

void halo_attr_init_predef(void)
{
    attr_tag_ub = INT32_MAX;
    attr_host = MPI_PROC_NULL;
    attr_io = MPI_ANY_SOURCE;
    attr_wtime_global = 0;
    attr_universe = halo_world.universe_size;
    attr_appnum = halo_world.appnum;
}

void halo_attr_finalize(void)
{
    free(keyvals);
    keyvals = NULL;
    nkeyvals = capkeyvals = 0;
}

/* ---------------------------------------------------------------- MPI API */

int halo_api_comm_create_keyval(MPI_Comm_copy_attr_function *copy, MPI_Comm_delete_attr_function *del,
                                int *keyval, void *extra)
{
    return keyval_create(HALO_KIND_COMM, (void *)copy, (void *)del, keyval, extra);
}
int halo_api_keyval_create(MPI_Copy_function *copy, MPI_Delete_function *del, int *keyval, void *extra)
{
    return keyval_create(HALO_KIND_COMM, (void *)copy, (void *)del, keyval, extra);
}
int halo_api_type_create_keyval(MPI_Type_copy_attr_function *copy, MPI_Type_delete_attr_function *del,
                                int *keyval, void *extra)
{
    return keyval_create(HALO_KIND_DTYPE, (void *)copy, (void *)del, keyval, extra);
}
int halo_api_win_create_keyval(MPI_Win_copy_attr_function *copy, MPI_Win_delete_attr_function *del,
                               int *keyval, void *extra)
{
    return keyval_create(HALO_KIND_WIN, (void *)copy, (void *)del, keyval, extra);
}
int halo_api_comm_free_keyval(int *keyval) { return keyval_free(HALO_KIND_COMM, keyval); }
int halo_api_keyval_free(int *keyval) { return keyval_free(HALO_KIND_COMM, keyval); }
int halo_api_type_free_keyval(int *keyval) { return keyval_free(HALO_KIND_DTYPE, keyval); }
int halo_api_win_free_keyval(int *keyval) { return keyval_free(HALO_KIND_WIN, keyval); }

int halo_api_comm_set_attr(MPI_Comm comm, int keyval, void *value)
{
    halo_comm_t *c = halo_comm_ptr(comm);
    return halo_attr_set(HALO_KIND_COMM, c, &c->attrs, keyval, value);
}
int halo_api_comm_get_attr(MPI_Comm comm, int keyval, void *value, int *flag)
{
    halo_comm_t *c = halo_comm_ptr(comm);
    return halo_attr_get(HALO_KIND_COMM, c, &c->attrs, keyval, value, flag);
}
int halo_api_comm_delete_attr(MPI_Comm comm, int keyval)
{
    halo_comm_t *c = halo_comm_ptr(comm);
    return halo_attr_delete(HALO_KIND_COMM, c, &c->attrs, keyval);
}
int halo_api_attr_put(MPI_Comm comm, int keyval, void *value) { return halo_api_comm_set_attr(comm, keyval, value); }
int halo_api_attr_get(MPI_Comm comm, int keyval, void *value, int *flag) { return halo_api_comm_get_attr(comm, keyval, value, flag); }
int halo_api_attr_delete(MPI_Comm comm, int keyval) { return halo_api_comm_delete_attr(comm, keyval); }

int halo_api_type_set_attr(MPI_Datatype type, int keyval, void *value)
{
    halo_dtype_t *t = halo_dtype_ptr(type);
    return halo_attr_set(HALO_KIND_DTYPE, t, &t->attrs, keyval, value);
}
int halo_api_type_get_attr(MPI_Datatype type, int keyval, void *value, int *flag)
{
    halo_dtype_t *t = halo_dtype_ptr(type);
    return halo_attr_get(HALO_KIND_DTYPE, t, &t->attrs, keyval, value, flag);
}
int halo_api_type_delete_attr(MPI_Datatype type, int keyval)
{
    halo_dtype_t *t = halo_dtype_ptr(type);
    return halo_attr_delete(HALO_KIND_DTYPE, t, &t->attrs, keyval);
}
