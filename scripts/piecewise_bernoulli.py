"""The change-detecting agents against their stationary bases and the oracle restart, on the
piecewise-stationary Bernoulli problem of issue 51 (CtxBandit/PiecewiseBernoulli-v0: 3 arms, T = 2,000,
a change every 400 rounds, the segments' means [.2, .5, .9], [.2, .2, .9], [.2, .2, .1], [.7, .2, .1],
[.7, .5, .1]; SMPyBandits' configuration, on which Besson et al. 2022 and Cao et al. 2019 compare them).

CUSUM-UCB (Liu et al. 2018) and M-UCB (Cao et al. 2019) restart UCB1, GLR-klUCB (Besson et al. 2022)
restarts kl-UCB; Oracle-Restart restarts UCB1 at the true change points; D-UCB, SW-UCB, D-TS and SW-TS
forget instead of detecting. Every agent plays its registered defaults (their theory settings from
horizon = 10,000 and 5 changes, where they read them; docs/nonstationary.md).

    python scripts/piecewise_bernoulli.py                  # T = 2,000, 100 seeds
    python scripts/piecewise_bernoulli.py --quick          # T = 2,000, 2 seeds (a smoke run; tests use it)
"""

from __future__ import annotations

from _tables import Clock, cell, comparison, out_folder, parse, report

from gym_ctxbandits.jobs import AgentSpec, EnvSpec
from gym_ctxbandits.plots import plot_regret

CHANGES = (401, 801, 1201, 1601)
AGENTS = [AgentSpec("UCB1"), AgentSpec("kl-UCB"), AgentSpec("TS"), AgentSpec("CUSUM-UCB"), AgentSpec("M-UCB"),
          AgentSpec("GLR-klUCB"), AgentSpec("D-UCB"), AgentSpec("SW-UCB"), AgentSpec("D-TS"), AgentSpec("SW-TS"),
          AgentSpec("Oracle-Restart", {"base": "UCB1", "change_points": CHANGES}), AgentSpec("Random")]


def main(argv=None) -> str:
    args = parse(__doc__, horizon=2_000, seeds=100, quick_horizon=2_000, argv=argv)
    clock = Clock()
    table = comparison(args, "piecewise_bernoulli", [EnvSpec("CtxBandit/PiecewiseBernoulli-v0")], AGENTS)
    plot_regret(table, out_folder(args, "piecewise_bernoulli"), band="se")
    final = table[table["round"] == args.horizon].groupby("agent", sort=False)["cum_regret"]
    rows = ["| agent | final regret |", "|---|---|"]
    rows += [f"| {agent} | {cell(values)} |" for agent, values in sorted(final, key=lambda kv: kv[1].mean())]
    text = "Final dynamic regret, mean ± standard error over seeds, best first:\n\n" + "\n".join(rows)
    return report(args, "piecewise_bernoulli", "Change detection on a piecewise-stationary Bernoulli problem",
                  text, clock)


if __name__ == "__main__":
    main()
