"""The price of delay: the extra regret R(T, D) - R(T, 0) of LinUCB and LinTS against the delay D and T.

In a stochastic problem, delay adds regret rather than multiplying it (Joulani, Gyorgy, Szepesvari
2013, "Online learning under delayed feedback": an additive term of the order of the expected delay,
for UCB K-armed E[D] times the sum of the gaps): so R(T, D) - R(T, 0) should grow about linearly in
D and barely with T. The env is CtxBandit/Linear-v0 ([S0] 7.1: K = 50 fixed unit-norm arms in
d = 20, Gaussian noise of sd 0.5), the agents LinUCB and LinTS with sigma = 0.5, the delay fixed
(`fixed:D`, mean D; a fixed delay reaches every seed at once, so the seeds run as one batched agent).
The same seeds run at every D (common random numbers), so each difference is taken seed by seed.
R(T, D) is read at T = H/4, H/2 and H of one run of H rounds: regret is counted when the agent acts,
so a run's first T rounds are the run of horizon T.

    python scripts/delay_regret.py               # H = 10,000, 20 seeds
    python scripts/delay_regret.py --quick       # smoke run
"""

from _delayed import A, Clock, E, cell, parse, report, sweep

DELAYS = (0, 10, 30, 100, 300, 1000)


def main(argv=None):
    args = parse(__doc__, horizon=10_000, seeds=20, quick_horizon=400, argv=argv)
    clock = Clock()
    H = args.horizon
    times = (H // 4, H // 2, H)
    agents = [A("LinUCB", "LinUCB", sigma=0.5), A("LinTS", "LinTS", sigma=0.5)]
    delays = DELAYS if not args.quick else DELAYS[:3]
    table = sweep(args, "delay_regret", [E("CtxBandit/Linear-v0")], agents,
                  {d: {"delay": f"fixed:{d}"} if d else None for d in delays}, log_every=H // 4)
    regret = table[table["round"].isin(times)].pivot_table(index=["agent", "seed", "round"], columns="x",
                                                           values="cum_regret")
    extra = regret.sub(regret[0], axis=0).drop(columns=0)       # R(T, D) - R(T, 0), seed by seed
    stats = extra.groupby(["agent", "round"]).agg(["mean", "sem"])
    base = regret[0].groupby(["agent", "round"]).agg(["mean", "sem"])
    head = " | ".join(f"D = {d}" for d in delays[1:])
    rows = [f"| agent | T | R(T, 0) | {head} | extra / D at D = {delays[-1]} |", "|---|---|---|" + "---|" * len(delays)]
    for (agent, T), row in stats.iterrows():
        cells = " | ".join(cell(row[(d, "mean")], row[(d, "sem")]) for d in delays[1:])
        rows.append(f"| {agent} | {T:,} | {cell(*base.loc[(agent, T)])} | {cells} | "
                    f"{row[(delays[-1], 'mean')] / delays[-1]:.2f} |")
    report(args, "delay_regret", "Extra regret R(T, D) - R(T, 0) under a fixed delay of D rounds (mean ± se over "
           "seeds, differences taken seed by seed)", "\n".join(rows), clock)


if __name__ == "__main__":
    main()
