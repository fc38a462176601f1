"""RegCB, Cover and Bag: bounds against the version space, known-answer policies, the bootstrap's law,
the conformance suite, and each agent with its defaults against Random on a classification bandit."""

import copy
import math

import numpy as np
import pytest

import agents
from agents.bag import POISSON_MAX, poisson1
from agents.checks import check_agent
from agents.cover import floor
from agents.oracle import RidgeOracle
from agents.regcb import radius

NAMES = ["RegCB-opt", "RegCB-elim", "Cover", "Cover-NU", "Bag", "Bag-greedy"]


def feed(agent, rounds, seed=0, n=None, k=3, d=2):
    """`rounds` rounds of random features, uniformly random arms and Gaussian rewards; returns the
    chosen features, rewards and the chosen arms' probabilities (single agent)."""
    rng = np.random.default_rng(seed)
    xs, ys, ps = [], [], []
    for _ in range(rounds):
        obs = rng.normal(size=(k, d))
        a = int(rng.integers(k))
        ps.append(agent.action_probs(obs)[a])
        y = float(obs[a].sum() + 0.3 * rng.normal())
        agent.observe(obs, a, y)
        xs.append(obs[a])
        ys.append(y)
    return np.array(xs), np.array(ys), np.array(ps)


def ridge(xs, ys, lam=1.0, w=None):
    """(theta_hat, V) of the weighted ridge regression, from scratch."""
    w = np.ones(len(ys)) if w is None else w
    V = lam * np.eye(xs.shape[1]) + (xs * w[:, None]).T @ xs
    return np.linalg.solve(V, (xs * (w * ys)[:, None]).sum(axis=0)), V


# -- RegCB -------------------------------------------------------------------------------------------
def test_regcb_bounds_are_the_extremes_of_the_version_space():
    agent = agents.make("RegCB-opt", c0=0.5, lam=0.7, seed=0)
    xs, ys, _ = feed(agent, 12)
    X = np.random.default_rng(1).normal(size=(3, 2))
    high, low = agent.bounds(X)
    theta, V = ridge(xs, ys, lam=0.7)
    beta = 0.5 * math.log(3 * 12)

    def R(th):                                       # the summed squared loss with the ridge penalty
        return ((ys - xs @ th) ** 2).sum() + 0.7 * th @ th
    # the boundary of F_12 = {theta : R(theta) - R(theta_hat) <= beta}, by brute force on 4,000 directions
    angles = np.linspace(0, 2 * np.pi, 4000, endpoint=False)
    u = np.c_[np.cos(angles), np.sin(angles)]
    L = np.linalg.cholesky(np.linalg.inv(V))
    boundary = theta + math.sqrt(beta) * u @ L.T
    assert np.allclose([R(th) - R(theta) for th in boundary[:50]], beta)
    values = X @ boundary.T                          # (K, 4000): every arm's reward under each theta
    assert np.allclose(high, values.max(axis=1), atol=1e-5)
    assert np.allclose(low, values.min(axis=1), atol=1e-5)
    assert np.allclose(high + low, 2 * X @ theta)


def test_regcb_radius_and_the_unweighted_update():
    assert radius(1e-3, 4, 0) == 0.0
    assert radius(0.1, 4, 25) == pytest.approx(0.1 * math.log(100))
    agent = agents.make("RegCB-elim", seed=0)
    X = np.random.default_rng(2).normal(size=(1, 3, 2))
    high, low = agent.bounds(X)                      # beta_0 = 0: both bounds are the fit (0)
    assert np.array_equal(high, low)
    xs, ys, _ = feed(agent, 10)
    assert np.allclose(agent.oracle_.theta[0], ridge(xs, ys)[0])      # weight 1, whatever the probability


