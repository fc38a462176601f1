"""Coverage of the off-policy estimators (issue 21 item 4): bias, spread and CI coverage over seeds.

On CtxBandit/Linear-v0 and CtxBandit/Logistic-v0 (K = 10 arms drawn each round from a pool of 100,
d = 5, one fixed instance), epsilon-greedy behaviours log `--rounds` rounds per seed; two frozen
targets, LinUCB and LinTS, trained `--train-rounds` rounds on a separate episode of the same
instance, are evaluated on every log by IPS, SNIPS, DM, DR and SNDR (gym_ctxbandits.ope defaults:
no clipping, ridge reward model, 1,000-resample percentile bootstrap). The truth of a seed is the
target's exact value on that log's rounds (`feedback.true_value`). Per setting and estimator the
table gives the bias and the standard error of the estimate over seeds, the RMSE, the mean CI
width and the share of seeds whose 95% CI covers the truth, and for the logs the mean effective
sample size of the importance weights (Kish: (sum w)^2 / sum w^2) and the mean number of rounds
weighted above 20. Rows marked "1/K" and "x0.5" replace
the logged pscore by a uniform 1/K or halve it, to show what a wrong propensity does.

The zoo has no softmax policy, so the two behaviours are epsilon-greedy at two epsilons. LinTS's
action distribution is a Monte-Carlo estimate from `--draws` posterior samples a round, drawn by a
`--draws`-instance copy of the trained LinTS (every instance trained on the same trajectory, so
the same posterior, each with its own random stream): one vectorised act a round instead of
`--draws` deep copies (agent.action_probs), the same distribution.

    python scripts/ope_coverage.py                  # 50 seeds (docs/offpolicy.md has the table and its run time)
    python scripts/ope_coverage.py --quick          # 2 seeds, 200 rounds: a smoke run (tests)
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass

import gymnasium as gym
import numpy as np
import pandas as pd

import agents
import gym_ctxbandits
from gym_ctxbandits import feedback, ope

KW = dict(num_arms=10, dim=5, pool_size=100, instance_seed=7)
ENVS = {"Linear": "CtxBandit/Linear-v0", "Logistic": "CtxBandit/Logistic-v0"}
EPSILONS = (0.1, 0.5)         # the epsilon-greedy behaviours
PSCORES = {"true": lambda p, K: p, "1/K": lambda p, K: np.full_like(p, 1.0 / K), "x0.5": lambda p, K: 0.5 * p}
TRAIN_SEED = 10_000          # the targets' training episode, apart from the logs' seeds 0, 1, ...


@dataclass(frozen=True)
class Args:
    seeds: int = 50
    rounds: int = 1000
    train_rounds: int = 500
    draws: int = 1000
    epsilons: tuple = EPSILONS


def train_copies(env_id: str, rounds: int, seed: int, copies: int):
    """LinTS as `copies` instances trained on one trajectory (instance 0's choices): one posterior,
    `copies` independent samplers of it."""
    env = gym.make(env_id, max_episode_steps=rounds, **KW)
    obs, _ = env.reset(seed=seed)
    agent = agents.make("LinTS", seed=seed)
    for _ in range(rounds):
        X = np.broadcast_to(obs, (copies, *obs.shape))
        action = int(agent.act(X)[0])
        next_obs, reward, *_ = env.step(action)
        agent.observe(X, np.full(copies, action), np.full(copies, reward))
        obs = next_obs
    return agent


def sampled_dist(copies, context: np.ndarray, draws: int) -> np.ndarray:
    """(n, K) shares of the copies' picks on each round's arms."""
    n, K = context.shape[:2]
    picks = np.stack([copies.act(np.broadcast_to(x, (draws, *x.shape))) for x in context])   # (n, draws)
    return (picks[:, :, None] == np.arange(K)).mean(axis=1)


def run(args: Args) -> pd.DataFrame:
    rows = []
    for env_name, env_id in ENVS.items():
        linucb = feedback.train(agents.make("LinUCB", seed=TRAIN_SEED), env_id, args.train_rounds, TRAIN_SEED, KW)
        lints = train_copies(env_id, args.train_rounds, TRAIN_SEED, args.draws)
        for seed in range(args.seeds):
            logs = {f"eps-greedy {eps:g}": gym_ctxbandits.log(env_id, agents.make("epsilon-greedy", epsilon=eps,
                                                                                  seed=seed), args.rounds, seed,
                                                               env_kwargs=KW) for eps in args.epsilons}
            context = next(iter(logs.values()))["context"]       # the env draws the same rounds for every behaviour
            targets = {"LinUCB": feedback.target_probs(linucb, {"context": context}),
                       "LinTS": sampled_dist(lints, context, args.draws)}
            for behaviour, log in logs.items():
                for target, pi in targets.items():
                    truth = feedback.true_value(log, pi)
                    w = pi[np.arange(len(pi)), log["action"]] / log["pscore"]
                    ess = w.sum() ** 2 / (w ** 2).sum()          # Kish's effective sample size of the weights
                    for pscore, change in PSCORES.items():
                        fb = dict(log, pscore=change(log["pscore"], log["n_actions"]))
                        names = ope.ESTIMATORS if pscore == "true" else ("IPS", "SNIPS", "DR")
                        for est in ope.evaluate(fb, pi, names, seed=seed):
                            rows.append(dict(env=env_name, behaviour=behaviour, target=target, pscore=pscore,
                                             estimator=est.estimator, seed=seed, error=est.value - truth,
                                             width=est.high - est.low, covers=est.low <= truth <= est.high,
                                             ess=ess, big=(w > 20).sum()))
    return pd.DataFrame(rows)


def summary(runs: pd.DataFrame) -> pd.DataFrame:
    """Per setting and estimator: bias, SE (sd over seeds), RMSE, mean CI width, coverage, and the
    logs' mean effective sample size and number of rounds weighted above 20 (true pscores)."""
    keys = ["env", "behaviour", "target", "pscore", "estimator"]
    g = runs.groupby(keys, sort=False)
    return pd.DataFrame({"bias": g["error"].mean(), "SE": g["error"].std(ddof=1),
                         "RMSE": g["error"].apply(lambda e: float(np.sqrt(np.mean(e ** 2)))),
                         "CI width": g["width"].mean(), "coverage": g["covers"].mean(), "ESS": g["ess"].mean(),
                         "big": g["big"].mean()}).reset_index()


def markdown(table: pd.DataFrame) -> str:
    """Two tables: every estimator with the logged pscores; IPS, SNIPS and DR with the wrong ones."""
    lines = ["| env | behaviour | target | estimator | bias | SE | RMSE | CI width | 95% CI covers | ESS | w > 20 |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in table[table["pscore"] == "true"].itertuples():
        lines.append(f"| {r.env} | {r.behaviour} | {r.target} | {r.estimator} | {r.bias:+.3f} | {r.SE:.3f} | "
                     f"{r.RMSE:.3f} | {r._9:.3f} | {100 * r.coverage:.0f}% | {r.ESS:.0f} | {r.big:.1f} |")
    wrong = table[table["pscore"] != "true"]
    names = list(dict.fromkeys(wrong["estimator"]))
    lines += ["", "| env | behaviour | target | pscore | " + " | ".join(f"{e} bias, covers" for e in names) + " |",
              "|---|---|---|---|" + "---|" * len(names)]
    for key, group in wrong.groupby(["env", "behaviour", "target", "pscore"], sort=False):
        by_name = group.set_index("estimator").loc[names]
        cells = [f"{r.bias:+.3f}, {100 * r.coverage:.0f}%" for r in by_name.itertuples()]
        lines.append("| " + " | ".join([*key, *cells]) + " |")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=Args.seeds, help="logs per setting (seeds 0..N-1)")
    parser.add_argument("--rounds", type=int, default=Args.rounds, help="rounds per log")
    parser.add_argument("--train-rounds", type=int, default=Args.train_rounds, help="the targets' training rounds")
    parser.add_argument("--draws", type=int, default=Args.draws, help="LinTS posterior samples a round")
    parser.add_argument("--epsilons", default=",".join(map(str, EPSILONS)), help="the behaviours' epsilons")
    parser.add_argument("--quick", action="store_true", help="2 seeds, 200 rounds, 100 training rounds, 100 draws: "
                        "a smoke run")
    parser.add_argument("--csv", help="also write every seed's row here")
    ns = parser.parse_args(argv)
    epsilons = tuple(float(e) for e in ns.epsilons.split(","))
    args = Args(2, 200, 100, 100) if ns.quick else Args(ns.seeds, ns.rounds, ns.train_rounds, ns.draws, epsilons)
    start = time.perf_counter()
    runs = run(args)
    if ns.csv:
        runs.to_csv(ns.csv, index=False)
    print(markdown(summary(runs)))
    print(f"\n{args.seeds} seeds x {args.rounds} rounds, LinTS from {args.draws} draws a round: "
          f"{time.perf_counter() - start:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
