"""The synthetic testbeds of [S3] (Li, Xu, Wang, Luo, "Scalable Exploration via Ensemble++").

Section numbers are the paper's. Where the paper is silent the project takes the authors'
public code (`szrlee/Ensemble_Plus_Plus`) as the tie-breaker; each docstring says where
(docs/papers.md, S3-A1 to S3-A4).
The quadratic bandit of [S3] section 5.2 is `QuadraticEnv` (synthetic.py) with the pool kwargs.
"""

from __future__ import annotations

import numpy as np

from gym_ctxbandits.envs.core import CtxBanditEnv, check_float, check_int, sigmoid, unit_rows
from gym_ctxbandits.envs.pool import PoolEnv


class FiniteLinearEnv(PoolEnv):
    """Finite-action linear bandit (Russo & Van Roy 2018) of [S3] section 5.1 and App. F.1.

    Description:
        A fixed decision set of |X| = K actions with coordinates i.i.d. Unif([-u, u]); reward
        r_t = X_t^T theta + eps, theta ~ N(0, 10 I_d) drawn per run (the Bayesian setting; fix
        `instance_seed` for the code's frequentist "FreqRusso" variant), eps ~ N(0, 1). The
        paper's main comparison (figure 3(a)) is d = 50, |X| = 10,000, registered here; its grid is
        |X| in {100, 1000, 10000}, d in {10, 50}. The box half-width u is 1/sqrt(d) in section 5.1
        and 1/sqrt(5) in App. F.1 and the code: default 1/sqrt(5) (docs/papers.md, S3-A1).

    Action Space: Discrete(K).
    Observation Space: Box(-u, u, (K, d), float32), the same set every round.
    Rewards: X^T theta + N(0, noise_std^2).
    Episode End: truncation at T = 1000 rounds.
    Arguments: num_arms=10000, dim=50, u=1/sqrt(5), prior_variance=10, noise_std=1, instance_seed=None.

    Version History:
        * v0: initial version.
    """

    def __init__(self, num_arms: int = 10_000, dim: int = 50, u: float = 1 / np.sqrt(5), prior_variance: float = 10.0,
                 noise_std: float = 1.0, instance_seed: int | None = None):
        self.u = check_float("u", u, strict=True)
        self.prior_variance = check_float("prior_variance", prior_variance)
        super().__init__(num_arms, dim, noise="gaussian", noise_std=noise_std, feature_bound=self.u,
                         instance_seed=instance_seed)

    def draw_pool(self, rng):
        return rng.uniform(-self.u, self.u, (self.num_arms, self.dim))

    def draw_params(self, rng):
        return {"theta": np.sqrt(self.prior_variance) * rng.standard_normal(self.dim)}

    def mean_reward(self, x, params):
        return x @ params["theta"]


class SphereLinearEnv(CtxBanditEnv):
    """Compact-action linear bandit on the unit sphere of [S3] App. F.1 (figure 10(c)(e)).

    Description:
        The paper's action set is the whole sphere S^{d-1}, r_t = X_t^T theta + eps with
        theta ~ N(0, 10 I_d), eps ~ N(0, 1), d in {10, 50, 100}. A Discrete action space cannot hold
        a continuum, so each round shows K points drawn afresh uniformly on the sphere and the
        agent picks one: every finite-arm agent runs unchanged, and as K grows the best shown
        point approaches the sphere's optimum theta / ||theta||. `info["regret"]` is the regret
        against the best shown point (the contract of every env); `info["sphere_regret"]`,
        ||theta|| - X_t^T theta, is the paper's regret against the whole sphere.

    Action Space: Discrete(K).
    Observation Space: Box(-1, 1, (K, d), float32), new points every round.
    Rewards: X^T theta + N(0, noise_std^2).
    Episode End: truncation at T = 1000 rounds.
    Arguments: num_arms=1000, dim=10, prior_variance=10, noise_std=1, instance_seed=None.

    Version History:
        * v0: initial version.
    """

    def __init__(self, num_arms: int = 1000, dim: int = 10, prior_variance: float = 10.0, noise_std: float = 1.0,
                 instance_seed: int | None = None):
        self.prior_variance = check_float("prior_variance", prior_variance)
        super().__init__(num_arms, dim, noise="gaussian", noise_std=noise_std, feature_bound=1.0,
                         instance_seed=instance_seed)

    def draw_instance(self, rng):
        return {"theta": np.sqrt(self.prior_variance) * rng.standard_normal(self.dim)}

    def draw_round(self, rng, instance, t=0):
        return {"x": unit_rows(rng.standard_normal((self.num_arms, self.dim))).astype(np.float32)}

    def round_arrays(self, instances, rounds):
        x = rounds["x"]
        return x, np.einsum("nkd,nd->nk", x.astype(np.float64), instances["theta"]), None

    def step_info(self, instances, rounds, actions):
        chosen = rounds["x"][np.arange(len(actions)), actions].astype(np.float64)
        theta = instances["theta"]
        return {"sphere_regret": np.linalg.norm(theta, axis=-1) - np.einsum("nd,nd->n", chosen, theta)}


