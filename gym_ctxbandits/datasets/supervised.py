"""Any supervised dataset as a `Dataset`: arrays, a local CSV or Parquet file, OpenML, PMLB, Hugging Face or scikit-learn.

    from gym_ctxbandits.datasets import supervised
    supervised.from_arrays(X, y)                                     # numpy or pandas
    supervised.load("iris.csv", label="species", sha256="9f2c...")   # a local .csv[.gz] or .parquet file
    supervised.load("openml:mushroom")                               # or "openml:24", an OpenML id
    supervised.load("pmlb:iris")                                     # a PMLB set (datasets.pmlb_sets() lists them)
    supervised.load("hf:scikit-learn/iris", label="Species")        # or "hf:<folder or file>", local
    supervised.load("sklearn:load_digits")                           # a scikit-learn loader
    supervised.iris()                                                # Fisher's iris, shipped with the package

The result has the shape of the real-data loaders' (`gym_ctxbandits.datasets.Dataset`): X float64 with
numeric (and boolean) columns as they are and every other column (strings, categories) as ordinal
codes of its categories (sorted, or a pandas categorical's own order; missing: NaN), flagged in
`categorical`; y the class index of each row into `classes`, the labels in sorted order (a pandas
categorical label, such as a Hugging Face ClassLabel, keeps its order). A missing numeric value
has no meaning the bandit could give it, so NaN or infinite numeric features are refused, as are
missing labels, X and y of different lengths and a single class: each with one line naming the fix.

Where the data comes from (`data_home`: the argument, else $CTXBANDITS_DATA, else ~/.cache/gym-ctxbandits):
- "openml:NAME" / "openml:ID": scikit-learn's `fetch_openml`, cached in <data home>/scikit_learn_data/openml
  (the layout of ~/scikit_learn_data, so a copy of that folder works offline); `label` defaults to
  the dataset's default target. fetch_openml checks OpenML's MD5 of the data file on every load
  and deletes a cached copy that fails it. Both forms work offline from that cache (download=False):
  an id needs its cached description, a name also its cached look-up (left by a first load by name).
- "pmlb:NAME": a Penn Machine Learning Benchmarks classification set, <data home>/pmlb/NAME/NAME.tsv.gz
  (PMLB's layout); when missing, downloaded there by the optional `pmlb` package and its SHA-256 recorded
  beside it, then checked on every read (`gym_ctxbandits.datasets.pmlb`); `label` defaults to "target".
- "hf:NAME": `datasets.load_dataset(NAME, split=split)` (split "train" by default; `label` defaults to
  "label"), cached in <data home>/huggingface. "hf:PATH" with a local PATH: a folder written by
  `save_to_disk` (`load_from_disk`), a folder of data files, or one .csv/.parquet/.json file.
- "sklearn:LOADER": a loader of `sklearn.datasets` that needs no argument (`load_digits`,
  `fetch_covtype`, ...), downloads cached in <data home>/scikit_learn_data; its target is the label.
- a local file: `label` names the label column; `sha256=` (optional) is checked against the file.
Downloads are off with `download=False` or $CTXBANDITS_OFFLINE=1: a copy must then be in the cache
(for a Hub name, `datasets` must be offline too: HF_HUB_OFFLINE=1), else a `DatasetNotFound`.
"""

from __future__ import annotations

import contextlib
import inspect
import re
import warnings
from pathlib import Path
from unittest import mock
from urllib.error import URLError

import numpy as np

from gym_ctxbandits.datasets import manifest, pmlb
from gym_ctxbandits.datasets._files import DatasetCorrupt, DatasetNotFound, offline
from gym_ctxbandits.datasets._files import data_home as home_of

FORMS = "a .csv or .parquet file path, openml:NAME or openml:ID, pmlb:NAME, hf:NAME or hf:PATH, or sklearn:LOADER"
HF_BUILDERS = {".csv": "csv", ".parquet": "parquet", ".json": "json", ".jsonl": "json"}
IRIS = Path(__file__).with_name("iris.csv")


def _one_line(err: Exception) -> str:
    """An exception as `Type: message` on one line (pandas and datasets write some on several)."""
    return f"{type(err).__name__}: {' '.join(str(err).split())}"


def _columns(columns) -> str:
    names = [str(c) for c in columns]
    return ", ".join(names[:40]) + (f", ... ({len(names)} columns)" if len(names) > 40 else "")


