/* MPI-IO (MPI 5.0 chapter 14) on files of a private directory, every
 * result checked byte for byte in the file through plain POSIX reads:
 *
 * - open: every amode error, MPI_ERR_NO_SUCH_FILE, MPI_ERR_FILE_EXISTS
 *   (MPI_MODE_EXCL), a directory, MPI_File_delete, MPI_MODE_DELETE_ON_CLOSE,
 *   MPI_MODE_APPEND, get_amode, get_group, info, the default file error
 *   handler (MPI_FILE_NULL's) taking the errors of MPI_File_open;
 * - explicit offsets: write_at/read_at, a read past the end of the file;
 * - pointers: individual pointer, seek (set, cur, end), get_position,
 *   get_byte_offset under a view with a displacement;
 * - strided: a filetype of one block every `size` blocks, each rank its
 *   interleaved blocks, written with write_all from a non-contiguous
 *   memory type, read back through the view and plainly;
 * - collective: _all and _at_all, split collectives;
 * - nonblocking: iwrite/iread (+_at, _all) completed with MPI_Wait;
 * - shared: write_shared from every rank (each record present once),
 *   write_ordered/read_ordered (rank order), seek_shared;
 * - size: set_size, preallocate, get_size; atomicity flag;
 * - errors: classes under the default MPI_ERRORS_RETURN.
 * At the end the directory must be empty (nothing left behind). */
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

/* The file's bytes as POSIX sees them (after the writers' barrier). */
static long read_plain(const char *path, void *buf, size_t n)
{
    int fd = open(path, O_RDONLY);
    CHECK(fd >= 0, "cannot open %s", path);
    long got = (long)read(fd, buf, n);
    close(fd);
    return got;
}

static long plain_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

