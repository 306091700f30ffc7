#!/usr/bin/env bash
# shm_rings.sh MPIEXEC P2P_RING: the rings' size follows the room in
# /dev/shm. The node's first rank gives the rings 256 KiB (up to 16 ranks)
# only where /dev/shm could hold the whole segment twice over, else 16 KiB,
# and the other ranks take the size from the segment. In a mount namespace
# of its own (as root; skipped otherwise) the test mounts a 16 MiB /dev/shm
# (a container's default is 64 MiB) and a 1 GiB one, runs p2p_ring at 8
# ranks on each (it checks every message) and reads the rings' size it
# reports: 16384 on the small one (8 ranks' segment with large rings is 24
# MiB), 262144 on the large one. HALO_SHM_RING_BYTES still wins on the
# small one.
set -u
mpiexec=${1:?usage: shm_rings.sh MPIEXEC P2P_RING} prog=${2:?}
if [ "$(id -u)" -ne 0 ] || ! unshare -m true 2>/dev/null; then
    echo "shm_rings: skipped: needs root and mount namespaces"
    exit 77
fi
out=$(mktemp)
trap 'rm -f "$out"' EXIT
fails=0
run() {   # run SIZE WANT [ENV...]: p2p_ring on a /dev/shm of SIZE must report rings of WANT bytes
    local size=$1 want=$2
    shift 2
    unshare -m bash -c 'mount --make-rprivate / && mount -t tmpfs -o size='"$size"',mode=1777 tmpfs /dev/shm &&
        exec env "$@"' _ "$@" "$mpiexec" --timeout 120 -n 8 "$prog" 3000 >"$out" 2>&1
    local rc=$?
    if [ $rc -ne 0 ]; then
        echo "FAIL: /dev/shm of $size: exit status $rc"; cat "$out"; fails=$((fails + 1)); return
    fi
    if grep -q "rings of $want bytes" "$out"; then
        echo "ok: /dev/shm of $size ($*): rings of $want bytes"
    else
        echo "FAIL: /dev/shm of $size ($*): want rings of $want bytes"; cat "$out"; fails=$((fails + 1))
    fi
}
run 16m 16384 HALO_KVSNAME=rings-$$-a
run 1g 262144 HALO_KVSNAME=rings-$$-b
run 16m 65536 HALO_KVSNAME=rings-$$-c HALO_SHM_RING_BYTES=65536
[ $fails -eq 0 ] && echo "shm_rings: ok" || exit 1
