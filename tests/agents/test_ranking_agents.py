"""Known answers of the ranking agents (issue 50): each agent's statistics and list after a hand-made
click history equal the paper's formula, computed here from scratch."""

import copy
import math

import numpy as np
import pytest
from scipy.optimize import brentq

import agents
from agents.base import Streams, agent_class
from agents.cascade import kl_ucb
from agents.pbm import pbm_kl_divergence
from agents.ranking import bernoulli_kl, cascade_examined, random_ranking
from agents.toprank import TOPRANK_C, partition


def feed(agent, obs, history):
    """observe each (list, clicks) of `history` on obs."""
    for A, C in history:
        agent.observe(obs, np.array(A), np.array(C, dtype=np.int8))


def test_cascade_examined_is_every_position_up_to_the_first_click():
    C = np.array([[0, 1, 0, 1], [0, 0, 0, 0], [1, 0, 0, 0]])
    expected = [[1, 1, 0, 0], [1, 1, 1, 1], [1, 0, 0, 0]]
    np.testing.assert_array_equal(cascade_examined(C), np.array(expected, dtype=bool))


def test_random_ranking_sorts_by_score_and_breaks_ties_with_the_stream():
    scores = np.array([[0.1, 0.9, 0.5, 0.9, np.inf]])
    lists = {tuple(random_ranking(scores, 3, Streams(s, 1))[0]) for s in range(40)}
    assert lists == {(4, 1, 3), (4, 3, 1)}
    with pytest.raises(FloatingPointError, match="NaN"):
        random_ranking(np.array([[0.1, np.nan]]), 1, Streams(0, 1))


# a cascade history on L = 5 items, K = 2: T = [2, 1, 2, 1, 1] observations, S = [0, 1, 1, 0, 0] clicks
L5 = np.eye(5)
HISTORY = [([0, 1], [0, 1]), ([2, 3], [1, 0]), ([0, 2], [0, 0]), ([3, 4], [0, 0])]
T5, S5 = np.array([2, 1, 2, 1, 1.0]), np.array([0, 1, 1, 0, 0.0])


def test_cascade_ucb1_index_and_list_are_kveton_et_al_2015s():
    agent = agents.make("CascadeUCB1", num_positions=2, seed=0)
    agent.act(L5)
    assert np.isinf(agent._scores()).all()                       # nothing observed: every item first
    feed(agent, L5, HISTORY)
    np.testing.assert_array_equal(agent.T_[0], T5)
    np.testing.assert_array_equal(agent.S_[0], S5)
    U = S5 / T5 + np.sqrt(1.5 * math.log(4) / T5)                 # c_{t-1, T}, t - 1 = 4 rounds observed
    np.testing.assert_allclose(agent._scores()[0], U, rtol=1e-15)
    assert agent.act(L5).tolist() == [1, 2]                        # U = [1.02, 2.44, 1.52, 1.44, 1.44]


def _kl_bound(w, T, level):
    """max{q in [w, 1] : T d(w, q) <= level} by a root finder (1 when it lies above the last float below 1)."""
    top = np.nextafter(1.0, 0.0)
    if w >= 1 or level == 0:
        return w
    if T * bernoulli_kl(w, top) <= level:
        return 1.0
    return brentq(lambda q: T * bernoulli_kl(w, q) - level, w, top, xtol=1e-15, rtol=1e-15)


def test_kl_ucb_equals_the_root_of_the_kl_inequality():
    rng = np.random.default_rng(0)
    w = np.concatenate([[0, 1e-9, 0.5, 0.999999, 1 - 1e-12, 1], rng.random(60), rng.random(30) ** 8])
    T = rng.integers(1, 10**6, len(w)).astype(float)
    for level in (0.01, 0.5, 3.0, 30.0):
        exact = [_kl_bound(wi, Ti, level) for wi, Ti in zip(w, T)]
        np.testing.assert_allclose(kl_ucb(w, T, level), exact, rtol=0, atol=1e-11)
    assert kl_ucb(np.array([0.3]), np.array([0.0]), 1.0)[0] == np.inf


