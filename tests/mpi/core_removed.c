/* The functions MPI-3.0 removed, which mpi.h still declares for older
 * programs: each must behave as its replacement.
 *
 * - MPI_Address gives MPI_Get_address's value;
 * - MPI_Type_hvector, MPI_Type_hindexed and MPI_Type_struct build types with
 *   the size, bounds and packed bytes of MPI_Type_create_hvector,
 *   _hindexed and _struct from the same arguments;
 * - MPI_Type_extent, MPI_Type_lb and MPI_Type_ub match MPI_Type_get_extent
 *   (a resized type with a negative lower bound, and a struct);
 * - MPI_Errhandler_create/_set/_get install a handler that runs on the
 *   communicator's errors and comes back from _get;
 * - the MPI_LB and MPI_UB markers set a struct's bounds (also alone: {(LB,
 *   10)} has extent -10), carry over to types built from it, and place the
 *   elements of a message (2 ranks: rank 0 sends two, rank 1 checks where
 *   they land). */
#include "mpitest.h"

static int calls;
static MPI_Comm seen;

static void old_handler(MPI_Comm *comm, int *code, ...)
{
    (void)code;
    calls++;
    seen = *comm;
}

/* Both types pack the same bytes out of buf and have the same size and
 * bounds. */
static void same_type(MPI_Datatype a, MPI_Datatype b, const void *buf, const char *what)
{
    int sa, sb;
    MPI_Aint lba, exa, lbb, exb;
    MPI_OK(MPI_Type_size(a, &sa));
    MPI_OK(MPI_Type_size(b, &sb));
    MPI_OK(MPI_Type_get_extent(a, &lba, &exa));
    MPI_OK(MPI_Type_get_extent(b, &lbb, &exb));
    CHECK(sa == sb && lba == lbb && exa == exb, "%s: size %d/%d lb %ld/%ld extent %ld/%ld", what,
          sa, sb, (long)lba, (long)lbb, (long)exa, (long)exb);
    char pa[512], pb[512];
    int posa = 0, posb = 0;
    CHECK(sa <= (int)sizeof pa, "%s: size %d", what, sa);
    memset(pa, 0, sizeof pa);
    memset(pb, 1, sizeof pb);
    MPI_OK(MPI_Pack(buf, 1, a, pa, sizeof pa, &posa, MPI_COMM_SELF));
    MPI_OK(MPI_Pack(buf, 1, b, pb, sizeof pb, &posb, MPI_COMM_SELF));
    CHECK(posa == sa && posb == sb && !memcmp(pa, pb, (size_t)sa), "%s: packed bytes differ", what);
}

