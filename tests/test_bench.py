"""The bake-off (issue 29): the shipped suite is valid and covers its spokes; `ctxbandits bench run`
and `bench report` work end to end on the quick track (2 seeds, Random, LinUCB and a user's
--import agent); every statistic of the scorecard equals a case computed by hand."""

import json
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import gymnasium as gym
import numpy as np
import pandas as pd
import pytest

import agents
import gym_ctxbandits
from gym_ctxbandits.bench import references, reproduce, stats, suite
from gym_ctxbandits.bench.report import finals, results
from gym_ctxbandits.cli import main
from gym_ctxbandits.compare import check_env_spec, run
from gym_ctxbandits.experiment import EnvSpec

ROOT = Path(__file__).resolve().parents[1]
BUILT = "bakeoff-v1"    # the suite whose references were all run (bakeoff-v2, the default, copies most)
FIXTURES = ROOT / "data" / "fixtures" / "home"
USER_MODULE = ROOT / "tests" / "user_module" / "my_bandits.py"


# --- the suite ----------------------------------------------------------------------------------

def test_the_shipped_suite_loads_and_every_cell_is_a_valid_env():
    s = suite.load(suite.DEFAULT)
    assert s.key == suite.DEFAULT == "bakeoff-v2" and s.path.name == "bakeoff-v2.toml"
    assert not set(s.tune_seeds) & set(s.report_seeds) and len(s.report_seeds) >= 6   # 6 seeds can reach p < 0.05
    for cell in s.cells:
        check_env_spec(EnvSpec(cell.env, cell.kwargs))
    assert {t for c in s.cells for t in c.tags} == set(suite.TAGS) - {*suite.PMLB_TAGS, *suite.NONSTATIONARY_TAGS,
                                                                      *suite.RANKING_TAGS}


def test_the_suite_covers_the_papers_the_data_the_drift_s4_and_the_replay():
    envs = {c.env.removeprefix("CtxBandit/").removesuffix("-v0") for c in suite.load(suite.DEFAULT).cells}
    papers = {name for name, (*_, paper) in gym_ctxbandits.ENVIRONMENTS.items() if paper.startswith("[S")}
    # left out, with the reason in docs/bench_tracks.md: no Fashion-MNIST copy, the moderation envs' embedding cost
    left_out = {"FashionMNIST", "FashionMNISTTarget", "HateSpeech", "HateSpeechTokens"}
    assert papers - left_out <= envs
    assert {"DriftingLinear", "OpenBandit", *gym_ctxbandits.registration.CLASSIFICATION} - left_out <= envs


def test_every_cell_states_its_cost_and_linucb_fits_the_budget():
    cells = suite.load(suite.DEFAULT).cells
    assert all(c.cost_s and c.why for c in cells), [c.id for c in cells if not (c.cost_s and c.why)]
    assert sum(c.cost_s for c in cells) <= 2 * 600 / 4     # a linear agent: a quarter of 10 min on 2 cores


def test_overlapping_seeds_unknown_tags_and_keys_are_one_clear_error(tmp_path):
    data = tomllib.loads(suite.load(suite.DEFAULT).path.read_text())
    for change, message in [({"tune_seeds": "1005:1015"}, "share seeds [1005"),
                            ({"cells": [{**data["cells"][0], "tags": ["linear", "deep"]}]}, "unknown tags ['deep']"),
                            ({"cells": [{**data["cells"][0], "T": 5}]}, "'cells[0].T' is unknown"),
                            ({"cells": data["cells"][:1] * 2}, "cell ids must be unique")]:
        with pytest.raises(suite.SuiteError, match=re.escape(message)):
            suite.parse({**data, **change})
    with pytest.raises(suite.SuiteError, match="no suite 'bakeoff-v9'; the shipped suites are bakeoff-v1"):
        suite.load("bakeoff-v9")


def test_the_quick_track_cuts_horizons_and_takes_the_first_report_seeds():
    s = suite.load(suite.DEFAULT)
    cells, seeds = s.track(quick=True)
    assert seeds == s.report_seeds[:2] and {c.horizon for c in cells} == {20}
    assert [c.id for c in cells] == [c.id for c in s.cells] and s.track(quick=False) == (s.cells, s.report_seeds)


def test_the_glm_track_drops_two_cells_and_cuts_three_on_the_report_seeds():
    s = suite.load(suite.DEFAULT)
    cells, seeds = s.track("glm")
    report = {c.id: c for c in s.cells}
    assert seeds == s.report_seeds and [c.id for c in cells] == [c for c in report if c not in ("covertype", "mnist")]
    cut = {c.id: c.horizon for c in cells if c != report[c.id]}
    assert cut == {"s3-finite-linear": 500, "s3-quadratic-pool": 1000, "s1-mnist-target": 500}
    assert all(c.horizon < report[c.id].horizon and c.cost_s is None for c in cells if c.id in cut)
    assert s.track("report") == s.track("tuned") == s.track(False)
    with pytest.raises(suite.SuiteError, match="no track 'gpu'; its tracks are report, quick, tuned, glm, bounded, neural"):
        s.track("gpu")


def test_the_neural_track_cuts_every_cell_but_the_dropped_replay_to_500_rounds_on_the_report_seeds():
    s = suite.load(suite.DEFAULT)
    cells, seeds = s.track("neural")
    assert seeds == s.report_seeds and [c.id for c in cells] == [c.id for c in s.cells if c.id != "obd-replay"]
    for cell, report in zip(cells, s.cells):
        assert (cell.env, cell.kwargs, cell.tags, cell.horizon, cell.cost_s) == (report.env, report.kwargs, report.tags, 500, None)


def test_the_bounded_track_keeps_the_cells_of_rewards_0_or_1_and_drops_the_gaussian_ones():
    """[S2]'s agents need rewards in [0, 1]: every kept cell pays 0 or 1 (50 rounds of random arms on
    the first report seed), every dropped one adds Gaussian noise of std > 0 to its means."""
    s = suite.load(suite.DEFAULT)
    cells, seeds = s.track("bounded")
    kept = {c.id for c in cells}
    assert seeds == s.report_seeds and all(c == {d.id: d for d in s.cells}[c.id] for c in cells)   # none cut
    assert len(kept) == 18 and len(s.cells) - len(kept) == 17
    for cell in s.cells:
        env = gym.make(cell.env, **cell.kwargs)
        if cell.id not in kept:
            assert env.unwrapped.noise == "gaussian" and env.unwrapped.noise_std > 0, cell.id
            continue
        env.reset(seed=seeds[0])
        env.action_space.seed(seeds[0])
        rewards = {env.step(env.action_space.sample())[1] for _ in range(50)}
        assert rewards <= {0.0, 1.0}, (cell.id, rewards)


def test_a_track_table_is_checked_against_the_cells():
    data = tomllib.loads(suite.load(suite.DEFAULT).path.read_text())
    ids = [c["id"] for c in data["cells"]]
    for track, message in [({"horizons": {"s0-lineer": 10}}, "names cells ['s0-lineer']"),
                           ({"horizons": {"s0-linear": 2000}}, "['s0-linear'] must be cut to fewer rounds"),
                           ({"horizons": {"s0-linear": "10"}}, "'tracks.t.horizons.s0-linear' must be int"),
                           ({"horizons": {"s0-linear": 10}, "drop": ["s0-linear"]}, "both cut and dropped"),
                           ({"horizons": {}, "drop": ids}, "drops every cell"),
                           ({"horizons": {}, "seeds": 3}, "'tracks.t.seeds' is unknown"),
                           ({"drop": ["adult"]}, "'tracks.t.horizons' is missing")]:
        with pytest.raises(suite.SuiteError, match=re.escape(message)):
            suite.parse({**data, "tracks": {"t": track}})
    with pytest.raises(suite.SuiteError, match="built-in tracks"):
        suite.parse({**data, "tracks": {"quick": {"horizons": {}}}})


# --- the statistics, on cases computed by hand ------------------------------------------------------

def test_ratio_ci_is_exact_when_the_agent_is_a_fixed_fraction_of_random():
    r = np.array([10.0, 30.0, 20.0, 50.0])
    assert stats.ratio_ci(0.25 * r, r) == pytest.approx((0.25, 0.25, 0.25))


def test_ratio_ci_on_two_seeds_is_the_resamples_quantiles():
    # resamples of seeds {0, 1}: (0, 0) -> 1/2, (1, 1) -> 3/2, mixed -> 4/4; each end has mass 1/4 > 2.5%
    assert stats.ratio_ci([1.0, 3.0], [2.0, 2.0]) == pytest.approx((1.0, 0.5, 1.5))
    ratio, low, high = stats.ratio_ci([3.0], [4.0])
    assert ratio == 0.75 and np.isnan(low) and np.isnan(high)


def test_ratio_ci_pairs_the_seeds():
    # the agent is Random's half on every seed, but seeds differ wildly: paired, the interval is a point
    r = np.array([1.0, 100.0, 5.0, 1000.0, 30.0])
    _, low, high = stats.ratio_ci(r / 2, r)
    assert low == high == pytest.approx(0.5)


@pytest.mark.parametrize("n, zeros", [(2, 0), (5, 1), (10, 0), (10, 3), (13, 0)])
def test_ratio_ci_is_scipys_paired_percentile_bootstrap_bit_for_bit(n, zeros):
    """ratio_ci draws scipy.stats.bootstrap's resamples itself: its interval must be scipy's, to
    the last bit, on regrets of other scales and seeds than the references' (and Random at 0 on
    some seeds, so some resamples divide by 0)."""
    from scipy import stats as sp

    rng = np.random.default_rng(n * 10 + zeros)
    a, r = rng.gamma(2.0, 3.0, n), rng.gamma(2.0, 50.0, n)
    r[:zeros] = 0.0
    for seed in (0, 7):
        ci = sp.bootstrap((a, r), lambda x, y, axis: x.mean(axis) / y.mean(axis), paired=True, vectorized=True,
                          n_resamples=stats.RESAMPLES, method="percentile",
                          random_state=np.random.default_rng(seed)).confidence_interval
        assert stats.ratio_ci(a, r, seed=seed)[1:] == (ci.low, ci.high)


@pytest.mark.parametrize("n", [1, 2, 3, 40, 2000])
def test_percentiles_are_scipys_quantiles_bit_for_bit(n):
    """stats.percentiles is scipy.stats.quantile's linear method to the last bit, at levels and sizes
    the scorecard does not use, with ties, infinities (a resample of Random at 0) and a NaN."""
    from scipy import stats as sp

    rng = np.random.default_rng(n)
    for level in (0.95, 0.9, 0.5, 0.99):
        p = np.array([(1 - level) / 2, 1 - (1 - level) / 2])
        for x in (rng.standard_normal(n), np.round(rng.gamma(1.0, 2.0, n), 1), np.r_[rng.random(n - 1), np.inf]):
            with np.errstate(invalid="ignore"):              # 0 * inf, in scipy's formula as in ours
                np.testing.assert_array_equal(stats.percentiles(x, p), sp.quantile(x, p))
    assert np.isnan(stats.percentiles(np.r_[np.nan, rng.random(n)], p)).all()


