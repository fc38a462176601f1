"""Any env of the package with its instance parameters on a schedule: `CtxBandit/Scheduled-v0`.

Non-stationarity as a wrapper, written once on the env core: `ScheduledEnv` is itself a `CtxBanditEnv`
family whose reward model is another family's (the `env` id, built with `env_kwargs`), so the single
env, the native vector env (`gym.make_vec(..., vectorization_mode="vector_entry_point")`, sub-env i
seeded seed + i), pickling and `ctxbandits run --env CtxBandit/Scheduled-v0 --env-kwargs '{...}'` all
come from the core unchanged. A Gymnasium wrapper around a made env could not do this: the runner's
vector env is the family's own batch, and a wrapper would see the envs from outside.

The schedule (a JSON-able dict, `schedule={"kind": ..., ...}`) moves the inner instance's parameters:

* `{"kind": "abrupt", "change_points": [r_1, r_2, ...]}`: piecewise stationary. At each change
  point (a 1-based round, the first of a new segment) a fresh instance of the inner family is in
  force: all S = len(change_points) + 1 instances are drawn at reset, one after the other, from the
  instance's generator (so `instance_seed` fixes all of them). With `"values": {"theta": [v_1, ...,
  v_S]}` the inner instance is drawn once and the named parameters take the given value in each
  segment instead (e.g. Russac et al. 2019's theta* = (1, 0), (-1, 0), (0, 1), (0, -1)).
* `{"kind": "rotation", "period": P, "until": None, "param": "theta"}`: theta_t = cos(a_t) theta_0 +
  sin(a_t) ||theta_0|| v, a_t = 2 pi min(t, until) / P, with v a unit vector orthogonal to theta_0
  drawn with the instance: theta turns at a constant rate in a random plane (a full turn every P
  rounds), and stands still after round `until` (None: never). The rounds t are 0-based (t = 0 is
  the first round). Russac et al. 2019's slow setting is P = 12,000, until = 3,000 (a quarter turn).
* `{"kind": "random_walk", "std": s, "param": "theta"}`: theta_t = theta_{t-1} + s xi_t, xi_t ~
  N(0, I), one standard normal per coordinate a round from the episode's generator, drawn before the
  inner family's own round.

Common random numbers hold: the schedule's draws at reset and each round are a fixed count, never
depending on the actions, so every agent facing a seed faces the same parameters, arms and noise.
A parameter is a key of the inner instance (`env.unwrapped.instance`): `theta` of the linear-type
families (Linear, Logistic, Distance, BernoulliLogistic, FiniteLinear, SphereLinear, UnitCircle, the
action-set problems, VectorQuadratic), `A` of Quadratic, `W0`... of MLPTeacher. The expected rewards
of a pool family (`PoolEnv`) are recomputed from the moved parameters; instance state a family
keeps for itself during the episode (the retiring items, a dataset's pass order) carries over.

Change points: `env.unwrapped.change_points` (the 1-based rounds that start a new segment, known in
advance: empty for the rotation and the random walk) and, after each step, `info["change_point"]`
(True when the round just played started a new segment). Regret is the core's, against the round's
best arm under the parameters in force: the dynamic regret.
"""

from __future__ import annotations

import itertools
from typing import Any

import gymnasium as gym
import numpy as np

from gym_ctxbandits.envs.core import CtxBanditEnv, check_float, check_int
from gym_ctxbandits.envs.pool import PoolEnv

KINDS = {"abrupt": {"change_points", "values"}, "rotation": {"period", "until", "param"},
         "random_walk": {"std", "param"}}
PREFIX = "schedule/"  # the wrapper's own keys in the instance and round dicts
DRAWN = PREFIX + "drawn/"  # an instance's moving parameters as drawn at reset


def check_change_points(value: Any, name: str = "change_points") -> tuple[int, ...]:
    """Strictly increasing 1-based rounds >= 2 (round 1 starts the first segment), or a ValueError naming the fix."""
    try:
        points = tuple(value)
    except TypeError:
        raise ValueError(f"{name} must be a list of rounds (1-based, increasing, >= 2), got {value!r}") from None
    points = tuple(check_int(f"each of {name}", p, minimum=2) for p in points)
    if any(b <= a for a, b in itertools.pairwise(points)):
        raise ValueError(f"{name} must be strictly increasing 1-based rounds, got {list(points)}")
    return points


def segment_of(change_points: tuple[int, ...], t) -> np.ndarray:
    """The segment index of 0-based round(s) t: how many change points are <= the 1-based round t + 1."""
    return np.searchsorted(np.asarray(change_points, dtype=np.int64), np.asarray(t) + 1, side="right")


def change_point_info(change_points: tuple[int, ...], t) -> dict[str, np.ndarray]:
    """Step info of 0-based round(s) t just played: `change_point`, True when round t + 1 started a segment."""
    return {"change_point": np.isin(np.asarray(t) + 1, change_points)}


