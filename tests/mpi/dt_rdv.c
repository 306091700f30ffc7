/* Rendezvous of non-contiguous send types in every form the sender can
 * choose (pt2pt/protocol.c, rdv_shape): short runs pushed chunk by chunk
 * (every other push from its last chunk to its first; one size ends in a
 * short chunk),
 * medium runs pushed (up to 256 KiB) or packed and read (above), long runs
 * read in place from their list (including a tiny run among long ones),
 * one run that starts past the buffer's start (read in place; split by a
 * contiguous receive, the sender writing its half from the run).
 * Each goes into a contiguous receive, a receive type of short runs (read
 * through a bounce buffer), one of 4 KiB runs (read with iovecs), and a
 * receive too small for it (MPI_ERR_TRUNCATE, the prefix delivered); the
 * receive is posted before the message arrives or after (unexpected).
 * Then persistent sends restarted with new contents, and sends to self.
 * Every byte of the receive buffer is checked: inside the type map it
 * holds the sender's byte of the same packed position, outside it keeps
 * its old value. Pairs 2k -> 2k+1, both directions. */
#include "mpitest.h"

#include <stdint.h>

#define SENTINEL 0xEE

/* A layout: the blocks (offset, length) of a type map, in packed order. */
typedef struct {
    long n;
    long *off, *len;
    long span;     /* bytes of buffer the blocks reach */
    long bytes;    /* sum of the lengths */
} layout_t;

static int rank, size, partner;

static unsigned char gen(long off, int salt)
{
    uint64_t x = (uint64_t)off * 0x9e3779b97f4a7c15ull + (uint64_t)salt * 0x632be59bd9b4e019ull;
    return (unsigned char)(x >> 56);
}

static layout_t vec_layout(long count, long blk, long stride)
{
    layout_t l = {count, malloc(sizeof(long) * (size_t)count), malloc(sizeof(long) * (size_t)count), 0, 0};
    for (long i = 0; i < count; i++) {
        l.off[i] = i * stride;
        l.len[i] = blk;
    }
    l.span = (count - 1) * stride + blk;
    l.bytes = count * blk;
    return l;
}

static layout_t list_layout(int n, const long *lens, long gap)
{
    layout_t l = {n, malloc(sizeof(long) * (size_t)n), malloc(sizeof(long) * (size_t)n), 0, 0};
    long o = 0;
    for (int i = 0; i < n; i++) {
        l.off[i] = o;
        l.len[i] = lens[i];
        o += lens[i] + gap;
        l.bytes += lens[i];
    }
    l.span = o - gap;
    return l;
}

/* One run of len bytes that starts off bytes into the buffer (the type's
 * data does not start at its buffer: a sender reads it in place from
 * there, and a split receive asks it to write its half from there too). */
static layout_t run_layout(long off, long len)
{
    layout_t l = vec_layout(1, len, len);
    l.off[0] = off;
    l.span = off + len;
    return l;
}

static MPI_Datatype layout_type(const layout_t *l)
{
    MPI_Datatype t;
    MPI_Aint *d = malloc(sizeof(MPI_Aint) * (size_t)l->n);
    int *b = malloc(sizeof(int) * (size_t)l->n);
    for (long i = 0; i < l->n; i++) {
        d[i] = l->off[i];
        b[i] = (int)l->len[i];
    }
    MPI_OK(MPI_Type_create_hindexed((int)l->n, b, d, MPI_BYTE, &t));
    MPI_OK(MPI_Type_commit(&t));
    free(d);
    free(b);
    return t;
}

static void layout_free(layout_t *l)
{
    free(l->off);
    free(l->len);
}


static void fill_send(unsigned char *buf, long span, int salt)
{
    for (long o = 0; o < span; o++)
        buf[o] = gen(o, salt);
}

/* Checks rbuf (receive layout rl, n bytes delivered) against the sender's
 * layout sl; returns the number of wrong bytes (the first few printed). */
