"""The scorecard's statistics, each a few lines over numpy and scipy (docs/benchmark.md says them in
words; tests/test_bench.py checks each on a case computed by hand).

- `ratio_ci`: an agent's final regret over Random's, mean over mean, with a paired percentile
  bootstrap CI: the seeds are resampled together, so both agents keep facing the same env draws.
- `scores`: the bsuite-style score in [0, 1] of each seed, against Random's on the same seed.
- `iqm_ci`: the interquartile mean of scores over (cell, seed) with a stratified bootstrap CI, the
  seeds resampled within each cell (Agarwal et al. 2021, rliable).
- `outcome`: win, tie or loss of one agent against another on a cell by the Wilcoxon signed-rank
  test on the paired seeds, two-sided at `alpha`, with no correction for the many pairs tested.
"""

from __future__ import annotations

import warnings

import numpy as np
from scipy import stats

LEVEL = 0.95
RESAMPLES = 2000


def ratio_ci(a, r, level: float = LEVEL, resamples: int = RESAMPLES, seed: int = 0) -> tuple[float, float, float]:
    """(mean(a) / mean(r), low, high): the ratio and its paired percentile bootstrap interval over
    the seeds (a[i] and r[i] are of seed i); the interval is NaN with fewer than two seeds or
    when mean(r) is 0."""
    a, r = np.asarray(a, float), np.asarray(r, float)
    with np.errstate(divide="ignore", invalid="ignore"), warnings.catch_warnings():
        ratio = a.mean() / r.mean()
        if len(a) < 2 or r.mean() == 0:
            return float(ratio), np.nan, np.nan
        warnings.simplefilter("ignore", stats.DegenerateDataWarning)     # every resample alike: a point interval
        ci = stats.bootstrap((a, r), lambda x, y, axis: x.mean(axis) / y.mean(axis), paired=True, vectorized=True,
                             confidence_level=level, n_resamples=resamples, method="percentile",
                             random_state=np.random.default_rng(seed)).confidence_interval
    return float(ratio), float(ci.low), float(ci.high)


def scores(values, baseline, lower_is_better: bool = True) -> np.ndarray:
    """The bsuite-style score in [0, 1] of `values` against Random's `baseline`, element by element
    (per seed, paired; or of the means): regret (lower is better) scores clip(1 - regret /
    Random's, 0, 1), so Random scores 0 and no regret 1 (bsuite's clip((0.5 - regret per step) /
    0.5, 0, 1), with Random's regret for its 0.5); reward (the replay) scores clip(reward /
    Random's - 1, 0, 1), 1 at twice Random's clicks. NaN where Random's value is 0: nothing to
    normalise by (a replay seed without a click)."""
    values, baseline = np.asarray(values, float), np.asarray(baseline, float)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(baseline == 0, np.nan, values / baseline)
    return np.clip(1 - ratio if lower_is_better else ratio - 1, 0.0, 1.0)


def iqm(x) -> float:
    """The interquartile mean: the mean of the middle 50% (scipy's trim_mean at 25%, as rliable)."""
    return float(stats.trim_mean(np.ravel(x), 0.25))


def iqm_ci(per_cell, level: float = LEVEL, resamples: int = RESAMPLES, seed: int = 0) -> tuple[float, float, float]:
    """(IQM, low, high) of the scores of several cells (one array of per-seed scores each): the
    percentile interval of a stratified bootstrap that resamples each cell's seeds on their own."""
    rng = np.random.default_rng(seed)
    cells = [np.asarray(c, float) for c in per_cell]
    draws = np.hstack([c[rng.integers(0, len(c), (resamples, len(c)))] for c in cells])
    boot = stats.trim_mean(draws, 0.25, axis=1)
    tail = (1 - level) / 2
    return iqm(np.concatenate(cells)), float(np.quantile(boot, tail)), float(np.quantile(boot, 1 - tail))


def outcome(a, b, lower_is_better: bool = True, alpha: float = 0.05) -> int:
    """+1 when `a` beats `b` (paired by seed), -1 when it loses, 0 for a tie: the two-sided Wilcoxon
    signed-rank test at `alpha`, the side given by the median difference. With n seeds and no ties
    the smallest p-value is 2 / 2^n, so fewer than 6 seeds can only tie."""
    d = np.asarray(a, float) - np.asarray(b, float)
    if not np.any(d):
        return 0
    if stats.wilcoxon(d).pvalue >= alpha:
        return 0
    better = np.median(d) < 0 if lower_is_better else np.median(d) > 0
    return 1 if better else -1
