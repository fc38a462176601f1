"""What the ranking and non-stationary reproductions share (scripts/kveton2015.py, lagree2016.py,
zong2016.py, russac2019.py, piecewise_bernoulli.py): the command line, one resumable comparison, mean ±
standard error cells and a report (a table of final regrets) written beside the results.

    python scripts/kveton2015.py                  # the documented size
    python scripts/kveton2015.py --quick          # a smoke run of a few seconds (tests use it)
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import pandas as pd

from _delayed import Clock  # noqa: F401  (the reproductions' wall and CPU clock, shared)

from gym_ctxbandits.compare import run
from gym_ctxbandits.jobs import seed_list


def parse(doc: str, horizon: int, seeds: int, quick_horizon: int, argv=None) -> argparse.Namespace:
    """The scripts' options; `args.horizon` and `args.seeds` resolved (--quick: `quick_horizon`, 2 seeds)."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help=f"T = {quick_horizon:,}, 2 seeds, fewer problems: a "
                        "smoke run")
    parser.add_argument("--seeds", help=f"N (0..N-1), A:B or 3,7,11 (default {seeds})")
    parser.add_argument("--horizon", type=int, help=f"rounds T (default {horizon:,})")
    parser.add_argument("--out", help="results folder (default results/<script>[-quick])")
    parser.add_argument("--backend", choices=["inprocess", "processes"], default="processes")
    parser.add_argument("--workers", type=int, help="processes for --backend processes (default: all cores)")
    parser.add_argument("--quiet", action="store_true", help="no progress bars")
    args = parser.parse_args(argv)
    args.horizon = args.horizon or (quick_horizon if args.quick else horizon)
    try:
        args.seeds = seed_list(args.seeds or (2 if args.quick else seeds), "--seeds")
    except ValueError as err:
        parser.exit(2, f"{parser.prog}: error: {err}\n")
    return args


def out_folder(args, script: str) -> Path:
    """results/<script>[-quick] or --out; "script/part" is the subfolder `part` of the script's folder."""
    name, _, part = script.partition("/")
    return Path(args.out or f"results/{name}{'-quick' if args.quick else ''}") / part


def comparison(args, script: str, envs, agents) -> pd.DataFrame:
    """Every agent on every env for the seeds and horizon of `args` (100 logged rounds a run), with the
    env's kwargs as columns of their own (`kw_<name>`)."""
    table = run(envs, agents, seeds=args.seeds, horizon=args.horizon, out=out_folder(args, script),
                backend=args.backend, workers=args.workers, log_every=max(1, args.horizon // 100),
                progress=not args.quiet)
    kwargs = pd.DataFrame(list(table["env_kwargs"].map(json.loads)), index=table.index).add_prefix("kw_")
    return pd.concat([table, kwargs], axis=1)


def cell(values) -> str:
    """mean ± standard error over the seeds (the mean alone for one seed)."""
    values = np.asarray(values, float)
    se = values.std(ddof=1) / np.sqrt(len(values)) if len(values) > 1 else float("nan")
    return f"{values.mean():,.1f} ± {se:,.1f}" if np.isfinite(se) else f"{values.mean():,.1f}"


def report(args, script: str, title: str, text: str, clock: Clock) -> str:
    """The report: a title with T, seeds and cost, then `text`; printed and written to <out>/<script>.md."""
    body = f"## {title}\n\nT = {args.horizon:,}, {len(args.seeds)} seeds; {clock}\n\n{text}\n"
    out = out_folder(args, script)
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{script}.md").write_text(body)
    print("\n" + body)
    return body
