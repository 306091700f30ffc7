/* Groups: size and rank, translate_ranks (MPI_PROC_NULL and members
 * missing from the target), compare, union / intersection / difference
 * with the standard's order rules, incl / excl, range_incl / range_excl
 * (negative strides too), empty results, free, and invalid ranks.
 *
 * Every group is checked member by member: its members' ranks in
 * MPI_COMM_WORLD's group, in order, against the list the standard asks for,
 * computed here from plain arrays. */
#include "mpitest.h"

static int rank, size;
static MPI_Group world;

/* The group must hold exactly the world ranks want[0..n-1], in that order,
 * and report this process's rank in it. */
static void expect_members(MPI_Group g, int n, const int *want, const char *what)
{
    int gsize = -1, grank = -2;
    MPI_OK(MPI_Group_size(g, &gsize));
    CHECK(gsize == n, "%s: size %d, want %d", what, gsize, n);
    int *idx = malloc(sizeof(int) * (n + 1)), *got = malloc(sizeof(int) * (n + 1));
    for (int i = 0; i < n; i++)
        idx[i] = i;
    if (n > 0)
        MPI_OK(MPI_Group_translate_ranks(g, n, idx, world, got));
    int mine = MPI_UNDEFINED;
    for (int i = 0; i < n; i++) {
        CHECK(got[i] == want[i], "%s: member %d is world rank %d, want %d", what, i, got[i],
              want[i]);
        if (want[i] == rank)
            mine = i;
    }
    MPI_OK(MPI_Group_rank(g, &grank));
    CHECK(grank == mine, "%s: my rank %d, want %d", what, grank, mine);
    if (n == 0) {
        int res = -1;
        MPI_OK(MPI_Group_compare(g, MPI_GROUP_EMPTY, &res));
        CHECK(res == MPI_IDENT, "%s: empty group compares %d to MPI_GROUP_EMPTY", what, res);
    }
    free(idx);
    free(got);
}

/* Group of the given world ranks, made with MPI_Group_incl. */
static MPI_Group make(int n, const int *ranks)
{
    MPI_Group g;
    MPI_OK(MPI_Group_incl(world, n, ranks, &g));
    return g;
}

static int in_list(int x, int n, const int *v)
{
    for (int i = 0; i < n; i++)
        if (v[i] == x)
            return 1;
    return 0;
}

/* Reference set operations, by the standard's order rules. */
static int ref_union(int na, const int *a, int nb, const int *b, int *out)
{
    int n = 0;
    for (int i = 0; i < na; i++)
        out[n++] = a[i];
    for (int i = 0; i < nb; i++)
        if (!in_list(b[i], na, a))
            out[n++] = b[i];
    return n;
}

static int ref_inter(int na, const int *a, int nb, const int *b, int *out)
{
    int n = 0;
    for (int i = 0; i < na; i++)
        if (in_list(a[i], nb, b))
            out[n++] = a[i];
    return n;
}

static int ref_diff(int na, const int *a, int nb, const int *b, int *out)
{
    int n = 0;
    for (int i = 0; i < na; i++)
        if (!in_list(a[i], nb, b))
            out[n++] = a[i];
    return n;
}

