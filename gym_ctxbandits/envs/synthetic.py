"""Synthetic reward models of [S0] (anytime ensemble sampling), [S1] (GLM-TSL/FPL), [S2] (neural logistic).

Papers: [S0] Sun, Wang, Xu, "Provable Anytime Ensemble Sampling Algorithms in Nonlinear
Contextual Bandits"; [S1] Kveton et al., "Randomized Exploration in Generalized Linear
Bandits"; [S2] Bae, Lee, "Neural Logistic Bandits". Section numbers are the papers' own.
"""

from __future__ import annotations

import numpy as np

from gym_ctxbandits.envs.core import check_float, sigmoid, unit_rows
from gym_ctxbandits.envs.pool import PoolEnv

class _S0Env(PoolEnv):
    """Shared by the [S0] section 7.1 problems: K fixed unit-norm arms, Gaussian reward noise.

    The paper does not say how arms and theta* are drawn (docs/papers.md, S0-A1): arms are
    i.i.d. N(0, I_d) normalised to unit norm. The arm set is fixed for the whole run (section 3).
    """

    def __init__(self, num_arms: int = 50, dim: int = 20, noise_std: float = 0.5, pool_size: int | None = None,
                 instance_seed: int | None = None):
        super().__init__(num_arms, dim, pool_size=pool_size, noise="gaussian", noise_std=noise_std,
                         feature_bound=1.0, instance_seed=instance_seed)

    def draw_pool(self, rng):
        return unit_rows(rng.standard_normal((self.pool_size, self.dim)))


class _S0ThetaEnv(_S0Env):
    """An [S0] problem with a parameter vector theta* ~ N(0, I_d) normalised to `theta_norm`."""

    def __init__(self, num_arms: int = 50, dim: int = 20, noise_std: float = 0.5, theta_norm: float = 1.0,
                 pool_size: int | None = None, instance_seed: int | None = None):
        self.theta_norm = check_float("theta_norm", theta_norm)
        super().__init__(num_arms, dim, noise_std, pool_size, instance_seed)

    def draw_params(self, rng):
        return {"theta": self.theta_norm * unit_rows(rng.standard_normal(self.dim))}


class LinearEnv(_S0ThetaEnv):
    """Linear bandit of [S0] section 7.1 (figure 1(a)).

    Description:
        Y_t = X_t^T theta* + eta_t, eta_t ~ N(0, sigma^2), sigma = 0.5, over K = 50 fixed arms in
        d = 20. Arms i.i.d. Gaussian normalised to unit norm, theta* Gaussian normalised to
        `theta_norm` (the paper leaves both unstated; docs/papers.md, S0-A1).

    Action Space: Discrete(K).
    Observation Space: Box(-1, 1, (K, d), float32), the same arm set every round.
    Rewards: X^T theta* + N(0, noise_std^2).
    Episode End: truncation at T = 10^4 rounds (max_episode_steps).
    Arguments: num_arms=50, dim=20, noise_std=0.5, theta_norm=1.0, pool_size=None (set it above
        num_arms to show num_arms of a larger pool each round), instance_seed=None.

    Version History:
        * v0: initial version.
    """

    def mean_reward(self, x, params):
        return x @ params["theta"]


class LogisticEnv(_S0ThetaEnv):
    """Logistic bandit with Gaussian noise of [S0] section 7.1 (figure 1(b)).

    Description:
        Y_t = mu(X_t^T theta*) + eta_t with mu(s) = 1 / (1 + exp(-s)) and eta_t ~ N(0, 0.5^2): the
        observed reward is the mean plus Gaussian noise, not a Bernoulli draw (contrast
        `CtxBandit/BernoulliLogistic-v0`). K = 50, d = 20; the larger setting of App. F.1.3 is
        `num_arms=500, dim=50`. Arms and theta* as in `LinearEnv` (docs/papers.md, S0-A1).

    Action Space: Discrete(K).
    Observation Space: Box(-1, 1, (K, d), float32), the same arm set every round.
    Rewards: mu(X^T theta*) + N(0, noise_std^2).
    Episode End: truncation at T = 10^4 rounds.
    Arguments: num_arms=50, dim=20, noise_std=0.5, theta_norm=1.0, pool_size=None, instance_seed=None.

    Version History:
        * v0: initial version.
    """

    def mean_reward(self, x, params):
        return sigmoid(x @ params["theta"])


