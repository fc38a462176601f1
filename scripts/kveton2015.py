"""Kveton, Szepesvari, Wen, Ashkan (2015), "Cascading bandits: learning to rank in the cascade model",
section 6.1: CascadeUCB1 and CascadeKL-UCB on the BLB(L, K, p = 0.2, Delta = 0.15) problems, L in {16, 32,
64} items and K in {2, 4, 8} positions, n = 10^5 steps.

The env is CtxBandit/CascadeBLB-v0 (docs/ranking.md): the first K items attract with p = 0.2, the other
L - K with p - Delta = 0.05; the user clicks the first attractive item of the list. The claims checked:
CascadeKL-UCB's regret at or below CascadeUCB1's on every problem; regret growing with L (the bounds are
O((L - K) / Delta log n)); and regret growing like log n (about the same regret added by each tenfold
of n once the start is behind). The paper's numbers themselves (its Table 1) are not in the stored
copies this project can read, so the table sets the two agents and the problems against each other.

    python scripts/kveton2015.py                  # n = 100,000, 10 seeds, the 9 problems
    python scripts/kveton2015.py --quick          # n = 2,000, 2 seeds, L = 16 only (a smoke run; tests use it)
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import numpy as np

from gym_ctxbandits.compare import run
from gym_ctxbandits.jobs import EnvSpec, seed_list

AGENTS = ["CascadeUCB1", "CascadeKL-UCB"]
ITEMS, POSITIONS = (16, 32, 64), (2, 4, 8)


def parse(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="n = 2,000, 2 seeds, L = 16: a smoke run")
    parser.add_argument("--seeds", help="N (0..N-1), A:B or 3,7,11 (default 10)")
    parser.add_argument("--horizon", type=int, help="steps n (default 100,000)")
    parser.add_argument("--out", help="results folder (default results/kveton2015[-quick])")
    parser.add_argument("--backend", choices=["inprocess", "processes"], default="processes")
    parser.add_argument("--workers", type=int, help="processes for --backend processes (default: all cores)")
    parser.add_argument("--quiet", action="store_true", help="no progress bars")
    args = parser.parse_args(argv)
    args.horizon = args.horizon or (2_000 if args.quick else 100_000)
    try:
        args.seeds = seed_list(args.seeds or (2 if args.quick else 10), "--seeds")
    except ValueError as err:
        parser.exit(2, f"{parser.prog}: error: {err}\n")
    return args


def cell(values: np.ndarray) -> str:
    """mean ± standard error of the final regrets of the seeds."""
    se = values.std(ddof=1) / np.sqrt(len(values)) if len(values) > 1 else float("nan")
    return f"{values.mean():,.1f} ± {se:,.1f}"


def main(argv=None) -> str:
    args = parse(argv)
    out = Path(args.out or f"results/kveton2015{'-quick' if args.quick else ''}")
    wall, cpu0 = time.perf_counter(), sum(os.times()[:4])
    envs = [EnvSpec("CtxBandit/CascadeBLB-v0", {"num_items": L, "num_positions": K})
            for L in (ITEMS[:1] if args.quick else ITEMS) for K in POSITIONS]
    n = args.horizon
    table = run(envs, AGENTS, seeds=args.seeds, horizon=n, out=out, backend=args.backend, workers=args.workers,
                log_every=max(1, n // 100), progress=not args.quiet)
    settings = table["env_kwargs"].map(json.loads)
    table = table.assign(L=settings.map(lambda kw: kw["num_items"]), K=settings.map(lambda kw: kw["num_positions"]))
    final = table[table["round"] == n].groupby(["L", "K", "agent"])["cum_regret"]
    rows = ["| L | K | CascadeUCB1 | CascadeKL-UCB | KL-UCB / UCB1 |", "|---|---|---|---|---|"]
    for env in envs:
        L, K = env.kwargs["num_items"], env.kwargs["num_positions"]
        ucb, kl = (final.get_group((L, K, a)).to_numpy() for a in AGENTS)
        rows.append(f"| {L} | {K} | {cell(ucb)} | {cell(kl)} | {kl.mean() / ucb.mean():.2f} |")
    # log n: the regret added by each tenfold of n, on the first problem (L = 16, K = 2)
    first = table[(table["L"] == 16) & (table["K"] == 2)]
    marks = [m for m in (n // 100, n // 10, n) if m in set(first["round"])]
    growth = ["| agent | " + " | ".join(f"regret at {m:,}" for m in marks) + " |", "|---" * (len(marks) + 1) + "|"]
    for a in AGENTS:
        mine = first[first["agent"] == a].groupby("round")["cum_regret"].mean()
        growth.append(f"| {a} | " + " | ".join(f"{mine[m]:,.1f}" for m in marks) + " |")
    cost = f"{time.perf_counter() - wall:.0f} s wall, {sum(os.times()[:4]) - cpu0:.0f} CPU-s (this process's)"
    text = (f"## Kveton et al. 2015, section 6.1: n = {n:,}, {len(args.seeds)} seeds; {cost}\n\n"
            "Final regret (mean ± standard error over seeds):\n\n" + "\n".join(rows) +
            "\n\nGrowth with n on BLB(16, 2):\n\n" + "\n".join(growth) + "\n")
    out.mkdir(parents=True, exist_ok=True)
    (out / "kveton2015.md").write_text(text)
    print("\n" + text)
    return text


if __name__ == "__main__":
    main()