static void test_open(void)
{
    char p[600], d[600];
    MPI_File fh;
    path_of(p, sizeof p, "open.dat");
    MPI_FAILS(MPI_ERR_AMODE, MPI_File_open(MPI_COMM_WORLD, p, 0, MPI_INFO_NULL, &fh));
    MPI_FAILS(MPI_ERR_AMODE, MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_RDONLY | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    MPI_FAILS(MPI_ERR_AMODE, MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_RDONLY | MPI_MODE_CREATE, MPI_INFO_NULL, &fh));
    MPI_FAILS(MPI_ERR_AMODE, MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_RDONLY | MPI_MODE_EXCL, MPI_INFO_NULL, &fh));
    MPI_FAILS(MPI_ERR_AMODE,
              MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_RDWR | MPI_MODE_SEQUENTIAL, MPI_INFO_NULL, &fh));
    MPI_FAILS(MPI_ERR_AMODE, MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_WRONLY | 1 << 20, MPI_INFO_NULL, &fh));
    MPI_FAILS(MPI_ERR_NO_SUCH_FILE, MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    CHECK(fh == MPI_FILE_NULL, "a failed open returns MPI_FILE_NULL");
    path_of(d, sizeof d, "");
    MPI_FAILS(MPI_ERR_BAD_FILE, MPI_File_open(MPI_COMM_WORLD, d, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));

    /* Created once (EXCL), the second EXCL open fails on every rank. */
    MPI_Info info;
    MPI_OK(MPI_Info_create(&info));
    MPI_OK(MPI_Info_set(info, "halo_test_hint", "42"));
    MPI_OK(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_RDWR | MPI_MODE_CREATE | MPI_MODE_EXCL, info, &fh));
    MPI_OK(MPI_Info_free(&info));
    int amode = 0;
    MPI_OK(MPI_File_get_amode(fh, &amode));
    CHECK_INT(amode, MPI_MODE_RDWR | MPI_MODE_CREATE | MPI_MODE_EXCL);
    MPI_Group g, wg;
    int cmp = -1;
    MPI_OK(MPI_File_get_group(fh, &g));
    MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &wg));
    MPI_OK(MPI_Group_compare(g, wg, &cmp));
    CHECK_INT(cmp, MPI_IDENT);
    MPI_OK(MPI_Group_free(&g));
    MPI_OK(MPI_Group_free(&wg));
    MPI_Info used;
    char val[64];
    int flag = 0;
    MPI_OK(MPI_File_get_info(fh, &used));
    MPI_OK(MPI_Info_get_string(used, "halo_test_hint", &(int){sizeof val}, val, &flag));
    CHECK(flag && !strcmp(val, "42"), "the hint given at open is kept");
    MPI_OK(MPI_Info_free(&used));
    MPI_Errhandler eh;
    MPI_OK(MPI_File_get_errhandler(fh, &eh));
    CHECK(eh == MPI_ERRORS_RETURN, "files start with MPI_ERRORS_RETURN");
    MPI_OK(MPI_File_close(&fh));
    CHECK(fh == MPI_FILE_NULL, "close sets MPI_FILE_NULL");
    CHECK(plain_size(p) == 0, "the file exists, empty");
    MPI_FAILS(MPI_ERR_FILE_EXISTS,
              MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_WRONLY | MPI_MODE_CREATE | MPI_MODE_EXCL, MPI_INFO_NULL, &fh));

    /* Access modes. */
    MPI_OK(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    int x = 1;
    MPI_FAILS(MPI_ERR_READ_ONLY, MPI_File_write_at(fh, 0, &x, 1, MPI_INT, MPI_STATUS_IGNORE));
    MPI_OK(MPI_File_close(&fh));
    MPI_OK(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_WRONLY, MPI_INFO_NULL, &fh));
    MPI_FAILS(MPI_ERR_ACCESS, MPI_File_read_at(fh, 0, &x, 1, MPI_INT, MPI_STATUS_IGNORE));
    MPI_FAILS(MPI_ERR_ARG, MPI_File_write_at(fh, -4, &x, 1, MPI_INT, MPI_STATUS_IGNORE));
    MPI_FAILS(MPI_ERR_UNSUPPORTED_DATAREP,
              MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "no-such-datarep", MPI_INFO_NULL));
    MPI_FAILS(MPI_ERR_ARG, MPI_File_seek(fh, -1, MPI_SEEK_SET));
    /* Views whose types go backwards, below 0, or (open for writing)
     * overlap are refused (MPI 5.0 14.1.1, 14.3); one that only overlaps
     * is taken when the file is read-only (below). */
    MPI_Datatype back, neg, over;
    {
        int bl[2] = {1, 1}, dback[2] = {3, 0}, dneg[2] = {-2, 2}, bo[2] = {3, 1}, dover[2] = {0, 1};
        MPI_OK(MPI_Type_indexed(2, bl, dback, MPI_INT, &back));
        MPI_OK(MPI_Type_indexed(2, bl, dneg, MPI_INT, &neg));
        MPI_OK(MPI_Type_indexed(2, bo, dover, MPI_INT, &over));
        MPI_OK(MPI_Type_commit(&back));
        MPI_OK(MPI_Type_commit(&neg));
        MPI_OK(MPI_Type_commit(&over));
    }
    MPI_FAILS(MPI_ERR_IO, MPI_File_set_view(fh, 0, MPI_INT, back, "native", MPI_INFO_NULL));
    MPI_FAILS(MPI_ERR_IO, MPI_File_set_view(fh, 0, MPI_INT, neg, "native", MPI_INFO_NULL));
    MPI_FAILS(MPI_ERR_IO, MPI_File_set_view(fh, 0, MPI_INT, over, "native", MPI_INFO_NULL));
    MPI_FAILS(MPI_ERR_IO, MPI_File_set_view(fh, 0, back, back, "native", MPI_INFO_NULL));
    MPI_OK(MPI_File_close(&fh));
    MPI_OK(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    MPI_OK(MPI_File_set_view(fh, 0, MPI_INT, over, "native", MPI_INFO_NULL));
    MPI_FAILS(MPI_ERR_IO, MPI_File_set_view(fh, 0, MPI_INT, back, "native", MPI_INFO_NULL));
    MPI_OK(MPI_Type_free(&back));
    MPI_OK(MPI_Type_free(&neg));
    MPI_OK(MPI_Type_free(&over));
    MPI_OK(MPI_File_close(&fh));
    MPI_FAILS(MPI_ERR_FILE, MPI_File_close(&fh));
    MPI_FAILS(MPI_ERR_FILE, MPI_File_get_size(MPI_FILE_NULL, &(MPI_Offset){0}));

    /* Delete: then it is gone, and a second delete finds nothing. */
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) {
        MPI_OK(MPI_File_delete(p, MPI_INFO_NULL));
        CHECK(plain_size(p) < 0, "MPI_File_delete removed the file");
        MPI_FAILS(MPI_ERR_NO_SUCH_FILE, MPI_File_delete(p, MPI_INFO_NULL));
    }
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));

    /* Delete on close. */
    MPI_OK(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_WRONLY | MPI_MODE_CREATE | MPI_MODE_DELETE_ON_CLOSE,
                         MPI_INFO_NULL, &fh));
    MPI_OK(MPI_File_write_at(fh, rank * 4, &rank, 1, MPI_INT, MPI_STATUS_IGNORE));
    MPI_OK(MPI_File_close(&fh));
    CHECK(plain_size(p) < 0, "MPI_MODE_DELETE_ON_CLOSE removed the file");

    /* Append: both pointers start at the end. */
    MPI_OK(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_WRONLY | MPI_MODE_CREATE, MPI_INFO_NULL, &fh));
    MPI_OK(MPI_File_set_size(fh, 24));
    MPI_OK(MPI_File_close(&fh));
    MPI_OK(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_RDWR | MPI_MODE_APPEND | MPI_MODE_DELETE_ON_CLOSE,
                         MPI_INFO_NULL, &fh));
    MPI_Offset pos = -1;
    MPI_OK(MPI_File_get_position(fh, &pos));
    CHECK_INT(pos, 24);
    MPI_OK(MPI_File_get_position_shared(fh, &pos));
    CHECK_INT(pos, 24);
    MPI_OK(MPI_File_close(&fh));
    CHECK(plain_size(p) < 0, "the appended file was removed on close");
}