static void test_world_and_compare(void)
{
    int gsize, grank;
    MPI_OK(MPI_Group_size(world, &gsize));
    MPI_OK(MPI_Group_rank(world, &grank));
    CHECK(gsize == size && grank == rank, "world group size %d rank %d", gsize, grank);

    int all[64], rev[64], evens[64], ne = 0;
    for (int i = 0; i < size; i++) {
        all[i] = i;
        rev[i] = size - 1 - i;
        if (i % 2 == 0)
            evens[ne++] = i;
    }
    expect_members(world, size, all, "world");

    MPI_Group again, grev, gev;
    MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &again));
    grev = make(size, rev);
    gev = make(ne, evens);
    expect_members(grev, size, rev, "reversed");
    expect_members(gev, ne, evens, "evens");

    int res;
    MPI_OK(MPI_Group_compare(world, again, &res));
    CHECK_INT(res, MPI_IDENT);
    MPI_OK(MPI_Group_compare(world, grev, &res));
    CHECK_INT(res, size > 1 ? MPI_SIMILAR : MPI_IDENT);
    MPI_OK(MPI_Group_compare(world, gev, &res));
    CHECK_INT(res, size > 1 ? MPI_UNEQUAL : MPI_IDENT);
    MPI_OK(MPI_Group_compare(MPI_GROUP_EMPTY, MPI_GROUP_EMPTY, &res));
    CHECK_INT(res, MPI_IDENT);
    MPI_OK(MPI_Group_compare(world, MPI_GROUP_EMPTY, &res));
    CHECK_INT(res, MPI_UNEQUAL);
    /* Same size, different members: UNEQUAL. */
    if (size >= 3) {
        int a[2] = {0, 1}, b[2] = {0, 2};
        MPI_Group ga = make(2, a), gb = make(2, b);
        MPI_OK(MPI_Group_compare(ga, gb, &res));
        CHECK_INT(res, MPI_UNEQUAL);
        MPI_OK(MPI_Group_free(&ga));
        MPI_OK(MPI_Group_free(&gb));
    }

    /* translate_ranks: reversed -> world, world -> evens (odd ranks are
     * MPI_UNDEFINED there), MPI_PROC_NULL stays MPI_PROC_NULL. */
    int in[66], out[66];
    for (int i = 0; i < size; i++)
        in[i] = i;
    in[size] = MPI_PROC_NULL;
    MPI_OK(MPI_Group_translate_ranks(grev, size + 1, in, world, out));
    for (int i = 0; i < size; i++)
        CHECK(out[i] == size - 1 - i, "reversed rank %d -> world %d", i, out[i]);
    CHECK_INT(out[size], MPI_PROC_NULL);
    MPI_OK(MPI_Group_translate_ranks(world, size + 1, in, gev, out));
    for (int i = 0; i < size; i++)
        CHECK(out[i] == (i % 2 == 0 ? i / 2 : MPI_UNDEFINED), "world rank %d -> evens %d", i,
              out[i]);
    CHECK_INT(out[size], MPI_PROC_NULL);
    MPI_OK(MPI_Group_translate_ranks(world, 0, in, gev, out));
    MPI_OK(MPI_Group_translate_ranks(world, 1, in, MPI_GROUP_EMPTY, out));
    CHECK_INT(out[0], MPI_UNDEFINED);
    in[0] = size;
    MPI_FAILS(MPI_ERR_RANK, MPI_Group_translate_ranks(world, 1, in, gev, out));
    in[0] = -1;
    MPI_FAILS(MPI_ERR_RANK, MPI_Group_translate_ranks(world, 1, in, gev, out));

    MPI_OK(MPI_Group_free(&again));
    CHECK(again == MPI_GROUP_NULL, "MPI_Group_free did not reset the handle");
    MPI_OK(MPI_Group_free(&grev));
    MPI_OK(MPI_Group_free(&gev));
}

