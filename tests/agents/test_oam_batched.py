"""OAM and OSSB batched and their exact propensities: N instances in one object act exactly as N single
agents (on the [S4] environments, with the SDP, with untracked action sets), and `action_probs` is the
distribution of the next act in every branch of the decision (checked against its closed form and
against the frequencies of repeated acts, at states reached after some rounds)."""

import copy

import numpy as np
import pytest

pytest.importorskip("cvxpy")

import agents  # noqa: E402
from agents.oam import OAM, OSSB  # noqa: E402

gym = pytest.importorskip("gymnasium")
import gym_ctxbandits  # noqa: E402,F401

DRAWS, MARGIN = 300, 0.1      # repeated acts per comparison; 0.1 is 3.5 sd of a share of 300 at p = 0.5


def lockstep(batch, singles, obs_rounds, reward):
    """Drive a batched agent and its single twins through the same rounds; assert equal actions."""
    for t, obs in enumerate(obs_rounds):
        a = batch.act(obs)
        alone = [agent.act(o) for agent, o in zip(singles, obs)]
        assert a.tolist() == alone, f"round {t}: batched {a.tolist()}, singles {alone}"
        r = reward(t, obs, a)
        batch.observe(obs, a, r)
        for agent, o, ai, ri in zip(singles, obs, a, r):
            agent.observe(o, int(ai), float(ri))


@pytest.mark.parametrize("name, kwargs, env_id", [
    ("OAM", {}, "CtxBandit/FixedActionSet-v0"),
    ("OAM", {"epsilon": None}, "CtxBandit/BoundedRegret-v0"),
    ("OAM", {"epsilon": 0.05, "spanner": True}, "CtxBandit/ChangingActionSet1-v0"),
    ("OSSB", {}, "CtxBandit/BoundedRegret-v0"),
    ("OSSB", {"epsilon": 0.05, "gamma": 0.5, "zeta": 0.0}, "CtxBandit/UnitCircleSmall-v0"),
])
def test_batched_equals_singles_on_s4_environments(name, kwargs, env_id):
    """Three instances, each on its own environment seed, for 300 rounds: the same actions and
    counters as three single agents."""
    seeds, n = [0, 1, 2], 300
    envs = [gym.make(env_id, max_episode_steps=n) for _ in seeds]
    first = np.stack([env.reset(seed=s)[0] for env, s in zip(envs, seeds)])
    batch = agents.make(name, seed=seeds, horizon=n, **kwargs)
    singles = [agents.make(name, seed=s, horizon=n, **kwargs) for s in seeds]
    state = {"obs": first}

    def rounds():
        for _ in range(n):
            yield state["obs"]

    def reward(t, obs, a):
        steps = [env.step(int(ai)) for env, ai in zip(envs, a)]
        state["obs"] = np.stack([s[0] for s in steps])
        return np.array([s[1] for s in steps])

    lockstep(batch, singles, rounds(), reward)
    assert batch.solves_.tolist() == [agent.solves_[0] for agent in singles]
    if name == "OAM":
        for kind, counts in batch.rounds_.items():
            assert counts.tolist() == [agent.rounds_[kind][0] for agent in singles], kind
        assert min(batch.rounds_["forced"]) > 0 and min(batch.solves_) > 0


@pytest.mark.parametrize("cls", [OAM, OSSB])
def test_batched_equals_singles_with_the_sdp_and_untracked_sets(cls):
    """d = 3: instances 0 and 1 keep one action set each (one x_hat*: k = 2, the SDP, compiled and
    re-solved in each instance's own cache, as its single twin does), instance 2 cycles through three
    sets, instance 3 gets fresh arms every round (beyond max_contexts = 4 they are untracked: OSSB
    then plays a uniform arm drawn from the instance's own stream)."""
    rng = np.random.default_rng(7)
    fixed = np.array([[1.0, 0, 0], [0, 1.0, 0], [0, 0, 1.0], [0.9, 0.3, 0.2], [0.5, 0.5, 0.5]])
    cycle = rng.normal(size=(3, 5, 3)) / 2
    theta = np.array([1.0, 0.2, 0.0])
    obs_rounds = [np.stack([fixed, fixed[::-1], cycle[t % 3], rng.normal(size=(5, 3)) / 2]) for t in range(60)]
    noise = rng.normal(size=(60, 4))
    kwargs = dict(horizon=200, max_contexts=4, zeta=0.5) | ({"epsilon": 0.05} if cls is OAM else {})
    seeds = [5, 6, 7, 8]
    batch, singles = cls(seed=seeds, **kwargs), [cls(seed=s, **kwargs) for s in seeds]
    lockstep(batch, singles, obs_rounds, lambda t, obs, a: obs[np.arange(4), a] @ theta + noise[t])
    assert batch._programs[0] and batch._programs[1] and batch.untracked_rounds_[3] > 0
    assert [sorted(p) for p in batch._programs] == [sorted(agent._programs[0]) for agent in singles]
    assert batch.untracked_rounds_.tolist() == [agent.untracked_rounds_[0] for agent in singles]


