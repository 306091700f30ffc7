/* One-sided communication (RMA) between the ranks of one node.
 *
 * Every window has a segment in /dev/shm that all its members map: a
 * header, one control line per member (where its memory lies, its
 * passive-target lock word, its accumulate lock), the counters of
 * post/start/complete/wait, and, for windows whose memory MPI allocates
 * (MPI_Win_allocate, MPI_Win_allocate_shared), the members' memory itself.
 * Memory the program gave (MPI_Win_create, MPI_Win_attach) stays in its
 * process and is reached with single-copy reads and writes
 * (process_vm_readv/writev), or, on a node that refuses them, by packets
 * that the target's progress engine carries out.
 *
 * Every operation moves its data at the call, so it is complete, at the
 * origin and at the target, when the call returns: flushes are memory
 * fences, and Rput and friends return completed requests. The
 * synchronization calls then only order the epochs: a fence is a barrier;
 * MPI_Win_lock takes a reader-writer lock word in the target's control
 * line (MPI_MODE_NOCHECK skips it); post and complete count up per pair of
 * members, start and wait wait for those counts. Accumulates take the
 * target's accumulate lock for the read-modify-write, so that concurrent
 * accumulates to one location are atomic per element, as the standard asks
 * (the memory model is MPI_WIN_UNIFIED).
 *
 * The window works on its own communicator (a new context over the
 * group), so its barriers never meet the program's collectives. */
#include "rma/win.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "binding/api_gen.h"
#include "binding/binding.h"
#include "coll/op.h"
#include "coll/op_predef.h"
#include "core/attr.h"
#include "core/comm.h"
#include "core/errhandler.h"
#include "core/errors.h"
#include "core/group.h"
#include "core/info.h"
#include "datatype/dtype.h"
#include "pmi.h"
#include "progress/progress.h"
#include "pt2pt/pt2pt.h"
#include "transport/transport.h"

/* A member's control line in the segment. */
typedef struct {
    uint64_t base;          /* its memory in its own address space (MPI_Win_create) */
    int64_t size;
    int64_t disp_unit;
    int64_t data_off;       /* its memory in the segment (allocated windows), or -1 */
    _Atomic int32_t lock;   /* passive target: -1 exclusive, else the number of shared holders */
    _Atomic uint32_t acc;   /* held during an accumulate's read-modify-write */
    char pad[64 - 40];
} win_line_t;
_Static_assert(sizeof(win_line_t) == 64, "a control line is one cache line");

typedef struct {
    _Atomic uint32_t attached;
    char pad[60];
} win_hdr_t;

/* The memory a member attached to a dynamic window, for the range check
 * of the members that access it (attach and detach are ordered before
 * such accesses by the program); regions beyond the table are not listed
 * and turn the check off for that member. */
#define WIN_REGIONS 32
typedef struct {
    int32_t n, unlisted;
    uint64_t base[WIN_REGIONS], size[WIN_REGIONS];
} win_regions_t;

typedef struct halo_win {
    halo_obj_t hdr;
    halo_comm_t *comm;          /* the window's own communicator */
    int flavor;
    int model;
    void *base;                 /* this member's memory */
    MPI_Aint size;
    int disp_unit_int;          /* MPI_WIN_DISP_UNIT's value (an int) */
    MPI_Aint disp_unit;
    halo_errhandler_t *errh;
    halo_attr_t *attrs;
    halo_info_t *info;
    char name[MPI_MAX_OBJECT_NAME];
    char *seg;                  /* the shared segment */
    size_t seg_size;
    win_line_t *lines;          /* [member] */
    _Atomic uint64_t *posted;   /* [target * L + origin]: posts of target to origin */
    _Atomic uint64_t *done;     /* [target * L + origin]: completes of origin to target */
    win_regions_t *regtab;      /* [member]: attached memory (dynamic windows) */
    uint64_t *posts_used;       /* [target]: posts of target this member started on */
    uint64_t *dones_due;        /* [origin]: completes this member waits for */
    int *targets;               /* wake-up scratch: world ranks that can be woken */
    /* epochs of this member */
    bool fence_open;
    bool lock_all;
    bool lock_all_nocheck;
    int8_t *locked;             /* [target]: 0, HELD_SHARED or HELD_EXCL (+ HELD_NOCHECK) */
    int nlocked;
    int *start;                 /* comm ranks of the open access group, nstart of them */
    int nstart;
    bool started;               /* MPI_Win_start called, MPI_Win_complete not yet */
    bool *in_start;
    int *post;                  /* comm ranks of the open exposure group */
    int npost;
    bool posted_open;
    struct region { struct region *next; char *base; MPI_Aint size; } *regions;   /* attached */
} halo_win_t;

enum { HELD_SHARED = 1, HELD_EXCL = 2, HELD_NOCHECK = 4 };

/* Set when this node refuses single-copy access: the members may then
 * need this process to carry out their packets, and every one-sided call
 * polls once (a rank that spins on MPI_Compare_and_swap to itself must
 * still answer the others). */
static bool am_node;

static inline void am_progress(void)
{
    if (am_node)
        halo_progress_poll();
}

static int am_poll(void);

void halo_win_init(void)
{
    halo_obj_kind_setup(HALO_KIND_WIN, sizeof(halo_win_t), 1u << 16);
    halo_progress_hook_add(am_poll);
}

static halo_win_t *win_get(MPI_Win win)
{
    return halo_obj_lookup(HALO_KIND_WIN, win);
}

#define WIN_CHECK(win, w)                                                                            \
    halo_win_t *w = win_get(win);                                                                    \
    if (!w)                                                                                          \
    return halo_err(MPI_ERR_WIN, "(win=%p): %s", (void *)(win),                                      \
                    (win) == MPI_WIN_NULL ? "MPI_WIN_NULL is not a window" : "not a valid window")

halo_errhandler_t *halo_win_errhandler(MPI_Win win)
{
    halo_win_t *w = win_get(win);
    return w ? w->errh : NULL;
}

static inline int nmembers(const halo_win_t *w)
{
    return w->comm->size;
}

static void wake_members(halo_win_t *w)
{
    int n = halo_tr_wake_targets(w->comm->world, nmembers(w), w->targets);
    halo_tr_wake_targets_ring(w->targets, n);
}

/* ------------------------------------------------------------ creation */

static size_t align_up(size_t v, size_t a)
{
    return (v + a - 1) / a * a;
}

static void free_win(halo_win_t *w)
{
    if (w->seg)
        munmap(w->seg, w->seg_size);
    free(w->posts_used);
    free(w->dones_due);
    free(w->targets);
    free(w->locked);
    free(w->start);
    free(w->in_start);
    free(w->post);
    while (w->regions) {
        struct region *r = w->regions;
        w->regions = r->next;
        free(r);
    }
    if (w->info)
        halo_info_release(w->info);
    halo_errhandler_release(w->errh);
    if (w->comm)
        halo_comm_release(w->comm);
    halo_obj_free(w);
}

/* Maps the window's segment (every member sizes it alike; the last to
 * attach removes its name). */
static void segment_name(const halo_win_t *w, char *name, size_t n)
{
    const halo_comm_t *c = w->comm;
    uint64_t h = halo_fnv1a(HALO_FNV_BASIS, c->world, (size_t)c->size * sizeof *c->world);
    char suffix[96];
    snprintf(suffix, sizeof suffix, "w%x-%016llx", (unsigned)c->ctx, (unsigned long long)h);
    halo_shm_name(name, n, halo_world.kvsname, suffix);
}

static int map_segment(halo_win_t *w, size_t size)
{
    char name[300];
    segment_name(w, name, sizeof name);
    int fd = shm_open(name, O_CREAT | O_RDWR, 0600);
    if (fd < 0)
        return halo_err(MPI_ERR_NO_MEM, ": cannot open the window's shared segment /dev/shm%s: %s", name,
                        strerror(errno));
    char why[160];
    if (halo_shm_fd_trusted(fd, why, sizeof why) != 0) {
        close(fd);
        return halo_err(MPI_ERR_OTHER, ": refusing the window's shared segment /dev/shm%s: %s", name, why);
    }
    /* Its pages are taken when first touched: a segment larger than the
     * free space of /dev/shm would fail then, with SIGBUS, not here. */
    struct statvfs sv;
    if (fstatvfs(fd, &sv) == 0 && (uint64_t)sv.f_bavail * (uint64_t)sv.f_frsize < (uint64_t)size) {
        close(fd);
        return halo_err(MPI_ERR_NO_MEM, ": the window needs %zu bytes of shared memory, and /dev/shm has %llu "
                        "free", size, (unsigned long long)sv.f_bavail * (unsigned long long)sv.f_frsize);
    }
    if (ftruncate(fd, (off_t)size) != 0) {
        int e = errno;
        close(fd);
        return halo_err(MPI_ERR_NO_MEM, ": cannot size the window's shared segment (%zu bytes): %s", size,
                        strerror(e));
    }
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (p == MAP_FAILED) {
        return halo_err(MPI_ERR_NO_MEM, ": cannot map the window's shared segment (%zu bytes): %s", size,
                        strerror(errno));
    }
    w->seg = p;
    w->seg_size = size;
    win_hdr_t *hd = p;
    if (atomic_fetch_add(&hd->attached, 1) + 1 == (uint32_t)w->comm->size)
        shm_unlink(name);
    return MPI_SUCCESS;
}