def from_arrays(X, y, name: str = "arrays"):
    """A `Dataset` of features X (n, d): numpy, scipy sparse or pandas, and labels y (n,) of any type."""
    import pandas as pd
    import scipy.sparse

    from gym_ctxbandits.datasets import Dataset

    if scipy.sparse.issparse(X):
        X = X.toarray()
    if not isinstance(X, pd.DataFrame):
        if np.ndim(X) != 2:
            raise ValueError(f"{name}: X must be 2-D (n examples, d features), got shape {np.shape(X)}")
        X = pd.DataFrame(X)
    if np.ndim(y) != 1:
        raise ValueError(f"{name}: y must be 1-D (one label per example), got shape {np.shape(y)}")
    if len(X) != len(y):
        raise ValueError(f"{name}: X has {len(X)} rows but y has {len(y)} labels; give one label per row")
    if X.shape[1] == 0:
        raise ValueError(f"{name}: X has no feature columns; give at least one")
    columns, categorical, bad = [], [], []
    for key in X.columns:
        col = X[key]
        if pd.api.types.is_numeric_dtype(col):
            values = col.to_numpy(np.float64, na_value=np.nan)
            if not np.isfinite(values).all():
                bad.append(str(key))
            columns.append(values)
            categorical.append(False)
            continue
        try:
            codes = col.astype("category").cat.codes.to_numpy()
        except TypeError as err:  # lists, dicts, images: not categories
            raise ValueError(f"{name}: column {key!r} holds {err}; drop it or turn it into numbers first") from None
        columns.append(np.where(codes < 0, np.nan, codes.astype(np.float64)))
        categorical.append(True)
    if bad:
        raise ValueError(f"{name}: X has NaN or infinite values in column(s) {_columns(bad)}; drop or impute them "
                         "first (DataFrame.dropna(), sklearn.impute.SimpleImputer)")
    y = y.reset_index(drop=True) if isinstance(y, pd.Series) else pd.Series(y)
    labels = y.cat.remove_unused_categories() if isinstance(y.dtype, pd.CategoricalDtype) else y.astype("category")
    codes = labels.cat.codes.to_numpy()
    if (codes < 0).any():
        rows = np.flatnonzero(codes < 0)
        raise ValueError(f"{name}: y has {len(rows)} missing label(s) (rows {', '.join(map(str, rows[:5]))}"
                         f"{', ...' if len(rows) > 5 else ''}); drop those rows first")
    classes = tuple(map(str, labels.cat.categories))
    if len(classes) < 2:
        raise ValueError(f"{name}: y has {len(classes)} class(es) {list(classes)}; a bandit needs at least 2 "
                         "classes (its arms): give data with two labels or more")
    return Dataset(name, np.column_stack(columns), codes.astype(np.int64), classes, tuple(map(str, X.columns)),
                   np.array(categorical, bool), name)


def iris():
    """Fisher's iris (150 flowers, 4 measurements in cm, 3 species), the file shipped beside this module.

    `Supervised-v0`'s default dataset: it ships with the package (no download, numpy only), so
    `gym.make("CtxBandit/Supervised-v0")` works on a bare install. The rows are scikit-learn's copy
    (`sklearn/datasets/data/iris.csv`, which corrects two values of UCI's file, as in Bezdek et al. 1999)
    with the species named, equal to `load("sklearn:load_iris")`.
    """
    from gym_ctxbandits.datasets import Dataset

    table = np.loadtxt(IRIS, delimiter=",", skiprows=1, dtype=str)
    classes, y = np.unique(table[:, -1], return_inverse=True)
    with open(IRIS) as f:
        names = tuple(f.readline().strip().split(",")[:-1])
    return Dataset("iris", table[:, :-1].astype(np.float64), y.astype(np.int64), tuple(map(str, classes)), names,
                   np.zeros(len(names), bool), str(IRIS))


def load(source: str, *, label: str | None = None, split: str | None = None, sha256: str | None = None,
         data_home=None, download: bool = True):
    """The `Dataset` of a source string (see the module docstring for the forms)."""
    if not isinstance(source, str) or not source:
        raise ValueError(f"source must be a string: {FORMS}; got {source!r}")
    prefix, _, rest = source.partition(":")
    if split is not None and prefix != "hf":
        raise ValueError(f"source {source!r}: split= applies to hf: sources only; leave it out")
    if prefix in LOADERS:
        if sha256 is not None:
            raise ValueError(f"source {source!r}: sha256= checks a local file; leave it out for {prefix}: sources")
        return LOADERS[prefix](source, rest, label=label, split=split, home=home_of(data_home),
                               download=download and not offline())
    path = Path(source).expanduser()
    if not path.exists():
        if re.match(r"^[A-Za-z][\w.+-]+:", source):
            raise ValueError(f"source {source!r}: unknown prefix {prefix + ':'!r}; give {FORMS}")
        raise DatasetNotFound(f"source {source!r}: no such file; give {FORMS}")
    return _file(source, path, label, sha256)