@pytest.mark.parametrize("cls", [OAM, OSSB])
def test_action_sets_of_different_sizes(cls):
    """Rounds alternate between sets of 3 and 4 arms (one block of contexts per size); instance 1's
    4-arm set changes every round, so it has contexts in both blocks and untracked rounds."""
    rng = np.random.default_rng(3)
    three, four = rng.normal(size=(2, 3, 2)), rng.normal(size=(2, 4, 2))
    obs_rounds = [three if t % 2 else np.stack([four[0], rng.normal(size=(4, 2))]) for t in range(80)]
    batch, singles = cls(seed=[1, 2], max_contexts=3), [cls(seed=s, max_contexts=3) for s in (1, 2)]
    lockstep(batch, singles, obs_rounds, lambda t, obs, a: rng.normal(size=2))
    assert sorted(batch.contexts_.blocks) == [3, 4] and batch.untracked_rounds_.tolist() == [0, 38]
    probs = batch.action_probs(obs_rounds[0])
    assert all(np.array_equal(probs[i], agent.action_probs(obs_rounds[0][i])) for i, agent in enumerate(singles))


def test_batched_probs_are_the_singles_probs():
    seeds, rng = [3, 4], np.random.default_rng(0)
    A = np.array([[1.0, 0.0], [0.0, 1.0], [0.9, 0.5]])
    for cls in (OAM, OSSB):
        batch, singles = cls(seed=seeds, horizon=500), [cls(seed=s, horizon=500) for s in seeds]
        obs = np.stack([A, A[::-1]])
        lockstep(batch, singles, [obs] * 40, lambda t, o, a: o[np.arange(2), a, 0] + rng.normal(size=2))
        p = batch.action_probs(obs)
        for i, agent in enumerate(singles):
            assert np.array_equal(p[i], agent.action_probs(obs[i]))


# -- exact propensities ---------------------------------------------------------------------------
def branch(agent, obs) -> str:
    """The branch ("init", "exploit", "explore", "forced", "wasted") of a single OAM's next act."""
    twin = copy.deepcopy(agent)
    before = {k: int(v[0]) if v.size else 0 for k, v in twin.rounds_.items()}   # v.size = 0 before the first obs
    twin.act(obs)
    return next(k for k, v in twin.rounds_.items() if v[0] > before[k])


def assert_exact(agent, obs, expected):
    """action_probs is `expected` exactly and matches the frequencies of DRAWS repeated acts."""
    p = agent.action_probs(obs)
    assert np.array_equal(p, expected), p
    freq = agent._sampled_probs(obs, DRAWS)[0]
    assert np.abs(p - freq).max() <= MARGIN, (p, freq)


A = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 0.0], [0.5, 0.5]])   # arm 2 repeats arm 0: ties
THETA = np.array([1.0, -0.5])


def fed(agent, arms, times=1):
    """The agent after observing the noiseless rewards of `arms` (in order, `times` over)."""
    for _ in range(times):
        for a in arms:
            agent.observe(A, a, float(A[a] @ THETA))
    return agent


def test_oam_probs_in_every_branch():
    """Each branch of Algorithm 1 at a state that makes it split a tie, against its closed form:
    initialisation (the arms farthest from the span of those played), forced exploration (the
    least pulled arms), tracking (argmin N / target), exploitation (argmax <x, theta_hat>) and a
    wasted round (LinUCB on an action set beyond max_contexts)."""
    fresh = OAM(horizon=100, epsilon=1.0, seed=0)
    assert branch(fresh, A) == "init"
    assert_exact(fresh, A, [1 / 3, 1 / 3, 1 / 3, 0])             # round 0: three unit arms span nothing yet
    forced = fed(OAM(horizon=100, epsilon=1.0, seed=0), [0, 1])
    assert branch(forced, A) == "forced"
    assert_exact(forced, A, [0, 0, 0.5, 0.5])                     # arms 2 and 3 never pulled
    tracking = fed(OAM(horizon=100, epsilon=0.0, seed=0), [0, 1, 3, 2])
    assert branch(tracking, A) == "explore"
    N = tracking.contexts_.get("pulls", 0)[0]
    assert N.tolist() == [1, 1, 1, 1]
    assert_exact(tracking, A, [0.5, 0, 0.5, 0])     # x_hat* and its repeat: the same target f_n / Delta_min^2
    exploit = fed(OAM(horizon=100, epsilon=0.0, seed=0), [0, 1, 3], times=60)
    assert branch(exploit, A) == "exploit"
    assert_exact(exploit, A, [0.5, 0, 0.5, 0])
    wasted = fed(OAM(horizon=100, max_contexts=1, seed=0), [0, 1])
    B = np.array([[0.9, 0.3], [0.3, 0.9], [0.9, 0.3]])
    assert branch(wasted, B) == "wasted"
    assert_exact(wasted, B, [0.5, 0, 0.5])


