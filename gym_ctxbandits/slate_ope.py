"""Slate off-policy evaluation (issue 50 item 3): ranking logs with exact list propensities, and the
standard, independent and reward-interaction IPS and Cascade-DR estimators.

Setting (Kiyohara, Saito, Matsuhiro, Narita, Shimizu, Yamamoto 2022, "Doubly Robust Off-Policy
Evaluation for Ranking Policies under the Cascade Behavior Model", WSDM, section 2): round i shows
items with features x_i (L, d); a policy ranks K of them, a_i = (a_i(1), ..., a_i(K)), and the user
clicks r_i(k) in {0, 1} at position k. The value of a policy pi is the expected sum of per-position
clicks,

    V(pi) = E_x E_{a ~ pi(. | x)} [ sum_k r(k) ],

the slate reward of the Open Bandit Pipeline, whose slate estimators sum the slot rewards. On the
cascade and PBM envs it is the env's reward (a cascade user clicks at most once; a PBM's reward
counts the clicks); on DCM it is the expected number of clicks, not the env's reward (whether the
user left satisfied). Each estimator is 1/n sum_i of a per-round term (names of obp.ope):

    SIPS        sum_k w_i r_i(k),            w_i = pi(a_i | x_i) / pi_0(a_i | x_i), the whole list
    IIPS        sum_k w_i(k) r_i(k),         w_i(k) = pi(a_i(k) at k | x_i) / pi_0(a_i(k) at k | x_i)
    RIPS        sum_k w_i(1:k) r_i(k),       w_i(1:k) = pi(a_i(1:k) | x_i) / pi_0(a_i(1:k) | x_i), the top-k prefix
    Cascade-DR  sum_k [ w_i(1:k) (r_i(k) - Q_k(x_i, a_i(1:k)))
                        + w_i(1:k-1) sum_e pi(e | x_i, a_i(1:k-1)) Q_k(x_i, a_i(1:k-1), e) ],   w_i(1:0) = 1

SIPS (McInerney et al. 2020's standard IPS) is unbiased for any click model; IIPS (Li et al. 2018)
only when E[r(k) | x, a] depends on a(k) alone (the independence assumption: a PBM); RIPS
(McInerney et al. 2020) and Cascade-DR (Kiyohara et al. 2022, section 3.1) when it depends on the
prefix a(1:k) alone (the cascade assumption: cascade, DCM, and a PBM). Cascade-DR is unbiased
whenever RIPS is, for any Q fixed given the round (here cross-fitted: `q_model`), and has less
variance the closer Q_k is to E[sum_{l >= k} r(l) | x, a(1:k)]. docs/slate_ope.md has the measured
bias and coverage, including where each estimator is biased.

The logging policy is `PlackettLuce`: K items drawn without replacement from a softmax over item
scores, so every probability is exact: the list's and its prefixes' are products of normalised
weights, and the marginal P(item e at position k) is a sum over the L! / (L - K)! ordered lists,
enumerated (refused above MAX_LISTS). `log` plays a ranking env under a behaviour and records the
rounds, the clicks and every propensity; `true_value` is a target's exact value on the env.
"""

from __future__ import annotations

import functools
import itertools
import math
from dataclasses import dataclass

import gymnasium as gym
import numpy as np
from sklearn.base import clone
from sklearn.linear_model import Ridge

from gym_ctxbandits.envs.click_models import CascadeEnv, ContextualCascadeEnv, DCMEnv, PBMEnv
from gym_ctxbandits.ope import ALPHA, N_BOOTSTRAP, Estimate, _bootstrap, _rows

__all__ = ["SlateEstimate", "PlackettLuce", "BottomUp", "log", "propensities", "expected_clicks", "true_value",
           "sips", "iips", "rips", "cascade_dr", "q_model", "evaluate", "ESTIMATORS"]

MAX_LISTS = 1_000_000     # ordered lists enumerated for the exact marginals and the truth (L = 16, K = 5: 524,160)
FOLDS = 5                 # Cascade-DR's cross-fitting: the rounds in FOLDS blocks, each block's Q fitted on the others


@dataclass(frozen=True)
class SlateEstimate(Estimate):
    """An Estimate (value, bootstrap interval [low, high]) with `se`, the standard error sd / sqrt(n)
    of the mean of the per-round terms: the normal approximation's scale, for bias-in-SE checks."""

    se: float


