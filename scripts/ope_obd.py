"""Open Bandit Dataset benchmark (issue 21 item 5): Bernoulli TS's CTR estimated from Random's log.

OBP's check (Saito et al. 2021): the Random and the Bernoulli TS (BTS) policies ran side by side on
ZOZOTOWN in the same week, each logging its own impressions. Random's log (pscore 1/80 for every
item in every slot) is the behaviour data; BTS is the target; its on-policy CTR, the mean click of
its own log, is the truth. The relative error |estimate - truth| / truth of each estimator is the
score. Both logs have 3 slots (positions): as OBP does, a slot is part of the round, the target's
distribution is the one of the slot the round was shown in (`ope.at_position`), and a value is a
CTR per shown slot.

BTS's action distribution, two ways:
  * "BTS log": the share of each item in each slot of BTS's own log. BTS updated its posterior in
    batches during the week (its logged pscores move by factors up to thousands), so what ran is a
    mixture of policies; these shares are an unbiased estimate of that mixture, the policy whose
    mean click is the truth. Noisy: about 3,300 impressions a slot for 80 items.
  * "OBP prior" (--bts-prior FILE): OBP's own choice, BTS with the Beta priors ZOZOTOWN's production
    started from (obp's policy/conf/prior_bts.yaml), never updated, its distribution over
    (item, slot) from `--n-sim` simulated rankings (OBP: compute_batch_action_dist, n_sim=100,000).
    FILE is that yaml or the obp wheel holding it (pip download obp==0.4.1 --no-deps ...).

DM, DR and SNDR fit a ridge on the per-item features of `feedback.from_obd` (those of the
CtxBandit/OpenBandit-v0 replay, for all 80 items). Replay draws one item a round from BTS's
distribution in the round's slot and keeps the rounds where it is the logged one (about 1 in 80).

    python scripts/ope_obd.py                        # the 10,000-event sample in $CTXBANDITS_DATA/obd
    python scripts/ope_obd.py --bts-prior obp-0.4.1-py3-none-any.whl

A missing data set or prior file, or a prior file without the campaign's Beta parameters, is one
`error:` message (the loader's for the data set: the files needed and where to put them).
"""

from __future__ import annotations

import argparse
import time
import zipfile
from pathlib import Path

import numpy as np
from scipy.stats import norm

from gym_ctxbandits import datasets, feedback, ope
from gym_ctxbandits.datasets import DatasetCorrupt

PRIOR_IN_WHEEL = "obp/policy/conf/prior_bts.yaml"
N_SLOTS = 3


def bts_log_dist(events, n_items: int) -> np.ndarray:
    """(n_items, 3): the share of each item in each slot of BTS's log."""
    counts = np.zeros((n_items, N_SLOTS))
    np.add.at(counts, (events["item_id"].to_numpy(), events["position"].to_numpy() - 1), 1.0)
    return counts / counts.sum(axis=0)


def load_prior(path: str, campaign: str) -> tuple[np.ndarray, np.ndarray]:
    """The campaign's Beta (alpha, beta) per item from OBP's prior_bts.yaml or the obp wheel holding
    it; a ValueError naming the problem and the file to give instead."""
    import yaml

    get = "give OBP's prior_bts.yaml, or the obp wheel that holds it (pip download obp==0.4.1 --no-deps)"
    if not Path(path).is_file():
        raise ValueError(f"--bts-prior {path}: no such file; {get}")
    try:
        if Path(path).suffix == ".whl":
            with zipfile.ZipFile(path) as wheel:
                prior = yaml.safe_load(wheel.read(PRIOR_IN_WHEEL))
        else:
            prior = yaml.safe_load(Path(path).read_text())
    except KeyError:
        raise ValueError(f"--bts-prior {path}: the wheel holds no {PRIOR_IN_WHEEL}; {get}") from None
    except (zipfile.BadZipFile, UnicodeDecodeError, yaml.YAMLError) as err:
        raise ValueError(f"--bts-prior {path}: not a wheel or a yaml file ({type(err).__name__}); {get}") from None
    try:
        return tuple(np.asarray(prior[campaign][k], dtype=float) for k in ("alpha", "beta"))
    except (KeyError, TypeError, ValueError):
        raise ValueError(f"--bts-prior {path}: no numeric alpha and beta lists under campaign {campaign!r}; {get}") \
            from None