/* The common part of the four ways to make a window. `alloc`: MPI
 * allocates size bytes in the segment (contiguous across members when
 * `contig`); else base is the program's memory (or none, dynamic). */
static int win_make(int flavor, void *base, MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm,
                    void *baseptr, MPI_Win *win)
{
    halo_comm_t *oc = halo_comm_ptr(comm);
    if (oc->is_inter)
        return halo_err(MPI_ERR_COMM, "(comm=%s): windows are made on intracommunicators", oc->name);
    if (oc->group->far)
        return halo_err(MPI_ERR_UNSUPPORTED_OPERATION, "(comm=%s): windows over processes of several jobs "
                        "(connected or spawned) are not supported yet", oc->name);
    /* Arguments one member got wrong fail the call on every member (the
     * others would wait for it otherwise): each learns of the others'
     * errors in the exchange of sizes. */
    int lrc = MPI_SUCCESS;
    halo_info_t *in = NULL;
    if (size < 0)
        lrc = halo_err(MPI_ERR_SIZE, "(size=%lld): a window's size cannot be negative", (long long)size);
    else if (disp_unit <= 0)
        lrc = halo_err(MPI_ERR_DISP, "(disp_unit=%lld): the displacement unit must be positive",
                       (long long)disp_unit);
    else if (info != MPI_INFO_NULL && !(in = halo_obj_lookup(HALO_KIND_INFO, info)))
        lrc = halo_err(MPI_ERR_INFO, "(info=%p): not a valid info object", (void *)info);
    bool alloc = flavor == MPI_WIN_FLAVOR_ALLOCATE || flavor == MPI_WIN_FLAVOR_SHARED;
    bool contig = flavor == MPI_WIN_FLAVOR_SHARED;
    if (flavor == MPI_WIN_FLAVOR_SHARED && in) {
        const char *v = halo_info_lookup(in, "alloc_shared_noncontig");
        if (v && strcmp(v, "true") == 0)
            contig = false;
    }
    /* Every member learns the others' sizes and units (collective on comm). */
    int64_t mine[3] = {(int64_t)size, (int64_t)disp_unit, lrc ? halo_err_class_of(lrc) : MPI_SUCCESS};
    int64_t *all = halo_malloc((size_t)oc->size * sizeof mine);
    int rc = halo_api_allgather(mine, 3, MPI_INT64_T, all, 3, MPI_INT64_T, comm);
    if (rc != MPI_SUCCESS) {
        free(all);
        return rc;
    }
    for (int i = 0; i < oc->size && lrc == MPI_SUCCESS; i++)
        if (all[3 * i + 2] != MPI_SUCCESS)
            lrc = halo_err((int)all[3 * i + 2], ": rank %d of the communicator passed wrong arguments", i);
    if (lrc != MPI_SUCCESS) {
        free(all);
        return lrc;
    }
    uint32_t ctx;
    if ((rc = halo_context_alloc(oc, &ctx)) != MPI_SUCCESS) {
        free(all);
        return rc;
    }
    halo_win_t *w = halo_obj_alloc(HALO_KIND_WIN);
    if (!w) {
        free(all);
        return halo_err(MPI_ERR_NO_MEM, ": out of window objects");
    }
    w->comm = halo_comm_create_local(oc->group, ctx, oc);
    if (!halo_tr_cma_node())
        am_node = true;
    int L = w->comm->size, me = w->comm->rank;
    w->flavor = flavor;
    w->model = MPI_WIN_UNIFIED;
    w->size = size;
    w->disp_unit = disp_unit;
    w->disp_unit_int = disp_unit > INT32_MAX ? INT32_MAX : (int)disp_unit;
    w->errh = halo_errhandler_fatal();
    halo_obj_ref(w->errh);
    w->info = in ? halo_info_dup(in) : NULL;
    w->posts_used = halo_calloc((size_t)L, sizeof *w->posts_used);
    w->dones_due = halo_calloc((size_t)L, sizeof *w->dones_due);
    w->targets = halo_calloc((size_t)L, sizeof *w->targets);
    w->locked = halo_calloc((size_t)L, sizeof *w->locked);
    w->start = halo_calloc((size_t)L, sizeof *w->start);
    w->in_start = halo_calloc((size_t)L, sizeof *w->in_start);
    w->post = halo_calloc((size_t)L, sizeof *w->post);
    /* Layout: header, lines, posted, done, then the members' memory. */
    size_t off = 64;
    size_t lines_off = off;
    off += (size_t)L * sizeof(win_line_t);
    size_t posted_off = off;
    off += (size_t)L * (size_t)L * sizeof(uint64_t);
    size_t done_off = off;
    off += (size_t)L * (size_t)L * sizeof(uint64_t);
    size_t regtab_off = off;
    if (flavor == MPI_WIN_FLAVOR_DYNAMIC)
        off += (size_t)L * sizeof(win_regions_t);
    off = align_up(off, 4096);
    int64_t *data_off = halo_calloc((size_t)L, sizeof *data_off);
    for (int i = 0; i < L; i++) {
        data_off[i] = -1;
        if (!alloc)
            continue;
        if (!contig)
            off = align_up(off, 64);
        data_off[i] = (int64_t)off;
        off += (size_t)all[3 * i];
    }
    size_t seg_size = align_up(off > 64 ? off : 64, 4096);
    rc = map_segment(w, seg_size);
    /* A member that could not map it fails the call on all: the others
     * remove the name it will never count as attached. */
    int mine_cls = rc == MPI_SUCCESS ? 0 : halo_err_class_of(rc), worst = 0;
    int arc = halo_api_allreduce(&mine_cls, &worst, 1, MPI_INT, MPI_MAX, comm);
    if (rc == MPI_SUCCESS && (arc != MPI_SUCCESS || worst != 0))
        rc = arc != MPI_SUCCESS ? arc : halo_err(worst, ": another member could not map the window's segment");
    if (rc != MPI_SUCCESS) {
        char name[300];
        segment_name(w, name, sizeof name);
        shm_unlink(name);
        free(all);
        free(data_off);
        free_win(w);
        return rc;
    }
    w->lines = (win_line_t *)(w->seg + lines_off);
    w->posted = (_Atomic uint64_t *)(w->seg + posted_off);
    w->done = (_Atomic uint64_t *)(w->seg + done_off);
    if (flavor == MPI_WIN_FLAVOR_DYNAMIC)
        w->regtab = (win_regions_t *)(w->seg + regtab_off);
    if (alloc)
        base = size > 0 ? w->seg + data_off[me] : NULL;
    w->base = base;
    win_line_t *ln = &w->lines[me];
    ln->base = (uint64_t)(uintptr_t)base;
    ln->size = size;
    ln->disp_unit = disp_unit;
    ln->data_off = data_off[me];
    free(all);
    free(data_off);
    if (baseptr)
        *(void **)baseptr = base;
    /* Everyone's line is written before anyone uses the window. */
    rc = halo_api_barrier(halo_comm_handle(w->comm));
    if (rc != MPI_SUCCESS) {
        free_win(w);
        return rc;
    }
    *win = (MPI_Win)w;
    return MPI_SUCCESS;
}

int halo_api_win_create_c(void *base, MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm, MPI_Win *win)
{
    return win_make(MPI_WIN_FLAVOR_CREATE, base, size, disp_unit, info, comm, NULL, win);
}

int halo_api_win_allocate_c(MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr,
                            MPI_Win *win)
{
    return win_make(MPI_WIN_FLAVOR_ALLOCATE, NULL, size, disp_unit, info, comm, baseptr, win);
}

