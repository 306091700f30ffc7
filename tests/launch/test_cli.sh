#!/bin/bash
# The command line: help, version, usage errors (status 2), programs that
# cannot run (status 127, without starting anything), -wdir, -hosts.
. "$(dirname "$0")/common.sh"

run --help
expect_rc 0 "--help"
expect_grep out '^Usage: mpiexec' "--help prints the usage"
run --version
expect_rc 0 "--version"
expect_grep out 'Halo' "--version names Halo"

run --frobnicate -n 1 true
expect_rc 2 "unknown option"
expect_grep err "unknown option '--frobnicate'" "the message names it"
run -n 0 true
expect_rc 2 "-n 0"
run -n
expect_rc 2 "-n without a value"
run -n 2
expect_rc 2 "no program"
run
expect_rc 2 "no arguments"

run -n 2 halo-no-such-program-xyz
expect_rc 127 "program not found"
expect_grep err "'halo-no-such-program-xyz'" "the message names the program"
expect_faster 2.0 "no hang when the program is missing"
run -n 2 "$HELPER" info : -n 1 ./halo-missing
expect_rc 127 "a missing program in the second segment"
expect_no_grep out 'rank=' "and no rank was started"
run -n 1 /etc/hostname
expect_rc 127 "program not executable"
run -n 1 /tmp
expect_rc 127 "program is a directory"

run -wdir /tmp -n 1 sh -c pwd
expect_grep out '^/tmp$' "-wdir"
run --wdir=/ -n 1 sh -c pwd : -n 1 sh -c pwd
expect_count out '^/$' 2 "--wdir=DIR applies to later segments too"
run -wdir /halo-no-such-dir -n 1 true
expect_rc 127 "missing working directory"

run -hosts localhost -n 1 true
expect_rc 0 "-hosts localhost"
run -hosts "$(hostname):2" -n 1 true
expect_rc 0 "-hosts with this node's name"
run -hosts halo-elsewhere.invalid -n 1 true
expect_rc 2 "-hosts with another node"
expect_grep err 'not supported yet' "says multi-node is not there yet"

run --oversubscribe --allow-run-as-root -genvall -n 1 true
expect_rc 0 "Open MPI and Hydra no-op options"

run -n 1 -- "$HELPER" info
expect_rc 0 "-- before the program"
run -n 1 "$HELPER" env -n
expect_grep out '^rank 0: -n=' "options after the program belong to it"

finish