# -- the logging policy -----------------------------------------------------------------------------------------
class PlackettLuce:
    """A stochastic ranking policy: K distinct items drawn one position at a time, without replacement,
    from the softmax of the item scores s_e = x_e . theta / temperature (Plackett-Luce).

    pi(a | x) = prod_k exp(s_{a(k)}) / sum_{e not in a(1:k-1)} exp(s_e); its prefixes' probabilities
    are the partial products and pi(e | x, a(1:k-1)) the k-th factor. With one-hot item ids (the
    non-contextual click models) theta holds one score per item. `act(obs)` draws a list by the
    Gumbel top-K trick (the K largest s_e + Gumbel noise, in order, are a Plackett-Luce draw), from
    the policy's own generator seeded by `seed`.
    """

    def __init__(self, theta, num_positions: int, *, temperature: float = 1.0, seed: int | None = None):
        self.theta = np.asarray(theta, dtype=float)
        if self.theta.ndim != 1 or not np.isfinite(self.theta).all():
            raise ValueError(f"theta must be a 1-d array of finite numbers, one per feature (one-hot ids: per item), "
                             f"got shape {self.theta.shape}")
        if not (isinstance(num_positions, (int, np.integer)) and num_positions >= 1):
            raise ValueError(f"num_positions must be a positive integer (K, the length of the list), got "
                             f"{num_positions!r}")
        if not (np.isfinite(temperature) and temperature > 0):
            raise ValueError(f"temperature must be a positive number, got {temperature!r}")
        self.num_positions, self.temperature, self.seed = int(num_positions), float(temperature), seed
        self.rng = np.random.default_rng(seed)

    def scores(self, obs) -> np.ndarray:
        """s_e = x_e . theta / temperature of obs (..., L, d) -> (..., L), shifted so the largest is 0."""
        x = np.asarray(obs, dtype=float)
        if x.ndim < 2 or x.shape[-1] != len(self.theta) or x.shape[-2] < self.num_positions:
            raise ValueError(f"obs must be item features (L, d) or (n, L, d) with d = {len(self.theta)} (theta's "
                             f"length) and L >= {self.num_positions} items, got shape {x.shape}")
        s = x @ self.theta / self.temperature
        return s - s.max(axis=-1, keepdims=True)

    def act(self, obs) -> np.ndarray:
        """One list (K,) drawn from pi(. | obs)."""
        s = self.scores(obs)
        return np.argsort(-(s + self.rng.gumbel(size=s.shape)), kind="stable")[: self.num_positions]

    def lists(self, obs) -> tuple[np.ndarray, np.ndarray]:
        """Every ordered list of K distinct items (M, K), M = L! / (L - K)!, and its probability (M,), on one
        round's item features obs (L, d)."""
        if np.ndim(obs) != 2:
            raise ValueError(f"lists and marginals take one round's item features (L, d), got shape {np.shape(obs)}")
        ew = np.exp(self.scores(obs))
        lists = _all_lists(len(ew), self.num_positions)
        M, K = lists.shape
        where = np.full((M, len(ew)), K)                                 # each item's position in each list (K: absent)
        np.put_along_axis(where, lists, np.arange(K)[None], axis=1)
        # sum_{e not in a(1:k-1)} exp(s_e), summed over the items left (not total minus the listed: that cancels)
        left = np.stack([(where >= k) @ ew for k in range(K)], axis=1)
        return lists, np.prod(ew[lists] / left, axis=1)                  # the product of normalised weights

    def marginals(self, obs) -> np.ndarray:
        """P(item e at position k | obs), (K, L), exact: the list probabilities summed by enumeration."""
        lists, p = self.lists(obs)
        L = np.shape(obs)[-2]
        return np.stack([np.bincount(lists[:, k], weights=p, minlength=L) for k in range(self.num_positions)])


@functools.lru_cache(maxsize=8)
def _all_lists(L: int, K: int) -> np.ndarray:
    """The L! / (L - K)! ordered lists of K distinct items of L, (M, K), read-only; refused above MAX_LISTS."""
    m = math.perm(L, K)
    if m > MAX_LISTS:
        raise ValueError(f"{L} items and {K} positions make {m:,} ordered lists, more than MAX_LISTS = {MAX_LISTS:,} "
                         "that the exact marginals and truth enumerate: use fewer items or positions (or raise "
                         "gym_ctxbandits.slate_ope.MAX_LISTS, at that many lists' memory and time)")
    out = np.array(list(itertools.permutations(range(L), K)), dtype=np.int64).reshape(m, K)
    out.flags.writeable = False
    return out


