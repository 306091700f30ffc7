/* Communicators: dup (attribute copy callbacks; a separate message space),
 * dup_with_info, idup, split (colors, MPI_UNDEFINED, keys, ties broken by
 * the rank in the parent), split_type(MPI_COMM_TYPE_SHARED; the hardware
 * levels: core_split_hw.c), create,
 * create_group, compare, free (delete callbacks; predefined communicators
 * cannot be freed), names, info, test_inter, and thousands of dup/free
 * cycles (context ids must not run out).
 *
 * Every new communicator is checked against the member list the standard
 * asks for, computed here independently: its size, my rank in it, and a
 * ring of messages that must come from the expected world ranks. */
#include "mpitest.h"

static int rank, size;

/* comm must hold the world ranks members[0..n-1] in this order: checks
 * size, rank, and passes world ranks around a ring on comm. */
static void expect_comm(MPI_Comm comm, int n, const int *members, const char *what)
{
    int me = -1;
    for (int i = 0; i < n; i++)
        if (members[i] == rank)
            me = i;
    if (me < 0) {
        CHECK(comm == MPI_COMM_NULL, "%s: not a member, but got a communicator", what);
        return;
    }
    CHECK(comm != MPI_COMM_NULL, "%s: member %d got MPI_COMM_NULL", what, me);
    int csize = -1, crank = -1;
    MPI_OK(MPI_Comm_size(comm, &csize));
    MPI_OK(MPI_Comm_rank(comm, &crank));
    CHECK(csize == n, "%s: size %d, want %d", what, csize, n);
    CHECK(crank == me, "%s: rank %d, want %d", what, crank, me);
    int right = (me + 1) % n, left = (me - 1 + n) % n;
    int got = -1;
    MPI_Status st;
    MPI_OK(MPI_Sendrecv(&rank, 1, MPI_INT, right, 77, &got, 1, MPI_INT, left, 77, comm, &st));
    CHECK(got == members[left], "%s: got world rank %d from the left, want %d", what, got,
          members[left]);
    CHECK(st.MPI_SOURCE == left, "%s: status source %d, want %d", what, st.MPI_SOURCE, left);
    /* And a reply the other way round, tagged with the sender's comm rank. */
    MPI_OK(MPI_Sendrecv(&me, 1, MPI_INT, left, 78, &got, 1, MPI_INT, right, 78, comm, &st));
    CHECK(got == right, "%s: comm rank %d from the right, want %d", what, got, right);
}

/* ---------------------------------------------------------------- attributes */

static int deletes;
static int copy_calls;

static int count_delete(MPI_Comm comm, int keyval, void *value, void *extra)
{
    (void)comm;
    (void)keyval;
    (void)value;
    (void)extra;
    deletes++;
    return MPI_SUCCESS;
}

static int copy_refuse(MPI_Comm old, int keyval, void *extra, void *in, void *out, int *flag)
{
    (void)old;
    (void)keyval;
    (void)extra;
    (void)in;
    (void)out;
    copy_calls++;
    *flag = 0;
    return MPI_SUCCESS;
}

static int copy_plus_one(MPI_Comm old, int keyval, void *extra, void *in, void *out, int *flag)
{
    (void)keyval;
    copy_calls++;
    CHECK(old != MPI_COMM_NULL, "copy callback got MPI_COMM_NULL");
    CHECK(extra == (void *)&copy_calls, "copy callback got extra_state %p", extra);
    *(void **)out = (void *)((intptr_t)in + 1);
    *flag = 1;
    return MPI_SUCCESS;
}

