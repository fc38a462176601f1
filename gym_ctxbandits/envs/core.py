"""The environment core: one bandit run is one Gymnasium episode, the math written once.

A family of problems subclasses `CtxBanditEnv` and writes its reward model as three methods:

* `draw_instance(rng) -> dict`: the problem instance (theta*, arm pool, teacher weights...),
  drawn at reset from the episode's generator, or from `instance_seed` when that is fixed;
* `draw_round(rng, instance, t) -> dict`: what is random or time-varying in round t (t = 0
  at reset): which arms are shown, which context arrives, where a drifting parameter is now;
  `{}` when nothing is. A non-stationary problem is this method and its round arrays
  (`DriftingLinearEnv`);
* `round_arrays(instances, rounds) -> (features, means, mask)`: batched over N instances,
  the (N, K, d) arm features shown (they may alias the instance, e.g. a fixed arm set),
  their (N, K) expected rewards, and an (N, K) mask of the available arms (None when all are).

`_Batch` drives N instances with N generators through those methods; the single env is its
N = 1 case and `CtxBanditVectorEnv` its N > 1 case, so both share every line of the math and
give identical trajectories for the same seeds (vector sub-env i is seeded `seed + i`, as in
Gymnasium's SyncVectorEnv).
"""

from __future__ import annotations

import inspect
import os
from copy import deepcopy
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.utils import seeding
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

NOISES = ("gaussian", "bernoulli", "none")


