#!/bin/bash
# A rank that crashes, exits early, exits without finalize or aborts ends
# the whole job within 2 seconds, while the other ranks wait forever.
. "$(dirname "$0")/common.sh"

limit=2.0
run -n 4 "$HELPER" segv 3
expect_rc 139 "segv teardown"
expect_faster $limit "job ends after a crash"

run -n 4 "$HELPER" exit 9 0
expect_rc 9 "early exit teardown"
expect_faster $limit "job ends after an early non-zero exit"

run -n 4 "$HELPER" no-finalize 2
expect_rc 1 "no-finalize teardown"
expect_faster $limit "job ends after an exit without finalize"

run -n 4 "$HELPER" abort 5 1 bye
expect_rc 5 "abort teardown"
expect_faster $limit "job ends after an abort"

# A rank that drops its PMI connection but lives on is given a second to
# exit, then counted as dead.
run -n 3 "$HELPER" close-pmi 1
expect_rc 1 "PMI connection closed without finalize"
expect_grep err '^mpiexec: rank 1 \(pid [0-9]+\) closed its PMI connection without finalize' \
    "message names the rank"
expect_faster 2.5 "job ends a second after the connection is lost"

# Oversubscribed: more ranks than cores.
run -n 12 "$HELPER" segv 7
expect_rc 139 "segv teardown, 12 ranks"
expect_faster $limit "job of 12 ranks ends after a crash"

# Survivors that ignore SIGTERM get SIGKILL a second later.
run -n 1 "$HELPER" abort 6 0 : -n 2 sh -c 'trap "" TERM; while :; do sleep 0.1; done'
expect_rc 6 "abort with survivors ignoring SIGTERM"
expect_faster $limit "survivors ignoring SIGTERM are killed"

finish
