"""The loaders on small files in the real formats (made here), their errors, and the real copies."""

import gzip
import hashlib
import os
import re
import shutil
import struct
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from gym_ctxbandits import datasets
from gym_ctxbandits.datasets import DatasetCorrupt, DatasetNotFound, _files

REAL = Path(os.environ.get("CTXBANDITS_DATA", "/nonexistent"))


def write_idx(path: Path, array: np.ndarray, compress=True):
    header = struct.pack(">BBBB", 0, 0, 8, array.ndim) + b"".join(struct.pack(">I", n) for n in array.shape)
    data = header + array.astype(np.uint8).tobytes()
    path.parent.mkdir(parents=True, exist_ok=True)
    (gzip.open if compress else open)(path, "wb").write(data)
    return data


@pytest.fixture(autouse=True)
def offline(monkeypatch, tmp_path):
    """No test touches the network or the user's data home. `fetch` itself is replaced, so the
    download paths run (with fakes) despite the suite's $CTXBANDITS_OFFLINE."""
    def refuse(url, target):
        raise OSError("network disabled in tests")
    monkeypatch.setattr(_files, "fetch", refuse)
    monkeypatch.setenv("CTXBANDITS_DATA", str(tmp_path / "empty-home"))
    monkeypatch.delenv("CTXBANDITS_OFFLINE", raising=False)


def test_idx_images_through_path_and_data_home(tmp_path, monkeypatch):
    rng = np.random.default_rng(0)
    images, labels = rng.integers(0, 256, (50, 28, 28)), rng.integers(0, 10, 50)
    write_idx(tmp_path / "mnist" / "train-images-idx3-ubyte.gz", images)
    write_idx(tmp_path / "mnist" / "train-labels-idx1-ubyte", labels, compress=False)  # plain IDX too
    ds = datasets.load("mnist", path=tmp_path, check_size=False)
    assert ds.X.shape == (50, 784) and ds.X.dtype == np.float64 and ds.y.dtype == np.int64
    np.testing.assert_array_equal(ds.X, images.reshape(50, 784))
    np.testing.assert_array_equal(ds.y, labels)
    assert ds.classes == tuple("0123456789") and not ds.categorical.any()
    monkeypatch.setenv("CTXBANDITS_DATA", str(tmp_path))
    np.testing.assert_array_equal(datasets.load("mnist", check_size=False).y, labels)
    np.testing.assert_array_equal(datasets.load("mnist", data_home=tmp_path, check_size=False).y, labels)
    # the canonical name without check_size=False: the published archive's checksum (and 60,000 images)
    with pytest.raises(DatasetCorrupt, match="train-images-idx3-ubyte.gz: its SHA-256"):
        datasets.load("mnist", path=tmp_path)
    (tmp_path / "mnist" / "train-images-idx3-ubyte.gz").unlink()
    write_idx(tmp_path / "mnist" / "train-images-idx3-ubyte", images, compress=False)  # decompressed: no byte hash
    with pytest.raises(DatasetCorrupt, match="train-images-idx3-ubyte: its content does not match"):
        datasets.load("mnist", path=tmp_path)


def test_idx_corruption_is_caught(tmp_path):
    folder = tmp_path / "mnist"
    data = write_idx(folder / "t10k-images-idx3-ubyte.gz", np.zeros((20, 28, 28)))
    write_idx(folder / "t10k-labels-idx1-ubyte.gz", np.zeros(20))
    load = lambda: datasets.load("mnist", split="test", path=tmp_path, check_size=False)  # noqa: E731
    load()
    with gzip.open(folder / "t10k-images-idx3-ubyte.gz", "wb") as f:
        f.write(data[:-100])                                       # fewer pixels than the header says
    with pytest.raises(DatasetCorrupt, match="truncated"):
        load()
    (folder / "t10k-images-idx3-ubyte.gz").write_bytes(gzip.compress(data)[:-30])  # a cut-off download
    with pytest.raises(DatasetCorrupt, match="cannot be read"):
        load()
    with gzip.open(folder / "t10k-images-idx3-ubyte.gz", "wb") as f:
        f.write(b"\0\0\x0d\x03" + data[4:])                        # floats, not bytes
    with pytest.raises(DatasetCorrupt, match="magic"):
        load()


