#!/usr/bin/env bash
# Installs what Halo needs to build and test, when it is missing:
# a C compiler, a Fortran compiler (gfortran: the mpi module, mpifort and
# the Fortran tests; the library builds without one), CMake >= 3.25, Python 3 with venv and pip, and the PyPI
# package pympistandard (for checking the generated files). With --hydra it
# also installs MPICH (its Hydra launcher runs Halo programs in CI); with
# --peers MPICH and Open MPI (for side-by-side benchmarks).
set -euo pipefail
need=()
command -v cc >/dev/null || need+=(gcc)
command -v c++ >/dev/null || need+=(g++)
command -v gfortran >/dev/null || need+=(gfortran)
# CMake 3.25 or newer (Debian 12 has 3.25.1).
if ! command -v cmake >/dev/null ||
    ! printf '%s\n3.25\n' "$(cmake --version | awk 'NR==1 {print $3}')" | sort -V -C -r 2>/dev/null; then
    need+=(cmake)
fi
command -v pkg-config >/dev/null || need+=(pkg-config)
command -v make >/dev/null || need+=(make)
command -v python3 >/dev/null || need+=(python3)
python3 -c 'import venv, ensurepip' 2>/dev/null || need+=(python3-venv)
python3 -m pip --version >/dev/null 2>&1 || need+=(python3-pip)
case "${1:-}" in
--hydra) command -v mpiexec.hydra >/dev/null || need+=(mpich) ;;
--peers)
    command -v mpiexec.hydra >/dev/null || need+=(mpich libmpich-dev)
    command -v mpirun.openmpi >/dev/null || need+=(openmpi-bin libopenmpi-dev) ;;
esac
if [ ${#need[@]} -gt 0 ]; then
    echo "deps: installing ${need[*]}"
    export DEBIAN_FRONTEND=noninteractive
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo apt-get update -qq
    $sudo apt-get install -y -qq "${need[@]}" >/dev/null
fi
if ! python3 -c 'import pympistandard' 2>/dev/null; then
    echo "deps: installing pympistandard from PyPI"
    python3 -m pip install -q pympistandard==0.2.0 2>/dev/null ||
        python3 -m pip install -q --break-system-packages pympistandard==0.2.0
fi
