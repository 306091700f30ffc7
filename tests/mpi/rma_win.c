/* RMA windows and their objects (MPI 5.0 chapter 12, one-sided
 * communications).
 *
 * - create: MPI_Win_create on user memory, size 0 (base NULL) on odd ranks;
 *   the predefined attributes; a fence epoch of puts into the even ranks;
 * - allocate: MPI_Win_allocate, size 0 on some ranks; gets of what each
 *   owner stored; MPI_Win_shared_query on it (size 0, or memory that loads
 *   the owner's values);
 * - shared: MPI_Win_allocate_shared on the MPI_COMM_TYPE_SHARED split:
 *   segments of different sizes and displacement units, contiguous by
 *   default (rank i's base = rank i-1's base + size i-1 through
 *   MPI_Win_shared_query), loads and stores through the queried pointers
 *   after MPI_Win_sync + barrier; MPI_PROC_NULL and a size-0 rank; the same
 *   loads and stores with alloc_shared_noncontig;
 * - dynamic: MPI_Win_create_dynamic, two regions attached, absolute target
 *   displacements from MPI_Get_address, detach, a region attached later;
 * - keyval: user keyvals, the delete callback on overwrite, delete and
 *   MPI_Win_free (also after the keyval was freed);
 * - name, group, info, errhandler: MPI_Win_set_name/get_name (default
 *   empty), MPI_Win_get_group (MPI_IDENT to the communicator's group),
 *   MPI_Win_get_info/set_info, window error handlers;
 * - errors: error classes under MPI_ERRORS_RETURN (rank, synchronization,
 *   range, lock type, size, flavor);
 * - unattached (only when named): MPI_ERR_RMA_RANGE for memory not attached
 *   to a dynamic window, a check the standard recommends.
 * Runs every part, or those named (comma-separated) by the first argument. */
#include "mpitest.h"

#include <stdint.h>

static int rank, size;

static void expect_class(int rc, int cls, const char *what)
{
    int got = -1;
    CHECK(rc != MPI_SUCCESS, "%s succeeded, expected error class %d", what, cls);
    MPI_OK(MPI_Error_class(rc, &got));
    CHECK(got == cls, "%s: error class %d, expected %d", what, got, cls);
}

/* The five predefined attributes of a window. */
static void check_attrs(MPI_Win win, void *base, MPI_Aint sz, int disp_unit, int flavor,
                        const char *what)
{
    void *b = (void *)&b;
    MPI_Aint *s = NULL;
    int *d = NULL, *f = NULL, *m = NULL, flag = 0;
    MPI_OK(MPI_Win_get_attr(win, MPI_WIN_BASE, &b, &flag));
    CHECK(flag, "%s: MPI_WIN_BASE not found", what);
    /* (what MPI allocated for size 0 is no address to compare) */
    if (sz > 0 || flavor == MPI_WIN_FLAVOR_CREATE || flavor == MPI_WIN_FLAVOR_DYNAMIC)
        CHECK(b == base, "%s: MPI_WIN_BASE %p, expected %p", what, b, base);
    flag = 0;
    MPI_OK(MPI_Win_get_attr(win, MPI_WIN_SIZE, &s, &flag));
    CHECK(flag && s, "%s: MPI_WIN_SIZE not found", what);
    CHECK(*s == sz, "%s: MPI_WIN_SIZE %ld, expected %ld", what, (long)*s, (long)sz);
    flag = 0;
    MPI_OK(MPI_Win_get_attr(win, MPI_WIN_DISP_UNIT, &d, &flag));
    CHECK(flag && d, "%s: MPI_WIN_DISP_UNIT not found", what);
    CHECK(*d == disp_unit, "%s: MPI_WIN_DISP_UNIT %d, expected %d", what, *d, disp_unit);
    flag = 0;
    MPI_OK(MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &f, &flag));
    CHECK(flag && f, "%s: MPI_WIN_CREATE_FLAVOR not found", what);
    CHECK(*f == flavor, "%s: MPI_WIN_CREATE_FLAVOR %d, expected %d", what, *f, flavor);
    flag = 0;
    MPI_OK(MPI_Win_get_attr(win, MPI_WIN_MODEL, &m, &flag));
    CHECK(flag && m, "%s: MPI_WIN_MODEL not found", what);
    CHECK(*m == MPI_WIN_UNIFIED || *m == MPI_WIN_SEPARATE, "%s: MPI_WIN_MODEL %d", what, *m);
}

/* ---------------------------------------------------------------- create */

