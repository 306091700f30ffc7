/* Per-kind slabs of objects: reserved virtual ranges, committed in chunks,
 * never unmapped (see obj.h for why). Allocation runs under the library lock
 * (core/lock.h) when threads are in use. */
#include "core/obj.h"

#include <sys/mman.h>

#define HALO_SLAB_CHUNK (64 * 1024)

halo_slab_t halo_slabs[HALO_KIND_COUNT];
halo_obj_t *halo_obj_predef_table[HALO_PREDEF_LIMIT];

void halo_obj_kind_setup(halo_kind_t kind, size_t objsize, size_t max_objects)
{
    halo_slab_t *s = &halo_slabs[kind];
    if (s->base)
        return;
    size_t size = 32;
    unsigned shift = 5;
    while (size < objsize || size < sizeof(halo_obj_t) + sizeof(void *)) {
        size <<= 1;
        shift++;
    }
    s->objsize = size;
    s->shift = shift;
    s->clear = objsize;
    objsize = size;
    s->reserved = (objsize * max_objects + HALO_SLAB_CHUNK - 1) & ~(size_t)(HALO_SLAB_CHUNK - 1);
    void *p = mmap(NULL, s->reserved, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED)
        halo_fatal("cannot reserve %zu bytes of address space for objects", s->reserved);
    s->base = p;
}

void *halo_obj_alloc(halo_kind_t kind)
{
    halo_slab_t *s = &halo_slabs[kind];
    halo_obj_t *o;
    if (s->free_list) {
        o = s->free_list;
        s->free_list = *(void **)(o + 1);
    } else {
        if (s->used + s->objsize > s->committed) {
            if (s->committed + HALO_SLAB_CHUNK > s->reserved)
                return NULL;
            if (mprotect(s->base + s->committed, HALO_SLAB_CHUNK, PROT_READ | PROT_WRITE) != 0)
                return NULL;
            s->committed += HALO_SLAB_CHUNK;
        }
        o = (halo_obj_t *)(s->base + s->used);
        s->used += s->objsize;
    }
    return halo_obj_start(s, o, kind, s->clear);
}

void halo_obj_free(void *obj)
{
    halo_obj_t *o = obj;
    if (o->flags & HALO_OBJ_PREDEFINED)
        return;
    halo_slab_t *s = &halo_slabs[o->kind];
    o->flags = 0;
    *(void **)(o + 1) = s->free_list;
    s->free_list = o;
}

void halo_obj_predef(halo_kind_t kind, uintptr_t handle, halo_obj_t *obj)
{
    obj->kind = (uint16_t)kind;
    obj->flags = HALO_OBJ_LIVE | HALO_OBJ_PREDEFINED;
    obj->id = (int32_t)handle;
    atomic_store_explicit(&obj->ref, 1, memory_order_relaxed);
    halo_obj_predef_table[handle] = obj;
}

void *halo_obj_from_id(halo_kind_t kind, int id)
{
    if (id >= 0 && id < HALO_PREDEF_LIMIT) {
        halo_obj_t *o = halo_obj_predef_table[id];
        return (o && o->kind == kind) ? o : NULL;
    }
    if (id < HALO_ID_BASE)
        return NULL;
    halo_slab_t *s = &halo_slabs[kind];
    size_t off = (size_t)(id - HALO_ID_BASE) << s->shift;
    if (!s->base || off >= s->used)
        return NULL;
    halo_obj_t *o = (halo_obj_t *)(s->base + off);
    return (o->flags & HALO_OBJ_LIVE) ? o : NULL;
}
