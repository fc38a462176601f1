"""What delayed feedback costs the run loop: LinUCB on the linear bandit (d = `--dim`, K = 50 arms),
`--seeds` seeds as one batched run (vector env, batched agent) for `--horizon` rounds, without
delays and under each feedback model below. The table is docs/delayed.md's.

Each figure is the CPU time of a whole batched run (run_batch, no files; the process's CPU seconds,
which another engineer's load slows less than the wall clock), the best of `--repeat` runs taken in
turn (every variant once, then again), so that a change in the machine's load falls on all variants
alike; "vs no delay" compares the bests, "paired" is the median over the repeats of each run's
ratio to the undelayed run of the same repeat (a second view, less swayed by one lucky or unlucky
undelayed run on a loaded machine). A fixed delay and batched updates reach every instance at the same round: one vectorised
`observe` per delivered round, the difference being the queue's. Geometric delays reach the
instances at different rounds, and several rewards of one instance may land in one round: LinUCB
takes a round's arrivals in one `observe_arrivals`, which applies them in layers (each instance's
k-th arrival of the round in layer k, one vectorised update per layer). The last row is the same
geometric run as N single agents (experiment.PerInstance), the fallback for a batched agent without
`observe_rows`, and what LinUCB ran as before it had one.

    nice -n 10 python scripts/bench_delays.py
    nice -n 10 python scripts/bench_delays.py --seeds 10 --horizon 3000 --repeat 5
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from dataclasses import dataclass
from unittest import mock

from gym_ctxbandits import experiment
from gym_ctxbandits.delays import Feedback
from gym_ctxbandits.experiment import AgentSpec, EnvSpec, Job, run_batch

VARIANTS = {"no delay": None, "geometric:100": Feedback(delay="geometric:100"), "fixed:50": Feedback(delay="fixed:50"),
            "feedback every 50": Feedback(feedback_every=50)}
FALLBACK = "geometric:100, N single agents"


@dataclass
class Args:
    seeds: int = 10
    horizon: int = 3000
    repeat: int = 5
    dim: int = 50


def cpu_seconds(args: Args, feedback, fallback: bool = False) -> float:
    env = EnvSpec("CtxBandit/Linear-v0", {"dim": args.dim})
    jobs = [Job(env, AgentSpec("LinUCB"), s, args.horizon, log_every=args.horizon, feedback=feedback)
            for s in range(args.seeds)]
    start = time.process_time()
    if fallback:                      # hide observe_rows: the loop then runs N single agents
        with mock.patch.object(experiment, "hasattr", lambda obj, name: name != "observe_rows" and hasattr(obj, name),
                               create=True):
            run_batch(jobs)
    else:
        run_batch(jobs)
    return time.process_time() - start


def main(args: Args) -> None:
    runs = {**{name: (fb, False) for name, fb in VARIANTS.items()}, FALLBACK: (VARIANTS["geometric:100"], True)}
    cpu_seconds(Args(args.seeds, 50, 1, args.dim), None)          # imports and first calls, not timed
    load = os.getloadavg()
    times = {name: [] for name in runs}
    for _ in range(args.repeat):
        for name, (fb, fallback) in runs.items():
            times[name].append(cpu_seconds(args, fb, fallback))
    base = times["no delay"]
    print(f"LinUCB on CtxBandit/Linear-v0 (d = {args.dim}, K = 50), {args.seeds} seeds as one batch x {args.horizon} "
          f"rounds, CPU seconds, best of {args.repeat} interleaved; load average {load[0]:.1f} before, "
          f"{os.getloadavg()[0]:.1f} after, on {os.cpu_count()} cores\n")
    print("| feedback | CPU s | vs no delay | paired | us per round |\n|---|---|---|---|---|")
    for name, cpu in times.items():
        paired = statistics.median(c / b for c, b in zip(cpu, base))
        print(f"| {name} | {min(cpu):.2f} | {100 * (min(cpu) / min(base) - 1):+.1f}% | {100 * (paired - 1):+.1f}% | "
              f"{1e6 * min(cpu) / args.horizon:.0f} |")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    for field, default in vars(Args()).items():
        parser.add_argument(f"--{field}", type=type(default), default=default)
    main(Args(**vars(parser.parse_args())))