class DistanceEnv(_S0ThetaEnv):
    """Distance bandit of [S0] section 7.1 "Neural Bandit (i)" (figure 1(d)).

    Description:
        h_1(X) = -||X - theta*||_2, Y_t = h_1(X_t) + N(0, 0.5^2), K = 50, d = 20. theta* is drawn
        as in `LinearEnv` (unit norm by default; the paper does not say).

    Action Space: Discrete(K).
    Observation Space: Box(-1, 1, (K, d), float32), the same arm set every round.
    Rewards: -||X - theta*|| + N(0, noise_std^2).
    Episode End: truncation at T = 10^4 rounds.
    Arguments: num_arms=50, dim=20, noise_std=0.5, theta_norm=1.0, pool_size=None, instance_seed=None.

    Version History:
        * v0: initial version.
    """

    def mean_reward(self, x, params):
        return -np.linalg.norm(x - params["theta"], axis=-1)


class QuadraticEnv(_S0Env):
    """Quadratic bandit of [S0] section 7.1 "Neural Bandit (ii)" and [S3] section 5.2.

    Description:
        h_2(X) = 10^-2 X^T A A^T X with A_ij ~ N(0, 1) (d x d), Y_t = h_2(X_t) + N(0, sigma^2).
        [S0] (`CtxBandit/Quadratic-v0`): K = 50 fixed unit-norm arms, d = 20, sigma = 0.5; its
        larger setting (App. F.1.3) is `num_arms=500, dim=50`. [S3] (`CtxBandit/QuadraticPool-v0`):
        d = 100, a pool of 1000 unit-norm Gaussian arms with 50 drawn each round, sigma = 0.1
        (std; docs/papers.md, S3-A2).

    Action Space: Discrete(K).
    Observation Space: Box(-1, 1, (K, d), float32).
    Rewards: 10^-2 ||A^T X||^2 + N(0, noise_std^2).
    Episode End: truncation at T = 10^4 rounds ([S0]) or 10^5 ([S3] code default).
    Arguments: num_arms=50, dim=20, noise_std=0.5, pool_size=None, instance_seed=None.

    Version History:
        * v0: initial version.
    """

    def draw_params(self, rng):
        return {"A": rng.standard_normal((self.dim, self.dim))}

    def mean_reward(self, x, params):
        return 1e-2 * np.square(x @ params["A"]).sum(axis=-1)


class BernoulliLogisticEnv(PoolEnv):
    """Logistic bandit with Bernoulli rewards of [S1] section 5.1 (figure 1).

    Description:
        Y ~ Ber(mu(x_i^T theta*)), mu the logistic function, K = 100 arms fixed for the run with
        x_i ~ Unif([-1, 1]^d), theta* ~ N(0, v I_d). The paper prints v = 3 d^-2 but claims
        var[x^T theta*] = 1, which needs v = 3 d^-1 (docs/papers.md, S1-A1): the printed value is
        the default (`theta_variance=None`), pass `theta_variance=3/d` for the other reading.
        The paper's panels use d in {5, 10, 20}; d = 10 is registered, the others are kwargs.
        (The paper's "pull d linearly independent arms first" is an agent's warm-up, not the env's.)

    Action Space: Discrete(K).
    Observation Space: Box(-1, 1, (K, d), float32), the same arms every round.
    Rewards: 0 or 1, Bernoulli with mean mu(x^T theta*).
    Episode End: truncation at n = 50,000 rounds.
    Arguments: num_arms=100, dim=10, theta_variance=None (3/d^2), instance_seed=None.

    Version History:
        * v0: initial version.
    """

    def __init__(self, num_arms: int = 100, dim: int = 10, theta_variance: float | None = None,
                 instance_seed: int | None = None):
        super().__init__(num_arms, dim, noise="bernoulli", feature_bound=1.0, instance_seed=instance_seed)
        self.theta_variance = 3.0 / self.dim**2 if theta_variance is None else check_float("theta_variance", theta_variance)

    def draw_pool(self, rng):
        return rng.uniform(-1.0, 1.0, (self.pool_size, self.dim))

    def draw_params(self, rng):
        return {"theta": np.sqrt(self.theta_variance) * rng.standard_normal(self.dim)}

    def mean_reward(self, x, params):
        return sigmoid(x @ params["theta"])


