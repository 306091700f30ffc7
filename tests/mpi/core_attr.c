/* Attribute caching.
 *
 * - communicator keyvals: set / get / delete, the delete callback's
 *   arguments, and when it runs (delete, overwrite, MPI_Comm_free, and
 *   after the keyval itself was freed); a failing callback fails the call;
 *   a keyval freed twice while an attribute holds it (no error), and not
 *   after the last attribute is gone;
 * - the predefined attributes of MPI_COMM_WORLD (values are pointers to int);
 * - datatype keyvals: set / get / delete, copies by MPI_Type_dup, deletes by
 *   MPI_Type_free; attributes on a predefined datatype;
 * - keyvals of one kind are not accepted for another. */
#include "mpitest.h"

static int rank, size;

/* The last delete callback's arguments. */
static struct {
    int calls;
    MPI_Comm comm;
    int keyval;
    void *value;
    void *extra;
} del;
static int delete_result = MPI_SUCCESS;

static int record_delete(MPI_Comm comm, int keyval, void *value, void *extra)
{
    del.calls++;
    del.comm = comm;
    del.keyval = keyval;
    del.value = value;
    del.extra = extra;
    return delete_result;
}

static int copy_fail(MPI_Comm old, int keyval, void *extra, void *in, void *out, int *flag)
{
    (void)old;
    (void)keyval;
    (void)extra;
    (void)in;
    (void)out;
    *flag = 0;
    return MPI_ERR_OTHER;
}

static int free_own_keyval(MPI_Comm comm, int keyval, void *value, void *extra)
{
    (void)comm, (void)value, (void)extra;
    return MPI_Comm_free_keyval(&keyval);
}