def _split_label(table, label: str, where: str):
    """The Dataset of a table whose column `label` holds the labels."""
    if label not in table.columns:
        raise ValueError(f"{where}: no label column {label!r}; pass label= one of its columns: {_columns(table.columns)}")
    return from_arrays(table.drop(columns=[label]), table[label], name=where)


def _file(source: str, path: Path, label: str | None, sha256: str | None):
    """A local CSV (also compressed) or Parquet file; its SHA-256 checked when `sha256` is given."""
    import pandas as pd

    suffixes = [s.lower() for s in path.suffixes]
    if path.is_dir() or not {".csv", ".parquet", ".pq"} & set(suffixes):
        raise ValueError(f"source {source!r}: not a .csv (or .csv.gz, ...) or .parquet file; give {FORMS}")
    if sha256 is not None:
        if not re.fullmatch(r"[0-9a-fA-F]{64}", str(sha256)):
            raise ValueError(f"sha256 must be 64 hexadecimal digits (e.g. the output of `sha256sum {path.name}`), "
                             f"got {sha256!r}")
        actual = manifest.sha256_of(path)
        if actual != sha256.lower():
            raise DatasetCorrupt(f"{path}: its SHA-256 is {actual}, not the sha256= given ({sha256}): the file "
                                 "changed or is another copy; use the right file, or pass its new hash")
    parquet = ".parquet" in suffixes or ".pq" in suffixes
    try:
        table = pd.read_parquet(path) if parquet else pd.read_csv(path)
    except (ValueError, OSError, EOFError) as err:  # pandas' ParserError is a ValueError; pyarrow's errors too
        kind = "Parquet" if parquet else "CSV"
        raise DatasetCorrupt(f"{path}: cannot be read as {kind} ({_one_line(err)}); check the file") from None
    if label is None:
        raise ValueError(f"source {source!r}: pass label= the label column, one of: {_columns(table.columns)}")
    return _split_label(table, label, str(path))


def _off() -> str:
    return "downloading is off ($CTXBANDITS_OFFLINE is set)" if offline() else "downloading is off (download=False)"


@contextlib.contextmanager
def _openml_cache_only():
    """fetch_openml without network access: it has no switch for that, so its module's `urlopen`
    refuses, as an unreachable network would (a cached copy is read without it)."""
    from sklearn.datasets import _openml

    def refuse(request, *args, **kwargs):
        raise URLError("downloading is off")

    with mock.patch.object(_openml, "urlopen", refuse), warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="A network error occurred")
        yield


def _openml(source: str, spec: str, *, label, split, home: Path, download: bool):
    """An OpenML dataset by name (its oldest active version) or id, through scikit-learn's fetch_openml."""
    from sklearn.datasets import fetch_openml
    from sklearn.datasets._openml import OpenMLError

    if not spec:
        raise ValueError(f"source {source!r}: give a dataset name or id after openml:, e.g. openml:mushroom or openml:24")
    key = {"data_id": int(spec)} if spec.isdigit() else {"name": spec}
    cache = home / "scikit_learn_data"
    options = {} if download else {"n_retries": 1, "delay": 1e-3}  # the refused download fails at once
    try:
        with contextlib.nullcontext() if download else _openml_cache_only():
            bunch = fetch_openml(**key, data_home=str(cache), target_column=None, as_frame=True, **options)
    except OpenMLError as err:
        raise DatasetNotFound(f"{source}: OpenML has no such dataset ({_one_line(err)}); check the name or id on "
                              "https://www.openml.org/search?type=data") from None
    except URLError as err:
        why = f"the download failed ({err.reason})" if download else _off()
        raise DatasetNotFound(f"{source}: not in the OpenML cache {cache / 'openml'} and {why}; run it once with "
                              "network access, or copy a scikit-learn cache (~/scikit_learn_data/openml) there, or "
                              "save the table as CSV and pass its path") from None
    except ValueError as err:
        if "md5" in str(err).lower():
            raise DatasetCorrupt(f"{source}: {_one_line(err)}") from None
        raise
    target = label or bunch.details.get("default_target_attribute")
    if not target or "," in target:
        raise ValueError(f"{source}: the dataset has no single default target ({target!r}); pass label= one of its "
                         f"columns: {_columns(bunch.frame.columns)}")
    return _split_label(bunch.frame, target, f"{source} (OpenML id {bunch.details['id']}, md5 "
                                             f"{bunch.details.get('md5_checksum')})")


