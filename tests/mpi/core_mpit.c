/* The tools information interface (src/core/mpit.c), which exports no
 * variables, categories, events or sources:
 * - before MPI_T_init_thread every call says MPI_T_ERR_NOT_INITIALIZED;
 * - init is nested and counts: the thread level granted follows the one
 *   asked for; after as many finalizes as inits the interface is closed
 *   again, and it opens again after that (before MPI_Init, during, and
 *   after MPI_Finalize);
 * - every count is zero; every index, name or handle is refused with the
 *   code the standard gives, returned (not raised: MPI_COMM_WORLD keeps
 *   MPI_ERRORS_ARE_FATAL while these fail);
 * - performance-variable sessions are created distinct and freed (the
 *   handle becomes MPI_T_PVAR_SESSION_NULL, a freed one is invalid);
 *   start, stop and reset of MPI_T_PVAR_ALL_HANDLES succeed, reading it
 *   does not. */
#include "mpitest.h"

#define EXPECT(call, want)                                                                            \
    do {                                                                                              \
        int rc_ = (call);                                                                             \
        CHECK(rc_ == (want), "%s returned %d, expected %d", #call, rc_, (int)(want));                 \
    } while (0)

static void closed(void)
{
    int n = -1;
    MPI_T_pvar_session s = MPI_T_PVAR_SESSION_NULL;
    EXPECT(MPI_T_cvar_get_num(&n), MPI_T_ERR_NOT_INITIALIZED);
    EXPECT(MPI_T_pvar_session_create(&s), MPI_T_ERR_NOT_INITIALIZED);
    EXPECT(MPI_T_finalize(), MPI_T_ERR_NOT_INITIALIZED);
    CHECK(n == -1, "a refused MPI_T_cvar_get_num wrote %d", n);
}

static void open_and_use(void)
{
    int prov = -1, prov2 = -1, n;
    MPI_OK(MPI_T_init_thread(MPI_THREAD_SINGLE, &prov));
    CHECK(prov == MPI_THREAD_SINGLE, "MPI_T_init_thread(SINGLE) provided %d", prov);
    MPI_OK(MPI_T_init_thread(MPI_THREAD_MULTIPLE, &prov2));   /* nested */
    CHECK(prov2 == MPI_THREAD_MULTIPLE, "MPI_T_init_thread(MULTIPLE) provided %d", prov2);

    n = -1;
    MPI_OK(MPI_T_cvar_get_num(&n));
    CHECK(n == 0, "cvars: %d", n);
    n = -1;
    MPI_OK(MPI_T_pvar_get_num(&n));
    CHECK(n == 0, "pvars: %d", n);
    n = -1;
    MPI_OK(MPI_T_category_get_num(&n));
    CHECK(n == 0, "categories: %d", n);
    n = -1;
    MPI_OK(MPI_T_event_get_num(&n));
    CHECK(n == 0, "events: %d", n);
    n = -1;
    MPI_OK(MPI_T_source_get_num(&n));
    CHECK(n == 0, "sources: %d", n);
    int stamp1 = -1, stamp2 = -2;
    MPI_OK(MPI_T_category_changed(&stamp1));
    MPI_OK(MPI_T_category_changed(&stamp2));
    CHECK(stamp1 == stamp2, "category stamp moved from %d to %d with nothing changing", stamp1, stamp2);

    char name[64];
    int len = sizeof name, idx = -1, verb, bind, scope, count;
    MPI_Datatype dt;
    MPI_T_enum en;
    MPI_T_cvar_handle ch;
    EXPECT(MPI_T_cvar_get_info(0, name, &len, &verb, &dt, &en, NULL, NULL, &bind, &scope),
           MPI_T_ERR_INVALID_INDEX);
    EXPECT(MPI_T_cvar_get_info(-1, name, &len, &verb, &dt, &en, NULL, NULL, &bind, &scope),
           MPI_T_ERR_INVALID_INDEX);
    EXPECT(MPI_T_cvar_get_index("HALO_NO_SUCH_VARIABLE", &idx), MPI_T_ERR_INVALID_NAME);
    EXPECT(MPI_T_pvar_get_index("HALO_NO_SUCH_VARIABLE", MPI_T_PVAR_CLASS_COUNTER, &idx), MPI_T_ERR_INVALID_NAME);
    EXPECT(MPI_T_category_get_index("HALO_NO_SUCH_CATEGORY", &idx), MPI_T_ERR_INVALID_NAME);
    EXPECT(MPI_T_event_get_index("HALO_NO_SUCH_EVENT", &idx), MPI_T_ERR_INVALID_NAME);
    CHECK(idx == -1, "a refused lookup wrote index %d", idx);
    EXPECT(MPI_T_cvar_handle_alloc(0, NULL, &ch, &count), MPI_T_ERR_INVALID_INDEX);
    EXPECT(MPI_T_category_get_info(0, name, &len, NULL, NULL, &n, &n, &n), MPI_T_ERR_INVALID_INDEX);
    EXPECT(MPI_T_source_get_timestamp(0, NULL), MPI_T_ERR_INVALID_INDEX);

    MPI_T_pvar_session s1 = MPI_T_PVAR_SESSION_NULL, s2 = MPI_T_PVAR_SESSION_NULL;
    MPI_OK(MPI_T_pvar_session_create(&s1));
    MPI_OK(MPI_T_pvar_session_create(&s2));
    CHECK(s1 != MPI_T_PVAR_SESSION_NULL && s2 != MPI_T_PVAR_SESSION_NULL && s1 != s2,
          "sessions %p and %p", (void *)s1, (void *)s2);
    MPI_OK(MPI_T_pvar_start(s1, MPI_T_PVAR_ALL_HANDLES));
    MPI_OK(MPI_T_pvar_stop(s1, MPI_T_PVAR_ALL_HANDLES));
    MPI_OK(MPI_T_pvar_reset(s2, MPI_T_PVAR_ALL_HANDLES));
    long long buf = 0;
    EXPECT(MPI_T_pvar_read(s1, MPI_T_PVAR_ALL_HANDLES, &buf), MPI_T_ERR_INVALID_HANDLE);
    MPI_T_pvar_handle ph;
    EXPECT(MPI_T_pvar_handle_alloc(s1, 0, NULL, &ph, &count), MPI_T_ERR_INVALID_INDEX);
    MPI_T_pvar_session stale = s1;
    MPI_OK(MPI_T_pvar_session_free(&s1));
    CHECK(s1 == MPI_T_PVAR_SESSION_NULL, "a freed session handle is %p", (void *)s1);
    EXPECT(MPI_T_pvar_session_free(&stale), MPI_T_ERR_INVALID_SESSION);
    EXPECT(MPI_T_pvar_start(stale, MPI_T_PVAR_ALL_HANDLES), MPI_T_ERR_INVALID_SESSION);
    EXPECT(MPI_T_pvar_handle_alloc(stale, 0, NULL, &ph, &count), MPI_T_ERR_INVALID_SESSION);
    MPI_OK(MPI_T_pvar_start(s2, MPI_T_PVAR_ALL_HANDLES));   /* the other one lives on */

    /* Two finalizes for two inits, then closed. */
    MPI_OK(MPI_T_finalize());
    n = -1;
    MPI_OK(MPI_T_cvar_get_num(&n));
    CHECK(n == 0, "after one of two finalizes: %d", n);
    MPI_OK(MPI_T_finalize());
    closed();
}

int main(int argc, char **argv)
{
    closed();
    open_and_use();   /* before MPI_Init */
    MPI_Init(&argc, &argv);
    open_and_use();   /* during; MPI_COMM_WORLD keeps MPI_ERRORS_ARE_FATAL */
    int rank;
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_Finalize();
    open_and_use();   /* after */
    if (rank == 0)
        printf("core_mpit: ok\n");
    return 0;
}
