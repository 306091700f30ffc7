#!/usr/bin/env bash
# One CTest case of halo-bench:
#   test_run.sh RUNNER MPIEXEC BENCH RANKS EXPECT MODE SECTIONS -- ARGS
# RUNNER is tests/run_mpi_test.sh (launch under Halo's mpiexec, exit status,
# leak check), or "direct" to run BENCH ARGS as it is (launcher mode; then
# EXPECT is pass or fail); the output is then checked by check_output.awk (MODE pass or
# fail, SECTIONS expected, 0 = any), or, with MODE json, parsed as JSON lines.
set -u
runner=$1 mpiexec=$2 bench=$3 ranks=$4 expect=$5 mode=$6 sections=$7
shift 7
[ "${1:-}" = "--" ] && shift
here=$(cd "$(dirname "$0")" && pwd)
out=$(mktemp)
trap 'rm -f "$out"' EXIT
if [ "$runner" = direct ]; then
    "$bench" "$@" >"$out" 2>&1
    st=$?
    status=0
    case "$expect" in
    pass) [ $st -eq 0 ] || { echo "run_mpi_test: expected success, got exit status $st" >>"$out"; status=1; } ;;
    fail) [ $st -ne 0 ] || { echo "run_mpi_test: expected failure, got success" >>"$out"; status=1; } ;;
    esac
else
    "$runner" "$mpiexec" "$bench" "$ranks" "$expect" 120 -- "$@" >"$out" 2>&1
    status=$?
fi
# run_mpi_test.sh's own verdict lines would upset the format check.
grep -v '^run_mpi_test:' "$out" | sed -n '1,400p'
[ $status -eq 0 ] || { grep '^run_mpi_test:' "$out"; exit 1; }
if [ "$mode" = json ]; then
    grep -v '^run_mpi_test:' "$out" | python3 -c '
import json, sys
n = 0
for line in sys.stdin:
    if not line.strip():
        continue
    o = json.loads(line)
    assert o["status"] in ("ok", "n/a"), o["benchmark"] + ": status " + o["status"]
    assert o["status"] == "n/a" or o["rows"], o["benchmark"] + ": no rows"
    for r in o["rows"]:
        assert r["validation"] == "pass", o["benchmark"] + ": validation " + r["validation"]
    n += 1
want = int(sys.argv[1])
assert want == 0 or n == want, "%d objects, expected %d" % (n, want)
print("check_output: %d JSON objects well formed" % n)
' "$sections"
    exit $?
fi
grep -v '^run_mpi_test:' "$out" | awk -v mode="$mode" -v sections="$sections" -f "$here/check_output.awk"
