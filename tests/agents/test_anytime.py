"""The doubling-trick wrapper ([S0] §6, App. E): restart schedule, per-epoch m and sigma_R,
the constant l(T0, b), and wrapping GLM-ES and Lin-ES."""

import math
import pickle

import numpy as np
import pytest

import agents
from agents.anytime import GOLDEN_B, DoublingTrick, doubling_constant, epoch_ends
from agents.glm import GLMES


class Recorder:
    """Stand-in ensemble agent that logs how and when the wrapper builds it."""

    built: list = []

    def __init__(self, *, m, sigma_R, seed, tag=None):
        self.m, self.sigma_R, self.seed, self.tag = m, sigma_R, seed, tag
        self.observed = 0
        Recorder.built.append(self)

    def act(self, obs):
        return 0

    def observe(self, obs, action, reward):
        self.observed += 1


def test_restarts_at_floor_T0_b_to_the_i_with_log_scaled_hyperparameters():
    Recorder.built = []
    dt = DoublingTrick(Recorder, T0=10, b=2.5, agent_kwargs={"tag": "x"}, seed=0)
    X = np.zeros((3, 2))
    for _ in range(200):
        dt.observe(X, dt.act(X), 0.0)
    ends = epoch_ends(10, 2.5, 5)
    assert ends == [10, 25, 62, 156, 390]
    taus = np.diff([0] + ends)
    assert [r.observed for r in Recorder.built] == [10, 15, 37, 94, 200 - 156]
    for r, tau in zip(Recorder.built, taus):
        assert r.m == max(1, round(2 * math.log(tau))) and r.sigma_R == pytest.approx(0.02 * math.log(tau))
        assert r.tag == "x"
    assert len({r.seed for r in Recorder.built}) == 5 and dt.epoch_ == 4 and dt.tau_ == taus[4]


def test_doubling_constant_reference_values():
    for T0, b, ref in [(100, 2.618, 3.336), (10, 2.618, 3.438), (300, 2.618, 3.332), (1000, 2.618, 3.331),
                       (100, 1.5, 3.883), (100, 2, 3.425), (100, 3, 3.351), (100, 4, 3.467)]:
        assert doubling_constant(T0, b) == pytest.approx(ref, abs=2e-3)
    grid = np.linspace(1.5, 4, 251)
    assert grid[np.argmin([doubling_constant(1e9, b) for b in grid])] == pytest.approx(GOLDEN_B, abs=0.01)


def test_bad_schedule_raises():
    with pytest.raises(ValueError, match="b > 1"):
        DoublingTrick(Recorder, T0=10, b=1.0)
    with pytest.raises(ValueError, match="unknown agent"):
        DoublingTrick("No-Such-Agent")


def bandit(K=10, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (K, d))
    p = 1 / (1 + np.exp(-X @ rng.normal(0, 1, d)))
    return X, p


def run(agent, X, p, n, seed):
    rng = np.random.default_rng(seed)
    actions = []
    for _ in range(n):
        a = agent.act(X)
        agent.observe(X, a, float(rng.random() < p[a]))
        actions.append(a)
    return actions


def test_glm_es_dt_uses_s0_defaults_and_is_reproducible():
    dt = agents.make("GLM-ES-DT", warmup=20, seed=5)
    assert dt.T0 == 100 and dt.b == pytest.approx(2.618, abs=1e-3) and dt.factory is GLMES
    X, p = bandit()
    first = run(dt, X, p, 300, seed=1)
    assert dt.epoch_ == 2 and dt.agent_.m == round(2 * math.log(424)) and dt.agent_.warmup == 20
    twin = pickle.loads(pickle.dumps(dt))
    assert run(dt, X, p, 50, seed=2) == run(twin, X, p, 50, seed=2)
    dt.reset()
    assert run(dt, X, p, 300, seed=1) == first


def test_wrapper_accepts_registered_names_and_wraps_lin_es():
    if "Lin-ES" not in agents.REGISTRY:
        pytest.skip("Lin-ES is not registered")
    dt = DoublingTrick("Lin-ES", T0=20, agent_kwargs={"lam": 2.0}, seed=0)
    X, p = bandit(seed=3)
    run(dt, X, p, 80, seed=0)
    assert type(dt.agent_) is agents.REGISTRY["Lin-ES"] and dt.epoch_ == 2
    tau = epoch_ends(20, GOLDEN_B, 3)[2] - epoch_ends(20, GOLDEN_B, 3)[1]
    assert dt.agent_.m == round(2 * math.log(tau)) and dt.agent_.lam == 2.0
