"""Lagree, Vernade, Cappe (2016), "Multiple-play bandits in the position-based model", section 6, on the
KDD Cup 2012 click model, with the protocol of Gauthier, Gaudel, Fromont, Lompo (2021), "Parametric graph
for unimodal ranking bandit" (GRAB), section 5: the 8 queries' position-based models (3 positions, kappas
about 1, 0.48, 0.33), T = 10^5, 20 runs a query, the regret curves merged over queries and runs.

The env is CtxBandit/PBMKDD-v0 (`query=0..7`, read from $CTXBANDITS_DATA/ranking/param_KDD.json;
docs/ranking.md). The agents: PBM-UCB and PBM-PIE (Lagree et al., which know the kappas; the runner
passes the env's), TopRank (Lattimore et al. 2018, which does not need them) and CascadeKL-UCB (Kveton
et al. 2015, a cascade model's agent on PBM clicks). The order checked: PBM-PIE at or below PBM-UCB
(Lagree et al.'s Figure 3), both below TopRank and CascadeKL-UCB on this short list (GRAB's Figure 2
and Table 2 report PBM-PIE best of these on KDD). The papers' figures are read off plots, not tables, so
the comparison is of orders, not numbers.

    python scripts/lagree2016.py                  # T = 100,000, 20 seeds a query, 8 queries
    python scripts/lagree2016.py --quick          # T = 2,000, 2 seeds, 2 queries (a smoke run; tests use it)
"""

from __future__ import annotations

from _tables import Clock, cell, comparison, parse, report

from gym_ctxbandits.jobs import EnvSpec

AGENTS = ["PBM-PIE", "PBM-UCB", "TopRank", "CascadeKL-UCB"]
QUERIES = 8


def main(argv=None) -> str:
    args = parse(__doc__, horizon=100_000, seeds=20, quick_horizon=2_000, argv=argv)
    clock, n = Clock(), args.horizon
    queries = range(2 if args.quick else QUERIES)
    table = comparison(args, "lagree2016", [EnvSpec("CtxBandit/PBMKDD-v0", {"query": q}) for q in queries], AGENTS)
    final = table[table["round"] == n]
    merged = final.groupby("agent")["cum_regret"]
    rows = ["| agent | regret, merged over queries and runs | " + " | ".join(f"query {q}" for q in queries) + " |",
            "|---|---|" + "---|" * len(queries)]
    per_query = final.groupby(["agent", "kw_query"])["cum_regret"].mean()
    for a in sorted(AGENTS, key=lambda a: merged.mean()[a]):
        rows.append(f"| {a} | {cell(merged.get_group(a))} | " +
                    " | ".join(f"{per_query[a, q]:,.1f}" for q in queries) + " |")
    text = (f"Final regret at T = {n:,} (mean ± standard error over the {len(queries)} queries x "
            f"{len(args.seeds)} runs; then each query's mean), best first:\n\n" + "\n".join(rows))
    return report(args, "lagree2016", "Lagree et al. 2016 / GRAB's protocol on KDD Cup 2012", text, clock)


if __name__ == "__main__":
    main()
