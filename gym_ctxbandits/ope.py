"""Off-policy estimators: the value of a target policy from bandit feedback logged by another policy.

Logged data of n rounds: the arm `action` (n,) that the behaviour policy pulled, its `reward` (n,)
and its probability `pscore` (n,) under the behaviour policy; the target policy is given by its
action distribution `action_dist` (n, K), pi(k | x_i) on each logged round (an agent's
`action_probs`; OBP's (n, K, 1) with one position is accepted too). Names and formulas follow the
Open Bandit Pipeline (Saito et al. 2021) and Dudik, Langford, Li (2011):

    IPS       V = 1/n sum_i w_i r_i,                        w_i = pi(a_i | x_i) / pscore_i
    SNIPS     V = sum_i w_i r_i / sum_i w_i
    DM        V = 1/n sum_i sum_k pi(k | x_i) q(x_i, k)
    DR        V = DM + 1/n sum_i w_i (r_i - q(x_i, a_i))
    SNDR      V = DM + sum_i w_i (r_i - q(x_i, a_i)) / sum_i w_i
    Switch-DR V = DM + 1/n sum_i 1{w_i <= tau} w_i (r_i - q(x_i, a_i))       (Wang, Agarwal, Dudik 2017)
    DRos      V = DM + 1/n sum_i lam w_i / (w_i^2 + lam) (r_i - q(x_i, a_i)) (Su et al. 2020)

with q a reward model. `replay` is Li, Chu, Langford, Wang (2011)'s estimator of a target that
keeps learning: it walks a uniformly random log and keeps the rounds where the target picks the
logged arm. `clip` caps the importance weights, w_i <- min(w_i, clip) (bias for
variance). Every estimator returns an `Estimate`: the value and a percentile bootstrap confidence
interval over rounds, drawn from a numpy Generator seeded by `seed`, so it is reproducible. By
default the bootstrap holds the reward model fixed, so DM's interval leaves out the model's own
error; `refit=True` (DM and the DR family) fits the model afresh on every resample, which puts its
estimation error into the interval at the cost of `n_bootstrap` times the fits (docs/offpolicy_coverage.md).

The reward model q is fitted by `reward_model`: any scikit-learn regressor (default a ridge) on
the pulled arms' features, then predicted on every arm's features; or pass `estimated_rewards`
(n, K) from elsewhere. DM uses it fitted on every round. The DR family (DR, SNDR, Switch-DR, DRos)
by default fits it sequentially (`fit="sequential"`): the rounds, in the order they were logged,
are cut into `folds` blocks of time, and round i's q comes from a model fitted only on the blocks
before i's (none for the first block: q = 0 there, where the round's term is IPS's). Why: DR's
correction w_i (r_i - q(x_i, a_i)) is unbiased for sum_k pi(k | x_i) (mu(x_i, k) - q(x_i, k)) only
when q(x_i, .) is fixed given what the behaviour knew before round i (the history H_{i-1}) and
x_i: then E[w_i (r_i - q(x_i, a_i)) | H_{i-1}, x_i] = sum_k pi(k | x_i) (mu(x_i, k) - q(x_i, k)),
because a_i ~ pscore(. | x_i, H_{i-1}), and each round's term has conditional mean
sum_k pi(k | x_i) mu(x_i, k), the round's true value, whatever q is (a martingale argument: it
holds on adaptive logs, whose behaviour learns from earlier rewards, as on uniform ones). A model
fitted on round i itself (`fit="in-sample"`, the old default) absorbs part of r_i, pulls DR
towards DM, and with many features biases it (docs/offpolicy.md, "Reward models fitted in-sample");
cross-fitting (`fit="cross"`: block b's q fitted on the other blocks) is unbiased when rounds are
independent (a non-adaptive behaviour such as Random or a fixed policy) but not on an adaptive
log, where later rounds depend on r_i. The target pi must not depend on the log either (a frozen
target trained elsewhere). Sequential fitting costs `folds - 1` fits on growing prefixes.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np
from scipy.stats import norm
from sklearn.base import clone

__all__ = ["Estimate", "ReplayEstimate", "ips", "snips", "dm", "dr", "sndr", "switch_dr", "dros", "replay",
           "reward_model", "evaluate", "at_position", "effective_sample_size", "ESTIMATORS", "FITS"]

ALPHA, N_BOOTSTRAP = 0.05, 1000
FITS = ("sequential", "cross", "in-sample")   # how the DR family keeps the reward model from the rounds it corrects
FOLDS = 10                                    # blocks of time of the sequential and the cross fit
SWITCH_TAU, DROS_LAMBDA = "auto", "auto"     # Switch-DR's largest weight kept, DRos's shrinkage: chosen on
                                            # the log by the MSE bound (_tune), or a number as given
DELTA = 0.05                                # the confidence of the tuning's high-probability bias bound
DROS_GRID = 12                              # DRos's candidates sqrt(lam) = 2 w_max, w_max, ..., 2 w_max / 2^11


@dataclass(frozen=True)
class Estimate:
    """A policy value with its bootstrap confidence interval [low, high] at level 1 - alpha; `tuned`:
    the threshold (Switch-DR's tau) or shrinkage (DRos's lam) that the default "auto" chose on the
    log, None where it was given (or the estimator has none). Passing it back gives the same value
    (with an interval that holds it fixed)."""

    estimator: str
    value: float
    low: float
    high: float
    tuned: float | None = field(default=None, kw_only=True)   # Switch-DR's tau or DRos's lam chosen by "auto"


@dataclass(frozen=True)
class ReplayEstimate(Estimate):
    """A replay estimate, with the number of logged rounds it kept (the target's sample size)."""

    n_kept: int


def ips(reward, action, pscore, action_dist, *, behaviour_dist=None, clip: float | None = None, alpha: float = ALPHA,
        n_bootstrap: int = N_BOOTSTRAP, seed: int = 0) -> Estimate:
    """Inverse propensity scoring (Horvitz-Thompson): unbiased when the behaviour gives positive
    probability to every arm the target may take. `behaviour_dist` (n, K), the behaviour's whole
    distribution on each round (the log's `action_prob`), lets that be checked: a target with mass
    on an arm of behaviour probability 0 is refused, naming the rounds; one whose arms were merely
    never drawn is not (IPS = 0 is then a valid estimate). The other estimators take it too."""
    r, a, pi = _logged(reward, action, action_dist, behaviour_dist)
    w = _weights(pi, a, pscore, clip)
    return _bootstrap("IPS", 0.0, w * r, 1.0, alpha, n_bootstrap, seed)


def snips(reward, action, pscore, action_dist, *, behaviour_dist=None, clip: float | None = None, alpha: float = ALPHA,
          n_bootstrap: int = N_BOOTSTRAP, seed: int = 0) -> Estimate:
    """Self-normalised IPS: IPS divided by the mean weight (biased, consistent, lower variance).
    Undefined (NaN, with a warning) on a log where every weight is 0."""
    r, a, pi = _logged(reward, action, action_dist, behaviour_dist)
    w = _weights(pi, a, pscore, clip)
    return _bootstrap("SNIPS", 0.0, w * r, w, alpha, n_bootstrap, seed)


def dm(reward, action, action_dist, *, context=None, estimated_rewards=None, model=None, refit: bool = False,
       alpha: float = ALPHA, n_bootstrap: int = N_BOOTSTRAP, seed: int = 0) -> Estimate:
    """Direct method: the target's expected reward under the reward model (no pscore needed), the
    model fitted on every logged round (biased where the model is). `refit`: fit the model afresh
    on every bootstrap resample (needs `context`)."""
    r, a, pi = _logged(reward, action, action_dist)
    terms = _model_terms(r, a, pi, np.ones(len(a)), context, estimated_rewards, model, refit, "in-sample", FOLDS,
                         residual=None)
    return _bootstrap("DM", *terms(None), alpha, n_bootstrap, seed, terms if refit else None)


def dr(reward, action, pscore, action_dist, *, context=None, estimated_rewards=None, model=None, refit: bool = False,
       fit: str = "sequential", folds: int = FOLDS, behaviour_dist=None, clip: float | None = None,
       alpha: float = ALPHA, n_bootstrap: int = N_BOOTSTRAP, seed: int = 0) -> Estimate:
    """Doubly robust: DM plus IPS on the reward model's residuals. Unbiased whenever the weights are
    right (positive behaviour propensity wherever the target acts, no clip) and the model of each
    round is fitted without that round (`fit` "sequential", the default, on any log; "cross" on a
    non-adaptive one; module docstring); a good model only lowers its variance. With
    `fit="in-sample"` the model has seen the residuals it corrects, and DR is biased towards DM by
    about as much as the model overfits. `refit`: fit the model(s) afresh on every bootstrap resample,
    by the same scheme (needs `context`)."""
    r, a, pi = _logged(reward, action, action_dist, behaviour_dist)
    terms = _model_terms(r, a, pi, _weights(pi, a, pscore, clip), context, estimated_rewards, model, refit, fit, folds)
    return _bootstrap("DR", *terms(None), alpha, n_bootstrap, seed, terms if refit else None)


def sndr(reward, action, pscore, action_dist, *, context=None, estimated_rewards=None, model=None,
         refit: bool = False, fit: str = "sequential", folds: int = FOLDS, behaviour_dist=None,
         clip: float | None = None, alpha: float = ALPHA, n_bootstrap: int = N_BOOTSTRAP, seed: int = 0) -> Estimate:
    """Self-normalised DR: the residual term divided by the mean weight, as SNIPS divides IPS
    (consistent, not unbiased; undefined, NaN, where every weight is 0). `fit`, `folds` and `refit` as DR's."""
    r, a, pi = _logged(reward, action, action_dist, behaviour_dist)
    terms = _model_terms(r, a, pi, _weights(pi, a, pscore, clip), context, estimated_rewards, model, refit, fit, folds,
                         normalise=True)
    return _bootstrap("SNDR", *terms(None), alpha, n_bootstrap, seed, terms if refit else None)


def switch_dr(reward, action, pscore, action_dist, *, tau: float | str = SWITCH_TAU, context=None,
              estimated_rewards=None, model=None, refit: bool = False, fit: str = "sequential", folds: int = FOLDS,
              behaviour_dist=None, alpha: float = ALPHA, n_bootstrap: int = N_BOOTSTRAP, seed: int = 0) -> Estimate:
    """Switch-DR (Wang, Agarwal, Dudik 2017, as the Open Bandit Pipeline defines it): DR, but a round
    whose weight exceeds `tau` keeps only the model's value (its residual term is dropped). Biased by
    the dropped rounds' expected residual, in exchange for no weight above tau; tau = inf is DR, 0
    is DM. The default tau="auto" picks tau on the log by an estimated MSE (Wang et al. tune tau by
    one), in the form of Su et al. (2020) and OBP's `SwitchDoublyRobustTuning` ("mse",
    with the high-probability bias bound): among tau = 0 and every logged weight, the one that
    minimises the sample variance / n plus the square of a bias bound (`_tune`); a tie goes to the
    larger tau. The bound penalises a bias far more than its variance saves, so "auto" switches off
    only rounds whose residuals average out (it is DR, tau = the largest weight, on most logs); the
    chosen tau is `Estimate.tuned`, and the bootstrap chooses tau afresh on every resample, so the
    interval holds the choice's variability. A number is used as given (the bootstrap holds it).
    `fit`, `folds`, `refit` as DR's."""
    auto = _auto(tau, "tau", "the largest importance weight kept")
    r, a, pi = _logged(reward, action, action_dist, behaviour_dist)
    w = _weights(pi, a, pscore, None)
    chosen = {}

    def residual(w_, e, c):                 # the weights kept, tau tuned on these rows (all first, then a resample)
        tau_ = _tune("Switch-DR", w_, e, c)
        chosen.setdefault("tau", tau_)
        return w_ * (w_ <= tau_)

    terms = _model_terms(r, a, pi, w, context, estimated_rewards, model, refit, fit, folds,
                         residual=residual if auto else w * (w <= tau))
    return _bootstrap("Switch-DR", *terms(None), alpha, n_bootstrap, seed, terms if refit or auto else None,
                      tuned=chosen.get("tau"))


def dros(reward, action, pscore, action_dist, *, lam: float | str = DROS_LAMBDA, context=None, estimated_rewards=None,
         model=None, refit: bool = False, fit: str = "sequential", folds: int = FOLDS, behaviour_dist=None,
         alpha: float = ALPHA, n_bootstrap: int = N_BOOTSTRAP, seed: int = 0) -> Estimate:
    """DR with optimistic shrinkage (DRos; Su, Dimakopoulou, Krishnamurthy, Dudik 2020, as the Open
    Bandit Pipeline defines it): DR with each weight w shrunk to lam w / (w^2 + lam), which is about
    w for w^2 << lam and about lam / w for w^2 >> lam (largest, sqrt(lam) / 2, at w = sqrt(lam)).
    lam = inf is DR, 0 is DM. The default lam="auto" is the paper's tuning (as OBP's
    `DoublyRobustWithShrinkageTuning` "mse" with the high-probability bias bound): among lam = inf, 0
    and sqrt(lam) = 2 w_max, w_max, w_max / 2, ..., 2 w_max / 2^11 (w_max the largest logged
    weight), the one that minimises the sample variance / n plus the square of a bias bound
    (`_tune`; a tie goes to the larger lam). The chosen lam is `Estimate.tuned`; the bootstrap
    chooses lam afresh on every resample, so the interval holds the choice's variability. A number
    is used as given (lam = 400 keeps weights up to about 5 within
    6% and halves 20). `fit`, `folds`, `refit` as DR's."""
    auto = _auto(lam, "lam", "the shrinkage of the weights")
    r, a, pi = _logged(reward, action, action_dist, behaviour_dist)
    w = _weights(pi, a, pscore, None)
    chosen = {}

    def residual(w_, e, c):                 # the shrunk weights, lam tuned on these rows (all first, then a resample)
        lam_ = _tune("DRos", w_, e, c)
        chosen.setdefault("lam", lam_)
        return _shrink(w_, lam_)

    terms = _model_terms(r, a, pi, w, context, estimated_rewards, model, refit, fit, folds,
                         residual=residual if auto else _shrink(w, lam))
    return _bootstrap("DRos", *terms(None), alpha, n_bootstrap, seed, terms if refit or auto else None,
                      tuned=chosen.get("lam"))


def _auto(value, name: str, what: str) -> bool:
    """Whether Switch-DR's tau or DRos's lam is "auto" (chosen on the log); else it must be a number >= 0."""
    if isinstance(value, str) and value == "auto":
        return True
    if isinstance(value, str) or not value >= 0:
        raise ValueError(f"{name} must be \"auto\" (chosen on the log) or a non-negative number ({what}), "
                         f"got {value!r}")
    return False


def _shrink(w: np.ndarray, lam: float) -> np.ndarray:
    """DRos's weights lam w / (w^2 + lam): w itself for lam = inf, 0 for lam = 0."""
    return w if np.isinf(lam) else lam * w / (w ** 2 + lam) if lam > 0 else np.zeros_like(w)


def _tune(name: str, w: np.ndarray, e: np.ndarray, c: np.ndarray, delta: float = DELTA) -> float:
    """Switch-DR's tau or DRos's lam chosen on the rows of weights w, residuals e = r - q(x, a) and
    model values c = sum_k pi(k | x) q(x, k): the candidate of least estimated MSE

        MSE(v) = var_i(c_i + v_i e_i) / n + (|mean_i((w_i - v_i) e_i)| + B)^2,
        B = sqrt(2 mean(w^2) log(2 / delta) / n) + 2 max(w) log(2 / delta) / (3 n),

    v the candidate's modified weights (Switch-DR: w 1{w <= tau}; DRos: lam w / (w^2 + lam)), and
    the bias |mean((w - v) e)| (unbiased for the bias, w being right) raised by B, the Bernstein
    deviation of a mean of terms of size w: Su et al. (2020)'s tuning with the high-probability
    bias bound, as the Open Bandit Pipeline's "mse" tuning computes it (`delta` = 0.05). Candidates
    are ordered from the least biased (DR) down and the first of least MSE wins, so ties keep the
    less biased. Switch-DR's are every logged weight and 0, DRos's the grid of its docstring, all
    at once: the variance from sums var = mean(t^2) - mean(t)^2 (prefix sums over the rounds
    sorted by weight for Switch-DR, one product per sum for DRos), as it runs on every resample."""
    n = len(w)
    bound = np.sqrt(2 * np.mean(w ** 2) * np.log(2 / delta) / n) + 2 * w.max() * np.log(2 / delta) / (3 * n)
    we = w * e
    if name == "Switch-DR":
        order = np.argsort(w, kind="stable")
        prefix = [np.concatenate([[0.0], np.cumsum(t[order])]) for t in (we, c * we, we ** 2)]
        taus = np.unique(np.concatenate([[0.0], w]))[::-1]                 # the largest weight (DR) first
        kept = np.searchsorted(w[order], taus, side="right")               # rounds with w <= tau
        kept_we, kept_cwe, kept_we2 = (t[kept] for t in prefix)
        dropped = prefix[0][-1] - kept_we
        candidates = taus
    else:
        s = 2 * w.max() / 2.0 ** np.arange(DROS_GRID) if w.max() > 0 else np.zeros(0)
        lams = np.concatenate([[np.inf], s ** 2, [0.0]])
        finite = lams[1:-1, None]
        v = np.concatenate([w[None], finite * w / (w ** 2 + finite), np.zeros((1, n))])   # _shrink of each lam
        kept_we, kept_cwe, kept_we2 = v @ e, v @ (c * e), (v * v) @ (e * e)
        dropped = we.sum() - kept_we
        candidates = lams
    mean = c.mean() + kept_we / n
    var = np.maximum(np.mean(c ** 2) + (2 * kept_cwe + kept_we2) / n - mean ** 2, 0.0)
    mse = var / n + (np.abs(dropped) / n + bound) ** 2
    return float(candidates[int(np.argmin(mse))])


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


def _model_terms(r, a, pi, w, context, estimated_rewards, model, refit: bool, fit: str, folds: int,
                 residual="w", normalise: bool = False):
    """The per-round parts (c, num, den) of DM and the DR family, value = mean(c) + mean(num) / mean(den),
    as a function of the rounds `idx` they are computed on (None: all, with the model(s) fitted once).

    c is the model's value of the target sum_k pi(k | x_i) q_i(x_i, k), num the residual
    v_i (r_i - q_i(x_i, a_i)) with v the weights w ("w"), the given (n,) array (Switch-DR's and DRos's
    modified weights), a function (w, e, c) -> v of the rows' weights, residuals r - q(x, a) and
    model values c (the same, tuned on those rows: called on all rows first, then on every resample)
    or None (DM: no residual), den
    the weight w_i for SNDR (else 1). q_i is fitted by `fit` (module docstring; blocks of time by each
    round's position in the log). With `refit`, the terms of a resample idx come from model(s) fitted
    by the same scheme on those rounds alone, fresh clones of `model` (default ridge), so the
    bootstrap sees the model's estimation error too; without, from the fixed model's rows."""
    if refit and context is None:
        raise ValueError("refit=True fits the reward model on every bootstrap resample, so it needs context (the "
                         "per-arm features), not estimated_rewards")
    if fit not in FITS:
        raise ValueError(f"fit must be one of {', '.join(FITS)} (how the reward model is kept from the rounds it "
                         f"corrects), got {fit!r}")
    if not (isinstance(folds, (int, np.integer)) and folds >= 2):
        raise ValueError(f"folds must be an integer >= 2 (blocks of time of the sequential or cross fit), "
                         f"got {folds!r}")
    n = len(a)
    q_all = _rewards_model(context, estimated_rewards, model, a, r, pi.shape, fit, folds)
    c_all, e_all = (pi * q_all).sum(axis=1), r - q_all[np.arange(n), a]
    tuned = callable(residual)
    v = w if isinstance(residual, str) else residual(w, e_all, c_all) if tuned else residual
    X = None if context is None else np.asarray(context)

    def terms(idx):
        if idx is None:
            c, e, wi, vi = c_all, e_all, w, v
        elif refit:
            ri, ai, pii, wi = r[idx], a[idx], pi[idx], w[idx]
            q = _fitted(X[idx], ai, ri, model, fit, _blocks(idx, n, folds))
            c, e = (pii * q).sum(axis=1), ri - q[np.arange(len(ai)), ai]
            vi = residual(wi, e, c) if tuned else None if v is None else v[idx]
        else:                               # tuned weights, the model held fixed: the rows' terms, v tuned on them
            c, e, wi = c_all[idx], e_all[idx], w[idx]
            vi = residual(wi, e, c)
        return c, 0.0 if vi is None else vi * e, wi if normalise else 1.0

    return terms


def reward_model(context, action, reward, model=None, *, fit: str = "in-sample", folds: int = FOLDS) -> np.ndarray:
    """q(x_i, k) for every logged round and arm, (n, K): `model` (a scikit-learn regressor, default
    `Ridge(alpha=1.0)`; cloned, never fitted in place) fitted on the pulled arms' features
    context[i, a_i] -> r_i and predicted on every arm's features context (n, K, d). `fit`:
    "in-sample" fits one model on every round; "sequential" predicts the rounds of each of `folds`
    blocks of time (rows in logged order) with a model fitted on the blocks before (0 for the
    first); "cross" with one fitted on the other blocks (module docstring says which is unbiased where)."""
    a, r = np.asarray(action), np.asarray(reward, dtype=float)
    X = _per_arm(context, len(a), "context must be the per-arm features")
    if fit not in FITS:
        raise ValueError(f"fit must be one of {', '.join(FITS)}, got {fit!r}")
    return _fitted(X, a, r, model, fit, _blocks(np.arange(len(a)), len(a), folds))


def _blocks(idx: np.ndarray, n: int, folds: int) -> np.ndarray:
    """The block of time of each logged row idx of n: rows [b n / folds, (b + 1) n / folds) are block b."""
    return np.asarray(idx) * folds // n


def _fitted(X, a, r, model, fit: str, block: np.ndarray) -> np.ndarray:
    """q (n, K) of rows (X, a, r) fitted by the scheme `fit` on the rows' blocks of time."""
    X = X.astype(float, copy=False)
    if fit == "in-sample":
        return _fit_predict(X, a, r, model, slice(None), slice(None))
    q = np.zeros(X.shape[:2])
    for b in np.unique(block):
        train = block < b if fit == "sequential" else block != b
        if train.any():
            q[block == b] = _fit_predict(X, a, r, model, train, block == b)
    return q


def _fit_predict(X, a, r, model, train, rows) -> np.ndarray:
    """A fresh clone of `model` (default ridge) fitted on the rows `train`, predicted on every arm of `rows`."""
    if model is None:
        from sklearn.linear_model import Ridge

        model = Ridge(alpha=1.0)
    model = clone(model)
    idx = np.arange(len(a))[train]
    model.fit(X[idx, a[idx]], r[idx])
    Xp = X[rows]
    n, K, d = Xp.shape
    return np.asarray(model.predict(Xp.reshape(n * K, d)), dtype=float).reshape(n, K)


ESTIMATORS = {"IPS": ips, "SNIPS": snips, "DM": dm, "DR": dr, "SNDR": sndr, "Switch-DR": switch_dr,
              "DRos": dros}                                                   # of a fixed target's action_dist
MODEL_BASED = ("DM", "DR", "SNDR", "Switch-DR", "DRos")                      # those with a reward model
COLUMNS = {"reward": "each round's reward", "action": "the arm pulled", "pscore": "the behaviour's probability of it",
           "context": "the per-arm features, (n, K, d)"}


def evaluate(feedback: dict, action_dist, estimators=tuple(ESTIMATORS), *, clip: float | None = None, model=None,
             refit: bool = False, fit: str = "sequential", folds: int = FOLDS, options: dict | None = None,
             alpha: float = ALPHA, n_bootstrap: int = N_BOOTSTRAP, seed: int = 0) -> list[Estimate]:
    """The named estimators (keys of ESTIMATORS) of the target `action_dist` on logged `feedback`
    (gym_ctxbandits.feedback's dict), each with the same clip (IPS, SNIPS, DR, SNDR), reward model
    (fitted by `fit` in the DR family, refitted on every bootstrap resample with `refit`) and
    bootstrap; `options` maps a name to its own keywords, e.g. {"Switch-DR": {"tau": 50}}. The log's
    `action_prob` (the behaviour's whole distribution), where it has one, is checked to support the
    target. A ranking target's action_dist (n, K, len_list) is taken at the log's `position` of each round."""
    unknown = sorted(set(estimators) - set(ESTIMATORS))
    if unknown:
        raise ValueError(f"unknown estimator {', '.join(unknown)}; choose from {', '.join(ESTIMATORS)}")
    unknown = sorted(set(options or {}) - set(estimators))
    if unknown:
        raise ValueError(f"options name {', '.join(unknown)}, which is not among the estimators run "
                         f"({', '.join(estimators)})")
    for key, need in (("reward", "every estimator"), ("action", "every estimator"),
                      ("pscore", [e for e in estimators if e != "DM"]), ("context", [e for e in estimators
                                                                                    if e in MODEL_BASED])):
        if need and feedback.get(key) is None:
            raise ValueError(f"the log has no {key!r} column ({COLUMNS[key]}), which "
                             f"{need if isinstance(need, str) else ', '.join(need)} needs: log it with "
                             f"gym_ctxbandits.log (or feedback.from_obp), or leave out the estimators that need it")
    if np.ndim(action_dist) == 3 and feedback.get("position") is not None:
        action_dist = at_position(action_dist, feedback["position"])
    n_actions = feedback.get("n_actions")
    if n_actions is None and feedback.get("context") is not None:
        n_actions = np.shape(feedback["context"])[1]
    if n_actions is not None and np.ndim(action_dist) >= 2 and np.shape(action_dist)[1] != n_actions:
        raise ValueError(f"action_dist has {np.shape(action_dist)[1]} columns but the log has {n_actions} arms: "
                         "give the target's probabilities of the log's arms, one column each (feedback.target_probs)")
    out, fitted = [], {}              # held fixed, each scheme's q is fitted once and shared
    for name in estimators:
        kwargs = dict(alpha=alpha, n_bootstrap=n_bootstrap, seed=seed)
        if name != "DM":
            kwargs.update(pscore=feedback["pscore"], behaviour_dist=feedback.get("action_prob"))
        if name in ("IPS", "SNIPS", "DR", "SNDR"):
            kwargs.update(clip=clip)
        if name in MODEL_BASED:
            kwargs.update(context=feedback["context"], model=model, refit=refit)
        if name in MODEL_BASED and name != "DM":
            kwargs.update(fit=fit, folds=folds)
        kwargs.update((options or {}).get(name, {}))
        if name in MODEL_BASED and not kwargs["refit"]:
            scheme = ("in-sample", FOLDS) if name == "DM" else (kwargs["fit"], kwargs["folds"])
            if scheme not in fitted:
                fitted[scheme] = reward_model(kwargs["context"], feedback["action"], feedback["reward"],
                                              kwargs["model"], fit=scheme[0], folds=scheme[1])
            kwargs.update(context=None, estimated_rewards=fitted[scheme], model=None)
            kwargs.pop("fit", None), kwargs.pop("folds", None)
        out.append(ESTIMATORS[name](feedback["reward"], feedback["action"], action_dist=action_dist, **kwargs))
    return out


def effective_sample_size(action, pscore, action_dist) -> tuple[float, float]:
    """(Kish's effective sample size (sum w)^2 / sum w^2 of the importance weights, the largest
    weight): how many rounds' worth of information the log holds about the target. When it is
    small, a few rounds carry most of the weight and no interval from one log is trustworthy
    (docs/offpolicy_coverage.md)."""
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
def _logged(reward, action, action_dist, behaviour_dist=None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(reward (n,), action (n,), action_dist (n, K)) checked against each other and, where the
    behaviour's whole distribution is given, against its support (`_support`)."""
    r, a = _rewards_actions(reward, action)
    if action_dist is None:
        raise ValueError("action_dist is missing: give the target policy's probabilities of every arm on every "
                         "logged round, (n_rounds, n_actions) (feedback.target_probs)")
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
    bad = _not_distributions(pi)
    if bad.any():
        raise ValueError(f"action_dist must hold the target's probabilities, non-negative rows that sum to 1, but "
                         f"{_sums(pi, bad)} {_rows(bad)}: normalise each row (feedback.target_probs gives them)")
    if behaviour_dist is not None:
        _support(pi, np.asarray(behaviour_dist, dtype=float))
    return r, a, pi


def _support(pi: np.ndarray, b: np.ndarray) -> None:
    """Refuse a target that puts mass where the behaviour gave probability 0 (b, the behaviour's
    (n, K) distribution, e.g. the log's action_prob): no estimator of the DR family or IPS can
    learn those arms' rewards from the log. Arms the behaviour could pull but did not are fine
    (a weight of 0 is a valid term: IPS = 0 and DR = DM when the target's arms were never drawn)."""
    if b.shape != pi.shape:
        raise ValueError(f"action_dist has shape {pi.shape} but the behaviour's action_prob {b.shape}: the target "
                         "needs one probability per arm of the log (as many columns as the log has arms)")
    bad = _not_distributions(b)
    if bad.any():
        raise ValueError(f"the behaviour's action_prob (the log's propensities of every arm) must be probabilities, "
                         f"non-negative rows that sum to 1, but {_sums(b, bad)} {_rows(bad)}: importance weights "
                         "from it would be off by that factor; log the behaviour's whole distribution (gym_ctxbandits.log "
                         "does), or drop the column (action_prob=None) to skip the support check")
    rounds = ((pi > 0) & (b <= 0)).any(axis=1)
    if rounds.any():
        raise ValueError(f"the target takes arms that the behaviour never could (propensity 0) {_rows(rounds)}: "
                         "no estimator learns their rewards from this log; "
                         "log a behaviour that gives every arm positive probability (e.g. Softmax(epsilon=0.1) or "
                         "epsilon-greedy; more draws for sampled propensities), or evaluate on the rounds it covers")


def _rows(bad: np.ndarray) -> str:
    """'on 3 of 200 rounds (0-based rows 1, 2, 3)' of a boolean mask over rounds, naming five at most."""
    rows = np.flatnonzero(bad)
    shown = ", ".join(str(i) for i in rows[:5]) + (f" and {rows.size - 5} more" if rows.size > 5 else "")
    return f"on {rows.size} of {len(bad)} rounds (0-based row{'s' if rows.size > 1 else ''} {shown})"


def _not_distributions(p: np.ndarray) -> np.ndarray:
    """The rows of p (n, K) that are not probability distributions: a negative or non-finite entry,
    or a sum off 1 by more than 1e-6."""
    with np.errstate(invalid="ignore"):
        return ~(np.isfinite(p).all(axis=1) & (p >= 0).all(axis=1) & (np.abs(p.sum(axis=1) - 1.0) <= 1e-6))


def _sums(p: np.ndarray, bad: np.ndarray) -> str:
    """What is wrong with the first bad row of p: 'row 3 sums to 0.5' (or holds NaN, a negative)."""
    i = int(np.flatnonzero(bad)[0])
    row = p[i]
    what = ("holds NaN or inf" if not np.isfinite(row).all() else f"holds {row.min():.3g}" if (row < 0).any()
            else f"sums to {row.sum():.6g}")
    return f"row {i} {what}"


def _rewards_actions(reward, action) -> tuple[np.ndarray, np.ndarray]:
    """(reward (n,) float, action (n,) int64), checked: finite rewards, non-negative int actions."""
    for name, value in (("reward", reward), ("action", action)):
        if value is None:
            raise ValueError(f"{name} is missing: give the log's {COLUMNS[name]} of every round")
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
    if X.dtype.kind not in "biuf":
        raise ValueError(f"{what}: numbers, got dtype {X.dtype}")
    bad = ~np.isfinite(X).all(axis=(1, 2)) if X.dtype.kind == "f" else np.zeros(n, dtype=bool)
    if bad.any():
        raise ValueError(f"context has NaN or inf {_rows(bad)}: no reward model can be fitted on them (nor an agent "
                         "act on them); fix or drop those rounds, or give estimated_rewards")
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
    return w if clip is None else np.minimum(w, clip)


def _rewards_model(context, estimated_rewards, model, a, r, shape, fit: str, folds: int) -> np.ndarray:
    """q (n, K): `estimated_rewards` as given, or `reward_model` fitted on `context` by `fit`."""
    if (context is None) == (estimated_rewards is None):
        raise ValueError("give either context (per-arm features, to fit the reward model) or estimated_rewards "
                         "(n_rounds, n_actions), not both or neither")
    if context is not None:
        X = _per_arm(context, len(a), "context must be the per-arm features")
        if X.shape[1] != shape[1]:
            raise ValueError(f"action_dist has {shape[1]} columns but context has {X.shape[1]} arms a round: give the "
                             "target's probabilities of the log's arms, one column each (feedback.target_probs)")
    q = reward_model(context, a, r, model, fit=fit, folds=folds) if estimated_rewards is None else \
        np.asarray(estimated_rewards, float)
    if q.shape != shape:
        raise ValueError(f"estimated_rewards must have shape {shape} like action_dist, got {q.shape}")
    bad = ~np.isfinite(q).all(axis=1)
    if bad.any():
        where = "estimated_rewards has" if estimated_rewards is not None else "the reward model predicted"
        raise ValueError(f"{where} NaN or inf {_rows(bad)}: DM and the DR family need a finite reward estimate of "
                         "every arm on every round; fix those rows (or fit the model on context)")
    return q


def _bootstrap(name: str, c, num, den, alpha: float, n_bootstrap: int, seed: int, refit=None,
               tuned: float | None = None) -> Estimate:
    """The estimate mean(c) + mean(num) / mean(den) of per-round terms (scalars broadcast), and the
    alpha/2 and 1 - alpha/2 quantiles of its value on `n_bootstrap` resamples of the rounds. A
    resample without a positive weight leaves SNIPS and SNDR undefined (0 / 0) and is left out.
    `refit(idx)`, when given, recomputes the terms of each resample idx (a reward model refitted on
    it) instead of indexing the fixed ones. `tuned` is passed on to the Estimate."""
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
    point = float(value(np.arange(n)))
    if np.isnan(point):                 # a self-normalised estimator on a log where every weight is 0
        warnings.warn(f"{name} is 0 / 0 on this log (no logged arm has positive target probability), so it is NaN; "
                      "IPS (0 here) and DR (DM here) are defined", RuntimeWarning, stacklevel=3)
        return Estimate(name, np.nan, np.nan, np.nan, tuned=tuned)
    low, high = np.nanquantile(values, [alpha / 2, 1 - alpha / 2])
    return Estimate(name, point, float(low), float(high), tuned=tuned)


def _ratio(c, num, den) -> float:
    """mean(c) + mean(num) / mean(den) of one resample's terms (scalars stand for constant terms)."""
    return float(np.mean(c) + np.mean(num) / np.mean(den))


def _check_alpha(alpha: float) -> None:
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must lie in (0, 1) (the CI's level is 1 - alpha), got {alpha!r}")
