"""The drifting linear bandit (envs/drifting.py): its means follow theta_t as the docstring states, and an
agent that forgets beats one that does not. Its conformance (vector env, seeding, pickling) is in
test_conformance.py with every other id."""

import gymnasium as gym
import numpy as np
import pytest

import agents
import gym_ctxbandits  # noqa: F401
from agents.linear import LinearAgent
from agents.params import Real


def test_means_follow_the_rotating_theta():
    """Round t's expected rewards are x^T theta_t, theta_t = cos(2 pi t / P) u + sin(2 pi t / P) v; regret is
    against the current theta_t. A short period turns theta several times in the test."""
    env = gym.make("CtxBandit/DriftingLinear-v0", period=8, theta_norm=2.0)
    obs, _ = env.reset(seed=3)
    u, v = env.unwrapped.instance["u"], env.unwrapped.instance["v"]
    assert np.linalg.norm(u) == pytest.approx(1) and np.linalg.norm(v) == pytest.approx(1) and abs(u @ v) < 1e-12
    for t in range(20):
        theta = 2.0 * (np.cos(2 * np.pi * t / 8) * u + np.sin(2 * np.pi * t / 8) * v)
        means = obs.astype(np.float64) @ theta
        obs, _, _, _, info = env.step(t % 10)
        assert info["expected_reward"] == pytest.approx(means[t % 10], abs=1e-12)
        assert info["optimal_expected_reward"] == pytest.approx(means.max(), abs=1e-12)
        assert info["optimal_action"] == means.argmax()


@pytest.mark.parametrize("kwargs, words", [({"dim": 1}, "dim must be >= 2"), ({"period": 0}, "period"),
                                           ({"theta_norm": -1}, "theta_norm")])
def test_bad_kwargs(kwargs, words):
    with pytest.raises(ValueError, match=words):
        gym.make("CtxBandit/DriftingLinear-v0", **kwargs)


class DiscountedLinUCB(LinearAgent):
    """LinUCB on discounted statistics (Russac, Vernade, Cappe 2019; docs/agents.md's worked example):
    V_t = gamma V_{t-1} + x x^T + (1 - gamma) lam I, b_t = gamma b_{t-1} + y x."""

    params = {"gamma": Real(gt=0, le=1), "alpha": Real(ge=0), "lam": Real(gt=0)}

    def __init__(self, *, gamma=0.95, alpha=1.0, lam=1.0, seed=None, dim=None):
        self.gamma, self.alpha, self.lam = gamma, alpha, lam
        super().__init__(seed=seed, dim=dim)

    def _init_state(self, n, d):
        self.V_ = np.tile(self.lam * np.eye(d), (n, 1, 1))
        self.b_ = np.zeros((n, d))

    def _update(self, x, y):
        ridge = (1 - self.gamma) * self.lam * np.eye(x.shape[1])
        self.V_ = self.gamma * self.V_ + x[:, :, None] * x[:, None, :] + ridge
        self.b_ = self.gamma * self.b_ + y[:, None] * x

    def _scores(self, X):
        V_inv = np.linalg.inv(self.V_)
        theta = (V_inv @ self.b_[:, :, None])[:, :, 0]
        width = np.sqrt(np.einsum("nkd,nde,nke->nk", X, V_inv, X))
        return (X @ theta[:, :, None])[:, :, 0] + self.alpha * width


def regrets(agent, horizon=1000, seeds=(0, 1, 2, 3), **kwargs):
    """Cumulative regret per seed of a batched agent on the native vector env."""
    env = gym.make_vec("CtxBandit/DriftingLinear-v0", num_envs=len(seeds), vectorization_mode="vector_entry_point",
                       **kwargs)
    obs, _ = env.reset(seed=list(seeds))
    total = np.zeros(len(seeds))
    for _ in range(horizon):
        actions = agent.act(obs)
        next_obs, rewards, _, _, info = env.step(actions)
        agent.observe(obs, actions, rewards)
        total += info["regret"]
        obs = next_obs
    return total


def test_discounted_linucb_beats_linucb_on_the_drift():
    """T = 1000, half a turn of theta: LinUCB's estimate lags behind (regret about 300, Random about 650),
    the discounted one tracks theta_t (about 10). Without drift (a period of 10^9 rounds) LinUCB is fine
    (about 15): the drift is what beats it."""
    seeds = [0, 1, 2, 3]
    linucb = regrets(agents.make("LinUCB", seed=seeds))
    discounted = regrets(DiscountedLinUCB(seed=seeds))
    assert discounted.max() < 0.2 * linucb.min(), (discounted, linucb)
    assert regrets(agents.make("LinUCB", seed=seeds), period=1e9).max() < 0.25 * linucb.min()
