"""Regression oracles (agents.oracle) and the IGW / greedy agents on them (agents.squarecb): closed forms,
known answers, the conformance suite, and the defaults against Random on a small classification bandit."""

import math

import gymnasium as gym
import numpy as np
import pytest

import agents
import gym_ctxbandits  # noqa: F401  (registers the envs)
from agents.checks import check_agent
from agents.oracle import ORACLES, MLPOracle, RidgeOracle, RiverOracle, SGDOracle, SklearnOracle, make_oracle
from agents.squarecb import FALCON, SquareCB, igw

NAMES = ["SquareCB", "FALCON", "Oracle-Greedy", "Oracle-epsilon-greedy"]
SEQS = [np.random.SeedSequence(s) for s in (1, 2)]


def data(n=2, rounds=30, d=3, seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(rounds, n, d)), rng.normal(size=(rounds, n)), rng.choice([0.0, 0.5, 2.0, 500.0], (rounds, n))


# -- the oracles -----------------------------------------------------------------------------------
def test_ridge_oracle_is_the_weighted_closed_form():
    X, Y, H = data()
    oracle = RidgeOracle(lam=0.7)
    oracle.start(2, 3, SEQS)
    for x, y, h in zip(X, Y, H):
        oracle.update(x, y, h)
    for i in range(2):
        Hi = np.diag(H[:, i])
        want = np.linalg.solve(0.7 * np.eye(3) + X[:, i].T @ Hi @ X[:, i], X[:, i].T @ Hi @ Y[:, i])
        np.testing.assert_allclose(oracle.theta[i], want, rtol=1e-8, atol=1e-10)
    arms = np.random.default_rng(1).normal(size=(2, 4, 3))
    np.testing.assert_allclose(oracle.predict(arms), np.einsum("nkd,nd->nk", arms, oracle.theta))


def test_sgd_plain_step_is_the_gradient_step():
    """adaptive, normalized and invariant off, power_t 0: w += lr 2 h (y - <w, x>) x, the gradient of h (y - f)^2."""
    x, y, h = np.array([[0.5, -1.0, 2.0]]), np.array([1.5]), np.array([2.0])
    oracle = SGDOracle(lr=0.1, adaptive=False, normalized=False, invariant=False, power_t=0.0)
    oracle.start(1, 3, SEQS[:1])
    oracle.update(x, y, h)
    w1 = 0.1 * 2 * 2.0 * 1.5 * x[0]
    np.testing.assert_allclose(oracle.theta[0], w1)
    oracle.update(x, y, h)
    np.testing.assert_allclose(oracle.theta[0], w1 + 0.1 * 2 * 2.0 * (1.5 - w1 @ x[0]) * x[0])


def test_sgd_vw_step_is_the_closed_form():
    """VW's default step (adaptive, normalized, invariant) from w = 0, written out per feature: G_i = h (2y)^2 x_i^2,
    s_i = |x_i|, multiplier 1 / sqrt(features present), q = multiplier sum x_i^2 / (sqrt(G_i) s_i),
    u = y (1 - exp(-2 lr h q)) / q, w_i = u multiplier x_i / (sqrt(G_i) s_i); a feature 0 takes no part."""
    x, y, h, lr = np.array([0.5, 0.0, -2.0]), 0.8, 3.0, 0.5
    rate = [1 / (math.sqrt(h * 4 * y * y * v * v) * abs(v)) if v else 0.0 for v in x]
    mult = 1 / math.sqrt(2)
    q = mult * sum(v * v * r for v, r in zip(x, rate))
    u = y * (1 - math.exp(-2 * lr * h * q)) / q
    oracle = SGDOracle(lr=lr)
    oracle.start(1, 3, SEQS[:1])
    oracle.update(x[None], np.array([y]), np.array([h]))
    np.testing.assert_allclose(oracle.theta[0], [u * mult * v * r for v, r in zip(x, rate)], rtol=1e-12)