def test_iqm_ci_draws_the_same_resamples_whether_cells_have_equal_seeds_or_not():
    """iqm_ci draws all cells' resamples in one call when every cell has as many seeds: the same
    interval, bit for bit, as one draw a cell (the path cells of unequal lengths take)."""
    rng = np.random.default_rng(3)
    cells = [rng.random(6) for _ in range(9)]
    one_call = stats.iqm_ci(cells, resamples=501)
    draw = np.random.default_rng(0)
    boot = np.hstack([c[draw.integers(0, 6, (501, 6))] for c in cells])
    from scipy import stats as sp

    tail = (1 - stats.LEVEL) / 2
    low, high = np.quantile(sp.trim_mean(boot, 0.25, axis=1), [tail, 1 - tail])
    assert one_call[1:] == (float(low), float(high))
    assert stats.iqm_ci([*cells, rng.random(4)], resamples=501)[1] != one_call[1]   # the other path runs


def test_scores_are_bsuite_normalised_and_clipped():
    np.testing.assert_allclose(stats.scores([0, 5, 10, 20], [8, 10, 10, 10]), [1, 0.5, 0, 0])
    np.testing.assert_allclose(stats.scores([10, 15, 30], [10, 10, 10], lower_is_better=False), [0, 0.5, 1])
    np.testing.assert_allclose(stats.scores([3, 0], [0, 2], lower_is_better=False), [np.nan, 0])   # no click


def test_iqm_is_the_mean_of_the_middle_half():
    assert stats.iqm(np.arange(1, 9)) == 4.5                  # mean of 3, 4, 5, 6
    assert stats.iqm([0, 0, 0, 0, 1, 1, 1, 100]) == 0.5       # the outlier is trimmed


def test_iqm_ci_resamples_within_cells():
    # each cell is constant: a stratified resample keeps 5 of each, so every IQM is that of the data (0.5);
    # pooled resampling would vary the mix and the interval would not be a point
    assert stats.iqm_ci([[0.2] * 5, [0.8] * 5]) == pytest.approx((0.5, 0.5, 0.5))
    iqm, low, high = stats.iqm_ci([np.linspace(0, 1, 10), np.linspace(0.2, 0.6, 10)])
    assert low < iqm < high


def test_outcome_wins_loses_and_ties_by_wilcoxon():
    b = np.array([5.0, 9, 2, 7, 4, 8, 6, 3, 10, 1])
    better = b - np.arange(1, 11)                             # lower regret on all 10 seeds: p = 2 / 2^10
    assert stats.outcome(better, b) == 1 and stats.outcome(b, better) == -1
    assert stats.outcome(b, b.copy()) == 0
    assert stats.outcome(b + [1, -1, 2, -2, 3, -3, 4, -4, 5, -5], b) == 0     # symmetric differences
    assert stats.outcome(better[:5], b[:5]) == 0              # 5 seeds: p >= 2 / 32 > 0.05, never a win
    assert stats.outcome(better[:6], b[:6]) == 1              # 6 seeds: p = 2 / 64
    assert stats.outcome(better, b, lower_is_better=False) == -1


def _scipy_p(d):
    import warnings

    from scipy.stats import wilcoxon

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)       # scipy's z of an all-zero row, unused
        return np.array([wilcoxon(r).pvalue for r in d])


def _differences(rng, n, ties):
    """20 rows of continuous differences (scipy's exact distribution) and `ties` rows with tied |d|
    and zeros (its permutation test)."""
    tied = rng.integers(-3, 4, (ties, n)) * 0.1                 # repeated values, zeros
    tied[:, 0] = tied[:, 1]                                     # every row ties (or holds two zeros)
    return np.vstack([rng.normal(0.3, 1, (20, n)), tied])


def test_signed_rank_p_is_scipys_wilcoxon_with_ties_and_zeros():
    """The vectorised exact test against scipy.stats.wilcoxon itself, row by row, n = 2..12 (rows
    with ties up to n = 10 here: scipy's permutation test takes 0.3 CPU-s a row at n = 10, 1.2 at
    12; the slow test below has them at 11 and 12), an all-zero row and a NaN."""
    rng = np.random.default_rng(0)
    for n in range(2, 13):
        d = _differences(rng, n, 4 if n <= 8 else 1 if n <= 10 else 0)
        if n == 5:
            d = np.vstack([d, np.zeros(n)])
        assert np.abs(stats.signed_rank_p(d) - _scipy_p(d)).max() <= 1e-12, n
        assert stats.signed_rank_p(d.reshape(-1, 1, n)).shape == (len(d), 1)
    assert np.isnan(stats.signed_rank_p([[1.0, np.nan, 2.0]]))[0]
    d = rng.normal(size=(3, 14)).round(0)                       # past 13: scipy row by row
    np.testing.assert_array_equal(stats.signed_rank_p(d), _scipy_p(d))


@pytest.mark.slow
def test_signed_rank_p_is_scipys_wilcoxon_with_ties_at_11_and_12():
    """As above, with ties at n = 11 and 12 (about 15 CPU-s, scipy's permutation tests)."""
    rng = np.random.default_rng(1)
    for n in (11, 12):
        d = _differences(rng, n, 4)
        assert np.abs(stats.signed_rank_p(d) - _scipy_p(d)).max() <= 1e-12, n


def test_outcomes_are_every_pairs_test_at_once():
    rng = np.random.default_rng(1)
    values = rng.normal(size=(6, 10)) + np.arange(6)[:, None] * 0.4
    values[5] = values[4].round(0)                                    # ties with zeros in a pair
    values[3] = values[2]                                             # a pair without a difference
    for lower in (True, False):
        got = stats.outcomes(values, lower)
        assert (got == -got.T).all() and (np.diag(got) == 0).all() and set(got.ravel()) == {-1, 0, 1}
        for i in range(6):
            for j in range(6):
                if i != j:
                    d = values[i] - values[j]
                    side = np.median(d) < 0 if lower else np.median(d) > 0
                    want = 0 if not d.any() or _scipy_p([d])[0] >= 0.05 else (1 if side else -1)
                    assert got[i, j] == want == stats.outcome(values[i], values[j], lower), (i, j)

def test_pairwise_is_outcomes_beside_each_pairs_p_value():
    v = np.random.default_rng(3).normal(size=(4, 8)) + np.arange(4)[:, None]
    won, p = stats.pairwise(v, True, 0.05)
    np.testing.assert_array_equal(won, stats.outcomes(v, True, 0.05))
    assert np.isnan(np.diag(p)).all() and np.array_equal(p, p.T, equal_nan=True)
    assert p[0, 3] == stats.signed_rank_p(v[0] - v[3]) == _scipy_p([v[0] - v[3]])[0]


def test_holm_on_a_family_computed_by_hand():
    # sorted 0.005, 0.01, 0.03, 0.04 times 4, 3, 2, 1: 0.02, 0.03, 0.06, 0.04 -> running max 0.02, 0.03, 0.06, 0.06
    np.testing.assert_allclose(stats.holm([0.01, 0.04, 0.03, 0.005]), [0.03, 0.06, 0.06, 0.02])
    assert (stats.holm([0.01, 0.04, 0.03, 0.005]) < 0.05).sum() == 2          # Bonferroni (x4) would keep 2 as well
    np.testing.assert_allclose(stats.holm([0.01, 0.02, 0.04]), [0.03, 0.04, 0.04])  # 0.03, 0.04, 0.04: all three kept
    np.testing.assert_allclose(stats.holm([[0.5, np.nan], [0.4, 0.9]]), [[1.0, np.nan], [1.0, 1.0]])  # NaN: out
    assert stats.holm([0.2])[0] == 0.2 and stats.holm([]).shape == (0,)
    smallest = 2 / 2 ** 10                                  # ten seeds, every difference of one sign
    assert smallest == stats.signed_rank_p(np.arange(1.0, 11))
    assert (stats.holm([smallest] * 25) < 0.05).all() and not (stats.holm([smallest] * 26) < 0.05).any()


def _rliable_probability_of_improvement(scores_x, scores_y):
    """rliable 1.2.0's `metrics.probability_of_improvement`, its code (runs x tasks arrays)."""
    from scipy.stats import mannwhitneyu

    probabilities = []
    for task in range(scores_x.shape[1]):
        if np.array_equal(scores_x[:, task], scores_y[:, task]):
            probabilities.append(0.5)
        else:
            u, _ = mannwhitneyu(scores_x[:, task], scores_y[:, task], alternative="greater")
            probabilities.append(u / (scores_x.shape[0] * scores_y.shape[0]))
    return np.mean(probabilities)


def test_probability_of_improvement_by_hand_and_as_rliable():
    # task 1: 1, 2, 3 against 2, 2: (0 + 0 + 1/2 + 1/2 + 1 + 1) / 6 = 1/2; task 2: 0.5, 0.5 against 0.5, 1: 1/4
    x, y = [np.array([1, 2, 3.]), np.array([0.5, 0.5])], [np.array([2, 2.]), np.array([0.5, 1])]
    assert stats.probability_of_improvement(x, y) == 0.375
    assert stats.probability_of_improvement(y, x) == 0.625              # P(X > Y) + P(Y > X) = 1
    rng = np.random.default_rng(0)
    a, b = rng.integers(0, 4, (10, 7)) / 4, rng.integers(0, 4, (10, 7)) / 4   # ties, as the clipped scores have
    assert stats.probability_of_improvement(list(a.T), list(b.T)) == pytest.approx(_rliable_probability_of_improvement(a, b))
    point, low, high = stats.probability_of_improvement_ci(list(a.T), list(b.T), resamples=500)
    assert low < point < high and 0 <= low and high <= 1
    one = [np.array([1.0]), np.array([0.0])]                            # one run a task: every resample is the point
    assert stats.probability_of_improvement_ci(one, [np.array([0.5]), np.array([0.5])], resamples=50) == (0.5, 0.5, 0.5)


def test_performance_profile_of_a_known_array():
    # 4 runs: 0, 0.5, 1 and 0.2; above 0: 3 of 4; above 0.4: 2; above 0.9: 1; above 1: none (strictly above)
    np.testing.assert_array_equal(stats.performance_profile([[0, 0.5, 1], [0.2, np.nan]], [0, 0.4, 0.9, 1]),
                                  [0.75, 0.5, 0.25, 0])
    assert len(stats.TAUS) == 21 and stats.performance_profile(np.ones(3))[-1] == 0


# --- end to end on the quick track ---------------------------------------------------------------

# one cell per tag (the replay and a dataset among them): the whole quick track is the slow test below
CELLS = ["s0-linear", "s0-logistic", "s2-h1", "s4-changing-2", "drifting-linear", "linear-noisy", "shuttle",
         "obd-replay"]