static void test_create(void)
{
    enum { N = 64 };
    CHECK(size <= N, "at most %d ranks", N);
    int *buf = calloc(N, sizeof(int));
    MPI_Aint sz = rank % 2 ? 0 : N * (MPI_Aint)sizeof(int);
    void *base = sz ? buf : NULL;
    int du = sz ? (int)sizeof(int) : 1;
    MPI_Win win = MPI_WIN_NULL;
    MPI_OK(MPI_Win_create(base, sz, du, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    CHECK(win != MPI_WIN_NULL, "MPI_Win_create gave MPI_WIN_NULL");
    check_attrs(win, base, sz, du, MPI_WIN_FLAVOR_CREATE, "MPI_Win_create");

    /* every rank puts rank + 1 at index rank of each even rank's window */
    int mine = rank + 1;
    MPI_OK(MPI_Win_fence(0, win));
    for (int t = 0; t < size; t += 2)
        MPI_OK(MPI_Put(&mine, 1, MPI_INT, t, rank, 1, MPI_INT, win));
    MPI_OK(MPI_Win_fence(0, win));
    for (int i = 0; i < N; i++) {
        int want = sz && i < size ? i + 1 : 0;
        CHECK(buf[i] == want, "MPI_Win_create: element %d is %d, expected %d", i, buf[i], want);
    }
    MPI_OK(MPI_Win_free(&win));
    CHECK(win == MPI_WIN_NULL, "MPI_Win_free did not reset the handle");
    free(buf);
}

/* ---------------------------------------------------------------- allocate */

static MPI_Aint alloc_ints(int r)
{
    return r % 3 == 2 ? 0 : 16 + r;   /* ints in rank r's window */
}

static void test_allocate(void)
{
    MPI_Aint n = alloc_ints(rank), sz = n * (MPI_Aint)sizeof(int);
    int *base = NULL;
    MPI_Win win = MPI_WIN_NULL;
    MPI_OK(MPI_Win_allocate(sz, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
    CHECK(win != MPI_WIN_NULL, "MPI_Win_allocate gave MPI_WIN_NULL");
    CHECK(sz == 0 || base != NULL, "MPI_Win_allocate gave a NULL base for %ld bytes", (long)sz);
    check_attrs(win, base, sz, sizeof(int), MPI_WIN_FLAVOR_ALLOCATE, "MPI_Win_allocate");

    /* the owner's stores, made public by its unlock */
    MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win));
    for (MPI_Aint i = 0; i < n; i++)
        base[i] = rank * 1000 + (int)i;
    MPI_OK(MPI_Win_unlock(rank, win));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));

    int *got = malloc(sizeof(int) * 64);
    MPI_OK(MPI_Win_lock_all(0, win));
    for (int t = 0; t < size; t++) {
        int tn = (int)alloc_ints(t);
        if (tn == 0)
            continue;
        for (int i = 0; i < tn; i++)
            got[i] = -1;
        MPI_OK(MPI_Get(got, tn, MPI_INT, t, 0, tn, MPI_INT, win));
        MPI_OK(MPI_Win_flush(t, win));
        for (int i = 0; i < tn; i++)
            CHECK(got[i] == t * 1000 + i, "MPI_Win_allocate: rank %d element %d is %d", t, i, got[i]);
    }
    /* MPI_Win_shared_query on an allocated window: size 0, or the owner's
     * segment (MPI 5.0 12.2.3) */
    MPI_OK(MPI_Win_sync(win));
    for (int t = 0; t < size; t++) {
        MPI_Aint qs = -1;
        int qd = -1;
        int *qp = NULL;
        MPI_OK(MPI_Win_shared_query(win, t, &qs, &qd, &qp));
        if (qs == 0)
            continue;
        MPI_Aint tn = alloc_ints(t);
        CHECK(qs == tn * (MPI_Aint)sizeof(int), "shared_query(allocate, %d): size %ld", t, (long)qs);
        CHECK(qd == (int)sizeof(int), "shared_query(allocate, %d): disp_unit %d", t, qd);
        CHECK(t != rank || qp == base, "shared_query(allocate, self): %p, base %p", (void *)qp,
              (void *)base);
        for (MPI_Aint i = 0; i < tn; i++)
            CHECK(qp[i] == t * 1000 + (int)i, "shared_query(allocate, %d): element %ld is %d", t,
                  (long)i, qp[i]);
    }
    MPI_OK(MPI_Win_unlock_all(win));
    free(got);
    MPI_OK(MPI_Win_free(&win));
    CHECK(win == MPI_WIN_NULL, "MPI_Win_free did not reset the handle");
}

/* ---------------------------------------------------------------- shared */

static MPI_Aint shared_bytes(int r, int zero_first)
{
    return zero_first && r == 0 ? 0 : (MPI_Aint)(3 * (r + 1)) * (MPI_Aint)sizeof(int);
}

static int shared_du(int r)
{
    return r % 2 ? 1 : (int)sizeof(int);
}

/* One shared window on node: sizes 3(r+1) ints; contiguity checked unless
 * noncontig; rank 0 gives size 0 when zero_first. */