def test_cascade_kl_ucb_index_uses_log_t_plus_3_log_log_t():
    agent = agents.make("CascadeKL-UCB", num_positions=2, seed=0)
    agent.act(L5)
    feed(agent, L5, HISTORY)
    t = 5                                                          # the round after 4 observed ones
    level = math.log(t) + 3 * math.log(math.log(t))
    exact = [_kl_bound(s / n, n, level) for s, n in zip(S5, T5)]
    np.testing.assert_allclose(agent._scores()[0], exact, atol=1e-11)
    assert agent.act(L5).tolist() == list(np.argsort(exact)[::-1][:2])


def test_cascade_ts_sample_is_cheung_et_al_2019s():
    agent = agents.make("CascadeTS", num_positions=2, seed=3)
    agent.act(L5)
    feed(agent, L5, HISTORY)
    w, t = S5 / T5, 5
    sigma = np.maximum(np.sqrt(w * (1 - w) * math.log(t + 1) / (T5 + 1)), math.log(t + 1) / (T5 + 1))
    Z = copy.deepcopy(agent.rng_).standard_normal((1, 1))[0, 0]
    np.testing.assert_allclose(agent._scores()[0], w + Z * sigma, rtol=1e-15)


def _cascade_linear_history(name, **kwargs):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(6, 3)) / 2
    agent = agents.make(name, num_positions=3, seed=2, **kwargs)
    agent.act(X)
    history = [([0, 1, 2], [0, 1, 0]), ([3, 4, 5], [0, 0, 0]), ([5, 0, 1], [1, 0, 0]), ([2, 3, 4], [0, 0, 1])]
    feed(agent, X, history)
    M, B, s2 = np.eye(3), np.zeros(3), kwargs["sigma"] ** 2
    for A, C in history:                          # the examined positions: up to the first click
        for item, click in zip(A, C):
            M += np.outer(X[item], X[item]) / s2
            B += X[item] * click
            if click:
                break
    return agent, X, np.linalg.inv(M), np.linalg.solve(M, B) / s2