static void test_dup(void)
{
    int k_dup, k_null, k_refuse, k_plus;
    MPI_OK(MPI_Comm_create_keyval(MPI_COMM_DUP_FN, count_delete, &k_dup, NULL));
    MPI_OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, count_delete, &k_null, NULL));
    MPI_OK(MPI_Comm_create_keyval(copy_refuse, count_delete, &k_refuse, NULL));
    MPI_OK(MPI_Comm_create_keyval(copy_plus_one, count_delete, &k_plus, &copy_calls));

    MPI_Comm base;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &base));
    MPI_OK(MPI_Comm_set_attr(base, k_dup, (void *)(intptr_t)101));
    MPI_OK(MPI_Comm_set_attr(base, k_null, (void *)(intptr_t)102));
    MPI_OK(MPI_Comm_set_attr(base, k_refuse, (void *)(intptr_t)103));
    MPI_OK(MPI_Comm_set_attr(base, k_plus, (void *)(intptr_t)104));

    MPI_Comm d;
    copy_calls = 0;
    MPI_OK(MPI_Comm_dup(base, &d));
    CHECK(copy_calls == 2, "user copy callbacks ran %d times, want 2", copy_calls);
    int all[64];
    for (int i = 0; i < size; i++)
        all[i] = i;
    expect_comm(d, size, all, "dup");

    void *v;
    int flag;
    MPI_OK(MPI_Comm_get_attr(d, k_dup, &v, &flag));
    CHECK(flag && (intptr_t)v == 101, "MPI_COMM_DUP_FN attribute: flag %d value %ld", flag,
          (long)(intptr_t)v);
    MPI_OK(MPI_Comm_get_attr(d, k_null, &v, &flag));
    CHECK(!flag, "MPI_COMM_NULL_COPY_FN attribute was copied");
    MPI_OK(MPI_Comm_get_attr(d, k_refuse, &v, &flag));
    CHECK(!flag, "attribute whose copy callback set flag=0 was copied");
    MPI_OK(MPI_Comm_get_attr(d, k_plus, &v, &flag));
    CHECK(flag && (intptr_t)v == 105, "copy callback's value: flag %d value %ld", flag,
          (long)(intptr_t)v);
    /* The original keeps its own values. */
    MPI_OK(MPI_Comm_get_attr(base, k_plus, &v, &flag));
    CHECK(flag && (intptr_t)v == 104, "original's attribute: flag %d value %ld", flag,
          (long)(intptr_t)v);

    /* Freeing runs the delete callback of each attribute the comm has. */
    deletes = 0;
    MPI_OK(MPI_Comm_free(&d));
    CHECK(d == MPI_COMM_NULL, "MPI_Comm_free did not reset the handle");
    CHECK(deletes == 2, "freeing the dup ran %d delete callbacks, want 2", deletes);
    deletes = 0;
    MPI_OK(MPI_Comm_free(&base));
    CHECK(deletes == 4, "freeing the original ran %d delete callbacks, want 4", deletes);
    MPI_OK(MPI_Comm_free_keyval(&k_dup));
    MPI_OK(MPI_Comm_free_keyval(&k_null));
    MPI_OK(MPI_Comm_free_keyval(&k_refuse));
    MPI_OK(MPI_Comm_free_keyval(&k_plus));
}

