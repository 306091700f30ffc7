#!/bin/bash
# PMI through mpiexec: put/fence/get across ranks (short values, values
# longer than vallen_max, values full of spaces, '=', '%' and newlines),
# PMI_process_mapping, the fields of halo_pmi_init, and singleton mode.
. "$(dirname "$0")/common.sh"

run -n 4 "$HELPER" info
expect_rc 0 "info on 4 ranks"
expect_count out '^rank=[0-3] size=4 appnum=0 universe=-1 singleton=0 kvsname=kvs_[0-9]+_[0-9a-f]{8}$' 4 \
    "each rank sees size 4, appnum 0, a kvs_<pid>_<random> name"
if [ "$(sed -n 's/^rank=\([0-9]*\) .*/\1/p' "$TMP/out" | sort -n | tr '\n' ' ')" = "0 1 2 3 " ]; then
    pass "ranks are 0..3, each once"
else
    fail "ranks are not 0..3"; dump
fi
if [ "$(sed 's/.*kvsname=//' "$TMP/out" | sort -u | wc -l)" = 1 ]; then
    pass "all ranks share one kvsname"
else
    fail "ranks disagree on the kvsname"; dump
fi
first=$(sed -n 's/.*kvsname=//p' "$TMP/out" | head -1)
run -n 1 "$HELPER" info
second=$(sed -n 's/.*kvsname=//p' "$TMP/out")
if [ -n "$first" ] && [ "$first" != "$second" ]; then
    pass "two jobs get different kvsnames"
else
    fail "kvsname not job-unique ('$first', '$second')"
fi

run -n 2 -usize 16 "$HELPER" info
expect_count out 'universe=16 ' 2 "-usize sets the universe size"

run -n 4 "$HELPER" kvs 100
expect_rc 0 "put/fence/get of 100-byte values"
expect_count out '^rank [0-3]: kvs ok \(100 bytes\)$' 4 "every rank read every value back"

run -n 3 "$HELPER" kvs 5000
expect_rc 0 "put/fence/get of 5000-byte values (chunked past vallen_max)"
expect_count out '^rank [0-2]: kvs ok \(5000 bytes\)$' 3 "every rank read every long value back"

run -n 2 "$HELPER" kvs 0
expect_rc 0 "empty values"

run -n 3 "$HELPER" mapping
expect_rc 0 "PMI_process_mapping"
expect_count out '^rank [0-2]: mapping nnodes=1$' 3 "all ranks on node 0 of 1"

# Singleton: no launcher at all.
"$HELPER" info >"$TMP/out" 2>"$TMP/err" </dev/null; RC=$?
expect_rc 0 "singleton info"
expect_grep out '^rank=0 size=1 appnum=0 universe=-1 singleton=1 kvsname=singleton-[0-9]+$' \
    "singleton is rank 0 of 1 in singleton-<pid>"
"$HELPER" kvs 3000 >"$TMP/out" 2>"$TMP/err" </dev/null; RC=$?
expect_rc 0 "singleton put/get from the local table"
"$HELPER" mapping >"$TMP/out" 2>"$TMP/err" </dev/null; RC=$?
expect_rc 0 "singleton process mapping"
"$HELPER" reinit >"$TMP/out" 2>"$TMP/err" </dev/null; RC=$?
expect_rc 0 "singleton init/finalize/init"
expect_grep out '^rank 0: singleton re-init ok$' "a singleton starts afresh after finalize"
run -n 2 "$HELPER" reinit
expect_rc 0 "launched init/finalize/init"
expect_count out '^rank [01]: second init refused$' 2 "a launched rank cannot re-init on a closed socket"
expect_grep err 'closed by an earlier finalize' "and is told why"

# A launcher that is not PMI-1 (PMI_SIZE without PMI_FD) must not give N singletons.
PMI_SIZE=4 PMI_RANK=2 "$HELPER" info >"$TMP/out" 2>"$TMP/err" </dev/null; RC=$?
if [ "$RC" != 0 ] && grep -q 'PMI_FD' "$TMP/err"; then
    pass "PMI_SIZE>1 without PMI_FD is refused with a message"
else
    fail "PMI_SIZE>1 without PMI_FD: status $RC"; dump
fi

finish
