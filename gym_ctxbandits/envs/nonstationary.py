"""Non-stationary problems of the literature on the env core (issue 51).

* `RussacEnv` (`RussacAbrupt-v0`, `RussacSlow-v0`): the two simulated settings of Russac, Vernade,
  Cappe, "Weighted Linear Bandits for Non-Stationary Environments" (NeurIPS 2019), as the authors'
  code configures them (YRussac/WeightedLinearBandits: environment_class.py, simulator_class.py,
  utils.py and the notebooks Experiments/exp_ABRUPT_ENV_NEW.ipynb and exp_SLOW_ENV_NEW.ipynb).
* `PiecewiseBernoulliEnv` (`PiecewiseBernoulli-v0`): a piecewise-stationary K-armed Bernoulli bandit,
  by default SMPyBandits' 3-armed problem (Besson; configuration_nonstationary.py, the problem whose
  changes hit one arm at a time, and the change-point notebook's `problem_piecewise_2`).

Rounds: t is the core's 0-based round index (t = 0 the first round), the same as the `t` of the
reference codes' loops (`for t in range(steps)`); `change_points` are 1-based round numbers, the
first round of each new segment (round t + 1 is the round of index t).
"""

from __future__ import annotations

import numpy as np

from gym_ctxbandits.envs.core import CtxBanditEnv
from gym_ctxbandits.envs.schedule import (
    change_point_info,
    check_change_points,
    segment_of,
)

# Russac et al.'s abrupt setting: theta* in force from each 0-based round index on (the notebook's
# `bp = {1001: [-1, 0], 2001: [0, 1], 3001: [0, -1]}` starting from theta = [1, 0], keyed by the loop's t).
RUSSAC_THETAS = np.array([[1.0, 0.0], [-1.0, 0.0], [0.0, 1.0], [0.0, -1.0]])
RUSSAC_CHANGES = (1001, 2001, 3001)
# Its slow setting: the angle of theta* goes from 0 to pi / 2 over the first 3,000 rounds, then stays.
RUSSAC_ANGLE_END, RUSSAC_ROTATION_ROUNDS = np.pi / 2, 3000
# SMPyBandits' piecewise-stationary problem with changes on one arm at a time, T = 2000.
PIECEWISE_MEANS = ((0.2, 0.5, 0.9), (0.2, 0.2, 0.9), (0.2, 0.2, 0.1), (0.7, 0.2, 0.1), (0.7, 0.5, 0.1))
PIECEWISE_CHANGE_POINTS = (401, 801, 1201, 1601)


class RussacEnv(CtxBanditEnv):
    """The abruptly-changing and the slowly-varying linear bandits of Russac, Vernade, Cappe 2019.

    Description:
        d = 2. Each round shows K = 50 fresh arms, each drawn uniformly in [-1, 1]^2 and divided by its
        norm when that exceeds 1 (x / max(1, ||x||): the code's `get_arms`, environment_class.py, a
        radial projection into the unit ball, not a normalisation: the arms inside stay as drawn).
        Y_t = <X_t, theta*_t> + eta_t, eta_t ~ N(0, sigma^2), sigma = 1 (arm_class.py `pull`,
        `sigma_noise = 1` in both notebooks). Regret is against the best of the round's arms under
        theta*_t (the dynamic regret; simulator_class.py computes the same).
        `schedule="abrupt"` (exp_ABRUPT_ENV_NEW.ipynb): theta* = (1, 0), then (-1, 0) from round index
        t = 1001, (0, 1) from 2001 and (0, -1) from 3001, where t is the 0-based index of the
        simulator's loop: so the first segment has 1,001 rounds, and in 1-based rounds the change
        points (`change_points`) are 1002, 2002, 3002. B_T = 4 + sqrt(2).
        `schedule="slow"` (exp_SLOW_ENV_NEW.ipynb, `generate_smooth_theta`): theta*_t = (cos a_t,
        sin a_t) with a_t = (pi / 2) min(t, 3000) / 3000: a quarter turn on the unit circle over the
        first 3,000 rounds, then still (a_t = pi / 2 from t = 3000 on). No change points.
        T = 6,000 in both. There is nothing random in the instance: the arms and the noise are the
        episode's.

    Action Space: Discrete(K).
    Observation Space: Box(-1, 1, (K, 2), float32), K fresh arms in the unit ball every round.
    Rewards: <X, theta*_t> + N(0, noise_std^2).
    Episode End: truncation at T = 6,000 rounds.
    Arguments: schedule="abrupt" or "slow", num_arms=50, noise_std=1.0, instance_seed=None.
    Info after each step: the contract's keys and `change_point` (True when the round just played
        started a new segment); `env.unwrapped.change_points` lists them, `theta(t)` gives theta*_t.

    Version History:
        * v0: initial version (issue 51).
    """

    nonstationary = True  # its means move with the round: plots mark env.unwrapped.change_points
    random_instance = False  # theta*_t is given by the schedule
    SCHEDULES = ("abrupt", "slow")

    def __init__(self, schedule: str = "abrupt", num_arms: int = 50, noise_std: float = 1.0,
                 instance_seed: int | None = None):
        if schedule not in self.SCHEDULES:
            raise ValueError(f"schedule must be one of {self.SCHEDULES} (Russac et al. 2019's two settings), "
                             f"got {schedule!r}")
        self.schedule = schedule
        self.change_points = tuple(t + 1 for t in RUSSAC_CHANGES) if schedule == "abrupt" else ()
        super().__init__(num_arms, 2, noise="gaussian", noise_std=noise_std, feature_bound=1.0,
                         instance_seed=instance_seed)

    def theta(self, t: int) -> np.ndarray:
        """theta*_t of 0-based round t."""
        if self.schedule == "abrupt":
            return RUSSAC_THETAS[int(segment_of(self.change_points, t))]
        angle = RUSSAC_ANGLE_END * min(t, RUSSAC_ROTATION_ROUNDS) / RUSSAC_ROTATION_ROUNDS
        return np.array([np.cos(angle), np.sin(angle)])

    def draw_instance(self, rng):
        return {}

    def draw_round(self, rng, instance, t):
        x = rng.uniform(-1.0, 1.0, (self.num_arms, 2))
        x /= np.maximum(1.0, np.linalg.norm(x, axis=1, keepdims=True))
        return {"x": x.astype(np.float32), "theta": self.theta(t), "t": np.array(t)}

    def round_arrays(self, instances, rounds):
        x = rounds["x"]
        return x, np.einsum("nkd,nd->nk", x.astype(np.float64), rounds["theta"]), None

    def step_info(self, instances, rounds, actions):
        return change_point_info(self.change_points, rounds["t"])