static void test_comm_attrs(void)
{
    static int extra_state;
    int key, key2;
    MPI_OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, record_delete, &key, &extra_state));
    CHECK(key != MPI_KEYVAL_INVALID, "MPI_Comm_create_keyval gave MPI_KEYVAL_INVALID");
    MPI_OK(MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, &key2, NULL));
    CHECK(key2 != key, "two keyvals share the value %d", key);

    MPI_Comm c;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    void *v = (void *)1;
    int flag = -1;
    MPI_OK(MPI_Comm_get_attr(c, key, &v, &flag));
    CHECK(flag == 0, "unset attribute has flag %d", flag);

    int a = 10, b = 20;
    memset(&del, 0, sizeof del);
    MPI_OK(MPI_Comm_set_attr(c, key, &a));
    MPI_OK(MPI_Comm_set_attr(c, key2, &b));
    MPI_OK(MPI_Comm_get_attr(c, key, &v, &flag));
    CHECK(flag == 1 && v == &a, "get gave flag %d value %p, want %p", flag, v, (void *)&a);
    MPI_OK(MPI_Comm_get_attr(c, key2, &v, &flag));
    CHECK(flag == 1 && v == &b, "get gave flag %d value %p, want %p", flag, v, (void *)&b);
    CHECK(del.calls == 0, "delete callback ran on set");
    /* The attribute belongs to c only. */
    MPI_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, key, &v, &flag));
    CHECK(flag == 0, "attribute of a dup visible on MPI_COMM_WORLD");

    /* Overwrite: the old value is deleted. */
    MPI_OK(MPI_Comm_set_attr(c, key, &b));
    CHECK(del.calls == 1 && del.value == &a && del.comm == c && del.keyval == key &&
               del.extra == &extra_state,
          "overwrite: calls %d value %p comm %p keyval %d extra %p", del.calls, del.value,
          (void *)del.comm, del.keyval, del.extra);
    MPI_OK(MPI_Comm_get_attr(c, key, &v, &flag));
    CHECK(flag == 1 && v == &b, "after overwrite: value %p", v);

    /* Delete. */
    MPI_OK(MPI_Comm_delete_attr(c, key));
    CHECK(del.calls == 2 && del.value == &b, "delete: calls %d value %p", del.calls, del.value);
    MPI_OK(MPI_Comm_get_attr(c, key, &v, &flag));
    CHECK(flag == 0, "attribute still there after delete");

    /* A delete callback that fails makes the call fail. */
    MPI_OK(MPI_Comm_set_attr(c, key, &a));
    delete_result = MPI_ERR_OTHER;
    CHECK(MPI_Comm_delete_attr(c, key) != MPI_SUCCESS, "delete_attr succeeded though the "
                                                        "callback failed");
    delete_result = MPI_SUCCESS;
    MPI_OK(MPI_Comm_set_attr(c, key, &a));

    /* Freeing the keyval leaves the attribute in place: the callback still
     * runs when the communicator goes. */
    int saved = key;
    MPI_OK(MPI_Comm_free_keyval(&key));
    CHECK(key == MPI_KEYVAL_INVALID, "MPI_Comm_free_keyval did not reset the keyval");
    del.calls = 0;
    MPI_OK(MPI_Comm_free(&c));
    CHECK(del.calls == 1 && del.value == &a && del.keyval == saved,
          "MPI_Comm_free: delete ran %d times with %p (keyval %d)", del.calls, del.value,
          del.keyval);

    /* Attributes on MPI_COMM_WORLD and MPI_COMM_SELF work alike. */
    MPI_OK(MPI_Comm_set_attr(MPI_COMM_WORLD, key2, &a));
    MPI_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, key2, &v, &flag));
    CHECK(flag && v == &a, "attribute on MPI_COMM_WORLD: flag %d", flag);
    MPI_OK(MPI_Comm_delete_attr(MPI_COMM_WORLD, key2));
    MPI_OK(MPI_Comm_free_keyval(&key2));

    /* A copy callback that fails makes MPI_Comm_dup fail. */
    int kf;
    MPI_OK(MPI_Comm_create_keyval(copy_fail, MPI_COMM_NULL_DELETE_FN, &kf, NULL));
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    MPI_OK(MPI_Comm_set_attr(c, kf, &a));
    MPI_Comm d = MPI_COMM_WORLD;
    int rc = MPI_Comm_dup(c, &d);
    CHECK(rc != MPI_SUCCESS, "MPI_Comm_dup succeeded though a copy callback failed");
    CHECK(d == MPI_COMM_NULL, "a failed MPI_Comm_dup did not give MPI_COMM_NULL");
    MPI_OK(MPI_Comm_delete_attr(c, kf));
    MPI_OK(MPI_Comm_free(&c));
    MPI_OK(MPI_Comm_free_keyval(&kf));

    /* A delete callback frees "its" keyval, and the program frees its own
     * copies of the handle too: while an attribute still holds the keyval
     * that is no error and releases nothing more; once the last attribute
     * is gone, the handle is invalid. */
    {
        int kd, copy1, copy2;
        MPI_OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, free_own_keyval, &kd, NULL));
        copy1 = copy2 = kd;
        MPI_Comm c1, c2;
        MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c1));
        MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c2));
        MPI_OK(MPI_Comm_set_attr(c1, kd, &a));
        MPI_OK(MPI_Comm_set_attr(c2, kd, &b));
        MPI_OK(MPI_Comm_free(&c1));   /* the callback frees the keyval */
        MPI_OK(MPI_Comm_free_keyval(&copy1));
        CHECK(copy1 == MPI_KEYVAL_INVALID, "a second free did not reset the handle");
        v = NULL;
        flag = 0;
        MPI_OK(MPI_Comm_get_attr(c2, kd, &v, &flag));
        CHECK(flag && v == &b, "the attribute of a freed keyval is gone (flag %d)", flag);
        MPI_OK(MPI_Comm_free(&c2));   /* the last attribute: the keyval goes */
        MPI_FAILS(MPI_ERR_KEYVAL, MPI_Comm_free_keyval(&copy2));
    }

    /* Invalid keyvals. */
    MPI_FAILS(MPI_ERR_KEYVAL, MPI_Comm_set_attr(MPI_COMM_WORLD, MPI_KEYVAL_INVALID, &a));
    MPI_FAILS(MPI_ERR_KEYVAL, MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_KEYVAL_INVALID, &v, &flag));
    MPI_FAILS(MPI_ERR_KEYVAL, MPI_Comm_free_keyval(&saved));
}

