#!/bin/bash
# bench_compare.sh SRC BUILD: bench/compare beside a peer, run the way the
# docs show it (from the source tree, --build and --out relative): the
# peer's halo-bench is built (make in bench/halo_bench) and its figures
# reach the table beside Halo's. Skipped (77) without Open MPI's mpicc.
set -u
SRC=$1
BUILD=$2
command -v mpicc.openmpi >/dev/null && command -v mpirun.openmpi >/dev/null || {
    echo "no mpicc.openmpi: skipped"; exit 77; }
cd "$SRC" || exit 1
out=$(realpath --relative-to="$SRC" "$(mktemp -d "$BUILD/compare-test.XXXXXX")")
trap 'rm -rf "$SRC/$out"' EXIT
log=$(bench/compare --build "$(realpath --relative-to="$SRC" "$BUILD")" --out "$out" --mpis halo,openmpi \
      --ranks 2 --bench latency --sizes 8 --rounds 1 -i 200 2>&1)
rc=$?
fail() { echo "bench_compare: $*"; echo "$log"; exit 1; }
[ $rc -eq 0 ] || fail "exit status $rc"
grep -q "failed" <<<"$log" && fail "a build or run failed"
[ -x "$SRC/$out/bin/halo-bench.openmpi" ] || fail "no $out/bin/halo-bench.openmpi"
grep -Eq '^\| 2 \| 8 \| [0-9.]+ \| [0-9.]+ \| [0-9.]+ \|' <<<"$log" ||
    fail "no row with Halo's and Open MPI's 8-byte latency and their ratio"
echo "bench_compare: ok"