def propensities(policy: PlackettLuce, context, action, prefix: str = "") -> dict[str, np.ndarray]:
    """A Plackett-Luce policy's exact probabilities of the logged lists action (n, K) on context (n, L, d),
    keys prefixed by `prefix` (the log uses "" for the behaviour, "target_" for the target):

        pscore                (n,)       pi(a_i | x_i), the whole list (SIPS)
        pscore_item_position  (n, K)     pi(a_i(k) at position k | x_i), the marginal (IIPS)
        pscore_cascade        (n, K)     pi(a_i(1:k) | x_i), the top-k prefix (RIPS, Cascade-DR)
        action_dist           (n, K, L)  pi(e at k | x_i, a_i(1:k-1)) of every item e (Cascade-DR)

    The marginals are enumerated once per distinct context (the ranking envs show one per episode)."""
    X, a = _context_action(context, action, policy.num_positions)
    n, L = X.shape[:2]
    s = policy.scores(X)                                                 # (n, L)
    above = np.zeros((n, policy.num_positions, L), dtype=bool)           # e in a_i(1:k-1)
    for k in range(1, policy.num_positions):
        above[:, k] = above[:, k - 1]
        above[np.arange(n), k, a[:, k - 1]] = True
    weight = np.where(above, 0.0, np.exp(s)[:, None, :])
    dist = weight / weight.sum(axis=2, keepdims=True)
    cascade = np.cumprod(np.take_along_axis(dist, a[:, :, None], axis=2)[:, :, 0], axis=1)
    distinct, which = np.unique(X.reshape(n, -1), axis=0, return_inverse=True)
    marginals = np.stack([policy.marginals(x.reshape(L, -1)) for x in distinct])     # (contexts, K, L)
    position = marginals[which.reshape(-1)[:, None], np.arange(policy.num_positions), a]
    return {f"{prefix}pscore": cascade[:, -1].copy(), f"{prefix}pscore_item_position": position,
            f"{prefix}pscore_cascade": cascade, f"{prefix}action_dist": dist}


# -- logs and the truth -----------------------------------------------------------------------------------------
class BottomUp(gym.Wrapper):
    """A ranking env whose user reads the list from the bottom: the env is shown the list reversed and its
    clicks, examination and optimal list are reversed back. Under a cascade the click at position k then
    depends on the items at k..K, below it, which breaks the cascade assumption of RIPS and Cascade-DR
    (and IIPS's): only SIPS stays unbiased (docs/slate_ope.md)."""

    def step(self, action):
        obs, reward, terminated, truncated, info = self.env.step(np.asarray(action)[::-1].copy())
        flipped = {key: np.asarray(info[key])[::-1].copy() for key in ("clicks", "examined", "optimal_action")}
        return obs, reward, terminated, truncated, {**info, **flipped}


def expected_clicks(env, lists) -> np.ndarray:
    """The exact click probability of every position, (n, K), of lists (n, K) on the env's current instance
    (ground truth, never for a policy), from its click model and `env.unwrapped.attractions` w:

        PBM      kappa_k w(a(k))                                   (Lagree et al. 2016)
        cascade  w(a(k)) prod_{j<k} (1 - w(a(j)))                  (Kveton et al. 2015, section 2)
        DCM      w(a(k)) prod_{j<k} (1 - v(j) w(a(j)))              (Katariya et al. 2016, section 2)

    and a BottomUp env's, the inner env's of the reversed list, reversed."""
    a = np.asarray(lists, dtype=np.int64)
    if isinstance(env, BottomUp):
        return expected_clicks(env.env, a[:, ::-1])[:, ::-1]
    if isinstance(env, gym.ActionWrapper):
        raise ValueError(f"{type(env).__name__} changes the lists the env is shown, so the logged list's clicks are not "
                         "the click model's: log on the env without it (BottomUp is the one reordering known here)")
    if isinstance(env, gym.Wrapper):
        return expected_clicks(env.env, a)
    if isinstance(env, PBMEnv):
        return env.kappas * env.attractions[a]
    if isinstance(env, (CascadeEnv, ContextualCascadeEnv)):
        w = env.attractions[a]
        stop = env.termination * w if isinstance(env, DCMEnv) else w     # a click ends the scan with v(k) (DCM) or 1
        return w * np.cumprod(np.c_[np.ones(len(a)), 1.0 - stop[:, :-1]], axis=1)
    raise ValueError(f"no exact click model for {type(env).__name__}: expected_clicks knows PBMEnv, CascadeEnv, DCMEnv, "
                     "ContextualCascadeEnv (and BottomUp of them); evaluate on one of those")