@pytest.mark.parametrize("flags, options", [
    ("", {}), ("--adaptive --invariant", {"normalized": False}), ("--adaptive --normalized", {"invariant": False}),
    ("--normalized --invariant", {"adaptive": False}), ("--sgd", {"adaptive": False, "normalized": False, "invariant": False}),
])
def test_sgd_oracle_makes_vws_predictions(flags, options):
    """The same stream (features of several scales, zeros, zero-loss examples, weights up to 100) through VW's gd
    and SGDOracle: the same predictions, to VW's float32 precision."""
    pytest.importorskip("vowpalwabbit", reason="vowpalwabbit is not installed")
    from vowpalwabbit import Workspace

    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 4)) * rng.choice([0.0, 1.0], size=(60, 4), p=[0.3, 0.7]) * [1, 3, 0.2, 10]
    y = X @ rng.normal(size=4) / 5 + 0.1 * rng.normal(size=60)
    y[:3] = 0.0                                             # no loss at w = 0: not learned
    h = rng.choice([0.5, 1.0, 2.0] if flags == "--sgd" else [1.0, 5.0, 100.0], size=60)
    lr = 0.01 if flags == "--sgd" else 0.5
    vw = Workspace(f"--quiet --noconstant -l {lr} {flags} --min_prediction -1e9 --max_prediction 1e9", enable_logging=False)
    oracle = SGDOracle(lr=lr, **options)
    oracle.start(1, 4, SEQS[:1])
    try:
        for x, target, weight in zip(X, y, h):
            features = "| " + " ".join(f"f{i}:{v:.12g}" for i, v in enumerate(x) if v)
            assert oracle.predict(x[None, None])[0, 0] == pytest.approx(vw.predict(features), rel=1e-5, abs=1e-5)
            vw.learn(f"{target:.12g} {weight:.12g} {features}")
            oracle.update(x[None], np.array([target]), np.array([weight]))
    finally:
        vw.finish()


@pytest.mark.parametrize("flags", [{}, {"adaptive": False, "normalized": False}])
def test_sgd_importance_weight_500_never_overshoots(flags):
    """The invariant update moves f(x) toward y and never past it: a weight of 500 lands at y, not beyond
    (the features' scales are set first, so that the normalizer rescales nothing later)."""
    X, Y, _ = data(n=1, rounds=40, d=4)
    oracle = SGDOracle(**flags)
    oracle.start(1, 4, SEQS[:1])
    oracle.update(np.full((1, 4), 2.0), np.array([1.0]), np.array([1.0]))
    for x, y in zip(np.clip(X, -2, 2), Y):
        before = oracle.predict(x[:, None])[0, 0]
        oracle.update(x, y, np.array([500.0]))
        after = oracle.predict(x[:, None])[0, 0]
        assert min(before, y[0]) - 1e-9 <= after <= max(before, y[0]) + 1e-9
        assert np.isfinite(oracle.theta).all()


def test_sklearn_regressor_is_wrapped_per_instance_with_its_weights():
    from sklearn.linear_model import SGDRegressor

    X, Y, H = data(rounds=8)
    oracle = make_oracle(SGDRegressor(random_state=3))
    assert isinstance(oracle, SklearnOracle)
    oracle.start(2, 3, SEQS)
    np.testing.assert_array_equal(oracle.predict(X[:2]), np.zeros((2, 2)))      # 0 before the first fit
    twins = [SGDRegressor(random_state=3) for _ in range(2)]
    for x, y, h in zip(X, Y, H):
        oracle.update(x, y, h)
        for i, twin in enumerate(twins):
            if h[i] > 0:                                                         # a weight 0 is no update
                twin.partial_fit(x[i:i + 1], y[i:i + 1], sample_weight=h[i:i + 1])
    arms = X[:4].transpose(1, 0, 2)                                              # (2, 4, 3)
    np.testing.assert_allclose(oracle.predict(arms), [t.predict(a) for t, a in zip(twins, arms)])
    assert oracle.models_[0] is not oracle.models_[1]


