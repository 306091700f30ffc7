#!/bin/bash
# The options beyond Hydra's core set: the name mpirun, the keys the MPI
# standard reserves for mpiexec (-soft, -arch, -path, -file), host files,
# ranks per node, the wider --bind-to levels, --report-bindings, and the
# Open MPI options accepted without effect.
. "$(dirname "$0")/common.sh"

# "0 1 2 5" back into "0-2,5"
ranges() {
    local out="" lo="" prev="" c
    for c in $1; do
        if [ -n "$prev" ] && [ "$c" = $((prev + 1)) ]; then prev=$c; continue; fi
        [ -n "$lo" ] && out+="${out:+,}$lo$([ "$prev" != "$lo" ] && echo "-$prev")"
        lo=$c; prev=$c
    done
    [ -n "$lo" ] && out+="${out:+,}$lo$([ "$prev" != "$lo" ] && echo "-$prev")"
    echo "$out"
}

if [ -x "$(dirname "$MPIEXEC")/mpirun" ]; then
    "$(dirname "$MPIEXEC")/mpirun" -n 2 "$HELPER" info >"$TMP/out" 2>"$TMP/err" </dev/null
    RC=$?
    expect_rc 0 "mpirun beside mpiexec"
    expect_count out 'size=2 ' 2 "mpirun starts the ranks"
else
    fail "no mpirun beside $MPIEXEC"
fi

run -c 3 "$HELPER" info
expect_count out 'size=3 ' 3 "-c N as -n N"

# -soft: the largest acceptable count up to -n (or of the list without -n).
run -n 10 -soft 2:8:3,9 "$HELPER" env HALO_INFO_SOFT HALO_INFO_MAXPROCS
expect_count out '^rank [0-9]+: HALO_INFO_SOFT=2:8:3,9$' 9 "-n 10 -soft 2:8:3,9 starts 9"
expect_grep out '^rank 0: HALO_INFO_MAXPROCS=10$' "and maxprocs stays 10"
run -soft 1:4 "$HELPER" info
expect_count out 'size=4 ' 4 "-soft 1:4 without -n starts 4"
run -n 6 -soft 8:1:-3 "$HELPER" info
expect_count out 'size=5 ' 5 "-n 6 -soft 8:1:-3 (8, 5, 2) starts 5"
run -n 3 -soft 4:9 "$HELPER" info
expect_rc 2 "-soft with nothing up to -n"
expect_grep err "-soft '4:9' allows no number" "the message names the list"
run -n 3 -soft 2:x "$HELPER" info
expect_rc 2 "-soft that is not a list"

run -n 1 -arch halo-arch "$HELPER" env HALO_INFO_ARCH
expect_grep out '^rank 0: HALO_INFO_ARCH=halo-arch$' "-arch reaches MPI_INFO_ENV's source"

# -path: searched before PATH.
mkdir -p "$TMP/bin" && cp "$HELPER" "$TMP/bin/halo-helper-copy"
run -n 2 -path "/halo-nowhere:$TMP/bin" halo-helper-copy info
expect_rc 0 "-path finds the program"
expect_count out 'size=2 ' 2 "and runs it"
run -n 1 -path /halo-nowhere halo-helper-copy info
expect_rc 127 "-path without the program"
expect_grep err "not found in -path or PATH" "the message says where it looked"

# -file (-configfile, --app): a segment a line.
cat >"$TMP/segments" <<EOF
# two segments
-n 2 $HELPER info   # the first
  -n 1 -env HALO_T "a b"  \\
     $HELPER env HALO_T 'HALO_INFO_FILE'
EOF
for opt in -file -configfile --app; do
    run $opt "$TMP/segments"
    expect_rc 0 "$opt"
    expect_count out 'size=3 appnum=0' 2 "$opt: two ranks of the first line"
    expect_grep out '^rank 2: HALO_T=a b$' "$opt: the second line's quoted value, continued line"
done
expect_grep out "^rank 2: HALO_INFO_FILE=$TMP/segments\$" "-file reaches MPI_INFO_ENV's source"
run -l -file "$TMP/segments" : -n 1 "$HELPER" info
expect_grep out '^\[3\] rank=3 size=4 appnum=2' "-file then ':' and another segment, with -l before"
echo "-file $TMP/segments" >"$TMP/nested"
run -file "$TMP/nested"
expect_rc 2 "-file inside -file"
run -file "$TMP/halo-no-such-file"
expect_rc 2 "-file that cannot be read"
printf '# only a comment\n\n' >"$TMP/empty"
run -file "$TMP/empty"
expect_rc 2 "-file without a program"