def test_known_content_checksum_rejects_a_different_file(tmp_path):
    # A well-formed 10,000-image file that is not MNIST's test set.
    write_idx(tmp_path / "t10k-images-idx3-ubyte.gz", np.zeros((10_000, 28, 28)))
    write_idx(tmp_path / "t10k-labels-idx1-ubyte.gz", np.zeros(10_000))
    with pytest.raises(DatasetCorrupt, match="SHA-256"):
        datasets.load("mnist", split="test", path=tmp_path)


def test_missing_data_names_files_source_and_place(tmp_path):
    with pytest.raises(DatasetNotFound) as err:
        datasets.load("shuttle", data_home=tmp_path)
    message = str(err.value)
    assert "shuttle.trn.csv" in message and "shuttle.tst.csv" in message
    assert str(tmp_path / "uci" / "shuttle") in message and "CTXBANDITS_DATA" in message
    assert "archive.ics.uci.edu" in message
    with pytest.raises(DatasetNotFound, match="download failed .*network disabled"):
        datasets.load("banknote", data_home=tmp_path)
    with pytest.raises(DatasetNotFound, match="does not exist"):
        datasets.load("mushroom", path=tmp_path / "nowhere")
    with pytest.raises(ValueError, match="unknown dataset"):
        datasets.load("iris")


def test_offline_switch_turns_every_download_off(tmp_path, monkeypatch):
    def fake_fetch(url, target):
        raise AssertionError(f"no download when offline: {url}")

    monkeypatch.setattr(_files, "fetch", fake_fetch)
    monkeypatch.setenv("CTXBANDITS_OFFLINE", "1")
    with pytest.raises(DatasetNotFound, match=r"downloading is off \(\$CTXBANDITS_OFFLINE"):
        datasets.load("banknote", data_home=tmp_path)
    with pytest.raises(DatasetNotFound, match="downloading is off"):
        datasets.load_hate_speech(corpus="measuring", data_home=tmp_path)


def test_download_is_checked_and_a_bad_one_is_not_kept(tmp_path, monkeypatch):
    good = "\n".join(f"{i * 0.1},{-i * 0.2},{i % 3},{0.5},{i % 2}" for i in range(30)) + "\n"
    payload = {"data": good}

    def fake_fetch(url, target):
        assert url.startswith("https://archive.ics.uci.edu/")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(payload["data"])
        return target

    monkeypatch.setattr(_files, "fetch", fake_fetch)
    ds = datasets.load("banknote", data_home=tmp_path, check_size=False)
    assert ds.X.shape == (30, 4) and ds.classes == ("0", "1")
    assert (tmp_path / "uci" / "banknote" / "data_banknote_authentication.txt").exists()  # cached
    payload["data"] = "1,2,3\n4,5,6\n"                              # wrong format
    with pytest.raises(DatasetCorrupt, match="columns"):
        datasets.load("banknote", data_home=tmp_path / "other", check_size=False)
    assert not list((tmp_path / "other").rglob("*.txt")), "a download that fails its checks is deleted"


def test_uci_tables_parse_categoricals_and_missing(tmp_path):
    rows = ["edibility," + ",".join(f"a{j}" for j in range(22))]
    for i in range(40):
        values = ["xyz"[(i + j) % 3] for j in range(22)]
        values[10] = "?" if i % 5 == 0 else values[10]
        rows.append(("e" if i % 2 else "p") + "," + ",".join(values))
    (tmp_path / "agaricus-lepiota.data").write_text("\n".join(rows) + "\n")
    ds = datasets.load("mushroom", path=tmp_path, check_size=False)
    assert ds.X.shape == (40, 22) and ds.categorical.all() and ds.classes == ("e", "p")
    assert np.isnan(ds.X[::5, 10]).all() and not np.isnan(np.delete(ds.X, 10, axis=1)).any()
    assert set(np.unique(ds.X[:, 0])) == {0.0, 1.0, 2.0}            # x, y, z in sorted order
    np.testing.assert_array_equal(ds.y, [0 if i % 2 else 1 for i in range(40)])
    with pytest.raises(DatasetCorrupt, match="agaricus-lepiota.data: its SHA-256"):
        datasets.load("mushroom", path=tmp_path)                     # not the published file


