/* RMA data movement and synchronization (MPI 5.0 chapter 12), at any
 * number of ranks (each rank's neighbours are left = rank - 1 and
 * right = rank + 1, modulo the size). Every part runs on windows of each
 * flavor: MPI_Win_create on malloc'd memory (active target parts only:
 * the standard allows locks only on MPI_Alloc_mem memory), MPI_Win_create
 * on MPI_Alloc_mem memory, MPI_Win_allocate, and MPI_Win_allocate_shared
 * when all ranks share a node. Data values are checked every time.
 *
 * - fence: MPI_Put/MPI_Get in fence epochs, to the neighbour and to self,
 *   with assertions;
 * - dtype: derived types on either side (vector origin into contiguous
 *   target, contiguous into an indexed target, a resized struct, resized
 *   single fields), holes left untouched;
 * - dispunit: displacement units 1, 4 and 12 bytes on different ranks;
 * - accumulate: MPI_SUM from every rank (exact sums), MPI_MAX, MPI_REPLACE,
 *   MPI_MINLOC on MPI_2INT, derived types, MPI_SUM under lock_all;
 * - getacc: MPI_Get_accumulate as fetch-and-add (the old values returned
 *   to all ranks chain up to the total), MPI_REPLACE, MPI_NO_OP, MPI_MAX,
 *   a strided target;
 * - fetchop: MPI_Fetch_and_op as a shared counter under lock_all (int and
 *   int64 tickets gathered: exactly 0..size*N-1), MPI_REPLACE, MPI_NO_OP;
 * - cas: MPI_Compare_and_swap elections (exactly one winner), the types it
 *   takes and refuses (MPI_ERR_TYPE), and a spin
 *   lock guarding a get-increment-put counter;
 * - passive: MPI_Win_lock exclusive/shared, reads by the target after a
 *   barrier (lock + MPI_Win_sync), an exclusive-lock counter, flush,
 *   flush_local, flush_all, flush_local_all, lock_all with MPI_MODE_NOCHECK;
 * - locks: many exclusive and shared epochs on one target; shared holders
 *   never see an exclusive holder's intermediate value;
 * - request: MPI_Rput/Rget/Raccumulate/Rget_accumulate in lock_all,
 *   completed by MPI_Wait, MPI_Test and MPI_Waitall;
 * - pscw: post/start/complete/wait in a ring (each rank exposes to its
 *   left neighbour, accesses its right), MPI_Win_test polled, NOCHECK;
 * - procnull: every RMA call with MPI_PROC_NULL is a no-op;
 * - large: MPI_Put_c and MPI_Get_c;
 * - edge: MAXLOC on MPI_DOUBLE_INT (packed size below extent), a type with
 *   no data, MPI_Get_accumulate with MPI_NO_OP and MPI_DATATYPE_NULL.
 * Arguments: parts (comma-separated, default all), then flavors
 * (create-malloc,create,allocate,shared; default all). */
#include "mpitest.h"

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

static int rank, size, left, right;
static char cur[64] = "";   /* part/flavor being run, for messages */

/* mpitest.h's MPI_OK, naming the part and flavor being run */
#undef MPI_OK
#define MPI_OK(call)                                                                          \
    do {                                                                                      \
        int mt_rc_ = (call);                                                                  \
        if (mt_rc_ != MPI_SUCCESS) {                                                          \
            char mt_msg_[MPI_MAX_ERROR_STRING];                                               \
            int mt_len_ = 0;                                                                  \
            MPI_Error_string(mt_rc_, mt_msg_, &mt_len_);                                      \
            MT_FAIL("[%s] %s returned %d: %s", cur, #call, mt_rc_, mt_msg_);                  \
        }                                                                                     \
    } while (0)

/* CHECK with the part and flavor; at least one argument after fmt */
#define CHECKF(cond, fmt, ...) CHECK(cond, "[%s] " fmt, cur, __VA_ARGS__)

static int val(int r, int i)
{
    return r * 1000 + i + 1;
}

static void same(const int *got, const int *want, int n, const char *what)
{
    for (int i = 0; i < n; i++)
        if (got[i] != want[i])
            MT_FAIL("[%s] %s: element %d is %d, expected %d", cur, what, i, got[i], want[i]);
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* ---------------------------------------------------------------- windows */

enum { F_MALLOC, F_ALLOCMEM, F_ALLOCATE, F_SHARED, NFLAVORS };
static const char *const flavor_name[NFLAVORS] = {"create-malloc", "create", "allocate", "shared"};
static int shared_ok;   /* all ranks on one node */

typedef struct {
    int flavor;
    MPI_Win win;
    void *base, *mem;
} win_t;

static void win_new(win_t *w, int flavor, MPI_Aint bytes, int du)
{
    w->flavor = flavor;
    w->mem = NULL;
    w->base = NULL;
    switch (flavor) {
    case F_MALLOC:
        w->mem = w->base = calloc(1, (size_t)bytes + 1);
        MPI_OK(MPI_Win_create(w->base, bytes, du, MPI_INFO_NULL, MPI_COMM_WORLD, &w->win));
        break;
    case F_ALLOCMEM:
        MPI_OK(MPI_Alloc_mem(bytes, MPI_INFO_NULL, &w->mem));
        w->base = w->mem;
        MPI_OK(MPI_Win_create(w->base, bytes, du, MPI_INFO_NULL, MPI_COMM_WORLD, &w->win));
        break;
    case F_ALLOCATE:
        MPI_OK(MPI_Win_allocate(bytes, du, MPI_INFO_NULL, MPI_COMM_WORLD, &w->base, &w->win));
        break;
    default:
        MPI_OK(MPI_Win_allocate_shared(bytes, du, MPI_INFO_NULL, MPI_COMM_WORLD, &w->base, &w->win));
        break;
    }
    CHECKF(w->win != MPI_WIN_NULL, "window of %ld bytes is MPI_WIN_NULL", (long)bytes);
    CHECKF(bytes == 0 || w->base != NULL, "window of %ld bytes has a NULL base", (long)bytes);
}

static void win_free(win_t *w)
{
    MPI_OK(MPI_Win_free(&w->win));
    CHECKF(w->win == MPI_WIN_NULL, "%s", "MPI_Win_free did not reset the handle");
    if (w->flavor == F_MALLOC)
        free(w->mem);
    else if (w->flavor == F_ALLOCMEM)
        MPI_OK(MPI_Free_mem(w->mem));
}

/* Passive target: the owner's stores (n ints of val(rank, i)), made public
 * by its unlock, then a barrier. */
static void init_passive(win_t *w, int n)
{
    int *b = w->base;
    MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, w->win));
    for (int i = 0; i < n; i++)
        b[i] = val(rank, i);
    MPI_OK(MPI_Win_unlock(rank, w->win));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
}

/* Passive target: the owner's view of its window after a barrier. */
static void read_own_begin(win_t *w)
{
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, w->win));
    MPI_OK(MPI_Win_sync(w->win));
}

static void read_own_end(win_t *w)
{
    MPI_OK(MPI_Win_unlock(rank, w->win));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
}

/* ---------------------------------------------------------------- types */

struct rec {
    int id;
    double x;
};

static MPI_Datatype rec_t, id_t_, x_t, vec_even16, vec5s3, idx6, iblk4, vec8s2, vec6s2, vec4s2;