static void test_set_ops(void)
{
    /* a: ranks 3k+1 from the top down; b: every other rank from 0. The
     * order in a is not world order, so the order rules show. */
    int a[64], b[64], na = 0, nb = 0, want[128], nw;
    for (int i = size - 1; i >= 0; i--)
        if (i % 3 == 1)
            a[na++] = i;
    for (int i = 0; i < size; i += 2)
        b[nb++] = i;
    if (size > 2) {
        a[na++] = 2;   /* in b as well */
    }
    MPI_Group ga = make(na, a), gb = make(nb, b), g;

    MPI_OK(MPI_Group_union(ga, gb, &g));
    nw = ref_union(na, a, nb, b, want);
    expect_members(g, nw, want, "union(a,b)");
    MPI_OK(MPI_Group_free(&g));
    MPI_OK(MPI_Group_union(gb, ga, &g));
    nw = ref_union(nb, b, na, a, want);
    expect_members(g, nw, want, "union(b,a)");
    MPI_OK(MPI_Group_free(&g));

    MPI_OK(MPI_Group_intersection(ga, gb, &g));
    nw = ref_inter(na, a, nb, b, want);
    expect_members(g, nw, want, "intersection(a,b)");
    MPI_OK(MPI_Group_free(&g));
    MPI_OK(MPI_Group_intersection(gb, ga, &g));
    nw = ref_inter(nb, b, na, a, want);
    expect_members(g, nw, want, "intersection(b,a)");
    MPI_OK(MPI_Group_free(&g));

    MPI_OK(MPI_Group_difference(ga, gb, &g));
    nw = ref_diff(na, a, nb, b, want);
    expect_members(g, nw, want, "difference(a,b)");
    MPI_OK(MPI_Group_free(&g));
    MPI_OK(MPI_Group_difference(gb, ga, &g));
    nw = ref_diff(nb, b, na, a, want);
    expect_members(g, nw, want, "difference(b,a)");
    MPI_OK(MPI_Group_free(&g));

    /* Empty results. */
    MPI_OK(MPI_Group_difference(ga, ga, &g));
    expect_members(g, 0, want, "difference(a,a)");
    MPI_OK(MPI_Group_free(&g));
    MPI_OK(MPI_Group_intersection(gb, MPI_GROUP_EMPTY, &g));
    expect_members(g, 0, want, "intersection(b,empty)");
    MPI_OK(MPI_Group_free(&g));
    MPI_OK(MPI_Group_union(MPI_GROUP_EMPTY, MPI_GROUP_EMPTY, &g));
    expect_members(g, 0, want, "union(empty,empty)");
    MPI_OK(MPI_Group_free(&g));
    MPI_OK(MPI_Group_union(MPI_GROUP_EMPTY, gb, &g));
    expect_members(g, nb, b, "union(empty,b)");
    MPI_OK(MPI_Group_free(&g));
    MPI_OK(MPI_Group_difference(gb, MPI_GROUP_EMPTY, &g));
    expect_members(g, nb, b, "difference(b,empty)");
    MPI_OK(MPI_Group_free(&g));

    MPI_OK(MPI_Group_free(&ga));
    MPI_OK(MPI_Group_free(&gb));
}

