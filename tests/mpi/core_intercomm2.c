/* Intercommunicators made from intercommunicators and from groups:
 * MPI_Comm_split (colors in both groups, in one group only, MPI_UNDEFINED;
 * ordered by key, then old rank), MPI_Comm_split_type (shared memory,
 * MPI_UNDEFINED, unguided), MPI_Comm_create with subgroups of the local
 * group (empty on one side gives MPI_COMM_NULL everywhere),
 * MPI_Intercomm_create_from_groups (leaders anywhere, the same stringtag
 * twice, an error handler of its own) and MPI_Comm_create_from_group; each
 * result's groups checked by world rank and used (point-to-point and a
 * collective across); and the argument errors. */
#include "mpitest.h"

static int wrank, wsize;

/* The world ranks of a communicator's local and remote groups. */
static void worlds(MPI_Comm c, int remote, int *out, int *n_p)
{
    MPI_Group g, wg;
    if (remote)
        MPI_OK(MPI_Comm_remote_group(c, &g));
    else
        MPI_OK(MPI_Comm_group(c, &g));
    MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &wg));
    MPI_OK(MPI_Group_size(g, n_p));
    int *r = malloc((size_t)*n_p * sizeof(int));
    for (int i = 0; i < *n_p; i++)
        r[i] = i;
    MPI_OK(MPI_Group_translate_ranks(g, *n_p, r, wg, out));
    free(r);
    MPI_OK(MPI_Group_free(&g));
    MPI_OK(MPI_Group_free(&wg));
}

/* c is an intercommunicator whose local group is `lw` and remote group
 * `rw` (world ranks in order); it carries messages and collectives. */
static void check_inter(MPI_Comm c, const int *lw, int ln, const int *rw, int rn, const char *what)
{
    int flag, n, w[64];
    MPI_OK(MPI_Comm_test_inter(c, &flag));
    CHECK(flag, "%s: not an intercommunicator", what);
    worlds(c, 0, w, &n);
    CHECK(n == ln, "%s: local size %d, expected %d", what, n, ln);
    for (int i = 0; i < n; i++)
        CHECK(w[i] == lw[i], "%s: local rank %d is world %d, expected %d", what, i, w[i], lw[i]);
    worlds(c, 1, w, &n);
    CHECK(n == rn, "%s: remote size %d, expected %d", what, n, rn);
    for (int i = 0; i < n; i++)
        CHECK(w[i] == rw[i], "%s: remote rank %d is world %d, expected %d", what, i, w[i], rw[i]);
    int me;
    MPI_OK(MPI_Comm_rank(c, &me));
    CHECK(lw[me] == wrank, "%s: rank %d is not this process", what, me);
    /* Every process sends its world rank to remote rank (me % rn) and
     * receives from the remote ranks that name it. */
    MPI_Request rq;
    MPI_OK(MPI_Isend(&wrank, 1, MPI_INT, me % rn, 3, c, &rq));
    for (int j = 0; j < rn; j++) {
        if (j % ln != me)
            continue;
        int got = -1;
        MPI_OK(MPI_Recv(&got, 1, MPI_INT, j, 3, c, MPI_STATUS_IGNORE));
        CHECK(got == rw[j], "%s: message from remote %d carried %d, expected %d", what, j, got, rw[j]);
    }
    MPI_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    int sum = 0, want = 0;
    for (int j = 0; j < rn; j++)
        want += rw[j];
    MPI_OK(MPI_Allreduce(&wrank, &sum, 1, MPI_INT, MPI_SUM, c));
    CHECK(sum == want, "%s: allreduce gave %d, expected the remote world ranks' sum %d", what, sum, want);
}

/* World ranks of group g (0: world ranks below `cut`, 1: the others) in
 * the order of key (then world rank), limited to those with color `color`
 * under color_of. */
typedef int color_fn(int g, int lrank);
typedef int key_fn(int g, int lrank);

static int cut;

static int lrank_of(int w)
{
    return w < cut ? w : w - cut;
}
static int gsize(int g)
{
    return g == 0 ? cut : wsize - cut;
}
static int gworld(int g, int lrank)
{
    return g == 0 ? lrank : cut + lrank;
}