static void types_create(void)
{
    int bl[2] = {1, 1};
    MPI_Aint dis[2] = {offsetof(struct rec, id), offsetof(struct rec, x)};
    MPI_Datatype ty[2] = {MPI_INT, MPI_DOUBLE}, st;
    MPI_OK(MPI_Type_create_struct(2, bl, dis, ty, &st));
    MPI_OK(MPI_Type_create_resized(st, 0, sizeof(struct rec), &rec_t));
    MPI_OK(MPI_Type_free(&st));
    MPI_OK(MPI_Type_create_resized(MPI_INT, 0, sizeof(struct rec), &id_t_));
    MPI_OK(MPI_Type_create_resized(MPI_DOUBLE, 0, sizeof(struct rec), &x_t));
    MPI_OK(MPI_Type_vector(16, 1, 2, MPI_INT, &vec_even16));
    MPI_OK(MPI_Type_vector(5, 1, 3, MPI_INT, &vec5s3));
    int ibl[3] = {1, 2, 3}, idis[3] = {0, 4, 9};
    MPI_OK(MPI_Type_indexed(3, ibl, idis, MPI_INT, &idx6));
    int bdis[4] = {0, 3, 5, 7};
    MPI_OK(MPI_Type_create_indexed_block(4, 1, bdis, MPI_INT, &iblk4));
    MPI_OK(MPI_Type_vector(8, 1, 2, MPI_INT, &vec8s2));
    MPI_OK(MPI_Type_vector(6, 1, 2, MPI_INT, &vec6s2));
    MPI_OK(MPI_Type_vector(4, 1, 2, MPI_INT, &vec4s2));
    MPI_Datatype *all[] = {&rec_t, &id_t_, &x_t, &vec_even16, &vec5s3, &idx6, &iblk4, &vec8s2, &vec6s2, &vec4s2};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        MPI_OK(MPI_Type_commit(all[i]));
}

static void types_free(void)
{
    MPI_Datatype *all[] = {&rec_t, &id_t_, &x_t, &vec_even16, &vec5s3, &idx6, &iblk4, &vec8s2, &vec6s2, &vec4s2};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        MPI_OK(MPI_Type_free(all[i]));
}

/* ---------------------------------------------------------------- fence */

static void t_fence(int f)
{
    enum { W = 64, H = W / 2 };
    win_t w;
    win_new(&w, f, W * sizeof(int), sizeof(int));
    int *b = w.base, got[W], want[W], src[H], lo[H];
    for (int i = 0; i < W; i++) {
        b[i] = val(rank, i);
        got[i] = -1;
    }
    MPI_OK(MPI_Win_fence(MPI_MODE_NOPRECEDE | MPI_MODE_NOPUT, w.win));
    MPI_OK(MPI_Get(got, W, MPI_INT, right, 0, W, MPI_INT, w.win));
    MPI_OK(MPI_Win_fence(MPI_MODE_NOSTORE, w.win));
    for (int i = 0; i < W; i++)
        want[i] = val(right, i);
    same(got, want, W, "MPI_Get of the right neighbour's window");

    for (int i = 0; i < H; i++) {
        src[i] = -val(rank, i);
        lo[i] = -1;
    }
    MPI_OK(MPI_Put(src, H, MPI_INT, right, H, H, MPI_INT, w.win));
    MPI_OK(MPI_Get(lo, H, MPI_INT, rank, 0, H, MPI_INT, w.win));
    MPI_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, w.win));
    for (int i = 0; i < H; i++) {
        want[i] = val(rank, i);
        want[H + i] = -val(left, i);
    }
    same(b, want, W, "window after the left neighbour's MPI_Put");
    same(lo, want, H, "MPI_Get from self");
    win_free(&w);
}

/* ---------------------------------------------------------------- dtype */

static void t_dtype(int f)
{
    enum { W = 64, K = 16, IDX = 16, REC = 32, SRC = 48 };
    win_t w;
    win_new(&w, f, W * sizeof(int), sizeof(int));
    int *b = w.base, want[W];
    for (int i = 0; i < W; i++)
        b[i] = val(rank, i);
    int src[2 * K], c6[6], dv[15], d4[4];
    struct rec recs[3], recs2[3];
    for (int i = 0; i < 2 * K; i++)
        src[i] = val(rank, 300 + i);
    for (int i = 0; i < 6; i++)
        c6[i] = val(rank, 400 + i);
    for (int k = 0; k < 3; k++) {
        memset(&recs[k], 0, sizeof recs[k]);
        recs[k].id = val(rank, 500 + k);
        recs[k].x = rank + 0.25 * k;
    }
    for (int i = 0; i < 15; i++)
        dv[i] = -1;
    for (int i = 0; i < 4; i++)
        d4[i] = -1;

    MPI_OK(MPI_Win_fence(0, w.win));
    /* vector origin (even elements) into 16 contiguous ints */
    MPI_OK(MPI_Put(src, 1, vec_even16, right, 0, K, MPI_INT, w.win));
    /* 6 contiguous ints into an indexed target (blocks 1, 2, 3 at 0, 4, 9) */
    MPI_OK(MPI_Put(c6, 6, MPI_INT, right, IDX, 1, idx6, w.win));
    /* resized struct on both sides */
    MPI_OK(MPI_Put(recs, 3, rec_t, right, REC, 3, rec_t, w.win));
    /* contiguous target into a vector origin; indexed-block target into contiguous origin */
    MPI_OK(MPI_Get(dv, 1, vec5s3, right, SRC, 5, MPI_INT, w.win));
    MPI_OK(MPI_Get(d4, 4, MPI_INT, right, SRC, 1, iblk4, w.win));
    MPI_OK(MPI_Win_fence(0, w.win));

    for (int i = 0; i < W; i++)
        want[i] = val(rank, i);
    for (int i = 0; i < K; i++)
        want[i] = val(left, 300 + 2 * i);
    static const int ipos[6] = {0, 4, 5, 9, 10, 11};
    for (int j = 0; j < 6; j++)
        want[IDX + ipos[j]] = val(left, 400 + j);
    same(b, want, REC, "vector and indexed puts");
    same(b + REC + 12, want + REC + 12, W - REC - 12, "window past the records");
    for (int k = 0; k < 3; k++) {
        struct rec r;
        memcpy(&r, (char *)b + REC * sizeof(int) + k * sizeof(struct rec), sizeof r);
        CHECKF(r.id == val(left, 500 + k) && r.x == left + 0.25 * k, "record %d: id %d x %g", k, r.id, r.x);
        /* the padding between id and x is no part of the type */
        if (offsetof(struct rec, x) >= 2 * sizeof(int)) {
            int pad;
            memcpy(&pad, (char *)b + REC * sizeof(int) + k * sizeof(struct rec) + sizeof(int), sizeof pad);
            int wi = REC + (int)((k * sizeof(struct rec) + sizeof(int)) / sizeof(int));
            CHECKF(pad == val(rank, wi), "record %d: padding overwritten with %d", k, pad);
        }
    }
    int wdv[15];
    for (int i = 0; i < 15; i++)
        wdv[i] = i % 3 == 0 ? val(right, SRC + i / 3) : -1;
    same(dv, wdv, 15, "MPI_Get into a vector origin");
    static const int bpos[4] = {0, 3, 5, 7};
    int wd4[4];
    for (int i = 0; i < 4; i++)
        wd4[i] = val(right, SRC + bpos[i]);
    same(d4, wd4, 4, "MPI_Get from an indexed-block target");

    /* the records put into the right neighbour, read back whole and by field */
    int ids[3] = {-1, -1, -1};
    double xs[3] = {-1, -1, -1};
    memset(recs2, 0, sizeof recs2);
    MPI_OK(MPI_Get(recs2, 3, rec_t, right, REC, 3, rec_t, w.win));
    MPI_OK(MPI_Get(ids, 3, MPI_INT, right, REC, 3, id_t_, w.win));
    MPI_OK(MPI_Get(xs, 3, MPI_DOUBLE, right, REC + (MPI_Aint)(offsetof(struct rec, x) / sizeof(int)), 3, x_t,
                   w.win));
    MPI_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, w.win));
    for (int k = 0; k < 3; k++) {
        CHECKF(recs2[k].id == recs[k].id && recs2[k].x == recs[k].x, "record %d read back: id %d x %g", k,
               recs2[k].id, recs2[k].x);
        CHECKF(ids[k] == recs[k].id, "id %d read through a resized MPI_INT: %d", k, ids[k]);
        CHECKF(xs[k] == recs[k].x, "x %d read through a resized MPI_DOUBLE: %g", k, xs[k]);
    }
    win_free(&w);
}

