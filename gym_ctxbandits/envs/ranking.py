"""The ranking core (issue 50): a round shows L candidate items, the action is an ordered list of K distinct items.

A click model subclasses `RankingEnv` and writes its math once, batched over N instances:

* `draw_instance(rng) -> dict`: the instance (attraction probabilities, item features, ...), drawn at reset
  from the episode's generator, or from `instance_seed` when that is fixed (as in the K-armed core);
* `item_features(instances) -> (N, L, d)`: the observation (default: one-hot item ids, the (L, L) identity);
* `item_attractions(instances) -> (N, L)`: each item's attraction probability w(e);
* `position_weights(instances) -> (N, K) | None`: the positions' weights (PBM's examination probabilities,
  DCM's termination probabilities), None when the order of the list does not matter (the cascade);
  the best list puts the r-th most attractive item at the position of the r-th largest weight;
* `expected_reward(instances, w) -> (N,)`: the expected reward of lists whose items have attractions w (N, K);
* `clicks(instances, w, u_items, u_positions) -> (clicks, examined, rewards)`: one user per instance from the
  round's uniforms: u_items (N, K) the uniforms of the listed items, u_positions (N, K) one per position.

Common random numbers: every round draws one uniform per item (L, whether shown or not) and one per position
(K) from each instance's generator, whatever the list, so every agent meets the same users for a seed, and a
listed item is attractive when its uniform is below its attraction. `_RankingBatch` drives N instances;
the single env is its N = 1 case and `RankingVectorEnv` (`ranking_vector_env`) its N > 1 case, so both share
every line and sub-env i of a vector env reset with `seed` follows a single env reset with `seed + i`.
The contract (observation, action, info) is in docs/ranking.md.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from gym_ctxbandits.envs.core import ScalarBox, _read_only, _stack, _unbatch, _with_masks, check_int, reseed


class RankingSpace(spaces.MultiDiscrete):
    """`MultiDiscrete([L] * K)` whose members are lists of K distinct items: `sample()` draws K items without
    replacement and `contains` refuses a repeated item. RL libraries see a MultiDiscrete space."""

    def __init__(self, num_items: int, num_positions: int, seed=None):
        super().__init__([num_items] * num_positions, dtype=np.int64, seed=seed)

    def sample(self, mask=None, probability=None) -> np.ndarray:
        if mask is not None or probability is not None:
            raise ValueError("RankingSpace.sample takes no mask or probability: it draws K distinct items uniformly")
        return self.np_random.permutation(int(self.nvec[0]))[: len(self.nvec)].astype(self.dtype)

    def contains(self, x) -> bool:
        return super().contains(x) and len(np.unique(np.asarray(x))) == len(self.nvec)

    def __repr__(self) -> str:
        return f"RankingSpace(num_items={int(self.nvec[0])}, num_positions={len(self.nvec)})"


def check_ranking(action: Any, num_items: int, num_positions: int) -> np.ndarray:
    """`action` as a (K,) int64 list of distinct items in [0, L), or a TypeError/ValueError naming the problem."""
    a = np.asarray(action)
    if a.dtype.kind not in "iu" or a.dtype == np.bool_:
        raise TypeError(f"a ranking must be a sequence of {num_positions} integer item indices, got {action!r} of "
                        f"dtype {a.dtype}: pass e.g. np.array([...], dtype=int)")
    if a.shape != (num_positions,):
        raise ValueError(f"a ranking lists exactly {num_positions} items (one per position, the top first), got "
                         f"shape {a.shape}: pass num_positions={num_positions} item indices")
    if a.min() < 0 or a.max() >= num_items:
        raise ValueError(f"ranking {a.tolist()} has items out of range: items are 0..{num_items - 1}")
    if len(np.unique(a)) != num_positions:
        repeated = sorted({int(i) for i in a if (a == i).sum() > 1})
        raise ValueError(f"ranking {a.tolist()} repeats items {repeated}: list {num_positions} distinct items "
                         "(the DistinctItems wrapper repairs the actions of a policy that samples positions "
                         "independently)")
    return a.astype(np.int64)


def place(order: np.ndarray, weights: np.ndarray | None) -> np.ndarray:
    """The lists (N, K) that put item order[:, r] (the r-th best) at the position of the r-th largest weight;
    `order` itself when the positions have no weights (the cascade: any order of the best items is best)."""
    if weights is None:
        return order
    out = np.empty_like(order)
    np.put_along_axis(out, np.argsort(-weights, axis=1, kind="stable"), order, axis=1)
    return out


class _RankingBatch:
    """N independent instances of one click model, instance i drawing only from rngs[i]."""

    def __init__(self, model: RankingEnv, rngs: list[np.random.Generator]):
        self.model = model
        self.rngs = list(rngs)
        self.instances: list[dict] = [{}] * len(rngs)
        self.t = np.zeros(len(rngs), int)

    def reset(self, which: np.ndarray) -> None:
        """A fresh instance (unless fixed by instance_seed) for `which`; the optimal list of each instance."""
        m = self.model
        self.t[which] = 0
        for i in np.flatnonzero(which):
            self.instances[i] = m._instance(self.rngs[i])
        self.instance_arrays = _stack(self.instances)
        self.features = m.item_features(self.instance_arrays)
        self.attractions = m.item_attractions(self.instance_arrays)
        order = np.argsort(-self.attractions, axis=1, kind="stable")[:, : m.num_positions]
        self.optimal_action = place(order, m.position_weights(self.instance_arrays))
        self.optimal_reward = m.expected_reward(self.instance_arrays,
                                                np.take_along_axis(self.attractions, self.optimal_action, 1))

    def step(self, actions: np.ndarray) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """Rewards of the lists `actions` (N, K) and the step info."""
        m = self.model
        u = np.stack([r.random(m.num_items + m.num_positions) for r in self.rngs])  # CRN: L + K uniforms a round
        u_items = np.take_along_axis(u[:, : m.num_items], actions, 1)
        w = np.take_along_axis(self.attractions, actions, 1)
        clicks, examined, rewards = m.clicks(self.instance_arrays, w, u_items, u[:, m.num_items:])
        expected = m.expected_reward(self.instance_arrays, w)
        self.t += 1
        return rewards.astype(np.float64), {
            "clicks": clicks.astype(np.int8), "examined": examined.astype(bool), "expected_reward": expected,
            "optimal_expected_reward": self.optimal_reward.copy(), "optimal_action": self.optimal_action.copy(),
            "regret": np.maximum(self.optimal_reward - expected, 0.0),
        }


class RankingEnv(gym.Env):
    """Base class of the ranking envs (see the module docstring): L items, lists of K distinct items.

    Subclasses validate their kwargs, call `super().__init__(num_items, num_positions, dim, ...)` and write
    `draw_instance`, `expected_reward` and `clicks` (and `item_features`, `item_attractions`,
    `position_weights` when theirs differ from the defaults). `kind = "ranking"` tells the runner and the checks that the
    action is a list; `random_instance = False` on an instance declares its parameters given, not drawn.
    """

    metadata = {"render_modes": []}
    kind = "ranking"
    random_instance = True

    def __init__(self, num_items: int, num_positions: int, dim: int, *, feature_low: float = 0.0,
                 feature_high: float = 1.0, instance_seed: int | None = None):
        self.num_items = check_int("num_items", num_items)
        self.num_positions = check_int("num_positions", num_positions)
        if self.num_positions > self.num_items:
            raise ValueError(f"num_positions={num_positions} exceeds num_items={num_items}: a list shows K <= L "
                             "distinct items")
        self.dim = check_int("dim", dim)
        self.instance_seed = None if instance_seed is None else check_int("instance_seed", instance_seed, minimum=0)
        self._fixed_instance: dict | None = None
        self.observation_space = ScalarBox(feature_low, feature_high, (self.num_items, self.dim))
        self.action_space = RankingSpace(self.num_items, self.num_positions)
        self._batch: _RankingBatch | None = None

    # --- the click model: subclasses --------------------------------------------------------
    def draw_instance(self, rng: np.random.Generator) -> dict[str, np.ndarray]:
        raise NotImplementedError

    def item_features(self, instances: dict[str, np.ndarray]) -> np.ndarray:
        """One-hot item ids: the (L, L) identity for each instance (item i is row i)."""
        n = len(next(iter(instances.values())))
        return np.broadcast_to(np.eye(self.num_items, dtype=np.float32), (n, self.num_items, self.num_items))

    def item_attractions(self, instances: dict[str, np.ndarray]) -> np.ndarray:
        """Each item's attraction probability w(e), (N, L): the instance's `attractions` by default."""
        return instances["attractions"]

    def position_weights(self, instances: dict[str, np.ndarray]) -> np.ndarray | None:
        return None

    def expected_reward(self, instances: dict[str, np.ndarray], w: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def clicks(self, instances, w, u_items, u_positions) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        raise NotImplementedError

    # --- shared machinery -------------------------------------------------------------------
    def _instance(self, rng: np.random.Generator) -> dict[str, np.ndarray]:
        if self.instance_seed is None:
            return self.draw_instance(rng)
        if self._fixed_instance is None:
            self._fixed_instance = self.draw_instance(np.random.default_rng(self.instance_seed))
        return self._fixed_instance

    def _current(self) -> _RankingBatch:
        if self._batch is None:
            raise RuntimeError("no instance before the first reset()")
        return self._batch

    @property
    def instance(self) -> dict[str, np.ndarray]:
        """The current instance, drawn at the last reset (ground truth for tests and OPE, never an agent)."""
        return self._current().instances[0]

    @property
    def attractions(self) -> np.ndarray:
        """Every item's attraction probability in the current instance, (L,) (never for an agent)."""
        return self._current().attractions[0].copy()

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        self._batch = _RankingBatch(self, [self.np_random])
        self._batch.reset(np.ones(1, bool))
        return self._batch.features[0].copy(), {}

    def step(self, action):
        batch = self._current()
        a = check_ranking(action, self.num_items, self.num_positions)
        rewards, info = batch.step(a[None])
        return batch.features[0].copy(), float(rewards[0]), False, False, _unbatch(info)


