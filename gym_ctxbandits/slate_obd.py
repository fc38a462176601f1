"""The Open Bandit Dataset's three positions as slates (issue 50, item 1): the rows of one impression
grouped into a slate log in `slate_ope`'s layout, and what its propensities allow.

A row of OBD (Saito, Aihara, Matsutani, Narita 2021) is one item at one position (1-3) of one
impression: timestamp, item_id, position, click, propensity_score, user_feature_0..3 and the 80
user-item affinities. No column names the impression. The rows of one impression carry the same
user columns and timestamps a few milliseconds apart (in the obp sample, pairs of rows of the same
user at different positions lie 0 to 48 ms apart, and pairs further apart than 0.1 s are as many
as chance predicts), so `group` links rows of identical user columns whose timestamps lie within
`window` (default WINDOW = 0.1 s) and keeps a group as a slate when it holds positions 1, 2, 3 once
each with three distinct items.

Propensities. OBD's propensity_score is the marginal P(item at its position), estimated by Monte
Carlo of the behaviour. The random behaviour draws K = 3 of L items uniformly without replacement,
so its slate probabilities are exact in closed form (`random_propensities`):

    pscore                1 / (L (L-1) (L-2))                the list (SIPS)
    pscore_cascade        1/L, 1/(L (L-1)), 1/(L (L-1) (L-2)) the top-k prefixes (RIPS, Cascade-DR)
    pscore_item_position  1/L at every position              the marginal (IIPS), as logged

Bernoulli TS's log gives only the marginals, so of the slate estimators only IIPS can use it as the
behaviour. Neither log has clicks for lists it did not show: no regret, and an online slate replay
keeps a whole logged slate only when the target draws the same list (about 1 in 80 x 79 x 78 under
the random log).

`slate_log` reads a log through `datasets.load_open_bandit` and returns its complete slates with the
counts of the rows dropped; `row_iips` is IIPS on the ungrouped rows (it needs no slates);
`shares` estimates a non-contextual target (Bernoulli TS's week) by the shares of lists, prefixes and
items at positions in its own log; `truth` is that log's on-policy clicks per impression.
docs/slate_obd.md has the counts and the measured evaluation.
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from gym_ctxbandits import slate_ope
from gym_ctxbandits.ope import ALPHA, N_BOOTSTRAP

__all__ = ["WINDOW", "K", "group", "item_shares", "random_propensities", "row_iips", "shares", "slate_log", "truth"]

K = 3              # positions of an OBD impression
WINDOW = 0.1       # seconds: the rows of one impression lie within it (measured on the obp sample: <= 48 ms)


def _user_key(events) -> np.ndarray:
    """One integer per row, equal for rows of identical user columns (user_feature_*, user-item_affinity_*)."""
    import pandas as pd

    cols = [c for c in events.columns if c.startswith(("user_feature_", "user-item_affinity_"))]
    if not cols:
        raise ValueError("events have no user_feature_* or user-item_affinity_* columns to tell users apart: give "
                         "datasets.load_open_bandit(...).events")
    return pd.util.hash_pandas_object(events[cols], index=False).to_numpy()


def group(events, *, window: float = WINDOW) -> tuple[np.ndarray, dict[str, int]]:
    """The rows of each complete slate, (n, K) row indices of `events` ordered by position, and the counts
    of what was dropped.

    Rows are linked when their user columns are identical and their timestamps at most `window` seconds
    apart (chained in time order); a linked group is a slate when it holds positions 1..K once each with
    K distinct items. The counts: "rows", "slates", "rows in slates", and the rows dropped as
    "partial" (fewer than K rows: the other positions are not in the log; "partial pairs" counts the
    groups of two), "ambiguous" (more than K rows
    or a position twice: impressions too close to tell apart) and "repeated item" (K positions, an item
    twice: not a draw without replacement)."""
    import pandas as pd

    if not (np.isfinite(window) and window >= 0):
        raise ValueError(f"window must be a non-negative number of seconds, got {window!r}")
    missing = [c for c in ("timestamp", "item_id", "position") if c not in events.columns]
    if missing:
        raise ValueError(f"events lack the columns {missing}: give datasets.load_open_bandit(...).events")
    if not events["position"].isin(range(1, K + 1)).all():
        raise ValueError(f"position must be 1..{K} (OBD's slots), got {sorted(set(events['position']))}")
    n_rows = len(events)
    counts = {"rows": n_rows, "slates": 0, "rows in slates": 0, "partial": 0, "partial pairs": 0, "ambiguous": 0,
              "repeated item": 0}
    if n_rows == 0:
        return np.zeros((0, K), dtype=np.int64), counts
    try:
        stamp = pd.to_datetime(events["timestamp"], utc=True, format="ISO8601")   # a whole second drops ".000000"
    except (ValueError, TypeError) as err:
        raise ValueError(f"timestamp cannot be read as dates ({err}): give OBD's timestamp column as logged") from None
    seconds = (stamp - stamp.min()).dt.total_seconds().to_numpy()
    key = _user_key(events)
    order = np.lexsort((seconds, key))                               # by user, then time
    new = np.r_[True, (key[order][1:] != key[order][:-1]) | (np.diff(seconds[order]) > window)]
    starts = np.flatnonzero(new)
    sizes = np.diff(np.r_[starts, n_rows])
    position = events["position"].to_numpy()[order]
    item = events["item_id"].to_numpy()[order]
    slates = []
    for g in np.flatnonzero(sizes == K):
        rows = slice(starts[g], starts[g] + K)
        pos = position[rows]
        if sorted(pos) != list(range(1, K + 1)):
            counts["ambiguous"] += K
        elif len(set(item[rows])) < K:
            counts["repeated item"] += K
        else:
            slates.append(order[rows][np.argsort(pos)])
    for g in np.flatnonzero(sizes != K):
        pos = position[starts[g]: starts[g] + sizes[g]]
        partial = sizes[g] < K and len(set(pos)) == sizes[g]
        counts["partial" if partial else "ambiguous"] += int(sizes[g])
        counts["partial pairs"] += int(partial and sizes[g] == 2)
    out = np.array(slates, dtype=np.int64).reshape(-1, K)
    out = out[np.argsort(out.min(axis=1), kind="stable")]            # in log order, by each slate's first row
    counts.update({"slates": len(out), "rows in slates": K * len(out)})
    return out, counts


def random_propensities(n: int, num_items: int) -> dict[str, np.ndarray]:
    """The random behaviour's exact probabilities of n logged slates: K = 3 of `num_items` items drawn
    uniformly without replacement (OBP's Random policy), keys as `slate_ope.propensities`:
    pscore (n,) = 1 / (L (L-1) (L-2)), pscore_cascade (n, K) = prod_{j<k} 1 / (L - j), pscore_item_position
    (n, K) = 1 / L (every item is equally likely at every position)."""
    L = num_items
    if not (isinstance(L, (int, np.integer)) and L >= K):
        raise ValueError(f"num_items must be an integer of at least {K} (a slate shows {K} distinct items), got {L!r}")
    cascade = np.cumprod(1.0 / (L - np.arange(K)))
    return {"pscore": np.full(n, cascade[-1]), "pscore_cascade": np.tile(cascade, (n, 1)),
            "pscore_item_position": np.full((n, K), 1.0 / L)}


def slate_log(behavior: str = "random", campaign: str = "all", *, window: float = WINDOW, path=None,
              data_home=None, check_size: bool = True, events=None, num_items: int | None = None) -> dict:
    """The complete slates of OBD's `behavior` ("random" or "bts") log of `campaign`, in `slate_ope`'s layout
    with the Open Bandit Pipeline's key names:

        action (n, K), clicks (n, K)        item ids and clicks, position 1 first
        context (n, 4)                      user_feature_0..3 of the slate (category codes)
        affinity (n, L)                     the user-item affinities of the slate's user
        timestamp (n,)                      the slate's first row's
        pscore, pscore_cascade              random: exact (`random_propensities`); bts: None (not logged)
        pscore_item_position (n, K)         random: 1/L; bts: the logged marginals
        dropped                             `group`'s counts (rows, slates, partial, ambiguous, repeated item)
        n_rounds, num_items, num_positions, meta

    Files as `datasets.load_open_bandit`; or `events` (its events table) with `num_items`. A random log
    whose logged propensity is not 1/L is refused, and so is a log without one complete slate (the obp
    sample is a subsample of rows: none of its 10,000 rows of either policy form one)."""
    if behavior not in ("random", "bts"):
        raise ValueError(f"behavior must be 'random' or 'bts', got {behavior!r}")
    if events is None:
        from gym_ctxbandits.datasets import load_open_bandit

        data = load_open_bandit(behavior=behavior, campaign=campaign, path=path, data_home=data_home,
                                check_size=check_size)
        events, num_items = data.events, len(data.items)
    elif num_items is None:
        raise ValueError("give num_items (the items of item_context.csv) with events")
    rows, dropped = group(events, window=window)
    if len(rows) == 0:
        raise ValueError(f"no complete slate in the {behavior} log of {campaign} ({_said(dropped)}): slates need all "
                         f"{K} positions of an impression, which the obp sample (a subsample of rows) lacks; give the "
                         "full Open Bandit Dataset (path=..., from research.zozo.com/data.html)")
    logged = events["propensity_score"].to_numpy(np.float64)[rows]
    log = {"action": events["item_id"].to_numpy(np.int64)[rows], "clicks": events["click"].to_numpy(np.float64)[rows],
           "context": events[[c for c in events.columns if c.startswith("user_feature_")]].apply(
               lambda c: c.astype("category").cat.codes).to_numpy(np.int64)[rows[:, 0]],
           "affinity": events[[f"user-item_affinity_{i}" for i in range(num_items)]].to_numpy(np.float64)[rows[:, 0]],
           "timestamp": events["timestamp"].to_numpy()[rows.min(axis=1)], "dropped": dropped,
           "n_rounds": len(rows), "num_items": num_items, "num_positions": K}
    if behavior == "random":
        off = ~np.isclose(logged, 1.0 / num_items, rtol=1e-6)
        if off.any():
            raise ValueError(f"the random log's propensity_score is not 1/L = 1/{num_items} in {off.any(axis=1).sum()} "
                             "slates: it is not a uniform draw of that many items; check item_context.csv matches")
        log.update(random_propensities(len(rows), num_items))
        kind = "exact: K items uniformly without replacement"
    else:
        log.update(pscore=None, pscore_cascade=None, pscore_item_position=logged)
        kind = "logged marginals only (list and prefix probabilities were not logged): IIPS only"
    log["meta"] = {"dataset": "open-bandit", "behavior": behavior, "campaign": campaign, "window": window,
                   "propensities": kind}
    return log


def _said(dropped: dict) -> str:
    """The counts of `group` in words."""
    return (f"{dropped['rows']} rows, {dropped['slates']} slates; dropped {dropped['partial']} partial "
            f"({dropped['partial pairs']} pairs), "
            f"{dropped['ambiguous']} ambiguous, {dropped['repeated item']} with a repeated item")


def item_shares(events, num_items: int) -> np.ndarray:
    """(num_items, K): the share of each item among a log's rows at each position, P(item e at position k)
    of the policy that logged them (of the week's mixture, for Bernoulli TS); needs no slates."""
    item, position = events["item_id"].to_numpy(np.int64), events["position"].to_numpy(np.int64)
    counts = np.zeros((num_items, K))
    np.add.at(counts, (item, position - 1), 1.0)
    if (counts.sum(axis=0) == 0).any():
        raise ValueError(f"the log has no rows at positions {list(np.flatnonzero(counts.sum(axis=0) == 0) + 1)}: "
                         "item shares need rows at every position")
    return counts / counts.sum(axis=0)


def shares(events, action, num_items: int, *, window: float = WINDOW, prefix: str = "target_") -> dict:
    """A non-contextual target estimated from its own log `events`, at the lists `action` (n, K) of another
    log: the share of each logged list among the target's complete slates (pscore), of each top-k prefix
    (pscore_cascade), and of each item at each position among all its rows (pscore_item_position,
    `item_shares`). The shares estimate without bias the week's mixture of the target's policies (Bernoulli
    TS updated in batches), the policy whose mean clicks are `truth`. Keys prefixed by `prefix`; the list
    and prefix shares are None when the target's log has no complete slate."""
    a = np.asarray(action, dtype=np.int64)
    if a.ndim != 2 or a.shape[1] != K:
        raise ValueError(f"action must be the logged lists (n, {K}), got shape {a.shape}")
    out = {f"{prefix}pscore_item_position": item_shares(events, num_items)[a, np.arange(K)],
           f"{prefix}pscore": None, f"{prefix}pscore_cascade": None}
    rows, _ = group(events, window=window)
    if len(rows):
        lists = events["item_id"].to_numpy(np.int64)[rows]
        cascade = np.empty(a.shape)
        for k in range(K):
            seen = Counter(map(tuple, lists[:, : k + 1]))
            cascade[:, k] = [seen[tuple(r[: k + 1])] / len(lists) for r in a]
        out.update({f"{prefix}pscore": cascade[:, -1].copy(), f"{prefix}pscore_cascade": cascade})
    return out


def truth(events, *, alpha: float = ALPHA) -> tuple[float, float, float]:
    """A log's on-policy value, the expected clicks of an impression (slate_ope's V: the sum over positions
    of each position's click rate), from all its rows (no slates needed), with a normal interval (the
    positions' rows independent)."""
    from scipy.stats import norm

    click, position = events["click"].to_numpy(np.float64), events["position"].to_numpy(np.int64)
    means = np.array([click[position == k].mean() for k in range(1, K + 1)])
    var = sum(click[position == k].var(ddof=1) / (position == k).sum() for k in range(1, K + 1))
    half = norm.ppf(1 - alpha / 2) * np.sqrt(var)
    return float(means.sum()), float(means.sum() - half), float(means.sum() + half)


def row_iips(events, target_marginal, *, alpha: float = ALPHA, n_bootstrap: int = N_BOOTSTRAP,
             seed: int = 0) -> slate_ope.SlateEstimate:
    """IIPS on the ungrouped rows of a behaviour log: sum_k of the mean over position k's rows of
    w r, w = target_marginal / propensity_score (the row's logged marginal). IIPS's per-position terms
    each need one row, so it runs where no slate is complete (the obp sample); written as the mean of
    the per-row terms (n / n_k) w r, with `slate_ope`'s bootstrap interval and standard error.
    `target_marginal` (n,): the target's probability of each row's item at its position."""
    click, position = events["click"].to_numpy(np.float64), events["position"].to_numpy(np.int64)
    pscore = events["propensity_score"].to_numpy(np.float64)
    pi = np.asarray(target_marginal, dtype=float)
    if pi.shape != click.shape or not ((pi >= 0) & (pi <= 1)).all():
        raise ValueError(f"target_marginal must hold the target's probability in [0, 1] of each row's item at its "
                         f"position, shape {click.shape}, got {pi.shape}")
    if not ((pscore > 0) & (pscore <= 1)).all():
        raise ValueError("propensity_score must lie in (0, 1]: importance weighting divides by it")
    n_k = np.bincount(position, minlength=K + 1)
    terms = len(click) / n_k[position] * pi / pscore * click
    return slate_ope._estimate("IIPS (rows)", terms, alpha, n_bootstrap, seed)