/* ---------------------------------------------------------------- dispunit */

static int du_of(int r)
{
    static const int du[3] = {1, 4, 12};
    return du[r % 3];
}

static void t_dispunit(int f)
{
    enum { W = 24 };   /* ints: 96 bytes */
    win_t w;
    win_new(&w, f, W * sizeof(int), du_of(rank));
    int *b = w.base, want[W], *dp = NULL, flag = 0;
    MPI_OK(MPI_Win_get_attr(w.win, MPI_WIN_DISP_UNIT, &dp, &flag));
    CHECKF(flag && dp && *dp == du_of(rank), "MPI_WIN_DISP_UNIT %d, expected %d", dp ? *dp : -1, du_of(rank));
    for (int i = 0; i < W; i++)
        b[i] = val(rank, i);
    int v = val(rank, 900), one = 1, g = -1;
    MPI_OK(MPI_Win_fence(0, w.win));
    /* bytes 24, 48 and 72 of the right neighbour, in its displacement unit */
    MPI_OK(MPI_Put(&v, 1, MPI_INT, right, 24 / du_of(right), 1, MPI_INT, w.win));
    MPI_OK(MPI_Get(&g, 1, MPI_INT, right, 48 / du_of(right), 1, MPI_INT, w.win));
    MPI_OK(MPI_Accumulate(&one, 1, MPI_INT, right, 72 / du_of(right), 1, MPI_INT, MPI_SUM, w.win));
    MPI_OK(MPI_Win_fence(0, w.win));
    for (int i = 0; i < W; i++)
        want[i] = val(rank, i);
    want[6] = val(left, 900);
    want[18] += 1;
    same(b, want, W, "puts with the target's displacement unit");
    CHECKF(g == val(right, 12), "get at byte 48 of rank %d: %d", right, g);
    win_free(&w);
}

/* ---------------------------------------------------------------- accumulate */

static void t_accumulate(int f)
{
    enum { W = 64, S0 = 0, M0 = 8, R0 = 16, RS = 24, L0 = 26, D0 = 44, T0 = 52 };
    win_t w;
    win_new(&w, f, W * sizeof(int), sizeof(int));
    int *b = w.base, want[W];
    for (int i = 0; i < W; i++)
        b[i] = val(rank, i);
    for (int i = 0; i < 8; i++) {
        b[S0 + i] = 0;
        b[M0 + i] = -1000;
        b[L0 + 2 * i] = INT_MAX;
        b[L0 + 2 * i + 1] = -1;
        b[D0 + i] = 0;
    }
    b[RS] = -5;
    int a[8], m[8], pairs[16], src2[16], c6[6], rv = val(rank, 600), rs = val(rank, 700);
    for (int i = 0; i < 8; i++) {
        a[i] = rank * 10 + i + 1;
        m[i] = (rank * 7 + i * 3) % 11 - 5;
        pairs[2 * i] = (rank + 3 * i) * 5 % 7;
        pairs[2 * i + 1] = rank;
        src2[2 * i] = rank + i;
        src2[2 * i + 1] = 9999;
    }
    for (int i = 0; i < 6; i++)
        c6[i] = rank + 1;

    MPI_OK(MPI_Win_fence(MPI_MODE_NOPRECEDE, w.win));
    for (int t = 0; t < size; t++) {
        for (int rep = 0; rep < 2; rep++)
            MPI_OK(MPI_Accumulate(a, 8, MPI_INT, t, S0, 8, MPI_INT, MPI_SUM, w.win));
        MPI_OK(MPI_Accumulate(m, 8, MPI_INT, t, M0, 8, MPI_INT, MPI_MAX, w.win));
        MPI_OK(MPI_Accumulate(&rv, 1, MPI_INT, t, R0 + rank, 1, MPI_INT, MPI_REPLACE, w.win));
        MPI_OK(MPI_Accumulate(&rs, 1, MPI_INT, t, RS, 1, MPI_INT, MPI_REPLACE, w.win));
        MPI_OK(MPI_Accumulate(pairs, 8, MPI_2INT, t, L0, 8, MPI_2INT, MPI_MINLOC, w.win));
        MPI_OK(MPI_Accumulate(src2, 1, vec8s2, t, D0, 8, MPI_INT, MPI_SUM, w.win));
        MPI_OK(MPI_Accumulate(c6, 6, MPI_INT, t, T0, 1, vec6s2, MPI_SUM, w.win));
    }
    MPI_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, w.win));

    for (int i = 0; i < W; i++)
        want[i] = val(rank, i);
    for (int i = 0; i < 8; i++) {
        want[S0 + i] = 0;
        want[M0 + i] = -1000;
        want[D0 + i] = 0;
        int best = INT_MAX, loc = -1;
        for (int r = 0; r < size; r++) {
            want[S0 + i] += 2 * (r * 10 + i + 1);
            int mr = (r * 7 + i * 3) % 11 - 5;
            if (mr > want[M0 + i])
                want[M0 + i] = mr;
            int v = (r + 3 * i) * 5 % 7;
            if (v < best) {
                best = v;
                loc = r;
            }
            want[D0 + i] += r + i;
        }
        want[L0 + 2 * i] = best;
        want[L0 + 2 * i + 1] = loc;
    }
    for (int r = 0; r < size; r++)
        want[R0 + r] = val(r, 600);
    for (int k = 0; k < 6; k++)
        want[T0 + 2 * k] += size * (size + 1) / 2;
    int ok_rs = 0;
    for (int r = 0; r < size; r++)
        ok_rs |= b[RS] == val(r, 700);
    CHECKF(ok_rs, "concurrent MPI_REPLACE left %d, no rank's value", b[RS]);
    want[RS] = b[RS];
    same(b, want, W, "accumulates");

    if (f != F_MALLOC) {
        /* MPI_SUM under lock_all: each rank adds rank + 1 three times everywhere */
        int inc = rank + 1, before = b[S0];   /* read before others may add to it */
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
        MPI_OK(MPI_Win_lock_all(0, w.win));
        for (int rep = 0; rep < 3; rep++)
            for (int t = 0; t < size; t++)
                MPI_OK(MPI_Accumulate(&inc, 1, MPI_INT, t, S0, 1, MPI_INT, MPI_SUM, w.win));
        MPI_OK(MPI_Win_unlock_all(w.win));
        read_own_begin(&w);
        CHECKF(b[S0] == before + 3 * size * (size + 1) / 2, "sum under lock_all: %d, expected %d", b[S0],
               before + 3 * size * (size + 1) / 2);
        read_own_end(&w);
    }
    win_free(&w);
}

/* ---------------------------------------------------------------- getacc */

static int cmp_pair(const void *a, const void *b)
{
    return cmp_int(a, b);   /* by the first int (the old value) */
}

