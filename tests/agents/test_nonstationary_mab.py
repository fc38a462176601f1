"""K-armed agents (agents.mab) and change-detection wrappers (agents.changepoint), issue 51: discounted and
windowed counts against their closed sums, gamma = 1 and window = None as UCB1 / TS bit for bit, the
CUSUM, M-UCB and GLR statistics and the round each fires on hand-made sequences, restarts (local,
global, at given change points), and the conformance suite with windows that fill and detectors that
fire (forgetting on an abrupt problem: test_nonstationary_learning.py)."""

import math

import numpy as np
import pytest

import agents
from agents.changepoint import CUSUMUCB, MUCB, GLRklUCB, OracleRestart, cusum_update, glr_statistic, mucb_statistic
from agents.checks import check_agent
from agents.mab import DTS, DUCB, SWTS, SWUCB, UCB1, BernoulliTS, kl_bernoulli, klucb_index

ARMS = np.eye(3)          # three arms shown as one-hot ids: the agents read the row index


def play(agent, actions, rewards, obs=ARMS):
    for a, r in zip(actions, rewards):
        agent.act(obs)
        agent.observe(obs, int(a), float(r))


def test_discounted_and_windowed_counts_are_the_closed_sums():
    """D-UCB: N_t(gamma, k) = sum_s gamma^{t-s} 1{A_s = k}, S likewise (Garivier & Moulines §3); SW-UCB: the
    counts and sums of the last tau rounds (§4); D-TS the same discounted sums of successes."""
    rng = np.random.default_rng(0)
    a, r = rng.integers(3, size=40), rng.random(40).round(2)
    gamma, tau = 0.9, 7
    weights = gamma ** (39 - np.arange(40))
    onehot = np.eye(3)[a]
    discounted = DUCB(gamma=gamma, seed=0)
    play(discounted, a, r)
    np.testing.assert_allclose(discounted.counts_[0], weights @ onehot, rtol=1e-12)
    np.testing.assert_allclose(discounted.sums_[0], (weights * r) @ onehot, rtol=1e-12)
    window = SWUCB(window=tau, seed=0)
    play(window, a, r)
    np.testing.assert_allclose(window.counts_[0], onehot[-tau:].sum(axis=0), atol=1e-12)
    np.testing.assert_allclose(window.sums_[0], r[-tau:] @ onehot[-tau:], atol=1e-12)
    index = window._scores()[0]
    n, N, S = tau, onehot[-tau:].sum(axis=0), r[-tau:] @ onehot[-tau:]
    expect = np.where(N > 0, S / np.maximum(N, 1) + 1.0 * np.sqrt(0.6 * math.log(n) / np.maximum(N, 1)), np.inf)
    np.testing.assert_allclose(index, expect, rtol=1e-12)
    ts = DTS(gamma=gamma, seed=0)
    play(ts, a, (r > 0.5).astype(float))                  # 0/1 rewards: the successes are the rewards
    np.testing.assert_allclose(ts.sums_[0], (weights * (r > 0.5)) @ onehot, rtol=1e-12)


def test_ucb1_and_klucb_indices():
    """UCB1: mean + sqrt(2 log n / N) (Auer et al. 2002); kl-UCB: the q >= mean with N kl(mean, q) = log n
    (Garivier & Cappe 2011, c = 0), within the bisection's 1e-6."""
    a, r = [0, 1, 2, 0, 0, 1, 2, 2, 2], [1, 0, 1, 1, 0, 1, 0, 0, 1]
    ucb = UCB1(seed=0)
    play(ucb, a, r)
    N, S = np.array([3.0, 2, 4]), np.array([2.0, 1, 2])
    np.testing.assert_allclose(ucb._scores()[0], S / N + np.sqrt(2 * math.log(9) / N), rtol=1e-14)
    kl = agents.make("kl-UCB", seed=0)
    play(kl, a, r)
    q = kl._scores()[0]
    assert (q >= S / N).all() and (N * kl_bernoulli(S / N, q) <= math.log(9)).all()
    assert (N * kl_bernoulli(S / N, q + 1e-6) > math.log(9)).all()
    assert np.array_equal(klucb_index(S / N, math.log(9) / N), q)


@pytest.mark.parametrize("batched", [False, True])
def test_no_forgetting_is_the_stationary_agent_bit_for_bit(batched):
    """D-UCB(gamma=1, xi=1/2) and SW-UCB(window=None, xi=2) are UCB1; D-TS(gamma=1) and SW-TS(window=None) are
    TS: the same arms, statistics and scores to the bit (single and batched)."""
    rng = np.random.default_rng(4)
    means = np.array([0.3, 0.5, 0.45])
    obs = np.stack([ARMS] * 3) if batched else ARMS
    seed = [1, 2, 3] if batched else 1
    pairs = [(DUCB(gamma=1.0, xi=0.5, seed=seed), UCB1(seed=seed)),
             (SWUCB(window=None, xi=2.0, seed=seed), UCB1(seed=seed)),
             (DTS(gamma=1.0, seed=seed), BernoulliTS(seed=seed)),
             (SWTS(window=None, seed=seed), BernoulliTS(seed=seed))]
    for ours, stationary in pairs:
        for t in range(150):
            a, b = ours.act(obs), stationary.act(obs)
            assert np.array_equal(a, b), (type(ours).__name__, t)
            y = (rng.random(3) < means[a]).astype(float) if batched else float(rng.random() < means[a])
            ours.observe(obs, a, y)
            stationary.observe(obs, b, y)
        assert np.array_equal(ours.counts_, stationary.counts_) and np.array_equal(ours.sums_, stationary.sums_)


