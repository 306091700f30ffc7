/* The shared-memory cell queue (many producers, one consumer), in a
 * segment formatted in ordinary memory: order per producer, no loss, no
 * duplicate, with producer threads racing the consumer. */
#include <pthread.h>
#include <sched.h>

#include "transport/shm.h"
#include "unit.h"

#define NPROD 4
#define PER_PROD 5000

static char *base;
static shm_seg_t *seg;
static shm_queue_t q;

typedef struct {
    int id;
    uint64_t *offs;   /* cells owned by this producer */
    int ncells;
} prod_t;

/* Each cell carries (producer, sequence) in its seq/src fields. Producers
 * recycle their cells through a per-producer free queue the consumer fills. */
static shm_queue_t freeq[NPROD];

static void *producer(void *arg)
{
    prod_t *p = arg;
    for (int i = 0; i < PER_PROD; i++) {
        uint64_t off;
        while ((off = halo_shm_q_pop(base, &freeq[p->id])) == 0)
            sched_yield();
        shm_cell_t *c = (shm_cell_t *)(base + off);
        c->src = p->id;
        c->seq = (uint32_t)i;
        halo_shm_q_push(base, &q, off);
    }
    return NULL;
}

int main(void)
{
    size_t size = halo_shm_seg_size(NPROD);
    base = aligned_alloc(4096, (size + 4095) & ~(size_t)4095);
    memset(base, 0, 4096 * 4);
    halo_shm_seg_format(base, NPROD);
    seg = (shm_seg_t *)base;
    UCHECK(seg->magic == HALO_SHM_MAGIC);
    UCHECK(seg->off_cells % 4096 == 0);
    UCHECK(seg->off_rings > seg->off_cells);
    UCHECK(seg->size == size);

    /* Single-threaded: FIFO, empty queue answers 0. */
    memset(&q, 0, sizeof q);
    UCHECK(halo_shm_q_pop(base, &q) == 0);
    uint64_t c0 = seg->off_cells, c1 = c0 + seg->cell_stride, c2 = c1 + seg->cell_stride;
    halo_shm_q_push(base, &q, c0);
    halo_shm_q_push(base, &q, c1);
    UCHECK(halo_shm_q_pop(base, &q) == c0);
    halo_shm_q_push(base, &q, c2);
    UCHECK(halo_shm_q_pop(base, &q) == c1);
    UCHECK(halo_shm_q_pop(base, &q) == c2);
    UCHECK(halo_shm_q_pop(base, &q) == 0);

    /* Concurrent producers: 8 cells each, recycled. */
    prod_t prods[NPROD];
    pthread_t th[NPROD];
    for (int p = 0; p < NPROD; p++) {
        memset(&freeq[p], 0, sizeof freeq[p]);
        for (int i = 0; i < 8; i++) {
            uint64_t off = seg->off_cells + (size_t)(p * HALO_SHM_NCELLS + i) * seg->cell_stride;
            ((shm_cell_t *)(base + off))->owner = p;
            halo_shm_q_push(base, &freeq[p], off);
        }
        prods[p].id = p;
        pthread_create(&th[p], NULL, producer, &prods[p]);
    }
    uint32_t next[NPROD] = {0};
    long got = 0, errors = 0;
    while (got < (long)NPROD * PER_PROD) {
        uint64_t off = halo_shm_q_pop(base, &q);
        if (!off) {
            sched_yield();
            continue;
        }
        shm_cell_t *c = (shm_cell_t *)(base + off);
        if (c->src < 0 || c->src >= NPROD || c->seq != next[c->src])
            errors++;
        else
            next[c->src]++;
        halo_shm_q_push(base, &freeq[c->owner], off);
        got++;
    }
    for (int p = 0; p < NPROD; p++)
        pthread_join(th[p], NULL);
    UCHECK_EQ(errors, 0);
    for (int p = 0; p < NPROD; p++)
        UCHECK_EQ(next[p], PER_PROD);
    UCHECK(halo_shm_q_pop(base, &q) == 0);
    free(base);
    UNIT_DONE();
}
