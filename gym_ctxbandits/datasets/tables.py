"""The UCI (and KEEL) tables: Shuttle, Mushroom, Adult, Covertype, MAGIC, Banknote, Phoneme.

Each parser returns the rows in file order with numeric columns as floats, categorical columns
as ordinal codes in sorted category order (missing `?` as NaN), and the label as a class index.
"""

from __future__ import annotations

import numpy as np

from gym_ctxbandits.datasets import manifest
from gym_ctxbandits.datasets._files import corrupt, locate, parse_checked

# The 40 soil types of Covertype in UCI's order, by their ELU codes (covtype.info).
SOIL_CODES = (2702, 2703, 2704, 2705, 2706, 2717, 3501, 3502, 4201, 4703, 4704, 4744, 4758, 5101, 5151, 6101, 6102,
              6731, 7101, 7102, 7103, 7201, 7202, 7700, 7701, 7702, 7709, 7710, 7745, 7746, 7755, 7756, 7757, 7790,
              8703, 8707, 8708, 8771, 8772, 8776)
WILDERNESS = ("Rawah", "Neota", "Comanche Peak", "Cache la Poudre")
ADULT_COLUMNS = ("age", "workclass", "fnlwgt", "education", "education-num", "marital-status", "occupation",
                 "relationship", "race", "sex", "capital-gain", "capital-loss", "hours-per-week", "native-country")

TABLES = ("shuttle", "mushroom", "adult", "covertype", "magic", "banknote", "phoneme")
# Where each table's files live and how to get them (manifest.toml).
SOURCES = {name: manifest.source(name) for name in TABLES}
# Rows of the canonical complete files (checked unless check_size=False, for deliberately smaller copies).
ROWS = {file: n for name in TABLES for file, n in manifest.rows(name).items()}


def _read_csv(path, check_size: bool, columns: int, **kwargs):
    """A pandas table of `path` with `columns` columns, every row complete; else DatasetCorrupt."""
    import pandas as pd

    try:
        table = pd.read_csv(path, skipinitialspace=True, **kwargs)
    except (ValueError, OSError, EOFError) as err:  # pandas' ParserError is a ValueError
        raise corrupt(path, f"cannot be parsed as CSV ({err})") from None
    table = table.dropna(how="all")
    if table.shape[1] != columns:
        raise corrupt(path, f"has {table.shape[1]} columns; expected {columns}")
    expected = ROWS.get(path.name.removesuffix(".gz"))
    if check_size and expected and len(table) != expected:
        raise corrupt(path, f"has {len(table)} rows; the complete file has {expected} (truncated? pass "
                            "check_size=False for a deliberately smaller copy)")
    return table


def _codes(column):
    """Ordinal codes of a categorical column (sorted categories), NaN for missing."""
    import pandas as pd

    cat = pd.Categorical(column.astype("string").str.strip().replace("?", pd.NA))
    return np.where(cat.codes < 0, np.nan, cat.codes.astype(np.float64))


def _labels(path, values, expected: set[str] | None = None):
    """Class indices and names (sorted) of a label column, checking the label set when known."""
    names = np.asarray(values).astype(str)
    names = np.char.strip(names)
    classes = tuple(sorted(set(names.tolist())))
    if expected is not None and not set(classes) <= expected:
        raise corrupt(path, f"has labels {classes}; expected a subset of {sorted(expected)}")
    return np.searchsorted(np.array(classes), names).astype(np.int64), classes


def _numeric(path, table, label: int, expected_labels=None):
    """A table of numbers with the label in column `label`."""
    import pandas as pd

    features = table.drop(columns=table.columns[label])
    X = features.apply(pd.to_numeric, errors="coerce")
    if X.isna().to_numpy().any():
        raise corrupt(path, "has non-numeric feature values")
    y, classes = _labels(path, table.iloc[:, label], expected_labels)
    return X.to_numpy(np.float64), y, classes, tuple(map(str, features.columns))


