# Sourced by every launch test: test_X.sh MPIEXEC HELPER
# Each check prints "ok: ..." or "FAIL: ..."; finish exits 1 if any failed.
set -u

MPIEXEC=${1:?usage: $0 MPIEXEC PMI_HELPER}
HELPER=${2:?usage: $0 MPIEXEC PMI_HELPER}
# A timeout in the caller's environment would change what these tests see.
unset HALO_TIMEOUT MPIEXEC_TIMEOUT

TMP=$(mktemp -d /tmp/halo-launch-test.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
failures=0

pass() { echo "ok: $*"; }
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# Shows what the last run printed, after a failure.
dump() {
    echo "---- stdout of the last run:"; head -c 3000 "$TMP/out"
    echo "---- stderr of the last run:"; head -c 3000 "$TMP/err"
    echo "----"
}

now() { date +%s.%N; }
elapsed_since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'; }
# less_than A B: A < B as decimals
less_than() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a < b) }'; }

# run ARGS...: mpiexec ARGS with stdin from /dev/null; sets RC and T (seconds).
run() {
    local start
    start=$(now)
    "$MPIEXEC" "$@" >"$TMP/out" 2>"$TMP/err" </dev/null
    RC=$?
    T=$(elapsed_since "$start")
}

expect_rc() {
    if [ "$RC" = "$1" ]; then
        pass "$2: exit status $1"
    else
        fail "$2: exit status $RC, expected $1"
        dump
    fi
}

# expect_grep FILE REGEX DESC: some line of FILE (out or err) matches.
expect_grep() {
    if grep -Eq -- "$2" "$TMP/$1"; then
        pass "$3"
    else
        fail "$3: no line of std$1 matches /$2/"
        dump
    fi
}

expect_no_grep() {
    if grep -Eq -- "$2" "$TMP/$1"; then
        fail "$3: a line of std$1 matches /$2/"
        dump
    else
        pass "$3"
    fi
}

# expect_count FILE REGEX N DESC: exactly N lines match.
expect_count() {
    local n
    n=$(grep -Ec -- "$2" "$TMP/$1")
    if [ "$n" = "$3" ]; then
        pass "$4"
    else
        fail "$4: $n lines of std$1 match /$2/, expected $3"
        dump
    fi
}

expect_faster() {
    if less_than "$T" "$1"; then
        pass "$2: took ${T}s (< $1s)"
    else
        fail "$2: took ${T}s, limit $1s"
        dump
    fi
}

# wait_lines FILE N: waits (up to 10 s) until FILE has N lines.
wait_lines() {
    local i
    for i in $(seq 100); do
        [ "$(wc -l <"$1")" -ge "$2" ] && return 0
        sleep 0.1
    done
    return 1
}

# CPU lists as the kernel writes them: expand_cpus "0-2,5" gives "0 1 2 5".
expand_cpus() {
    local part out=""
    for part in ${1//,/ }; do
        if [[ $part == *-* ]]; then out+="$(seq -s ' ' "${part%-*}" "${part#*-}") "; else out+="$part "; fi
    done
    echo $out
}

finish() {
    if [ "$failures" -ne 0 ]; then
        echo "$failures check(s) failed"
        exit 1
    fi
    echo "all checks passed"
    exit 0
}
