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

from _tables import Clock, cell, comparison, parse, report

from gym_ctxbandits.jobs import EnvSpec

AGENTS = ["CascadeUCB1", "CascadeKL-UCB"]
ITEMS, POSITIONS = (16, 32, 64), (2, 4, 8)


def main(argv=None) -> str:
    args = parse(__doc__, horizon=100_000, seeds=10, quick_horizon=2_000, argv=argv)
    clock, n = Clock(), args.horizon
    envs = [EnvSpec("CtxBandit/CascadeBLB-v0", {"num_items": L, "num_positions": K})
            for L in (ITEMS[:1] if args.quick else ITEMS) for K in POSITIONS]
    table = comparison(args, "kveton2015", envs, AGENTS)
    final = table[table["round"] == n].groupby(["kw_num_items", "kw_num_positions", "agent"])["cum_regret"]
    rows = ["| L | K | CascadeUCB1 | CascadeKL-UCB | KL-UCB / UCB1 |", "|---|---|---|---|---|"]
    for env in envs:
        L, K = env.kwargs["num_items"], env.kwargs["num_positions"]
        ucb, kl = (final.get_group((L, K, a)).to_numpy() for a in AGENTS)
        rows.append(f"| {L} | {K} | {cell(ucb)} | {cell(kl)} | {kl.mean() / ucb.mean():.2f} |")
    # log n: the regret added by each tenfold of n, on the first problem (L = 16, K = 2)
    first = table[(table["kw_num_items"] == 16) & (table["kw_num_positions"] == 2)]
    marks = [m for m in (n // 100, n // 10, n) if m in set(first["round"])]
    growth = ["| agent | " + " | ".join(f"regret at {m:,}" for m in marks) + " |", "|---" * (len(marks) + 1) + "|"]
    for a in AGENTS:
        mine = first[first["agent"] == a].groupby("round")["cum_regret"].mean()
        growth.append(f"| {a} | " + " | ".join(f"{mine[m]:,.1f}" for m in marks) + " |")
    text = ("Final regret (mean ± standard error over seeds):\n\n" + "\n".join(rows) +
            "\n\nGrowth with n on BLB(16, 2) (mean over seeds):\n\n" + "\n".join(growth))
    return report(args, "kveton2015", "Kveton et al. 2015, section 6.1: BLB(L, K, 0.2, 0.15)", text, clock)


if __name__ == "__main__":
    main()
