/* Alltoall, Alltoallv and Alltoallw on an intercommunicator, linear.
 *
 * Every process sends block j straight to remote rank j and receives block
 * j from it, all at once, starting at a different remote rank on each
 * process. Cost: (q - 1) alpha + q n beta a process with everything in
 * flight at once, q the remote group's size and n one block. Any
 * datatypes. */
#include "coll/algos.h"

int halo_inter_alltoall(const halo_coll_args_t *a, const halo_inter_t *x, halo_sched_t **s_p)
{
    int q = x->q;
    for (int k = 0; k < q; k++) {
        int j = (x->me + k) % q;
        halo_bref_t b;
        MPI_Count n;
        MPI_Datatype t;
        halo_a2a_recv_block(a, q, j, &b, &n, &t);
        halo_sched_recv(s_p, 0, b, n, t, halo_inter_rr(x, j));
        halo_a2a_send_block(a, q, j, &b, &n, &t);
        halo_sched_send(s_p, 0, b, n, t, halo_inter_rr(x, j));
    }
    return MPI_SUCCESS;
}