/* A message sent on a duplicate is never received on its parent. */
static void test_message_space(void)
{
    if (size < 2)
        return;
    MPI_Comm d;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
    if (rank == 0) {
        int a = 111, b = 222;
        MPI_OK(MPI_Send(&a, 1, MPI_INT, 1, 5, d));
        MPI_OK(MPI_Send(&b, 1, MPI_INT, 1, 5, MPI_COMM_WORLD));
    } else if (rank == 1) {
        int x = 0, flag = 1;
        MPI_Status st;
        /* The parent's message is the only one the parent can match, though
         * the dup's message was sent first. */
        MPI_OK(MPI_Recv(&x, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
        CHECK(x == 222, "received %d on MPI_COMM_WORLD, want 222 (the dup's message leaked)", x);
        MPI_OK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st));
        CHECK(!flag, "another message is pending on MPI_COMM_WORLD");
        MPI_OK(MPI_Recv(&x, 1, MPI_INT, 0, 5, d, &st));
        CHECK(x == 111, "received %d on the dup, want 111", x);
    }
    /* Collectives on the two overlap without mixing either. */
    int in = rank + 1, out1 = 0, out2 = 0;
    MPI_Request r[2];
    MPI_OK(MPI_Iallreduce(&in, &out1, 1, MPI_INT, MPI_SUM, d, &r[0]));
    MPI_OK(MPI_Iallreduce(&rank, &out2, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD, &r[1]));
    MPI_OK(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
    CHECK(out1 == size * (size + 1) / 2 && out2 == size - 1, "overlapping allreduces: %d %d",
          out1, out2);
    MPI_OK(MPI_Comm_free(&d));
}

static void test_dup_info_idup(void)
{
    int all[64];
    for (int i = 0; i < size; i++)
        all[i] = i;
    MPI_Info info;
    MPI_OK(MPI_Info_create(&info));
    MPI_OK(MPI_Info_set(info, "mpi_assert_no_any_source", "false"));
    MPI_Comm d;
    MPI_OK(MPI_Comm_dup_with_info(MPI_COMM_WORLD, info, &d));
    MPI_OK(MPI_Info_free(&info));
    expect_comm(d, size, all, "dup_with_info");
    MPI_Info used;
    MPI_OK(MPI_Comm_get_info(d, &used));
    CHECK(used != MPI_INFO_NULL, "MPI_Comm_get_info gave MPI_INFO_NULL");
    char val[64];
    int buflen = sizeof val, flag = 0;
    MPI_OK(MPI_Info_get_string(used, "mpi_assert_no_any_source", &buflen, val, &flag));
    CHECK(!flag || !strcmp(val, "false"), "hint came back as \"%s\"", val);
    MPI_OK(MPI_Info_free(&used));

    /* MPI_INFO_NULL: no hints. */
    MPI_Comm d0;
    MPI_OK(MPI_Comm_dup_with_info(MPI_COMM_WORLD, MPI_INFO_NULL, &d0));
    expect_comm(d0, size, all, "dup_with_info(MPI_INFO_NULL)");
    MPI_OK(MPI_Comm_free(&d0));

    /* set_info / get_info: the result is a new object the caller frees. */
    MPI_OK(MPI_Info_create(&info));
    MPI_OK(MPI_Info_set(info, "mpi_assert_no_any_tag", "false"));
    MPI_OK(MPI_Comm_set_info(d, info));
    MPI_OK(MPI_Info_free(&info));
    MPI_OK(MPI_Comm_get_info(d, &used));
    CHECK(used != MPI_INFO_NULL, "MPI_Comm_get_info gave MPI_INFO_NULL");
    buflen = sizeof val;
    MPI_OK(MPI_Info_get_string(used, "mpi_assert_no_any_tag", &buflen, val, &flag));
    CHECK(!flag || !strcmp(val, "false"), "hint came back as \"%s\"", val);
    MPI_OK(MPI_Info_free(&used));
    MPI_OK(MPI_Comm_get_info(MPI_COMM_WORLD, &used));
    CHECK(used != MPI_INFO_NULL, "MPI_Comm_get_info(MPI_COMM_WORLD) gave MPI_INFO_NULL");
    MPI_OK(MPI_Info_free(&used));

    /* Two idups outstanding at once, completed in the other order. */
    MPI_Comm i1 = MPI_COMM_NULL, i2 = MPI_COMM_NULL;
    MPI_Request r[2];
    MPI_OK(MPI_Comm_idup(MPI_COMM_WORLD, &i1, &r[0]));
    MPI_OK(MPI_Comm_idup(d, &i2, &r[1]));
    MPI_OK(MPI_Wait(&r[1], MPI_STATUS_IGNORE));
    MPI_OK(MPI_Wait(&r[0], MPI_STATUS_IGNORE));
    CHECK(r[0] == MPI_REQUEST_NULL && r[1] == MPI_REQUEST_NULL, "requests not freed");
    CHECK(i1 != i2 && i1 != d, "idup gave handles %p %p", (void *)i1, (void *)i2);
    expect_comm(i1, size, all, "idup(world)");
    expect_comm(i2, size, all, "idup(dup)");
    int res;
    MPI_OK(MPI_Comm_compare(i1, i2, &res));
    CHECK_INT(res, MPI_CONGRUENT);
    MPI_OK(MPI_Comm_free(&i1));
    MPI_OK(MPI_Comm_free(&i2));
    MPI_OK(MPI_Comm_free(&d));
}

/* ---------------------------------------------------------------- split */

typedef struct {
    int color, key, rank;
} entry_t;

static int cmp_entry(const void *a, const void *b)
{
    const entry_t *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return x->rank - y->rank;
}

/* Members (world ranks) of my part of a split of a communicator whose
 * members are parent[0..n-1], each parent rank i using color[i], key[i]. */
static int ref_split(int n, const int *parent, const int *color, const int *key, int mycolor,
                     int *out)
{
    entry_t e[64];
    int m = 0;
    for (int i = 0; i < n; i++)
        if (color[i] == mycolor)
            e[m++] = (entry_t){color[i], key[i], i};
    qsort(e, (size_t)m, sizeof e[0], cmp_entry);
    for (int i = 0; i < m; i++)
        out[i] = parent[e[i].rank];
    return m;
}

static void test_split(void)
{
    int world_members[64], color[64], key[64], want[64], n;
    for (int i = 0; i < size; i++)
        world_members[i] = i;
    MPI_Comm c;

    /* color rank%3, key reverses. */
    for (int i = 0; i < size; i++)
        color[i] = i % 3, key[i] = size - i;
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, color[rank], key[rank], &c));
    n = ref_split(size, world_members, color, key, color[rank], want);
    expect_comm(c, n, want, "split(rank%3, reversed)");
    MPI_OK(MPI_Comm_free(&c));

    /* all keys equal: order of the parent. */
    for (int i = 0; i < size; i++)
        color[i] = i % 2, key[i] = 7;
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, color[rank], key[rank], &c));
    n = ref_split(size, world_members, color, key, color[rank], want);
    expect_comm(c, n, want, "split(rank%2, equal keys)");
    MPI_OK(MPI_Comm_free(&c));

    /* MPI_UNDEFINED: rank 0 (and every fourth) gets MPI_COMM_NULL. */
    for (int i = 0; i < size; i++)
        color[i] = i % 4 == 0 ? MPI_UNDEFINED : 3, key[i] = -i;
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, color[rank], key[rank], &c));
    if (color[rank] == MPI_UNDEFINED) {
        CHECK(c == MPI_COMM_NULL, "MPI_UNDEFINED color gave a communicator");
    } else {
        n = ref_split(size, world_members, color, key, color[rank], want);
        expect_comm(c, n, want, "split(undefined for rank%4==0)");
        MPI_OK(MPI_Comm_free(&c));
    }

    /* A split of a reversed communicator: ties are broken by the rank in
     * the parent, not in MPI_COMM_WORLD. */
    MPI_Comm rev;
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &rev));
    int revm[64];
    for (int i = 0; i < size; i++)
        revm[i] = size - 1 - i;
    expect_comm(rev, size, revm, "reversed");
    int prank;
    MPI_OK(MPI_Comm_rank(rev, &prank));
    for (int i = 0; i < size; i++)
        color[i] = i % 2, key[i] = i / 3;   /* i: rank in rev */
    MPI_OK(MPI_Comm_split(rev, color[prank], key[prank], &c));
    n = ref_split(size, revm, color, key, color[prank], want);
    expect_comm(c, n, want, "split of reversed (ties by parent rank)");

    /* Comparisons. */
    int res;
    MPI_OK(MPI_Comm_compare(MPI_COMM_WORLD, MPI_COMM_WORLD, &res));
    CHECK_INT(res, MPI_IDENT);
    MPI_OK(MPI_Comm_compare(rev, rev, &res));
    CHECK_INT(res, MPI_IDENT);
    MPI_OK(MPI_Comm_compare(MPI_COMM_WORLD, rev, &res));
    CHECK_INT(res, size > 1 ? MPI_SIMILAR : MPI_CONGRUENT);
    MPI_OK(MPI_Comm_compare(MPI_COMM_WORLD, MPI_COMM_SELF, &res));
    CHECK_INT(res, size > 1 ? MPI_UNEQUAL : MPI_CONGRUENT);
    MPI_OK(MPI_Comm_compare(rev, c, &res));
    CHECK_INT(res, size > 1 ? MPI_UNEQUAL : MPI_CONGRUENT);
    MPI_Comm d;
    MPI_OK(MPI_Comm_dup(rev, &d));
    MPI_OK(MPI_Comm_compare(rev, d, &res));
    CHECK_INT(res, MPI_CONGRUENT);
    MPI_OK(MPI_Comm_free(&d));
    MPI_OK(MPI_Comm_free(&c));
    MPI_OK(MPI_Comm_free(&rev));

    /* split_type: every rank is on this one node. */
    MPI_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, size - rank, MPI_INFO_NULL,
                               &c));
    expect_comm(c, size, revm, "split_type(SHARED, reversed keys)");
    MPI_OK(MPI_Comm_free(&c));
    MPI_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &c));
    expect_comm(c, size, world_members, "split_type(SHARED, equal keys)");
    MPI_OK(MPI_Comm_free(&c));
    MPI_OK(MPI_Comm_split_type(MPI_COMM_WORLD, rank % 2 ? MPI_UNDEFINED : MPI_COMM_TYPE_SHARED, 0,
                               MPI_INFO_NULL, &c));
    int nev = 0;
    for (int i = 0; i < size; i += 2)
        want[nev++] = i;
    expect_comm(c, rank % 2 ? 0 : nev, want, "split_type(SHARED or UNDEFINED)");
    if (c != MPI_COMM_NULL)
        MPI_OK(MPI_Comm_free(&c));
    /* HW_UNGUIDED where others pass MPI_UNDEFINED: those get
     * MPI_COMM_NULL, the others a strictly smaller communicator or none
     * (core_split_hw.c checks what it holds), and nobody waits for a step
     * the others did not run. */
    c = MPI_COMM_WORLD;
    MPI_OK(MPI_Comm_split_type(MPI_COMM_WORLD, rank % 3 == 2 ? MPI_UNDEFINED : MPI_COMM_TYPE_HW_UNGUIDED,
                               0, MPI_INFO_NULL, &c));
    if (rank % 3 == 2)
        CHECK(c == MPI_COMM_NULL, "split_type(MPI_UNDEFINED) gave a communicator");
    if (c != MPI_COMM_NULL) {
        int csize = -1;
        MPI_OK(MPI_Comm_size(c, &csize));
        CHECK(csize < size, "split_type(HW_UNGUIDED) gave %d ranks of %d", csize, size);
        MPI_OK(MPI_Comm_free(&c));
    }
    MPI_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &c));
    expect_comm(c, size, world_members, "split_type(SHARED) after HW_UNGUIDED");
    MPI_OK(MPI_Comm_free(&c));
}