int main(int argc, char **argv)
{
    MPI_OK(MPI_Init(&argc, &argv));
    int rank;
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));

    double data[64];
    for (int i = 0; i < 64; i++)
        data[i] = 1.5 * i - 7;

    MPI_Aint a_old, a_new;
    MPI_OK(MPI_Address(&data[5], &a_old));
    MPI_OK(MPI_Get_address(&data[5], &a_new));
    CHECK(a_old == a_new, "MPI_Address %ld, MPI_Get_address %ld", (long)a_old, (long)a_new);

    MPI_Datatype t_old, t_new;
    MPI_OK(MPI_Type_hvector(3, 2, 40, MPI_DOUBLE, &t_old));
    MPI_OK(MPI_Type_create_hvector(3, 2, 40, MPI_DOUBLE, &t_new));
    MPI_OK(MPI_Type_commit(&t_old));
    MPI_OK(MPI_Type_commit(&t_new));
    same_type(t_old, t_new, data, "MPI_Type_hvector");
    MPI_OK(MPI_Type_free(&t_old));
    MPI_OK(MPI_Type_free(&t_new));

    int blens[3] = {1, 3, 2};
    MPI_Aint disps[3] = {80, 8, 200};
    MPI_OK(MPI_Type_hindexed(3, blens, disps, MPI_DOUBLE, &t_old));
    MPI_OK(MPI_Type_create_hindexed(3, blens, disps, MPI_DOUBLE, &t_new));
    MPI_OK(MPI_Type_commit(&t_old));
    MPI_OK(MPI_Type_commit(&t_new));
    same_type(t_old, t_new, data, "MPI_Type_hindexed");
    MPI_OK(MPI_Type_free(&t_old));
    MPI_OK(MPI_Type_free(&t_new));

    MPI_Datatype types[3] = {MPI_INT, MPI_DOUBLE, MPI_CHAR};
    MPI_Aint sdisps[3] = {4, 16, 33};
    MPI_OK(MPI_Type_struct(3, blens, sdisps, types, &t_old));
    MPI_OK(MPI_Type_create_struct(3, blens, sdisps, types, &t_new));
    MPI_OK(MPI_Type_commit(&t_old));
    MPI_OK(MPI_Type_commit(&t_new));
    same_type(t_old, t_new, data, "MPI_Type_struct");
    MPI_Aint ext, lb, ub, glb, gext;
    MPI_OK(MPI_Type_extent(t_old, &ext));
    MPI_OK(MPI_Type_lb(t_old, &lb));
    MPI_OK(MPI_Type_ub(t_old, &ub));
    MPI_OK(MPI_Type_get_extent(t_old, &glb, &gext));
    /* An int at 4, three doubles at 16..40, two chars at 33 and 34: the
     * data spans 4..40, 36 bytes, padded to the doubles' alignment: 40. */
    CHECK(lb == 4 && ub == 44 && ext == 40 && lb == glb && ext == gext,
          "struct: lb %ld ub %ld extent %ld (get_extent %ld %ld)", (long)lb, (long)ub, (long)ext,
          (long)glb, (long)gext);
    MPI_OK(MPI_Type_free(&t_old));
    MPI_OK(MPI_Type_free(&t_new));

    MPI_OK(MPI_Type_create_resized(MPI_INT, -8, 40, &t_new));
    MPI_OK(MPI_Type_extent(t_new, &ext));
    MPI_OK(MPI_Type_lb(t_new, &lb));
    MPI_OK(MPI_Type_ub(t_new, &ub));
    CHECK(lb == -8 && ext == 40 && ub == 32, "resized: lb %ld extent %ld ub %ld", (long)lb,
          (long)ext, (long)ub);
    MPI_OK(MPI_Type_free(&t_new));

    /* Markers: lb at -4, two ints at 0, ub at 20. */
    {
        int mbl[3] = {1, 2, 1};
        MPI_Aint mdisp[3] = {-4, 0, 20};
        MPI_Datatype mtypes[3] = {MPI_LB, MPI_INT, MPI_UB}, m, m3, lonely;
        MPI_OK(MPI_Type_struct(3, mbl, mdisp, mtypes, &m));
        MPI_OK(MPI_Type_commit(&m));
        int msize;
        MPI_Aint tlb, text;
        MPI_OK(MPI_Type_size(m, &msize));
        MPI_OK(MPI_Type_lb(m, &lb));
        MPI_OK(MPI_Type_ub(m, &ub));
        MPI_OK(MPI_Type_extent(m, &ext));
        MPI_OK(MPI_Type_get_true_extent(m, &tlb, &text));
        CHECK(msize == 8 && lb == -4 && ub == 20 && ext == 24 && tlb == 0 && text == 8,
              "markers: size %d lb %ld ub %ld extent %ld true %ld+%ld", msize, (long)lb, (long)ub,
              (long)ext, (long)tlb, (long)text);
        MPI_OK(MPI_Type_contiguous(3, m, &m3));
        MPI_OK(MPI_Type_lb(m3, &lb));
        MPI_OK(MPI_Type_extent(m3, &ext));
        CHECK(lb == -4 && ext == 72, "contiguous(3) of the markers: lb %ld extent %ld", (long)lb,
              (long)ext);
        MPI_OK(MPI_Type_free(&m3));
        MPI_OK(MPI_Type_struct(1, mbl, (MPI_Aint[]){10}, (MPI_Datatype[]){MPI_LB}, &lonely));
        MPI_OK(MPI_Type_lb(lonely, &lb));
        MPI_OK(MPI_Type_ub(lonely, &ub));
        MPI_OK(MPI_Type_extent(lonely, &ext));
        CHECK(lb == 10 && ub == 0 && ext == -10, "{(LB,10)}: lb %ld ub %ld extent %ld", (long)lb,
              (long)ub, (long)ext);
        MPI_OK(MPI_Type_free(&lonely));

        int size;
        MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
        if (size >= 2 && rank < 2) {
            /* Two elements, 24 bytes apart: ints 1 and 2 of each element. */
            int buf[16];
            for (int i = 0; i < 16; i++)
                buf[i] = rank == 0 ? 100 + i : -1;
            if (rank == 0) {
                MPI_OK(MPI_Send(&buf[1], 2, m, 1, 9, MPI_COMM_WORLD));
            } else {
                MPI_Status st;
                int n = -1;
                MPI_OK(MPI_Recv(&buf[1], 2, m, 0, 9, MPI_COMM_WORLD, &st));
                MPI_OK(MPI_Get_count(&st, m, &n));
                CHECK(n == 2, "MPI_Get_count of the marker type: %d", n);
                for (int i = 0; i < 16; i++) {
                    int want = (i == 1 || i == 2 || i == 7 || i == 8) ? 100 + i : -1;
                    CHECK(buf[i] == want, "marker type: int %d is %d, want %d", i, buf[i], want);
                }
            }
        }
        MPI_OK(MPI_Type_free(&m));
    }

    MPI_Comm dup;
    MPI_Errhandler eh, got;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    MPI_OK(MPI_Errhandler_create(old_handler, &eh));
    MPI_OK(MPI_Errhandler_set(dup, eh));
    MPI_OK(MPI_Errhandler_get(dup, &got));
    CHECK(got == eh, "MPI_Errhandler_get gave %p, set %p", (void *)got, (void *)eh);
    MPI_OK(MPI_Errhandler_free(&got));
    int x = 0;
    int rc = MPI_Send(&x, -1, MPI_INT, 0, 0, dup);
    CHECK(rc != MPI_SUCCESS && calls == 1 && seen == dup,
          "handler set by MPI_Errhandler_set: rc %d, ran %d times", rc, calls);
    MPI_OK(MPI_Errhandler_free(&eh));
    MPI_OK(MPI_Comm_free(&dup));

    MPI_OK(MPI_Finalize());
    if (rank == 0)
        printf("core_removed: ok\n");
    return 0;
}
