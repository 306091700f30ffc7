#!/bin/bash
# The PMI client under MPICH's Hydra (mpiexec.hydra): the same helper as
# under our mpiexec. Skipped (status 77) when Hydra is not installed.
. "$(dirname "$0")/common.sh"

HYDRA=$(command -v mpiexec.hydra)
if [ -z "$HYDRA" ]; then
    echo "SKIP: mpiexec.hydra not found"
    exit 77
fi
# Hydra with SIGPIPE ignored: about one job in 400 on a loaded machine,
# mpiexec.hydra itself died of SIGPIPE (exit 141, no output forwarded) on
# these jobs, whose ranks live a millisecond; with the signal ignored, 1500
# jobs in a row gave every rank's output and no error. The race is between
# Hydra's own processes (a write to a peer that has just exited); the PMI
# exchange the test checks is unaffected.
hydra_nopipe() {
    (trap '' PIPE; exec "$HYDRA" "$@")
}
MPIEXEC=hydra_nopipe

run -n 2 "$HELPER" info
expect_rc 0 "info under Hydra"
expect_count out '^rank=[01] size=2 appnum=0 universe=-1 singleton=0 kvsname=' 2 "rank, size, appnum, universe"

run -n 2 "$HELPER" kvs 100
expect_rc 0 "put/fence/get under Hydra"
run -n 2 "$HELPER" kvs 5000
expect_rc 0 "values longer than Hydra's vallen_max"
expect_count out 'kvs ok \(5000 bytes\)' 2 "both ranks read the long values"

run -n 2 "$HELPER" mapping
expect_rc 0 "PMI_process_mapping from Hydra"

run -n 2 "$HELPER" info : -n 1 "$HELPER" info
expect_grep out '^rank=2 size=3 appnum=1 ' "MPMD appnum under Hydra"

run -n 2 "$HELPER" abort 7 1 "hydra abort"
expect_rc 7 "abort under Hydra"
expect_grep err 'aborting the job with code 7: hydra abort' "the client prints the message itself"

finish