static void t_getacc(int f)
{
    enum { W = 32, NI = 10, DV = 16 };
    int owner = size - 1, slot = 1 + rank;
    win_t w;
    win_new(&w, f, W * sizeof(int), sizeof(int));
    int *b = w.base;
    init_passive(&w, W);
    /* the counter at index 0 of the owner starts at 0 */
    MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, w.win));
    b[0] = 0;
    MPI_OK(MPI_Win_unlock(rank, w.win));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));

    int old[NI], inc = rank + 1, o = -1, x = 42, ten = 10, seven = 7;
    MPI_OK(MPI_Win_lock_all(0, w.win));
    for (int k = 0; k < NI; k++) {
        old[k] = -1;
        MPI_OK(MPI_Get_accumulate(&inc, 1, MPI_INT, &old[k], 1, MPI_INT, owner, 0, 1, MPI_INT, MPI_SUM, w.win));
        MPI_OK(MPI_Win_flush(owner, w.win));
    }
    /* fetch-and-set, fetch, max, fetch-and-add on my slot at the right neighbour */
    MPI_OK(MPI_Get_accumulate(&x, 1, MPI_INT, &o, 1, MPI_INT, right, slot, 1, MPI_INT, MPI_REPLACE, w.win));
    MPI_OK(MPI_Win_flush(right, w.win));
    CHECKF(o == val(right, slot), "MPI_REPLACE returned %d, expected %d", o, val(right, slot));
    o = -1;
    MPI_OK(MPI_Get_accumulate(&x, 1, MPI_INT, &o, 1, MPI_INT, right, slot, 1, MPI_INT, MPI_NO_OP, w.win));
    MPI_OK(MPI_Win_flush(right, w.win));
    CHECKF(o == 42, "MPI_NO_OP returned %d, expected 42", o);
    o = -1;
    MPI_OK(MPI_Get_accumulate(&ten, 1, MPI_INT, &o, 1, MPI_INT, right, slot, 1, MPI_INT, MPI_MAX, w.win));
    MPI_OK(MPI_Win_flush(right, w.win));
    CHECKF(o == 42, "MPI_MAX returned %d, expected 42", o);
    o = -1;
    MPI_OK(MPI_Fetch_and_op(&seven, &o, MPI_INT, right, slot, MPI_SUM, w.win));
    MPI_OK(MPI_Win_flush(right, w.win));
    CHECKF(o == 42, "MPI_Fetch_and_op(MPI_SUM) returned %d, expected 42", o);
    o = -1;
    MPI_OK(MPI_Fetch_and_op(&seven, &o, MPI_INT, right, slot, MPI_NO_OP, w.win));
    MPI_OK(MPI_Win_flush(right, w.win));
    CHECKF(o == 49, "MPI_Fetch_and_op(MPI_NO_OP) returned %d, expected 49", o);
    /* a strided target: elements DV, DV+2, DV+4, DV+6 of the right neighbour */
    int o4[4] = {1, 2, 3, 4}, r4[4] = {-1, -1, -1, -1}, g8[8], w4[4], w8[8];
    MPI_OK(MPI_Get_accumulate(o4, 4, MPI_INT, r4, 4, MPI_INT, right, DV, 1, vec4s2, MPI_SUM, w.win));
    MPI_OK(MPI_Win_flush(right, w.win));
    MPI_OK(MPI_Get(g8, 8, MPI_INT, right, DV, 8, MPI_INT, w.win));
    MPI_OK(MPI_Win_flush(right, w.win));
    for (int k = 0; k < 4; k++) {
        w4[k] = val(right, DV + 2 * k);
        w8[2 * k] = w4[k] + k + 1;
        w8[2 * k + 1] = val(right, DV + 2 * k + 1);
    }
    same(r4, w4, 4, "MPI_Get_accumulate on a strided target: old values");
    same(g8, w8, 8, "MPI_Get_accumulate on a strided target: new values");
    MPI_OK(MPI_Win_unlock_all(w.win));

    /* the old values of all ranks, sorted, chain from 0 by each one's increment */
    int *all = rank == 0 ? malloc(sizeof(int) * NI * (size_t)size) : NULL;
    MPI_OK(MPI_Gather(old, NI, MPI_INT, all, NI, MPI_INT, 0, MPI_COMM_WORLD));
    int total = NI * size * (size + 1) / 2;
    if (rank == 0) {
        int (*pr)[2] = malloc(sizeof(int[2]) * NI * (size_t)size);
        for (int r = 0; r < size; r++)
            for (int k = 0; k < NI; k++) {
                pr[r * NI + k][0] = all[r * NI + k];
                pr[r * NI + k][1] = r + 1;
            }
        qsort(pr, (size_t)(NI * size), sizeof pr[0], cmp_pair);
        int expect = 0;
        for (int i = 0; i < NI * size; i++) {
            CHECKF(pr[i][0] == expect, "fetch-and-add: old value %d (increment %d), expected %d", pr[i][0],
                   pr[i][1], expect);
            expect += pr[i][1];
        }
        CHECKF(expect == total, "increments sum to %d", expect);
        free(pr);
        free(all);
    }
    read_own_begin(&w);
    if (rank == owner)
        CHECKF(b[0] == total, "counter %d, expected %d", b[0], total);
    CHECKF(b[1 + left] == 49, "slot of rank %d: %d, expected 49", left, b[1 + left]);
    read_own_end(&w);
    win_free(&w);
}

/* ---------------------------------------------------------------- fetchop */

static void t_fetchop(int f)
{
    enum { W = 8, NT = 25 };
    int owner = size / 2;
    const int64_t big = ((int64_t)1 << 32) + 1;
    win_t w;
    win_new(&w, f, W * sizeof(int), sizeof(int));
    int *b = w.base;
    init_passive(&w, W);
    MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, w.win));
    b[0] = 0;
    int64_t zero64 = 0;
    memcpy(b + 2, &zero64, sizeof zero64);   /* an int64 counter at byte 8 */
    MPI_OK(MPI_Win_unlock(rank, w.win));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));

    int one = 1, t[NT];
    int64_t t64[NT];
    MPI_OK(MPI_Win_lock_all(0, w.win));
    for (int k = 0; k < NT; k++) {
        t[k] = -1;
        t64[k] = -1;
        MPI_OK(MPI_Fetch_and_op(&one, &t[k], MPI_INT, owner, 0, MPI_SUM, w.win));
        MPI_OK(MPI_Fetch_and_op(&big, &t64[k], MPI_INT64_T, owner, 2, MPI_SUM, w.win));
        if (k % 2)
            MPI_OK(MPI_Win_flush(owner, w.win));
    }
    MPI_OK(MPI_Win_flush_local_all(w.win));
    MPI_OK(MPI_Win_unlock_all(w.win));
    int t2[NT];
    for (int k = 0; k < NT; k++) {
        CHECKF(t64[k] >= 0 && t64[k] % big == 0, "int64 ticket %lld", (long long)t64[k]);
        t2[k] = (int)(t64[k] / big);
    }
    int *all = rank == 0 ? malloc(sizeof(int) * NT * (size_t)size) : NULL;
    for (int pass = 0; pass < 2; pass++) {
        MPI_OK(MPI_Gather(pass ? t2 : t, NT, MPI_INT, all, NT, MPI_INT, 0, MPI_COMM_WORLD));
        if (rank == 0) {
            qsort(all, (size_t)(NT * size), sizeof(int), cmp_int);
            for (int i = 0; i < NT * size; i++)
                CHECKF(all[i] == i, "%s tickets: sorted ticket %d is %d", pass ? "int64" : "int", i, all[i]);
        }
    }
    free(all);
    read_own_begin(&w);
    if (rank == owner) {
        int64_t c64;
        memcpy(&c64, b + 2, sizeof c64);
        CHECKF(b[0] == NT * size, "counter %d, expected %d", b[0], NT * size);
        CHECKF(c64 == big * NT * size, "int64 counter %lld", (long long)c64);
    }
    read_own_end(&w);

    /* swap and read on my own window */
    int five = 5, o = -1;
    MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, w.win));
    MPI_OK(MPI_Fetch_and_op(&five, &o, MPI_INT, rank, 4, MPI_REPLACE, w.win));
    MPI_OK(MPI_Win_flush(rank, w.win));
    CHECKF(o == val(rank, 4), "MPI_Fetch_and_op(MPI_REPLACE) returned %d", o);
    o = -1;
    MPI_OK(MPI_Fetch_and_op(&one, &o, MPI_INT, rank, 4, MPI_NO_OP, w.win));
    MPI_OK(MPI_Win_flush(rank, w.win));
    CHECKF(o == 5, "MPI_Fetch_and_op(MPI_NO_OP) returned %d, expected 5", o);
    MPI_OK(MPI_Win_unlock(rank, w.win));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    win_free(&w);
}

