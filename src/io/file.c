/* MPI-IO on POSIX files, for ranks of one node.
 *
 * Every member of a file's group opens the file itself (open(2)) and moves
 * its own data with pread/pwrite at the call: every access is complete
 * when it returns, so the nonblocking calls return completed requests and
 * the split collectives do their work in the _begin call. The collective
 * calls have no two-phase aggregation: on one node the page cache already
 * merges the members' strided accesses, so each member writes its own.
 *
 * The view. Data of an access, as a stream of packed bytes, goes to the
 * file bytes that the filetype tiles from the displacement (tile k at
 * disp + k * extent), holes skipped; offsets count etypes of that stream.
 * halo_dt_iov over the filetype gives the file runs of any packed range
 * (it seeks by division, so an offset far into a view costs no walk), and
 * the memory side is either one run of the user's buffer or a bounce
 * buffer packed and unpacked by chunks.
 *
 * The shared file pointer lives in a small /dev/shm segment that every
 * member maps at open (the last to map it removes its name, so nothing is
 * left behind even if the job dies); an access with it reserves its range
 * with one atomic fetch_add. Ordered accesses learn everyone's sizes with
 * an allgather and rank 0 reserves the whole range for the group.
 *
 * Data representations other than "native" (datarep.c) lay the view out
 * in their file extents (the layout types letype and lftype, which every
 * offset computation uses) and move data through a buffer converted in one
 * call per access. Atomic mode takes an open-file-description lock over
 * the whole file for each access, so that accesses of several runs do not
 * interleave with the other members' ones. */
#include "io/file.h"
#include "io/datarep.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "binding/api_gen.h"
#include "binding/binding.h"
#include "core/comm.h"
#include "core/errhandler.h"
#include "core/errors.h"
#include "core/group.h"
#include "core/info.h"
#include "datatype/dtype.h"
#include "pmi.h"
#include "pt2pt/pt2pt.h"
#include "transport/transport.h"

/* The segment that holds the shared file pointer. */
typedef struct {
    _Atomic uint32_t attached;
    uint32_t pad0;
    _Atomic int64_t shared;   /* in etypes of the current view */
    char pad[48];
} file_seg_t;

enum { SPLIT_NONE, SPLIT_READ_ALL, SPLIT_READ_AT_ALL, SPLIT_READ_ORDERED, SPLIT_WRITE_ALL, SPLIT_WRITE_AT_ALL,
       SPLIT_WRITE_ORDERED };

typedef struct halo_file {
    halo_obj_t hdr;
    halo_comm_t *comm;          /* the file's own communicator */
    int fd;
    int amode;
    char *path;                 /* for MPI_MODE_DELETE_ON_CLOSE */
    halo_errhandler_t *errh;
    halo_info_t *info;
    MPI_Offset disp;
    halo_dtype_t *etype, *ftype;   /* references held */
    halo_dtype_t *letype, *lftype; /* the same laid out in the file's representation (the same
                                    * objects for "native"); references held */
    const halo_datarep_t *rep;     /* NULL: native */
    char repname[MPI_MAX_DATAREP_STRING];
    MPI_Offset ind;             /* individual file pointer, etypes of the view */
    file_seg_t *seg;
    bool atomic;
    int split;                  /* the split collective under way (SPLIT_*) */
    const void *split_buf;
    MPI_Status split_status;
} halo_file_t;

/* Offsets of the view are turned into pointers for halo_dt_iov and back:
 * this base keeps them clear of the null page and of overflow. */
#define VIEW_BASE ((uintptr_t)1 << 46)
#define CHUNK ((MPI_Count)1 << 22)
#define MAXIOV 64

static halo_errhandler_t *null_errh;   /* MPI_FILE_NULL's: the default for files */

void halo_file_init(void)
{
    halo_obj_kind_setup(HALO_KIND_FILE, sizeof(halo_file_t), 1u << 16);
    halo_errhandler_t *ret = halo_obj_lookup(HALO_KIND_ERRHANDLER, MPI_ERRORS_RETURN);
    if (null_errh && null_errh != ret)
        halo_errhandler_release(null_errh);
    null_errh = ret;
}

static halo_file_t *file_get(MPI_File fh)
{
    return halo_obj_lookup(HALO_KIND_FILE, fh);
}

#define FILE_CHECK(fh, f)                                                                            \
    halo_file_t *f = file_get(fh);                                                                   \
    if (!f)                                                                                          \
    return halo_err(MPI_ERR_FILE, "(fh=%p): %s", (void *)(fh),                                       \
                    (fh) == MPI_FILE_NULL ? "MPI_FILE_NULL is not an open file" : "not a valid file")

halo_errhandler_t *halo_file_errhandler(MPI_File fh)
{
    halo_file_t *f = file_get(fh);
    if (f)
        return f->errh;
    return null_errh ? null_errh : halo_obj_lookup(HALO_KIND_ERRHANDLER, MPI_ERRORS_RETURN);
}

static MPI_Comm chandle(const halo_file_t *f)
{
    return halo_comm_handle(f->comm);
}

/* ------------------------------------------------------------ errors */

static int errno_class(int e)
{
    switch (e) {
    case ENOENT:
        return MPI_ERR_NO_SUCH_FILE;
    case EEXIST:
        return MPI_ERR_FILE_EXISTS;
    case EACCES:
    case EPERM:
        return MPI_ERR_ACCESS;
    case EROFS:
        return MPI_ERR_READ_ONLY;
    case ENOSPC:
    case EFBIG:
        return MPI_ERR_NO_SPACE;
    case EDQUOT:
        return MPI_ERR_QUOTA;
    case EBUSY:
    case ETXTBSY:
        return MPI_ERR_FILE_IN_USE;
    case ENAMETOOLONG:
    case ENOTDIR:
    case EISDIR:
    case ELOOP:
    case EINVAL:
        return MPI_ERR_BAD_FILE;
    default:
        return MPI_ERR_IO;
    }
}

static int os_err(int e, const char *what, const char *path)
{
    return halo_err(errno_class(e), "(filename=\"%s\"): %s: %s", path, what, strerror(e));
}

/* Makes a collective call fail on every member when one failed: the
 * others learn the largest error class. */
static int agree(MPI_Comm comm, int lrc)
{
    int mine = lrc == MPI_SUCCESS ? 0 : halo_err_class_of(lrc), worst = 0;
    int rc = halo_api_allreduce(&mine, &worst, 1, MPI_INT, MPI_MAX, comm);
    if (rc != MPI_SUCCESS)
        return rc;
    if (lrc != MPI_SUCCESS)
        return lrc;
    if (worst != 0)
        return halo_err(worst, ": another member of the file's group failed the call");
    return MPI_SUCCESS;
}

/* ------------------------------------------------------------ the segment */

