"""Classification datasets turned into bandits: [S0] App. F.2, [S2] section 7, [S3] section 5.2 and [S1] section 5.2.

Two protocols:

* `SupervisedEnv` (`Supervised-v0`: any dataset, from arrays or a source string) and its thin
  variant `ClassificationEnv` (one id per dataset of the papers): each round one example x of the
  dataset arrives; arm k is the disjoint block encoding x^(k) = [0, .., x, .., 0] in R^{K d}
  (block k holds x) and pays 1 when k is the example's class, 0 otherwise.
* `ClassTargetEnv` (`MNISTTarget-v0`, `FashionMNISTTarget-v0`): each round K
  examples are the arms; an example of the target class c pays Ber(0.75), any other Ber(0.25).

The papers prepare the data differently; `preset` picks one paper's preparation and every
choice is also its own kwarg (an explicit kwarg wins over the preset). `Supervised-v0` without a
preset (None, its default) scales each column min-max to [-1, 1] and then rows to unit length
("minmax-l2", `TABULAR`), encodes other columns one-hot and adds no noise:

| preset | scaling | categorical columns | missing | noise | MNIST image | source |
|---|---|---|---|---|---|---|
| "S0" (default of the named ids) | L2 rows | ordinal codes | -1 | none | 28x28 | [S0]/[S3] authors' code, docs/papers.md S0-A3 |
| "S3" | L2 rows | ordinal codes | -1 | N(0, 0.1^2) | 28x28 | [S3] App. F.2, S3-A2, S3-A13 (std 0.1) |
| "S2" | min-max per feature to [-1, 1] | random value in [-1, 1] per category | 0 | none | 14x14 (196-d) | [S2] App. A, S2-A2 |
| "cb-bakeoff" | none (raw features) | one-hot | 0 | none | 28x28 | Bietti, Agarwal, Langford 2021 (below) |

Examples are drawn i.i.d. (uniformly, with replacement) from the episode's generator
(`stream="iid"`, the default): the stationary contextual bandit of the papers' analyses. The [S3]
code instead walks once through a copy shuffled with a fixed seed; for T much smaller than the
dataset the two streams have the same law up to repeats. `stream="pass"` is the Contextual Bandit
Bake-off's stream (Bietti, Agarwal, Langford 2021, JMLR 22(133); its scripts shuffle each dataset
once and Vowpal Wabbit reads it once): one pass over a random permutation of the rows, drawn from
the episode's generator at reset, so each seed is another order; every row comes exactly once in n
rounds. The horizon T (`max_episode_steps`, where the episode truncates as for every env) must be at
most n: T < n plays the order's first T rows, T = n the whole pass (the Bake-off's horizon), and a
step after the pass is a ValueError naming the fix, in the single and the vector env alike. The
dataset itself is the instance: it is the same for every seed.

Rewards: 1 for the true class and 0 otherwise (`cost_encoding="-1/0"`, the default: the Bake-off's
-1/0 cost encoding, cost = -reward), or 0 for the true class and -1 otherwise (`cost_encoding="0/1"`,
its 0/1 encoding, Vowpal Wabbit's `--cbify` default); the regret is the same under both. The
"cb-bakeoff" preset is the Bake-off's protocol: the pass stream, the -1/0 encoding, and the
features as it fed them. Its learners saw each action's copy of x in features of their own (VW's
`--cbify K --cb_explore_adf` copies the example once per action, offsetting the hashed feature
indices by the action): that is the disjoint block encoding every env here uses, up to hash
collisions and VW's constant feature (an intercept per action, not added here). It did not scale
the features (VW's default updates are normalized per feature): `scaling="none"`.
"""

from __future__ import annotations

import functools

import numpy as np

from gym_ctxbandits.envs.core import CtxBanditEnv, check_float, check_int
from gym_ctxbandits.envs.schedule import (
    change_point_info,
    check_change_points,
    segment_of,
)