static void shared_window(MPI_Comm node, int noncontig, int zero_first)
{
    int nr, ns;
    MPI_OK(MPI_Comm_rank(node, &nr));
    MPI_OK(MPI_Comm_size(node, &ns));
    MPI_Info info = MPI_INFO_NULL;
    if (noncontig) {
        MPI_OK(MPI_Info_create(&info));
        MPI_OK(MPI_Info_set(info, "alloc_shared_noncontig", "true"));
    }
    MPI_Aint sz = shared_bytes(nr, zero_first);
    int *mine = NULL;
    MPI_Win win = MPI_WIN_NULL;
    MPI_OK(MPI_Win_allocate_shared(sz, shared_du(nr), info, node, &mine, &win));
    if (info != MPI_INFO_NULL)
        MPI_OK(MPI_Info_free(&info));
    CHECK(sz == 0 || mine != NULL, "MPI_Win_allocate_shared gave NULL");
    check_attrs(win, mine, sz, shared_du(nr), MPI_WIN_FLAVOR_SHARED, "MPI_Win_allocate_shared");

    int **seg = calloc((size_t)ns, sizeof *seg);
    for (int r = 0; r < ns; r++) {
        MPI_Aint qs = -1;
        int qd = -1;
        MPI_OK(MPI_Win_shared_query(win, r, &qs, &qd, &seg[r]));
        CHECK(qs == shared_bytes(r, zero_first), "shared_query(%d): size %ld, expected %ld", r,
              (long)qs, (long)shared_bytes(r, zero_first));
        CHECK(qd == shared_du(r), "shared_query(%d): disp_unit %d, expected %d", r, qd, shared_du(r));
        if (r == nr && sz > 0)
            CHECK(seg[r] == mine, "shared_query(self): %p, baseptr %p", (void *)seg[r], (void *)mine);
        if (!noncontig && r > 0 && qs > 0 && shared_bytes(r - 1, zero_first) > 0)
            CHECK((char *)seg[r] == (char *)seg[r - 1] + shared_bytes(r - 1, zero_first),
                  "segment %d at %p, segment %d at %p + %ld bytes: not contiguous", r,
                  (void *)seg[r], r - 1, (void *)seg[r - 1], (long)shared_bytes(r - 1, zero_first));
    }
    /* MPI_PROC_NULL: the lowest rank with size > 0 */
    int low = zero_first && ns > 1 ? 1 : 0;
    if (!(zero_first && ns == 1)) {
        MPI_Aint qs = -1;
        int qd = -1;
        int *qp = NULL;
        MPI_OK(MPI_Win_shared_query(win, MPI_PROC_NULL, &qs, &qd, &qp));
        CHECK(qs == shared_bytes(low, zero_first) && qd == shared_du(low) && qp == seg[low],
              "shared_query(MPI_PROC_NULL): size %ld disp_unit %d at %p, expected rank %d's", (long)qs,
              qd, (void *)qp, low);
    }

    /* loads and stores through the queried pointers */
    MPI_OK(MPI_Win_lock_all(MPI_MODE_NOCHECK, win));
    int n = (int)(sz / (MPI_Aint)sizeof(int));
    for (int i = 0; i < n; i++)
        mine[i] = 100 * nr + i;
    MPI_OK(MPI_Win_sync(win));
    MPI_OK(MPI_Barrier(node));
    MPI_OK(MPI_Win_sync(win));
    for (int r = 0; r < ns; r++) {
        int rn = (int)(shared_bytes(r, zero_first) / (MPI_Aint)sizeof(int));
        for (int i = 0; i < rn; i++)
            CHECK(seg[r][i] == 100 * r + i, "load of rank %d's element %d: %d", r, i, seg[r][i]);
    }
    MPI_OK(MPI_Win_sync(win));
    MPI_OK(MPI_Barrier(node));
    MPI_OK(MPI_Win_sync(win));
    /* each rank stores into its right neighbour's segment */
    int right = (nr + 1) % ns, left = (nr + ns - 1) % ns;
    int rn = (int)(shared_bytes(right, zero_first) / (MPI_Aint)sizeof(int));
    for (int i = 0; i < rn; i++)
        seg[right][i] = -(100 * nr + i) - 1;
    MPI_OK(MPI_Win_sync(win));
    MPI_OK(MPI_Barrier(node));
    MPI_OK(MPI_Win_sync(win));
    for (int i = 0; i < n; i++)
        CHECK(mine[i] == -(100 * left + i) - 1, "store by rank %d into element %d: %d", left, i, mine[i]);
    MPI_OK(MPI_Win_unlock_all(win));
    free(seg);
    MPI_OK(MPI_Win_free(&win));
    CHECK(win == MPI_WIN_NULL, "MPI_Win_free did not reset the handle");
}

static void test_shared(void)
{
    MPI_Comm node;
    MPI_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    shared_window(node, 0, 0);
    shared_window(node, 0, 1);
    shared_window(node, 1, 0);
    MPI_OK(MPI_Comm_free(&node));
}

/* ---------------------------------------------------------------- dynamic */

