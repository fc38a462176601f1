"""The scorecard's statistics, each a few lines over numpy and scipy (docs/bench_scorecard.md says them in
words; tests/test_bench.py checks each on a case computed by hand, and scripts/bench_coverage.py
how often its intervals hold the exact truth: docs/bench_scorecard.md, "How far to trust them").

- `ratio_ci`: an agent's final regret over Random's, mean over mean, with a paired percentile
  bootstrap CI: the seeds are resampled together, so both agents keep facing the same env draws.
- `scores`: the bsuite-style score in [0, 1] of each seed, against Random's on the same seed.
- `iqm_ci`: the interquartile mean of scores over (cell, seed) with a stratified bootstrap CI, the
  seeds resampled within each cell (Agarwal et al. 2021, rliable).
- `signed_rank_p`: the two-sided Wilcoxon signed-rank p-value of many rows of paired differences
  at once, scipy's `wilcoxon` exactly, by enumerating the 2^n sign flips with one matrix product.
- `outcomes`: win, tie or loss of every agent against every other on a cell by that test on the
  paired seeds, two-sided at `alpha`, with no correction for the many pairs tested; `outcome`: one pair.
- `bakeoff_z`, `bakeoff_outcomes`, `wins_losses`: the Contextual Bandit Bake-off's rule (Bietti et al.
  2021, Section 4): on a dataset of n examples, algorithm 1 beats 2 when the z-test of their
  progressive-validation losses (error rates) is significant at `alpha`, two-sided; per pair, the
  wins minus the losses over the datasets.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

LEVEL = 0.95
RESAMPLES = 2000


def ratio_ci(a, r, level: float = LEVEL, resamples: int = RESAMPLES, seed: int = 0) -> tuple[float, float, float]:
    """(mean(a) / mean(r), low, high): the ratio and its paired percentile bootstrap interval over
    the seeds (a[i] and r[i] are of seed i); the interval is NaN with fewer than two seeds or
    when mean(r) is 0. It is `scipy.stats.bootstrap`'s paired percentile interval bit for bit (the
    same index draws of the generator seeded `seed`, the same quantiles: `percentiles`), computed here
    without its per-call validation: 0.46 ms a call against scipy's 0.72 (ten seeds, 2,000 resamples,
    one idle core), and a leaderboard draws about a thousand."""
    a, r = np.asarray(a, float), np.asarray(r, float)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = a.mean() / r.mean()
        if len(a) < 2 or r.mean() == 0:
            return float(ratio), np.nan, np.nan
        i = np.random.default_rng(seed).integers(0, len(a), (resamples, len(a)))   # the seeds, resampled together
        boot = a[i].mean(-1) / r[i].mean(-1)
    tail = (1 - level) / 2
    low, high = percentiles(boot, np.array([tail, 1 - tail]))
    return float(ratio), float(low), float(high)


def percentiles(x: np.ndarray, p: np.ndarray) -> np.ndarray:
    """`scipy.stats.quantile(x, p)` of a 1-d `x` (its default "linear" method, Hyndman and Fan's 7th)
    bit for bit, by the same formula, (1 - g) x_(j) + g x_(j+1) with j and g from p n + 1 - p, over
    the two order statistics np.partition finds instead of a full sort and scipy's per-call
    validation: 0.03 ms against 0.33 for 2,000 values (a leaderboard takes about two thousand).
    With a NaN in `x` it is scipy's (NaN)."""
    if np.isnan(x).any():
        return stats.quantile(x, p)
    n = x.shape[-1]
    jg = p * n + (1 - p)
    g = jg % 1
    below, above = np.clip(jg // 1 - 1, 0, n - 1).astype(np.int64), np.clip(jg // 1, 0, n - 1).astype(np.int64)
    g[jg // 1 - 1 < 0] = 0
    y = np.partition(x, np.unique(np.concatenate([below, above])))
    return (1 - g) * y[below] + g * y[above]


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
    if len({len(c) for c in cells}) == 1:           # as many seeds a cell: the same draws in one call
        n = len(cells[0])
        picks = rng.integers(0, n, (len(cells), resamples, n))
        draws = np.stack(cells)[np.arange(len(cells))[:, None, None], picks].transpose(1, 0, 2).reshape(resamples, -1)
    else:
        draws = np.hstack([c[rng.integers(0, len(c), (resamples, len(c)))] for c in cells])
    boot = stats.trim_mean(draws, 0.25, axis=1)
    tail = (1 - level) / 2
    return iqm(np.concatenate(cells)), float(np.quantile(boot, tail)), float(np.quantile(boot, 1 - tail))


EXACT_MAX = 13      # scipy's exact sign-flip limit: 2^13 = 8,192 patterns, within its 9,999 resamples


def signed_rank_p(d) -> np.ndarray:
    """Two-sided p-values of the Wilcoxon signed-rank test of each row of paired differences `d`
    (..., n): `scipy.stats.wilcoxon(row).pvalue` for every row, bit for bit, computed for all rows at
    once. Zeros are dropped (scipy's zero_method "wilcox"), tied |d| share their mean rank, and the
    statistic, the rank sum of the positive differences, is compared with its exact null
    distribution: its value under each of the 2^n sign flips, one matrix product of the flips by
    the ranks. That is scipy's exact distribution where nothing ties and its exact permutation test
    where something does (n <= 13); p = 2 min(P(T <= t), P(T >= t)), at most 1. Twice the ranks are
    integers, so every sum is exact. A row of zeros gets 1, as in scipy, a row holding a NaN gets NaN;
    rows longer than 13 (scipy then turns to its normal approximation where ranks tie) go to scipy one
    by one."""
    d = np.asarray(d, float)
    rows, n = d.reshape(-1, d.shape[-1]), d.shape[-1]
    if n > EXACT_MAX:
        return np.array([stats.wilcoxon(r).pvalue for r in rows]).reshape(d.shape[:-1])
    a = np.abs(rows)
    zeros = (a == 0).sum(-1, keepdims=True)                                # the smallest |d|: ranks 1..zeros
    ranks2 = np.where(a == 0, 0.0, 2 * (stats.rankdata(a, axis=-1) - zeros))  # twice the ranks among non-zeros
    observed = (ranks2 * (rows > 0)).sum(-1)
    flips = ((np.arange(2 ** n)[:, None] >> np.arange(n)) & 1).astype(float)  # (2^n, n): the positive signs
    p = np.empty(len(rows))
    step = max(1, 2 ** 22 >> n)                                            # rows a product: 32 MiB of null values
    for i in range(0, len(rows), step):
        null, t = flips @ ranks2[i:i + step].T, observed[i:i + step]
        tail = np.minimum((null <= t).sum(0), (null >= t).sum(0))
        p[i:i + step] = np.minimum(2 * (tail / 2 ** n), 1.0)
    p[np.isnan(rows).any(-1)] = np.nan
    return p.reshape(d.shape[:-1])


def outcomes(values, lower_is_better: bool = True, alpha: float = 0.05) -> np.ndarray:
    """(A, A) matrix of +1 where row agent i beats agent j, -1 where it loses, 0 for a tie, from
    `values` (A, n): each agent's final value per seed, paired by seed. The two-sided Wilcoxon
    signed-rank test (`signed_rank_p`, all pairs at once) at `alpha` decides a win; the median
    difference, its side. With n seeds and no ties the smallest p-value is 2 / 2^n, so fewer than 6
    seeds can only tie."""
    v = np.asarray(values, float)
    i, j = np.triu_indices(len(v), 1)
    d = v[i] - v[j]
    median = np.median(d, axis=-1)
    better = median < 0 if lower_is_better else median > 0
    won = np.where(signed_rank_p(d) < alpha, np.where(better, 1, -1), 0)
    out = np.zeros((len(v), len(v)), int)
    out[i, j], out[j, i] = won, -won
    return out


def outcome(a, b, lower_is_better: bool = True, alpha: float = 0.05) -> int:
    """+1 when `a` beats `b` (paired by seed), -1 when it loses, 0 for a tie: `outcomes` of the pair."""
    return int(outcomes([a, b], lower_is_better, alpha)[0, 1])


def pairwise(values, lower_is_better: bool = True, alpha: float = 0.05) -> tuple[np.ndarray, np.ndarray]:
    """(`outcomes`, p): the (A, A) outcome matrix and the (A, A) matrix of the signed-rank test's
    two-sided p-values (symmetric, NaN on the diagonal) of every pair, from one call of the test."""
    v = np.asarray(values, float)
    i, j = np.triu_indices(len(v), 1)
    d = v[i] - v[j]
    median = np.median(d, axis=-1)
    better = median < 0 if lower_is_better else median > 0
    p = signed_rank_p(d)
    won = np.where(p < alpha, np.where(better, 1, -1), 0)
    out, pm = np.zeros((len(v), len(v)), int), np.full((len(v), len(v)), np.nan)
    out[i, j], out[j, i] = won, -won
    pm[i, j] = pm[j, i] = p
    return out, pm


def holm(p) -> np.ndarray:
    """Holm's step-down adjusted p-values of a family of tests (NaN entries are left out of the
    family and stay NaN): sorted ascending, the k-th smallest (k from 0) is multiplied by (m - k),
    made non-decreasing by a running maximum and capped at 1. A test is rejected at `alpha` when
    its adjusted p-value is below `alpha` (Holm 1979; statsmodels' `multipletests(method="holm")`)."""
    p = np.asarray(p, float)
    flat, out = p.ravel(), np.full(p.size, np.nan)
    keep = np.flatnonzero(np.isfinite(flat))
    order = keep[np.argsort(flat[keep], kind="stable")]
    m = len(order)
    out[order] = np.minimum(np.maximum.accumulate((m - np.arange(m)) * flat[order]), 1.0)
    return out.reshape(p.shape)


def _mann_whitney(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """P(X > Y) + P(X = Y) / 2 of the runs of x (..., n) against those of y (..., m), pair by pair
    over the last axes: the Mann-Whitney U statistic over n m."""
    gt = (x[..., :, None] > y[..., None, :]).mean((-2, -1))
    eq = (x[..., :, None] == y[..., None, :]).mean((-2, -1))
    return gt + eq / 2


def probability_of_improvement(x, y) -> float:
    """rliable's probability of improvement P(X > Y) (Agarwal et al. 2021): the mean over tasks of
    the Mann-Whitney statistic of X's runs against Y's on that task, P(X > Y) + P(X = Y) / 2, each
    task a 1-d array of runs (for the scorecard: the cells, each a seed's score). 0.5: neither is
    likely better; NaN scores are left out of their task."""
    per_task = [_mann_whitney(a[np.isfinite(a)], b[np.isfinite(b)])
                for a, b in ((np.asarray(a, float), np.asarray(b, float)) for a, b in zip(x, y))]
    return float(np.mean(per_task))


def probability_of_improvement_ci(x, y, level: float = LEVEL, resamples: int = RESAMPLES,
                                  seed: int = 0) -> tuple[float, float, float]:
    """(P(X > Y), low, high): `probability_of_improvement` with the percentile interval of rliable's
    stratified bootstrap: each task's runs of X and of Y resampled on their own (independently, as
    rliable's StratifiedIndependentBootstrap), the tasks held fixed."""
    rng = np.random.default_rng(seed)
    tasks = [(np.asarray(a, float), np.asarray(b, float)) for a, b in zip(x, y)]
    tasks = [(a[np.isfinite(a)], b[np.isfinite(b)]) for a, b in tasks]
    boot = np.mean([_mann_whitney(a[rng.integers(0, len(a), (resamples, len(a)))],
                                  b[rng.integers(0, len(b), (resamples, len(b)))]) for a, b in tasks], axis=0)
    tail = (1 - level) / 2
    return (probability_of_improvement(x, y), float(np.quantile(boot, tail)), float(np.quantile(boot, 1 - tail)))


TAUS = np.linspace(0, 1, 21)


def performance_profile(scores, taus=TAUS) -> np.ndarray:
    """rliable's performance profile (score distribution): for each tau, the fraction of the scores
    of every (task, run) that are above tau, P(score > tau); NaN scores are left out."""
    s = np.concatenate([np.ravel(np.asarray(c, float)) for c in scores]) if isinstance(scores, (list, tuple)) \
        else np.ravel(np.asarray(scores, float))
    s = s[np.isfinite(s)]
    return (s[:, None] > np.asarray(taus, float)[None, :]).mean(0)


def bakeoff_z(l1, l2, n) -> tuple[np.ndarray, np.ndarray]:
    """(Z, p) of the Bake-off's z-test between two progressive-validation losses (error rates in
    [0, 1]) on a dataset of `n` examples, element by element: Z = (l2 - l1) / sqrt(l1 (1 - l1) / n +
    l2 (1 - l2) / n), positive where 1's loss is the smaller, and its two-sided p = 1 - erf(|Z| /
    sqrt(2)) (Bietti et al. 2021, Section 4). Where both variances are 0 (losses of 0 or 1), Z is
    0 for equal losses (p 1) and +-inf otherwise (p 0)."""
    l1, l2, n = np.broadcast_arrays(*(np.asarray(x, float) for x in (l1, l2, n)))
    if ((l1 < 0) | (l1 > 1) | (l2 < 0) | (l2 > 1)).any() or (n < 1).any():
        raise ValueError("bakeoff_z takes losses in [0, 1] (error rates) and n >= 1 examples")
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(l1 == l2, 0.0, (l2 - l1) / np.sqrt(l1 * (1 - l1) / n + l2 * (1 - l2) / n))
    p = 1 - np.vectorize(math.erf, otypes=[float])(np.abs(z) / math.sqrt(2)) if z.size else z.copy()
    return z, np.where(np.isinf(z), 0.0, p)


def bakeoff_outcomes(losses, n, alpha: float = 0.05) -> np.ndarray:
    """(A, A, C) of +1 where agent i beats agent j on dataset c by the Bake-off's z-test at `alpha`
    (`bakeoff_z`), -1 where it loses, 0 otherwise; `losses` (A, C): each agent's PV loss (an error
    rate) on each dataset, `n` (C,): each dataset's examples."""
    l = np.asarray(losses, float)
    z, p = bakeoff_z(l[:, None, :], l[None, :, :], np.asarray(n, float)[None, None, :])
    return np.where(p < alpha, np.sign(z), 0).astype(int)


def wins_losses(losses, n, alpha: float = 0.05) -> np.ndarray:
    """The Bake-off's table: (A, A) of the wins minus the losses of row agent i against column agent
    j over the datasets (`bakeoff_outcomes` summed over them; 0 on the diagonal)."""
    return bakeoff_outcomes(losses, n, alpha).sum(-1)