def test_sklearn_random_state_none_is_seeded_per_instance():
    from sklearn.linear_model import SGDRegressor

    oracle = make_oracle(SGDRegressor())
    oracle.start(2, 3, SEQS)
    states = [m.random_state for m in oracle.models_]
    assert all(isinstance(s, int) for s in states) and states[0] != states[1]
    again = make_oracle(SGDRegressor())
    again.start(1, 3, SEQS[1:])
    assert again.models_[0].random_state == states[1]                            # instance 1's seed alone


def test_river_regressor_is_wrapped_with_its_weights():
    linear_model = pytest.importorskip("river.linear_model", reason="river is not installed (optional)")
    X, Y, H = data(rounds=8)
    oracle = make_oracle(linear_model.LinearRegression())
    assert isinstance(oracle, RiverOracle)
    oracle.start(2, 3, SEQS)
    np.testing.assert_array_equal(oracle.predict(X[:2]), np.zeros((2, 2)))
    twins = [linear_model.LinearRegression() for _ in range(2)]
    for x, y, h in zip(X, Y, H):
        oracle.update(x, y, h)
        for i, twin in enumerate(twins):
            if h[i] > 0:
                twin.learn_one(dict(enumerate(x[i])), y[i], w=h[i])
    arms = X[:4].transpose(1, 0, 2)
    want = [[t.predict_one(dict(enumerate(row))) for row in a] for t, a in zip(twins, arms)]
    np.testing.assert_allclose(oracle.predict(arms), want)


def test_wrong_oracle_is_one_clear_error():
    from sklearn.linear_model import SGDRegressor

    with pytest.raises(ValueError, match=r"oracle must be .*partial_fit.*learn_one"):
        agents.make("SquareCB", oracle=object())
    with pytest.raises(ValueError, match=r"pass an instance, SGDRegressor\(\)"):
        make_oracle(SGDRegressor)
    with pytest.raises(ValueError, match="oracle must be"):
        agents.make("FALCON", oracle="lasso")


def test_named_oracles_take_their_settings():
    assert set(ORACLES) >= {"ridge", "sgd", "mlp"}
    assert make_oracle("ridge", lam=3.0, lr=0.1).lam == 3.0
    assert make_oracle("sgd", lam=3.0, lr=0.1).lr == 0.1
    assert make_oracle("sgd", lr=None).lr == 0.5                                  # None: VW's default


def test_mlp_oracle_batched_equals_single_and_learns():
    pytest.importorskip("torch", reason="the mlp oracle needs PyTorch")
    X, Y, _ = data(n=2, rounds=12, d=3)
    batch = MLPOracle(hidden=(8,), batch_size=4, buffer_size=6)
    batch.start(2, 3, SEQS)
    single = MLPOracle(hidden=(8,), batch_size=4, buffer_size=6)
    single.start(1, 3, SEQS[1:])
    for x, y in zip(X, Y):
        h = np.array([1.0, 500.0])
        batch.update(x, y, h)
        single.update(x[1:], y[1:], h[1:])
        np.testing.assert_array_equal(batch.predict(X[:2].transpose(1, 0, 2))[1], single.predict(X[:2, 1][None])[0])
    assert np.isfinite(batch.predict(X[:2].transpose(1, 0, 2))).all()


# -- the agents --------------------------------------------------------------------------------------
def test_igw_known_answer():
    f = np.array([[0.5, 0.2, 0.5, -0.1], [1.0, 0.0, 0.0, 0.0]])
    p = igw(f, 10.0)
    rest = (1 - 1 / 7 - 1 / 10) / 2                         # the tied maximisers share the greedy mass
    np.testing.assert_allclose(p, [[rest, 1 / 7, rest, 1 / 10], [11 / 14, 1 / 14, 1 / 14, 1 / 14]])
    np.testing.assert_allclose(igw(f, 0.0), 0.25)


