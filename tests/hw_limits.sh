#!/bin/sh
# hw_limits.sh HALO_HW_LIMITS DENY_CMA: checks bench/hw_limits.c's probes.
#  - line: the one-way time of a cache line is a number between 1 ns and
#    10 us (it is tens of nanoseconds on any machine with two cores);
#  - cma: every size gives MB/s above 100 one way and both ways, into one
#    buffer and into a window of buffers (the program itself checks the bytes
#    it read and fails with "wrong data");
#  - --json: both probes print one object each, with status ok and the rows;
#  - switch: pairs of processes sharing a CPU hand a turn over in 50 ns to
#    10 ms one way (a context switch each), for 1, 2 and 4 pairs, and 2
#    pairs in --json;
#  - alltoall: 3 ranks (odd: one process copies for two ranks) at two
#    block sizes gives positive times, the fastest at most the median, and
#    GB/s that match ranks^2 x block / time; the program checks every
#    received block and exits 2 "wrong data" otherwise; --json prints one
#    object; a partner pinned to a CPU that does not exist is reported;
#  - ring: records of 1000 bytes (not a multiple of a line) stream through
#    every ring size at more than 100 MB/s; the program checks the first
#    and last byte of every record and exits 2 "wrong data" otherwise;
#    --json prints one object with a row per ring size;
#  - pingpong: for each default amount of work (0, 16, 32, 64, 128 steps) a
#    one-way time of 10 ns to 100 us, and the steps' own time growing with
#    them; --work 16 --json prints one object with that work; a partner
#    pinned to a CPU that does not exist is reported (exit 2, the reason);
#  - with process_vm_readv refused (the deny_cma tool): exit status 2 and a
#    message that names the refusal; the line probe still runs;
#  - bad arguments exit 1 with a message naming the option; a CPU that does
#    not exist exits 2 with a message.
# Needs two CPUs; says so and exits 77 (skipped) where there is only one.
set -u
exe=$1
deny=$2
fail() { echo "hw_limits: FAIL: $*"; exit 1; }
out=$(mktemp)
trap 'rm -f "$out"' EXIT

"$exe" line -r 3 -i 20000 >"$out" 2>&1
rc=$?
if [ $rc -eq 2 ] && grep -q "fewer than two CPUs" "$out"; then
    echo "hw_limits: skipped: $(cat "$out")"
    exit 77
fi
[ $rc -eq 0 ] || fail "line exited $rc: $(cat "$out")"
awk '/^line_ns/ { found = 1; if (!($2 > 1 && $2 < 10000 && $3 > 0 && $3 <= $2)) bad = 1 }
     END { exit !(found && !bad) }' "$out" || fail "line: bad figures: $(cat "$out")"

for w in 1 4; do
    "$exe" cma -r 1 --sizes 64K,1M -W $w >"$out" 2>&1 || fail "cma -W $w exited $?: $(cat "$out")"
    awk '/^cma / { n++; if (!($3 > 100 && $4 > 100)) bad = 1 } END { exit !(n == 2 && !bad) }' "$out" ||
        fail "cma -W $w: bad figures: $(cat "$out")"
done

"$exe" --json -r 1 -i 5000 --sizes 128K >"$out" 2>&1 || fail "--json exited $?: $(cat "$out")"
python3 - "$out" <<'PY' || fail "--json output: $(cat "$out")"
import json, sys
objs = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
assert [o["benchmark"] for o in objs] == ["hw_line", "hw_cma"], objs
assert all(o["status"] == "ok" for o in objs), objs
assert 0 < objs[0]["rows"][0]["avg_us"] < 10, objs[0]
r = objs[1]["rows"]
assert len(r) == 1 and r[0]["size"] == 131072 and r[0]["mb_s"] > 100 and r[0]["both_mb_s"] > 100, r
PY

"$exe" ring -r 1 --sizes 1000 >"$out" 2>&1 || fail "ring exited $?: $(cat "$out")"
awk '/^ring / { n++; if (!($2 == 1000 && $3 >= 16384 && $4 > 100)) bad = 1 } END { exit !(n == 6 && !bad) }' "$out" ||
    fail "ring: bad figures: $(cat "$out")"
"$exe" ring -r 1 -i 20000 --sizes 2K --json >"$out" 2>&1 || fail "ring --json exited $?: $(cat "$out")"
python3 - "$out" <<'PY' || fail "ring --json output: $(cat "$out")"
import json, sys
objs = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
assert len(objs) == 1 and objs[0]["benchmark"] == "hw_ring" and objs[0]["status"] == "ok", objs
r = objs[0]["rows"]
assert [x["ring"] for x in r] == [16384, 65536, 131072, 196608, 262144, 1048576], r
assert all(x["mb_s"] > 100 for x in r), r
PY

"$exe" switch -r 3 -i 2000 >"$out" 2>&1 || fail "switch exited $?: $(cat "$out")"
awk '/^switch_ns/ { n++; if (!($2 == (n == 3 ? 4 : n) && $3 > 50 && $3 < 1e7 && $4 > 0 && $4 <= $3)) bad = 1 }
     END { exit !(n == 3 && !bad) }' "$out" || fail "switch: bad figures: $(cat "$out")"
