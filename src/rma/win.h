/* One-sided communication (RMA windows): see win.c. */
#ifndef HALO_RMA_WIN_H
#define HALO_RMA_WIN_H

#include "core/obj.h"
#include "transport/transport.h"

struct halo_errhandler;

void halo_win_init(void);
/* The error handler of a valid window, or NULL (errors of its calls). */
struct halo_errhandler *halo_win_errhandler(MPI_Win win);
/* One-sided packets (HALO_PKT_RMA_*), from the point-to-point layer's
 * packet handler. */
void halo_rma_on_packet(int src_world, const halo_pkt_hdr_t *h, const void *payload, size_t len);

#endif
