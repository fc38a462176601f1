"""Vernade, Carpentier, Lattimore, Zappella, Ermis, Brueckner (2020), "Linear bandits with stochastic
delayed feedback": OTFLinUCB and OTFLinTS against LinUCB and LinTS fed the same delayed rewards.

The setting: d = 5, K = 10 arms drawn afresh every round, Bernoulli rewards (conversions), delays
geometric with mean 100 or 1,000 rounds, and a window m in {100, 500} after which a conversion is
never seen. No registered env has Bernoulli rewards of a (generalised) linear mean over fresh arms
(BernoulliLogistic-v0's arms are fixed, the NeuralLogistic h's are nonlinear, Linear-v0 and
SphereLinear-v0 are Gaussian), so this script registers two, each showing 10 arms a round of a pool
of 10,000 drawn with the instance (`--link`):

- linear (the default, the paper's): P(click) = x^T theta with the arms and theta of the authors'
  simulator: x ~ U[0, 1]^5 normalised to the unit sphere, theta = |N(0, I)| normalised, both in the
  positive orthant, so x^T theta lies in [0, 1] (Cauchy-Schwarz; clipped only against float32 rounding)
  (`V20/FreshBernoulliLinear-v0`). A round's 10 means have mean 0.74 and spread (sd) 0.13, the best
  0.04 above the second;
- logistic: BernoulliLogistic-v0 ([S1] 5.1) with a pool, x ~ U[-1, 1]^5, P(click) = mu(x^T theta),
  theta ~ N(0, 3/d I) (x^T theta of variance 1): means of mean 0.50, spread 0.19, best 0.07 above the
  second (`V20/FreshBernoulliLogistic-v0`).

Feedback (`Feedback(delay="geometric:MEAN", window=m, conversions=True, default_reward=0.0)`): a
click reaches the agent after its delay if that is at most m rounds; a non-click, or a click later
than m, reaches it as a 0 at s + m (the baseline's "wait m rounds, then count it as no conversion").
The OTF agents (window m) put x_s into V_t when they act and add rewards as they arrive, so a 0 changes
nothing for them; LinUCB and LinTS learn x_s only when its reward (or its default 0) arrives. Every
agent has sigma = 1/2 (a click is 1/2-sub-Gaussian). "no delay" is every reward at once (OTF with m = 0).

    python scripts/v20_linear_delays.py                   # T = 5,000, 10 seeds, the linear link
    python scripts/v20_linear_delays.py --link logistic   # the logistic link
    python scripts/v20_linear_delays.py --no-widening     # OTF agents with m = 0: what the widening costs
    python scripts/v20_linear_delays.py --authors-code    # OTF agents as the authors' released code runs them
    python scripts/v20_linear_delays.py --quick           # smoke run
"""

from pathlib import Path

import gymnasium as gym
import numpy as np

from _delayed import A, Clock, E, cell, final, parse, report, sweep
from gym_ctxbandits.envs.pool import PoolEnv
from gym_ctxbandits.envs.synthetic import BernoulliLogisticEnv

NAMES = ("LinUCB", "OTFLinUCB", "LinTS", "OTFLinTS")
SETTINGS = {"no delay": (None, 0), "geometric:100, m=100": (100, 100), "geometric:100, m=500": (100, 500),
            "geometric:1000, m=100": (1000, 100), "geometric:1000, m=500": (1000, 500)}   # (mean delay, window m)


class FreshBernoulliLinearEnv(PoolEnv):
    """Vernade et al. (2020)'s Bernoulli bandit with a linear mean: P(click) = x^T theta, arms and
    theta unit vectors of the positive orthant (x ~ U[0, 1]^d, theta ~ |N(0, I)|, each normalised), so
    x^T theta is in [0, 1]; `num_arms` arms drawn afresh each round from a pool of `pool_size`."""

    def __init__(self, num_arms: int = 10, dim: int = 5, pool_size: int = 10_000, instance_seed: int | None = None):
        super().__init__(num_arms, dim, pool_size=pool_size, noise="bernoulli", feature_bound=1.0,
                         instance_seed=instance_seed)

    def draw_pool(self, rng):
        x = rng.uniform(0.0, 1.0, (self.pool_size, self.dim))
        return x / np.linalg.norm(x, axis=1, keepdims=True)

    def draw_params(self, rng):
        theta = np.abs(rng.standard_normal(self.dim))
        return {"theta": theta / np.linalg.norm(theta)}

    def mean_reward(self, x, params):
        return np.clip(x @ params["theta"], 0.0, 1.0)  # the float32 features' norms may pass 1 by 1e-7