static void test_dynamic(void)
{
    enum { NA = 32, NB = 48, NC = 8 };
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    MPI_Win win = MPI_WIN_NULL;
    MPI_OK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    CHECK(win != MPI_WIN_NULL, "MPI_Win_create_dynamic gave MPI_WIN_NULL");
    check_attrs(win, MPI_BOTTOM, 0, 1, MPI_WIN_FLAVOR_DYNAMIC, "MPI_Win_create_dynamic");

    int *a = calloc(NA, sizeof(int)), *b = calloc(NB, sizeof(int)), *c = calloc(NC, sizeof(int));
    MPI_OK(MPI_Win_attach(win, a, NA * sizeof(int)));
    MPI_OK(MPI_Win_attach(win, b, NB * sizeof(int)));
    MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win));
    for (int i = 0; i < NA; i++)
        a[i] = rank * 1000 + i;
    MPI_OK(MPI_Win_unlock(rank, win));
    MPI_Aint mine[2], *all = malloc(sizeof(MPI_Aint) * 2 * (size_t)size);
    MPI_OK(MPI_Get_address(a, &mine[0]));
    MPI_OK(MPI_Get_address(b, &mine[1]));
    MPI_OK(MPI_Allgather(mine, 2, MPI_AINT, all, 2, MPI_AINT, MPI_COMM_WORLD));

    /* get the right neighbour's a, put into its b */
    int got[NA], put[NB];
    for (int i = 0; i < NB; i++)
        put[i] = rank * 7 + i + 1;
    MPI_OK(MPI_Win_lock_all(0, win));
    MPI_OK(MPI_Get(got, NA, MPI_INT, right, all[2 * right], NA, MPI_INT, win));
    MPI_OK(MPI_Put(put, NB / 2, MPI_INT, right, all[2 * right + 1], NB / 2, MPI_INT, win));
    MPI_OK(MPI_Put(put + NB / 2, NB / 2, MPI_INT, right,
                   MPI_Aint_add(all[2 * right + 1], (NB / 2) * (MPI_Aint)sizeof(int)), NB / 2, MPI_INT,
                   win));
    MPI_OK(MPI_Win_unlock_all(win));
    for (int i = 0; i < NA; i++)
        CHECK(got[i] == right * 1000 + i, "dynamic get from rank %d: element %d is %d", right, i, got[i]);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win));
    MPI_OK(MPI_Win_sync(win));
    for (int i = 0; i < NB; i++)
        CHECK(b[i] == left * 7 + i + 1, "dynamic put from rank %d: element %d is %d", left, i, b[i]);
    MPI_OK(MPI_Win_unlock(rank, win));

    /* detach b, attach c, put into the new region */
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_Win_detach(win, b));
    MPI_OK(MPI_Win_attach(win, c, NC * sizeof(int)));
    MPI_OK(MPI_Get_address(c, &mine[0]));
    MPI_OK(MPI_Allgather(mine, 1, MPI_AINT, all, 1, MPI_AINT, MPI_COMM_WORLD));
    MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win));
    MPI_OK(MPI_Put(put, NC, MPI_INT, right, all[right], NC, MPI_INT, win));
    MPI_OK(MPI_Win_unlock(right, win));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win));
    MPI_OK(MPI_Win_sync(win));
    for (int i = 0; i < NC; i++)
        CHECK(c[i] == left * 7 + i + 1, "put into a region attached later: element %d is %d", i, c[i]);
    MPI_OK(MPI_Win_unlock(rank, win));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_Win_detach(win, a));
    MPI_OK(MPI_Win_detach(win, c));
    MPI_OK(MPI_Win_free(&win));
    CHECK(win == MPI_WIN_NULL, "MPI_Win_free did not reset the handle");
    free(all);
    free(a);
    free(b);
    free(c);
}

/* ---------------------------------------------------------------- keyval */

static struct {
    int calls;
    MPI_Win win;
    int keyval;
    void *value, *extra;
} del;

static int record_delete(MPI_Win win, int keyval, void *value, void *extra)
{
    del.calls++;
    del.win = win;
    del.keyval = keyval;
    del.value = value;
    del.extra = extra;
    return MPI_SUCCESS;
}

static void test_keyval(void)
{
    static int extra_state, a, b;
    int key = MPI_KEYVAL_INVALID, key2 = MPI_KEYVAL_INVALID, flag = -1;
    void *val = NULL;
    MPI_OK(MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, record_delete, &key, &extra_state));
    CHECK(key != MPI_KEYVAL_INVALID, "MPI_Win_create_keyval gave MPI_KEYVAL_INVALID");
    MPI_OK(MPI_Win_create_keyval(MPI_WIN_DUP_FN, MPI_WIN_NULL_DELETE_FN, &key2, NULL));
    CHECK(key2 != key, "two keyvals share the value %d", key);

    int *mem = NULL;
    MPI_Win win, w2;
    MPI_OK(MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    MPI_OK(MPI_Win_get_attr(win, key, &val, &flag));
    CHECK(flag == 0, "attribute found before it was set");
    MPI_OK(MPI_Win_set_attr(win, key, &a));
    MPI_OK(MPI_Win_get_attr(win, key, &val, &flag));
    CHECK(flag && val == &a, "get_attr: flag %d value %p, expected %p", flag, val, (void *)&a);
    CHECK(del.calls == 0, "delete callback ran %d times on set", del.calls);
    /* overwrite: the old value is deleted */
    MPI_OK(MPI_Win_set_attr(win, key, &b));
    CHECK(del.calls == 1 && del.value == &a && del.win == win && del.keyval == key &&
              del.extra == &extra_state,
          "overwrite: calls %d value %p keyval %d extra %p", del.calls, del.value, del.keyval, del.extra);
    MPI_OK(MPI_Win_get_attr(win, key, &val, &flag));
    CHECK(flag && val == &b, "after overwrite: flag %d value %p", flag, val);
    MPI_OK(MPI_Win_delete_attr(win, key));
    CHECK(del.calls == 2 && del.value == &b, "delete_attr: calls %d value %p", del.calls, del.value);
    MPI_OK(MPI_Win_get_attr(win, key, &val, &flag));
    CHECK(flag == 0, "attribute found after MPI_Win_delete_attr");
    /* a keyval with no callbacks */
    MPI_OK(MPI_Win_set_attr(win, key2, &b));
    MPI_OK(MPI_Win_get_attr(win, key2, &val, &flag));
    CHECK(flag && val == &b, "second keyval: flag %d value %p", flag, val);
    /* MPI_Win_free deletes what is left */
    MPI_OK(MPI_Win_set_attr(win, key, &a));
    MPI_Win saved = win;
    MPI_OK(MPI_Win_free(&win));
    CHECK(del.calls == 3 && del.value == &a && del.win == saved && del.keyval == key,
          "MPI_Win_free: delete ran %d times with %p", del.calls, del.value);

    /* a keyval freed while an attribute holds it: the callback still runs */
    MPI_OK(MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &w2));
    MPI_OK(MPI_Win_set_attr(w2, key, &b));
    int saved_key = key;
    MPI_OK(MPI_Win_free_keyval(&key));
    CHECK(key == MPI_KEYVAL_INVALID, "MPI_Win_free_keyval did not reset the keyval");
    MPI_OK(MPI_Win_free(&w2));
    CHECK(del.calls == 4 && del.value == &b && del.keyval == saved_key,
          "MPI_Win_free after MPI_Win_free_keyval: delete ran %d times with %p (keyval %d)", del.calls,
          del.value, del.keyval);
    MPI_OK(MPI_Win_free_keyval(&key2));
}