# [S2] section 7 (h1-h3) and App. J (h4-h6); theta in R^d, Theta in R^{d x d}, entries Unif(-1, 1).
NEURAL_LOGISTIC_H = {
    "h1": lambda x, p: 0.2 * (x @ p["theta"]) ** 4,
    "h2": lambda x, p: 20.0 * np.cos(x @ p["theta"]),
    "h3": lambda x, p: 5.0 * np.einsum("pi,ij,pj->p", x, p["Theta"], x),
    "h4": lambda x, p: 10.0 * (x @ p["theta"]) ** 2,
    "h5": lambda x, p: np.square(x @ p["Theta"].T).sum(axis=-1),
    "h6": lambda x, p: np.cos(3.0 * (x @ p["theta"])),
}


class NeuralLogisticEnv(PoolEnv):
    """Synthetic neural logistic bandits h1..h6 of [S2] section 7 and App. J.

    Description:
        r_t ~ Bern(mu(h(x_t))) with mu the logistic function and latent reward h one of
        h1(x) = 0.2 (x^T theta)^4, h2(x) = 20 cos(x^T theta), h3(x) = 5 x^T Theta x,
        h4(x) = 10 (x^T theta)^2, h5(x) = x^T Theta^T Theta x, h6(x) = cos(3 x^T theta),
        entries of theta (d) and Theta (d x d) i.i.d. Unif(-1, 1). Context-arm features come from a
        finite pool of `pool_size` vectors (2500 in figures 1-2; 10, 50, 10000 for the effective-
        dimension study of App. A); each round shows K = 5 of them drawn uniformly without
        replacement. The pool's distribution is not stated (docs/papers.md, S2-A1): `features`
        picks it, "sphere" (uniform on the unit sphere, the default), "ball" (uniform in the unit
        ball), "gaussian" (N(0, I_d)) or "cube" (U[-1, 1]^d). On the sphere and in the ball x^T theta
        is small (sd about 0.6), so h1 and h2 are nearly flat: docs/s2_neurallog_agents.md has the
        sweep of how learnable each choice leaves each h_i. Regret is measured on the mean mu(h(x)).

    Action Space: Discrete(K).
    Observation Space: Box(-1, 1, (K, d), float32); unbounded for features="gaussian".
    Rewards: 0 or 1.
    Episode End: truncation at T = 2000 rounds.
    Arguments: reward_fn="h1" (one of h1..h6; one registered id per function), num_arms=5, dim=20,
        pool_size=2500, features="sphere", instance_seed=None.

    Version History:
        * v0: initial version.
    """

    FEATURES = ("sphere", "ball", "gaussian", "cube")

    def __init__(self, reward_fn: str = "h1", num_arms: int = 5, dim: int = 20, pool_size: int = 2500,
                 features: str = "sphere", instance_seed: int | None = None):
        if reward_fn not in NEURAL_LOGISTIC_H:
            raise ValueError(f"reward_fn must be one of {sorted(NEURAL_LOGISTIC_H)}, got {reward_fn!r}")
        if features not in self.FEATURES:
            raise ValueError(f"features must be one of {self.FEATURES} (the pool's distribution), got {features!r}")
        self.reward_fn, self.features = reward_fn, features
        super().__init__(num_arms, dim, pool_size=pool_size, noise="bernoulli",
                         feature_bound=np.inf if features == "gaussian" else 1.0, instance_seed=instance_seed)

    def draw_pool(self, rng):
        shape = (self.pool_size, self.dim)
        if self.features == "gaussian":
            return rng.standard_normal(shape)
        if self.features == "cube":
            return rng.uniform(-1.0, 1.0, shape)
        pool = unit_rows(rng.standard_normal(shape))
        if self.features == "ball":  # a uniform direction at radius U^(1/d): uniform in the ball
            pool *= rng.random((self.pool_size, 1)) ** (1.0 / self.dim)
        return pool

    def draw_params(self, rng):
        return {"theta": rng.uniform(-1.0, 1.0, self.dim), "Theta": rng.uniform(-1.0, 1.0, (self.dim, self.dim))}

    def mean_reward(self, x, params):
        return sigmoid(NEURAL_LOGISTIC_H[self.reward_fn](x, params))
