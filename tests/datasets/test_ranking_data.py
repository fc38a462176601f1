"""The PBM loader of gym_ctxbandits.datasets.ranking: a tiny generated JSON in GRAB's format (KDD as is, Yandex
reduced to its 10 most attractive items and 5 most examined positions), the real files where the data home
holds them, and the errors of a missing or corrupt file."""

import json
import os
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import gym_ctxbandits  # noqa: F401  (registers the ids)
from gym_ctxbandits.datasets import DatasetCorrupt, DatasetNotFound
from gym_ctxbandits.datasets.ranking import load_pbm, pbm_queries

REAL = Path(os.environ.get("CTXBANDITS_DATA", "/nonexistent")) / "ranking"


@pytest.fixture
def tiny(tmp_path):
    """param_KDD.json with two queries, param_Yandex.json with one of 12 items and 6 positions."""
    kdd = {"19": {"thetas": [0.05, 0.03, 0.04, 0.02], "kappas": [1.0, 0.5, 0.3]},
           "2": {"thetas": [0.1, 0.2, 0.3], "kappas": [1.0, 0.4, 0.2]}}
    yandex = {"77": {"thetas": [0.01 * i for i in range(12)], "kappas": [0.2, 1.0, 0.5, 0.9, 0.1, 0.7]}}
    (tmp_path / "param_KDD.json").write_text(json.dumps(kdd))
    (tmp_path / "param_Yandex.json").write_text(json.dumps(yandex))
    return tmp_path


def test_kdd_as_is_by_index_or_query_id(tiny):
    first = load_pbm("kdd", 0, path=tiny)
    assert first.query == "19" and first.attractions.tolist() == [0.05, 0.03, 0.04, 0.02]
    assert first.kappas.tolist() == [1.0, 0.5, 0.3]
    assert load_pbm("kdd", "2", path=tiny).attractions.tolist() == load_pbm("kdd", 1, path=tiny).attractions.tolist()
    assert pbm_queries("kdd", path=tiny) == ["19", "2"]
    with pytest.raises(ValueError, match="index in \\[0, 2\\)"):
        load_pbm("kdd", 2, path=tiny)
    with pytest.raises(ValueError, match="no query '5'"):
        load_pbm("kdd", "5", path=tiny)


def test_yandex_keeps_the_10_most_attractive_items_and_5_most_examined_positions(tiny):
    p = load_pbm("yandex", path=tiny)
    assert p.attractions.tolist() == pytest.approx([0.01 * i for i in range(11, 1, -1)])
    assert p.kappas.tolist() == [1.0, 0.9, 0.7, 0.5, 0.2]


def test_env_from_a_local_path_and_the_std_setting(tiny):
    env = gym.make("CtxBandit/PBMKDD-v0", query=1, data_path=str(tiny / "param_KDD.json"))
    env.reset(seed=0)
    assert env.unwrapped.attractions.tolist() == [0.1, 0.2, 0.3] and env.unwrapped.query == "2"
    assert env.step(np.array([2, 1, 0]))[4]["regret"] == 0.0
    std = load_pbm("std")
    assert std.kappas.tolist() == [1, 0.75, 0.6, 0.3, 0.1] and len(std.attractions) == 10


def test_fitted_values_above_one_are_clipped(tmp_path):
    (tmp_path / "param_Yandex.json").write_text('{"q": {"thetas": [2.5, 0.3, 0.2, 0.1, 0.05, 0.04], "kappas": [1.0]}}')
    assert load_pbm("yandex", path=tmp_path).attractions.tolist() == [1.0, 0.3, 0.2, 0.1, 0.05, 0.04]


def test_missing_file_names_it_and_where_to_put_it(tmp_path):
    with pytest.raises(DatasetNotFound, match=r"param_Yandex.json or param_Yandex.txt not found .*"
                                              r"data/param_Yandex.txt from https://github.com/gaudel/ranking_bandits"):
        load_pbm("yandex", data_home=tmp_path)


@pytest.mark.parametrize("content, match", [
    ("{not json", "is not the JSON"),
    ("{}", "holds no query"),
    ('{"1": {"thetas": [0.1, -0.2], "kappas": [1.0]}}', "not probabilities"),
    ('{"1": {"thetas": [0.1, NaN], "kappas": [1.0]}}', "not probabilities"),
    ('{"1": {"thetas": [0.1]}}', "lacks 'thetas' or 'kappas'"),
    ('{"1": {"thetas": [0.1], "kappas": [1.0, 0.5]}}', "more positions"),
])
def test_corrupt_file_is_refused(tmp_path, content, match):
    (tmp_path / "param_KDD.json").write_text(content)
    with pytest.raises(DatasetCorrupt, match=match):
        load_pbm("kdd", path=tmp_path)


@pytest.mark.parametrize("setting, name, queries, positions", [("kdd", "param_KDD.json", 8, 3),
                                                               ("yandex", "param_Yandex.json", 60, 5)])
def test_real_files(setting, name, queries, positions):
    if not (REAL / name).is_file():
        pytest.skip(f"{name} is not in $CTXBANDITS_DATA/ranking/ (from gaudel/ranking_bandits, data/)")
    assert len(pbm_queries(setting)) == queries
    for q in range(queries):
        p = load_pbm(setting, q)
        assert len(p.kappas) == positions and len(p.attractions) >= positions
    env = gym.make(f"CtxBandit/PBM{'KDD' if setting == 'kdd' else 'Yandex'}-v0")
    env.reset(seed=0)
    assert env.unwrapped.num_positions == positions
