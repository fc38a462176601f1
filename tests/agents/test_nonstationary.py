"""D-LinUCB, SW-LinUCB, D-LinTS and SW-LinTS (agents.nonstationary): the discounted and windowed statistics
against their closed sums, Russac et al.'s and Cheung et al.'s widths and theory defaults, gamma = 1 and
window = None as LinUCB bit for bit, and the conformance suite past the window (issue 51; forgetting on
an abrupt problem: test_nonstationary_learning.py)."""

import math

import numpy as np
import pytest

import agents
from agents.base import reads_horizon
from agents.checks import check_agent
from agents.linear import LinUCB
from agents.nonstationary import DLinTS, DLinUCB, SWLinTS, SWLinUCB, discounted_beta, window_beta


def history(T=30, d=3, K=5, seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(T, K, d)) / math.sqrt(d), rng.normal(size=(T, K))


def feed(agent, X, Y):
    """Play the agent on arm features X (T, K, d) with rewards Y (T, K); the arms it chose."""
    chosen = []
    for obs, y in zip(X, Y):
        a = agent.act(obs)
        agent.observe(obs, a, float(y[a]))
        chosen.append(a)
    return np.array(chosen)


def test_discounted_statistics_are_the_closed_sums():
    """V_t = lam I + sum gamma^{t-s} x x^T, V~_t with gamma^{2(t-s)}, b_t = sum gamma^{t-s} y x (Russac et al.
    Alg. 1), the scores' metric V^{-1} V~ V^{-1}, theta_hat = V^{-1} b and beta_t of their Thm 1."""
    X, Y = history()
    T, _, d = X.shape
    gamma, lam, delta, sigma, S, L = 0.9, 0.5, 0.05, 0.7, 2.0, 1.5
    agent = DLinUCB(gamma=gamma, lam=lam, delta=delta, sigma=sigma, S=S, L=L, alpha=0.8, seed=0)
    a = feed(agent, X, Y)
    x, y = X[np.arange(T), a], Y[np.arange(T), a]
    w = gamma ** (T - 1 - np.arange(T))
    V = lam * np.eye(d) + np.einsum("s,sd,se->de", w, x, x)
    Vt = lam * np.eye(d) + np.einsum("s,sd,se->de", w ** 2, x, x)
    b = (w * y) @ x
    Vi = np.linalg.inv(V)
    np.testing.assert_allclose(agent.V_[0], V, rtol=1e-12)
    np.testing.assert_allclose(agent.Vt_[0], Vt, rtol=1e-12)
    np.testing.assert_allclose(agent.b_[0], b, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(agent.W_[0, :, :d], Vi @ Vt @ Vi, rtol=1e-10)
    np.testing.assert_allclose(agent.W_[0, :, d], Vi @ b, rtol=1e-10)
    beta = math.sqrt(lam) * S + sigma * math.sqrt(2 * math.log(1 / delta)
                                                   + d * math.log(1 + L**2 * (1 - gamma ** (2 * T))
                                                                  / (lam * d * (1 - gamma**2))))
    assert agent.width_[0, 0] == pytest.approx(0.8 * beta, rel=1e-12)
    obs = X[0]
    ucb = obs @ (Vi @ b) + 0.8 * beta * np.sqrt(np.einsum("kd,de,ke->k", obs, Vi @ Vt @ Vi, obs))
    assert agent.act(obs) == int(np.argmax(ucb))


def test_window_statistics_are_the_last_tau_rounds():
    """SW-LinUCB's V and b cover exactly the last w rounds (Cheung et al. §4); its width is their beta."""
    X, Y = history(T=40)
    T, _, d = X.shape
    w, lam, delta = 7, 0.3, 0.1
    agent = SWLinUCB(window=w, lam=lam, delta=delta, seed=1)
    a = feed(agent, X, Y)
    x, y = X[np.arange(T), a][-w:], Y[np.arange(T), a][-w:]
    V, b = lam * np.eye(d) + x.T @ x, y @ x
    np.testing.assert_allclose(agent.V_[0], V, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(agent.W_[0, :, :d], np.linalg.inv(V), rtol=1e-9)
    np.testing.assert_allclose(agent.W_[0, :, d], np.linalg.solve(V, b), rtol=1e-9, atol=1e-12)
    beta = math.sqrt(lam) + math.sqrt(d * math.log((1 + w / lam) / delta))
    assert agent.width_[0, 0] == pytest.approx(beta, rel=1e-12)


def test_theory_defaults():
    """gamma = 1 - (B_T / (d T))^{2/3} and tau = (d T / B_T)^{2/3} (Russac et al. §4.3): 0.99412 and 170 in
    their abrupt setting (d = 2, T = 6000, B_T = 4 + sqrt(2))."""
    obs = np.zeros((3, 2))
    agent = DLinUCB(horizon=6000, B_T=4 + math.sqrt(2), seed=0)
    agent.act(obs)
    assert round(agent.gamma_, 5) == 0.99412
    window = SWLinUCB(horizon=6000, B_T=4 + math.sqrt(2), seed=0)
    window.act(obs)
    assert window.window_ == 170
    assert DLinUCB.reads_horizon({}) and not DLinUCB.reads_horizon({"gamma": 0.99})
    assert SWLinUCB.reads_horizon({}) and not SWLinUCB.reads_horizon({"window": 100})
    assert reads_horizon("D-LinTS", {}) and not reads_horizon("SW-LinTS", {"window": None})


class _Radius(LinUCB):
    """LinUCB whose width is `radius(t - 1 rewards)` instead of its own log-det radius."""

    def __init__(self, radius, **kwargs):
        self.radius = radius
        super().__init__(**kwargs)

    def _set_width(self, t=1):
        rewards = np.broadcast_to(np.asarray(t, float) - 1.0, (self.n_,))
        self.width_ = np.array([[self.alpha * self.radius(w)] for w in rewards.tolist()])


@pytest.mark.parametrize("batched", [False, True])
def test_no_forgetting_is_linucb_bit_for_bit(batched):
    """gamma = 1 and window = None are LinUCB (same V^{-1}, theta_hat, scores and arms, to the bit) with
    Russac et al.'s and Cheung et al.'s widths at gamma = 1 / w = t."""
    X, Y = history(T=60, d=2, K=8, seed=3)
    seeds = [5, 6, 7]
    if batched:
        X, Y = np.stack([X] * 3, axis=1), np.stack([Y] * 3, axis=1)
    kw = dict(lam=0.1, sigma=1.0, S=1.0, delta=0.01, alpha=0.5)
    for cls, extra, beta in ((DLinUCB, {"gamma": 1.0}, discounted_beta), (SWLinUCB, {"window": None}, window_beta)):
        def radius(w, beta=beta):
            return beta(w, 2, 0.1, 1.0, 1.0, 0.01, 1.0)
        ours = cls(**kw, **extra, seed=seeds if batched else 5)
        linucb = _Radius(radius, **kw, seed=seeds if batched else 5)
        for obs, y in zip(X, Y):
            a, b = ours.act(obs), linucb.act(obs)
            assert np.array_equal(a, b)
            assert np.array_equal(ours._scores(obs.reshape(-1, *obs.shape[-2:])),
                                  linucb._scores(obs.reshape(-1, *obs.shape[-2:])))
            r = y[np.arange(3), a] if batched else float(y[a])
            ours.observe(obs, a, r)
            linucb.observe(obs, a, r)
        assert np.array_equal(ours.W_, linucb.W_) and np.array_equal(ours.width_, linucb.width_)


@pytest.mark.parametrize("make", [lambda **k: SWLinTS(window=6, **k), lambda **k: DLinTS(gamma=0.8, v=0.3, **k)])
def test_conformance_past_the_window(make):
    """The conformance suite (batched = singles bit for bit included) once rounds have left the window
    (the registry's run of agents.checks, tests/agents/test_checks.py, sees the default window unfilled)."""
    check_agent(make, rounds=30)


def test_dlinucb_slaves_learn_fail_and_restart():
    """dLinUCB (Wu et al. 2018 as Russac et al. run it), d = 1, lam = 0.1: a reward within beta ||x||_{V^{-1}}
    + eta of the slave's prediction is learnt (theta = y / (lam + 1)); one beyond it is a failure. After a
    success and four failures the badness 4/5 reaches sqrt(log(1/delta_2) / 10) + delta = 0.69 (after three,
    3/4 stays below 0.77), so the slave is discarded and a new one starts, its clock at its creation round."""
    agent = agents.make("dLinUCB", seed=0)
    obs = np.ones((2, 1))
    agent.act(obs)
    agent.observe(obs, 0, 0.5)
    slave = agent.slaves_[0][0]
    assert slave.W[0, 1] == pytest.approx(0.5 / 1.1) and slave.time == 1 and slave.fails == [0]
    beta = math.sqrt(0.1) + math.sqrt(2 * math.log(100) + math.log(1 + 1 / 0.1))
    assert agent._beta(slave) == pytest.approx(beta)
    created = []
    for _ in range(4):
        agent.act(obs)
        agent.observe(obs, 1, 100.0)
        created.append(int(agent.created_[0]))
    assert created == [0, 0, 0, 1]
    (new,) = agent.slaves_[0]
    assert new.time == 5 and new.fails == [] and np.array_equal(new.W, np.array([[10.0, 0.0]]))
