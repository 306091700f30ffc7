/* Shared-memory collectives: node groups, the region, flags and waking
 * (the rules are in coll/shm.h). */
#include "coll/shm.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "coll/coll.h"
#include "datatype/dtype.h"
#include "pmi.h"
#include "progress/progress.h"
#include "transport/transport.h"

#define CSHM_MAGIC 0x68616c6f63736d31ull   /* "halocsm1" */

typedef struct cshm_hdr {
    uint64_t magic;
    _Atomic uint32_t attached;   /* members that have opened the region */
} cshm_hdr_t;

/* A mapped region: the flags and slots of nchan channels. The
 * communicator's has HALO_CSHM_CHANNELS; a persistent collective matched by
 * its init call has one of its own with HALO_SHM_MAX_PHASES (coll/shm.h). */
typedef struct halo_shm_region {
    char *base;          /* NULL until the first use */
    size_t size;
    char *ctl, *data;
    int nchan;
    int64_t starts;      /* a persistent collective's own: starts so far */
    int64_t chan_last[HALO_CSHM_CHANNELS];   /* the last epoch started on each channel */
    /* Per channel: member 0's flag line and member 0's slot (computed when
     * the region is mapped). */
    char *chan_ctl[HALO_CSHM_CHANNELS], *chan_data[HALO_CSHM_CHANNELS];
    /* [channel][member]: the highest flag value seen there. Flags only
     * grow, so a wait that this value already meets needs no load of a
     * line that another core has written since (a cache miss each). */
    uint64_t *seen;
    /* [member], the communicator's region only: the highest blocking-lane
     * epoch seen in any of the member's flags (coll/shm.h, "Finished
     * by a later call"). In the same allocation as seen. */
    uint64_t *later;
} halo_shm_region_t;

/* A communicator's collective state, private to this process. */
typedef struct halo_coll_state {
    halo_coll_topo_t topo;
    int *local_world;    /* world ranks of my node group's members */
    int *wake;           /* whom raising a flag wakes (halo_tr_wake_targets of local_world) */
    int nwake;
    halo_shm_region_t reg;
    uint64_t *skipped;   /* calls that failed here before the region was open */
    int nskipped;
} halo_coll_state_t;

/* ---------------------------------------------------------------- topology */

static halo_coll_state_t *state_of(halo_comm_t *c)
{
    if (c->coll_state)
        return c->coll_state;
    halo_coll_state_t *st = halo_calloc(1, sizeof *st);
    st->reg.nchan = HALO_CSHM_CHANNELS;
    halo_coll_topo_t *t = &st->topo;
    int p = c->size;
    t->leader_of = halo_malloc((size_t)p * sizeof(int));
    t->member_of = halo_malloc((size_t)p * sizeof(int));
    t->leaders = halo_malloc((size_t)p * sizeof(int));
    t->local = halo_malloc((size_t)p * sizeof(int));
    int *counts = halo_calloc((size_t)p, sizeof(int));
    int mynode = halo_world.procs[c->world[c->rank]].cnode;
    for (int r = 0; r < p; r++) {
        int node = halo_world.procs[c->world[r]].cnode;
        int l = 0;
        while (l < t->nleaders && halo_world.procs[c->world[t->leaders[l]]].cnode != node)
            l++;
        if (l == t->nleaders)
            t->leaders[t->nleaders++] = r;
        t->leader_of[r] = l;
        t->member_of[r] = counts[l]++;
        if (node == mynode) {
            if (r == c->rank)
                t->me = t->nlocal;
            t->local[t->nlocal++] = r;
        }
    }
    for (int l = 0; l < t->nleaders; l++)
        if (counts[l] > t->max_local)
            t->max_local = counts[l];
    free(counts);
    t->nnodes = t->nleaders;
    /* Leaders are numbered in order of first appearance, so the groups are
     * blocks exactly when each rank's leader is the previous rank's or the
     * next one. */
    t->node_blocks = true;
    for (int r = 1; r < p; r++)
        if (t->leader_of[r] != t->leader_of[r - 1] && t->leader_of[r] != t->leader_of[r - 1] + 1)
            t->node_blocks = false;
    t->one_node = t->nnodes == 1;
    t->leader_me = t->local[0] == c->rank ? t->leader_of[c->rank] : -1;
    st->local_world = halo_malloc((size_t)t->nlocal * sizeof(int));
    for (int i = 0; i < t->nlocal; i++)
        st->local_world[i] = c->world[t->local[i]];
    st->wake = halo_malloc((size_t)t->nlocal * sizeof(int));
    st->nwake = halo_tr_wake_targets(st->local_world, t->nlocal, st->wake);
    c->coll_state = st;
    return st;
}

