/* Events of the tools interface (src/core/mpit_events.c), at 2 or more
 * ranks (ranks past 1 only take part in the barriers):
 * - the source: named halo_clock, ordered, 10^9 ticks a second, its time
 *   stamps never go back;
 * - each event's description: name and index back and forth, the number
 *   of elements asked with no arrays, then the arrays (only as many
 *   entries as they hold are written), displacements ascending from 0;
 * - halo_message_arrived on rank 0, for a message that came before its
 *   receive (matched 0; halo_unexpected_received follows when the receive
 *   takes it) and one that met its posted receive (matched 1): the elements
 *   read one by one and copied whole give the sender, tag, size and the
 *   matched flag, the time stamp lies between the clock read before and
 *   after, the source is 0; instances are refused outside their callback;
 * - a callback registered only for MPI_T_CB_REQUIRE_NONE is not called
 *   from inside the library, and the event is dropped: the dropped-event
 *   handler hears it; a null callback takes a level's callback away;
 * - hints of a registration and of a callback merge and come back;
 * - freeing calls the free callback with its user data; after it no
 *   callback runs; a freed registration is an invalid handle;
 * - the performance variables found by name and class move with the same
 *   messages: the unexpected queue holds the waiting message and loses it
 *   to the receive, the counters of unexpected and arrived messages grow,
 *   the posted queue grows by the Irecv and shrinks back. */
#include "mpitest.h"

#include <string.h>

