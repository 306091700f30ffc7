#!/usr/bin/env python3
"""Side-by-side ping-pong: Halo against the MPIs installed on this machine.

Builds bench/pingpong.c with each peer's compiler wrapper, then runs the
same sizes on every MPI in turn, round after round (interleaved, so machine
noise falls on all alike), and prints the median of each figure with the
ratio Halo/peer. Peers are run with the flags of the project's peer notes:
MPICH `mpiexec.mpich -n 2 -bind-to core`, Open MPI `mpirun.openmpi
--allow-run-as-root -n 2 --bind-to core`, Halo `mpiexec -n 2`.

  bench/compare_pingpong.py [--build build] [--rounds 5] [--sizes 8,1048576]

Peers missing from the machine are skipped with a note on how to install
them (tools/ci/deps.sh --peers).
"""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def peers(build):
    out = []
    out.append(("Halo", os.path.join(build, "bin", "mpicc"), [os.path.join(build, "bin", "mpiexec"), "-n", "2"]))
    if shutil.which("mpicc.mpich") and shutil.which("mpiexec.mpich"):
        out.append(("MPICH", "mpicc.mpich", ["mpiexec.mpich", "-n", "2", "-bind-to", "core"]))
    else:
        print("# MPICH not found (tools/ci/deps.sh --peers installs it)")
    if shutil.which("mpicc.openmpi") and shutil.which("mpirun.openmpi"):
        out.append(("OpenMPI", "mpicc.openmpi",
                    ["mpirun.openmpi", "--allow-run-as-root", "-n", "2", "--bind-to", "core"]))
    else:
        print("# Open MPI not found (tools/ci/deps.sh --peers installs it)")
    return out


def run_once(launch, exe, size):
    res = subprocess.run(launch + [exe, "-s", str(size)], capture_output=True, text=True, timeout=300)
    if res.returncode != 0:
        raise RuntimeError(f"{' '.join(launch)} {exe} failed: {res.stderr[-500:]}")
    for line in res.stdout.splitlines():
        f = line.split()
        if len(f) == 3 and f[0] == str(size):
            return float(f[1]), float(f[2])
    raise RuntimeError("no result line in output: " + res.stdout[-300:])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(os.path.dirname(HERE), "build"))
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--sizes", default="8,1024,65536,1048576,4194304")
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    src = os.path.join(HERE, "pingpong.c")
    tmp = tempfile.mkdtemp()
    mpis = []
    for name, cc, launch in peers(os.path.abspath(args.build)):
        exe = os.path.join(tmp, "pp_" + name)
        subprocess.run([cc, "-O2", src, "-o", exe], check=True, capture_output=True)
        mpis.append((name, exe, launch))
    results = {(m[0], s): ([], []) for m in mpis for s in sizes}
    for r in range(args.rounds):
        for s in sizes:
            for name, exe, launch in mpis:
                lat, bw = run_once(launch, exe, s)
                results[(name, s)][0].append(lat)
                results[(name, s)][1].append(bw)
        print(f"# round {r + 1}/{args.rounds} done", file=sys.stderr)
    names = [m[0] for m in mpis]
    print(f"# medians of {args.rounds} interleaved rounds; latency in us (lower is better), "
          "bandwidth in MB/s (higher is better)")
    head = "size      " + "".join(f"{n + ' lat':>14}" for n in names) + "".join(
        f"{n + ' bw':>14}" for n in names)
    print(head)
    for s in sizes:
        lat = [statistics.median(results[(n, s)][0]) for n in names]
        bw = [statistics.median(results[(n, s)][1]) for n in names]
        print(f"{s:<10}" + "".join(f"{x:14.3f}" for x in lat) + "".join(f"{x:14.1f}" for x in bw))
    print("\nratios Halo/peer (latency: below 1 is better; bandwidth: above 1 is better)")
    for s in sizes:
        h_lat = statistics.median(results[("Halo", s)][0])
        h_bw = statistics.median(results[("Halo", s)][1])
        parts = []
        for n in names[1:]:
            parts.append(f"{n}: lat {h_lat / statistics.median(results[(n, s)][0]):.2f} "
                         f"bw {h_bw / statistics.median(results[(n, s)][1]):.2f}")
        print(f"{s:<10}" + "   ".join(parts))
    shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
