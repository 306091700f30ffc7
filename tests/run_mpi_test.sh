#!/usr/bin/env bash
# Runs one MPI test under Halo's mpiexec and checks its outcome.
#   run_mpi_test.sh MPIEXEC PROGRAM RANKS EXPECT TIMEOUT [env=VAR=VAL] [grep=REGEX] [wrap=TOOL]
#                   [usize=N] [bind=core|none] -- [ARGS]
# EXPECT: pass (exit 0), exit=N (exit status N), fail (any non-zero status).
# wrap=TOOL: each rank runs "TOOL PROGRAM ARGS" (a test tool that sets up the
# rank's process, then execs it).
# usize=N: mpiexec -usize N (MPI_UNIVERSE_SIZE); bind=X: mpiexec --bind-to X.
# Also fails when the job leaves a Halo segment behind in /dev/shm.
set -u
mpiexec=$1 prog=$2 ranks=$3 expect=$4 timeout=$5
shift 5
envs=() greps=() wrap=() margs=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
    case "$1" in
    env=*) envs+=("${1#env=}") ;;
    grep=*) greps+=("${1#grep=}") ;;
    wrap=*) wrap=("${1#wrap=}") ;;
    usize=*) margs+=(-usize "${1#usize=}") ;;
    bind=*) margs+=(--bind-to "${1#bind=}") ;;
    *) echo "run_mpi_test: unknown option $1" >&2; exit 2 ;;
    esac
    shift
done
[ "${1:-}" = "--" ] && shift
# A job name of our own, so the leak check below looks at this job only.
export HALO_KVSNAME="test-$$-$RANDOM"
out=$(mktemp)
env "${envs[@]}" "$mpiexec" --timeout "$timeout" "${margs[@]}" -n "$ranks" "${wrap[@]}" "$prog" "$@" >"$out" 2>&1
status=$?
cat "$out"
# A wrap tool that cannot set the rank up says "skipped" and exits 77: the
# test is reported as skipped (ctest's SKIP_RETURN_CODE), not as passed.
if [ ${#wrap[@]} -gt 0 ] && [ $status -eq 77 ] && grep -q "^$(basename "${wrap[0]}" | sed 's/^halo_//'): skipped" "$out"; then
    rm -f "$out"
    exit 77
fi
ok=1
case "$expect" in
pass) [ $status -eq 0 ] || { echo "run_mpi_test: expected success, got exit status $status"; ok=0; } ;;
exit=*) [ $status -eq "${expect#exit=}" ] || { echo "run_mpi_test: expected exit status ${expect#exit=}, got $status"; ok=0; } ;;
fail) [ $status -ne 0 ] || { echo "run_mpi_test: expected failure, got success"; ok=0; } ;;
*) echo "run_mpi_test: unknown expectation $expect"; ok=0 ;;
esac
for g in "${greps[@]}"; do
    grep -Eq -- "$g" "$out" || { echo "run_mpi_test: output does not match /$g/"; ok=0; }
done
left=$(ls /dev/shm 2>/dev/null | grep "^halo-$HALO_KVSNAME-" || true)
if [ -n "$left" ]; then
    echo "run_mpi_test: the job left shared-memory segments in /dev/shm: $left"
    ok=0
fi
rm -f "$out"
[ $ok -eq 1 ]