def write_suite(path: Path, cells=None, horizon: int | None = None, **top) -> Path:
    """The shipped suite bakeoff-v1 (BUILT: its references' rows are run, not copied; or its
    `cells`, each cut to `horizon` when given, and its top-level keys replaced by `top`) with the data cells on data/fixtures (a few hundred rows each, so no size
    check), as a suite file at `path`. The shipped named tracks are kept for the whole suite only
    (they name its cells); `tracks=` gives others."""
    shipped = tomllib.loads(suite.load(BUILT).path.read_text())
    if cells is not None or horizon is not None:
        shipped.pop("tracks")
    data = {**shipped, **top}
    text = "\n".join(f"{k} = {json.dumps(v)}" for k, v in data.items() if k not in ("cells", "quick", "tracks"))
    text += f"\nquick = {_toml(data['quick'])}\n"
    for name, track in data.get("tracks", {}).items():
        text += f"\n[tracks.{name}]\n" + "\n".join(f"{k} = {_toml(v)}" for k, v in track.items()) + "\n"
    for cell in data["cells"]:
        if cells is not None and cell["id"] not in cells:
            continue
        if "real-data" in cell["tags"]:
            cell["kwargs"] = {**cell.get("kwargs", {}), "data_home": str(FIXTURES), "check_size": False}
        if horizon is not None:
            cell["horizon"] = horizon
        text += "\n[[cells]]\n" + "\n".join(f"{k} = {_toml(v)}" for k, v in cell.items()) + "\n"
    path.write_text(text)
    return path