def test_cascade_lin_ucb_statistics_and_index_are_zong_et_al_2016s():
    agent, X, M_inv, theta = _cascade_linear_history("CascadeLinUCB", sigma=0.5, c=0.7)
    np.testing.assert_allclose(agent.W_[0, :, :3], M_inv, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(agent.W_[0, :, 3], theta, rtol=1e-12, atol=1e-14)
    U = np.minimum(X @ theta + 0.7 * np.sqrt(np.einsum("ld,de,le->l", X, M_inv, X)), 1.0)
    np.testing.assert_allclose(agent._scores(X[None])[0], U, rtol=1e-12)
    assert agent.act(X).tolist() == list(np.argsort(U)[::-1][:3])


def test_cascade_lin_ucb_default_width_is_the_theorems():
    agent = agents.make("CascadeLinUCB", num_positions=2, seed=0, sigma=0.5, horizon=1000)
    agent.act(np.eye(4))
    d, nK, s = 4, 1000 * 2, 0.5
    assert agent.c_ == pytest.approx(math.sqrt(d * math.log(1 + nK / (d * s * s)) + 2 * math.log(nK)) / s + 1, rel=1e-15)
    with pytest.raises(ValueError, match="horizon"):
        agents.make("CascadeLinUCB", num_positions=2).act(np.eye(4))


def test_cascade_lin_ts_samples_from_n_theta_bar_m_inverse():
    agent, X, M_inv, theta = _cascade_linear_history("CascadeLinTS", sigma=0.5)
    np.testing.assert_allclose(agent.W_[0, :, 3], theta, rtol=1e-12, atol=1e-14)
    R = agent.R_[0]
    np.testing.assert_allclose(R @ R.T, M_inv, rtol=1e-12, atol=1e-14)
    z = copy.deepcopy(agent.rng_).standard_normal((1, 3))[0]
    np.testing.assert_allclose(agent._scores(X[None])[0], X @ (theta + R @ z), rtol=1e-12)


# -- position-based model ------------------------------------------------------------------------
KAPPAS = (0.6, 1.0, 0.3)          # position 1 is the most examined: the best item goes there
PBM_HISTORY = [([0, 1, 2], [1, 1, 0]), ([3, 0, 1], [0, 1, 0]), ([1, 2, 3], [0, 0, 1]), ([2, 3, 0], [1, 0, 0]),
               ([3, 2, 1], [0, 1, 0])]


def _pbm_stats():
    S, N = np.zeros((4, 3)), np.zeros((4, 3))
    for A, C in PBM_HISTORY:
        for pos, (item, click) in enumerate(zip(A, C)):
            S[item, pos] += click
            N[item, pos] += 1
    return S, N


def test_pbm_ucb_statistics_index_and_placement_are_lagree_et_al_2016s():
    agent = agents.make("PBM-UCB", num_positions=3, kappas=KAPPAS, seed=0)
    agent.act(np.eye(4))
    feed(agent, np.eye(4), PBM_HISTORY)
    S, N = _pbm_stats()
    np.testing.assert_array_equal(agent.S_[0], S)
    np.testing.assert_array_equal(agent.N_[0], N)
    Nt = N @ np.array(KAPPAS)
    delta = math.log(6)                                   # (1 + epsilon) log t, epsilon = 0, round t = 6
    U = S.sum(1) / Nt + np.sqrt(N.sum(1) / Nt) * np.sqrt(delta / (2 * Nt))
    np.testing.assert_allclose(agent._scores()[0], U, rtol=1e-14)
    best = np.argsort(U)[::-1][:3]
    assert agent.act(np.eye(4)).tolist() == [best[1], best[0], best[2]]


def test_pbm_agents_need_kappas_one_per_position():
    with pytest.raises(ValueError, match="kappas"):
        agents.make("PBM-UCB", num_positions=3).act(np.eye(4))
    with pytest.raises(ValueError, match="one per position"):
        agents.make("PBM-UCB", num_positions=2, kappas=KAPPAS).act(np.eye(4))
    with pytest.raises(ValueError, match="kappas must be"):
        agents.make("PBM-UCB", kappas=(1.0, 1.5))


def _pbm_index(S, N, kappas, delta):
    """U_k(t, delta) = sup{q in [theta_hat_k, 1] : phi_k(q) <= delta} by a root finder."""
    theta = S.sum() / (N @ kappas)
    phi = lambda q: (N * bernoulli_kl(S / np.maximum(N, 1), kappas * q)).sum() - delta
    return 1.0 if phi(1.0) <= 0 else brentq(phi, theta, 1.0, xtol=1e-15)


def test_pbm_pie_warm_up_shows_each_item_at_each_position_once():
    agent = agents.make("PBM-PIE", num_positions=3, kappas=KAPPAS, horizon=100, seed=0)
    seen = np.zeros((5, 3))
    for t in range(5):
        A = agent.act(np.eye(5))
        assert A.tolist() == [(t + 1) % 5, t % 5, (t + 2) % 5]   # the t-th item where kappa is largest
        seen[A, [0, 1, 2]] += 1
        agent.observe(np.eye(5), A, np.zeros(3, dtype=np.int8))
    np.testing.assert_array_equal(seen, 1)


def test_pbm_pie_explores_b_t_as_lagree_et_al_2016():
    """After the warm-up and a history, the list is L(t) or L(t) with its last item from B(t) (the
    items whose KL index, found here by a root finder, reaches L(t)'s last theta_hat), as the coin
    drawn from the agent's stream says."""
    kappas, T = np.array(KAPPAS), 50
    rng = np.random.default_rng(4)
    for seed in range(6):
        agent = agents.make("PBM-PIE", num_positions=3, kappas=KAPPAS, horizon=T, seed=seed)
        for t in range(12):
            A = agent.act(np.eye(6))
            agent.observe(np.eye(6), A, (rng.random(3) < 0.5 * kappas * (A < 3)).astype(np.int8))
        S, N = agent.S_[0], agent.N_[0]
        theta = S.sum(1) / (N @ kappas)
        stream = copy.deepcopy(agent.rng_)
        u = stream.random((1, 2))[0]
        best = random_ranking(theta[None], 3, stream)[0]
        last = theta[best[-1]]
        B = [k for k in range(6) if k not in best and _pbm_index(S[k], N[k], kappas, math.log(T)) >= last]
        c = np.full((1, 6), last)
        assert sorted(B) == sorted(set(np.flatnonzero(pbm_kl_divergence(S[None], N[None], kappas, c)[0] <= math.log(T)))
                                   - set(best))
        if B and u[0] >= 0.5:
            best[-1] = sorted(B)[int(u[1] * len(B))]
        assert agent.act(np.eye(6)).tolist() == [best[1], best[0], best[2]]


# -- TopRank -------------------------------------------------------------------------------------
def test_partition_takes_the_unbeaten_items_block_by_block():
    beats = np.zeros((1, 4, 4), dtype=bool)
    beats[0, 0, 1] = beats[0, 1, 2] = True                 # 0 beats 1 beats 2; 3 is unbeaten
    assert partition(beats)[0].tolist() == [0, 1, 2, 0]
    beats[0, 2, 0] = True                                  # a cycle 0 > 1 > 2 > 0: one block
    assert partition(beats)[0].tolist() == [1, 1, 1, 0]


def _toprank_reference(L, delta, history):
    """Alg. 1's statistics by its set definitions: S, N, G (as beats[i][j] for (j, i) in G), and the
    partition after each round."""
    S, N = np.zeros((L, L)), np.zeros((L, L))
    G, blocks, partitions = set(), [set(range(L))], []
    for A, C in history:
        click = {item: c for item, c in zip(A, C)}
        for P in blocks:
            for i in P:
                for j in P:
                    ci, cj = click.get(i, 0), click.get(j, 0)
                    S[i, j] += ci - cj
                    N[i, j] += abs(ci - cj)
                    if N[i, j] > 0 and S[i, j] >= math.sqrt(2 * N[i, j] * math.log(TOPRANK_C / delta * math.sqrt(N[i, j]))):
                        G.add((j, i))
        done, blocks = set(), []
        while len(done) < L:
            rest = set(range(L)) - done
            P = {i for i in rest if not any((i, j) in G for j in rest)}
            blocks.append(P)
            done |= P
        partitions.append(blocks)
    beats = np.zeros((L, L), dtype=bool)
    for j, i in G:
        beats[i, j] = True
    return S, N, beats, partitions


def test_toprank_statistics_and_partition_follow_alg_1():
    L, K, delta = 6, 2, 0.5
    agent = agents.make("TopRank", num_positions=K, delta=delta, seed=1)
    rng, w = np.random.default_rng(2), np.array([0.9, 0.7, 0.5, 0.2, 0.1, 0.05])
    history, partitions = [], []
    for t in range(150):
        A = agent.act(np.eye(L))
        C = (rng.random(K) < w[A]).astype(np.int8)           # position-independent clicks
        agent.observe(np.eye(L), A, C)
        history.append((A.tolist(), C.tolist()))
        partitions.append([set(np.flatnonzero(agent.block_[0] == d)) for d in range(agent.block_.max() + 1)])
    S, N, beats, reference = _toprank_reference(L, delta, history)
    assert partitions == reference
    blocks = partitions[-1]
    np.testing.assert_array_equal(agent.S_[0], S)
    np.testing.assert_array_equal(agent.N_[0], N)
    np.testing.assert_array_equal(agent.beats_[0], beats)
    assert blocks == [{0, 1}, {2, 3, 4, 5}]                  # it has learned: the best two on top
    assert set(agent.act(np.eye(L)).tolist()) == {0, 1}


def test_toprank_delta_is_one_over_the_horizon():
    agent = agents.make("TopRank", num_positions=2, horizon=400)
    agent.act(np.eye(3))
    assert agent.delta_ == 1 / 400 and agent_class("TopRank").reads_horizon({})
    assert not agent_class("TopRank").reads_horizon({"delta": 0.1})
    with pytest.raises(ValueError, match="horizon"):
        agents.make("TopRank", num_positions=2).act(np.eye(3))


# -- the lifts -----------------------------------------------------------------------------------
class Fixed:
    """A one-arm agent that always picks `arm` and records what it observes."""

    def __init__(self, arm):
        self.arm, self.seen = arm, []

    def act(self, obs):
        return self.arm

    def observe(self, obs, action, reward):
        self.seen.append((action, reward))


def test_ranked_bandits_replaces_repeats_and_rewards_each_slot_for_its_own_pick():
    agent = agents.make("RankedBandits", agent="LinUCB", num_positions=3, seed=0)
    agent.act(np.eye(6))
    agent.slots_ = [Fixed(2), Fixed(2), Fixed(4)]          # slot 1 repeats slot 0's pick
    for seed in range(10):
        agent.rng_ = Streams(seed, 1)
        A = agent.act(np.eye(6))
        assert A[0] == 2 and A[1] != 2 and len(set(A.tolist())) == 3
        agent.observe(np.eye(6), A, np.array([1, 1, 1], dtype=np.int8))
        rewards = [slot.seen[-1] for slot in agent.slots_]
        assert rewards[:2] == [(2, 1.0), (2, 0.0)]          # a replaced pick is rewarded 0, clicked or not
        assert rewards[2] == (4, 1.0 if A[2] == 4 else 0.0)


def test_ranked_bandits_slot_agents_learn_from_their_positions():
    """Slot k's LinUCB holds exactly the statistics of a LinUCB fed (its pick, click at k)."""
    agent = agents.make("RankedBandits", agent="LinUCB", num_positions=2, seed=0)
    twins = [agents.make("LinUCB") for _ in range(2)]
    rng = np.random.default_rng(0)
    X = rng.normal(size=(5, 3))
    for _ in range(20):
        A = agent.act(X)
        picks = agent.picks_[0]
        C = rng.integers(0, 2, 2).astype(np.int8)
        agent.observe(X, A, C)
        for k, twin in enumerate(twins):
            twin.act(X)
            twin.observe(X, int(picks[k]), float(C[k]) if A[k] == picks[k] else 0.0)
    for slot, twin in zip(agent.slots_, twins):
        np.testing.assert_array_equal(slot.W_, twin.W_)


def test_topk_ranks_by_the_inner_scores_and_feeds_it_the_top_position():
    agent = agents.make("TopK", agent="LinUCB", agent_kwargs={"alpha": 0.5}, num_positions=3, seed=0)
    twin = agents.make("LinUCB", alpha=0.5)
    rng = np.random.default_rng(1)
    X = rng.normal(size=(7, 4))
    for _ in range(15):
        scores = None if agent.n_ is None else agent.inner_._scores(X[None])[0]
        A = agent.act(X)
        if scores is not None:
            assert A.tolist() == list(np.argsort(scores)[::-1][:3])
        C = rng.integers(0, 2, 3).astype(np.int8)
        agent.observe(X, A, C)
        twin.act(X)
        twin.observe(X, int(A[0]), float(C[0]))
    np.testing.assert_array_equal(agent.inner_.W_, twin.W_)


def test_topk_ranks_by_action_probs_where_the_agent_has_no_scores():
    """SquareCB (an oracle agent) has no arm indices: its action_probs rank the items."""
    agent = agents.make("TopK", agent="SquareCB", num_positions=3, seed=0)
    rng = np.random.default_rng(1)
    X = rng.normal(size=(7, 4))
    for _ in range(10):
        probs = None if agent.n_ is None else agent.inner_.action_probs(X)
        A = agent.act(X)
        if probs is not None:
            assert agent.reads_scores_ is None and A.tolist() == list(np.argsort(probs)[::-1][:3])
        agent.observe(X, A, rng.integers(0, 2, 3).astype(np.int8))


def test_lifts_refuse_a_ranking_agent_inside_or_a_seed_for_it():
    with pytest.raises(ValueError, match="one-arm"):
        agents.make("TopK", agent="CascadeUCB1")
    with pytest.raises(ValueError, match="seed"):
        agents.make("RankedBandits", agent_kwargs={"seed": 3})


def test_ranking_agents_need_num_positions_and_enough_items():
    with pytest.raises(ValueError, match="num_positions"):
        agents.make("CascadeUCB1").act(np.eye(4))
    with pytest.raises(ValueError, match="K <= L"):
        agents.make("CascadeUCB1", num_positions=5).act(np.eye(4))
    assert not hasattr(agents.make("CascadeUCB1"), "action_probs")


# -- the conformance checks catch broken ranking agents ------------------------------------------
class Repeats(agents.cascade.CascadeUCB1):
    """Shows item 0 twice."""

    def _rank(self, X):
        A = super()._rank(X)
        A[:, 1] = A[:, 0]
        return A


class GlobalRandom(agents.cascade.CascadeUCB1):
    """Breaks ties with numpy's global RNG: not reproducible."""

    def _rank(self, X):
        return np.argsort(np.random.random((self.n_, self.L_)), axis=1)[:, :self.K_]


class MutatesClicks(agents.cascade.CascadeUCB1):
    def observe(self, obs, ranking, clicks):
        super().observe(obs, ranking, clicks)
        clicks[...] = 0


class TakesAnyClicks(agents.cascade.CascadeUCB1):
    """Skips the feedback checks."""

    def _ranking_feedback(self, ranking, clicks):
        return np.reshape(ranking, (-1, self.K_)), np.reshape(clicks, (-1, self.K_)).astype(float)


class CountsInstances(agents.cascade.CascadeUCB1):
    """Scores that depend on how many instances it serves: batched differs from singles."""

    def _scores(self):
        return super()._scores() + np.arange(self.L_) * (self.n_ > 1)


@pytest.mark.parametrize("broken, check, batched", [
    (Repeats, "check_ranking_lists", False), (GlobalRandom, "check_ranking_determinism", False),
    (MutatesClicks, "check_ranking_inputs_not_mutated", False), (TakesAnyClicks, "check_ranking_bad_inputs", False),
    (CountsInstances, "check_ranking_batched_equals_singles", True),
])
def test_ranking_checks_catch_a_broken_agent(broken, check, batched):
    from agents import checks

    with pytest.raises(AssertionError):
        getattr(checks, check)(broken, batched)


def test_check_agent_dispatches_on_the_kind():
    from agents import checks

    checks.check_agent("CascadeUCB1")
    checks.check_agent(lambda **kw: agents.make("PBM-UCB", epsilon=0.5, **kw), batched=False)
    names = {check.__name__ for name, check, _ in checks.all_checks({"TopRank": agents.REGISTRY["TopRank"]})}
    assert names == {check.__name__ for check in checks.RANKING_CHECKS}


HORIZON_CASES = [("TopRank", {}), ("TopRank", {"delta": 0.1}), ("PBM-PIE", {"kappas": (1.0, 0.5)}),
                 ("CascadeLinUCB", {}), ("CascadeLinUCB", {"c": 0.5})]


@pytest.mark.parametrize("name, kwargs", HORIZON_CASES,
                         ids=[f"{n}-{'-'.join(map(str, k.values())) or 'defaults'}" for n, k in HORIZON_CASES])
def test_a_ranking_agent_plays_alike_at_any_horizon_exactly_when_it_says_it_does_not_read_it(name, kwargs):
    from agents.base import reads_horizon

    def lists(horizon):
        rng, w = np.random.default_rng(7), np.array([0.9, 0.6, 0.3, 0.1, 0.05, 0.02])
        agent, played = agents.make(name, num_positions=2, horizon=horizon, seed=3, **kwargs), []
        for _ in range(200):
            A = agent.act(np.eye(6))
            agent.observe(np.eye(6), A, (rng.random(2) < w[A]).astype(np.int8))
            played.append(A.tolist())
        return played

    assert (lists(200) == lists(100_000)) != reads_horizon(name, kwargs)


@pytest.mark.parametrize("n", [1, 100])          # a few lists (Python's checks) and many (numpy's)
def test_bad_feedback_is_refused_naming_the_problem(n):
    agent = agents.make("CascadeUCB1", num_positions=3, seed=list(range(n)) if n > 1 else 0)
    X = np.eye(5) if n == 1 else np.broadcast_to(np.eye(5), (n, 5, 5))
    A = agent.act(X)
    C = np.zeros(A.shape, dtype=np.int8)
    for what, ranking, clicks in (("repeats an item", np.zeros_like(A), C), ("out of range", A + 5, C),
                                  ("out of range", A - 5, C), ("0 or 1", A, C + 2), ("0 or 1", A, C + 0.5),
                                  ("0 or 1", A, C * np.nan), ("shape", A[..., :2], C), ("shape", A, C[..., :2]),
                                  ("int array", A.astype(float), C)):
        with pytest.raises(ValueError, match=what):
            agent.observe(X, ranking, clicks)
    agent.observe(X, A, C)
