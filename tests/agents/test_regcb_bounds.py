"""RegCB's bounds on oracles without a width: VW's sensitivity search on the sgd oracle (known answers of the
sensitivity and of the binary search, the played arms against VW's own `--regcb --regcbopt`), the paper's search
with copies of any oracle (against a one-arm reference and, on the ridge oracle, against the version space),
batched = singles, the conformance suite, refusals, and learning on iris."""

import copy
import math

import numpy as np
import pytest

import agents
from agents.checks import check_agent
from agents.oracle import SGDOracle
from agents.regcb import FLT_MAX, radius, sensitivity_search

SEQS = [np.random.SeedSequence(7)]


def feed(agent, rounds, seed=0, k=3, d=3):
    """`rounds` rounds of sparse Gaussian features (no all-zero arm), the agent's arms, rewards in {0, 1};
    returns the last obs and the chosen features and rewards."""
    rng = np.random.default_rng(seed)
    theta = rng.normal(size=d)
    xs, ys = [], []
    for _ in range(rounds):
        X = rng.normal(size=(k, d)) * rng.choice([0.0, 1.0], size=(k, d), p=[0.3, 0.7])
        X[:, 0] += (X == 0).all(axis=1)
        a = agent.act(X)
        y = float(rng.random() < 1 / (1 + math.exp(-X[a] @ theta)))
        agent.observe(X, a, y)
        xs.append(X[a])
        ys.append(y)
    return rng.normal(size=(k, d)), np.array(xs), np.array(ys)


def vw_search(g, delta, s, tol=1e-6, steps=20):
    """VW's binary_search(fhat, delta, sens) of cb_explore_adf_regcb.cc, one entry, as a plain loop."""
    top = min(g / s, FLT_MAX) if s else FLT_MAX
    if top * g * g <= delta:
        return top
    lo, hi = 0.0, top
    for _ in range(steps):
        w = (lo + hi) / 2
        v = w * (g * g - (g - s * w) ** 2) - delta
        if v > 0:
            hi = w
        else:
            lo = w
        if abs(v) <= tol or hi - lo <= tol:
            break
    return lo


# -- the sensitivity (VW's gd) and VW's binary search ------------------------------------------------------------
def test_binary_search_is_vws_loop():
    """Every entry of the batched search is the plain loop's w: the full move (v(g / s) <= delta), s = 0 (the cap),
    an early stop on |v - delta| <= 1e-6, and the 20 halvings; the w found satisfies v(w) <= delta."""
    rng = np.random.default_rng(0)
    g = rng.uniform(1, 2, size=200)
    s = rng.uniform(0, 1, size=200) ** 3
    s[:3] = [0.0, 1000.0, 1e-9]
    delta = 0.05
    w = sensitivity_search(g, delta, s)
    np.testing.assert_allclose(w, [vw_search(*args) for args in zip(g, [delta] * len(g), s)], rtol=1e-13, atol=0)
    assert w[0] > 0.99 * FLT_MAX and w[1] == g[1] / 1000.0      # no sensitivity (no move); the full move
    v = w * (g * g - (g - s * w) ** 2)
    assert (v <= delta + 1e-12).all() and (s * w <= g + 1e-12).all()
    stop = v < 0.99 * delta                  # VW's early stop (|v(mid) - delta| <= 1e-6) returns the bracket's low end
    assert 0 < stop[3:].sum() <= 2 and np.median(v[3:]) > 0.999 * delta


def test_sensitivity_from_zero_is_the_closed_form():
    """From w = 0 (VW's defaults): G_i = 4 y^2 x_i^2, s_i = |x_i|, multiplier 1 / sqrt(n) over the n nonzero features,
    so q = sqrt(n) / (2 |y|) and the sensitivity is lr sqrt(n) / (2 |y|), whatever the features' values."""
    oracle = SGDOracle(lr=0.3)
    oracle.start(1, 4, SEQS)
    X = np.array([[[0.5, 0.0, -2.0, 0.0], [3.0, 1.0, 0.1, -7.0], [0.0, 0.0, 0.0, 0.0]]])
    Y = np.array([[2.0, -1.5, 2.0]])
    np.testing.assert_allclose(oracle.sensitivity(X, Y), [[0.3 * math.sqrt(2) / 4, 0.3 * 2 / 3, 0.0]], rtol=1e-14)


@pytest.mark.parametrize("flags", [{}, {"adaptive": False}, {"normalized": False},
                                   {"adaptive": False, "normalized": False}])
