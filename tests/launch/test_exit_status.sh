#!/bin/bash
# mpiexec's exit status: 0 when all ranks exit 0; else the first non-zero
# status (128+S for a signal), the abort code, and one message per failure.
. "$(dirname "$0")/common.sh"

run -n 3 "$HELPER" info
expect_rc 0 "all ranks exit 0"
expect_no_grep err '^mpiexec:' "no message for a clean job"

run -n 3 "$HELPER" exit-finalized 5 2
expect_rc 5 "rank 2 exits 5 after finalize"
expect_no_grep err 'ending the job' "a failure after finalize does not end the job"

run -n 2 "$HELPER" noinit-exit 3
expect_rc 3 "non-PMI ranks exit 3"

run -n 3 "$HELPER" exit 3 1
expect_rc 3 "rank 1 exits 3 while the others run"
expect_grep err '^mpiexec: rank 1 \(pid [0-9]+\) exited with code 3; ending the job$' \
    "message names rank, pid and code"
expect_count err '^mpiexec:' 1 "exactly one message"

run -n 3 "$HELPER" segv 1
expect_rc 139 "rank 1 killed by SIGSEGV gives 128+11"
expect_grep err '^mpiexec: rank 1 \(pid [0-9]+\) killed by signal 11 \(Segmentation fault\); ending the job$' \
    "message names rank, pid and signal"
expect_count err '^mpiexec:' 1 "exactly one message"

run -n 1 sh -c 'kill -9 $$'
expect_rc 137 "a rank killed by SIGKILL gives 137"
expect_grep err 'killed by signal 9' "message for the last rank's signal too"

run -n 3 "$HELPER" no-finalize 1
expect_rc 1 "rank exiting 0 without finalize while others wait"
expect_grep err '^mpiexec: rank 1 \(pid [0-9]+\) exited without calling finalize' "message says so"

run -n 1 "$HELPER" no-finalize 0
expect_rc 0 "the only rank exiting without finalize is fine"

run -n 3 "$HELPER" abort 7 2 "something went wrong"
expect_rc 7 "abort code becomes the exit status"
expect_grep err '^mpiexec: rank 2 called MPI_Abort with code 7: something went wrong; ending the job$' \
    "abort message carries the code and the text"
expect_count err '^mpiexec:' 1 "exactly one message"

run -n 2 "$HELPER" abort 3 0
expect_rc 3 "abort without text"
expect_grep err '^mpiexec: rank 0 called MPI_Abort with code 3; ending the job$' "abort message without text"

run -n 2 "$HELPER" abort 256 1
expect_rc 1 "abort code 256 still reads as a failure"

run -n 1 true : -n 1 "$HELPER" info
expect_rc 0 "a non-PMI rank next to a PMI rank"

finish
