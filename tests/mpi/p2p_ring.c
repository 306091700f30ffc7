/* The small-message ring between two ranks, wrapped many times: messages of
 * every size from 0 to 2 KiB (the ring's largest record) in a random order,
 * so that records of one to 33 lines start at every line of the ring, lap
 * after lap, and wrap at its end. The payloads are made of 32-bit words
 * close to the sender's count of records: where a stale line of an earlier
 * lap were taken for the next record, its bytes would look like a record
 * number the receiver expects, and the message that arrives would be the
 * wrong one (its sequence number, size and bytes are all checked).
 *
 * Pairs 2k <-> 2k+1, three phases each:
 *   "stream":   2k sends, 2k+1 receives each message as it comes;
 *   "burst":    2k+1 sleeps first, so the ring fills and messages fall back
 *               to the cells, then drains everything (order must hold);
 *   "pingpong": messages go back and forth, the receiver answering each
 *               one with a message of another random size.
 * Rings larger than 16 KiB (the default where few ranks share the node)
 * are used whole only while the consumer lags: the test asks the library
 * how far each rank's records reached into its ring (halo_tool_ring_reach)
 * and checks that the burst ran to the ring's end, and that ping-pong,
 * where every record is consumed before the next is written, kept to the
 * first 16 KiB once its first crossing of a 16 KiB boundary took it back
 * to the start.
 * Argument: messages per phase (default 20000). */
#include "mpitest.h"

#include <stdint.h>

#define MAXLEN 2048
#define TAG 11
#define LAP 16384        /* HALO_SHM_RING_LAP */
#define REC_MAX 2176     /* the largest record: header and 2 KiB, in lines */

long long halo_tool_ring_reach(int world, long long *ring_bytes);

static uint32_t lcg(uint32_t *s)
{
    *s = *s * 1664525u + 1013904223u;
    return *s >> 8;
}

/* Size of message i of a stream (same on both sides). */
static int len_of(uint32_t seed, int i)
{
    uint32_t s = seed ^ (uint32_t)i * 2654435761u;
    lcg(&s);
    uint32_t r = lcg(&s);
    return (r % 16 == 0) ? 0 : (int)(r % (MAXLEN + 1));
}

/* Word w of message i: near i, which is near the sender's record count. */
static uint32_t word_of(int i, int w)
{
    return (uint32_t)i + 1u + (uint32_t)(w % 48);
}

static void fill(unsigned char *b, int i, int n)
{
    for (int o = 0; o < n; o += 4) {
        uint32_t v = word_of(i, o / 4);
        memcpy(b + o, &v, (size_t)(n - o < 4 ? n - o : 4));
    }
}

static void check(const unsigned char *b, const MPI_Status *st, int i, int n, const char *phase)
{
    int count = -1;
    MPI_OK(MPI_Get_count(st, MPI_BYTE, &count));
    CHECK(count == n, "%s: message %d has %d bytes, expected %d", phase, i, count, n);
    for (int o = 0; o < n; o += 4) {
        uint32_t v = word_of(i, o / 4), got = 0;
        size_t k = (size_t)(n - o < 4 ? n - o : 4);
        memcpy(&got, b + o, k);
        if (memcmp(&got, &v, k) != 0)
            MT_FAIL("%s: message %d (%d bytes): word at byte %d is %u, expected %u", phase, i, n, o, got, v);
    }
}

/* Message i of n bytes from the sender to the receiver, checked there
 * (buf: a buffer of MAXLEN + 8 bytes). */
static void one_way(int sender, int partner, unsigned char *buf, int i, int n, const char *phase)
{
    if (sender) {
        fill(buf, i, n);
        MPI_OK(MPI_Send(buf, n, MPI_BYTE, partner, TAG, MPI_COMM_WORLD));
    } else {
        MPI_Status st;
        MPI_OK(MPI_Recv(buf, MAXLEN + 8, MPI_BYTE, partner, TAG, MPI_COMM_WORLD, &st));
        check(buf, &st, i, n, phase);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int nmsg = argc > 1 ? atoi(argv[1]) : 20000;
    int partner = rank ^ 1;
    unsigned char *buf = malloc(MAXLEN + 8);
    CHECK(buf, "no memory");
    if (partner < size) {
        int sender = !(rank & 1);

        /* stream */
        for (int i = 0; i < nmsg; i++)
            one_way(sender, partner, buf, i, len_of(1, i), "stream");

        /* burst: the receiver arrives late, several times */
        int per = nmsg / 10 > 0 ? nmsg / 10 : 1;
        for (int b = 0, i = 0; b < 10; b++) {
            MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
            int stop = b == 9 ? nmsg : i + per;
            if (!sender)
                mt_sleep_ms(20);
            for (; i < stop; i++)
                one_way(sender, partner, buf, i, len_of(2, i), "burst");
        }

        long long rb = 0, reach = halo_tool_ring_reach(partner, &rb);
        if (sender && rb > LAP && reach >= 0 && nmsg >= 2000)
            CHECK(reach > rb - 2 * REC_MAX,
                  "burst: records reached byte %lld of a %lld-byte ring, not its end", reach, rb);

        /* ping-pong, a different size each way */
        int settled = nmsg / 4;   /* by then each side has crossed a 16 KiB boundary */
        for (int i = 0; i < nmsg; i++) {
            if (i == settled)
                (void)halo_tool_ring_reach(partner, &rb);
            one_way(sender, partner, buf, i, len_of(3, i), "pingpong");
            one_way(!sender, partner, buf, i, len_of(4, i), "pingpong reply");
        }
        reach = halo_tool_ring_reach(partner, &rb);
        if (rb > LAP && reach >= 0 && nmsg >= 2000)
            CHECK(reach <= LAP, "pingpong: records reached byte %lld of a %lld-byte ring, beyond the "
                  "first %d bytes", reach, rb, LAP);
    }
    free(buf);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    long long ring_bytes = 0;
    if (size > 1)
        (void)halo_tool_ring_reach((rank ^ 1) < size ? (rank ^ 1) : 0, &ring_bytes);
    if (rank == 0)
        printf("p2p_ring: %d messages per phase, 0 to %d bytes, checked; rings of %lld bytes\n", nmsg, MAXLEN,
               ring_bytes);
    MPI_Finalize();
    return 0;
}