/* ---------------------------------------------------------------- create */

static void test_create(void)
{
    MPI_Group world, g;
    MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &world));
    int evens[64], ne = 0, rev[64], want[64];
    for (int i = 0; i < size; i += 2)
        evens[ne++] = i;
    for (int i = 0; i < size; i++)
        rev[i] = size - 1 - i;

    MPI_Comm c;
    MPI_OK(MPI_Group_incl(world, ne, evens, &g));
    MPI_OK(MPI_Comm_create(MPI_COMM_WORLD, g, &c));
    MPI_OK(MPI_Group_free(&g));
    expect_comm(c, ne, evens, "create(evens)");
    if (c != MPI_COMM_NULL) {
        int res;
        MPI_OK(MPI_Comm_compare(MPI_COMM_WORLD, c, &res));
        CHECK_INT(res, size > 1 ? MPI_UNEQUAL : MPI_CONGRUENT);
        /* create on the new communicator: its upper half, reordered */
        MPI_Group cg, sub;
        MPI_OK(MPI_Comm_group(c, &cg));
        int half = ne / 2, idx[64], n = 0;
        for (int i = ne - 1; i >= half; i--) {
            idx[n] = i;
            want[n++] = evens[i];
        }
        MPI_OK(MPI_Group_incl(cg, n, idx, &sub));
        MPI_Comm c2;
        MPI_OK(MPI_Comm_create(c, sub, &c2));
        expect_comm(c2, n, want, "create(create(evens), upper half reversed)");
        if (c2 != MPI_COMM_NULL)
            MPI_OK(MPI_Comm_free(&c2));
        MPI_OK(MPI_Group_free(&sub));
        MPI_OK(MPI_Group_free(&cg));
        MPI_OK(MPI_Comm_free(&c));
    }

    /* The whole group reversed: a reordered communicator of everyone. */
    MPI_OK(MPI_Group_incl(world, size, rev, &g));
    MPI_OK(MPI_Comm_create(MPI_COMM_WORLD, g, &c));
    MPI_OK(MPI_Group_free(&g));
    expect_comm(c, size, rev, "create(reversed)");
    MPI_OK(MPI_Comm_free(&c));

    /* The empty group: everyone gets MPI_COMM_NULL. */
    MPI_OK(MPI_Comm_create(MPI_COMM_WORLD, MPI_GROUP_EMPTY, &c));
    CHECK(c == MPI_COMM_NULL, "create(MPI_GROUP_EMPTY) gave a communicator");

    /* create_group: only members call; the two halves at the same time,
     * the upper one reversed. */
    int lo[64], hi[64], nlo = 0, nhi = 0;
    int h = (size + 1) / 2;
    for (int i = 0; i < h; i++)
        lo[nlo++] = i;
    for (int i = size - 1; i >= h; i--)
        hi[nhi++] = i;
    int mine_lo = rank < h;
    MPI_OK(MPI_Group_incl(world, mine_lo ? nlo : nhi, mine_lo ? lo : hi, &g));
    MPI_OK(MPI_Comm_create_group(MPI_COMM_WORLD, g, mine_lo ? 5 : 6, &c));
    MPI_OK(MPI_Group_free(&g));
    expect_comm(c, mine_lo ? nlo : nhi, mine_lo ? lo : hi, "create_group(half)");
    /* A second create_group from the new communicator: a singleton. */
    MPI_Comm one;
    MPI_Group cg, g1;
    MPI_OK(MPI_Comm_group(c, &cg));
    int crank;
    MPI_OK(MPI_Comm_rank(c, &crank));
    MPI_OK(MPI_Group_incl(cg, 1, &crank, &g1));
    MPI_OK(MPI_Comm_create_group(c, g1, 0, &one));
    expect_comm(one, 1, &rank, "create_group(myself)");
    MPI_OK(MPI_Comm_free(&one));
    MPI_OK(MPI_Group_free(&g1));
    MPI_OK(MPI_Group_free(&cg));
    MPI_OK(MPI_Comm_free(&c));
    MPI_OK(MPI_Group_free(&world));
}