const halo_coll_topo_t *halo_coll_topo(halo_comm_t *c)
{
    return &state_of(c)->topo;
}

void halo_coll_comm_free(halo_comm_t *c)
{
    halo_coll_keep_free(c);
    halo_sched_comm_gone(c);
    halo_coll_state_t *st = c->coll_state;
    if (!st)
        return;
    if (st->reg.base)
        munmap(st->reg.base, st->reg.size);
    free(st->reg.seen);
    free(st->topo.leader_of);
    free(st->topo.member_of);
    free(st->topo.leaders);
    free(st->topo.local);
    free(st->local_world);
    free(st->wake);
    free(st->skipped);
    free(st);
    c->coll_state = NULL;
}

/* ---------------------------------------------------------------- the region */

static size_t region_layout(int nmembers, int nchan, size_t *ctl_off, size_t *data_off)
{
    size_t n = (size_t)nmembers, k = (size_t)nchan;
    *ctl_off = 4096;
    size_t off = 4096 + k * n * HALO_CSHM_CTL_BYTES;
    off = (off + 4095) & ~(size_t)4095;
    *data_off = off;
    return off + k * n * HALO_CSHM_SLOT;
}

/* own: the persistent collective's number (its own region), or -1 (the
 * communicator's). */
static void region_name(halo_comm_t *c, halo_coll_state_t *st, int64_t own, char *name, size_t n)
{
    /* FNV-1a over the members' world ranks: a later communicator that
     * reuses the context id on other ranks gets another name. */
    uint64_t h = halo_fnv1a(HALO_FNV_BASIS, st->local_world,
                            (size_t)st->topo.nlocal * sizeof *st->local_world);
    char suffix[96], which[32] = "";
    if (own >= 0)
        snprintf(which, sizeof which, "-p%llx", (unsigned long long)own);
    snprintf(suffix, sizeof suffix, "c%x%s-n%d-%016llx", (unsigned)c->ctx, which,
             halo_world.procs[halo_world.rank].cnode, (unsigned long long)h);
    halo_shm_name(name, n, halo_world.kvsname, suffix);
}

/* Opens (creating if first) and maps the node group's region. Every member
 * sizes it to the same length, so whoever comes first makes it and the
 * others find it (a file of zeros is a valid empty region). */
static void region_open(halo_comm_t *c, halo_coll_state_t *st, halo_shm_region_t *reg, int64_t own)
{
    char name[300];
    region_name(c, st, own, name, sizeof name);
    size_t ctl_off, data_off;
    size_t size = region_layout(st->topo.nlocal, reg->nchan, &ctl_off, &data_off);
    int fd = shm_open(name, O_CREAT | O_RDWR, 0600);
    if (fd < 0)
        halo_fatal("cannot open the shared memory segment of a collective (/dev/shm%s): %s", name,
                   strerror(errno));
    /* The first member creates the name, the others open it: a name made
     * beforehand by someone else is refused. */
    char why[160];
    if (halo_shm_fd_trusted(fd, why, sizeof why) != 0)
        halo_fatal("refusing the shared memory segment of a collective (/dev/shm%s): %s", name, why);
    if (ftruncate(fd, (off_t)size) != 0)
        halo_fatal("cannot size the shared memory segment of a collective (/dev/shm%s, %zu bytes): %s",
                   name, size, strerror(errno));
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (p == MAP_FAILED)
        halo_fatal("cannot map the shared memory segment of a collective (%zu bytes): %s", size,
                   strerror(errno));
    reg->base = p;
    reg->size = size;
    reg->ctl = reg->base + ctl_off;
    reg->data = reg->base + data_off;
    size_t nseen = (size_t)reg->nchan * (size_t)st->topo.nlocal;
    reg->seen = halo_calloc(nseen + (size_t)st->topo.nlocal, sizeof *reg->seen);
    reg->later = reg->seen + nseen;
    for (int k = 0; k < reg->nchan; k++) {
        reg->chan_ctl[k] = reg->ctl + (size_t)k * (size_t)st->topo.nlocal * HALO_CSHM_CTL_BYTES;
        reg->chan_data[k] = reg->data + (size_t)k * (size_t)st->topo.nlocal * HALO_CSHM_SLOT;
    }
    cshm_hdr_t *h = p;
    /* The member that completes the set removes the name: nothing stays
     * in /dev/shm after that, whatever happens to the job. */
    if (atomic_fetch_add(&h->attached, 1) + 1 == (uint32_t)st->topo.nlocal)
        shm_unlink(name);
}