def test_regcb_elim_keeps_the_arms_that_could_be_best_uniformly():
    agent = agents.make("RegCB-elim", c0=0.2, seed=0)
    e1, e2 = np.eye(2)
    for t in range(40):                              # theta_hat ~ (1, 0), widths ~ 1 / sqrt(20)
        obs = np.array([e1, e2, e1])
        agent.observe(obs, t % 2, 1.0 - t % 2)
    X = np.array([e1, 0.9 * e1, e2, 0.2 * e2 + 0.5 * e1])
    high, low = agent.bounds(X)
    alive = high >= low.max()
    assert alive.tolist() == [True, True, False, False]
    assert np.allclose(agent.action_probs(X), [0.5, 0.5, 0, 0])
    opt = agents.make("RegCB-opt", seed=0)
    opt.observe(X, 0, 1.0)
    twins = np.array([e1, e1, e2])                   # two arms of the highest bound: the tie split evenly
    assert np.allclose(opt.action_probs(twins), [0.5, 0.5, 0])


def test_regcb_refuses_an_oracle_without_width():
    class Plain:        # an SGD regressor: start, predict and update, no width
        def start(self, n, d, seqs):
            self.theta = np.zeros((n, d))

        def predict(self, X):
            return np.einsum("nkd,nd->nk", X, self.theta)

        def update(self, x, y, w):
            self.theta += 0.1 * (w * (y - (x * self.theta).sum(1)))[:, None] * x

    with pytest.raises(ValueError, match="width"):
        agents.make("RegCB-opt", oracle=Plain())
    agents.make("Cover", oracle=Plain())             # the other families take any oracle


# -- Cover -------------------------------------------------------------------------------------------
def test_cover_floor_schedule():
    assert floor(4, 0) == floor(4, 1) == floor(4, 4) == 0.25           # uniform while t <= K
    assert floor(4, 16) == pytest.approx(1 / 8)
    assert floor(4, 100) == pytest.approx(0.05)


@pytest.mark.parametrize("name", ["Cover", "Cover-NU"])
def test_cover_probabilities_are_the_policies_votes_with_the_floor(name):
    agent = agents.make(name, M=5, seed=3)
    feed(agent, 30, seed=4, k=4)
    X = np.random.default_rng(5).normal(size=(4, 2))
    votes = np.zeros(4)
    for oracle in agent.oracles_:
        f = oracle.predict(X[None])[0]
        best = np.flatnonzero(f == f.max())
        votes[best] += 1 / len(best) / 5
    mu = min(1 / 4, 1 / math.sqrt(4 * 30))
    expected = mu + (1 - 4 * mu) * votes if name == "Cover" else votes
    assert np.allclose(agent.action_probs(X), expected)


@pytest.mark.parametrize("estimator", ["dr", "ips"])
def test_cover_policies_learn_the_estimates_with_the_disagreement_bonus(estimator):
    agent = agents.make("Cover", M=3, psi=0.3, estimator=estimator, lam=0.5, seed=1)
    feed(agent, 20, seed=6, k=3)
    X = np.random.default_rng(7).normal(size=(3, 2))
    a, y = 1, 0.8
    p = agent.action_probs(X)[a]
    before = copy.deepcopy(agent.oracles_)
    f = np.array([o.predict(X[None])[0] for o in before])               # (M, K) before the update
    agent.observe(X, a, y)
    chosen = np.eye(3)[a]
    r_hat = f[0] + chosen * (y - f[0, a]) / p if estimator == "dr" else chosen * y / p
    mu = min(1 / 3, 1 / math.sqrt(3 * 20))
    vote = np.eye(3)[f.argmax(axis=1)]                                   # no ties on random features
    for i, (old, new) in enumerate(zip(before, agent.oracles_)):
        theta, Vinv = old.theta[0], old.W_[0, :, :2]
        V = np.linalg.inv(Vinv)
        if i == 0 and estimator == "dr":                                 # the chosen arm, weight 1 / p
            xs, ts, ws = X[[a]], np.array([y]), np.array([1 / p])
        else:
            bonus = 0.0 if i == 0 else 0.3 * mu / (mu + (1 - 3 * mu) * vote[:i].mean(axis=0))
            xs, ts, ws = X, r_hat + bonus, np.ones(3)
        expected = np.linalg.solve(V + (xs * ws[:, None]).T @ xs, V @ theta + (xs * (ws * ts)[:, None]).sum(0))
        assert np.allclose(new.theta[0], expected), f"policy {i}"