static int handler_calls, handler_class;
static void file_handler(MPI_File *fh, int *code, ...)
{
    (void)fh;
    handler_calls++;
    MPI_Error_class(*code, &handler_class);
}

static void test_errhandler(void)
{
    char p[600], name[64];
    snprintf(name, sizeof name, "missing.%d.dat", rank);
    path_of(p, sizeof p, name);
    MPI_Errhandler eh, old;
    MPI_File fh;
    MPI_OK(MPI_File_create_errhandler(file_handler, &eh));
    MPI_OK(MPI_File_get_errhandler(MPI_FILE_NULL, &old));
    CHECK(old == MPI_ERRORS_RETURN, "the default file error handler is MPI_ERRORS_RETURN");
    MPI_OK(MPI_File_set_errhandler(MPI_FILE_NULL, eh));
    int rc = MPI_File_open(MPI_COMM_SELF, p, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
    CHECK(rc != MPI_SUCCESS && handler_calls == 1 && handler_class == MPI_ERR_NO_SUCH_FILE,
          "MPI_File_open raised on MPI_FILE_NULL's handler (%d calls, class %d)", handler_calls, handler_class);
    /* A new file takes the default handler. */
    MPI_OK(MPI_File_open(MPI_COMM_SELF, p, MPI_MODE_RDWR | MPI_MODE_CREATE | MPI_MODE_DELETE_ON_CLOSE,
                         MPI_INFO_NULL, &fh));
    int x = 0;
    rc = MPI_File_read_at(fh, -1, &x, 1, MPI_INT, MPI_STATUS_IGNORE);
    CHECK(rc != MPI_SUCCESS && handler_calls == 2 && handler_class == MPI_ERR_ARG, "the file's handler ran");
    MPI_OK(MPI_File_call_errhandler(fh, MPI_ERR_IO));
    CHECK(handler_calls == 3 && handler_class == MPI_ERR_IO, "MPI_File_call_errhandler ran the handler");
    MPI_OK(MPI_File_set_errhandler(fh, MPI_ERRORS_RETURN));
    MPI_OK(MPI_File_close(&fh));
    MPI_OK(MPI_File_set_errhandler(MPI_FILE_NULL, old));
    MPI_OK(MPI_Errhandler_free(&eh));
}

static void test_explicit(void)
{
    enum { N = 100 };
    char p[600];
    path_of(p, sizeof p, "explicit.dat");
    MPI_File fh;
    MPI_OK(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_RDWR | MPI_MODE_CREATE, MPI_INFO_NULL, &fh));
    int buf[N], in[N];
    for (int i = 0; i < N; i++)
        buf[i] = rank * 1000 + i;
    MPI_Status st;
    int cnt = -1;
    MPI_OK(MPI_File_write_at(fh, (MPI_Offset)rank * N * 4, buf, N, MPI_INT, &st));
    MPI_OK(MPI_Get_count(&st, MPI_INT, &cnt));
    CHECK_INT(cnt, N);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    int *all = malloc(sizeof(int) * N * (size_t)size);
    CHECK_INT(read_plain(p, all, sizeof(int) * N * (size_t)size), (long)sizeof(int) * N * size);
    for (int r = 0; r < size; r++)
        for (int i = 0; i < N; i++)
            CHECK(all[r * N + i] == r * 1000 + i, "file int %d of rank %d is %d", i, r, all[r * N + i]);
    free(all);
    int peer = (rank + 1) % size;
    MPI_OK(MPI_File_read_at(fh, (MPI_Offset)peer * N * 4, in, N, MPI_INT, &st));
    MPI_OK(MPI_Get_count(&st, MPI_INT, &cnt));
    CHECK_INT(cnt, N);
    for (int i = 0; i < N; i++)
        CHECK_INT(in[i], peer * 1000 + i);
    /* Past the end: fewer bytes, no error. */
    MPI_Offset end = (MPI_Offset)size * N * 4;
    MPI_OK(MPI_File_read_at(fh, end - 8, in, 4, MPI_INT, &st));
    MPI_OK(MPI_Get_count(&st, MPI_INT, &cnt));
    CHECK_INT(cnt, 2);
    MPI_OK(MPI_File_read_at(fh, end + 100, in, 4, MPI_INT, &st));
    MPI_OK(MPI_Get_count(&st, MPI_INT, &cnt));
    CHECK_INT(cnt, 0);
    MPI_OK(MPI_File_close(&fh));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        MPI_OK(MPI_File_delete(p, MPI_INFO_NULL));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
}

