#!/bin/bash
# Output forwarding: -l labels, whole lines only (no line mixes two ranks),
# stdout and stderr kept apart, nothing lost when ranks exit at once.
. "$(dirname "$0")/common.sh"

run -l -n 3 "$HELPER" print 50
expect_rc 0 "labeled run"
expect_count out '.' 153 "stdout: 50 lines and the tail per rank"
expect_count out '^\[([0-2])\] (out [0-9]+ of rank|tail of rank) ' 153 "every stdout line labeled"
bad=$(grep -Ev '^\[([0-2])\] (out [0-9]+ of rank \1|tail of rank \1)$' "$TMP/out" | head -3)
if [ -z "$bad" ]; then pass "each labeled line is one whole line of its own rank"; else fail "mixed lines: $bad"; fi
expect_count err '^\[([0-2])\] err [0-9]+ of rank \1$' 150 "stderr labeled and whole"
expect_no_grep out 'err [0-9]' "no stderr line on stdout"
expect_grep out '^\[2\] tail of rank 2$' "a last line without newline is forwarded"
for r in 0 1 2; do
    if grep "^\[$r\] out" "$TMP/out" | awk -v r="$r" '{ if ($3 != NR - 1) exit 1 }'; then
        pass "rank $r lines in order"
    else
        fail "rank $r lines out of order"
    fi
done

run --label -n 2 "$HELPER" info
expect_count out '^\[[01]\] rank=' 2 "--label spelling"
run --tag-output -n 2 "$HELPER" info
expect_count out '^\[[01]\] rank=' 2 "--tag-output spelling"

# Many lines from ranks that exit right after printing: all must arrive,
# each whole (the tails have no newline, so they glue to the next line).
run -n 4 "$HELPER" print 20000
expect_rc 0 "80000 lines"
expect_count out 'out [0-9]+ of rank [0-3]' 80000 "no stdout line lost"
expect_count err '^err [0-9]+ of rank [0-3]$' 80000 "no stderr line lost or mixed"
bad=$(sed 's/tail of rank [0-3]//g' "$TMP/out" | grep -Ev '^(out [0-9]+ of rank [0-3])?$' | head -3)
if [ -z "$bad" ]; then pass "unlabeled lines are whole"; else fail "mixed lines: $bad"; fi

# A partial line (a prompt) is not held back forever.
"$MPIEXEC" -n 2 sh -c 'printf "prompt> "; sleep 1; echo done' >"$TMP/out" 2>"$TMP/err" </dev/null &
pid=$!
sleep 0.6
if grep -q 'prompt> ' "$TMP/out"; then pass "a partial line is forwarded when its rank pauses"; else fail "partial line held back"; fi
wait $pid

finish