def test_squarecb_probabilities_on_a_known_state():
    """After t rewards, action_probs is IGW of the unweighted ridge fit with VW's gamma_t = 10 sqrt(t)."""
    X, _, _ = data(n=1, rounds=6, d=3, seed=4)
    arms = np.random.default_rng(5).normal(size=(6, 4, 3))
    agent = SquareCB(seed=0)
    np.testing.assert_allclose(agent.action_probs(arms[0]), 0.25)                # t = 0: gamma = 0
    chosen, rewards = [], []
    for t in range(5):
        a = agent.act(arms[t])
        agent.observe(arms[t], a, float(t % 2))
        chosen.append(arms[t, a])
        rewards.append(float(t % 2))
    A = np.array(chosen)
    theta = np.linalg.solve(np.eye(3) + A.T @ A, A.T @ rewards)                  # weight 1, lam 1
    f = arms[5] @ theta
    gap = f.max() - f
    want = 1 / (4 + 10 * math.sqrt(5) * gap)
    want[f.argmax()] = 1 - (want.sum() - want[f.argmax()])
    np.testing.assert_allclose(agent.action_probs(arms[5]), want, rtol=1e-10)


def test_squarecb_theory_gamma_needs_the_horizon():
    with pytest.raises(ValueError, match="horizon"):
        SquareCB(schedule="theory")
    agent = SquareCB(schedule="theory", horizon=1000, delta=0.1)
    agent.act(np.ones((5, 4)))
    assert agent.gamma(5) == pytest.approx(math.sqrt(5 * 1000 / (4 * math.log1p(250) + math.log(20))))
    assert SquareCB.reads_horizon({"schedule": "theory"}) and not SquareCB.reads_horizon({})


def test_falcon_epochs_gamma_and_previous_epoch_fit():
    """Epoch m covers rounds 2^(m-1) < t <= 2^m; its predictor is the ridge fit of epoch m - 1's data alone;
    gamma_m = c sqrt(K tau_{m-1} / ((d + 1) log tau_{m-1} + log(1 / delta))), gamma_1 = 1."""
    rng = np.random.default_rng(6)
    arms, rewards = rng.normal(size=(9, 3, 2)), rng.normal(size=9)
    agent = FALCON(c=0.5, delta=0.1, seed=1)
    epochs, data_of = [], {}
    for t in range(9):
        epochs.append(agent.epoch_ if t else 1)
        if t:
            tau = 2 ** (agent.epoch_ - 1)
            want = 1.0 if agent.epoch_ == 1 else 0.5 * math.sqrt(3 * tau / (3 * math.log(tau) + math.log(10)))
            assert agent.gamma(3) == pytest.approx(want)
        a = agent.act(arms[t])
        agent.observe(arms[t], a, rewards[t])
        data_of.setdefault(epochs[-1], []).append((arms[t, a], rewards[t]))
    assert epochs == [1, 1, 2, 2, 3, 3, 3, 3, 4]
    assert agent.epoch_ == 4                                    # round 9 starts epoch 4 (9 <= 16)
    A, y = np.array([x for x, _ in data_of[3]]), np.array([r for _, r in data_of[3]])
    np.testing.assert_allclose(agent.oracle_.theta[0], np.linalg.solve(np.eye(2) + A.T @ A, A.T @ y))
    probs = agent.action_probs(arms[0])
    np.testing.assert_allclose(probs, igw((arms[0] @ agent.oracle_.theta[0])[None], agent.gamma(3))[0])


# The conformance suite runs on each registered agent, single and batched, in tests/agents/test_checks.py
# (agents.checks.all_checks over the registry); here, the settings that registry pass leaves out.
def test_conformance_on_the_sgd_oracle():
    check_agent(lambda **kw: agents.make("SquareCB", oracle="sgd", **kw), batched=True)


