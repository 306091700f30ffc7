/* One-sided communication (RMA windows): see win.c. */
#ifndef HALO_RMA_WIN_H
#define HALO_RMA_WIN_H

#include "core/obj.h"

struct halo_errhandler;

void halo_win_init(void);
/* The error handler of a valid window, or NULL (errors of its calls). */
struct halo_errhandler *halo_win_errhandler(MPI_Win win);

#endif