def log(env, behaviour: PlackettLuce, n_rounds: int, seed: int, *, target: PlackettLuce | None = None) -> dict:
    """Play `behaviour` on the ranking env for `n_rounds` rounds of one episode from `reset(seed=seed)` and
    return the log:

        context (n, L, d), action (n, K)      the items' features shown and the logged lists (position 0 the top)
        clicks (n, K), reward (n,)            info["clicks"] per position and the env's reward
        expected_reward (n,)                  info["expected_reward"] of the logged list (ground truth)
        expected_clicks (n, K)                the exact click probabilities of the logged list (`expected_clicks`;
                                              None where the click model is unknown)
        pscore, pscore_item_position, pscore_cascade, action_dist     the behaviour's (`propensities`)
        target_pscore, ..., target_action_dist                        the target's, when `target` is given
        n_rounds, num_items, num_positions, meta

    The env is left at the logged episode's instance, so `true_value(env, target, log["context"])` is the
    truth of this log. An episode that ends before n_rounds is refused (make the env with max_episode_steps
    at least n_rounds)."""
    if not (isinstance(n_rounds, (int, np.integer)) and n_rounds >= 1):
        raise ValueError(f"n_rounds must be a positive integer, got {n_rounds!r}")
    if getattr(env.unwrapped, "kind", None) != "ranking":
        raise ValueError(f"{type(env.unwrapped).__name__} is not a ranking env (kind 'ranking'): slate OPE logs lists "
                         "of items; make one of the CtxBandit ranking ids (CascadeBLB-v0, PBMStd-v0, DCM-v0, ...)")
    K = env.unwrapped.num_positions
    if behaviour.num_positions != K or (target is not None and target.num_positions != K):
        raise ValueError(f"the env shows K = {K} positions but the behaviour lists {behaviour.num_positions}"
                         + ("" if target is None else f" and the target {target.num_positions}")
                         + f": build the policies with num_positions={K}")
    obs, _ = env.reset(seed=seed)
    rows = {key: [] for key in ("context", "action", "clicks", "reward", "expected_reward")}
    for t in range(n_rounds):
        action = behaviour.act(obs)
        next_obs, reward, terminated, truncated, info = env.step(action)
        for key, value in zip(rows, (obs, action, info["clicks"], reward, info["expected_reward"])):
            rows[key].append(value)
        if (terminated or truncated) and t < n_rounds - 1:
            raise ValueError(f"the episode ended after {t + 1} rounds, before n_rounds = {n_rounds}: make the env with "
                             f"max_episode_steps >= {n_rounds} (one log is one episode, one instance)")
        obs = next_obs
    out = {key: np.asarray(value, dtype=float if key != "action" else np.int64) for key, value in rows.items()}
    try:
        out["expected_clicks"] = expected_clicks(env, out["action"])
    except ValueError:
        out["expected_clicks"] = None
    out.update(propensities(behaviour, out["context"], out["action"]))
    if target is not None:
        out.update(propensities(target, out["context"], out["action"], prefix="target_"))
    return dict(out, n_rounds=int(n_rounds), num_items=env.unwrapped.num_items, num_positions=K,
                meta=dict(env=type(env.unwrapped).__name__, seed=seed, behaviour_seed=behaviour.seed))


