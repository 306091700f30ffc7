/* Start-up, shut-down and the environment queries.
 *
 *   core_init single|funneled|serialized|multiple
 *
 * Checks, for the requested thread level: what MPI_Init_thread provides and
 * MPI_Query_thread reports; MPI_Initialized / MPI_Finalized before, during
 * and after; MPI_Is_thread_main in the main thread and in another one; the
 * calls allowed before MPI_Init and after MPI_Finalize (versions, error
 * strings, info objects); MPI_Wtime / MPI_Wtick; the processor name and the
 * version strings; and that MPI_Finalize first deletes the attributes of
 * MPI_COMM_SELF, newest first, while MPI is still fully usable. An atexit
 * handler checks that those callbacks ran; it fails the process otherwise. */
#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include "mpitest.h"

/* CHECK with a message and arguments (mpitest.h's CHECK passes the
 * condition text after the caller's arguments, which garbles the format). */
static int self_deletes;         /* delete callbacks run on MPI_COMM_SELF */
static int self_delete_order[2]; /* which attribute each one was for */
static int self_delete_bad;      /* a callback saw MPI in the wrong state */
static int world_size_at_start;

static int self_delete_fn(MPI_Comm comm, int keyval, void *value, void *extra)
{
    (void)keyval;
    (void)extra;
    int fin = 1, init = 0, sum = 0;
    if (comm != MPI_COMM_SELF)
        self_delete_bad = 1;
    MPI_Finalized(&fin);
    MPI_Initialized(&init);
    if (fin || !init)
        self_delete_bad = 2;
    /* MPI must be fully usable here: even a collective on MPI_COMM_WORLD. */
    int one = 1;
    if (MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD) != MPI_SUCCESS ||
        sum != world_size_at_start)
        self_delete_bad = 3;
    if (self_deletes < 2)
        self_delete_order[self_deletes] = *(int *)value;
    self_deletes++;
    printf("core_init: MPI_COMM_SELF attribute %d deleted in MPI_Finalize (finalized=%d)\n",
           *(int *)value, fin);
    fflush(stdout);
    return MPI_SUCCESS;
}

static void check_at_exit(void)
{
    /* The attributes were set in the order 1, 2: deleted newest first. */
    if (self_deletes != 2 || self_delete_order[0] != 2 || self_delete_order[1] != 1 ||
        self_delete_bad) {
        fprintf(stderr,
                "FAIL core_init: MPI_COMM_SELF delete callbacks: ran %d times, order %d,%d, "
                "state problem %d (want 2 times, order 2,1, no problem)\n",
                self_deletes, self_delete_order[0], self_delete_order[1], self_delete_bad);
        fflush(stderr);
        _exit(3);
    }
}

static void *thread_main_probe(void *arg)
{
    int *flag = arg;
    MPI_Is_thread_main(flag);
    return NULL;
}

static void check_versions(const char *when)
{
    int v = -1, sv = -1;
    MPI_OK(MPI_Get_version(&v, &sv));
    CHECK(v == 5 && sv == 0, "%s: MPI_Get_version gave %d.%d, want 5.0", when, v, sv);
    CHECK(MPI_VERSION == 5 && MPI_SUBVERSION == 0, "%s: mpi.h says %d.%d", when, MPI_VERSION,
          MPI_SUBVERSION);
    static char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = -1;
    memset(lib, 'x', sizeof lib);
    MPI_OK(MPI_Get_library_version(lib, &len));
    CHECK(len > 0 && len < MPI_MAX_LIBRARY_VERSION_STRING, "%s: library version length %d", when,
          len);
    CHECK((int)strlen(lib) == len, "%s: library version length %d but strlen %zu", when, len,
          strlen(lib));
}

/* Calls the standard allows before MPI_Init and after MPI_Finalize. */
static void check_outside_calls(const char *when)
{
    check_versions(when);
    char msg[MPI_MAX_ERROR_STRING];
    int len = -1, cls = -1;
    MPI_OK(MPI_Error_string(MPI_ERR_COUNT, msg, &len));
    CHECK(len > 0 && (int)strlen(msg) == len, "%s: MPI_Error_string length %d", when, len);
    MPI_OK(MPI_Error_class(MPI_ERR_TRUNCATE, &cls));
    CHECK_INT(cls, MPI_ERR_TRUNCATE);
    MPI_Info info;
    MPI_OK(MPI_Info_create(&info));
    MPI_OK(MPI_Info_set(info, "halo_key", "value"));
    int nkeys = -1, flag = 0, buflen = 16;
    char val[16];
    MPI_OK(MPI_Info_get_nkeys(info, &nkeys));
    CHECK_INT(nkeys, 1);
    MPI_OK(MPI_Info_get_string(info, "halo_key", &buflen, val, &flag));
    CHECK(flag && !strcmp(val, "value"), "%s: info value \"%s\" flag %d", when, val, flag);
    MPI_OK(MPI_Info_free(&info));
    CHECK(info == MPI_INFO_NULL, "%s: MPI_Info_free did not reset the handle", when);
}