@pytest.fixture
def folder(tmp_path, monkeypatch):
    """The test's folder as the current one; afterwards the user's agent is unregistered again."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    registered = dict(agents.REGISTRY)
    yield tmp_path
    sys.modules.pop("my_bandits", None)
    agents.REGISTRY.clear()
    agents.REGISTRY.update(registered)
    gym.registry.pop("MyBandit-v0", None)


def _toml(value) -> str:
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {_toml(v)}" for k, v in value.items()) + " }"
    return json.dumps(value)


def scorecard_of(suite_file: Path) -> dict:
    """The quick track's scorecard of Random, LinUCB and the user's My-Greedy (--import) on `suite_file`."""
    argv = ["bench", "run", "--suite", str(suite_file), "--quick", "--out", "card", "--quiet",
            "--import", str(USER_MODULE), "--agents", "LinUCB,My-Greedy"]
    assert main(argv) == 0
    assert main(["bench", "report", "--out", "card", "--import", str(USER_MODULE)]) == 0
    return json.loads(Path("card/scorecard.json").read_text())


def check_scorecard(card: dict, suite_file: Path) -> None:
    s = suite.load(suite_file)
    names = ["Random", "LinUCB", "My-Greedy"]
    assert card["agents"] == names and list(card["cells"]) == [c.id for c in s.cells] and card["track"] == "quick"
    for cell_id, cell in card["cells"].items():
        rows = cell["agents"]
        assert cell["measure"] == ("reward" if cell_id == "obd-replay" else "regret")
        if cell["measure"] == "reward" and rows["Random"]["reward"] == 0:   # no click: nothing to normalise by
            assert all(r["ratio"] is None and r["score"] is None for r in rows.values())
            assert cell_id not in card["aggregates"]["overall"]["scored"]
        else:
            assert rows["Random"]["ratio"] == 1 and rows["Random"]["score"] == 0
            assert all(0 <= r["score"] <= 1 for r in rows.values())
        assert sorted(r["rank"] for r in rows.values()) in ([1, 2, 3], *([1, 2.5, 2.5], [1.5, 1.5, 3], [2, 2, 2]))
        for a in names:                               # 2 seeds: the test can only tie, and outcomes are antisymmetric
            assert all(rows[a]["outcomes"][b] == -rows[b]["outcomes"][a] == 0 for b in names if b != a)
    overall = card["aggregates"]["overall"]
    assert set(card["aggregates"]) == {"overall", *(t for c in s.cells for t in c.tags)}
    assert overall["iqm"]["Random"] == [0, 0, 0] and overall["wins_ties_losses"]["LinUCB"] == [0, 2 * len(s.cells), 0]
    assert all(low <= x <= high for x, low, high in overall["iqm"].values())
    text = Path("card/scorecard.md").read_text()
    assert all(f"| {c.id} |" in text for c in s.cells) and "no multiplicity correction" in text
    check_page(Path("card/scorecard.html").read_text(), len(s.cells))


def check_page(page: str, cells: int) -> None:
    """The HTML scorecard is one file that needs nothing else: no script, link, image or URL (the
    only "http" is the SVG namespace), and has its charts: the radar, the bars, a chart per cell."""
    assert page.count("<svg ") == 4 + cells and page.count("<polyline ") >= 2 * cells
    assert page.count("http") == page.count('xmlns="http://www.w3.org/2000/svg"')
    assert not any(tag in page for tag in ("<script", "<link", "<img", " src=", "url("))


def test_bench_run_and_report_end_to_end(folder):
    check_scorecard(scorecard_of(write_suite(folder / "few.toml", CELLS)), folder / "few.toml")


def test_an_unscored_cell_keeps_its_row_and_tests_but_leaves_the_iqm(folder):
    """The replay is `unscored` in the shipped suites: on the card with its clicks, interval and
    wins, out of the IQM, the profiles and the probability of improvement; the Markdown says why."""
    card = scorecard_of(write_suite(folder / "two.toml", ["s0-linear", "obd-replay"]))
    overall = card["aggregates"]["overall"]
    assert overall["cells"] == ["s0-linear", "obd-replay"] and overall["scored"] == ["s0-linear"]
    assert "too few" not in card["cells"]["s0-linear"] and "clicks a seed" in card["cells"]["obd-replay"]["unscored"]
    assert card["cells"]["obd-replay"]["agents"]["LinUCB"]["ratio_ci"]
    for agent in card["agents"]:              # the IQM of one cell's seeds is that cell's alone
        seeds = stats.scores(finals("card", agent, "s0-linear", card["seeds"])["regret"],
                             finals("card", "Random", "s0-linear", card["seeds"])["regret"])
        assert overall["iqm"][agent][0] == pytest.approx(stats.iqm(seeds))
    assert "Not in the IQM: obd-replay (1,500 accepted events" in Path("card/scorecard.md").read_text()
    with pytest.raises(suite.SuiteError, match="unscored"):
        suite.parse({**tomllib.loads(suite.load(BUILT).path.read_text()), "cells": [
            {"id": "a", "env": "CtxBandit/Linear-v0", "horizon": 10, "tags": ["linear"], "unscored": True}]})


@pytest.mark.slow
def test_the_whole_quick_track_runs(folder):
    check_scorecard(scorecard_of(write_suite(folder / "all.toml")), folder / "all.toml")


def test_a_cell_has_the_runners_numbers_and_a_rerun_resumes(folder):
    suite_file = write_suite(folder / "two.toml", CELLS[:2])
    argv = ["bench", "run", "--suite", str(suite_file), "--quick", "--out", "card", "--quiet", "--agents", "LinUCB"]
    assert main(argv) == 0
    cell = suite.load(suite_file).track(quick=True)[0][0]
    table = run(EnvSpec(cell.env, cell.kwargs), "LinUCB", seeds=[1000, 1001], horizon=cell.horizon)
    last = table.groupby("seed")["cum_regret"].last().to_numpy()
    np.testing.assert_array_equal(finals("card", "LinUCB", cell.id, [1000, 1001])["regret"], last)
    files = sorted(Path("card").rglob("*.parquet"))
    stamps = [f.stat().st_mtime_ns for f in files]
    assert main(argv) == 0                                  # nothing is run again
    assert [f.stat().st_mtime_ns for f in sorted(Path("card").rglob("*.parquet"))] == stamps


def test_a_folder_keeps_one_track_and_a_missing_agent_is_one_line(folder, capsys):
    suite_file = write_suite(folder / "one.toml", CELLS[:1])
    assert main(["bench", "run", "--suite", str(suite_file), "--quick", "--out", "card", "--quiet",
                 "--agents", "Random"]) == 0
    assert main(["bench", "run", "--suite", str(suite_file), "--out", "card", "--agents", "LinUCB"]) == 2
    assert "holds results of" in capsys.readouterr().err
    manifest = json.loads(Path("card/bench.json").read_text())
    manifest["wall_seconds"]["LinUCB"] = {}                  # an agent whose run was cut short
    Path("card/bench.json").write_text(json.dumps(manifest))
    assert main(["bench", "report", "--out", "card"]) == 2
    err = capsys.readouterr().err
    assert "LinUCB has no finished results for cell 's0-linear'" in err and len(err.splitlines()) == 1


def shown(name: str) -> str:
    """The table the docs show between `name`'s markers, on whichever page of docs/ holds them
    (scripts/make_tables.py's `shown`)."""
    import runpy

    return runpy.run_path(str(ROOT / "scripts" / "make_tables.py"))["shown"](name)[1]


def test_the_docs_table_is_the_suite():
    assert shown("suite") == suite.markdown_table(suite.load(suite.DEFAULT)), \
        "docs/bench_tracks.md's suite table is not the suite's: run `python scripts/make_tables.py`"


def test_an_unknown_agent_is_one_line_before_anything_runs(folder, capsys):
    suite_file = write_suite(folder / "one.toml", CELLS[:1])
    assert main(["bench", "run", "--suite", str(suite_file), "--quick", "--out", "card", "--agents", "LinUBC"]) == 2
    err = capsys.readouterr().err
    assert "LinUBC" in err and "LinUCB" in err and len(err.splitlines()) == 1 and not Path("card").exists()


# --- reference results ---------------------------------------------------------------------------

@pytest.mark.parametrize("agent, cells, track, key", [("LinUCB", ["s0-linear", "s4-changing-1"], "report", "bakeoff-v1"),
                                                       ("DeepFPL", ["s0-linear"], "report", "bakeoff-v1"),
                                                       ("NeuralUCB", ["s1-bernoulli-logistic"], "neural", "bakeoff-v1"),
                                                       ("BaSE", ["s0-linear", "s4-changing-1"], "report", "bakeoff-v2")])
def test_the_shipped_references_reproduce_exactly(folder, agent, cells, track, key):
    """`bench run` on cheap cells (three of the report seeds; on the neural track at its 500 rounds)
    gives the shipped rows of Random and the agent bit for bit (on a machine of other kernels,
    `reproduce.numerics`, within `reproduce.compare`'s tolerance across kernels: a torch agent's runs
    on an AMD CPU part from the Intel ones' at a near tie, NeuralUCB's here from round 248): code
    that changes their numbers cannot ship with stale references. The neural agents' were made with one torch thread; asked
    for two here, the runner pins one while it plays, and gives the two back after. On bakeoff-v2
    BaSE is given the cell's horizon, as its v2 references were made."""
    shipped = suite.load(key)
    where = references.folder(shipped, track)
    manifest = references.read(where, shipped, track=track)
    horizon = {c.horizon for c in shipped.track(track)[0] if c.id in cells}.pop() if track != "report" else None
    suite_file = write_suite(folder / "cheap.toml", cells, horizon=horizon, report_seeds="1000:1003",
                             **({"horizon_to_agents": True} if shipped.horizon_to_agents else {}))
    torch = pytest.importorskip("torch") if agent != "LinUCB" else None
    threads = torch and torch.get_num_threads()
    try:
        if torch:
            torch.set_num_threads(2)
        assert main(["bench", "run", "--suite", str(suite_file), "--out", "card", "--quiet", "--agents", agent]) == 0
        assert not torch or torch.get_num_threads() == 2
    finally:
        if torch:
            torch.set_num_threads(threads)
    for agent in ("Random", agent):
        table = references.table(where, manifest, agent)
        for cell in cells:
            mine = references.checkpoints(results("card", agent, cell)).reset_index(drop=True)
            theirs = table[(table["cell"] == cell) & (table["seed"] < 1003)].reset_index(drop=True)
            assert len(mine) == len(theirs) > 3 * 10
            for column in ("seed", "round"):
                np.testing.assert_array_equal(mine[column], theirs[column], err_msg=f"{agent} on {cell}: {column}")
            assert theirs["cum_reward"].notna().sum() == 3          # the reward is kept at the last round only
            across = not reproduce.same_numerics(manifest["agents"][agent], cell, torch is not None and agent != "Random")
            assert reproduce.compare(theirs, mine, False, across) == [], f"{agent} on {cell}"


def test_the_shipped_references_are_whole_small_and_match_their_manifest():
    shipped = suite.load(suite.DEFAULT)
    where = references.folder(shipped)
    manifest = references.read(where, shipped)
    assert {"Random", "LinUCB"} <= set(manifest["agents"])
    files = sorted(p.name for p in where.iterdir())
    assert files == sorted([references.MANIFEST, *(e["file"] for e in manifest["agents"].values())])
    for agent, entry in manifest["agents"].items():
        table = references.table(where, manifest, agent)            # read() checked the SHA-256
        assert entry["bytes"] == (where / entry["file"]).stat().st_size < 200_000
        assert set(entry["wall_seconds"]) == set(entry["cpu_seconds"]) == {c.id for c in shipped.cells}
        assert entry["versions"]["gym-ctxbandits"] and entry["machine"]["cores"]
        last = table.loc[table.groupby(["cell", "seed"])["round"].idxmax()]
        assert len(last) == len(shipped.cells) * len(shipped.report_seeds)
        horizons = last["cell"].map({c.id: c.horizon for c in shipped.cells}).astype(int)
        assert (last["round"] == horizons).all() and last[["act_seconds", "observe_seconds", "cum_reward"]].notna().all().all()


def test_the_glm_tracks_references_pin_the_track_and_hold_its_cells():
    shipped = suite.load(suite.DEFAULT)
    where = references.folder(shipped, "glm")
    manifest = references.read(where, shipped, track="glm")                   # the SHA-256 of every file checked
    cells = {c.id: c.horizon for c in shipped.track("glm")[0]}
    assert manifest["track"] == "glm" and {"Random", "UCB-GLM"} <= set(manifest["agents"])
    for agent in manifest["agents"]:
        table = references.table(where, manifest, agent)
        last = table.groupby(["cell", "seed"], observed=True)["round"].max().reset_index()
        assert len(last) == len(cells) * len(shipped.report_seeds)
        assert (last["round"] == last["cell"].map(cells).astype(int)).all()
    with pytest.raises(references.ReferenceMismatch, match="not of this suite's report track"):
        references.read(where, shipped)


def test_the_neural_tracks_references_hold_every_cell_at_500_rounds():
    """Every cell of the neural track is cut, so nothing is copied from the report track: the zoo and
    the costly neural agents were all run on it, every kept cell and seed to round 500."""
    shipped = suite.load(BUILT)
    where = references.folder(shipped, "neural")
    manifest = references.read(where, shipped, track="neural")                # the SHA-256 of every file checked
    cells = shipped.track("neural")[0]
    assert manifest["track"] == "neural" and {"Random", "LinUCB"} <= set(manifest["agents"])
    for agent, entry in manifest["agents"].items():
        assert "reused" not in entry and set(entry["cpu_seconds"]) == {c.id for c in cells}
        assert "accelerator" not in entry or entry["versions"]["torch"]          # Neural-ES: made on a GPU
        last = references.table(where, manifest, agent).groupby(["cell", "seed"], observed=True)["round"].max()
        assert len(last) == len(cells) * len(shipped.report_seeds) and (last == 500).all()


def test_the_short_glm_tracks_references_are_the_neural_tracks_rows_beside_glm_fpl():
    """Every cell of the short GLM track is a neural-track cell, so every neural-track agent's rows
    there are copies of its neural-track file at its current SHA-256 (Neural-ES's keep its GPU);
    GLM-FPL, which fits no other track, was run on it, all 32 cells and ten seeds to round 500."""
    shipped = suite.load(BUILT)
    where = references.folder(shipped, "glm-short")
    mine = references.read(where, shipped, track="glm-short")
    theirs = references.read(references.folder(shipped, "neural"), shipped, track="neural", verify=False)
    cells = [c.id for c in shipped.track("glm-short")[0]]
    for agent, entry in theirs["agents"].items():
        assert mine["agents"][agent]["reused"]["sha256"] == entry["sha256"], \
            f"{agent}'s neural-track reference changed: run `ctxbandits bench regen --track glm-short --agents {agent}`"
        assert mine["agents"][agent]["reused"]["cells"] == cells
        assert mine["agents"][agent].get("accelerator") == entry.get("accelerator")
    assert set(mine["agents"]) - set(theirs["agents"]) == {"GLM-FPL"} and "reused" not in mine["agents"]["GLM-FPL"]
    last = references.table(where, mine, "GLM-FPL").groupby(["cell", "seed"], observed=True)["round"].max()
    assert len(last) == len(cells) * len(shipped.report_seeds) and (last == 500).all()


def test_the_bounded_tracks_references_are_the_report_tracks_rows_beside_s2s_agents():
    """The bounded track plays the report track's own cells and horizons, so every report-track agent's
    rows there are copies of its report-track file at its current SHA-256; [S2]'s five, which cannot
    play the report track, were run on it, on all 18 cells and ten seeds to each cell's horizon."""
    shipped = suite.load(BUILT)
    where = references.folder(shipped, "bounded")
    mine = references.read(where, shipped, track="bounded")                  # the SHA-256 of every file checked
    theirs = references.read(references.folder(shipped), shipped, verify=False)
    cells = {c.id: c.horizon for c in shipped.track("bounded")[0]}
    for agent, entry in theirs["agents"].items():
        assert mine["agents"][agent]["reused"]["sha256"] == entry["sha256"], \
            f"{agent}'s report-track reference changed: run `ctxbandits bench regen --track bounded --agents {agent}`"
        assert mine["agents"][agent]["reused"]["cells"] == list(cells)
    s2 = {"NeuralLog-UCB-1", "NeuralLog-UCB-2", "NeuralLog-TS-1", "NeuralLog-TS-2", "NCBF-UCB"}
    assert s2 <= set(mine["agents"]) and s2.isdisjoint(theirs["agents"])
    for agent in s2:
        assert "reused" not in mine["agents"][agent]
        last = references.table(where, mine, agent).groupby(["cell", "seed"], observed=True)["round"].max()
        assert len(last) == len(cells) * len(shipped.report_seeds)
        assert (last.to_numpy() == last.index.get_level_values("cell").map(cells).to_numpy()).all()


def test_regen_copies_report_rows_to_a_named_track_but_never_to_the_tuned_track():
    """A tuned agent plays other hyper-parameters than its report-track (defaults) rows: nothing is
    copied onto the tuned track, while the GLM track takes LinUCB's 30 shared cells."""
    shipped = suite.load(BUILT)
    assert references.reusable(shipped, "tuned", "LinUCB") is None
    assert references.reusable(shipped, "report", "LinUCB") is None
    assert len(references.reusable(shipped, "glm", "LinUCB")["cells"]) == 30
    assert references.reusable(shipped, "neural", "LinUCB") is None                 # every cell cut: nothing shared
    whole = references.reusable(shipped, "glm-short", "LinUCB")         # a track within another track: all its cells
    assert whole["from"] == "bakeoff-v1-neural/LinUCB.parquet" and len(whole["cells"]) == 32


def test_the_glm_tracks_references_of_the_shared_cells_are_the_report_tracks_rows():
    """On the 30 cells the two tracks share, an agent's GLM-track rows are its report-track rows:
    Random's, run on all 33 cells, bit for bit (timings aside), which is why `bench regen --track
    glm` copies them; the others' copied from the report track's file that their manifest names, at
    its current SHA-256 (a report-track reference rebuilt makes the copy stale: regen it too)."""
    shipped = suite.load(BUILT)
    report, glm = references.folder(shipped), references.folder(shipped, "glm")
    theirs = references.read(report, shipped)
    mine = references.read(glm, shipped, track="glm")
    shared = [c.id for c in shipped.track("glm")[0] if c.horizon == {d.id: d for d in shipped.cells}[c.id].horizon]
    assert len(shared) == 30 and "Random" in theirs["agents"] and "reused" not in mine["agents"]["Random"]
    copies = {a: e["reused"] for a, e in mine["agents"].items() if "reused" in e}
    assert set(theirs["agents"]) - {"Random"} <= set(copies), "regen --track glm the report track's other agents"
    for agent in ("Random", *copies):
        if agent in copies:
            assert copies[agent]["from"] == f"{report.name}/{theirs['agents'][agent]['file']}"
            assert copies[agent]["sha256"] == theirs["agents"][agent]["sha256"], \
                f"{agent}'s report-track reference changed: run `ctxbandits bench regen --track glm --agents {agent}`"
            assert copies[agent]["cells"] == shared
        a, b = (references.table(w, m, agent) for w, m in ((report, theirs), (glm, mine)))
        a, b = (t[t["cell"].isin(shared)].astype({"cell": str}).reset_index(drop=True) for t in (a, b))
        columns = ["cell", "seed", "round", "cum_regret", "cum_reward"] + ["act_seconds"] * (agent in copies)
        pd.testing.assert_frame_equal(a[columns], b[columns], obj=agent)
        np.testing.assert_array_equal(a["act_seconds"].isna(), b["act_seconds"].isna())


def test_the_docs_table_is_the_references():
    shipped = suite.load(BUILT)
    assert shown("references") == references.markdown_table(references.read(references.folder(shipped), shipped)), \
        "docs/bench_references.md's references table is not the manifest's: run `python scripts/make_tables.py`"


@pytest.mark.tables
@pytest.mark.parametrize("track", ["report", "glm", "bounded", "neural", "glm-short"])
def test_the_docs_leaderboard_is_the_references(track):
    """The leaderboard of each track's references ranks every shipped agent by its overall IQM
    (Random's is 0) and is the one the docs show between the track's markers (docs/benchmark.md the
    report track's, docs/bench_tracks.md the named tracks')."""
    from gym_ctxbandits.bench import leaderboard

    shipped = suite.load(suite.DEFAULT)
    board = leaderboard.card(shipped, track=track)
    assert len(board["cells"]) == len(shipped.track(track)[0])
    manifest = references.read(references.folder(shipped, track), shipped, verify=False, track=track)
    assert sorted(board["agents"]) == sorted(manifest["agents"])
    table = leaderboard.markdown(board)
    rows = [line.split(" | ") for line in table.splitlines()[2:]]
    iqm = {row[1]: float(row[2].split()[0]) for row in rows}
    assert list(iqm.values()) == sorted(iqm.values(), reverse=True) and iqm["Random"] == 0 < iqm["LinUCB"]
    name = "leaderboard" if track == "report" else f"leaderboard-{track}"
    assert shown(name) == table, \
        f"the docs' {track} track leaderboard is not the references': run `python scripts/make_tables.py`"


def test_every_registered_agent_has_a_reference_or_a_stated_reason():
    shipped = suite.load(suite.DEFAULT)
    manifest = references.read(references.folder(shipped), shipped, verify=False)
    missing = references.absent(manifest)
    assert {"Random", "LinUCB"}.isdisjoint(missing) and "NeuralUCB" in missing
    assert "not built yet" not in missing.values(), \
        f"add a reason to references.WHY_ABSENT for {[a for a, r in missing.items() if r == 'not built yet']}"


def test_a_named_track_runs_reports_and_packs_apart_from_the_report_track(folder, capsys):
    """`--track` plays the track's cells at their horizons into a folder of its own (a run of another
    track into it is refused), the scorecard says the track, and its references pin it: those of
    the report track are refused for it."""
    short = {"description": "s0-linear cut", "horizons": {"s0-linear": 30}, "drop": ["s4-changing-1"]}
    suite_file = write_suite(folder / "tracked.toml", ["s0-linear", "s4-changing-1"], horizon=60,
                             report_seeds="1000:1003", tracks={"short": short})
    run = ["bench", "run", "--suite", str(suite_file), "--quiet", "--agents"]
    assert main([*run, "LinUCB", "--track", "short", "--out", "card"]) == 0
    assert json.loads(Path("card/bench.json").read_text())["track"] == "short"
    assert results("card", "LinUCB", "s0-linear")["round"].max() == 30 and not Path("card/LinUCB/s4-changing-1").exists()
    capsys.readouterr()
    assert main([*run, "LinUCB", "--out", "card"]) == 2                          # the report track: refused
    assert "holds results of" in capsys.readouterr().err
    assert main(["bench", "regen", "--suite", str(suite_file), "--agents", "Random,Greedy", "--track", "short",
                 "--dest", "refs", "--quiet"]) == 0
    assert main(["bench", "regen", "--suite", str(suite_file), "--agents", "Random", "--dest", "report-refs",
                 "--quiet"]) == 0
    assert main(["bench", "report", "--out", "card", "--references", "refs"]) == 0
    card = json.loads(Path("card/scorecard.json").read_text())
    assert card["track"] == "short" and list(card["cells"]) == ["s0-linear"] and card["cells"]["s0-linear"]["horizon"] == 30
    assert card["agents"] == ["Random", "LinUCB", "Greedy"] and "short track" in Path("card/scorecard.md").read_text()
    capsys.readouterr()
    assert main(["bench", "report", "--out", "card", "--references", "report-refs"]) == 2
    assert "not of this suite's short track: their 'track' differs" in capsys.readouterr().err


def test_regen_of_a_track_copies_the_report_tracks_cells_and_a_rerun_gives_the_same_rows(folder):
    """On a named track, LinUCB (which has report-track references) runs only the cut cell; the
    report track's own cell is copied from its shipped file, and the manifest says from which file
    and SHA-256. `--rerun-all` runs that cell too, and its rows are the copied ones bit for bit (the
    act/observe seconds aside: timings)."""
    shipped = suite.load(BUILT)
    entry = references.read(references.folder(shipped), shipped, verify=False)["agents"]["LinUCB"]
    cut = {"description": "s4-changing-1 cut", "horizons": {"s4-changing-1": 20}}
    suite_file = write_suite(folder / "bakeoff.toml", ["s0-linear", "s4-changing-1"], tracks={"cut": cut})
    regen = ["bench", "regen", "--suite", str(suite_file), "--agents", "LinUCB", "--track", "cut", "--quiet"]
    assert main([*regen, "--dest", "refs", "--work", "work"]) == 0
    assert Path("work/LinUCB/s4-changing-1").exists() and not Path("work/LinUCB/s0-linear").exists()
    s = suite.load(suite_file)
    manifest = references.read(Path("refs"), s, track="cut")
    reused = manifest["agents"]["LinUCB"]["reused"]
    assert (reused["from"], reused["sha256"], reused["cells"]) == ("bakeoff-v1/LinUCB.parquet", entry["sha256"],
                                                                  ["s0-linear"])
    assert manifest["agents"]["LinUCB"]["cpu_seconds"]["s0-linear"] == entry["cpu_seconds"]["s0-linear"]
    assert main([*regen, "--dest", "rerun", "--work", "work2", "--rerun-all"]) == 0
    assert Path("work2/LinUCB/s0-linear").exists()
    assert "reused" not in references.read(Path("rerun"), s, track="cut")["agents"]["LinUCB"]
    copied, rerun = (references.table(Path(p), manifest, "LinUCB") for p in ("refs", "rerun"))
    assert len(copied) == len(rerun) > 10 * 20
    for column in ("cell", "seed", "round", "cum_regret", "cum_reward"):
        np.testing.assert_array_equal(copied[column].astype(str if column == "cell" else float),
                                      rerun[column].astype(str if column == "cell" else float), err_msg=column)
    np.testing.assert_array_equal(copied["act_seconds"].isna(), rerun["act_seconds"].isna())


def test_a_named_tracks_tuned_twin_plays_each_agents_one_configuration_and_copies_the_tuned_tracks_cells(folder):
    """On a named track's tuned twin, an agent tuned on the report track plays that configuration
    (one per agent per suite): LinUCB's cut cell is run with it and its other cell copied from the
    tuned track's shipped file, whose rows a rerun gives bit for bit; the manifest pins the tuned
    file it played."""
    from gym_ctxbandits.bench import tune

    shipped = suite.load(BUILT)
    tuned = references.read(references.folder(shipped, "tuned"), shipped, track="tuned", verify=False)
    config = tune.read(tune.shipped(shipped))["agents"]["LinUCB"]["config"]
    assert tuned["agents"]["LinUCB"]["config"] == config != {}
    cut = {"description": "s4-changing-1 cut", "horizons": {"s4-changing-1": 20}}
    suite_file = write_suite(folder / "bakeoff.toml", ["s0-linear", "s4-changing-1"], tracks={"cut": cut})
    s = suite.load(suite_file)
    played = tune.played(s, "cut")
    assert played["track"] == "cut" and played["agents"]["LinUCB"]["track"] == "report"
    assert references.reusable(s, "cut-tuned", "LinUCB", config={"alpha": 1.0, "lam": 1.0}) is None   # another config
    regen = ["bench", "regen", "--suite", str(suite_file), "--agents", "LinUCB", "--track", "cut", "--tuned",
             "shipped", "--quiet"]
    assert main([*regen, "--dest", "refs", "--work", "work"]) == 0
    assert Path("work/LinUCB/s4-changing-1").exists() and not Path("work/LinUCB/s0-linear").exists()
    assert json.loads(Path("work/bench.json").read_text())["tuned"]["configs"] == {"LinUCB": config}
    manifest = references.read(Path("refs"), s, track="cut-tuned")
    entry = manifest["agents"]["LinUCB"]
    assert entry["config"] == config and entry["reused"]["from"] == "bakeoff-v1-tuned/LinUCB.parquet"
    assert entry["reused"]["cells"] == ["s0-linear"] and manifest["tuned_file"] == tune.pins(played)
    assert main([*regen, "--dest", "rerun", "--work", "work2", "--rerun-all"]) == 0
    copied, rerun = (references.table(Path(p), manifest, "LinUCB") for p in ("refs", "rerun"))
    for column in ("cell", "seed", "round", "cum_regret", "cum_reward"):
        np.testing.assert_array_equal(copied[column].astype(str if column == "cell" else float),
                                      rerun[column].astype(str if column == "cell" else float), err_msg=column)


def test_a_tuned_twin_whose_agent_is_all_copied_takes_its_sources_configuration(folder):
    """A tuned twin of a track made only of report-track cells (the bounded track's case): LinUCB
    and Random run nothing, every row copied from the tuned track's files, and each entry says the
    configuration it played there."""
    from gym_ctxbandits.bench import tune

    shipped = suite.load(BUILT)
    config = tune.read(tune.shipped(shipped))["agents"]["LinUCB"]["config"]
    kept = {"description": "s0-linear only", "horizons": {}, "drop": ["s4-changing-1"]}
    suite_file = write_suite(folder / "bakeoff.toml", ["s0-linear", "s4-changing-1"], tracks={"kept": kept})
    assert main(["bench", "regen", "--suite", str(suite_file), "--agents", "LinUCB,Random", "--track", "kept",
                 "--tuned", "shipped", "--quiet", "--dest", "refs", "--work", "work"]) == 0
    assert not Path("work").exists()
    entries = references.read(Path("refs"), suite.load(suite_file), track="kept-tuned")["agents"]
    assert entries["LinUCB"]["config"] == config and entries["Random"]["config"] == {}
    assert entries["LinUCB"]["reused"]["cells"] == entries["Random"]["reused"]["cells"] == ["s0-linear"]


def tiny(folder: Path) -> Path:
    """Two cells of 60 rounds on six report seeds (enough for a win): a suite to regen in a second."""
    return write_suite(folder / "tiny.toml", ["s0-linear", "s4-changing-1"], horizon=60, report_seeds="1000:1006")


def zoo_card(folder: Path) -> dict:
    """The references of Random, LinUCB and Greedy on the tiny suite, and the user's My-Greedy run
    and reported beside them."""
    suite_file = tiny(folder)
    assert main(["bench", "regen", "--suite", str(suite_file), "--agents", "Random,LinUCB,Greedy", "--dest", "refs",
                 "--quiet"]) == 0
    assert main(["bench", "run", "--suite", str(suite_file), "--out", "card", "--quiet", "--import", str(USER_MODULE),
                 "--agents", "My-Greedy"]) == 0
    assert main(["bench", "report", "--out", "card", "--references", "refs", "--import", str(USER_MODULE)]) == 0
    return json.loads(Path("card/scorecard.json").read_text())


def test_regen_writes_references_and_report_takes_them_as_the_zoo(folder):
    card = zoo_card(folder)
    s = suite.load(folder / "tiny.toml")
    manifest = references.read(Path("refs"), s)
    assert list(manifest["agents"]) == ["Greedy", "LinUCB", "Random"]
    assert card["agents"] == ["Random", "My-Greedy", "Greedy", "LinUCB"] and card["new"] == ["My-Greedy"]
    assert card["references"] == {"folder": "refs", "agents": ["Greedy", "LinUCB"]}     # Random: the folder's own
    table = references.table(Path("refs"), manifest, "LinUCB")
    for cell in s.cells:
        final = table[table["cell"] == cell.id].groupby("seed")["cum_regret"].last().mean()
        assert card["cells"][cell.id]["agents"]["LinUCB"]["regret"] == final
        assert sorted(r["rank"] for r in card["cells"][cell.id]["agents"].values()) == [1, 2, 3, 4]
    for a in card["agents"]:                                      # outcomes stay antisymmetric across sources
        for b in card["agents"]:
            if a != b:
                assert card["aggregates"]["overall"]["wins_minus_losses"][a][b] == \
                    -card["aggregates"]["overall"]["wins_minus_losses"][b][a]
    assert "from the shipped references: Greedy, LinUCB" in Path("card/scorecard.md").read_text()
    check_page(Path("card/scorecard.html").read_text(), len(s.cells))
    # the cost per 1,000 rounds: the manifests' CPU seconds (bench.json's, the references') over the rounds played
    played = len(s.report_seeds) * sum(c.horizon for c in s.cells)
    for agent, cpu in (("LinUCB", manifest["agents"]["LinUCB"]["cpu_seconds"]),
                       ("My-Greedy", json.loads(Path("card/bench.json").read_text())["cpu_seconds"]["My-Greedy"])):
        assert card["cost"][agent]["cpu_seconds_per_1k_rounds"] == pytest.approx(1000 * sum(cpu.values()) / played)
    # every distinct pair on every cell is one test of the family Holm corrects
    assert card["multiplicity"]["tests"] == 6 * len(s.cells) and card["multiplicity"]["holm"] <= \
        card["multiplicity"]["decided"] and card["baseline"] is None and "against" not in card
    # six seeds: the smallest p-value is 2 / 64, so Holm keeps something in a family of one test only
    assert card["multiplicity"]["smallest_p"] == 2 / 64 and card["multiplicity"]["largest_family"] == 1


def test_report_against_a_baseline_prints_the_pairwise_table_and_costs(folder, capsys):
    """`bench report FOLDER --baseline LinUCB` (the folder as `ctxbandits plot` takes it, or --out):
    the overall table ranked with each agent's cost, the pairwise table against LinUCB with its
    Holm-corrected count and probability of improvement, the multiple-testing caveat."""
    from gym_ctxbandits.bench import report, run

    zoo_card(folder)
    calls = []                                  # the folder, its suite and its track read once, not once a part
    with pytest.MonkeyPatch.context() as patch:
        for module, name in ((report, "read_manifest"), (report, "suite_of"), (run, "suite_of")):
            patch.setattr(module, name, lambda *a, f=getattr(module, name), n=name: calls.append(n) or f(*a))
        patch.setattr(suite.Suite, "track", lambda self, t, f=suite.Suite.track: calls.append("track") or f(self, t))
        assert main(["bench", "report", "card", "--references", "refs", "--import", str(USER_MODULE),
                     "--baseline", "LinUCB", "--highlight", "Greedy"]) == 0
    assert sorted(calls) == ["read_manifest", "suite_of", "track", "track"], calls   # one: references.read's check
    card = json.loads(Path("card/scorecard.json").read_text())
    text = Path("card/scorecard.md").read_text()
    order = sorted(card["agents"], key=lambda a: -card["aggregates"]["overall"]["iqm"][a][0])
    rows = [line for line in text.splitlines() if re.match(r"\| \d+ \| .* \| defaults \|", line)]
    assert [r.split(" | ")[1] for r in rows] == order and rows[0].startswith("| 1 | ")       # ranked, best first
    assert "| CPU-s / 1k rounds |" in text and f"{card['cost']['LinUCB']['cpu_seconds_per_1k_rounds']:.3g} |" in text
    assert "## Against LinUCB" in text and "| W / T / L vs LinUCB | W / T / L after Holm | P(agent > LinUCB)" in text
    against = card["against"]
    assert set(against) == {"Random", "My-Greedy", "Greedy"}
    for a, row in against.items():
        calls = [card["cells"][c]["agents"][a]["outcomes"]["LinUCB"] for c in card["cells"]]
        assert row["wins_ties_losses"] == [calls.count(1), calls.count(0), calls.count(-1)]
        w, t, l = row["holm_wins_ties_losses"]
        assert w <= row["wins_ties_losses"][0] and l <= row["wins_ties_losses"][2] and w + t + l == len(calls)
        assert f"| {a} | {' / '.join(map(str, row['wins_ties_losses']))} |" in text
    assert against["Random"]["probability_of_improvement"] == [0, 0, 0]     # Random scores 0, LinUCB more
    assert "Multiple testing: the wins and losses are 12 signed-rank tests" in text and "Holm" in text
    assert card["highlight"] == ["My-Greedy", "Greedy", "LinUCB"]
    page = Path("card/scorecard.html").read_text()
    radar = re.search(r'<svg [^>]*aria-label="IQM score by tag".*?</svg>', page).group()
    assert "<h2>Against LinUCB</h2>" in page and radar.count("<polygon ") == 4 + 3       # 4 levels, the 3 chosen
    # both spellings of the folder; two different folders, or an unknown agent, are one line
    assert main(["bench", "report", "--out", "card", "card/", "--references", "refs", "--import", str(USER_MODULE)]) == 0
    capsys.readouterr()
    for argv, words in ((["bench", "report", "card", "--out", "refs"], "two folders given, card and --out refs"),
                        (["bench", "report"], "needs the folder"),
                        (["bench", "report", "card", "--references", "refs", "--baseline", "LinTS"],
                         "LinTS: not on this scorecard")):
        assert main([*argv, "--import", str(USER_MODULE)]) == 2
        err = capsys.readouterr().err
        assert len(err.strip().splitlines()) == 1 and words in err, err


def test_a_reference_made_off_the_cpu_names_its_device_and_holds_one_device(folder):
    """A torch agent's runs on a GPU give its manifest entry an `accelerator` (its numbers are the
    CPU's only up to float tolerance); a numpy agent's never, whatever the comparison's device; and
    one file never mixes devices. The GPU runs are made here by recording the device as a GPU run does."""
    s = suite.load(tiny(folder))
    assert main(["bench", "run", "--suite", str(s.path), "--out", "w", "--quiet", "--agents", "LinUCB,DeepFPL"]) == 0

    def played(agent, device, cells):
        for cell in cells:
            path = Path("w", agent, cell, "manifest.json")
            run = json.loads(path.read_text())
            path.write_text(json.dumps({**run, "config": {**run["config"], "device": device}}))

    for agent in ("LinUCB", "DeepFPL"):
        played(agent, "cuda", [c.id for c in s.cells])
    manifest = references.pack(Path("w"), s, ["LinUCB", "DeepFPL"], Path("refs"))
    assert "accelerator" not in manifest["agents"]["LinUCB"]
    assert manifest["agents"]["DeepFPL"]["accelerator"].split(":")[0] == "cuda"
    played("DeepFPL", "cpu", [s.cells[0].id])
    with pytest.raises(references.ReferenceMismatch, match="DeepFPL's runs in w played on several devices"):
        references.pack(Path("w"), s, ["DeepFPL"], Path("refs"))


def test_references_of_another_suite_or_a_changed_file_are_one_line(folder, capsys):
    suite_file = tiny(folder)
    assert main(["bench", "regen", "--suite", str(suite_file), "--agents", "Random", "--dest", "refs", "--quiet"]) == 0
    other = write_suite(folder / "other.toml", ["s0-linear"], horizon=30, report_seeds="1000:1006")
    assert main(["bench", "run", "--suite", str(other), "--out", "card", "--quiet", "--agents", "Random"]) == 0
    assert main(["bench", "report", "--out", "card", "--references", "refs"]) == 2
    err = capsys.readouterr().err
    assert "not of this suite's report track: their 'cells' differs" in err and len(err.splitlines()) == 1
    with open("refs/Random.parquet", "ab") as f:
        f.write(b"\0")
    assert main(["bench", "run", "--suite", str(suite_file), "--out", "card2", "--quiet", "--agents", "Random"]) == 0
    assert main(["bench", "report", "--out", "card2", "--references", "refs"]) == 2
    err = capsys.readouterr().err
    assert "Random.parquet is missing or does not match its SHA-256" in err and len(err.splitlines()) == 1


def test_checkpoints_are_log_spaced_and_even_and_keep_the_last_round():
    rows = pd.DataFrame({"seed": np.repeat([1, 2], 100), "round": np.tile(np.arange(20, 2001, 20), 2)})
    kept = references.checkpoints(rows)
    for _, g in kept.groupby("seed"):
        assert g["round"].iloc[0] == 20 and g["round"].iloc[-1] == 2000 and g["round"].is_monotonic_increasing
        assert {20, 40, 60, 500, 1000, 1500} <= set(g["round"]) and len(g) == 20


def crowd(folder: Path, agents: int = 25) -> tuple[dict, dict]:
    """The card and curves of `agents` agents on the tiny suite, their rows made up (no run): Random,
    one new agent and a zoo of the others, LinUCB-like names of every length; baseline Zoo-01."""
    from gym_ctxbandits.bench import report

    s = suite.load(tiny(folder))
    cells, seeds = s.track("report")
    rng = np.random.default_rng(0)
    names = ["Random", "My-New-Agent", *[f"Zoo-{i:02d}" + "-long-name" * (i % 3 == 0) for i in range(agents - 2)]]
    rounds = np.array([1, 3, 6, 12, 24, 45, 60])
    tables = {a: {c.id: pd.DataFrame([(seed, r, (0.5 if a == "Random" else slope) * r * u, 0.5 * r)
                                      for seed, u in zip(seeds, rng.uniform(0.7, 1.3, len(seeds))) for r in rounds],
                                     columns=["seed", "round", "cum_regret", "cum_reward"])
                  for c, slope in zip(cells, rng.uniform(0.02, 0.5, len(cells)))} for a in names}
    manifest = {"suite": s.name, "version": s.version, "track": "report"}
    cpu = {a: {c.id: float(10 ** rng.uniform(-1, 2)) for c in cells} for a in names}
    card = report._card(manifest, names[:2], tables, {"folder": "made up", "agents": names[2:]}, 0.05, 200, suite=s,
                        cpu=cpu, baseline="Zoo-01", highlight=["Zoo-02"])
    return json.loads(json.dumps(report._finite(card))), report.curves(card, tables, spread=True)


def test_every_agent_has_a_colour_of_its_own_however_many():
    from gym_ctxbandits.bench import html

    for n in (3, 25, 60):
        for new in (1, min(9, n)):
            card = {"agents": ["Random", *[f"A{i}" for i in range(n)]], "new": [f"A{i}" for i in range(new)]}
            colour = html.colours(card)
            assert set(colour) == set(card["agents"]) and len(set(colour.values())) == len(colour)
            assert colour["Random"] == html.RANDOM and colour["A0"] == html.NEW[0]


def test_the_page_of_25_agents_is_readable(folder):
    """25 agents: no colour twice, a legend under every curve panel and a spread band per drawn agent,
    the radar drawing the chosen agents only, the matrix in a box that scrolls, the cost and the
    profile charts."""
    from gym_ctxbandits.bench import html

    card, lines = crowd(folder)
    page = html.page(card, lines)
    check_page(page, len(card["cells"]))
    colour = html.colours(card)
    assert len(card["agents"]) == 25 and len(set(colour.values())) == 25
    assert card["highlight"] == ["My-New-Agent", "Zoo-02", "Zoo-01"]
    radar = re.search(r'<svg [^>]*aria-label="IQM score by tag".*?</svg>', page).group()
    assert radar.count("<polygon ") == 4 + 3
    for cell_id in card["cells"]:
        panel = re.search(rf'<svg [^>]*aria-label="regret curves of {cell_id}".*?</svg>', page).group()
        drawn = html.chosen(card, cell_id)
        assert panel.count("<polyline ") == panel.count("<polygon ") == len(drawn) == 5      # a line and a band each
        assert all(f"<title>{a}</title>" in panel for a in drawn)         # the legend names each
    assert re.search(r'<div class="scroll"><table><tr><th>row vs column</th>', page)
    scatter = re.search(r'<svg [^>]*aria-label="score against cost".*?</svg>', page).group()
    assert scatter.count("<circle ") == 25
    profile = re.search(r'<svg [^>]*aria-label="performance profiles".*?</svg>', page).group()
    assert profile.count("<polyline ") == 25 and profile.count('stroke-width="2.5"') == 3


# --- the HTML page in a real browser -------------------------------------------------------------

CHROMIUM = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
            "--disable-component-update", "--no-first-run", "--enable-logging=stderr", "--v=0"]


