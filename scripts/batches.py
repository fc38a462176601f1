"""Batched feedback: regret against the number of batches M (Gao, Han, Ren, Zhou 2019, "Batched
multi-armed bandits problem").

The agents learn only at the ends t_1 < ... < t_M = T of M batches on the minimax grid
(t_j = floor(a^(2 - 2^(1-j))), a = T^(1 / (2 - 2^(1-M))); the run loop's `batch_grid="minimax:M"`).
Gao et al. show that M = O(log log T) batches reach the fully online minimax rate; log2 log2 T is
about 3.8 at T = 2 x 10^4. BaSE, batched successive elimination, runs on the same grid (its own M
and horizon): the feedback batches cost it nothing. "online" is every reward at once (no BaSE: it
needs a grid). Two instances, 10 arms with Bernoulli rewards, one-hot features (so LinUCB and LinTS
are per-arm UCB and Thompson sampling, with c11_table1.py's settings: sigma = 1/2, LinUCB's alpha = 1/2):

- "beta": CtxBandit/RetiringItems-v0 with retire_prob=0, Beta(4, 4) click rates (gaps of a few
  hundredths). BaSE with its defaults (gamma = 4, sigma = 1: unit-variance noise, as in the paper)
  and with sigma = 1/2 (a click's largest standard deviation); batched UCB and TS.
- "gaps": one best arm of mean 0.5 + gap, nine of mean 0.5, gap in {0.05, 0.1, 0.2} (Gao et al.'s
  experiments have gaps of this order; their exact instance we could not consult), the best arm's
  slot drawn per seed (`Batches/GapBernoulli-v0`, registered by this script), `--gap-seeds` seeds.
  BaSE with sigma = 1/2 and gamma = 4 (the default: the threshold is sqrt(2 log(TK)) = 4.9 standard
  deviations of the difference of two arms' means) or gamma = 1 (half that), and online UCB and TS
  for reference; "worst gap" is the largest mean regret of the three gaps, the quantity of the
  minimax claim.

    python scripts/batches.py                    # T = 20,000, 10 seeds (beta), 20 seeds (gaps)
    python scripts/batches.py --quick            # smoke run
    python scripts/batches.py --figures docs/figures   # also copy the figure there (batches.png)
"""

import argparse
import json
import shutil
from pathlib import Path

import gymnasium as gym
import numpy as np

from _delayed import A, Clock, E, cell, final, parse, report, sweep
from gym_ctxbandits.experiment import seed_list
from gym_ctxbandits.envs.core import vector_env
from gym_ctxbandits.envs.retiring import RetiringItemsEnv

MS = (2, 3, 4, 5, 6)
GAPS = (0.05, 0.1, 0.2)
ENV_ID = "Batches/GapBernoulli-v0"
UCB, TS = A("LinUCB", "UCB (LinUCB)", sigma=0.5, alpha=0.5), A("LinTS", "TS (LinTS)", sigma=0.5)


class GapBernoulliEnv(RetiringItemsEnv):
    """K one-hot arms with Bernoulli rewards: one best arm of mean `mean + gap` in a slot drawn per
    instance, the others of mean `mean`; no arm ever retires."""

    def __init__(self, num_arms: int = 10, gap: float = 0.1, mean: float = 0.5, instance_seed: int | None = None):
        if not (0 <= mean and 0 < gap and mean + gap <= 1):
            raise ValueError(f"need 0 <= mean < mean + gap <= 1, got mean={mean!r}, gap={gap!r}")
        self.gap, self.mean = gap, mean
        super().__init__(num_arms, retire_prob=0.0, dim=num_arms, instance_seed=instance_seed)

    def draw_instance(self, rng):
        first = np.full(self.num_arms, self.mean)
        first[rng.integers(self.num_arms)] += self.gap
        return {"first": first}


if ENV_ID not in gym.registry:
    gym.register(ENV_ID, entry_point=GapBernoulliEnv, vector_entry_point=vector_env(GapBernoulliEnv, __name__),
                 max_episode_steps=20_000)


def base(T: int, M: int, sigma: float = 1.0, gamma: float = 4.0) -> A:
    """BaSE on the minimax grid of M batches over T, labelled "BaSE (gamma G, sigma S)"."""
    kwargs = {k: v for k, v, default in (("gamma", gamma, 4.0), ("sigma", sigma, 1.0)) if v != default}
    return A("BaSE", f"BaSE (gamma {gamma:g}, sigma {sigma:g})", horizon=T, M=M, **kwargs)


def instances(T: int, args) -> dict:
    """name -> (envs, agents(x), seeds) of the two instances."""
    beta = [E("CtxBandit/RetiringItems-v0", retire_prob=0.0, dim=10)]
    gaps = [E(ENV_ID, gap=gap) for gap in GAPS]
    return {"beta": (beta, lambda x: [UCB, TS] if x == "online" else [base(T, x), base(T, x, 0.5), UCB, TS],
                     args.seeds),
            "gaps": (gaps, lambda x: [UCB, TS] if x == "online" else [base(T, x, 0.5), base(T, x, 0.5, 1.0)],
                     args.gap_seeds)}


