#!/bin/bash
# Larger jobs on this small machine: 8 and 32 ranks exchange values, 128
# ranks start and answer; ranks inherit no stray descriptors.
. "$(dirname "$0")/common.sh"

run -n 8 "$HELPER" kvs 3000
expect_rc 0 "8 ranks, 3000-byte values"
expect_count out 'kvs ok' 8 "8 ranks read every value"

run -n 32 "$HELPER" kvs 1500
expect_rc 0 "32 ranks, 1500-byte values"
expect_count out 'kvs ok' 32 "32 ranks read every value"

run -n 128 "$HELPER" kvs 50
expect_rc 0 "128 ranks"
expect_count out 'kvs ok' 128 "128 ranks read every value"
expect_faster 20 "128 ranks"

run -n 4 "$HELPER" fds
expect_count out '^rank [0-3]: 0 extra fds$' 4 "ranks get only 0, 1, 2 and PMI_FD"

finish
