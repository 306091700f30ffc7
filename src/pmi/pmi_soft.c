/* The "soft" key of the MPI standard: mpiexec's -soft and the info key of
 * MPI_Comm_spawn, one reading for both. */
#include "pmi.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>

long halo_soft_pick(const char *list, long cap)
{
    const char *p = list;
    long best = 0;

    while (1) {
        long v[3] = {0, 0, 1};
        int nv = 0;
        char *endp;

        while (nv < 3) {
            errno = 0;
            v[nv] = strtol(p, &endp, 10);
            if (errno != 0 || endp == p) {
                return -1;
            }
            /* Beyond any count of processes: kept in a range where the
             * steps below cannot overflow. */
            if (v[nv] > INT_MAX || v[nv] < -INT_MAX) {
                v[nv] = v[nv] > 0 ? INT_MAX : -INT_MAX;
            }
            nv++;
            p = endp;
            if (*p != ':') {
                break;
            }
            p++;
        }
        if (nv == 1) {
            v[1] = v[0];
        }
        if (v[2] == 0) {
            return -1;
        }
        if (v[2] > 0 && v[0] <= cap && v[0] <= v[1]) {
            /* a, a+c, ... up to b: the last one not above cap. */
            long top = v[1] < cap ? v[1] : cap;

            v[0] += (top - v[0]) / v[2] * v[2];
        } else if (v[2] < 0 && v[0] >= v[1]) {
            /* a, a+c, ... down to b: the first one not above cap. */
            if (v[0] > cap) {
                long steps = (v[0] - cap + (-v[2]) - 1) / (-v[2]);

                v[0] -= steps * (-v[2]);
            }
            if (v[0] < v[1]) {
                v[0] = 0;
            }
        } else {
            v[0] = 0;
        }
        if (v[0] <= cap && v[0] > best) {
            best = v[0];
        }
        if (*p == '\0') {
            return best;
        }
        if (*p != ',') {
            return -1;
        }
        p++;
    }
}