/* ---------------------------------------------------------------- name */

static void test_name(void)
{
    int *mem;
    MPI_Win win;
    MPI_OK(MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    char name[MPI_MAX_OBJECT_NAME], want[MPI_MAX_OBJECT_NAME];
    int len = -1;
    memset(name, 'x', sizeof name);
    MPI_OK(MPI_Win_get_name(win, name, &len));
    CHECK(len == 0 && name[0] == '\0', "default name \"%.20s\" (length %d), expected empty", name, len);
    snprintf(want, sizeof want, "halo window of rank %d", rank);
    MPI_OK(MPI_Win_set_name(win, want));
    MPI_OK(MPI_Win_get_name(win, name, &len));
    CHECK(!strcmp(name, want) && len == (int)strlen(want), "name \"%s\" (length %d), set \"%s\"", name,
          len, want);
    /* the longest name */
    memset(want, 'a' + rank % 26, MPI_MAX_OBJECT_NAME - 1);
    want[MPI_MAX_OBJECT_NAME - 1] = '\0';
    MPI_OK(MPI_Win_set_name(win, want));
    MPI_OK(MPI_Win_get_name(win, name, &len));
    CHECK(!strcmp(name, want) && len == MPI_MAX_OBJECT_NAME - 1, "longest name: length %d", len);
    MPI_OK(MPI_Win_free(&win));
}

/* ---------------------------------------------------------------- group */

static void group_is(MPI_Win win, MPI_Comm comm, int vs_world)
{
    MPI_Group wg, cg, world;
    int res = -1;
    MPI_OK(MPI_Win_get_group(win, &wg));
    MPI_OK(MPI_Comm_group(comm, &cg));
    MPI_OK(MPI_Group_compare(wg, cg, &res));
    CHECK(res == MPI_IDENT, "window group vs its communicator's: %d, expected MPI_IDENT", res);
    MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &world));
    MPI_OK(MPI_Group_compare(wg, world, &res));
    CHECK(res == vs_world, "window group vs world's: %d, expected %d", res, vs_world);
    MPI_OK(MPI_Group_free(&wg));
    MPI_OK(MPI_Group_free(&cg));
    MPI_OK(MPI_Group_free(&world));
}

static void test_group(void)
{
    int *mem;
    MPI_Win win;
    MPI_OK(MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    group_is(win, MPI_COMM_WORLD, MPI_IDENT);
    MPI_OK(MPI_Win_free(&win));
    /* ranks in reverse order */
    MPI_Comm rev;
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &rev));
    MPI_OK(MPI_Win_create_dynamic(MPI_INFO_NULL, rev, &win));
    group_is(win, rev, size > 1 ? MPI_SIMILAR : MPI_IDENT);
    MPI_OK(MPI_Win_free(&win));
    MPI_OK(MPI_Comm_free(&rev));
}

/* ---------------------------------------------------------------- info */

/* Every key of info has a value; returns whether key is there (into val). */
static int info_lookup(MPI_Info info, const char *key, char *val, int vlen)
{
    int nkeys = -1;
    MPI_OK(MPI_Info_get_nkeys(info, &nkeys));
    CHECK(nkeys >= 0, "MPI_Info_get_nkeys gave %d", nkeys);
    for (int i = 0; i < nkeys; i++) {
        char k[MPI_MAX_INFO_KEY + 1], v[256];
        int len = (int)sizeof v, flag = 0;
        MPI_OK(MPI_Info_get_nthkey(info, i, k));
        MPI_OK(MPI_Info_get_string(info, k, &len, v, &flag));
        CHECK(flag, "key %s of the window's info has no value", k);
    }
    int len = vlen, flag = 0;
    MPI_OK(MPI_Info_get_string(info, key, &len, val, &flag));
    return flag;
}

