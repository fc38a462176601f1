"""`CtxBandit/Supervised-v0`: the built-in classification bandit on any data, from arrays or a source
string, through gym.make, the vector env, the run loop and the command line. (The conformance suite,
tests/envs/test_conformance.py, runs it on small arrays; the loaders are in tests/datasets/test_supervised.py.)"""

import json
from pathlib import Path

import gymnasium as gym
import numpy as np
import pandas as pd
import pytest

import gym_ctxbandits  # noqa: F401
from gym_ctxbandits.cli import main
from gym_ctxbandits.datasets import supervised
from gym_ctxbandits.datasets import DatasetNotFound
from gym_ctxbandits.experiment import AgentSpec, EnvSpec, Job, run_job

ID = "CtxBandit/Supervised-v0"
MAGIC = Path(__file__).resolve().parents[2] / "data" / "fixtures" / "home" / "uci" / "magic" / "MagicTelescope.csv"


def trajectory(env, seed=0, steps=60):
    obs, info = env.reset(seed=seed)
    out = [obs, info["context"]]
    for t in range(steps):
        obs, reward, _, _, info = env.step(t % env.action_space.n)
        out += [obs, np.float64(reward), info["regret"], info["optimal_action"]]
    return out


@pytest.mark.parametrize("preset", ["S0", "S2", "S3"])
def test_a_file_source_is_the_built_in_bandit(preset):
    """MAGIC's fixture as a CSV source gives Magic-v0's observations and rewards, seed for seed."""
    builtin = gym.make("CtxBandit/Magic-v0", data_path=str(MAGIC.parents[2]), check_size=False, preset=preset)
    ours = gym.make(ID, source=str(MAGIC), label="Class", preset=preset)
    assert ours.observation_space == builtin.observation_space and ours.unwrapped.classes == ("g", "h")
    for seed in (0, 5):
        for a, b in zip(trajectory(builtin, seed), trajectory(ours, seed), strict=True):
            np.testing.assert_array_equal(a, b)


def test_arrays_block_encoding_one_hot_and_true_class_reward():
    X = pd.DataFrame({"x": [3.0, 4.0, 0.0, 1.0], "colour": ["red", "blue", "red", None]})
    env = gym.make(ID, X=X, y=["dog", "cat", "dog", "bird"], scaling="none")
    u = env.unwrapped
    assert u.classes == ("bird", "cat", "dog") and env.observation_space.shape == (3, 3 * 3)
    np.testing.assert_array_equal(u.X, [[3, 0, 1], [4, 1, 0], [0, 0, 1], [1, 0, 0]])  # x, blue, red
    obs, info = env.reset(seed=0)
    for t in range(30):
        x = info["context"]
        for arm in range(3):
            np.testing.assert_array_equal(obs[arm, 3 * arm:3 * arm + 3], x)
        label = u.y[int(np.flatnonzero((u.X == x).all(axis=1))[0])]
        obs, reward, _, _, info = env.step(t % 3)
        assert reward == float(t % 3 == label) and info["regret"] == float(t % 3 != label)


def test_presets_and_encodings():
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"x": rng.normal(size=200), "c": rng.choice(["a", "b", "c"], 200)})
    y = rng.integers(0, 2, 200)
    s2 = gym.make(ID, X=X, y=y, preset="S2", categorical=None).unwrapped.X  # the preset's random values
    assert s2.shape == (200, 2) and s2.min() == pytest.approx(-1) and s2.max() == pytest.approx(1)
    assert np.unique(s2[:, 1]).size == 3
    s0 = gym.make(ID, X=X, y=y, preset="S0").unwrapped.X  # one-hot, L2 rows
    assert s0.shape == (200, 4) and np.allclose(np.linalg.norm(s0, axis=1), 1)
    plain = gym.make(ID, X=X, y=y).unwrapped.X  # no preset: one-hot, columns min-max to [-1, 1], then L2 rows
    columns = np.column_stack([2 * (X.x - X.x.min()) / (X.x.max() - X.x.min()) - 1,
                               *[2.0 * (X.c == c) - 1 for c in "abc"]])
    np.testing.assert_allclose(plain, columns / np.linalg.norm(columns, axis=1, keepdims=True), rtol=1e-6)
    env = gym.make(ID, X=X, y=y, preset="S3")
    env.reset(seed=0)
    steps = [env.step(0) for _ in range(2000)]
    noise = np.array([r - info["expected_reward"] for _, r, _, _, info in steps])
    assert noise.std() == pytest.approx(0.1, rel=0.1)


