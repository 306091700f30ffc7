#!/usr/bin/env bash
# shm_guard.sh MPIEXEC SPY PROGRAM: Halo's segments in /dev/shm are mode 600
# and its own; a name someone else made first is refused.
#  1. PROGRAM (4 ranks, collectives over shared memory) runs with the
#     shm_spy library preloaded: every /halo-* segment it creates or opens
#     must be mode 600 and owned by us, and there must be both kinds (the
#     node segment, a collective region).
#  2. The same job again, with its first collective region's name made
#     beforehand with mode 644: the job must fail, naming the segment and
#     the reason, and leave nothing in /dev/shm.
#  3. As root: the name made beforehand by another user (nobody), mode 600:
#     refused too.
set -u
mpiexec=${1:?usage: shm_guard.sh MPIEXEC SPY PROGRAM} spy=${2:?} prog=${3:?}
export HALO_KVSNAME="guard-$$-$RANDOM"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"; rm -f /dev/shm/halo-$HALO_KVSNAME-*' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
ok() { echo "ok: $*"; }
# refused RUN WHY: the job, with the region's name made beforehand, must
# fail and say the region is refused because WHY; the name is removed after.
refused() {
    "$mpiexec" --timeout 60 -n 4 "$prog" >"$tmp/$1" 2>&1
    local rc=$?
    [ $rc -ne 0 ] && ok "$1 failed (exit status $rc)" || fail "$1 used a segment it should refuse ($2)"
    grep -q "refusing the shared memory segment of a collective (/dev/shm$region): $2" "$tmp/$1" &&
        ok "$1 said: $2" || { fail "$1 did not say why"; head -20 "$tmp/$1"; }
    rm -f "/dev/shm$region"
}

LD_PRELOAD=$spy "$mpiexec" --timeout 60 -n 4 "$prog" >"$tmp/out1" 2>&1
rc=$?
[ $rc -eq 0 ] && ok "run 1 passed" || { fail "run 1 exit status $rc"; cat "$tmp/out1"; }
grep "^shm_spy: /halo-$HALO_KVSNAME-" "$tmp/out1" >"$tmp/segs"
bad=$(grep -v " mode 600 uid $(id -u)\$" "$tmp/segs")
[ -z "$bad" ] && ok "every segment mode 600, uid $(id -u) ($(wc -l <"$tmp/segs") opens)" ||
    fail "segments not 600 or not ours: $bad"
grep -q -- "-n0 create" "$tmp/segs" && ok "the node segment was seen" || fail "no node segment in the log"
region=$(grep -o "/halo-$HALO_KVSNAME-c[^ ]*" "$tmp/segs" | head -1)
[ -n "$region" ] && ok "a collective region was seen: $region" || fail "no collective region in the log"

if [ -n "$region" ]; then
    (umask 0; : >"/dev/shm$region"; chmod 644 "/dev/shm$region")
    refused run2 "its mode is 644"
    if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1; then
        : >"/dev/shm$region"; chmod 600 "/dev/shm$region"; chown nobody "/dev/shm$region"
        refused run3 "it belongs to uid $(id -u nobody)"
    fi
    left=$(ls /dev/shm | grep "^halo-$HALO_KVSNAME-" || true)
    [ -z "$left" ] && ok "nothing left in /dev/shm" || fail "left in /dev/shm: $left"
fi
[ $fails -eq 0 ]
