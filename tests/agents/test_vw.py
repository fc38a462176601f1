"""The Vowpal Wabbit agents (agents.vw): VW's own PMFs, seeds, copies, learning, and bad arguments.

tests/agents/test_checks.py runs every registered VW agent through agents.checks; here the suite runs on
configurations the registry does not hold, and the rest is what the suite cannot know about VW.
"""

import copy
import importlib.util
import pickle
import subprocess
import sys

import gymnasium as gym
import numpy as np
import pytest

import agents
import gym_ctxbandits  # noqa: F401  (registers the envs)
from agents import vw
from agents.checks import check_agent

NAMED = ["VW-epsilon", "VW-Bag", "VW-Cover-NU", "VW-RegCB-opt", "VW-SquareCB"]
needs_vw = pytest.mark.skipif(importlib.util.find_spec("vowpalwabbit") is None,
                              reason='needs vowpalwabbit: pip install -e ".[vw]"')


def iris_rounds(seed: int, T: int) -> list:
    """(obs, the optimal arm) of T rounds of Supervised-v0 (iris, K = 3, d = 12), seed `seed`."""
    env = gym.make("CtxBandit/Supervised-v0", max_episode_steps=T)
    obs, _ = env.reset(seed=seed)
    rounds = []
    for _ in range(T):
        next_obs, _, _, _, info = env.step(0)
        rounds.append((obs, info["optimal_action"]))
        obs = next_obs
    return rounds


def play(agent, rounds):
    """Drive `agent` through `rounds` (obs, the optimal arm, paying 1); return its actions and PMFs."""
    actions, pmfs = [], []
    for obs, best in rounds:
        pmfs.append(agent.action_probs(obs))
        a = agent.act(obs)
        agent.observe(obs, a, float(a == best))
        actions.append(a)
    return actions, np.array(pmfs)


# -- import and arguments -----------------------------------------------------------------------------
def test_importing_agents_does_not_import_vowpalwabbit():
    code = "import sys, agents; assert 'VW-SquareCB' in agents.REGISTRY; assert 'vowpalwabbit' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_making_an_agent_without_vowpalwabbit_says_how_to_install_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "vowpalwabbit", None)     # `import vowpalwabbit` now fails
    for name in ["VW", *NAMED]:
        with pytest.raises(ImportError, match=r'pip install "gym-ctxbandits\[vw\]".*\.\[all\]'):
            agents.make(name)


@needs_vw
@pytest.mark.parametrize("args, words", [
    ("--cb_adf", "lack --cb_explore_adf"),
    ("--cb_explore --epsilon 0.1", "lack --cb_explore_adf"),
    ("--cb_explore_adf --random_seed 3", "--random_seed"),
    ("--cb_explore_adf -d train.txt", "-d"),
    ("--cb_explore_adf --data=train.txt", "--data"),
    ("--cb_explore_adf -f model.vw", "-f"),
    ("--cb_explore_adf -i model.vw", "-i"),
    ("--cb_explore_adf -p /dev/stdout", "-p"),
    ("--cb_explore_adf --cache_file c", "--cache_file"),
    ("--cb_explore_adf -t", "-t"),
    ("--cb_explore_adf --greedy", "unrecognised option '--greedy'"),
    ("--cb_explore_adf --epsilon abc", "VW refused"),
    ("--cb_explore_adf --epsilon '0.1", "cannot read"),
])
def test_bad_arguments_are_refused_naming_the_option(args, words):
    with pytest.raises(ValueError, match="VW") as err:
        agents.make("VW", args=args)
    assert words in str(err.value)


@needs_vw
def test_extra_arguments_of_the_named_agents_follow_the_same_rules():
    with pytest.raises(ValueError, match="--random_seed"):
        agents.make("VW-epsilon", extra="--random_seed 1")
    with pytest.raises(ValueError, match="min_reward must be below max_reward"):
        agents.make("VW-RegCB-opt", min_reward=1.0, max_reward=0.0)
    assert "--l2 1e-06" in agents.make("VW-Bag", extra="--l2 1e-06")._vw_args()


def test_bits_leave_the_constant_above_the_features():
    assert vw._bits(12) == 18 and vw._bits(100_000) == 18
    for d in (200_000, 3_000_000):
        b = vw._bits(d)
        assert 2 ** b >= d and vw.CONSTANT % 2 ** b >= d


# -- the protocol -----------------------------------------------------------------------------------
@needs_vw
def test_conformance_of_another_vw_configuration():
    """The suite on a learner the registry does not hold (bag of 3 on DR: VW's generator, and copies that replay)."""
    check_agent(lambda **kw: agents.make("VW", args="--cb_explore_adf --bag 3 --cb_type dr", **kw), rounds=10)