int halo_api_win_allocate_shared_c(MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm,
                                   void *baseptr, MPI_Win *win)
{
    return win_make(MPI_WIN_FLAVOR_SHARED, NULL, size, disp_unit, info, comm, baseptr, win);
}

int halo_api_win_create_dynamic(MPI_Info info, MPI_Comm comm, MPI_Win *win)
{
    return win_make(MPI_WIN_FLAVOR_DYNAMIC, MPI_BOTTOM, 0, 1, info, comm, NULL, win);
}

int halo_api_win_free(MPI_Win *win)
{
    WIN_CHECK(*win, w);
    if (w->nlocked || w->lock_all || w->started || w->posted_open)
        return halo_err(MPI_ERR_RMA_SYNC, "(win=%p): an access or exposure epoch is still open "
                        "(a lock, MPI_Win_start or MPI_Win_post not yet ended)", (void *)*win);
    /* Nobody may still be reading or writing this member's memory. */
    int rc = halo_api_barrier(halo_comm_handle(w->comm));
    if (rc != MPI_SUCCESS)
        return rc;
    rc = halo_attr_delete_all(HALO_KIND_WIN, w, &w->attrs);
    if (rc != MPI_SUCCESS)
        return rc;
    w->hdr.flags |= HALO_OBJ_USER_FREED;
    free_win(w);
    *win = MPI_WIN_NULL;
    return MPI_SUCCESS;
}

int halo_api_win_attach(MPI_Win win, void *base, MPI_Aint size)
{
    WIN_CHECK(win, w);
    if (w->flavor != MPI_WIN_FLAVOR_DYNAMIC)
        return halo_err(MPI_ERR_RMA_FLAVOR, "(win=%p): memory is attached to dynamic windows only", (void *)win);
    if (size < 0)
        return halo_err(MPI_ERR_SIZE, "(size=%lld): cannot be negative", (long long)size);
    if (size > 0 && !base)
        return halo_err(MPI_ERR_RMA_ATTACH, "(base=NULL): no memory to attach");
    struct region *r = halo_malloc(sizeof *r);
    r->base = base;
    r->size = size;
    r->next = w->regions;
    w->regions = r;
    win_regions_t *t = &w->regtab[w->comm->rank];
    if (t->n < WIN_REGIONS) {
        t->base[t->n] = (uint64_t)(uintptr_t)base;
        t->size[t->n] = (uint64_t)size;
        t->n++;
    } else {
        t->unlisted++;
    }
    atomic_thread_fence(memory_order_seq_cst);
    return MPI_SUCCESS;
}

int halo_api_win_detach(MPI_Win win, const void *base)
{
    WIN_CHECK(win, w);
    if (w->flavor != MPI_WIN_FLAVOR_DYNAMIC)
        return halo_err(MPI_ERR_RMA_FLAVOR, "(win=%p): memory is detached from dynamic windows only", (void *)win);
    for (struct region **pp = &w->regions; *pp; pp = &(*pp)->next)
        if ((*pp)->base == base) {
            struct region *r = *pp;
            *pp = r->next;
            win_regions_t *t = &w->regtab[w->comm->rank];
            int i = 0;
            while (i < t->n && (t->base[i] != (uint64_t)(uintptr_t)base || t->size[i] != (uint64_t)r->size))
                i++;
            if (i < t->n) {   /* the last entry takes its place */
                t->n--;
                t->base[i] = t->base[t->n];
                t->size[i] = t->size[t->n];
            } else {
                t->unlisted--;
            }
            free(r);
            atomic_thread_fence(memory_order_seq_cst);
            return MPI_SUCCESS;
        }
    return halo_err(MPI_ERR_RMA_ATTACH, "(base=%p): no memory attached at this address", base);
}

/* ------------------------------------------------------------ objects */

int halo_api_win_get_group(MPI_Win win, MPI_Group *group)
{
    WIN_CHECK(win, w);
    halo_obj_ref(w->comm->group);
    *group = (MPI_Group)halo_obj_handle(w->comm->group);
    return MPI_SUCCESS;
}

int halo_api_win_set_name(MPI_Win win, const char *win_name)
{
    WIN_CHECK(win, w);
    if (!win_name)
        return halo_err(MPI_ERR_ARG, "(win_name=NULL): no name given");
    snprintf(w->name, sizeof w->name, "%s", win_name);
    return MPI_SUCCESS;
}

int halo_api_win_get_name(MPI_Win win, char *win_name, int *resultlen)
{
    if (!win_name || !resultlen)
        return halo_err(MPI_ERR_ARG, ": win_name and resultlen must not be NULL");
    if (win == MPI_WIN_NULL) {   /* the null handle answers its own name */
        snprintf(win_name, MPI_MAX_OBJECT_NAME, "MPI_WIN_NULL");
        *resultlen = (int)strlen(win_name);
        return MPI_SUCCESS;
    }
    WIN_CHECK(win, w);
    snprintf(win_name, MPI_MAX_OBJECT_NAME, "%s", w->name);
    *resultlen = (int)strlen(win_name);
    return MPI_SUCCESS;
}

int halo_api_win_set_info(MPI_Win win, MPI_Info info)
{
    WIN_CHECK(win, w);
    halo_info_t *in = halo_obj_lookup(HALO_KIND_INFO, info);
    if (!in)
        return halo_err(MPI_ERR_INFO, "(info=%p): not a valid info object", (void *)info);
    if (!w->info)
        w->info = halo_info_new();
    for (halo_info_entry_t *e = in->head; e; e = e->next)
        halo_info_set(w->info, e->key, e->value);
    return MPI_SUCCESS;
}

int halo_api_win_get_info(MPI_Win win, MPI_Info *info_used)
{
    WIN_CHECK(win, w);
    halo_info_t *in = w->info ? halo_info_dup(w->info) : halo_info_new();
    if (!in)
        return halo_err(MPI_ERR_NO_MEM, ": out of info objects");
    *info_used = (MPI_Info)in;
    return MPI_SUCCESS;
}

int halo_api_win_set_errhandler(MPI_Win win, MPI_Errhandler errhandler)
{
    WIN_CHECK(win, w);
    return halo_errhandler_set(&w->errh, errhandler, HALO_EOBJ_WIN);
}

int halo_api_win_get_errhandler(MPI_Win win, MPI_Errhandler *errhandler)
{
    WIN_CHECK(win, w);
    halo_obj_ref(w->errh);
    *errhandler = (MPI_Errhandler)halo_obj_handle(w->errh);
    return MPI_SUCCESS;
}

int halo_api_win_call_errhandler(MPI_Win win, int errorcode)
{
    WIN_CHECK(win, w);
    halo_errhandler_invoke(w->errh, HALO_EOBJ_WIN, win, errorcode);
    return MPI_SUCCESS;
}

int halo_api_win_set_attr(MPI_Win win, int win_keyval, void *attribute_val)
{
    WIN_CHECK(win, w);
    if (win_keyval >= MPI_WIN_BASE && win_keyval <= MPI_WIN_MODEL)
        return halo_err(MPI_ERR_KEYVAL, "(win_keyval=%d): predefined window attributes cannot be set",
                        win_keyval);
    return halo_attr_set(HALO_KIND_WIN, w, &w->attrs, win_keyval, attribute_val);
}

int halo_api_win_get_attr(MPI_Win win, int win_keyval, void *attribute_val, int *flag)
{
    WIN_CHECK(win, w);
    void **out = attribute_val;
    /* C gets the base and pointers to the others, Fortran (through the
     * attribute code's flag) every value itself. */
    bool f = halo_attr_fortran;
    *flag = 1;
    switch (win_keyval) {
    case MPI_WIN_BASE:
        *out = w->base;
        return MPI_SUCCESS;
    case MPI_WIN_SIZE:
        *out = f ? (void *)(intptr_t)w->size : &w->size;
        return MPI_SUCCESS;
    case MPI_WIN_DISP_UNIT:
        *out = f ? (void *)(intptr_t)w->disp_unit_int : &w->disp_unit_int;
        return MPI_SUCCESS;
    case MPI_WIN_CREATE_FLAVOR:
        *out = f ? (void *)(intptr_t)w->flavor : &w->flavor;
        return MPI_SUCCESS;
    case MPI_WIN_MODEL:
        *out = f ? (void *)(intptr_t)w->model : &w->model;
        return MPI_SUCCESS;
    default:
        *flag = 0;
        return halo_attr_get(HALO_KIND_WIN, w, &w->attrs, win_keyval, attribute_val, flag);
    }
}