class RankingVectorEnv(VectorEnv):
    """N independent copies of a `RankingEnv` family run as one batched problem (`ranking_vector_env`).

    Sub-env i is seeded `seed + i` and follows a single env reset with that seed. Episodes end together at
    `max_episode_steps`; autoreset is Gymnasium's next-step mode. Observations are read-only (N, L, d) arrays.
    """

    env_class: type[RankingEnv]
    metadata = {"autoreset_mode": AutoresetMode.NEXT_STEP}

    def __init__(self, num_envs: int, max_episode_steps: int | None = None, **kwargs: Any):
        self.num_envs = check_int("num_envs", num_envs)
        self.model = self.env_class(**kwargs)
        self.max_episode_steps = None if max_episode_steps is None else check_int("max_episode_steps",
                                                                                   max_episode_steps)
        self.single_observation_space = self.model.observation_space
        self.single_action_space = self.model.action_space
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self._batch: _RankingBatch | None = None
        self._needs_reset = np.zeros(self.num_envs, bool)

    def reset(self, *, seed: int | list[int | None] | None = None, options: dict | None = None):
        self._batch, which = reseed(self._batch, _RankingBatch, self.model, self.num_envs, seed, options)
        self._batch.reset(which)
        self._needs_reset[which] = False
        return _read_only(self._batch.features), {}

    def step(self, actions):
        if self._batch is None:
            raise RuntimeError("call reset() before step()")
        if self._needs_reset.any():
            obs, info = self.reset(options={"reset_mask": self._needs_reset.copy()})
            zeros = np.zeros(self.num_envs, bool)
            return obs, np.zeros(self.num_envs), zeros, zeros.copy(), info
        m = self.model
        actions = np.asarray(actions)
        if actions.ndim != 2 or actions.shape[0] != self.num_envs:
            raise ValueError(f"expected ({self.num_envs}, {m.num_positions}) actions, one ranking per sub-environment, "
                             f"got shape {actions.shape}")
        actions = np.stack([check_ranking(a, m.num_items, m.num_positions) for a in actions])
        rewards, info = self._batch.step(actions)
        truncated = (np.zeros(self.num_envs, bool) if self.max_episode_steps is None
                     else self._batch.t >= self.max_episode_steps)
        self._needs_reset = truncated.copy()
        return (_read_only(self._batch.features), rewards, np.zeros(self.num_envs, bool), truncated,
                _with_masks(info, np.ones(self.num_envs, bool)))


def ranking_vector_env(env_class: type[RankingEnv], module: str) -> type[RankingVectorEnv]:
    """The native vector env of a ranking family (named like it, defined in `module`), for `vector_entry_point`."""
    name = env_class.__name__.removesuffix("Env") + "VectorEnv"
    doc = f"Native vector version of :class:`{env_class.__name__}` (see RankingVectorEnv)."
    return type(name, (RankingVectorEnv,), {"env_class": env_class, "__doc__": doc, "__module__": module})


class DistinctItems(gym.ActionWrapper):
    """Turns any vector of K item indices into a list of K distinct items, for RL libraries whose MultiDiscrete
    policies draw each position independently (Stable-Baselines3): a repeated item keeps its first position
    and the later repeats are replaced, in order, by the smallest items not listed. The env itself refuses
    repeats; this wrapper is the explicit opt-in."""

    def action(self, action):
        a = np.asarray(action, dtype=np.int64).reshape(-1).copy()
        first = np.zeros(len(a), bool)
        first[np.unique(a, return_index=True)[1]] = True
        a[~first] = np.setdiff1d(np.arange(self.env.unwrapped.num_items), a)[: (~first).sum()]
        return a