@pytest.mark.parametrize("kwargs, error, match", [
    ({"X": np.eye(2)}, ValueError, "give the data as X= and y= .*both.*, or as source="),
    ({"label": "c"}, ValueError, "describe a source=.*default dataset"),
    ({"X": np.eye(2), "y": [0, 1], "source": "sklearn:load_digits"}, ValueError, "not both"),
    ({"X": np.eye(2), "y": [0, 1], "label": "c"}, ValueError, "describe a source="),
    ({"source": "nowhere.csv", "label": "c"}, DatasetNotFound, "no such file"),
    ({"X": np.eye(2), "y": [0, 1], "preset": "S9"}, ValueError, "preset must be one of"),
])
def test_bad_arguments_are_named(kwargs, error, match):
    with pytest.raises(error, match=match):
        gym.make(ID, **kwargs)


def test_vector_env_serves_the_seeds_of_single_envs():
    vec = gym.make_vec(ID, num_envs=3, vectorization_mode="vector_entry_point", source="sklearn:load_digits")
    obs, _ = vec.reset(seed=4)
    for i in range(3):
        np.testing.assert_array_equal(obs[i], gym.make(ID, source="sklearn:load_digits").reset(seed=4 + i)[0])


def test_linucb_learns_digits_far_better_than_random():
    """load_digits as a 10-armed bandit (d = 10 x 64): LinUCB with a tenth of the theory radius (which
    explores for thousands of rounds at this dimension) pays less than 0.6x Random's regret in 500 rounds."""
    env = EnvSpec(ID, {"source": "sklearn:load_digits"})
    for seed in (0, 1):
        regret = {agent: run_job(Job(env, AgentSpec(agent, kwargs), seed, 500))["cum_regret"].iloc[-1]
                  for agent, kwargs in (("Random", {}), ("LinUCB", {"alpha": 0.1}))}
        assert regret["Random"] > 400 and regret["LinUCB"] < 0.6 * regret["Random"], regret


def test_command_line_takes_a_source_string(tmp_path, capsys):
    out = tmp_path / "magic"
    kwargs = json.dumps({"source": str(MAGIC), "label": "Class"})
    assert main(["run", "--env", ID, "--env-kwargs", kwargs, "--agents", "Random,LinUCB", "--seeds", "2",
                 "--horizon", "30", "--out", str(out), "--quiet"]) == 0
    assert "LinUCB" in capsys.readouterr().out
    assert main(["run", "--env", ID, "--env-kwargs", '{"source": "nowhere.csv"}', "--agents", "Random",
                 "--horizon", "5", "--out", str(tmp_path / "bad"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "no such file" in err and len(err.strip().splitlines()) == 1


def test_without_data_it_is_iris_shipped_with_the_package():
    """`gym.make(ID)` alone works (registry loops need it): Fisher's iris from the package's own file."""
    env = gym.make(ID)
    u = env.unwrapped
    assert u.classes == ("setosa", "versicolor", "virginica") and env.observation_space.shape == (3, 12)
    assert len(u.y) == 150 and np.bincount(u.y).tolist() == [50, 50, 50] and u.source == "iris"
    sklearn = pytest.importorskip("sklearn.datasets")
    iris = sklearn.load_iris()
    ours = supervised.iris()
    np.testing.assert_array_equal(ours.X, iris.data)  # scikit-learn's copy, value for value
    np.testing.assert_array_equal(ours.y, iris.target)
    assert ours.classes == tuple(iris.target_names)
    obs, info = env.reset(seed=0)
    assert env.observation_space.contains(obs)


def test_per_column_scaling_keeps_a_large_column_from_drowning_the_others():
    """A column of large uninformative numbers beside a small informative one: with rows scaled to unit
    length (preset "S0") the informative column all but vanishes and LinUCB stays near Random; the default
    per-column scaling keeps it, and LinUCB learns (regret under half of S0's in 400 rounds, 2 seeds)."""
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 1000)
    X = np.column_stack([rng.uniform(1e4, 2e4, 1000), y + rng.normal(0, 0.2, 1000)])
    for seed in (0, 1):
        regret = {preset: run_job(Job(EnvSpec(ID, {"X": X, "y": y, "preset": preset}), AgentSpec("LinUCB", {"alpha": 0.1}),
                                      seed, 400))["cum_regret"].iloc[-1] for preset in (None, "S0")}
        assert regret[None] < 0.5 * regret["S0"], regret
