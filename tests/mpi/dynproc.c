/* Dynamic processes (MPI 5.0 chapter 11), every result checked in data:
 *
 * - ports and names: Open_port/Close_port, Publish/Lookup/Unpublish_name
 *   and their error classes (MPI_ERR_PORT, MPI_ERR_NAME, MPI_ERR_SERVICE),
 *   a connect that times out (info "timeout");
 * - accept/connect between the two halves of this job (a port name passed
 *   by a message, or looked up by name; an accept that first meets a connect
 *   which gave up): point-to-point both ways, intercomm collectives, merge;
 * - spawn: the parent spawns 2 (then 3) copies of this program, which check
 *   MPI_Comm_get_parent, exchange messages with the parent (eager, and 1 MiB
 *   pushed through the socket transport), run intercommunicator collectives,
 *   merge (intracommunicator collectives over two jobs: Allreduce, Bcast,
 *   Alltoall, Allgather, Barrier) and disconnect;
 * - spawn_multiple of two commands (argv, MPI_APPNUM and MPI_UNIVERSE_SIZE
 *   checked per child);
 * - a spawn by one rank, widened by MPI_Intercomm_create to the whole job
 *   (ranks that never met the children), then MPI_Comm_create of parts;
 * - two spawned jobs that meet each other through a published name, with
 *   the parent only relaying: the far-to-far path;
 * - a spawn of a program that does not exist: MPI_ERR_SPAWN on every rank
 *   and in every errcode;
 * - MPI_Comm_join over a Unix socket pair between two ranks. */
#include "mpitest.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static int rank, size;
static char self_exe[4096];

#define BIG (1 << 20)

static void fill(int *buf, int n, int seed)
{
    for (int i = 0; i < n; i++)
        buf[i] = seed * 1000003 + i;
}

static void check_fill(const int *buf, int n, int seed, const char *what)
{
    for (int i = 0; i < n; i++)
        if (buf[i] != seed * 1000003 + i)
            MT_FAIL("%s: element %d is %d, expected %d", what, i, buf[i], seed * 1000003 + i);
}

/* Traffic over an intercommunicator, the same code on both sides: `low`
 * tells the sides apart (they run the exchanges in mirrored order). */