def test_adult_joins_train_and_test_and_strips_the_dot(tmp_path):
    line = "39, State-gov, 77516, Bachelors, 13, Never-married, Adm-clerical, Not-in-family, White, Male, 0, 0, 40, {}, {}"
    (tmp_path / "adult.data").write_text("\n".join(line.format("United-States", "<=50K") for _ in range(5)) + "\n")
    (tmp_path / "adult.test").write_text("|1x3 Cross validator\n" + line.format("?", ">50K.") + "\n")
    ds = datasets.load("adult", path=tmp_path, check_size=False)
    assert ds.X.shape == (6, 14) and ds.classes == ("<=50K", ">50K") and ds.y.tolist() == [0] * 5 + [1]
    assert ds.categorical.sum() == 8 and np.isnan(ds.X[5, 13]) and ds.X[0, 0] == 39


def test_covertype_subset_is_one_hot_again(tmp_path):
    header = ("Elevation,Aspect,Slope,Horizontal_Distance_To_Hydrology,Vertical_Distance_To_Hydrology,"
              "Horizontal_Distance_To_Roadways,Hillshade_9am,Hillshade_Noon,Hillshade_3pm,"
              "Horizontal_Distance_To_Fire_Points,Wilderness_Area,Soil_Type,Cover_Type")
    a = [header, "2891,159,8,270,0,1832,229,242,145,1332,Commanche Peak,7756,5"]
    b = [header, "3543,81,33,395,41,2546,242,161,21,3770,Rawah,2702,7"]
    (tmp_path / "covertype_testing_gcp.csv").write_text("\n".join(a) + "\n")
    (tmp_path / "covertype_validate_gcp.csv").write_text("\n".join(b) + "\n")
    ds = datasets.load("covertype", path=tmp_path, check_size=False)
    assert ds.X.shape == (2, 54) and ds.classes == ("5", "7")
    assert ds.X[0, 10 + 2] == 1 and ds.X[0, 10:14].sum() == 1        # Comanche Peak is wilderness area 3
    assert ds.X[0, 14 + 31] == 1 and ds.X[1, 14 + 0] == 1 and ds.X[:, 14:].sum() == 2  # soil 32 (7756), 1 (2702)


def test_open_bandit_and_davidson_formats(tmp_path):
    folder = tmp_path / "obd" / "random" / "all"
    folder.mkdir(parents=True)
    items = pd.DataFrame({"item_id": range(3), "item_feature_0": [0.1, 0.2, 0.3], "item_feature_1": ["a", "b", "a"]})
    items.to_csv(folder / "item_context.csv")
    events = pd.DataFrame({"timestamp": ["t"] * 4, "item_id": [0, 2, 1, 0], "position": [1, 2, 3, 1],
                           "click": [0, 1, 0, 0], "propensity_score": [1 / 3] * 4,
                           "user_feature_0": ["u", "v", "u", "w"],
                           **{f"user-item_affinity_{i}": [0.0, 1.0, 0.0, 2.0] for i in range(3)}})
    events.to_csv(folder / "all.csv")
    with pytest.raises(DatasetCorrupt, match="all.csv: its SHA-256"):
        datasets.load_open_bandit(path=tmp_path)                    # not the published log
    obd = datasets.load_open_bandit(path=tmp_path, check_size=False)
    assert obd.events.shape == (4, 9) and len(obd.items) == 3
    events.drop(columns="user-item_affinity_2").to_csv(folder / "all.csv")
    with pytest.raises(DatasetCorrupt, match="affinity"):
        datasets.load_open_bandit(path=tmp_path, check_size=False)
    with pytest.raises(DatasetNotFound, match="research.zozo.com"):  # no copy of the "men" campaign
        datasets.load_open_bandit(campaign="men", path=tmp_path)
    table = pd.DataFrame({"count": [3, 3, 4], "hate_speech": [2, 0, 1], "offensive_language": [1, 3, 3],
                          "neither": [0, 0, 0], "class": [0, 1, 1], "tweet": ["a", "b", "c"]})
    table.to_csv(tmp_path / "labeled_data.csv")
    posts = datasets.load_hate_speech(corpus="davidson", path=tmp_path, check_size=False)
    np.testing.assert_allclose(posts["hate_score"], [2 / 3, 0, 0.25])
    assert posts["text"].tolist() == ["a", "b", "c"]