def regret(name, seeds, T, **kwargs):
    """Each seed's final regret of the batched agent on iris (CtxBandit/Supervised-v0), (len(seeds),)."""
    env = gym.make_vec("CtxBandit/Supervised-v0", num_envs=len(seeds), vectorization_mode="vector_entry_point",
                       max_episode_steps=T)
    obs, _ = env.reset(seed=seeds)
    agent, total = agents.make(name, seed=[s + 7 for s in seeds], **kwargs), 0.0
    for _ in range(T):
        a = agent.act(obs)
        nxt, reward, _, _, info = env.step(a)
        agent.observe(obs, a, reward)
        obs, total = nxt, total + info["regret"]
    return total


@pytest.mark.parametrize("name", NAMES)
def test_defaults_beat_random_on_iris(name):
    seeds, T = [41, 42, 43], 600
    mine, floor = regret(name, seeds, T), regret("Random", seeds, T)
    assert mine.mean() < 0.6 * floor.mean(), f"{name}: regret {mine} against Random's {floor}"


# -- block-disjoint features and one-instance rounds ---------------------------------------------------
def disjoint(rng, K, p, n=None, dtype=float):
    """Arm features of the disjoint encoding: a context of p features in arm k's block k, (K, K p) (or n such)."""
    lead = () if n is None else (n,)
    x = rng.integers(-2, 3, size=(*lead, p)).astype(dtype) if rng.random() < 0.3 else rng.normal(size=(*lead, p))
    X = np.zeros((*lead, K, K, p), dtype)
    X[..., np.arange(K), np.arange(K), :] = x[..., None, :]
    return X.reshape(*lead, K, K * p)