PRESETS = {
    "S0": {"scaling": "l2", "categorical": "ordinal", "missing_value": -1.0, "noise_std": 0.0, "image_size": 28},
    "S3": {"scaling": "l2", "categorical": "ordinal", "missing_value": -1.0, "noise_std": 0.1, "image_size": 28},
    "S2": {"scaling": "minmax", "categorical": "random", "missing_value": 0.0, "noise_std": 0.0, "image_size": 14},
    "cb-bakeoff": {"scaling": "none", "categorical": "onehot", "missing_value": 0.0, "noise_std": 0.0,
                   "stream": "pass", "cost_encoding": "-1/0"},
}
# Supervised-v0's preparation of your data when no preset is named: each column min-max scaled to
# [-1, 1], so that no column drowns the others as under L2 rows alone, then rows to unit length, the
# linear agents' feature bound (docs/datasets.md measures the choices).
TABULAR = {"scaling": "minmax-l2", "categorical": "onehot", "missing_value": 0.0, "noise_std": 0.0}
SCALINGS = ("l2", "minmax", "minmax-l2", "minmax-row", "pixels", "none")
CATEGORICAL = ("ordinal", "onehot", "random")
IMAGE_DATASETS = ("mnist", "fashion-mnist")
STREAMS = ("iid", "pass")
# cost_encoding -> (reward of the true class, reward of any other): reward = -cost (module docstring)
COST_ENCODINGS = {"-1/0": (1.0, 0.0), "0/1": (0.0, -1.0)}


def _pool_images(X: np.ndarray, size: int) -> np.ndarray:
    """28x28 images (rows of 784) averaged over blocks down to size x size ([S2]'s resize)."""
    if 28 % size:
        raise ValueError(f"image_size must divide 28 (28, 14, 7, 4, 2 or 1), got {size}")
    b = 28 // size
    return X.reshape(len(X), size, b, size, b).mean(axis=(2, 4)).reshape(len(X), size * size)


def _categorical(X: np.ndarray, mask: np.ndarray, how: str, seed: int) -> np.ndarray:
    """Categorical columns (ordinal codes, NaN = missing) as codes, one-hot blocks or random values."""
    if how == "ordinal" or not mask.any():
        return X
    rng = np.random.default_rng(seed)
    columns = []
    for j in range(X.shape[1]):
        col = X[:, j]
        if not mask[j]:
            columns.append(col[:, None])
            continue
        codes = np.nan_to_num(col, nan=-1).astype(np.int64)
        levels = int(codes.max()) + 1
        if how == "onehot":  # a missing value is the all-zero block
            block = np.zeros((len(col), levels))
            ok = codes >= 0
            block[np.flatnonzero(ok), codes[ok]] = 1.0
            columns.append(block)
        else:  # [S2] App. A: each category mapped to a random value in [-1, 1]
            values = rng.uniform(-1.0, 1.0, levels)
            columns.append(np.where(codes >= 0, values[np.maximum(codes, 0)], np.nan)[:, None])
    return np.concatenate(columns, axis=1)


def _scale(X: np.ndarray, how: str) -> np.ndarray:
    """Row or column scaling of the feature matrix (see the module table)."""
    if how == "l2":
        norms = np.linalg.norm(X, axis=1, keepdims=True)
        return X / np.where(norms > 0, norms, 1.0)
    if how == "minmax-l2":
        return _scale(_scale(X, "minmax"), "l2")
    if how in ("minmax", "minmax-row"):
        axis = 0 if how == "minmax" else 1
        lo, hi = X.min(axis=axis, keepdims=True), X.max(axis=axis, keepdims=True)
        span = hi - lo
        return np.where(span > 0, 2.0 * (X - lo) / np.where(span > 0, span, 1.0) - 1.0, 0.0)
    if how == "pixels":
        return X / 255.0
    return X


