#!/usr/bin/env bash
# The installed tree works as users expect: `cmake --install` gives
# bin/mpicc, bin/mpiexec, include/mpi.h and lib/libmpi_abi.so (and libmpi.so);
# a program builds with the installed wrapper (without warnings where it
# passes the standard's sentinels, -Wall -Wextra -Werror), with pkg-config, with
# find_package(Halo), and with CMake's own find_package(MPI) pointed at the
# wrapper; Fortran programs build with mpifort (mpif.h, the mpi and mpi_f08
# modules);
# and it runs on 2 ranks.
set -euo pipefail
build=$(cd "${1:?usage: test_install.sh BUILD_DIR}" && pwd)
src=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix
cmake --install "$build" --prefix "$prefix" >/dev/null
for f in bin/mpicc bin/mpicc_abi bin/mpicxx bin/mpiexec bin/halo_info include/mpi.h lib/libmpi_abi.so \
         lib/libmpi.so lib/pkgconfig/halo.pc lib/cmake/Halo/HaloConfig.cmake; do
    [ -e "$prefix/$f" ] || { echo "missing after install: $f"; exit 1; }
done
show=$("$prefix/bin/mpicc" -show -c x.c)
grep -q -- "-I$prefix/include" <<<"$show" || { echo "mpicc -show does not use the install prefix: $show"; exit 1; }
grep -q -- "-rpath" <<<"$("$prefix/bin/mpicc" -link-info)" || { echo "mpicc -link-info has no rpath"; exit 1; }
"$prefix/bin/mpicc" -compile-info | grep -q -- "-I$prefix/include"
"$prefix/bin/mpicc" -showme:link | grep -q -- "-lmpi_abi"

run() { # program: 2 ranks must print 2 ok lines
    out=$("$prefix/bin/mpiexec" -n 2 "$1")
    [ "$(grep -c ' ok$' <<<"$out")" -eq 2 ] || { echo "$1 did not run on 2 ranks: $out"; exit 1; }
}

"$prefix/bin/mpicc" "$src/hello_install.c" -o "$tmp/a_wrapper"
run "$tmp/a_wrapper"
"$prefix/bin/mpicxx" -x c++ "$src/hello_install.c" -o "$tmp/a_cxx"
run "$tmp/a_cxx"
# MPI_UNWEIGHTED and friends where mpi.h declares arrays: no warning
"$prefix/bin/mpicc" -O2 -Wall -Wextra -Werror "$src/sentinels.c" -o "$tmp/a_sentinels"
run "$tmp/a_sentinels"

# Fortran, when the build had a compiler: mpif.h in fixed form and the mpi
# module (installed beside mpi.h) in free form.
if [ -e "$build/bin/mpifort" ]; then
    for f in bin/mpifort bin/mpif90 bin/mpif77 include/mpif.h include/mpi.mod include/mpi_f08.mod; do
        [ -e "$prefix/$f" ] || { echo "missing after install: $f"; exit 1; }
    done
    cat >"$tmp/hello_f77.f" <<'F77'
      program hello
      implicit none
      include 'mpif.h'
      integer ierr, rank, nproc, total
      call MPI_INIT(ierr)
      call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
      call MPI_COMM_SIZE(MPI_COMM_WORLD, nproc, ierr)
      call MPI_ALLREDUCE(1, total, 1, MPI_INTEGER, MPI_SUM,
     &     MPI_COMM_WORLD, ierr)
      if (total .eq. nproc) print '(a,i0,a)', 'rank ', rank, ' ok'
      call MPI_FINALIZE(ierr)
      end
F77
    cat >"$tmp/hello_mod.f90" <<'F90'
program hello
  use mpi
  implicit none
  integer :: ierr, rank, nproc, total
  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, nproc, ierr)
  call MPI_ALLREDUCE(1, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (total == nproc) print '(a,i0,a)', 'rank ', rank, ' ok'
  call MPI_FINALIZE(ierr)
end program hello
F90
    cat >"$tmp/hello_f08.f90" <<'F08'
program hello
  use mpi_f08
  implicit none
  integer :: rank, nproc, total
  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nproc)
  call MPI_Allreduce(1, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  if (total == nproc) print '(a,i0,a)', 'rank ', rank, ' ok'
  call MPI_Finalize()
end program hello
F08
    "$prefix/bin/mpifort" -Wall -Werror "$tmp/hello_f08.f90" -o "$tmp/a_f08"
    run "$tmp/a_f08"
    "$prefix/bin/mpif77" "$tmp/hello_f77.f" -o "$tmp/a_f77"
    run "$tmp/a_f77"
    "$prefix/bin/mpifort" -Wall -Werror "$tmp/hello_mod.f90" -o "$tmp/a_mod"
    run "$tmp/a_mod"
fi

if command -v pkg-config >/dev/null; then
    flags=$(PKG_CONFIG_PATH=$prefix/lib/pkgconfig pkg-config --cflags --libs halo)
    cc "$src/hello_install.c" $flags -o "$tmp/a_pc"
    run "$tmp/a_pc"
else
    echo "pkg-config not installed: pkg-config check skipped"
fi

mkdir -p "$tmp/proj"
cat >"$tmp/proj/CMakeLists.txt" <<CMK
cmake_minimum_required(VERSION 3.25)
project(use_halo C)
find_package(Halo REQUIRED)
add_executable(a_halo $src/hello_install.c)
target_link_libraries(a_halo PRIVATE Halo::mpi)
find_package(MPI REQUIRED COMPONENTS C)
add_executable(a_findmpi $src/hello_install.c)
target_link_libraries(a_findmpi PRIVATE MPI::MPI_C)
CMK
cmake -S "$tmp/proj" -B "$tmp/proj/b" -DCMAKE_PREFIX_PATH="$prefix" -DMPI_C_COMPILER="$prefix/bin/mpicc" \
    -DCMAKE_BUILD_RPATH="$prefix/lib" >"$tmp/cmake.log" 2>&1 || { cat "$tmp/cmake.log"; exit 1; }
cmake --build "$tmp/proj/b" >/dev/null
run "$tmp/proj/b/a_halo"
run "$tmp/proj/b/a_findmpi"
grep -q "Found MPI_C" "$tmp/cmake.log" || { echo "find_package(MPI) did not find the wrapper"; cat "$tmp/cmake.log"; exit 1; }
echo "install tree: wrappers, pkg-config, find_package(Halo) and find_package(MPI) all build and run"
