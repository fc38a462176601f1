"""How well the scorecard's statistics (gym_ctxbandits/bench/stats.py) hold up against exact truth
(issue 29): the coverage of its two 95% intervals and the size of its test, at the suite's ten
report seeds and beside them.

- `ratio_ci` (regret / Random's per cell, a paired percentile bootstrap): on laws whose ratio of
  means is known exactly (correlated lognormal regrets, light and heavy tailed; an agent stuck on a
  fifth of its seeds), beside two other intervals on the same laws (scipy's BCa bootstrap and a
  delta-method t interval: whether another method would do better at ten seeds), and on real bandit regrets: Random, LinUCB and Greedy at their defaults on
  four cells of bakeoff-v2 over `--pool` seeds from 5000 (none a tune or report seed), whose
  ratio of means is the truth of a draw of `--seeds` of those seeds without replacement.
- `iqm_ci` (IQM score over cells, a bootstrap of each cell's seeds): 35 cells whose per-seed score
  is clip(1 - R, 0, 1), R lognormal with a spread and a level of its own per cell (atoms at 0 where
  the agent loses to Random), the truth the IQM of that mixture, 2 x the integral of its quantile
  function over [0.25, 0.75]; and the real pool, where the truth is the pooled pool's IQM.
- `signed_rank_p` at 0.05 (a win or a loss): the share of pairs that truly differ by nothing (two
  agents' values drawn from one law, continuous or Poisson counts with ties as the replay's clicks)
  that it calls a win or a loss, against the exact test's size, and its power against a shift.

Each coverage is the share of `--replicates` draws whose interval holds the truth, with its
binomial standard error.

    python scripts/bench_coverage.py             # docs/bench_scorecard.md has the tables and the run time
    python scripts/bench_coverage.py --quick     # 60 replicates, a pool of 12 seeds of 200 rounds: a smoke run (tests)
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from scipy import special
from scipy import stats as st

from gym_ctxbandits.bench import stats

CELLS = ("s0-linear", "s0-logistic", "s4-changing-1", "mushroom")
AGENTS = ("LinUCB", "Greedy")


def lognormal_pair(mu_a, s_a, mu_r, s_r, rho):
    """Correlated lognormal regrets of an agent and Random, and their exact ratio of means."""
    def draw(rng, n):
        z = rng.multivariate_normal([0, 0], [[1, rho], [rho, 1]], n)
        return np.exp(mu_a + s_a * z[:, 0]), np.exp(mu_r + s_r * z[:, 1])
    return draw, np.exp(mu_a + s_a ** 2 / 2 - mu_r - s_r ** 2 / 2)


def stuck_pair(p=0.2, good=0.1, bad=0.9):
    """An agent whose regret is `good` x Random's on most seeds and `bad` x on a share `p` (stuck)."""
    def draw(rng, n):
        r = rng.gamma(50.0, 10.0, n)
        return r * np.where(rng.random(n) < p, bad, good), r
    return draw, (1 - p) * good + p * bad


LAWS = {"lognormal, agent sd 0.5, rho 0.5": lognormal_pair(np.log(150), 0.5, np.log(500), 0.2, 0.5),
        "lognormal, agent sd 1.2 (heavy tail)": lognormal_pair(np.log(150), 1.2, np.log(500), 0.2, 0.5),
        "stuck on 20 % of seeds": stuck_pair()}


def ratio_coverage(draw, truth, n, replicates, rng) -> tuple[float, float]:
    """Share of `replicates` draws of n paired seeds whose ratio_ci holds `truth`, and the mean
    width of the interval over the truth."""
    hits, widths = [], []
    for _ in range(replicates):
        _, low, high = stats.ratio_ci(*draw(rng, n))
        hits.append(low <= truth <= high)
        widths.append((high - low) / truth)
    return float(np.mean(hits)), float(np.mean(widths))


def ratio_t(a, r, level=stats.LEVEL) -> tuple[float, float]:
    """The delta-method t interval of mean(a) / mean(r), paired by seed: R +- t(n - 1) x the standard
    error of the mean of (a - R r) / mean(r)."""
    ratio, n = a.mean() / r.mean(), len(a)
    half = st.t.ppf((1 + level) / 2, n - 1) * np.std((a - ratio * r) / r.mean(), ddof=1) / np.sqrt(n)
    return ratio - half, ratio + half


