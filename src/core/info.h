/* Info objects (see info.c). */
#ifndef HALO_CORE_INFO_H
#define HALO_CORE_INFO_H

#include "core/obj.h"

typedef struct halo_info_entry {
    struct halo_info_entry *next;
    char *key, *value;
} halo_info_entry_t;

typedef struct halo_info {
    halo_obj_t hdr;
    int n;
    halo_info_entry_t *head, *tail;
} halo_info_t;

halo_info_t *halo_info_new(void);
halo_info_t *halo_info_dup(const halo_info_t *src);
void halo_info_release(halo_info_t *in);
void halo_info_set(halo_info_t *in, const char *key, const char *value);
const char *halo_info_lookup(const halo_info_t *in, const char *key);
void halo_info_env_fill(int argc, char **argv, int thread_level);

#endif
