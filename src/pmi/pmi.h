/* Launch wire-up: how a Halo process learns its place in the job and
 * exchanges addresses with its peers.
 *
 * The launcher (our mpiexec, or MPICH's Hydra) hands each rank an already
 * connected socket in PMI_FD, with PMI_RANK and PMI_SIZE, and answers the
 * PMI-1 wire protocol on it (see pmi_wire.h). Without PMI_FD the process
 * is a singleton: rank 0 of 1, with put/get served from an in-process table.
 *
 * Calls must come from one thread at a time; the caller serializes them.
 * All state lives between halo_pmi_init and halo_pmi_finalize. */
#ifndef HALO_PMI_H
#define HALO_PMI_H

#include <stddef.h>

typedef struct halo_pmi_info {
    int rank, size;     /* this process in the job */
    int appnum;         /* MPMD application number (0 when single app) */
    int universe_size;  /* from get_universe_size; -1: not known */
    int singleton;      /* 1 when started without a launcher */
    char kvsname[256];  /* job-unique name; singleton: "singleton-<pid>" */
} halo_pmi_info_t;

/* 0 on success, -1 on failure (message to stderr). A second init without
 * finalize fails; init after finalize works for singletons only, since
 * finalize closes the launcher's socket. */
int halo_pmi_init(halo_pmi_info_t *info_p);

/* Publishes key=value for the other ranks (visible after the next fence).
 * Keys are C strings of up to HALO_PMI_KEY_MAX bytes and must not start
 * with "PMI_" (reserved for the launcher's own keys). Values may be any C
 * string: they are escaped for the wire and split into chunks when longer
 * than the server's vallen_max. Putting a key again replaces its value. */
int halo_pmi_put(const char *key, const char *value);

/* Makes all puts visible everywhere; a barrier across all ranks. */
int halo_pmi_fence(void);

/* Fetches key as put by any rank (rank_hint: the rank that put it, or -1;
 * PMI-1 has one flat space, so it only documents intent today). value_p
 * receives at most maxlen bytes, NUL included. Keys starting with "PMI_"
 * are the launcher's and come back exactly as it stored them.
 * Returns 0 when found, -1 when not found (silently) or on error (message
 * to stderr, including a value longer than maxlen). */
int halo_pmi_get(int rank_hint, const char *key, char *value_p, int maxlen);

/* Fills node_of_rank_p[r] (size entries) with the node index of each rank
 * and *nnodes_p with the number of nodes, from the launcher's
 * PMI_process_mapping "(vector,(start_node,num_nodes,ranks_per_node),...)".
 * The blocks repeat until every rank is placed, as in MPICH. A singleton
 * gets node 0 of 1. Returns -1 when the launcher does not provide it. */
int halo_pmi_get_process_mapping(int *node_of_rank_p, int *nnodes_p);

/* Asks the launcher to end the job with exitcode, then _exit(exitcode).
 * msg (may be NULL) is printed by our mpiexec; under another launcher,
 * which would drop it, this process prints it itself. */
_Noreturn void halo_pmi_abort(int exitcode, const char *msg);

/* Tells the launcher this rank is done with PMI and closes the connection.
 * After it, a rank exiting does not end the job. */
int halo_pmi_finalize(void);

/* Longest key accepted by halo_pmi_put/get. Keys cross the wire escaped,
 * with room for a chunk suffix, and must fit Hydra's keylen_max of 64: a key
 * of up to HALO_PMI_KEY_MAX letters, digits and "-_.,:/()+@" always fits;
 * any other byte takes three. */
#define HALO_PMI_KEY_MAX 40

/* Set by our mpiexec in every rank's environment: the launcher prints
 * abort messages and removes shared-memory segments after the job. */
#define HALO_PMI_SERVER_ENV "HALO_PMI_SERVER"

/* Shared-memory segments of a job are named
 * "/" HALO_SHM_PREFIX "<kvsname>-<suffix>", i.e. the files
 * /dev/shm/halo-<kvsname>-<suffix>. mpiexec removes every file of the job
 * with this prefix after the job ends, whatever the way it ends. */
#define HALO_SHM_PREFIX "halo-"
#define HALO_SHM_DIR "/dev/shm"

/* Writes the shm_open() name "/halo-<kvsname>-<suffix>" into out (n bytes,
 * truncated if short). A '/' inside kvsname or suffix becomes '_' so the
 * name stays one file in /dev/shm. With suffix "" it is the job's prefix. */
void halo_shm_name(char *out, size_t n, const char *kvsname, const char *suffix);

/* The number of processes a "soft" list allows (MPI 5.0 sections 11.5 and
 * 11.8.4: comma-separated a, a:b and a:b:c, the last Fortran's triplet with
 * c maybe negative; values below 1 or above the count asked are ignored):
 * the largest that is at least 1 and at most cap. 0 when there is none, -1 when the
 * text is not such a list. */
long halo_soft_pick(const char *list, long cap);

#endif /* HALO_PMI_H */