def true_value(env, target: PlackettLuce, context) -> float:
    """The target's exact value on the env's current instance, averaged over the logged rounds' contexts
    (n, L, d): 1/n sum_i sum_a pi(a | x_i) sum_k P(click at k | a), every ordered list a enumerated, the
    click probabilities from `expected_clicks`. The non-contextual envs show one context, so this is V(pi);
    on ContextualCascade the items' features are fixed within an episode, so it is V(pi) of that instance."""
    X = np.asarray(context, dtype=float)
    if X.ndim != 3:
        raise ValueError(f"context must be the logged rounds' item features (n, L, d), got shape {X.shape}")
    distinct, counts = np.unique(X.reshape(len(X), -1), axis=0, return_counts=True)
    values = []
    for x in distinct:
        lists, p = target.lists(x.reshape(X.shape[1:]))
        values.append(p @ expected_clicks(env, lists).sum(axis=1))
    return float(np.dot(counts, values) / counts.sum())


# -- the estimators ---------------------------------------------------------------------------------------------
def sips(clicks, pscore, target_pscore, *, alpha: float = ALPHA, n_bootstrap: int = N_BOOTSTRAP,
         seed: int = 0) -> SlateEstimate:
    """Standard IPS (SIPS; McInerney et al. 2020; obp.ope.SlateStandardIPS): the whole list's weight
    pi(a_i | x_i) / pi_0(a_i | x_i) times the round's clicks. Unbiased for any click model where the
    behaviour gives every list of the target positive probability; its weights range over the whole list
    space, so its variance is the largest of the four."""
    r = _clicks(clicks)
    w = _ratio(target_pscore, pscore, (len(r),), "pscore", "pi(a_i | x_i) of each logged list")
    return _estimate("SIPS", w * r.sum(axis=1), alpha, n_bootstrap, seed)


def iips(clicks, pscore_item_position, target_pscore_item_position, *, alpha: float = ALPHA,
         n_bootstrap: int = N_BOOTSTRAP, seed: int = 0) -> SlateEstimate:
    """Independent IPS (IIPS; Li, Abbasi-Yadkori, Kveton, Muthukrishnan, Vinay, Wen 2018;
    obp.ope.SlateIndependentIPS): each position's click weighted by the marginal ratio
    pi(a_i(k) at k | x_i) / pi_0(a_i(k) at k | x_i). Unbiased when the click at k depends on the item at k
    alone (a PBM); biased under a cascade, where it also depends on the items above."""
    r = _clicks(clicks)
    w = _ratio(target_pscore_item_position, pscore_item_position, r.shape, "pscore_item_position",
               "pi(a_i(k) at position k | x_i), the marginal")
    return _estimate("IIPS", (w * r).sum(axis=1), alpha, n_bootstrap, seed)


def rips(clicks, pscore_cascade, target_pscore_cascade, *, alpha: float = ALPHA, n_bootstrap: int = N_BOOTSTRAP,
         seed: int = 0) -> SlateEstimate:
    """Reward-interaction IPS (RIPS; McInerney et al. 2020; obp.ope.SlateRewardInteractionIPS): each
    position's click weighted by its top-k prefix's ratio pi(a_i(1:k) | x_i) / pi_0(a_i(1:k) | x_i).
    Unbiased when the click at k depends on the items at 1..k alone (the cascade assumption: cascade, DCM,
    PBM); biased when it depends on items below it (BottomUp)."""
    r = _clicks(clicks)
    return _estimate("RIPS", (_prefix_weights(pscore_cascade, target_pscore_cascade, r.shape) * r).sum(axis=1),
                     alpha, n_bootstrap, seed)


