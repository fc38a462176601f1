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

with q a reward model. `clip` caps the importance weights, w_i <- min(w_i, clip) (bias for
variance). Every estimator returns an `Estimate`: the value and a percentile bootstrap confidence
interval over rounds, drawn from a numpy Generator seeded by `seed`, so it is reproducible. The
bootstrap holds the reward model fixed, so DM's interval leaves out the model's own error.

The reward model q is fitted by `reward_model`: any scikit-learn regressor (default a ridge) on
the pulled arms' features, then predicted on every arm's features; or pass `estimated_rewards`
(n, K) from elsewhere. The model is fitted and evaluated on the same rounds (no cross-fitting):
simple, and with a low-capacity model such as the default ridge its bias is small.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Estimate", "ips", "snips", "dm", "dr", "sndr", "reward_model", "evaluate", "ESTIMATORS"]

ALPHA, N_BOOTSTRAP = 0.05, 1000


@dataclass(frozen=True)
class Estimate:
    """A policy value with its bootstrap confidence interval [low, high] at level 1 - alpha."""

    estimator: str
    value: float
    low: float
    high: float


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


def dm(reward, action, action_dist, *, context=None, estimated_rewards=None, model=None,
       alpha: float = ALPHA, n_bootstrap: int = N_BOOTSTRAP, seed: int = 0) -> Estimate:
    """Direct method: the target's expected reward under the reward model (no pscore needed)."""
    r, a, pi = _logged(reward, action, action_dist)
    q = _rewards_model(context, estimated_rewards, model, a, r, pi.shape)
    return _bootstrap("DM", (pi * q).sum(axis=1), 0.0, 1.0, alpha, n_bootstrap, seed)


def dr(reward, action, pscore, action_dist, *, context=None, estimated_rewards=None, model=None,
       clip: float | None = None, alpha: float = ALPHA, n_bootstrap: int = N_BOOTSTRAP, seed: int = 0) -> Estimate:
    """Doubly robust: DM plus IPS on the reward model's residuals (unbiased if either is right)."""
    direct, corrected, _ = _dr_terms(reward, action, pscore, action_dist, context, estimated_rewards, model, clip)
    return _bootstrap("DR", direct, corrected, 1.0, alpha, n_bootstrap, seed)


def sndr(reward, action, pscore, action_dist, *, context=None, estimated_rewards=None, model=None,
         clip: float | None = None, alpha: float = ALPHA, n_bootstrap: int = N_BOOTSTRAP, seed: int = 0) -> Estimate:
    """Self-normalised DR: the residual term divided by the mean weight, as SNIPS divides IPS."""
    direct, corrected, w = _dr_terms(reward, action, pscore, action_dist, context, estimated_rewards, model, clip)
    return _bootstrap("SNDR", direct, corrected, w, alpha, n_bootstrap, seed)


def _dr_terms(reward, action, pscore, action_dist, context, estimated_rewards, model, clip):
    """DR's per-round parts: the model's value of the target, the weighted residual, the weight."""
    r, a, pi = _logged(reward, action, action_dist)
    w = _weights(pi, a, pscore, clip)
    q = _rewards_model(context, estimated_rewards, model, a, r, pi.shape)
    residual = r - q[np.arange(len(a)), a]
    return (pi * q).sum(axis=1), w * residual, w


def reward_model(context, action, reward, model=None) -> np.ndarray:
    """q(x_i, k) for every logged round and arm, (n, K): `model` (a scikit-learn regressor, default
    `Ridge(alpha=1.0)`) fitted on the pulled arms' features context[i, a_i] -> r_i and predicted on
    every arm's features context (n, K, d)."""
    X = np.asarray(context, dtype=float)
    a, r = np.asarray(action), np.asarray(reward, dtype=float)
    if X.ndim != 3 or X.shape[0] != len(a):
        raise ValueError(f"context must be the per-arm features (n_rounds, n_actions, dim) = ({len(a)}, K, d), "
                         f"got shape {X.shape}")
    if model is None:
        from sklearn.linear_model import Ridge

        model = Ridge(alpha=1.0)
    model.fit(X[np.arange(len(a)), a], r)
    n, K, d = X.shape
    return np.asarray(model.predict(X.reshape(n * K, d)), dtype=float).reshape(n, K)


ESTIMATORS = {"IPS": ips, "SNIPS": snips, "DM": dm, "DR": dr, "SNDR": sndr}