def test_sensitivity_is_the_plain_steps_move_per_unit(flags):
    """The oracle's own update, plain (invariant off) with weight 1 on target y, moves f(x) by 2 (y - f(x)) eta q:
    the sensitivity eta q is that move over 2 (y - f(x)) (on x within the scales seen, so nothing is rescaled)."""
    rng = np.random.default_rng(1)
    oracle = SGDOracle(**flags)
    oracle.start(1, 4, SEQS)
    oracle.update(np.full((1, 4), 3.0), np.array([1.0]), np.array([1.0]))
    for _ in range(20):
        x = np.clip(rng.normal(size=(1, 4)), -3, 3) * (rng.random(4) < 0.7)
        oracle.update(x, np.array([rng.normal()]), np.array([rng.choice([0.5, 1.0, 4.0])]))
    X = np.clip(rng.normal(size=(1, 5, 4)), -3, 3) * (rng.random((5, 4)) < 0.7)
    Y = rng.choice([-1.0, 2.0], size=(1, 5))
    sens = oracle.sensitivity(X, Y)
    for k in range(5):
        plain = copy.deepcopy(oracle)
        plain.invariant = False
        before = plain.predict(X[:, k:k + 1])[0, 0]
        plain.update(X[:, k], Y[:, k], np.ones(1))
        move = plain.predict(X[:, k:k + 1])[0, 0] - before
        assert sens[0, k] == pytest.approx(move / (2 * (Y[0, k] - before)), rel=1e-10)


def test_sgd_bounds_are_the_sensitivity_search():
    """RegCB-elim on the sgd oracle: high = clip(f + s w, 0, 1) with s the sensitivity toward y = 2 and w VW's
    search on g = 2 - f, delta = c0 log(K t); low the same toward y = -1; every arm's, by hand."""
    agent = agents.make("RegCB-elim", oracle="sgd", c0=0.5, seed=0)
    X, _, _ = feed(agent, 30)
    high, low = agent.bounds(X)
    f = agent.oracle_.predict(X[None])[0]
    delta = radius(0.5, 3, 30)
    for target, bound, sign in ((2.0, high, 1.0), (-1.0, low, -1.0)):
        s = agent.oracle_.sensitivity(X[None], np.full((1, 3), target))[0]
        g = sign * (target - f)
        w = [vw_search(gk, delta, sk) for gk, sk in zip(g, s)]
        np.testing.assert_allclose(bound, np.clip(f + sign * s * w, 0.0, 1.0), rtol=1e-12, atol=1e-15)
    assert (low <= high).all() and (high > low).any()


# -- the paper's search with copies of the oracle ----------------------------------------------------------------
def search_reference(oracle, x, f, target, delta):
    """(move, w): the paper's search for one arm by a plain loop, copying `oracle` (one instance) at each weight."""
    sign = 1.0 if target > f else -1.0
    g = abs(target - f)

    def move(w):
        o = copy.deepcopy(oracle)
        o.update(x[None], np.array([target]), np.array([w]))
        return sign * (o.predict(x[None, None])[0, 0] - f)

    lo, hi, best = math.log2(delta / g ** 2) - 40, math.log2(delta / g ** 2) + 40, 0.0
    for _ in range(20):
        mid = (lo + hi) / 2
        m = move(2.0 ** mid)
        if m <= g and 2.0 ** mid * (g * g - (g - m) ** 2) <= delta:
            lo, best = mid, m
        else:
            hi = mid
    return max(best, 0.0), 2.0 ** lo


def test_search_is_the_papers_search_and_stays_in_the_version_space():
    """search=True on the ridge oracle (rewards in [-5, 5], so nothing is clipped): each bound is where a copy lands
    after learning (x_a, 6 or -6) with the weight of a one-arm reference search; that refit's summed ridge loss is
    within delta = beta_t 10^2 of the fit's (the version space), so the bound lies inside the exact ellipsoid's."""
    agent = agents.make("RegCB-elim", search=True, min_reward=-5.0, max_reward=5.0, c0=0.05, seed=1)
    X, xs, ys = feed(agent, 25, seed=1)
    high, low = agent.bounds(X)
    oracle = agent.oracle_
    f = oracle.predict(X[None])[0]
    delta = radius(0.05, 3, 25) * 100

    def R(theta):
        return ((ys - xs @ theta) ** 2).sum() + theta @ theta
    for k in range(3):
        for target, bound in ((6.0, high[k]), (-6.0, low[k])):
            move, w = search_reference(oracle, X[k], f[k], target, delta)
            assert bound == pytest.approx(f[k] + math.copysign(move, target), rel=1e-9, abs=1e-12)
            refit = copy.deepcopy(oracle)
            refit.update(X[k][None], np.array([target]), np.array([w]))
            assert R(refit.theta[0]) - R(oracle.theta[0]) <= delta * (1 + 1e-9)
    half = math.sqrt(delta) * oracle.width(X[None])[0]
    assert (high <= f + half + 1e-9).all() and (low >= f - half - 1e-9).all() and (high - low > 0.5 * half).all()


