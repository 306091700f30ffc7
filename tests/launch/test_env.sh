#!/bin/bash
# Environment: inherited, -genv, -x NAME=VALUE, -x NAME, and the per-rank
# variables (which override whatever was inherited).
. "$(dirname "$0")/common.sh"

export HALO_TEST_INHERIT=inherited HALO_TEST_X=from-parent
export PMI_RANK=99 PMI_FD=77 HALO_LOCAL_RANK=42
run -n 2 -genv G1 "a b  c=d" -x X1=xv -x HALO_TEST_X -x HALO_TEST_UNSET "$HELPER" env \
    G1 X1 HALO_TEST_X HALO_TEST_INHERIT HALO_TEST_UNSET PMI_RANK PMI_SIZE PMI_FD \
    HALO_LOCAL_RANK HALO_LOCAL_SIZE MPI_LOCALRANKID MPI_LOCALNRANKS HALO_PMI_SERVER
unset PMI_RANK PMI_FD HALO_LOCAL_RANK
expect_rc 0 "env run"
expect_count out '^rank [01]: G1=a b  c=d$' 2 "-genv value with spaces and '='"
expect_count out '^rank [01]: X1=xv$' 2 "-x NAME=VALUE"
expect_count out '^rank [01]: HALO_TEST_X=from-parent$' 2 "-x NAME forwards"
expect_count out '^rank [01]: HALO_TEST_INHERIT=inherited$' 2 "environment inherited"
expect_count out '^rank [01]: HALO_TEST_UNSET=\(unset\)$' 2 "-x of an unset name sets nothing"
for r in 0 1; do
    expect_grep out "^rank $r: PMI_RANK=$r\$" "PMI_RANK of rank $r"
    expect_grep out "^rank $r: HALO_LOCAL_RANK=$r\$" "HALO_LOCAL_RANK of rank $r"
    expect_grep out "^rank $r: MPI_LOCALRANKID=$r\$" "MPI_LOCALRANKID of rank $r"
done
expect_count out '^rank [01]: PMI_SIZE=2$' 2 "PMI_SIZE"
expect_count out '^rank [01]: PMI_FD=3$' 2 "PMI_FD"
expect_count out '^rank [01]: HALO_LOCAL_SIZE=2$' 2 "HALO_LOCAL_SIZE"
expect_count out '^rank [01]: MPI_LOCALNRANKS=2$' 2 "MPI_LOCALNRANKS"
expect_count out '^rank [01]: HALO_PMI_SERVER=halo$' 2 "HALO_PMI_SERVER"

run -genv A 1 -genv A 2 -n 1 "$HELPER" env A
expect_grep out '^rank 0: A=2$' "a later -genv wins"

run -n 1 -x "=bad" true
expect_rc 2 "-x with an empty name is a usage error"

# Huge pages for large allocations: mpiexec adds glibc's tunable when the
# job asks (HALO_HUGEPAGES=1) and has not chosen a value of its own.
unset GLIBC_TUNABLES HALO_HUGEPAGES
run -n 1 "$HELPER" env GLIBC_TUNABLES
expect_grep out '^rank 0: GLIBC_TUNABLES=\(unset\)$' "no huge pages by default"
HALO_HUGEPAGES=1 GLIBC_TUNABLES=glibc.malloc.arena_max=4 run -n 1 "$HELPER" env GLIBC_TUNABLES
expect_grep out '^rank 0: GLIBC_TUNABLES=glibc.malloc.arena_max=4:glibc.malloc.hugetlb=1$' \
    "the tunable appended to the job's own"
HALO_HUGEPAGES=1 GLIBC_TUNABLES=glibc.malloc.hugetlb=0 run -n 1 "$HELPER" env GLIBC_TUNABLES
expect_grep out '^rank 0: GLIBC_TUNABLES=glibc.malloc.hugetlb=0$' "the job's own hugetlb value kept"
HALO_HUGEPAGES=1 run -n 1 "$HELPER" env GLIBC_TUNABLES
expect_grep out '^rank 0: GLIBC_TUNABLES=glibc.malloc.hugetlb=1$' "HALO_HUGEPAGES=1 in the environment"
run -n 1 -genv HALO_HUGEPAGES 1 "$HELPER" env GLIBC_TUNABLES
expect_grep out '^rank 0: GLIBC_TUNABLES=glibc.malloc.hugetlb=1$' "-genv HALO_HUGEPAGES 1"
HALO_HUGEPAGES=1 run -n 1 -x HALO_HUGEPAGES=0 "$HELPER" env GLIBC_TUNABLES
expect_grep out '^rank 0: GLIBC_TUNABLES=\(unset\)$' "-x HALO_HUGEPAGES=0 over the environment"

# And glibc acts on it: an 8 MiB allocation lands in a mapping the kernel
# may back with huge pages, which it would not without the tunable (where
# the THP mode is "madvise"; glibc 2.35 and later; not under a sanitizer's
# malloc).
thp_mode=$(sed -n 's/.*\[\(.*\)\].*/\1/p' /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null)
glibc_minor=$(getconf GNU_LIBC_VERSION 2>/dev/null | sed -n 's/^glibc 2\.\([0-9]*\).*/\1/p')
HALO_HUGEPAGES=1 run -n 1 "$HELPER" thp 8388608
expect_rc 0 "thp run"
if [ "$thp_mode" = madvise ] && [ "${glibc_minor:-0}" -ge 35 ] && ! grep -Eq 'thp: (sanitizer|unreported)' "$TMP/out"; then
    expect_grep out '^rank 0: thp: eligible 1$' "8 MiB malloc eligible for huge pages with HALO_HUGEPAGES=1"
    run -n 1 "$HELPER" thp 8388608
    expect_grep out '^rank 0: thp: eligible 0$' "not eligible by default"
else
    echo "skip: THP mode '${thp_mode:-?}', glibc 2.${glibc_minor:-?}, $(cat "$TMP/out")"
fi

finish
