"""What delayed feedback's bookkeeping costs the run loop: LinUCB on the linear bandit, `--seeds`
seeds as one batched run (vector env, batched agent), for `--horizon` rounds, without delays and
under each feedback model below. The table is docs/delayed.md's.

The time is the whole batched run (run_batch, no files), the best of `--repeat` runs taken in
turn, so that a machine's load slows all variants alike. A fixed delay reaches every instance at
the same round, so the batched agent keeps its one vectorised `observe` per delivered round: the
difference is the queue's. Random delays reach the instances at different rounds; LinUCB has no
`observe_rows`, so the batch runs as N single agents (experiment.PerInstance), which the last two
rows compare with the plain loop's N single runs. Last, the queue alone (FeedbackQueue.push and
pop of a fixed delay of 50 for N instances, without agent or env): its microseconds per round,
the bookkeeping's cost less the noise of a whole run.

    python scripts/bench_delays.py
    python scripts/bench_delays.py --seeds 10 --horizon 5000 --repeat 5
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass

import numpy as np

from gym_ctxbandits.delays import Feedback, FeedbackQueue, delay_rng
from gym_ctxbandits.experiment import AgentSpec, EnvSpec, Job, run_batch, run_job

ENV = EnvSpec("CtxBandit/Linear-v0")
VARIANTS = {"no delay (batched)": None, "fixed:50 (batched)": Feedback(delay="fixed:50"),
            "fixed:50, window 40, default 0 (batched)": Feedback(delay="fixed:50", window=40, default_reward=0.0),
            "fixed:50, feedback every 10 (batched)": Feedback(delay="fixed:50", feedback_every=10),
            "geometric:50 (N single agents)": Feedback(delay="geometric:50")}


@dataclass
class Args:
    seeds: int = 10
    horizon: int = 5000
    repeat: int = 5


def seconds(args: Args, feedback, single: bool = False) -> float:
    jobs = [Job(ENV, AgentSpec("LinUCB"), s, args.horizon, log_every=args.horizon, feedback=feedback)
            for s in range(args.seeds)]
    start = time.perf_counter()
    if single:
        for job in jobs:
            run_job(job)
    else:
        run_batch(jobs)
    return time.perf_counter() - start


def queue_microseconds(n: int, rounds: int = 20_000) -> float:
    """Microseconds per round of the queue alone: push and pop of fixed:50 for n instances."""
    queue = FeedbackQueue(Feedback(delay="fixed:50"), [delay_rng(s) for s in range(n)], rounds)
    obs, action, reward = np.zeros((n, 50, 20), np.float32), np.zeros(n, np.int64), np.zeros(n)
    start = time.perf_counter()
    for t in range(rounds):
        queue.push(t, obs, action, reward)
        queue.pop(t)
    return 1e6 * (time.perf_counter() - start) / rounds


def main(args: Args) -> None:
    runs = {**{name: (fb, False) for name, fb in VARIANTS.items()}, "no delay (plain loop, N single runs)": (None, True)}
    seconds(Args(args.seeds, 50, 1), None)                     # imports and first calls, not timed
    best = {name: float("inf") for name in runs}
    for _ in range(args.repeat):
        for name, (fb, single) in runs.items():
            best[name] = min(best[name], seconds(args, fb, single))
    base = best["no delay (batched)"]
    print(f"LinUCB on {ENV.id}, {args.seeds} seeds x {args.horizon} rounds, best of {args.repeat}\n")
    print("| feedback | wall s | vs no delay (batched) |\n|---|---|---|")
    for name, wall in best.items():
        print(f"| {name} | {wall:.2f} | {100 * (wall / base - 1):+.1f}% |")
    queue = min(queue_microseconds(args.seeds) for _ in range(args.repeat))
    per_round = 1e6 * base / args.horizon
    print(f"\nthe queue alone: {queue:.1f} us per round of {args.seeds} instances, {100 * queue / per_round:.1f}% of an "
          f"undelayed batched round ({per_round:.0f} us)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    for field, default in vars(Args()).items():
        parser.add_argument(f"--{field}", type=type(default), default=default)
    main(Args(**vars(parser.parse_args())))