# -- Bag ---------------------------------------------------------------------------------------------
def test_poisson_weights_have_the_law_of_poisson_one():
    u = np.random.default_rng(0).random(200_000)
    k = poisson1(u)
    assert k.dtype.kind == "i" and k.min() == 0 and k.max() <= POISSON_MAX
    assert abs(k.mean() - 1) < 0.02 and abs(k.var() - 1) < 0.03
    assert abs((k == 0).mean() - math.exp(-1)) < 0.01 and abs((k == 2).mean() - math.exp(-1) / 2) < 0.01
    assert poisson1(np.array([0.0, 0.3, 0.37, 0.7, 0.74, 0.9, 0.95, 1 - 1e-17])).tolist() == [0, 0, 1, 1, 2, 2, 3, 20]
    bag = agents.make("Bag", M=4, seed=[5, 6])
    greedy = agents.make("Bag-greedy", M=4, seed=[5, 6])
    obs = np.zeros((2, 3, 2))
    bag.act(obs), greedy.act(obs)
    drawn = np.array([bag.weights() for _ in range(1000)])              # (1000, M, N) from the agents' streams
    assert abs(drawn.mean() - 1) < 0.08
    assert (np.array([greedy.weights()[0] for _ in range(50)]) == 1).all()


def test_bag_probabilities_are_the_members_vote_shares():
    agent = agents.make("Bag", M=6, seed=2)
    assert np.allclose(agent.action_probs(np.ones((3, 2))), 1 / 3)     # untrained: every member ties
    feed(agent, 25, seed=8)
    X = np.random.default_rng(9).normal(size=(3, 2))
    X[2] = X[0]                                      # a tie inside every member that picks arm 0 or 2
    shares = np.zeros(3)
    for oracle in agent.oracles_:
        f = oracle.predict(X[None])[0]
        best = np.flatnonzero(f == f.max())
        shares[best] += 1 / len(best) / 6
    assert np.allclose(agent.action_probs(X), shares) and shares[0] == shares[2]


def test_bag_greedy_first_member_is_importance_weighted_regression():
    agent = agents.make("Bag-greedy", M=3, lam=2.0, seed=4)
    xs, ys, ps = feed(agent, 15, seed=10)
    w = np.divide(1.0, ps, out=np.ones_like(ps), where=ps > 0)        # weight 1 for an arm of probability 0
    assert (ps == 0).any() and np.allclose(agent.oracles_[0].theta[0], ridge(xs, ys, lam=2.0, w=w)[0])
    assert not np.allclose(agent.oracles_[1].theta[0], agent.oracles_[0].theta[0])     # bootstrapped


# -- conformance and learning ------------------------------------------------------------------------
# tests/agents/test_checks.py runs the conformance suite on every registered agent with its defaults (these
# six included, single and batched); here it runs on the settings the defaults leave out
@pytest.mark.parametrize("name, settings", [
    ("RegCB-elim", {"c0": 0.5, "oracle": RidgeOracle(lam=0.5)}),           # an oracle object with width
    ("Cover", {"M": 2, "estimator": "ips"}),
    ("Bag-greedy", {"M": 2, "oracle": "sgd"}),                               # an oracle without width
], ids=["RegCB-elim-ridge-object", "Cover-ips", "Bag-greedy-sgd"])
def test_conformance_of_other_settings(name, settings):
    def factory(**kwargs):
        return agents.make(name, **settings, **kwargs)

    factory.__name__ = f"{name}{settings}"
    check_agent(factory)


def test_each_beats_random_on_iris():
    gym = pytest.importorskip("gymnasium")
    import gym_ctxbandits  # noqa: F401

    seeds, horizon = [101, 202, 303], 250

    def regret(name):
        env = gym.make_vec("CtxBandit/Supervised-v0", num_envs=len(seeds), vectorization_mode="vector_entry_point")
        obs, _ = env.reset(seed=seeds)
        agent, total = agents.make(name, seed=seeds), 0.0
        for _ in range(horizon):
            a = agent.act(obs)
            nxt, r, _, _, info = env.step(a)
            agent.observe(obs, a, r)
            total, obs = total + info["regret"].sum(), nxt
        return total / len(seeds)

    random = regret("Random")
    assert random > 0.5 * horizon                   # 2/3 of the rounds wrong, on three classes
    for name in NAMES:
        assert regret(name) < 0.6 * random, name
