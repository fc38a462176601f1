"""gym_ctxbandits.ope.replay (Li, Chu, Langford, Wang 2011): the kept rounds of a hand-computed
log, a learning LinUCB against its own online run, and the rejection-sampling variant on a
non-uniform log that would bias the plain replay."""

import gymnasium as gym
import numpy as np
import pytest
from scipy.stats import norm

import agents
import gym_ctxbandits
from gym_ctxbandits import ope

# Six logged rounds of a uniform behaviour over K = 2 arms.
ACTION = np.array([0, 0, 1, 1, 0, 1])
REWARD = np.array([1.0, 0.0, 0.5, 1.0, 0.0, 1.0])
PSCORE = np.full(6, 0.5)
CONTEXT = np.zeros((6, 2, 1))


class Alternating:
    """A learner that picks arm (number of rewards observed) mod 2, and records what it observed."""

    def __init__(self):
        self.seen = []

    def act(self, obs):
        return len(self.seen) % 2

    def observe(self, obs, action, reward):
        self.seen.append((action, reward))


def test_a_learning_target_sees_only_the_kept_rounds():
    # picks 0 (= logged, keep, t=1), 1 (skip), 1 (keep, t=2), 0 (skip), 0 (keep, t=3), 1 (keep): rounds 0, 2, 4, 5
    target = Alternating()
    est = ope.replay(REWARD, ACTION, PSCORE, target, context=CONTEXT)
    kept = np.array([1.0, 0.5, 0.0, 1.0])
    assert target.seen == [(0, 1.0), (1, 0.5), (0, 0.0), (1, 1.0)]
    assert (est.estimator, est.n_kept, est.value) == ("Replay", 4, 0.625)
    half = norm.ppf(0.975) * np.sqrt(((kept - 0.625) ** 2).sum() / 3) / 2      # z sd / sqrt(n_kept)
    assert (est.low, est.high) == pytest.approx((0.625 - half, 0.625 + half), abs=1e-12)


def test_a_fixed_policy_is_replayed_from_its_action_dist():
    always_one = np.tile([0.0, 1.0], (6, 1))
    est = ope.replay(REWARD, ACTION, PSCORE, always_one)
    assert (est.n_kept, est.value) == (3, pytest.approx(2.5 / 3))


@pytest.mark.parametrize("bad, words", [
    (dict(pscore=np.full(6, 0.4)), r"uniformly random log \(pscore = 1/K = 0.5"),
    (dict(pscore=None), "pscore is missing: replay checks"),
    (dict(pscore=np.full(6, 1.5)), r"pscore must lie in \(0, 1\]"),
    (dict(context=None), "context must be the per-arm features"),
    (dict(context=np.zeros((6, 1, 1))), r"action must lie in \[0, 1\)"),
    (dict(target=type("Never", (Alternating,), {"act": lambda self, obs: 5})()), "replay kept no round"),
    (dict(alpha=0.0), "alpha must lie in"),
])
def test_bad_input_gets_one_clear_line(bad, words):
    args = dict(reward=REWARD, action=ACTION, pscore=PSCORE, target=Alternating(), context=CONTEXT) | bad
    with pytest.raises(ValueError, match=words) as err:
        ope.replay(**args)
    assert "\n" not in str(err.value)


def test_rejection_sampling_removes_the_bias_of_a_non_uniform_log():
    # Context c in {0, 1}; arm 0 pays c, arm 1 pays 0. The behaviour pulls arm 0 with probability 0.9 when
    # c = 1 and 0.1 when c = 0, so arm 0's logged rounds are mostly c = 1: plain replay of "always arm 0"
    # would give about 0.9; its value is 0.5.
    rng = np.random.default_rng(0)
    n = 20_000
    c = rng.integers(2, size=n)
    p0 = np.where(c == 1, 0.9, 0.1)
    action = (rng.random(n) >= p0).astype(int)
    reward = np.where(action == 0, c, 0).astype(float)
    pscore = np.where(action == 0, p0, 1 - p0)
    arm0 = np.tile([1.0, 0.0], (n, 1))
    with pytest.raises(ValueError, match="rejection=True"):
        ope.replay(reward, action, pscore, arm0)
    plain_bias = reward[action == 0].mean()
    assert plain_bias > 0.85
    est = ope.replay(reward, action, pscore, arm0, rejection=True, seed=1)
    assert abs(est.value - 0.5) < 0.05 and est.low < 0.5 < est.high
    assert abs(est.n_kept - n * 0.1) < 300         # about n min(pscore) rounds kept


ENV, KW = "CtxBandit/Linear-v0", dict(num_arms=5, dim=5, pool_size=50, instance_seed=3)


def online_mean_reward(rounds: int, seed: int) -> float:
    """LinUCB's mean expected reward over its first `rounds` rounds of a live run."""
    env = gym.make(ENV, max_episode_steps=rounds, **KW)
    obs, _ = env.reset(seed=seed)
    agent, total = agents.make("LinUCB", seed=seed), 0.0
    for _ in range(rounds):
        action = agent.act(obs)
        total += env.unwrapped.expected_rewards[action]
        next_obs, reward, *_ = env.step(action)
        agent.observe(obs, action, reward)
        obs = next_obs
    return total / rounds


def test_replay_of_a_learning_linucb_matches_its_online_run():
    log = gym_ctxbandits.log(ENV, agents.make("Random", seed=0), 6000, seed=11, env_kwargs=KW)
    est = ope.replay(log["reward"], log["action"], log["pscore"], agents.make("LinUCB", seed=1),
                     context=log["context"])
    assert 1050 < est.n_kept < 1350                 # about n / K = 1200
    online = np.mean([online_mean_reward(est.n_kept, seed) for seed in range(100, 105)])
    uniform = log["expected_reward"].mean()
    assert online - uniform > 0.3                   # learning shows: a wrong replay would be far off
    assert abs(est.value - online) < 0.06, (est, online)
    assert est.low - 0.02 < online < est.high + 0.02