#define EXPECT(call, want)                                                                            \
    do {                                                                                              \
        int rc_ = (call);                                                                             \
        CHECK(rc_ == (want), "%s returned %d, expected %d", #call, rc_, (int)(want));                 \
    } while (0)

typedef struct seen {
    int calls;
    int source, tag, matched;
    MPI_Count bytes;
    MPI_Count stamp;
    int copy_agrees;
    MPI_T_cb_safety safety;
    MPI_T_event_instance last;
} seen_t;

static MPI_Aint displ[8];

static void on_event(MPI_T_event_instance ev, MPI_T_event_registration reg, MPI_T_cb_safety safety, void *ud)
{
    (void)reg;
    seen_t *s = ud;
    int32_t src = -1, tag = -1, matched = -1;
    MPI_Count bytes = -1;
    MPI_OK(MPI_T_event_read(ev, 0, &src));
    MPI_OK(MPI_T_event_read(ev, 1, &tag));
    MPI_OK(MPI_T_event_read(ev, 2, &bytes));
    /* Only this program's messages count (collectives travel on other
     * contexts, with tags of their own). */
    if (src != 1 || tag < 42 || tag > 44)
        return;
    s->matched = -1;
    if (MPI_T_event_read(ev, 4, &matched) == MPI_SUCCESS)
        s->matched = matched;
    char whole[64];
    memset(whole, 0, sizeof whole);
    MPI_OK(MPI_T_event_copy(ev, whole));
    int32_t src2, tag2;
    MPI_Count bytes2;
    memcpy(&src2, whole + displ[0], sizeof src2);
    memcpy(&tag2, whole + displ[1], sizeof tag2);
    memcpy(&bytes2, whole + displ[2], sizeof bytes2);
    s->copy_agrees = src2 == src && tag2 == tag && bytes2 == bytes;
    MPI_OK(MPI_T_event_get_timestamp(ev, &s->stamp));
    int si = -1;
    MPI_OK(MPI_T_event_get_source(ev, &si));
    CHECK(si == 0, "event source %d", si);
    EXPECT(MPI_T_event_read(ev, 5, &matched), MPI_T_ERR_INVALID_INDEX);
    EXPECT(MPI_T_event_read(ev, -1, &matched), MPI_T_ERR_INVALID_INDEX);
    s->source = src;
    s->tag = tag;
    s->bytes = bytes;
    s->safety = safety;
    s->last = ev;
    s->calls++;
}

static int dropped_calls;
static MPI_Count dropped_count;
static void on_dropped(MPI_Count count, MPI_T_event_registration reg, int source, MPI_T_cb_safety safety, void *ud)
{
    (void)reg, (void)safety, (void)ud;
    CHECK(source == 0, "dropped from source %d", source);
    dropped_calls++;
    dropped_count += count;
}

static int never_calls;
static void never(MPI_T_event_instance ev, MPI_T_event_registration reg, MPI_T_cb_safety safety, void *ud)
{
    (void)ev, (void)reg, (void)safety, (void)ud;
    never_calls++;
}

static int freed_calls;
static void *freed_ud;
static void on_free(MPI_T_event_registration reg, MPI_T_cb_safety safety, void *ud)
{
    (void)reg, (void)safety;
    freed_calls++;
    freed_ud = ud;
}

static void check_source(void)
{
    int n = -1;
    MPI_OK(MPI_T_source_get_num(&n));
    CHECK_INT(n, 1);
    char name[64], desc[256];
    int nlen = sizeof name, dlen = sizeof desc;
    MPI_T_source_order order = -1;
    MPI_Count tps = -1, maxt = -1;
    MPI_Info info = MPI_INFO_NULL;
    MPI_OK(MPI_T_source_get_info(0, name, &nlen, desc, &dlen, &order, &tps, &maxt, &info));
    CHECK(!strcmp(name, "halo_clock") && nlen == (int)strlen("halo_clock") + 1, "source %s (%d)", name, nlen);
    CHECK(dlen > 1 && order == MPI_T_SOURCE_ORDERED && tps == 1000000000 && maxt > 0,
          "desc %d order %d ticks %lld max %lld", dlen, (int)order, (long long)tps, (long long)maxt);
    CHECK(info != MPI_INFO_NULL, "no info object");
    MPI_OK(MPI_Info_free(&info));
    MPI_Count a, b;
    MPI_OK(MPI_T_source_get_timestamp(0, &a));
    mt_sleep_ms(2);
    MPI_OK(MPI_T_source_get_timestamp(0, &b));
    CHECK(b - a >= 1000000, "2 ms took %lld ticks", (long long)(b - a));
}

static void check_descriptions(void)
{
    int n = -1;
    MPI_OK(MPI_T_event_get_num(&n));
    CHECK_INT(n, 2);
    const char *want[2] = {"halo_message_arrived", "halo_unexpected_received"};
    for (int i = 0; i < n; i++) {
        char name[64];
        int len = sizeof name, ne = 0, verb = -1, bind = -1, idx = -1;
        MPI_OK(MPI_T_event_get_info(i, name, &len, &verb, NULL, NULL, &ne, NULL, NULL, NULL, NULL, &bind));
        CHECK(!strcmp(name, want[i]), "event %d is %s", i, name);
        CHECK(ne == (i == 0 ? 5 : 4) && bind == MPI_T_BIND_NO_OBJECT && verb > 0, "event %d: %d elements bind %d",
              i, ne, bind);
        MPI_OK(MPI_T_event_get_index(name, &idx));
        CHECK_INT(idx, i);
        /* Arrays of two: two entries written, the count says all. */
        MPI_Datatype types[3] = {MPI_DATATYPE_NULL, MPI_DATATYPE_NULL, MPI_DATATYPE_NULL};
        MPI_Aint d[3] = {-1, -1, -1};
        int room = 2;
        MPI_OK(MPI_T_event_get_info(i, NULL, NULL, NULL, types, d, &room, NULL, NULL, NULL, NULL, NULL));
        CHECK(room == ne && types[2] == MPI_DATATYPE_NULL && d[2] == -1 && types[0] == MPI_INT32_T,
              "event %d: room %d", i, room);
        MPI_Datatype all[8];
        MPI_T_enum en;
        MPI_Info info = MPI_INFO_NULL;
        char desc[512];
        int dlen = sizeof desc;
        room = 8;
        MPI_OK(MPI_T_event_get_info(i, NULL, NULL, NULL, all, displ, &room, &en, &info, desc, &dlen, NULL));
        CHECK(en == MPI_T_ENUM_NULL && dlen > 10 && info != MPI_INFO_NULL, "event %d: desc %d", i, dlen);
        MPI_OK(MPI_Info_free(&info));
        CHECK(displ[0] == 0, "event %d starts at %ld", i, (long)displ[0]);
        for (int e = 1; e < ne; e++)
            CHECK(displ[e] > displ[e - 1], "event %d: displacement %d", i, e);
        CHECK(all[2] == MPI_COUNT, "event %d: bytes are not MPI_COUNT", i);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int prov, rank;
    MPI_OK(MPI_T_init_thread(MPI_THREAD_SINGLE, &prov));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    check_source();
    check_descriptions();

    MPI_Comm comm;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
    seen_t arrived = {0}, taken = {0};
    MPI_T_event_registration r_arr, r_take, r_none;
    MPI_Info hint;
    MPI_OK(MPI_Info_create(&hint));
    MPI_OK(MPI_Info_set(hint, "halo_test_key", "1"));
    MPI_OK(MPI_T_event_handle_alloc(0, NULL, hint, &r_arr));
    MPI_OK(MPI_T_event_handle_alloc(1, NULL, MPI_INFO_NULL, &r_take));
    MPI_OK(MPI_T_event_handle_alloc(0, NULL, MPI_INFO_NULL, &r_none));
    MPI_OK(MPI_T_event_register_callback(r_arr, MPI_T_CB_REQUIRE_MPI_RESTRICTED, MPI_INFO_NULL, &arrived, on_event));
    MPI_OK(MPI_T_event_register_callback(r_take, MPI_T_CB_REQUIRE_ASYNC_SIGNAL_SAFE, hint, &taken, on_event));
    MPI_OK(MPI_T_event_register_callback(r_none, MPI_T_CB_REQUIRE_NONE, MPI_INFO_NULL, NULL, never));
    MPI_OK(MPI_T_event_set_dropped_handler(r_none, on_dropped));
    EXPECT(MPI_T_event_register_callback(r_arr, 12345, MPI_INFO_NULL, NULL, never), MPI_T_ERR_INVALID);

    /* Hints merge and come back. */
    MPI_Info more, got;
    MPI_OK(MPI_Info_create(&more));
    MPI_OK(MPI_Info_set(more, "halo_other_key", "2"));
    MPI_OK(MPI_T_event_handle_set_info(r_arr, more));
    MPI_OK(MPI_T_event_handle_get_info(r_arr, &got));
    char v[8];
    int flag = 0, nk = -1;
    MPI_OK(MPI_Info_get_nkeys(got, &nk));
    MPI_OK(MPI_Info_get(got, "halo_test_key", sizeof v - 1, v, &flag));
    CHECK(nk == 2 && flag && !strcmp(v, "1"), "registration hints: %d keys, flag %d", nk, flag);
    MPI_OK(MPI_Info_free(&got));
    MPI_OK(MPI_T_event_callback_set_info(r_take, MPI_T_CB_REQUIRE_ASYNC_SIGNAL_SAFE, more));
    MPI_OK(MPI_T_event_callback_get_info(r_take, MPI_T_CB_REQUIRE_ASYNC_SIGNAL_SAFE, &got));
    MPI_OK(MPI_Info_get_nkeys(got, &nk));
    CHECK_INT(nk, 2);
    MPI_OK(MPI_Info_free(&got));
    MPI_OK(MPI_Info_free(&more));
    MPI_OK(MPI_Info_free(&hint));

    /* Performance variables beside the events: a session with a handle of
     * each, by name. */
    const char *pv_names[4] = {"halo_unexpected_queue_length", "halo_posted_queue_length",
                               "halo_unexpected_messages", "halo_messages_arrived"};
    const int pv_class[4] = {MPI_T_PVAR_CLASS_LEVEL, MPI_T_PVAR_CLASS_LEVEL, MPI_T_PVAR_CLASS_COUNTER,
                             MPI_T_PVAR_CLASS_COUNTER};
    MPI_T_pvar_session ps;
    MPI_T_pvar_handle ph[4];
    MPI_OK(MPI_T_pvar_session_create(&ps));
    for (int i = 0; i < 4; i++) {
        int idx = -1, cnt = 0, cls = -1, ro = -1, cont = -1;
        MPI_Datatype dt;
        MPI_OK(MPI_T_pvar_get_index(pv_names[i], pv_class[i], &idx));
        MPI_OK(MPI_T_pvar_get_info(idx, NULL, NULL, NULL, &cls, &dt, NULL, NULL, NULL, NULL, &ro, &cont, NULL));
        CHECK(cls == pv_class[i] && dt == MPI_UNSIGNED_LONG_LONG && ro == 1 && cont == 1, "pvar %s", pv_names[i]);
        MPI_OK(MPI_T_pvar_handle_alloc(ps, idx, NULL, &ph[i], &cnt));
    }
    EXPECT(MPI_T_pvar_get_index(pv_names[0], MPI_T_PVAR_CLASS_COUNTER, &nk), MPI_T_ERR_INVALID_NAME);
    unsigned long long pv0[4], pv1[4], pv2[4];
    for (int i = 0; i < 4; i++)
        MPI_OK(MPI_T_pvar_read(ps, ph[i], &pv0[i]));

    int payload[100];
    for (int i = 0; i < 100; i++)
        payload[i] = rank * 1000 + i;
    MPI_Count before = 0, after = 0;
    /* A message before its receive: rank 1 sends, rank 0 probes until it
     * is here (queued: matched 0), then receives it. */
    if (rank == 1)
        MPI_OK(MPI_Send(payload, 100, MPI_INT, 0, 42, comm));
    if (rank == 0) {
        MPI_OK(MPI_T_source_get_timestamp(0, &before));
        int here = 0;
        while (!here)
            MPI_OK(MPI_Iprobe(1, 42, comm, &here, MPI_STATUS_IGNORE));
        MPI_OK(MPI_T_source_get_timestamp(0, &after));
        CHECK(arrived.calls == 1 && arrived.source == 1 && arrived.tag == 42 &&
                  arrived.bytes == 100 * (MPI_Count)sizeof(int) && arrived.matched == 0 && arrived.copy_agrees,
              "unexpected arrival: calls %d source %d tag %d bytes %lld matched %d copy %d", arrived.calls,
              arrived.source, arrived.tag, (long long)arrived.bytes, arrived.matched, arrived.copy_agrees);
        CHECK(arrived.stamp >= before && arrived.stamp <= after && arrived.safety == MPI_T_CB_REQUIRE_MPI_RESTRICTED,
              "stamp %lld outside [%lld, %lld], safety %d", (long long)arrived.stamp, (long long)before,
              (long long)after, (int)arrived.safety);
        CHECK(taken.calls == 0, "taken before the receive: %d", taken.calls);
        for (int i = 0; i < 4; i++)
            MPI_OK(MPI_T_pvar_read(ps, ph[i], &pv1[i]));
        CHECK(pv1[0] >= 1 && pv1[2] >= pv0[2] + 1 && pv1[3] >= pv0[3] + 1,
              "waiting message: queue %llu, unexpected %llu (from %llu), arrived %llu (from %llu)", pv1[0], pv1[2],
              pv0[2], pv1[3], pv0[3]);
        int in[100];
        MPI_OK(MPI_Recv(in, 100, MPI_INT, 1, 42, comm, MPI_STATUS_IGNORE));
        CHECK(in[99] == 1099, "received %d", in[99]);
        MPI_OK(MPI_T_pvar_read(ps, ph[0], &pv2[0]));
        CHECK(pv2[0] == pv1[0] - 1, "queue after the receive: %llu (was %llu)", pv2[0], pv1[0]);
        CHECK(taken.calls == 1 && taken.source == 1 && taken.tag == 42 && taken.matched == -1 && taken.copy_agrees,
              "taken: calls %d source %d tag %d matched %d", taken.calls, taken.source, taken.tag, taken.matched);
        CHECK(dropped_calls >= 1 && dropped_count == dropped_calls && never_calls == 0,
              "dropped %d (%lld), NONE-level callback called %d", dropped_calls, (long long)dropped_count,
              never_calls);
        int32_t x;
        EXPECT(MPI_T_event_read(arrived.last, 0, &x), MPI_T_ERR_INVALID_HANDLE);
        MPI_Count ts;
        EXPECT(MPI_T_event_get_timestamp(arrived.last, &ts), MPI_T_ERR_INVALID_HANDLE);
    }
    /* A message that meets its posted receive: matched 1, nothing taken
     * from the queue. The level's callback taken away: dropped, not called. */
    MPI_OK(MPI_T_event_register_callback(r_none, MPI_T_CB_REQUIRE_NONE, MPI_INFO_NULL, NULL, NULL));
    int dropped_then = dropped_calls;
    MPI_Request rq = MPI_REQUEST_NULL;
    int in2[7] = {0};
    if (rank == 0) {
        MPI_OK(MPI_T_pvar_read(ps, ph[1], &pv1[1]));
        MPI_OK(MPI_Irecv(in2, 7, MPI_INT, 1, 43, comm, &rq));
        MPI_OK(MPI_T_pvar_read(ps, ph[1], &pv2[1]));
        CHECK(pv2[1] == pv1[1] + 1, "posted queue %llu after an Irecv (was %llu)", pv2[1], pv1[1]);
    }
    MPI_OK(MPI_Barrier(comm));
    if (rank == 1)
        MPI_OK(MPI_Send(payload, 7, MPI_INT, 0, 43, comm));
    if (rank == 0) {
        MPI_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        CHECK(arrived.calls == 2 && arrived.tag == 43 && arrived.matched == 1 && arrived.bytes == 28,
              "posted arrival: calls %d tag %d matched %d bytes %lld", arrived.calls, arrived.tag, arrived.matched,
              (long long)arrived.bytes);
        CHECK(taken.calls == 1 && dropped_calls > dropped_then && never_calls == 0 && in2[6] == 1006,
              "taken %d dropped %d in %d", taken.calls, dropped_calls, in2[6]);
    }

    /* Freed: the free callback with its data; then silence. */
    static char tag_data[] = "mine";
    MPI_T_event_registration stale = r_arr;
    MPI_OK(MPI_T_event_handle_free(r_arr, tag_data, on_free));
    CHECK(freed_calls == 1 && freed_ud == tag_data, "free callback %d", freed_calls);
    EXPECT(MPI_T_event_handle_free(stale, NULL, NULL), MPI_T_ERR_INVALID_HANDLE);
    EXPECT(MPI_T_event_register_callback(stale, MPI_T_CB_REQUIRE_MPI_RESTRICTED, MPI_INFO_NULL, NULL, never),
           MPI_T_ERR_INVALID_HANDLE);
    MPI_OK(MPI_T_event_handle_free(r_take, NULL, NULL));
    MPI_OK(MPI_T_event_handle_free(r_none, NULL, NULL));
    int calls_then = arrived.calls;
    MPI_OK(MPI_Barrier(comm));   /* rank 0 has checked the tag-43 arrival and freed */
    if (rank == 1)
        MPI_OK(MPI_Send(payload, 1, MPI_INT, 0, 44, comm));
    if (rank == 0)
        MPI_OK(MPI_Recv(in2, 1, MPI_INT, 1, 44, comm, MPI_STATUS_IGNORE));
    CHECK(arrived.calls == calls_then && freed_calls == 1, "a freed registration was called");

    if (rank == 0) {
        MPI_OK(MPI_T_pvar_read(ps, ph[1], &pv2[1]));
        CHECK(pv2[1] == pv1[1], "posted queue %llu after the receives (was %llu)", pv2[1], pv1[1]);
    }
    MPI_OK(MPI_T_pvar_session_free(&ps));
    MPI_OK(MPI_Comm_free(&comm));
    MPI_OK(MPI_T_finalize());
    MPI_Finalize();
    if (rank == 0)
        printf("core_mpit_events: ok\n");
    return 0;
}
