/* The small JSON subset that tuning files use (docs/collectives.md):
 * objects, arrays, strings (escapes \" \\ \/ \b \f \n \r \t, and \uXXXX
 * below 0x80), integers (no fraction or exponent), true, false, null.
 * Written here to keep the library free of a JSON dependency. */
#ifndef HALO_COLL_TUNING_JSON_H
#define HALO_COLL_TUNING_JSON_H

#include "core/halo.h"

typedef enum {
    HALO_JSON_NULL,
    HALO_JSON_BOOL,
    HALO_JSON_INT,
    HALO_JSON_STRING,
    HALO_JSON_ARRAY,
    HALO_JSON_OBJECT,
} halo_json_type_t;

typedef struct halo_json {
    halo_json_type_t type;
    int line, col;             /* where the value starts (1-based) */
    long long num;             /* INT, BOOL */
    char *str;                 /* STRING */
    int n;                     /* ARRAY, OBJECT: number of members */
    struct halo_json *items;   /* ARRAY, OBJECT: values */
    char **keys;               /* OBJECT: keys, in file order */
} halo_json_t;

/* Parses text (NUL-terminated); returns the root value, or NULL with a
 * message "L:C: ..." (line and column) in err. */
halo_json_t *halo_json_parse(const char *text, char *err, size_t errlen);
void halo_json_free(halo_json_t *v);
const char *halo_json_type_name(halo_json_type_t t);

#endif