static inline int64_t epoch_of(const halo_sched_t *s, const halo_step_t *st)
{
    return s->shm_epoch + st->phase;
}

/* nchan is a power of two (HALO_CSHM_CHANNELS or HALO_SHM_MAX_PHASES) and
 * epochs are positive: a mask, not a division, several of which every
 * shared-memory collective takes. */
_Static_assert((HALO_CSHM_CHANNELS & (HALO_CSHM_CHANNELS - 1)) == 0, "channels: a power of two");
_Static_assert((HALO_SHM_MAX_PHASES & (HALO_SHM_MAX_PHASES - 1)) == 0, "phases: a power of two");
static inline int chan_of(const halo_shm_region_t *reg, int64_t epoch)
{
    return (int)((uint64_t)epoch & (uint64_t)(reg->nchan - 1));
}

static inline _Atomic uint64_t *flag_at(const halo_coll_state_t *st, const halo_shm_region_t *reg,
                                        int chan, int member)
{
    return (_Atomic uint64_t *)(reg->ctl + ((size_t)chan * (size_t)st->topo.nlocal + (size_t)member) *
                                               HALO_CSHM_CTL_BYTES);
}

static inline uint64_t flag_value(int64_t epoch, int64_t step)
{
    return ((uint64_t)epoch << HALO_SHM_STEP_BITS) | (uint64_t)step;
}

static inline halo_coll_state_t *sched_state(const halo_sched_t *s)
{
    return halo_comm_ptr(s->comm)->coll_state;
}

/* The region a schedule works in: its own, or its communicator's. */
static inline halo_shm_region_t *sched_region(const halo_sched_t *s)
{
    return s->shm_own ? s->shm_own : &sched_state(s)->reg;
}

static inline int64_t epoch_base(uint64_t seq)
{
    return (int64_t)(2 * seq + 2);
}

static inline int64_t gave_up_step(int origin)
{
    return HALO_SHM_GAVE_UP + (origin < HALO_SHM_DONE - HALO_SHM_GAVE_UP ? origin : 0);
}

/* Raises this member's flags for epochs [first, first + n) to "gave up". */
static void give_up(halo_coll_state_t *st, halo_shm_region_t *reg, int64_t first, int n, int origin)
{
    for (int k = 0; k < n; k++) {
        int64_t e = first + k;
        _Atomic uint64_t *f = flag_at(st, reg, chan_of(reg, e), st->topo.me);
        uint64_t v = flag_value(e, gave_up_step(origin));
        if (atomic_load_explicit(f, memory_order_relaxed) < v)
            atomic_store_explicit(f, v, memory_order_release);
    }
    halo_tr_wake_targets_ring(st->wake, st->nwake);
}

void halo_shm_begin(halo_sched_t *s)
{
    halo_comm_t *c = halo_comm_ptr(s->comm);
    halo_coll_state_t *st = state_of(c);
    halo_shm_region_t *reg;
    if (s->seq_fixed) {
        /* Matched by its init call: starts come in this collective's own
         * order, so it has a region of its own and numbers its starts. */
        if (!s->shm_own) {
            s->shm_own = halo_calloc(1, sizeof(halo_shm_region_t));
            s->shm_own->nchan = HALO_SHM_MAX_PHASES;
        }
        reg = s->shm_own;
        if (!reg->base)
            region_open(c, st, reg, (int64_t)s->seq);
        s->shm_epoch = 2 * ++reg->starts + 2;
    } else {
        reg = &st->reg;
        if (!reg->base) {
            region_open(c, st, reg, -1);
            for (int i = 0; i < st->nskipped; i++)
                give_up(st, reg, epoch_base(st->skipped[i]), HALO_SHM_MAX_PHASES, c->rank);
            st->nskipped = 0;
        }
        s->shm_epoch = epoch_base(s->seq);
    }
    size_t n = (size_t)st->topo.nlocal;
    for (int k = 0; k < s->shm_phases; k++) {
        int chan = chan_of(reg, s->shm_epoch + k);
        s->shm_prev[k] = reg->chan_last[chan];
        reg->chan_last[chan] = s->shm_epoch + k;
        s->shm_ctl[k] = reg->chan_ctl[chan];
        s->shm_data[k] = reg->chan_data[chan];
        s->shm_seen[k] = &reg->seen[(size_t)chan * n];
    }
    /* Blocking calls on the communicator's region finish in order on
     * every member (coll/shm.h, "Finished by a later call"). */
    s->shm_later = s->seq_fixed || (s->seq & 1) ? NULL : reg->later;
}

