"""What the delayed-feedback reproductions share: a command line, one comparison per feedback model,
and tables of cumulative regret against the feedback axis.

A script sweeps one feedback axis (the batch size delta, the mean delay, the number of batches M).
Each value is one `gym_ctxbandits.compare.run` comparison under its own `Feedback`, written to its
own results subfolder (so re-running resumes: finished jobs are not run again), and every value
runs the same seeds: the env, the agents and the delays are common random numbers across the sweep.

    python scripts/c11_table1.py                  # the documented default size
    python scripts/c11_table1.py --quick          # a smoke run of a few seconds (tests use it)
    python scripts/c11_table1.py --seeds 20 --horizon 100000 --workers 2
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np
import pandas as pd

from gym_ctxbandits.compare import run
from gym_ctxbandits.delays import Feedback
from gym_ctxbandits.experiment import AgentSpec, EnvSpec, seed_list


def A(name: str, label: str = "", **kwargs) -> AgentSpec:
    """An agent: registered name, a label for the tables, its keyword arguments."""
    return AgentSpec(name, kwargs, label)


def E(env_id: str, **kwargs) -> EnvSpec:
    return EnvSpec(env_id, kwargs)


def parse(doc: str, horizon: int, seeds: int, quick_horizon: int, argv=None, options=()) -> argparse.Namespace:
    """The scripts' options, and a script's own `options` ((flag, keyword arguments of add_argument)
    pairs); `args.horizon` and `args.seeds` resolved (--quick: `quick_horizon`, 2 seeds)."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help=f"T={quick_horizon}, 2 seeds: a smoke run")
    parser.add_argument("--seeds", help=f"N (0..N-1), A:B or 3,7,11 (default {seeds})")
    parser.add_argument("--horizon", type=int, help=f"rounds T (default {horizon})")
    parser.add_argument("--out", help="results folder (default results/<script>[-quick])")
    parser.add_argument("--backend", choices=["inprocess", "processes"], default="processes")
    parser.add_argument("--workers", type=int, help="processes for --backend processes (default: all cores)")
    parser.add_argument("--batch", type=int, default=10, help="seeds per batched run (default 10)")
    parser.add_argument("--quiet", action="store_true", help="no progress bars")
    for flag, kwargs in options:
        parser.add_argument(flag, **kwargs)
    args = parser.parse_args(argv)
    args.horizon = args.horizon or (quick_horizon if args.quick else horizon)
    try:
        args.seeds = seed_list(args.seeds or (2 if args.quick else seeds), "--seeds")
    except ValueError as err:
        parser.exit(2, f"{parser.prog}: error: {err}\n")
    return args


def sweep(args, script: str, envs: list[EnvSpec], agents: list[AgentSpec], models: dict, log_every: int | None = None,
          horizon=None, imports=()) -> pd.DataFrame:
    """Run `agents` on `envs` under each feedback model of `models` ({axis value: Feedback or None});
    the logged rows of every run with the axis value in column `x`. `horizon` may be a function of the
    axis value (BaSE's grid is part of the agent), `agents` too."""
    out = Path(args.out or f"results/{script}{'-quick' if args.quick else ''}")
    tables = []
    for x, feedback in models.items():
        T = horizon(x) if callable(horizon) else args.horizon
        table = run(envs, agents(x) if callable(agents) else agents, seeds=args.seeds, horizon=T,
                    out=out / f"{x}".replace(":", "_"), backend=args.backend, workers=args.workers,
                    log_every=log_every or T, progress=not args.quiet, batch=args.batch,
                    feedback=Feedback.of(feedback), imports=imports)
        tables.append(table.assign(x=x))
    return pd.concat(tables, ignore_index=True)


def final(table: pd.DataFrame, at: int | None = None, by: tuple[str, ...] = ()) -> pd.DataFrame:
    """Mean and standard error over seeds of the cumulative regret at round `at` (default: the last),
    per (x, agent, *by)."""
    rows = table[table["round"] == (at or table["round"].max())]
    return rows.groupby(["x", "agent", *by], sort=False)["cum_regret"].agg(["mean", "sem", "count"]).reset_index()


def cell(mean: float, sem: float) -> str:
    """mean ± se, whole numbers ("0", not "-0")."""
    return f"{round(mean):,} ± {round(sem):,}" if np.isfinite(sem) else f"{round(mean):,}"


class Clock:
    """Wall and CPU time since construction, children (the worker processes) included."""

    def __init__(self):
        self.wall, self.cpu = time.perf_counter(), self._cpu()

    @staticmethod
    def _cpu() -> float:
        t = os.times()
        return t.user + t.system + t.children_user + t.children_system

    def __str__(self) -> str:
        return f"{time.perf_counter() - self.wall:.0f} s wall, {self._cpu() - self.cpu:.0f} CPU-s"


def report(args, script: str, title: str, text: str, clock: Clock) -> None:
    """Print the table with its command line and time, and write it to <out>/<script>.md."""
    out = Path(args.out or f"results/{script}{'-quick' if args.quick else ''}")
    body = f"## {title}\n\nT = {args.horizon:,}, {len(args.seeds)} seeds; {clock}\n\n{text}\n"
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{script}.md").write_text(body)
    print("\n" + body)