def table(value, columns: list, label=str, worst: int = 0) -> str:
    """Markdown rows of final regret (mean ± se) per M and online; value(x, column) is a (mean, se) or
    None, label(column) its header. With `worst` = n, the columns are blocks of n gaps, each followed
    by the largest mean of its block."""
    head, cells = [], []
    for x in ("M", *MS, "online"):
        got = [value(x, c) if x != "M" else None for c in columns]
        row = [label(c) if x == "M" else cell(*g) if g else "—" for c, g in zip(columns, got)]
        if worst:
            blocks = [(row[i:i + worst], got[i:i + worst]) for i in range(0, len(row), worst)]
            row = [c for r, g in blocks for c in [*r, "worst gap" if x == "M" else f"{max(m for m, _ in g):,.0f}"]]
        (head if x == "M" else cells).append(f"| {x} | " + " | ".join(row) + " |")
    return "\n".join([head[0], "|---|" + "---|" * (head[0].count("|") - 2), *cells])


def plot(beta, gaps, out: Path) -> Path:
    """Final regret against M (mean ± se): the beta instance's agents (left, online runs dashed); BaSE
    (sigma 1/2) on the gaps instance (right): each gap thin, the worst gap's mean thick, gamma 4 solid and
    gamma 1 dash-dotted, the online agents' worst gap as horizontal lines."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 4.2), sharey=True)
    online = beta[beta["x"] == "online"].set_index("agent")
    for i, (agent, g) in enumerate(beta[beta["x"] != "online"].groupby("agent", sort=False)):
        axes[0].errorbar(g["x"], g["mean"], yerr=g["sem"], marker="o", capsize=3, color=f"C{i}", label=agent)
        if agent in online.index:
            axes[0].axhline(online.loc[agent, "mean"], ls="--", color=f"C{i}", label=f"{agent}, online")
    ax = axes[1]
    for gamma, style in ((4.0, "-"), (1.0, "-.")):
        b = gaps[gaps["agent"] == base(2, 2, 0.5, gamma).title].sort_values("x")
        for i, (gap, g) in enumerate(b.groupby("gap")):
            ax.plot(g["x"], g["mean"], ls=style, color=f"C{i}", alpha=0.5, lw=1,
                    label=f"gap {gap:g}" if gamma == 4 else None)
        worst = b.groupby("x")["mean"].max()
        ax.plot(list(worst.index), worst.values, ls=style, marker="o", color="k", lw=2.2,
                label=f"BaSE gamma {gamma:g}, worst gap")
    on = gaps[gaps["x"] == "online"].groupby("agent")["mean"].max()
    for agent, style in ((TS.title, "--"), (UCB.title, ":")):
        ax.axhline(on[agent], ls=style, color="k", label=f"{agent.split()[0]} online, worst gap")
    axes[0].set(title="Beta(4, 4) click rates", ylabel="final regret")
    ax.set(title="one arm 0.5 + gap, nine 0.5; BaSE with sigma 1/2")
    for a in axes:
        a.set(xlabel="number of batches M (minimax grid)", yscale="log", xticks=list(MS))
        a.grid(alpha=0.3)
        a.legend(fontsize="x-small")
    fig.tight_layout()
    path = out / "batches.png"
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def main(argv=None):
    options = [("--figures", {"help": "also copy the figure to FIGURES/batches.png"}),
               ("--gap-seeds", {"help": "seeds of the gaps instance, as --seeds (default 20)"})]
    args = parse(__doc__, horizon=20_000, seeds=10, quick_horizon=300, argv=argv, options=options)
    try:
        args.gap_seeds = seed_list(args.gap_seeds or (2 if args.quick else 20), "--gap-seeds")
    except ValueError as err:
        raise SystemExit(f"batches.py: error: {err}") from None
    clock = Clock()
    T = args.horizon
    out = Path(args.out or f"results/batches{'-quick' if args.quick else ''}")
    models = {"online": None, **{M: {"batch_grid": f"minimax:{M}"} for M in MS}}
    res = {}
    for name, (envs, agents, seeds) in instances(T, args).items():     # each instance in its own results folder
        sub = argparse.Namespace(**{**vars(args), "out": str(out / name), "seeds": seeds})
        got = sweep(sub, "batches", envs, agents, models, imports=[str(Path(__file__).resolve())])
        res[name] = final(got.assign(gap=got["env_kwargs"].map(lambda k: json.loads(k).get("gap", 0.0))), by=("gap",))
    at = {name: r.set_index(["x", "agent", "gap"])[["mean", "sem"]] for name, r in res.items()}

    def beta(x, agent):
        return tuple(at["beta"].loc[(x, agent, 0.0)]) if (x, agent, 0.0) in at["beta"].index else None

    def gaps(x, column):
        gamma, gap = column
        return tuple(at["gaps"].loc[(x, TS.title if x == "online" else base(T, 2, 0.5, gamma).title, gap)])

    names = list(dict.fromkeys(res["beta"].query("x != 'online'")["agent"]))
    text = "\n\n".join([
        f"Beta(4, 4) click rates, {len(args.seeds)} seeds:", table(beta, names),
        f"One arm of mean 0.5 + gap, nine of 0.5, {len(args.gap_seeds)} seeds: BaSE (sigma 1/2) with gamma 4 and 1 "
        "on the grid, TS online in the last row:",
        table(gaps, [(gamma, gap) for gamma in (4.0, 1.0) for gap in GAPS], lambda c: "gamma {:g}, gap {:g}".format(*c),
              worst=len(GAPS)),
        "UCB online: " + ", ".join(f"gap {g:g}: {cell(*at['gaps'].loc[('online', UCB.title, g)])}" for g in GAPS)])
    path = plot(res["beta"], res["gaps"], out)
    if args.figures:
        Path(args.figures).mkdir(parents=True, exist_ok=True)
        shutil.copy(path, Path(args.figures) / "batches.png")
    report(args, "batches", "Final regret against the number of batches M (minimax grid)", text, clock)


if __name__ == "__main__":
    main()
