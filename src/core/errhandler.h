/* Error handler objects. */
#ifndef HALO_CORE_ERRHANDLER_H
#define HALO_CORE_ERRHANDLER_H

#include "core/obj.h"

enum { HALO_EH_USER = 0, HALO_EH_FATAL, HALO_EH_ABORT, HALO_EH_RETURN };

typedef struct halo_errhandler {
    halo_obj_t hdr;
    int builtin;     /* HALO_EH_*; HALO_EH_USER for created ones */
    int objkind;     /* HALO_EOBJ_* the function was made for */
    int fortran;     /* made by a Fortran binding: fn takes (INTEGER handle,
                      * INTEGER code) */
    union {
        void (*any)(void);
        MPI_Comm_errhandler_function *comm;
        MPI_Win_errhandler_function *win;
        MPI_File_errhandler_function *file;
        MPI_Session_errhandler_function *session;
    } fn;
} halo_errhandler_t;

void halo_errhandler_init(void);
/* The initial handler of MPI_COMM_WORLD, MPI_COMM_SELF and windows:
 * MPI_COMM_WORLD's current one, MPI_ERRORS_ARE_FATAL while nobody set that. */
halo_errhandler_t *halo_errhandler_fatal(void);
void halo_errhandler_release(halo_errhandler_t *e);
/* The handler behind an MPI_Errhandler argument when an object of kind
 * objkind (HALO_EOBJ_*) takes it: a predefined one or one made for that
 * kind; else the argument's error. */
int halo_errhandler_for(MPI_Errhandler errhandler, int objkind, halo_errhandler_t **e_p);
/* MPI_<Object>_set_errhandler: *slot takes the handler (a reference on
 * it), the one it held is released. */
int halo_errhandler_set(halo_errhandler_t **slot, MPI_Errhandler errhandler, int objkind);
/* Runs an error handler for an error on an object (HALO_EOBJ_*); returns
 * the code the call gives back. */
int halo_errhandler_invoke(halo_errhandler_t *e, int objkind, void *handle, int code);

#endif
