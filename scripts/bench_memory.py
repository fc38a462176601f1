"""Peak resident memory of [S1] fig. 1's biggest units: one agent, 100 instances batched, n rounds.

scripts/s1_fig1.py at paper scale is 3 dims x 8 agents x 100 instances x n = 50,000 rounds. It runs
as units of `--batch` seeds, one (env, agent) each, a unit in one process at a time per worker,
so a worker's memory is that of its biggest unit. This script runs each of the figure's agents as
one unit of all `--seeds` instances (the paper's 100, more than the script's default batch of 10)
on CtxBandit/BernoulliLogistic-v0 at `--dim`, through the comparison's own path (make_jobs,
backends.run_unit: the batched run loop, then the Parquet files, logged every n/500 rounds as
s1_fig1.py does), each in a fresh spawned process, and reports the process's peak resident set
size (getrusage ru_maxrss, which includes the imports and writing the files), its RSS when the
rounds start and at the end (/proc/self/statm, sampled `--samples` times), and the growth per
1,000 rounds: the least-squares slope of RSS over the second half of the run, when the agent's
state has its final size (arrays sized by the arm set, not by the number of rounds, do not grow).

    python scripts/bench_memory.py                          # the table in docs/agents.md (long)
    python scripts/bench_memory.py --horizon 5000 --agents "GLM-TSL (theory),UCB-GLM (0.5)"
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import resource
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, fields

import numpy as np

from gym_ctxbandits.backends import run_unit
from gym_ctxbandits.experiment import AgentSpec, EnvSpec, make_jobs
from s1_fig1 import AGENTS

ENV = "CtxBandit/BernoulliLogistic-v0"
PAGE_MB = os.sysconf("SC_PAGE_SIZE") / 2**20


@dataclass
class Args:
    horizon: int = 50_000   # n, rounds ([S1] fig. 1: 50,000)
    seeds: int = 100        # instances in the one unit ([S1] fig. 1: 100)
    dim: int = 20           # d of the env ([S1] fig. 1: 5, 10, 20)
    agents: str = ""        # comma-separated labels of s1_fig1.AGENTS (default: all 8)
    samples: int = 100      # RSS samples over the run


def rss_mb() -> float:
    """This process's resident set size now, in MB (/proc/self/statm)."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * PAGE_MB


def measure(spec: AgentSpec, args: Args) -> dict:
    """Run one unit (all seeds batched) in this process; peak and sampled RSS, seconds."""
    jobs = make_jobs([EnvSpec(ENV, {"dim": args.dim})], [spec], args.seeds, args.horizon,
                     log_every=max(1, args.horizon // 500))
    samples, done, every = [], [0], max(1, args.horizon // args.samples)

    def progress(k: int) -> None:     # called with instance-rounds, about every 1% of the rounds
        done[0] += k
        rounds = done[0] // args.seeds
        if not samples or rounds - samples[-1][0] >= every:
            samples.append((rounds, rss_mb()))

    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as out:
        run_unit(jobs, out, progress)
    return {"peak": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, "samples": samples,
            "seconds": time.perf_counter() - start}


def growth_per_1000(samples: list[tuple[int, float]]) -> float:
    """MB per 1,000 rounds: least-squares slope of RSS against rounds over the second half of the samples."""
    rounds, mb = np.array(samples[len(samples) // 2:]).T
    return 1000 * float(np.polyfit(rounds, mb, 1)[0]) if len(rounds) > 1 else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for f in fields(Args):
        parser.add_argument(f"--{f.name}", type=type(f.default), default=f.default)
    args = Args(**vars(parser.parse_args()))
    chosen = [a for a in AGENTS if not args.agents or a.title in args.agents.split(",")]
    if not chosen:
        parser.error(f"--agents {args.agents!r} names none of: " + ", ".join(a.title for a in AGENTS))
    print(f"{ENV}(dim={args.dim}), {args.seeds} instances batched in one unit, n={args.horizon:,} rounds, "
          f"logged every {max(1, args.horizon // 500)}:")
    print("| agent | peak RSS (MB) | RSS at the first sample (MB) | RSS at the end (MB) | growth per 1,000 rounds (MB) "
          "| seconds |")
    print("|---|---:|---:|---:|---:|---:|")
    for spec in chosen:
        with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:   # a fresh process each
            r = pool.submit(measure, spec, args).result()
        print(f"| {spec.title} | {r['peak']:.0f} | {r['samples'][0][1]:.0f} | {r['samples'][-1][1]:.0f} "
              f"| {growth_per_1000(r['samples']):.2f} | {r['seconds']:.0f} |", flush=True)


if __name__ == "__main__":
    main()
