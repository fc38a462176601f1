"""The dataset manifest (gym_ctxbandits/datasets/manifest.toml, linked from data/datasets.toml)."""

import copy
import hashlib
import importlib.resources
import json
import os
import re
import tomllib
from pathlib import Path

import pytest

from gym_ctxbandits import datasets
from gym_ctxbandits.datasets import DatasetCorrupt, _files, manifest

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
        assert r.size is None or r.checksum, f"{r.path}: a size without a hash"
        assert r.size is None or (isinstance(r.size, int) and r.size > 0), r.path
        assert r.rows is None or r.rows > 0


HASH_LENGTHS = {"sha256": 64, "content_sha256": 64, "md5": 32}


def test_listed_hashes_are_well_formed_hex():
    """Every sha256 / content_sha256 / md5 of every file and copy is "" (none known) or lowercase hex of
    its algorithm's length; no other hash field is used (the loaders would ignore it)."""
    checked = 0
    for name, table in manifest.load().items():
        for entry in [*table.get("files", ()), *table.get("copies", ())]:
            where = f"{name}: {entry.get('name') or entry.get('path')}"
            for key, value in entry.items():
                if key in HASH_LENGTHS:
                    assert isinstance(value, str), f"{where}: {key} is not a string"
                    assert value == "" or re.fullmatch(f"[0-9a-f]{{{HASH_LENGTHS[key]}}}", value), \
                        f"{where}: {key} = {value!r} is not {HASH_LENGTHS[key]} lowercase hex digits"
                    checked += bool(value)
                else:
                    assert not re.search("sha|md5|hash|crc", key), f"{where}: unknown checksum field {key!r}"
    assert checked > 60
    # the same digest is never listed for two different files
    digests = [(r.sha256 or r.md5) for r in manifest.records() if r.checksum]
    shared = {d for d in digests if digests.count(d) > 1}
    # banknote's shared CSV is UCI's file under another name
    assert shared == {"d0539aaed2139ba7a587b3e34fb345ce503ff7d5d33dbf9912d8e195ce425cb9"}, shared


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
    (folder / "phoneme.dat").write_text("@relation phoneme\n1,2,3,4,5,0\n")
    assert manifest.verify(folder / "phoneme.dat") is None   # listed without a hash
    (folder / "magic04.data").write_text("1,2,g\n")
    assert manifest.verify(folder / "magic04.data") is False  # a published SHA-256, no size
    assert manifest.expected_checksums(folder / "magic04.data") == {
        ("sha256", "e9314b7ebd4b4b59a3b3d65f7316663963777b16a46786877651dbbaa640b36a")}


def test_originals_and_known_copies_are_both_accepted(tmp_path):
    """A file name can have several known copies: the published original (what the URL downloads)
    and byte-wise different copies of the same data (the shared re-compressed MNIST archives,
    Debian's Fashion-MNIST, the shared Mushroom with a header row). Each one is accepted."""
    t10k = manifest.expected_checksums(tmp_path / "mnist" / "t10k-labels-idx1-ubyte.gz", "mnist")
    assert t10k == {("sha256", "f7ae60f92e00ec6debd23a6088c31dbd2371eca3ffa0defaefb259924204aec6"),   # original
                    ("sha256", "fc607395669ec21321ea83e4b82c0544b7e8e63ff5b34337c06bc0a17cc0da3c")}   # shared copy
    debian = manifest.expected_checksums("/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz",
                                         "fashion-mnist")
    assert len(debian) == 2 and all(algorithm == "sha256" for algorithm, _ in debian)
    mushroom = manifest.expected_checksums(tmp_path / "agaricus-lepiota.data")   # any folder
    assert len(mushroom) == 2
    # the Open Bandit samples of the two behaviours share a file name: the place decides
    assert len(manifest.expected_checksums(tmp_path / "obd" / "bts" / "all" / "all.csv")) == 1


def test_real_copies_match_the_manifest():
    """Every file of the shared data folder that the manifest knows is one of the copies it lists at
    that path, byte for byte (size and SHA-256, the same as the folder's SHA256SUMS)."""
    by_path: dict[str, list] = {}
    for r in manifest.records():
        if r.sha256 and (REAL / r.path).is_file():
            by_path.setdefault(r.path, []).append(r)
    if not by_path:
        pytest.skip(f"no dataset file of the manifest in the data home {REAL} (set CTXBANDITS_DATA)")
    sums = REAL / "SHA256SUMS"
    listed = {}
    if sums.is_file():
        listed = dict(reversed(line.split(maxsplit=1)) for line in sums.read_text().splitlines() if line.strip())
    for path, recs in by_path.items():
        digest = manifest.sha256_of(REAL / path)
        match = [r for r in recs if r.sha256 == digest]
        assert match, f"{path}: the copy in {REAL} is none of the copies the manifest lists"
        assert all(r.size in (None, (REAL / path).stat().st_size) for r in match), path
        assert manifest.verify(REAL / path, recs[0].dataset) is True, path
        if listed:
            assert listed[f"./{path}"] == digest, path


