/* Intercommunicators: created from the even and odd halves of
 * MPI_COMM_WORLD (peer_comm MPI_COMM_NULL away from the leaders),
 * point-to-point across them (ranks name the remote group), duplication (a
 * separate message space), merging in both orders, comparison, barrier, free
 * and disconnect. */
#include "mpitest.h"

int main(int argc, char **argv)
{
    int wrank, wsize;
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &wrank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &wsize));
    if (wsize < 2) {
        printf("core_intercomm: needs 2 ranks, skipped\n");
        MPI_OK(MPI_Finalize());
        return 0;
    }
    int color = wrank % 2;
    MPI_Comm half, inter;
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, color, wrank, &half));
    int hrank, hsize;
    MPI_OK(MPI_Comm_rank(half, &hrank));
    MPI_OK(MPI_Comm_size(half, &hsize));
    /* Leaders: world rank 0 (even) and 1 (odd), both rank 0 of their half. */
    /* peer_comm matters at the leaders only: the others pass MPI_COMM_NULL. */
    MPI_OK(MPI_Intercomm_create(half, 0, hrank == 0 ? MPI_COMM_WORLD : MPI_COMM_NULL, 1 - color, 77,
                                &inter));

    int flag, rsize, lsize, lrank;
    MPI_OK(MPI_Comm_test_inter(inter, &flag));
    CHECK(flag, "test_inter");
    MPI_OK(MPI_Comm_size(inter, &lsize));
    MPI_OK(MPI_Comm_rank(inter, &lrank));
    MPI_OK(MPI_Comm_remote_size(inter, &rsize));
    int nother = color ? (wsize + 1) / 2 : wsize / 2;   /* size of the other half */
    CHECK_INT(lsize, hsize);
    CHECK_INT(lrank, hrank);
    CHECK_INT(rsize, nother);
    MPI_Group rg;
    MPI_OK(MPI_Comm_remote_group(inter, &rg));
    int gsize, wr0 = 0, rr0 = 0;
    MPI_Group wg;
    MPI_OK(MPI_Group_size(rg, &gsize));
    CHECK_INT(gsize, nother);
    MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &wg));
    MPI_OK(MPI_Group_translate_ranks(rg, 1, &rr0, wg, &wr0));
    CHECK_INT(wr0, 1 - color);   /* remote rank 0 is world rank 0 or 1 */
    MPI_OK(MPI_Group_free(&rg));
    MPI_OK(MPI_Group_free(&wg));

    /* Point-to-point: every local rank i sends to remote rank i % rsize;
     * every rank receives from whoever targets it, with MPI_ANY_SOURCE. */
    int dest = hrank % rsize;
    int expected = 0;
    for (int r = 0; r < rsize; r++)
        if (r % hsize == hrank)
            expected++;
    int payload = 1000 * wrank;
    MPI_Request sreq;
    MPI_OK(MPI_Isend(&payload, 1, MPI_INT, dest, 5, inter, &sreq));
    for (int k = 0; k < expected; k++) {
        int got = -1;
        MPI_Status st;
        MPI_OK(MPI_Recv(&got, 1, MPI_INT, MPI_ANY_SOURCE, 5, inter, &st));
        CHECK(st.MPI_SOURCE >= 0 && st.MPI_SOURCE < rsize, "source %d", st.MPI_SOURCE);
        CHECK(st.MPI_SOURCE % hsize == hrank, "message from remote %d reached local %d", st.MPI_SOURCE, hrank);
        /* Remote rank s is world rank 2s + (1 - color). */
        CHECK_INT(got, 1000 * (2 * st.MPI_SOURCE + 1 - color));
    }
    MPI_OK(MPI_Wait(&sreq, MPI_STATUS_IGNORE));

    /* A duplicate has its own message space. */
    MPI_Comm dup;
    MPI_OK(MPI_Comm_dup(inter, &dup));
    int result;
    MPI_OK(MPI_Comm_compare(inter, dup, &result));
    CHECK_INT(result, MPI_CONGRUENT);
    MPI_OK(MPI_Comm_compare(inter, inter, &result));
    CHECK_INT(result, MPI_IDENT);
    if (hrank == 0) {
        int a = 1, b = 2, x = 0, y = 0;
        MPI_OK(MPI_Send(&a, 1, MPI_INT, 0, 9, inter));
        MPI_OK(MPI_Send(&b, 1, MPI_INT, 0, 9, dup));
        MPI_OK(MPI_Recv(&y, 1, MPI_INT, 0, 9, dup, MPI_STATUS_IGNORE));
        MPI_OK(MPI_Recv(&x, 1, MPI_INT, 0, 9, inter, MPI_STATUS_IGNORE));
        CHECK_INT(x, 1);
        CHECK_INT(y, 2);
    }
    MPI_OK(MPI_Barrier(dup));

    /* Merge: high = false goes first. */
    for (int order = 0; order < 2; order++) {
        MPI_Comm merged;
        int high = order ? !color : color;   /* order 0: evens first; order 1: odds first */
        MPI_OK(MPI_Intercomm_merge(inter, high, &merged));
        int mrank, msize;
        MPI_OK(MPI_Comm_rank(merged, &mrank));
        MPI_OK(MPI_Comm_size(merged, &msize));
        CHECK_INT(msize, wsize);
        int first = order ? 1 : 0;   /* color of the group that comes first */
        int nfirst = first ? wsize / 2 : (wsize + 1) / 2;
        int want = color == first ? hrank : nfirst + hrank;
        CHECK(mrank == want, "merge order %d: rank %d, expected %d", order, mrank, want);
        int sum = 0;
        MPI_OK(MPI_Allreduce(&wrank, &sum, 1, MPI_INT, MPI_SUM, merged));
        CHECK_INT(sum, wsize * (wsize - 1) / 2);
        MPI_OK(MPI_Comm_free(&merged));
    }

    MPI_OK(MPI_Comm_free(&dup));
    MPI_OK(MPI_Comm_disconnect(&inter));
    CHECK(inter == MPI_COMM_NULL, "disconnect sets the handle to MPI_COMM_NULL");
    MPI_OK(MPI_Comm_free(&half));
    if (wrank == 0)
        printf("core_intercomm: ok\n");
    MPI_OK(MPI_Finalize());
    return 0;
}