static int expected(int g, int color, color_fn *col, key_fn *key, int *out)
{
    int n = 0;
    for (int i = 0; i < gsize(g); i++)
        if (col(g, i) == color)
            out[n++] = i;
    /* Insertion sort by key, then local rank. */
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0; j--) {
            int a = out[j - 1], b = out[j];
            if (key(g, a) > key(g, b) || (key(g, a) == key(g, b) && a > b)) {
                out[j - 1] = b;
                out[j] = a;
            }
        }
    for (int i = 0; i < n; i++)
        out[i] = gworld(g, out[i]);
    return n;
}

static int col_parity(int g, int r)
{
    (void)g;
    return r % 2;
}
static int col_rank(int g, int r)
{
    (void)g;
    return r;
}
static int col_undef0(int g, int r)
{
    return (g == 0 && r == 0) ? MPI_UNDEFINED : 5;
}
static int col_one_side(int g, int r)
{
    (void)r;
    return g == 0 ? 1 : 2;
}
static int key_rev(int g, int r)
{
    (void)g;
    return -r;
}
static int key_same(int g, int r)
{
    (void)g;
    (void)r;
    return 7;
}

static void test_split(MPI_Comm inter, int g)
{
    struct {
        color_fn *col;
        key_fn *key;
        const char *name;
    } cases[] = {
        {col_parity, key_rev, "split by parity, keys reversed"},
        {col_rank, key_same, "split by rank (colors on one side only beyond the smaller group)"},
        {col_undef0, key_same, "split with MPI_UNDEFINED"},
        {col_one_side, key_same, "split with no common color"},
    };
    int me = lrank_of(wrank);
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        int color = cases[k].col(g, me);
        MPI_Comm c;
        MPI_OK(MPI_Comm_split(inter, color, cases[k].key(g, me), &c));
        int lw[64], rw[64], ln = 0, rn = 0;
        if (color != MPI_UNDEFINED) {
            ln = expected(g, color, cases[k].col, cases[k].key, lw);
            rn = expected(1 - g, color, cases[k].col, cases[k].key, rw);
        }
        if (rn == 0) {
            CHECK(c == MPI_COMM_NULL, "%s: expected MPI_COMM_NULL (color %d)", cases[k].name, color);
            continue;
        }
        CHECK(c != MPI_COMM_NULL, "%s: got MPI_COMM_NULL (color %d)", cases[k].name, color);
        check_inter(c, lw, ln, rw, rn, cases[k].name);
        MPI_OK(MPI_Comm_free(&c));
    }
    MPI_OK(MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN));
    MPI_Comm c = MPI_COMM_WORLD;
    MPI_FAILS(MPI_ERR_ARG, MPI_Comm_split(inter, -5, 0, &c));
    MPI_OK(MPI_Comm_set_errhandler(inter, MPI_ERRORS_ARE_FATAL));
}

static void test_split_type(MPI_Comm inter, int g)
{
    int lw[64], rw[64], ln = gsize(g), rn = gsize(1 - g);
    for (int i = 0; i < ln; i++)
        lw[i] = gworld(g, i);
    for (int i = 0; i < rn; i++)
        rw[i] = gworld(1 - g, i);
    /* One node: the same groups, in the same order (equal keys). */
    MPI_Comm c;
    MPI_OK(MPI_Comm_split_type(inter, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &c));
    CHECK(c != MPI_COMM_NULL, "split_type shared: got MPI_COMM_NULL");
    check_inter(c, lw, ln, rw, rn, "split_type shared");
    int result;
    MPI_OK(MPI_Comm_compare(inter, c, &result));
    CHECK_INT(result, MPI_CONGRUENT);
    MPI_OK(MPI_Comm_free(&c));
    MPI_OK(MPI_Comm_split_type(inter, MPI_UNDEFINED, 0, MPI_INFO_NULL, &c));
    CHECK(c == MPI_COMM_NULL, "split_type MPI_UNDEFINED: expected MPI_COMM_NULL");
    /* Unguided: nothing smaller than one node, so MPI_COMM_NULL. */
    MPI_OK(MPI_Comm_split_type(inter, MPI_COMM_TYPE_HW_UNGUIDED, 0, MPI_INFO_NULL, &c));
    CHECK(c == MPI_COMM_NULL, "split_type unguided on one node: expected MPI_COMM_NULL");
}