def cascade_dr(clicks, action, pscore_cascade, target_pscore_cascade, target_action_dist, *, context=None,
               q_hat=None, model=None, folds: int = FOLDS, alpha: float = ALPHA, n_bootstrap: int = N_BOOTSTRAP,
               seed: int = 0) -> SlateEstimate:
    """Cascade-DR (Kiyohara et al. 2022, section 3.1; obp.ope.SlateCascadeDoublyRobust): RIPS with the
    baseline Q as a control variate, per position k

        w_i(1:k) (r_i(k) - Q_k(x_i, a_i(1:k))) + w_i(1:k-1) sum_e pi(e | x_i, a_i(1:k-1)) Q_k(x_i, a_i(1:k-1), e).

    Given a_i(1:k-1), the second term is the first's Q part in expectation over a_i(k) ~ pi_0, so they cancel
    and Cascade-DR has RIPS's mean, for any Q fixed given the round: unbiased under the cascade assumption.
    Q estimates E[sum_{l >= k} r(l) | x, a(1:k)]; the nearer, the lower the variance. `q_hat` (n, K, L),
    Q_k(x_i, a_i(1:k-1), e) of every item e, as given; or, from `context` (n, L, d), `q_model`'s
    cross-fitted regression (`model`, default a ridge; `folds` blocks, each block's Q fitted on the others:
    unbiased because the Plackett-Luce behaviour does not adapt, so the rounds are independent).
    `target_action_dist` (n, K, L) is pi(e at k | x_i, a_i(1:k-1)) (the log's)."""
    r = _clicks(clicks)
    a = _actions(action, r.shape)
    dist = _target_dist(target_action_dist, r.shape, a.max() + 1)
    w = _prefix_weights(pscore_cascade, target_pscore_cascade, r.shape)
    cascade = np.asarray(target_pscore_cascade, dtype=float)
    chosen = np.take_along_axis(dist, a[:, :, None], axis=2)[:, :, 0]
    off = ~np.isclose(cascade, np.cumprod(chosen, axis=1), rtol=1e-6, atol=1e-12).all(axis=1)
    if off.any():
        raise ValueError(f"target_pscore_cascade is not the running product of target_action_dist at the logged items "
                         f"{_rows(off)}: both must be the same target's (gym_ctxbandits.slate_ope.propensities)")
    if (context is None) == (q_hat is None):
        raise ValueError("give either context (the items' features, to fit Q by q_model) or q_hat (n, K, L), not both "
                         "or neither")
    q = q_model(context, a, r, dist, model=model, folds=folds) if q_hat is None else np.asarray(q_hat, dtype=float)
    if q.shape != dist.shape or not np.isfinite(q).all():
        raise ValueError(f"q_hat must be finite Q_k(x_i, a_i(1:k-1), e) of every item, shape {dist.shape} like "
                         f"target_action_dist, got shape {q.shape}" + ("" if q.shape != dist.shape else " with NaN/inf"))
    w_above = np.c_[np.ones(len(r)), w[:, :-1]]                                # w_i(1:k-1), w_i(1:0) = 1
    q_logged = np.take_along_axis(q, a[:, :, None], axis=2)[:, :, 0]      # Q_k(x_i, a_i(1:k))
    terms = w * (r - q_logged) + w_above * (dist * q).sum(axis=2)
    return _estimate("Cascade-DR", terms.sum(axis=1), alpha, n_bootstrap, seed)


def q_model(context, action, clicks, target_action_dist, *, model=None, folds: int = FOLDS) -> np.ndarray:
    """Cascade-DR's baseline Q_k(x_i, a_i(1:k-1), e) of every item e, (n, K, L), cross-fitted: the rounds
    cut into `folds` blocks in log order, each block's Q from models fitted on the other blocks only.

    One regressor per position (`model`, any scikit-learn regressor, default Ridge(alpha=1)) on the
    features [x_e, sum_{j<k} x_{a(j)}] (the item and the items above it), fitted from the bottom up as
    Kiyohara et al. (2022) and OBP's SlateRegressionModel do: position K on r(K), position k on
    r(k) + sum_e pi(e | x, a(1:k)) Q_{k+1}(x, a(1:k), e), the target's expected Q one position down."""
    r = _clicks(clicks)
    X, a = _context_action(context, action, r.shape[1])
    if len(X) != len(r):
        raise ValueError(f"context has {len(X)} rounds but clicks {len(r)}: give both of the same log")
    dist = _target_dist(target_action_dist, r.shape, X.shape[1])
    n = len(a)
    if not (isinstance(folds, (int, np.integer)) and 2 <= folds <= n):
        raise ValueError(f"folds must be an integer from 2 to the number of rounds ({n}): each block's Q is fitted "
                         f"on the others, got {folds!r}")
    base = Ridge(alpha=1.0) if model is None else model
    q = np.empty(dist.shape)
    for block in np.array_split(np.arange(n), folds):
        train = np.ones(n, dtype=bool)
        train[block] = False
        models = _fit_q(base, X[train], a[train], r[train], dist[train])
        q[block] = np.stack([_predict(m, X[block], a[block], k) for k, m in enumerate(models)], axis=1)
    return q