class Plain:
    """An oracle with the protocol only (no width, no sensitivity): gradient steps of step w (y - f(x)) x."""

    step = 0.1

    def start(self, n, d, seqs):
        self.theta = np.zeros((n, d))

    def predict(self, X):
        return np.einsum("nkd,nd->nk", X, self.theta)

    def update(self, x, y, w):
        self.theta += self.step * (w * (y - (x * self.theta).sum(1)))[:, None] * x


def test_search_on_a_linear_move_is_the_root_of_the_loss_condition():
    """On an oracle whose update moves f(x) by c w g (a plain gradient step of size alpha w: c = alpha ||x||^2),
    v(w) = g^2 c w^2 (2 - c w): the search's bound is f + c w* g with w* the root of v(w*) = delta on
    (0, 1 / c], or the target (then the range end) when v(1 / c) <= delta; with alpha = 5 (set after the data)
    the weights from w_0 = delta / g^2 on overshoot the target, which the search must not take."""
    for alpha in (0.1, 5.0):
        agent = agents.make("RegCB-elim", oracle=Plain(), search=True, c0=0.2, min_reward=-3.0, max_reward=3.0, seed=4)
        X, _, _ = feed(agent, 10, seed=4)
        X *= 0.5
        agent.oracle_.step = alpha
        high, low = agent.bounds(X)
        f = agent.oracle_.predict(X[None])[0]
        delta = radius(0.2, 3, 10) * 36
        for k in range(3):
            c = alpha * X[k] @ X[k]
            for target, bound in ((4.0, high[k]), (-4.0, low[k])):
                g = abs(target - f[k])
                if g * g / c <= delta:
                    assert alpha == 5.0 and delta / g ** 2 > 1 / c         # the full move, past w_0's overshoot
                    move = g
                else:
                    roots = np.roots([-c * c * g * g, 2 * c * g * g, 0.0, -delta])
                    w = min(r.real for r in roots if abs(r.imag) < 1e-12 and 0 < r.real <= 1 / c)
                    move = c * w * g
                expected = np.clip(f[k] + math.copysign(move, target), -3.0, 3.0)
                assert bound == pytest.approx(expected, rel=1e-4, abs=1e-9), (alpha, k, target)


def search_bounds_are_sane(models):
    """RegCB-opt with the copies' search on each oracle spec: bounds within [0, 1] around the prediction, not all
    equal."""
    for model in models:
        agent = agents.make("RegCB-opt", oracle=model, search=True, c0=0.1, seed=2)
        X, _, _ = feed(agent, 2, seed=2)
        high, low = agent.bounds(X)
        f = np.clip(agent.oracle_.predict(X[None])[0], 0, 1)
        assert ((0 <= low) & (low <= f) & (f <= high) & (high <= 1)).all() and (high > low).any(), model


def test_search_on_a_protocol_oracle():
    search_bounds_are_sane([Plain()])


@pytest.mark.slow
def test_search_on_scikit_learn_river_and_mlp():
    """The wrapped regressors and the network (their imports take seconds: slow). The mlp's search costs seconds a
    round (docs/oracle_agents.md)."""
    sklearn = pytest.importorskip("sklearn.linear_model")
    river = pytest.importorskip("river.linear_model")
    pytest.importorskip("torch")
    search_bounds_are_sane([sklearn.SGDRegressor(learning_rate="constant", eta0=0.05), river.LinearRegression(), "mlp"])


# -- the agents: batched = singles, conformance, refusals, VW, learning -----------------------------------------
@pytest.mark.parametrize("name, settings, rounds", [("RegCB-elim", {"oracle": "sgd"}, 60),
                                                    ("RegCB-opt", {"oracle": "sgd", "search": True}, 5)],
                         ids=["sensitivity", "search"])
def test_batched_equals_singles(name, settings, rounds):
    """A batched agent seeded [3, 4, 5] makes the choices and the bounds of three single agents, bit for bit."""
    batched = agents.make(name, seed=[3, 4, 5], c0=0.3, **settings)
    singles = [agents.make(name, seed=s, c0=0.3, **settings) for s in (3, 4, 5)]
    rng = np.random.default_rng(5)
    for _ in range(rounds):
        X = rng.normal(size=(3, 3, 2))
        a = batched.act(X)
        assert a.tolist() == [s.act(x) for s, x in zip(singles, X)]
        y = (rng.random(3) < 0.5).astype(float)
        batched.observe(X, a, y)
        for s, x, ai, yi in zip(singles, X, a.tolist(), y.tolist()):
            s.observe(x, ai, yi)
    X = rng.normal(size=(3, 3, 2))
    high, low = batched.bounds(X)
    for i, s in enumerate(singles):
        h, lo = s.bounds(X[i])
        np.testing.assert_array_equal(h, high[i])
        np.testing.assert_array_equal(lo, low[i])


