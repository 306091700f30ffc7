/* The tools information interface (src/core/mpit.c), which exports the
 * HALO_* settings as control variables, no performance variables or
 * categories, and two events with one source (their use:
 * core_mpit_events.c):
 * - before MPI_T_init_thread every call says MPI_T_ERR_NOT_INITIALIZED;
 * - init is nested and counts: the thread level granted follows the one
 *   asked for; after as many finalizes as inits the interface is closed
 *   again, and it opens again after that (before MPI_Init, during, and
 *   after MPI_Finalize);
 * - control variables: each has a HALO_ name, a description, a type of
 *   MPI_COUNT or MPI_CHAR, no binding, read-only scope, and its index back
 *   from MPI_T_cvar_get_index; strings come back by the standard's rules
 *   (length only, truncated, whole); a handle reads the value the process
 *   started with (the testlist sets HALO_SHM_EAGER_MAX=12288 and
 *   HALO_WAIT_POLICY=auto; others read their defaults), refuses writes
 *   with MPI_T_ERR_CVAR_SET_NEVER, and is invalid once freed;
 * - the counts: 4 performance variables, 2 categories (settings, point
 *   to point, with their members), 2 events, 1 source; a performance
 *   variable's handle refuses start, stop, reset and writes, reads 0 from
 *   a counter at once, and dies with its session; every index, name or
 *   handle that cannot
 *   exist is refused with the code the standard gives, returned (not
 *   raised: MPI_COMM_WORLD keeps MPI_ERRORS_ARE_FATAL while these fail);
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

/* Every control variable, and the values of three of them. */
static void check_cvars(int n)
{
    int found = 0;
    for (int i = 0; i < n; i++) {
        char name[128], desc[512];
        int nlen = sizeof name, dlen = sizeof desc, verb = -1, bind = -1, scope = -1, idx = -1;
        MPI_Datatype dt = MPI_DATATYPE_NULL;
        MPI_T_enum en;
        MPI_OK(MPI_T_cvar_get_info(i, name, &nlen, &verb, &dt, &en, desc, &dlen, &bind, &scope));
        CHECK(!strncmp(name, "HALO_", 5) && nlen == (int)strlen(name) + 1, "cvar %d: name \"%s\" (%d)",
              i, name, nlen);
        CHECK(dlen > 1 && dlen == (int)strlen(desc) + 1, "cvar %s: description of %d", name, dlen);
        CHECK(dt == MPI_COUNT || dt == MPI_CHAR, "cvar %s: datatype %p", name, (void *)dt);
        CHECK(en == MPI_T_ENUM_NULL && bind == MPI_T_BIND_NO_OBJECT && scope == MPI_T_SCOPE_READONLY &&
                  verb >= MPI_T_VERBOSITY_USER_BASIC && verb <= MPI_T_VERBOSITY_MPIDEV_ALL,
              "cvar %s: enum %p bind %d scope %d verbosity %d", name, (void *)en, bind, scope, verb);
        MPI_OK(MPI_T_cvar_get_index(name, &idx));
        CHECK(idx == i, "MPI_T_cvar_get_index(%s) = %d, want %d", name, idx, i);

        /* The length alone, then a buffer too short by 2 (of names longer than 3). */
        int need = 0;
        MPI_OK(MPI_T_cvar_get_info(i, NULL, &need, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
        CHECK(need == nlen, "cvar %s: length alone %d, want %d", name, need, nlen);
        char shortbuf[128];
        int slen = nlen - 2;
        memset(shortbuf, 'x', sizeof shortbuf);
        MPI_OK(MPI_T_cvar_get_info(i, shortbuf, &slen, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
        CHECK(slen == nlen - 2 && shortbuf[slen - 1] == '\0' && !strncmp(shortbuf, name, (size_t)slen - 1),
              "cvar %s: into %d bytes got \"%s\" (%d)", name, nlen - 2, shortbuf, slen);

        MPI_T_cvar_handle h = MPI_T_CVAR_HANDLE_NULL;
        int count = -1;
        MPI_OK(MPI_T_cvar_handle_alloc(i, NULL, &h, &count));
        CHECK(h != MPI_T_CVAR_HANDLE_NULL && count >= 1, "cvar %s: handle %p count %d", name, (void *)h, count);
        if (dt == MPI_COUNT) {
            CHECK(count == 1, "cvar %s: count %d", name, count);
            MPI_Count v = -12345;
            MPI_OK(MPI_T_cvar_read(h, &v));
            if (!strcmp(name, "HALO_SHM_EAGER_MAX")) {
                CHECK(v == 12288, "HALO_SHM_EAGER_MAX reads %lld, want 12288", (long long)v);
                found++;
            }
            if (!strcmp(name, "HALO_ERROR_CHECKING")) {
                CHECK(v == 1, "HALO_ERROR_CHECKING reads %lld, want its default 1", (long long)v);
                found++;
            }
            EXPECT(MPI_T_cvar_write(h, &v), MPI_T_ERR_CVAR_SET_NEVER);
        } else {
            char val[256];
            CHECK(count <= (int)sizeof val, "cvar %s: count %d", name, count);
            memset(val, 'x', sizeof val);
            MPI_OK(MPI_T_cvar_read(h, val));
            CHECK((int)strlen(val) == count - 1, "cvar %s: value \"%s\", count %d", name, val, count);
            if (!strcmp(name, "HALO_WAIT_POLICY")) {
                CHECK(!strcmp(val, "auto"), "HALO_WAIT_POLICY reads \"%s\"", val);
                found++;
            }
            EXPECT(MPI_T_cvar_write(h, "spin"), MPI_T_ERR_CVAR_SET_NEVER);
        }
        MPI_T_cvar_handle stale = h;
        MPI_OK(MPI_T_cvar_handle_free(&h));
        CHECK(h == MPI_T_CVAR_HANDLE_NULL, "a freed cvar handle is %p", (void *)h);
        MPI_Count junk;
        EXPECT(MPI_T_cvar_read(stale, &junk), MPI_T_ERR_INVALID_HANDLE);
        EXPECT(MPI_T_cvar_handle_free(&stale), MPI_T_ERR_INVALID_HANDLE);
    }
    CHECK(found == 3, "found %d of HALO_SHM_EAGER_MAX, HALO_ERROR_CHECKING, HALO_WAIT_POLICY", found);
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
    CHECK(n >= 10, "cvars: %d", n);
    check_cvars(n);
    n = -1;
    MPI_OK(MPI_T_pvar_get_num(&n));
    CHECK(n == 5, "pvars: %d", n);
    n = -1;
    MPI_OK(MPI_T_category_get_num(&n));
    CHECK(n == 3, "categories: %d", n);
    n = -1;
    MPI_OK(MPI_T_event_get_num(&n));
    CHECK(n == 2, "events: %d", n);
    n = -1;
    MPI_OK(MPI_T_source_get_num(&n));
    CHECK(n == 1, "sources: %d", n);
    int stamp1 = -1, stamp2 = -2;
    MPI_OK(MPI_T_category_changed(&stamp1));
    MPI_OK(MPI_T_category_changed(&stamp2));
    CHECK(stamp1 == stamp2, "category stamp moved from %d to %d with nothing changing", stamp1, stamp2);

    char name[64];
    int len = sizeof name, idx = -1, verb, bind, scope, count;
    MPI_Datatype dt;
    MPI_T_enum en;
    MPI_T_cvar_handle ch;
    int ncvar = -1;
    MPI_OK(MPI_T_cvar_get_num(&ncvar));
    EXPECT(MPI_T_cvar_get_info(ncvar, name, &len, &verb, &dt, &en, NULL, NULL, &bind, &scope),
           MPI_T_ERR_INVALID_INDEX);
    EXPECT(MPI_T_cvar_get_info(-1, name, &len, &verb, &dt, &en, NULL, NULL, &bind, &scope),
           MPI_T_ERR_INVALID_INDEX);
    EXPECT(MPI_T_cvar_get_index("HALO_NO_SUCH_VARIABLE", &idx), MPI_T_ERR_INVALID_NAME);
    EXPECT(MPI_T_pvar_get_index("HALO_NO_SUCH_VARIABLE", MPI_T_PVAR_CLASS_COUNTER, &idx), MPI_T_ERR_INVALID_NAME);
    EXPECT(MPI_T_category_get_index("HALO_NO_SUCH_CATEGORY", &idx), MPI_T_ERR_INVALID_NAME);
    EXPECT(MPI_T_event_get_index("HALO_NO_SUCH_EVENT", &idx), MPI_T_ERR_INVALID_NAME);
    CHECK(idx == -1, "a refused lookup wrote index %d", idx);
    EXPECT(MPI_T_cvar_handle_alloc(ncvar, NULL, &ch, &count), MPI_T_ERR_INVALID_INDEX);
    EXPECT(MPI_T_category_get_info(3, name, &len, NULL, NULL, &n, &n, &n), MPI_T_ERR_INVALID_INDEX);
    EXPECT(MPI_T_category_get_info(-1, name, &len, NULL, NULL, &n, &n, &n), MPI_T_ERR_INVALID_INDEX);
    EXPECT(MPI_T_pvar_get_info(5, name, &len, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
           MPI_T_ERR_INVALID_INDEX);
    /* The categories: the settings hold every control variable, point to
     * point four performance variables and both events, waiting the fifth. */
    int ncv = -1, npv = -1, nsub = -1, nev = -1, idx2 = -1, list[4] = {-1, -1, -1, -1};
    len = sizeof name;
    MPI_OK(MPI_T_category_get_info(0, name, &len, NULL, NULL, &ncv, &npv, &nsub));
    CHECK(!strcmp(name, "halo_settings") && npv == 0 && nsub == 0, "category 0: %s %d %d", name, npv, nsub);
    MPI_OK(MPI_T_cvar_get_num(&n));
    CHECK_INT(ncv, n);
    len = sizeof name;
    MPI_OK(MPI_T_category_get_info(1, name, &len, NULL, NULL, &ncv, &npv, &nsub));
    CHECK(!strcmp(name, "halo_point_to_point") && ncv == 0 && npv == 4, "category 1: %s %d %d", name, ncv, npv);
    MPI_OK(MPI_T_category_get_index("halo_point_to_point", &idx2));
    CHECK_INT(idx2, 1);
    MPI_OK(MPI_T_category_get_num_events(1, &nev));
    CHECK_INT(nev, 2);
    MPI_OK(MPI_T_category_get_pvars(1, 3, list));
    CHECK(list[0] == 0 && list[2] == 2 && list[3] == -1, "pvars of category 1: %d %d %d", list[0], list[2], list[3]);
    MPI_OK(MPI_T_category_get_events(1, 4, list));
    CHECK(list[0] == 0 && list[1] == 1, "events of category 1: %d %d", list[0], list[1]);
    len = sizeof name;
    MPI_OK(MPI_T_category_get_info(2, name, &len, NULL, NULL, &ncv, &npv, &nsub));
    CHECK(!strcmp(name, "halo_waiting") && ncv == 0 && npv == 1 && nsub == 0, "category 2: %s %d %d", name, ncv,
          npv);
    MPI_OK(MPI_T_category_get_num_events(2, &nev));
    CHECK_INT(nev, 0);
    list[0] = list[1] = -1;
    MPI_OK(MPI_T_category_get_pvars(2, 4, list));
    CHECK(list[0] == 4 && list[1] == -1, "pvars of category 2: %d %d", list[0], list[1]);
    MPI_OK(MPI_T_category_get_cvars(0, 2, list));
    CHECK(list[0] == 0 && list[1] == 1, "cvars of category 0: %d %d", list[0], list[1]);
    MPI_OK(MPI_T_category_get_categories(0, 4, list));
    MPI_Count stamp = -1;
    EXPECT(MPI_T_source_get_timestamp(1, &stamp), MPI_T_ERR_INVALID_INDEX);
    EXPECT(MPI_T_source_get_timestamp(-1, &stamp), MPI_T_ERR_INVALID_INDEX);
    EXPECT(MPI_T_event_get_info(2, name, &len, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
           MPI_T_ERR_INVALID_INDEX);
    MPI_T_event_registration reg;
    EXPECT(MPI_T_event_handle_alloc(2, NULL, MPI_INFO_NULL, &reg), MPI_T_ERR_INVALID_INDEX);
    EXPECT(MPI_T_event_handle_alloc(-1, NULL, MPI_INFO_NULL, &reg), MPI_T_ERR_INVALID_INDEX);
    CHECK(stamp == -1, "a refused timestamp wrote %lld", (long long)stamp);

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
    EXPECT(MPI_T_pvar_handle_alloc(s1, 5, NULL, &ph, &count), MPI_T_ERR_INVALID_INDEX);
    /* A handle: continuous and read-only, so start, stop, reset and write
     * of it are refused, and it lives in its session only. */
    int pcount = -1;
    MPI_OK(MPI_T_pvar_handle_alloc(s1, 2, NULL, &ph, &pcount));
    CHECK_INT(pcount, 1);
    EXPECT(MPI_T_pvar_start(s1, ph), MPI_T_ERR_PVAR_NO_STARTSTOP);
    EXPECT(MPI_T_pvar_stop(s1, ph), MPI_T_ERR_PVAR_NO_STARTSTOP);
    EXPECT(MPI_T_pvar_reset(s1, ph), MPI_T_ERR_PVAR_NO_WRITE);
    EXPECT(MPI_T_pvar_write(s1, ph, &buf), MPI_T_ERR_PVAR_NO_WRITE);
    EXPECT(MPI_T_pvar_readreset(s1, ph, &buf), MPI_T_ERR_PVAR_NO_WRITE);
    EXPECT(MPI_T_pvar_read(s2, ph, &buf), MPI_T_ERR_INVALID_HANDLE);
    buf = 77;
    MPI_OK(MPI_T_pvar_read(s1, ph, &buf));
    CHECK(buf == 0, "a counter read at once after its handle's allocation: %lld", buf);
    MPI_T_pvar_handle stale_h = ph;
    MPI_OK(MPI_T_pvar_handle_free(s1, &ph));
    CHECK(ph == MPI_T_PVAR_HANDLE_NULL, "freed handle %p", (void *)ph);
    EXPECT(MPI_T_pvar_read(s1, stale_h, &buf), MPI_T_ERR_INVALID_HANDLE);
    MPI_OK(MPI_T_pvar_handle_alloc(s1, 0, NULL, &ph, &pcount));   /* goes with its session */
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
    CHECK(n == ncvar, "after one of two finalizes: %d", n);
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
