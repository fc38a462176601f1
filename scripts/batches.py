"""Batched feedback: regret against the number of batches M (Gao, Han, Ren, Zhou 2019, "Batched
multi-armed bandits problem").

The agents learn only at the ends t_1 < ... < t_M = T of M batches on the minimax grid
(t_j = floor(a^(2 - 2^(1-j))), a = T^(1 / (2 - 2^(1-M))); the run loop's `batch_grid="minimax:M"`).
Gao et al. show that M = O(log log T) batches reach the fully online minimax rate; log2 log2 T is
about 3.8 at T = 2 x 10^4. The env is a stationary 10-armed Bernoulli bandit:
CtxBandit/RetiringItems-v0 with retire_prob=0 (Beta(4, 4) click probabilities, one-hot arms, so
LinUCB and LinTS are per-arm UCB and Thompson sampling, with c11_table1.py's settings: sigma = 1/2,
LinUCB's alpha = 1/2). BaSE, batched successive elimination, runs on the same grid (its own M and
horizon): the feedback batches cost it nothing. "online" is every reward at once (no BaSE: it
needs a grid).

    python scripts/batches.py                    # T = 20,000, 10 seeds
    python scripts/batches.py --quick            # smoke run
    python scripts/batches.py --figures docs/figures   # also copy the figure there (batches.png)
"""

import shutil
from pathlib import Path

from _delayed import A, Clock, E, cell, final, parse, report, sweep

MS = (2, 3, 4, 5, 6)
UCB, TS = A("LinUCB", "UCB (LinUCB)", sigma=0.5, alpha=0.5), A("LinTS", "TS (LinTS)", sigma=0.5)


def plot(res, online, out: Path) -> Path:
    """Final regret against M per agent (mean ± se), the online runs as dashed lines."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5.5, 3.8))
    for i, (agent, g) in enumerate(res.groupby("agent", sort=False)):
        ax.errorbar(g["x"], g["mean"], yerr=g["sem"], marker="o", capsize=3, color=f"C{i}", label=f"{agent}, M batches")
        if agent in online.index:
            ax.axhline(online.loc[agent, "mean"], ls="--", color=f"C{i}", label=f"{agent}, online")
    ax.set(xlabel="number of batches M (minimax grid)", ylabel="final regret", yscale="log", xticks=list(MS))
    ax.grid(alpha=0.3)
    ax.legend(fontsize="small")
    fig.tight_layout()
    path = out / "batches.png"
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def main(argv=None):
    figures = ("--figures", dict(help="also copy the figure to FIGURES/batches.png"))
    args = parse(__doc__, horizon=20_000, seeds=10, quick_horizon=300, argv=argv, options=[figures])
    clock = Clock()
    T = args.horizon
    env = E("CtxBandit/RetiringItems-v0", retire_prob=0.0, dim=10)
    models = {"online": None, **{M: {"batch_grid": f"minimax:{M}"} for M in MS}}
    agents = lambda x: [UCB, TS] if x == "online" else [A("BaSE", "BaSE", horizon=T, M=x), UCB, TS]   # noqa: E731
    res = final(sweep(args, "batches", [env], agents, models))
    online, batched = res[res["x"] == "online"].set_index("agent"), res[res["x"] != "online"]
    names = list(dict.fromkeys(batched["agent"]))
    rows = ["| M | " + " | ".join(names) + " |", "|---|" + "---|" * len(names)]
    for M, g in batched.groupby("x", sort=False):
        got = g.set_index("agent")
        rows.append(f"| {M} | " + " | ".join(cell(*got.loc[n, ["mean", "sem"]]) for n in names) + " |")
    rows.append("| online | — | " + " | ".join(cell(*online.loc[n, ["mean", "sem"]]) for n in names[1:]) + " |")
    out = Path(args.out or f"results/batches{'-quick' if args.quick else ''}")
    path = plot(batched, online, out)
    if args.figures:
        Path(args.figures).mkdir(parents=True, exist_ok=True)
        shutil.copy(path, Path(args.figures) / "batches.png")
    report(args, "batches", "Final regret against the number of batches M (minimax grid)", "\n".join(rows), clock)


if __name__ == "__main__":
    main()
