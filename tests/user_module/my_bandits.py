"""A researcher's module: one agent and one env of their own, registered on import."""
import gymnasium as gym
import numpy as np

import agents
from agents.linear import LinearAgent
from gym_ctxbandits.envs import LinearEnv


@agents.register("My-Greedy")
class MyGreedy(LinearAgent):
    """Greedy on the ridge estimate theta = V^-1 b."""

    params = {}

    def _init_state(self, n, d):
        self.V_ = np.tile(np.eye(d), (n, 1, 1))
        self.b_ = np.zeros((n, d))

    def _update(self, x, y):
        self.V_ = self.V_ + x[:, :, None] * x[:, None, :]
        self.b_ = self.b_ + y[:, None] * x

    def _scores(self, X):
        return (X @ np.linalg.solve(self.V_, self.b_[:, :, None]))[:, :, 0]


class MyBandit(LinearEnv):
    """The linear bandit with 3 arms in 2 dimensions."""


gym.register("MyBandit-v0", entry_point="my_bandits:MyBandit", max_episode_steps=1000,
             kwargs={"num_arms": 3, "dim": 2})
