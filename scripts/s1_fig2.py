"""[S1] (GLM-TSL / GLM-FPL) figure 2, the deep bandit: the claims S1-C4 to S1-C7 of docs/papers.md.

MNIST and Fashion-MNIST: each round K=10 random images are the arms, an image of the
instance's target class pays Ber(0.75), any other Ber(0.25); the best policy averages about 0.576.
DeepFPL (one hidden layer of 50 units, sigmoid output, one Adam step a round on the 32 most recent
examples with rewards perturbed by N(0, 1)) against DeepFL (the same with a=0) and repGLM-FPL
(m% of the rounds uniform exploration to train the network, then GLM-FPL with a=0.5 on its frozen
hidden layer) for m = 1%, 5%, 20%. One panel per hidden activation (ReLU, tanh), one subplot per
dataset. The paper runs n=10,000 rounds and 500 instances per dataset (50 per target class; here
the target class is drawn per seed) and plots the average reward up to round n.

The claims: DeepFPL reaches an average reward of at least 0.5 on both datasets; DeepFPL beats
DeepFL; DeepFPL beats every repGLM-FPL; the best m depends on the problem.

Besides the regret figure of every script, each panel gets `avg_reward.png` (the paper's metric:
average reward up to each round, mean and standard error over seeds) and, with --figures, a copy
FIGURES/s1_fig2_<panel>_reward.png. repGLM-FPL's exploration length is m% of the horizon run.

    python scripts/s1_fig2.py                                  # the paper's setting (about 300 CPU-hours)
    python scripts/s1_fig2.py --horizon 2000 --seeds 4        # what docs/s1_deep_agents.md reports
    python scripts/s1_fig2.py --quick                          # smoke run
"""

import argparse
import shutil
from pathlib import Path

import numpy as np

from _paper import QUICK_HORIZON, A, E, Panel, main

N, RUNS = 10_000, 500
EXPLORE = (0.01, 0.05, 0.20)          # m of repGLM-FPL
OPTIMUM = 0.25 * 0.9**10 + 0.75 * (1 - 0.9**10)   # ~0.5757 for K = 10 balanced classes (docs/papers.md, S1-A2)
ENVS = [E("CtxBandit/MNISTTarget-v0"), E("CtxBandit/FashionMNISTTarget-v0")]


def agents(activation: str, horizon: int, explore=EXPLORE):
    """DeepFPL, DeepFL and repGLM-FPL for each m in `explore`, with [S1] §5.2's defaults."""
    return [A("DeepFPL", activation=activation), A("DeepFL", activation=activation)] + [
        A("repGLM-FPL", f"repGLM-FPL m={m:.0%}", activation=activation, explore_fraction=m, horizon=horizon)
        for m in explore]


def panels(horizon: int):
    """One panel per activation; --quick runs one m only."""
    return [Panel(act, ENVS, agents(act, horizon), horizon=N, seeds=RUNS, quick_agents=agents(act, horizon, (0.2,)))
            for act in ("relu", "tanh")]


def plot_average_reward(table, out: Path, order: list[str]) -> Path:
    """Average reward up to round t (the paper's metric), mean +- standard error over seeds, per env."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    envs = list(dict.fromkeys(table["env"]))
    fig, axes = plt.subplots(1, len(envs), figsize=(5 * len(envs), 3.8), squeeze=False)
    for ax, env in zip(axes[0], envs):
        sub = table[table["env"] == env]
        for i, agent in enumerate(order):
            avg = sub[sub["agent"] == agent].pivot(index="round", columns="seed", values="cum_reward")
            avg = avg.div(avg.index.to_numpy(), axis=0)
            mean, se = avg.mean(axis=1), avg.std(axis=1, ddof=1).fillna(0.0) / np.sqrt(avg.shape[1])
            ax.plot(avg.index, mean, label=f"{agent} (n={avg.shape[1]})", color=f"C{i}")
            ax.fill_between(avg.index, mean - se, mean + se, alpha=0.2, color=f"C{i}")
        ax.axhline(OPTIMUM, color="black", lw=0.8, ls="--", label=f"optimum {OPTIMUM:.3f}")
        ax.set(title=env.removeprefix("CtxBandit/"), xlabel="round n", ylabel="average reward up to n")
        ax.grid(alpha=0.3)
        ax.legend(fontsize="small")
    fig.tight_layout()
    path = out / "avg_reward.png"
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def reward_table(table, order: list[str]) -> str:
    """Markdown: final average reward per (env, agent), mean +- standard error over seeds, agents in `order`."""
    last = table.loc[table.groupby(["env", "agent", "seed"])["round"].idxmax()]
    last = last.assign(avg=last["cum_reward"] / last["round"], rank=last["agent"].map(order.index))
    rows = ["| env | agent | seeds | T | average reward (mean ± se) |", "|---|---|---|---|---|"]
    for (env, _, agent), g in last.groupby(["env", "rank", "agent"]):
        se = g["avg"].std(ddof=1) / np.sqrt(len(g)) if len(g) > 1 else float("nan")
        rows.append(f"| {env.removeprefix('CtxBandit/')} | {agent} | {len(g)} | {g['round'].max()} "
                    f"| {g['avg'].mean():.3f} ± {se:.3f} |")
    return "\n".join(rows)


if __name__ == "__main__":
    known = argparse.ArgumentParser(add_help=False)
    for flag in ("--horizon", "--out", "--figures", "--panels"):
        known.add_argument(flag)
    known.add_argument("--quick", action="store_true")
    args, _ = known.parse_known_args()
    horizon = int(args.horizon) if args.horizon else (QUICK_HORIZON if args.quick else N)
    PANELS = panels(horizon)
    main(Path(__file__).stem, PANELS, __doc__)

    from gym_ctxbandits.results import load_results

    out = Path(args.out or f"results/{Path(__file__).stem}{'-quick' if args.quick else ''}")
    for panel in PANELS:
        if args.panels and panel.name not in args.panels.split(","):
            continue
        table = load_results(out / panel.name)
        order = [a.title for a in (panel.quick_agents if args.quick else panel.agents)]
        path = plot_average_reward(table, out / panel.name, order)
        text = reward_table(table, order)
        (out / panel.name / "average_reward.md").write_text(text + "\n")
        print(f"\n## s1_fig2 {panel.name}: average reward (the paper's metric; optimum {OPTIMUM:.4f})\n{text}")
        if args.figures:
            shutil.copy(path, Path(args.figures) / f"s1_fig2_{panel.name}_reward.png")