static void test_pointers(void)
{
    enum { N = 10 };
    char p[600];
    path_of(p, sizeof p, "pointers.dat");
    MPI_File fh;
    MPI_OK(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_RDWR | MPI_MODE_CREATE | MPI_MODE_DELETE_ON_CLOSE,
                         MPI_INFO_NULL, &fh));
    /* Each rank's region starts at its displacement, counted in ints. */
    MPI_Offset disp = 16 + (MPI_Offset)rank * N * 4;
    MPI_OK(MPI_File_set_view(fh, disp, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
    int buf[N], in[N];
    for (int i = 0; i < N; i++)
        buf[i] = rank * 100 + i;
    MPI_Offset pos = -1, byte = -1;
    MPI_OK(MPI_File_write(fh, buf, 4, MPI_INT, MPI_STATUS_IGNORE));
    MPI_OK(MPI_File_write(fh, buf + 4, N - 4, MPI_INT, MPI_STATUS_IGNORE));
    MPI_OK(MPI_File_get_position(fh, &pos));
    CHECK_INT(pos, N);
    MPI_OK(MPI_File_get_byte_offset(fh, 3, &byte));
    CHECK_INT(byte, disp + 12);
    MPI_OK(MPI_File_seek(fh, 0, MPI_SEEK_SET));
    MPI_OK(MPI_File_read(fh, in, N, MPI_INT, MPI_STATUS_IGNORE));
    for (int i = 0; i < N; i++)
        CHECK_INT(in[i], buf[i]);
    MPI_OK(MPI_File_seek(fh, -3, MPI_SEEK_CUR));
    MPI_OK(MPI_File_get_position(fh, &pos));
    CHECK_INT(pos, N - 3);
    MPI_OK(MPI_File_read(fh, in, 1, MPI_INT, MPI_STATUS_IGNORE));
    CHECK_INT(in[0], buf[N - 3]);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    /* End of file, in ints of this rank's view. */
    MPI_OK(MPI_File_seek(fh, 0, MPI_SEEK_END));
    MPI_OK(MPI_File_get_position(fh, &pos));
    CHECK_INT(pos, (16 + (MPI_Offset)size * N * 4 - disp) / 4);
    MPI_Offset sz = -1;
    MPI_OK(MPI_File_get_size(fh, &sz));
    CHECK_INT(sz, 16 + size * N * 4);
    /* A read that meets the end of the file: the status counts what was
     * read, the pointer moves past what was asked for. */
    MPI_Offset end = pos;
    MPI_OK(MPI_File_seek(fh, -2, MPI_SEEK_END));
    MPI_Status st;
    int got = -1;
    MPI_OK(MPI_File_read(fh, in, 5, MPI_INT, &st));
    MPI_OK(MPI_Get_count(&st, MPI_INT, &got));
    CHECK_INT(got, 2);
    MPI_OK(MPI_File_get_position(fh, &pos));
    CHECK_INT(pos, end + 3);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    int all[4 + 4 * N];
    if (size <= 4) {
        CHECK_INT(read_plain(p, all, (size_t)sz), sz);
        for (int r = 0; r < size; r++)
            for (int i = 0; i < N; i++)
                CHECK_INT(all[4 + r * N + i], r * 100 + i);
    }
    MPI_OK(MPI_File_close(&fh));
}

/* Each rank owns blocks rank, rank + size, ... of B ints. */
static void test_strided(void)
{
    enum { B = 3, NB = 5 };
    char p[600];
    path_of(p, sizeof p, "strided.dat");
    MPI_File fh;
    MPI_OK(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_RDWR | MPI_MODE_CREATE | MPI_MODE_DELETE_ON_CLOSE,
                         MPI_INFO_NULL, &fh));
    MPI_Datatype blk, ftype, mtype;
    MPI_OK(MPI_Type_contiguous(B, MPI_INT, &blk));
    MPI_OK(MPI_Type_create_resized(blk, 0, (MPI_Aint)size * B * 4, &ftype));
    MPI_OK(MPI_Type_commit(&ftype));
    MPI_OK(MPI_Type_free(&blk));
    /* Memory: every other int of a twice as long buffer. */
    MPI_OK(MPI_Type_vector(B * NB, 1, 2, MPI_INT, &mtype));
    MPI_OK(MPI_Type_commit(&mtype));
    MPI_OK(MPI_File_set_view(fh, (MPI_Offset)rank * B * 4, MPI_INT, ftype, "native", MPI_INFO_NULL));
    /* The view keeps its filetype: the program's handle can go. */
    MPI_Datatype ftype_kept = ftype;
    MPI_OK(MPI_Type_dup(ftype_kept, &ftype));
    MPI_OK(MPI_Type_free(&ftype_kept));
    int mem[2 * B * NB], in[B * NB];
    for (int i = 0; i < B * NB; i++) {
        mem[2 * i] = rank * 1000 + i;
        mem[2 * i + 1] = -1;
    }
    MPI_Status st;
    int cnt = -1;
    MPI_OK(MPI_File_write_all(fh, mem, 1, mtype, &st));
    MPI_OK(MPI_Get_count(&st, mtype, &cnt));
    CHECK_INT(cnt, 1);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    int total = size * B * NB;
    int *all = malloc(sizeof(int) * (size_t)total);
    CHECK_INT(read_plain(p, all, sizeof(int) * (size_t)total), (long)sizeof(int) * total);
    for (int k = 0; k < NB; k++)
        for (int r = 0; r < size; r++)
            for (int j = 0; j < B; j++)
                CHECK(all[(k * size + r) * B + j] == r * 1000 + k * B + j, "block %d of rank %d int %d is %d", k,
                      r, j, all[(k * size + r) * B + j]);
    /* Back through the view, into contiguous memory. */
    MPI_OK(MPI_File_seek(fh, 0, MPI_SEEK_SET));
    MPI_OK(MPI_File_read_all(fh, in, B * NB, MPI_INT, &st));
    MPI_OK(MPI_Get_count(&st, MPI_INT, &cnt));
    CHECK_INT(cnt, B * NB);
    for (int i = 0; i < B * NB; i++)
        CHECK_INT(in[i], rank * 1000 + i);
    /* The view's offset 4 (etypes) is in this rank's second block. */
    MPI_Offset byte = -1;
    MPI_OK(MPI_File_get_byte_offset(fh, 4, &byte));
    CHECK_INT(byte, ((MPI_Offset)size * B + rank * B + 1) * 4);
    MPI_Offset pos = -1;
    MPI_OK(MPI_File_seek(fh, 0, MPI_SEEK_END));
    MPI_OK(MPI_File_get_position(fh, &pos));
    CHECK_INT(pos, B * NB);
    MPI_Offset disp;
    MPI_Datatype et, ft;
    char rep[MPI_MAX_DATAREP_STRING];
    MPI_OK(MPI_File_get_view(fh, &disp, &et, &ft, rep));
    CHECK_INT(disp, rank * B * 4);
    CHECK(et == MPI_INT && !strcmp(rep, "native"), "get_view returns the etype and \"native\"");
    CHECK(ft != ftype && ft != MPI_DATATYPE_NULL, "a derived filetype comes back as a new handle");
    MPI_Aint lb, ext;
    MPI_OK(MPI_Type_get_extent(ft, &lb, &ext));
    CHECK_INT(ext, size * B * 4);
    MPI_OK(MPI_Type_free(&ft));
    /* Plainly, with the default view: the whole file. */
    MPI_OK(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    int *back = malloc(sizeof(int) * (size_t)total);
    MPI_OK(MPI_File_read_at_all(fh, 0, back, total, MPI_INT, MPI_STATUS_IGNORE));
    CHECK(!memcmp(back, all, sizeof(int) * (size_t)total), "read_at_all returns the file's bytes");
    /* And into non-contiguous memory through the strided view. */
    MPI_OK(MPI_File_set_view(fh, (MPI_Offset)rank * B * 4, MPI_INT, ftype, "native", MPI_INFO_NULL));
    memset(mem, 0, sizeof mem);
    MPI_OK(MPI_File_read_at_all(fh, 0, mem, 1, mtype, MPI_STATUS_IGNORE));
    for (int i = 0; i < B * NB; i++)
        CHECK(mem[2 * i] == rank * 1000 + i && mem[2 * i + 1] == 0, "strided read into strided memory at %d", i);
    free(all);
    free(back);
    MPI_OK(MPI_Type_free(&ftype));
    MPI_OK(MPI_Type_free(&mtype));
    MPI_OK(MPI_File_close(&fh));
}

static void test_collective(void)
{
    enum { N = 8 };
    char p[600];
    path_of(p, sizeof p, "coll.dat");
    MPI_File fh;
    MPI_OK(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_RDWR | MPI_MODE_CREATE | MPI_MODE_DELETE_ON_CLOSE,
                         MPI_INFO_NULL, &fh));
    int buf[N], in[N];
    for (int i = 0; i < N; i++)
        buf[i] = rank * 10 + i;
    MPI_Status st;
    int cnt = -1;
    MPI_OK(MPI_File_write_at_all_begin(fh, (MPI_Offset)rank * N * 4, buf, N, MPI_INT));
    MPI_FAILS(MPI_ERR_OTHER, MPI_File_write_all_begin(fh, buf, N, MPI_INT));
    MPI_OK(MPI_File_write_at_all_end(fh, buf, &st));
    MPI_OK(MPI_Get_count(&st, MPI_INT, &cnt));
    CHECK_INT(cnt, N);
    MPI_FAILS(MPI_ERR_OTHER, MPI_File_read_all_end(fh, in, &st));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_File_seek(fh, (MPI_Offset)((rank + 1) % size) * N * 4, MPI_SEEK_SET));
    MPI_OK(MPI_File_read_all_begin(fh, in, N, MPI_INT));
    MPI_OK(MPI_File_read_all_end(fh, in, &st));
    for (int i = 0; i < N; i++)
        CHECK_INT(in[i], ((rank + 1) % size) * 10 + i);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));   /* read before it is overwritten */
    /* Nonblocking. */
    MPI_Request req;
    for (int i = 0; i < N; i++)
        buf[i] = -(rank * 10 + i);
    MPI_OK(MPI_File_iwrite_at(fh, (MPI_Offset)rank * N * 4, buf, N, MPI_INT, &req));
    MPI_OK(MPI_Wait(&req, &st));
    MPI_OK(MPI_Get_count(&st, MPI_INT, &cnt));
    CHECK_INT(cnt, N);
    MPI_OK(MPI_File_iwrite_at_all(fh, (MPI_Offset)rank * N * 4, buf, N / 2, MPI_INT, &req));
    MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_File_iread_at(fh, (MPI_Offset)rank * N * 4, in, N, MPI_INT, &req));
    MPI_OK(MPI_Wait(&req, &st));
    MPI_OK(MPI_Get_count(&st, MPI_INT, &cnt));
    CHECK_INT(cnt, N);
    for (int i = 0; i < N; i++)
        CHECK_INT(in[i], -(rank * 10 + i));
    MPI_OK(MPI_File_seek(fh, (MPI_Offset)rank * N * 4, MPI_SEEK_SET));
    MPI_OK(MPI_File_iread(fh, in, 2, MPI_INT, &req));
    MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    CHECK_INT(in[1], -(rank * 10 + 1));
    MPI_OK(MPI_File_iread_all(fh, in, 2, MPI_INT, &req));
    MPI_OK(MPI_Wait(&req, &st));
    MPI_OK(MPI_Get_count(&st, MPI_INT, &cnt));
    CHECK_INT(cnt, 2);
    CHECK_INT(in[0], -(rank * 10 + 2));
    MPI_OK(MPI_File_iwrite(fh, buf, 1, MPI_INT, &req));
    MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    MPI_Offset pos = -1;
    MPI_OK(MPI_File_get_position(fh, &pos));
    CHECK_INT(pos, (MPI_Offset)rank * N * 4 + 4 * 4 + 4);
    MPI_OK(MPI_File_close(&fh));
}

