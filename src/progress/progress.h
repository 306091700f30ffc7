/* The progress engine: one poll over every source of events (transports,
 * then the hooks of the layers above: pending sends, collective schedules),
 * and the wait policy that blocking calls use. */
#ifndef HALO_PROGRESS_PROGRESS_H
#define HALO_PROGRESS_PROGRESS_H

#include "core/halo.h"

typedef int halo_progress_hook_fn_t(void);
typedef bool halo_progress_done_fn_t(void *arg);

void halo_progress_init(void);
void halo_progress_finalize(void);
/* n processes (of this job and others) now share this node: the automatic
 * wait policy turns to the oversubscribed one when they outnumber the cores. */
void halo_progress_note_node_procs(int n);
/* More ranks on this node than cores to run them (decided at init). */
bool halo_progress_oversubscribed(void);
/* The processors the job's ranks on this node share (those mpiexec may
 * use; without mpiexec this process's affinity mask, or the node's
 * online processors for a rank bound to one): "oversubscribed" is more
 * ranks on the node than these. */
long halo_progress_job_cpus(void);
/* Waits that slept where they would have yielded, because processes of no
 * MPI job kept the CPUs (progress.c, "Outside load"; an MPI_T performance
 * variable); changed by relaxed atomic stores under the library lock. */
extern uint64_t halo_progress_loaded_waits;
void halo_progress_hook_add(halo_progress_hook_fn_t *fn);

/* One pass; returns the number of events handled. */
int halo_progress_poll(void);

/* Progresses until done(arg) holds, spinning, then yielding, then sleeping
 * on the doorbell (HALO_WAIT_POLICY). Called with the library lock held (at
 * MPI_THREAD_MULTIPLE); releases it while it yields or sleeps. */
void halo_progress_wait(halo_progress_done_fn_t *done, void *arg);

/* The same, pausing the core between idle polls from the first one on
 * (halo_progress_wait polls a few dozen times without pausing first).
 * Collective schedules wait through it, all of them (those made of
 * messages only were not measured either way and keep the pacing they had):
 * polled without pauses, a shared-memory collective's flag line and its
 * neighbours kept moving to the waiting core while the writer still filled
 * them (2-rank Bcast, Gather, Reduce of 256 bytes 10-17% slower). */
void halo_progress_wait_paced(halo_progress_done_fn_t *done, void *arg);

/* Wakes threads of this process that sleep in halo_progress_wait (for
 * completions that do not come from a transport, like MPI_Grequest_complete). */
void halo_progress_signal(void);

#endif