int halo_api_win_delete_attr(MPI_Win win, int win_keyval)
{
    WIN_CHECK(win, w);
    if (win_keyval >= MPI_WIN_BASE && win_keyval <= MPI_WIN_MODEL)
        return halo_err(MPI_ERR_KEYVAL, "(win_keyval=%d): predefined window attributes cannot be deleted",
                        win_keyval);
    return halo_attr_delete(HALO_KIND_WIN, w, &w->attrs, win_keyval);
}

static int rank_check(const halo_win_t *w, int rank, const char *arg)
{
    if (rank < 0 || rank >= nmembers(w))
        return halo_err(MPI_ERR_RANK, "(%s=%d): not a rank of the window's group (size %d)", arg, rank,
                        nmembers(w));
    return MPI_SUCCESS;
}

/* Memory of MPI_Win_allocate(_shared) windows lies in the segment every
 * member maps; that of MPI_Win_create is shared with its own process only
 * (MPI 4.1: a member whose memory cannot be reached answers size 0). */
int halo_api_win_shared_query_c(MPI_Win win, int rank, MPI_Aint *size, MPI_Aint *disp_unit, void *baseptr)
{
    WIN_CHECK(win, w);
    if (w->flavor == MPI_WIN_FLAVOR_DYNAMIC)
        return halo_err(MPI_ERR_RMA_FLAVOR, "(win=%p): dynamic windows have no memory to query", (void *)win);
    if (rank == MPI_PROC_NULL) {
        /* the first member with memory, or none */
        rank = 0;
        for (int i = 0; i < nmembers(w); i++)
            if (w->lines[i].size > 0) {
                rank = i;
                break;
            }
    } else {
        int rc = rank_check(w, rank, "rank");
        if (rc)
            return rc;
    }
    const win_line_t *ln = &w->lines[rank];
    bool reach = ln->data_off >= 0 || rank == w->comm->rank;
    *size = reach ? (MPI_Aint)ln->size : 0;
    *disp_unit = (MPI_Aint)ln->disp_unit;
    void *p = NULL;
    if (reach && ln->size > 0)
        p = ln->data_off >= 0 ? w->seg + ln->data_off : w->base;
    *(void **)baseptr = p;
    return MPI_SUCCESS;
}

/* ------------------------------------------------------------ synchronization */

static bool assert_ok(int a, int allowed)
{
    return (a & ~allowed) == 0;
}

#define ASSERT_CHECK(a, allowed)                                                                  \
    do {                                                                                          \
        if (!assert_ok((a), (allowed)))                                                           \
            return halo_err(MPI_ERR_ASSERT, "(assert=%d): not a combination of this call's "      \
                            "assertions", (a));                                                   \
    } while (0)

int halo_api_win_fence(int assert, MPI_Win win)
{
    WIN_CHECK(win, w);
    ASSERT_CHECK(assert, MPI_MODE_NOSTORE | MPI_MODE_NOPUT | MPI_MODE_NOPRECEDE | MPI_MODE_NOSUCCEED);
    if (w->nlocked || w->lock_all || w->started || w->posted_open)
        return halo_err(MPI_ERR_RMA_SYNC, "(win=%p): a lock or a post/start epoch is open", (void *)win);
    atomic_thread_fence(memory_order_seq_cst);
    int rc = halo_api_barrier(halo_comm_handle(w->comm));
    if (rc != MPI_SUCCESS)
        return rc;
    w->fence_open = !(assert & MPI_MODE_NOSUCCEED);
    return MPI_SUCCESS;
}

typedef struct {
    _Atomic int32_t *word;
    int type;
    bool got;
} lock_try_t;

/* The wait's test: takes the lock when it is free, and once taken keeps
 * answering true (the wait may ask again after a success). */
static bool lock_try(void *arg)
{
    lock_try_t *t = arg;
    if (t->got)
        return true;
    int32_t v = atomic_load_explicit(t->word, memory_order_relaxed);
    if (t->type == MPI_LOCK_EXCLUSIVE)
        t->got = v == 0 && atomic_compare_exchange_strong(t->word, &v, -1);
    else
        t->got = v >= 0 && atomic_compare_exchange_strong(t->word, &v, v + 1);
    return t->got;
}

static void lock_take(halo_win_t *w, int rank, int type)
{
    lock_try_t t = {&w->lines[rank].lock, type, false};
    if (!lock_try(&t))
        halo_progress_wait_paced(lock_try, &t);
}

static void lock_drop(halo_win_t *w, int rank, int type)
{
    atomic_thread_fence(memory_order_seq_cst);
    if (type == MPI_LOCK_EXCLUSIVE)
        atomic_store(&w->lines[rank].lock, 0);
    else
        atomic_fetch_sub(&w->lines[rank].lock, 1);
    wake_members(w);
}

int halo_api_win_lock(int lock_type, int rank, int assert, MPI_Win win)
{
    WIN_CHECK(win, w);
    if (lock_type != MPI_LOCK_SHARED && lock_type != MPI_LOCK_EXCLUSIVE)
        return halo_err(MPI_ERR_LOCKTYPE, "(lock_type=%d): neither MPI_LOCK_SHARED nor MPI_LOCK_EXCLUSIVE",
                        lock_type);
    ASSERT_CHECK(assert, MPI_MODE_NOCHECK);
    if (rank == MPI_PROC_NULL)
        return MPI_SUCCESS;
    int rc = rank_check(w, rank, "rank");
    if (rc)
        return rc;
    if (w->locked[rank] || w->lock_all)
        return halo_err(MPI_ERR_RMA_SYNC, "(rank=%d): this window is already locked at that rank", rank);
    if (w->started)
        return halo_err(MPI_ERR_RMA_SYNC, "(win=%p): an access epoch of MPI_Win_start is open", (void *)win);
    w->fence_open = false;   /* a fence followed by no operation opened no epoch */
    if (!(assert & MPI_MODE_NOCHECK))
        lock_take(w, rank, lock_type);
    w->locked[rank] = (int8_t)((lock_type == MPI_LOCK_EXCLUSIVE ? HELD_EXCL : HELD_SHARED) |
                               ((assert & MPI_MODE_NOCHECK) ? HELD_NOCHECK : 0));
    w->nlocked++;
    return MPI_SUCCESS;
}

int halo_api_win_unlock(int rank, MPI_Win win)
{
    WIN_CHECK(win, w);
    if (rank == MPI_PROC_NULL)
        return MPI_SUCCESS;
    int rc = rank_check(w, rank, "rank");
    if (rc)
        return rc;
    if (!w->locked[rank])
        return halo_err(MPI_ERR_RMA_SYNC, "(rank=%d): the window is not locked at that rank", rank);
    int how = w->locked[rank];
    w->locked[rank] = 0;
    w->nlocked--;
    if (how & HELD_NOCHECK)
        atomic_thread_fence(memory_order_seq_cst);
    else
        lock_drop(w, rank, (how & HELD_EXCL) ? MPI_LOCK_EXCLUSIVE : MPI_LOCK_SHARED);
    return MPI_SUCCESS;
}

int halo_api_win_lock_all(int assert, MPI_Win win)
{
    WIN_CHECK(win, w);
    ASSERT_CHECK(assert, MPI_MODE_NOCHECK);
    if (w->lock_all || w->nlocked)
        return halo_err(MPI_ERR_RMA_SYNC, "(win=%p): the window is already locked", (void *)win);
    if (w->started)
        return halo_err(MPI_ERR_RMA_SYNC, "(win=%p): an access epoch of MPI_Win_start is open", (void *)win);
    w->fence_open = false;   /* a fence followed by no operation opened no epoch */
    w->lock_all_nocheck = (assert & MPI_MODE_NOCHECK) != 0;
    if (!w->lock_all_nocheck)
        for (int i = 0; i < nmembers(w); i++)
            lock_take(w, i, MPI_LOCK_SHARED);
    w->lock_all = true;
    return MPI_SUCCESS;
}

int halo_api_win_unlock_all(MPI_Win win)
{
    WIN_CHECK(win, w);
    if (!w->lock_all)
        return halo_err(MPI_ERR_RMA_SYNC, "(win=%p): the window is not locked with MPI_Win_lock_all",
                        (void *)win);
    w->lock_all = false;
    atomic_thread_fence(memory_order_seq_cst);
    if (!w->lock_all_nocheck) {
        for (int i = 0; i < nmembers(w); i++)
            atomic_fetch_sub(&w->lines[i].lock, 1);
        wake_members(w);
    }
    return MPI_SUCCESS;
}