"$exe" switch --pairs 2 -r 1 -i 1000 --json >"$out" 2>&1 || fail "switch --json exited $?: $(cat "$out")"
python3 - "$out" <<'PY' || fail "switch --json output: $(cat "$out")"
import json, sys
objs = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
assert len(objs) == 1 and objs[0]["benchmark"] == "hw_switch" and objs[0]["status"] == "ok", objs
assert objs[0]["pairs"] == 2 and 0.05 < objs[0]["rows"][0]["avg_us"] < 1e4, objs
PY

"$exe" alltoall --ranks 3 --sizes 4K,64K -r 3 >"$out" 2>&1 || fail "alltoall exited $?: $(cat "$out")"
awk '/^alltoall / { n++; gb = 9 * $3 / ($4 * 1e3)
                    if (!($2 == 3 && $4 > 0 && $5 > 0 && $5 <= $4 && $6 > 0.5 * gb && $6 < 2 * gb)) bad = 1 }
     END { exit !(n == 2 && !bad) }' "$out" || fail "alltoall: bad figures: $(cat "$out")"
"$exe" alltoall --ranks 2 --sizes 16K -r 1 --json >"$out" 2>&1 || fail "alltoall --json exited $?: $(cat "$out")"
python3 - "$out" <<'PY' || fail "alltoall --json output: $(cat "$out")"
import json, sys
objs = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
assert len(objs) == 1 and objs[0]["benchmark"] == "hw_alltoall" and objs[0]["status"] == "ok", objs
r = objs[0]["rows"]
assert objs[0]["ranks"] == 2 and len(r) == 1 and r[0]["size"] == 16384 and r[0]["avg_us"] > 0 and r[0]["gb_s"] > 0, objs
PY
"$exe" alltoall --ranks 2 --sizes 4K -r 1 --cpus 0,4095 >"$out" 2>&1
rc=$?
[ $rc -eq 2 ] || fail "alltoall --cpus 0,4095: exit $rc, expected 2: $(cat "$out")"
grep -q "alltoall: not measured: the partner process failed" "$out" || fail "alltoall --cpus 0,4095: no reason: $(cat "$out")"

"$deny" "$exe" -r 1 -i 5000 --sizes 64K >"$out" 2>&1
rc=$?
if [ $rc -eq 77 ]; then
    echo "hw_limits: (the kernel takes no seccomp filter here: refusal not checked)"
else
    [ $rc -eq 2 ] || fail "with CMA refused: exit $rc, expected 2: $(cat "$out")"
    grep -q "^line_ns" "$out" || fail "with CMA refused the line probe did not run: $(cat "$out")"
    grep -q "cma: not measured: process_vm_readv refused" "$out" ||
        fail "with CMA refused: no reason given: $(cat "$out")"
fi

"$exe" pingpong -r 3 -i 20000 >"$out" 2>&1 || fail "pingpong exited $?: $(cat "$out")"
awk '/^pingpong_ns/ { w[n] = $2; t[n] = $3; n++; if (!($4 > 10 && $4 < 1e5)) bad = 1 }
     END { exit !(n == 5 && !bad && w[0] == 0 && w[4] == 128 && t[4] > t[1] && t[1] > t[0]) }' "$out" ||
    fail "pingpong: bad figures: $(cat "$out")"
"$exe" pingpong --work 16 -r 1 -i 5000 --json >"$out" 2>&1 || fail "pingpong --json exited $?: $(cat "$out")"
python3 - "$out" <<'PY' || fail "pingpong --json output: $(cat "$out")"
import json, sys
objs = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
assert len(objs) == 1 and objs[0]["benchmark"] == "hw_pingpong" and objs[0]["status"] == "ok", objs
assert objs[0]["work"] == 16 and objs[0]["work_ns"] > 0 and 0.01 < objs[0]["rows"][0]["avg_us"] < 100, objs
PY
"$exe" pingpong --work 0 -r 1 -i 1000 --cpus 0,4095 >"$out" 2>&1
rc=$?
[ $rc -eq 2 ] || fail "pingpong --cpus 0,4095: exit $rc, expected 2: $(cat "$out")"
grep -q "pingpong: not measured" "$out" || fail "pingpong --cpus 0,4095: no reason given: $(cat "$out")"

for bad in "--cpus 0,0" "-W 0" "--sizes 12x" "-r 0" "-i -5" "--pairs 9" "--ranks 1" "--ranks 65" "--work -1" \
    "frobnicate"; do
    # shellcheck disable=SC2086
    "$exe" $bad >"$out" 2>&1
    rc=$?
    [ $rc -eq 1 ] || fail "'$bad': exit $rc, expected 1: $(cat "$out")"
    opt=${bad%% *}
    grep -q -- "$opt" "$out" || fail "'$bad': the message does not name $opt: $(cat "$out")"
done

"$exe" line --cpus 0,4095 -r 1 -i 1000 >"$out" 2>&1
rc=$?
[ $rc -eq 2 ] || fail "--cpus 0,4095: exit $rc, expected 2: $(cat "$out")"
grep -q "line: not measured" "$out" || fail "--cpus 0,4095: no reason given: $(cat "$out")"
echo "hw_limits: ok"