static void test_create(MPI_Comm inter, int g)
{
    MPI_Group lg, sub;
    MPI_OK(MPI_Comm_group(inter, &lg));
    int me = lrank_of(wrank), n = gsize(g), rn = gsize(1 - g);
    /* Group 0 keeps its even ranks in reverse order, group 1 its odd ranks. */
    int ranks[64], k = 0;
    for (int i = n - 1; i >= 0; i--)
        if (g == 0 ? i % 2 == 0 : i % 2 == 1)
            ranks[k++] = i;
    MPI_OK(MPI_Group_incl(lg, k, ranks, &sub));
    MPI_Comm c;
    MPI_OK(MPI_Comm_create(inter, sub, &c));
    int rk = 0, lw[64], rw[64];
    for (int i = 0; i < k; i++)
        lw[i] = gworld(g, ranks[i]);
    /* The other group's choice, in its order. */
    for (int i = rn - 1; i >= 0; i--)
        if (g == 0 ? i % 2 == 1 : i % 2 == 0)
            rw[rk++] = gworld(1 - g, i);
    int in = g == 0 ? me % 2 == 0 : me % 2 == 1;
    if (!in || rk == 0) {
        CHECK(c == MPI_COMM_NULL, "comm_create: expected MPI_COMM_NULL (in %d, remote subgroup size %d)", in, rk);
    } else {
        CHECK(c != MPI_COMM_NULL, "comm_create: got MPI_COMM_NULL");
        check_inter(c, lw, k, rw, rk, "comm_create");
        MPI_OK(MPI_Comm_free(&c));
    }
    MPI_OK(MPI_Group_free(&sub));

    /* Group 1 passes an empty group: MPI_COMM_NULL on both sides. */
    MPI_OK(MPI_Comm_create(inter, g == 0 ? lg : MPI_GROUP_EMPTY, &c));
    CHECK(c == MPI_COMM_NULL, "comm_create with an empty side: expected MPI_COMM_NULL");
    /* The whole local group: congruent with the original. */
    MPI_OK(MPI_Comm_create(inter, lg, &c));
    int result;
    MPI_OK(MPI_Comm_compare(inter, c, &result));
    CHECK_INT(result, MPI_CONGRUENT);
    MPI_OK(MPI_Comm_free(&c));

    /* A group with a process from the remote side: MPI_ERR_GROUP, here
     * and now (no communication). */
    MPI_Group rg, bad;
    MPI_OK(MPI_Comm_remote_group(inter, &rg));
    MPI_OK(MPI_Group_union(lg, rg, &bad));
    MPI_OK(MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN));
    MPI_FAILS(MPI_ERR_GROUP, MPI_Comm_create(inter, bad, &c));
    MPI_OK(MPI_Comm_set_errhandler(inter, MPI_ERRORS_ARE_FATAL));
    MPI_OK(MPI_Group_free(&bad));
    MPI_OK(MPI_Group_free(&rg));
    MPI_OK(MPI_Group_free(&lg));
}

