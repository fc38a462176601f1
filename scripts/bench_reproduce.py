"""Do the shipped reference rows reproduce on this machine? (issue 48; gym_ctxbandits/bench/reproduce.py)

Reruns a fixed sample of the rows of every shipped suite version and track (`reproduce.sample`:
every agent of every folder that made rows of its own, a cell chosen by turns, its first two
logged checkpoints; the replay whole for Random, LinUCB, LinTS and Greedy), or with `--all` every
cell of every such agent at its first `--checkpoints` checkpoints, on one report seed, and says
which rows match bit for bit, per folder. Run it once as it is and once with another machine's
kernels (docs/benchmark.md, "Reproducing the references", has both tables and their times):

    python scripts/bench_reproduce.py
    OPENBLAS_CORETYPE=Haswell ATEN_CPU_CAPABILITY=avx2 MKL_ENABLE_INSTRUCTIONS=AVX2 python scripts/bench_reproduce.py
    python scripts/bench_reproduce.py --quick      # the first 12 rows of the sample (tests)
"""

from __future__ import annotations

import argparse
import time
from collections import defaultdict

from gym_ctxbandits.bench import references, reproduce
from gym_ctxbandits.jobs import AgentSpec, agent_device


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--all", action="store_true", help="every own cell of every agent, not the sample")
    parser.add_argument("--checkpoints", type=int, default=2, help="logged checkpoints rerun per cell (default 2)")
    parser.add_argument("--seed-index", type=int, default=0, help="which report seed (default the first)")
    parser.add_argument("--quick", action="store_true", help="the first 12 rows of the sample")
    parser.add_argument("--verbose", action="store_true", help="every differing row")
    args = parser.parse_args(argv)
    print(f"kernels here: {reproduce.numerics()}")
    rows = reproduce.sample(args.checkpoints)
    if args.all:
        rows = [(s, t, a, c.id, args.checkpoints * c.log_every) for s, t in reproduce.folders()
                for a, e in references.read(references.folder(s, t), s, verify=False, track=t)["agents"].items()
                for c in s.track(t)[0] if c.id not in e.get("reused", {}).get("cells", ())]
    rows = rows[:12] if args.quick else rows
    tally = defaultdict(lambda: [0, 0, 0.0])          # folder -> [rows, differing rows, seconds]
    parted = []
    start = time.perf_counter()
    manifests = {}
    for suite, track, agent, cell, rounds in rows:
        key = (suite.key, track)
        if key not in manifests:
            manifests[key] = references.read(references.folder(suite, track), suite, track=track)
        seed = suite.track(track)[1][args.seed_index]
        t0 = time.perf_counter()
        shipped, mine, replay = reproduce.rerun(suite, track, agent, cell, [seed], rounds, manifests[key])
        diff = reproduce.compare(shipped, mine, replay)
        entry = manifests[key]["agents"][agent]
        torch = agent_device(AgentSpec(agent, entry.get("config", {})), "cpu") is not None
        name = references.folder(suite, track).name
        tally[name][0] += len(shipped)
        tally[name][1] += bool(diff) * len(diff)
        tally[name][2] += time.perf_counter() - t0
        if diff:
            parted.append(f"{name} {agent} {cell} ({'torch' if torch else 'numpy'}): {len(diff)} of {len(shipped)} "
                          f"rows differ, the first {diff[0]}")
            if args.verbose:
                print("\n".join(f"  {d}" for d in diff))
    print("| references | rows rerun | rows that differ | seconds |\n|---|---|---|---|")
    for name, (n, bad, secs) in sorted(tally.items()):
        print(f"| {name} | {n} | {bad} | {secs:.1f} |")
    print(f"\n{sum(v[0] for v in tally.values())} rows of {len(rows)} (agent, cell) runs in "
          f"{time.perf_counter() - start:.0f} s; {len(parted)} runs differ")
    print("\n".join(parted))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