def _hf(source: str, spec: str, *, label, split, home: Path, download: bool):
    """A Hugging Face dataset: a Hub name, or a local folder or file read by `datasets`."""
    import datasets as hf
    import pandas as pd

    if not spec:
        raise ValueError(f"source {source!r}: give a Hub name or a local path after hf:, e.g. hf:scikit-learn/iris")
    split = split or "train"
    path = Path(spec).expanduser()
    saved = path.is_dir() and ((path / "dataset_dict.json").exists() or (path / "state.json").exists())
    if path.is_file() and path.suffix.lower() not in HF_BUILDERS:
        raise ValueError(f"source {source!r}: give a folder or a {', '.join(HF_BUILDERS)} file")
    if not path.exists() and not download and not hf.config.HF_HUB_OFFLINE:
        raise DatasetNotFound(f"{source}: no local path of that name, and {_off()} for the Hugging Face Hub; set "
                              "HF_HUB_OFFLINE=1 to read the datasets cache, or save it once with save_to_disk and "
                              "pass hf:<that folder>")
    cache = str(home / "huggingface")
    try:
        if saved:
            data = hf.load_from_disk(str(path))
        elif path.is_file():
            data = hf.load_dataset(HF_BUILDERS[path.suffix.lower()], data_files=str(path), split=split, cache_dir=cache)
        else:  # a folder of data files, or a Hub name
            data = hf.load_dataset(spec, split=split, cache_dir=cache)
    except (ConnectionError, FileNotFoundError) as err:
        raise DatasetNotFound(f"{source}: {_one_line(err)}; check the name and the network, or give a local "
                              "path") from None
    if isinstance(data, hf.DatasetDict):
        if split not in data:
            raise ValueError(f"{source}: no split {split!r}; pass split= one of {list(data)}")
        data = data[split]
    label = label or "label"
    table = data.to_pandas()
    if isinstance(data.features.get(label), hf.ClassLabel):  # class indices -> names, in the ClassLabel's order
        table[label] = pd.Categorical.from_codes(table[label], data.features[label].names)
    return _split_label(table, label, source)


def _sklearn(source: str, spec: str, *, label, split, home: Path, download: bool):
    """A loader of sklearn.datasets that needs no argument; its target is the label."""
    import sklearn.datasets

    loader = getattr(sklearn.datasets, spec, None) if spec.startswith(("load_", "fetch_")) else None
    if spec == "fetch_openml":
        raise ValueError(f"source {source!r}: use openml:NAME or openml:ID for OpenML datasets")
    if loader is None:
        raise ValueError(f"source {source!r}: sklearn.datasets has no loader {spec!r}; e.g. sklearn:load_digits, "
                         "sklearn:load_iris, sklearn:load_wine, sklearn:fetch_covtype")
    params = inspect.signature(loader).parameters
    required = [n for n, p in params.items() if p.default is p.empty and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    if required:
        raise ValueError(f"source {source!r}: {spec} needs arguments ({', '.join(required)}); use a loader without, "
                         "e.g. sklearn:load_digits, or load the data yourself and pass X=, y=")
    if label is not None:
        raise ValueError(f"source {source!r}: the loader's target is the label; leave label= out")
    options = {"as_frame": True, "data_home": str(home / "scikit_learn_data"), "download_if_missing": download}
    try:
        bunch = loader(**{k: v for k, v in options.items() if k in params})
    except OSError as err:
        why = f"the download failed ({err})" if download else _off()
        raise DatasetNotFound(f"{source}: not in {home / 'scikit_learn_data'} and {why}; run it once with network "
                              "access") from None
    if bunch.get("target") is None:
        raise ValueError(f"source {source!r}: {spec} gives no target (labels); use a classification loader")
    return from_arrays(bunch.data, bunch.target, name=source)


def _pmlb(source: str, spec: str, *, label, split, home: Path, download: bool):
    """A PMLB classification set: its file in the data home, else downloaded by the `pmlb` package."""
    if not spec:
        raise ValueError(f"source {source!r}: give a PMLB set name after pmlb:, e.g. pmlb:iris "
                         "(gym_ctxbandits.datasets.pmlb_sets() lists them)")
    table, file = pmlb.read(spec, home, download)
    return _split_label(table, label or pmlb.LABEL, f"{source} ({file})")


LOADERS = {"openml": _openml, "pmlb": _pmlb, "hf": _hf, "sklearn": _sklearn}