static void test_predefined(void)
{
    int *v = NULL, flag = 0;
    MPI_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &v, &flag));
    CHECK(flag && v && *v >= 32767, "MPI_TAG_UB: flag %d value %d", flag, v ? *v : -1);
    int tag_ub = *v;
    /* The largest tag works. */
    int x = 5, y = 0;
    MPI_OK(MPI_Sendrecv(&x, 1, MPI_INT, 0, tag_ub, &y, 1, MPI_INT, 0, tag_ub, MPI_COMM_SELF,
                        MPI_STATUS_IGNORE));
    CHECK(y == 5, "message with tag MPI_TAG_UB carried %d", y);

    MPI_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_HOST, &v, &flag));
    CHECK(flag && v && (*v == MPI_PROC_NULL || (*v >= 0 && *v < size)), "MPI_HOST: flag %d %d",
          flag, v ? *v : -99);
    MPI_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_IO, &v, &flag));
    CHECK(flag && v && (*v == MPI_PROC_NULL || *v == MPI_ANY_SOURCE || (*v >= 0 && *v < size)),
          "MPI_IO: flag %d %d", flag, v ? *v : -99);
    MPI_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_WTIME_IS_GLOBAL, &v, &flag));
    CHECK(!flag || (v && (*v == 0 || *v == 1)), "MPI_WTIME_IS_GLOBAL %d", v ? *v : -99);
    MPI_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &v, &flag));
    CHECK(!flag || (v && *v >= size), "MPI_UNIVERSE_SIZE %d, world %d", v ? *v : -99, size);
    MPI_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &v, &flag));
    CHECK(flag && v && *v == 0, "MPI_APPNUM: flag %d value %d (a one-program launch is 0)", flag,
          v ? *v : -99);
    MPI_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &v, &flag));
    CHECK(flag && v && *v >= MPI_ERR_LASTCODE, "MPI_LASTUSEDCODE %d", v ? *v : -99);

    /* Predefined attributes cannot be changed or removed. */
    int mine = 1;
    CHECK(MPI_Comm_set_attr(MPI_COMM_WORLD, MPI_TAG_UB, &mine) != MPI_SUCCESS,
          "MPI_TAG_UB could be set");
    CHECK(MPI_Comm_delete_attr(MPI_COMM_WORLD, MPI_TAG_UB) != MPI_SUCCESS,
          "MPI_TAG_UB could be deleted");
    MPI_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &v, &flag));
    CHECK(flag && *v == tag_ub, "MPI_TAG_UB changed to %d", *v);
}

/* ---------------------------------------------------------------- datatypes */

static int type_deletes;
static MPI_Datatype type_deleted_on;

static int type_delete(MPI_Datatype t, int keyval, void *value, void *extra)
{
    (void)keyval;
    (void)value;
    (void)extra;
    type_deletes++;
    type_deleted_on = t;
    return MPI_SUCCESS;
}

static int type_copy_double(MPI_Datatype old, int keyval, void *extra, void *in, void *out,
                            int *flag)
{
    (void)old;
    (void)keyval;
    (void)extra;
    *(void **)out = (void *)((intptr_t)in * 2);
    *flag = 1;
    return MPI_SUCCESS;
}

static int type_copy_fail(MPI_Datatype old, int keyval, void *extra, void *in, void *out,
                          int *flag)
{
    (void)old;
    (void)keyval;
    (void)extra;
    (void)in;
    (void)out;
    *flag = 0;
    return MPI_ERR_OTHER;
}

