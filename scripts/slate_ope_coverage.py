"""Coverage of the slate off-policy estimators (issue 50 item 3): bias, spread and CI coverage over seeds.

Four ranking envs, one fixed instance each: PBM (CtxBandit/PBMStd-v0, GRAB's simulated PBM: L = 10
items, K = 5 positions), cascade (CtxBandit/CascadeBLB-v0 with L = 10, K = 4 and attractions drawn
from Beta(1, 3) by instance_seed 7), DCM (CtxBandit/DCM-v0 on the same items, termination 0.6: the
value counts clicks, not the env's satisfaction reward) and bottom-up cascade (the cascade env read
from the bottom, `slate_ope.BottomUp`: the click at k depends on the items below it). On each env
and seed a Plackett-Luce behaviour with scores SCALE x w(e) (w the true attractions) at temperature
BEHAVIOUR_T logs `--rounds` rounds; the target is the Plackett-Luce of the same scores at temperature
TARGET_T (greedier). Every estimator of `slate_ope.ESTIMATORS` runs at its defaults (Cascade-DR's
ridge baseline cross-fitted on 5 blocks, a 1,000-resample percentile bootstrap); the truth is the
target's exact value (`slate_ope.true_value`, every list enumerated). Per env and estimator: the
bias with its t statistic (bias over sd / sqrt(seeds)), the sd of the estimate over seeds, the mean
of the estimators' own standard errors, the RMSE, the mean CI width, the share of seeds whose 95% CI
covers the truth, and the mean largest weight of a log.

    python scripts/slate_ope_coverage.py            # 100 seeds x 2,000 rounds (docs/slate_ope.md has the table)
    python scripts/slate_ope_coverage.py --quick    # 2 seeds, 300 rounds, 50 resamples: a smoke run (tests)
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass

import gymnasium as gym
import numpy as np
import pandas as pd

from gym_ctxbandits import ope, slate_ope

CASCADE = dict(num_items=10, num_positions=4, beta_prior=(1.0, 3.0), instance_seed=7)
ENVS = {"PBM": lambda: gym.make("CtxBandit/PBMStd-v0"),
        "cascade": lambda: gym.make("CtxBandit/CascadeBLB-v0", **CASCADE),
        "DCM": lambda: gym.make("CtxBandit/DCM-v0", termination=0.6, **CASCADE),
        "bottom-up cascade": lambda: slate_ope.BottomUp(gym.make("CtxBandit/CascadeBLB-v0", **CASCADE))}
SCALE, BEHAVIOUR_T, TARGET_T = 5.0, 2.0, 0.5    # scores 5 w(e); the behaviour explores at 2, the target at 0.5


@dataclass(frozen=True)
class Args:
    seeds: int = 100
    rounds: int = 2000
    first_seed: int = 0
    n_bootstrap: int = ope.N_BOOTSTRAP


def run(args: Args) -> pd.DataFrame:
    """One row per env, seed and estimator: the error, CI width and coverage, the estimator's own se."""
    rows = []
    for env_name, make in ENVS.items():
        env = make()
        env.reset(seed=0)                                # the instance is fixed: its scores are the same every seed
        theta, K = SCALE * env.unwrapped.attractions, env.unwrapped.num_positions
        target = slate_ope.PlackettLuce(theta, K, temperature=TARGET_T)
        for seed in range(args.first_seed, args.first_seed + args.seeds):
            behaviour = slate_ope.PlackettLuce(theta, K, temperature=BEHAVIOUR_T, seed=seed)
            lg = slate_ope.log(env, behaviour, args.rounds, seed, target=target)
            truth = slate_ope.true_value(env, target, lg["context"])
            largest = float((lg["target_pscore"] / lg["pscore"]).max())
            for est in slate_ope.evaluate(lg, n_bootstrap=args.n_bootstrap, seed=seed):
                rows.append(dict(env=env_name, estimator=est.estimator, seed=seed, truth=truth,
                                 error=est.value - truth, se=est.se, width=est.high - est.low,
                                 covers=est.low <= truth <= est.high, max_weight=largest))
    return pd.DataFrame(rows)


def summary(runs: pd.DataFrame) -> pd.DataFrame:
    """Per env and estimator: bias, its t statistic over seeds, sd over seeds, mean se, RMSE, CI width, coverage."""
    g = runs.groupby(["env", "estimator"], sort=False)
    sd, n = g["error"].std(ddof=1), g["error"].count()
    return pd.DataFrame({"truth": g["truth"].mean(), "bias": g["error"].mean(), "t": g["error"].mean() / (sd / np.sqrt(n)),
                         "sd": sd, "se": g["se"].mean(),
                         "RMSE": g["error"].apply(lambda e: float(np.sqrt(np.mean(e ** 2)))),
                         "width": g["width"].mean(), "coverage": g["covers"].mean(),
                         "max_weight": g["max_weight"].mean(), "seeds": n}).reset_index()


def markdown(table: pd.DataFrame) -> str:
    """One row per env and estimator (`summary`)."""
    header = ("| env | truth | estimator | bias (t) | sd over seeds | mean se | RMSE | CI width | 95% CI covers | "
              "max SIPS weight |")
    lines = [header, "|---|---|---|---|---|---|---|---|---|---|"]
    for r in table.itertuples():
        lines.append(f"| {r.env} | {r.truth:.4f} | {r.estimator} | {r.bias:+.4f} ({r.t:+.1f}) | {r.sd:.4f} | {r.se:.4f} | "
                     f"{r.RMSE:.4f} | {r.width:.4f} | {100 * r.coverage:.0f}% | {r.max_weight:.0f} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=Args.seeds, help="logs per env")
    parser.add_argument("--first-seed", type=int, default=0, help="the logs' seeds are first-seed, first-seed + 1, ...")
    parser.add_argument("--rounds", type=int, default=Args.rounds, help="rounds per log")
    parser.add_argument("--quick", action="store_true", help="2 seeds, 300 rounds, 50 bootstrap resamples: a smoke run")
    parser.add_argument("--csv", help="also write every seed's row here")
    ns = parser.parse_args(argv)
    args = Args(2, 300, ns.first_seed, 50) if ns.quick else Args(ns.seeds, ns.rounds, ns.first_seed)
    start = time.perf_counter()
    runs = run(args)
    if ns.csv:
        runs.to_csv(ns.csv, index=False)
    print(markdown(summary(runs)))
    print(f"\nseeds {args.first_seed}-{args.first_seed + args.seeds - 1} x {args.rounds} rounds: "
          f"{time.perf_counter() - start:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
