"""Off-policy estimators: the value of a target policy from bandit feedback logged by another policy.

Logged data of n rounds: the arm `action` (n,) that the behaviour policy pulled, its `reward` (n,)
and its probability `pscore` (n,) under the behaviour policy; the target policy is given by its
action distribution `action_dist` (n, K), pi(k | x_i) on each logged round (an agent's
`action_probs`; OBP's (n, K, 1) with one position is accepted too). Names and formulas follow the
Open Bandit Pipeline (Saito et al. 2021) and Dudik, Langford, Li (2011):

    IPS    V = 1/n sum_i w_i r_i,                        w_i = pi(a_i | x_i) / pscore_i
    SNIPS  V = sum_i w_i r_i / sum_i w_i
    DM     V = 1/n sum_i sum_k pi(k | x_i) q(x_i, k)
    DR     V = DM + 1/n sum_i w_i (r_i - q(x_i, a_i))
    SNDR   V = DM + sum_i w_i (r_i - q(x_i, a_i)) / sum_i w_i

with q a reward model. `replay` is Li, Chu, Langford, Wang (2011)'s estimator of a target that
keeps learning: it walks a uniformly random log and keeps the rounds where the target picks the
logged arm. `clip` caps the importance weights, w_i <- min(w_i, clip) (bias for
variance). Every estimator returns an `Estimate`: the value and a percentile bootstrap confidence
interval over rounds, drawn from a numpy Generator seeded by `seed`, so it is reproducible. By
default the bootstrap holds the reward model fixed, so DM's interval leaves out the model's own
error; `refit=True` (DM, DR, SNDR) fits the model afresh on every resample, which puts its
estimation error into the interval at the cost of `n_bootstrap` fits (docs/offpolicy.md, "Coverage").

The reward model q is fitted by `reward_model`: any scikit-learn regressor (default a ridge) on
the pulled arms' features, then predicted on every arm's features; or pass `estimated_rewards`
(n, K) from elsewhere. The model is fitted and evaluated on the same rounds (no cross-fitting):
simple, and with a low-capacity model such as the default ridge its bias is small.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.stats import norm
from sklearn.base import clone

__all__ = ["Estimate", "ReplayEstimate", "ips", "snips", "dm", "dr", "sndr", "replay", "reward_model", "evaluate",
           "at_position", "effective_sample_size", "ESTIMATORS"]

ALPHA, N_BOOTSTRAP = 0.05, 1000


@dataclass(frozen=True)
class Estimate:
    """A policy value with its bootstrap confidence interval [low, high] at level 1 - alpha."""

    estimator: str
    value: float
    low: float
    high: float


@dataclass(frozen=True)
class ReplayEstimate(Estimate):
    """A replay estimate, with the number of logged rounds it kept (the target's sample size)."""

    n_kept: int


def ips(reward, action, pscore, action_dist, *, clip: float | None = None, alpha: float = ALPHA,
        n_bootstrap: int = N_BOOTSTRAP, seed: int = 0) -> Estimate:
    """Inverse propensity scoring (Horvitz-Thompson): unbiased when pscore > 0 wherever pi > 0."""
    r, a, pi = _logged(reward, action, action_dist)
    w = _weights(pi, a, pscore, clip)
    return _bootstrap("IPS", 0.0, w * r, 1.0, alpha, n_bootstrap, seed)


def snips(reward, action, pscore, action_dist, *, clip: float | None = None, alpha: float = ALPHA,
          n_bootstrap: int = N_BOOTSTRAP, seed: int = 0) -> Estimate:
    """Self-normalised IPS: IPS divided by the mean weight (biased, consistent, lower variance)."""
    r, a, pi = _logged(reward, action, action_dist)
    w = _weights(pi, a, pscore, clip)
    return _bootstrap("SNIPS", 0.0, w * r, w, alpha, n_bootstrap, seed)


def dm(reward, action, action_dist, *, context=None, estimated_rewards=None, model=None, refit: bool = False,
       alpha: float = ALPHA, n_bootstrap: int = N_BOOTSTRAP, seed: int = 0) -> Estimate:
    """Direct method: the target's expected reward under the reward model (no pscore needed).
    `refit`: fit the model afresh on every bootstrap resample (needs `context`)."""
    r, a, pi = _logged(reward, action, action_dist)
    terms = _model_terms(r, a, pi, np.ones(len(a)), context, estimated_rewards, model, refit, residual=False)
    return _bootstrap("DM", *terms(None), alpha, n_bootstrap, seed, terms if refit else None)


def dr(reward, action, pscore, action_dist, *, context=None, estimated_rewards=None, model=None, refit: bool = False,
       clip: float | None = None, alpha: float = ALPHA, n_bootstrap: int = N_BOOTSTRAP, seed: int = 0) -> Estimate:
    """Doubly robust: DM plus IPS on the reward model's residuals (unbiased if either is right).
    `refit`: fit the model afresh on every bootstrap resample (needs `context`)."""
    r, a, pi = _logged(reward, action, action_dist)
    terms = _model_terms(r, a, pi, _weights(pi, a, pscore, clip), context, estimated_rewards, model, refit)
    return _bootstrap("DR", *terms(None), alpha, n_bootstrap, seed, terms if refit else None)


def sndr(reward, action, pscore, action_dist, *, context=None, estimated_rewards=None, model=None,
         refit: bool = False, clip: float | None = None, alpha: float = ALPHA, n_bootstrap: int = N_BOOTSTRAP,
         seed: int = 0) -> Estimate:
    """Self-normalised DR: the residual term divided by the mean weight, as SNIPS divides IPS.
    `refit`: fit the model afresh on every bootstrap resample (needs `context`)."""
    r, a, pi = _logged(reward, action, action_dist)
    terms = _model_terms(r, a, pi, _weights(pi, a, pscore, clip), context, estimated_rewards, model, refit,
                         normalise=True)
    return _bootstrap("SNDR", *terms(None), alpha, n_bootstrap, seed, terms if refit else None)


def replay(reward, action, pscore, target, *, context=None, rejection: bool = False, alpha: float = ALPHA,
           seed: int = 0) -> ReplayEstimate:
    """Replay (Li, Chu, Langford, Wang 2011, Algorithm 1): the target's mean reward on the logged
    rounds where it picks the logged arm.

    `target` is an agent that keeps learning: on each logged round i it is asked `act(context[i])`
    (context: the per-arm features, (n, K, d)); when it picks `action[i]` the round is kept and the
    agent observes the logged reward, otherwise the round is skipped and it learns nothing. Or
    `target` is a fixed policy's action distribution (n, K), from which each round's arm is drawn
    with `seed`. With a uniformly random behaviour (pscore = 1/K on every round) the kept rounds are
    distributed as the rounds the target would meet online, so the estimate is unbiased for its
    mean reward over `n_kept` online rounds (a fixed policy: its value); about n/K rounds are kept.
    Any other log would bias it and is refused unless `rejection=True`: each round is then first
    offered with probability min(pscore) / pscore_i, the rejection sampling of Dudik, Erhan,
    Langford, Li (2012), which leaves uniformly random rounds (the log's smallest pscore stands in
    for the behaviour's smallest propensity; about n min(pscore) rounds are kept). The interval is
    the normal approximation value +- z_{1 - alpha/2} sd / sqrt(n_kept) on the kept rewards.
    """
    _check_alpha(alpha)
    rng = np.random.default_rng(seed)
    learning = hasattr(target, "act") and hasattr(target, "observe")
    if learning:
        r, a = _rewards_actions(reward, action)
        X = _per_arm(context, len(r), "context must be the per-arm features the target acts on")
        K = X.shape[1]
        if a.max() >= K:
            raise ValueError(f"action must lie in [0, {K}) (the arms of context), got {a.min()}..{a.max()}")
    else:
        r, a, pi = _logged(reward, action, target)
        K = pi.shape[1]
    p = _pscore(pscore, a, "replay checks that the behaviour picked uniformly at random (pscore = 1/K)")
    if not rejection and not np.allclose(p, 1.0 / K, rtol=1e-6, atol=0.0):
        raise ValueError(f"replay needs a uniformly random log (pscore = 1/K = {1 / K:.4g} on every round), got "
                         f"pscores from {p.min():.3g} to {p.max():.3g}: log a uniform behaviour (Random), pass "
                         "rejection=True (CLI: --replay-rejection) to resample the log to uniform, or use IPS or DR")
    offered = rng.random(len(r)) < p.min() / p if rejection else np.ones(len(r), dtype=bool)
    if learning:
        kept = []
        for i in np.flatnonzero(offered):
            if int(target.act(X[i])) == a[i]:
                target.observe(X[i], int(a[i]), float(r[i]))
                kept.append(i)
        kept = np.array(kept, dtype=np.int64)
    else:
        cdf = np.cumsum(pi, axis=1)
        cdf[:, -1] = 1.0                                    # rows that sum to 1 - 1e-16 still draw an arm
        draws = (rng.random(len(r))[:, None] < cdf).argmax(axis=1)        # arm ~ pi(. | x_i)
        kept = np.flatnonzero(offered & (draws == a))
    if kept.size == 0:
        raise ValueError(f"replay kept no round: the target picked the logged arm on none of the {offered.sum()} "
                         "rounds offered; log more rounds")
    m, value = kept.size, float(r[kept].mean())
    half = float(norm.ppf(1 - alpha / 2) * r[kept].std(ddof=1) / np.sqrt(m)) if m > 1 else np.inf
    return ReplayEstimate("Replay", value, value - half, value + half, int(m))


def _model_terms(r, a, pi, w, context, estimated_rewards, model, refit: bool, residual: bool = True,
                 normalise: bool = False):
    """The per-round parts (c, num, den) of DM / DR / SNDR, value = mean(c) + mean(num) / mean(den), as a
    function of the rounds `idx` they are computed on (None: all, with the model fitted once).

    c is the model's value of the target sum_k pi(k | x_i) q(x_i, k), num the weighted residual
    w_i (r_i - q(x_i, a_i)) (0 for DM), den the weight w_i for SNDR (else 1). With `refit`, the
    terms of a resample idx come from a model fitted on those rounds alone, a fresh clone of
    `model` (default ridge) each time, so the bootstrap sees the model's estimation error too."""
    if refit and context is None:
        raise ValueError("refit=True fits the reward model on every bootstrap resample, so it needs context (the "
                         "per-arm features), not estimated_rewards")
    q_all = _rewards_model(context, estimated_rewards, model, a, r, pi.shape)
    X = None if context is None else np.asarray(context)

    def terms(idx):
        if idx is None:
            q, ri, ai, pii, wi = q_all, r, a, pi, w
        else:
            ri, ai, pii, wi = r[idx], a[idx], pi[idx], w[idx]
            q = reward_model(X[idx], ai, ri, None if model is None else clone(model))
        num = wi * (ri - q[np.arange(len(ai)), ai]) if residual else 0.0
        return (pii * q).sum(axis=1), num, wi if normalise else 1.0

    return terms


def reward_model(context, action, reward, model=None) -> np.ndarray:
    """q(x_i, k) for every logged round and arm, (n, K): `model` (a scikit-learn regressor, default
    `Ridge(alpha=1.0)`) fitted on the pulled arms' features context[i, a_i] -> r_i and predicted on
    every arm's features context (n, K, d)."""
    a, r = np.asarray(action), np.asarray(reward, dtype=float)
    X = _per_arm(context, len(a), "context must be the per-arm features").astype(float, copy=False)
    if model is None:
        from sklearn.linear_model import Ridge

        model = Ridge(alpha=1.0)
    model.fit(X[np.arange(len(a)), a], r)
    n, K, d = X.shape
    return np.asarray(model.predict(X.reshape(n * K, d)), dtype=float).reshape(n, K)


ESTIMATORS = {"IPS": ips, "SNIPS": snips, "DM": dm, "DR": dr, "SNDR": sndr}   # of a fixed target's action_dist


def evaluate(feedback: dict, action_dist, estimators=tuple(ESTIMATORS), *, clip: float | None = None, model=None,
             refit: bool = False, alpha: float = ALPHA, n_bootstrap: int = N_BOOTSTRAP,
             seed: int = 0) -> list[Estimate]:
    """The named estimators (keys of ESTIMATORS) of the target `action_dist` on logged `feedback`
    (gym_ctxbandits.feedback's dict), each with the same clip, reward model (refitted on every
    bootstrap resample with `refit`) and bootstrap. A ranking target's action_dist (n, K, len_list)
    is taken at the log's `position` of each round."""
    if np.ndim(action_dist) == 3 and feedback.get("position") is not None:
        action_dist = at_position(action_dist, feedback["position"])
    unknown = sorted(set(estimators) - set(ESTIMATORS))
    if unknown:
        raise ValueError(f"unknown estimator {', '.join(unknown)}; choose from {', '.join(ESTIMATORS)}")
    out = []
    for name in estimators:
        kwargs = dict(alpha=alpha, n_bootstrap=n_bootstrap, seed=seed)
        if name != "DM":
            kwargs.update(pscore=feedback["pscore"], clip=clip)
        if name in ("DM", "DR", "SNDR"):
            kwargs.update(context=feedback["context"], model=model, refit=refit)
        out.append(ESTIMATORS[name](feedback["reward"], feedback["action"], action_dist=action_dist, **kwargs))
    return out


def effective_sample_size(action, pscore, action_dist) -> tuple[float, float]:
    """(Kish's effective sample size (sum w)^2 / sum w^2 of the importance weights, the largest
    weight): how many rounds' worth of information the log holds about the target. When it is
    small, a few rounds carry most of the weight and no interval from one log is trustworthy
    (docs/offpolicy.md, "Coverage")."""
    _, a, pi = _logged(np.zeros(np.shape(action)), action, action_dist)
    w = pi[np.arange(len(a)), a] / _pscore(pscore, a, "importance weighting divides by it")
    return float(w.sum() ** 2 / (w ** 2).sum()) if w.any() else 0.0, float(w.max())


def at_position(action_dist, position) -> np.ndarray:
    """Each round's distribution in the slot it was shown in: action_dist (n, K, len_list), OBP's
    ranking layout, and position (n,) in [0, len_list) -> (n, K). A ranking policy's value is then
    the mean reward per shown slot, as OBP's estimators compute it."""
    pi, pos = np.asarray(action_dist, dtype=float), np.asarray(position)
    if pi.ndim != 3 or pos.shape != (pi.shape[0],) or pos.dtype.kind not in "iu":
        raise ValueError(f"at_position takes action_dist (n, K, len_list) and int positions (n,), got shapes "
                         f"{pi.shape} and {pos.shape}")
    if pos.min() < 0 or pos.max() >= pi.shape[2]:
        raise ValueError(f"position must lie in [0, {pi.shape[2]}) (0-based slots), got {pos.min()}..{pos.max()}")
    return pi[np.arange(len(pos)), :, pos]


# -- checks and the bootstrap ---------------------------------------------------------------------
def _logged(reward, action, action_dist) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(reward (n,), action (n,), action_dist (n, K)) checked against each other."""
    r, a = _rewards_actions(reward, action)
    pi = np.asarray(action_dist, dtype=float)
    if pi.ndim == 3 and pi.shape[2] == 1:          # OBP's (n, K, len_list) with one position
        pi = pi[:, :, 0]
    if pi.ndim == 3 and pi.shape[0] == len(r):
        raise ValueError(f"action_dist has {pi.shape[2]} positions (n, K, len_list); take each round's slot first: "
                         "ope.at_position(action_dist, position)")
    if pi.ndim != 2 or pi.shape[0] != len(r):
        raise ValueError(f"action_dist must be the target policy's probabilities of shape (n_rounds, n_actions) = "
                         f"({len(r)}, K), got shape {pi.shape}")
    if a.max() >= pi.shape[1]:
        raise ValueError(f"action must lie in [0, {pi.shape[1]}) (the columns of action_dist), got {a.min()}..{a.max()}")
    if not ((pi >= 0).all() and np.allclose(pi.sum(axis=1), 1.0)):
        raise ValueError("action_dist must hold probabilities: non-negative rows that sum to 1")
    return r, a, pi


def _rewards_actions(reward, action) -> tuple[np.ndarray, np.ndarray]:
    """(reward (n,) float, action (n,) int64), checked: finite rewards, non-negative int actions."""
    r = np.asarray(reward, dtype=float)
    a = np.asarray(action)
    if r.ndim != 1 or r.size == 0 or not np.isfinite(r).all():
        raise ValueError(f"reward must be a non-empty 1-d array of finite numbers, got shape {r.shape}")
    if a.shape != r.shape or a.dtype.kind not in "iu":
        raise ValueError(f"action must be an int array of shape {r.shape} like reward, got {a.dtype} {a.shape}")
    if a.min() < 0:
        raise ValueError(f"action must be arm indices >= 0, got {a.min()}")
    return r, a.astype(np.int64)


def _per_arm(context, n: int, what: str) -> np.ndarray:
    """The per-arm features (n, K, d), or a one-line error that starts with `what`."""
    X = None if context is None else np.asarray(context)
    if X is None or X.ndim != 3 or X.shape[0] != n:
        raise ValueError(f"{what}: shape (n_rounds, n_actions, dim) = ({n}, K, d), got "
                         f"{'none' if X is None else X.shape}")
    return X


def _pscore(pscore, a: np.ndarray, need: str) -> np.ndarray:
    """The behaviour's propensities (n,), checked to lie in (0, 1]; `need` says who needs them."""
    if pscore is None:
        raise ValueError(f"pscore is missing: {need}, so it needs the behaviour policy's probability of each "
                         "logged action (gym_ctxbandits.log records it)")
    p = np.asarray(pscore, dtype=float)
    if p.shape != a.shape:
        raise ValueError(f"pscore must have shape {a.shape} like action, got {p.shape}")
    if not ((p > 0) & (p <= 1)).all():
        raise ValueError(f"pscore must lie in (0, 1], got values from {np.nanmin(p):.3g} to {np.nanmax(p):.3g}"
                         + (" and NaN" if np.isnan(p).any() else ""))
    return p


def _weights(pi: np.ndarray, a: np.ndarray, pscore, clip: float | None) -> np.ndarray:
    """Importance weights pi(a_i | x_i) / pscore_i, capped at `clip`."""
    p = _pscore(pscore, a, "importance weighting divides by it")
    if clip is not None and not clip > 0:
        raise ValueError(f"clip must be a positive number (the largest importance weight kept), got {clip!r}")
    w = pi[np.arange(len(a)), a] / p
    if not w.any():
        raise ValueError("the target never takes a logged action (every importance weight is 0), so the log says "
                         "nothing about it: log a behaviour policy that explores the target's actions (e.g. "
                         "epsilon-greedy), or use DM alone")
    return w if clip is None else np.minimum(w, clip)


def _rewards_model(context, estimated_rewards, model, a, r, shape) -> np.ndarray:
    """q (n, K): `estimated_rewards` as given, or `reward_model` fitted on `context`."""
    if (context is None) == (estimated_rewards is None):
        raise ValueError("give either context (per-arm features, to fit the reward model) or estimated_rewards "
                         "(n_rounds, n_actions), not both or neither")
    q = reward_model(context, a, r, model) if estimated_rewards is None else np.asarray(estimated_rewards, float)
    if q.shape != shape:
        raise ValueError(f"estimated_rewards must have shape {shape} like action_dist, got {q.shape}")
    return q


def _bootstrap(name: str, c, num, den, alpha: float, n_bootstrap: int, seed: int, refit=None) -> Estimate:
    """The estimate mean(c) + mean(num) / mean(den) of per-round terms (scalars broadcast), and the
    alpha/2 and 1 - alpha/2 quantiles of its value on `n_bootstrap` resamples of the rounds. A
    resample without a positive weight leaves SNIPS and SNDR undefined (0 / 0) and is left out.
    `refit(idx)`, when given, recomputes the terms of each resample idx (a reward model refitted on
    it) instead of indexing the fixed ones."""
    _check_alpha(alpha)
    if not (isinstance(n_bootstrap, (int, np.integer)) and n_bootstrap >= 1):
        raise ValueError(f"n_bootstrap must be a positive integer, got {n_bootstrap!r}")
    terms = np.broadcast_arrays(*(np.asarray(t, dtype=float) for t in (c, num, den)))   # each (n,)
    n = terms[0].size

    def value(idx) -> np.ndarray:
        c_, num_, den_ = (t[idx].mean(axis=-1) for t in terms)
        with np.errstate(invalid="ignore", divide="ignore"):
            return c_ + num_ / den_

    rng = np.random.default_rng(seed)
    if refit is not None:
        with np.errstate(invalid="ignore", divide="ignore"):
            values = np.array([_ratio(*refit(rng.integers(n, size=n))) for _ in range(n_bootstrap)])
    else:
        chunk = max(1, 2_000_000 // n)          # resamples per block: about 2e6 indices in memory at once
        values = np.concatenate([value(rng.integers(n, size=(min(chunk, n_bootstrap - s), n)))
                                 for s in range(0, n_bootstrap, chunk)])
    low, high = np.nanquantile(values, [alpha / 2, 1 - alpha / 2])
    return Estimate(name, float(value(np.arange(n))), float(low), float(high))


def _ratio(c, num, den) -> float:
    """mean(c) + mean(num) / mean(den) of one resample's terms (scalars stand for constant terms)."""
    return float(np.mean(c) + np.mean(num) / np.mean(den))


def _check_alpha(alpha: float) -> None:
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must lie in (0, 1) (the CI's level is 1 - alpha), got {alpha!r}")
