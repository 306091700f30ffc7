#!/usr/bin/env bash
# The PMI-1 client works when MPICH's Hydra launches the ranks: run Halo
# test programs under mpiexec.hydra (Debian package mpich).
set -euo pipefail
build=$(cd "${1:?usage: check_hydra.sh BUILD_DIR}" && pwd)
if ! command -v mpiexec.hydra >/dev/null; then
    echo "check_hydra: mpiexec.hydra not found (apt-get install mpich)"; exit 1
fi
for n in 1 2 4; do
    out=$(timeout 60 mpiexec.hydra -n $n "$build/tests/mpi/mpi_hello")
    got=$(grep -c "of $n ok" <<<"$out" || true)
    if [ "$got" -ne "$n" ]; then
        echo "check_hydra: $n ranks under Hydra: expected $n ok lines, got:"; echo "$out"; exit 1
    fi
done
# A message over the rendezvous threshold and a split communicator.
if [ -x "$build/tests/mpi/mpi_core_comm" ]; then
    timeout 120 mpiexec.hydra -n 4 "$build/tests/mpi/mpi_core_comm" >/dev/null
fi
echo "check_hydra: Halo programs run under MPICH's Hydra (1, 2 and 4 ranks)"