int main(int argc, char **argv)
{
    int required;
    const char *mode = argc > 1 ? argv[1] : "single";
    if (!strcmp(mode, "single"))
        required = MPI_THREAD_SINGLE;
    else if (!strcmp(mode, "funneled"))
        required = MPI_THREAD_FUNNELED;
    else if (!strcmp(mode, "serialized"))
        required = MPI_THREAD_SERIALIZED;
    else if (!strcmp(mode, "multiple"))
        required = MPI_THREAD_MULTIPLE;
    else {
        fprintf(stderr, "usage: core_init single|funneled|serialized|multiple\n");
        return 2;
    }

    int init = -1, fin = -1;
    MPI_OK(MPI_Initialized(&init));
    MPI_OK(MPI_Finalized(&fin));
    CHECK(init == 0 && fin == 0, "before MPI_Init_thread: initialized=%d finalized=%d", init, fin);
    check_outside_calls("before MPI_Init_thread");

    int provided = -1;
    MPI_OK(MPI_Init_thread(&argc, &argv, required, &provided));
    CHECK(provided == MPI_THREAD_SINGLE || provided == MPI_THREAD_FUNNELED ||
              provided == MPI_THREAD_SERIALIZED || provided == MPI_THREAD_MULTIPLE,
          "provided=%d is not a thread level", provided);
    /* Halo supports MPI_THREAD_MULTIPLE, so every level can be granted. */
    CHECK(provided >= required, "required %d, provided only %d", required, provided);
    int queried = -1;
    MPI_OK(MPI_Query_thread(&queried));
    CHECK_INT(queried, provided);

    MPI_OK(MPI_Initialized(&init));
    MPI_OK(MPI_Finalized(&fin));
    CHECK(init == 1 && fin == 0, "after MPI_Init_thread: initialized=%d finalized=%d", init, fin);

    int rank, size;
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    world_size_at_start = size;
    CHECK(size >= 1 && rank >= 0 && rank < size, "rank %d of %d", rank, size);

    int is_main = -1;
    MPI_OK(MPI_Is_thread_main(&is_main));
    CHECK(is_main == 1, "MPI_Is_thread_main in main() gave %d", is_main);
    if (provided >= MPI_THREAD_SERIALIZED) {
        /* Only one thread calls MPI at a time: main waits in pthread_join. */
        pthread_t t;
        int other = -1;
        CHECK(pthread_create(&t, NULL, thread_main_probe, &other) == 0, "pthread_create");
        pthread_join(t, NULL);
        CHECK(other == 0, "MPI_Is_thread_main in another thread gave %d", other);
    }

    /* MPI_Wtime never goes back; MPI_Wtick is positive and fine enough to
     * time a millisecond; a 20 ms sleep measures as about 20 ms. */
    double tick = MPI_Wtick();
    CHECK(tick > 0.0 && tick <= 1e-3, "MPI_Wtick() = %g", tick);
    double prev = MPI_Wtime();
    for (int i = 0; i < 100000; i++) {
        double now = MPI_Wtime();
        CHECK(now >= prev, "MPI_Wtime went back from %.9f to %.9f", prev, now);
        prev = now;
    }
    double t0 = MPI_Wtime();
    struct timespec ts = {0, 20 * 1000 * 1000};
    nanosleep(&ts, NULL);
    double dt = MPI_Wtime() - t0;
    CHECK(dt >= 0.019 && dt < 5.0, "a 20 ms sleep measured %.6f s", dt);

    char name[MPI_MAX_PROCESSOR_NAME];
    int len = -1;
    memset(name, 'x', sizeof name);
    MPI_OK(MPI_Get_processor_name(name, &len));
    CHECK(len > 0 && len < MPI_MAX_PROCESSOR_NAME, "processor name length %d", len);
    CHECK((int)strlen(name) == len, "processor name \"%s\": length %d, strlen %zu", name, len,
          strlen(name));
    check_versions("while running");

    /* Two attributes on MPI_COMM_SELF; MPI_Finalize must delete them first
     * (newest first) while MPI still works. */
    static int v1 = 1, v2 = 2;
    int k1, k2;
    MPI_OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, self_delete_fn, &k1, NULL));
    MPI_OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, self_delete_fn, &k2, NULL));
    MPI_OK(MPI_Comm_set_attr(MPI_COMM_SELF, k1, &v1));
    MPI_OK(MPI_Comm_set_attr(MPI_COMM_SELF, k2, &v2));
    MPI_OK(MPI_Comm_free_keyval(&k1));
    MPI_OK(MPI_Comm_free_keyval(&k2));
    atexit(check_at_exit);

    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    CHECK(self_deletes == 0, "delete callbacks ran before MPI_Finalize");
    MPI_OK(MPI_Finalize());
    mt_rank = rank;

    if (self_deletes != 2 || self_delete_bad) {
        fprintf(stderr, "FAIL rank %d: MPI_COMM_SELF delete callbacks ran %d times (problem %d)\n",
                rank, self_deletes, self_delete_bad);
        return 3;
    }
    MPI_OK(MPI_Initialized(&init));
    MPI_OK(MPI_Finalized(&fin));
    if (init != 1 || fin != 1) {
        fprintf(stderr, "FAIL rank %d: after MPI_Finalize: initialized=%d finalized=%d\n", rank,
                init, fin);
        return 3;
    }
    check_outside_calls("after MPI_Finalize");
    if (rank == 0)
        printf("core_init %s: ok (provided %d)\n", mode, provided);
    return 0;
}