static void test_info(void)
{
    char val[256];
    int *mem;
    MPI_Win win;
    MPI_Info info, used;
    MPI_OK(MPI_Info_create(&info));
    MPI_OK(MPI_Info_set(info, "no_locks", "false"));
    MPI_OK(MPI_Win_allocate(sizeof(int), sizeof(int), info, MPI_COMM_WORLD, &mem, &win));
    MPI_OK(MPI_Info_free(&info));   /* the window keeps its own copy */
    used = MPI_INFO_NULL;
    MPI_OK(MPI_Win_get_info(win, &used));
    CHECK(used != MPI_INFO_NULL, "MPI_Win_get_info gave MPI_INFO_NULL");
    if (info_lookup(used, "no_locks", val, (int)sizeof val))
        CHECK(!strcmp(val, "false"), "no_locks is \"%s\", set \"false\"", val);
    /* the standard's default for accumulate_ops, when reported */
    if (info_lookup(used, "accumulate_ops", val, (int)sizeof val))
        CHECK(!strcmp(val, "same_op_no_op"), "accumulate_ops is \"%s\", never set", val);
    MPI_OK(MPI_Info_free(&used));
    /* passive target still works (no_locks was false) */
    MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win));
    *mem = rank;
    MPI_OK(MPI_Win_unlock(rank, win));

    MPI_OK(MPI_Info_create(&info));
    MPI_OK(MPI_Info_set(info, "accumulate_ops", "same_op"));
    MPI_OK(MPI_Info_set(info, "halo_test_unknown_hint", "1"));
    MPI_OK(MPI_Win_set_info(win, info));
    MPI_OK(MPI_Info_free(&info));
    used = MPI_INFO_NULL;
    MPI_OK(MPI_Win_get_info(win, &used));
    CHECK(used != MPI_INFO_NULL, "MPI_Win_get_info after set_info gave MPI_INFO_NULL");
    if (info_lookup(used, "accumulate_ops", val, (int)sizeof val))
        CHECK(!strcmp(val, "same_op") || !strcmp(val, "same_op_no_op"), "accumulate_ops is \"%s\"", val);
    MPI_OK(MPI_Info_free(&used));
    MPI_OK(MPI_Win_free(&win));

    /* no info at all: still a new (perhaps empty) info object */
    MPI_OK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    used = MPI_INFO_NULL;
    MPI_OK(MPI_Win_get_info(win, &used));
    CHECK(used != MPI_INFO_NULL, "MPI_Win_get_info (no hints) gave MPI_INFO_NULL");
    info_lookup(used, "no_locks", val, (int)sizeof val);
    MPI_OK(MPI_Info_free(&used));
    MPI_OK(MPI_Win_free(&win));
}

/* ---------------------------------------------------------------- errhandler */

static int weh_calls, weh_code;
static MPI_Win weh_win;

static void win_handler(MPI_Win *win, int *code, ...)
{
    weh_calls++;
    weh_win = *win;
    weh_code = *code;
}