def ratio_bca(a, r, level=stats.LEVEL) -> tuple[float, float]:
    """scipy's paired BCa bootstrap interval of mean(a) / mean(r) (2,000 resamples, as ratio_ci)."""
    found = st.bootstrap((a, r), lambda x, y, axis=-1: x.mean(axis) / y.mean(axis), paired=True, vectorized=True,
                         n_resamples=stats.RESAMPLES, confidence_level=level, method="BCa", random_state=0)
    return tuple(found.confidence_interval)


def other_intervals(draw, truth, n, replicates, rng) -> tuple[float, float]:
    """Coverage of ratio_bca and ratio_t on the same kind of draws as ratio_coverage."""
    hits = np.zeros(2)
    for _ in range(replicates):
        a, r = draw(rng, n)
        hits += [low <= truth <= high for low, high in (ratio_bca(a, r), ratio_t(a, r))]
    return tuple(hits / replicates)


def synthetic_cells(k=35, seed=0):
    """Each cell's (mu, s) of the lognormal ratio R of its seeds' regret over Random's."""
    rng = np.random.default_rng(seed)
    return rng.uniform(np.log(0.05), np.log(1.3), k), rng.uniform(0.1, 0.8, k)


def mixture_iqm(mu, s, grid=200_000) -> float:
    """The IQM of the equal mixture of the cells' scores clip(1 - R, 0, 1), R ~ lognormal(mu, s):
    2 x the integral over [0.25, 0.75] of its quantile function, each quantile found by bisection
    of the mixture's CDF (exact to about 1e-6)."""
    def cdf(x):                                  # P(score <= x) = P(R >= 1 - x), x in [0, 1)
        return np.mean(special.ndtr(-(np.log1p(-x[:, None]) - mu) / s), axis=1)
    u = 0.25 + 0.5 * (np.arange(grid) + 0.5) / grid
    low, high = np.zeros(grid), np.full(grid, 1 - 1e-12)
    for _ in range(50):
        mid = (low + high) / 2
        below = cdf(mid) < u
        low, high = np.where(below, mid, low), np.where(below, high, mid)
    return float(high.mean())


def iqm_coverage(draw_cells, truth, replicates, rng, resamples=stats.RESAMPLES) -> tuple[float, float]:
    """Share of `replicates` draws whose iqm_ci holds `truth`, and the interval's mean width."""
    hits, widths = [], []
    for _ in range(replicates):
        _, low, high = stats.iqm_ci(draw_cells(rng), resamples=resamples)
        hits.append(low <= truth <= high)
        widths.append(high - low)
    return float(np.mean(hits)), float(np.mean(widths))


def exact_size(n: int, alpha: float = 0.05) -> float:
    """The Wilcoxon test's exact size at n seeds without ties: the share of the 2^n sign patterns of
    the ranks 1..n whose p-value is below `alpha`."""
    flips = ((np.arange(2 ** n)[:, None] >> np.arange(n)) & 1) * 2 - 1
    return float(np.mean(stats.signed_rank_p(flips * np.arange(1, n + 1)) < alpha))


def decided(x, y, alpha=0.05) -> float:
    """Share of rows of paired values x, y (replicates, n) that `stats.outcomes` calls a win or a loss."""
    return float(np.mean(stats.signed_rank_p(x - y) < alpha))