REAL_SHAPES = {  # the copies CI keeps in $CTXBANDITS_DATA (their README lists these shapes)
    "shuttle": ((58_000, 9), [45586, 50, 171, 8903, 3267, 10, 13]),
    "mushroom": ((8124, 22), [4208, 3916]),
    "adult": ((48_842, 14), None),
    "covertype": ((100_000, 54), None),
    "magic": ((19_020, 10), None),
    "banknote": ((1372, 4), None),
    "phoneme": ((5404, 5), None),
}


@pytest.mark.parametrize("name", sorted(REAL_SHAPES))
def test_real_tables(name):
    try:
        ds = datasets.load(name, data_home=REAL)
    except DatasetNotFound:
        pytest.skip(f"{name} is not in the data home {REAL} (set CTXBANDITS_DATA)")
    shape, counts = REAL_SHAPES[name]
    assert ds.X.shape == shape and len(ds.y) == shape[0]
    if counts:
        assert np.bincount(ds.y).tolist() == counts


def test_real_mnist_and_open_bandit():
    try:
        test = datasets.load("mnist", split="test", data_home=REAL)
        subset = datasets.load("mnist", split="subset5k", data_home=REAL)
        obd = datasets.load_open_bandit(data_home=REAL)
    except DatasetNotFound:
        pytest.skip(f"MNIST / OBD are not in the data home {REAL} (set CTXBANDITS_DATA)")
    assert test.X.shape == (10_000, 784) and test.X.max() == 255
    assert np.bincount(subset.y).tolist() == [500] * 10
    assert obd.events.shape == (10_000, 89) and len(obd.items) == 80


def test_measuring_hate_speech_local_copy_is_aggregated_per_comment(tmp_path):
    folder = tmp_path / "hate" / "measuring"
    folder.mkdir(parents=True)
    pd.DataFrame({"comment_id": [7, 7, 3, 3, 3], "text": ["b", "b", "a", "a", "a"],
                  "hate_speech_score": [1.0, 0.2, -1.0, -2.0, 0.0], "annotator_id": range(5)}).to_parquet(
        folder / "measuring_hate_speech.parquet")
    posts = datasets.load_hate_speech(path=tmp_path, download=False)
    assert posts["text"].tolist() == ["a", "b"]
    np.testing.assert_allclose(posts["hate_score"], [-1.0, 0.6])


# -- a damaged copy of a real file is never used ---------------------------------------------------
def _real_files():
    """(dataset, path in the data home, split) of every real file with a listed SHA-256 that a loader
    reads, once per path (an original and its known copy share one; MNIST's train labels alone cannot
    be loaded: no train images here)."""
    from gym_ctxbandits.datasets import manifest

    roles = {r.path: r.role for r in manifest.records() if r.role}   # copies take their file's role
    cases = {}
    for r in manifest.records():
        role = roles.get(r.path)
        if not r.sha256 or r.dataset not in ("mnist", "open-bandit", "davidson", *datasets.tables.TABLES) \
                or role == "train-labels" or REAL.is_dir() and not (REAL / r.path).is_file():
            continue  # (files the data home does not hold are left out; without one, each case skips)
        split = {"test-images": "test", "test-labels": "test", "subset5k": "subset5k"}.get(role)
        cases[r.path] = (r.dataset, r.path, split)
    return list(cases.values())


