"""The `pmlb:NAME` source and `pmlb_sets()` (issue 49 item 3): the real PMLB files where the data home
holds them ($CTXBANDITS_DATA/pmlb, CI's copy), and, in a temporary data home, the download through the
optional `pmlb` package (a stand-in module: no network), its recorded SHA-256 and the one-line errors."""

import gzip
import os
import sys
import types
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from gym_ctxbandits.datasets import DatasetCorrupt, DatasetNotFound, pmlb, pmlb_sets, supervised
from gym_ctxbandits.datasets.manifest import sha256_of

SHARED = Path(os.environ.get("CTXBANDITS_DATA") or "$CTXBANDITS_DATA (unset)") / "pmlb"
needs_shared = pytest.mark.skipif(not (SHARED / "datasets.tsv").is_file(),
                                  reason=f"no folder {SHARED} of PMLB sets (set $CTXBANDITS_DATA to a data home holding pmlb/)")


def test_the_list_of_sets_and_their_sizes():
    sets = pmlb_sets()
    assert list(sets.columns) == ["name", "rows", "features", "classes"] and len(sets) == 164
    assert sets.name.is_unique and sets.rows.sum() == 1_198_896
    assert (sets.classes > 2).sum() == 70 and (sets.rows >= 1000).sum() == 69
    assert sets.set_index("name").loc["kddcup"].tolist() == [494_020, 41, 23]
    sets.loc[0, "rows"] = 0
    assert pmlb_sets().rows[0] != 0  # a fresh table every call


@needs_shared
def test_the_list_is_the_shared_folders():
    shared = pd.read_csv(SHARED / "datasets.tsv", sep="\t")
    pd.testing.assert_frame_equal(pmlb_sets(), shared[["name", "rows", "features", "classes"]])


@needs_shared
@pytest.mark.parametrize("name", ["parity5", "iris", "sleep", "analcatdata_authorship", "breast-cancer-wisconsin"])
def test_real_sets_have_the_listed_size_and_classes(name):
    """Rows, features and classes as listed; labels in numeric order (sleep has no class 4)."""
    size = pmlb_sets().set_index("name").loc[name]
    ds = supervised.load(f"pmlb:{name}")
    assert ds.X.shape == (size.rows, size.features) and len(ds.classes) == size.classes
    assert ds.X.dtype == np.float64 and not ds.categorical.any() and np.bincount(ds.y).min() > 0
    table = pd.read_csv(SHARED / name / f"{name}.tsv.gz", sep="\t")
    np.testing.assert_array_equal(ds.X, table.drop(columns="target").to_numpy(np.float64))
    np.testing.assert_array_equal(np.asarray(ds.classes, int)[ds.y], table["target"])
    assert ds.name == f"pmlb:{name} ({SHARED / name / name}.tsv.gz)"


def write_set(folder: Path, name: str, rows: int = 12, seed: int = 0) -> pd.DataFrame:
    """A small set in PMLB's format at folder/name/name.tsv.gz, as pmlb.fetch_data writes it."""
    rng = np.random.default_rng(seed)
    table = pd.DataFrame({"a": rng.normal(size=rows).round(4), "b": rng.integers(0, 5, rows),
                          "target": np.arange(rows) % 3})
    (folder / name).mkdir(parents=True, exist_ok=True)
    table.to_csv(folder / name / f"{name}.tsv.gz", sep="\t", index=False, compression="gzip")
    return table


@pytest.fixture
def home(tmp_path, monkeypatch):
    """An empty data home, and the digests' cache beside it rather than the user's."""
    monkeypatch.setenv("CTXBANDITS_CACHE", str(tmp_path / "cache"))
    return tmp_path / "home"


@pytest.fixture
def fake_pmlb(monkeypatch):
    """A stand-in `pmlb` package whose fetch_data writes a small set where the real one would; the calls
    it got are in `.calls`, and `.fail` makes the next fetch raise."""
    package = types.ModuleType("pmlb")
    package.classification_dataset_names = ["iris", "poker"]
    package.regression_dataset_names = ["1027_ESL"]
    package.calls, package.fail = [], None

    def fetch_data(name, return_X_y=False, local_cache_dir=None, dropna=True):
        package.calls.append((name, local_cache_dir))
        if package.fail is not None:
            raise package.fail
        return write_set(Path(local_cache_dir), name)

    package.fetch_data = fetch_data
    monkeypatch.setitem(sys.modules, "pmlb", package)
    monkeypatch.delenv("CTXBANDITS_OFFLINE")
    return package


def one_line(err) -> str:
    text = str(err.value)
    assert "\n" not in text
    return text