static void inter_traffic(MPI_Comm ic, int low)
{
    int lr, ls, rs;
    MPI_OK(MPI_Comm_rank(ic, &lr));
    MPI_OK(MPI_Comm_size(ic, &ls));
    MPI_OK(MPI_Comm_remote_size(ic, &rs));
    /* Every local rank sends to remote rank lr % rs, so it hears from the
     * remote ranks r with r % ls == lr. */
    int peer = lr % rs, mine = (low ? 100 : 200) + lr;
    MPI_Request sq;
    MPI_OK(MPI_Isend(&mine, 1, MPI_INT, peer, 7, ic, &sq));
    int expect = 0, heard = 0;
    for (int r = 0; r < rs; r++)
        if (r % ls == lr)
            expect++;
    for (int i = 0; i < expect; i++) {
        int got = -1;
        MPI_Status st;
        MPI_OK(MPI_Recv(&got, 1, MPI_INT, MPI_ANY_SOURCE, 7, ic, &st));
        CHECK(st.MPI_SOURCE % ls == lr, "message from remote rank %d", st.MPI_SOURCE);
        CHECK(got == (low ? 200 : 100) + st.MPI_SOURCE, "got %d from %d", got, st.MPI_SOURCE);
        heard |= 1 << st.MPI_SOURCE;
    }
    CHECK(__builtin_popcount(heard) == expect, "heard from %d remote ranks, expected %d",
          __builtin_popcount(heard), expect);
    MPI_OK(MPI_Wait(&sq, MPI_STATUS_IGNORE));
    /* A large message between the two leaders, both ways (rendezvous). */
    int *big = malloc(BIG * sizeof(int));
    if (lr == 0) {
        if (low) {
            fill(big, BIG, 11);
            MPI_OK(MPI_Send(big, BIG, MPI_INT, 0, 8, ic));
            memset(big, 0, BIG * sizeof(int));
            MPI_OK(MPI_Recv(big, BIG, MPI_INT, 0, 9, ic, MPI_STATUS_IGNORE));
            check_fill(big, BIG, 12, "large message from the high side");
        } else {
            MPI_OK(MPI_Recv(big, BIG, MPI_INT, 0, 8, ic, MPI_STATUS_IGNORE));
            check_fill(big, BIG, 11, "large message from the low side");
            fill(big, BIG, 12);
            MPI_OK(MPI_Send(big, BIG, MPI_INT, 0, 9, ic));
        }
    }
    free(big);
    /* Intercommunicator collectives: Bcast from the low side's rank 0, an
     * Allreduce (each side gets the other side's sum). */
    int v = low && lr == 0 ? 4242 : -1;
    MPI_OK(MPI_Bcast(&v, 1, MPI_INT, low ? (lr == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0, ic));
    if (!low)
        CHECK(v == 4242, "intercomm bcast gave %d", v);
    int in = (low ? 1 : 1000) * (lr + 1), sum = 0;
    MPI_OK(MPI_Allreduce(&in, &sum, 1, MPI_INT, MPI_SUM, ic));
    int want = (low ? 1000 : 1) * rs * (rs + 1) / 2;
    CHECK(sum == want, "intercomm allreduce gave %d, expected %d", sum, want);
    MPI_OK(MPI_Barrier(ic));
}

/* Collectives over the merged intracommunicator (members of two jobs). */
static void merged_traffic(MPI_Comm ic, int low, int far)
{
    MPI_Comm m;
    MPI_OK(MPI_Intercomm_merge(ic, !low, &m));
    int mr, ms, ls;
    MPI_OK(MPI_Comm_rank(m, &mr));
    MPI_OK(MPI_Comm_size(m, &ms));
    MPI_OK(MPI_Comm_size(ic, &ls));
    int lr;
    MPI_OK(MPI_Comm_rank(ic, &lr));
    /* The low group comes first. */
    int rs;
    MPI_OK(MPI_Comm_remote_size(ic, &rs));
    CHECK(mr == (low ? lr : rs + lr), "merged rank %d (local %d, low %d)", mr, lr, low);
    long long x = mr + 1, s = 0;
    MPI_OK(MPI_Allreduce(&x, &s, 1, MPI_LONG_LONG, MPI_SUM, m));
    CHECK(s == (long long)ms * (ms + 1) / 2, "merged allreduce %lld", s);
    int b[3] = {0, 0, 0};
    if (mr == ms - 1) {
        b[0] = 5;
        b[1] = 6;
        b[2] = 7;
    }
    MPI_OK(MPI_Bcast(b, 3, MPI_INT, ms - 1, m));
    CHECK(b[0] == 5 && b[1] == 6 && b[2] == 7, "merged bcast %d %d %d", b[0], b[1], b[2]);
    int *sb = malloc(sizeof(int) * (size_t)ms * 1000), *rb = malloc(sizeof(int) * (size_t)ms * 1000);
    for (int d = 0; d < ms; d++)
        for (int i = 0; i < 1000; i++)
            sb[d * 1000 + i] = mr * 100000 + d * 1000 + i;
    MPI_OK(MPI_Alltoall(sb, 1000, MPI_INT, rb, 1000, MPI_INT, m));
    for (int sdr = 0; sdr < ms; sdr++)
        for (int i = 0; i < 1000; i++)
            CHECK(rb[sdr * 1000 + i] == sdr * 100000 + mr * 1000 + i, "merged alltoall from %d at %d", sdr, i);
    MPI_OK(MPI_Allgather(&mr, 1, MPI_INT, rb, 1, MPI_INT, m));
    for (int i = 0; i < ms; i++)
        CHECK(rb[i] == i, "merged allgather [%d] = %d", i, rb[i]);
    free(sb);
    free(rb);
    /* Windows over two jobs are refused on every member; within one job
     * they work. */
    MPI_OK(MPI_Comm_set_errhandler(m, MPI_ERRORS_RETURN));
    MPI_Win w;
    int *base;
    if (far) {
        MPI_FAILS(MPI_ERR_UNSUPPORTED_OPERATION, MPI_Win_allocate(64, 1, MPI_INFO_NULL, m, &base, &w));
        /* The shared-memory level of two jobs is each job's own group, and
         * a shared window on it works. */
        MPI_Comm sh;
        int shs, shr;
        MPI_OK(MPI_Comm_split_type(m, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &sh));
        MPI_OK(MPI_Comm_size(sh, &shs));
        MPI_OK(MPI_Comm_rank(sh, &shr));
        CHECK(shs == ls && shr == lr, "shared split of the merged communicator: rank %d of %d", shr, shs);
        MPI_OK(MPI_Win_allocate_shared(sizeof(int), sizeof(int), MPI_INFO_NULL, sh, &base, &w));
        *base = shr;
        MPI_OK(MPI_Win_fence(0, w));
        MPI_Aint qsz;
        int qdu, *q;
        MPI_OK(MPI_Win_shared_query(w, (shr + 1) % shs, &qsz, &qdu, &q));
        CHECK(*q == (shr + 1) % shs, "shared window of one job: neighbour wrote %d", *q);
        MPI_OK(MPI_Win_fence(0, w));
        MPI_OK(MPI_Win_free(&w));
        MPI_OK(MPI_Comm_free(&sh));
    } else {
        MPI_OK(MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, m, &base, &w));
        *base = -1;
        MPI_OK(MPI_Win_fence(0, w));
        MPI_OK(MPI_Put(&mr, 1, MPI_INT, (mr + 1) % ms, 0, 1, MPI_INT, w));
        MPI_OK(MPI_Win_fence(0, w));
        CHECK(*base == (mr + ms - 1) % ms, "put over the merged communicator: %d", *base);
        MPI_OK(MPI_Win_free(&w));
    }
    MPI_OK(MPI_Barrier(m));
    MPI_OK(MPI_Comm_free(&m));
}