@pytest.mark.parametrize("damage", ["byte", "cut"])
@pytest.mark.parametrize("dataset, relpath, split", _real_files(), ids=lambda v: str(v).rsplit("/", 1)[-1])
def test_a_damaged_real_file_is_named_and_never_used(tmp_path, dataset, relpath, split, damage):
    original = REAL / relpath
    if not original.exists():
        pytest.skip(f"real data not present: {relpath} (set $CTXBANDITS_DATA)")
    folder = tmp_path / "copy"
    shutil.copytree(original.parent, folder)
    target = folder / original.name
    data = bytearray(target.read_bytes())
    if damage == "byte":
        data[len(data) // 2] ^= 0x01                              # one flipped bit
    else:
        data = data[: data.index(b"\n", len(data) // 2) + 1] if b"\n" in data[len(data) // 2:] else data[: len(data) // 2]
    target.write_bytes(bytes(data))
    with pytest.raises(DatasetCorrupt, match=re.escape(str(target))):
        if dataset == "open-bandit":
            behavior, campaign = Path(relpath).parts[1:3]
            datasets.load_open_bandit(behavior=behavior, campaign=campaign, path=folder)
        elif dataset == "davidson":
            datasets.load_hate_speech(corpus="davidson", path=folder)
        else:
            datasets.load(dataset, path=folder, **({"split": split} if split else {}))


# -- the published checksums of the original layouts, checked on the real copies ------------------
def _original_layouts():
    """UCI's own files, rebuilt byte for byte from the shared copies: {dataset: {file name: bytes}}.
    How each shared copy differs from UCI's file is what the manifest says of it."""
    def read(rel):
        return (REAL / rel).read_bytes()

    return {
        "shuttle": {"shuttle.trn": read("uci/shuttle/shuttle.trn.csv").replace(b",", b" ") + b"\n",
                    "shuttle.tst": read("uci/shuttle/shuttle.tst.csv").replace(b",", b" ")},
        "mushroom": {"agaricus-lepiota.data": read("uci/mushroom/agaricus-lepiota.data").split(b"\n", 1)[1] + b"\n"},
        "adult": {"adult.data": read("uci/adult/adult.data"),
                  "adult.test": b"|1x3 Cross validator\n" + read("uci/adult/adult.test")},
        "banknote": {"data_banknote_authentication.txt": read("uci/banknote/banknote_authentication.csv")},
    }


@pytest.mark.parametrize("dataset", ["shuttle", "mushroom", "adult", "banknote"])
def test_published_checksums_of_the_original_files_hold(tmp_path, monkeypatch, dataset):
    """The SHA-256 (and MD5) published for UCI's own files, which the downloads fetch, are those of
    the shared copies turned back into UCI's layout: such a file passes the loader's checks, and a
    copy with one byte changed does not."""
    from gym_ctxbandits.datasets import manifest

    if not (REAL / "uci" / "shuttle" / "shuttle.trn.csv").is_file():
        pytest.skip(f"real data not present in {REAL} (set $CTXBANDITS_DATA)")
    monkeypatch.setenv("CTXBANDITS_CACHE", str(tmp_path / "cache"))
    folder = tmp_path / "original"
    folder.mkdir()
    for name, data in _original_layouts()[dataset].items():
        (folder / name).write_bytes(data)
        (listed,) = [r for r in manifest.records(dataset) if r.role and Path(r.path).name == name]  # the file, not a copy
        assert hashlib.sha256(data).hexdigest() == listed.sha256, name
        assert listed.md5 is None or hashlib.md5(data).hexdigest() == listed.md5, name
        assert listed.size is None or len(data) == listed.size, name
    shape = REAL_SHAPES[dataset][0]
    assert datasets.load(dataset, path=folder).X.shape == shape
    name, data = next(iter(_original_layouts()[dataset].items()))
    damaged = tmp_path / "damaged"
    shutil.copytree(folder, damaged)
    data = bytearray(data)
    data[len(data) // 2] ^= 0x01
    (damaged / name).write_bytes(bytes(data))
    with pytest.raises(DatasetCorrupt, match=re.escape(str(damaged / name))):
        datasets.load(dataset, path=damaged)


def test_debians_fashion_mnist_is_a_known_copy(tmp_path, monkeypatch):
    """Debian's re-compressed Fashion-MNIST (the packaged folder the loader searches) is listed as a
    known copy of the original archives, so it still loads with the byte checks on."""
    debian = Path("/usr/share/datasets/fashion-mnist")
    if not (debian / "t10k-images-idx3-ubyte.gz").is_file():
        pytest.skip("Debian's dataset-fashion-mnist is not installed")
    from gym_ctxbandits.datasets import manifest

    monkeypatch.setenv("CTXBANDITS_CACHE", str(tmp_path / "cache"))
    for f in sorted(debian.glob("*-ubyte.gz")):
        assert manifest.verify(f, "fashion-mnist") is True, f
    ds = datasets.load("fashion-mnist", split="test", data_home=tmp_path / "empty")
    assert ds.X.shape == (10_000, 784) and np.bincount(ds.y).tolist() == [1000] * 10