static void test_errhandler(void)
{
    int *mem;
    MPI_Win win;
    MPI_Errhandler eh, got;
    MPI_OK(MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    MPI_OK(MPI_Win_get_errhandler(win, &got));
    CHECK(got == MPI_ERRORS_ARE_FATAL, "default window error handler %p, expected MPI_ERRORS_ARE_FATAL",
          (void *)got);
    MPI_OK(MPI_Errhandler_free(&got));

    MPI_OK(MPI_Win_create_errhandler(win_handler, &eh));
    CHECK(eh != MPI_ERRHANDLER_NULL, "MPI_Win_create_errhandler gave MPI_ERRHANDLER_NULL");
    MPI_OK(MPI_Win_set_errhandler(win, eh));
    MPI_OK(MPI_Win_get_errhandler(win, &got));
    CHECK(got == eh, "MPI_Win_get_errhandler gave %p, set %p", (void *)got, (void *)eh);
    MPI_OK(MPI_Errhandler_free(&got));

    weh_calls = 0;
    int rc = MPI_Win_call_errhandler(win, MPI_ERR_OTHER);
    CHECK(rc == MPI_SUCCESS, "MPI_Win_call_errhandler returned %d", rc);
    CHECK(weh_calls == 1 && weh_code == MPI_ERR_OTHER && weh_win == win,
          "call_errhandler: calls %d code %d win %p", weh_calls, weh_code, (void *)weh_win);
    int ucls, ucode;
    MPI_OK(MPI_Add_error_class(&ucls));
    MPI_OK(MPI_Add_error_code(ucls, &ucode));
    MPI_OK(MPI_Win_call_errhandler(win, ucode));
    CHECK(weh_calls == 2 && weh_code == ucode, "call_errhandler(user code): calls %d code %d", weh_calls,
          weh_code);
    MPI_OK(MPI_Remove_error_code(ucode));
    MPI_OK(MPI_Remove_error_class(ucls));

    /* an error in a window call reaches the handler; the call returns the code */
    weh_calls = 0;
    rc = MPI_Win_lock(MPI_LOCK_EXCLUSIVE + MPI_LOCK_SHARED + 1000, rank, 0, win);
    CHECK(weh_calls == 1 && weh_win == win, "bad lock type: handler ran %d times", weh_calls);
    expect_class(weh_code, MPI_ERR_LOCKTYPE, "code passed to the window's handler");
    CHECK(rc == weh_code, "MPI_Win_lock returned %d, the handler saw %d", rc, weh_code);

    /* freed while in use: the window keeps it */
    MPI_OK(MPI_Errhandler_free(&eh));
    CHECK(eh == MPI_ERRHANDLER_NULL, "MPI_Errhandler_free did not reset the handle");
    MPI_OK(MPI_Win_call_errhandler(win, MPI_ERR_OTHER));
    CHECK(weh_calls == 2, "freed handler: calls %d", weh_calls);

    MPI_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    MPI_OK(MPI_Win_get_errhandler(win, &got));
    CHECK(got == MPI_ERRORS_RETURN, "MPI_Win_get_errhandler gave %p after setting MPI_ERRORS_RETURN",
          (void *)got);
    MPI_OK(MPI_Errhandler_free(&got));
    weh_calls = 0;
    MPI_Win_call_errhandler(win, MPI_ERR_OTHER);
    CHECK(weh_calls == 0, "MPI_ERRORS_RETURN window: the old handler ran");
    MPI_OK(MPI_Win_free(&win));
}

/* ---------------------------------------------------------------- errors */

/* An access outside the target's window: MPI_ERR_RMA_RANGE from the call,
 * or from the flush that completes it (MPI 5.0 12.3.1 asks implementations
 * to check window bounds, preferably at the call, without naming one). */
static void expect_range(int rc, int target, MPI_Win win, const char *what)
{
    if (rc == MPI_SUCCESS)
        rc = MPI_Win_flush(target, win);
    expect_class(rc, MPI_ERR_RMA_RANGE, what);
}

static void test_errors(void)
{
    enum { N = 16 };
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    /* N ints exposed, with N/2 unexposed ints either side */
    int *buf = calloc(2 * N, sizeof(int)), v[4] = {1, 2, 3, 4}, g[4];
    MPI_Win win;
    MPI_OK(MPI_Win_create(buf + N / 2, N * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    MPI_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));

    /* no epoch yet */
    MPI_FAILS(MPI_ERR_RMA_SYNC, MPI_Put(v, 1, MPI_INT, right, 0, 1, MPI_INT, win));
    MPI_FAILS(MPI_ERR_RMA_SYNC, MPI_Get(g, 1, MPI_INT, right, 0, 1, MPI_INT, win));
    MPI_FAILS(MPI_ERR_RMA_SYNC, MPI_Win_unlock(right, win));
    MPI_FAILS(MPI_ERR_RMA_SYNC, MPI_Win_unlock_all(win));
    MPI_FAILS(MPI_ERR_RMA_SYNC, MPI_Win_flush(right, win));
    MPI_FAILS(MPI_ERR_RMA_SYNC, MPI_Win_complete(win));
    MPI_FAILS(MPI_ERR_RMA_SYNC, MPI_Win_wait(win));
    MPI_FAILS(MPI_ERR_LOCKTYPE, MPI_Win_lock(0, right, 0, win));
    MPI_FAILS(MPI_ERR_LOCKTYPE, MPI_Win_lock(MPI_LOCK_EXCLUSIVE + MPI_LOCK_SHARED + 1000, right, 0, win));

    /* in a lock_all epoch: bad ranks and displacements */
    MPI_OK(MPI_Win_lock_all(0, win));
    MPI_FAILS(MPI_ERR_RANK, MPI_Put(v, 1, MPI_INT, size, 0, 1, MPI_INT, win));
    MPI_FAILS(MPI_ERR_RANK, MPI_Put(v, 1, MPI_INT, size + 7, 0, 1, MPI_INT, win));
    MPI_FAILS(MPI_ERR_RANK, MPI_Put(v, 1, MPI_INT, -100, 0, 1, MPI_INT, win));
    MPI_FAILS(MPI_ERR_RANK, MPI_Get(g, 1, MPI_INT, size, 0, 1, MPI_INT, win));
    expect_range(MPI_Put(v, 1, MPI_INT, right, N, 1, MPI_INT, win), right, win, "MPI_Put at disp N");
    expect_range(MPI_Put(v, 2, MPI_INT, right, N - 1, 2, MPI_INT, win), right, win,
                 "MPI_Put across the end");
    expect_range(MPI_Put(v, 1, MPI_INT, right, -1, 1, MPI_INT, win), right, win, "MPI_Put at disp -1");
    expect_range(MPI_Get(g, 4, MPI_INT, right, N - 2, 4, MPI_INT, win), right, win,
                 "MPI_Get across the end");
    expect_range(MPI_Accumulate(v, 1, MPI_INT, right, N + 3, 1, MPI_INT, MPI_SUM, win), right, win,
                 "MPI_Accumulate past the end");
    /* still a working epoch */
    MPI_OK(MPI_Put(v, 1, MPI_INT, right, N - 1, 1, MPI_INT, win));
    MPI_OK(MPI_Win_unlock_all(win));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win));
    CHECK(buf[N / 2 + N - 1] == 1, "last element %d, expected 1", buf[N / 2 + N - 1]);
    MPI_OK(MPI_Win_unlock(rank, win));

    /* lock epochs: the same target twice, a target not locked */
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win));
    MPI_FAILS(MPI_ERR_RMA_SYNC, MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win));
    if (size >= 3)
        MPI_FAILS(MPI_ERR_RMA_SYNC, MPI_Win_unlock(left, win));
    MPI_OK(MPI_Win_unlock(right, win));
    MPI_FAILS(MPI_ERR_RMA_SYNC, MPI_Win_unlock(right, win));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_Win_free(&win));

    /* window creation reports to the communicator's handler */
    MPI_Comm dup;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    MPI_OK(MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN));
    win = MPI_WIN_NULL;
    MPI_FAILS(MPI_ERR_SIZE, MPI_Win_create(buf, -1, 1, MPI_INFO_NULL, dup, &win));
    int *mem = NULL;
    MPI_FAILS(MPI_ERR_SIZE, MPI_Win_allocate(-8, 1, MPI_INFO_NULL, dup, &mem, &win));
    /* more memory than the node has: an error on every rank, not a crash
     * at the first touch */
    MPI_FAILS(MPI_ERR_NO_MEM, MPI_Win_allocate((MPI_Aint)1 << 50, 1, MPI_INFO_NULL, dup, &mem, &win));
    MPI_OK(MPI_Comm_free(&dup));

    /* MPI_Win_shared_query refuses a dynamic window (MPI 5.0 12.2.3) */
    MPI_OK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    MPI_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    MPI_Aint qs;
    int qd;
    void *qp;
    MPI_FAILS(MPI_ERR_RMA_FLAVOR, MPI_Win_shared_query(win, rank, &qs, &qd, &qp));
    MPI_OK(MPI_Win_free(&win));
    free(buf);
}

