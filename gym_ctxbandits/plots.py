"""Figures of a comparison: cumulative regret with error bands, and run time per agent."""

from __future__ import annotations

from pathlib import Path

import numpy as np

BANDS = {"std": "± 1 standard deviation", "se": "± 1 standard error"}
BASELINE = "Random"     # the agent label drawn as the baseline


def _save(fig, out: Path, stem: str) -> list[Path]:
    paths = [out / f"{stem}.png", out / f"{stem}.svg"]
    for p in paths:
        fig.savefig(p, dpi=150, bbox_inches="tight")
    return paths


def leave_out(table, agents):
    """The rows of `table` but those of the agents labelled in `agents` (e.g. ["Random"], so that the
    learners are not squashed at the bottom of the regret plot). A label the table lacks, or leaving
    out every agent, is a ValueError naming the labels it has."""
    agents = list(agents)
    if not agents:
        return table
    present = list(dict.fromkeys(table["agent"]))
    if unknown := [a for a in agents if a not in present]:
        raise ValueError(f"--exclude {', '.join(unknown)}: no such agent in the results; its agents are "
                         f"{', '.join(present)}")
    if set(present) <= set(agents):
        raise ValueError(f"--exclude {', '.join(agents)} leaves no agent to plot")
    return table[~table["agent"].isin(agents)]


def change_points(env_id: str, env_kwargs: str) -> tuple[int, ...]:
    """The rounds where a non-stationary env's new segments start (`env.unwrapped.change_points`), for an
    env whose family says it moves (`nonstationary = True`) or a dataset bandit relabelled at change
    points (`relabel=`); () for any other, which is never built here. The env is built from the
    table's `env_kwargs` (JSON); one that cannot be (its kwargs held arrays) has none drawn."""
    import json

    import gymnasium as gym

    from gym_ctxbandits.jobs import env_creator

    kwargs = json.loads(env_kwargs)
    if not (getattr(env_creator(env_id), "nonstationary", False) or kwargs.get("relabel")):
        return ()
    try:
        env = gym.make(env_id, **kwargs)
    except (TypeError, ValueError):        # a kwarg the table holds as a description (an array)
        return ()
    return tuple(int(r) for r in getattr(env.unwrapped, "change_points", ()))


def plot_regret(table, out: Path, band: str = "std", log_scale: bool = False) -> list[Path]:
    """Mean cumulative regret vs round, one panel per env, a shaded band per agent; with `log_scale`
    the y axis is logarithmic (regrets that differ by orders of magnitude all stay visible; a zero
    or negative value, or the part of a band below zero, is left out).

    An agent named Random is drawn as the baseline (dashed grey, no band): the reference against
    which the summary's "regret / Random" column is taken. A replay env has no regret (its rows
    hold NaN): its panel shows the cumulative reward against accepted events instead, highest first.
    A non-stationary env's change points (`change_points`) are dotted vertical lines.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    if band not in BANDS:
        raise ValueError(f"band must be one of {list(BANDS)}, got {band!r}")
    envs = list(dict.fromkeys(zip(table["env"], table["env_kwargs"])))
    names = list(dict.fromkeys(table["agent"]))               # one colour per agent in every panel
    palette = plt.get_cmap("tab10" if len(names) <= 10 else "tab20").colors
    color_of = {a: palette[i % len(palette)] for i, a in enumerate(names)}
    fig, axes = plt.subplots(1, len(envs), figsize=(5 * len(envs), 3.8), squeeze=False)
    for ax, (env, kwargs) in zip(axes[0], envs):
        sub = table[(table["env"] == env) & (table["env_kwargs"] == kwargs)]
        replay = sub["regret"].isna().all()
        value = "cum_reward" if replay else "cum_regret"
        curves_of = {agent: rows.pivot(index="round", columns="seed", values=value)
                     for agent, rows in sub.groupby("agent", sort=False)}
        # legend from the highest final value down, in the order the curves end
        for agent in sorted(curves_of, key=lambda a: -curves_of[a].iloc[-1].mean()):
            curves, color = curves_of[agent], color_of[agent]
            mean, spread = curves.mean(axis=1), curves.std(axis=1, ddof=1).fillna(0.0)
            if band == "se":
                spread = spread / np.sqrt(curves.shape[1])
            if agent == BASELINE:
                ax.plot(curves.index, mean, label=f"{agent}, baseline (n={curves.shape[1]})", color="0.45",
                        linestyle="--")
                continue
            ax.plot(curves.index, mean, label=f"{agent} (n={curves.shape[1]})", color=color)
            ax.fill_between(curves.index, mean - spread, mean + spread, alpha=0.2, color=color)
        last = sub["round"].max()
        for i, r in enumerate(r for r in change_points(env, kwargs) if r <= last):
            ax.axvline(r, color="0.55", linestyle=":", linewidth=1, label="change point" if i == 0 else None)
        title = env if kwargs == "{}" else f"{env}\n{kwargs}"
        ax.set(title=title, xlabel="accepted event" if replay else "round",
               ylabel="cumulative reward (clicks)" if replay else "cumulative regret")
        if log_scale:
            ax.set_yscale("log", nonpositive="mask")
        ax.grid(alpha=0.3)
        ax.legend(title=f"mean {BANDS[band]}", fontsize="small")
    fig.tight_layout()
    paths = _save(fig, out, "regret")
    plt.close(fig)
    return paths


def plot_runtime(table, out: Path) -> list[Path]:
    """Seconds per 1,000 rounds of each agent, split into act and observe (mean over jobs)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    last = table.loc[table.groupby(["env", "env_kwargs", "agent", "seed"])["round"].idxmax()]
    per_k = last.assign(act=1000 * last["act_seconds"] / last["round"],
                        observe=1000 * last["observe_seconds"] / last["round"])
    means = per_k.groupby("agent", sort=False)[["act", "observe"]].mean()
    fig, ax = plt.subplots(figsize=(max(4, 1.2 * len(means) + 2), 3.8))
    ax.bar(means.index, means["act"], label="act")
    ax.bar(means.index, means["observe"], bottom=means["act"], label="observe")
    ax.set(ylabel="seconds per 1,000 rounds", title="agent run time (mean over envs and seeds)")
    ax.legend()
    ax.tick_params(axis="x", rotation=30)
    fig.tight_layout()
    paths = _save(fig, out, "runtime")
    plt.close(fig)
    return paths
