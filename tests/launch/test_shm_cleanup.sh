#!/bin/bash
# /dev/shm/halo-<kvsname>-* files are removed after the job, however it
# ends; files of other jobs are left alone.
. "$(dirname "$0")/common.sh"

other=/dev/shm/halo-kvs_other_job-$$
: >"$other"

check_clean() {
    local prefix left
    prefix=$(sed -n 's|.*created /\(halo-kvs_[0-9]*_[0-9a-f]*-\).*|\1|p' "$TMP/out" | head -1)
    if [ -z "$prefix" ]; then
        fail "$1: the ranks did not report their segment names"; dump; return
    fi
    left=$(ls /dev/shm | grep -c "^$prefix")
    if [ "$left" = 0 ]; then pass "$1: no /dev/shm/$prefix* left"; else fail "$1: $left files left"; fi
}

run -n 3 "$HELPER" shm-segv 1
expect_rc 139 "crash with segments"
expect_count out 'created /halo-kvs_' 3 "each rank created a segment"
check_clean "after a crash"

run -n 2 --timeout 1 "$HELPER" shm-segv 5
expect_rc 124 "timeout with segments"
check_clean "after a timeout"

if [ -e "$other" ]; then pass "another job's file is kept"; else fail "another job's file was removed"; fi
rm -f "$other"

finish