void halo_shm_release(halo_sched_t *s)
{
    if (!s->shm_own)
        return;
    if (s->shm_own->base)
        munmap(s->shm_own->base, s->shm_own->size);
    free(s->shm_own->seen);
    free(s->shm_own);
    s->shm_own = NULL;
}

void halo_shm_skip(halo_comm_t *c, uint64_t seq)
{
    halo_coll_state_t *st = state_of(c);
    if (st->topo.nlocal < 2)
        return;
    if (st->reg.base) {
        give_up(st, &st->reg, epoch_base(seq), HALO_SHM_MAX_PHASES, c->rank);
        return;
    }
    st->skipped = halo_realloc(st->skipped, (size_t)(st->nskipped + 1) * sizeof *st->skipped);
    st->skipped[st->nskipped++] = seq;
}

/* ---------------------------------------------------------------- steps */

void halo_shm_use(halo_sched_t **s_p)
{
    halo_sched_t *s = *s_p;
    if (s->build_phase >= HALO_SHM_MAX_PHASES)
        halo_fatal("a collective schedule with more than %d shared-memory phases", HALO_SHM_MAX_PHASES);
    s->uses_shm = 1;
    if (s->shm_phases < s->build_phase + 1)
        s->shm_phases = s->build_phase + 1;
}

void halo_shm_next_phase(halo_sched_t **s_p)
{
    (*s_p)->build_phase++;
}

void halo_shm_wait(halo_sched_t **s_p, int round, int member, int step)
{
    halo_step_t *st = halo_sched_add(s_p, HALO_STEP_SHM_WAIT, round);
    st->peer = member;
    st->pos = step;
}

void halo_shm_wait_prev(halo_sched_t **s_p, int round)
{
    halo_step_t *st = halo_sched_add(s_p, HALO_STEP_SHM_WAIT_PREV, round);
    st->peer = HALO_SHM_ALL;
}

void halo_shm_set(halo_sched_t **s_p, int round, int step)
{
    halo_step_t *st = halo_sched_add(s_p, HALO_STEP_SHM_SET, round);
    st->pos = step;
}

static inline _Atomic uint64_t *run_flag(const halo_sched_t *s, int phase, int member)
{
    return (_Atomic uint64_t *)(s->shm_ctl[phase] + (size_t)member * HALO_CSHM_CTL_BYTES);
}

/* One wait step: 1 holds, 0 not yet, -1 a member gave up because rank
 * *origin_p failed. */
static int wait_ready(const halo_sched_t *s, const halo_step_t *st, int me, int n, int *origin_p)
{
    bool prev = st->kind == HALO_STEP_SHM_WAIT_PREV;
    int lo, hi;
    bool several = halo_shm_wait_members(st->peer, n, &lo, &hi);
    return halo_shm_wait_holds(s, st->phase, prev, (int)st->pos, lo, hi, several && !prev ? me : -1, origin_p);
}

int halo_shm_round_ready(halo_sched_t *s, int *rank_p)
{
    const halo_coll_state_t *cs = sched_state(s);
    int ready = 1, me = cs->topo.me, n = cs->topo.nlocal;
    /* A round's waits come first among its steps (the engine sorts them so). */
    for (int j = s->first_step; j < s->nsteps && s->steps[j].round == s->cur_round; j++) {
        const halo_step_t *st = &s->steps[j];
        if (!halo_step_is_wait(st))
            break;
        int origin, r = wait_ready(s, st, me, n, &origin);
        if (r < 0) {
            *rank_p = origin;
            return -1;
        }
        if (r == 0)
            ready = 0;
    }
    return ready;
}

