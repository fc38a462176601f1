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

A missing data set is one `error:` message (the loader's: the files needed and where to put them).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from gym_ctxbandits import datasets, slate_obd, slate_ope
from gym_ctxbandits.datasets import DatasetCorrupt


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog=Path(__file__).name, description=__doc__.split("\n\n")[0])
    parser.add_argument("--campaign", default="all", choices=["all", "men", "women"])
    parser.add_argument("--data-home", help="folder holding obd/ (default: $CTXBANDITS_DATA)")
    parser.add_argument("--path", help="a folder holding obd/random and obd/bts (e.g. the full dataset)")
    parser.add_argument("--window", type=float, default=slate_obd.WINDOW, help="seconds between rows of one impression")
    parser.add_argument("--n-bootstrap", type=int, default=1000, help="bootstrap resamples of each interval")
    parser.add_argument("--seed", type=int, default=0, help="bootstrap seed")
    ns = parser.parse_args(argv)
    start = time.perf_counter()
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
          f"{int(bts['click'].sum())} clicks in {len(bts)} rows); random's own {slate_obd.truth(random)[0]:.4f}\n")
    boot = {"n_bootstrap": ns.n_bootstrap, "seed": ns.seed}
    pi = slate_obd.item_shares(bts, L)[random["item_id"].to_numpy(), random["position"].to_numpy() - 1]
    estimates = [("rows", slate_obd.row_iips(random, pi, **boot))]
    if counts["random"]["slates"]:
        log = slate_obd.slate_log("random", ns.campaign, window=ns.window, events=random, num_items=L)
        log.update(slate_obd.shares(bts, log["action"], L, window=ns.window))
        names = ["IIPS"] + (["SIPS", "RIPS"] if log["target_pscore"] is not None else [])
        estimates += [(f"{log['n_rounds']} slates", est) for est in slate_ope.evaluate(log, names, **boot)]
    print("| data | estimator | estimate | 95% CI | relative error |\n|---|---|---|---|---|")
    for data, est in estimates:
        print(f"| {data} | {est.estimator} | {est.value:.4f} | [{est.low:.4f}, {est.high:.4f}] | "
              f"{abs(est.value - value) / value:.3f} |")
    if not counts["random"]["slates"] or not counts["bts"]["slates"]:
        print("\nSIPS and RIPS need complete slates in both logs (the random log's lists, BTS's list and prefix "
              "shares); these logs hold "
              f"{counts['random']['slates']} and {counts['bts']['slates']}: give the full dataset with --path.")
    print(f"\n{time.perf_counter() - start:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
