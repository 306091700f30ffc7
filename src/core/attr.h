/* Attribute caching on communicators, datatypes and windows: keyvals with
 * copy and delete callbacks, and the predefined attributes of
 * communicators. */
#ifndef HALO_CORE_ATTR_H
#define HALO_CORE_ATTR_H

#include "core/obj.h"

/* An attribute set from Fortran holds an address-sized integer (fval):
 * C reads a pointer to it, Fortran the integer (MPI 5.0, 19.3.7). */
typedef struct halo_attr {
    struct halo_attr *next;
    int keyval;
    int fortran;      /* set through the Fortran binding */
    void *value;      /* what C reads: &fval for a Fortran attribute */
    MPI_Aint fval;
} halo_attr_t;

/* Set by the Fortran binding around its calls of the attribute and keyval
 * functions: values come and go as Fortran integers (the predefined ones
 * of communicators and windows too: the value, where C gets a pointer to
 * it), keyvals made then call their callbacks with Fortran's view of the
 * values. */
extern _Thread_local int halo_attr_fortran;

int halo_attr_set(halo_kind_t kind, void *obj, halo_attr_t **list_p, int keyval, void *value);
int halo_attr_get(halo_kind_t kind, void *obj, halo_attr_t **list_p, int keyval, void *value_p,
                  int *flag_p);
int halo_attr_delete(halo_kind_t kind, void *obj, halo_attr_t **list_p, int keyval);
/* Runs the copy callbacks of every attribute of old for the duplicate new. */
int halo_attr_copy_all(halo_kind_t kind, void *oldobj, halo_attr_t *old, halo_attr_t **new_p);
/* Runs the delete callbacks (in reverse order of setting) and empties the list. */
int halo_attr_delete_all(halo_kind_t kind, void *obj, halo_attr_t **list_p);
void halo_attr_finalize(void);

#endif