/* Over an intercommunicator between two whole jobs made by
 * MPI_Intercomm_create (the parent's other ranks had never met the
 * children): traffic, merge, and MPI_Comm_create of subgroups of both
 * sides (each side without its last member, if it has more than one). */
static void widened_traffic(MPI_Comm wide, int low)
{
    inter_traffic(wide, low);
    merged_traffic(wide, low, 1);
    int ls, lr, rs;
    MPI_OK(MPI_Comm_size(wide, &ls));
    MPI_OK(MPI_Comm_rank(wide, &lr));
    MPI_OK(MPI_Comm_remote_size(wide, &rs));
    MPI_Group g, sub;
    MPI_OK(MPI_Comm_group(wide, &g));
    int last = ls - 1;
    if (ls > 1)
        MPI_OK(MPI_Group_excl(g, 1, &last, &sub));
    else
        MPI_OK(MPI_Group_incl(g, 1, &last, &sub));
    MPI_Comm part;
    MPI_OK(MPI_Comm_create(wide, sub, &part));
    int subs = ls > 1 ? ls - 1 : 1, rsubs = rs > 1 ? rs - 1 : 1;
    if (lr < subs) {
        CHECK(part != MPI_COMM_NULL, "rank %d of the subgroup got no communicator", lr);
        int prs, in = (low ? 1 : 1000) * (lr + 1), sum = 0;
        MPI_OK(MPI_Comm_remote_size(part, &prs));
        CHECK(prs == rsubs, "the part has %d remote members, expected %d", prs, rsubs);
        MPI_OK(MPI_Allreduce(&in, &sum, 1, MPI_INT, MPI_SUM, part));
        int want = (low ? 1000 : 1) * prs * (prs + 1) / 2;
        CHECK(sum == want, "allreduce over the part gave %d, expected %d", sum, want);
        MPI_OK(MPI_Comm_free(&part));
    } else {
        CHECK(part == MPI_COMM_NULL, "rank %d outside the subgroup got a communicator", lr);
    }
    MPI_OK(MPI_Group_free(&sub));
    MPI_OK(MPI_Group_free(&g));
    MPI_OK(MPI_Comm_free(&wide));
}

/* ---------------------------------------------------------------- children */

static int child_main(int argc, char **argv)
{
    MPI_Comm parent;
    MPI_OK(MPI_Comm_get_parent(&parent));
    CHECK(parent != MPI_COMM_NULL, "a spawned process has no parent");
    char pname[MPI_MAX_OBJECT_NAME];
    int plen;
    MPI_OK(MPI_Comm_get_name(parent, pname, &plen));
    CHECK(!strcmp(pname, "MPI_COMM_PARENT") && plen == 15, "the parent's name is '%s'", pname);
    int rs;
    MPI_OK(MPI_Comm_remote_size(parent, &rs));
    const char *mode = argv[1];
    if (!strcmp(mode, "child")) {
        /* argv: child <nparent> */
        CHECK(argc == 3 && rs == atoi(argv[2]), "argv or parent size wrong (%d, remote %d)", argc, rs);
        inter_traffic(parent, 0);
        merged_traffic(parent, 0, 1);
    } else if (!strcmp(mode, "multi")) {
        /* argv: multi <tag>; appnum 0 has tag a, appnum 1 tag b */
        int *appnum, flag;
        MPI_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &appnum, &flag));
        CHECK(flag, "no MPI_APPNUM");
        CHECK(argc == 3 && argv[2][0] == (*appnum == 0 ? 'a' : 'b') && argv[2][1] == '\0',
              "appnum %d with argument %s", *appnum, argc > 2 ? argv[2] : "(none)");
        int *usize;
        MPI_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &usize, &flag));
        /* The launcher of this job leads a process group of its own (so
         * the signals ending the spawning rank's group leave it time to
         * clean up). */
        int v[4] = {rank, *appnum, flag ? *usize : -1, getpgid(getppid()) == getppid()};
        MPI_OK(MPI_Send(v, 4, MPI_INT, 0, 3, parent));
    } else if (!strcmp(mode, "meet")) {
        /* argv: meet <accept|connect> <service>; two spawned jobs meet */
        char port[MPI_MAX_PORT_NAME];
        MPI_Comm other;
        int acc = !strcmp(argv[2], "accept");
        if (acc) {
            if (rank == 0) {
                MPI_OK(MPI_Open_port(MPI_INFO_NULL, port));
                MPI_OK(MPI_Publish_name(argv[3], MPI_INFO_NULL, port));
            }
            int ready = 1;
            MPI_OK(MPI_Bcast(&ready, 1, MPI_INT, 0, MPI_COMM_WORLD));
            if (rank == 0)
                MPI_OK(MPI_Send(&ready, 1, MPI_INT, 0, 4, parent));   /* published */
            MPI_OK(MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &other));
            if (rank == 0) {
                MPI_OK(MPI_Unpublish_name(argv[3], MPI_INFO_NULL, port));
                MPI_OK(MPI_Close_port(port));
            }
        } else {
            int go;
            if (rank == 0)
                MPI_OK(MPI_Recv(&go, 1, MPI_INT, 0, 5, parent, MPI_STATUS_IGNORE));
            if (rank == 0)
                MPI_OK(MPI_Lookup_name(argv[3], MPI_INFO_NULL, port));
            MPI_OK(MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &other));
        }
        inter_traffic(other, acc);
        merged_traffic(other, acc, 1);
        MPI_OK(MPI_Comm_disconnect(&other));
    } else if (!strcmp(mode, "widen")) {
        /* Spawned by the parent's rank 0 alone: an intercommunicator between
         * the two whole jobs through the spawn's. */
        MPI_Comm wide;
        MPI_OK(MPI_Intercomm_create(MPI_COMM_WORLD, 0, parent, 0, 123, &wide));
        widened_traffic(wide, 0);
    } else if (!strcmp(mode, "crash")) {
        /* A child that dies while its parent waits for it. */
        if (rank == 0) {
            fflush(stdout);
            abort();
        }
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    } else {
        MT_FAIL("unknown mode %s", mode);
    }
    MPI_OK(MPI_Comm_disconnect(&parent));
    CHECK(parent == MPI_COMM_NULL, "disconnect did not set the handle to MPI_COMM_NULL");
    MPI_OK(MPI_Comm_get_parent(&parent));
    CHECK(parent == MPI_COMM_NULL, "the parent is still there after MPI_Comm_disconnect");
    MPI_OK(MPI_Finalize());
    return 0;
}