static void test_from_groups(MPI_Comm inter, int g)
{
    MPI_Group wg, low, high;
    MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &wg));
    int r0[1][3] = {{0, cut - 1, 1}}, r1[1][3] = {{cut, wsize - 1, 1}};
    MPI_OK(MPI_Group_range_incl(wg, 1, r0, &low));
    MPI_OK(MPI_Group_range_incl(wg, 1, r1, &high));
    MPI_Group mine = g == 0 ? low : high, other = g == 0 ? high : low;
    int lw[64], rw[64], ln = gsize(g), rn = gsize(1 - g);
    for (int i = 0; i < ln; i++)
        lw[i] = gworld(g, i);
    for (int i = 0; i < rn; i++)
        rw[i] = gworld(1 - g, i);
    /* Leaders: the last of group 0, the first of group 1; twice with the
     * same stringtag, then with another and an error handler of its own. */
    int lead0 = cut - 1, lead1 = 0;
    for (int rep = 0; rep < 2; rep++) {
        MPI_Comm c;
        MPI_OK(MPI_Intercomm_create_from_groups(mine, g == 0 ? lead0 : lead1, other, g == 0 ? lead1 : lead0,
                                                "halo.test.inter", MPI_INFO_NULL, MPI_ERRORS_ARE_FATAL, &c));
        check_inter(c, lw, ln, rw, rn, "intercomm_create_from_groups");
        int result;
        MPI_OK(MPI_Comm_compare(inter, c, &result));
        CHECK_INT(result, MPI_CONGRUENT);
        MPI_OK(MPI_Comm_free(&c));
    }
    MPI_Comm c;
    MPI_OK(MPI_Intercomm_create_from_groups(mine, 0, other, 0, "another tag", MPI_INFO_NULL, MPI_ERRORS_RETURN,
                                            &c));
    MPI_Errhandler eh;
    MPI_OK(MPI_Comm_get_errhandler(c, &eh));
    CHECK(eh == MPI_ERRORS_RETURN, "intercomm_create_from_groups: the error handler was not installed");
    MPI_OK(MPI_Errhandler_free(&eh));
    check_inter(c, lw, ln, rw, rn, "intercomm_create_from_groups (errors return)");
    MPI_OK(MPI_Comm_free(&c));

    /* Errors, found before any communication (these calls return the
     * error: no communicator to take a handler from). */
    MPI_FAILS(MPI_ERR_GROUP, MPI_Intercomm_create_from_groups(other, 0, mine, 0, "x", MPI_INFO_NULL,
                                                              MPI_ERRORS_RETURN, &c));
    MPI_FAILS(MPI_ERR_GROUP, MPI_Intercomm_create_from_groups(mine, 0, wg, 0, "x", MPI_INFO_NULL,
                                                              MPI_ERRORS_RETURN, &c));
    MPI_FAILS(MPI_ERR_RANK, MPI_Intercomm_create_from_groups(mine, ln, other, 0, "x", MPI_INFO_NULL,
                                                             MPI_ERRORS_RETURN, &c));
    MPI_FAILS(MPI_ERR_RANK, MPI_Intercomm_create_from_groups(mine, 0, other, -1, "x", MPI_INFO_NULL,
                                                             MPI_ERRORS_RETURN, &c));

    /* Comm_create_from_group: an intracommunicator over each half. */
    MPI_Comm h;
    MPI_OK(MPI_Comm_create_from_group(mine, "halo.test.half", MPI_INFO_NULL, MPI_ERRORS_ARE_FATAL, &h));
    int flag, sum = 0, want = 0;
    MPI_OK(MPI_Comm_test_inter(h, &flag));
    CHECK(!flag, "comm_create_from_group made an intercommunicator");
    int n, w[64];
    worlds(h, 0, w, &n);
    CHECK_INT(n, ln);
    for (int i = 0; i < n; i++) {
        CHECK(w[i] == lw[i], "comm_create_from_group: rank %d is world %d, expected %d", i, w[i], lw[i]);
        want += lw[i];
    }
    MPI_OK(MPI_Allreduce(&wrank, &sum, 1, MPI_INT, MPI_SUM, h));
    CHECK_INT(sum, want);
    MPI_OK(MPI_Comm_free(&h));
    MPI_FAILS(MPI_ERR_GROUP, MPI_Comm_create_from_group(other, "x", MPI_INFO_NULL, MPI_ERRORS_RETURN, &h));

    MPI_OK(MPI_Group_free(&low));
    MPI_OK(MPI_Group_free(&high));
    MPI_OK(MPI_Group_free(&wg));
}

int main(int argc, char **argv)
{
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &wrank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &wsize));
    if (wsize < 2) {
        printf("core_intercomm2: needs 2 ranks, skipped\n");
        MPI_OK(MPI_Finalize());
        return 0;
    }
    /* Two cuts: the lower third against the rest, and all but one
     * against one. */
    int cuts[2] = {wsize / 3 > 0 ? wsize / 3 : 1, wsize - 1};
    for (int k = 0; k < 2; k++) {
        if (k == 1 && cuts[1] == cuts[0])
            break;
        cut = cuts[k];
        int g = wrank >= cut;
        MPI_Comm local, inter;
        MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, g, wrank, &local));
        MPI_OK(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, g == 0 ? cut : 0, 11, &inter));
        MPI_OK(MPI_Comm_free(&local));
        test_split(inter, g);
        test_split_type(inter, g);
        test_create(inter, g);
        test_from_groups(inter, g);
        MPI_OK(MPI_Comm_free(&inter));
    }
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (wrank == 0)
        printf("core_intercomm2: ok\n");
    MPI_OK(MPI_Finalize());
    return 0;
}
