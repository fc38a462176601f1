"""Coverage of the off-policy estimators (issues 21, 31 and 48): bias, spread and CI coverage over seeds.

Five envs: CtxBandit/Linear-v0 and CtxBandit/Logistic-v0 (K = 10 arms drawn each round from a pool
of 100, d = 5, one fixed instance), CtxBandit/Quadratic-v0 (the same, with a quadratic reward: the
ridge reward model is misspecified), CtxBandit/MNIST-v0 (real data: the classification bandit of
the 10,000 MNIST test images pooled to 7x7, block-encoded, K = 10, d = 490) and Digits
(CtxBandit/Supervised-v0 on scikit-learn's 1,797 8x8 digits, K = 10, d = 640). Behaviour agents log
`--rounds` rounds per seed: epsilon-greedy at `--epsilons`, and Softmax at one temperature per env
on Linear and Logistic (`--taus`) or with a floor elsewhere (tau 0.1, epsilon 0.5: every
propensity at least 0.05, so weights at most 20, chosen by that rule, not tuned); Digits logs its
own two (issue 48): epsilon-greedy 0.4 (weight 1 / 0.04 = 25 wherever the target's arm is not the
greedy one, above the old fixed Switch-DR tau of 20) and uniform (Random; the ridge reward model of
1,000 rounds at d = 640 is poor there). Frozen targets,
LinUCB and (not on MNIST, where 1,000 posterior samples a round at d = 490 are too slow) LinTS,
trained `--train-rounds` rounds on a separate episode of the same instance, are evaluated on every
log by every estimator of `ope.ESTIMATORS` (gym_ctxbandits.ope defaults: no clipping, ridge reward
model fitted sequentially for the DR family, 1,000-resample percentile bootstrap), and by DR with
the reward model fitted in-sample (the old default, row "DR in-sample") and Switch-DR and DRos at
the fixed defaults before issue 48, tau = 20 and lam = 400 (rows "Switch-DR tau=20", "DRos
lam=400"); Switch-DR and DRos proper run at their defaults, tau and lam chosen on each log by the
estimated MSE bound (gym_ctxbandits.ope._tune), whose median over seeds and the number of logs where
it chose DR itself are the last column. The truth of a seed is
the target's exact value on that log's rounds (`feedback.true_value`). Three tables: the overlap
of each behaviour with each target (mean over seeds of the smallest behaviour propensity of an
arm the target may take, of the largest importance weight, of Kish's effective sample size
(sum w)^2 / sum w^2 and of the number of rounds weighted above 20); per setting and estimator the
bias with its t statistic (bias over its standard error sd / sqrt(seeds)), the sd of the estimate
over seeds (SE), the RMSE, the mean CI width and the share of seeds whose 95% CI covers the
truth; and on Linear and Logistic IPS, SNIPS and DR with the logged pscore replaced by a uniform
1/K or halved ("1/K", "x0.5"), to show what a wrong propensity does.

Softmax's tau is chosen on other seeds than the reported ones: `--tau-grid` prints the overlap
of each tau of a grid on the seeds given (docs/offpolicy_coverage.md: seeds 1000-1019) and marks, per env,
the smallest tau whose largest importance weight averages at most MAX_WEIGHT over seeds and
targets (epsilon-greedy 0.5's cap, 1 / 0.05): the most exploiting softmax with that overlap.

LinTS's action distribution is a Monte-Carlo estimate from `--draws` posterior samples a round,
drawn by a `--draws`-instance copy of the trained LinTS (every instance trained on the same
trajectory, so the same posterior, each with its own random stream): one vectorised act a round
instead of `--draws` deep copies (agent.action_probs), the same distribution.

    python scripts/ope_coverage.py                  # 40 seeds (docs/offpolicy_coverage.md has the tables and run time)
    python scripts/ope_coverage.py --tau-grid 0.1,0.15,0.2,0.3,0.5,0.7,1 --first-seed 1000 --seeds 20
    python scripts/ope_coverage.py --quick          # 2 seeds, 200 rounds: a smoke run (tests)
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass, field

import gymnasium as gym
import numpy as np
import pandas as pd

import agents
import gym_ctxbandits
from gym_ctxbandits import feedback, ope

KW = dict(num_arms=10, dim=5, pool_size=100, instance_seed=7)
ENVS = {"Linear": ("CtxBandit/Linear-v0", KW), "Logistic": ("CtxBandit/Logistic-v0", KW),
        "Quadratic": ("CtxBandit/Quadratic-v0", KW),                   # non-linear: the ridge reward model is misspecified
        "MNIST": ("CtxBandit/MNIST-v0", dict(image_size=7)),           # real data: K = 10, 7x7 images block-encoded, d = 490
        "Digits": ("CtxBandit/Supervised-v0", dict(source="sklearn:load_digits"))}   # sklearn's 8x8 digits, d = 640
# Digits logs its own two behaviours (issue 48): epsilon-greedy 0.4, whose weight 1 / 0.04 = 25 on a round where the
# target's arm is not the greedy one lay above Switch-DR's old default tau = 20, and a uniformly random log, on which
# the ridge reward model (1,000 rounds at d = 640) is poor
OWN_BEHAVIOURS = {"Digits": {"eps-greedy 0.4": ("epsilon-greedy", dict(epsilon=0.4)), "uniform": ("Random", {})}}
OLD_DEFAULTS = {"Switch-DR tau=20": (ope.switch_dr, dict(tau=20.0)), "DRos lam=400": (ope.dros, dict(lam=400.0))}
EPSILONS = (0.1, 0.5)         # the epsilon-greedy behaviours
TAUS = {"Linear": 0.1, "Logistic": 0.5}     # Softmax's, from `--tau-grid` on seeds 1000-1019 (docs/offpolicy_coverage.md)
FLOOR = dict(tau=0.1, epsilon=0.5)          # elsewhere Softmax with a floor: every propensity >= 0.05, weights <= 20
MAX_WEIGHT = 20.0             # the --tau-grid rule: largest weight at most epsilon-greedy 0.5's, 1 / 0.05
PSCORES = {"true": lambda p, K: p, "1/K": lambda p, K: np.full_like(p, 1.0 / K), "x0.5": lambda p, K: 0.5 * p}
WRONG_PSCORE_ENVS = ("Linear", "Logistic")  # where the wrong-pscore table is computed
LINTS_ENVS = ("Linear", "Logistic", "Quadratic")   # LinTS's target needs `draws` posterior samples a round: not at d = 490
TRAIN_SEED = 10_000           # the targets' training episode, apart from the logs' seeds 0, 1, ...


@dataclass(frozen=True)
class Args:
    seeds: int = 40
    rounds: int = 1000
    train_rounds: int = 500
    draws: int = 1000
    epsilons: tuple = EPSILONS
    taus: dict = field(default_factory=lambda: dict(TAUS))
    first_seed: int = 0
    n_bootstrap: int = ope.N_BOOTSTRAP
    envs: tuple = tuple(ENVS)


def train_copies(env_id: str, kwargs: dict = KW, *, rounds: int, seed: int, copies: int):
    """LinTS as `copies` instances trained on one trajectory (instance 0's choices): one posterior,
    `copies` independent samplers of it."""
    env = gym.make(env_id, max_episode_steps=rounds, **kwargs)
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


def behaviours(env_name: str, args: Args) -> dict[str, tuple[str, dict]]:
    """Label -> (agent name, kwargs) of the behaviours logged on `env_name`."""
    if env_name in OWN_BEHAVIOURS:
        return dict(OWN_BEHAVIOURS[env_name])
    out = {f"eps-greedy {eps:g}": ("epsilon-greedy", dict(epsilon=eps)) for eps in args.epsilons}
    if env_name in args.taus:
        out[f"softmax {args.taus[env_name]:g}"] = ("Softmax", dict(tau=args.taus[env_name]))
    elif env_name not in TAUS and args.taus:
        out[f"softmax {FLOOR['tau']:g} floor {FLOOR['epsilon'] / 10:g}"] = ("Softmax", dict(FLOOR))
    return out


def targets(args: Args, envs=tuple(ENVS)) -> dict[str, tuple]:
    """Env name -> (frozen LinUCB, LinTS copies or None), trained on the episode TRAIN_SEED."""
    return {env_name: (feedback.train(agents.make("LinUCB", seed=TRAIN_SEED), ENVS[env_name][0], args.train_rounds,
                                      TRAIN_SEED, ENVS[env_name][1]),
                       train_copies(*ENVS[env_name], copies=args.draws, rounds=args.train_rounds, seed=TRAIN_SEED)
                       if env_name in LINTS_ENVS else None)
            for env_name in envs}


def target_dists(trained: tuple, context: np.ndarray, draws: int) -> dict[str, np.ndarray]:
    """Each target's action distribution (n, K) on the logged rounds."""
    linucb, lints = trained
    out = {"LinUCB": feedback.target_probs(linucb, {"context": context})}
    if lints is not None:
        out["LinTS"] = sampled_dist(lints, context, draws)
    return out


def overlap(log: dict, pi: np.ndarray) -> dict:
    """How well the log covers the target: the smallest behaviour propensity of an arm the target
    may take, the largest importance weight, the effective sample size, the rounds weighted above 20."""
    ess, largest = ope.effective_sample_size(log["action"], log["pscore"], pi)
    w = pi[np.arange(len(pi)), log["action"]] / log["pscore"]
    return {"min propensity": float(np.asarray(log["action_prob"])[pi > 0].min()), "max weight": largest, "ESS": ess,
            "w > 20": int((w > 20).sum())}


def run(args: Args) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(one row per setting, seed and estimator; one row per setting and seed with its overlap)."""
    rows, overlaps = [], []
    for env_name, trained in targets(args, args.envs).items():
        env_id, kwargs = ENVS[env_name]
        for seed in range(args.first_seed, args.first_seed + args.seeds):
            logs = {label: gym_ctxbandits.log(env_id, agents.make(name, seed=seed, **kw), args.rounds, seed,
                                              env_kwargs=kwargs)
                    for label, (name, kw) in behaviours(env_name, args).items()}
            context = next(iter(logs.values()))["context"]       # the env draws the same rounds for every behaviour
            dists = target_dists(trained, context, args.draws)
            for behaviour, log in logs.items():
                for target, pi in dists.items():
                    setting = dict(env=env_name, behaviour=behaviour, target=target)
                    overlaps.append(dict(setting, seed=seed, **overlap(log, pi)))
                    truth = feedback.true_value(log, pi)
                    for pscore, change in PSCORES.items():
                        if pscore != "true" and env_name not in WRONG_PSCORE_ENVS:
                            continue
                        fb = dict(log, pscore=change(log["pscore"], log["n_actions"]))
                        if pscore == "true":
                            estimates = ope.evaluate(fb, pi, n_bootstrap=args.n_bootstrap, seed=seed)
                            insample = ope.dr(fb["reward"], fb["action"], fb["pscore"], pi, context=fb["context"],
                                              fit="in-sample", n_bootstrap=args.n_bootstrap, seed=seed)
                            estimates.append(ope.Estimate("DR in-sample", insample.value, insample.low, insample.high))
                            q = ope.reward_model(fb["context"], fb["action"], fb["reward"], fit="sequential")
                            for label, (fn, kw) in OLD_DEFAULTS.items():      # the fixed defaults before issue 48
                                est = fn(fb["reward"], fb["action"], fb["pscore"], pi, estimated_rewards=q,
                                         n_bootstrap=args.n_bootstrap, seed=seed, **kw)
                                estimates.append(ope.Estimate(label, est.value, est.low, est.high))
                        else:                 # the log's action_prob no longer matches: leave it out
                            estimates = ope.evaluate(dict(fb, action_prob=None), pi, ("IPS", "SNIPS", "DR"),
                                                     n_bootstrap=args.n_bootstrap, seed=seed)
                        for est in estimates:
                            rows.append(dict(setting, pscore=pscore, estimator=est.estimator, seed=seed,
                                             error=est.value - truth, width=est.high - est.low,
                                             covers=est.low <= truth <= est.high, tuned=est.tuned,
                                             as_dr=as_dr(est, overlaps[-1]["max weight"])))
    return pd.DataFrame(rows), pd.DataFrame(overlaps)


def as_dr(est: ope.Estimate, largest: float) -> bool | None:
    """Whether a tuned Switch-DR or DRos chose DR itself (tau at least the log's largest weight, lam
    infinite); None for an estimator not tuned."""
    if est.tuned is None:
        return None
    return bool(est.tuned >= largest) if est.estimator == "Switch-DR" else bool(np.isinf(est.tuned))


def summary(runs: pd.DataFrame) -> pd.DataFrame:
    """Per setting and estimator: bias, its standard error over seeds (sd / sqrt(seeds)), the bias in
    those standard errors (t), the sd over seeds (SE of one estimate), RMSE, mean CI width and coverage."""
    g = runs.groupby(["env", "behaviour", "target", "pscore", "estimator"], sort=False)
    sd, n = g["error"].std(ddof=1), g["error"].count()
    as_dr = runs.assign(as_dr=runs["as_dr"].astype(float)).groupby(
        ["env", "behaviour", "target", "pscore", "estimator"], sort=False)["as_dr"].sum()
    return pd.DataFrame({"bias": g["error"].mean(), "bias_se": sd / np.sqrt(n), "t": g["error"].mean() / (sd / np.sqrt(n)),
                         "SE": sd, "RMSE": g["error"].apply(lambda e: float(np.sqrt(np.mean(e ** 2)))),
                         "width": g["width"].mean(), "coverage": g["covers"].mean(),
                         "tuned": g["tuned"].median(), "as_dr": as_dr, "seeds": n}).reset_index()


def overlap_markdown(overlaps: pd.DataFrame) -> str:
    """The mean overlap of every (env, behaviour, target) over its seeds."""
    lines = ["| env | behaviour | target | min propensity | max weight | ESS | w > 20 |", "|---|---|---|---|---|---|---|"]
    for key, g in overlaps.groupby(["env", "behaviour", "target"], sort=False):
        lines.append("| " + " | ".join(key) + f" | {g['min propensity'].mean():.4f} | {g['max weight'].mean():.1f} | "
                     f"{g['ESS'].mean():.0f} | {g['w > 20'].mean():.1f} |")
    return "\n".join(lines)


def markdown(table: pd.DataFrame) -> str:
    """Two tables: every estimator with the logged pscores; IPS, SNIPS and DR with the wrong ones."""
    lines = ["| env | behaviour | target | estimator | bias (t) | SE | RMSE | CI width | 95% CI covers | "
             "tuned: median, logs where DR |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in table[table["pscore"] == "true"].itertuples():
        auto = "" if pd.isna(r.tuned) else f"{r.tuned:.3g}, {r.as_dr:.0f} of {r.seeds}"
        lines.append(f"| {r.env} | {r.behaviour} | {r.target} | {r.estimator} | {r.bias:+.3f} ({r.t:+.1f}) | {r.SE:.3f} | "
                     f"{r.RMSE:.3f} | {r.width:.3f} | {100 * r.coverage:.0f}% | {auto} |")
    wrong = table[table["pscore"] != "true"]
    names = list(dict.fromkeys(wrong["estimator"]))
    lines += ["", "| env | behaviour | target | pscore | " + " | ".join(f"{e} bias, covers" for e in names) + " |",
              "|---|---|---|---|" + "---|" * len(names)]
    for key, group in wrong.groupby(["env", "behaviour", "target", "pscore"], sort=False):
        by_name = group.set_index("estimator").loc[names]
        cells = [f"{r.bias:+.3f}, {100 * r.coverage:.0f}%" for r in by_name.itertuples()]
        lines.append("| " + " | ".join([*key, *cells]) + " |")
    return "\n".join(lines)


def tau_grid(args: Args, grid: tuple[float, ...]) -> str:
    """Softmax's overlap with both targets at every tau of `grid` (means over the seeds of `args`),
    its regret per round, and per env the tau the MAX_WEIGHT rule picks (marked "<-")."""
    lines = ["| env | tau | target | min propensity | max weight | ESS | w > 20 | regret per round |",
             "|---|---|---|---|---|---|---|---|"]
    for env_name, trained in targets(args, tuple(TAUS)).items():
        stats = []
        for seed in range(args.first_seed, args.first_seed + args.seeds):
            logs = {tau: gym_ctxbandits.log(ENVS[env_name][0], agents.make("Softmax", tau=tau, seed=seed), args.rounds,
                                            seed, env_kwargs=KW) for tau in grid}
            dists = target_dists(trained, logs[grid[0]]["context"], args.draws)
            for tau, log in logs.items():
                mean = np.asarray(log["expected_reward"])
                regret = float((mean.max(axis=1) - mean[np.arange(len(mean)), log["action"]]).mean())
                stats += [dict(tau=tau, target=t, regret=regret, **overlap(log, pi)) for t, pi in dists.items()]
        stats = pd.DataFrame(stats)
        heavy = stats.groupby("tau")["max weight"].mean()
        chosen = min((tau for tau in grid if heavy[tau] <= MAX_WEIGHT), default=None)
        for (tau, target), g in stats.groupby(["tau", "target"], sort=False):
            mark = " <-" if tau == chosen else ""
            lines.append(f"| {env_name} | {tau:g}{mark} | {target} | {g['min propensity'].mean():.4f} | "
                         f"{g['max weight'].mean():.1f} | {g['ESS'].mean():.0f} | {g['w > 20'].mean():.1f} | "
                         f"{g['regret'].mean():.3f} |")
    return "\n".join(lines)


def _taus(text: str) -> dict[str, float]:
    """'Linear=0.1,Logistic=0.5' -> {env: tau}; '' -> no softmax behaviour."""
    taus = {}
    for part in filter(None, text.split(",")):
        env, _, tau = part.partition("=")
        if env not in TAUS or not tau:
            raise SystemExit(f"ope_coverage.py: --taus takes ENV=TAU pairs with ENV one of {', '.join(TAUS)}, got "
                             f"{part!r}")
        taus[env] = float(tau)
    return taus


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=Args.seeds, help="logs per setting")
    parser.add_argument("--first-seed", type=int, default=0, help="the logs' seeds are first-seed, first-seed + 1, ...")
    parser.add_argument("--rounds", type=int, default=Args.rounds, help="rounds per log")
    parser.add_argument("--train-rounds", type=int, default=Args.train_rounds, help="the targets' training rounds")
    parser.add_argument("--draws", type=int, default=Args.draws, help="LinTS posterior samples a round")
    parser.add_argument("--epsilons", default=",".join(map(str, EPSILONS)), help="the epsilon-greedy behaviours")
    parser.add_argument("--taus", default=",".join(f"{e}={t}" for e, t in TAUS.items()),
                        help="Softmax behaviours' temperature per env, ENV=TAU pairs ('' for none)")
    parser.add_argument("--tau-grid", help="instead of the tables: Softmax's overlap at each of these taus and the "
                        "tau the rule picks")
    parser.add_argument("--quick", action="store_true", help="2 seeds, 200 rounds, 100 training rounds, 100 draws, "
                        "50 bootstrap resamples: a smoke run")
    parser.add_argument("--envs", default=",".join(ENVS), help=f"comma-separated, of {', '.join(ENVS)}")
    parser.add_argument("--csv", help="also write every seed's row here")
    ns = parser.parse_args(argv)
    epsilons = tuple(float(e) for e in filter(None, ns.epsilons.split(",")))
    envs = tuple(filter(None, ns.envs.split(",")))
    if not envs or set(envs) - set(ENVS):
        raise SystemExit(f"ope_coverage.py: --envs takes names of {', '.join(ENVS)}, got {ns.envs!r}")
    args = (Args(2, 200, 100, 100, n_bootstrap=50, first_seed=ns.first_seed, envs=envs) if ns.quick else
            Args(ns.seeds, ns.rounds, ns.train_rounds, ns.draws, epsilons, _taus(ns.taus), ns.first_seed, envs=envs))
    start = time.perf_counter()
    if ns.tau_grid:
        print(tau_grid(args, tuple(float(t) for t in ns.tau_grid.split(","))))
    else:
        runs, overlaps = run(args)
        if ns.csv:
            runs.to_csv(ns.csv, index=False)
        print(overlap_markdown(overlaps) + "\n\n" + markdown(summary(runs)))
    print(f"\nseeds {args.first_seed}-{args.first_seed + args.seeds - 1} x {args.rounds} rounds, LinTS from "
          f"{args.draws} draws a round: {time.perf_counter() - start:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