def test_ridge_oracle_blocks_equal_the_dense_form():
    """Block-local updates keep the blocks; predictions and widths, on X in blocks and not, equal the dense
    oracle's to rounding; a non-block x (instance 1, round 50) turns that instance alone to the dense form,
    and all go on equal to the dense oracle; each instance of the batched oracle is a single oracle's bits."""
    rng = np.random.default_rng(0)
    K, p, n = 4, 8, 3
    blocks, dense = RidgeOracle(lam=0.5), RidgeOracle(lam=0.5, blocks=False)
    singles = [RidgeOracle(lam=0.5) for _ in range(n)]
    for o, m in [(blocks, n), (dense, n)] + [(s, 1) for s in singles]:
        o.start(m, K * p, SEQS[:1] * m)
    for t in range(120):
        X = disjoint(rng, K, p, n)
        Z = rng.normal(size=X.shape)                                 # arms not in their blocks
        for obs in (X, Z):
            want, got = dense.predict(obs), blocks.predict(obs)
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
            np.testing.assert_allclose(blocks.width(obs), dense.width(obs), rtol=1e-12)
            for i, single in enumerate(singles):
                np.testing.assert_array_equal(single.predict1(obs[i]), got[i])
                np.testing.assert_array_equal(single.width1(obs[i]), blocks.width(obs)[i])
        a = rng.integers(K, size=n)
        x = X[np.arange(n), a]
        if t == 50:
            x[1] = rng.normal(size=K * p)
        y, w = rng.normal(size=n), rng.choice([0.0, 1.0, 3.0, 150.0], size=n)
        for o in (blocks, dense):
            o.update(x, y, w)
        for i, single in enumerate(singles):
            single.update1(x[i], float(y[i]), float(w[i]))
        assert blocks.dense_.tolist() == [False, t >= 50, False]
    np.testing.assert_allclose(blocks.theta, dense.theta, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(blocks.V_inv, dense.V_inv, rtol=1e-10, atol=1e-12)
    assert (blocks.V_inv[0].reshape(K, p, K, p).swapaxes(1, 2)[np.arange(K)[:, None] != np.arange(K)] == 0).all()
    for i, single in enumerate(singles):
        np.testing.assert_array_equal(single.theta[0], blocks.theta[i])
        np.testing.assert_array_equal(single.V_inv[0], blocks.V_inv[i])


def test_ridge_oracle_update_arms_is_k_updates():
    """update_arms: one step over the blocks, the bits of K updates in turn (and the dense form's to rounding)."""
    rng = np.random.default_rng(1)
    K, p, n = 5, 7, 2
    oracles = [RidgeOracle(), RidgeOracle(), RidgeOracle(blocks=False)]
    for o in oracles:
        o.start(n, K * p, SEQS)
        o.layout(K)
    for _ in range(30):
        X, Y, W = disjoint(rng, K, p, n), rng.normal(size=(n, K)), rng.choice([0.0, 1.0, 4.0], size=(n, K))
        oracles[0].update_arms(X, Y, W)
        for o in oracles[1:]:
            for b in range(K):
                o.update(X[:, b], Y[:, b], W[:, b])
    np.testing.assert_array_equal(oracles[0].B_, oracles[1].B_)
    np.testing.assert_allclose(oracles[0].theta, oracles[2].theta, rtol=1e-10, atol=1e-12)


class ProtocolOnly:
    """The ridge oracle behind the three methods of the protocol alone (no one-instance forms, no width)."""

    def start(self, n, d, seqs):
        self.ridge_ = RidgeOracle()
        self.ridge_.start(n, d, seqs)

    def predict(self, X):
        return self.ridge_.predict(X)

    def update(self, x, y, w):
        self.ridge_.update(x, y, w)


FAMILY = ["SquareCB", "FALCON", "Oracle-Greedy", "Oracle-epsilon-greedy", "RegCB-opt", "RegCB-elim", "Cover",
          "Cover-NU", "Bag", "Bag-greedy"]


def _oracles(agent):
    """Every oracle the agent holds."""
    held = list(getattr(agent, "oracles_", [agent.oracle_])) + [getattr(agent, "next_", None)]
    return [getattr(o, "ridge_", o) for o in held if o is not None]


def _oracle_state(agent):
    """Every array of every oracle the agent holds."""
    return [{k: v for k, v in vars(o).items() if isinstance(v, np.ndarray)} for o in _oracles(agent)]


def _one_rounds(seed, n=300, K=4, p=8):
    """Disjoint-encoded rounds (integer contexts, every 7th zero: tied predictions), float32 and float64, a few not
    in blocks."""
    rng = np.random.default_rng(seed)
    for t in range(n):
        X = rng.normal(size=(K, K * p)) if t in (200, 201, 250) else disjoint(rng, K, p) * (t % 7 > 0)
        yield X.astype(np.float32) if t % 3 == 1 else X, float(rng.normal())


@pytest.mark.parametrize("name, settings", [(name, {}) for name in FAMILY] + [
    ("Cover", {"estimator": "ips", "oracle": RidgeOracle(lam=2.0)}), ("SquareCB", {"oracle": ProtocolOnly()}),
    ("Bag", {"oracle": RidgeOracle(blocks=False)})])
def test_one_instance_rounds_equal_the_batched_ones(name, settings):
    """A single agent (its one-instance rounds), the same forced onto the general path, and a batched agent
    seeded [s]: the same arms for 300 rounds (Cover's and other settings' 150), ties included, and the same
    oracle state, bit for bit."""
    fast, slow, batched = (agents.make(name, seed=seed, **settings) for seed in (3, 3, [3]))
    slow._one = lambda obs: None
    ties = 0
    for t, (X, noise) in enumerate(_one_rounds(3, n=150 if settings or name.startswith("Cover") else 300)):
        if t and (t % 2 == 0 or t % 7 == 0):                # the policies themselves (every 7th round: ties)
            P = fast._policy1(X)
            np.testing.assert_array_equal(np.asarray(P, float), batched._policy(X[None])[0])
            ties += max(P) < 1
        a = fast.act(X)
        assert isinstance(a, int) and slow.act(X) == a and batched.act(X[None]).tolist() == [a], t
        reward = noise + float(X[a].sum())
        fast.observe(X, a, reward)
        slow.observe(X, a, reward)
        batched.observe(X[None], np.array([a]), np.array([reward]))
    assert name not in ("Oracle-Greedy", "RegCB-opt") or ties >= 10, ties
    for other in (slow, batched):
        for mine, theirs in zip(_oracle_state(fast), _oracle_state(other), strict=True):
            assert mine.keys() == theirs.keys()
            for key in mine:
                np.testing.assert_array_equal(mine[key], theirs[key], err_msg=key, strict=True)


@pytest.mark.parametrize("K", [2, 3, 7, 16, 17, 40])
def test_igw1_and_sample_arm_are_the_batched_forms(K):
    """igw1 and greedy1 (Python floats up to 16 arms, arrays beyond) and sample_arm give igw's, argmax_probs' and
    sample_arms' bits, ties included."""
    from agents.base import argmax_probs
    from agents.oracle import sample_arm, sample_arms
    from agents.squarecb import greedy1, igw1

    rng = np.random.default_rng(K)
    for _ in range(50):
        f = rng.integers(0, 3, size=K) / 3 if rng.random() < 0.5 else rng.normal(size=K)
        gamma = float(rng.choice([0.0, 1.0, 37.5, 1e300]))
        P = igw1(f, gamma)
        want = igw(f[None], gamma)[0]
        np.testing.assert_array_equal(np.asarray(P, float), want)
        for u in rng.random(5):
            assert sample_arm(P, u) == sample_arms(want[None], np.array([u]))[0]
        np.testing.assert_array_equal(np.asarray(greedy1(f), float), argmax_probs(f[None])[0])


@pytest.mark.parametrize("name", ["SquareCB", "RegCB-elim", "Cover", "Bag-greedy"])
def test_batched_agent_on_blocks_is_its_single_agents(name):
    """A batched agent seeded [3, 4, 5] on disjoint-encoded rounds, instance 1 shown arms outside their blocks at
    round 30 (its oracles turn dense, the others keep their blocks): each instance plays, and its oracles
    hold, a single agent's bits."""
    rng = np.random.default_rng(4)
    batched, singles = agents.make(name, seed=[3, 4, 5]), [agents.make(name, seed=s) for s in (3, 4, 5)]
    for t in range(60):
        X = np.stack([disjoint(rng, 4, 8) for _ in range(3)])
        if t == 30:
            X[1] = rng.normal(size=X[1].shape)
        a = batched.act(X)
        assert a.tolist() == [agent.act(X[i]) for i, agent in enumerate(singles)], t
        y = rng.normal(size=3)
        batched.observe(X, a, y)
        for i, agent in enumerate(singles):
            agent.observe(X[i], int(a[i]), float(y[i]))
    assert batched.oracle_.dense_.tolist() == [False, True, False]
    for i, agent in enumerate(singles):
        for mine, theirs in zip(_oracles(batched), _oracles(agent), strict=True):
            assert mine.dense_[i] == theirs.dense_[0]
            np.testing.assert_array_equal(mine.theta[i], theirs.theta[0])
            np.testing.assert_array_equal(mine.V_inv[i], theirs.V_inv[0])


def test_sgd_learns_nothing_from_an_all_zero_example():
    """An example without a nonzero feature leaves a fresh (or trained) sgd oracle as it was: no 0 / 0 in
    the normalized step, no NaN in the predictions that follow."""
    oracle = make_oracle("sgd")
    oracle.start(2, 3, None)
    oracle.update(np.zeros((2, 3)), np.array([1.0, -1.0]), np.ones(2))
    assert not oracle.w_.any() and np.isfinite(oracle.predict(np.ones((2, 4, 3)))).all()
    oracle.update(np.array([[1.0, 0, 2], [0, 3, 0]]), np.array([1.0, -1.0]), np.ones(2))
    before = oracle.w_.copy()
    oracle.update(np.zeros((2, 3)), np.array([5.0, 5.0]), np.ones(2))
    assert np.array_equal(oracle.w_, before)
