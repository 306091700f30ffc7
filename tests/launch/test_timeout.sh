#!/bin/bash
# --timeout, HALO_TIMEOUT and MPIEXEC_TIMEOUT end a job with status 124.
. "$(dirname "$0")/common.sh"

run --timeout 1 -n 2 "$HELPER" sleep
expect_rc 124 "--timeout 1"
expect_grep err '^mpiexec: job timed out after 1 seconds; ending the job$' "timeout message"
if less_than 0.9 "$T" && less_than "$T" 3.0; then pass "ended after ${T}s"; else fail "ended after ${T}s"; fi

HALO_TIMEOUT=1 run -n 2 "$HELPER" sleep
expect_rc 124 "HALO_TIMEOUT=1"
MPIEXEC_TIMEOUT=1 run -n 2 "$HELPER" sleep
expect_rc 124 "MPIEXEC_TIMEOUT=1"

run --timeout=0.5 -n 1 sh -c 'trap "" TERM; while :; do sleep 0.1; done'
expect_rc 124 "--timeout=0.5 with a rank ignoring SIGTERM"
expect_faster 3.0 "SIGKILL follows SIGTERM"

HALO_TIMEOUT=60 run --timeout 5 -n 2 "$HELPER" info
expect_rc 0 "a job that finishes in time"
expect_faster 3.0 "no waiting for the timeout"

HALO_TIMEOUT=soon run -n 1 true
expect_rc 2 "a bad HALO_TIMEOUT is a usage error"

finish
