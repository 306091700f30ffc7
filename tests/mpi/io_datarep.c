/* Data representations of file views (MPI 5.0 14.5), every result checked
 * in the file's bytes through plain POSIX reads:
 *
 * - "external32": ints stored big-endian; longs in 4 bytes (8 in memory);
 *   a vector filetype of longs whose stride scales with the file extent;
 *   an hvector whose byte stride stays as given; MPI_File_get_type_extent;
 *   MPI_File_get_view's name; explicit offsets, the individual pointer,
 *   read_at_all/write_at_all of a derived type from every rank, and
 *   write_ordered in rank order;
 * - "internal" as native bytes; an unknown name (MPI_ERR_UNSUPPORTED_DATAREP);
 * - MPI_Register_datarep: a representation whose conversion functions
 *   store each int byte-swapped plus 1000, with its extent function;
 *   MPI_Register_datarep_c with large-count functions; one with no
 *   conversion functions (native bytes); names already taken
 *   (MPI_ERR_DUP_DATAREP). */
#include "mpitest.h"

#include <fcntl.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

static int rank, size;
static char dir[512];

static void path_of(char *out, size_t n, const char *name)
{
    snprintf(out, n, "%s/%s", dir, name);
}

static long read_plain(const char *path, void *buf, size_t n)
{
    int fd = open(path, O_RDONLY);
    CHECK(fd >= 0, "cannot open %s", path);
    long got = (long)read(fd, buf, n);
    close(fd);
    return got;
}

static uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static MPI_File open_rw(const char *name)
{
    char p[600];
    path_of(p, sizeof p, name);
    MPI_File fh;
    MPI_OK(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_RDWR | MPI_MODE_CREATE | MPI_MODE_DELETE_ON_CLOSE,
                         MPI_INFO_NULL, &fh));
    MPI_OK(MPI_File_set_errhandler(fh, MPI_ERRORS_RETURN));
    return fh;
}