static void test_shared(void)
{
    enum { R = 5 };
    char p[600];
    path_of(p, sizeof p, "shared.dat");
    MPI_File fh;
    MPI_OK(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_RDWR | MPI_MODE_CREATE | MPI_MODE_DELETE_ON_CLOSE,
                         MPI_INFO_NULL, &fh));
    MPI_OK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
    for (int i = 0; i < R; i++) {
        int rec = rank * 100 + i;
        MPI_OK(MPI_File_write_shared(fh, &rec, 1, MPI_INT, MPI_STATUS_IGNORE));
    }
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_Offset pos = -1;
    MPI_OK(MPI_File_get_position_shared(fh, &pos));
    CHECK_INT(pos, R * size);
    int *all = malloc(sizeof(int) * R * (size_t)size);
    int *seen = calloc((size_t)size * R, sizeof(int));
    CHECK_INT(read_plain(p, all, sizeof(int) * R * (size_t)size), (long)sizeof(int) * R * size);
    for (int i = 0; i < R * size; i++) {
        int r = all[i] / 100, k = all[i] % 100;
        CHECK(r >= 0 && r < size && k >= 0 && k < R && !seen[r * R + k], "record %d (%d) is bad or twice", i, all[i]);
        seen[r * R + k] = 1;
    }
    /* Ordered: rank r writes r + 1 ints of value r, in rank order. */
    MPI_OK(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET));
    int vals[64], in[64];
    for (int i = 0; i <= rank; i++)
        vals[i] = rank;
    MPI_OK(MPI_File_write_ordered(fh, vals, rank + 1, MPI_INT, MPI_STATUS_IGNORE));
    MPI_OK(MPI_File_get_position_shared(fh, &pos));
    int tri = size * (size + 1) / 2;
    CHECK_INT(pos, tri);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    CHECK_INT(read_plain(p, all, sizeof(int) * (size_t)tri), (long)sizeof(int) * tri);
    for (int r = 0, k = 0; r < size; r++)
        for (int i = 0; i <= r; i++, k++)
            CHECK(all[k] == r, "ordered int %d is %d, expected %d", k, all[k], r);
    MPI_OK(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET));
    MPI_Status st;
    int cnt = -1;
    MPI_OK(MPI_File_read_ordered_begin(fh, in, rank + 1, MPI_INT));
    MPI_OK(MPI_File_read_ordered_end(fh, in, &st));
    MPI_OK(MPI_Get_count(&st, MPI_INT, &cnt));
    CHECK_INT(cnt, rank + 1);
    for (int i = 0; i <= rank; i++)
        CHECK_INT(in[i], rank);
    MPI_OK(MPI_File_seek_shared(fh, 2, MPI_SEEK_SET));
    MPI_OK(MPI_File_read_shared(fh, in, 1, MPI_INT, MPI_STATUS_IGNORE));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_File_get_position_shared(fh, &pos));
    CHECK_INT(pos, 2 + size);
    free(all);
    free(seen);
    MPI_OK(MPI_File_close(&fh));
}