@pytest.mark.parametrize("name, settings", [
    ("RegCB-opt", {"oracle": "sgd"}),
    pytest.param("RegCB-elim", {"oracle": "sgd"}, marks=pytest.mark.slow),
    pytest.param("RegCB-opt", {"oracle": "sgd", "search": True}, marks=pytest.mark.slow),     # about 10 s
    pytest.param("RegCB-elim", {"oracle": "sgd", "search": True}, marks=pytest.mark.slow),    # about 15 s
], ids=["opt-sgd", "elim-sgd", "opt-search", "elim-search"])
def test_conformance(name, settings):
    def factory(**kwargs):
        return agents.make(name, **settings, **kwargs)

    factory.__name__ = f"{name}{settings}"
    check_agent(factory, rounds=6)


def test_refusals():
    with pytest.raises(ValueError, match="search=True"):
        agents.make("RegCB-opt", oracle="mlp")
    with pytest.raises(ValueError, match="min_reward must be below max_reward"):
        agents.make("RegCB-elim", oracle="sgd", min_reward=1.0, max_reward=1.0)
    with pytest.raises(ValueError, match="search"):
        agents.make("RegCB-opt", search="yes")
    agents.make("RegCB-opt", oracle="mlp", search=True)


def test_played_arms_are_vws_regcbopt():
    """One stream through VW's `--cb_explore_adf --regcb --regcbopt` (costs -reward in [-1, 0], no constant
    feature, predictions unclipped) and RegCB-opt on an sgd oracle whose update weighs the example 1 / K as VW's
    mtr regression does (cb_adf.cc: weight / p times events / actions seen): the same set of arms of the highest
    bound on every round but exact ties (arms whose bounds agree within 1e-4 here: VW's float32 breaks them)."""
    pytest.importorskip("vowpalwabbit", reason="vowpalwabbit is not installed")
    from vowpalwabbit import Workspace

    K, d = 4, 3

    class MTR(SGDOracle):
        def update(self, x, y, w):
            super().update(x, y, w / K)

    vw = Workspace("--cb_explore_adf --regcb --regcbopt --mellowness 0.1 --noconstant --cb_min_cost -1 --cb_max_cost 0 "
                   "--min_prediction -1e9 --max_prediction 1e9 --quiet", enable_logging=False)
    agent = agents.make("RegCB-opt", oracle=MTR(), c0=0.1, seed=0)
    rng = np.random.default_rng(0)
    theta = rng.normal(size=d)
    same = clear = 0
    try:
        for _ in range(200):
            X = rng.normal(size=(K, d)) * rng.choice([0.0, 1.0], size=(K, d), p=[0.3, 0.7])
            X[:, 0] += (X == 0).all(axis=1)          # VW counts an example without features in its normalizer
            lines = [" | " + " ".join(f"f{j}:{v:.17g}" for j, v in enumerate(x) if v) for x in X]
            pmf = np.asarray(vw.predict(lines))
            high = agent.bounds(X)[0]
            ours = set(np.flatnonzero(high == high.max()).tolist())
            rivals = np.sort(high)[-2] > high.max() - 1e-4 if len(ours) == 1 else True
            if not rivals:
                clear += 1
                same += ours == set(np.flatnonzero(pmf == pmf.max()).tolist())
            a = min(ours)
            r = float(rng.random() < 1 / (1 + math.exp(-X[a] @ theta)))
            labelled = list(lines)
            labelled[a] = f"0:{-r!r}:1" + lines[a]
            vw.learn(labelled)
            agent.observe(X, a, r)
    finally:
        vw.finish()
    assert clear >= 185 and same == clear, (same, clear)


def test_beats_random_on_iris():
    gym = pytest.importorskip("gymnasium")
    import gym_ctxbandits  # noqa: F401

    seeds, horizon = [101, 202, 303], 200

    def regret(name, **settings):
        env = gym.make_vec("CtxBandit/Supervised-v0", num_envs=len(seeds), vectorization_mode="vector_entry_point")
        obs, _ = env.reset(seed=seeds)
        agent, total = agents.make(name, seed=seeds, **settings), 0.0
        for _ in range(horizon):
            a = agent.act(obs)
            nxt, r, _, _, info = env.step(a)
            agent.observe(obs, a, r)
            total, obs = total + info["regret"].sum(), nxt
        return total / len(seeds)

    random = regret("Random")
    for name in ("RegCB-opt", "RegCB-elim"):
        assert regret(name, oracle="sgd") < 0.5 * random, name
