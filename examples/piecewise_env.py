# examples/piecewise_env.py
"""A piecewise-stationary linear bandit: theta jumps to a fresh direction every `every` rounds.

A new environment in one small module: the env core (gym_ctxbandits.envs.CtxBanditEnv) brings
the single env, the native vector env, seeding, pickling and the regret; the problem is its
instance, its round draw (which gets the round index t) and its round arrays, written once for N
instances. `--import examples/piecewise_env.py` makes the id known to `ctxbandits run`.
"""

import gymnasium as gym
import numpy as np

from gym_ctxbandits.envs import CtxBanditEnv
from gym_ctxbandits.envs.core import vector_env

ENV_ID = "MyBandits/PiecewiseLinear-v0"


class PiecewiseLinearEnv(CtxBanditEnv):
    """K fresh unit arms a round, reward x^T theta_t + N(0, 0.1^2); theta_t is the j-th of `segments`
    unit vectors drawn with the instance, j = (t // every) mod segments: abrupt changes every
    `every` rounds, the classic piecewise-stationary benchmark."""

    def __init__(self, num_arms=10, dim=5, every=500, segments=16, instance_seed=None):
        self.every, self.segments = every, segments
        super().__init__(num_arms, dim, noise="gaussian", noise_std=0.1, instance_seed=instance_seed)

    def draw_instance(self, rng):
        thetas = rng.standard_normal((self.segments, self.dim))
        return {"thetas": thetas / np.linalg.norm(thetas, axis=1, keepdims=True)}

    def draw_round(self, rng, instance, t):
        x = rng.standard_normal((self.num_arms, self.dim))
        x = (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)
        return {"x": x, "theta": instance["thetas"][(t // self.every) % self.segments]}

    def round_arrays(self, instances, rounds):   # a leading axis of N instances
        x = rounds["x"]
        return x, np.einsum("nkd,nd->nk", x.astype(np.float64), rounds["theta"]), None


PiecewiseLinearVectorEnv = vector_env(PiecewiseLinearEnv, __name__)
if ENV_ID not in gym.registry:
    gym.register(ENV_ID, entry_point=PiecewiseLinearEnv, vector_entry_point=PiecewiseLinearVectorEnv,
                 max_episode_steps=2000)


if __name__ == "__main__":
    from gym_ctxbandits.checks import check_env

    check_env(ENV_ID)                             # the conformance suite every built-in id passes
    print(f"{ENV_ID} passes gym_ctxbandits.checks.check_env")