def chromium(page: Path, profile: Path, *options: str) -> subprocess.CompletedProcess:
    """Debian's Chromium, headless with a fresh profile, on the file `page`."""
    binary = shutil.which("chromium")
    if binary is None:
        pytest.fail("Chromium is not installed: `apt-get install -y chromium` (Debian) for the browser test")
    return subprocess.run([binary, *CHROMIUM, f"--user-data-dir={profile}", *options, page.resolve().as_uri()],
                          capture_output=True, text=True, timeout=120, check=False)


def console(stderr: str) -> list[str]:
    """The page's console messages and errors as Chromium logs them."""
    return [line for line in stderr.splitlines() if ":CONSOLE" in line]


@pytest.mark.slow
def test_the_html_scorecard_renders_in_headless_chromium(folder):
    card = zoo_card(folder)
    bad = folder / "bad.html"                                     # the check catches what it is for
    bad.write_text('<html><body><script>console.error("boom"); notDefined()</script></body></html>')
    assert len(console(chromium(bad, folder / "p0", "--dump-dom").stderr)) >= 2
    page = folder / "card" / "scorecard.html"
    shown = chromium(page, folder / "p1", "--dump-dom")
    assert shown.returncode == 0 and console(shown.stderr) == [], console(shown.stderr)
    dom = shown.stdout                                            # the DOM as the browser built it
    assert dom.count("<svg ") == 4 + len(card["cells"]) and dom.count("<polygon ") >= 4 + len(card["highlight"])
    drawn = sum(min(len(card["agents"]), 5) for _ in card["cells"])
    assert dom.count("<polyline ") == drawn + len(card["agents"])       # the curves, and a profile per agent
    shot = folder / "shot.png"
    assert chromium(page, folder / "p2", "--hide-scrollbars", "--window-size=1200,900",
                    f"--screenshot={shot}").returncode == 0
    import matplotlib.image

    pixels = matplotlib.image.imread(shot)
    assert pixels.shape[:2] == (900, 1200) and pixels[..., :3].std() > 0.05     # drawn, not a blank page