static int passive_rank_check(halo_win_t *w, int rank)
{
    if (rank == MPI_PROC_NULL)
        return MPI_SUCCESS;
    int rc = rank_check(w, rank, "rank");
    if (rc)
        return rc;
    if (!w->locked[rank] && !w->lock_all)
        return halo_err(MPI_ERR_RMA_SYNC, "(rank=%d): no passive-target epoch (MPI_Win_lock) is open there",
                        rank);
    return MPI_SUCCESS;
}

/* Operations complete at the call: a flush only orders memory. */
int halo_api_win_flush(int rank, MPI_Win win)
{
    WIN_CHECK(win, w);
    int rc = passive_rank_check(w, rank);
    atomic_thread_fence(memory_order_seq_cst);
    am_progress();
    return rc;
}

int halo_api_win_flush_local(int rank, MPI_Win win)
{
    return halo_api_win_flush(rank, win);
}

int halo_api_win_flush_all(MPI_Win win)
{
    WIN_CHECK(win, w);
    if (!w->nlocked && !w->lock_all)
        return halo_err(MPI_ERR_RMA_SYNC, "(win=%p): no passive-target epoch (MPI_Win_lock) is open",
                        (void *)win);
    atomic_thread_fence(memory_order_seq_cst);
    am_progress();
    return MPI_SUCCESS;
}

int halo_api_win_flush_local_all(MPI_Win win)
{
    return halo_api_win_flush_all(win);
}

int halo_api_win_sync(MPI_Win win)
{
    WIN_CHECK(win, w);
    (void)w;
    atomic_thread_fence(memory_order_seq_cst);
    am_progress();
    return MPI_SUCCESS;
}

/* The comm ranks of a group's members in the window (n of them), or an
 * error when one is not a member. */
static int group_ranks(halo_win_t *w, MPI_Group group, int *out, int *n_p)
{
    halo_group_t *g = halo_obj_lookup(HALO_KIND_GROUP, group);
    if (!g)
        return halo_err(MPI_ERR_GROUP, "(group=%p): not a valid group", (void *)group);
    for (int i = 0; i < g->size; i++) {
        int r = halo_group_rank_of(w->comm->group, g->world[i]);
        if (r == MPI_UNDEFINED)
            return halo_err(MPI_ERR_GROUP, ": member %d of the group is not in the window's group", i);
        out[i] = r;
    }
    *n_p = g->size;
    return MPI_SUCCESS;
}

int halo_api_win_post(MPI_Group group, int assert, MPI_Win win)
{
    WIN_CHECK(win, w);
    ASSERT_CHECK(assert, MPI_MODE_NOCHECK | MPI_MODE_NOSTORE | MPI_MODE_NOPUT);
    if (w->posted_open)
        return halo_err(MPI_ERR_RMA_SYNC, "(win=%p): an exposure epoch (MPI_Win_post) is already open",
                        (void *)win);
    int rc = group_ranks(w, group, w->post, &w->npost);
    if (rc)
        return rc;
    w->fence_open = false;
    int L = nmembers(w), me = w->comm->rank;
    atomic_thread_fence(memory_order_seq_cst);
    for (int i = 0; i < w->npost; i++) {
        int o = w->post[i];
        w->dones_due[o]++;
        atomic_fetch_add(&w->posted[(size_t)me * (size_t)L + (size_t)o], 1);
    }
    w->posted_open = true;
    wake_members(w);
    return MPI_SUCCESS;
}

typedef struct {
    halo_win_t *w;
} win_arg_t;

static bool starts_posted(void *arg)
{
    halo_win_t *w = ((win_arg_t *)arg)->w;
    int L = nmembers(w), me = w->comm->rank;
    for (int i = 0; i < w->nstart; i++) {
        int t = w->start[i];
        if (atomic_load(&w->posted[(size_t)t * (size_t)L + (size_t)me]) <= w->posts_used[t])
            return false;
    }
    return true;
}

int halo_api_win_start(MPI_Group group, int assert, MPI_Win win)
{
    WIN_CHECK(win, w);
    ASSERT_CHECK(assert, MPI_MODE_NOCHECK);
    if (w->started || w->nlocked || w->lock_all)
        return halo_err(MPI_ERR_RMA_SYNC, "(win=%p): another access epoch is open", (void *)win);
    w->fence_open = false;
    int n, rc = group_ranks(w, group, w->start, &n);
    if (rc)
        return rc;
    w->nstart = n;
    w->started = true;
    win_arg_t a = {w};
    if (!starts_posted(&a))
        halo_progress_wait_paced(starts_posted, &a);
    for (int i = 0; i < n; i++) {
        w->posts_used[w->start[i]]++;
        w->in_start[w->start[i]] = true;
    }
    atomic_thread_fence(memory_order_seq_cst);
    return MPI_SUCCESS;
}

int halo_api_win_complete(MPI_Win win)
{
    WIN_CHECK(win, w);
    if (!w->started)
        return halo_err(MPI_ERR_RMA_SYNC, "(win=%p): no access epoch (MPI_Win_start) is open", (void *)win);
    int L = nmembers(w), me = w->comm->rank;
    atomic_thread_fence(memory_order_seq_cst);
    for (int i = 0; i < w->nstart; i++) {
        int t = w->start[i];
        w->in_start[t] = false;
        atomic_fetch_add(&w->done[(size_t)t * (size_t)L + (size_t)me], 1);
    }
    w->nstart = 0;
    w->started = false;
    wake_members(w);
    return MPI_SUCCESS;
}

static bool posts_done(void *arg)
{
    halo_win_t *w = ((win_arg_t *)arg)->w;
    int L = nmembers(w), me = w->comm->rank;
    for (int i = 0; i < w->npost; i++) {
        int o = w->post[i];
        if (atomic_load(&w->done[(size_t)me * (size_t)L + (size_t)o]) < w->dones_due[o])
            return false;
    }
    return true;
}

int halo_api_win_wait(MPI_Win win)
{
    WIN_CHECK(win, w);
    if (!w->posted_open)
        return halo_err(MPI_ERR_RMA_SYNC, "(win=%p): no exposure epoch (MPI_Win_post) is open", (void *)win);
    win_arg_t a = {w};
    if (!posts_done(&a))
        halo_progress_wait_paced(posts_done, &a);
    atomic_thread_fence(memory_order_seq_cst);
    w->posted_open = false;
    w->npost = 0;
    return MPI_SUCCESS;
}

int halo_api_win_test(MPI_Win win, int *flag)
{
    WIN_CHECK(win, w);
    if (!w->posted_open)
        return halo_err(MPI_ERR_RMA_SYNC, "(win=%p): no exposure epoch (MPI_Win_post) is open", (void *)win);
    win_arg_t a = {w};
    halo_progress_poll();
    *flag = posts_done(&a);
    if (*flag) {
        atomic_thread_fence(memory_order_seq_cst);
        w->posted_open = false;
        w->npost = 0;
    }
    return MPI_SUCCESS;
}

/* ------------------------------------------------------------ data movement */

/* Where an operation's target data lies. */
typedef struct {
    int rank;
    char *local;        /* mapped here (allocated windows, or this process) */
    uintptr_t remote;   /* else its address in the target process */
    halo_dtype_t *dt;
    MPI_Count count, bytes;
} target_t;