static int map_segment(halo_file_t *f)
{
    halo_comm_t *c = f->comm;
    uint64_t h = halo_fnv1a(HALO_FNV_BASIS, c->world, (size_t)c->size * sizeof *c->world);
    char suffix[96], name[300];
    snprintf(suffix, sizeof suffix, "f%x-%016llx", (unsigned)c->ctx, (unsigned long long)h);
    halo_shm_name(name, sizeof name, halo_world.kvsname, suffix);
    int fd = shm_open(name, O_CREAT | O_RDWR, 0600);
    if (fd < 0)
        return halo_err(MPI_ERR_NO_MEM, ": cannot open the file's shared segment /dev/shm%s: %s", name,
                        strerror(errno));
    char why[160];
    if (halo_shm_fd_trusted(fd, why, sizeof why) != 0) {
        close(fd);
        return halo_err(MPI_ERR_OTHER, ": refusing the file's shared segment /dev/shm%s: %s", name, why);
    }
    if (ftruncate(fd, (off_t)sizeof(file_seg_t)) != 0) {
        int e = errno;
        close(fd);
        shm_unlink(name);
        return halo_err(MPI_ERR_NO_MEM, ": cannot size the file's shared segment: %s", strerror(e));
    }
    void *p = mmap(NULL, sizeof(file_seg_t), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (p == MAP_FAILED) {
        shm_unlink(name);
        return halo_err(MPI_ERR_NO_MEM, ": cannot map the file's shared segment: %s", strerror(errno));
    }
    f->seg = p;
    if (atomic_fetch_add(&f->seg->attached, 1) + 1 == (uint32_t)c->size)
        shm_unlink(name);
    return MPI_SUCCESS;
}

static void release_types(halo_file_t *f)
{
    halo_dtype_t **ts[4] = {&f->etype, &f->ftype, &f->letype, &f->lftype};
    for (int i = 0; i < 4; i++) {
        if (*ts[i])
            halo_dtype_release(*ts[i]);
        *ts[i] = NULL;
    }
}

/* Takes references to the view's types; the layout ones are handed over. */
static void set_view_types(halo_file_t *f, halo_dtype_t *etype, halo_dtype_t *ftype, halo_dtype_t *letype,
                           halo_dtype_t *lftype, const halo_datarep_t *rep, const char *repname)
{
    halo_obj_ref(etype);
    halo_obj_ref(ftype);
    release_types(f);
    f->etype = etype;
    f->ftype = ftype;
    f->letype = letype;
    f->lftype = lftype;
    f->rep = rep;
    snprintf(f->repname, sizeof f->repname, "%s", repname);
}

static void free_file(halo_file_t *f)
{
    if (f->seg)
        munmap(f->seg, sizeof(file_seg_t));
    if (f->fd >= 0)
        close(f->fd);
    free(f->path);
    release_types(f);
    if (f->info)
        halo_info_release(f->info);
    halo_errhandler_release(f->errh);
    if (f->comm)
        halo_comm_release(f->comm);
    halo_obj_free(f);
}

/* ------------------------------------------------------------ the view */

static char *view_base(const halo_file_t *f)
{
    return (char *)(VIEW_BASE + (uintptr_t)f->disp);
}

/* Number of data bytes of the view that lie below file offset `size`. */
static MPI_Count view_bytes_below(const halo_file_t *f, MPI_Offset size)
{
    const halo_dtype_t *ft = f->lftype;
    if (size <= f->disp || ft->size == 0)
        return 0;
    MPI_Count ext = ft->extent > 0 ? ft->extent : 1;
    /* Tiles before k lie wholly below `size` (filetypes are monotonic and
     * non-negative); walk from one tile earlier to be safe. */
    MPI_Count k = (size - f->disp) / ext;
    k = k > 1 ? k - 1 : 0;
    MPI_Count pos = k * ft->size, below = pos, ntiles = k + 4;
    struct iovec iov[MAXIOV];
    for (;;) {
        int n = halo_dt_iov(view_base(f), ntiles, ft, &pos, ntiles * ft->size, iov, MAXIOV);
        if (n <= 0)
            return below;
        for (int i = 0; i < n; i++) {
            MPI_Offset off = (MPI_Offset)((uintptr_t)iov[i].iov_base - VIEW_BASE);
            if (off >= size)
                return below;
            MPI_Count len = (MPI_Count)iov[i].iov_len;
            below += off + len <= size ? len : size - off;
        }
    }
}

/* The etype offset of the view just past the end of the file. */
static MPI_Offset view_end(const halo_file_t *f)
{
    struct stat st;
    if (fstat(f->fd, &st) != 0)
        return 0;
    MPI_Count esz = f->letype->size;
    return (view_bytes_below(f, st.st_size) + esz - 1) / esz;
}

/* The absolute byte offset of etype `off` of the view. */
static MPI_Offset view_byte(const halo_file_t *f, MPI_Offset off)
{
    const halo_dtype_t *ft = f->lftype;
    if (ft->size == 0)
        return f->disp;
    MPI_Count pos = off * f->letype->size;
    MPI_Count ntiles = pos / ft->size + 1;
    struct iovec iov[1];
    if (halo_dt_iov(view_base(f), ntiles, ft, &pos, pos + 1, iov, 1) != 1)
        return f->disp;
    return (MPI_Offset)((uintptr_t)iov[0].iov_base - VIEW_BASE);
}

/* ------------------------------------------------------------ moving data */

static ssize_t full_pread(int fd, char *p, size_t len, off_t off)
{
    size_t got = 0;
    while (got < len) {
        ssize_t r = pread(fd, p + got, len - got, off + (off_t)got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return -1;
        if (r == 0)
            break;
        got += (size_t)r;
    }
    return (ssize_t)got;
}

static ssize_t full_pwrite(int fd, const char *p, size_t len, off_t off)
{
    size_t put = 0;
    while (put < len) {
        ssize_t r = pwrite(fd, p + put, len - put, off + (off_t)put);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        put += (size_t)r;
    }
    return (ssize_t)put;
}

static void lock_file(const halo_file_t *f, bool wr, bool on)
{
    if (!f->atomic)
        return;
    struct flock lk = {.l_type = (short)(on ? (wr ? F_WRLCK : F_RDLCK) : F_UNLCK), .l_whence = SEEK_SET};
#ifdef F_OFD_SETLKW
    while (fcntl(f->fd, F_OFD_SETLKW, &lk) != 0 && errno == EINTR)
        ;
#else
    while (fcntl(f->fd, F_SETLKW, &lk) != 0 && errno == EINTR)
        ;
#endif
}

static int view_io(halo_file_t *f, bool wr, MPI_Offset off, void *buf, MPI_Count count, halo_dtype_t *dt,
                   MPI_Count *moved_p);

/* view_io in a representation other than native: the access goes through
 * a buffer in the file representation, converted in one call; *moved_p
 * gets the bytes moved in memory terms (whole elements of dt). */
static int view_io_converted(halo_file_t *f, bool wr, MPI_Offset off, void *buf, MPI_Count count,
                             halo_dtype_t *dt, MPI_Count *moved_p)
{
    *moved_p = 0;
    MPI_Count esz = halo_datarep_size(f->rep, dt);
    if (esz < 0)
        return halo_err(MPI_ERR_TYPE, "(datatype): no size in data representation \"%s\"", f->repname);
    MPI_Count fbytes = count * esz;
    if (fbytes == 0)
        return MPI_SUCCESS;
    char *fbuf = malloc((size_t)fbytes);
    if (!fbuf)
        return halo_err(MPI_ERR_NO_MEM, ": no memory for %lld bytes of converted data", (long long)fbytes);
    int rc = MPI_SUCCESS;
    if (wr)
        rc = halo_datarep_to_file(f->rep, buf, count, dt, fbuf, fbytes);
    MPI_Count moved = 0;
    if (rc == MPI_SUCCESS)
        rc = view_io(f, wr, off, fbuf, fbytes, halo_dtype_ptr(MPI_BYTE), &moved);
    MPI_Count items = moved / esz;
    if (rc == MPI_SUCCESS && !wr && items > 0)
        rc = halo_datarep_from_file(f->rep, fbuf, items * esz, buf, items, dt);
    free(fbuf);
    *moved_p = items * dt->size;   /* all count items when the whole buffer moved */
    return rc;
}

/* Moves (buf, count, dt) to or from the view at etype offset `off`;
 * *moved_p gets the bytes moved (fewer than asked only for a read that
 * reaches the end of the file). */
static int view_io(halo_file_t *f, bool wr, MPI_Offset off, void *buf, MPI_Count count, halo_dtype_t *dt,
                   MPI_Count *moved_p)
{
    if (f->rep && dt != halo_dtype_ptr(MPI_BYTE))
        return view_io_converted(f, wr, off, buf, count, dt, moved_p);
    *moved_p = 0;
    MPI_Count total = count * dt->size;
    if (total == 0)
        return MPI_SUCCESS;
    const halo_dtype_t *ft = f->lftype;
    if (ft->size == 0)
        return halo_err(MPI_ERR_TYPE, ": the file's view has a filetype with no data");
    MPI_Count moff;
    char *direct = NULL, *bounce = NULL;
    if (halo_dt_one_run(dt, count, &moff))
        direct = (char *)buf + moff;
    else
        bounce = halo_malloc((size_t)(total < CHUNK ? total : CHUNK));
    MPI_Count start = off * f->letype->size, moved = 0;
    int rc = MPI_SUCCESS;
    bool eof = false;
    struct iovec iov[MAXIOV];
    lock_file(f, wr, true);
    for (MPI_Count q = 0; q < total && !eof && rc == MPI_SUCCESS; q += CHUNK) {
        MPI_Count n = total - q < CHUNK ? total - q : CHUNK;
        char *mem = direct ? direct + q : bounce;
        if (bounce && wr)
            halo_dt_pack(buf, count, dt, q, bounce, n);
        MPI_Count pos = start + q, lim = start + q + n, ntiles = (lim + ft->size - 1) / ft->size, cur = 0;
        while (pos < lim && !eof && rc == MPI_SUCCESS) {
            int k = halo_dt_iov(view_base(f), ntiles, ft, &pos, lim, iov, MAXIOV);
            if (k <= 0)
                break;
            for (int i = 0; i < k; i++) {
                off_t at = (off_t)((uintptr_t)iov[i].iov_base - VIEW_BASE);
                size_t len = iov[i].iov_len;
                ssize_t r = wr ? full_pwrite(f->fd, mem + cur, len, at) : full_pread(f->fd, mem + cur, len, at);
                if (r < 0) {
                    int e = errno;
                    rc = halo_err(errno_class(e) == MPI_ERR_BAD_FILE ? MPI_ERR_IO : errno_class(e),
                                  "(fh=%p): %s at file offset %lld: %s", (void *)f, wr ? "write" : "read",
                                  (long long)at, strerror(e));
                    break;
                }
                cur += r;
                if ((size_t)r < len) {
                    eof = true;
                    break;
                }
            }
        }
        if (bounce && !wr && cur > 0)
            halo_dt_unpack(buf, count, dt, q, bounce, cur);
        moved += cur;
    }
    lock_file(f, wr, false);
    free(bounce);
    *moved_p = moved;
    return rc;
}

static void set_status(MPI_Status *status, MPI_Count bytes)
{
    if (status == MPI_STATUS_IGNORE)
        return;
    halo_status_empty(status);
    halo_status_set_bytes(status, bytes);
}

enum { AT_EXPLICIT, AT_INDIVIDUAL, AT_SHARED };

static int check_access(const halo_file_t *f, bool wr, int where)
{
    if (wr && (f->amode & MPI_MODE_RDONLY))
        return halo_err(MPI_ERR_READ_ONLY, "(fh=%p): the file was opened MPI_MODE_RDONLY", (void *)f);
    if (!wr && (f->amode & MPI_MODE_WRONLY))
        return halo_err(MPI_ERR_ACCESS, "(fh=%p): the file was opened MPI_MODE_WRONLY", (void *)f);
    if (where != AT_SHARED && (f->amode & MPI_MODE_SEQUENTIAL))
        return halo_err(MPI_ERR_UNSUPPORTED_OPERATION, "(fh=%p): a file opened MPI_MODE_SEQUENTIAL is "
                        "accessed with the shared file pointer only", (void *)f);
    return MPI_SUCCESS;
}

static int do_io(MPI_File fh, int where, bool wr, MPI_Offset offset, void *buf, MPI_Count count,
                 MPI_Datatype type, MPI_Status *status)
{
    FILE_CHECK(fh, f);
    int rc = check_access(f, wr, where);
    if (rc != MPI_SUCCESS)
        return rc;
    halo_dtype_t *dt = halo_dtype_ptr(type);
    MPI_Count esz = f->letype->size, fsz = halo_datarep_size(f->rep, dt);
    if (fsz < 0)
        return halo_err(MPI_ERR_TYPE, "(datatype): no size in data representation \"%s\"", f->repname);
    MPI_Count n = count * fsz / esz;
    MPI_Offset off;
    if (where == AT_EXPLICIT) {
        if (offset < 0)
            return halo_err(MPI_ERR_ARG, "(offset=%lld): offsets cannot be negative", (long long)offset);
        off = offset;
    } else if (where == AT_INDIVIDUAL) {
        off = f->ind;
    } else {
        off = atomic_fetch_add(&f->seg->shared, (int64_t)n);
    }
    MPI_Count moved;
    rc = view_io(f, wr, off, buf, count, dt, &moved);
    /* The pointer moves past the etypes the call asks for, as the shared
     * one did above: "after an individual file pointer operation is
     * initiated", it points "to the next etype after the last one that will
     * be accessed" (MPI 5.0, 14.4.3), which a read that meets the end of the
     * file does not change (its status counts what it read). After an
     * error, past what was moved. */
    if (where == AT_INDIVIDUAL)
        f->ind = off + (rc == MPI_SUCCESS ? n : (dt->size ? moved / dt->size * fsz : 0) / esz);
    if (rc == MPI_SUCCESS)
        set_status(status, moved);
    return rc;
}

static int do_ordered(MPI_File fh, bool wr, void *buf, MPI_Count count, MPI_Datatype type, MPI_Status *status)
{
    FILE_CHECK(fh, f);
    int rc = check_access(f, wr, AT_SHARED);
    if (rc != MPI_SUCCESS)
        return rc;
    halo_dtype_t *dt = halo_dtype_ptr(type);
    MPI_Count fsz = halo_datarep_size(f->rep, dt);
    if (fsz < 0)
        return halo_err(MPI_ERR_TYPE, "(datatype): no size in data representation \"%s\"", f->repname);
    int64_t n = (int64_t)(count * fsz / f->letype->size);
    int L = f->comm->size, me = f->comm->rank;
    int64_t *all = halo_malloc((size_t)L * sizeof *all);
    rc = halo_api_allgather(&n, 1, MPI_INT64_T, all, 1, MPI_INT64_T, chandle(f));
    if (rc != MPI_SUCCESS) {
        free(all);
        return rc;
    }
    int64_t before = 0, sum = 0;
    for (int i = 0; i < L; i++) {
        if (i < me)
            before += all[i];
        sum += all[i];
    }
    free(all);
    int64_t base = 0;
    if (me == 0)
        base = atomic_fetch_add(&f->seg->shared, sum);
    rc = halo_api_bcast(&base, 1, MPI_INT64_T, 0, chandle(f));
    if (rc != MPI_SUCCESS)
        return rc;
    MPI_Count moved;
    rc = view_io(f, wr, base + before, buf, count, dt, &moved);
    if (rc == MPI_SUCCESS)
        set_status(status, moved);
    return rc;
}

/* Nonblocking accesses complete at the call: their request is done. */
static int done_request(MPI_File fh, int rc, const MPI_Status *st, MPI_Request *request)
{
    if (rc != MPI_SUCCESS)
        return rc;
    halo_file_t *f = file_get(fh);
    halo_request_t *r = halo_req_alloc(HALO_REQ_NULL, f->comm);
    r->status = *st;
    halo_req_complete(r);
    *request = (MPI_Request)r;
    return MPI_SUCCESS;
}

/* ------------------------------------------------------------ open, close */

static int check_amode(int amode)
{
    const int known = MPI_MODE_APPEND | MPI_MODE_CREATE | MPI_MODE_DELETE_ON_CLOSE | MPI_MODE_EXCL |
                      MPI_MODE_RDONLY | MPI_MODE_RDWR | MPI_MODE_SEQUENTIAL | MPI_MODE_UNIQUE_OPEN |
                      MPI_MODE_WRONLY;
    if (amode & ~known)
        return halo_err(MPI_ERR_AMODE, "(amode=%d): unknown mode bits 0x%x", amode, amode & ~known);
    int rw = !!(amode & MPI_MODE_RDONLY) + !!(amode & MPI_MODE_RDWR) + !!(amode & MPI_MODE_WRONLY);
    if (rw != 1)
        return halo_err(MPI_ERR_AMODE, "(amode=%d): exactly one of MPI_MODE_RDONLY, MPI_MODE_RDWR and "
                        "MPI_MODE_WRONLY is required", amode);
    if ((amode & MPI_MODE_RDONLY) && (amode & (MPI_MODE_CREATE | MPI_MODE_EXCL)))
        return halo_err(MPI_ERR_AMODE, "(amode=%d): MPI_MODE_RDONLY cannot go with MPI_MODE_CREATE or "
                        "MPI_MODE_EXCL", amode);
    if ((amode & MPI_MODE_RDWR) && (amode & MPI_MODE_SEQUENTIAL))
        return halo_err(MPI_ERR_AMODE, "(amode=%d): MPI_MODE_RDWR cannot go with MPI_MODE_SEQUENTIAL", amode);
    return MPI_SUCCESS;
}

static int open_flags(int amode, bool creator)
{
    int fl = O_CLOEXEC;
    fl |= (amode & MPI_MODE_RDONLY) ? O_RDONLY : (amode & MPI_MODE_WRONLY) ? O_WRONLY : O_RDWR;
    if (creator && (amode & MPI_MODE_CREATE))
        fl |= O_CREAT;
    if (creator && (amode & MPI_MODE_EXCL))
        fl |= O_EXCL | O_CREAT;
    return fl;
}

/* Opens the file on this member; returns the descriptor or an error code
 * (negated into *rc_p). */
static int open_one(const char *path, int amode, bool creator, int *rc_p)
{
    int fd = open(path, open_flags(amode, creator), 0666);
    if (fd < 0) {
        *rc_p = os_err(errno, "cannot open the file", path);
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
        close(fd);
        *rc_p = halo_err(MPI_ERR_BAD_FILE, "(filename=\"%s\"): is a directory", path);
        return -1;
    }
    *rc_p = MPI_SUCCESS;
    return fd;
}

static int file_open(MPI_Comm comm, const char *filename, int amode, MPI_Info info, MPI_File *fh)
{
    halo_comm_t *oc = halo_comm_ptr(comm);
    if (oc->is_inter)
        return halo_err(MPI_ERR_COMM, "(comm=%s): files are opened on intracommunicators", oc->name);
    if (oc->group->far)
        return halo_err(MPI_ERR_UNSUPPORTED_OPERATION, "(comm=%s): files opened by processes of several "
                        "jobs (connected or spawned) are not supported yet", oc->name);
    int lrc = MPI_SUCCESS;
    halo_info_t *in = NULL;
    if (!filename)
        lrc = halo_err(MPI_ERR_BAD_FILE, "(filename=NULL): no file name given");
    else if ((lrc = check_amode(amode)) != MPI_SUCCESS)
        ;
    else if (info != MPI_INFO_NULL && !(in = halo_obj_lookup(HALO_KIND_INFO, info)))
        lrc = halo_err(MPI_ERR_INFO, "(info=%p): not a valid info object", (void *)info);
    int rc = agree(comm, lrc);
    if (rc != MPI_SUCCESS)
        return rc;
    /* A prefix "ufs:" or "file:" names the file system, as many
     * programs write; the rest is the path. */
    const char *path = filename;
    if (!strncmp(path, "ufs:", 4))
        path += 4;
    else if (!strncmp(path, "file:", 5))
        path += 5;
    /* Rank 0 creates the file (with O_EXCL when asked), the others open
     * it once it exists. */
    int fd = -1;
    lrc = MPI_SUCCESS;
    if (oc->rank == 0)
        fd = open_one(path, amode, true, &lrc);
    rc = agree(comm, lrc);
    if (rc != MPI_SUCCESS)
        return rc;
    lrc = MPI_SUCCESS;
    if (oc->rank != 0)
        fd = open_one(path, amode, false, &lrc);
    rc = agree(comm, lrc);
    if (rc != MPI_SUCCESS) {
        if (fd >= 0)
            close(fd);
        return rc;
    }
    uint32_t ctx;
    if ((rc = halo_context_alloc(oc, &ctx)) != MPI_SUCCESS) {
        close(fd);
        return rc;
    }
    halo_file_t *f = halo_obj_alloc(HALO_KIND_FILE);
    if (!f) {
        close(fd);
        return halo_err(MPI_ERR_NO_MEM, ": out of file objects");
    }
    f->fd = fd;
    f->comm = halo_comm_create_local(oc->group, ctx, oc);
    f->amode = amode;
    f->path = strdup(path);
    f->errh = halo_file_errhandler(MPI_FILE_NULL);
    halo_obj_ref(f->errh);
    f->info = in ? halo_info_dup(in) : halo_info_new();
    f->disp = 0;
    halo_dtype_t *byte = halo_dtype_ptr(MPI_BYTE);
    halo_obj_ref(byte);
    halo_obj_ref(byte);
    set_view_types(f, byte, byte, byte, byte, NULL, "native");
    rc = map_segment(f);
    if (rc == MPI_SUCCESS && (amode & MPI_MODE_APPEND)) {
        f->ind = view_end(f);
        if (f->comm->rank == 0)
            atomic_store(&f->seg->shared, f->ind);
    }
    rc = agree(chandle(f), rc);
    if (rc != MPI_SUCCESS) {
        free_file(f);
        return rc;
    }
    *fh = (MPI_File)f;
    return MPI_SUCCESS;
}

int halo_api_file_open(MPI_Comm comm, const char *filename, int amode, MPI_Info info, MPI_File *fh)
{
    int rc = file_open(comm, filename, amode, info, fh);
    if (rc != MPI_SUCCESS) {
        /* Errors of the open go to the default file error handler. */
        halo_err_redirect_file();
        *fh = MPI_FILE_NULL;
    }
    return rc;
}

int halo_api_file_close(MPI_File *fh)
{
    FILE_CHECK(*fh, f);
    /* Nobody may still be accessing the file when it goes away. */
    int rc = halo_api_barrier(chandle(f));
    if (rc != MPI_SUCCESS)
        return rc;
    /* Removing the name does not disturb the members' open descriptors;
     * once the call returns anywhere, the file is gone everywhere. */
    int lrc = MPI_SUCCESS;
    if ((f->amode & MPI_MODE_DELETE_ON_CLOSE) && f->comm->rank == 0 && unlink(f->path) != 0 && errno != ENOENT)
        lrc = os_err(errno, "cannot delete the file on close", f->path);
    halo_comm_t *c = f->comm;
    halo_obj_ref(c);
    f->hdr.flags |= HALO_OBJ_USER_FREED;
    free_file(f);
    *fh = MPI_FILE_NULL;
    rc = agree(halo_comm_handle(c), lrc);
    halo_comm_release(c);
    return rc;
}

int halo_api_file_delete(const char *filename, MPI_Info info)
{
    int rc = MPI_SUCCESS;
    if (!filename)
        rc = halo_err(MPI_ERR_BAD_FILE, "(filename=NULL): no file name given");
    else if (info != MPI_INFO_NULL && !halo_obj_lookup(HALO_KIND_INFO, info))
        rc = halo_err(MPI_ERR_INFO, "(info=%p): not a valid info object", (void *)info);
    else {
        const char *path = filename;
        if (!strncmp(path, "ufs:", 4))
            path += 4;
        else if (!strncmp(path, "file:", 5))
            path += 5;
        if (unlink(path) != 0)
            rc = os_err(errno, "cannot delete the file", path);
    }
    if (rc != MPI_SUCCESS)
        halo_err_redirect_file();
    return rc;
}

/* ------------------------------------------------------------ size, info */

/* The checks MPI_File_set_size and MPI_File_preallocate share. */
static int resize_args(const halo_file_t *f, MPI_File fh, MPI_Offset size)
{
    if (size < 0)
        return halo_err(MPI_ERR_ARG, "(size=%lld): cannot be negative", (long long)size);
    if (f->amode & MPI_MODE_RDONLY)
        return halo_err(MPI_ERR_READ_ONLY, "(fh=%p): the file was opened MPI_MODE_RDONLY", (void *)fh);
    if (f->amode & MPI_MODE_SEQUENTIAL)
        return halo_err(MPI_ERR_UNSUPPORTED_OPERATION, "(fh=%p): the file was opened MPI_MODE_SEQUENTIAL",
                        (void *)fh);
    return MPI_SUCCESS;
}

int halo_api_file_set_size(MPI_File fh, MPI_Offset size)
{
    FILE_CHECK(fh, f);
    int lrc = resize_args(f, fh, size);
    if (lrc == MPI_SUCCESS && f->comm->rank == 0 && ftruncate(f->fd, (off_t)size) != 0)
        lrc = halo_err(errno_class(errno) == MPI_ERR_BAD_FILE ? MPI_ERR_IO : errno_class(errno),
                       "(size=%lld): cannot resize the file: %s", (long long)size, strerror(errno));
    return agree(chandle(f), lrc);
}

int halo_api_file_preallocate(MPI_File fh, MPI_Offset size)
{
    FILE_CHECK(fh, f);
    int lrc = resize_args(f, fh, size);
    if (lrc == MPI_SUCCESS && f->comm->rank == 0 && size > 0) {
        struct stat st;
        if (fstat(f->fd, &st) == 0 && st.st_size < size) {
            int e = posix_fallocate(f->fd, 0, (off_t)size);
            /* Where the file system cannot reserve blocks, the size at
             * least grows. */
            if ((e == EOPNOTSUPP || e == EINVAL) && ftruncate(f->fd, (off_t)size) == 0)
                e = 0;
            if (e != 0)
                lrc = halo_err(errno_class(e) == MPI_ERR_BAD_FILE ? MPI_ERR_IO : errno_class(e),
                               "(size=%lld): cannot preallocate: %s", (long long)size, strerror(e));
        }
    }
    return agree(chandle(f), lrc);
}

int halo_api_file_get_size(MPI_File fh, MPI_Offset *size)
{
    FILE_CHECK(fh, f);
    if (!size)
        return halo_err(MPI_ERR_ARG, "(size=NULL): no place for the answer");
    struct stat st;
    if (fstat(f->fd, &st) != 0)
        return halo_err(MPI_ERR_IO, "(fh=%p): cannot read the file's size: %s", (void *)fh, strerror(errno));
    *size = (MPI_Offset)st.st_size;
    return MPI_SUCCESS;
}

int halo_api_file_get_group(MPI_File fh, MPI_Group *group)
{
    FILE_CHECK(fh, f);
    halo_obj_ref(f->comm->group);
    *group = (MPI_Group)halo_obj_handle(f->comm->group);
    return MPI_SUCCESS;
}

int halo_api_file_get_amode(MPI_File fh, int *amode)
{
    FILE_CHECK(fh, f);
    if (!amode)
        return halo_err(MPI_ERR_ARG, "(amode=NULL): no place for the answer");
    *amode = f->amode;
    return MPI_SUCCESS;
}

int halo_api_file_set_info(MPI_File fh, MPI_Info info)
{
    FILE_CHECK(fh, f);
    if (info == MPI_INFO_NULL)
        return MPI_SUCCESS;
    halo_info_t *in = halo_obj_lookup(HALO_KIND_INFO, info);
    if (!in)
        return halo_err(MPI_ERR_INFO, "(info=%p): not a valid info object", (void *)info);
    for (halo_info_entry_t *e = in->head; e; e = e->next)
        halo_info_set(f->info, e->key, e->value);
    return MPI_SUCCESS;
}

int halo_api_file_get_info(MPI_File fh, MPI_Info *info_used)
{
    FILE_CHECK(fh, f);
    if (!info_used)
        return halo_err(MPI_ERR_ARG, "(info_used=NULL): no place for the answer");
    halo_info_t *in = halo_info_dup(f->info);
    if (!in)
        return halo_err(MPI_ERR_NO_MEM, ": out of info objects");
    *info_used = (MPI_Info)in;
    return MPI_SUCCESS;
}

int halo_api_file_set_atomicity(MPI_File fh, int flag)
{
    FILE_CHECK(fh, f);
    f->atomic = flag != 0;
    return halo_api_barrier(chandle(f));
}

int halo_api_file_get_atomicity(MPI_File fh, int *flag)
{
    FILE_CHECK(fh, f);
    if (!flag)
        return halo_err(MPI_ERR_ARG, "(flag=NULL): no place for the answer");
    *flag = f->atomic;
    return MPI_SUCCESS;
}

int halo_api_file_sync(MPI_File fh)
{
    FILE_CHECK(fh, f);
    int lrc = MPI_SUCCESS;
    if (f->amode & MPI_MODE_RDONLY)
        ;   /* nothing of this member to write back */
    else if (fsync(f->fd) != 0 && errno != EINVAL)
        lrc = halo_err(MPI_ERR_IO, "(fh=%p): cannot write the file back: %s", (void *)fh, strerror(errno));
    return agree(chandle(f), lrc);
}

int halo_api_file_get_type_extent_c(MPI_File fh, MPI_Datatype datatype, MPI_Count *extent)
{
    FILE_CHECK(fh, f);
    halo_dtype_t *lt;
    int rc = halo_datarep_layout(f->rep, halo_dtype_ptr(datatype), &lt);
    if (rc != MPI_SUCCESS)
        return rc;
    *extent = lt->extent;
    halo_dtype_release(lt);
    return MPI_SUCCESS;
}

/* ------------------------------------------------------------ views */

/* The layout an etype or filetype must have (MPI 5.0 14.1.1, 14.3): its
 * displacements non-negative and non-decreasing in type-map order, and on
 * a file open for writing no two pieces overlapping. Returns the error, or
 * MPI_SUCCESS. The runs are walked from a base far from 0, so that
 * negative offsets stay on valid addresses. */
static int view_layout(const halo_dtype_t *dt, const char *arg, bool writable)
{
    if (dt->size == 0)
        return MPI_SUCCESS;
    const uintptr_t base = (uintptr_t)1 << 46;
    struct iovec iov[MAXIOV];
    MPI_Count pos = 0;
    long long prev_start = 0, prev_end = 0;
    bool first = true;
    while (pos < dt->size) {
        int n = halo_dt_iov((const void *)base, 1, dt, &pos, dt->size, iov, MAXIOV);
        if (n <= 0)
            break;
        for (int i = 0; i < n; i++) {
            long long start = (long long)((intptr_t)iov[i].iov_base - (intptr_t)base);
            long long end = start + (long long)iov[i].iov_len;
            if (start < 0)
                return halo_err(MPI_ERR_IO, "(%s): a displacement is negative (%lld)", arg, start);
            if (!first && start < prev_start)
                return halo_err(MPI_ERR_IO, "(%s): displacements must not decrease (%lld after %lld)", arg, start,
                                prev_start);
            if (!first && writable && start < prev_end)
                return halo_err(MPI_ERR_IO, "(%s): parts overlap (bytes from %lld, up to %lld already), which a "
                                "file open for writing does not allow", arg, start, prev_end);
            prev_start = start;
            if (first || end > prev_end)
                prev_end = end;
            first = false;
        }
    }
    return MPI_SUCCESS;
}

int halo_api_file_set_view(MPI_File fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype,
                           const char *datarep, MPI_Info info)
{
    FILE_CHECK(fh, f);
    halo_dtype_t *et = halo_dtype_ptr(etype), *ft = halo_dtype_ptr(filetype);
    halo_dtype_t *let = NULL, *lft = NULL;
    const halo_datarep_t *rep = NULL;
    halo_info_t *in = NULL;
    int lrc = MPI_SUCCESS;
    if (disp == MPI_DISPLACEMENT_CURRENT && !(f->amode & MPI_MODE_SEQUENTIAL))
        lrc = halo_err(MPI_ERR_ARG, "(disp=MPI_DISPLACEMENT_CURRENT): only for files opened "
                       "MPI_MODE_SEQUENTIAL");
    else if (disp < 0 && disp != MPI_DISPLACEMENT_CURRENT)
        lrc = halo_err(MPI_ERR_ARG, "(disp=%lld): cannot be negative", (long long)disp);
    else if (!datarep)
        lrc = halo_err(MPI_ERR_UNSUPPORTED_DATAREP, "(datarep=NULL): no data representation given");
    else if (halo_datarep_find(datarep, &rep) != MPI_SUCCESS)
        lrc = halo_err(MPI_ERR_UNSUPPORTED_DATAREP, "(datarep=\"%.64s\"): not \"native\", \"internal\", "
                       "\"external32\" or a registered data representation", datarep);
    else if (!(et->flags & HALO_DT_COMMITTED))
        lrc = halo_err(MPI_ERR_TYPE, "(etype): the type is not committed");
    else if (!(ft->flags & HALO_DT_COMMITTED))
        lrc = halo_err(MPI_ERR_TYPE, "(filetype): the type is not committed");
    else if (et->size <= 0)
        lrc = halo_err(MPI_ERR_TYPE, "(etype): an etype must have data");
    else if (ft->size % et->size != 0)
        lrc = halo_err(MPI_ERR_TYPE, "(filetype): its size (%lld) is not a multiple of the etype's (%lld)",
                       (long long)ft->size, (long long)et->size);
    else if (ft->size > 0 && ft->extent <= 0)
        lrc = halo_err(MPI_ERR_TYPE, "(filetype): its extent must be positive");
    else if (info != MPI_INFO_NULL && !(in = halo_obj_lookup(HALO_KIND_INFO, info)))
        lrc = halo_err(MPI_ERR_INFO, "(info=%p): not a valid info object", (void *)info);
    /* The view as laid out in the file's representation. */
    if (lrc == MPI_SUCCESS && (lrc = halo_datarep_layout(rep, et, &let)) == MPI_SUCCESS)
        lrc = halo_datarep_layout(rep, ft, &lft);
    if (lrc == MPI_SUCCESS && rep && lft->size % let->size != 0)
        lrc = halo_err(MPI_ERR_TYPE, "(filetype): its size in \"%s\" (%lld) is not a multiple of the etype's "
                       "(%lld)", datarep, (long long)lft->size, (long long)let->size);
    if (lrc == MPI_SUCCESS) {
        bool writable = (f->amode & (MPI_MODE_RDWR | MPI_MODE_WRONLY)) != 0;
        if ((lrc = view_layout(let, "etype", writable)) == MPI_SUCCESS)
            lrc = view_layout(lft, "filetype", writable);
    }
    int rc = agree(chandle(f), lrc);
    if (rc != MPI_SUCCESS) {
        if (let)
            halo_dtype_release(let);
        if (lft)
            halo_dtype_release(lft);
        return rc;
    }
    if (disp == MPI_DISPLACEMENT_CURRENT) {
        /* The shared pointer's position, in bytes of the old view. */
        disp = view_byte(f, atomic_load(&f->seg->shared));
    }
    /* Everyone has read the shared pointer before it is reset. */
    rc = halo_api_barrier(chandle(f));
    if (rc != MPI_SUCCESS) {
        halo_dtype_release(let);
        halo_dtype_release(lft);
        return rc;
    }
    f->disp = disp;
    set_view_types(f, et, ft, let, lft, rep, datarep);
    f->ind = 0;
    if (f->comm->rank == 0)
        atomic_store(&f->seg->shared, 0);
    if (in)
        for (halo_info_entry_t *e = in->head; e; e = e->next)
            halo_info_set(f->info, e->key, e->value);
    return halo_api_barrier(chandle(f));
}

/* get_view hands out predefined types as they are and derived ones as new
 * objects the program frees, equal in layout and contents (as
 * MPI_Type_get_contents does): the program may have freed its own handle
 * of the view's types already. */
static int view_type(halo_dtype_t *dt, MPI_Datatype *out)
{
    if (dt->flags & (HALO_DT_PREDEFINED | HALO_DT_F90))
        *out = halo_dtype_handle(dt);
    else
        *out = (MPI_Datatype)halo_dt_clone(dt);
    return MPI_SUCCESS;
}

int halo_api_file_get_view(MPI_File fh, MPI_Offset *disp, MPI_Datatype *etype, MPI_Datatype *filetype,
                           char *datarep)
{
    FILE_CHECK(fh, f);
    int rc = view_type(f->etype, etype);
    if (rc != MPI_SUCCESS)
        return rc;
    rc = view_type(f->ftype, filetype);
    if (rc != MPI_SUCCESS)
        return rc;
    *disp = f->disp;
    if (datarep)
        snprintf(datarep, MPI_MAX_DATAREP_STRING, "%s", f->repname);
    return MPI_SUCCESS;
}

/* ------------------------------------------------------------ pointers */

static int seek_target(halo_file_t *f, MPI_Offset cur, MPI_Offset offset, int whence, MPI_Offset *out)
{
    MPI_Offset v;
    switch (whence) {
    case MPI_SEEK_SET:
        v = offset;
        break;
    case MPI_SEEK_CUR:
        v = cur + offset;
        break;
    case MPI_SEEK_END:
        v = view_end(f) + offset;
        break;
    default:
        return halo_err(MPI_ERR_ARG, "(whence=%d): must be MPI_SEEK_SET, MPI_SEEK_CUR or MPI_SEEK_END", whence);
    }
    if (v < 0)
        return halo_err(MPI_ERR_ARG, "(offset=%lld): the file pointer would move before the view's start",
                        (long long)offset);
    *out = v;
    return MPI_SUCCESS;
}

int halo_api_file_seek(MPI_File fh, MPI_Offset offset, int whence)
{
    FILE_CHECK(fh, f);
    if (f->amode & MPI_MODE_SEQUENTIAL)
        return halo_err(MPI_ERR_UNSUPPORTED_OPERATION, "(fh=%p): the file was opened MPI_MODE_SEQUENTIAL",
                        (void *)fh);
    return seek_target(f, f->ind, offset, whence, &f->ind);
}

int halo_api_file_get_position(MPI_File fh, MPI_Offset *offset)
{
    FILE_CHECK(fh, f);
    if (f->amode & MPI_MODE_SEQUENTIAL)
        return halo_err(MPI_ERR_UNSUPPORTED_OPERATION, "(fh=%p): the file was opened MPI_MODE_SEQUENTIAL",
                        (void *)fh);
    *offset = f->ind;
    return MPI_SUCCESS;
}

int halo_api_file_seek_shared(MPI_File fh, MPI_Offset offset, int whence)
{
    FILE_CHECK(fh, f);
    MPI_Offset v = 0;
    int lrc = seek_target(f, atomic_load(&f->seg->shared), offset, whence, &v);
    int rc = agree(chandle(f), lrc);
    if (rc != MPI_SUCCESS)
        return rc;
    if (f->comm->rank == 0)
        atomic_store(&f->seg->shared, v);
    return halo_api_barrier(chandle(f));
}

int halo_api_file_get_position_shared(MPI_File fh, MPI_Offset *offset)
{
    FILE_CHECK(fh, f);
    *offset = atomic_load(&f->seg->shared);
    return MPI_SUCCESS;
}

int halo_api_file_get_byte_offset(MPI_File fh, MPI_Offset offset, MPI_Offset *disp)
{
    FILE_CHECK(fh, f);
    if (offset < 0)
        return halo_err(MPI_ERR_ARG, "(offset=%lld): cannot be negative", (long long)offset);
    *disp = view_byte(f, offset);
    return MPI_SUCCESS;
}

/* ------------------------------------------------------------ data access */

int halo_api_file_read_at_c(MPI_File fh, MPI_Offset offset, void *buf, MPI_Count count, MPI_Datatype datatype,
                            MPI_Status *status)
{
    return do_io(fh, AT_EXPLICIT, false, offset, buf, count, datatype, status);
}
int halo_api_file_write_at_c(MPI_File fh, MPI_Offset offset, const void *buf, MPI_Count count,
                             MPI_Datatype datatype, MPI_Status *status)
{
    return do_io(fh, AT_EXPLICIT, true, offset, (void *)(uintptr_t)buf, count, datatype, status);
}
int halo_api_file_read_at_all_c(MPI_File fh, MPI_Offset offset, void *buf, MPI_Count count,
                                MPI_Datatype datatype, MPI_Status *status)
{
    return do_io(fh, AT_EXPLICIT, false, offset, buf, count, datatype, status);
}
int halo_api_file_write_at_all_c(MPI_File fh, MPI_Offset offset, const void *buf, MPI_Count count,
                                 MPI_Datatype datatype, MPI_Status *status)
{
    return do_io(fh, AT_EXPLICIT, true, offset, (void *)(uintptr_t)buf, count, datatype, status);
}
int halo_api_file_read_c(MPI_File fh, void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Status *status)
{
    return do_io(fh, AT_INDIVIDUAL, false, 0, buf, count, datatype, status);
}
int halo_api_file_write_c(MPI_File fh, const void *buf, MPI_Count count, MPI_Datatype datatype,
                          MPI_Status *status)
{
    return do_io(fh, AT_INDIVIDUAL, true, 0, (void *)(uintptr_t)buf, count, datatype, status);
}
int halo_api_file_read_all_c(MPI_File fh, void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Status *status)
{
    return do_io(fh, AT_INDIVIDUAL, false, 0, buf, count, datatype, status);
}
int halo_api_file_write_all_c(MPI_File fh, const void *buf, MPI_Count count, MPI_Datatype datatype,
                              MPI_Status *status)
{
    return do_io(fh, AT_INDIVIDUAL, true, 0, (void *)(uintptr_t)buf, count, datatype, status);
}
int halo_api_file_read_shared_c(MPI_File fh, void *buf, MPI_Count count, MPI_Datatype datatype,
                                MPI_Status *status)
{
    return do_io(fh, AT_SHARED, false, 0, buf, count, datatype, status);
}
int halo_api_file_write_shared_c(MPI_File fh, const void *buf, MPI_Count count, MPI_Datatype datatype,
                                 MPI_Status *status)
{
    return do_io(fh, AT_SHARED, true, 0, (void *)(uintptr_t)buf, count, datatype, status);
}
int halo_api_file_read_ordered_c(MPI_File fh, void *buf, MPI_Count count, MPI_Datatype datatype,
                                 MPI_Status *status)
{
    return do_ordered(fh, false, buf, count, datatype, status);
}
int halo_api_file_write_ordered_c(MPI_File fh, const void *buf, MPI_Count count, MPI_Datatype datatype,
                                  MPI_Status *status)
{
    return do_ordered(fh, true, (void *)(uintptr_t)buf, count, datatype, status);
}

/* Nonblocking: the access happens now, the request is complete. */
#define NB(name, where, wr, CONST)                                                                   \
    int halo_api_file_##name##_c(MPI_File fh, CONST void *buf, MPI_Count count, MPI_Datatype datatype, \
                                 MPI_Request *request)                                               \
    {                                                                                                \
        MPI_Status st;                                                                               \
        int rc = do_io(fh, where, wr, 0, (void *)(uintptr_t)buf, count, datatype, &st);              \
        return done_request(fh, rc, &st, request);                                                   \
    }
#define NB_AT(name, wr, CONST)                                                                       \
    int halo_api_file_##name##_c(MPI_File fh, MPI_Offset offset, CONST void *buf, MPI_Count count,   \
                                 MPI_Datatype datatype, MPI_Request *request)                        \
    {                                                                                                \
        MPI_Status st;                                                                               \
        int rc = do_io(fh, AT_EXPLICIT, wr, offset, (void *)(uintptr_t)buf, count, datatype, &st);   \
        return done_request(fh, rc, &st, request);                                                   \
    }
