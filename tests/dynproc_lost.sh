#!/usr/bin/env bash
# Two jobs started apart meet through a published name (MPI_Comm_accept and
# _connect); the connecting one sends an int and dies. The accepting job,
# waiting for a second int, must end with a message naming the lost process
# instead of waiting for ever. Then a record of a name left by a dead
# process is replaced by the next publisher.
#   dynproc_lost.sh MPIEXEC DYNPROC_PROGRAM
set -u
mpiexec=$1 prog=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
export HALO_NAME_DIR=$dir DYNPROC_LOST_ID=$$
DYNPROC_LOST=accept "$mpiexec" --timeout 30 -n 1 "$prog" >"$dir/accept.out" 2>&1 &
acc=$!
DYNPROC_LOST=connect "$mpiexec" --timeout 30 -n 1 "$prog" >"$dir/connect.out" 2>&1
wait $acc
status=$?
cat "$dir/accept.out"
if [ $status -eq 0 ]; then
    echo "dynproc_lost: the accepting job succeeded"; exit 1
fi
if [ $status -eq 124 ]; then
    echo "dynproc_lost: the accepting job timed out instead of ending"; exit 1
fi
grep -q "ended without MPI_Finalize" "$dir/accept.out" || { echo "dynproc_lost: no message about the lost process"; exit 1; }
if ls "$dir" | grep -qv '\.out$'; then
    echo "dynproc_lost: a published name was left behind: $(ls "$dir")"; exit 1
fi
# A record left by a process that died without unpublishing (SIGKILL) is
# replaced by the next MPI_Publish_name of the name.
true & dead=$!
wait $dead
python3 - "$dir" "halo-test-lost-$$" "$dead" <<'PY'
import sys
d, service, pid = sys.argv[1], sys.argv[2], sys.argv[3]
h = 14695981039346656037
for b in service.encode():
    h = ((h ^ b) * 1099511628211) % (1 << 64)
open(f"{d}/{h:016x}", "w").write(f"{service}\nhalo-port:0000000000000001:1\n{pid}\n")
PY
DYNPROC_LOST=publish "$mpiexec" --timeout 30 -n 1 "$prog" >"$dir/publish.out" 2>&1 || { cat "$dir/publish.out"; echo "dynproc_lost: publishing over a stale record failed"; exit 1; }
grep -q "stale name replaced" "$dir/publish.out" || { cat "$dir/publish.out"; exit 1; }
echo "dynproc_lost: ok"
