#!/bin/bash
# stdin of mpiexec goes to rank 0 only, byte for byte; others get EOF.
. "$(dirname "$0")/common.sh"

printf 'hello\nworld\n' | "$MPIEXEC" -n 3 "$HELPER" stdin >"$TMP/out" 2>"$TMP/err"
RC=$?
expect_rc 0 "stdin to 3 ranks"
expect_grep out '^rank 0: stdin 12 bytes$' "rank 0 got all 12 bytes"
expect_grep out '^hello$' "rank 0 echoed the input"
expect_count out '^rank [12]: stdin eof$' 2 "ranks 1 and 2 see EOF at once"

head -c 1000000 /dev/urandom >"$TMP/in"
"$MPIEXEC" -n 1 "$HELPER" stdin <"$TMP/in" >"$TMP/out" 2>"$TMP/err"
RC=$?
expect_rc 0 "1 MB of binary stdin"
if head -c 1000000 "$TMP/out" | cmp -s - "$TMP/in"; then
    pass "rank 0 received the exact bytes"
else
    fail "stdin data differs"
fi
expect_grep out 'rank 0: stdin 1000000 bytes$' "byte count"

run -n 2 "$HELPER" stdin
expect_rc 0 "stdin from /dev/null"
expect_grep out '^rank 0: stdin 0 bytes$' "rank 0 sees EOF"

# mpiexec must not wait for input that rank 0 never reads: stdin here is a
# fifo whose writer stays silent for 5 s.
mkfifo "$TMP/fifo"
sleep 5 >"$TMP/fifo" 2>/dev/null &
writer=$!
start=$(now)
"$MPIEXEC" -n 2 "$HELPER" info <"$TMP/fifo" >"$TMP/out" 2>"$TMP/err"
RC=$?
T=$(elapsed_since "$start")
kill "$writer" 2>/dev/null
expect_rc 0 "stdin that never ends"
expect_faster 4.0 "job ends without waiting for stdin EOF"

finish