/* ---------------------------------------------------------------- cas */

static void t_cas(int f)
{
    enum { W = 16, NE = 4, LOCK = 8, COUNT = 9, NL = 5 };
    int owner = size - 1;
    win_t w;
    win_new(&w, f, W * sizeof(int), sizeof(int));
    int *b = w.base;
    init_passive(&w, W);
    MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, w.win));
    for (int e = 0; e < NE; e++)
        b[e] = -1;
    b[LOCK] = 0;
    b[COUNT] = 0;
    MPI_OK(MPI_Win_unlock(rank, w.win));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));

    int res[NE], minus1 = -1, zero = 0, one = 1, r = -1;
    MPI_OK(MPI_Win_lock_all(0, w.win));
    /* elections at rank 0 */
    for (int e = 0; e < NE; e++) {
        res[e] = -2;
        MPI_OK(MPI_Compare_and_swap(&rank, &minus1, &res[e], MPI_INT, 0, e, w.win));
        MPI_OK(MPI_Win_flush(0, w.win));
    }
    /* a spin lock at the owner guarding a get-increment-put counter */
    for (int k = 0; k < NL; k++) {
        do {
            MPI_OK(MPI_Compare_and_swap(&one, &zero, &r, MPI_INT, owner, LOCK, w.win));
            MPI_OK(MPI_Win_flush(owner, w.win));
        } while (r != 0);
        int c = -1;
        MPI_OK(MPI_Get(&c, 1, MPI_INT, owner, COUNT, 1, MPI_INT, w.win));
        MPI_OK(MPI_Win_flush(owner, w.win));
        c++;
        MPI_OK(MPI_Put(&c, 1, MPI_INT, owner, COUNT, 1, MPI_INT, w.win));
        MPI_OK(MPI_Win_flush(owner, w.win));
        MPI_OK(MPI_Compare_and_swap(&zero, &one, &r, MPI_INT, owner, LOCK, w.win));
        MPI_OK(MPI_Win_flush(owner, w.win));
        CHECKF(r == 1, "releasing the lock found %d, expected 1", r);
    }
    /* Types compare-and-swap takes (integers, characters, byte, logical,
     * multi-language) and refuses (floating point, derived), on a window
     * that returns errors. */
    MPI_OK(MPI_Win_set_errhandler(w.win, MPI_ERRORS_RETURN));
    {
        char cv = 0, cc = 0, cr;
        float fv = 0, fc = 0, fr;
        MPI_Aint av = 0, ac = 0, ar;
        MPI_Datatype four;
        MPI_OK(MPI_Type_contiguous(4, MPI_BYTE, &four));
        MPI_OK(MPI_Type_commit(&four));
        MPI_OK(MPI_Compare_and_swap(&cv, &cc, &cr, MPI_CHAR, rank, W - 1, w.win));
        MPI_OK(MPI_Compare_and_swap(&cv, &cc, &cr, MPI_BYTE, rank, W - 1, w.win));
        MPI_OK(MPI_Compare_and_swap(&cv, &cc, &cr, MPI_C_BOOL, rank, W - 1, w.win));
        MPI_OK(MPI_Compare_and_swap(&av, &ac, &ar, MPI_AINT, rank, W - 4, w.win));
        MPI_FAILS(MPI_ERR_TYPE, MPI_Compare_and_swap(&fv, &fc, &fr, MPI_FLOAT, rank, W - 1, w.win));
        MPI_FAILS(MPI_ERR_TYPE, MPI_Compare_and_swap(&fv, &fc, &fr, four, rank, W - 1, w.win));
        MPI_OK(MPI_Type_free(&four));
    }
    MPI_OK(MPI_Win_unlock_all(w.win));

    int winner[NE];
    for (int e = 0; e < NE; e++) {
        int won = res[e] == -1, n = 0, who = -1, me = won ? rank : -1;
        MPI_OK(MPI_Allreduce(&won, &n, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
        CHECKF(n == 1, "election %d: %d winners", e, n);
        MPI_OK(MPI_Allreduce(&me, &who, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
        CHECKF(won || res[e] == who, "election %d: a loser saw %d, the winner is %d", e, res[e], who);
        winner[e] = who;
    }
    read_own_begin(&w);
    if (rank == 0)
        for (int e = 0; e < NE; e++)
            CHECKF(b[e] == winner[e], "election %d: the word is %d, the winner %d", e, b[e], winner[e]);
    if (rank == owner)
        CHECKF(b[COUNT] == NL * size && b[LOCK] == 0, "guarded counter %d (expected %d), lock word %d", b[COUNT],
               NL * size, b[LOCK]);
    read_own_end(&w);

    /* a compare that fails swaps nothing */
    int x = 5, cmpv = 12345;
    r = -1;
    MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, w.win));
    MPI_OK(MPI_Compare_and_swap(&x, &cmpv, &r, MPI_INT, rank, 12, w.win));
    MPI_OK(MPI_Win_flush(rank, w.win));
    CHECKF(r == val(rank, 12), "failed compare returned %d", r);
    MPI_OK(MPI_Win_sync(w.win));
    CHECKF(b[12] == val(rank, 12), "failed compare swapped in %d", b[12]);
    MPI_OK(MPI_Win_unlock(rank, w.win));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    win_free(&w);
}

/* ---------------------------------------------------------------- passive */

static void t_passive(int f)
{
    enum { W = 48, NL = 5, CNT = 16 };
    CHECKF(size <= W - 28, "at most %d ranks", W - 28);
    win_t w;
    win_new(&w, f, W * sizeof(int), sizeof(int));
    int *b = w.base, want[W];
    init_passive(&w, W);
    MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, w.win));
    b[CNT] = 0;
    MPI_OK(MPI_Win_unlock(rank, w.win));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));

    /* exclusive lock, put, unlock; the target reads after a barrier */
    int s8[8], g8[8];
    for (int i = 0; i < 8; i++)
        s8[i] = val(rank, 100 + i);
    MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, w.win));
    MPI_OK(MPI_Put(s8, 8, MPI_INT, right, 0, 8, MPI_INT, w.win));
    MPI_OK(MPI_Win_unlock(right, w.win));
    read_own_begin(&w);
    for (int i = 0; i < 8; i++)
        want[i] = val(left, 100 + i);
    same(b, want, 8, "exclusive-lock put, read by the target");
    read_own_end(&w);

    /* shared locks: the neighbour's, and everyone on rank 0 at once */
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, w.win));
    MPI_OK(MPI_Get(g8, 8, MPI_INT, right, 8, 8, MPI_INT, w.win));
    MPI_OK(MPI_Win_unlock(right, w.win));
    for (int i = 0; i < 8; i++)
        want[i] = val(right, 8 + i);
    same(g8, want, 8, "shared-lock get");
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, w.win));
    MPI_OK(MPI_Get(g8, 8, MPI_INT, 0, 8, 8, MPI_INT, w.win));
    MPI_OK(MPI_Win_unlock(0, w.win));
    for (int i = 0; i < 8; i++)
        want[i] = val(0, 8 + i);
    same(g8, want, 8, "shared-lock get from rank 0");

    /* exclusive locks make get-increment-put a critical section */
    for (int k = 0; k < NL; k++) {
        int c = -1;
        MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, w.win));
        MPI_OK(MPI_Get(&c, 1, MPI_INT, 0, CNT, 1, MPI_INT, w.win));
        MPI_OK(MPI_Win_flush(0, w.win));
        c++;
        MPI_OK(MPI_Put(&c, 1, MPI_INT, 0, CNT, 1, MPI_INT, w.win));
        MPI_OK(MPI_Win_unlock(0, w.win));
    }
    read_own_begin(&w);
    if (rank == 0)
        CHECKF(b[CNT] == NL * size, "counter under exclusive locks %d, expected %d", b[CNT], NL * size);
    read_own_end(&w);

    /* flush: the data is at the target; flush_local: the buffer is free */
    int a4[4], b4[4], g4[4] = {-1, -1, -1, -1};
    for (int i = 0; i < 4; i++) {
        a4[i] = val(rank, 200 + i);
        b4[i] = val(rank, 300 + i);
    }
    MPI_OK(MPI_Win_lock_all(0, w.win));
    MPI_OK(MPI_Put(a4, 4, MPI_INT, right, 20, 4, MPI_INT, w.win));
    MPI_OK(MPI_Win_flush(right, w.win));
    MPI_OK(MPI_Get(g4, 4, MPI_INT, right, 20, 4, MPI_INT, w.win));
    MPI_OK(MPI_Win_flush(right, w.win));
    same(g4, a4, 4, "get after MPI_Win_flush of a put");
    MPI_OK(MPI_Put(b4, 4, MPI_INT, right, 24, 4, MPI_INT, w.win));
    MPI_OK(MPI_Win_flush_local(right, w.win));
    for (int i = 0; i < 4; i++)
        b4[i] = -7;
    MPI_OK(MPI_Win_unlock_all(w.win));
    read_own_begin(&w);
    for (int i = 0; i < 4; i++) {
        want[i] = val(left, 200 + i);
        want[4 + i] = val(left, 300 + i);
    }
    same(b + 20, want, 8, "puts completed by flush and flush_local");
    read_own_end(&w);

    /* flush_all and flush_local_all over every rank, lock_all with NOCHECK */
    int *mine = malloc(sizeof(int) * (size_t)size), *gg = malloc(sizeof(int) * (size_t)size);
    MPI_OK(MPI_Win_lock_all(MPI_MODE_NOCHECK, w.win));
    for (int t = 0; t < size; t++) {
        mine[t] = val(rank, 400 + t);
        gg[t] = -1;
        MPI_OK(MPI_Put(&mine[t], 1, MPI_INT, t, 28 + rank, 1, MPI_INT, w.win));
    }
    MPI_OK(MPI_Win_flush_all(w.win));
    for (int t = 0; t < size; t++)
        MPI_OK(MPI_Get(&gg[t], 1, MPI_INT, t, 28 + rank, 1, MPI_INT, w.win));
    MPI_OK(MPI_Win_flush_local_all(w.win));
    same(gg, mine, size, "gets after MPI_Win_flush_all");
    MPI_OK(MPI_Win_unlock_all(w.win));
    read_own_begin(&w);
    for (int r = 0; r < size; r++)
        CHECKF(b[28 + r] == val(r, 400 + rank), "slot of rank %d: %d", r, b[28 + r]);
    read_own_end(&w);
    free(mine);
    free(gg);
    win_free(&w);
}