def evaluate(feedback: dict, action_dist, estimators=tuple(ESTIMATORS), *, clip: float | None = None, model=None,
             alpha: float = ALPHA, n_bootstrap: int = N_BOOTSTRAP, seed: int = 0) -> list[Estimate]:
    """The named estimators (keys of ESTIMATORS) of the target `action_dist` on logged `feedback`
    (gym_ctxbandits.feedback's dict), each with the same clip, reward model and bootstrap."""
    unknown = sorted(set(estimators) - set(ESTIMATORS))
    if unknown:
        raise ValueError(f"unknown estimator {', '.join(unknown)}; choose from {', '.join(ESTIMATORS)}")
    out = []
    for name in estimators:
        kwargs = dict(alpha=alpha, n_bootstrap=n_bootstrap, seed=seed)
        if name != "DM":
            kwargs.update(pscore=feedback["pscore"], clip=clip)
        if name in ("DM", "DR", "SNDR"):
            kwargs.update(context=feedback["context"], model=model)
        out.append(ESTIMATORS[name](feedback["reward"], feedback["action"], action_dist=action_dist, **kwargs))
    return out


# -- checks and the bootstrap ---------------------------------------------------------------------
def _logged(reward, action, action_dist) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(reward (n,), action (n,), action_dist (n, K)) checked against each other."""
    r = np.asarray(reward, dtype=float)
    a = np.asarray(action)
    pi = np.asarray(action_dist, dtype=float)
    if pi.ndim == 3 and pi.shape[2] == 1:          # OBP's (n, K, len_list) with one position
        pi = pi[:, :, 0]
    if r.ndim != 1 or r.size == 0 or not np.isfinite(r).all():
        raise ValueError(f"reward must be a non-empty 1-d array of finite numbers, got shape {r.shape}")
    if a.shape != r.shape or a.dtype.kind not in "iu":
        raise ValueError(f"action must be an int array of shape {r.shape} like reward, got {a.dtype} {a.shape}")
    if pi.ndim != 2 or pi.shape[0] != len(r):
        raise ValueError(f"action_dist must be the target policy's probabilities of shape (n_rounds, n_actions) = "
                         f"({len(r)}, K), got shape {pi.shape}")
    if a.min() < 0 or a.max() >= pi.shape[1]:
        raise ValueError(f"action must lie in [0, {pi.shape[1]}) (the columns of action_dist), got {a.min()}..{a.max()}")
    if not ((pi >= 0).all() and np.allclose(pi.sum(axis=1), 1.0)):
        raise ValueError("action_dist must hold probabilities: non-negative rows that sum to 1")
    return r, a.astype(np.int64), pi


def _weights(pi: np.ndarray, a: np.ndarray, pscore, clip: float | None) -> np.ndarray:
    """Importance weights pi(a_i | x_i) / pscore_i, capped at `clip`."""
    if pscore is None:
        raise ValueError("pscore is missing: importance weighting needs the behaviour policy's probability of each "
                         "logged action (gym_ctxbandits.log records it)")
    p = np.asarray(pscore, dtype=float)
    if p.shape != a.shape:
        raise ValueError(f"pscore must have shape {a.shape} like action, got {p.shape}")
    if not ((p > 0) & (p <= 1)).all():
        raise ValueError(f"pscore must lie in (0, 1], got values from {np.nanmin(p):.3g} to {np.nanmax(p):.3g}"
                         + (" and NaN" if np.isnan(p).any() else ""))
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


def _bootstrap(name: str, c, num, den, alpha: float, n_bootstrap: int, seed: int) -> Estimate:
    """The estimate mean(c) + mean(num) / mean(den) of per-round terms (scalars broadcast), and the
    alpha/2 and 1 - alpha/2 quantiles of its value on `n_bootstrap` resamples of the rounds."""
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must lie in (0, 1) (the CI's level is 1 - alpha), got {alpha!r}")
    if not (isinstance(n_bootstrap, (int, np.integer)) and n_bootstrap >= 1):
        raise ValueError(f"n_bootstrap must be a positive integer, got {n_bootstrap!r}")
    terms = np.broadcast_arrays(*(np.asarray(t, dtype=float) for t in (c, num, den)))   # each (n,)
    n = terms[0].size

    def value(idx) -> np.ndarray:
        c_, num_, den_ = (t[idx].mean(axis=-1) for t in terms)
        return c_ + num_ / den_

    rng = np.random.default_rng(seed)
    chunk = max(1, 2_000_000 // n)          # resamples per block: about 2e6 indices in memory at once
    values = np.concatenate([value(rng.integers(n, size=(min(chunk, n_bootstrap - s), n)))
                             for s in range(0, n_bootstrap, chunk)])
    low, high = np.quantile(values, [alpha / 2, 1 - alpha / 2])
    return Estimate(name, float(value(np.arange(n))), float(low), float(high))