static long check_recv(const char *what, const unsigned char *rbuf, const layout_t *rl, const layout_t *sl,
                       long n, int salt)
{
    unsigned char *want = malloc((size_t)rl->span);
    memset(want, SENTINEL, (size_t)rl->span);
    /* walk both layouts in packed order: sender block si, byte sj */
    long k = 0, si = 0, sj = 0;
    for (long i = 0; i < rl->n && k < n; i++)
        for (long j = 0; j < rl->len[i] && k < n; j++, k++) {
            while (sj == sl->len[si]) {
                si++;
                sj = 0;
            }
            want[rl->off[i] + j] = gen(sl->off[si] + sj++, salt);
        }
    long bad = 0;
    for (long o = 0; o < rl->span; o++)
        if (rbuf[o] != want[o] && bad++ < 3)
            fprintf(stderr, "rank %d: %s: byte %ld is 0x%02x, expected 0x%02x\n", rank, what, o, rbuf[o],
                    want[o]);
    free(want);
    return bad;
}

typedef struct {
    const char *name;
    layout_t l;
} shape_t;

/* One transfer from the sender's shape into the receive layout; `late`
 * posts the receive after the message has arrived; `cap` < the message
 * makes a truncating receive. */
static void one(int sender, shape_t *s, const layout_t *rl, const char *rname, int late, int tag)
{
    char what[160];
    snprintf(what, sizeof what, "%s -> %s%s", s->name, rname, late ? " (unexpected)" : "");
    if (sender) {
        unsigned char *sbuf = malloc((size_t)s->l.span);
        fill_send(sbuf, s->l.span, tag);
        MPI_Datatype st = layout_type(&s->l);
        MPI_Request q;
        MPI_OK(MPI_Isend(sbuf, 1, st, partner, tag, MPI_COMM_WORLD, &q));
        MPI_OK(MPI_Type_free(&st));
        if (late)
            MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
        MPI_OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
        free(sbuf);
        return;
    }
    unsigned char *rbuf = malloc((size_t)rl->span);
    memset(rbuf, SENTINEL, (size_t)rl->span);
    MPI_Datatype rt = layout_type(rl);
    if (late) {
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
        int flag = 0;
        while (!flag)
            MPI_OK(MPI_Iprobe(partner, tag, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
    }
    MPI_Status st;
    int rc = MPI_Recv(rbuf, 1, rt, partner, tag, MPI_COMM_WORLD, &st);
    long n = s->l.bytes < rl->bytes ? s->l.bytes : rl->bytes;
    if (s->l.bytes > rl->bytes) {
        int cls = -1;
        MPI_Error_class(rc, &cls);
        CHECK(cls == MPI_ERR_TRUNCATE, "%s: error class %d, expected MPI_ERR_TRUNCATE", what, cls);
    } else {
        MPI_OK(rc);
    }
    int got = -1;
    MPI_OK(MPI_Get_count(&st, MPI_BYTE, &got));
    CHECK(got == n, "%s: Get_count %d bytes, expected %ld", what, got, n);
    CHECK(check_recv(what, rbuf, rl, &s->l, n, tag) == 0, "%s: wrong data", what);
    MPI_OK(MPI_Type_free(&rt));
    free(rbuf);
}

/* A persistent send restarted with new contents each time. */
static void persistent(int sender, shape_t *s, int tag)
{
    unsigned char *buf = malloc((size_t)s->l.span);
    MPI_Datatype t = layout_type(&s->l);
    MPI_Request q;
    if (sender)
        MPI_OK(MPI_Send_init(buf, 1, t, partner, tag, MPI_COMM_WORLD, &q));
    else
        MPI_OK(MPI_Recv_init(buf, 1, t, partner, tag, MPI_COMM_WORLD, &q));
    for (int round = 0; round < 3; round++) {
        if (sender)
            fill_send(buf, s->l.span, tag + round);
        else
            memset(buf, SENTINEL, (size_t)s->l.span);
        MPI_OK(MPI_Start(&q));
        MPI_OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
        if (!sender) {
            char what[160];
            snprintf(what, sizeof what, "persistent %s, start %d", s->name, round + 1);
            CHECK(check_recv(what, buf, &s->l, &s->l, s->l.bytes, tag + round) == 0, "%s: wrong data", what);
        }
    }
    MPI_OK(MPI_Request_free(&q));
    MPI_OK(MPI_Type_free(&t));
    free(buf);
}

/* To this rank itself: the self transport reads the runs in place too. */
static void to_self(shape_t *s, const layout_t *rl, const char *rname, int tag)
{
    unsigned char *sbuf = malloc((size_t)s->l.span), *rbuf = malloc((size_t)rl->span);
    fill_send(sbuf, s->l.span, tag);
    memset(rbuf, SENTINEL, (size_t)rl->span);
    MPI_Datatype st = layout_type(&s->l), rt = layout_type(rl);
    MPI_Request q;
    MPI_OK(MPI_Isend(sbuf, 1, st, rank, tag, MPI_COMM_WORLD, &q));
    MPI_OK(MPI_Recv(rbuf, 1, rt, rank, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    MPI_OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
    char what[160];
    snprintf(what, sizeof what, "self: %s -> %s", s->name, rname);
    CHECK(check_recv(what, rbuf, rl, &s->l, s->l.bytes, tag) == 0, "%s: wrong data", what);
    MPI_OK(MPI_Type_free(&st));
    MPI_OK(MPI_Type_free(&rt));
    free(sbuf);
    free(rbuf);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    static const long mixed[] = {20000, 40000, 16, 70000, 30000};
    shape_t shapes[] = {
        {"8-byte runs, 64 KiB (pushed)", vec_layout(8192, 8, 24)},
        {"1 KiB runs, 128 KiB (pushed)", vec_layout(128, 1024, 1040)},
        {"8-byte runs, 100 KiB + 8 (pushed, short last chunk)", vec_layout(12801, 8, 24)},
        {"1 KiB runs, 512 KiB (packed, read)", vec_layout(512, 1024, 2048)},
        {"16 KiB runs, 512 KiB (runs read in place)", vec_layout(32, 16384, 20000)},
        {"mixed long and tiny runs (runs read in place)", list_layout(5, mixed, 100)},
        {"one run 8 bytes into the buffer, 256 KiB (read in place, split)", run_layout(8, 262144)},
    };
    int nshapes = (int)(sizeof shapes / sizeof *shapes);
    partner = rank ^ 1;
    int tag = 1;
    if (partner < size) {
        for (int dir = 0; dir < 2; dir++) {
            int sender = (rank & 1) == dir;
            for (int i = 0; i < nshapes; i++) {
                long bytes = shapes[i].l.bytes;
                layout_t rl[4] = {vec_layout(1, bytes, bytes), vec_layout(bytes / 8 + 1, 8, 16),
                                  vec_layout(bytes / 4096 + 1, 4096, 4100), vec_layout(1, bytes / 2, bytes / 2)};
                const char *rn[4] = {"contiguous", "8-byte runs", "4 KiB runs", "half the size"};
                for (int k = 0; k < 4; k++)
                    for (int late = 0; late < 2; late++)
                        one(sender, &shapes[i], &rl[k], rn[k], late, tag++);
                for (int k = 0; k < 4; k++)
                    layout_free(&rl[k]);
            }
            for (int i = 0; i < nshapes; i++, tag += 3)
                persistent(sender, &shapes[i], tag);
        }
    }
    for (int i = 0; i < nshapes; i++) {
        long bytes = shapes[i].l.bytes;
        layout_t rl = vec_layout(bytes / 4096 + 1, 4096, 4100), rc = vec_layout(1, bytes, bytes);
        to_self(&shapes[i], &rl, "4 KiB runs", tag++);
        to_self(&shapes[i], &rc, "contiguous", tag++);
        layout_free(&rl);
        layout_free(&rc);
    }
    for (int i = 0; i < nshapes; i++)
        layout_free(&shapes[i].l);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        printf("dt_rdv: ok\n");
    MPI_Finalize();
    return 0;
}
