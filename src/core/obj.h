/* The object model: every MPI object starts with a halo_obj_t header.
 *
 * Handles are pointers to objects; a handle value below 0x1000 is a
 * predefined object, resolved through a table. Objects of one kind come from
 * one slab: a virtual range reserved at start-up and committed as it grows,
 * never unmapped. A handle is valid when it lies inside its kind's committed
 * range, on an object boundary, and the object there is live, so a stale or
 * wrong handle gets its error class rather than a crash. The integer id of
 * an object (MPI_<Handle>_toint) is 0x1000 plus its index in the slab, or the
 * handle value for predefined objects. */
#ifndef HALO_CORE_OBJ_H
#define HALO_CORE_OBJ_H

#include "core/halo.h"

typedef enum halo_kind {
    HALO_KIND_NONE = 0,
    HALO_KIND_COMM,
    HALO_KIND_GROUP,
    HALO_KIND_DTYPE,
    HALO_KIND_OP,
    HALO_KIND_REQUEST,
    HALO_KIND_INFO,
    HALO_KIND_ERRHANDLER,
    HALO_KIND_MESSAGE,
    HALO_KIND_WIN,
    HALO_KIND_FILE,
    HALO_KIND_SESSION,
    HALO_KIND_COUNT
} halo_kind_t;

enum {
    HALO_OBJ_LIVE = 1,        /* allocated and not yet freed */
    HALO_OBJ_PREDEFINED = 2,  /* static object behind a handle value < 0x1000 */
    HALO_OBJ_USER_FREED = 4,  /* the user freed the handle; internal references remain */
};

typedef struct halo_obj {
    uint16_t kind;
    uint16_t flags;
    int32_t id;
    _Atomic int32_t ref;
    int32_t spare;
} halo_obj_t;

#define HALO_PREDEF_LIMIT 0x1000
#define HALO_ID_BASE 0x1000

/* Declares the object size of a kind; called once per kind at start-up,
 * before the first halo_obj_alloc of that kind. */
void halo_obj_kind_setup(halo_kind_t kind, size_t objsize, size_t max_objects);

/* One kind's slab (obj.c); here so that the hot paths below inline. */
typedef struct halo_slab {
    size_t objsize;      /* a power of two: validating a handle is a mask, not a division */
    unsigned shift;
    size_t clear;        /* bytes a new object starts zeroed (the struct's size) */
    size_t reserved;     /* bytes of virtual range */
    size_t committed;    /* bytes readable and writable */
    size_t used;         /* bytes handed out at least once (bump pointer) */
    char *base;
    void *free_list;     /* freed objects, linked through their bodies */
} halo_slab_t;
extern halo_slab_t halo_slabs[HALO_KIND_COUNT];

/* A zeroed object with its header filled in (ref = 1, live), or NULL when
 * the slab is exhausted. */
void *halo_obj_alloc(halo_kind_t kind);

/* Zeroes a new object of slab s (`size` bytes, the kind's struct) and
 * fills in its header. */
static inline void *halo_obj_start(halo_slab_t *s, halo_obj_t *o, halo_kind_t kind, size_t size)
{
    memset(o, 0, size);
    o->kind = (uint16_t)kind;
    o->flags = HALO_OBJ_LIVE;
    o->id = HALO_ID_BASE + (int32_t)(((size_t)((char *)o - s->base)) >> s->shift);
    atomic_store_explicit(&o->ref, 1, memory_order_relaxed);
    return o;
}

/* halo_obj_alloc for a kind whose struct is `size` bytes, a constant at
 * the call (so the clearing compiles to a few stores): an object of the
 * free list without a call, the slab's bump pointer through
 * halo_obj_alloc. */
static inline void *halo_obj_alloc_sized(halo_kind_t kind, size_t size)
{
    halo_slab_t *s = &halo_slabs[kind];
    halo_obj_t *o = s->free_list;
    if (!o)
        return halo_obj_alloc(kind);
    s->free_list = *(void **)(o + 1);
    return halo_obj_start(s, o, kind, size);
}
/* Returns an object's memory to its slab; no destructor runs here. */
void halo_obj_free(void *obj);

/* Registers a static predefined object behind a handle value. */
void halo_obj_predef(halo_kind_t kind, uintptr_t handle, halo_obj_t *obj);

extern halo_obj_t *halo_obj_predef_table[HALO_PREDEF_LIMIT];

/* The live object behind a handle of the given kind, or NULL. */
static inline void *halo_obj_lookup(halo_kind_t kind, const void *handle)
{
    uintptr_t v = (uintptr_t)handle;
    halo_obj_t *o;
    if (v < HALO_PREDEF_LIMIT) {
        o = halo_obj_predef_table[v];
    } else {
        const halo_slab_t *s = &halo_slabs[kind];
        const char *p = (const char *)handle;
        if (!s->base || p < s->base || p >= s->base + s->used)
            return NULL;
        if (((size_t)(p - s->base) & (s->objsize - 1)) != 0)
            return NULL;
        o = (halo_obj_t *)(uintptr_t)p;
    }
    if (!o || o->kind != kind || !(o->flags & HALO_OBJ_LIVE) || (o->flags & HALO_OBJ_USER_FREED))
        return NULL;
    return o;
}
/* Object behind an integer id (MPI_X_fromint); NULL when there is none. */
void *halo_obj_from_id(halo_kind_t kind, int id);

/* Predefined handle value -> object, no checks (for hot paths whose
 * handle was checked in the binding layer). */

static inline void *halo_obj_fast(const void *handle)
{
    uintptr_t v = (uintptr_t)handle;
    return v < HALO_PREDEF_LIMIT ? (void *)halo_obj_predef_table[v] : (void *)handle;
}

/* The public handle of an object (predefined objects answer their value). */
static inline void *halo_obj_handle(void *obj)
{
    halo_obj_t *o = obj;
    return (o->flags & HALO_OBJ_PREDEFINED) ? (void *)(uintptr_t)o->id : obj;
}

/* Reference counts change only under the library's lock, which every
 * entry that can run beside another thread takes (MPI_Session_init and
 * _finalize take it around their part; the lock is off with one thread),
 * so a load and a store do. A locked read-modify-write would wait for
 * every store before it to leave the core, such as the shared-memory flag
 * that ended the collective a request ran, while the other process reads
 * that line: freeing a collective's request took longer than its start. */
static inline void halo_obj_ref(void *obj)
{
    halo_obj_t *o = obj;
    if (!(o->flags & HALO_OBJ_PREDEFINED))
        atomic_store_explicit(&o->ref, atomic_load_explicit(&o->ref, memory_order_relaxed) + 1,
                              memory_order_relaxed);
}

/* Drops a reference; returns true when it was the last one (the caller then
 * destroys and frees the object). Predefined objects never reach zero. */
static inline bool halo_obj_unref(void *obj)
{
    halo_obj_t *o = obj;
    if (o->flags & HALO_OBJ_PREDEFINED)
        return false;
    int n = atomic_load_explicit(&o->ref, memory_order_relaxed) - 1;
    atomic_store_explicit(&o->ref, n, memory_order_relaxed);
    return n == 0;
}

#endif