class FreshBernoulliLogisticEnv(BernoulliLogisticEnv):
    """[S1]'s Bernoulli logistic bandit with `num_arms` arms drawn afresh each round from a pool of `pool_size`."""

    def __init__(self, num_arms: int = 10, dim: int = 5, pool_size: int = 10_000, theta_variance: float | None = None,
                 instance_seed: int | None = None):
        super().__init__(num_arms, dim, theta_variance, instance_seed)
        self.pool_size = pool_size


ENVS = {"linear": ("V20/FreshBernoulliLinear-v0", FreshBernoulliLinearEnv, {}),
        "logistic": ("V20/FreshBernoulliLogistic-v0", FreshBernoulliLogisticEnv, {"theta_variance": 3 / 5})}
for env_id, entry_point, _ in ENVS.values():
    if env_id not in gym.registry:
        gym.register(env_id, entry_point=entry_point, max_episode_steps=5000)


# The OTF agents' index as the authors' released code computes it (bonus="code", docs/delayed_agents.md),
# with the only constants a published run of that code gives (MarcoGigli/bootstrap-conversions,
# random_theta_simulation.py): alpha = 1, delta = 0.1, lambda = 1; sigma_0 = 0.5 (prior sigma_0^2 I).
AUTHORS_CODE = {"OTFLinUCB": {"bonus": "code", "alpha": 1.0, "delta": 0.1, "lam": 1.0},
                "OTFLinTS": {"bonus": "code", "lam": 0.25}}


def agents(setting: str, widen: bool = True, authors_code: bool = False):
    """The four agents under `setting`; widen=False gives the OTF agents m = 0 (no in-flight term,
    the feedback's window unchanged): a diagnostic of what the widening costs; authors_code=True the
    OTF agents of the authors' released code (`AUTHORS_CODE`)."""
    m = SETTINGS[setting][1] if widen else 0
    otf = {name: {"m": m, **(AUTHORS_CODE[name] if authors_code else {})} for name in AUTHORS_CODE}
    return [A(name, name, sigma=0.5, **otf.get(name, {})) for name in NAMES]


def feedback(mean: int | None, m: int):
    return None if mean is None else {"delay": f"geometric:{mean}", "window": m, "conversions": True,
                                      "default_reward": 0.0}


def main(argv=None):
    link = ("--link", {"choices": sorted(ENVS), "default": "linear",
                       "help": "P(click) = x^T theta (default, the paper's) or mu(x^T theta)"})
    no_widening = ("--no-widening", {"action": "store_true", "help": "OTF agents with m = 0: no in-flight widening"})
    authors_code = ("--authors-code", {"action": "store_true",
                                       "help": "OTF agents with the index of the authors' released code (bonus='code')"})
    args = parse(__doc__, horizon=5000, seeds=10, quick_horizon=200, argv=argv, options=[link, no_widening, authors_code])
    clock = Clock()
    env_id, _, kwargs = ENVS[args.link]
    env = E(env_id, dim=5, num_arms=10, **kwargs)
    table = sweep(args, "v20_linear_delays", [env], lambda setting: agents(setting, not args.no_widening, args.authors_code),
                  {s: feedback(*v) for s, v in SETTINGS.items()}, imports=[str(Path(__file__).resolve())])
    res = final(table).set_index(["x", "agent"])
    rows = ["| feedback | " + " | ".join(NAMES) + " |", "|---|" + "---|" * len(NAMES)]
    for setting in SETTINGS:
        rows.append(f"| {setting} | " + " | ".join(cell(*res.loc[(setting, n), ["mean", "sem"]]) for n in NAMES) + " |")
    variant = (f"{args.link} link" + (", OTF agents without widening" if args.no_widening else "")
               + (", OTF agents of the authors' code" if args.authors_code else ""))
    report(args, "v20_linear_delays", f"Vernade et al. 2020: final regret under delayed, censored conversions ({variant})",
           "\n".join(rows), clock)


if __name__ == "__main__":
    main()