/* ---------------------------------------------------------------- locks */

/* Many lock epochs on rank 0: exclusive ones make the counter odd, then
 * even again; shared ones must never see it odd. */
static void t_locks(int f)
{
    enum { NR = 100 };
    win_t w;
    win_new(&w, f, 4 * sizeof(int), sizeof(int));
    int *b = w.base, nex = 0, total = 0;
    MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, w.win));
    b[0] = 0;
    MPI_OK(MPI_Win_unlock(rank, w.win));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    for (int k = 0; k < NR; k++) {
        int c = -1;
        if ((k + rank) % 3 == 0) {
            MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, w.win));
            MPI_OK(MPI_Get(&c, 1, MPI_INT, 0, 0, 1, MPI_INT, w.win));
            MPI_OK(MPI_Win_flush(0, w.win));
            CHECKF(c % 2 == 0, "round %d: exclusive holder found %d", k, c);
            c++;
            MPI_OK(MPI_Put(&c, 1, MPI_INT, 0, 0, 1, MPI_INT, w.win));
            MPI_OK(MPI_Win_flush(0, w.win));
            c++;
            MPI_OK(MPI_Put(&c, 1, MPI_INT, 0, 0, 1, MPI_INT, w.win));
            MPI_OK(MPI_Win_unlock(0, w.win));
            nex++;
        } else {
            MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, w.win));
            MPI_OK(MPI_Get(&c, 1, MPI_INT, 0, 0, 1, MPI_INT, w.win));
            MPI_OK(MPI_Win_unlock(0, w.win));
            CHECKF(c % 2 == 0, "round %d: shared holder saw %d, an exclusive epoch in progress", k, c);
        }
    }
    MPI_OK(MPI_Allreduce(&nex, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    read_own_begin(&w);
    if (rank == 0)
        CHECKF(b[0] == 2 * total, "counter %d, expected %d", b[0], 2 * total);
    read_own_end(&w);
    win_free(&w);
}

/* ---------------------------------------------------------------- request */

static void t_request(int f)
{
    enum { W = 32 };
    win_t w;
    win_new(&w, f, W * sizeof(int), sizeof(int));
    int *b = w.base;
    init_passive(&w, W);

    int s8[8], keep[8], g8[8], a4[4], r4[4], want[8], x4[4], y4[4], z = left + 1, zz = rank + 1, flag = 0;
    MPI_Request q, qs[3];
    for (int i = 0; i < 8; i++)
        keep[i] = s8[i] = val(rank, 100 + i);
    for (int i = 0; i < 4; i++) {
        a4[i] = rank + 1;
        x4[i] = val(rank, 150 + i);
        y4[i] = -1;
    }
    MPI_OK(MPI_Win_lock_all(0, w.win));
    MPI_OK(MPI_Rput(s8, 8, MPI_INT, right, 0, 8, MPI_INT, w.win, &q));
    MPI_OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
    CHECKF(q == MPI_REQUEST_NULL, "%s", "MPI_Wait left the MPI_Rput request");
    for (int i = 0; i < 8; i++)
        s8[i] = -9;   /* free after local completion */
    MPI_OK(MPI_Win_flush(right, w.win));
    for (int i = 0; i < 8; i++)
        g8[i] = -1;
    MPI_OK(MPI_Rget(g8, 8, MPI_INT, right, 0, 8, MPI_INT, w.win, &q));
    MPI_OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
    same(g8, keep, 8, "MPI_Rget of what MPI_Rput wrote");

    /* accumulates from one origin to one location are ordered */
    MPI_OK(MPI_Raccumulate(a4, 4, MPI_INT, right, 8, 4, MPI_INT, MPI_SUM, w.win, &q));
    do
        MPI_OK(MPI_Test(&q, &flag, MPI_STATUS_IGNORE));
    while (!flag);
    for (int i = 0; i < 4; i++)
        r4[i] = -1;
    MPI_OK(MPI_Rget_accumulate(a4, 4, MPI_INT, r4, 4, MPI_INT, right, 8, 4, MPI_INT, MPI_SUM, w.win, &q));
    MPI_OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
    for (int i = 0; i < 4; i++)
        want[i] = val(right, 8 + i) + rank + 1;
    same(r4, want, 4, "MPI_Rget_accumulate after MPI_Raccumulate");
    MPI_OK(MPI_Rget_accumulate(NULL, 0, MPI_INT, r4, 4, MPI_INT, right, 8, 4, MPI_INT, MPI_NO_OP, w.win, &q));
    MPI_OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
    for (int i = 0; i < 4; i++)
        want[i] = val(right, 8 + i) + 2 * (rank + 1);
    same(r4, want, 4, "MPI_Rget_accumulate(MPI_NO_OP)");

    MPI_OK(MPI_Rput(x4, 4, MPI_INT, right, 16, 4, MPI_INT, w.win, &qs[0]));
    MPI_OK(MPI_Rget(y4, 4, MPI_INT, right, 24, 4, MPI_INT, w.win, &qs[1]));
    MPI_OK(MPI_Raccumulate(&zz, 1, MPI_INT, right, 28, 1, MPI_INT, MPI_SUM, w.win, &qs[2]));
    MPI_OK(MPI_Waitall(3, qs, MPI_STATUSES_IGNORE));
    for (int i = 0; i < 4; i++)
        want[i] = val(right, 24 + i);
    same(y4, want, 4, "MPI_Rget completed by MPI_Waitall");
    MPI_OK(MPI_Win_unlock_all(w.win));

    read_own_begin(&w);
    for (int i = 0; i < 8; i++)
        want[i] = val(left, 100 + i);
    same(b, want, 8, "MPI_Rput at the target");
    for (int i = 0; i < 4; i++)
        want[i] = val(rank, 8 + i) + 2 * (left + 1);
    same(b + 8, want, 4, "MPI_Raccumulate and MPI_Rget_accumulate at the target");
    for (int i = 0; i < 4; i++)
        want[i] = val(left, 150 + i);
    same(b + 16, want, 4, "MPI_Rput completed by MPI_Waitall");
    CHECKF(b[28] == val(rank, 28) + z, "MPI_Raccumulate completed by MPI_Waitall: %d", b[28]);
    read_own_end(&w);
    win_free(&w);
}

/* ---------------------------------------------------------------- pscw */

static void t_pscw(int f)
{
    enum { W = 16, H = 8 };
    win_t w;
    win_new(&w, f, W * sizeof(int), sizeof(int));
    int *b = w.base, want[W], src[H], g8[H], ones[H];
    MPI_Group wg, lg, rg;
    MPI_OK(MPI_Win_get_group(w.win, &wg));
    MPI_OK(MPI_Group_incl(wg, 1, &left, &lg));
    MPI_OK(MPI_Group_incl(wg, 1, &right, &rg));
    for (int i = 0; i < W; i++)
        b[i] = val(rank, i);
    for (int i = 0; i < H; i++) {
        src[i] = -val(rank, i);
        g8[i] = -1;
        ones[i] = 1;
    }
    /* round 1: put to the right neighbour's low half, get its high half */
    MPI_OK(MPI_Win_post(lg, 0, w.win));
    MPI_OK(MPI_Win_start(rg, 0, w.win));
    MPI_OK(MPI_Put(src, H, MPI_INT, right, 0, H, MPI_INT, w.win));
    MPI_OK(MPI_Get(g8, H, MPI_INT, right, H, H, MPI_INT, w.win));
    MPI_OK(MPI_Win_complete(w.win));
    MPI_OK(MPI_Win_wait(w.win));
    for (int i = 0; i < H; i++) {
        want[i] = -val(left, i);
        want[H + i] = val(rank, H + i);
    }
    same(b, want, W, "window after a post/start/complete/wait epoch");
    for (int i = 0; i < H; i++)
        CHECKF(g8[i] == val(right, H + i), "get in PSCW: element %d is %d", i, g8[i]);

    /* round 2: accumulate, the exposure ended by polling MPI_Win_test */
    MPI_OK(MPI_Win_post(lg, MPI_MODE_NOSTORE, w.win));
    MPI_OK(MPI_Win_start(rg, 0, w.win));
    MPI_OK(MPI_Accumulate(ones, H, MPI_INT, right, H, H, MPI_INT, MPI_SUM, w.win));
    MPI_OK(MPI_Win_complete(w.win));
    int flag = 0;
    while (!flag)
        MPI_OK(MPI_Win_test(w.win, &flag));
    for (int i = 0; i < H; i++)
        want[H + i] = val(rank, H + i) + 1;
    same(b, want, W, "window after an epoch ended by MPI_Win_test");

    /* round 3: MPI_MODE_NOCHECK on both sides, the posts known complete */
    MPI_OK(MPI_Win_post(lg, MPI_MODE_NOCHECK, w.win));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_Win_start(rg, MPI_MODE_NOCHECK, w.win));
    for (int i = 0; i < H; i++)
        src[i] = val(rank, 800 + i);
    MPI_OK(MPI_Put(src, H, MPI_INT, right, 0, H, MPI_INT, w.win));
    MPI_OK(MPI_Win_complete(w.win));
    MPI_OK(MPI_Win_wait(w.win));
    for (int i = 0; i < H; i++)
        want[i] = val(left, 800 + i);
    same(b, want, W, "window after a NOCHECK epoch");

    MPI_OK(MPI_Group_free(&lg));
    MPI_OK(MPI_Group_free(&rg));
    MPI_OK(MPI_Group_free(&wg));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    win_free(&w);
}