/* ---------------------------------------------------------------- the rest */

static void test_names_and_misc(void)
{
    char name[MPI_MAX_OBJECT_NAME];
    int len = -1;
    MPI_OK(MPI_Comm_get_name(MPI_COMM_WORLD, name, &len));
    CHECK(!strcmp(name, "MPI_COMM_WORLD") && len == 14, "world's name \"%s\" (%d)", name, len);
    MPI_OK(MPI_Comm_get_name(MPI_COMM_SELF, name, &len));
    CHECK(!strcmp(name, "MPI_COMM_SELF") && len == 13, "self's name \"%s\" (%d)", name, len);

    MPI_Comm d;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
    MPI_OK(MPI_Comm_get_name(d, name, &len));
    CHECK(name[0] == '\0' && len == 0, "a dup is named \"%s\" (%d); names are not copied", name,
          len);
    MPI_OK(MPI_Comm_set_name(d, "halo dup"));
    MPI_OK(MPI_Comm_get_name(d, name, &len));
    CHECK(!strcmp(name, "halo dup") && len == 8, "name \"%s\" (%d)", name, len);
    /* Too long: kept to MPI_MAX_OBJECT_NAME-1 characters. */
    char longname[MPI_MAX_OBJECT_NAME + 50];
    memset(longname, 'n', sizeof longname);
    longname[sizeof longname - 1] = '\0';
    MPI_OK(MPI_Comm_set_name(d, longname));
    MPI_OK(MPI_Comm_get_name(d, name, &len));
    CHECK(len == MPI_MAX_OBJECT_NAME - 1 && (int)strlen(name) == len, "long name kept %d chars",
          len);
    MPI_OK(MPI_Comm_set_name(MPI_COMM_WORLD, "renamed world"));
    MPI_OK(MPI_Comm_get_name(MPI_COMM_WORLD, name, &len));
    CHECK(!strcmp(name, "renamed world"), "world renamed to \"%s\"", name);
    MPI_OK(MPI_Comm_set_name(MPI_COMM_WORLD, "MPI_COMM_WORLD"));

    int flag = -1;
    MPI_OK(MPI_Comm_test_inter(MPI_COMM_WORLD, &flag));
    CHECK_INT(flag, 0);
    MPI_OK(MPI_Comm_test_inter(d, &flag));
    CHECK_INT(flag, 0);
    MPI_OK(MPI_Comm_free(&d));

    /* Predefined communicators cannot be freed, and stay usable. */
    MPI_Comm w = MPI_COMM_WORLD, s = MPI_COMM_SELF, nul = MPI_COMM_NULL;
    CHECK(MPI_Comm_free(&w) != MPI_SUCCESS, "MPI_Comm_free(MPI_COMM_WORLD) succeeded");
    CHECK(MPI_Comm_free(&s) != MPI_SUCCESS, "MPI_Comm_free(MPI_COMM_SELF) succeeded");
    MPI_FAILS(MPI_ERR_COMM, MPI_Comm_free(&nul));
    int sum = 0, one = 1;
    MPI_OK(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK_INT(sum, size);
}

/* Thousands of communicators made and freed: context ids are recycled or
 * plentiful, and every one of them works. */
static void test_many(void)
{
    double t0 = MPI_Wtime();
    int sum;
    for (int i = 0; i < 2000; i++) {
        MPI_Comm d;
        MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
        if (i % 250 == 0) {
            MPI_OK(MPI_Allreduce(&i, &sum, 1, MPI_INT, MPI_SUM, d));
            CHECK(sum == i * size, "allreduce on dup %d: %d", i, sum);
        }
        MPI_OK(MPI_Comm_free(&d));
    }
    /* Many alive at once, freed in another order than made. */
    enum { LIVE = 100 };
    MPI_Comm live[LIVE];
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < LIVE; i++)
            MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, (rank + i) % 2, rank, &live[i]));
        for (int i = 0; i < LIVE; i += 33) {
            /* my part holds the world ranks of my parity, in order */
            int me = -1;
            MPI_OK(MPI_Comm_rank(live[i], &me));
            CHECK(me == rank / 2, "split %d: rank %d, want %d", i, me, rank / 2);
            MPI_OK(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_MIN, live[i]));
            CHECK(sum == rank % 2, "split %d: smallest member %d, want %d", i, sum, rank % 2);
        }
        for (int i = 0; i < LIVE; i++)
            MPI_OK(MPI_Comm_free(&live[(i * 37) % LIVE]));
    }
    if (rank == 0)
        printf("core_comm: 2300 communicators in %.2f s\n", MPI_Wtime() - t0);
}

int main(int argc, char **argv)
{
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    if (size > 64)
        MT_FAIL("this test handles at most 64 ranks");
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    test_dup();
    test_message_space();
    test_dup_info_idup();
    test_split();
    test_create();
    test_names_and_misc();
    test_many();
    MPI_OK(MPI_Finalize());
    if (rank == 0)
        printf("core_comm: ok\n");
    return 0;
}