static void test_external32_basic(void)
{
    char p[600];
    path_of(p, sizeof p, "e32.dat");
    MPI_File fh = open_rw("e32.dat");
    MPI_OK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "external32", MPI_INFO_NULL));
    char rep[MPI_MAX_DATAREP_STRING];
    MPI_Offset disp;
    MPI_Datatype et, ft;
    MPI_OK(MPI_File_get_view(fh, &disp, &et, &ft, rep));
    CHECK(!strcmp(rep, "external32"), "get_view datarep '%s'", rep);
    MPI_Aint ext;
    MPI_OK(MPI_File_get_type_extent(fh, MPI_LONG, &ext));
    CHECK(ext == 4, "external32 file extent of MPI_LONG is %ld", (long)ext);
    MPI_OK(MPI_File_get_type_extent(fh, MPI_DOUBLE, &ext));
    CHECK(ext == 8, "external32 file extent of MPI_DOUBLE is %ld", (long)ext);
    /* Each rank writes 4 ints at its own offset. */
    int v[4];
    for (int i = 0; i < 4; i++)
        v[i] = (rank + 1) * 0x01020304 + i;
    MPI_OK(MPI_File_write_at(fh, rank * 4, v, 4, MPI_INT, MPI_STATUS_IGNORE));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    unsigned char raw[4096];
    long got = read_plain(p, raw, sizeof raw);
    CHECK(got == 16L * size, "external32 file of %ld bytes, expected %d", got, 16 * size);
    for (int r = 0; r < size; r++)
        for (int i = 0; i < 4; i++)
            CHECK(be32(raw + 16 * r + 4 * i) == (uint32_t)((r + 1) * 0x01020304 + i),
                  "int %d of rank %d stored as %08x", i, r, be32(raw + 16 * r + 4 * i));
    int back[4] = {0, 0, 0, 0};
    int peer = (rank + 1) % size;
    MPI_Status st;
    MPI_OK(MPI_File_read_at(fh, peer * 4, back, 4, MPI_INT, &st));
    int cnt;
    MPI_OK(MPI_Get_count(&st, MPI_INT, &cnt));
    CHECK(cnt == 4, "read count %d", cnt);
    for (int i = 0; i < 4; i++)
        CHECK(back[i] == (peer + 1) * 0x01020304 + i, "read back %d: %d", i, back[i]);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));

    /* Longs: 4 bytes each in the file. */
    MPI_OK(MPI_File_set_view(fh, 0, MPI_LONG, MPI_LONG, "external32", MPI_INFO_NULL));
    long lv[3] = {rank * 10L + 1, -(rank * 10L + 2), rank * 10L + 3};
    MPI_OK(MPI_File_seek(fh, rank * 3, MPI_SEEK_SET));
    MPI_OK(MPI_File_write(fh, lv, 3, MPI_LONG, MPI_STATUS_IGNORE));
    MPI_Offset pos;
    MPI_OK(MPI_File_get_position(fh, &pos));
    CHECK(pos == rank * 3 + 3, "individual pointer at %lld after 3 longs", (long long)pos);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    got = read_plain(p, raw, sizeof raw);
    for (int r = 0; r < size; r++) {
        CHECK((int32_t)be32(raw + 12 * r) == r * 10 + 1, "long 0 of rank %d: %d", r, (int32_t)be32(raw + 12 * r));
        CHECK((int32_t)be32(raw + 12 * r + 4) == -(r * 10 + 2), "long 1 of rank %d", r);
    }
    long lb[3] = {0, 0, 0};
    MPI_OK(MPI_File_read_at(fh, peer * 3, lb, 3, MPI_LONG, MPI_STATUS_IGNORE));
    CHECK(lb[0] == peer * 10L + 1 && lb[1] == -(peer * 10L + 2) && lb[2] == peer * 10L + 3,
          "longs read back %ld %ld %ld", lb[0], lb[1], lb[2]);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (et != MPI_INT)
        MPI_OK(MPI_Type_free(&et));
    if (ft != MPI_INT)
        MPI_OK(MPI_Type_free(&ft));
    MPI_OK(MPI_File_close(&fh));
}

/* A vector of longs scales its stride with the file extent (4), an
 * hvector keeps its byte stride. Rank 0 alone writes. */
static void test_external32_layout(void)
{
    char p[600];
    path_of(p, sizeof p, "layout.dat");
    MPI_File fh = open_rw("layout.dat");
    MPI_Datatype vec, hvec;
    MPI_OK(MPI_Type_vector(2, 1, 2, MPI_LONG, &vec));       /* file: longs at 0 and 8 */
    MPI_OK(MPI_Type_commit(&vec));
    MPI_OK(MPI_Type_create_hvector(2, 1, 12, MPI_INT, &hvec));   /* file: ints at 0 and 12 */
    MPI_OK(MPI_Type_commit(&hvec));
    MPI_OK(MPI_File_set_view(fh, 0, MPI_LONG, vec, "external32", MPI_INFO_NULL));
    MPI_Aint ext;
    MPI_OK(MPI_File_get_type_extent(fh, vec, &ext));
    CHECK(ext == 12, "file extent of vector(2,1,2,long) in external32: %ld", (long)ext);
    unsigned char raw[256];
    if (rank == 0) {
        long v[4] = {11, 22, 33, 44};
        MPI_OK(MPI_File_write_at(fh, 0, v, 4, MPI_LONG, MPI_STATUS_IGNORE));
        /* Tiles of extent 12: longs at 0, 8, 12, 20. */
        long got = read_plain(p, raw, sizeof raw);
        CHECK(got == 24, "file of %ld bytes after the vector view", got);
        CHECK(be32(raw) == 11 && be32(raw + 8) == 22 && be32(raw + 12) == 33 && be32(raw + 20) == 44,
              "vector layout: %u %u %u %u", be32(raw), be32(raw + 8), be32(raw + 12), be32(raw + 20));
        long b[4] = {0, 0, 0, 0};
        MPI_OK(MPI_File_read_at(fh, 0, b, 4, MPI_LONG, MPI_STATUS_IGNORE));
        CHECK(b[0] == 11 && b[1] == 22 && b[2] == 33 && b[3] == 44, "vector read back");
    }
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_File_set_view(fh, 100, MPI_INT, hvec, "external32", MPI_INFO_NULL));
    if (rank == 0) {
        int v[2] = {0x0a0b0c0d, 0x01020304};
        MPI_OK(MPI_File_write_at(fh, 0, v, 2, MPI_INT, MPI_STATUS_IGNORE));
        long got = read_plain(p, raw, sizeof raw);
        CHECK(got == 100 + 16, "file of %ld bytes after the hvector view", got);
        CHECK(be32(raw + 100) == 0x0a0b0c0d && be32(raw + 112) == 0x01020304, "hvector layout: %08x %08x",
              be32(raw + 100), be32(raw + 112));
    }
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_Type_free(&vec));
    MPI_OK(MPI_Type_free(&hvec));
    MPI_OK(MPI_File_close(&fh));
}