def prior_dist(path: str, campaign: str, n_sim: int, seed: int) -> np.ndarray:
    """(n_items, 3): how often a Beta(alpha, beta) sample ranks each item in each of the top 3 slots."""
    alpha, beta = load_prior(path, campaign)
    rng = np.random.default_rng(seed)
    counts = np.zeros((len(alpha), N_SLOTS))
    for start in range(0, n_sim, 10_000):
        sampled = rng.beta(alpha, beta, size=(min(10_000, n_sim - start), len(alpha)))
        top = np.argsort(-sampled, axis=1)[:, :N_SLOTS]                   # the ranking's items, slot by slot
        for slot in range(N_SLOTS):
            counts[:, slot] += np.bincount(top[:, slot], minlength=len(alpha))
    return counts / n_sim


def mean_ci(x: np.ndarray, alpha: float = 0.05) -> tuple[float, float, float]:
    half = norm.ppf(1 - alpha / 2) * x.std(ddof=1) / np.sqrt(len(x))
    return float(x.mean()), float(x.mean() - half), float(x.mean() + half)


def evaluate(random_log: dict, per_slot: np.ndarray, seed: int) -> list[ope.Estimate]:
    """Every estimator of the target whose item distribution in slot s is per_slot[:, s]."""
    n = random_log["n_rounds"]
    action_dist = np.broadcast_to(per_slot, (n, *per_slot.shape))                  # (n, K, 3), OBP's layout
    estimates = ope.evaluate(random_log, action_dist, seed=seed)
    pi = ope.at_position(action_dist, random_log["position"])
    estimates.append(ope.replay(random_log["reward"], random_log["action"], random_log["pscore"], pi, seed=seed))
    return estimates


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog=Path(__file__).name, description=__doc__.split("\n\n")[0])
    parser.add_argument("--campaign", default="all", choices=["all", "men", "women"])
    parser.add_argument("--data-home", help="folder holding obd/ (default: $CTXBANDITS_DATA)")
    parser.add_argument("--path", help="a folder holding obd/random and obd/bts (e.g. a cut of the logs)")
    parser.add_argument("--bts-prior", help="OBP's prior_bts.yaml, or the obp wheel that holds it")
    parser.add_argument("--n-sim", type=int, default=100_000, help="simulated BTS rankings (with --bts-prior)")
    parser.add_argument("--seed", type=int, default=0, help="bootstrap, Replay and simulation seed")
    ns = parser.parse_args(argv)
    start = time.perf_counter()
    where = dict(data_home=ns.data_home, path=ns.path, check_size=ns.path is None)
    try:
        if ns.bts_prior:
            load_prior(ns.bts_prior, ns.campaign)  # checked before the logs load, which takes longer
        random_log = feedback.from_obd("random", ns.campaign, **where)
        bts = datasets.load_open_bandit(behavior="bts", campaign=ns.campaign, **where).events
    except (FileNotFoundError, DatasetCorrupt) as err:
        parser.exit(2, f"{parser.prog}: error: {type(err).__name__}: {err}\n")
    except ValueError as err:
        parser.exit(2, f"{parser.prog}: error: {err}\n")
    truth, low, high = mean_ci(bts["click"].to_numpy(float))
    targets = {"BTS log": bts_log_dist(bts, random_log["n_actions"])}
    if ns.bts_prior:
        targets["OBP prior"] = prior_dist(ns.bts_prior, ns.campaign, ns.n_sim, ns.seed)
    print(f"Open Bandit Dataset, campaign {ns.campaign}: {random_log['n_rounds']} Random events "
          f"(CTR {random_log['reward'].mean():.4f}), {len(bts)} BTS events\n")
    print(f"truth: BTS's on-policy CTR {truth:.4f} (95% CI [{low:.4f}, {high:.4f}], "
          f"{int(bts['click'].sum())} clicks)\n")
    print("| target distribution | estimator | estimate | 95% CI | relative error |\n|---|---|---|---|---|")
    for name, per_slot in targets.items():
        for est in evaluate(random_log, per_slot, ns.seed):
            label = f"Replay ({est.n_kept} kept)" if isinstance(est, ope.ReplayEstimate) else est.estimator
            print(f"| {name} | {label} | {est.value:.4f} | [{est.low:.4f}, {est.high:.4f}] | "
                  f"{abs(est.value - truth) / truth:.3f} |")
    print(f"\n{time.perf_counter() - start:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
