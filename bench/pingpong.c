/* halo-pingpong: point-to-point latency and bandwidth between ranks 0 and 1,
 * in the manner of the OSU latency and bandwidth tests (latency: half the
 * round trip of a blocking ping-pong; bandwidth: a window of nonblocking
 * sends answered by one short acknowledgement). Portable MPI: builds
 * against any MPI (used to compare Halo with its peers).
 *
 *   halo-pingpong [-m MAXBYTES] [-i ITERS] [-x WARMUP] [-w WINDOW] [-s SIZE]
 *   -s SIZE: measure only this size. Output: one line per size:
 *   "<bytes> <latency us> <bandwidth MB/s>". After each size, one round trip
 * of a known pattern is checked byte by byte (a mismatch aborts). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double latency(char *buf, int size, int iters, int warmup, int rank)
{
    double t0 = 0;
    for (int i = 0; i < iters + warmup; i++) {
        if (i == warmup) {
            MPI_Barrier(MPI_COMM_WORLD);
            t0 = MPI_Wtime();
        }
        if (rank == 0) {
            MPI_Send(buf, size, MPI_CHAR, 1, 1, MPI_COMM_WORLD);
            MPI_Recv(buf, size, MPI_CHAR, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (rank == 1) {
            MPI_Recv(buf, size, MPI_CHAR, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(buf, size, MPI_CHAR, 0, 1, MPI_COMM_WORLD);
        }
    }
    return (MPI_Wtime() - t0) * 1e6 / (2.0 * iters);
}

static double bandwidth(char *buf, int size, int iters, int warmup, int window, int rank)
{
    MPI_Request *req = malloc(sizeof(MPI_Request) * (size_t)window);
    char ack;
    double t0 = 0;
    for (int i = 0; i < iters + warmup; i++) {
        if (i == warmup) {
            MPI_Barrier(MPI_COMM_WORLD);
            t0 = MPI_Wtime();
        }
        if (rank == 0) {
            for (int w = 0; w < window; w++)
                MPI_Isend(buf, size, MPI_CHAR, 1, 2, MPI_COMM_WORLD, &req[w]);
            MPI_Waitall(window, req, MPI_STATUSES_IGNORE);
            MPI_Recv(&ack, 1, MPI_CHAR, 1, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (rank == 1) {
            for (int w = 0; w < window; w++)
                MPI_Irecv(buf + (size_t)w * 0, size, MPI_CHAR, 0, 2, MPI_COMM_WORLD, &req[w]);
            MPI_Waitall(window, req, MPI_STATUSES_IGNORE);
            MPI_Send(&ack, 1, MPI_CHAR, 0, 3, MPI_COMM_WORLD);
        }
    }
    double t = MPI_Wtime() - t0;
    free(req);
    return (double)size * window * iters / t / 1e6;
}

/* One round trip of a known pattern, checked on both sides: the timed
 * loops move whatever the buffer holds. Returns 0 when every byte came
 * back as sent. */
static int check_data(char *buf, int size, int rank)
{
    int bad = 0;
    if (rank == 0) {
        for (int i = 0; i < size; i++)
            buf[i] = (char)(i * 7 + size);
        MPI_Send(buf, size, MPI_CHAR, 1, 4, MPI_COMM_WORLD);
        memset(buf, 0, (size_t)size);
        MPI_Recv(buf, size, MPI_CHAR, 1, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (int i = 0; i < size; i++)
            bad += buf[i] != (char)(i * 7 + size + 1);
    } else if (rank == 1) {
        memset(buf, 0, (size_t)size);
        MPI_Recv(buf, size, MPI_CHAR, 0, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (int i = 0; i < size; i++) {
            bad += buf[i] != (char)(i * 7 + size);
            buf[i]++;
        }
        MPI_Send(buf, size, MPI_CHAR, 0, 4, MPI_COMM_WORLD);
    }
    return bad;
}

int main(int argc, char **argv)
{
    int max = 1 << 22, iters = 0, warmup = -1, window = 64, only = -1;
    MPI_Init(&argc, &argv);
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "-m"))
            max = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "-i"))
            iters = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "-x"))
            warmup = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "-w"))
            window = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "-s"))
            only = atoi(argv[i + 1]);
    }
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2) {
        if (rank == 0)
            fprintf(stderr, "halo-pingpong needs 2 ranks\n");
        MPI_Finalize();
        return 1;
    }
    char *buf = malloc((size_t)(only > max ? only : max) + 1);
    memset(buf, 'a', (size_t)(only > max ? only : max) + 1);
    if (rank == 0)
        printf("# bytes  latency(us)  bandwidth(MB/s)\n");
    for (int s = only >= 0 ? only : 0; s <= (only >= 0 ? only : max); s = s ? s * 2 : 1) {
        int it = iters ? iters : (s <= 8192 ? 10000 : s <= 262144 ? 1000 : 100);
        int wu = warmup >= 0 ? warmup : it / 10;
        double lat = latency(buf, s, it, wu, rank);
        double bw = bandwidth(buf, s, it / 10 > 10 ? it / 10 : 10, wu / 10 + 1, window, rank);
        if (check_data(buf, s, rank)) {
            fprintf(stderr, "halo-pingpong: rank %d: the data of %d bytes came back wrong\n", rank, s);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        if (rank == 0)
            printf("%-9d %-12.3f %.1f\n", s, lat, bw);
        if (only >= 0)
            break;
    }
    free(buf);
    MPI_Finalize();
    return 0;
}
