"""The scorecard's intervals and test against exact truth (scripts/bench_coverage.py): its known
answers, the coverage docs/bench_scorecard.md states within wide margins, and a quick run."""

import sys
from pathlib import Path

import numpy as np
import pytest

from gym_ctxbandits.bench import stats

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))

import bench_coverage


def test_the_truths_are_exact():
    rng = np.random.default_rng(7)
    for draw, truth in bench_coverage.LAWS.values():            # the ratio of means, by a million seeds
        a, r = draw(rng, 1_000_000)
        assert a.mean() / r.mean() == pytest.approx(truth, rel=0.01)
    mu, s = np.array([np.log(0.3), np.log(1.1)]), np.array([0.5, 0.3])
    scores = np.clip(1 - np.exp(mu + s * rng.standard_normal((2_000_000, 2))), 0, 1)   # half a cell each
    assert bench_coverage.mixture_iqm(mu, s) == pytest.approx(stats.iqm(scores), abs=2e-3)
    # the exact Wilcoxon test at n seeds rejects the 2 x #{T <= t} most extreme of the 2^n sign patterns
    assert bench_coverage.exact_size(6) == 2 / 2 ** 6           # its smallest p-value, 0.031
    assert bench_coverage.exact_size(10) == 2 * 25 / 2 ** 10    # P(T <= 8) = 25 / 1024: 0.0488


def test_the_other_intervals_of_the_ratio():
    r = np.array([10.0, 12.0, 9.0, 11.0])
    assert bench_coverage.ratio_t(2 * r, r) == pytest.approx((2.0, 2.0))        # a fixed ratio: no spread
    a = np.array([5.0, 4.0, 6.0, 3.0])                                           # by hand: R = 18 / 42
    d = (a - 18 / 42 * r) / 10.5
    half = 3.182446305284263 * d.std(ddof=1) / 2                                 # t(3) at 0.975
    assert bench_coverage.ratio_t(a, r) == pytest.approx((18 / 42 - half, 18 / 42 + half))
    low, high = bench_coverage.ratio_bca(a, r)
    assert low < 18 / 42 < high


def test_the_ratio_interval_covers_as_the_docs_say():
    """docs/bench_scorecard.md: at ten seeds the paired percentile interval holds the truth less often than
    95% (about 0.88 on a light-tailed law), nearer 95% at twenty; so 300 replicates (SE 0.02) stay
    within these wide bounds unless the interval breaks."""
    rng = np.random.default_rng(11)
    draw, truth = bench_coverage.LAWS["lognormal, agent sd 0.5, rho 0.5"]
    ten, width = bench_coverage.ratio_coverage(draw, truth, 10, 300, rng)
    twenty, narrower = bench_coverage.ratio_coverage(draw, truth, 20, 300, rng)
    assert 0.78 <= ten <= 0.95 and 0.86 <= twenty <= 0.99 and narrower < width


def test_the_iqm_interval_covers_the_mixtures_iqm():
    rng = np.random.default_rng(13)
    mu, s = bench_coverage.synthetic_cells()
    truth = bench_coverage.mixture_iqm(mu, s, grid=20_000)
    cells = lambda g: [np.clip(1 - np.exp(m + v * g.standard_normal(10)), 0, 1) for m, v in zip(mu, s)]
    cover, width = bench_coverage.iqm_coverage(cells, truth, 100, rng, resamples=500)
    assert cover >= 0.85 and 0 < width < 0.1


def test_the_test_calls_no_more_than_its_size_when_nothing_differs():
    rng = np.random.default_rng(17)
    x, y = rng.lognormal(0, 1, (2, 20_000, 10))
    assert 0.040 <= bench_coverage.decided(x, y) <= 0.058              # exact size 0.0488, SE 0.0015
    counts = rng.poisson(7.0, (2, 20_000, 10)).astype(float)           # ties, as the replay's clicks
    assert bench_coverage.decided(*counts) <= 0.055
    assert bench_coverage.decided(x - 0.5 * x.std(), y) > 0.3           # and it sees a shift


def test_a_quick_run_prints_every_table(capsys):
    bench_coverage.main(["--quick"])
    out = capsys.readouterr().out
    assert out.count("## ") == 3 and out.count("| LinUCB on `") == len(bench_coverage.CELLS)
    assert "nan" not in out