@pytest.mark.slow
def test_the_html_scorecard_of_25_agents_renders_in_headless_chromium(folder):
    """The page of 25 agents (`crowd`) in the browser: no console message, every chart in its DOM,
    the matrix's box scrolling instead of widening the page: a screenshot as wide as the window has
    its right half drawn, the page no wider than before (Chromium lays out what the CSS says)."""
    from gym_ctxbandits.bench import html

    card, lines = crowd(folder)
    page = folder / "crowd.html"
    page.write_text(html.page(card, lines))
    shown = chromium(page, folder / "p1", "--dump-dom")
    assert shown.returncode == 0 and console(shown.stderr) == [], console(shown.stderr)
    dom = shown.stdout
    assert dom.count("<svg ") == 4 + len(card["cells"]) and dom.count("<circle ") == 25
    assert dom.count("<polyline ") == 5 * len(card["cells"]) + 25 and '<div class="scroll">' in dom
    shot = folder / "shot.png"
    assert chromium(page, folder / "p2", "--hide-scrollbars", "--window-size=1200,1600",
                    f"--screenshot={shot}").returncode == 0
    import matplotlib.image

    pixels = matplotlib.image.imread(shot)[..., :3]
    assert pixels.shape[:2] == (1600, 1200) and pixels.std() > 0.05
    assert pixels[:, 1180:].std() < 0.02                           # the margin right of the page: nothing overflows


