/* Data representations of file views (datarep.c). */
#ifndef HALO_IO_DATAREP_H
#define HALO_IO_DATAREP_H

#include "datatype/dtype.h"

/* NULL stands for "native" (and "internal", the same bytes). */
typedef struct halo_datarep halo_datarep_t;

/* MPI_SUCCESS with *rep_p (NULL for native), or MPI_ERR_UNSUPPORTED_DATAREP
 * (no error recorded: the caller names its argument). */
int halo_datarep_find(const char *name, const halo_datarep_t **rep_p);
const char *halo_datarep_name(const halo_datarep_t *rep);
/* Bytes one element of t takes in the file; -1 (error recorded) when a
 * file extent cannot be had. */
MPI_Count halo_datarep_size(const halo_datarep_t *rep, const halo_dtype_t *t);
/* The committed type (a reference the caller releases) with t's shape in
 * the representation's file extents; t itself for native. */
int halo_datarep_layout(const halo_datarep_t *rep, halo_dtype_t *t, halo_dtype_t **out);
/* Converts (buf, count, dt) into fbytes of file representation, and back. */
int halo_datarep_to_file(const halo_datarep_t *rep, const void *buf, MPI_Count count, halo_dtype_t *dt,
                         void *fbuf, MPI_Count fbytes);
int halo_datarep_from_file(const halo_datarep_t *rep, const void *fbuf, MPI_Count fbytes, void *buf,
                           MPI_Count count, halo_dtype_t *dt);
void halo_datarep_finalize(void);

#endif
