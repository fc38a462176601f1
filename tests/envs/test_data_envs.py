"""The real-data environments' math on small datasets the tests make (the loaders are replaced),
plus runs on the real copies when the data home holds them (else on data/fixtures)."""

from pathlib import Path

import gymnasium as gym
import numpy as np
import pandas as pd
import pytest

import gym_ctxbandits  # noqa: F401
from gym_ctxbandits import datasets, text
from gym_ctxbandits.envs import classification
from gym_ctxbandits.experiment import EnvSpec, AgentSpec, Job, run_job


@pytest.fixture
def fake_data(monkeypatch):
    """`datasets.load` returning a 3-class dataset with a categorical column and missing values."""
    rng = np.random.default_rng(0)
    n = 300
    X = np.column_stack([rng.normal(size=n), rng.uniform(5, 10, n), rng.integers(0, 4, n).astype(float),
                         rng.normal(size=n)])
    X[::7, 2] = np.nan
    X[::11, 3] = np.nan
    ds = datasets.Dataset(name="fake", X=X, y=rng.integers(0, 3, n), classes=("a", "b", "c"),
                          feature_names=("f0", "f1", "cat", "f3"), categorical=np.array([False, False, True, False]),
                          source="memory")
    monkeypatch.setattr(datasets, "load", lambda name, **kw: ds)
    classification.prepared.cache_clear()
    yield ds
    classification.prepared.cache_clear()


def play(env, steps, seed=0, policy=None):
    obs, info = env.reset(seed=seed)
    out = []
    for t in range(steps):
        a = 0 if policy is None else policy(t)
        nxt, r, _, _, step = env.step(a)
        out.append((obs, info, a, r, step))
        obs, info = nxt, step
    return out


def test_disjoint_blocks_and_true_class_reward(fake_data):
    env = gym.make("CtxBandit/Shuttle-v0")  # any dataset id: the loader is the fake one
    k, d = 3, 4
    assert env.observation_space.shape == (k, k * d)
    u = env.unwrapped
    for obs, info, a, r, step in play(env, 40, policy=lambda t: t % 3):
        x = info["context"]
        for arm in range(k):
            np.testing.assert_array_equal(obs[arm, arm * d:(arm + 1) * d], x)
            assert np.count_nonzero(obs[arm]) == np.count_nonzero(x)
        assert np.linalg.norm(x) == pytest.approx(1.0, abs=1e-6)  # the S0 preset: L2 rows
        (row,) = np.flatnonzero((u.X == x).all(axis=1))
        c = u.y[row]
        assert r == float(a == c) and step["optimal_action"] == c and step["regret"] == float(a != c)


def test_presets_prepare_as_the_papers(fake_data):
    X = fake_data.X
    s2 = gym.make("CtxBandit/Mushroom-v0", preset="S2").unwrapped.X.astype(np.float64)
    assert s2.min(axis=0) == pytest.approx(-1.0) and s2.max(axis=0) == pytest.approx(1.0)  # per-feature min-max
    codes = X[:, 2]
    for c in range(4):  # one random value per category, missing -> 0 before the scaling
        assert np.unique(s2[codes == c, 2]).size == 1
    assert np.unique(s2[np.isnan(codes), 2]).size == 1
    s0 = gym.make("CtxBandit/Mushroom-v0").unwrapped.X.astype(np.float64)
    raw = np.where(np.isnan(X), -1.0, X)  # S0: ordinal codes, missing -> -1, L2 rows
    np.testing.assert_allclose(s0, raw / np.linalg.norm(raw, axis=1, keepdims=True), rtol=1e-6)
    onehot = gym.make("CtxBandit/Mushroom-v0", categorical="onehot", scaling="none").unwrapped
    assert onehot.X.shape[1] == 3 + 4 and onehot.observation_space.shape == (3, 3 * 7)
    block = onehot.X[:, 2:6]
    np.testing.assert_array_equal(block.sum(axis=1), (~np.isnan(codes)).astype(np.float32))