static int target_find(halo_win_t *w, int rank, MPI_Aint disp, MPI_Count count, MPI_Datatype type,
                       target_t *t)
{
    am_progress();
    int rc = rank_check(w, rank, "target_rank");
    if (rc)
        return rc;
    if (!w->fence_open && !w->lock_all && !w->locked[rank] && !w->in_start[rank])
        return halo_err(MPI_ERR_RMA_SYNC, "(target_rank=%d): no access epoch to that rank is open "
                        "(MPI_Win_fence, MPI_Win_start, MPI_Win_lock or MPI_Win_lock_all first)", rank);
    const win_line_t *ln = &w->lines[rank];
    halo_dtype_t *dt = halo_dtype_ptr(type);
    t->rank = rank;
    t->dt = dt;
    t->count = count;
    t->bytes = count * dt->size;
    t->local = NULL;
    t->remote = 0;
    if (w->flavor == MPI_WIN_FLAVOR_DYNAMIC) {
        /* target_disp is an address in the target process, in memory it
         * attached */
        const win_regions_t *rt = &w->regtab[rank];
        if (count > 0 && t->bytes > 0 && rt->unlisted == 0) {
            MPI_Count lo = (MPI_Count)disp + dt->true_lb, hi = (MPI_Count)disp + (count - 1) * dt->extent + dt->true_ub;
            if (dt->extent < 0)
                lo = (MPI_Count)disp + (count - 1) * dt->extent + dt->true_lb, hi = (MPI_Count)disp + dt->true_ub;
            /* attached regions may abut: walk from lo through the
             * regions that cover it until past hi */
            MPI_Count at = lo;
            int i = 0;
            while (at < hi) {
                for (i = 0; i < rt->n; i++)
                    if ((MPI_Count)rt->base[i] <= at && at < (MPI_Count)(rt->base[i] + rt->size[i]))
                        break;
                if (i == rt->n)
                    break;
                at = (MPI_Count)(rt->base[i] + rt->size[i]);
            }
            if (at < hi)
                return halo_err(MPI_ERR_RMA_RANGE, "(target_disp=%#llx): bytes %#llx to %#llx are not in memory "
                                "that rank %d attached to the window", (unsigned long long)disp,
                                (unsigned long long)lo, (unsigned long long)hi, rank);
        }
        if (rank == w->comm->rank)
            t->local = (char *)(uintptr_t)disp;
        else
            t->remote = (uintptr_t)disp;
        return MPI_SUCCESS;
    }
    MPI_Count off = (MPI_Count)disp * ln->disp_unit;
    if (count > 0 && t->bytes > 0) {
        MPI_Count lo = off + dt->true_lb, hi = off + (count - 1) * dt->extent + dt->true_ub;
        if (dt->extent < 0)
            lo = off + (count - 1) * dt->extent + dt->true_lb, hi = off + dt->true_ub;
        if (disp < 0 || lo < 0 || hi > ln->size)
            return halo_err(MPI_ERR_RMA_RANGE, "(target_disp=%lld): bytes %lld to %lld lie outside the %lld "
                            "bytes of rank %d's window", (long long)disp, (long long)lo, (long long)hi,
                            (long long)ln->size, rank);
    }
    if (ln->data_off >= 0)
        t->local = w->seg + ln->data_off + off;
    else if (rank == w->comm->rank)
        t->local = (char *)w->base + off;
    else
        t->remote = (uintptr_t)ln->base + (uintptr_t)off;
    return MPI_SUCCESS;
}

/* Without single-copy access to a target (a node that refuses
 * process_vm_readv, or HALO_CMA=0), the origin sends the target's runs
 * (and, writing, the data) in packets that the target's progress engine
 * carries out in its own memory and answers; the origin waits for every
 * answer, so the operation is still complete when its call returns. The
 * target moves the data when it polls: in any MPI call, as the standard's
 * progress rule allows. */
typedef struct {
    uint64_t addr, len;
} am_run_t;

typedef struct {
    int pending;    /* packets not yet answered */
    char *into;     /* reads: the packed bytes */
} am_op_t;

/* Answers that found the transport full wait here, in order, for the
 * progress hook. */
typedef struct am_out {
    struct am_out *next;
    int dst;
    halo_pkt_hdr_t h;
    size_t len;
    char data[];
} am_out_t;
static am_out_t *am_head, *am_tail;

static int am_poll(void)
{
    int n = 0;
    while (am_head && halo_tr_send(am_head->dst, &am_head->h, am_head->data, am_head->len, NULL, NULL) == HALO_TR_OK) {
        am_out_t *o = am_head;
        am_head = o->next;
        if (!am_head)
            am_tail = NULL;
        free(o);
        n++;
    }
    return n;
}

static void am_answer(int dst, const halo_pkt_hdr_t *h, const void *data, size_t len)
{
    if (!am_head && halo_tr_send(dst, h, data, len, NULL, NULL) == HALO_TR_OK)
        return;
    am_out_t *o = halo_malloc(sizeof *o + len);
    o->next = NULL;
    o->dst = dst;
    o->h = *h;
    o->len = len;
    if (len)
        memcpy(o->data, data, len);
    if (am_tail)
        am_tail->next = o;
    else
        am_head = o;
    am_tail = o;
}

void halo_rma_on_packet(int src_world, const halo_pkt_hdr_t *h, const void *payload, size_t len)
{
    if (h->type == HALO_PKT_RMA_ANS) {
        am_op_t *op = (am_op_t *)(uintptr_t)h->sreq;
        if (len)
            memcpy(op->into + h->aux, payload, len);
        op->pending--;
        return;
    }
    size_t nruns = (size_t)h->bytes;
    const char *runs = payload, *data = runs + nruns * sizeof(am_run_t);
    halo_pkt_hdr_t a = {.type = HALO_PKT_RMA_ANS, .sreq = h->sreq, .aux = h->aux};
    if (h->type == HALO_PKT_RMA_WRITE) {
        for (size_t i = 0; i < nruns; i++) {
            am_run_t r;
            memcpy(&r, runs + i * sizeof r, sizeof r);
            memcpy((void *)(uintptr_t)r.addr, data, (size_t)r.len);
            data += r.len;
        }
        atomic_thread_fence(memory_order_seq_cst);
        am_answer(src_world, &a, NULL, 0);
        return;
    }
    size_t total = 0, at = 0;
    for (size_t i = 0; i < nruns; i++) {
        am_run_t r;
        memcpy(&r, runs + i * sizeof r, sizeof r);
        total += (size_t)r.len;
    }
    char *buf = halo_malloc(total ? total : 1);
    for (size_t i = 0; i < nruns; i++) {
        am_run_t r;
        memcpy(&r, runs + i * sizeof r, sizeof r);
        memcpy(buf + at, (const void *)(uintptr_t)r.addr, (size_t)r.len);
        at += (size_t)r.len;
    }
    am_answer(src_world, &a, buf, at);
    free(buf);
}

static bool am_done(void *arg)
{
    return ((am_op_t *)arg)->pending == 0;
}

#define AM_RUNS 256

/* The packed bytes [pos, end) of the target's runs of t, moved by packets
 * (see above). A read's packet lists runs whose bytes fit one answer. */
static void am_move(halo_win_t *w, const target_t *t, void *packed, MPI_Count pos, int write)
{
    int world = w->comm->world[t->rank];
    size_t room = halo_tr_chunk_max(world);
    am_op_t op = {0, packed};
    struct iovec *rv = halo_malloc(AM_RUNS * sizeof *rv);
    char *p = halo_malloc(room);
    while (pos < t->bytes) {
        MPI_Count from = pos;
        MPI_Count data_max = (MPI_Count)(write ? room - AM_RUNS * sizeof(am_run_t) : room);
        MPI_Count limit = from + data_max < t->bytes ? from + data_max : t->bytes;
        int n = halo_dt_iov((void *)t->remote, t->count, t->dt, &pos, limit, rv, AM_RUNS);
        size_t dlen = (size_t)(pos - from), plen = (size_t)n * sizeof(am_run_t);
        for (int i = 0; i < n; i++) {
            am_run_t r = {(uint64_t)(uintptr_t)rv[i].iov_base, (uint64_t)rv[i].iov_len};
            memcpy(p + (size_t)i * sizeof r, &r, sizeof r);
        }
        if (write) {
            memcpy(p + plen, (const char *)packed + from, dlen);
            plen += dlen;
        }
        halo_pkt_hdr_t h = {.type = write ? HALO_PKT_RMA_WRITE : HALO_PKT_RMA_READ, .bytes = (uint64_t)n,
                            .sreq = (uint64_t)(uintptr_t)&op, .aux = (uint64_t)from};
        op.pending++;
        while (halo_tr_send(world, &h, p, plen, NULL, NULL) != HALO_TR_OK)
            halo_progress_poll();
    }
    free(p);
    free(rv);
    if (op.pending)
        halo_progress_wait(am_done, &op);
}

#define IOV_BATCH 1024

/* Moves the target's data to (write = 0) or from (write = 1) `packed`. */
static int target_move(halo_win_t *w, const target_t *t, void *packed, int write)
{
    if (t->bytes == 0)
        return MPI_SUCCESS;
    if (t->local) {
        if (write)
            halo_dt_unpack(t->local, t->count, t->dt, 0, packed, t->bytes);
        else
            halo_dt_pack(t->local, t->count, t->dt, 0, packed, t->bytes);
        return MPI_SUCCESS;
    }
    int world = w->comm->world[t->rank];
    struct iovec *rv = halo_malloc(IOV_BATCH * sizeof *rv);
    MPI_Count pos = 0;
    int rc = 0;
    while (pos < t->bytes && rc == 0) {
        MPI_Count from = pos;
        int n = halo_dt_iov((void *)t->remote, t->count, t->dt, &pos, t->bytes, rv, IOV_BATCH);
        struct iovec lv = {(char *)packed + from, (size_t)(pos - from)};
        rc = write ? halo_tr_writev(world, &lv, 1, rv, n) : halo_tr_readv(world, &lv, 1, rv, n);
        if (rc != 0)
            pos = from;   /* refused before anything of this batch moved */
    }
    free(rv);
    if (rc != 0)
        am_move(w, t, packed, pos, write);
    return MPI_SUCCESS;
}