def test_the_processes_backend_spreads_the_cells_and_gives_the_inprocess_numbers(folder):
    """`--backend processes` runs the cells themselves on the workers (a batched agent makes a cell
    one unit, so spreading its seeds would leave workers idle): the rows are the in-process run's
    bit for bit, the numpy and the torch agents' alike, and every cell's seconds are recorded."""
    s = suite.load(write_suite(folder / "one.toml", ["s4-changing-1"], horizon=40, report_seeds="1000:1004"))
    for backend in ("inprocess", "processes"):
        assert main(["bench", "run", "--suite", str(s.path), "--out", backend, "--quiet", "--agents", "LinUCB,DeepFPL",
                     "--backend", backend, "--workers", "2"]) == 0
    for agent in ("Random", "LinUCB", "DeepFPL"):
        for cell in s.cells:
            mine, theirs = results(Path("processes"), agent, cell.id), results(Path("inprocess"), agent, cell.id)
            for column in ("seed", "round", "cum_regret", "cum_reward"):
                np.testing.assert_array_equal(mine[column], theirs[column], err_msg=f"{agent} on {cell.id}: {column}")
    record = json.loads(Path("processes/bench.json").read_text())
    assert all(set(record[k][a]) == {c.id for c in s.cells} for k in ("wall_seconds", "cpu_seconds") for a in record[k])


def test_the_cpu_clock_counts_an_ended_childs_seconds():
    """bench.json's and a study's CPU seconds count the processes backend's workers, which end with
    each cell's run: a child that burns 0.3 CPU-s moves the clock by about that (not by the parent's
    near-zero wait)."""
    from gym_ctxbandits.bench.run import cpu_clock

    burn = "import time\nt = time.process_time()\nwhile time.process_time() - t < 0.3: pass"
    start = cpu_clock()
    subprocess.run([sys.executable, "-c", burn], check=True)
    assert cpu_clock() - start >= 0.3


def test_bench_suites_lists_each_track_with_its_cut_and_dropped_cells(capsys):
    assert main(["bench", "suites"]) == 0
    out = capsys.readouterr().out
    assert "bakeoff-v1: 35 cells; report seeds 1000..1009, tune seeds 0..9" in out
    assert "Cut: s3-finite-linear T=500, s3-quadratic-pool T=1,000, s1-mnist-target T=500; dropped: covertype, mnist." in out
    assert "track bounded: " in out and "Cut: none; dropped: s0-linear, s0-logistic" in out
    assert "track neural: " in out and "Cut: every cell kept T=500; dropped: obd-replay." in out
    assert "tuned on the report track (budget 6, played on the tuned track): BaSE, DeepFL, " in out
    assert "tuned on the glm track (budget 6, played on the glm-tuned track): " in out
    assert ("bakeoff-v2: 35 cells; report seeds 1000..1009, tune seeds 0..9; quick track T=20 on 2 seeds; an agent "
            "that reads a horizon is given the cell's\n") in out
    assert out.count("| `s0-linear` |") == 1                                              # v2's are v1's
    table = out.index("| `s0-linear` |")                       # labelled where it is, and v2's block points to it
    assert out.rindex("The cells of bakeoff-v1 (and of bakeoff-v2):", 0, table) > out.index("bakeoff-v1: 35 cells")
    assert out.index("The cells of bakeoff-v2: those of bakeoff-v1, in its table above.") > out.index("bakeoff-v2: 35")


def takes_a_horizon() -> set[str]:
    """Every registered one-arm agent with a `horizon` hyper-parameter (a ranking agent plays no cell of the
    bake-off's suites)."""
    from agents.params import keyword_parameters
    from gym_ctxbandits.bench.tune import agent_class

    return {n for n in agents.REGISTRY if any(p.name == "horizon" for p in keyword_parameters(agent_class(n)))
            and getattr(agents.REGISTRY[n], "kind", "arm") == "arm"}


def test_the_docs_name_every_agent_that_takes_a_horizon_it_is_not_told():
    """bakeoff-v2 gives an agent that reads a `horizon` the cell's T (bakeoff-v1 its default):
    docs/bench_tracks.md, The suite, names every registered agent that takes one, so an agent added
    with one is not missed there."""
    takes = takes_a_horizon()
    assert {"BaSE", "LinTS-AG", "repGLM-FPL"} <= takes
    text = (ROOT / "docs" / "bench_tracks.md").read_text()
    paragraph = text.partition("**An agent that reads a horizon is told the cell's.**")[2].partition("\n\n")[0]
    assert not [n for n in takes if n not in paragraph], "name it in docs/bench_tracks.md, The suite"


def test_a_suite_may_give_agents_the_cells_horizon(folder, capsys):
    """With `horizon_to_agents = true` an agent that takes a `horizon` (BaSE) plays the cell's T and
    one that does not (LinUCB) plays as before; the runs' manifests say so, and references pin the
    key. bakeoff-v1 does not say it: its BaSE plays its default T = 10,000."""
    assert not suite.load("bakeoff-v1").horizon_to_agents
    for name, flag in (("given", True), ("default", False)):
        write_suite(folder / f"{name}.toml", ["s0-linear"], horizon=60, report_seeds="1000:1002",
                    **({"horizon_to_agents": True} if flag else {}))
        assert main(["bench", "run", "--suite", f"{name}.toml", "--agents", "BaSE,LinUCB", "--out", name,
                     "--quiet"]) == 0
    kwargs = {(n, a): json.loads((Path(n) / a / "s0-linear" / "manifest.json").read_text())["config"]["agents"][0]
              ["kwargs"] for n in ("given", "default") for a in ("BaSE", "LinUCB")}
    assert kwargs[("given", "BaSE")] == {"horizon": 60} and kwargs[("default", "BaSE")] == {}
    assert kwargs[("given", "LinUCB")] == kwargs[("default", "LinUCB")] == {}
    final = {n: results(n, "BaSE", "s0-linear").groupby("seed")["cum_regret"].last() for n in ("given", "default")}
    assert not np.array_equal(final["given"], final["default"])            # a grid over 60 rounds, not 10,000
    np.testing.assert_array_equal(*(results(n, "LinUCB", "s0-linear")["cum_regret"] for n in ("given", "default")))
    assert main(["bench", "regen", "--suite", "given.toml", "--agents", "Random", "--dest", "refs", "--quiet"]) == 0
    assert json.loads(Path("refs/manifest.json").read_text())["horizon_to_agents"] is True
    assert main(["bench", "report", "--out", "default", "--references", "refs"]) == 2
    assert "'horizon_to_agents' differs" in capsys.readouterr().err
    Path("bad.toml").write_text(Path("given.toml").read_text().replace("horizon_to_agents = true",
                                                                       "horizon_to_agents = 1"))
    with pytest.raises(suite.SuiteError, match="'horizon_to_agents' must be bool"):
        suite.load("bad.toml")


# --- bakeoff-v2: the cell's horizon given ---------------------------------------------------------

# issue 51's agents read T at their defaults too: their theory windows, discounts and detector thresholds
NONSTATIONARY_READERS = {"D-UCB", "SW-UCB", "SW-TS", "D-LinUCB", "SW-LinUCB", "D-LinTS", "SW-LinTS", "CUSUM-UCB",
                         "M-UCB", "GLR-klUCB"}
HORIZON_TAKERS = {"BaSE", "LinTS-AG", "repGLM-FPL", "GLM-TSL", "GLM-FPL", "GLM-UCB", "OAM", "OSSB", "SquareCB",
                  *NONSTATIONARY_READERS}
HORIZON_READERS = {"BaSE", "LinTS-AG", "repGLM-FPL", "OAM", *NONSTATIONARY_READERS}   # at their defaults