void halo_shm_set_run(halo_sched_t *s, const halo_step_t *st)
{
    const halo_coll_state_t *cs = sched_state(s);
    atomic_store_explicit(run_flag(s, st->phase, cs->topo.me), flag_value(epoch_of(s, st), st->pos),
                          memory_order_release);
    /* Fences, then rings the members that sleep (see coll/shm.h). */
    halo_tr_wake_targets_ring(cs->wake, cs->nwake);
}

void halo_shm_prefetch_next(halo_sched_t *s)
{
    if (s->shm_own || !s->uses_shm || (s->seq & 1))
        return;
    halo_coll_state_t *cs = sched_state(s);
    halo_shm_region_t *reg = &cs->reg;
    int n = cs->topo.nlocal, me = cs->topo.me;
    if (n > 16)
        return;
    /* The next blocking call takes sequence number seq + 2, so epoch
     * shm_epoch + 4; it first waits for the channel's previous epoch. */
    int chan = chan_of(reg, s->shm_epoch + 4);
    uint64_t need = flag_value(reg->chan_last[chan], HALO_SHM_GAVE_UP);
    uint64_t finished_by = halo_shm_finished_by(reg->chan_last[chan]);
    const char *ctl = reg->chan_ctl[chan];
    const uint64_t *seen = &reg->seen[(size_t)chan * (size_t)n];
    __builtin_prefetch(ctl + (size_t)me * HALO_CSHM_CTL_BYTES, 1, 3);
    for (int m = 0; m < n; m++)
        if (m != me && seen[m] < need && reg->later[m] < finished_by)
            __builtin_prefetch(ctl + (size_t)m * HALO_CSHM_CTL_BYTES, 0, 3);
}

void halo_shm_abort(halo_sched_t *s, int origin)
{
    halo_coll_state_t *cs = sched_state(s);
    if (!cs || s->shm_epoch == 0)
        return;
    halo_shm_region_t *reg = sched_region(s);
    if (!reg->base)
        return;
    give_up(cs, reg, s->shm_epoch, s->shm_phases, origin);
}

/* ---------------------------------------------------------------- building helpers */

void halo_shm_publish(halo_sched_t **s_p, int round, int me, const void *p)
{
    uint64_t *addr = halo_sched_tmp(s_p, 1, MPI_UINT64_T);
    *addr = (uint64_t)(uintptr_t)p;
    halo_sched_copy(s_p, round, halo_addr(addr), 1, MPI_UINT64_T, halo_line(me, 0), 1, MPI_UINT64_T);
    halo_shm_set(s_p, round, 1);
}

const char *halo_shm_publish_bytes(halo_sched_t **s_p, int round, int me, const void *buf, MPI_Count count,
                                   MPI_Datatype type, MPI_Count bytes, bool copy)
{
    const char *pub = buf;
    MPI_Count off;
    if (bytes > 0 && !copy && halo_dt_one_run(halo_dtype_ptr(type), count, &off)) {
        pub += off;
    } else if (bytes > 0) {
        char *packed = halo_sched_tmp(s_p, bytes, MPI_BYTE);
        halo_sched_pack(s_p, round, halo_addr(buf), count, type, 0, bytes, halo_addr(packed));
        pub = packed;
    }
    halo_shm_publish(s_p, round, me, pub);
    return pub;
}

/* With several members beside the root on its CPU, the root copies for
 * them only above this many bytes each (see shm.h). */
#define ROOT_MOVES_MANY_MIN (128 * 1024 + 1)

static bool shares_cpu(halo_comm_t *c, const halo_coll_topo_t *t, int k)
{
    return k != t->me && halo_tr_shares_cpu(c->world[t->local[k]]);
}

bool halo_shm_root_moves(halo_comm_t *c, int root, int j, MPI_Count bytes)
{
    const halo_coll_topo_t *t = halo_coll_topo(c);
    int me = t->me;
    if (j == root || (me != root && me != j) || !shares_cpu(c, t, me == root ? j : root))
        return false;
    if (bytes >= ROOT_MOVES_MANY_MIN)
        return true;
    int mates = me == root ? 0 : 1;   /* the root's other members on its CPU */
    for (int k = 0; k < t->nlocal && mates < 2; k++)
        if (k != root && shares_cpu(c, t, k))
            mates++;
    return mates == 1;
}