/* Scratch buffers of one thread, kept between calls: a fresh allocation
 * of a large buffer is a fresh mapping whose page faults cost more than
 * the operation (an accumulate of 1 MiB took 760 us, 30 without them).
 * One per purpose, so that an operation never uses one twice. */
enum { SCR_ORIGIN, SCR_OLD, SCR_NEW, SCR_RESULT, SCR_COUNT };
static HALO_TLS struct {
    void *p;
    size_t n;
} scratch[SCR_COUNT];

static void *scratch_get(int i, MPI_Count bytes)
{
    size_t n = bytes > 0 ? (size_t)bytes : 1;
    if (scratch[i].n < n) {
        free(scratch[i].p);
        scratch[i].p = halo_malloc(n);
        scratch[i].n = n;
    }
    return scratch[i].p;
}

/* The origin's data as packed bytes: the buffer itself when contiguous,
 * else a packed copy in a scratch buffer. */
static const void *origin_packed(const void *buf, MPI_Count count, halo_dtype_t *dt)
{
    if (halo_dt_contig(dt))
        return buf;
    MPI_Count bytes = count * dt->size;
    void *p = scratch_get(SCR_ORIGIN, bytes);
    halo_dt_pack(buf, count, dt, 0, p, bytes);
    return p;
}

/* The `what` data (origin's, result buffer's) of `bytes` against the
 * target's `target_bytes`. */
static int sizes_match(MPI_Count bytes, MPI_Count target_bytes, const char *what)
{
    if (bytes != target_bytes)
        return halo_err(MPI_ERR_TYPE, ": the %s data (%lld bytes) and the target's (%lld bytes) differ in size",
                        what, (long long)bytes, (long long)target_bytes);
    return MPI_SUCCESS;
}

/* The target of an operation, whose data must be as large as the
 * `bytes` of the origin's data (or of the result buffer: `what`). */
static int target_sized(halo_win_t *w, int rank, MPI_Aint disp, MPI_Count count, MPI_Datatype type,
                        MPI_Count bytes, const char *what, target_t *t)
{
    int rc = target_find(w, rank, disp, count, type, t);
    return rc ? rc : sizes_match(bytes, t->bytes, what);
}

int halo_api_put_c(const void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype, int target_rank,
                   MPI_Aint target_disp, MPI_Count target_count, MPI_Datatype target_datatype, MPI_Win win)
{
    WIN_CHECK(win, w);
    if (target_rank == MPI_PROC_NULL)
        return MPI_SUCCESS;
    target_t t;
    halo_dtype_t *odt = halo_dtype_ptr(origin_datatype);
    int rc = target_sized(w, target_rank, target_disp, target_count, target_datatype, origin_count * odt->size,
                          "origin's", &t);
    if (rc)
        return rc;
    return target_move(w, &t, (void *)origin_packed(origin_addr, origin_count, odt), 1);
}

int halo_api_get_c(void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype, int target_rank,
                   MPI_Aint target_disp, MPI_Count target_count, MPI_Datatype target_datatype, MPI_Win win)
{
    WIN_CHECK(win, w);
    if (target_rank == MPI_PROC_NULL)
        return MPI_SUCCESS;
    target_t t;
    halo_dtype_t *odt = halo_dtype_ptr(origin_datatype);
    int rc = target_sized(w, target_rank, target_disp, target_count, target_datatype, origin_count * odt->size,
                          "origin's", &t);
    if (rc)
        return rc;
    if (halo_dt_contig(odt))
        return target_move(w, &t, origin_addr, 0);
    void *tmp = scratch_get(SCR_RESULT, t.bytes);
    rc = target_move(w, &t, tmp, 0);
    if (rc == MPI_SUCCESS)
        halo_dt_unpack(origin_addr, origin_count, odt, 0, tmp, t.bytes);
    return rc;
}

/* The accumulate lock of a target: a spin lock held for one
 * read-modify-write; a holder that is not running is waited for by
 * yielding. */
static void acc_lock(halo_win_t *w, int rank)
{
    _Atomic uint32_t *a = &w->lines[rank].acc;
    for (int spins = 0;; spins++) {
        uint32_t z = 0;
        if (atomic_load_explicit(a, memory_order_relaxed) == 0 &&
            atomic_compare_exchange_weak_explicit(a, &z, 1, memory_order_acquire, memory_order_relaxed))
            return;
        if (spins > 64) {
            /* the holder may be waiting for this process to carry out its
             * packets (no single-copy access) */
            halo_progress_poll();
            sched_yield();
        }
    }
}

static void acc_unlock(halo_win_t *w, int rank)
{
    atomic_store_explicit(&w->lines[rank].acc, 0, memory_order_release);
}

/* The predefined type an accumulate's data is made of. */
/* The predefined type an accumulate's data is made of (NULL for a type
 * with no data at all, which combines nothing). */
static int acc_basic(halo_dtype_t *dt, const char *arg, halo_dtype_t **basic_p)
{
    *basic_p = NULL;
    if (dt->size == 0)
        return MPI_SUCCESS;
    if (dt->basic == MPI_DATATYPE_NULL)
        return halo_err(MPI_ERR_TYPE, "(%s): accumulates take types made of one predefined type", arg);
    *basic_p = halo_dtype_ptr(dt->basic);
    return MPI_SUCCESS;
}

/* new = origin op old, both packed: n elements of basic. The operation
 * works on elements laid out as in memory, so the pair types whose
 * packed size is below their extent (MPI_DOUBLE_INT and others with
 * padding) are spread out to their layout around it. */
static int acc_combine(MPI_Op op, halo_dtype_t *basic, const void *origin, void *upd, MPI_Count bytes)
{
    MPI_Count n = bytes / basic->size;
    if (basic->extent == basic->size)
        return halo_op_apply(op, basic, origin, upd, n);
    size_t span = (size_t)(n * basic->extent);
    char *o = halo_malloc(span ? span : 1), *u = halo_malloc(span ? span : 1);
    halo_dt_unpack(o, n, basic, 0, origin, bytes);
    halo_dt_unpack(u, n, basic, 0, upd, bytes);
    int rc = halo_op_apply(op, basic, o, u, n);
    if (rc == MPI_SUCCESS)
        halo_dt_pack(u, n, basic, 0, upd, bytes);
    free(o);
    free(u);
    return rc;
}

/* The operation must be predefined, and defined for the type when there
 * is data to combine (a count of 0 combines nothing). */
static int acc_op_check(MPI_Op op, halo_dtype_t *basic, MPI_Count count)
{
    halo_op_t *o = halo_op_get(op);
    if (!o)
        return halo_err(MPI_ERR_OP, "(op=%p): not a valid operation", (void *)op);
    if (!(o->hdr.flags & HALO_OBJ_PREDEFINED))
        return halo_err(MPI_ERR_OP, ": accumulates take predefined operations only, not user-defined ones");
    return count > 0 && basic ? halo_op_check(op, basic, "op") : MPI_SUCCESS;
}

/* One read-modify-write at the target under its accumulate lock:
 * `result` (packed, may be NULL) receives the old bytes; the new ones are
 * origin op old (origin for MPI_REPLACE; nothing written for MPI_NO_OP). */
static int acc_at(halo_win_t *w, const target_t *t, const void *origin, MPI_Op op, halo_dtype_t *basic,
                  void *result)
{
    int rc = MPI_SUCCESS;
    size_t bytes = (size_t)t->bytes;
    acc_lock(w, t->rank);
    if (t->local && halo_dt_contig(t->dt) && basic->extent == basic->size) {
        /* mapped here, and laid out as packed: combine in place */
        if (result)
            memcpy(result, t->local, bytes);
        if (op == MPI_REPLACE)
            memmove(t->local, origin, bytes);
        else if (op != MPI_NO_OP)
            rc = halo_op_apply(op, basic, origin, t->local, t->bytes / basic->size);
    } else if (op == MPI_REPLACE && !result) {
        rc = target_move(w, t, (void *)origin, 1);
    } else {
        void *old = result ? result : scratch_get(SCR_OLD, t->bytes);
        rc = target_move(w, t, old, 0);
        if (rc == MPI_SUCCESS && op != MPI_NO_OP) {
            if (op == MPI_REPLACE) {
                rc = target_move(w, t, (void *)origin, 1);
            } else {
                void *upd = scratch_get(SCR_NEW, t->bytes);
                memcpy(upd, old, bytes);
                rc = acc_combine(op, basic, origin, upd, t->bytes);
                if (rc == MPI_SUCCESS)
                    rc = target_move(w, t, upd, 1);
            }
        }
    }
    acc_unlock(w, t->rank);   /* a release: the data is visible before the lock is free */
    return rc;
}

