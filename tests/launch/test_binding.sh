#!/bin/bash
# --bind-to: by default (and with --bind-to core) rank i runs on the i-th
# CPU mpiexec may use, round robin when the ranks outnumber the CPUs; no
# binding with --bind-to none.
. "$(dirname "$0")/common.sh"

allowed=$(awk '/^Cpus_allowed_list:/ { print $2 }' /proc/self/status)
read -r -a cpus <<<"$(expand_cpus "$allowed")"
n=${#cpus[@]}
echo "allowed CPUs: $allowed ($n)"

check_bound() {
    local r
    for ((r = 0; r < $1; r++)); do
        expect_grep out "^rank $r: cpus ${cpus[$r]}\$" "$2: rank $r on CPU ${cpus[$r]}"
    done
}

run -n "$n" "$HELPER" affinity
expect_rc 0 "default binding"
check_bound "$n" "default"

run --bind-to core -n "$n" "$HELPER" affinity
check_bound "$n" "--bind-to core"

run -bind-to none -n "$n" "$HELPER" affinity
expect_count out "^rank [0-9]+: cpus $allowed\$" "$n" "--bind-to none leaves every rank on all CPUs"

run -n $((2 * n + 1)) "$HELPER" affinity
expect_rc 0 "default binding, more ranks than CPUs"
expect_no_grep err '.' "and nothing printed about it"
for ((r = 0; r < 2 * n + 1; r++)); do
    expect_grep out "^rank $r: cpus ${cpus[$((r % n))]}\$" "default, overloaded: rank $r on CPU ${cpus[$((r % n))]}"
done

run --bind-to core -n $((2 * n + 1)) "$HELPER" affinity
expect_rc 0 "--bind-to core, more ranks than CPUs"
for ((r = 0; r < 2 * n + 1; r++)); do
    expect_grep out "^rank $r: cpus ${cpus[$((r % n))]}\$" "--bind-to core overloaded: rank $r on CPU ${cpus[$((r % n))]}"
done

run -bind-to none -n $((n + 1)) "$HELPER" affinity
expect_count out "^rank [0-9]+: cpus $allowed\$" $((n + 1)) "--bind-to none, more ranks than CPUs: no binding"

# The ranks learn how many CPUs the node's ranks share (the library counts
# its ranks against them: bound, each sees only its own).
run -n 2 sh -c 'echo "job cpus: ${HALO_JOB_CPUS:-unset}"'
expect_count out "^job cpus: $n\$" 2 "HALO_JOB_CPUS is the number of CPUs mpiexec may use"
HALO_JOB_CPUS=77 run -bind-to none -n 2 sh -c 'echo "job cpus: ${HALO_JOB_CPUS:-unset}"'
expect_count out "^job cpus: $n\$" 2 "--bind-to none too, and an inherited value does not leak"

run --bind-to sockets -n 1 true
expect_rc 2 "an unknown binding is a usage error"

# The i-th *allowed* CPU: under a narrower mask, rank 0 gets its first CPU.
if [ "$n" -ge 2 ] && command -v taskset >/dev/null; then
    last=${cpus[$((n - 1))]}
    start=$(now)
    taskset -c "$last" "$MPIEXEC" -n 1 "$HELPER" affinity >"$TMP/out" 2>"$TMP/err" </dev/null
    RC=$?
    expect_grep out "^rank 0: cpus $last\$" "binding follows mpiexec's own mask"
    taskset -c "$last" "$MPIEXEC" -n 3 sh -c 'echo "job cpus: $HALO_JOB_CPUS"' >"$TMP/out" 2>"$TMP/err" </dev/null
    expect_count out "^job cpus: 1\$" 3 "under a one-CPU mask the ranks share 1 CPU"
else
    echo "skipped: narrower mask check (needs 2 CPUs and taskset)"
fi

finish
