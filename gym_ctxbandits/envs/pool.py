"""Bandits whose arms come from a finite pool drawn with the instance.

Most problems of the papers are of this shape: an instance is a pool of P arm feature vectors
with their expected rewards; each round shows either the whole pool (a fixed arm set, P = K)
or K arms of it drawn uniformly without replacement (P > K). Expected rewards are computed once
per instance, from the float32 features the agent sees.
"""

from __future__ import annotations

import numpy as np

from gym_ctxbandits.envs.core import CtxBanditEnv, check_int, check_memory


class PoolEnv(CtxBanditEnv):
    """Base of the pool problems: subclasses give `draw_pool`, `draw_params` and `mean_reward`.

    Arguments: `num_arms` K shown per round; `pool_size` P (default K: the same arms every round).
    """

    def __init__(self, num_arms: int, dim: int, *, pool_size: int | None = None, **kwargs):
        super().__init__(num_arms, dim, **kwargs)
        self.pool_size = self.num_arms if pool_size is None else check_int("pool_size", pool_size)
        check_memory(f"a pool of pool_size={self.pool_size} arms, dim={dim}", 8 * self.pool_size * int(dim))
        if self.pool_size < self.num_arms:
            raise ValueError(f"pool_size ({self.pool_size}) must be >= num_arms ({self.num_arms}): each round shows num_arms arms of the pool")

    def draw_pool(self, rng: np.random.Generator) -> np.ndarray:
        """The (P, d) arm features of a new instance."""
        raise NotImplementedError

    def draw_params(self, rng: np.random.Generator) -> dict[str, np.ndarray]:
        """The reward model's parameters of a new instance (theta*, A, ...)."""
        raise NotImplementedError

    def mean_reward(self, x: np.ndarray, params: dict[str, np.ndarray]) -> np.ndarray:
        """Expected rewards of the rows of `x` (P, d) under `params`."""
        raise NotImplementedError

    def draw_instance(self, rng):
        pool = self.draw_pool(rng).astype(np.float32)
        params = self.draw_params(rng)
        return {"pool": pool, "pool_means": self.mean_reward(pool.astype(np.float64), params), **params}

    def draw_round(self, rng, instance, t=0):
        if self.pool_size == self.num_arms:
            return {}
        return {"idx": rng.choice(self.pool_size, self.num_arms, replace=False)}

    def round_arrays(self, instances, rounds):
        if "idx" not in rounds:
            return instances["pool"], instances["pool_means"], None
        rows = np.arange(len(rounds["idx"]))[:, None]
        return instances["pool"][rows, rounds["idx"]], instances["pool_means"][rows, rounds["idx"]], None