def check_int(name: str, value: Any, minimum: int = 1) -> int:
    """`value` as an int >= minimum, or a ValueError naming the argument and the fix."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def check_float(name: str, value: Any, minimum: float = 0.0, strict: bool = False) -> float:
    """`value` as a finite float >= minimum (> minimum when strict), or a clear ValueError."""
    try:
        out = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number, got {value!r}") from None
    if not np.isfinite(out) or out < minimum or (strict and out == minimum):
        bound = f"> {minimum}" if strict else f">= {minimum}"
        raise ValueError(f"{name} must be a finite number {bound}, got {value!r}")
    return out


def available_memory() -> int | None:
    """Bytes of memory available to new allocations (Linux's MemAvailable, else physical memory), or None."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        return None


def check_memory(what: str, nbytes: float) -> None:
    """A ValueError, before anything is allocated, when `what` would need more memory than is available."""
    free = available_memory()
    if free is not None and nbytes > free:
        raise ValueError(f"{what} needs about {nbytes / 2**30:.1f} GiB of memory, but {free / 2**30:.1f} GiB is "
                         "available; lower num_arms, pool_size, dim or num_envs")


def unit_rows(x: np.ndarray) -> np.ndarray:
    """Rows of `x` scaled to unit Euclidean norm."""
    return x / np.linalg.norm(x, axis=-1, keepdims=True)


def sigmoid(x: np.ndarray) -> np.ndarray:
    """The logistic link mu(s) = 1 / (1 + exp(-s))."""
    return 0.5 * (1.0 + np.tanh(0.5 * x))


class OneTimeCostWarning(UserWarning):
    """An env's notice of a one-time cost it will pay (the moderation env's posts not embedded yet):
    information for the user, not a fault, so `gym_ctxbandits.checks.check_gymnasium` lets it pass
    where it fails on every other warning."""


class ScalarBox(spaces.Box):
    """A `gymnasium.spaces.Box` whose bounds are one number each, kept as read-only broadcast views.

    Gymnasium's Box stores `low`, `high` and their `bounded_below`/`bounded_above` masks as four full
    arrays: 5.2 GB and 13 to 48 s in `gym.make` for K = 5 * 10^5 arms in d = 1000. Here each is one row of
    the last axis broadcast to the shape (d numbers, not K d; a row rather than one element so that
    the env checker's `low == high` runs at numpy's contiguous speed). Pickling and copying keep the
    numbers only, and `batch_space` gives another ScalarBox. Everything else (`contains`, `sample`,
    the env checkers) is the Box's own.
    """

    _BOUNDS = ("low", "high", "bounded_below", "bounded_above")

    def __init__(self, low: float, high: float, shape: tuple[int, ...], dtype=np.float32, seed=None):
        super().__init__(low, high, (1,), dtype, seed)  # the Box validates and casts the two numbers
        self._shape = tuple(int(n) for n in shape)
        self._broadcast()

    def _broadcast(self) -> None:
        for name in self._BOUNDS:
            value = getattr(self, name).flat[0]
            setattr(self, name, np.broadcast_to(np.full(self._shape[-1:], value), self._shape))
        self.low_repr, self.high_repr = str(self.low.flat[0]), str(self.high.flat[0])

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state.update({name: state[name].flat[:1] for name in self._BOUNDS})
        return state

    def __setstate__(self, state) -> None:
        super().__setstate__(state)
        self._broadcast()

    def __eq__(self, other: object, /) -> bool:
        if not isinstance(other, ScalarBox):
            return super().__eq__(other)
        bounds = [(self.low.flat[0], other.low.flat[0]), (self.high.flat[0], other.high.flat[0])]
        return self.shape == other.shape and self.dtype == other.dtype and all(np.allclose(a, b) for a, b in bounds)


@batch_space.register(ScalarBox)
def _batch_scalar_box(space: ScalarBox, n: int = 1) -> ScalarBox:
    """n stacked copies of a ScalarBox, still without memory (Gymnasium's Box version tiles the bounds)."""
    return ScalarBox(space.low.flat[0], space.high.flat[0], (n, *space.shape), space.dtype,
                     seed=deepcopy(space.np_random))


def _stack(dicts: list[dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    """Per-instance dicts of arrays -> one dict of arrays with a leading instance axis."""
    if not dicts[0]:
        return {}
    if len(dicts) == 1:
        return {k: v[None] for k, v in dicts[0].items()}
    return {k: np.stack([d[k] for d in dicts]) for k in dicts[0]}


class _Batch:
    """N independent instances of one reward model, instance i drawing only from rngs[i]."""

    def __init__(self, model: CtxBanditEnv, rngs: list[np.random.Generator]):
        self.model = model
        self.rngs = list(rngs)
        self.instances: list[dict] = [{}] * len(rngs)
        self.rounds: list[dict] = [{}] * len(rngs)
        self.rows = np.arange(len(rngs))
        self.t = np.zeros(len(rngs), int)  # index of each instance's current round (its steps since reset)

    def reset(self, which: np.ndarray) -> None:
        """Draw a fresh instance (unless fixed by instance_seed) and first round for `which`."""
        self.t[which] = 0
        for i in np.flatnonzero(which):
            self.instances[i] = self.model._instance(self.rngs[i])
            self.rounds[i] = self.model.draw_round(self.rngs[i], self.instances[i], 0)
        # Restacked, never written in place: earlier observations may be views of these arrays.
        self.instance_arrays = _stack(self.instances)
        self._present()

    def _present(self) -> None:
        self.round_data = _stack(self.rounds)
        features, means, mask = self.model.round_arrays(self.instance_arrays, self.round_data)
        self.features, self.means, self.mask = features, means, mask
        if mask is not None:
            means = np.where(mask, means, -np.inf)
        self.optimal_action = means.argmax(axis=1)
        self.optimal_mean = means[self.rows, self.optimal_action]

    def step(self, actions: np.ndarray) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """Rewards of `actions` (one per instance), the step info, then the next round."""
        if self.mask is not None and not self.mask[self.rows, actions].all():
            bad = int(np.flatnonzero(~self.mask[self.rows, actions])[0])
            raise ValueError(
                f"action {int(actions[bad])} is not available this round (info['action_mask'] is "
                f"{self.mask[bad].astype(int).tolist()}); choose an arm whose mask entry is 1"
            )
        chosen = self.means[self.rows, actions]
        rewards = self.model._rewards(self.rngs, chosen)
        info = {
            "expected_reward": chosen,
            "optimal_expected_reward": self.optimal_mean,
            "optimal_action": self.optimal_action,
            "regret": np.maximum(self.optimal_mean - chosen, 0.0),
        }
        info.update(self.model.step_info(self.instance_arrays, self.round_data, actions))
        self.t += 1
        self.rounds = [self.model.draw_round(r, inst, int(t)) for r, inst, t in zip(self.rngs, self.instances, self.t)]
        self._present()
        return rewards, info

    def round_info(self) -> dict[str, np.ndarray]:
        """What the agent may know before acting: the mask and the problem's round info."""
        info = self.model.reset_info(self.instance_arrays, self.round_data)
        if self.mask is not None:
            info["action_mask"] = self.mask.astype(np.int8)
        return info


class CtxBanditEnv(gym.Env):
    """Base class of every contextual bandit of the package (see the module docstring).

    Subclasses call `super().__init__(num_arms, dim, ...)` after validating their own kwargs and
    implement `draw_instance` and `round_arrays` (and `draw_round` when rounds are random or
    change with time). A family whose instance is given rather than drawn (a hand-built action
    set, a dataset) sets `random_instance = False`: its instance is the same for every seed, and
    `gym_ctxbandits.checks` holds every other family to instances that change with the seed.
    Observation: the (K, d) float32 arm features of the round, a new array every call. Action: Discrete(K).
    Reward: expected reward plus `noise`: "gaussian" (std `noise_std`), "bernoulli" (the
    expected reward is a probability) or "none". Info after each step: `expected_reward`,
    `optimal_expected_reward`, `optimal_action`, `regret` (pseudo-regret of the round, >= 0).
    """

    metadata = {"render_modes": []}
    random_instance = True

    def __init_subclass__(cls, **kwargs):
        """Refuse a `draw_round(rng, instance)` of the 0.1 API at once, naming the fix (removed in 0.4.0)."""
        super().__init_subclass__(**kwargs)
        draw_round = vars(cls).get("draw_round")
        if inspect.isfunction(draw_round) and not _takes_round_index(draw_round):
            raise TypeError(
                f"{cls.__qualname__}.draw_round(rng, instance) is the 0.1 signature, removed in 0.4.0 (deprecated "
                "since 0.2.0): add the round index, def draw_round(self, rng, instance, t), t = 0 at reset (ignore t "
                "when the round does not depend on time)")

    def __init__(
        self,
        num_arms: int,
        dim: int,
        *,
        noise: str = "gaussian",
        noise_std: float = 0.0,
        feature_bound: float = 1.0,
        instance_seed: int | None = None,
    ):
        self.num_arms = check_int("num_arms", num_arms)
        self.dim = check_int("dim", dim)
        if noise not in NOISES:
            raise ValueError(f"noise must be one of {NOISES}, got {noise!r}")
        self.noise = noise
        self.noise_std = check_float("noise_std", noise_std)
        if instance_seed is not None:
            instance_seed = check_int("instance_seed", instance_seed, minimum=0)
        self.instance_seed = instance_seed
        self._fixed_instance: dict | None = None
        check_memory(f"an env with num_arms={self.num_arms}, dim={self.dim}", self.memory_estimate())
        self.observation_space = ScalarBox(-feature_bound, feature_bound, (self.num_arms, self.dim))
        self.action_space = spaces.Discrete(self.num_arms)
        self._batch: _Batch | None = None

    def memory_estimate(self) -> int:
        """Bytes one instance needs, roughly: the round's arm features in float64 and float32 and their
        intermediates (about 4 float64 copies of K x d); a family with a larger pool adds its own."""
        return 4 * 8 * self.num_arms * self.dim

    # --- the reward model: subclasses -------------------------------------------------------
    def draw_instance(self, rng: np.random.Generator) -> dict[str, np.ndarray]:
        raise NotImplementedError

    def draw_round(self, rng: np.random.Generator, instance: dict[str, np.ndarray], t: int = 0) -> dict[str, np.ndarray]:
        return {}

    def round_arrays(self, instances: dict[str, np.ndarray], rounds: dict[str, np.ndarray]):
        raise NotImplementedError

    def reset_info(self, instances: dict[str, np.ndarray], rounds: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """Batched extra info shown with each round's observation (must not reveal the optimum)."""
        return {}

    def step_info(self, instances, rounds, actions) -> dict[str, np.ndarray]:
        """Batched extra info about the round just played."""
        return {}

    # --- shared machinery -------------------------------------------------------------------
    def _instance(self, rng: np.random.Generator) -> dict[str, np.ndarray]:
        if self.instance_seed is None:
            return self.draw_instance(rng)
        if self._fixed_instance is None:
            self._fixed_instance = self.draw_instance(np.random.default_rng(self.instance_seed))
        return self._fixed_instance

    def _rewards(self, rngs: list[np.random.Generator], means: np.ndarray) -> np.ndarray:
        if self.noise == "gaussian":
            return means + self.noise_std * np.array([r.standard_normal() for r in rngs])
        if self.noise == "bernoulli":
            return (np.array([r.random() for r in rngs]) < means).astype(np.float64)
        return means.astype(np.float64, copy=True)

    @property
    def instance(self) -> dict[str, np.ndarray]:
        """The current problem instance (theta*, arm pool, ...), drawn at the last reset."""
        if self._batch is None:
            raise RuntimeError("no instance before the first reset()")
        return self._batch.instances[0]

    @property
    def expected_rewards(self) -> np.ndarray:
        """Every arm's expected reward in the current round, (K,): the ground truth that off-policy
        estimates are checked against (gym_ctxbandits.feedback logs it). Never for an agent."""
        if self._batch is None:
            raise RuntimeError("no round before the first reset()")
        return self._batch.means[0].copy()

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        self._batch = _Batch(self, [self.np_random])
        self._batch.reset(np.ones(1, bool))
        return self._batch.features[0].copy(), _unbatch(self._batch.round_info())

    def step(self, action):
        if self._batch is None:
            raise RuntimeError("call reset() before step()")
        a = _check_action(action, self.num_arms)
        rewards, info = self._batch.step(np.array([a]))
        info = _unbatch(info | self._batch.round_info())
        return self._batch.features[0].copy(), float(rewards[0]), False, False, info


def _takes_round_index(draw_round) -> bool:
    """Whether a `draw_round` function takes (self, rng, instance, t), the 0.2 signature, or more."""
    params = inspect.signature(draw_round).parameters.values()
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return len(positional) >= 4 or any(p.kind is p.VAR_POSITIONAL for p in params)


def _check_action(action: Any, num_arms: int) -> int:
    """A valid arm index from `action`, or an error saying what was wrong with it."""
    if isinstance(action, np.ndarray) and action.size == 1:
        action = action.reshape(())[()]
    if isinstance(action, (bool, np.bool_)) or not isinstance(action, (int, np.integer)):
        raise TypeError(f"action must be an integer arm index in [0, {num_arms}), got {action!r} of type {type(action).__name__}")
    if not 0 <= action < num_arms:
        raise ValueError(f"action {action} is out of range: arms are 0..{num_arms - 1}")
    return int(action)


def _unbatch(info: dict[str, np.ndarray]) -> dict[str, Any]:
    """Row 0 of a batched info: numpy scalars (np.float64, np.int64, with a dtype, as RL libraries
    such as TorchRL read them) and arrays."""
    return {k: v[0] for k, v in info.items()}


class CtxBanditVectorEnv(VectorEnv):
    """N independent copies of a `CtxBanditEnv` family run as one batched problem.

    Built by `gym.make_vec(id, num_envs=N, vectorization_mode="vector_entry_point")`. Sub-env i
    is seeded `seed + i` and gives exactly the trajectory of a single env reset with that seed.
    Episodes end together at `max_episode_steps` (truncation); autoreset is Gymnasium's
    next-step mode (the step after the last one resets and ignores the actions).
    Observations are read-only (N, K, d) arrays that are never modified afterwards: a fixed arm
    set is handed out without a copy each round, which keeps large fixed sets (e.g. 10,000 arms)
    cheap. Copy one (`np.array(obs)`) to get a writable array.
    """

    env_class: type[CtxBanditEnv]
    metadata = {"autoreset_mode": AutoresetMode.NEXT_STEP}

    def __init__(self, num_envs: int, max_episode_steps: int | None = None, **kwargs: Any):
        self.num_envs = check_int("num_envs", num_envs)
        self.model = self.env_class(**kwargs)
        check_memory(f"{self.num_envs} envs with num_arms={self.model.num_arms}, dim={self.model.dim}",
                     self.num_envs * self.model.memory_estimate())
        self.max_episode_steps = None if max_episode_steps is None else check_int("max_episode_steps", max_episode_steps)
        self.single_observation_space = self.model.observation_space
        self.single_action_space = self.model.action_space
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self._batch: _Batch | None = None
        self._needs_reset = np.zeros(self.num_envs, bool)

    def reset(self, *, seed: int | list[int | None] | None = None, options: dict | None = None):
        self._batch, which = reseed(self._batch, _Batch, self.model, self.num_envs, seed, options)
        self._batch.reset(which)
        self._needs_reset[which] = False
        return _read_only(self._batch.features), _with_masks(self._batch.round_info(), which)

    def step(self, actions):
        if self._batch is None:
            raise RuntimeError("call reset() before step()")
        if self._needs_reset.any():
            # Next-step autoreset: every sub-env ends at the same round, so all restart together.
            obs, info = self.reset(options={"reset_mask": self._needs_reset.copy()})
            zeros = np.zeros(self.num_envs, bool)
            return obs, np.zeros(self.num_envs), zeros, zeros.copy(), info
        actions = np.array([_check_action(a, self.model.num_arms) for a in np.asarray(actions).reshape(-1)])
        if actions.shape != (self.num_envs,):
            raise ValueError(f"expected {self.num_envs} actions, one per sub-environment, got {actions.shape[0]}")
        rewards, info = self._batch.step(actions)
        truncated = np.zeros(self.num_envs, bool) if self.max_episode_steps is None else self._batch.t >= self.max_episode_steps
        self._needs_reset = truncated.copy()
        info = info | self._batch.round_info()
        return (_read_only(self._batch.features), rewards, np.zeros(self.num_envs, bool), truncated,
                _with_masks(info, np.ones(self.num_envs, bool)))


def reseed(batch, batch_class, model, num_envs: int, seed, options: dict | None):
    """A vector env's reset before the draws: (its batch, made with the sub-envs' generators at the first reset,
    the generators of the sub-envs `seed` names replaced after it; the sub-envs to reset, options'
    `reset_mask` or all). Sub-env i is seeded seed + i (Gymnasium's SyncVectorEnv), or seed[i] from a list.
    Shared by the one-arm core and the ranking core (envs/ranking.py)."""
    if seed is None or isinstance(seed, (int, np.integer)):
        seeds = [None if seed is None else int(seed) + i for i in range(num_envs)]
    else:
        seeds = list(seed)
        if len(seeds) != num_envs:
            raise ValueError(f"got {len(seeds)} seeds for {num_envs} sub-environments")
    which = np.ones(num_envs, bool) if not options or "reset_mask" not in options else options["reset_mask"]
    which = np.asarray(which, bool)
    if batch is None:
        if not which.all():
            raise RuntimeError("the first reset must reset every sub-environment")
        return batch_class(model, [seeding.np_random(s)[0] for s in seeds]), which
    for i in np.flatnonzero(which):
        if seeds[i] is not None:
            batch.rngs[i] = seeding.np_random(seeds[i])[0]
    return batch, which


def _read_only(x: np.ndarray) -> np.ndarray:
    """A read-only view of `x`."""
    x = x.view()
    x.flags.writeable = False
    return x


def _with_masks(info: dict[str, np.ndarray], which: np.ndarray) -> dict[str, np.ndarray]:
    """Gymnasium's vector info layout: each key with a boolean `_key` saying which envs have it."""
    out = dict(info)
    out.update({f"_{k}": which.copy() for k in info})
    return out


def vector_env(env_class: type[CtxBanditEnv], module: str) -> type[CtxBanditVectorEnv]:
    """The native vector env of a family (named like it, defined in `module`), for `vector_entry_point`."""
    name = env_class.__name__.removesuffix("Env") + "VectorEnv"
    doc = f"Native vector version of :class:`{env_class.__name__}` (see CtxBanditVectorEnv)."
    return type(name, (CtxBanditVectorEnv,), {"env_class": env_class, "__doc__": doc, "__module__": module})