# Host files and host counts: this node only; counts make the default -n.
printf '# this node\nlocalhost slots=3 max_slots=8\n' >"$TMP/hosts1"
printf 'localhost:2\n%s\n' "$(hostname)" >"$TMP/hosts2"
printf 'localhost\nhalo-elsewhere.invalid slots=2\n' >"$TMP/hosts3"
run --hostfile "$TMP/hosts1" "$HELPER" info
expect_count out 'size=3 ' 3 "--hostfile with slots=3"
run -f "$TMP/hosts2" "$HELPER" info
expect_count out 'size=3 ' 3 "-f with host:2 and a bare host"
run -machinefile "$TMP/hosts1" -n 2 "$HELPER" info
expect_count out 'size=2 ' 2 "-machinefile with -n"
run -hostfile "$TMP/hosts3" -n 1 "$HELPER" info
expect_rc 2 "a host file naming another node"
expect_grep err "'halo-elsewhere.invalid' is not this node" "the message names the host"
run -hosts localhost:2,localhost "$HELPER" info
expect_count out 'size=3 ' 3 "-hosts counts make the default -n"

run -ppn 2 "$HELPER" info
expect_count out 'size=2 ' 2 "-ppn 2 on one node"
run --npernode 3 "$HELPER" info
expect_count out 'size=3 ' 3 "--npernode 3"
run --map-by ppr:2:node "$HELPER" info
expect_count out 'size=2 ' 2 "--map-by ppr:2:node"
run -n 4 -ppn 1 --map-by core --rank-by slot "$HELPER" info
expect_count out 'size=4 ' 4 "-n wins over -ppn"

# The wider binding levels: each rank gets the CPUs mpiexec may use that
# share its own CPU's package (NUMA node, L3 cache) as the kernel says.
allowed=$(awk '/^Cpus_allowed_list:/ { print $2 }' /proc/self/status)
read -r -a cpus <<<"$(expand_cpus "$allowed")"
n=${#cpus[@]}
widen() {  # widen CPU FILE: FILE's CPUs that are allowed, if CPU is one of them
    local c list out=""
    [ -r "$2" ] || { ranges "${cpus[*]}"; return; }
    list=" $(expand_cpus "$(cat "$2")") "
    [[ $list == *" $1 "* ]] || { ranges "${cpus[*]}"; return; }
    for c in "${cpus[@]}"; do [[ $list == *" $c "* ]] && out+="$c "; done
    ranges "$out"
}
numa_file() {
    local f
    for f in /sys/devices/system/node/node*/cpulist; do
        [[ " $(expand_cpus "$(cat "$f")") " == *" $1 "* ]] && { echo "$f"; return; }
    done
    echo /halo-none
}
for level in socket package numa l3cache board; do
    run --bind-to $level -n $((n + 1)) "$HELPER" affinity
    expect_rc 0 "--bind-to $level"
    for ((r = 0; r <= n; r++)); do
        c=${cpus[$((r % n))]}
        case $level in
            socket|package) f=/sys/devices/system/cpu/cpu$c/topology/package_cpus_list
                [ -r "$f" ] || f=/sys/devices/system/cpu/cpu$c/topology/core_siblings_list ;;
            numa) f=$(numa_file "$c") ;;
            l3cache) f=/sys/devices/system/cpu/cpu$c/cache/index3/shared_cpu_list ;;
            board) f=/halo-none ;;
        esac
        want=$(widen "$c" "$f")
        expect_grep out "^rank $r: cpus $want\$" "--bind-to $level: rank $r on CPUs $want"
    done
done
run --bind-to core:overload-allowed -n "$n" "$HELPER" affinity
expect_grep out "^rank 0: cpus ${cpus[0]}\$" "--bind-to core:overload-allowed binds as core"
run --bind-to core:2 -n 1 "$HELPER" info
expect_rc 2 "--bind-to core:2 (a count) is refused"
run --bind-to cache -n 1 "$HELPER" info
expect_rc 2 "--bind-to with an unknown level"
expect_grep err "not 'cache'" "the message names it"

run --report-bindings -n 2 "$HELPER" affinity
expect_rc 0 "--report-bindings"
expect_grep err "^mpiexec: rank 0 \(pid [0-9]+, .*halo_launch_helper\): bound to CPUs ${cpus[0]}\$" \
    "--report-bindings: rank 0's CPU"
expect_grep err "^mpiexec: rank 1 \(pid [0-9]+, .*\): bound to CPUs ${cpus[$((1 % n))]}\$" \
    "--report-bindings: rank 1's CPU"
run -print-rank-map --bind-to none -n 1 "$HELPER" info
expect_grep err "^mpiexec: rank 0 \(pid [0-9]+, .*\): not bound\$" "-print-rank-map with --bind-to none"

run --mca btl self,vader -gmca pml ob1 -v --verbose -launcher fork -bootstrap fork \
    --prefix /usr -n 1 "$HELPER" info
expect_rc 0 "Open MPI and Hydra options without effect here"
expect_count out 'size=1 ' 1 "and the rank runs"

finish
