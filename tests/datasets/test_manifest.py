"""The dataset manifest (gym_ctxbandits/datasets/manifest.toml, linked from data/datasets.toml)."""

import importlib.resources
import os
import re
import tomllib
from pathlib import Path

import pytest

from gym_ctxbandits import datasets
from gym_ctxbandits.datasets import manifest

ROOT = Path(__file__).resolve().parents[2]
REAL = Path(os.environ.get("CTXBANDITS_DATA") or "/nonexistent")


def test_manifest_ships_with_the_package_and_data_links_to_it():
    packaged = importlib.resources.files("gym_ctxbandits.datasets") / "manifest.toml"
    assert packaged.is_file() and Path(str(packaged)).resolve() == manifest.PATH.resolve()
    assert (ROOT / "data" / "datasets.toml").resolve() == manifest.PATH.resolve()
    with open(ROOT / "pyproject.toml", "rb") as f:
        package_data = tomllib.load(f)["tool"]["setuptools"]["package-data"]
    assert "manifest.toml" in package_data["gym_ctxbandits.datasets"]


def test_every_dataset_and_file_is_described():
    known = set(manifest.load())
    assert set(datasets.NAMES) | {"open-bandit", "davidson", "measuring-hate-speech"} == known
    for r in manifest.records():
        assert r.url or r.source, f"{r.path}: no url and no source"
        if r.url:
            assert r.url.rsplit("/", 1)[-1] == Path(r.path).name, "a download is saved under its URL's name"
        for digest in (r.sha256, r.content_sha256):
            assert digest is None or re.fullmatch("[0-9a-f]{64}", digest), r.path
        assert (r.size is None) == (r.sha256 is None), f"{r.path}: size and SHA-256 come together"
        assert r.rows is None or r.rows > 0


def test_loaders_take_their_sources_from_the_manifest():
    shuttle = manifest.source("shuttle")
    assert shuttle.folder == "uci/shuttle" and shuttle.files["train"] == ("shuttle.trn.csv", "shuttle.trn")
    assert set(shuttle.urls) == {"test"}
    assert datasets.tables.SOURCES["adult"] == manifest.source("adult")
    assert datasets.tables.ROWS["covtype.data"] == 581_012
    obd = manifest.source("open-bandit", behavior="bts", campaign="men")
    assert obd.folder == "obd/bts/men" and obd.files["events"] == ("men.csv",)
    assert obd.packaged == (("obp", "dataset/obd/bts/men"),)
    assert manifest.content_sha256("mnist")["t10k-labels-idx1-ubyte"].startswith("ff7bcfd4")


def test_verify_compares_with_the_listed_hash(tmp_path):
    assert manifest.verify(tmp_path / "unknown.csv") is None
    folder = tmp_path / "uci" / "adult"
    folder.mkdir(parents=True)
    (folder / "adult.data").write_text("39, State-gov\n")
    assert manifest.verify(folder / "adult.data") is False
    (folder / "magic04.data").write_text("1,2,g\n")
    assert manifest.verify(folder / "magic04.data") is None  # listed without a hash


def test_real_copies_match_the_manifest():
    present = [r for r in manifest.records() if r.sha256 and (REAL / r.path).is_file()]
    if not present:
        pytest.skip(f"no dataset file of the manifest in the data home {REAL} (set CTXBANDITS_DATA)")
    for r in present:
        assert (REAL / r.path).stat().st_size == r.size, r.path
        assert manifest.verify(REAL / r.path, r.dataset) is True, r.path
    sums = REAL / "SHA256SUMS"
    if sums.is_file():
        listed = dict(reversed(line.split(maxsplit=1)) for line in sums.read_text().splitlines() if line.strip())
        for r in present:
            assert listed[f"./{r.path}"] == r.sha256, r.path