class _S3PoolEnv(PoolEnv):
    """[S3] App. F.2: d = 100, a pool of 1000 candidate actions, 50 drawn each round.

    The pool's distribution is not stated; the code draws N(0, I_d) and normalises to unit norm
    (docs/papers.md, S3-A2).
    """

    def __init__(self, num_arms: int = 50, dim: int = 100, pool_size: int = 1000, **kwargs):
        super().__init__(num_arms, dim, pool_size=pool_size, feature_bound=1.0, **kwargs)

    def draw_pool(self, rng):
        return unit_rows(rng.standard_normal((self.pool_size, self.dim)))


class VectorQuadraticEnv(_S3PoolEnv):
    """Vector-quadratic bandit of [S3] App. F.2.

    Description:
        f_2(x) = 10 (x^T theta)^2 with theta uniform on the unit sphere (the paper says "unit
        ball"; the code normalises a Gaussian), r = f_2(x) + N(0, 0.1^2) (std 0.1;
        docs/papers.md, S3-A2, S3-A3). d = 100, 50 of a 1000-arm pool per round.

    Action Space: Discrete(K).
    Observation Space: Box(-1, 1, (K, d), float32).
    Rewards: 10 (x^T theta)^2 + N(0, noise_std^2).
    Episode End: truncation at T = 10^5 rounds (the code's default; the paper does not say).
    Arguments: num_arms=50, dim=100, pool_size=1000, noise_std=0.1, instance_seed=None.

    Version History:
        * v0: initial version.
    """

    def __init__(self, num_arms: int = 50, dim: int = 100, pool_size: int = 1000, noise_std: float = 0.1,
                 instance_seed: int | None = None):
        super().__init__(num_arms, dim, pool_size, noise="gaussian", noise_std=noise_std, instance_seed=instance_seed)

    def draw_params(self, rng):
        return {"theta": unit_rows(rng.standard_normal(self.dim))}

    def mean_reward(self, x, params):
        return 10.0 * (x @ params["theta"]) ** 2


class MLPTeacherEnv(_S3PoolEnv):
    """Neural (MLP-teacher) bandit of [S3] section 5.2(2) and App. F.2.

    Description:
        A random ReLU network (the code's hidden sizes (50, 50), Xavier-normal weights, zero
        biases) maps x to two logits; p = softmax(logits / 0.1) and the reward is Bernoulli(p_2),
        so the expected reward (for regret) is p_2(x). No additive noise: the temperature sets
        the signal-to-noise ratio. d = 100, 50 of a 1000-arm pool per round.

    Action Space: Discrete(K).
    Observation Space: Box(-1, 1, (K, d), float32).
    Rewards: 0 or 1.
    Episode End: truncation at T = 10^5 rounds (the code's default; the paper does not say).
    Arguments: num_arms=50, dim=100, pool_size=1000, hidden=(50, 50), temperature=0.1, instance_seed=None.

    Version History:
        * v0: initial version.
    """

    def __init__(self, num_arms: int = 50, dim: int = 100, pool_size: int = 1000, hidden: tuple[int, ...] = (50, 50),
                 temperature: float = 0.1, instance_seed: int | None = None):
        self.hidden = tuple(check_int("hidden width", h) for h in hidden)
        self.temperature = check_float("temperature", temperature, strict=True)
        super().__init__(num_arms, dim, pool_size, noise="bernoulli", instance_seed=instance_seed)

    def draw_params(self, rng):
        sizes = (self.dim, *self.hidden, 2)
        # Xavier-normal: std = sqrt(2 / (fan_in + fan_out)).
        return {f"W{i}": rng.standard_normal((a, b)) * np.sqrt(2.0 / (a + b)) for i, (a, b) in enumerate(zip(sizes, sizes[1:]))}

    def mean_reward(self, x, params):
        h = x
        for i in range(len(self.hidden)):
            h = np.maximum(h @ params[f"W{i}"], 0.0)
        logits = h @ params[f"W{len(self.hidden)}"] / self.temperature
        # p_2 of a two-way softmax is the sigmoid of the logit difference.
        return sigmoid(logits[:, 1] - logits[:, 0])
