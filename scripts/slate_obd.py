"""The Open Bandit Dataset as slates (issue 50, item 1): Bernoulli TS's clicks per impression estimated
from the random log by the slate estimators, against BTS's own on-policy value.

The rows of each log are grouped into impressions (`slate_obd.group`: same user columns, timestamps
within --window seconds, positions 1-3 once each) and the counts printed. The value is slate_ope's,
the expected clicks of an impression (the sum over the 3 positions of each position's click rate);
the truth is BTS's own log's, from all its rows. The target is BTS's week as its log shows it
(`slate_obd.shares`): the share of each list, prefix and item-at-position among BTS's impressions.

    * IIPS on the rows (`slate_obd.row_iips`): needs no slates, so it runs on the obp sample;
    * SIPS, IIPS, RIPS on the random log's complete slates (exact propensities), with BTS's list and
      prefix shares from BTS's complete slates: only where the logs hold complete slates (the full
      dataset; the obp sample of 10,000 rows a policy holds none, and the script says so).

    python scripts/slate_obd.py                       # the obp sample in $CTXBANDITS_DATA/obd
    python scripts/slate_obd.py --path ~/open_bandit_dataset   # the full logs (obd/random/all/all.csv, ...)
    python scripts/slate_obd.py --simulate /tmp/obd_sim         # full-format logs of a known click model

--simulate FOLDER writes full-format logs (every impression's three rows) into FOLDER and runs on them:
the real sample's users (their user columns, drawn with the sample's frequencies) and items, the full
dataset's impression rates (Random 0.76 a second, BTS 6.7: 1,374,327 and 12,168,084 rows in a week),
the three rows of an impression 0-50 ms apart in random order, clicks from a position-based model
(kappa = 1, 0.8, 0.7; item attractions Beta(1, 250), seeded), Random drawing 3 of 80 items without
replacement and "BTS" a Plackett-Luce on scores 2 z (z standard normal) logging its exact marginals.
Its exact value is printed beside the log's, and the estimators run a second time with the target's
exact probabilities ("BTS exact") beside its shares; `--slates` impressions a policy (default 100,000).

A missing data set is one `error:` message (the loader's: the files needed and where to put them).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import pandas as pd

from gym_ctxbandits import datasets, slate_obd, slate_ope
from gym_ctxbandits.datasets import DatasetCorrupt

RATES = {"random": 1_374_327 / 3 / 604_800, "bts": 12_168_084 / 3 / 604_800}   # impressions a second, full "all"
KAPPA = np.array([1.0, 0.8, 0.7])       # the simulated examination of positions 1-3
JITTER = 0.05                           # seconds over which an impression's three rows are logged


def pl_marginals(p: np.ndarray) -> np.ndarray:
    """(L, 3): P(item e at position k) of a Plackett-Luce of item probabilities p (3 draws without
    replacement, each in proportion to p among the items left), exact by summing over the items above."""
    first = p
    left1 = 1.0 - p                                                       # mass left after a is drawn first
    second = p * ((p / left1).sum() - p / left1)                          # sum_{a != e} p_a p_e / (1 - p_a)
    pair = p[:, None] * p[None, :] / left1[:, None]                       # P(a first, b second), a != b
    np.fill_diagonal(pair, 0.0)
    left2 = 1.0 - p[:, None] - p[None, :]
    third = np.array([(pair * np.where((np.arange(len(p))[:, None] != e) & (np.arange(len(p))[None] != e),
                                       p[e] / np.where(left2 > 0, left2, 1.0), 0.0)).sum() for e in range(len(p))])
    return np.stack([first, second, third], axis=1)


def simulate(folder: Path, n_slates: int, seed: int, data_home) -> tuple[float, np.ndarray]:
    """Write Random's and "BTS"'s full-format logs into folder/obd/<behavior>/all (see the module's
    docstring); return BTS's exact value, sum_k kappa_k sum_e P(e at k) w_e, and its item probabilities."""
    real = datasets.load_open_bandit(behavior="random", data_home=data_home)
    users = real.events[[c for c in real.events.columns if c.startswith(("user_feature_", "user-item_affinity_"))]]
    L = len(real.items)
    rng = np.random.default_rng(seed)
    attraction = rng.beta(1.0, 250.0, size=L)
    scores = np.exp(2.0 * rng.standard_normal(L))
    bts = scores / scores.sum()
    marginal = pl_marginals(bts)
    for behavior, rate in RATES.items():
        if behavior == "random":
            lists = np.argsort(rng.random((n_slates, L)), axis=1)[:, :3]
        else:                                                            # Gumbel top-3: a Plackett-Luce draw
            lists = np.argsort(-(np.log(bts) + rng.gumbel(size=(n_slates, L))), axis=1)[:, :3]
        start = np.cumsum(rng.exponential(1.0 / rate, size=n_slates))
        offset = np.sort(rng.uniform(0, JITTER, size=(n_slates, 3)), axis=1)
        offset = np.take_along_axis(offset, rng.permuted(np.tile(np.arange(3), (n_slates, 1)), axis=1), axis=1)
        who = rng.choice(len(users), size=n_slates)
        table = pd.DataFrame({
            "timestamp": pd.Timestamp("2019-11-24", tz="UTC") + pd.to_timedelta((start[:, None] + offset).ravel(), "s"),
            "item_id": lists.ravel(), "position": np.tile([1, 2, 3], n_slates),
            "click": (rng.random(lists.shape) < KAPPA * attraction[lists]).astype(int).ravel(),
            "propensity_score": (np.full(lists.shape, 1.0 / L) if behavior == "random"
                                 else marginal[lists, np.arange(3)]).ravel()})
        table = pd.concat([table, users.iloc[np.repeat(who, 3)].reset_index(drop=True)], axis=1)
        table["timestamp"] = table["timestamp"].astype(str)
        where = folder / "obd" / behavior / "all"
        where.mkdir(parents=True, exist_ok=True)
        table.sort_values("timestamp", kind="stable").reset_index(drop=True).to_csv(where / "all.csv")
        real.items.to_csv(where / "item_context.csv")
    return float((marginal * attraction[:, None] * KAPPA).sum()), bts


