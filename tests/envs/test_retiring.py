"""The retiring-items bandit (envs/retiring.py): items retire at the stated rate, newcomers follow Beta(4, 4),
features are one-hot item ids, the episode state is per episode and per sub-env, and a per-item learner beats
Random. Its conformance (vector env, seeding, pickling, info) is in test_conformance.py with every other id."""

import gymnasium as gym
import numpy as np
import pytest
from scipy import stats

import agents
import gym_ctxbandits  # noqa: F401

ID = "CtxBandit/RetiringItems-v0"


def items(obs):
    """The item id of each slot (the one-hot position; ids below dim)."""
    assert ((obs == 0) | (obs == 1)).all() and (obs.sum(axis=1) == 1).all()
    return obs.argmax(axis=1)


def test_items_retire_one_at_a_time_and_means_follow_them():
    """retire_prob = 1: every step one slot gets the next id and a fresh click probability; the expected reward
    of the slot played is its item's probability, and the best slot is the optimum."""
    env = gym.make(ID, retire_prob=1.0, dim=64)
    obs, _ = env.reset(seed=0)
    assert items(obs).tolist() == list(range(10))
    np.testing.assert_array_equal(env.unwrapped.expected_rewards, env.unwrapped.instance["first"])
    for t in range(30):
        before, p = items(obs), env.unwrapped.expected_rewards
        obs, reward, _, _, info = env.step(t % 10)
        assert info["expected_reward"] == p[t % 10] and info["optimal_expected_reward"] == p.max()
        assert reward in (0.0, 1.0)
        changed = np.flatnonzero(items(obs) != before)
        assert len(changed) == 1 and items(obs)[changed[0]] == 10 + t
        assert env.unwrapped.expected_rewards[changed[0]] != p[changed[0]]


def test_retirement_rate_and_the_newcomers_law():
    """retire_prob = 0.05 over 2,000 steps: about 100 retirements (binomial sd 9.7); and the click
    probabilities of 2,000 newcomers (retire_prob = 1) pass a KS test against Beta(4, 4)."""
    env = gym.make(ID, retire_prob=0.05, max_episode_steps=None)
    obs, _ = env.reset(seed=1)
    for _ in range(2000):
        obs, *_ = env.step(0)
    assert 70 <= items(obs).max() - 9 <= 130
    env = gym.make(ID, retire_prob=1.0, dim=4096, max_episode_steps=None)
    obs, _ = env.reset(seed=2)
    newcomers = []
    for _ in range(2000):
        before = items(obs)
        obs, *_ = env.step(0)
        newcomers.append(env.unwrapped.expected_rewards[items(obs) != before][0])
    assert stats.kstest(newcomers, stats.beta(4, 4).cdf).pvalue > 0.01


def test_no_retirement_keeps_the_items():
    env = gym.make(ID, retire_prob=0.0)
    obs, _ = env.reset(seed=3)
    first = env.unwrapped.expected_rewards
    for _ in range(50):
        obs, *_ = env.step(1)
    assert items(obs).tolist() == list(range(10))
    np.testing.assert_array_equal(env.unwrapped.expected_rewards, first)


def test_fixed_instance_is_copied_per_episode_and_sub_env():
    """instance_seed fixes the first items, shared by every episode and sub-env: each still retires its own
    items (the vector env's sub-env i equals a single env seeded seed + i), and a second episode starts over."""
    kwargs = {"retire_prob": 0.2, "instance_seed": 4}
    vec = gym.make_vec(ID, num_envs=2, vectorization_mode="vector_entry_point", **kwargs)
    singles = [gym.make(ID, **kwargs) for _ in range(2)]
    vobs, _ = vec.reset(seed=10)
    sobs = [env.reset(seed=10 + i)[0] for i, env in enumerate(singles)]
    for t in range(40):
        for i in range(2):
            np.testing.assert_array_equal(vobs[i], sobs[i])
        vobs, *_ = vec.step(np.array([t % 10, (t + 3) % 10]))
        sobs = [env.step(a)[0] for env, a in zip(singles, (t % 10, (t + 3) % 10))]
    assert not np.array_equal(vobs[0], vobs[1])
    obs, _ = singles[0].reset(seed=99)
    assert items(obs).tolist() == list(range(10))
    np.testing.assert_array_equal(singles[0].unwrapped.expected_rewards, singles[1].unwrapped.instance["first"])


@pytest.mark.parametrize("kwargs, words", [({"retire_prob": 1.5}, "retire_prob"), ({"a": 0}, "a must"),
                                           ({"dim": 5}, "dim must be >= num_arms")])
def test_bad_kwargs(kwargs, words):
    with pytest.raises(ValueError, match=words):
        gym.make(ID, **kwargs)


def test_per_item_thompson_sampling_beats_random():
    """On the one-hot id features LinTS is per-item Gaussian Thompson sampling and starts afresh for each
    newcomer (sigma = 0.5 bounds a click's standard deviation): with an item retiring every 250 steps on
    average it stays well below Random's regret (1,500 steps, 3 seeds; measured 0.22 to 0.32)."""
    ratios = []
    for seed in range(3):
        regret = {}
        for name in ("LinTS", "Random"):
            env = gym.make(ID, retire_prob=0.004, dim=32)
            agent = agents.make(name, seed=seed, **({"sigma": 0.5} if name == "LinTS" else {}))
            obs, _ = env.reset(seed=seed)
            total = 0.0
            for _ in range(1500):
                a = agent.act(obs)
                nxt, reward, _, _, info = env.step(a)
                agent.observe(obs, a, reward)
                total += info["regret"]
                obs = nxt
            regret[name] = total
        ratios.append(regret["LinTS"] / regret["Random"])
    assert max(ratios) < 0.5, ratios