/* ---------------------------------------------------------------- procnull */

static void t_procnull(int f)
{
    enum { W = 8 };
    win_t w;
    win_new(&w, f, W * sizeof(int), sizeof(int));
    int *b = w.base, want[W], src[W], g[W], r1 = -7, r2 = -7, r3 = -7, one = 1, minus = -1;
    for (int i = 0; i < W; i++) {
        b[i] = want[i] = val(rank, i);
        src[i] = -3;
        g[i] = -7;
    }
    int g7[W];
    for (int i = 0; i < W; i++)
        g7[i] = -7;
    MPI_OK(MPI_Win_fence(0, w.win));
    MPI_OK(MPI_Put(src, W, MPI_INT, MPI_PROC_NULL, 0, W, MPI_INT, w.win));
    MPI_OK(MPI_Get(g, W, MPI_INT, MPI_PROC_NULL, 0, W, MPI_INT, w.win));
    MPI_OK(MPI_Accumulate(src, W, MPI_INT, MPI_PROC_NULL, 0, W, MPI_INT, MPI_SUM, w.win));
    MPI_OK(MPI_Get_accumulate(src, 1, MPI_INT, &r1, 1, MPI_INT, MPI_PROC_NULL, 0, 1, MPI_INT, MPI_SUM, w.win));
    MPI_OK(MPI_Fetch_and_op(&one, &r2, MPI_INT, MPI_PROC_NULL, 0, MPI_SUM, w.win));
    MPI_OK(MPI_Compare_and_swap(&one, &minus, &r3, MPI_INT, MPI_PROC_NULL, 0, w.win));
    MPI_OK(MPI_Win_fence(0, w.win));
    same(b, want, W, "window after RMA calls to MPI_PROC_NULL");
    same(g, g7, W, "MPI_Get from MPI_PROC_NULL");
    CHECKF(r1 == -7 && r2 == -7 && r3 == -7, "results from MPI_PROC_NULL: %d %d %d", r1, r2, r3);
    if (f != F_MALLOC) {
        MPI_Request q[2];
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
        MPI_OK(MPI_Win_lock_all(0, w.win));
        MPI_OK(MPI_Rput(src, W, MPI_INT, MPI_PROC_NULL, 0, W, MPI_INT, w.win, &q[0]));
        MPI_OK(MPI_Rget(g, W, MPI_INT, MPI_PROC_NULL, 0, W, MPI_INT, w.win, &q[1]));
        MPI_OK(MPI_Waitall(2, q, MPI_STATUSES_IGNORE));
        MPI_OK(MPI_Win_unlock_all(w.win));
        same(g, g7, W, "MPI_Rget from MPI_PROC_NULL");
        read_own_begin(&w);
        same(b, want, W, "window after MPI_Rput to MPI_PROC_NULL");
        read_own_end(&w);
    }
    win_free(&w);
}

