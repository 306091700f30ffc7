/* Schedules are plain data: a schedule built here is copied byte for byte
 * to another address, the original is freed (and its memory scribbled
 * over), and the copy runs to the right result: messages to self through
 * scratch, reductions, copies with a datatype with holes, steps added out
 * of round order, a round with no messages, and a rerun after a reset
 * (what persistent collectives do). Two copied schedules also run at once
 * under requests, on different tags, completing in either order. Runs as
 * a singleton MPI process (no launcher). */
#include <mpi.h>

#include "coll/algos.h"
#include "coll/sched.h"
#include "progress/progress.h"
#include "pt2pt/pt2pt.h"
#include "unit.h"

/* A byte-for-byte copy at a new address; the original is freed after
 * being overwritten, so a pointer left into it would read garbage. */
static halo_sched_t *relocate(halo_sched_t *s)
{
    size_t bytes = (size_t)s->bytes;
    void *decoy = malloc(bytes);   /* keeps the allocator from reusing s's place */
    halo_sched_t *n = malloc(bytes);
    memcpy(n, s, bytes);
    UCHECK((void *)n != (void *)s);
    memset(s, 0x5a, bytes);
    free(s);
    free(decoy);
    return n;
}

enum { N = 1000 };

/* src -> scratch A (round 0, before any message) -> message to self into
 * dst (round 1) -> dst += add (round 2) -> dst into scratch B, whose holey
 * view goes to self into dst2 (rounds 3, 4). Steps are added last round
 * first, to check that the engine orders them. */
static halo_sched_t *build(halo_comm_t *c, int *src, int *add, int *dst, int *dst2,
                           MPI_Datatype holey)
{
    halo_sched_t *s = halo_sched_new(c, HALO_LANE_BLOCKING);
    int64_t a = halo_sched_scratch(&s, N * sizeof(int));
    int64_t b = halo_sched_scratch(&s, 2 * N * sizeof(int));
    /* Round 4: every other int of B (the holey type: 1 int, 1 hole) to dst2. */
    halo_sched_send(&s, 4, halo_scr(b), N, holey, c->rank);
    halo_sched_recv(&s, 4, halo_addr(dst2), N, MPI_INT, c->rank);
    /* Round 3 (no message): dst into the data places of B. */
    halo_sched_copy(&s, 3, halo_addr(dst), N, MPI_INT, halo_scr(b), N, holey);
    /* Round 2: dst = add + dst. */
    halo_sched_reduce(&s, 2, halo_addr(add), halo_addr(dst), N, MPI_INT, MPI_SUM);
    /* Round 1: A to self, into dst. */
    halo_sched_send(&s, 1, halo_scr(a), N, MPI_INT, c->rank);
    halo_sched_recv(&s, 1, halo_addr(dst), N, MPI_INT, c->rank);
    /* Round 0: src into A. */
    halo_sched_copy(&s, 0, halo_addr(src), N, MPI_INT, halo_scr(a), N, MPI_INT);
    return s;
}

static void check(const int *src, const int *add, const int *dst, const int *dst2)
{
    int bad = 0;
    for (int i = 0; i < N; i++)
        if (dst[i] != src[i] + add[i] || dst2[i] != src[i] + add[i])
            bad++;
    UCHECK_EQ(bad, 0);
}

static bool req_done(void *arg)
{
    return halo_req_done(arg);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    halo_comm_t *c = halo_comm_ptr(MPI_COMM_SELF);
    int *src = malloc(N * sizeof(int)), *add = malloc(N * sizeof(int));
    int *dst = malloc(N * sizeof(int)), *dst2 = malloc(N * sizeof(int));
    int *dst3 = malloc(N * sizeof(int)), *dst4 = malloc(N * sizeof(int));
    for (int i = 0; i < N; i++) {
        src[i] = 3 * i + 1;
        add[i] = 1000 - i;
    }
    MPI_Datatype vec, holey;
    MPI_Type_vector(1, 1, 2, MPI_INT, &vec);
    MPI_Type_create_resized(vec, 0, 2 * sizeof(int), &holey);
    MPI_Type_commit(&holey);
    MPI_Type_free(&vec);

    /* Blocking run of a relocated copy, then a rerun after a reset. */
    halo_sched_t *s = relocate(build(c, src, add, dst, dst2, holey));
    UCHECK(s->nrounds == 5);
    memset(dst, 0, N * sizeof(int));
    memset(dst2, 0, N * sizeof(int));
    halo_sched_t *again = malloc((size_t)s->bytes);
    memcpy(again, s, (size_t)s->bytes);
    UCHECK_EQ(halo_sched_run(s), MPI_SUCCESS);   /* frees s */
    check(src, add, dst, dst2);

    memset(dst, 0, N * sizeof(int));
    memset(dst2, 0, N * sizeof(int));
    halo_sched_t *r1 = relocate(again);
    halo_sched_reset(r1);
    UCHECK_EQ(halo_sched_run(r1), MPI_SUCCESS);
    check(src, add, dst, dst2);

    /* Two relocated schedules under requests at once, on different tags;
     * the second one's request is waited for first. */
    memset(dst, 0, N * sizeof(int));
    memset(dst2, 0, N * sizeof(int));
    halo_sched_t *x = relocate(build(c, src, add, dst, dst2, holey));
    halo_sched_t *y = relocate(build(c, add, src, dst3, dst4, holey));
    UCHECK(x->tag != y->tag);
    halo_request_t *rx = halo_req_alloc(HALO_REQ_COLL, c), *ry = halo_req_alloc(HALO_REQ_COLL, c);
    rx->sched = x;
    ry->sched = y;
    halo_sched_start(x, rx);
    halo_sched_start(y, ry);
    halo_progress_wait(req_done, ry);
    halo_progress_wait(req_done, rx);
    UCHECK_EQ(rx->status.MPI_ERROR, MPI_SUCCESS);
    UCHECK_EQ(ry->status.MPI_ERROR, MPI_SUCCESS);
    check(src, add, dst, dst2);
    check(add, src, dst3, dst4);
    halo_req_free(rx);   /* frees its schedule */
    halo_req_free(ry);

    /* A schedule an algorithm built (allgather by Bruck, here on one rank:
     * a local copy into the receive buffer) runs relocated too. */
    halo_coll_args_t a = {.kind = HALO_COLL_ALLGATHER, .sbuf = src, .scount = N, .stype = MPI_INT,
                          .rbuf = dst, .rcount = N, .rtype = MPI_INT};
    memset(dst, 0, N * sizeof(int));
    halo_sched_t *g = halo_sched_new(c, HALO_LANE_BLOCKING);
    UCHECK_EQ(halo_allgather_bruck(&a, c, &g), MPI_SUCCESS);
    UCHECK_EQ(halo_sched_run(relocate(g)), MPI_SUCCESS);
    UCHECK(!memcmp(dst, src, N * sizeof(int)));

    MPI_Type_free(&holey);
    free(src);
    free(add);
    free(dst);
    free(dst2);
    free(dst3);
    free(dst4);
    MPI_Finalize();
    UNIT_DONE();
}