class PiecewiseBernoulliEnv(CtxBanditEnv):
    """Piecewise-stationary K-armed Bernoulli bandit: arm means constant on segments, changing at change points.

    Description:
        Arm k pays Bernoulli(mu_k^(s)) in segment s; segment s starts at 1-based round
        `change_points[s - 1]`. The default is SMPyBandits' 3-armed problem (Besson, Kaufmann and
        coauthors' piecewise-stationary experiments; SMPyBandits configuration_nonstationary.py, the
        problem whose changes hit one arm at a time): T = 2,000, means [.2, .5, .9], [.2, .2, .9],
        [.2, .2, .1], [.7, .2, .1], [.7, .5, .1], a change every 400 rounds. SMPyBandits' 0-based
        `changePoints` 0, 400, 800, 1200, 1600 are the 1-based rounds 401, 801, 1201, 1601 here (it
        scales them with the horizon: for another T pass change_points=[int(400 T / 2000) + 1, ...]).
        The best arm is arm 2 (0-based) up to round 800; arms 0 and 1 tie at .2 from 801 to 1200; arm
        0 is best from 1201 on. Regret is against the round's best arm (dynamic regret). Arms are
        one-hot ids: the observation is the (K, K) identity every round, so a linear agent keeps one
        estimate per arm (a K-armed agent that ignores the features plays the same problem).

    Action Space: Discrete(K).
    Observation Space: Box(-1, 1, (K, K), float32), the identity.
    Rewards: 0 or 1, Bernoulli with the arm's mean in the current segment.
    Episode End: truncation at T = 2,000 rounds.
    Arguments: means (S x K nested lists in [0, 1], one row a segment), change_points (S - 1 increasing
        1-based rounds >= 2), instance_seed=None (there is nothing random in the instance).
    Info after each step: the contract's keys and `change_point`; `env.unwrapped.change_points`.

    Version History:
        * v0: initial version (issue 51).
    """

    nonstationary = True  # its means move with the round: plots mark env.unwrapped.change_points
    random_instance = False  # the means are given

    def __init__(self, means=PIECEWISE_MEANS, change_points=PIECEWISE_CHANGE_POINTS, instance_seed: int | None = None):
        self.change_points = check_change_points(change_points)
        table = np.asarray(means, dtype=np.float64)
        if table.ndim != 2 or table.shape[0] != len(self.change_points) + 1 or table.shape[1] < 1:
            raise ValueError(f"means must be S x K nested lists, one row of K arm means per segment, S = "
                             f"len(change_points) + 1 = {len(self.change_points) + 1}; got shape {table.shape}")
        if not np.isfinite(table).all() or (table < 0).any() or (table > 1).any():
            raise ValueError(f"means must be Bernoulli means in [0, 1], got {means!r}")
        self.means = table
        super().__init__(table.shape[1], table.shape[1], noise="bernoulli", feature_bound=1.0,
                         instance_seed=instance_seed)
        self._eye = np.eye(self.num_arms, dtype=np.float32)

    def draw_instance(self, rng):
        return {}

    def draw_round(self, rng, instance, t):
        return {"t": np.array(t)}

    def round_arrays(self, instances, rounds):
        t = rounds["t"]
        return np.broadcast_to(self._eye, (len(t), *self._eye.shape)), self.means[segment_of(self.change_points, t)], None

    def step_info(self, instances, rounds, actions):
        return change_point_info(self.change_points, rounds["t"])