int halo_api_accumulate_c(const void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
                          int target_rank, MPI_Aint target_disp, MPI_Count target_count,
                          MPI_Datatype target_datatype, MPI_Op op, MPI_Win win)
{
    WIN_CHECK(win, w);
    halo_dtype_t *odt = halo_dtype_ptr(origin_datatype), *basic = NULL;
    int rc = acc_basic(odt, "origin_datatype", &basic);
    if (rc || (rc = acc_op_check(op, basic, origin_count)))
        return rc;
    if (target_rank == MPI_PROC_NULL)
        return MPI_SUCCESS;
    target_t t;
    if ((rc = target_sized(w, target_rank, target_disp, target_count, target_datatype, origin_count * odt->size,
                           "origin's", &t)))
        return rc;
    if (t.bytes == 0)
        return MPI_SUCCESS;
    return acc_at(w, &t, origin_packed(origin_addr, origin_count, odt), op, basic, NULL);
}

int halo_api_get_accumulate_c(const void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
                              void *result_addr, MPI_Count result_count, MPI_Datatype result_datatype,
                              int target_rank, MPI_Aint target_disp, MPI_Count target_count,
                              MPI_Datatype target_datatype, MPI_Op op, MPI_Win win)
{
    WIN_CHECK(win, w);
    halo_dtype_t *rdt = halo_dtype_ptr(result_datatype), *tdt = halo_dtype_ptr(target_datatype), *basic = NULL;
    int rc = acc_basic(tdt, "target_datatype", &basic);
    if (rc || (rc = acc_op_check(op, basic, target_count)))
        return rc;
    if (target_rank == MPI_PROC_NULL)
        return MPI_SUCCESS;
    target_t t;
    if ((rc = target_sized(w, target_rank, target_disp, target_count, target_datatype, result_count * rdt->size,
                           "result buffer's", &t)))
        return rc;
    if (t.bytes == 0)
        return MPI_SUCCESS;
    const void *src = NULL;
    if (op != MPI_NO_OP) {
        halo_dtype_t *odt = halo_dtype_ptr(origin_datatype);
        if ((rc = sizes_match(origin_count * odt->size, t.bytes, "origin's")))
            return rc;
        src = origin_packed(origin_addr, origin_count, odt);
    }
    /* the old bytes land in the result buffer itself when it is one run */
    bool direct = halo_dt_contig(rdt);
    void *res = direct ? result_addr : scratch_get(SCR_RESULT, t.bytes);
    rc = acc_at(w, &t, src, op, basic, res);
    if (rc == MPI_SUCCESS && !direct)
        halo_dt_unpack(result_addr, result_count, rdt, 0, res, t.bytes);
    return rc;
}

int halo_api_fetch_and_op(const void *origin_addr, void *result_addr, MPI_Datatype datatype, int target_rank,
                          MPI_Aint target_disp, MPI_Op op, MPI_Win win)
{
    return halo_api_get_accumulate_c(origin_addr, 1, datatype, result_addr, 1, datatype, target_rank, target_disp,
                                     1, datatype, op, win);
}

int halo_api_compare_and_swap(const void *origin_addr, const void *compare_addr, void *result_addr,
                              MPI_Datatype datatype, int target_rank, MPI_Aint target_disp, MPI_Win win)
{
    WIN_CHECK(win, w);
    halo_dtype_t *dt = halo_dtype_ptr(datatype);
    if (!(dt->hdr.flags & HALO_OBJ_PREDEFINED) || dt->basic != datatype)
        return halo_err(MPI_ERR_TYPE, "(datatype): compare-and-swap takes one predefined type");
    /* An integer, logical, byte, multi-language or character type (MPI 5.0,
     * 12.3.4): what MPI_BAND or MPI_LAND is defined for, and the characters;
     * not floating point. */
    if (halo_op_predef_valid(MPI_BAND, datatype) != MPI_SUCCESS &&
        halo_op_predef_valid(MPI_LAND, datatype) != MPI_SUCCESS && datatype != MPI_CHAR &&
        datatype != MPI_CHARACTER && datatype != MPI_WCHAR)
        return halo_err(MPI_ERR_TYPE, "(datatype=%s): compare-and-swap takes an integer, logical, byte, "
                        "multi-language or character type", dt->name);
    if (target_rank == MPI_PROC_NULL)
        return MPI_SUCCESS;
    target_t t;
    int rc = target_find(w, target_rank, target_disp, 1, datatype, &t);
    if (rc)
        return rc;
    acc_lock(w, t.rank);
    char old[64];
    void *oldp = t.bytes <= (MPI_Count)sizeof old ? old : halo_malloc((size_t)t.bytes);
    rc = target_move(w, &t, oldp, 0);
    if (rc == MPI_SUCCESS && memcmp(oldp, compare_addr, (size_t)t.bytes) == 0)
        rc = target_move(w, &t, (void *)origin_addr, 1);
    acc_unlock(w, t.rank);
    if (rc == MPI_SUCCESS)
        memcpy(result_addr, oldp, (size_t)t.bytes);
    if (oldp != old)
        free(oldp);
    return rc;
}

/* Request-based operations complete at the call: their request is done. */
static int done_request(halo_win_t *w, int rc, MPI_Request *request)
{
    if (rc != MPI_SUCCESS)
        return rc;
    halo_request_t *r = halo_req_alloc(HALO_REQ_NULL, w->comm);
    halo_status_empty(&r->status);
    halo_req_complete(r);
    *request = (MPI_Request)r;
    return MPI_SUCCESS;
}

static int request_epoch(halo_win_t *w, int rank)
{
    if (rank != MPI_PROC_NULL && rank >= 0 && rank < nmembers(w) && !w->lock_all && !w->locked[rank])
        return halo_err(MPI_ERR_RMA_SYNC, "(target_rank=%d): request-based operations need a passive-target "
                        "epoch (MPI_Win_lock or MPI_Win_lock_all)", rank);
    return MPI_SUCCESS;
}

int halo_api_rput_c(const void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype, int target_rank,
                    MPI_Aint target_disp, MPI_Count target_count, MPI_Datatype target_datatype, MPI_Win win,
                    MPI_Request *request)
{
    WIN_CHECK(win, w);
    int rc = request_epoch(w, target_rank);
    if (rc)
        return rc;
    return done_request(w, halo_api_put_c(origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                                          target_count, target_datatype, win), request);
}

int halo_api_rget_c(void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype, int target_rank,
                    MPI_Aint target_disp, MPI_Count target_count, MPI_Datatype target_datatype, MPI_Win win,
                    MPI_Request *request)
{
    WIN_CHECK(win, w);
    int rc = request_epoch(w, target_rank);
    if (rc)
        return rc;
    return done_request(w, halo_api_get_c(origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                                          target_count, target_datatype, win), request);
}

int halo_api_raccumulate_c(const void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
                           int target_rank, MPI_Aint target_disp, MPI_Count target_count,
                           MPI_Datatype target_datatype, MPI_Op op, MPI_Win win, MPI_Request *request)
{
    WIN_CHECK(win, w);
    int rc = request_epoch(w, target_rank);
    if (rc)
        return rc;
    return done_request(w, halo_api_accumulate_c(origin_addr, origin_count, origin_datatype, target_rank,
                                                 target_disp, target_count, target_datatype, op, win),
                        request);
}

int halo_api_rget_accumulate_c(const void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
                               void *result_addr, MPI_Count result_count, MPI_Datatype result_datatype,
                               int target_rank, MPI_Aint target_disp, MPI_Count target_count,
                               MPI_Datatype target_datatype, MPI_Op op, MPI_Win win, MPI_Request *request)
{
    WIN_CHECK(win, w);
    int rc = request_epoch(w, target_rank);
    if (rc)
        return rc;
    return done_request(w, halo_api_get_accumulate_c(origin_addr, origin_count, origin_datatype, result_addr,
                                                     result_count, result_datatype, target_rank, target_disp,
                                                     target_count, target_datatype, op, win),
                        request);
}
