"""`gym_ctxbandits.datasets.supervised`: arrays and every source form, offline, with their errors.

OpenML runs through scikit-learn's real `fetch_openml` on a small OpenML cache this file writes
(the layout of ~/scikit_learn_data/openml, with the MD5 that OpenML's description gives); Hugging
Face through local files read by `datasets`; scikit-learn through `load_digits`, which it ships.
"""

import gzip
import hashlib
import io
import json

import numpy as np
import pandas as pd
import pytest

from gym_ctxbandits.datasets import DatasetCorrupt, DatasetNotFound, supervised


def test_arrays_encode_categories_and_sort_labels():
    X = pd.DataFrame({"size": [1.5, 2.0, 3.0, 4.0], "colour": ["red", "blue", None, "red"], "ok": [True, False] * 2})
    ds = supervised.from_arrays(X, np.array(["p", "e", "p", "e"]))
    assert ds.classes == ("e", "p") and ds.y.tolist() == [1, 0, 1, 0]
    assert ds.feature_names == ("size", "colour", "ok") and ds.categorical.tolist() == [False, True, False]
    np.testing.assert_array_equal(ds.X[:, 1], [1, 0, np.nan, 1])  # sorted categories, missing NaN
    np.testing.assert_array_equal(ds.X[:, 2], [1, 0, 1, 0])
    ordered = pd.Categorical(["lo", "hi", "lo", "hi"], categories=["lo", "mid", "hi"])
    assert supervised.from_arrays(np.eye(4), ordered).classes == ("lo", "hi")  # its order; unused dropped


@pytest.mark.parametrize("X, y, match", [
    (np.ones((3, 2)), [0, 1], "X has 3 rows but y has 2 labels"),
    (np.ones((3, 2)), [1, 1, 1], "1 class"),
    (np.array([[np.nan, 1.0], [2.0, np.inf]]), [0, 1], r"NaN or infinite values in column\(s\) 0, 1; drop or impute"),
    (np.ones(3), [0, 1, 0], "X must be 2-D"),
    (np.ones((2, 2)), np.ones((2, 2)), "y must be 1-D"),
    (np.ones((3, 2)), pd.Series(["a", None, "b"]), r"1 missing label\(s\) \(rows 1\); drop those rows"),
    (pd.DataFrame({"img": [[1, 2], [3]]}), [0, 1], "column 'img' holds unhashable"),
])
def test_bad_arrays_are_one_line_naming_the_fix(X, y, match):
    with pytest.raises(ValueError, match=match) as err:
        supervised.from_arrays(X, y)
    assert "\n" not in str(err.value)


@pytest.fixture
def table():
    rng = np.random.default_rng(0)
    return pd.DataFrame({"x": rng.normal(size=40), "cat": rng.choice(["a", "b"], 40), "class": rng.choice(["u", "v"], 40)})


@pytest.mark.parametrize("name", ["t.csv", "t.csv.gz", "t.parquet"])
def test_local_files_with_their_checksum(name, table, tmp_path):
    path = tmp_path / name
    table.to_parquet(path) if name.endswith("parquet") else table.to_csv(path, index=False)
    sha256 = hashlib.sha256(path.read_bytes()).hexdigest()
    ds = supervised.load(str(path), label="class", sha256=sha256)
    expected = supervised.from_arrays(table.drop(columns="class"), table["class"])
    np.testing.assert_array_equal(ds.X, expected.X)
    assert ds.classes == ("u", "v") and ds.y.tolist() == expected.y.tolist()
    with pytest.raises(DatasetCorrupt, match="its SHA-256 is .* not the sha256= given"):
        supervised.load(str(path), label="class", sha256="0" * 64)


