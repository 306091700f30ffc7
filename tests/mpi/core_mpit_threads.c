/* The tools interface used from a second thread while the first passes
 * messages (MPI_THREAD_MULTIPLE, 2 ranks; ranks past 1 only wait): the
 * helper thread of each rank registers a callback on halo_message_arrived,
 * reads the performance variables and frees the registration again, over
 * and over, while the main thread ping-pongs. Every registration's free
 * callback runs exactly once, no callback runs for a registration after
 * its free callback, some callbacks run, the counters read by the helper
 * never go back, and the messages arrive intact. Under ThreadSanitizer (label tsan) the
 * interleavings are also checked for data races. */
#include "mpitest.h"

#include <pthread.h>
#include <stdatomic.h>

#define ROUNDS 20000

static _Atomic int stop, started;
static _Atomic long calls, frees, allocs, late_calls;

typedef struct reg_state {
    _Atomic int freed;
} reg_state_t;

static void on_event(MPI_T_event_instance ev, MPI_T_event_registration reg, MPI_T_cb_safety safety, void *ud)
{
    (void)reg, (void)safety;
    reg_state_t *st = ud;
    if (atomic_load(&st->freed))
        atomic_fetch_add(&late_calls, 1);
    int32_t tag = -1;
    if (MPI_T_event_read(ev, 1, &tag) == MPI_SUCCESS)
        atomic_fetch_add(&calls, 1);
}

static void on_free(MPI_T_event_registration reg, MPI_T_cb_safety safety, void *ud)
{
    (void)reg, (void)safety;
    reg_state_t *st = ud;
    CHECK(atomic_load(&st->freed) == 0, "a free callback ran twice");
    atomic_store(&st->freed, 1);
    atomic_fetch_add(&frees, 1);
}

static void *helper(void *arg)
{
    (void)arg;
    MPI_T_pvar_session ps;
    MPI_T_pvar_handle ph;
    int idx, cnt;
    MPI_OK(MPI_T_pvar_session_create(&ps));
    MPI_OK(MPI_T_pvar_get_index("halo_messages_arrived", MPI_T_PVAR_CLASS_COUNTER, &idx));
    MPI_OK(MPI_T_pvar_handle_alloc(ps, idx, NULL, &ph, &cnt));
    unsigned long long last = 0;
    atomic_store(&started, 1);
    static reg_state_t states[100000];
    long n = 0;
    while ((n < 50 || !atomic_load(&stop)) && n < 100000) {   /* at least 50, whatever the timing */
        MPI_T_event_registration reg;
        reg_state_t *st = &states[n++];
        MPI_OK(MPI_T_event_handle_alloc(0, NULL, MPI_INFO_NULL, &reg));
        atomic_fetch_add(&allocs, 1);
        MPI_OK(MPI_T_event_register_callback(reg, MPI_T_CB_REQUIRE_THREAD_SAFE, MPI_INFO_NULL, st, on_event));
        unsigned long long v = 0;
        MPI_OK(MPI_T_pvar_read(ps, ph, &v));
        CHECK(v >= last, "counter went back from %llu to %llu", last, v);
        last = v;
        sched_yield();
        MPI_OK(MPI_T_event_handle_free(reg, st, on_free));
    }
    MPI_OK(MPI_T_pvar_handle_free(ps, &ph));
    MPI_OK(MPI_T_pvar_session_free(&ps));
    return NULL;
}

int main(int argc, char **argv)
{
    int prov, tprov, rank;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &prov);
    CHECK(prov == MPI_THREAD_MULTIPLE, "provided %d", prov);
    MPI_OK(MPI_T_init_thread(MPI_THREAD_MULTIPLE, &tprov));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    pthread_t t;
    CHECK(pthread_create(&t, NULL, helper, NULL) == 0, "pthread_create");
    while (!atomic_load(&started))
        sched_yield();
    if (rank < 2) {
        int peer = 1 - rank;
        for (int i = 0; i < ROUNDS; i++) {
            int out[4] = {i, rank, i * 3, -i}, in[4] = {0};
            if (rank == 0) {
                MPI_OK(MPI_Send(out, 4, MPI_INT, peer, 9, MPI_COMM_WORLD));
                MPI_OK(MPI_Recv(in, 4, MPI_INT, peer, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            } else {
                MPI_OK(MPI_Recv(in, 4, MPI_INT, peer, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
                MPI_OK(MPI_Send(out, 4, MPI_INT, peer, 9, MPI_COMM_WORLD));
            }
            CHECK(in[0] == i && in[1] == peer && in[2] == 3 * i && in[3] == -i, "round %d: %d %d %d %d", i, in[0],
                  in[1], in[2], in[3]);
        }
    }
    atomic_store(&stop, 1);
    CHECK(pthread_join(t, NULL) == 0, "pthread_join");
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    CHECK(frees == allocs && allocs > 0, "%ld registrations, %ld free callbacks", allocs, frees);
    CHECK(late_calls == 0, "%ld callbacks after their registration's free callback", late_calls);
    /* The helper keeps a registration live through most of its loop, so the
     * ping-pong's arrivals meet some. */
    long mine = calls, total = 0;
    MPI_OK(MPI_Allreduce(&mine, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD));
    CHECK(total > 0, "no callback ran during %d round trips", ROUNDS);
    MPI_OK(MPI_T_finalize());
    MPI_Finalize();
    if (rank == 0)
        printf("core_mpit_threads: ok (%ld registrations, %ld callbacks)\n", allocs, calls);
    return 0;
}
