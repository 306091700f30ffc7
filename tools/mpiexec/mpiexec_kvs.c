/* The job's key-value space: a string hash table with open addressing.
 * A job puts a few keys per rank and gets each many times, so lookups must
 * stay O(1) at hundreds of ranks; entries are never removed. */
#include "mpiexec.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* FNV-1a: short keys, no adversary worth a keyed hash (ranks are the job's
 * own processes, and at worst they slow their own job). */
static size_t kvs_hash(const char *key)
{
    uint64_t h = 14695981039346656037ull;

    for (const unsigned char *p = (const unsigned char *)key; *p != '\0'; p++) {
        h = (h ^ *p) * 1099511628211ull;
    }
    return (size_t)h;
}

static mpiexec_kvs_entry_t *kvs_slot_find(const mpiexec_kvs_t *kvs, const char *key)
{
    size_t mask = kvs->nslots - 1;

    for (size_t i = kvs_hash(key) & mask;; i = (i + 1) & mask) {
        mpiexec_kvs_entry_t *e = &kvs->slots[i];

        if (e->key == NULL || strcmp(e->key, key) == 0) {
            return e;
        }
    }
}

/* Keeps the table at most half full, so probes stay short and a free slot
 * always exists (kvs_slot_find relies on it to end). */
static int kvs_grow(mpiexec_kvs_t *kvs)
{
    mpiexec_kvs_t bigger = {0};

    bigger.nslots = kvs->nslots ? kvs->nslots * 2 : 64;
    bigger.slots = calloc(bigger.nslots, sizeof(*bigger.slots));
    if (bigger.slots == NULL) {
        return -1;
    }
    for (size_t i = 0; i < kvs->nslots; i++) {
        if (kvs->slots[i].key != NULL) {
            *kvs_slot_find(&bigger, kvs->slots[i].key) = kvs->slots[i];
        }
    }
    bigger.nused = kvs->nused;
    bigger.bytes = kvs->bytes;
    free(kvs->slots);
    *kvs = bigger;
    return 0;
}

int mpiexec_kvs_put(mpiexec_kvs_t *kvs, const char *key, const char *value)
{
    mpiexec_kvs_entry_t *e;
    char *v;

    if ((kvs->nused + 1) * 2 > kvs->nslots && kvs_grow(kvs) != 0) {
        return -1;
    }
    v = strdup(value);
    if (v == NULL) {
        return -1;
    }
    e = kvs_slot_find(kvs, key);
    if (e->key == NULL) {
        e->key = strdup(key);
        if (e->key == NULL) {
            free(v);
            return -1;
        }
        kvs->nused++;
        kvs->bytes += strlen(key);
    } else {
        kvs->bytes -= strlen(e->value);
        free(e->value);
    }
    e->value = v;
    kvs->bytes += strlen(v);
    return 0;
}

const char *mpiexec_kvs_get(const mpiexec_kvs_t *kvs, const char *key)
{
    if (kvs->nslots == 0) {
        return NULL;
    }
    return kvs_slot_find(kvs, key)->value;
}

void mpiexec_kvs_free(mpiexec_kvs_t *kvs)
{
    for (size_t i = 0; i < kvs->nslots; i++) {
        free(kvs->slots[i].key);
        free(kvs->slots[i].value);
    }
    free(kvs->slots);
    memset(kvs, 0, sizeof(*kvs));
}