def pool(n_seeds: int, horizon: int | None = None) -> dict[str, dict[str, np.ndarray]]:
    """Final regret per seed of Random and AGENTS on CELLS of bakeoff-v2 at their defaults, seeds
    5000 to 5000 + n_seeds (none a tune or report seed), each cell at its horizon (or `horizon`
    rounds): {cell: {agent: regrets}}."""
    from gym_ctxbandits.bench import suite
    from gym_ctxbandits.compare import run
    from gym_ctxbandits.experiment import EnvSpec

    cells = {c.id: c for c in suite.load("bakeoff-v2").cells}
    found = {}
    for cell_id in CELLS:
        c = cells[cell_id]
        table = run([EnvSpec(c.env, c.kwargs)], ["Random", *AGENTS], seeds=f"5000:{5000 + n_seeds}",
                    horizon=horizon or c.horizon, log_every=horizon or c.horizon)
        last = table[table["round"] == table["round"].max()].sort_values("seed")
        found[cell_id] = {a: last[last["agent"] == a]["cum_regret"].to_numpy() for a in ("Random", *AGENTS)}
    return found


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.partition("\n\n")[0])
    parser.add_argument("--replicates", type=int, default=2000)
    parser.add_argument("--seeds", type=int, default=10, help="seeds per cell, as the report track's ten")
    parser.add_argument("--pool", type=int, default=500, help="seeds of the real cells' pool")
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    grid = 200_000
    if args.quick:
        args.replicates, args.pool, grid = 60, 12, 20_000
    rng, n, reps, start = np.random.default_rng(2029), args.seeds, args.replicates, time.process_time()
    def se(p, count=reps):                       # a coverage's binomial standard error
        return np.sqrt(p * (1 - p) / count)

    print(f"## ratio_ci: coverage of the 95% interval ({reps} replicates)\n")
    print("| law | seeds | coverage (SE) | mean width / truth |\n|---|---|---|---|")
    for name, (draw, truth) in LAWS.items():
        for m in sorted({5, n, 2 * n}):
            cover, width = ratio_coverage(draw, truth, m, reps, rng)
            print(f"| {name} | {m} | {cover:.3f} ({se(cover):.3f}) | {width:.2f} |")
    print(f"\nThe same laws at {n} seeds, other intervals of the ratio ({reps} replicates):\n")
    print("| law | percentile (ratio_ci, above) | BCa | delta-method t |\n|---|---|---|---|")
    for name, (draw, truth) in LAWS.items():
        bca, t = other_intervals(draw, truth, n, reps, rng)
        print(f"| {name} | see above | {bca:.3f} ({se(bca):.3f}) | {t:.3f} ({se(t):.3f}) |")

    print(f"\nReal regrets: Random, {' and '.join(AGENTS)} at their defaults, the truth the pool's ratio of means "
          f"({reps} replicates):\n")
    print("| agent and cell | seeds | coverage (SE) | mean width / truth |\n|---|---|---|---|")
    regrets = pool(args.pool, 200 if args.quick else None)
    for cell_id, found in regrets.items():
        for agent in AGENTS:
            truth = found[agent].mean() / found["Random"].mean()
            def draw(g, m, a=found[agent], r=found["Random"]):
                i = g.choice(len(r), m, replace=False)
                return a[i], r[i]
            cover, width = ratio_coverage(draw, truth, n, reps, rng)
            print(f"| {agent} on `{cell_id}` ({args.pool} seeds; truth {truth:.3f}) | {n} | {cover:.3f} "
                  f"({se(cover):.3f}) | {width:.2f} |")

    iqm_reps = max(reps // 4, 50)
    print(f"\n## iqm_ci: coverage of the 95% interval ({iqm_reps} replicates)\n")
    print("| cells | seeds | truth | coverage (SE) | mean width |\n|---|---|---|---|---|")
    mu, s = synthetic_cells()
    truth = mixture_iqm(mu, s, grid)
    cells = lambda g: [np.clip(1 - np.exp(m + v * g.standard_normal(n)), 0, 1) for m, v in zip(mu, s)]
    cover, width = iqm_coverage(cells, truth, iqm_reps, rng)
    print(f"| 35 synthetic (lognormal ratios) | {n} | {truth:.4f} | {cover:.3f} ({se(cover, iqm_reps):.3f}) | {width:.3f} |")
    for agent in AGENTS:
        scores = [stats.scores(found[agent], found["Random"]) for found in regrets.values()]
        truth = stats.iqm(np.concatenate(scores))
        def draws(g, scores=scores):
            return [c[g.choice(len(c), n, replace=False)] for c in scores]
        cover, width = iqm_coverage(draws, truth, iqm_reps, rng)
        print(f"| {agent}, the {len(CELLS)} real cells ({args.pool} seeds each) | {n} | {truth:.4f} | {cover:.3f} "
              f"({se(cover, iqm_reps):.3f}) | {width:.3f} |")

    print(f"\n## signed_rank_p < 0.05: pairs called a win or a loss ({reps * 10} pairs)\n")
    print("| law of both agents' values | seeds | exact size (no ties) | called | called at a shift of 0.5 sd |\n"
          "|---|---|---|---|---|")
    rows = reps * 10
    for name, draw in {"lognormal (continuous)": lambda m: rng.lognormal(0.0, 1.0, (rows, m)),
                       "Poisson(7) counts (ties)": lambda m: rng.poisson(7.0, (rows, m)).astype(float)}.items():
        for m in sorted({6, n, 12}):
            x, y = draw(m), draw(m)
            shift = 0.5 * np.std(x)
            print(f"| {name} | {m} | {exact_size(m):.4f} | {decided(x, y):.4f} | {decided(x - shift, y):.3f} |")
    print(f"\n{time.process_time() - start:.0f} CPU-s")


if __name__ == "__main__":
    main()
