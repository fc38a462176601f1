"""Write gym_ctxbandits/bench/suites/pmlb-v1.toml: the Contextual Bandit Bake-off's track (Bietti,
Agarwal, Langford 2021), every PMLB classification set of `gym_ctxbandits.datasets.pmlb_sets()` as a
cell (docs/bench_pmlb.md).

Each set is `CtxBandit/Supervised-v0` with `source="pmlb:NAME"` and `preset="cb-bakeoff"` (one shuffled
pass per seed, rewards 1/0, raw features), for T = min(rows, CAP) rounds: the pass's first T rows.
Sets where K d > MAX_KD (K classes, d features: the arm features are K x K d, and a linear agent's
round costs about K (K d)^2) are dropped, each with its reason in the file. Every 4th remaining set,
in `pmlb_sets()` order (by name), the first included, is held out for tuning (`[[tune_cells]]`:
`bench tune` plays those, no track does); the others are the report track's cells.
A test keeps the shipped file equal to this script's output.

    python scripts/make_pmlb_suite.py           # rewrite the suite file
    python scripts/make_pmlb_suite.py --check   # exit 1 if the file is not this output
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from gym_ctxbandits.datasets import pmlb_sets

OUT = Path(__file__).resolve().parents[1] / "gym_ctxbandits" / "bench" / "suites" / "pmlb-v1.toml"
CAP = 2000             # rounds: LinUCB's report track within 20 minutes on 2 cores (docs/bench_pmlb.md)
MAX_KD = 900           # K d of the arm features; above it, dropped
TUNE_EVERY = 4         # every 4th set (by name, the first included) held out for tuning
SIZES = ((1000, "small"), (10000, "medium"), (None, "large"))      # by the set's rows: < 1,000, < 10,000, more

HEADER = f"""\
# The Contextual Bandit Bake-off's track (Bietti, Agarwal, Langford 2021; docs/bench_pmlb.md), written by
# scripts/make_pmlb_suite.py: never edit it by hand (a test keeps the two equal), and never change what
# decides a released version's numbers (a cell's env, kwargs or horizon, the seeds): that is pmlb-v2.
# Every PMLB classification set of gym_ctxbandits.datasets.pmlb_sets() but those dropped below, one
# shuffled pass per seed (preset "cb-bakeoff": rewards 1/0, raw features), cut to its first
# T = min(rows, {CAP:,}) rows. Every {TUNE_EVERY}th set by name (the first included) is held out for
# tuning ([[tune_cells]]: `bench tune` plays them on the tune seeds, no track plays them); the others are
# the report track's cells.
"""


def size(rows: int) -> str:
    return next(name for limit, name in SIZES if limit is None or rows < limit)


def plan() -> tuple[list[dict], list[dict], list[tuple[str, str]]]:
    """(report cells, tune cells, dropped (name, reason)) from the shipped list of sets."""
    report, held, dropped = [], [], []
    kept = 0
    for s in pmlb_sets().itertuples(index=False):
        kd = s.features * s.classes
        if s.classes < 2:
            dropped.append((s.name, "a single class"))
            continue
        if kd > MAX_KD:
            dropped.append((s.name, f"K d = {s.classes} x {s.features:,} = {kd:,} > {MAX_KD}: arm features of "
                                    f"{s.classes} x {kd:,}, too costly for a linear agent's report track"))
            continue
        horizon = min(s.rows, CAP)
        cut = f", its first {horizon:,} rows" if horizon < s.rows else ""
        cell = {"id": s.name, "horizon": horizon, "source": f"pmlb:{s.name}",
                "tags": ["real-data", "binary" if s.classes == 2 else "multiclass", size(s.rows)],
                "why": f"{s.rows:,} rows x {s.features} features, {s.classes} classes; one shuffled pass{cut}"}
        (held if kept % TUNE_EVERY == 0 else report).append(cell)
        kept += 1
    return report, held, dropped


def _cell(table: str, c: dict) -> str:
    return (f'[[{table}]]\nid = "{c["id"]}"\nenv = "CtxBandit/Supervised-v0"\n'
            f'kwargs = {{ source = "{c["source"]}", preset = "cb-bakeoff" }}\nhorizon = {c["horizon"]}\n'
            f'tags = [{", ".join(f"{t!r}" for t in c["tags"])}]\nwhy = "{c["why"]}"\n'.replace("'", '"'))


def text() -> str:
    report, held, dropped = plan()
    lines = [HEADER, 'name = "pmlb"', "version = 1",
             f'description = "The Contextual Bandit Bake-off\'s datasets: {len(report)} PMLB classification sets '
             f'played as bandits, one shuffled pass each of at most {CAP:,} rows, rewards 1/0; {len(held)} more held '
             'out for tuning."',
             'tune_seeds = "0:10"', 'report_seeds = "1000:1010"', "quick = { horizon = 20, seeds = 2 }",
             "horizon_to_agents = true", "",
             f"# Dropped ({len(dropped)}):"]
    lines += [f"#   {name}: {reason}" for name, reason in dropped]
    lines += ["", f"# The report track's cells ({len(report)})", ""]
    lines += [_cell("cells", c) for c in report]
    lines += [f"# Held out for tuning ({len(held)})", ""]
    lines += [_cell("tune_cells", c) for c in held]
    return "\n".join(lines).rstrip("\n") + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the suite file is not this output")
    args = parser.parse_args(argv)
    new = text()
    if args.check:
        if not OUT.exists() or OUT.read_text() != new:
            print(f"{OUT} is not scripts/make_pmlb_suite.py's output: run it", file=sys.stderr)
            return 1
        return 0
    OUT.write_text(new)
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
