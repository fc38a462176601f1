"""A non-stationary bandit on the env core: a linear bandit whose parameter drifts.

Not from the five papers: the worked example of a problem that changes with time. The core hands
`draw_round` the round index t, so a drifting or switching problem is its instance (where the
motion starts), its round draw (where the parameter is at round t) and its round arrays; the
single env, the native vector env, seeding and pickling come from the core unchanged.
"""

from __future__ import annotations

import numpy as np

from gym_ctxbandits.envs.core import CtxBanditEnv, check_float, check_int, unit_rows


class DriftingLinearEnv(CtxBanditEnv):
    """Linear bandit whose parameter theta_t rotates at a constant rate.

    Description:
        theta_t = theta_norm (cos(omega t) u + sin(omega t) v), omega = 2 pi / period: theta_t turns
        through a full circle every `period` rounds in the plane of two orthonormal vectors u, v
        (drawn per instance, Gaussian then Gram-Schmidt), moving 2 theta_norm sin(omega / 2), about
        2 pi theta_norm / period, a round. Each round shows K fresh points drawn uniformly on the
        unit sphere of R^d and Y_t = X_t^T theta_t + eta_t, eta_t ~ N(0, sigma^2). Regret is
        against the current parameter: max_k x_k^T theta_t - X_t^T theta_t. A learner that weighs
        its whole history equally estimates the past average of theta_t, near 0 after a full turn;
        one that forgets (discounted or sliding-window LinUCB, Russac, Vernade, Cappe 2019)
        tracks theta_t.

    Action Space: Discrete(K).
    Observation Space: Box(-1, 1, (K, d), float32), new points every round.
    Rewards: X^T theta_t + N(0, noise_std^2).
    Episode End: truncation at T = 10^4 rounds (five turns of theta at the default period).
    Arguments: num_arms=10, dim=5 (>= 2), period=2000 (rounds per turn), theta_norm=1.0,
        noise_std=0.1, instance_seed=None (fixes u and v; theta_t then depends on t only).

    Version History:
        * v0: initial version.
    """

    def __init__(self, num_arms: int = 10, dim: int = 5, period: float = 2000.0, theta_norm: float = 1.0,
                 noise_std: float = 0.1, instance_seed: int | None = None):
        if check_int("dim", dim) < 2:
            raise ValueError(f"dim must be >= 2 (theta turns in a plane), got {dim}")
        self.period = check_float("period", period, strict=True)
        self.theta_norm = check_float("theta_norm", theta_norm)
        super().__init__(num_arms, dim, noise="gaussian", noise_std=noise_std, feature_bound=1.0,
                         instance_seed=instance_seed)

    def draw_instance(self, rng):
        u = unit_rows(rng.standard_normal(self.dim))
        v = rng.standard_normal(self.dim)
        return {"u": u, "v": unit_rows(v - (v @ u) * u)}

    def draw_round(self, rng, instance, t):
        angle = 2.0 * np.pi * t / self.period
        theta = self.theta_norm * (np.cos(angle) * instance["u"] + np.sin(angle) * instance["v"])
        return {"x": unit_rows(rng.standard_normal((self.num_arms, self.dim))).astype(np.float32), "theta": theta}

    def round_arrays(self, instances, rounds):
        x = rounds["x"]
        return x, np.einsum("nkd,nd->nk", x.astype(np.float64), rounds["theta"]), None