/* Collective accesses of a derived memory type, and ordered writes. */
static void test_external32_collective(void)
{
    char p[600];
    path_of(p, sizeof p, "coll.dat");
    MPI_File fh = open_rw("coll.dat");
    MPI_Datatype two;   /* two ints 3 apart in memory */
    MPI_OK(MPI_Type_vector(2, 1, 3, MPI_INT, &two));
    MPI_OK(MPI_Type_commit(&two));
    MPI_OK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "external32", MPI_INFO_NULL));
    int m[4] = {rank * 100 + 1, -1, -1, rank * 100 + 2};
    MPI_OK(MPI_File_write_at_all(fh, rank * 2, m, 1, two, MPI_STATUS_IGNORE));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    unsigned char raw[4096];
    long got = read_plain(p, raw, sizeof raw);
    CHECK(got == 8L * size, "collective file of %ld bytes", got);
    for (int r = 0; r < size; r++)
        CHECK(be32(raw + 8 * r) == (uint32_t)(r * 100 + 1) && be32(raw + 8 * r + 4) == (uint32_t)(r * 100 + 2),
              "collective ints of rank %d", r);
    int b[4] = {7, 7, 7, 7};
    int peer = (rank + size - 1) % size;
    MPI_OK(MPI_File_read_at_all(fh, peer * 2, b, 1, two, MPI_STATUS_IGNORE));
    CHECK(b[0] == peer * 100 + 1 && b[1] == 7 && b[2] == 7 && b[3] == peer * 100 + 2,
          "collective read %d %d %d %d", b[0], b[1], b[2], b[3]);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_File_set_size(fh, 0));
    MPI_OK(MPI_File_set_view(fh, 0, MPI_LONG, MPI_LONG, "external32", MPI_INFO_NULL));
    long lv[2] = {rank, rank + 1000};
    MPI_OK(MPI_File_write_ordered(fh, lv, 2, MPI_LONG, MPI_STATUS_IGNORE));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    got = read_plain(p, raw, sizeof raw);
    CHECK(got == 8L * size, "ordered file of %ld bytes", got);
    for (int r = 0; r < size; r++)
        CHECK(be32(raw + 8 * r) == (uint32_t)r && be32(raw + 8 * r + 4) == (uint32_t)(r + 1000),
              "ordered longs of rank %d", r);
    MPI_OK(MPI_Type_free(&two));
    MPI_OK(MPI_File_close(&fh));
}

/* ---------------------------------------------------------------- registered */

static int conv_calls;