def test_bakeoff_v2_is_v1_with_the_horizon_given():
    """bakeoff-v2 changes the protocol only: v1's cells, tracks, seeds and quick track, each agent that
    takes a `horizon` given the cell's; v1 is still shipped, and `earlier` finds it."""
    one, two = suite.load("bakeoff-v1"), suite.load("bakeoff-v2")
    assert (one.cells, one.tracks, one.tune_seeds, one.report_seeds) == (two.cells, two.tracks, two.tune_seeds,
                                                                          two.report_seeds)
    assert (one.quick_horizon, one.quick_seeds) == (two.quick_horizon, two.quick_seeds)
    assert two.horizon_to_agents and not one.horizon_to_agents
    assert [s.key for s in suite.earlier(two)] == ["bakeoff-v1"] and suite.earlier(one) == []
    assert {"bakeoff-v1", "bakeoff-v2"} <= set(suite.shipped())


def test_the_agents_that_read_a_horizon_are_the_ones_v2_changes():
    """HORIZON_TAKERS are every registered agent that takes a `horizon` (an agent added with one must
    be named here); HORIZON_READERS, those that read it at their defaults, the ones v2 gives the
    cell's and whose v2 rows are not v1's. GLM-TSL, GLM-FPL and GLM-UCB read it for their "theory"
    scale only, OSSB never (tests/agents/test_horizon.py holds each claim to the agents' play)."""
    from gym_ctxbandits.bench.run import for_cell
    from gym_ctxbandits.experiment import AgentSpec

    assert takes_a_horizon() == HORIZON_TAKERS
    two = suite.load("bakeoff-v2")
    given = {a for a in HORIZON_TAKERS if for_cell(AgentSpec(a), two.cells[0], two).kwargs}
    assert given == {a for a in HORIZON_TAKERS if agents.base.reads_horizon(a, {})} == HORIZON_READERS
    assert for_cell(AgentSpec("GLM-TSL", {"a": "theory"}), two.cells[0], two).kwargs == {
        "a": "theory", "horizon": two.cells[0].horizon}


def test_v2_reuses_v1s_rows_of_an_agent_that_plays_as_it_did():
    """LinUCB takes no horizon, so it plays v2's cells as v1's: its rows on every track are v1's (the
    same track's file, all its cells). BaSE is given T on v2: nothing of v1 is its v2 rows."""
    two = suite.load("bakeoff-v2")
    for track in ("report", "glm", "bounded", "neural", "glm-short"):
        found = references.reusable(two, track, "LinUCB")
        assert found["from"] == f"{references.folder(suite.load('bakeoff-v1'), track).name}/LinUCB.parquet"
        assert found["cells"] == [c.id for c in two.track(track)[0]] and "kwargs the agent plays" in found["why"]
        assert references.reusable(two, track, "BaSE", references.folder(suite.load("bakeoff-v1"), track)) is None


@pytest.mark.parametrize("track", ["report", "tuned", "bounded", "neural", "glm", "glm-short", "bounded-tuned",
                                   "glm-tuned", "glm-short-tuned", "neural-tuned"])
def test_v2s_references_are_v1s_rows_but_for_the_agents_that_read_a_horizon(track):
    """Every agent of v1's references of a track is in v2's. One that does not read a horizon at the
    configuration it plays there has v1's very file (the same bytes: git keeps one copy), its rows
    copied from v1's at its current SHA-256; one that does was run on v2 where no v2 references of
    its held the cell (the report track's rows, copied onto a named track), and its rows are not v1's."""
    one, two = suite.load("bakeoff-v1"), suite.load("bakeoff-v2")
    theirs = references.read(references.folder(one, track), one, verify=False, track=track)
    mine = references.read(references.folder(two, track), two, track=track)       # every SHA-256 checked
    assert set(theirs["agents"]) <= set(mine["agents"])
    for agent, entry in mine["agents"].items():
        if not agents.base.reads_horizon(agent, entry.get("config") or {}):
            assert entry["sha256"] == theirs["agents"][agent]["sha256"], \
                f"{agent}'s v1 reference changed: run `ctxbandits bench regen --suite bakeoff-v2 --track {track}`"
            assert entry["reused"]["from"].startswith(references.folder(one, track).name + "/")
            continue
        assert agent in HORIZON_READERS
        assert "reused" not in entry or entry["reused"]["from"].startswith(two.key)      # v2's own rows
        if agent in theirs["agents"]:
            a, b = (references.table(references.folder(s, track), m, agent) for s, m in ((one, theirs), (two, mine)))
            assert not np.array_equal(a["cum_regret"], b["cum_regret"], equal_nan=True), agent    # replay: NaN


def test_regen_of_v2_runs_nothing_for_an_agent_that_plays_as_in_v1(folder):
    """`bench regen --suite bakeoff-v2` of Random and LinUCB runs no cell: both files are v1's, byte
    for byte, and their manifest entries say where the rows came from and why they are the same."""
    two = suite.load("bakeoff-v2")
    assert main(["bench", "regen", "--suite", "bakeoff-v2", "--agents", "Random,LinUCB", "--dest", "refs",
                 "--work", "work", "--quiet"]) == 0
    assert not Path("work/LinUCB").exists() and not Path("work/Random").exists()
    manifest = references.read(Path("refs"), two)
    one = references.folder(suite.load("bakeoff-v1"))
    for agent in ("Random", "LinUCB"):
        assert Path(f"refs/{agent}.parquet").read_bytes() == (one / f"{agent}.parquet").read_bytes()
        reused = manifest["agents"][agent]["reused"]
        assert reused["from"] == f"bakeoff-v1/{agent}.parquet" and len(reused["cells"]) == len(two.cells)
        assert reused["why"].startswith("bakeoff-v1's report track's cells") and "kwargs the agent plays" in reused["why"]


@pytest.mark.tables
def test_the_docs_bakeoff_v1_tables_are_its_references():
    """docs/bench_versions.md's bakeoff-v1 tables are what the references give (`python
    scripts/make_tables.py` writes them): v1's report-track leaderboard, and every agent v2 gives
    the horizon, on each track whose references both versions have, against v1."""
    import runpy

    tables = runpy.run_path(str(ROOT / "scripts" / "make_tables.py"))["v1_tables"]()
    for name, table in tables.items():
        assert shown(name) == table, \
            f"docs/bench_versions.md's {name} table is stale: run `python scripts/make_tables.py`"
    rows = tables["versions"].splitlines()
    assert rows[0].count("bakeoff-v1 → bakeoff-v2") == 10    # the report, tuned, four named and four twin tracks
    assert {row.split(" | ")[0].removeprefix("| ") for row in rows[2:]} == \
        HORIZON_READERS - {"OAM"} - NONSTATIONARY_READERS          # the readers with references on both versions


@pytest.mark.parametrize("key, track", [("bakeoff-v1", "bounded"), ("bakeoff-v2", "glm-short")])
def test_overall_iqm_is_the_cards_point(key, track):
    """`leaderboard.overall_iqm`, which the versions table ranks by, is the point of the leaderboard
    card's overall IQM to the last bit (replay cells scored by clicks, unscored ones left out alike)."""
    from gym_ctxbandits.bench import leaderboard

    shipped = suite.load(key)
    board = leaderboard.card(shipped, track=track, resamples=10)
    assert leaderboard.overall_iqm(shipped, track) == {a: board["aggregates"]["overall"]["iqm"][a][0]
                                                       for a in board["agents"]}


# --- the default suite: bakeoff-v2 since 0.14.0 (bakeoff-v1 before) ---------------------------------

def test_load_without_a_suite_loads_the_default_silently():
    """`suite.load()` loads DEFAULT, bakeoff-v2 since 0.14.0 (0.13.0 warned that it would), with no
    warning left; NEXT_DEFAULT, the announcement, fails naming DEFAULT."""
    import warnings

    assert suite.DEFAULT == "bakeoff-v2"
    with pytest.raises(AttributeError, match=r"NEXT_DEFAULT was removed in 0\.14\.0.*DEFAULT \('bakeoff-v2'\).*"
                                             r"load\('bakeoff-v1'\)"):
        suite.NEXT_DEFAULT
    with pytest.raises(AttributeError, match="no attribute 'NOPE'"):
        suite.NOPE
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert suite.load().key == "bakeoff-v2" and suite.load().horizon_to_agents


def test_a_bench_command_without_suite_plays_what_its_folder_holds_else_the_default(folder, capsys):
    """Without --suite, `bench run` resumes the suite its --out folder holds (so a folder begun
    under bakeoff-v1, the default until 0.13.0, goes on as begun), `bench tune` the one its study
    holds, and a --tuned file's suite is played; only with none of these is the default taken,
    silently."""
    from gym_ctxbandits.bench import tune
    from gym_ctxbandits.bench.cli import chosen_suite
    from gym_ctxbandits.bench.tune import FILE

    write_suite(folder / "mine.toml", ["s0-linear"], horizon=40, report_seeds="1000:1002")
    assert main(["bench", "run", "--suite", "mine.toml", "--agents", "LinUCB", "--out", "mine", "--quiet"]) == 0
    capsys.readouterr()
    assert main(["bench", "run", "--agents", "Greedy", "--out", "mine", "--quiet"]) == 0
    out, err = capsys.readouterr()
    assert err == "" and [p.name for p in Path("mine/Greedy").iterdir()] == ["s0-linear"]   # mine.toml's
    Path("study").mkdir()
    shutil.copy(tune.shipped(suite.load("bakeoff-v1")), Path("study") / FILE)
    assert chosen_suite(None, "study", study=True).key == "bakeoff-v1"
    assert chosen_suite(None, "nowhere", tuned=str(Path("study") / FILE)).key == "bakeoff-v1"
    assert chosen_suite(None, "nowhere").key == "bakeoff-v2"
    assert capsys.readouterr().err == ""
    assert chosen_suite("bakeoff-v1", "mine").key == "bakeoff-v1"        # --suite wins (run_suite then refuses)


# --- a failed cell stops the cells not started yet ---------------------------------------------------

def _first_fails_the_others_take_a_second(cell, spec, seeds, folder, options, root):
    """A worker's cell, stood in for: the cell "first" diverges at once, every other takes a second."""
    import time

    Path(folder).mkdir(parents=True)
    if cell.id == "first":
        raise FloatingPointError("diverged; lower lr")
    time.sleep(1)
    return 1.0, 1.0


def test_a_failed_cell_cancels_the_cells_not_started_yet(tmp_path, monkeypatch):
    """With the processes backend, the first cell's error is raised at once and the cells still
    waiting are cancelled (a study's diverging candidate costs its first failed cell, not all its
    cells); without the cancel all eight would run."""

    from types import SimpleNamespace

    from gym_ctxbandits.bench import run as bench_run

    monkeypatch.setattr(bench_run, "_play_cell_in_worker", _first_fails_the_others_take_a_second)
    cells = [SimpleNamespace(id=i) for i in ("first", *"abcdefg")]
    tasks = [("A", None, c, tmp_path / c.id) for c in cells]
    with pytest.raises(FloatingPointError, match="diverged"):
        bench_run.play_cells(tasks, [0], {"backend": "processes", "workers": 1}, lambda *_: None)
    started = {p.name for p in tmp_path.iterdir()}
    assert "first" in started and len(started) <= 4, started     # those already queued to the worker run