def parse(name: str, paths: dict, check_size: bool = True, split: str = "all"):
    """(X, y, classes, feature names, categorical mask) of a UCI table from its files."""
    if name == "shuttle":
        parts = [paths[s] for s in (("train", "test") if split == "all" else (split,))]
        tables = [_read_csv(p, check_size, 10, header=None, sep=r"[\s,]+", engine="python") for p in parts]
        X, y, classes, cols = _numeric(parts[0], __import__("pandas").concat(tables), 9, set("1234567"))
        return X, y, classes, tuple(f"A{i + 1}" for i in range(9)), np.zeros(9, bool)
    if name == "mushroom":
        p = paths["data"]
        with open(p) as f:
            has_header = not f.readline().startswith(("e,", "p,"))
        table = _read_csv(p, check_size, 23, header=0 if has_header else None)
        y, classes = _labels(p, table.iloc[:, 0], {"e", "p"})
        X = np.column_stack([_codes(table.iloc[:, j]) for j in range(1, 23)])
        names = tuple(map(str, table.columns[1:])) if has_header else tuple(f"A{j}" for j in range(1, 23))
        return X, y, classes, names, np.ones(22, bool)
    if name == "adult":
        import pandas as pd

        parts = [_read_csv(paths[s], check_size, 15, header=None, comment="|") for s in ("train", "test")]
        table = pd.concat(parts, ignore_index=True)
        labels = table.iloc[:, 14].astype(str).str.strip().str.rstrip(".")
        y, classes = _labels(paths["train"], labels, {"<=50K", ">50K"})
        categorical = np.array([table[j].dtype.kind not in "if" for j in range(14)])
        X = np.column_stack([_codes(table[j]) if categorical[j] else table[j].to_numpy(np.float64) for j in range(14)])
        return X, y, classes, ADULT_COLUMNS, categorical
    if name == "covertype":
        return _covertype(paths, check_size)
    if name == "magic":
        p = paths["data"]
        table = _read_csv(p, check_size, 11, header=0 if p.suffix == ".csv" else None)
        X, y, classes, cols = _numeric(p, table, 10, {"g", "h"})
        return X, y, classes, cols, np.zeros(10, bool)
    if name in ("banknote", "phoneme"):
        p = paths["data"]
        width = 5 if name == "banknote" else 6
        table = _read_csv(p, check_size, width, header=None, comment="@")
        X, y, classes, _ = _numeric(p, table, width - 1, {"0", "1"})
        return X, y, classes, tuple(f"x{i}" for i in range(width - 1)), np.zeros(width - 1, bool)
    raise ValueError(f"no UCI parser for {name!r}")


def _covertype(paths: dict, check_size: bool):
    """Covertype as UCI's 54 features (10 numeric, 4 wilderness and 40 soil indicators), label 1-7."""
    import pandas as pd

    names = [f"f{i}" for i in range(10)] + [f"wilderness_{i}" for i in range(4)] + [f"soil_{i}" for i in range(40)]
    if "full" in paths:
        table = _read_csv(paths["full"], check_size, 55, header=None)
        X, y, classes, _ = _numeric(paths["full"], table, 54, set("1234567"))
        return X, y, classes, tuple(names), np.zeros(54, bool)
    tables = [_read_csv(paths[r], check_size, 13) for r in ("subset_a", "subset_b")]
    table = pd.concat(tables, ignore_index=True)
    p = paths["subset_a"]
    wild = table.iloc[:, 10].astype(str).str.replace("Commanche", "Comanche")
    soil = table.iloc[:, 11].to_numpy()
    if not wild.isin(WILDERNESS).all() or not np.isin(soil, SOIL_CODES).all():
        raise corrupt(p, "has wilderness areas or soil codes outside UCI's lists")
    onehot_w = (wild.to_numpy()[:, None] == np.array(WILDERNESS)[None]).astype(np.float64)
    onehot_s = (soil[:, None] == np.array(SOIL_CODES)[None]).astype(np.float64)
    numeric = table.iloc[:, :10].apply(pd.to_numeric, errors="coerce")
    if numeric.isna().to_numpy().any():
        raise corrupt(p, "has non-numeric feature values")
    y, classes = _labels(p, table.iloc[:, 12], set("1234567"))
    X = np.hstack([numeric.to_numpy(np.float64), onehot_w, onehot_s])
    return X, y, classes, tuple(names), np.zeros(54, bool)


def load_table(name: str, path=None, data_home=None, download: bool = True, check_size: bool = True,
               split: str = "all"):
    """(X, y, classes, feature names, categorical mask, source) of the UCI dataset `name`."""
    source = SOURCES[name]
    if name == "shuttle" and split not in ("all", "train", "test"):
        raise ValueError(f"split of shuttle must be 'all', 'train' or 'test', got {split!r}")
    if name == "shuttle":
        roles = ["train", "test"] if split == "all" else [split]
    elif name == "adult":
        roles = ["train", "test"]
    elif name == "covertype":
        try:  # the original file first, then the two-file subset
            paths, fresh = locate(source, ["full"], path, data_home, download=False)
        except FileNotFoundError:
            try:
                paths, fresh = locate(source, ["subset_a", "subset_b"], path, data_home, download=False)
            except FileNotFoundError:
                paths, fresh = locate(source, ["full"], path, data_home, download)
        out = parse_checked(paths, fresh, lambda p: parse(name, p, check_size), name if check_size else None)
        return (*out, str(next(iter(paths.values())).parent))
    else:
        roles = ["data"]
    paths, fresh = locate(source, roles, path, data_home, download)
    out = parse_checked(paths, fresh, lambda p: parse(name, p, check_size, split), name if check_size else None)
    return (*out, str(paths[roles[0]].parent))
