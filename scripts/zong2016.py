"""Zong, Ni, Sung, Ke, Wen, Kveton (2016), "Cascading bandits for large-scale recommendation problems",
section 5: the linear cascading agents (CascadeLinUCB, CascadeLinTS), which learn one theta* in d
dimensions from the items' features, against the non-contextual ones (CascadeUCB1, CascadeKL-UCB), which
learn each item's attraction on its own, as the number of items L grows.

The env is CtxBandit/ContextualCascade-v0 (docs/ranking.md): the cascade model with attractions
x_e^T theta*, K = 4 positions, d = 20 features, L in {100, 400, 1600}. The paper's experiments use
features built from real data (MovieLens, Million Song, restaurant logs), which this project does not
ship; the claim checked is their direction: the linear agents' regret is far below the non-contextual
agents' and nearly flat in L, while the non-contextual agents' grows with L (each item must be tried).

    python scripts/zong2016.py                  # T = 20,000, 10 seeds, L = 100, 400, 1600
    python scripts/zong2016.py --quick          # T = 2,000, 2 seeds, L = 100 (a smoke run; tests use it)
"""

from __future__ import annotations

from _tables import Clock, cell, comparison, parse, report

from gym_ctxbandits.jobs import EnvSpec

AGENTS = ["CascadeLinUCB", "CascadeLinTS", "CascadeUCB1", "CascadeKL-UCB"]
ITEMS = (100, 400, 1600)


def main(argv=None) -> str:
    args = parse(__doc__, horizon=20_000, seeds=10, quick_horizon=2_000, argv=argv)
    clock, n = Clock(), args.horizon
    items = ITEMS[:1] if args.quick else ITEMS
    table = comparison(args, "zong2016", [EnvSpec("CtxBandit/ContextualCascade-v0", {"num_items": L}) for L in items],
                       AGENTS)
    final = table[table["round"] == n].groupby(["agent", "kw_num_items"])["cum_regret"]
    rows = ["| agent | " + " | ".join(f"L = {L:,}" for L in items) + " |", "|---|" + "---|" * len(items)]
    for a in AGENTS:
        rows.append(f"| {a} | " + " | ".join(cell(final.get_group((a, L))) for L in items) + " |")
    text = (f"Final regret at T = {n:,} (mean ± standard error over seeds), K = 4, d = 20:\n\n" + "\n".join(rows))
    return report(args, "zong2016", "Zong et al. 2016: linear against non-contextual cascading bandits", text, clock)


if __name__ == "__main__":
    main()
