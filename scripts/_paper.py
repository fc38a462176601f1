"""What every paper-experiment script shares: its command line, the run, the figures, the summary.

A script declares its figure as `Panel`s (a results subfolder, the envs, the agents, the paper's
horizon and number of seeds) and calls `main(Path(__file__).stem, panels, __doc__)`. Each panel is one
`gym_ctxbandits.run` comparison (resumable: re-running skips finished jobs), then a regret figure
with one subplot per env, a run-time figure, and a table of final cumulative regret.

    python scripts/s0_fig1.py                 # the paper's setting
    python scripts/s0_fig1.py --quick         # small T and 2 seeds: a smoke run (tests use it)
    python scripts/s0_fig1.py --seeds 10 --horizon 2000 --backend processes
"""

from __future__ import annotations

import argparse
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path

import gym_ctxbandits
from gym_ctxbandits.experiment import AgentSpec, EnvSpec
from gym_ctxbandits.plots import plot_regret, plot_runtime

QUICK_HORIZON, QUICK_SEEDS = 100, 2


@dataclass
class Panel:
    """One comparison of a paper figure: every agent on every env, `seeds` seeds of `horizon` rounds."""

    name: str
    envs: list[EnvSpec]
    agents: list[AgentSpec]
    horizon: int
    seeds: int
    notes: list[str] = field(default_factory=list)
    quick_envs: list[EnvSpec] | None = None  # smaller variants of `envs` for --quick (e.g. fewer posts to embed)
    quick_agents: list[AgentSpec] | None = None  # cheaper variants of `agents` for --quick (e.g. fewer updates)


def A(name: str, label: str = "", **kwargs) -> AgentSpec:
    """An agent of a panel: registered name, an optional legend label, its keyword arguments."""
    return AgentSpec(name, kwargs, label)


def E(env_id: str, **kwargs) -> EnvSpec:
    """An env of a panel: registered id and keyword arguments."""
    return EnvSpec(env_id, kwargs)


def _mean_se(values, digits: int = 1) -> str:
    """'mean ± standard error' of a column of final values; 'n/a' when it has none (a replay's regret)."""
    if values.isna().all():
        return "n/a"
    se = values.std(ddof=1) / len(values) ** 0.5 if len(values) > 1 else float("nan")
    return f"{values.mean():.{digits}f} ± {se:.{digits}f}"


def summary(table) -> str:
    """Markdown table: final cumulative regret and reward (mean ± standard error), seconds per 1,000 rounds."""
    last = table.loc[table.groupby(["env", "env_kwargs", "agent", "seed"])["round"].idxmax()]
    last = last.assign(ms=1000 * (last["act_seconds"] + last["observe_seconds"]) / last["round"])
    rows = ["| env | kwargs | agent | seeds | T | final regret (mean ± se) | final reward (mean ± se) | s / 1000 rounds |",
            "|---|---|---|---|---|---|---|---|"]
    for (env, kwargs, agent), g in last.groupby(["env", "env_kwargs", "agent"], sort=False):
        rows.append(f"| {env.removeprefix('CtxBandit/')} | `{kwargs}` | {agent} | {len(g)} | {g['round'].max()} "
                    f"| {_mean_se(g['cum_regret'])} | {_mean_se(g['cum_reward'])} | {g['ms'].mean():.3f} |")
    return "\n".join(rows)


def main(script: str, panels: list[Panel], doc: str, argv: list[str] | None = None) -> None:
    """Parse the command line of `script` (its file stem) and run the chosen panels."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help=f"T={QUICK_HORIZON}, {QUICK_SEEDS} seeds: a smoke run")
    parser.add_argument("--out", default=None, help="results folder (default results/<script>[-quick])")
    parser.add_argument("--seeds", type=int, help="seeds per panel (default: the paper's)")
    parser.add_argument("--horizon", type=int, help="rounds per run (default: the paper's)")
    parser.add_argument("--panels", help="comma-separated panel names to run (default: all): "
                        + ", ".join(p.name for p in panels))
    parser.add_argument("--envs", help="comma-separated patterns: run only the envs whose title contains one "
                        "(e.g. 'dim=20'; titles look like CtxBandit/Logistic-v0(dim=20))")
    parser.add_argument("--backend", default="processes", choices=["inprocess", "processes", "ray"])
    parser.add_argument("--workers", type=int, help="local processes (default: all cores)")
    parser.add_argument("--address", help="Ray cluster address (default: a local one)")
    parser.add_argument("--batch", type=int, default=10, help="seeds per batched run (1: plain loop)")
    parser.add_argument("--figures", help="also copy each panel's regret.png to FIGURES/<script>_<panel>.png")
    parser.add_argument("--quiet", action="store_true", help="no progress bars")
    args = parser.parse_args(argv)
    out = Path(args.out or f"results/{script}{'-quick' if args.quick else ''}")
    chosen = args.panels.split(",") if args.panels else [p.name for p in panels]
    unknown = set(chosen) - {p.name for p in panels}
    if unknown:
        parser.error(f"unknown panels {sorted(unknown)}; choose from {[p.name for p in panels]}")
    for panel in (p for p in panels if p.name in chosen):
        horizon = args.horizon or (QUICK_HORIZON if args.quick else panel.horizon)
        seeds = args.seeds or (QUICK_SEEDS if args.quick else panel.seeds)
        where = out / panel.name
        start = time.perf_counter()
        envs = panel.quick_envs if args.quick and panel.quick_envs else panel.envs
        if args.envs:
            patterns = args.envs.split(",")
            chosen_envs = [e for e in envs if any(p in e.title for p in patterns)]
            if not chosen_envs:
                parser.error(f"--envs {args.envs!r} matches none of panel {panel.name}'s envs: "
                             + ", ".join(e.title for e in envs))
            envs = chosen_envs
        agent_specs = panel.quick_agents if args.quick and panel.quick_agents else panel.agents
        table = gym_ctxbandits.run(envs, agent_specs, seeds=seeds, horizon=horizon, out=where,
                                   backend=args.backend, workers=args.workers, address=args.address,
                                   log_every=max(1, horizon // 500), batch=args.batch, progress=not args.quiet)
        paths = plot_regret(table, where, "se") + plot_runtime(table, where)
        text = summary(table)
        (where / "summary.md").write_text(text + "\n")
        print(f"\n## {script} {panel.name}: T={horizon}, {seeds} seeds, {time.perf_counter() - start:.0f} s "
              f"(finished jobs are not rerun)\n{text}")
        for note in panel.notes:
            print(f"- {note}")
        if args.figures:
            Path(args.figures).mkdir(parents=True, exist_ok=True)
            shutil.copy(paths[0], Path(args.figures) / f"{script}_{panel.name}.png")