static void test_type_attrs(void)
{
    int kdup, knull, kdbl;
    MPI_OK(MPI_Type_create_keyval(MPI_TYPE_DUP_FN, type_delete, &kdup, NULL));
    MPI_OK(MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, type_delete, &knull, NULL));
    MPI_OK(MPI_Type_create_keyval(type_copy_double, type_delete, &kdbl, NULL));

    MPI_Datatype t, t2;
    MPI_OK(MPI_Type_contiguous(3, MPI_INT, &t));
    MPI_OK(MPI_Type_commit(&t));
    void *v;
    int flag = -1;
    MPI_OK(MPI_Type_get_attr(t, kdup, &v, &flag));
    CHECK_INT(flag, 0);
    MPI_OK(MPI_Type_set_attr(t, kdup, (void *)(intptr_t)7));
    MPI_OK(MPI_Type_set_attr(t, knull, (void *)(intptr_t)8));
    MPI_OK(MPI_Type_set_attr(t, kdbl, (void *)(intptr_t)9));
    MPI_OK(MPI_Type_get_attr(t, kdbl, &v, &flag));
    CHECK(flag && (intptr_t)v == 9, "type attribute: flag %d value %ld", flag, (long)(intptr_t)v);

    MPI_OK(MPI_Type_dup(t, &t2));
    MPI_OK(MPI_Type_get_attr(t2, kdup, &v, &flag));
    CHECK(flag && (intptr_t)v == 7, "MPI_TYPE_DUP_FN: flag %d value %ld", flag,
          (long)(intptr_t)v);
    MPI_OK(MPI_Type_get_attr(t2, knull, &v, &flag));
    CHECK(!flag, "MPI_TYPE_NULL_COPY_FN attribute was copied");
    MPI_OK(MPI_Type_get_attr(t2, kdbl, &v, &flag));
    CHECK(flag && (intptr_t)v == 18, "copy callback: flag %d value %ld", flag, (long)(intptr_t)v);

    /* Overwrite and delete run the callback. */
    type_deletes = 0;
    MPI_OK(MPI_Type_set_attr(t2, kdup, (void *)(intptr_t)70));
    CHECK(type_deletes == 1 && type_deleted_on == t2, "overwrite: %d deletes", type_deletes);
    MPI_OK(MPI_Type_delete_attr(t2, kdup));
    CHECK(type_deletes == 2, "delete: %d deletes", type_deletes);
    MPI_OK(MPI_Type_get_attr(t2, kdup, &v, &flag));
    CHECK(!flag, "type attribute still there after delete");

    /* MPI_Type_free deletes what is left. */
    type_deletes = 0;
    MPI_OK(MPI_Type_free(&t2));
    CHECK(type_deletes == 1, "freeing the dup ran %d deletes, want 1", type_deletes);
    type_deletes = 0;
    MPI_OK(MPI_Type_free(&t));
    CHECK(type_deletes == 3, "freeing the original ran %d deletes, want 3", type_deletes);

    /* A copy callback that fails makes MPI_Type_dup fail: MPI_DATATYPE_NULL
     * comes back, and the copy already made (kdbl's, set first) is deleted. */
    int kfail;
    MPI_OK(MPI_Type_create_keyval(type_copy_fail, MPI_TYPE_NULL_DELETE_FN, &kfail, NULL));
    MPI_OK(MPI_Type_contiguous(2, MPI_INT, &t));
    MPI_OK(MPI_Type_set_attr(t, kdbl, (void *)(intptr_t)5));
    MPI_OK(MPI_Type_set_attr(t, kfail, (void *)(intptr_t)6));
    type_deletes = 0;
    t2 = MPI_INT;
    /* Errors of datatype calls go to MPI_COMM_SELF's handler. */
    MPI_Errhandler self_eh;
    MPI_OK(MPI_Comm_get_errhandler(MPI_COMM_SELF, &self_eh));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    int rc = MPI_Type_dup(t, &t2);
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, self_eh));
    MPI_OK(MPI_Errhandler_free(&self_eh));
    CHECK(rc != MPI_SUCCESS, "MPI_Type_dup succeeded though a copy callback failed");
    CHECK(t2 == MPI_DATATYPE_NULL, "a failed MPI_Type_dup did not give MPI_DATATYPE_NULL");
    CHECK(type_deletes == 1, "a failed MPI_Type_dup ran %d deletes of the copies, want 1",
          type_deletes);
    MPI_OK(MPI_Type_delete_attr(t, kfail));
    MPI_OK(MPI_Type_free(&t));
    MPI_OK(MPI_Type_free_keyval(&kfail));

    /* A predefined datatype can carry attributes too. */
    MPI_OK(MPI_Type_set_attr(MPI_DOUBLE, knull, (void *)(intptr_t)3));
    MPI_OK(MPI_Type_get_attr(MPI_DOUBLE, knull, &v, &flag));
    CHECK(flag && (intptr_t)v == 3, "attribute on MPI_DOUBLE: flag %d", flag);
    type_deletes = 0;
    MPI_OK(MPI_Type_delete_attr(MPI_DOUBLE, knull));
    CHECK(type_deletes == 1 && type_deleted_on == MPI_DOUBLE, "delete on MPI_DOUBLE: %d",
          type_deletes);

    /* A datatype keyval is not a communicator keyval, and the reverse. */
    int ck;
    MPI_OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &ck, NULL));
    CHECK(MPI_Comm_set_attr(MPI_COMM_WORLD, kdup, &flag) != MPI_SUCCESS,
          "a datatype keyval was accepted on a communicator");
    CHECK(MPI_Type_set_attr(MPI_INT, ck, &flag) != MPI_SUCCESS,
          "a communicator keyval was accepted on a datatype");
    MPI_OK(MPI_Comm_free_keyval(&ck));
    MPI_OK(MPI_Type_free_keyval(&kdup));
    MPI_OK(MPI_Type_free_keyval(&knull));
    MPI_OK(MPI_Type_free_keyval(&kdbl));
    CHECK(kdbl == MPI_KEYVAL_INVALID, "MPI_Type_free_keyval did not reset the keyval");
}