def _features(X: np.ndarray, a: np.ndarray, k: int) -> np.ndarray:
    """[x_e, sum_{j<k} x_{a(j)}] of every item e at position k, (n, L, 2d)."""
    above = np.take_along_axis(X, a[:, :k, None], axis=1).sum(axis=1)            # (n, d)
    return np.concatenate([X, np.broadcast_to(above[:, None, :], X.shape)], axis=2)


def _predict(m, X: np.ndarray, a: np.ndarray, k: int) -> np.ndarray:
    """Q_k of every item e after the prefix a(1:k-1), (n, L)."""
    f = _features(X, a, k)
    return m.predict(f.reshape(-1, f.shape[2])).reshape(f.shape[:2])


def _fit_q(base, X, a, r, dist) -> list:
    """The K regressors of Q_1..Q_K fitted on these rounds, from the last position up."""
    n, K = a.shape
    models = [None] * K
    for k in reversed(range(K)):
        y = r[:, k] + ((dist[:, k + 1] * _predict(models[k + 1], X, a, k + 1)).sum(axis=1) if k + 1 < K else 0.0)
        models[k] = clone(base).fit(_features(X, a, k)[np.arange(n), a[:, k]], y)
    return models


# -- checks and the bootstrap -----------------------------------------------------------------------------------
def _estimate(name: str, terms: np.ndarray, alpha: float, n_bootstrap: int, seed: int) -> SlateEstimate:
    """The mean of the per-round terms, its percentile bootstrap interval (ope's) and standard error."""
    est = _bootstrap(name, 0.0, terms, 1.0, alpha, n_bootstrap, seed)
    se = float(terms.std(ddof=1) / np.sqrt(len(terms))) if len(terms) > 1 else np.inf
    return SlateEstimate(name, est.value, est.low, est.high, se)


def _clicks(clicks) -> np.ndarray:
    """The per-position rewards r_i(k), (n, K) finite floats."""
    if clicks is None:
        raise ValueError("clicks is missing: give the log's per-position rewards r_i(k), (n_rounds, K) (info['clicks'])")
    r = np.asarray(clicks, dtype=float)
    if r.ndim != 2 or r.size == 0 or not np.isfinite(r).all():
        raise ValueError(f"clicks must be the per-position rewards r_i(k), a non-empty (n_rounds, K) array of finite "
                         f"numbers, got shape {r.shape}" + (" with NaN/inf" if r.ndim == 2 and r.size else "")
                         + ": stack info['clicks'] of every round (a scalar reward per round is not enough)")
    return r


def _actions(action, shape) -> np.ndarray:
    """The logged lists (n, K) of distinct non-negative item ids."""
    a = np.asarray(action)
    if a.shape != tuple(shape) or a.dtype.kind not in "iu":
        raise ValueError(f"action must be the logged lists, an int array of shape {tuple(shape)} (rounds, positions), "
                         f"got {a.dtype} {a.shape}")
    repeats = (np.sort(a, axis=1)[:, 1:] == np.sort(a, axis=1)[:, :-1]).any(axis=1) | (a < 0).any(axis=1)
    if repeats.any():
        raise ValueError(f"action must list distinct item ids >= 0 in each round, but does not {_rows(repeats)}")
    return a.astype(np.int64)


def _target_dist(target_action_dist, shape, L: int) -> np.ndarray:
    """pi(e at k | x_i, a_i(1:k-1)), (n, K, L') with L' >= L items, checked to be probability rows."""
    dist = np.asarray(target_action_dist, dtype=float)
    if dist.ndim != 3 or dist.shape[:2] != tuple(shape) or dist.shape[2] < L:
        raise ValueError(f"target_action_dist must be pi(e at k | x_i, a_i(1:k-1)) of every item, (n, K, L) = "
                         f"({shape[0]}, {shape[1]}, {L}), got shape {dist.shape} (the log's target_action_dist)")
    bad = ~(np.isfinite(dist).all(axis=(1, 2)) & (dist >= 0).all(axis=(1, 2))
            & (np.abs(dist.sum(axis=2) - 1) <= 1e-6).all(axis=1))
    if bad.any():
        raise ValueError(f"target_action_dist must hold probability rows over the items (each sums to 1) but does not "
                         f"{_rows(bad)}: give the target's conditional distribution at every position")
    return dist


