"""What the ranking and non-stationary reproductions share (scripts/kveton2015.py, lagree2016.py,
zong2016.py, russac2019.py, piecewise_bernoulli.py): the command line, one resumable comparison, mean ±
standard error cells and a report (a table of final regrets) written beside the results.

    python scripts/kveton2015.py                  # the documented size
    python scripts/kveton2015.py --quick          # a smoke run of a few seconds (tests use it)
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from _delayed import Clock, parse  # noqa: F401  (the reproductions' command line and clock, shared)

from gym_ctxbandits.compare import run


def out_folder(args, script: str) -> Path:
    """results/<script>[-quick] or --out; "script/part" is the subfolder `part` of the script's folder."""
    name, _, part = script.partition("/")
    return Path(args.out or f"results/{name}{'-quick' if args.quick else ''}") / part


def comparison(args, script: str, envs, agents) -> pd.DataFrame:
    """Every agent on every env for the seeds and horizon of `args` (100 logged rounds a run), with the
    env's kwargs as columns of their own (`kw_<name>`)."""
    table = run(envs, agents, seeds=args.seeds, horizon=args.horizon, out=out_folder(args, script),
                backend=args.backend, workers=args.workers, log_every=max(1, args.horizon // 100),
                progress=not args.quiet, batch=args.batch)
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