void halo_shm_cma_block(halo_sched_t **s_p, int round, bool write, int owner, int peer, MPI_Count pos,
                        void *buf, MPI_Count count, MPI_Datatype type, MPI_Count bytes)
{
    MPI_Count off;
    if (halo_dt_one_run(halo_dtype_ptr(type), count, &off)) {
        halo_sched_cma(s_p, round, write, halo_line(owner, 0), peer, pos, halo_addr((char *)buf + off), bytes);
        return;
    }
    int64_t tmp = halo_sched_scratch(s_p, (uint64_t)bytes);
    if (write)
        halo_sched_pack(s_p, round - 1, halo_addr(buf), count, type, 0, bytes, halo_scr(tmp));
    halo_sched_cma(s_p, round, write, halo_line(owner, 0), peer, pos, halo_scr(tmp), bytes);
    if (!write)
        halo_sched_unpack(s_p, round, halo_scr(tmp), 0, bytes, halo_addr(buf), count, type);
}

bool halo_shm_fits_line(MPI_Count count, MPI_Datatype type)
{
    halo_dtype_t *dt = halo_dtype_ptr(type);
    MPI_Count te = dt->true_ub - dt->true_lb;
    return count > 0 && dt->extent > 0 && te <= HALO_SHM_LINE_BYTES &&
           (count - 1) * dt->extent + te <= HALO_SHM_LINE_BYTES;
}

void halo_shm_chunks(halo_shm_chunks_t *ch, MPI_Count count, MPI_Datatype type, MPI_Count cap)
{
    halo_dtype_t *dt = halo_dtype_ptr(type);
    MPI_Count te = dt->true_ub - dt->true_lb;
    ch->where = HALO_BREF_SLOT;
    if (halo_shm_fits_line(count, type)) {
        ch->where = HALO_BREF_LINE;
        cap = HALO_SHM_LINE_BYTES;
    }
    ch->count = count;
    ch->extent = (MPI_Aint)dt->extent;
    ch->true_lb = (MPI_Aint)dt->true_lb;
    ch->per = (cap - te) / dt->extent + 1;
    ch->n = (count + ch->per - 1) / ch->per;
}

void halo_shm_fold(halo_sched_t **s_p, int round, int nmembers, int64_t at, MPI_Count first,
                   MPI_Count n, const halo_shm_chunks_t *ch, halo_bref_t dst, MPI_Datatype type, MPI_Op op)
{
    if (n == 0)
        return;
    halo_sched_copy(s_p, round, halo_shm_elem(ch, nmembers - 1, at, first), n, type, dst, n, type);
    for (int j = nmembers - 2; j >= 0; j--)
        halo_sched_reduce(s_p, round, halo_shm_elem(ch, j, at, first), dst, n, type, op);
}

/* ---------------------------------------------------------------- watching */

static halo_sched_t **watched;
static int nwatched, capwatched;

static int watch_hook(void)
{
    int n = 0;
    for (int i = 0; i < nwatched;) {
        halo_sched_t *s = watched[i];
        int rank = -1, r = halo_shm_round_ready(s, &rank);
        if (r == 0) {
            i++;
            continue;
        }
        watched[i] = watched[--nwatched];
        s->shm_waiting = 0;
        n++;
        /* May start the next round, which may watch again (appended). */
        halo_sched_flags_ready(s, r < 0 ? rank : -1);
    }
    return n;
}

void halo_shm_watch(halo_sched_t *s)
{
    static bool hooked;
    if (!hooked) {
        halo_progress_hook_add(watch_hook);
        hooked = true;
    }
    if (nwatched == capwatched) {
        capwatched = capwatched ? 2 * capwatched : 16;
        watched = halo_realloc(watched, (size_t)capwatched * sizeof *watched);
    }
    watched[nwatched++] = s;
}

void halo_shm_unwatch(halo_sched_t *s)
{
    for (int i = 0; i < nwatched; i++)
        if (watched[i] == s) {
            watched[i] = watched[--nwatched];
            return;
        }
}