def test_bad_sources_are_one_line_naming_the_fix(table, tmp_path):
    table.to_csv(tmp_path / "t.csv", index=False)
    (tmp_path / "bad.parquet").write_text("not parquet")
    cases = [
        (DatasetNotFound, "no such file; give a .csv or .parquet file path, openml:", str(tmp_path / "missing.csv")),
        (ValueError, "unknown prefix 'kaggle:'; give", "kaggle:titanic"),
        (ValueError, "pass label= the label column, one of: x, cat, class", str(tmp_path / "t.csv")),
        (ValueError, "no label column 'y'; pass label= one of its columns: x, cat, class", str(tmp_path / "t.csv"), "y"),
        (DatasetCorrupt, "cannot be read as Parquet", str(tmp_path / "bad.parquet"), "class"),
        (ValueError, "no loader 'load_digit'; e.g. sklearn:load_digits", "sklearn:load_digit"),
        (ValueError, "load_files needs arguments", "sklearn:load_files"),
    ]
    for error, match, source, *label in cases:
        with pytest.raises(error, match=match) as err:
            supervised.load(source, label=label[0] if label else None)
        assert "\n" not in str(err.value)
    with pytest.raises(ValueError, match="split= applies to hf: sources only"):
        supervised.load(str(tmp_path / "t.csv"), label="class", split="test")
    with pytest.raises(ValueError, match="sha256= checks a local file"):
        supervised.load("sklearn:load_digits", sha256="0" * 64)


def test_sklearn_loader():
    ds = supervised.load("sklearn:load_digits")
    assert ds.X.shape == (1797, 64) and ds.classes == tuple("0123456789") and np.bincount(ds.y).min() > 170


def test_sklearn_download_off_is_not_found(tmp_path):
    with pytest.raises(DatasetNotFound, match=r"not in .*scikit_learn_data and downloading is off \(\$CTXBANDITS_OFF"):
        supervised.load("sklearn:fetch_covtype", data_home=tmp_path)


def hf_table():
    import datasets as hf

    data = hf.Dataset.from_dict({"a": [0.5, 1.0, 2.0, 3.0], "label": [1, 0, 1, 0]})
    return data.cast_column("label", hf.ClassLabel(names=["spam", "ham"]))


def test_hugging_face_local_forms(table, tmp_path):
    import datasets as hf

    table.to_parquet(tmp_path / "t.parquet")
    ds = supervised.load(f"hf:{tmp_path / 't.parquet'}", label="class", data_home=tmp_path)
    assert ds.classes == ("u", "v") and ds.X.shape == (40, 2)
    hf_table().save_to_disk(tmp_path / "saved")
    ds = supervised.load(f"hf:{tmp_path / 'saved'}")
    assert ds.classes == ("spam", "ham") and ds.y.tolist() == [1, 0, 1, 0]  # the ClassLabel's order and names
    hf.DatasetDict({"train": hf_table(), "test": hf_table().select([0, 1])}).save_to_disk(tmp_path / "dict")
    assert len(supervised.load(f"hf:{tmp_path / 'dict'}", split="test").y) == 2
    with pytest.raises(ValueError, match=r"no split 'dev'; pass split= one of \['train', 'test'\]"):
        supervised.load(f"hf:{tmp_path / 'dict'}", split="dev")


def test_hugging_face_hub_name_offline(tmp_path, monkeypatch):
    import datasets as hf

    monkeypatch.setattr(hf.config, "HF_HUB_OFFLINE", False)  # only $CTXBANDITS_OFFLINE stands in the way
    with pytest.raises(DatasetNotFound, match="downloading is off .* for the Hugging Face Hub; set HF_HUB_OFFLINE"):
        supervised.load("hf:someone/some-data", data_home=tmp_path)
    monkeypatch.setattr(hf.config, "HF_HUB_OFFLINE", True)  # datasets itself offline: its cache only
    with pytest.raises(DatasetNotFound, match="hf:someone/some-data: ConnectionError"):
        supervised.load("hf:someone/some-data", data_home=tmp_path)