def pl_propensities(p: np.ndarray, action: np.ndarray) -> dict[str, np.ndarray]:
    """The exact target_ propensities of a Plackett-Luce of item probabilities p at the lists action (n, 3):
    prefixes prod_{j<=k} p_{a(j)} / (1 - sum_{i<j} p_{a(i)}), the list the last prefix, `pl_marginals`."""
    chosen = p[action]
    cascade = np.cumprod(chosen / (1.0 - np.c_[np.zeros(len(action)), np.cumsum(chosen, axis=1)[:, :-1]]), axis=1)
    return {"target_pscore": cascade[:, -1].copy(), "target_pscore_cascade": cascade,
            "target_pscore_item_position": pl_marginals(p)[action, np.arange(3)]}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog=Path(__file__).name, description=__doc__.split("\n\n")[0])
    parser.add_argument("--campaign", default="all", choices=["all", "men", "women"])
    parser.add_argument("--data-home", help="folder holding obd/ (default: $CTXBANDITS_DATA)")
    parser.add_argument("--path", help="a folder holding obd/random and obd/bts (e.g. the full dataset)")
    parser.add_argument("--window", type=float, default=slate_obd.WINDOW, help="seconds between rows of one impression")
    parser.add_argument("--n-bootstrap", type=int, default=1000, help="bootstrap resamples of each interval")
    parser.add_argument("--seed", type=int, default=0, help="bootstrap and simulation seed")
    parser.add_argument("--simulate", help="write full-format logs of a known click model here and run on them")
    parser.add_argument("--slates", type=int, default=100_000, help="impressions a policy with --simulate")
    ns = parser.parse_args(argv)
    start = time.perf_counter()
    exact, probs = None, None
    if ns.simulate:
        try:
            exact, probs = simulate(Path(ns.simulate), ns.slates, ns.seed, ns.data_home)
        except (FileNotFoundError, DatasetCorrupt) as err:
            parser.exit(2, f"{parser.prog}: error: {type(err).__name__}: {err}\n")
        ns.path = ns.simulate
    where = {"data_home": ns.data_home, "path": ns.path, "check_size": ns.path is None}
    try:
        logs = {b: datasets.load_open_bandit(behavior=b, campaign=ns.campaign, **where) for b in ("random", "bts")}
        counts = {b: slate_obd.group(d.events, window=ns.window)[1] for b, d in logs.items()}
    except (FileNotFoundError, DatasetCorrupt) as err:
        parser.exit(2, f"{parser.prog}: error: {type(err).__name__}: {err}\n")
    except ValueError as err:
        parser.exit(2, f"{parser.prog}: error: {err}\n")
    random, bts = logs["random"].events, logs["bts"].events
    L = len(logs["random"].items)
    print(f"Open Bandit Dataset, campaign {ns.campaign}, impressions: rows of one user within {ns.window} s\n")
    print("| log | rows | complete slates | rows in slates | partial rows (pairs) | ambiguous rows | repeated item |")
    print("|---|---|---|---|---|---|---|")
    for b, c in counts.items():
        print(f"| {b} | {c['rows']} | {c['slates']} | {c['rows in slates']} ({c['rows in slates'] / c['rows']:.1%}) | "
              f"{c['partial']} ({c['partial pairs']}) | {c['ambiguous']} | {c['repeated item']} |")
    value, low, high = slate_obd.truth(bts)
    print(f"\ntruth: BTS's on-policy clicks per impression {value:.4f} (95% CI [{low:.4f}, {high:.4f}], "
          f"{int(bts['click'].sum())} clicks in {len(bts)} rows); random's own {slate_obd.truth(random)[0]:.4f}"
          + ("" if exact is None else f"; the simulated BTS's exact value {exact:.4f}") + "\n")
    boot = {"n_bootstrap": ns.n_bootstrap, "seed": ns.seed}
    pi = slate_obd.item_shares(bts, L)[random["item_id"].to_numpy(), random["position"].to_numpy() - 1]
    estimates = [("BTS shares", "rows", slate_obd.row_iips(random, pi, **boot))]
    if counts["random"]["slates"]:
        log = slate_obd.slate_log("random", ns.campaign, window=ns.window, events=random, num_items=L)
        data = f"{log['n_rounds']} slates"
        log.update(slate_obd.shares(bts, log["action"], L, window=ns.window))
        names = ["IIPS"] + (["SIPS", "RIPS"] if log["target_pscore"] is not None else [])
        estimates += [("BTS shares", data, est) for est in slate_ope.evaluate(log, names, **boot)]
        if probs is not None:
            log.update(pl_propensities(probs, log["action"]))
            estimates += [("BTS exact", data, est) for est in slate_ope.evaluate(log, ["IIPS", "SIPS", "RIPS"], **boot)]
    print("| target | data | estimator | estimate | 95% CI | error / log's truth |"
          + ("" if exact is None else " error / exact |") + "\n|---|---|---|---|---|---|" + ("" if exact is None else "---|"))
    for target, data, est in estimates:
        print(f"| {target} | {data} | {est.estimator} | {est.value:.4f} | [{est.low:.4f}, {est.high:.4f}] | "
              f"{(est.value - value) / value:+.3f} |" + ("" if exact is None else f" {(est.value - exact) / exact:+.3f} |"))
    if not counts["random"]["slates"] or not counts["bts"]["slates"]:
        print("\nSIPS and RIPS need complete slates in both logs (the random log's lists, BTS's list and prefix "
              "shares); these logs hold "
              f"{counts['random']['slates']} and {counts['bts']['slates']}: give the full dataset with --path.")
    print(f"\n{time.perf_counter() - start:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