/* File form of an int: byte-swapped, plus 1000. */
static int swap_write(void *userbuf, MPI_Datatype type, int count, void *filebuf, MPI_Offset position,
                      void *extra)
{
    CHECK(type == MPI_INT && extra == &conv_calls, "write conversion called with another type or state");
    const int *u = (const int *)userbuf + position;
    unsigned char *f = filebuf;
    for (int i = 0; i < count; i++) {
        uint32_t x = (uint32_t)(u[i] + 1000);
        f[4 * i] = (unsigned char)(x >> 24);
        f[4 * i + 1] = (unsigned char)(x >> 16);
        f[4 * i + 2] = (unsigned char)(x >> 8);
        f[4 * i + 3] = (unsigned char)x;
    }
    conv_calls++;
    return MPI_SUCCESS;
}

static int swap_read(void *userbuf, MPI_Datatype type, int count, void *filebuf, MPI_Offset position,
                     void *extra)
{
    CHECK(type == MPI_INT && extra == &conv_calls, "read conversion called with another type or state");
    int *u = (int *)userbuf + position;
    for (int i = 0; i < count; i++)
        u[i] = (int)be32((unsigned char *)filebuf + 4 * i) - 1000;
    conv_calls++;
    return MPI_SUCCESS;
}

static int swap_write_c(void *userbuf, MPI_Datatype type, MPI_Count count, void *filebuf, MPI_Offset position,
                        void *extra)
{
    return swap_write(userbuf, type, (int)count, filebuf, position, extra);
}

static int swap_read_c(void *userbuf, MPI_Datatype type, MPI_Count count, void *filebuf, MPI_Offset position,
                       void *extra)
{
    return swap_read(userbuf, type, (int)count, filebuf, position, extra);
}

static int four_bytes(MPI_Datatype type, MPI_Aint *extent, void *extra)
{
    (void)extra;
    int sz;
    MPI_Type_size(type, &sz);
    *extent = sz;
    return MPI_SUCCESS;
}