def prepare(X: np.ndarray, categorical_mask: np.ndarray, y: np.ndarray, scaling: str, categorical: str,
            missing_value: float, category_seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(features float32, labels int64), read-only: categorical columns encoded, missing values filled, scaled."""
    X = _categorical(np.asarray(X, dtype=np.float64), np.asarray(categorical_mask, bool), categorical, category_seed)
    X = _scale(np.where(np.isnan(X), missing_value, X), scaling)
    X, y = X.astype(np.float32), np.asarray(y, dtype=np.int64)
    X.flags.writeable = False
    y.flags.writeable = False
    return X, y


@functools.lru_cache(maxsize=8)
def prepared(dataset: str, data_path, data_home, split, download: bool, scaling: str, categorical: str,
             missing_value: float, image_size: int, category_seed: int, check_size: bool = True):
    """(features float32, labels int64, class names) of a named dataset prepared as asked; cached per process."""
    from gym_ctxbandits import datasets

    options = {} if split is None else {"split": split}
    ds = datasets.load(dataset, path=data_path, data_home=data_home, download=download, check_size=check_size,
                       **options)
    X = np.asarray(ds.X, dtype=np.float64)
    if dataset in IMAGE_DATASETS and image_size != 28:
        X = _pool_images(X, image_size)
    mask = np.asarray(ds.categorical, bool) if dataset not in IMAGE_DATASETS else np.zeros(X.shape[1], bool)
    return (*prepare(X, mask, ds.y, scaling, categorical, missing_value, category_seed), tuple(ds.classes))


def _preset(preset: str | None) -> dict:
    """The choices of a paper's preset, or TABULAR for None."""
    if preset is not None and preset not in PRESETS:
        raise ValueError(f"preset must be one of {tuple(PRESETS)} or None, got {preset!r}")
    return TABULAR if preset is None else PRESETS[preset]


def _choice(value, name: str, options: tuple[str, ...]) -> str:
    if value not in options:
        raise ValueError(f"{name} must be one of {options}, got {value!r}")
    return value


class _DatasetEnv(CtxBanditEnv):
    """Shared set-up of the dataset bandits: the preset's choices, and the data prepared once, in the constructor."""

    def _options(self, preset, scaling, categorical, missing_value) -> None:
        """The preparation asked for: each choice from its kwarg, else from the preset (None: TABULAR)."""
        p = _preset(preset)
        self.scaling = _choice(p["scaling"] if scaling is None else scaling, "scaling", SCALINGS)
        self.categorical = _choice(p["categorical"] if categorical is None else categorical, "categorical", CATEGORICAL)
        self.missing_value = check_float("missing_value", p["missing_value"] if missing_value is None else missing_value,
                                         minimum=-np.inf)

    def _load(self, dataset, data_path, data_home, split, download, preset, scaling, categorical, missing_value,
              image_size, category_seed, check_size=True):
        """Load and prepare a named dataset of `gym_ctxbandits.datasets` (cached per process, keyed by the
        resolved data home, so a changed $CTXBANDITS_DATA is never answered from another folder's copy)."""
        from gym_ctxbandits.datasets import _files

        self._options(preset, scaling, categorical, missing_value)
        self.dataset = str(dataset)
        self.image_size = check_int("image_size", _preset(preset).get("image_size", 28) if image_size is None
                                    else image_size)
        self.X, self.y, self.classes = prepared(
            self.dataset, None if data_path is None else str(data_path), str(_files.data_home(data_home)),
            split, bool(download), self.scaling, self.categorical, self.missing_value, self.image_size,
            check_int("category_seed", category_seed, minimum=0), bool(check_size))

    def _feature_bound(self) -> float:
        bounded = self.scaling in ("l2", "minmax", "minmax-l2", "minmax-row", "pixels")
        return 1.0 if bounded else float(np.abs(self.X).max())


class ExampleStreamEnv(CtxBanditEnv):
    """One example (x, c) of a fixed set a round, arms in the disjoint block encoding, means payoff[c].

    The shared math of the classification and moderation bandits: arm k is x^(k) = [0, .., x, .., 0]
    in R^{K d}; its expected reward is payoff[c, k]. Subclasses set `X` (n, d) float32, `y` (n,)
    and `payoff` (C, K), then call `super().__init__`.
    """

    X: np.ndarray
    y: np.ndarray
    payoff: np.ndarray
    random_instance = False  # the dataset is the instance

    def draw_instance(self, rng):
        return {}

    def draw_round(self, rng, instance, t=0):
        return {"row": np.array(rng.integers(len(self.y)))}

    def round_arrays(self, instances, rounds):
        x = self.X[rounds["row"]]  # (N, d)
        n, k, d = len(x), self.num_arms, self.X.shape[1]
        features = np.zeros((n, k, k, d), np.float32)
        features[:, np.arange(k), np.arange(k)] = x[:, None, :]
        return features.reshape(n, k, k * d), self.payoff[self._labels(instances, rounds)], None

    def _labels(self, instances, rounds) -> np.ndarray:
        """The (N,) classes that pay this round: the examples' own (SupervisedEnv's relabel= moves them)."""
        return self.y[rounds["row"]]

    def reset_info(self, instances, rounds):
        return {"context": self.X[rounds["row"]]}


class SupervisedEnv(_DatasetEnv, ExampleStreamEnv):
    """Any classification dataset as a K-armed bandit with the disjoint block encoding.

    Description:
        Each round one example (x, c) is drawn uniformly from the dataset. Arm k, k = 0..K-1 with
        K the number of classes (labels in sorted order, or a pandas categorical's own order), is
        x^(k) = [0, .., x, .., 0] in R^{K d} (x in block k); its expected reward is 1 if k = c,
        else 0: the bandit of [S0] App. F.2, [S2] section 7 and [S3] section 5.2, on data of
        your own. The prepared context x is `info["context"]`; regret is against the true class.
        With no data given, the dataset is Fisher's iris (150 flowers, 4 measurements, 3 species),
        shipped with the package (`gym_ctxbandits.datasets.supervised.iris`), so the id makes and
        runs as it is, as every registered id does. Else the data is arrays (`X`, `y`: numpy,
        scipy sparse or pandas) or a `source` string, which
        also travels through `ctxbandits run --env-kwargs` and config files: a local .csv or
        .parquet file with its `label` column, "openml:NAME" / "openml:ID", "hf:NAME" / "hf:PATH"
        or "sklearn:LOADER" (`gym_ctxbandits.datasets.supervised` says how each is read, cached
        and checked). Numeric columns are used as they are; every other column (strings,
        categories) is one-hot encoded by default (`categorical="onehot"`; "ordinal" and "random"
        are the encodings of the presets "S0" and "S2", None takes the preset's), a missing
        category being the all-zero block. NaN in a numeric column, a missing label, a single
        class and X, y of different lengths are refused with an error naming the fix. By default
        (`preset=None`) each feature column is min-max scaled to [-1, 1], then each row to unit
        length (`scaling="minmax-l2"`), so that a column of large numbers does not drown the
        others, as it does when rows alone are scaled (docs/datasets.md measures both). The papers' presets prepare the features
        as for the built-in datasets (module docstring): "S0" L2 rows, "S2" per-feature min-max to
        [-1, 1], "S3" L2 rows plus N(0, 0.1^2) reward noise; give one to reproduce a paper's
        preparation. The dataset is the instance: the same for every seed. "pmlb:NAME" is a set of
        the Penn Machine Learning Benchmarks (`gym_ctxbandits.datasets.pmlb_sets()` lists the 164),
        and `preset="cb-bakeoff"` plays a set as the Contextual Bandit Bake-off did (Bietti,
        Agarwal, Langford 2021): one pass over a random permutation of the rows (`stream="pass"`),
        raw features (`scaling="none"`), reward 1 for the true class (`cost_encoding="-1/0"`;
        "0/1" pays 0 and -1); the module docstring says why the block encoding is its features.
        Concept drift (issue 51): `relabel={"change_points": [r_1, ...], "permutations": [...]}`
        relabels the classes at the change points (1-based rounds, each the first of a new segment):
        in segment s an example of class c pays at arm sigma_s(c), sigma_s the segment's permutation
        of the class indices; the contexts stay as they are. Without "permutations" sigma_0 is the
        identity and each later sigma_s is drawn with the instance from the seed (`instance_seed`
        fixes them), uniform among the permutations other than the previous segment's; given, they
        are one list per segment. Regret is against the class paying in the round (dynamic regret);
        `env.unwrapped.change_points` lists the change points and each step's `info["change_point"]`
        is True when the round just played started a segment.

    Action Space: Discrete(K), K = number of classes.
    Observation Space: Box(-b, b, (K, K d), float32), b = 1 for every scaling but "none" (there the
        largest |feature|); d counts each one-hot column.
    Rewards: 1 for the true class, else 0 (`cost_encoding="0/1"`: 0, else -1), plus N(0,
        noise_std^2) when noise_std > 0.
    Episode End: truncation at T = 10^4 rounds (`max_episode_steps=` to change it). With
        `stream="pass"` keep T <= n, the dataset's rows: a step after the pass is a ValueError.
    Arguments: X=None, y=None (arrays), or source=None (a string, as above) with label=None (the
        label column: required for a file; default the OpenML target, "label" for hf:, "target"
        for pmlb:), split=None (hf: only; default "train"), sha256=None (a file's expected SHA-256),
        data_home=None ($CTXBANDITS_DATA, else the user cache: where OpenML, PMLB, scikit-learn and
        Hugging Face downloads are cached), download=True (False, or $CTXBANDITS_OFFLINE=1:
        cached copies only); preset=None (minmax-l2, no noise) or "S0", "S2", "S3", "cb-bakeoff";
        scaling, missing_value, noise_std (None: from the preset), categorical="onehot",
        category_seed=0 (the "random" encoding's values), stream and cost_encoding (None: from the
        preset, else "iid" and "-1/0"), relabel=None (concept drift, above).

    Version History:
        * v0: initial version. Since 0.2: iris without data; columns min-max scaled before the
          rows by default (it was the "S0" preset's L2 rows: preset="S0" gives those). Since
          0.18: pmlb: sources, `stream`, `cost_encoding` and the "cb-bakeoff" preset (the
          defaults give the former numbers, seed for seed). Issue 51: `relabel` (concept drift;
          without it the numbers are unchanged).
    """

    def __init__(self, X=None, y=None, source: str | None = None, label: str | None = None, split: str | None = None,
                 sha256: str | None = None, data_home=None, download: bool = True, preset: str | None = None,
                 scaling: str | None = None, categorical: str | None = "onehot", missing_value: float | None = None,
                 noise_std: float | None = None, category_seed: int = 0, instance_seed: int | None = None,
                 stream: str | None = None, cost_encoding: str | None = None, relabel: dict | None = None):
        from gym_ctxbandits.datasets import supervised

        self._options(preset, scaling, categorical, missing_value)
        if source is None and X is None and y is None:
            if (label, split, sha256) != (None, None, None):
                raise ValueError("label=, split= and sha256= describe a source=; give it, or leave them out for the "
                                 "default dataset (iris)")
            data = supervised.iris()
        elif source is None:
            if X is None or y is None:
                raise ValueError("give the data as X= and y= (arrays; both), or as source= (a file path, openml:NAME, "
                                 "pmlb:NAME, hf:NAME or sklearn:LOADER), or neither for the default dataset (iris)")
            if (label, split, sha256) != (None, None, None):
                raise ValueError("label=, split= and sha256= describe a source=; leave them out with X= and y=")
            data = supervised.from_arrays(X, y)
        elif X is not None or y is not None:
            raise ValueError("give either X= and y= or source=, not both")
        else:
            data = supervised.load(source, label=label, split=split, sha256=sha256, data_home=data_home,
                                   download=download)
        self.source = source or ("arrays" if X is not None else "iris")
        self.X, self.y = prepare(data.X, data.categorical, data.y, self.scaling, self.categorical, self.missing_value,
                                 check_int("category_seed", category_seed, minimum=0))
        self.classes = data.classes
        self._classes_as_arms(preset, noise_std, instance_seed, stream, cost_encoding, relabel)

    def _classes_as_arms(self, preset: str, noise_std: float | None, instance_seed: int | None,
                         stream: str | None = None, cost_encoding: str | None = None, relabel: dict | None = None) -> None:
        """Arm k is class k: payoff I_K (cost_encoding "-1/0") or I_K - 1 ("0/1"), with the preset's reward
        noise unless noise_std is given, relabelled at change points by `relabel`; the last step of the
        constructor once X, y and classes are set."""
        self._relabelling(relabel)
        p = _preset(preset)
        self.stream = _choice(p.get("stream", "iid") if stream is None else stream, "stream", STREAMS)
        self.cost_encoding = _choice(p.get("cost_encoding", "-1/0") if cost_encoding is None else cost_encoding,
                                     "cost_encoding", tuple(COST_ENCODINGS))
        k = len(self.classes)
        hit, miss = COST_ENCODINGS[self.cost_encoding]
        self.payoff = np.where(np.eye(k, dtype=bool), hit, miss)
        noise_std = p["noise_std"] if noise_std is None else noise_std
        super().__init__(k, k * self.X.shape[1], noise="gaussian", noise_std=noise_std,
                         feature_bound=self._feature_bound(), instance_seed=instance_seed)

    # --- relabel=: concept drift, the classes permuted at change points --------------------------
    def _relabelling(self, relabel: dict | None) -> None:
        """Check relabel= and set `change_points` and `permutations` (None: drawn with each instance)."""
        self.change_points, self.permutations = (), None
        if relabel is None:
            return
        if not isinstance(relabel, dict) or "change_points" not in relabel or set(relabel) - {"change_points",
                                                                                             "permutations"}:
            raise ValueError("relabel must be a dict {'change_points': [1-based rounds], 'permutations': [one "
                             f"permutation of the class indices per segment] (optional: drawn)}}, got {relabel!r}")
        self.change_points = check_change_points(relabel["change_points"], "relabel['change_points']")
        k, segments = len(self.classes), len(self.change_points) + 1
        if relabel.get("permutations") is None:
            self.random_instance = True  # the permutations are drawn with the instance, from the seed
            return
        try:
            perms = np.asarray(relabel["permutations"], dtype=np.int64)
        except (TypeError, ValueError):
            perms = np.zeros(0)
        if perms.shape != (segments, k) or not (np.sort(perms, axis=1) == np.arange(k)).all():
            raise ValueError(f"relabel['permutations'] must be {segments} permutations of 0..{k - 1} (one per segment: "
                             f"len(change_points) + 1), got {relabel['permutations']!r}")
        self.permutations = perms

    def draw_instance(self, rng):
        """With relabel=: the (S, K) permutations, given, or drawn: the identity first, then each segment's
        uniform among the permutations other than the previous one (so every change point changes the labels)."""
        if not self.change_points:
            return {}
        if self.permutations is not None:
            return {"relabel": self.permutations}
        perms = [np.arange(len(self.classes))]
        for _ in self.change_points:
            perm = rng.permutation(len(self.classes))
            while np.array_equal(perm, perms[-1]):
                perm = rng.permutation(len(self.classes))
            perms.append(perm)
        return {"relabel": np.stack(perms)}

    def _labels(self, instances, rounds):
        """The class that pays: sigma_s(c) for an example of class c in segment s, sigma_s its permutation."""
        y = super()._labels(instances, rounds)
        if not self.change_points:
            return y
        return instances["relabel"][np.arange(len(y)), segment_of(self.change_points, rounds["t"]), y]

    def step_info(self, instances, rounds, actions):
        return change_point_info(self.change_points, rounds["t"]) if self.change_points else {}

    # --- stream="pass": one pass over a random permutation of the rows ----------------------------
    def _instance(self, rng):
        """A copy per episode and sub-env of the (empty) dataset instance: under stream="pass" the
        episode's order of the rows is kept in it (a fixed instance_seed's instance is shared)."""
        return dict(super()._instance(rng))

    @property
    def instance(self) -> dict[str, np.ndarray]:
        """The dataset is the instance, the same for every seed: the pass's order of the rows is the
        episode's stream (drawn from the episode seed, as i.i.d. draws are), so it is left out."""
        return {k: v for k, v in super().instance.items() if k != "order"}

    def draw_round(self, rng, instance, t=0):
        """The round's row, and its index t when there are change points (relabel=)."""
        row = self._row(rng, instance, t)
        return {**row, "t": np.array(t)} if self.change_points else row

    def _row(self, rng, instance, t):
        """stream="iid": a row drawn uniformly; "pass": row order[t] of the episode's permutation, drawn
        at t = 0 (the observation after the last round, which no agent acts on, repeats order[0])."""
        if self.stream == "iid":
            return super().draw_round(rng, instance, t)
        n = len(self.y)
        if t == 0:
            instance["order"] = rng.permutation(n)
        elif t > n:
            raise ValueError(self._pass_over())
        return {"row": np.array(instance["order"][t % n])}

    def _pass_over(self) -> str:
        n = len(self.y)
        data = getattr(self, "source", None) or getattr(self, "dataset", "the dataset")
        return (f"stream='pass': the pass over the {n} rows of {data} ended at round {n}; reset() for another "
                f"pass (a new order), keep the horizon (max_episode_steps) <= {n}, or use stream='iid' (rows drawn "
                "with replacement) for longer runs")

    def step(self, action):
        """The round's step; under stream="pass" a step after the n rows of the pass is refused before it
        changes anything (the vector env's is refused by draw_round)."""
        if self.stream == "pass" and self._batch is not None and self._batch.t[0] >= len(self.y):
            raise ValueError(self._pass_over())
        return super().step(action)


class ClassificationEnv(SupervisedEnv):
    """A dataset of the papers as the bandit of `SupervisedEnv`, by name.

    Description:
        `SupervisedEnv`'s bandit (one example a round, arm k = x in block k, reward 1 for the true
        class) on a dataset of `gym_ctxbandits.datasets`, loaded, checked and prepared once per
        process: [S0] App. F.2 (Shuttle, Mushroom, Adult, Covertype), [S2] section 7 and App. J
        (mnist, mushroom, shuttle, magic, banknote, phoneme), [S3] section 5.2 and App. F.2
        (Shuttle, Mushroom). Categorical columns follow the preset (ordinal codes for "S0" and
        "S3", random values for "S2"); see the module docstring for the presets of the three papers.

    Action Space: Discrete(K), K = number of classes.
    Observation Space: Box(-b, b, (K, K d), float32), b = 1 for every scaling but "none".
    Rewards: 1 for the true class, else 0 (`cost_encoding="0/1"`: 0, else -1), plus N(0,
        noise_std^2) when noise_std > 0.
    Episode End: truncation at T = 10^4 rounds ([S2] uses T = 2000: `max_episode_steps=2000`);
        with `stream="pass"` keep T <= n, as in `SupervisedEnv`.
    Arguments: dataset (a name of `gym_ctxbandits.datasets.NAMES`), data_path=None (a local file
        or folder), data_home=None ($CTXBANDITS_DATA, else the user cache), split=None (the
        loader's default), download=True, preset="S0", scaling, categorical, missing_value,
        noise_std, image_size, stream, cost_encoding (None: from the preset; see `SupervisedEnv`),
        category_seed=0 (the [S2] random values), check_size=True (False accepts a deliberately
        smaller copy under the canonical file names, such as the test fixtures of data/fixtures;
        see `gym_ctxbandits.datasets.load`), relabel=None (concept drift, as in `SupervisedEnv`).

    Version History:
        * v0: initial version.
    """

    def __init__(self, dataset: str = "shuttle", data_path=None, data_home=None, split: str | None = None,
                 download: bool = True, preset: str = "S0", scaling: str | None = None,
                 categorical: str | None = None, missing_value: float | None = None, noise_std: float | None = None,
                 image_size: int | None = None, category_seed: int = 0, instance_seed: int | None = None,
                 check_size: bool = True, stream: str | None = None, cost_encoding: str | None = None,
                 relabel: dict | None = None):
        self._load(dataset, data_path, data_home, split, download, preset, scaling, categorical, missing_value,
                   image_size, category_seed, check_size)
        self._classes_as_arms(preset, noise_std, instance_seed, stream, cost_encoding, relabel)


class ClassTargetEnv(_DatasetEnv):
    """[S1] section 5.2's "deep bandit" on an image dataset.

    Description:
        Each round K examples drawn uniformly from the dataset (without replacement within the
        round) are the arms, their pixels scaled to [0, 1] (docs/papers.md, S1-A6). An example of the
        target class c pays Ber(0.75), any other Ber(0.25). The paper runs 50 instances per class
        c in 0..9: `target=None` (default) draws c uniformly per instance, an int fixes it. The
        paper reports the average reward; the best policy's is about 0.5757 for K = 10 and ten
        balanced classes (docs/papers.md, S1-A2). Regret is against the best example shown.

    Action Space: Discrete(K).
    Observation Space: Box(0, 1, (K, 784), float32) (Box(-1, 1) when another scaling is asked).
    Rewards: 0 or 1.
    Episode End: truncation at n = 10^4 rounds.
    Arguments: dataset="mnist" or "fashion-mnist", target=None, num_arms=10, data_path=None,
        data_home=None, split=None, download=True, scaling="pixels", image_size=28, check_size=True.

    Version History:
        * v0: initial version.
    """

    def __init__(self, dataset: str = "mnist", target: int | None = None, num_arms: int = 10, data_path=None,
                 data_home=None, split: str | None = None, download: bool = True, scaling: str = "pixels",
                 image_size: int = 28, instance_seed: int | None = None, check_size: bool = True):
        self._load(dataset, data_path, data_home, split, download, "S0", scaling, None, None, image_size, 0, check_size)
        num_classes = len(self.classes)
        if target is not None:
            target = check_int("target", target, minimum=0)
            if target >= num_classes:
                raise ValueError(f"target must be a class index in 0..{num_classes - 1}, got {target}")
        self.target = target
        self._num_classes = num_classes
        super().__init__(num_arms, self.X.shape[1], noise="bernoulli", feature_bound=self._feature_bound(),
                         instance_seed=instance_seed)
        if self.num_arms > len(self.y):
            raise ValueError(f"num_arms ({self.num_arms}) exceeds the {len(self.y)} examples of {dataset}")
        if self.scaling == "pixels":
            self.observation_space = type(self.observation_space)(0.0, 1.0, self.observation_space.shape, np.float32)

    def draw_instance(self, rng):
        c = rng.integers(self._num_classes) if self.target is None else self.target
        return {"target": np.array(c)}

    def draw_round(self, rng, instance, t=0):
        return {"rows": rng.choice(len(self.y), self.num_arms, replace=False)}

    def round_arrays(self, instances, rounds):
        rows = rounds["rows"]  # (N, K)
        hit = self.y[rows] == instances["target"][:, None]
        return self.X[rows], np.where(hit, 0.75, 0.25), None