#define NOCONST
NB(iread, AT_INDIVIDUAL, false, NOCONST)
NB(iwrite, AT_INDIVIDUAL, true, const)
NB(iread_all, AT_INDIVIDUAL, false, NOCONST)
NB(iwrite_all, AT_INDIVIDUAL, true, const)
NB(iread_shared, AT_SHARED, false, NOCONST)
NB(iwrite_shared, AT_SHARED, true, const)
NB_AT(iread_at, false, NOCONST)
NB_AT(iwrite_at, true, const)
NB_AT(iread_at_all, false, NOCONST)
NB_AT(iwrite_at_all, true, const)

/* Split collectives: _begin does the access and keeps its status for
 * _end; one may be under way per file. */
static int split_begin(MPI_File fh, int kind, const void *buf, int rc, const MPI_Status *st)
{
    halo_file_t *f = file_get(fh);
    if (rc != MPI_SUCCESS)
        return rc;
    f->split = kind;
    f->split_buf = buf;
    f->split_status = *st;
    return MPI_SUCCESS;
}

static int split_check(MPI_File fh)
{
    FILE_CHECK(fh, f);
    if (f->split != SPLIT_NONE)
        return halo_err(MPI_ERR_OTHER, "(fh=%p): a split collective is already under way on this file",
                        (void *)fh);
    return MPI_SUCCESS;
}