def _context_action(context, action, K: int) -> tuple[np.ndarray, np.ndarray]:
    """The items' features (n, L, d) and the lists (n, K) of the same rounds, checked."""
    X = None if context is None else np.asarray(context, dtype=float)
    if X is None or X.ndim != 3 or not np.isfinite(X).all():
        raise ValueError("context must be the logged rounds' item features, a finite (n_rounds, L, d) array, got "
                         f"{'none' if X is None else X.shape}")
    a = _actions(action, (len(X), K))
    if a.max() >= X.shape[1]:
        raise ValueError(f"action lists item {a.max()} but context shows {X.shape[1]} items (0..{X.shape[1] - 1})")
    return X, a


def _ratio(target, behaviour, shape, name: str, what: str) -> np.ndarray:
    """target / behaviour probabilities of the same shape, checked: behaviour in (0, 1], target in [0, 1]."""
    p, q = np.asarray(behaviour, dtype=float), np.asarray(target, dtype=float)
    for label, value in ((name, p), (f"target_{name}", q)):
        if value.shape != tuple(shape):
            raise ValueError(f"{label} must be {what}, shape {tuple(shape)} like the clicks' rounds"
                             f"{'' if len(shape) == 1 else ' and positions'}, got {value.shape}")
    if not ((p > 0) & (p <= 1)).all():
        raise ValueError(f"{name} (the behaviour's {what}) must lie in (0, 1]: importance weighting divides by it, got "
                         f"{np.nanmin(p):.3g} to {np.nanmax(p):.3g}" + (" and NaN" if np.isnan(p).any() else ""))
    if not ((q >= 0) & (q <= 1)).all():
        raise ValueError(f"target_{name} (the target's {what}) must lie in [0, 1], got {np.nanmin(q):.3g} to "
                         f"{np.nanmax(q):.3g}" + (" and NaN" if np.isnan(q).any() else ""))
    return q / p


def _prefix_weights(pscore_cascade, target_pscore_cascade, shape) -> np.ndarray:
    """w_i(1:k) (n, K) from the prefix probabilities, which cannot grow with k (a longer prefix is rarer)."""
    w = _ratio(target_pscore_cascade, pscore_cascade, shape, "pscore_cascade", "pi(a_i(1:k) | x_i), the top-k prefix")
    for label, value in (("pscore_cascade", pscore_cascade), ("target_pscore_cascade", target_pscore_cascade)):
        grows = (np.diff(np.asarray(value, dtype=float), axis=1) > 1e-12).any(axis=1)
        if grows.any():
            raise ValueError(f"{label} grows along the positions {_rows(grows)}: it must be the prefix probability "
                             "pi(a(1:k) | x), the running product of the conditionals pi(a(k) | x, a(1:k-1)) "
                             "(np.cumprod(conditional, axis=1)), not the conditionals themselves")
    return w


ESTIMATORS = {"SIPS": sips, "IIPS": iips, "RIPS": rips, "Cascade-DR": cascade_dr}


def evaluate(log: dict, estimators=tuple(ESTIMATORS), *, model=None, folds: int = FOLDS, alpha: float = ALPHA,
             n_bootstrap: int = N_BOOTSTRAP, seed: int = 0) -> list[SlateEstimate]:
    """The named estimators (keys of ESTIMATORS) of the target whose propensities the log holds (`log` with
    a target, or `log.update(propensities(target, log["context"], log["action"], prefix="target_"))`)."""
    unknown = sorted(set(estimators) - set(ESTIMATORS))
    if unknown:
        raise ValueError(f"unknown estimator {', '.join(unknown)}; choose from {', '.join(ESTIMATORS)}")
    if log.get("target_pscore") is None:
        raise ValueError("the log holds no target propensities: pass target= to slate_ope.log, or add "
                         "propensities(target, log['context'], log['action'], prefix='target_') to it")
    boot = dict(alpha=alpha, n_bootstrap=n_bootstrap, seed=seed)
    keys = {"SIPS": "pscore", "IIPS": "pscore_item_position", "RIPS": "pscore_cascade"}
    out = []
    for name in estimators:
        if name == "Cascade-DR":
            out.append(cascade_dr(log["clicks"], log["action"], log["pscore_cascade"], log["target_pscore_cascade"],
                                  log["target_action_dist"], context=log["context"], model=model, folds=folds, **boot))
        else:
            key = keys[name]
            out.append(ESTIMATORS[name](log["clicks"], log[key], log[f"target_{key}"], **boot))
    return out