/* Memory not attached to a dynamic window: MPI_ERR_RMA_RANGE (12.6.2).
 * Such accesses are erroneous and the bounds check is a recommendation
 * (12.3.1), so this part runs only when named. */
static void test_unattached(void)
{
    enum { N = 16 };
    int right = (rank + 1) % size, v[2] = {1, 2};
    int *att = calloc(2 * N, sizeof(int)), *not_att = calloc(N, sizeof(int));   /* N ints attached */
    MPI_Win win;
    MPI_OK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    MPI_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    MPI_OK(MPI_Win_attach(win, att, N * sizeof(int)));
    MPI_Aint mine[2], *all = malloc(sizeof(MPI_Aint) * 2 * (size_t)size);
    MPI_OK(MPI_Get_address(att, &mine[0]));
    MPI_OK(MPI_Get_address(not_att, &mine[1]));
    MPI_OK(MPI_Allgather(mine, 2, MPI_AINT, all, 2, MPI_AINT, MPI_COMM_WORLD));
    MPI_OK(MPI_Win_lock_all(0, win));
    expect_range(MPI_Put(v, 1, MPI_INT, right, all[2 * right + 1], 1, MPI_INT, win), right, win,
                 "MPI_Put to memory not attached");
    expect_range(MPI_Put(v, 2, MPI_INT, right,
                         MPI_Aint_add(all[2 * right], (N - 1) * (MPI_Aint)sizeof(int)), 2, MPI_INT, win),
                 right, win, "MPI_Put across the end of an attached region");
    MPI_OK(MPI_Put(v, 1, MPI_INT, right, all[2 * right], 1, MPI_INT, win));
    MPI_OK(MPI_Win_unlock_all(win));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_Win_detach(win, att));
    MPI_OK(MPI_Win_free(&win));
    free(all);
    free(att);
    free(not_att);
}

/* ---------------------------------------------------------------- main */

/* Is `part` in the comma-separated list `only` (NULL: every part)? */
static int run_part(const char *only, const char *part)
{
    if (!only)
        return 1;
    size_t n = strlen(part);
    for (const char *p = only;;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len == n && !strncmp(p, part, n))
            return 1;
        if (!e)
            return 0;
        p = e + 1;
    }
}

int main(int argc, char **argv)
{
    static const char *const parts[] = {"create", "allocate",   "shared", "dynamic",   "keyval", "name",
                                        "group",  "info",       "errhandler", "errors", "unattached"};
    enum { NPARTS = sizeof parts / sizeof parts[0] };
    const char *only = argc > 1 ? argv[1] : NULL;
    if (only) {
        int found = 0, commas = 0;
        for (int i = 0; i < NPARTS; i++)
            found += run_part(only, parts[i]);
        for (const char *p = only; *p; p++)
            commas += *p == ',';
        if (found != commas + 1) {
            fprintf(stderr, "usage: rma_win [part,...] with parts create allocate shared dynamic keyval "
                            "name group info errhandler errors, and unattached (run only when named)\n");
            return 2;
        }
    }
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    if (run_part(only, "create"))
        test_create();
    if (run_part(only, "allocate"))
        test_allocate();
    if (run_part(only, "shared"))
        test_shared();
    if (run_part(only, "dynamic"))
        test_dynamic();
    if (run_part(only, "keyval"))
        test_keyval();
    if (run_part(only, "name"))
        test_name();
    if (run_part(only, "group"))
        test_group();
    if (run_part(only, "info"))
        test_info();
    if (run_part(only, "errhandler"))
        test_errhandler();
    if (run_part(only, "errors"))
        test_errors();
    if (only && run_part(only, "unattached"))
        test_unattached();
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_Finalize());
    if (rank == 0)
        printf("rma_win %s: ok\n", only ? only : "all");
    return 0;
}
