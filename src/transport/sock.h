/* The socket transport: processes of other jobs on this node (sock.c). */
#ifndef HALO_TRANSPORT_SOCK_H
#define HALO_TRANSPORT_SOCK_H

#include "core/errors.h"
#include "transport/transport.h"

/* Eager limit toward other jobs when this process has no node segment
 * (a singleton, or alone on its node); otherwise the segment's applies. */
#define HALO_SOCK_EAGER_MAX ((size_t)16 * 1024)
/* Largest pushed chunk toward another job. */
#define HALO_SOCK_CHUNK_MAX ((size_t)64 * 1024)

void halo_sock_set_handler(halo_pkt_handler_fn_t *handler);
/* Called when a process of another job closes its connection to this one
 * without the goodbye of its finalize (it crashed or was killed). */
void halo_sock_set_lost(void (*lost)(int world));
/* Starts listening for processes of other jobs (once); MPI error class. */
int halo_sock_activate(void);
/* Whether this process listens for other jobs (polls and sleeps look). */
extern bool halo_sock_on;
static inline bool halo_sock_active(void)
{
    return halo_sock_on;
}
/* A process as every job names it (its index in the process table differs
 * from job to job), as two jobs exchange it. */
typedef struct halo_proc_ident {
    uint64_t gpid;
    int32_t pid;
    int32_t spare;
} halo_proc_ident_t;

/* The index (world rank) of the process with this identity, added to the
 * table if new: a rank of this job keeps its rank. */
int halo_proc_add(uint64_t gpid, int32_t pid);
/* The pid of a process of another job (0 for the job's own ranks). */
int32_t halo_proc_pid_of(int world);
/* The pid of any process of the table: another job's, or a rank of this
 * job on this node (0 when not known: a rank on another node). */
int32_t halo_proc_pid_any(int world);
int halo_sock_send(int dst_world, const halo_pkt_hdr_t *hdr, const void *payload, size_t len,
                   halo_pkt_fill_fn_t *fill, void *fill_arg);
/* A single-copy read of a far process's memory (rendezvous): 0, or -1 when
 * it cannot be read directly (the data is pushed then). */
int halo_sock_readv(int src_world, const struct iovec *local, int nlocal, const struct iovec *remote,
                    int nremote);
int halo_sock_poll(void);
/* The watcher thread also watches fd (readable once: a pidfd, say): when it
 * fires, *flag becomes 1 and the doorbell rings. 0, or -1 (not watched). */
int halo_sock_watch_other(int fd, _Atomic int *flag);
void halo_sock_finalize(void);

/* Listening and connecting sockets in the abstract namespace, named by a
 * kind ("p" a process, "port" an MPI port), an identity and a number: the
 * descriptor, or -1 with errno. */
int halo_sock_listen_on(const char *what, uint64_t id, int n);
int halo_sock_connect_to(const char *what, uint64_t id, int n);

#endif
