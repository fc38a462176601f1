"""action_probs: the closed forms exactly, the Monte-Carlo estimate against an analytic probability,
reproducibility, batching, bad arguments; and agents.checks.check_action_probs catches broken agents."""

import math

import numpy as np
import pytest
from scipy.stats import norm

import agents
from agents import checks
from agents.base import Streams
from agents.linear import Greedy, LinTS

D = 3


def trained(name, rounds=30, seed=0, k=4, **kwargs):
    """An agent that has observed `rounds` rounds of fixed random data (its own choices)."""
    rng = np.random.default_rng(seed)
    theta = rng.normal(size=D)
    agent = agents.make(name, seed=seed, **kwargs)
    for _ in range(rounds):
        X = rng.normal(size=(k, D)) / math.sqrt(D)
        a = agent.act(X)
        agent.observe(X, a, float(X[a] @ theta + 0.1 * rng.normal()))
    return agent, theta


def test_random_is_uniform():
    agent = agents.make("Random", seed=0)
    assert np.array_equal(agent.action_probs(np.zeros((5, D))), np.full(5, 0.2))
    assert np.array_equal(agents.make("Random", seed=[1, 2]).action_probs(np.zeros((2, 5, D))), np.full((2, 5), 0.2))


def test_epsilon_greedy_mixes_greedy_and_uniform():
    agent, theta = trained("epsilon-greedy", epsilon=0.2)
    X = np.stack([theta, -theta, 0.5 * theta, np.zeros(D)])          # arm 0 is clearly best
    assert np.allclose(agent.action_probs(X), [0.85, 0.05, 0.05, 0.05])
    fresh = agents.make("epsilon-greedy", epsilon=0.2, seed=0)          # theta_hat = 0: every arm ties
    assert np.allclose(fresh.action_probs(X), 0.25)


def softmax_with_theta_hat_e1(**kwargs):
    """A Softmax agent (lam = 1) that observed x = (1, 0), y = 2 once: V = diag(2, 1), b = (2, 0),
    so theta_hat = V^{-1} b = (1, 0) and an arm's score is its first feature."""
    agent = agents.make("Softmax", seed=0, **kwargs)
    agent.observe(np.array([[1.0, 0.0], [0.0, 1.0]]), 0, 2.0)
    return agent


def test_softmax_probabilities_are_the_closed_form():
    X = np.array([[0.0, 5.0], [0.5, -1.0], [1.0, 0.0]])               # scores 0, 0.5, 1
    z = 1 + math.e + math.e ** 2                                       # tau = 0.5: exp(0), exp(1), exp(2)
    p = softmax_with_theta_hat_e1(tau=0.5).action_probs(X)
    np.testing.assert_allclose(p, [1 / z, math.e / z, math.e ** 2 / z], rtol=1e-12)
    np.testing.assert_allclose(p, [0.090031, 0.244728, 0.665241], atol=1e-6)      # the same, by hand
    huge = np.array([[1000.0, 0.0], [1001.0, 0.0]])                    # exp(1001) overflows; the shift does not
    np.testing.assert_allclose(softmax_with_theta_hat_e1(tau=1.0).action_probs(huge),
                               [1 / (1 + math.e), math.e / (1 + math.e)], rtol=1e-12)
    cold = softmax_with_theta_hat_e1(tau=1e-300).action_probs(np.array([[1.0, 0], [0.0, 0], [1.0, 3]]))
    assert cold.tolist() == [0.5, 0.0, 0.5]                            # tau -> 0: Greedy, ties split evenly
    assert np.allclose(agents.make("Softmax", seed=0).action_probs(X), 1 / 3)    # theta_hat = 0: uniform


