"""Hand-built instances of [S4] (Hao, Lattimore, Szepesvari, "Adaptive Exploration in Linear Contextual Bandit").

A contextual linear bandit with M discrete contexts: each round context m ~ p arrives and its
action set A^m (K arms in R^d) is shown; Y_t = <X_t, theta> + eta_t, eta_t ~ N(0, 1). The
horizon n of the figures is never stated: 10^4 is registered (docs/papers.md, S4-A1).
"""

from __future__ import annotations

import numpy as np

from gym_ctxbandits.envs.core import check_float, check_int, unit_rows
from gym_ctxbandits.envs.pool import PoolEnv


class ActionSetsEnv(PoolEnv):
    """Linear contextual bandit over finitely many known action sets, [S4] sections 2 and 5.

    Description:
        theta is fixed (frequentist). Each round a context m is drawn with probability
        `context_probs[m]` and the K arms of `action_sets[m]` are shown; the index m is also in
        `info["context"]` (it is what the agent could tell from the arms themselves).
        Registered instances: `FixedActionSet-v0` (section 5.1; see `FixedActionSetEnv`),
        `ChangingActionSet1-v0` (section 5.2 scenario one), `ChangingActionSet2-v0` (scenario two;
        theta = (1, 0) as the text implies, docs/papers.md, S4-A10, and the duplicated arm (-1, 0)
        kept as printed) and `BoundedRegret-v0` (section 5.3).

    Action Space: Discrete(K).
    Observation Space: Box(-b, b, (K, d), float32), b the largest absolute coordinate.
    Rewards: <X, theta> + N(0, noise_std^2).
    Episode End: truncation at n = 10^4 rounds.
    Arguments: action_sets (M x K x d nested lists), context_probs (M, summing to 1), theta (d),
        noise_std=1.0, instance_seed=None (there is nothing random in the instance).

    Version History:
        * v0: initial version.
    """

    random_instance = False  # the action sets and theta are given

    def __init__(self, action_sets, context_probs, theta, noise_std: float = 1.0, instance_seed: int | None = None):
        sets = np.asarray(action_sets, dtype=np.float64)
        if sets.ndim != 3 or sets.size == 0:
            raise ValueError(f"action_sets must be nested lists of shape (M, K, d), got shape {sets.shape}")
        probs = np.asarray(context_probs, dtype=np.float64)
        if probs.shape != (sets.shape[0],) or (probs < 0).any() or not np.isclose(probs.sum(), 1.0):
            raise ValueError(f"context_probs must be {sets.shape[0]} non-negative numbers summing to 1, got {context_probs!r}")
        theta = np.asarray(theta, dtype=np.float64)
        if theta.shape != (sets.shape[2],) or not np.isfinite(theta).all():
            raise ValueError(f"theta must be {sets.shape[2]} finite numbers (the arms' dimension), got {theta!r}")
        if not np.isfinite(sets).all():
            raise ValueError("action_sets contain NaN or inf")
        self.action_sets, self.context_probs, self.theta = sets, probs, theta
        self._cumulative_probs = np.cumsum(probs)
        self._set_idx = np.arange(sets.shape[0] * sets.shape[1]).reshape(sets.shape[:2])  # pool rows of each set
        num_sets, num_arms, dim = sets.shape
        super().__init__(num_arms, dim, pool_size=num_sets * num_arms, noise="gaussian", noise_std=noise_std,
                         feature_bound=float(np.abs(sets).max()), instance_seed=instance_seed)

    def draw_pool(self, rng):
        return self.action_sets.reshape(-1, self.dim)

    def draw_params(self, rng):
        return {"theta": self.theta}

    def mean_reward(self, x, params):
        return x @ params["theta"]

    def draw_round(self, rng, instance, t=0):
        if len(self.context_probs) == 1:
            return {"context": np.array(0)}  # one fixed set: the pool itself, shown without a copy
        m = min(int(np.searchsorted(self._cumulative_probs, rng.random(), side="right")), len(self.context_probs) - 1)
        return {"context": np.array(m), "idx": self._set_idx[m]}

    def reset_info(self, instances, rounds):
        return {"context": rounds["context"]}


class FixedActionSetEnv(ActionSetsEnv):
    """Fixed action set of [S4] section 5.1 (figure 1).

    Description:
        d = 2, theta = (1, 0), A = {(1, 0), (0, 1), (1 - u, 5u)}, u in {0.1, 0.2}. x_1 is optimal,
        gaps 1 and u; for small u the near-optimal x_3 is nearly parallel to x_1, so optimism
        rarely plays the informative x_2. For u = 0.2, ||x_3|| > 1, kept as printed
        (docs/papers.md, S4-A11).

    Action Space: Discrete(3).
    Observation Space: Box(-1, 1, (3, 2), float32).
    Rewards: <X, theta> + N(0, 1).
    Episode End: truncation at n = 10^4 rounds.
    Arguments: u=0.1, noise_std=1.0, instance_seed=None.

    Version History:
        * v0: initial version.
    """

    def __init__(self, u: float = 0.1, noise_std: float = 1.0, instance_seed: int | None = None):
        self.u = check_float("u", u)
        super().__init__([[[1.0, 0.0], [0.0, 1.0], [1.0 - self.u, 5.0 * self.u]]], [1.0], [1.0, 0.0],
                         noise_std=noise_std, instance_seed=instance_seed)


class UnitCircleEnv(PoolEnv):
    """Fixed action sets on the unit circle of [S4] section 5.4 and App. D.

    Description:
        d = 2, K actions drawn uniformly on the unit circle, fixed for a run and redrawn per
        realisation (the paper does not say; docs/papers.md, S4-A12).
        `UnitCircle-v0`: K = 100, theta = (1, 0) (section 5.4); `UnitCircleSmall-v0`: K = 5
        (App. D(1)); `RandomTheta-v0`: K = 100 and theta ~ N(0, 10 I) normalised to unit norm per
        realisation (App. D(2); action set as in section 5.4, docs/papers.md, S4-A12).

    Action Space: Discrete(K).
    Observation Space: Box(-1, 1, (K, 2), float32), the same arms every round.
    Rewards: <X, theta> + N(0, noise_std^2).
    Episode End: truncation at n = 10^4 rounds.
    Arguments: num_arms=100, theta=(1, 0) or None (random unit theta per realisation),
        noise_std=1.0, instance_seed=None.

    Version History:
        * v0: initial version.
    """

    def __init__(self, num_arms: int = 100, theta=(1.0, 0.0), noise_std: float = 1.0, instance_seed: int | None = None):
        check_int("num_arms", num_arms)
        if theta is not None:
            theta = np.asarray(theta, dtype=np.float64)
            if theta.shape != (2,) or not np.isfinite(theta).all():
                raise ValueError(f"theta must be 2 finite numbers or None (random per realisation), got {theta!r}")
        self.theta = theta
        super().__init__(num_arms, 2, noise="gaussian", noise_std=noise_std, feature_bound=1.0, instance_seed=instance_seed)

    def draw_pool(self, rng):
        angles = rng.uniform(0.0, 2 * np.pi, self.num_arms)
        return np.stack([np.cos(angles), np.sin(angles)], axis=1)

    def draw_params(self, rng):
        if self.theta is not None:
            return {"theta": self.theta}
        return {"theta": unit_rows(np.sqrt(10.0) * rng.standard_normal(2))}

    def mean_reward(self, x, params):
        return x @ params["theta"]