/* ---------------------------------------------------------------- parent tests */

static void test_ports_and_names(void)
{
    char port[MPI_MAX_PORT_NAME], got[MPI_MAX_PORT_NAME], service[64];
    MPI_OK(MPI_Open_port(MPI_INFO_NULL, port));
    CHECK(strlen(port) > 0 && strlen(port) < MPI_MAX_PORT_NAME, "port name '%s'", port);
    snprintf(service, sizeof service, "halo-test-%d-%d", (int)getpid(), rank);
    MPI_FAILS(MPI_ERR_NAME, MPI_Lookup_name(service, MPI_INFO_NULL, got));
    MPI_OK(MPI_Publish_name(service, MPI_INFO_NULL, port));
    MPI_FAILS(MPI_ERR_SERVICE, MPI_Publish_name(service, MPI_INFO_NULL, port));
    MPI_OK(MPI_Lookup_name(service, MPI_INFO_NULL, got));
    CHECK(!strcmp(got, port), "lookup gave '%s', published '%s'", got, port);
    MPI_OK(MPI_Unpublish_name(service, MPI_INFO_NULL, port));
    MPI_FAILS(MPI_ERR_SERVICE, MPI_Unpublish_name(service, MPI_INFO_NULL, port));
    MPI_FAILS(MPI_ERR_NAME, MPI_Lookup_name(service, MPI_INFO_NULL, got));
    MPI_OK(MPI_Close_port(port));
    MPI_FAILS(MPI_ERR_PORT, MPI_Close_port(port));
    /* A port nobody listens on any more, and a name that is no port. */
    MPI_Comm c;
    MPI_FAILS(MPI_ERR_PORT, MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_SELF, &c));
    MPI_FAILS(MPI_ERR_PORT, MPI_Comm_connect("no-such-port", MPI_INFO_NULL, 0, MPI_COMM_SELF, &c));
    MPI_FAILS(MPI_ERR_PORT, MPI_Comm_accept("no-such-port", MPI_INFO_NULL, 0, MPI_COMM_SELF, &c));
    MPI_FAILS(MPI_ERR_ROOT, MPI_Comm_accept(port, MPI_INFO_NULL, 5, MPI_COMM_SELF, &c));
    /* An open port that nobody accepts on: the connect gives up after the
     * info's "timeout" seconds with MPI_ERR_PORT. */
    MPI_Info info;
    MPI_OK(MPI_Open_port(MPI_INFO_NULL, port));
    MPI_OK(MPI_Info_create(&info));
    MPI_OK(MPI_Info_set(info, "timeout", "1"));
    double t0 = MPI_Wtime();
    int rc = MPI_Comm_connect(port, info, 0, MPI_COMM_SELF, &c), cls = -1;
    double waited = MPI_Wtime() - t0;
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_PORT, "a connect nobody accepts: class %d", cls);
    CHECK(waited >= 0.9 && waited < 20, "the connect gave up after %.2f s (timeout 1 s)", waited);
    /* The message names the call once and says why. */
    char msg[MPI_MAX_ERROR_STRING];
    int len;
    MPI_OK(MPI_Error_string(rc, msg, &len));
    CHECK(strstr(msg, "MPI_Comm_connect") && !strstr(strstr(msg, "MPI_Comm_connect") + 1, "MPI_Comm_connect") &&
          strstr(msg, "nobody accepted"), "message of a connect that timed out: \"%s\"", msg);
    MPI_OK(MPI_Info_free(&info));
    MPI_OK(MPI_Close_port(port));
}

