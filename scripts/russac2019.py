"""Russac, Vernade, Cappé (2019), "Weighted linear bandits for non-stationary environments", section 5,
Figures 1 (abrupt changes) and 2 (slow changes): D-LinUCB against LinUCB, dLinUCB, SW-LinUCB and, in
the abrupt setting, LinUCB restarted at the true change points; 100 runs, T = 6,000.

The envs are CtxBandit/RussacAbrupt-v0 and RussacSlow-v0 (docs/nonstationary.md: d = 2, 50 arms a round
in the unit ball, sigma = 1; theta* jumps at rounds 1002, 2002 and 3002, or turns by pi/2 over the first
3,000 rounds). The agents take the paper's parameters (lambda = 0.1, delta = 0.01, S = 1, sigma = 1, L
= 1): D-LinUCB gamma = 0.99412 and SW-LinUCB tau = 170 in the abrupt setting, gamma = 0.99742 and tau =
388 in the slow one (their notebooks'). "LinUCB" is theirs: D-LinUCB with gamma = 1 (their closed-form
radius; the zoo's LinUCB uses the log-determinant one), and "LinUCB-OR" restarts it at the change points.
The paper's values are read off its figures (final regret, about): abrupt LinUCB 4,150, dLinUCB 2,650,
D-LinUCB 980, SW-LinUCB 740, LinUCB-OR 150; slow dLinUCB 1,500, LinUCB 1,440, SW-LinUCB 290, D-LinUCB 230.

    python scripts/russac2019.py                  # T = 6,000, 100 seeds, both settings, and their figures
    python scripts/russac2019.py --quick          # T = 2,000, 2 seeds (a smoke run; tests use it)
"""

from __future__ import annotations

from _tables import Clock, cell, comparison, out_folder, parse, report

from gym_ctxbandits.jobs import AgentSpec, EnvSpec
from gym_ctxbandits.plots import plot_regret

RADIUS = {"lam": 0.1, "delta": 0.01, "S": 1.0, "sigma": 1.0, "L": 1.0}
SETTINGS = {"abrupt": (0.99412, 170), "slow": (0.99742, 388)}           # (D-LinUCB's gamma, SW-LinUCB's tau)
PAPER = {"abrupt": {"LinUCB": 4150, "dLinUCB": 2650, "D-LinUCB": 980, "SW-LinUCB": 740, "LinUCB-OR": 150},
         "slow": {"dLinUCB": 1500, "LinUCB": 1440, "SW-LinUCB": 290, "D-LinUCB": 230}}
CHANGES = (1002, 2002, 3002)


def agents(setting: str) -> list[AgentSpec]:
    gamma, tau = SETTINGS[setting]
    linucb = {"gamma": 1.0, **RADIUS}
    return [AgentSpec("D-LinUCB", linucb, "LinUCB"), AgentSpec("dLinUCB", {"lam": 0.1, "delta": 0.01}),
            AgentSpec("D-LinUCB", {"gamma": gamma, **RADIUS}), AgentSpec("SW-LinUCB", {"window": tau, **RADIUS}),
            *([AgentSpec("Oracle-Restart", {"base": "D-LinUCB", "base_kwargs": linucb, "change_points": CHANGES},
                         "LinUCB-OR")] if setting == "abrupt" else [])]


def main(argv=None) -> str:
    args = parse(__doc__, horizon=6_000, seeds=100, quick_horizon=2_000, argv=argv)
    clock, parts = Clock(), []
    for setting in SETTINGS:
        env = EnvSpec(f"CtxBandit/Russac{setting.title()}-v0")
        table = comparison(args, f"russac2019/{setting}", [env], agents(setting))
        plot_regret(table, out_folder(args, f"russac2019/{setting}"), band="se")
        final = table[table["round"] == args.horizon].groupby("agent", sort=False)["cum_regret"]
        rows = ["| agent | final regret | the paper's at T = 6,000 (read off its figure) |", "|---|---|---|"]
        for agent, values in sorted(final, key=lambda kv: -kv[1].mean()):
            rows.append(f"| {agent} | {cell(values)} | {PAPER[setting].get(agent, '—'):,} |")
        parts.append(f"{setting.title()} changes (CtxBandit/Russac{setting.title()}-v0), mean ± standard error "
                     "over seeds:\n\n" + "\n".join(rows))
    return report(args, "russac2019", "Russac et al. 2019, Figures 1 and 2", "\n\n".join(parts), clock)


if __name__ == "__main__":
    main()