static void test_incl_excl(void)
{
    int want[64] = {0}, nw = 0, ranks[64] = {0};
    MPI_Group g, g2;

    /* incl with n = 0 gives MPI_GROUP_EMPTY. */
    MPI_OK(MPI_Group_incl(world, 0, ranks, &g));
    CHECK(g == MPI_GROUP_EMPTY, "incl of nothing gave %p, not MPI_GROUP_EMPTY", (void *)g);
    expect_members(g, 0, want, "incl()");
    MPI_OK(MPI_Group_free(&g));

    /* excl of the odd ranks keeps the evens in order. */
    int n = 0;
    for (int i = 1; i < size; i += 2)
        ranks[n++] = i;
    for (int i = 0; i < size; i += 2)
        want[nw++] = i;
    MPI_OK(MPI_Group_excl(world, n, ranks, &g));
    expect_members(g, nw, want, "excl(odds)");
    /* incl of a subgroup: ranks are relative to that group. */
    if (nw >= 2) {
        int two[2] = {nw - 1, 0}, w2[2] = {want[nw - 1], want[0]};
        MPI_OK(MPI_Group_incl(g, 2, two, &g2));
        expect_members(g2, 2, w2, "incl(evens,{last,0})");
        MPI_OK(MPI_Group_free(&g2));
    }
    MPI_OK(MPI_Group_free(&g));
    MPI_OK(MPI_Group_excl(world, 0, ranks, &g));
    for (int i = 0; i < size; i++)
        want[i] = i;
    expect_members(g, size, want, "excl()");
    MPI_OK(MPI_Group_free(&g));
    for (int i = 0; i < size; i++)
        ranks[i] = size - 1 - i;
    MPI_OK(MPI_Group_excl(world, size, ranks, &g));
    expect_members(g, 0, want, "excl(all)");
    MPI_OK(MPI_Group_free(&g));

    /* Invalid ranks. */
    ranks[0] = size;
    MPI_FAILS(MPI_ERR_RANK, MPI_Group_incl(world, 1, ranks, &g));
    MPI_FAILS(MPI_ERR_RANK, MPI_Group_excl(world, 1, ranks, &g));
    ranks[0] = -1;
    MPI_FAILS(MPI_ERR_RANK, MPI_Group_incl(world, 1, ranks, &g));
    MPI_FAILS(MPI_ERR_RANK, MPI_Group_excl(world, 1, ranks, &g));
    ranks[0] = MPI_PROC_NULL;
    MPI_FAILS(MPI_ERR_RANK, MPI_Group_incl(world, 1, ranks, &g));
    ranks[0] = 0;
    CHECK(MPI_Group_incl(MPI_GROUP_EMPTY, 1, ranks, &g) != MPI_SUCCESS,
          "incl of rank 0 of MPI_GROUP_EMPTY succeeded");
    /* The same rank twice is erroneous. */
    ranks[0] = ranks[1] = 0;
    if (size >= 2) {
        CHECK(MPI_Group_incl(world, 2, ranks, &g) != MPI_SUCCESS, "incl({0,0}) succeeded");
        CHECK(MPI_Group_excl(world, 2, ranks, &g) != MPI_SUCCESS, "excl({0,0}) succeeded");
    }
    MPI_FAILS(MPI_ERR_GROUP, MPI_Group_incl(MPI_GROUP_NULL, 0, ranks, &g));
    int s;
    MPI_FAILS(MPI_ERR_GROUP, MPI_Group_size(MPI_GROUP_NULL, &s));
}

/* Expands ranges the way the standard defines them. */
static int ref_ranges(int n, int r[][3], int *out)
{
    int m = 0;
    for (int i = 0; i < n; i++) {
        int first = r[i][0], last = r[i][1], stride = r[i][2];
        for (int x = first; stride > 0 ? x <= last : x >= last; x += stride)
            out[m++] = x;
    }
    return m;
}

static void check_range(int n, int r[][3], const char *what)
{
    int want[64], w2[64], nw = ref_ranges(n, r, want), nx = 0;
    char drop[64] = {0};
    for (int i = 0; i < nw; i++)
        drop[want[i]] = 1;
    for (int i = 0; i < size; i++)
        if (!drop[i])
            w2[nx++] = i;
    MPI_Group g;
    MPI_OK(MPI_Group_range_incl(world, n, r, &g));
    expect_members(g, nw, want, what);
    MPI_OK(MPI_Group_free(&g));
    MPI_OK(MPI_Group_range_excl(world, n, r, &g));
    expect_members(g, nx, w2, what);
    MPI_OK(MPI_Group_free(&g));
}