/* The halves of this job meet through a port (needs 2 ranks or more). */
static void test_accept_connect_halves(void)
{
    if (size < 2)
        return;
    int low = rank < size / 2;
    MPI_Comm half;
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, low, rank, &half));
    char port[MPI_MAX_PORT_NAME] = "";
    MPI_Comm ic;
    if (low) {
        if (rank == 0) {
            MPI_OK(MPI_Open_port(MPI_INFO_NULL, port));
            MPI_OK(MPI_Send(port, MPI_MAX_PORT_NAME, MPI_CHAR, size / 2, 1, MPI_COMM_WORLD));
            /* The other side first tries a connect that times out before
             * this accept: the accept skips that connection. */
            int gave_up;
            MPI_OK(MPI_Recv(&gave_up, 1, MPI_INT, size / 2, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        }
        MPI_OK(MPI_Comm_accept(port, MPI_INFO_NULL, 0, half, &ic));
        if (rank == 0)
            MPI_OK(MPI_Close_port(port));
    } else {
        if (rank == size / 2) {
            MPI_OK(MPI_Recv(port, MPI_MAX_PORT_NAME, MPI_CHAR, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            MPI_Info info;
            MPI_Comm none;
            MPI_OK(MPI_Info_create(&info));
            MPI_OK(MPI_Info_set(info, "timeout", "0.3"));
            MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
            MPI_FAILS(MPI_ERR_PORT, MPI_Comm_connect(port, info, 0, MPI_COMM_SELF, &none));
            MPI_OK(MPI_Info_free(&info));
            int gave_up = 1;
            MPI_OK(MPI_Send(&gave_up, 1, MPI_INT, 0, 2, MPI_COMM_WORLD));
        }
        MPI_OK(MPI_Comm_connect(port, MPI_INFO_NULL, 0, half, &ic));
    }
    int rs;
    MPI_OK(MPI_Comm_remote_size(ic, &rs));
    CHECK(rs == (low ? size - size / 2 : size / 2), "remote size %d", rs);
    inter_traffic(ic, low);
    merged_traffic(ic, low, 0);
    MPI_OK(MPI_Comm_disconnect(&ic));
    MPI_OK(MPI_Comm_free(&half));
}

static void test_spawn(int n)
{
    char nparent[16];
    snprintf(nparent, sizeof nparent, "%d", size);
    char *args[] = {"child", nparent, NULL};
    MPI_Comm ic;
    int errcodes[8];
    for (int i = 0; i < 8; i++)
        errcodes[i] = -1;
    MPI_OK(MPI_Comm_spawn(self_exe, args, n, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &ic, errcodes));
    for (int i = 0; i < n; i++)
        CHECK(errcodes[i] == MPI_SUCCESS, "errcode[%d] = %d", i, errcodes[i]);
    int rs;
    MPI_OK(MPI_Comm_remote_size(ic, &rs));
    CHECK(rs == n, "spawned %d, remote size %d", n, rs);
    inter_traffic(ic, 1);
    merged_traffic(ic, 1, 1);
    MPI_OK(MPI_Comm_disconnect(&ic));
}

static void test_spawn_multiple(void)
{
    char *cmds[2] = {self_exe, self_exe};
    char *a0[] = {"multi", "a", NULL}, *a1[] = {"multi", "b", NULL};
    char **argvs[2] = {a0, a1};
    int np[2] = {1, 2};
    MPI_Info infos[2] = {MPI_INFO_NULL, MPI_INFO_NULL};
    MPI_Comm ic;
    MPI_OK(MPI_Comm_spawn_multiple(2, cmds, argvs, np, infos, size - 1, MPI_COMM_WORLD, &ic,
                                   MPI_ERRCODES_IGNORE));
    int rs;
    MPI_OK(MPI_Comm_remote_size(ic, &rs));
    CHECK(rs == 3, "remote size %d", rs);
    if (rank == 0) {
        /* The spawned job shares the parent's universe: MPI_UNIVERSE_SIZE
         * set to the same value (mpiexec -usize), or set in neither. */
        int *usize, flag, want;
        MPI_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &usize, &flag));
        want = flag ? *usize : -1;
        const char *uenv = getenv("DYNPROC_USIZE");
        CHECK(want == (uenv ? atoi(uenv) : -1), "MPI_UNIVERSE_SIZE of the parent: %d", want);
        int seen[3] = {0, 0, 0};
        for (int i = 0; i < 3; i++) {
            int v[4];
            MPI_Status st;
            MPI_OK(MPI_Recv(v, 4, MPI_INT, MPI_ANY_SOURCE, 3, ic, &st));
            CHECK(v[0] == st.MPI_SOURCE, "child %d says rank %d", st.MPI_SOURCE, v[0]);
            CHECK(v[3] == 1, "child %d: its launcher is in the spawning rank's process group", st.MPI_SOURCE);
            CHECK(v[1] == (st.MPI_SOURCE == 0 ? 0 : 1), "child %d has appnum %d", st.MPI_SOURCE, v[1]);
            CHECK(v[2] == want, "child %d has MPI_UNIVERSE_SIZE %d, the parent %d", st.MPI_SOURCE,
                  v[2], want);
            seen[st.MPI_SOURCE]++;
        }
        CHECK(seen[0] == 1 && seen[1] == 1 && seen[2] == 1, "children heard %d %d %d", seen[0], seen[1], seen[2]);
    }
    MPI_OK(MPI_Comm_disconnect(&ic));
}

/* The info key "soft": the largest allowed count up to maxprocs starts,
 * and the codes say which of the maxprocs did not (spawn, and spawn_multiple
 * with the key on one command); a list that is none, or allows nothing,
 * fails on every rank. */
static void test_spawn_soft(void)
{
    char nparent[16];
    snprintf(nparent, sizeof nparent, "%d", size);
    char *args[] = {"child", nparent, NULL};
    MPI_Info info;
    MPI_Comm ic;
    int errcodes[6], rs;
    MPI_OK(MPI_Info_create(&info));
    MPI_OK(MPI_Info_set(info, "soft", "1:3,6"));
    for (int i = 0; i < 6; i++)
        errcodes[i] = -1;
    MPI_OK(MPI_Comm_spawn(self_exe, args, 4, info, 0, MPI_COMM_WORLD, &ic, errcodes));
    MPI_OK(MPI_Comm_remote_size(ic, &rs));
    CHECK(rs == 3, "soft 1:3,6 with maxprocs 4: remote size %d", rs);
    for (int i = 0; i < 4; i++)
        CHECK(errcodes[i] == (i < 3 ? MPI_SUCCESS : MPI_ERR_SPAWN), "soft: errcode[%d] = %d", i, errcodes[i]);
    CHECK(errcodes[4] == -1, "soft: a code written past maxprocs");
    inter_traffic(ic, 1);
    merged_traffic(ic, 1, 1);
    MPI_OK(MPI_Comm_disconnect(&ic));

    char *cmds[2] = {self_exe, self_exe};
    char *a0[] = {"multi", "a", NULL}, *a1[] = {"multi", "b", NULL};
    char **argvs[2] = {a0, a1};
    int np[2] = {1, 3};
    MPI_Info infos[2] = {MPI_INFO_NULL, info};
    MPI_OK(MPI_Info_set(info, "soft", "2:0:-2"));
    for (int i = 0; i < 6; i++)
        errcodes[i] = -1;
    MPI_OK(MPI_Comm_spawn_multiple(2, cmds, argvs, np, infos, size - 1, MPI_COMM_WORLD, &ic, errcodes));
    MPI_OK(MPI_Comm_remote_size(ic, &rs));
    CHECK(rs == 3, "spawn_multiple, soft 2:0:-2 on 3 of the 4: remote size %d", rs);
    for (int i = 0; i < 4; i++)
        CHECK(errcodes[i] == (i < 3 ? MPI_SUCCESS : MPI_ERR_SPAWN), "spawn_multiple soft: errcode[%d] = %d", i,
              errcodes[i]);
    if (rank == 0) {
        int seen[3] = {0, 0, 0};
        for (int i = 0; i < 3; i++) {
            int v[4];
            MPI_Status st;
            MPI_OK(MPI_Recv(v, 4, MPI_INT, MPI_ANY_SOURCE, 3, ic, &st));
            CHECK(v[1] == (st.MPI_SOURCE == 0 ? 0 : 1), "child %d has appnum %d", st.MPI_SOURCE, v[1]);
            seen[st.MPI_SOURCE]++;
        }
        CHECK(seen[0] == 1 && seen[1] == 1 && seen[2] == 1, "children heard %d %d %d", seen[0], seen[1], seen[2]);
    }
    MPI_OK(MPI_Comm_disconnect(&ic));

    ic = MPI_COMM_NULL;
    MPI_OK(MPI_Info_set(info, "soft", "5:9"));
    MPI_FAILS(MPI_ERR_SPAWN, MPI_Comm_spawn(self_exe, args, 4, info, 0, MPI_COMM_WORLD, &ic, MPI_ERRCODES_IGNORE));
    CHECK(ic == MPI_COMM_NULL, "a spawn that soft allowed nothing set the intercommunicator");
    MPI_OK(MPI_Info_set(info, "soft", "1:x"));
    MPI_FAILS(MPI_ERR_INFO, MPI_Comm_spawn(self_exe, args, 4, info, 0, MPI_COMM_WORLD, &ic, MPI_ERRCODES_IGNORE));
    MPI_OK(MPI_Info_free(&info));
}

/* Rank 0 alone spawns 2 children (over MPI_COMM_SELF); then the whole job
 * and the children build an intercommunicator through the spawn's, with
 * peer_comm MPI_COMM_NULL on the other ranks, which have never met the
 * children. */
static void test_spawn_widen(void)
{
    char *args[] = {"widen", NULL};
    MPI_Comm ic = MPI_COMM_NULL, wide;
    if (rank == 0)
        MPI_OK(MPI_Comm_spawn(self_exe, args, 2, MPI_INFO_NULL, 0, MPI_COMM_SELF, &ic,
                              MPI_ERRCODES_IGNORE));
    MPI_OK(MPI_Intercomm_create(MPI_COMM_WORLD, 0, ic, 0, 123, &wide));
    int rs;
    MPI_OK(MPI_Comm_remote_size(wide, &rs));
    CHECK(rs == 2, "the widened intercommunicator has %d remote members", rs);
    widened_traffic(wide, 1);
    if (rank == 0)
        MPI_OK(MPI_Comm_disconnect(&ic));
}

/* Two spawned jobs meet each other; the parent only tells the connecting
 * job when the accepting one has published its port. */
static void test_far_to_far(void)
{
    char service[64];
    snprintf(service, sizeof service, "halo-test-meet-%d", (int)getpid());
    char *acc[] = {"meet", "accept", service, NULL}, *con[] = {"meet", "connect", service, NULL};
    MPI_Comm a, c;
    MPI_OK(MPI_Comm_spawn(self_exe, acc, 2, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &a, MPI_ERRCODES_IGNORE));
    MPI_OK(MPI_Comm_spawn(self_exe, con, 1, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &c, MPI_ERRCODES_IGNORE));
    if (rank == 0) {
        int ready;
        MPI_OK(MPI_Recv(&ready, 1, MPI_INT, 0, 4, a, MPI_STATUS_IGNORE));
        MPI_OK(MPI_Send(&ready, 1, MPI_INT, 0, 5, c));
    }
    MPI_OK(MPI_Comm_disconnect(&a));
    MPI_OK(MPI_Comm_disconnect(&c));
}

static void test_spawn_fails(void)
{
    MPI_Comm ic = MPI_COMM_NULL;
    int errcodes[2] = {-1, -1};
    char *args[] = {NULL};
    MPI_FAILS(MPI_ERR_SPAWN, MPI_Comm_spawn("/nonexistent/halo-no-such-program", args, 2, MPI_INFO_NULL, 0,
                                            MPI_COMM_WORLD, &ic, errcodes));
    CHECK(ic == MPI_COMM_NULL, "a failed spawn set the intercommunicator");
    CHECK(errcodes[0] == MPI_ERR_SPAWN && errcodes[1] == MPI_ERR_SPAWN, "errcodes %d %d", errcodes[0],
          errcodes[1]);
    MPI_FAILS(MPI_ERR_SPAWN, MPI_Comm_spawn(self_exe, args, 0, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &ic,
                                            MPI_ERRCODES_IGNORE));
}

/* MPI_Comm_join between ranks 0 and 1 over a Unix socket. */
static void test_join(void)
{
    MPI_Comm ic;
    MPI_FAILS(MPI_ERR_ARG, MPI_Comm_join(-1, &ic));
    if (size < 2 || rank > 1)
        return;
    struct sockaddr_un a;
    memset(&a, 0, sizeof a);
    a.sun_family = AF_UNIX;
    int len = snprintf(a.sun_path + 1, sizeof a.sun_path - 1, "halo-test-join-%d", (int)getpid());
    socklen_t alen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)len);
    int fd;
    if (rank == 0) {
        int l = socket(AF_UNIX, SOCK_STREAM, 0);
        CHECK(l >= 0 && bind(l, (struct sockaddr *)&a, alen) == 0 && listen(l, 1) == 0, "listen");
        int pid = (int)getpid();
        MPI_OK(MPI_Send(&pid, 1, MPI_INT, 1, 6, MPI_COMM_WORLD));
        fd = accept(l, NULL, NULL);
        close(l);
    } else {
        int pid;
        MPI_OK(MPI_Recv(&pid, 1, MPI_INT, 0, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        len = snprintf(a.sun_path + 1, sizeof a.sun_path - 1, "halo-test-join-%d", pid);
        alen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)len);
        fd = socket(AF_UNIX, SOCK_STREAM, 0);
        CHECK(fd >= 0 && connect(fd, (struct sockaddr *)&a, alen) == 0, "connect");
    }
    CHECK(fd >= 0, "no socket");
    MPI_OK(MPI_Comm_join(fd, &ic));
    int rs, v = 70 + rank, got = -1;
    MPI_OK(MPI_Comm_remote_size(ic, &rs));
    CHECK(rs == 1, "join remote size %d", rs);
    MPI_OK(MPI_Sendrecv(&v, 1, MPI_INT, 0, 1, &got, 1, MPI_INT, 0, 1, ic, MPI_STATUS_IGNORE));
    CHECK(got == 71 - rank, "join exchange got %d", got);
    MPI_OK(MPI_Comm_disconnect(&ic));
    close(fd);
}