def test_oam_probs_along_a_run():
    """Every round of 120 on FixedActionSet with the theory rate (every exploration round forced,
    round-robin): the arm act picks has positive probability, a one-hot distribution names it, at
    three consecutive forced rounds the probabilities equal the repeated acts' frequencies (and the
    uniform law over the least pulled arms), and asking changes none of the actions."""
    n = 120
    env = gym.make("CtxBandit/FixedActionSet-v0", max_episode_steps=n)
    obs, _ = env.reset(seed=0)
    agent, twin = OAM(horizon=n, epsilon=None, seed=0), OAM(horizon=n, epsilon=None, seed=0)
    for t in range(n):
        p = agent.action_probs(obs)
        if t in (60, 61, 62):
            assert branch(agent, obs) == "forced"
            N = agent.contexts_.get("pulls", 0)[0]
            assert np.array_equal(p, (N == N.min()) / (N == N.min()).sum())
            assert np.abs(p - agent._sampled_probs(obs, DRAWS)[0]).max() <= MARGIN
        a = agent.act(obs)
        assert p[a] > 0 and (p.max() < 1 or p[a] == 1), (t, p, a)
        assert twin.act(obs) == a
        nxt, r, _, _, _ = env.step(a)
        agent.observe(obs, a, r)
        twin.observe(obs, a, r)
        obs = nxt
    assert sorted(k for k, v in agent.rounds_.items() if v[0]) == ["forced", "init"]


def test_ossb_probs_average_over_the_tied_best_arm():
    """Arms 0 and 1 tie for x_hat*. The last solve was made with x_hat* = 1 and other gaps, so a
    draw of 1 keeps that allocation (eta) and a draw of 0 re-solves it: the two draws explore
    different arms, and the next act's distribution is their even mixture."""
    X = np.array([[1.0, 0, 0], [0, 1.0, 0], [0.5, 0.5, 0.5], [0.3, 0.3, 0.8]])
    agent = OSSB(zeta=10.0, seed=0)
    for a, r in [(0, 1.0), (1, 1.0), (2, 0.2), (3, 0.1)]:
        agent.observe(X, a, r)
    a = agent.act(X)                                             # solves with x_hat* = arm 1 (seed 0's draw)
    assert a == 3 and agent.contexts_.get("best_at_solve", 0) == [1]
    agent.observe(X, a, -3.0)                                    # arm 3's gap grows; arms 0 and 1 still tie
    assert_exact(agent, X, [0, 0, 0.5, 0.5])


def test_ossb_probs_first_pulls_and_untracked():
    agent = OSSB(max_contexts=1, seed=0)
    assert np.array_equal(agent.action_probs(A), [0.25] * 4)     # nothing pulled: every arm
    agent.observe(A, 1, 0.0)
    assert_exact(agent, A, [1 / 3, 0, 1 / 3, 1 / 3])
    B = np.array([[0.9, 0.3], [0.3, 0.9], [0.9, 0.3]])
    assert_exact(agent, B, [1 / 3] * 3)                          # beyond max_contexts: a uniform arm


def test_comparison_batches_equal_the_plain_loop():
    """`gym_ctxbandits.run` runs OAM and OSSB as one batched agent on a native vector env: the plain
    loop's numbers."""
    pd = pytest.importorskip("pandas")
    kwargs = dict(seeds=[0, 5, 9], horizon=120, log_every=7)
    env = gym_ctxbandits.EnvSpec("CtxBandit/FixedActionSet-v0", {"u": 0.1})
    plain = gym_ctxbandits.run(env, ["OAM", "OSSB"], batch=1, **kwargs)
    batched = gym_ctxbandits.run(env, ["OAM", "OSSB"], batch=2, **kwargs)   # a batch of 2 and one of 1
    cols = ["env", "agent", "seed", "round", "reward", "regret", "cum_reward", "cum_regret"]
    pd.testing.assert_frame_equal(plain[cols], batched[cols])