static int split_end(MPI_File fh, int kind, MPI_Status *status)
{
    FILE_CHECK(fh, f);
    if (f->split != kind)
        return halo_err(MPI_ERR_OTHER, "(fh=%p): no matching split collective was begun on this file",
                        (void *)fh);
    f->split = SPLIT_NONE;
    if (status != MPI_STATUS_IGNORE)
        *status = f->split_status;
    return MPI_SUCCESS;
}

#define SPLIT(name, KIND, CONST, call)                                                               \
    int halo_api_file_##name##_begin_c(MPI_File fh, CONST void *buf, MPI_Count count, MPI_Datatype datatype) \
    {                                                                                                \
        int rc = split_check(fh);                                                                    \
        if (rc != MPI_SUCCESS)                                                                       \
            return rc;                                                                               \
        MPI_Status st;                                                                               \
        return split_begin(fh, KIND, buf, call, &st);                                                \
    }                                                                                                \
    int halo_api_file_##name##_end(MPI_File fh, CONST void *buf, MPI_Status *status)                 \
    {                                                                                                \
        (void)buf;                                                                                   \
        return split_end(fh, KIND, status);                                                          \
    }
SPLIT(read_all, SPLIT_READ_ALL, NOCONST, halo_api_file_read_all_c(fh, buf, count, datatype, &st))
SPLIT(write_all, SPLIT_WRITE_ALL, const, halo_api_file_write_all_c(fh, buf, count, datatype, &st))
SPLIT(read_ordered, SPLIT_READ_ORDERED, NOCONST, halo_api_file_read_ordered_c(fh, buf, count, datatype, &st))
SPLIT(write_ordered, SPLIT_WRITE_ORDERED, const, halo_api_file_write_ordered_c(fh, buf, count, datatype, &st))