def openml_cache(home, data_id=4242, name="tinyshroom", rows=30):
    """An OpenML dataset in the scikit-learn cache of data home `home` (as fetch_openml writes it):
    its description (with the MD5 of the ARFF file), features, qualities, name look-up and data.
    Returns the frame it holds and the path of the cached data file."""
    rng = np.random.default_rng(1)
    frame = pd.DataFrame({"cap": rng.choice(["b", "f", "x"], rows), "width": rng.normal(size=rows).round(3),
                          "class": rng.choice(["e", "p"], rows)})
    frame.loc[3, "cap"] = None
    nominal = {c: sorted(frame[c].dropna().unique()) for c in ("cap", "class")}
    header = [f"@RELATION {name}"] + [f"@ATTRIBUTE {c} {{{','.join(nominal[c])}}}" if c in nominal
                                      else f"@ATTRIBUTE {c} NUMERIC" for c in frame.columns]
    lines = [",".join("?" if pd.isna(v) else str(v) for v in row) for row in frame.itertuples(index=False)]
    arff = "\n".join([*header, "@DATA", *lines]).encode() + b"\n"
    description = {"id": str(data_id), "name": name, "version": "1", "status": "active", "format": "ARFF",
                   "url": f"https://api.openml.org/data/v1/download/{data_id}/{name}.arff", "file_id": str(data_id),
                   "default_target_attribute": "class", "md5_checksum": hashlib.md5(arff).hexdigest(),
                   "description": "a test dataset"}
    features = [{"index": str(i), "name": c, "data_type": "nominal" if c in nominal else "numeric",
                 "is_target": str(c == "class").lower(), "is_ignore": "false", "is_row_identifier": "false",
                 "number_of_missing_values": str(int(frame[c].isna().sum()))} for i, c in enumerate(frame.columns)]
    root = home / "scikit_learn_data" / "openml" / "openml.org"
    files = {
        f"api/v1/json/data/{data_id}": {"data_set_description": description},
        f"api/v1/json/data/features/{data_id}": {"data_features": {"feature": features}},
        f"api/v1/json/data/qualities/{data_id}": {"data_qualities": {"quality": [
            {"name": "NumberOfInstances", "value": f"{rows}.0"}]}},
        f"api/v1/json/data/list/data_name/{name}/limit/2/status/active/": {"data": {"dataset": [
            {"did": data_id, "name": name, "version": 1, "status": "active", "format": "ARFF"}]}},
    }
    for path, content in files.items():
        (root / f"{path}.gz").parent.mkdir(parents=True, exist_ok=True)
        (root / f"{path}.gz").write_bytes(gzip.compress(json.dumps(content).encode()))
    data = root / f"data/v1/download/{data_id}/{name}.arff.gz"
    data.parent.mkdir(parents=True, exist_ok=True)
    data.write_bytes(gzip.compress(arff))
    return frame, data


@pytest.mark.parametrize("source", ["openml:tinyshroom", "openml:4242"])
def test_openml_from_its_cache_offline(source, tmp_path):
    frame, _ = openml_cache(tmp_path)
    ds = supervised.load(source, data_home=tmp_path)
    assert ds.classes == ("e", "p") and ds.y.tolist() == (frame["class"] == "p").astype(int).tolist()
    assert ds.categorical.tolist() == [True, False] and np.isnan(ds.X[3, 0])
    np.testing.assert_allclose(ds.X[:, 1], frame["width"])
    assert "md5" in ds.source
    with pytest.raises(ValueError, match=r"y has 1 missing label\(s\) \(rows 3\)"):  # label= picks the column
        supervised.load(source, data_home=tmp_path, label="cap")


def test_openml_md5_mismatch_is_never_used(tmp_path):
    _, data = openml_cache(tmp_path)
    data.write_bytes(gzip.compress(gzip.decompress(data.read_bytes()).replace(b",e\n", b",p\n", 1)))
    with pytest.warns(RuntimeWarning, match="Invalid cache"), pytest.raises(DatasetNotFound, match="downloading is off"):
        supervised.load("openml:4242", data_home=tmp_path)
    assert not data.exists()  # fetch_openml deleted the copy that failed OpenML's MD5


def test_openml_download_failing_its_md5_is_corrupt(tmp_path, monkeypatch):
    """Online, a copy that fails OpenML's MD5 is fetched again; a download failing it too is a DatasetCorrupt."""
    from sklearn.datasets import _openml

    _, data = openml_cache(tmp_path)
    bad = gzip.compress(gzip.decompress(data.read_bytes()).replace(b",e\n", b",p\n", 1))
    data.write_bytes(bad)

    class Response(io.BytesIO):  # what OpenML's server would send: the damaged file again
        def info(self):
            return {"Content-Encoding": "gzip"}

    monkeypatch.delenv("CTXBANDITS_OFFLINE")
    monkeypatch.setattr(_openml, "urlopen", lambda request, *args, **kwargs: Response(bad))
    with pytest.warns(RuntimeWarning, match="Invalid cache"), pytest.raises(DatasetCorrupt, match="md5 checksum"):
        supervised.load("openml:4242", data_home=tmp_path)


def test_openml_absent_offline_is_not_found(tmp_path):
    with pytest.raises(DatasetNotFound, match=r"not in the OpenML cache .* and downloading is off") as err:
        supervised.load("openml:mushroom", data_home=tmp_path)
    assert "\n" not in str(err.value)