def test_a_download_is_recorded_and_checked_on_every_read(home, fake_pmlb):
    ds = supervised.load("pmlb:poker", data_home=home)  # listed by the package, not by SETS
    file = home / "pmlb" / "poker" / "poker.tsv.gz"
    assert ds.classes == ("0", "1", "2") and ds.X.shape == (12, 2) and fake_pmlb.calls[0][0] == "poker"
    record = file.with_name("poker.tsv.gz.sha256")
    assert record.read_text() == f"{sha256_of(file)}  poker.tsv.gz\n" and pmlb.path("poker", home) == file
    assert sorted(p.name for p in (home / "pmlb").iterdir()) == ["poker"]  # the temporary folder is gone
    supervised.load("pmlb:poker", data_home=home)
    assert len(fake_pmlb.calls) == 1  # read from the data home the second time
    changed = gzip.decompress(file.read_bytes()).replace(b"\t2\n", b"\t1\n", 1)
    file.write_bytes(gzip.compress(changed))
    with pytest.raises(DatasetCorrupt, match=r"poker.tsv.gz: its SHA-256 is \w+, not \w+ as recorded in "
                                             r"poker.tsv.gz.sha256 .* delete both files to download it again") as err:
        supervised.load("pmlb:poker", data_home=home)
    one_line(err)


def test_failed_downloads_are_not_found_and_leave_nothing(home, fake_pmlb):
    fake_pmlb.fail = OSError("Temporary failure in name resolution")
    with pytest.raises(DatasetNotFound, match=r"pmlb:iris: no .*iris.tsv.gz, and the download failed \(OSError: "
                                              "Temporary failure in name resolution\\); copy PMLB's") as err:
        supervised.load("pmlb:iris", data_home=home)
    one_line(err)
    fake_pmlb.fail = ValueError("Dataset not found in PMLB.")
    with pytest.raises(DatasetNotFound, match=r"could not fetch it \(Dataset not found in PMLB.\)"):
        supervised.load("pmlb:iris", data_home=home)
    assert not any((home / "pmlb").glob("**/*"))
    with pytest.raises(ValueError, match="one of PMLB's regression sets"):
        supervised.load("pmlb:1027_ESL", data_home=home)


def test_missing_sets_offline_or_without_the_package_name_the_path_and_the_fix(home, monkeypatch):
    with pytest.raises(DatasetNotFound, match=r"pmlb:iris: no .*home/pmlb/iris/iris.tsv.gz and downloading is off "
                                              r"\(\$CTXBANDITS_OFFLINE is set\); copy PMLB's iris.tsv.gz there") as err:
        supervised.load("pmlb:iris", data_home=home)
    one_line(err)
    monkeypatch.delenv("CTXBANDITS_OFFLINE")
    with pytest.raises(DatasetNotFound, match=r"downloading is off \(download=False\)"):
        supervised.load("pmlb:iris", data_home=home, download=False)
    monkeypatch.setitem(sys.modules, "pmlb", None)  # not installed
    with pytest.raises(DatasetNotFound, match="the optional package pmlb, which downloads it, is not installed; .*"
                                              r"pip install pmlb") as err:
        supervised.load("pmlb:iris", data_home=home)
    one_line(err)


@pytest.mark.parametrize("source, match", [
    ("pmlb:irsi", (r"pmlb:irsi: PMLB has no classification set of that name. Did you mean 'iris' or 'irish'\? "
                   r"gym_ctxbandits.datasets.pmlb_sets\(\) lists the 164 sets")),
    ("pmlb:", r"give a PMLB set name after pmlb:, e.g. pmlb:iris"),
    ("pmlb:../iris", r"pmlb:../iris: not a PMLB set name"),
])
def test_bad_names_are_one_line_value_errors(home, source, match):
    with pytest.raises(ValueError, match=match) as err:
        supervised.load(source, data_home=home)
    one_line(err)


def test_a_folder_of_ones_own_in_pmlb_layout_and_a_damaged_file(home):
    table = write_set(home / "pmlb", "my_set", rows=9)
    ds = supervised.load("pmlb:my_set", data_home=home)
    np.testing.assert_array_equal(ds.X, table[["a", "b"]].to_numpy(float))
    assert supervised.load("pmlb:my_set", data_home=home, label="b").classes == tuple(map(str, sorted(set(table.b))))
    file = home / "pmlb" / "my_set" / "my_set.tsv.gz"
    file.write_bytes(file.read_bytes()[:-20])  # cut short: no record to compare, gzip notices
    with pytest.raises(DatasetCorrupt, match="my_set.tsv.gz: cannot be read as PMLB's gzipped tab-separated table") as err:
        supervised.load("pmlb:my_set", data_home=home)
    one_line(err)


def test_results_of_a_pmlb_source_are_keyed_by_the_files_content(home):
    """A run's job key (jobs.job_inputs) holds the digest of the file a `pmlb:` source reads, so rows
    made from another copy of the set are never taken for this one's; an unknown set adds nothing."""
    from gym_ctxbandits.experiment import AgentSpec, EnvSpec
    from gym_ctxbandits.jobs import job_inputs

    write_set(home / "pmlb", "tiny")
    env = EnvSpec("CtxBandit/Supervised-v0", {"source": "pmlb:tiny", "data_home": str(home)})
    (where, digest), = job_inputs(env, AgentSpec("LinUCB"))
    assert where == str((home / "pmlb" / "tiny" / "tiny.tsv.gz").resolve())
    write_set(home / "pmlb", "tiny", seed=1)
    assert job_inputs(env, AgentSpec("LinUCB")) == ((where, sha256_of(Path(where))[:16]),) != ((where, digest),)
    assert job_inputs(EnvSpec("CtxBandit/Supervised-v0", {"source": "pmlb:absent"}), AgentSpec("LinUCB")) == ()