int halo_api_file_read_at_all_begin_c(MPI_File fh, MPI_Offset offset, void *buf, MPI_Count count,
                                      MPI_Datatype datatype)
{
    int rc = split_check(fh);
    if (rc != MPI_SUCCESS)
        return rc;
    MPI_Status st;
    return split_begin(fh, SPLIT_READ_AT_ALL, buf,
                       halo_api_file_read_at_all_c(fh, offset, buf, count, datatype, &st), &st);
}
int halo_api_file_read_at_all_end(MPI_File fh, void *buf, MPI_Status *status)
{
    (void)buf;
    return split_end(fh, SPLIT_READ_AT_ALL, status);
}
int halo_api_file_write_at_all_begin_c(MPI_File fh, MPI_Offset offset, const void *buf, MPI_Count count,
                                       MPI_Datatype datatype)
{
    int rc = split_check(fh);
    if (rc != MPI_SUCCESS)
        return rc;
    MPI_Status st;
    return split_begin(fh, SPLIT_WRITE_AT_ALL, buf,
                       halo_api_file_write_at_all_c(fh, offset, buf, count, datatype, &st), &st);
}
int halo_api_file_write_at_all_end(MPI_File fh, const void *buf, MPI_Status *status)
{
    (void)buf;
    return split_end(fh, SPLIT_WRITE_AT_ALL, status);
}