static void test_registered(void)
{
    MPI_OK(MPI_Register_datarep("halo-test-swap", swap_read, swap_write, four_bytes, &conv_calls));
    MPI_FAILS(MPI_ERR_DUP_DATAREP, MPI_Register_datarep("halo-test-swap", swap_read, swap_write, four_bytes,
                                                        &conv_calls));
    MPI_FAILS(MPI_ERR_DUP_DATAREP, MPI_Register_datarep("external32", swap_read, swap_write, four_bytes, NULL));
    MPI_FAILS(MPI_ERR_DUP_DATAREP, MPI_Register_datarep("native", NULL, NULL, four_bytes, NULL));
    MPI_FAILS(MPI_ERR_ARG, MPI_Register_datarep("", NULL, NULL, four_bytes, NULL));
    MPI_FAILS(MPI_ERR_ARG, MPI_Register_datarep("halo-test-noextent", NULL, NULL, NULL, NULL));
    /* The message names the call and the name taken. */
    char msg[MPI_MAX_ERROR_STRING];
    int len, rc = MPI_Register_datarep("halo-test-swap", NULL, NULL, four_bytes, NULL);
    MPI_OK(MPI_Error_string(rc, msg, &len));
    CHECK(strstr(msg, "MPI_Register_datarep") && strstr(msg, "halo-test-swap"), "message \"%s\"", msg);
    MPI_OK(MPI_Register_datarep_c("halo-test-swap-c", swap_read_c, swap_write_c, four_bytes, &conv_calls));
    MPI_OK(MPI_Register_datarep("halo-test-plain", MPI_CONVERSION_FN_NULL, MPI_CONVERSION_FN_NULL, four_bytes,
                                NULL));
    const char *names[2] = {"halo-test-swap", "halo-test-swap-c"};
    char p[600];
    path_of(p, sizeof p, "user.dat");
    unsigned char raw[4096];
    for (int k = 0; k < 2; k++) {
        MPI_File fh = open_rw("user.dat");
        MPI_OK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, names[k], MPI_INFO_NULL));
        char rep[MPI_MAX_DATAREP_STRING];
        MPI_Offset disp;
        MPI_Datatype et, ft;
        MPI_OK(MPI_File_get_view(fh, &disp, &et, &ft, rep));
        CHECK(!strcmp(rep, names[k]), "get_view datarep '%s'", rep);
        int before = conv_calls;
        int v[2] = {rank * 7, rank * 7 + 1};
        MPI_OK(MPI_File_write_at(fh, rank * 2, v, 2, MPI_INT, MPI_STATUS_IGNORE));
        CHECK(conv_calls > before, "the write conversion function was not called");
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
        long got = read_plain(p, raw, sizeof raw);
        CHECK(got == 8L * size, "user representation file of %ld bytes", got);
        for (int r = 0; r < size; r++)
            CHECK(be32(raw + 8 * r) == (uint32_t)(r * 7 + 1000) && be32(raw + 8 * r + 4) == (uint32_t)(r * 7 + 1001),
                  "rank %d's ints in \"%s\": %u %u", r, names[k], be32(raw + 8 * r), be32(raw + 8 * r + 4));
        int b[2] = {0, 0}, peer = (rank + 1) % size;
        MPI_OK(MPI_File_read_at(fh, peer * 2, b, 2, MPI_INT, MPI_STATUS_IGNORE));
        CHECK(b[0] == peer * 7 && b[1] == peer * 7 + 1, "read back through \"%s\": %d %d", names[k], b[0], b[1]);
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
        MPI_OK(MPI_File_close(&fh));
    }
    /* No conversion functions: native bytes. */
    MPI_File fh = open_rw("user.dat");
    MPI_OK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "halo-test-plain", MPI_INFO_NULL));
    int v = 0x11223344 + rank;
    MPI_OK(MPI_File_write_at(fh, rank, &v, 1, MPI_INT, MPI_STATUS_IGNORE));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    long got = read_plain(p, raw, sizeof raw);
    CHECK(got == 4L * size, "plain representation file of %ld bytes", got);
    for (int r = 0; r < size; r++) {
        int x;
        memcpy(&x, raw + 4 * r, 4);
        CHECK(x == 0x11223344 + r, "plain int of rank %d: %x", r, x);
    }
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_File_close(&fh));
}

static void test_names(void)
{
    MPI_File fh = open_rw("names.dat");
    MPI_FAILS(MPI_ERR_UNSUPPORTED_DATAREP,
              MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "no-such-representation", MPI_INFO_NULL));
    MPI_OK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "internal", MPI_INFO_NULL));
    char rep[MPI_MAX_DATAREP_STRING];
    MPI_Offset disp;
    MPI_Datatype et, ft;
    MPI_OK(MPI_File_get_view(fh, &disp, &et, &ft, rep));
    CHECK(!strcmp(rep, "internal"), "get_view datarep '%s'", rep);
    MPI_Aint ext;
    MPI_OK(MPI_File_get_type_extent(fh, MPI_LONG, &ext));
    CHECK(ext == (MPI_Aint)sizeof(long), "internal extent of MPI_LONG: %ld", (long)ext);
    MPI_OK(MPI_File_close(&fh));
}

int main(int argc, char **argv)
{
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    if (rank == 0) {
        const char *base = getenv("TMPDIR");
        snprintf(dir, sizeof dir, "%s/halo-io-datarep-XXXXXX", base && *base ? base : "/tmp");
        CHECK(mkdtemp(dir) != NULL, "mkdtemp");
    }
    MPI_OK(MPI_Bcast(dir, sizeof dir, MPI_CHAR, 0, MPI_COMM_WORLD));
    test_names();
    test_external32_basic();
    test_external32_layout();
    test_external32_collective();
    test_registered();
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) {
        CHECK(rmdir(dir) == 0, "the directory %s is not empty", dir);
        printf("io_datarep: all ok\n");
    }
    MPI_OK(MPI_Finalize());
    (void)argc;
    return 0;
}