/* ---------------------------------------------------------------- large */

static void t_large(int f)
{
    enum { W = 64, H = 32 };
    win_t w;
    win_new(&w, f, W * sizeof(int), sizeof(int));
    int *b = w.base, want[W], src[H], g[H];
    for (int i = 0; i < W; i++)
        b[i] = val(rank, i);
    for (int i = 0; i < H; i++) {
        src[i] = val(rank, 700 + i);
        g[i] = -1;
    }
    MPI_OK(MPI_Win_fence(0, w.win));
    MPI_OK(MPI_Put_c(src, (MPI_Count)H, MPI_INT, right, 0, (MPI_Count)H, MPI_INT, w.win));
    MPI_OK(MPI_Get_c(g, (MPI_Count)H, MPI_INT, right, H, (MPI_Count)H, MPI_INT, w.win));
    MPI_OK(MPI_Win_fence(0, w.win));
    for (int i = 0; i < W; i++)
        want[i] = i < H ? val(left, 700 + i) : val(rank, i);
    same(b, want, W, "MPI_Put_c");
    for (int i = 0; i < H; i++)
        want[i] = val(right, H + i);
    same(g, want, H, "MPI_Get_c");
    win_free(&w);
}

/* ---------------------------------------------------------------- main */

/* Is `name` in the comma-separated list `only` (NULL: every one)? */
static int listed(const char *only, const char *name)
{
    if (!only)
        return 1;
    size_t n = strlen(name);
    for (const char *p = only;;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len == n && !strncmp(p, name, n))
            return 1;
        if (!e)
            return 0;
        p = e + 1;
    }
}

static int all_known(const char *only, const char *const *names, int n)
{
    if (!only)
        return 1;
    int found = 0, commas = 0;
    for (int i = 0; i < n; i++)
        found += listed(only, names[i]);
    for (const char *p = only; *p; p++)
        commas += *p == ',';
    return found == commas + 1;
}

/* Accumulate corners: MAXLOC on a pair type whose packed size is below
 * its extent (MPI_DOUBLE_INT: 12 bytes in a 16-byte struct), a type with
 * no data, and MPI_Get_accumulate with MPI_NO_OP whose origin arguments
 * the standard says are ignored (MPI_DATATYPE_NULL included). */
static void t_edge(int f)
{
    enum { NP = 5 };
    struct dint {
        double v;
        int i;
    };
    win_t w;
    win_new(&w, f, NP * (MPI_Aint)sizeof(struct dint), (int)sizeof(struct dint));
    struct dint *b = w.base;
    MPI_OK(MPI_Win_fence(0, w.win));
    for (int k = 0; k < NP; k++)
        b[k] = (struct dint){-1.0, -1};
    MPI_OK(MPI_Win_fence(0, w.win));
    /* every rank offers (rank + k, rank) at slot k of rank 0: the maximum
     * is size - 1 + k, from the last rank */
    struct dint mine[NP];
    for (int k = 0; k < NP; k++)
        mine[k] = (struct dint){rank + k, rank};
    MPI_OK(MPI_Accumulate(mine, NP, MPI_DOUBLE_INT, 0, 0, NP, MPI_DOUBLE_INT, MPI_MAXLOC, w.win));
    /* no data: nothing changes, no error */
    MPI_Datatype none;
    MPI_OK(MPI_Type_contiguous(0, MPI_INT, &none));
    MPI_OK(MPI_Type_commit(&none));
    MPI_OK(MPI_Accumulate(mine, 1, none, 0, 0, 1, none, MPI_SUM, w.win));
    MPI_OK(MPI_Type_free(&none));
    MPI_OK(MPI_Win_fence(0, w.win));
    if (rank == 0)
        for (int k = 0; k < NP; k++)
            CHECKF(b[k].v == size - 1 + k && b[k].i == size - 1, "MAXLOC slot %d: (%g, %d), expected (%d, %d)", k,
                   b[k].v, b[k].i, size - 1 + k, size - 1);
    /* fetch slot 2 of rank 0 with MPI_NO_OP and no origin at all */
    struct dint got = {0, 0};
    MPI_OK(MPI_Get_accumulate(NULL, 0, MPI_DATATYPE_NULL, &got, 1, MPI_DOUBLE_INT, 0, 2, 1, MPI_DOUBLE_INT,
                              MPI_NO_OP, w.win));
    MPI_OK(MPI_Win_fence(0, w.win));
    CHECKF(got.v == size + 1 && got.i == size - 1, "MPI_NO_OP fetched (%g, %d), expected (%d, %d)", got.v, got.i,
           size + 1, size - 1);
    MPI_OK(MPI_Win_fence(0, w.win));
    win_free(&w);
}

static const struct {
    const char *name;
    void (*fn)(int flavor);
    int passive;   /* uses locks: not on malloc'd memory */
} parts[] = {
    {"fence", t_fence, 0},       {"dtype", t_dtype, 0},     {"dispunit", t_dispunit, 0},
    {"accumulate", t_accumulate, 0}, {"getacc", t_getacc, 1},   {"fetchop", t_fetchop, 1},
    {"cas", t_cas, 1},           {"passive", t_passive, 1}, {"locks", t_locks, 1},
    {"request", t_request, 1},
    {"pscw", t_pscw, 0},         {"procnull", t_procnull, 0}, {"large", t_large, 0},
    {"edge", t_edge, 0},
};
enum { NPARTS = sizeof parts / sizeof parts[0] };

int main(int argc, char **argv)
{
    const char *only = argc > 1 && strcmp(argv[1], "all") ? argv[1] : NULL;
    const char *flv = argc > 2 ? argv[2] : NULL;
    const char *pnames[NPARTS];
    for (int i = 0; i < NPARTS; i++)
        pnames[i] = parts[i].name;
    if (!all_known(only, pnames, NPARTS) || !all_known(flv, flavor_name, NFLAVORS)) {
        fprintf(stderr, "usage: rma_ops [all|part,...] [flavor,...]\n  parts:");
        for (int i = 0; i < NPARTS; i++)
            fprintf(stderr, " %s", parts[i].name);
        fprintf(stderr, "\n  flavors: create-malloc create allocate shared\n");
        return 2;
    }
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    CHECK(size <= 8, "at most 8 ranks, not %d", size);
    left = (rank + size - 1) % size;
    right = (rank + 1) % size;
    MPI_Comm node;
    int nsize = 0;
    MPI_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    MPI_OK(MPI_Comm_size(node, &nsize));
    MPI_OK(MPI_Comm_free(&node));
    int alln = nsize == size, everywhere = 0;
    MPI_OK(MPI_Allreduce(&alln, &everywhere, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
    shared_ok = everywhere;
    types_create();

    int runs = 0;
    for (int p = 0; p < NPARTS; p++) {
        if (!listed(only, parts[p].name))
            continue;
        for (int f = 0; f < NFLAVORS; f++) {
            if (!listed(flv, flavor_name[f]) || (f == F_MALLOC && parts[p].passive) ||
                (f == F_SHARED && !shared_ok))
                continue;
            snprintf(cur, sizeof cur, "%s/%s", parts[p].name, flavor_name[f]);
            parts[p].fn(f);
            runs++;
        }
    }
    snprintf(cur, sizeof cur, "end");
    types_free();
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_Finalize());
    if (rank == 0)
        printf("rma_ops %s: ok (%d runs%s)\n", only ? only : "all", runs, shared_ok ? "" : ", no shared flavor");
    return 0;
}