/* ------------------------------------------------------------ error handlers */

int halo_api_file_set_errhandler(MPI_File file, MPI_Errhandler errhandler)
{
    halo_file_t *f = NULL;
    if (file != MPI_FILE_NULL) {
        f = file_get(file);
        if (!f)
            return halo_err(MPI_ERR_FILE, "(file=%p): not a valid file", (void *)file);
    }
    return halo_errhandler_set(f ? &f->errh : &null_errh, errhandler, HALO_EOBJ_FILE);
}

int halo_api_file_get_errhandler(MPI_File file, MPI_Errhandler *errhandler)
{
    if (file != MPI_FILE_NULL && !file_get(file))
        return halo_err(MPI_ERR_FILE, "(file=%p): not a valid file", (void *)file);
    halo_errhandler_t *e = halo_file_errhandler(file);
    halo_obj_ref(e);
    *errhandler = (MPI_Errhandler)halo_obj_handle(e);
    return MPI_SUCCESS;
}

int halo_api_file_call_errhandler(MPI_File fh, int errorcode)
{
    if (fh != MPI_FILE_NULL && !file_get(fh))
        return halo_err(MPI_ERR_FILE, "(fh=%p): not a valid file", (void *)fh);
    halo_errhandler_invoke(halo_file_errhandler(fh), HALO_EOBJ_FILE, fh, errorcode);
    return MPI_SUCCESS;
}