def test_cusum_statistic_and_the_round_it_fires():
    """Liu et al. Alg. 2 with M = 3, eps = 0.1: u0 = 1 from three 1s; then 1 adds nothing, each 0 adds
    1 - 0 - 0.1 = 0.9 to g-; with h = 2 the third 0 (the 7th sample, g- = 2.7) fires."""
    state, values = [0, 0.0, 0.0, 0.0], []
    for y in [1, 1, 1, 1, 0, 0, 0]:
        values.append(cusum_update(state, y, 3, 0.1))
    np.testing.assert_allclose(values, [0, 0, 0, 0, 0.9, 1.8, 2.7])
    agent = CUSUMUCB(M=3, eps=0.1, h=2.0, alpha=0.0, seed=0)      # restart="local": only arm 0 forgets
    play(agent, [1, 2], [1.0, 0.0])
    fired = []
    for y in [1, 1, 1, 1, 0, 0, 0]:
        play(agent, [0], [y])
        fired.append(int(agent.restarts_[0]))
    assert fired == [0, 0, 0, 0, 0, 0, 1]
    inner = agent.inner_[0]
    assert inner.counts_[0].tolist() == [0.0, 1.0, 1.0] and inner.sums_[0].tolist() == [0.0, 1.0, 0.0]


def test_mucb_window_test():
    """Cao et al. Alg. 2: |sum of the last w/2 - sum of the first w/2| of an arm's last w rewards > b fires a
    global restart (the whole base agent and every detector)."""
    assert mucb_statistic([0, 0, 1, 1], 4) == 2 and mucb_statistic([0, 1, 0, 1], 4) == 0
    assert mucb_statistic([1, 1, 1], 4) == 0
    agent = MUCB(w=4, b=1.5, gamma=0.0, seed=0)
    play(agent, [1, 1, 1, 1], [0, 1, 0, 1])                       # arm 1's window 0, 1, 0, 1: |1 - 1| = 0
    play(agent, [0, 0, 0], [0, 0, 1])                             # arm 0: three rewards, no window yet
    assert agent.restarts_[0] == 0 and agent.inner_[0].t_ == 7
    play(agent, [0], [1])                                         # arm 0's window 0, 0, 1, 1: |2 - 0| = 2 > 1.5
    assert agent.restarts_[0] == 1 and agent.inner_[0].t_ == 0
    assert all(state == [] for state in agent.detectors_[0])


def glr_brute(y):
    """The Bernoulli GLR statistic by its definition, one split at a time."""
    n, best = len(y), 0.0
    for s in range(1, n):
        mu, m1, m2 = np.mean(y), np.mean(y[:s]), np.mean(y[s:])
        best = max(best, s * kl_bernoulli(m1, mu) + (n - s) * kl_bernoulli(m2, mu))
    return best


def test_glr_statistic_and_the_round_it_fires():
    """Besson et al. eq. 3: [0, 0, 1, 1] splits best in the middle, 4 kl(0, 1/2) = 4 log 2; an arm at 0 for
    30 pulls then at 1 fires at the first n with GLR_n >= log(3 n^{3/2} / delta)."""
    assert glr_statistic([0, 0, 1, 1]) == pytest.approx(4 * math.log(2), rel=1e-9)
    y = [0.0] * 30 + [1.0] * 30
    delta = 0.01
    first = next(n for n in range(2, 61) if glr_brute(y[:n]) >= math.log(3 * n ** 1.5 / delta))
    assert glr_statistic(y[:first]) == pytest.approx(glr_brute(y[:first]), rel=1e-12)
    agent = GLRklUCB(base="UCB1", delta=delta, alpha=0.0, seed=0)
    obs = np.eye(1)
    fired = []
    for r in y[:first]:
        play(agent, [0], [r], obs)
        fired.append(int(agent.restarts_[0]))
    assert fired == [0] * (first - 1) + [1] and 31 <= first <= 40


def test_oracle_restart_restarts_at_the_change_points():
    """The base agent is fresh from each change point on (1-based rounds, the envs' convention: from round 6,
    after 5 rewards, and from round 10), freshly seeded."""
    agent = OracleRestart(change_points=(6, 10), seed=0)
    play(agent, [0] * 12, [1.0] * 12)
    assert agent.restarts_[0] == 2 and agent.inner_[0].t_ == 3
    assert agent.inner_[0].counts_[0].tolist() == [3.0, 0.0, 0.0]


def test_bad_settings_are_refused():
    with pytest.raises(ValueError, match="restart='global'"):
        CUSUMUCB(base="LinUCB")
    with pytest.raises(ValueError, match="w must be even"):
        MUCB(w=5)
    with pytest.raises(ValueError, match="change_points"):
        OracleRestart(change_points=(5, 3))
    with pytest.raises(ValueError, match="must not set a seed"):
        OracleRestart(base_kwargs={"seed": 3})
    with pytest.raises(KeyError, match="LinUCB"):
        GLRklUCB(base="LinUBC")
    agent = UCB1(seed=0)
    agent.act(ARMS)
    with pytest.raises(ValueError, match="K must stay fixed"):
        agent.act(np.eye(4, 3))


@pytest.mark.parametrize("make", [
    lambda **k: SWTS(window=5, **k),
    lambda **k: CUSUMUCB(M=3, h=0.5, **k),
    lambda **k: GLRklUCB(base="LinUCB", delta=0.5, alpha=0.1, **k),
])
def test_conformance_with_detectors_that_fire(make):
    """The conformance suite (batched = singles bit for bit included) on settings whose windows fill and
    detectors fire within its rounds (the registry's run, tests/agents/test_checks.py, has the defaults)."""
    check_agent(make, rounds=30)
