#!/bin/bash
# SIGINT and SIGTERM sent to mpiexec reach every rank and end the job;
# no rank survives mpiexec.
. "$(dirname "$0")/common.sh"

# start N ARGS...: mpiexec in the background, waits until N lines are out.
start() {
    local n=$1
    shift
    "$MPIEXEC" "$@" >"$TMP/out" 2>"$TMP/err" </dev/null &
    PID=$!
    wait_lines "$TMP/out" "$n" || fail "ranks did not start"
}

stop() {
    local start
    start=$(now)
    kill "-$1" "$PID"
    wait "$PID"
    RC=$?
    T=$(elapsed_since "$start")
}

check_ranks_gone() {
    local pid left=0
    for pid in $(sed -n 's/.*sleeping pid //p' "$TMP/out"); do
        kill -0 "$pid" 2>/dev/null && left=$((left + 1))
    done
    if [ "$left" = 0 ]; then pass "$1: no rank left running"; else fail "$1: $left ranks still run"; fi
}

start 3 -n 3 "$HELPER" sleep
stop INT
expect_rc 130 "SIGINT"
expect_grep err '^mpiexec: received signal 2 \(Interrupt\); ending the job$' "SIGINT message"
expect_faster 2.0 "job ends after SIGINT"
check_ranks_gone SIGINT

start 3 -n 3 "$HELPER" sleep
stop TERM
expect_rc 143 "SIGTERM"
expect_faster 2.0 "job ends after SIGTERM"
check_ranks_gone SIGTERM

# Ranks that ignore the forwarded signal are killed a second later.
start 2 -n 2 sh -c 'trap "" INT TERM; echo "sleeping pid $$"; while :; do sleep 0.1; done'
stop TERM
expect_rc 143 "SIGTERM to ranks that ignore it"
expect_faster 2.5 "SIGKILL follows"
check_ranks_gone "ignored SIGTERM"

# The forwarded signal is the one mpiexec got: a rank can tell.
start 1 -n 1 sh -c 'trap "echo got INT; exit 3" INT; echo "sleeping pid $$"; while :; do sleep 0.1; done'
stop INT
expect_grep out '^got INT$' "ranks receive SIGINT itself"
expect_rc 130 "status after SIGINT even when the rank exits 3"

finish