def test_a_file_listed_with_an_md5_only_is_verified(tmp_path, monkeypatch):
    """Where a source publishes only an MD5, the loaders check the MD5: the listed file loads, a copy
    with one byte changed is a DatasetCorrupt naming it, and a download that fails it is deleted.
    (A manifest whose banknote entry lists only the MD5 of a small file made here.)"""
    monkeypatch.setenv("CTXBANDITS_CACHE", str(tmp_path / "cache"))
    good = "".join(f"{i * 0.5},{-i * 0.25},{i % 3},{0.5},{i % 2}\r\n" for i in range(30)).encode()
    table = copy.deepcopy(manifest.load())
    entry = next(f for f in table["banknote"]["files"] if f["name"] == "data_banknote_authentication.txt")
    entry.update(sha256="", size="", md5=hashlib.md5(good).hexdigest(), rows=30)
    monkeypatch.setattr(manifest, "load", lambda: table)
    monkeypatch.setitem(datasets.tables.ROWS, "data_banknote_authentication.txt", 30)

    folder = tmp_path / "good"
    folder.mkdir()
    (folder / "data_banknote_authentication.txt").write_bytes(good)
    assert manifest.expected_checksums(folder / "data_banknote_authentication.txt", "banknote") == {
        ("md5", hashlib.md5(good).hexdigest())}
    assert manifest.verify(folder / "data_banknote_authentication.txt", "banknote") is True
    assert datasets.load("banknote", path=folder).X.shape == (30, 4)

    damaged = tmp_path / "damaged"
    damaged.mkdir()
    target = damaged / "data_banknote_authentication.txt"
    target.write_bytes(good.replace(b"7.5", b"7.6", 1))              # one byte changed, same size
    assert target.stat().st_size == len(good)
    with pytest.raises(DatasetCorrupt, match=re.escape(f"{target}: its MD5 is none of those")):
        datasets.load("banknote", path=damaged)
    assert datasets.load("banknote", path=damaged, check_size=False).X.shape == (30, 4)  # deliberately

    def fake_fetch(url, target):                                     # a download that is not the file
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(good[:-2])
        return target

    monkeypatch.setattr(_files, "fetch", fake_fetch)
    monkeypatch.delenv("CTXBANDITS_OFFLINE", raising=False)
    home = tmp_path / "home"
    with pytest.raises(DatasetCorrupt, match="data_banknote_authentication.txt: its MD5"):
        datasets.load("banknote", data_home=home)
    assert not list(home.rglob("*.txt")), "a download that fails its MD5 is deleted"


def test_hash_cache_remembers_each_algorithm(tmp_path, monkeypatch):
    """Digests are remembered by size and mtime with their algorithm; an entry of the older format
    (a bare SHA-256) still counts, and a changed file is hashed again."""
    monkeypatch.setenv("CTXBANDITS_CACHE", str(tmp_path / "cache"))
    f = tmp_path / "x.bin"
    f.write_bytes(b"abc")
    md5, sha = hashlib.md5(b"abc").hexdigest(), hashlib.sha256(b"abc").hexdigest()
    assert manifest.digests_of(f, ("md5",)) == {"md5": md5}
    assert manifest.digests_of(f, ("sha256", "md5")) == {"sha256": sha, "md5": md5}
    cache = json.loads((tmp_path / "cache" / "sha256.json").read_text())
    stat = f.stat()
    assert cache[str(f.resolve())] == [stat.st_size, stat.st_mtime_ns, {"md5": md5, "sha256": sha}]
    # an older entry holds a bare SHA-256 (here a made-up one, to see that it is used)
    cache[str(f.resolve())] = [stat.st_size, stat.st_mtime_ns, "0" * 64]
    (tmp_path / "cache" / "sha256.json").write_text(json.dumps(cache))
    assert manifest.sha256_of(f) == "0" * 64
    f.write_bytes(b"abcd")                                           # another size: hashed again
    assert manifest.sha256_of(f) == hashlib.sha256(b"abcd").hexdigest()
    with pytest.raises(ValueError, match="unknown hash algorithm"):
        manifest.digests_of(f, ("sha1",))