int main(int argc, char **argv)
{
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    if (argc > 1)
        return child_main(argc, argv);
    ssize_t k = readlink("/proc/self/exe", self_exe, sizeof self_exe - 1);
    CHECK(k > 0, "readlink /proc/self/exe");
    self_exe[k] = '\0';
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    MPI_Comm parent;
    MPI_OK(MPI_Comm_get_parent(&parent));
    CHECK(parent == MPI_COMM_NULL, "a job started by mpiexec has a parent");
    const char *lost = getenv("DYNPROC_LOST");
    if (argc == 1 && lost) {
        /* Two jobs started apart (tests/dynproc_lost.sh): "connect" sends
         * one int and dies; "accept" must end with a message while it
         * waits for a second one. */
        char service[128], port[MPI_MAX_PORT_NAME];
        snprintf(service, sizeof service, "halo-test-lost-%s", getenv("DYNPROC_LOST_ID"));
        MPI_Comm ic;
        int v = 42;
        if (!strcmp(lost, "publish")) {
            /* The script left a record of this name by a dead process:
             * publishing replaces it. */
            char got[MPI_MAX_PORT_NAME];
            MPI_OK(MPI_Open_port(MPI_INFO_NULL, port));
            MPI_OK(MPI_Publish_name(service, MPI_INFO_NULL, port));
            MPI_OK(MPI_Lookup_name(service, MPI_INFO_NULL, got));
            CHECK(!strcmp(got, port), "lookup gave '%s' after replacing a stale record", got);
            MPI_OK(MPI_Unpublish_name(service, MPI_INFO_NULL, port));
            MPI_OK(MPI_Close_port(port));
            MPI_OK(MPI_Finalize());
            printf("dynproc: stale name replaced\n");
            return 0;
        }
        if (!strcmp(lost, "accept")) {
            MPI_OK(MPI_Open_port(MPI_INFO_NULL, port));
            MPI_OK(MPI_Publish_name(service, MPI_INFO_NULL, port));
            MPI_OK(MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &ic));
            MPI_OK(MPI_Recv(&v, 1, MPI_INT, 0, 0, ic, MPI_STATUS_IGNORE));
            CHECK(v == 7, "got %d", v);
            MPI_Recv(&v, 1, MPI_INT, 0, 0, ic, MPI_STATUS_IGNORE);
            MT_FAIL("received from a process that died");
        }
        for (int tries = 0; MPI_Lookup_name(service, MPI_INFO_NULL, port) != MPI_SUCCESS; tries++) {
            CHECK(tries < 1000, "the accepting job never published %s", service);
            mt_sleep_ms(10);
        }
        MPI_OK(MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &ic));
        v = 7;
        MPI_OK(MPI_Send(&v, 1, MPI_INT, 0, 0, ic));
        mt_sleep_ms(100);
        abort();
    }
    if (argc == 1 && getenv("DYNPROC_CRASH_CHILD")) {
        /* The parent job must end, with a message, while it waits for a
         * message from its crashed child (the testlist expects failure). */
        char *args[] = {"crash", NULL};
        MPI_Comm ic;
        MPI_OK(MPI_Comm_spawn(self_exe, args, 2, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &ic, MPI_ERRCODES_IGNORE));
        int v;
        MPI_Recv(&v, 1, MPI_INT, 0, 0, ic, MPI_STATUS_IGNORE);
        MT_FAIL("received from a crashed child");
    }

    test_ports_and_names();
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    test_accept_connect_halves();
    test_join();
    test_spawn_fails();
    test_spawn(2);
    test_spawn(3);
    test_spawn_multiple();
    test_spawn_soft();
    test_spawn_widen();
    test_far_to_far();
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        printf("dynproc: all ok\n");
    MPI_OK(MPI_Finalize());
    return 0;
}