class ScheduledEnv(CtxBanditEnv):
    """Another family's bandit with its instance parameters moving on a schedule (module docstring).

    Description:
        The reward model, arms, observation and noise are the inner env's (`env`, a
        registered `CtxBandit/` id of a `CtxBanditEnv` family, made with `env_kwargs`); its instance
        parameters follow `schedule` (abrupt change points, rotation or random walk). Regret is
        against the round's best arm under the parameters in force (dynamic regret).

    Action Space: the inner env's, Discrete(K).
    Observation Space: the inner env's.
    Rewards: the inner env's model under the current parameters.
    Episode End: truncation at T = 10^4 rounds (`max_episode_steps=` for another).
    Arguments: env="CtxBandit/Linear-v0", env_kwargs=None, schedule (default {"kind": "abrupt",
        "change_points": [2501, 5001, 7501]}: a fresh Linear instance every 2,500 rounds),
        instance_seed=None (fixes the inner instances and the schedule's instance draws; give it here,
        not in env_kwargs).
    Info after each step: the contract's keys, `change_point` and the inner env's own.

    Version History:
        * v0: initial version (issue 51).
    """

    nonstationary = True  # its means move with the round: plots mark env.unwrapped.change_points

    def __init__(self, env: str = "CtxBandit/Linear-v0", env_kwargs: dict | None = None, schedule: dict | None = None,
                 instance_seed: int | None = None):
        env_kwargs = dict(env_kwargs or {})
        if env_kwargs.get("instance_seed") is not None:
            raise ValueError("give instance_seed to Scheduled-v0 itself, not in env_kwargs: it fixes the inner "
                             "instances and the schedule's draws together")
        inner = gym.make(env, disable_env_checker=True, **env_kwargs).unwrapped
        if not isinstance(inner, CtxBanditEnv):
            raise ValueError(f"env must be the id of a CtxBanditEnv family of this package (or yours), got {env!r} "
                             f"({type(inner).__name__}): a replay or ranking env is not one")
        self.env, self.env_kwargs, self.inner = env, env_kwargs, inner
        probe = inner.draw_instance(np.random.default_rng(0))  # the instance's keys and shapes, for the checks
        self.schedule = self._check_schedule({"kind": "abrupt", "change_points": [2501, 5001, 7501]}
                                             if schedule is None else schedule, probe)
        self.moving = self._moving(probe)
        self.random_instance = inner.random_instance or self.schedule_kind == "rotation"
        super().__init__(inner.num_arms, inner.dim, noise=inner.noise, noise_std=inner.noise_std,
                         instance_seed=instance_seed)
        self.observation_space = inner.observation_space

    def memory_estimate(self) -> int:
        return self.inner.memory_estimate() * (len(self.change_points) + 1 if self.schedule_kind == "abrupt" else 1)

    # --- the schedule's kwargs ----------------------------------------------------------------
    def _check_schedule(self, schedule: Any, probe: dict) -> dict:
        """The validated schedule; sets schedule_kind, change_points and the kind's numbers."""
        if not isinstance(schedule, dict) or schedule.get("kind") not in KINDS:
            raise ValueError(f"schedule must be a dict with 'kind' one of {sorted(KINDS)}, got {schedule!r}")
        self.schedule_kind = schedule["kind"]
        unknown = set(schedule) - KINDS[self.schedule_kind] - {"kind"}
        if unknown:
            raise ValueError(f"schedule of kind {self.schedule_kind!r} takes {sorted(KINDS[self.schedule_kind])}, not {sorted(unknown)}")
        self.change_points: tuple[int, ...] = ()
        if self.schedule_kind == "abrupt":
            if "change_points" not in schedule:
                raise ValueError("schedule of kind 'abrupt' needs 'change_points': the 1-based rounds that start a "
                                 "new segment, e.g. [1001, 2001]")
            self.change_points = check_change_points(schedule["change_points"], "schedule['change_points']")
            self.values = self._check_values(schedule.get("values"), probe)
            if self.values is None and not self.inner.random_instance:
                raise ValueError(f"{type(self.inner).__name__}'s instance is given, not drawn: fresh instances at the "
                                 "change points would all be the same; give schedule['values'] (the parameters per "
                                 "segment), or for a dataset the relabel= kwarg of Supervised-v0")
            return dict(schedule)
        self.param = schedule.get("param", "theta")
        if self.param not in probe:
            raise ValueError(f"schedule['param'] {self.param!r} is not a parameter of {type(self.inner).__name__}'s "
                             f"instance; its keys are {sorted(probe)}")
        if self.schedule_kind == "rotation":
            self.period = check_float("schedule['period']", schedule.get("period"), strict=True)
            until = schedule.get("until")
            self.until = np.inf if until is None else check_int("schedule['until']", until, minimum=0)
            if np.shape(probe[self.param]) != (self.inner.dim,) or self.inner.dim < 2:
                raise ValueError(f"a rotation turns a vector of the arms' dimension d >= 2; {self.param!r} has shape "
                                 f"{np.shape(probe[self.param])} (d = {self.inner.dim})")
        else:
            self.std = check_float("schedule['std']", schedule.get("std"))
        return dict(schedule)

    def _check_values(self, values: Any, probe: dict) -> dict[str, np.ndarray] | None:
        """schedule['values'] as {name: (S, ...) array}, each name a parameter of the instance, one value a segment."""
        if values is None:
            return None
        if not isinstance(values, dict) or not values:
            raise ValueError(f"schedule['values'] must be a dict {{parameter: [one value per segment]}}, got {values!r}")
        out, segments = {}, len(self.change_points) + 1
        for name, given in values.items():
            if name not in probe:
                raise ValueError(f"schedule['values'] names {name!r}, not a parameter of "
                                 f"{type(self.inner).__name__}'s instance; its keys are {sorted(probe)}")
            try:
                array = np.asarray(given, dtype=np.float64)
            except (TypeError, ValueError):
                array = np.zeros(0)
            if array.shape != (segments, *np.shape(probe[name])) or not np.isfinite(array).all():
                raise ValueError(f"schedule['values'][{name!r}] must hold {segments} finite values of shape "
                                 f"{np.shape(probe[name])} (one per segment), got shape {array.shape}")
            out[name] = array
        return out

    def _moving(self, probe: dict) -> tuple[str, ...]:
        """The instance keys whose current values travel with each round: the moved parameters and what they set."""
        if self.schedule_kind == "abrupt" and self.values is None:
            return tuple(probe)
        names = tuple(self.values) if self.schedule_kind == "abrupt" else (self.param,)
        return names + (("pool_means",) if isinstance(self.inner, PoolEnv) else ())

    # --- the reward model ---------------------------------------------------------------------
    def _instance(self, rng):
        """A copy per episode and sub-env: the current parameters change in it (a fixed instance is shared)."""
        return dict(super()._instance(rng))

    @property
    def instance(self) -> dict[str, np.ndarray]:
        """The instance as drawn at the last reset (the inner family's keys, and the schedule's own under
        "schedule/"); `parameters` has the values in force now."""
        live = super().instance
        return {k: live.get(DRAWN + k, v) for k, v in live.items() if not k.startswith(DRAWN)}

    @property
    def parameters(self) -> dict[str, np.ndarray]:
        """The moving parameters in force in the current round (theta_t, and the pool's expected rewards)."""
        live = super().instance
        return {k: live[k] for k in self.moving}

    def draw_instance(self, rng):
        if self.schedule_kind == "abrupt" and self.values is None:
            segments = [self.inner.draw_instance(rng) for _ in range(len(self.change_points) + 1)]
            return {**segments[0], **{PREFIX + k: np.stack([s[k] for s in segments]) for k in self.moving}}
        instance = self.inner.draw_instance(rng)
        if self.schedule_kind == "rotation":
            theta = np.asarray(instance[self.param], dtype=np.float64)
            u = theta / np.linalg.norm(theta)
            w = rng.standard_normal(self.inner.dim)
            v = w - (w @ u) * u
            instance[PREFIX + "theta0"], instance[PREFIX + "v"] = theta, v / np.linalg.norm(v)
        return instance

    def _move(self, instance: dict, t: int, rng) -> None:
        """Set the parameters in force at 0-based round t in the episode's instance dict (new arrays, never in
        place); at t = 0 first keep the values drawn at reset, which `instance` shows."""
        if t == 0:
            instance.update({DRAWN + k: instance[k] for k in self.moving})
        if self.schedule_kind == "abrupt":
            segment = int(segment_of(self.change_points, t))
            if t > 0 and segment == int(instance[PREFIX + "segment"]):
                return
            instance[PREFIX + "segment"] = np.array(segment)
            if self.values is None:
                instance.update({k: instance[PREFIX + k][segment] for k in self.moving})
                return
            instance.update({k: v[segment] for k, v in self.values.items()})
        elif self.schedule_kind == "rotation":
            angle = 2.0 * np.pi * min(t, self.until) / self.period
            theta0 = instance[PREFIX + "theta0"]
            instance[self.param] = np.cos(angle) * theta0 + np.sin(angle) * np.linalg.norm(theta0) * instance[PREFIX + "v"]
        elif t > 0:
            param = instance[self.param]
            instance[self.param] = param + self.std * rng.standard_normal(np.shape(param))
        if isinstance(self.inner, PoolEnv):
            instance["pool_means"] = self.inner.mean_reward(instance["pool"].astype(np.float64), instance)

    def draw_round(self, rng, instance, t):
        self._move(instance, t, rng)
        inner_round = self.inner.draw_round(rng, instance, t)
        return {**inner_round, **{PREFIX + k: instance[k] for k in self.moving}, PREFIX + "t": np.array(t)}

    def _split(self, instances, rounds) -> tuple[dict, dict]:
        """(the inner family's instances with the parameters in force, its own round arrays)."""
        current = {**instances, **{k: rounds[PREFIX + k] for k in self.moving}}
        return current, {k: v for k, v in rounds.items() if not k.startswith(PREFIX)}

    def round_arrays(self, instances, rounds):
        return self.inner.round_arrays(*self._split(instances, rounds))

    def reset_info(self, instances, rounds):
        return self.inner.reset_info(*self._split(instances, rounds))

    def step_info(self, instances, rounds, actions):
        info = self.inner.step_info(*self._split(instances, rounds), actions)
        return info | change_point_info(self.change_points, rounds[PREFIX + "t"])