/* Many keyvals and attributes: each keeps its own value. */
static void test_many(void)
{
    enum { K = 200 };
    int keys[K];
    MPI_Comm c;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    for (int i = 0; i < K; i++) {
        MPI_OK(MPI_Comm_create_keyval(i % 2 ? MPI_COMM_DUP_FN : MPI_COMM_NULL_COPY_FN,
                                      record_delete, &keys[i], NULL));
        MPI_OK(MPI_Comm_set_attr(c, keys[i], (void *)(intptr_t)(1000 + i)));
    }
    MPI_Comm d;
    MPI_OK(MPI_Comm_dup(c, &d));
    for (int i = 0; i < K; i++) {
        void *v;
        int flag;
        MPI_OK(MPI_Comm_get_attr(c, keys[i], &v, &flag));
        CHECK(flag && (intptr_t)v == 1000 + i, "key %d: flag %d value %ld", i, flag,
              (long)(intptr_t)v);
        MPI_OK(MPI_Comm_get_attr(d, keys[i], &v, &flag));
        CHECK(flag == i % 2 && (!flag || (intptr_t)v == 1000 + i), "dup key %d: flag %d", i,
              flag);
    }
    del.calls = 0;
    MPI_OK(MPI_Comm_free(&d));
    CHECK(del.calls == K / 2, "freeing the dup ran %d deletes, want %d", del.calls, K / 2);
    for (int i = 0; i < K; i++)
        MPI_OK(MPI_Comm_free_keyval(&keys[i]));
    del.calls = 0;
    MPI_OK(MPI_Comm_free(&c));
    CHECK(del.calls == K, "freeing the original ran %d deletes, want %d", del.calls, K);
}

int main(int argc, char **argv)
{
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    test_comm_attrs();
    test_predefined();
    test_type_attrs();
    test_many();
    MPI_OK(MPI_Finalize());
    if (rank == 0)
        printf("core_attr: ok\n");
    return 0;
}