def test_softmax_draws_invert_the_cdf_of_one_uniform():
    """Each act takes the next uniform u of the instance's stream and picks the arm whose CDF
    interval [cdf_{a-1}, cdf_a) holds u; over many acts the shares match the probabilities."""
    X = np.array([[0.0, 5.0], [0.5, -1.0], [1.0, 0.0]])
    agent = softmax_with_theta_hat_e1(tau=0.5)
    p = agent.action_probs(X)
    stream = Streams(0, 1)                                             # the agent's own streams, replayed
    picks = np.array([agent.act(X) for _ in range(10_000)])
    u = stream.random((1, 10_000))[0]
    np.testing.assert_array_equal(picks, np.searchsorted(np.cumsum(p), u, side="right"))
    assert np.abs(np.bincount(picks, minlength=3) / 10_000 - p).max() < 0.02    # 4 standard errors


@pytest.mark.parametrize("name", ["LinUCB", "Greedy", "GLM-UCB", "Logistic-UCB-1"])
def test_index_policies_split_ties_evenly(name):
    agent, _ = trained(name)
    X = np.random.default_rng(1).normal(size=(4, D))
    best = int(np.argmax(agent.action_probs(X)))
    X[(best + 1) % 4] = X[best]
    p = agent.action_probs(X)
    assert p[best] == p[(best + 1) % 4] == 0.5


def test_lints_estimate_matches_the_gaussian_probability():
    """Two arms: LinTS picks arm 0 when (x0 - x1)^T theta~ > 0, theta~ ~ N(theta_hat, (v sigma)^2 V^{-1})."""
    agent, _ = trained("LinTS", rounds=5, k=2, v=0.5)
    X = np.random.default_rng(3).normal(size=(2, D)) / math.sqrt(D)
    diff = X[0] - X[1]
    mean = diff @ agent.theta_[0]
    sd = 0.5 * np.linalg.norm(agent.R_[0].T @ diff)
    p = agent.action_probs(X, draws=2000)
    assert abs(p[0] - norm.cdf(mean / sd)) < 0.05
    assert 0.1 < p[0] < 0.9                                           # the case is not trivial


def test_estimates_are_reproducible_and_leave_the_agent_alone():
    agent, _ = trained("LinTS", rounds=3)
    X = np.random.default_rng(4).normal(size=(4, D))
    twin, _ = trained("LinTS", rounds=3)
    first = agent.action_probs(X, draws=50)
    assert np.array_equal(first, agent.action_probs(X, draws=50))
    assert not np.array_equal(first, agent.action_probs(X, draws=51))
    assert [agent.act(X) for _ in range(20)] == [twin.act(X) for _ in range(20)]


def test_batched_rows_equal_single_agents():
    X = np.random.default_rng(5).normal(size=(2, 4, D))
    batch = agents.make("LinTS", seed=[3, 5])
    singles = [agents.make("LinTS", seed=s) for s in (3, 5)]
    p = batch.action_probs(X, draws=40)
    assert p.shape == (2, 4)
    for i, agent in enumerate(singles):
        assert np.array_equal(p[i], agent.action_probs(X[i], draws=40))


def test_draws_is_checked_and_settable():
    agent = agents.make("LinTS", seed=0)
    with pytest.raises(ValueError, match="draws"):
        agent.action_probs(np.zeros((3, D)), draws=0)
    agent.probs_draws = 7
    assert set(np.unique(agent.action_probs(np.eye(3)) * 7)) <= set(range(8))


class WrongProbs(Greedy):
    """Claims to explore uniformly while it acts greedily."""

    def _probs(self, X):
        return np.full(X.shape[:2], 1.0 / X.shape[1])


class StreamThief(LinTS):
    """Draws its propensities from its own stream, so that logging them changes its actions."""

    def action_probs(self, obs, draws=None):
        self._check_obs(obs)
        self.rng_.standard_normal((self.n_, self.d_, 1))
        return super().action_probs(obs, draws)


@pytest.mark.parametrize("cls", [WrongProbs, StreamThief])
@pytest.mark.parametrize("batched", [False, True])
def test_check_catches_broken_propensities(cls, batched):
    with pytest.raises(AssertionError, match="action_probs"):
        checks.check_action_probs(cls, batched)