def test_s3_preset_adds_gaussian_noise(fake_data):
    steps = play(gym.make("CtxBandit/Shuttle-v0", preset="S3"), 2000)
    noise = np.array([r - s["expected_reward"] for *_, r, s in steps])
    assert noise.std() == pytest.approx(0.1, rel=0.1) and abs(noise.mean()) < 0.01


def test_bad_preset_and_scaling_are_named(fake_data):
    with pytest.raises(ValueError, match="preset"):
        gym.make("CtxBandit/Shuttle-v0", preset="S9")
    with pytest.raises(ValueError, match="scaling"):
        gym.make("CtxBandit/Shuttle-v0", scaling="zscore")


def test_image_pooling_is_block_mean():
    x = np.arange(2 * 784, dtype=np.float64).reshape(2, 784)
    pooled = classification._pool_images(x, 14)
    assert pooled.shape == (2, 196)
    img = x[1].reshape(28, 28)
    assert pooled[1, 0] == img[:2, :2].mean() and pooled[1, 15] == img[2:4, 2:4].mean()
    with pytest.raises(ValueError, match="divide 28"):
        classification._pool_images(x, 10)


@pytest.fixture
def fake_images(monkeypatch):
    rng = np.random.default_rng(1)
    y = np.repeat(np.arange(10), 100)
    ds = datasets.Dataset(name="mnist", X=rng.integers(0, 256, (1000, 784)).astype(float), y=y,
                          classes=tuple(map(str, range(10))), feature_names=tuple(f"p{i}" for i in range(784)),
                          categorical=np.zeros(784, bool), source="memory")
    monkeypatch.setattr(datasets, "load", lambda name, **kw: ds)
    classification.prepared.cache_clear()
    yield ds
    classification.prepared.cache_clear()


def test_target_bandit_means_and_optimum(fake_images):
    env = gym.make("CtxBandit/MNISTTarget-v0", target=3)
    obs, _ = env.reset(seed=0)
    assert obs.shape == (10, 784) and obs.min() >= 0 and obs.max() <= 1
    best = []
    for t in range(4000):
        obs, r, _, _, info = env.step(0)
        best.append(info["optimal_expected_reward"])
        assert info["expected_reward"] in (0.25, 0.75)
    # 0.25 + 0.5 P(a target among 10 shown) ~ 0.25 (1 - 1/K)^K + 0.75 (1 - (1 - 1/K)^K) = 0.5757 (docs/papers.md, S1-A2)
    assert np.mean(best) == pytest.approx(0.5757, abs=0.02)
    drawn = set()
    for seed in range(30):
        e = gym.make("CtxBandit/MNISTTarget-v0")
        e.reset(seed=seed)
        drawn.add(int(e.unwrapped.instance["target"]))
    assert len(drawn) >= 8  # target=None draws the class per instance
    with pytest.raises(ValueError, match="target"):
        gym.make("CtxBandit/MNISTTarget-v0", target=10)


def test_moderation_payoffs_and_shares(monkeypatch):
    rng = np.random.default_rng(2)
    posts = pd.DataFrame({"text": [f"post {i}" for i in range(200)], "hate_score": rng.uniform(-2, 2, 200)})
    monkeypatch.setattr(datasets, "load_hate_speech", lambda **kw: posts)
    monkeypatch.setattr(text, "_hidden_size", lambda path: 8)  # a model of random 8-d embeddings
    monkeypatch.setattr(text.Embeddings, "_embed_texts", lambda self, texts: rng.normal(size=(len(texts), 8)).astype(
        np.float32))
    with pytest.warns(UserWarning, match="150 of the 150 posts"):
        env = gym.make("CtxBandit/HateSpeech-v0", max_posts=150, cache_dir=None)
    u = env.unwrapped
    assert len(u.y) == 150 and env.observation_space.shape == (2, 18)
    np.testing.assert_array_equal(u.y, (posts["hate_score"].to_numpy()[:150] > 0.5).astype(int))
    for obs, info, a, r, step in play(env, 200, policy=lambda t: t % 2):
        e = info["context"]
        assert e[-1] == 1.0 and np.linalg.norm(e[:-1]) == pytest.approx(1.0, abs=1e-5)
        hate = step["optimal_action"] == 1
        assert r == {(0, False): 1.0, (0, True): -0.5, (1, False): 0.5, (1, True): 0.5}[(a, hate)]
        assert step["regret"] == {(0, True): 1.0, (1, False): 0.5}.get((a, hate), 0.0)
        assert step["blocked"] == (a == 1) and step["published_hate"] == (hate and a == 0)