static void test_ranges(void)
{
    int r[3][3];
    /* every rank, stride 1 */
    r[0][0] = 0, r[0][1] = size - 1, r[0][2] = 1;
    check_range(1, r, "range(0..size-1,1)");
    /* evens, stride 2, last not hit exactly when size is even */
    r[0][0] = 0, r[0][1] = size - 1, r[0][2] = 2;
    check_range(1, r, "range(0..size-1,2)");
    /* downwards: all ranks reversed */
    r[0][0] = size - 1, r[0][1] = 0, r[0][2] = -1;
    check_range(1, r, "range(size-1..0,-1)");
    /* downwards by 3, then the ones it skipped upwards (two triplets) */
    if (size >= 4) {
        r[0][0] = size - 1, r[0][1] = 0, r[0][2] = -3;
        int k = 0;
        int rest[64];
        for (int i = 0; i < size; i++)
            if ((size - 1 - i) % 3 != 0)
                rest[k++] = i;
        r[1][0] = rest[0], r[1][1] = rest[0], r[1][2] = 1;
        check_range(2, r, "range(size-1..0,-3),(x,x,1)");
        /* stride larger than the span: one rank */
        r[0][0] = 1, r[0][1] = size - 1, r[0][2] = 100;
        check_range(1, r, "range(1..size-1,100)");
    }
    /* a single rank */
    r[0][0] = size - 1, r[0][1] = size - 1, r[0][2] = -2;
    check_range(1, r, "range(last,last,-2)");
    /* nothing */
    MPI_Group g;
    MPI_OK(MPI_Group_range_incl(world, 0, r, &g));
    expect_members(g, 0, r[0], "range_incl()");
    MPI_OK(MPI_Group_free(&g));

    /* Ranges that leave the group. */
    r[0][0] = 0, r[0][1] = size, r[0][2] = 1;
    MPI_FAILS(MPI_ERR_RANK, MPI_Group_range_incl(world, 1, r, &g));
    MPI_FAILS(MPI_ERR_RANK, MPI_Group_range_excl(world, 1, r, &g));
    r[0][0] = -1, r[0][1] = 0, r[0][2] = 1;
    MPI_FAILS(MPI_ERR_RANK, MPI_Group_range_incl(world, 1, r, &g));
    /* A zero stride is erroneous. */
    r[0][0] = 0, r[0][1] = 0, r[0][2] = 0;
    CHECK(MPI_Group_range_incl(world, 1, r, &g) != MPI_SUCCESS, "stride 0 accepted");
}

/* A group outlives the communicator it came from. */
static void test_lifetime(void)
{
    MPI_Comm dup;
    MPI_Group g;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    MPI_OK(MPI_Comm_group(dup, &g));
    MPI_OK(MPI_Comm_free(&dup));
    int all[64];
    for (int i = 0; i < size; i++)
        all[i] = i;
    expect_members(g, size, all, "group of a freed communicator");
    MPI_OK(MPI_Group_free(&g));
    /* Many groups made and freed. */
    for (int i = 0; i < 5000; i++) {
        int r = i % size;
        MPI_OK(MPI_Group_incl(world, 1, &r, &g));
        int s = 0;
        MPI_OK(MPI_Group_size(g, &s));
        CHECK(s == 1, "size %d", s);
        MPI_OK(MPI_Group_free(&g));
    }
}

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

/* Every name in `only` is one of parts[0..n-1]. */
static int parts_known(const char *only, const char *const *parts, int n)
{
    if (!only)
        return 1;
    int found = 0;
    for (int i = 0; i < n; i++)
        found += run_part(only, parts[i]);
    int commas = 0;
    for (const char *p = only; *p; p++)
        commas += *p == ',';
    return found == commas + 1;
}

/* Runs every part, or those named (comma-separated) by the first argument,
 * so that one failing part does not hide the others. */
int main(int argc, char **argv)
{
    const char *only = argc > 1 ? argv[1] : NULL;
    static const char *const parts[] = {"compare", "setops", "incl", "ranges", "lifetime"};
    if (!parts_known(only, parts, (int)(sizeof parts / sizeof parts[0]))) {
        fprintf(stderr, "usage: core_group [part,...] with parts compare setops incl ranges lifetime\n");
        return 2;
    }
#define RUN(part) run_part(only, part)
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    if (size > 64)
        MT_FAIL("this test handles at most 64 ranks");
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &world));
    if (RUN("compare"))
        test_world_and_compare();
    if (RUN("setops"))
        test_set_ops();
    if (RUN("incl"))
        test_incl_excl();
    if (RUN("ranges"))
        test_ranges();
    if (RUN("lifetime"))
        test_lifetime();
    MPI_OK(MPI_Group_free(&world));
    MPI_OK(MPI_Finalize());
    if (rank == 0)
        printf("core_group %s: ok\n", only ? only : "all");
    return 0;
}
