#!/usr/bin/env bash
# Two Halo jobs at once, each with a rank computing for 5 ms in turn while
# the others wait (core_wait_load pair): each job's ranks are busy tasks to
# the other, but Halo processes, so no wait of either may sleep for outside
# load (a rule that counted them as busy processes made two such jobs 5 to
# 30 times as slow).
#   wait_two_jobs.sh MPIEXEC CORE_WAIT_LOAD_PROGRAM
set -u
mpiexec=$1 prog=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
export HALO_WAIT_POLICY=auto HALO_WAIT_OUTSIDE_LOAD=1
"$mpiexec" --timeout 60 -n 4 "$prog" pair >"$dir/a.out" 2>&1 &
a=$!
"$mpiexec" --timeout 60 -n 4 "$prog" pair >"$dir/b.out" 2>&1
sb=$?
wait $a
sa=$?
cat "$dir/a.out" "$dir/b.out"
if [ $sa -ne 0 ] || [ $sb -ne 0 ]; then
    echo "wait_two_jobs: exit statuses $sa and $sb"; exit 1
fi
grep -q "core_wait_load: ok" "$dir/a.out" && grep -q "core_wait_load: ok" "$dir/b.out" ||
    { echo "wait_two_jobs: a job did not finish its checks"; exit 1; }
echo "wait_two_jobs: ok"