@needs_vw
def test_features_reach_vw_as_the_nonzero_entries():
    agent = agents.make("VW-epsilon", seed=0)
    X = np.zeros((3, 6))
    X[0, [1, 4]] = [0.5, -2.0]
    X[2, 5] = 3.25
    agent.act(X)
    lines = agent._lines(agent.ws_[0], vw._sparse(X))
    stride = agent.ws_[0].get_stride()           # VW's setup multiplies feature indices by its weights' stride
    for k, line in enumerate(lines):
        got = [(line.feature(vw.NAMESPACE, i) // stride, line.feature_weight(vw.NAMESPACE, i))
               for i in range(line.num_features_in(vw.NAMESPACE))]
        assert got == [(j, X[k, j]) for j in np.flatnonzero(X[k])]


@needs_vw
def test_vw_epsilon_pmf_is_the_epsilon_greedy_rule_on_vws_costs():
    """Known answer: 1 - eps + eps/K on the arm of VW's lowest predicted cost, eps/K on the others."""
    eps, rounds = 0.1, iris_rounds(0, 60)
    agent = agents.make("VW-epsilon", epsilon=eps, seed=0)
    play(agent, rounds[:50])
    for obs, _ in rounds[50:]:
        lines = agent._lines(agent.ws_[0], vw._sparse(obs))
        p = agent._predict(agent.ws_[0], lines)
        costs = np.array([line.get_partial_prediction() for line in lines])
        assert np.unique(costs).size == len(costs)
        want = np.full(len(costs), eps / len(costs))
        want[costs.argmin()] += 1 - eps
        np.testing.assert_allclose(agent.action_probs(obs), want, atol=1e-6)
        np.testing.assert_array_equal(p, agent.action_probs(obs))


@needs_vw
def test_vw_squarecb_pmf_is_inverse_gap_weighting_of_vws_costs():
    """Known answer (Foster & Rakhlin 2020): p(a) = 1 / (K + gamma (f(a) - f_min)) off the greedy arm, gamma =
    gamma_scale t^gamma_exponent after t updates, the rest on the greedy arm; f VW's predicted costs."""
    rounds = iris_rounds(1, 45)
    agent = agents.make("VW-SquareCB", seed=0)
    play(agent, rounds[:40])
    gamma = 10.0 * 40 ** 0.5
    for obs, _ in rounds[40:]:
        lines = agent._lines(agent.ws_[0], vw._sparse(obs))
        agent._predict(agent.ws_[0], lines)
        f = np.array([line.get_partial_prediction() for line in lines], dtype=float)
        best = f.argmin()
        want = 1.0 / (len(f) + gamma * (f - f[best]))
        want[best] = 0.0
        want[best] = 1.0 - want.sum()
        np.testing.assert_allclose(agent.action_probs(obs), want, rtol=1e-4, atol=1e-6)
    assert agent.action_probs(rounds[-1][0]).max() < 0.999          # it still explores


@needs_vw
def test_action_probs_leave_vw_unchanged():
    rounds = iris_rounds(2, 40)
    asked, quiet = agents.make("VW-Bag", seed=1), agents.make("VW-Bag", seed=1)
    a1, p1 = play(asked, rounds)
    a2 = []
    for obs, best in rounds:
        a2.append(quiet.act(obs))
        quiet.observe(obs, a2[-1], float(a2[-1] == best))
    assert a1 == a2 and np.allclose(p1.sum(axis=1), 1.0)


@needs_vw
def test_obs_and_rewards_beyond_float32_are_refused():
    agent = agents.make("VW-epsilon", seed=0)
    obs = np.ones((3, 4))
    a = agent.act(obs)
    with pytest.raises(ValueError, match="obs: features reach"):
        agent.act(np.full((3, 4), 1e39))
    with pytest.raises(ValueError, match="reward .* float32"):
        agent.observe(obs, a, 1e39)


# -- learning, seeds and copies -----------------------------------------------------------------------
@needs_vw
def test_every_default_vw_agent_beats_random_on_iris():
    """300 rounds of Supervised-v0 (iris), seed 0: regret below half of Random's (measured: 40-65 against
    about 200 for Random, over seeds 0-3)."""
    T = 300
    rounds = iris_rounds(0, T)

    def regret(agent):
        return T - sum(a == best for a, (_, best) in zip(play(agent, rounds)[0], rounds))

    floor = regret(agents.make("Random", seed=0))
    assert floor > 150
    for name in ["VW", *NAMED]:
        assert regret(agents.make(name, seed=0)) < 0.5 * floor, name


@needs_vw
@pytest.mark.parametrize("name", ["VW-Bag", "VW-Cover-NU"])
def test_batched_equals_single_instances_bit_for_bit(name):
    """N instances in one agent act and give the PMFs, bit for bit, of N single agents seeded alike,
    on three iris runs (VW-Bag draws its bootstrap weights from VW's own seeded generator)."""
    seeds, T = [3, 11, 4], 60
    runs = [iris_rounds(s, T) for s in seeds]
    batch, singles = agents.make(name, seed=seeds), [agents.make(name, seed=s) for s in seeds]
    for t in range(T):
        obs = np.stack([run[t][0] for run in runs])
        best = np.array([run[t][1] for run in runs])
        p = batch.action_probs(obs)
        a = batch.act(obs)
        for i, agent in enumerate(singles):
            np.testing.assert_array_equal(agent.action_probs(obs[i]), p[i])
            assert agent.act(obs[i]) == a[i]
            agent.observe(obs[i], int(a[i]), float(a[i] == best[i]))
        batch.observe(obs, a, (a == best).astype(float))


@needs_vw
def test_observe_rows_learns_only_those_instances():
    seeds, rounds = [5, 6], [iris_rounds(s, 30) for s in (5, 6)]
    batch, alone = agents.make("VW-epsilon", seed=seeds), agents.make("VW-epsilon", seed=6)
    for t in range(30):
        obs = np.stack([r[t][0] for r in rounds])
        a = batch.act(obs)
        assert alone.act(obs[1]) == a[1]
        reward = np.array([float(a[i] == rounds[i][t][1]) for i in range(2)])
        batch.observe_rows(obs, a, reward, [1])
        alone.observe(obs[1], int(a[1]), reward[1])
    assert batch.observed_.tolist() == [0, 30]
    np.testing.assert_array_equal(batch.action_probs(obs)[1], alone.action_probs(obs[1]))


@needs_vw
@pytest.mark.parametrize("name", ["VW", *NAMED])
def test_copies_and_pickles_continue_exactly(name):
    """A deepcopy and a pickle taken after 100 rounds act and give VW's PMFs, bit for bit, as the original
    over the next 100 (VW's save-resume model: weights, optimizer state, counters, random state)."""
    rounds = iris_rounds(7, 200)
    agent = agents.make(name, seed=2)
    play(agent, rounds[:100])
    clones = [copy.deepcopy(agent), pickle.loads(pickle.dumps(agent))]
    want = play(agent, rounds[100:])
    for clone in clones:
        got = play(clone, rounds[100:])
        assert got[0] == want[0]
        np.testing.assert_array_equal(got[1], want[1])


@needs_vw
def test_reset_and_seeds():
    rounds = iris_rounds(8, 40)
    agent = agents.make("VW-Bag", seed=4)
    first = play(agent, rounds)
    agent.reset()
    again = play(agent, rounds)
    other = play(agents.make("VW-Bag", seed=5), rounds)
    assert first[0] == again[0] and np.array_equal(first[1], again[1])
    assert first[0] != other[0]                     # another seed samples other arms


@needs_vw
def test_copies_save_one_regressor_and_replay_the_others():
    """VW's model file holds the whole state of a learner on one regressor only (it saves the normalized-update
    statistics of gd's first model): those pickle their models, the others a log that copies replay."""
    rounds = iris_rounds(9, 30)
    for name, replays in [("VW-epsilon", False), ("VW-RegCB-opt", False), ("VW-SquareCB", False),
                          ("VW-Bag", True), ("VW-Cover-NU", True)]:
        agent = agents.make(name, seed=0)
        play(agent, rounds[:5])
        state = agent.__getstate__()
        if replays:
            assert state["ws_"] is None and [len(log) for log in state["log_"]] == [5]
        else:
            assert state["log_"] is None and isinstance(state["ws_"][0], bytes)
    assert vw.one_regressor("--cb_explore_adf --epsilon 0.1 --cb_type ips -q xx")
    assert not vw.one_regressor("--cb_explore_adf --epsilon 0.1 --cb_type dr")
    # VW's own cover (mtr, decaying epsilon), whose model file falls shortest, continues exactly too
    agent = agents.make("VW", args="--cb_explore_adf --cover 4 --psi 0.1 --nounif", seed=1)
    rounds = iris_rounds(10, 200)
    play(agent, rounds[:100])
    clone = pickle.loads(pickle.dumps(agent))
    want, got = play(agent, rounds[100:]), play(clone, rounds[100:])
    assert got[0] == want[0]
    np.testing.assert_array_equal(got[1], want[1])
    fresh = agents.make("VW-Bag", seed=0)
    assert pickle.loads(pickle.dumps(fresh)).ws_ is None            # an agent not started yet


@needs_vw
def test_many_features_get_more_bits():
    d = 200_001
    agent = agents.make("VW-epsilon", seed=0)
    X = np.zeros((2, d))
    X[0, d - 1] = X[1, 0] = 1.0
    for _ in range(3):
        agent.observe(X, agent.act(X), 1.0)
    assert "-b 21" in agent._flags() and agent.ws_[0].num_weights() == 2 ** 21