static void test_size(void)
{
    char p[600];
    path_of(p, sizeof p, "size.dat");
    MPI_File fh;
    MPI_Offset sz = -1;
    MPI_OK(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_RDWR | MPI_MODE_CREATE | MPI_MODE_DELETE_ON_CLOSE,
                         MPI_INFO_NULL, &fh));
    /* (the barriers keep the next resize from overtaking a check) */
    MPI_OK(MPI_File_set_size(fh, 1000));
    MPI_OK(MPI_File_get_size(fh, &sz));
    CHECK_INT(sz, 1000);
    CHECK_INT(plain_size(p), 1000);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_File_set_size(fh, 10));
    MPI_OK(MPI_File_get_size(fh, &sz));
    CHECK_INT(sz, 10);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_File_preallocate(fh, 5000));
    MPI_OK(MPI_File_get_size(fh, &sz));
    CHECK_INT(sz, 5000);
    MPI_OK(MPI_File_preallocate(fh, 100));
    MPI_OK(MPI_File_get_size(fh, &sz));
    CHECK_INT(sz, 5000);
    MPI_FAILS(MPI_ERR_ARG, MPI_File_set_size(fh, -1));
    int flag = -1;
    MPI_OK(MPI_File_get_atomicity(fh, &flag));
    CHECK_INT(flag, 0);
    MPI_OK(MPI_File_set_atomicity(fh, 1));
    MPI_OK(MPI_File_get_atomicity(fh, &flag));
    CHECK_INT(flag, 1);
    int v = rank + 7, w = -1;
    MPI_OK(MPI_File_write_at(fh, rank * 4, &v, 1, MPI_INT, MPI_STATUS_IGNORE));
    MPI_OK(MPI_File_sync(fh));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_File_sync(fh));
    MPI_OK(MPI_File_read_at(fh, ((rank + 1) % size) * 4, &w, 1, MPI_INT, MPI_STATUS_IGNORE));
    CHECK_INT(w, (rank + 1) % size + 7);
    MPI_Aint ext = 0;
    MPI_OK(MPI_File_get_type_extent(fh, MPI_DOUBLE, &ext));
    CHECK_INT(ext, sizeof(double));
    MPI_OK(MPI_File_close(&fh));
}

int main(int argc, char **argv)
{
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    /* MPI_COMM_WORLD keeps MPI_ERRORS_ARE_FATAL: every error of a file
     * call must go to a file's handler (MPI_ERRORS_RETURN by default). */
    const char *tmp = getenv("TMPDIR");
    int pid = (int)getpid();
    MPI_OK(MPI_Bcast(&pid, 1, MPI_INT, 0, MPI_COMM_WORLD));
    snprintf(dir, sizeof dir, "%s/halo_io_file.%d", tmp && *tmp ? tmp : "/tmp", pid);
    if (rank == 0)
        CHECK(mkdir(dir, 0700) == 0, "cannot make %s", dir);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    test_open();
    test_errhandler();
    test_explicit();
    test_pointers();
    test_strided();
    test_collective();
    test_shared();
    test_size();
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        CHECK(rmdir(dir) == 0, "files were left behind in %s", dir);
    MPI_OK(MPI_Finalize());
    if (rank == 0)
        printf("io_file all: ok\n");
    return 0;
}