FIXTURES = Path(__file__).resolve().parents[2] / "data" / "fixtures" / "home"  # data/make_fixtures.py


def test_open_bandit_replay_on_the_real_log():
    """On obp's 10,000-event sample when the data home holds it, else on the 259-event fixture (20 of the 80 items)."""
    try:
        kwargs, env = {}, gym.make("CtxBandit/OpenBandit-v0")
    except datasets.DatasetNotFound:
        kwargs = {"data_path": str(FIXTURES), "check_size": False}
        env = gym.make("CtxBandit/OpenBandit-v0", **kwargs)
    u = env.unwrapped
    obs, _ = env.reset(seed=0)
    assert obs.shape == (5, 44) and env.observation_space.contains(obs)
    for t in range(min(300, len(u.logged) - 1)):  # the logged item is always one of the arms, at a random place
        e = u._order[u._t]
        assert u.logged[e] in u._candidates
        obs, r, term, trunc, info = env.step(0)
        assert info["accepted"] == (info["logged_action"] == 0)
    horizon = 200 if len(u.logged) > 2000 else 30
    table = run_job(Job(EnvSpec("CtxBandit/OpenBandit-v0", kwargs), AgentSpec("LinUCB"), 0, horizon))
    assert len(table) == horizon and table["regret"].isna().all()
    assert table["cum_reward"].iloc[-1] == table["reward"].sum()
    with pytest.raises(RuntimeError, match="log ran out"):
        run_job(Job(EnvSpec("CtxBandit/OpenBandit-v0", kwargs), AgentSpec("Random"), 0, 5000))


DATA_IDS = sorted(i for i in gym.registry if i.startswith("CtxBandit/") and gym.spec(i).entry_point.endswith(
    ("ClassificationEnv", "ClassTargetEnv", "HateSpeechEnv", "OpenBanditEnv")))


@pytest.mark.parametrize("env_id", DATA_IDS)
def test_absent_data_is_one_clear_error(env_id, tmp_path, monkeypatch):
    from gym_ctxbandits.datasets import _files

    monkeypatch.setattr(_files, "_packaged_dirs", lambda source: [])  # hide obp's / Debian's copies too
    classification.prepared.cache_clear()
    with pytest.raises(datasets.DatasetNotFound) as err:
        gym.make(env_id, data_home=tmp_path, download=False)
    message = str(err.value)
    assert "Files needed" in message and str(tmp_path) in message and "CTXBANDITS_DATA" in message


@pytest.mark.parametrize("env_id", sorted(i for i in gym.registry if i.startswith("CtxBandit/")))
def test_every_registered_id_makes_and_resets_with_its_defaults(env_id):
    """A loop over the registry with no arguments works, as Gymnasium users write it; an id whose real
    data is not at hand (the tests are offline) is skipped, naming the data."""
    try:
        env = gym.make(env_id)
    except datasets.DatasetNotFound as err:
        pytest.skip(f"{env_id} needs its dataset: {str(err).splitlines()[0][:200]}")
    obs, info = env.reset(seed=0)
    assert env.observation_space.contains(obs)
