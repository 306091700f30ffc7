/* Sessions (MPI 4 Sessions model): objects of their own, each with an
 * error handler, its hints and the thread level it got. The library under
 * them is shared with the world model (core/init.c). */
#ifndef HALO_CORE_SESSION_H
#define HALO_CORE_SESSION_H

#include "core/obj.h"

struct halo_errhandler;
struct halo_info;

typedef struct halo_session {
    halo_obj_t hdr;
    struct halo_errhandler *errh;
    struct halo_info *info;     /* hints given at init, with "thread_level" as granted */
    int thread_level;
} halo_session_t;

void halo_session_init_kind(void);
halo_session_t *halo_session_get(MPI_Session s);   /* validated, or NULL */

/* Library users (core/init.c): a session starts the library if it is not
 * running (raising its thread level to `required`) and stops it if it was
 * the last user after MPI_Finalize. */
int halo_lib_session_open(int required, int *provided_p);
void halo_lib_session_close(void);

#endif
