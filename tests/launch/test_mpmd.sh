#!/bin/bash
# MPMD: ranks numbered across segments, appnum per segment, -env per segment.
. "$(dirname "$0")/common.sh"

run -n 2 "$HELPER" info : -n 1 "$HELPER" info : -np 2 "$HELPER" info
expect_rc 0 "three segments"
for spec in 0:0 1:0 2:1 3:2 4:2; do
    r=${spec%:*} a=${spec#*:}
    expect_grep out "^rank=$r size=5 appnum=$a " "rank $r has appnum $a"
done

run -genv V global -n 1 -env V first "$HELPER" env V : -n 1 "$HELPER" env V : -n 1 -env V third "$HELPER" env V
expect_rc 0 "-env per segment"
expect_grep out '^rank 0: V=first$' "segment 0 has its -env"
expect_grep out '^rank 1: V=global$' "segment 1 has the -genv"
expect_grep out '^rank 2: V=third$' "segment 2 has its -env"

run -n 1 "$HELPER" info : -n 1 "$HELPER" segv 1
expect_rc 139 "a crash in the second app ends the job"

run -n 1 "$HELPER" info :
expect_rc 2 "a trailing ':' is a usage error"

finish
