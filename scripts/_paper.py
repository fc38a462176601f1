"""What every paper-experiment script shares: panels of a figure, run as `ctxbandits run` runs a config.

A script declares its figure as `Panel`s (a results subfolder, the envs, the agents, the paper's
horizon and number of seeds) and calls `main(Path(__file__).stem, panels, __doc__)`. Each panel is one
`gym_ctxbandits.run` comparison (resumable: re-running skips finished jobs), then a regret figure
with one subplot per env, a run-time figure, and a table of final cumulative regret.

    python scripts/s0_fig1.py                 # the paper's setting
    python scripts/s0_fig1.py --quick         # small T and 2 seeds: a smoke run (tests use it)
    python scripts/s0_fig1.py --seeds 10 --horizon 2000 --backend processes
    python scripts/s0_fig1.py --seeds 1000:1010   # ten fresh seeds (1000..1009) instead of 0..N-1
    python scripts/s0_fig1.py --dry-run       # check the command and list what it would run; run nothing

A missing dataset or optional package ends a script with one `error:` message (the loader's: the
files needed and where to put them), not a traceback; so do a bad or unreachable `--address`, a Ray
cluster that cannot run the panel and a worker lost for good (`ctxbandits run`'s lines), and Ctrl-C
says how to resume. `--quick` refuses `--figures docs/figures`: a smoke run's figures must not
replace the published ones.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass, field
from pathlib import Path

from gym_ctxbandits.backends import WorkerDied
from gym_ctxbandits.cli import add_run_options, ray_options, run_comparison
from gym_ctxbandits.compare import check_comparison, check_device
from gym_ctxbandits.store import location
from gym_ctxbandits.config import Comparison
from gym_ctxbandits.datasets import DatasetCorrupt
from gym_ctxbandits.experiment import AgentSpec, EnvSpec, seed_list
from gym_ctxbandits.ray_backend import ClusterError, RayOptions, parse_address

QUICK_HORIZON, QUICK_SEEDS = 100, 2
PUBLISHED_FIGURES = Path(__file__).resolve().parents[1] / "docs" / "figures"  # the figures docs/*.md show


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


def main(script: str, panels: list[Panel], doc: str, argv: list[str] | None = None) -> None:
    """Parse the command line of `script` (its file stem) and run the chosen panels.

    The options of how and where to run are `ctxbandits run`'s (gym_ctxbandits.cli.add_run_options);
    each panel is one `Comparison` run by `gym_ctxbandits.cli.run_comparison`, as the command runs it.
    Every chosen panel is checked (`check_comparison`) before the first one runs; `--dry-run` stops there.
    """
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help=f"T={QUICK_HORIZON}, {QUICK_SEEDS} seeds: a smoke run")
    parser.add_argument("--panels", help="comma-separated panel names to run (default: all): "
                        + ", ".join(p.name for p in panels))
    parser.add_argument("--envs", help="comma-separated patterns: run only the envs whose title contains one "
                        "(e.g. 'dim=20'; titles look like CtxBandit/Logistic-v0(dim=20))")
    parser.add_argument("--figures", help="also copy each panel's regret.png to FIGURES/<script>_<panel>.png")
    parser.add_argument("--dry-run", action="store_true", help="check the command (panels, --envs, every env id, "
                        "env keyword and agent) and list the comparisons it would run, without running them")
    add_run_options(parser, backend="processes")
    parser.set_defaults(band="se", batch=10)
    args = parser.parse_args(argv)
    out = location(args.out or f"results/{script}{'-quick' if args.quick else ''}")   # a folder or a URI
    if args.quick and args.figures and Path(args.figures).resolve() == PUBLISHED_FIGURES:
        parser.exit(2, f"{script}: error: --quick would overwrite the published figures in docs/figures with a "
                    "smoke run's; give --figures another folder\n")
    chosen = args.panels.split(",") if args.panels else [p.name for p in panels]
    unknown = set(chosen) - {p.name for p in panels}
    if unknown:
        parser.error(f"unknown panels {sorted(unknown)}; choose from {[p.name for p in panels]}")
    try:  # --seeds as `ctxbandits run` takes it (N, A:B or 3,7,11), --device, --address and the Ray options
        seeds = None if args.seeds is None else seed_list(args.seeds, "--seeds")
        device = check_device(args.device or "cpu", "--device", cluster=args.backend == "ray")
        parse_address(args.address)
        RayOptions.of(ray_options(args))
    except ValueError as err:
        parser.exit(2, f"{parser.prog}: error: {err}\n")
    comparisons = []
    for panel in (p for p in panels if p.name in chosen):
        horizon = args.horizon or (QUICK_HORIZON if args.quick else panel.horizon)
        envs = panel.quick_envs if args.quick and panel.quick_envs else panel.envs
        if args.envs:
            patterns = args.envs.split(",")
            chosen_envs = [e for e in envs if any(p in e.title for p in patterns)]
            if not chosen_envs:
                parser.error(f"--envs {args.envs!r} matches none of panel {panel.name}'s envs: "
                             + ", ".join(e.title for e in envs))
            envs = chosen_envs
        comp = Comparison(envs=envs, agents=panel.quick_agents if args.quick and panel.quick_agents else panel.agents,
                          horizon=horizon, seeds=seeds or (QUICK_SEEDS if args.quick else panel.seeds),
                          log_every=args.log_every or max(1, horizon // 500), batch=args.batch,
                          out=str(out / panel.name), backend=args.backend, workers=args.workers, address=args.address,
                          device=device, ray=ray_options(args))
        try:  # every panel is checked before the first one runs (a typo in the last panel costs no hours)
            check_comparison(comp.envs, comp.agents, comp.seeds, comp.workers, comp.out, comp.device, comp.backend)
        except (ImportError, KeyError, ValueError) as err:
            parser.exit(2, f"{script}: error: panel {panel.name}: {err}\n")
        comparisons.append((panel, comp))
    if args.dry_run:
        for panel, comp in comparisons:
            print(f"{script} {panel.name}: {len(comp.envs)} envs x {len(comp.agents)} agents x {len(seed_list(comp.seeds))} seeds, "
                  f"T={comp.horizon}, into {comp.out}")
        parser.exit(0)   # nothing more: the scripts' own steps after main() (s1_fig2's reward figure) need results
    for panel, comp in comparisons:
        start = time.perf_counter()
        try:
            _, paths, text = run_comparison(comp, args.band, args.quiet)
        except (FileNotFoundError, ImportError, DatasetCorrupt) as err:  # a missing dataset or package: no traceback
            parser.exit(2, f"{script}: error: {type(err).__name__}: {err}\n")
        except (ClusterError, WorkerDied) as err:     # as `ctxbandits run` says them (gym_ctxbandits.cli.main)
            parser.exit(1, f"{script}: error: {err}\n")
        except KeyboardInterrupt:
            parser.exit(130, f"{script}: interrupted; the finished jobs' files are kept: run the same command again to "
                        "resume (finished jobs are not rerun)\n")
        print(f"\n## {script} {panel.name}: T={comp.horizon}, {len(seed_list(comp.seeds))} seeds, "
              f"{time.perf_counter() - start:.0f} s (finished jobs are not rerun)\n{text}")
        for note in panel.notes:
            print(f"- {note}")
        if args.figures:
            Path(args.figures).mkdir(parents=True, exist_ok=True)
            (Path(args.figures) / f"{script}_{panel.name}.png").write_bytes(paths[0].read_bytes())
