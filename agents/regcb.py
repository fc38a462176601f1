"""RegCB (Foster, Agarwal, Dudik, Luo, Schapire, ICML 2018): confidence bounds from a regression oracle.

The version space of round t is every regressor whose summed squared loss on the data so far is
within beta_t of the least-squares fit's, F_t = {f : R_t(f) - min R_t <= beta_t}; each arm gets the
highest and the lowest reward any f of F_t predicts for it. RegCB-opt plays the arm of the highest
upper bound, RegCB-elim plays uniformly over the arms that some f of F_t could make the best. How the
bounds are computed depends on the oracle (and `search`):

Width (the ridge oracle, or any oracle with `width(X)`). With ridge regression the version space is
an ellipsoid and the bounds are exact in closed form: the summed loss of theta exceeds the ridge
fit's by (theta - theta_hat)^T V (theta - theta_hat), V = lam I + sum x x^T, so the extremes of
<x, theta> over F_t are

    high(x) = <x, theta_hat> + sqrt(beta_t) ||x||_{V^{-1}},   low(x) = <x, theta_hat> - sqrt(beta_t) ||x||_{V^{-1}},

which is what an oracle's `width(X)` (||x||_{V^{-1}}, `agents.oracle.RidgeOracle.width`) scales.

Sensitivity (the "sgd" oracle, or any oracle with `sensitivity(X, Y)`): Vowpal Wabbit's
`cb_explore_adf --regcb` (cb_explore_adf_regcb.cc, the version the Contextual Bandit Bake-off ran).
The paper's implementation (after the cost-sensitive active learning of Krishnamurthy et al. 2017,
VW's cs_active, whose search VW's regcb shares) finds an arm's upper bound by adding a fictitious
example (x_a, y) of importance weight w with a target y beyond the reward range and refitting: the largest w whose
refit raises the loss of the data by at most beta_t moves the prediction at x_a as far as F_t
allows. For the refit f_w, R(f_w) - R(f_hat) <= w [(f_hat(x_a) - y)^2 - (f_w(x_a) - y)^2] (f_w
minimises R + w (f(x_a) - y)^2), and VW takes that bound as the loss increase and the online
update's sensitivity s (`SGDOracle.sensitivity`: the change of f(x_a) per unit weight) for the
move, f_w(x_a) = f_hat(x_a) + s w toward y. With g = |y - f_hat(x_a)| (VW's fhat) and
delta = beta_t (max_reward - min_reward)^2, w is the largest with

    v(w) = w (g^2 - (g - s w)^2) <= delta,   w <= g / s (the move stops at the target),

found by bisection on [0, g / s] (`sensitivity_search`: VW's 20 halvings, stopped early when
|v - delta| or the bracket falls to 1e-6); the bound is f_hat(x_a) +- s w, clipped to
[min_reward, max_reward]. The targets are one past the range, y = max_reward + 1 for the upper
bound and min_reward - 1 for the lower (VW's cb_min_cost - 1 and cb_max_cost + 1 on costs, so g >= 1
while the prediction lies in the range); a prediction beyond the range end on the target's side
takes that end. beta_t = c0 log(K t) as VW's delta, which scales it by the cost range squared.

Search (`search=True`, any oracle: mlp, scikit-learn, river, an `Oracle` object; ridge and sgd
too): the paper's search with the oracle itself. The move at weight w is measured, not
approximated: a deep copy of the oracle learns (x_a, y, w) and predicts x_a, and the largest w with
v(w) = w (g^2 - (g - m(w))^2) <= delta and m(w) <= g (m(w) the measured move toward y; a move past
the target, VW's w > g / s, or not finite counts as too large a weight) is found by bisection on
log2 w over [2^-40 w_0, 2^40 w_0] around w_0 = delta / g^2 (where v(w_0) <= delta whatever the move;
a move past the target may come sooner), 20 steps, so 20 copies per arm and bound, batched over the
instances (each its own w). The bound is the prediction the copy landed on at that w (no move when
no weight qualifies, and never past the prediction the other way: the fit is in F_t), clipped to
the range as above. It costs K x 20 oracle copies and updates a round for RegCB-opt (the upper
bounds only), twice that for RegCB-elim (docs/oracle_agents.md measures it).
"""

from __future__ import annotations

import copy
import math

import numpy as np

from agents.base import argmax_probs, register
from agents.oracle import ORACLES, Oracle, OracleAgent
from agents.params import Bool, LogUniform, Real

__all__ = ["RegCB", "RegCBElim", "RegCBOpt", "radius", "sensitivity_search"]

SEARCH_STEPS = 20       # the bisections' steps (VW's B_SEARCH_MAX_ITER)
SEARCH_TOL = 1e-6       # VW's early stop: |v(w) - delta| or the bracket below this
SEARCH_SPAN = 40.0      # the copies' search: w in [2^-SEARCH_SPAN w_0, 2^SEARCH_SPAN w_0]
FLT_MAX = float(np.finfo(np.float32).max)       # VW's cap on g / s


def radius(c0: float, num_arms: int, t: int) -> float:
    """beta_t = c0 log(K t), the version space's radius on the summed squared loss after t rewards
    (the Bake-off's Delta_t = c0 log(K t) / t on the average loss, VW's `--mellowness` c0 with costs in
    [0, 1]); 0 before the first reward, where VW's log(0) = -inf also leaves the bounds at the fit."""
    return c0 * math.log(num_arms * t) if t > 0 else 0.0


def sensitivity_search(g: np.ndarray, delta: float, s: np.ndarray) -> np.ndarray:
    """The weights w (shape of g) of VW's RegCB binary search (cb_explore_adf_regcb.cc,
    `binary_search(fhat, delta, sens)`), on every entry at once: the largest w <= g / s (capped at
    float32's max) with v(w) = w (g^2 - (g - s w)^2) <= delta, g the distance from the prediction to
    the fictitious target and s the sensitivity. g / s itself when v(g / s) = (g / s) g^2 <= delta;
    else the lower end of the bracket [0, g / s] after SEARCH_STEPS halvings, an entry stopping early
    (as VW's loop breaks) once |v(mid) - delta| <= SEARCH_TOL or the bracket is within SEARCH_TOL."""
    with np.errstate(divide="ignore", invalid="ignore"):
        top = np.minimum(g / s, FLT_MAX)
    full = top * g * g <= delta
    lo, hi, done = np.zeros_like(top), top.copy(), full.copy()
    for _ in range(SEARCH_STEPS):
        w = (hi + lo) / 2
        v = w * (g * g - (g - s * w) ** 2) - delta
        over = v > 0
        hi = np.where(over & ~done, w, hi)
        lo = np.where(~over & ~done, w, lo)
        done |= (np.abs(v) <= SEARCH_TOL) | (hi - lo <= SEARCH_TOL)
        if done.all():
            break
    return np.where(full, top, lo)


def _capability(oracle) -> str | None:
    """"width" or "sensitivity", the closed form of the bounds an `oracle` spec gives (a name of ORACLES or an
    Oracle object with that method), or None."""
    if isinstance(oracle, str):
        oracle = ORACLES.get(oracle)
    elif not isinstance(oracle, Oracle):             # a scikit-learn or river regressor: wrapped, neither
        return None
    return next((m for m in ("width", "sensitivity") if hasattr(oracle, m)), None)


class RegCB(OracleAgent):
    """The two RegCB rules' shared part: upper and lower bounds of every arm's reward (module docstring).

    Args:
        c0: the mellowness C0 of beta_t = C0 log(K t) (`radius`).
        search: False (default): the oracle's closed form, `width(X)` ("ridge": the exact ellipsoid) or
            else `sensitivity(X, Y)` ("sgd": VW's approximation); an oracle with neither is refused.
            True: the paper's search with copies of the oracle, for any oracle ("mlp", a scikit-learn or
            river regressor, an `Oracle` object), 20 copies and updates per arm and bound a round.
        min_reward, max_reward: the range of the rewards, for the sensitivity and the search (their
            fictitious targets one past each end, the bounds clipped to it, delta scaled by its
            square, as VW's --cb_min_cost and --cb_max_cost on costs); the ellipsoid does not use it.
        oracle: "ridge" (default), "sgd", or any oracle with `search=True` (agents.oracle).
        lam, lr: the oracle's settings (agents.oracle.OracleAgent).
    """

    params = {"c0": Real(ge=0), "search": Bool(), "min_reward": Real(), "max_reward": Real()}
    search_space = {"c0": LogUniform(1e-4, 1.0)}         # and lam
    iwr = False         # weight 1: VW's regcb sets the label's probability to 1 (its mtr then weighs it 1 / K)

    def __init__(self, *, c0: float = 1e-3, search: bool = False, min_reward: float = 0.0, max_reward: float = 1.0,
                 oracle="ridge", lam: float = 1.0, lr: float | None = None, seed=None, dim: int | None = None):
        super().__init__(oracle=oracle, lam=lam, lr=lr, seed=seed, dim=dim, c0=c0, search=search,
                         min_reward=min_reward, max_reward=max_reward)

    def _check_params(self) -> None:
        super()._check_params()
        low, high = self.min_reward, self.max_reward
        if not (math.isfinite(low) and math.isfinite(high) and low < high):
            raise ValueError(f"{type(self).__name__}: min_reward must be below max_reward, both finite, got "
                             f"{self.min_reward!r} and {self.max_reward!r}")
        if not self.search and _capability(self.oracle) is None:
            raise ValueError(
                f"{type(self).__name__}: oracle {self.oracle!r} has no width(X) (the ||x||_{{V^-1}} of an exact "
                "ellipsoid: 'ridge') nor sensitivity(X, Y) (VW's change of a prediction per unit weight: 'sgd'), "
                "the closed forms of RegCB's bounds; use oracle='ridge' or 'sgd', or search=True for the paper's "
                "search with copies of the oracle (any oracle; K x 20 copies and updates a round)")

    def _init_state(self, X: np.ndarray) -> None:
        super()._init_state(X)
        self.via_ = "search" if self.search else _capability(self.oracle)

    def bounds(self, obs) -> tuple[np.ndarray, np.ndarray]:
        """(high, low): the largest and smallest reward the version space gives each arm of obs, (K,) each
        for obs (K, d), (N, K) for (N, K, d); computed without changing the agent (as `action_probs`)."""
        agent = self if self.n_ is not None else copy.deepcopy(self)       # a first obs would start self
        high, low = agent._bounds(agent._check_obs(obs))
        return (high[0], low[0]) if agent.single_ else (high, low)

    def _bounds(self, X: np.ndarray, lower: bool = True) -> tuple[np.ndarray, np.ndarray | None]:
        """(high, low), each (N, K), of the arms of X (N, K, d); low None when not `lower` (RegCB-opt needs
        the upper bounds only, and the sensitivity and the search then compute only them)."""
        f = self._predict(X)
        if self.via_ == "width":
            half = math.sqrt(radius(self.c0, X.shape[1], self.t_)) * np.asarray(self.oracle_.width(X), dtype=float)
            return f + half, f - half
        delta = radius(self.c0, X.shape[1], self.t_) * (self.max_reward - self.min_reward) ** 2
        high = self._edge(X, f, 1.0, delta)
        return high, (self._edge(X, f, -1.0, delta) if lower else None)

    def _edge(self, X: np.ndarray, f: np.ndarray, sign: float, delta: float) -> np.ndarray:
        """The upper (sign 1) or lower (sign -1) bounds, (N, K), of the arms of X (N, K, d) predicted f: the
        prediction moved toward the fictitious target y = max_reward + 1 (min_reward - 1) as far as
        v(w) <= delta allows (module docstring), clipped to [min_reward, max_reward]."""
        end = self.max_reward if sign > 0 else self.min_reward
        target = end + sign
        g = sign * (target - f)                       # VW's fhat: the distance to the target
        inside = sign * (end - f) >= 0                # a prediction past the end on the target's side takes the end
        if delta > 0:
            if self.via_ == "sensitivity":
                s = np.asarray(self.oracle_.sensitivity(X, np.full(f.shape, target)), dtype=float)
                with np.errstate(invalid="ignore"):         # VW: a sensitivity NaN or inf takes the range end
                    move = np.where(np.isfinite(s), s * sensitivity_search(g, delta, s), np.inf)
            else:
                move = self._search(X, f, sign, g, inside, delta)
            f = f + sign * np.where(inside, move, 0.0)
        return np.clip(f, self.min_reward, self.max_reward)

    def _search(self, X: np.ndarray, f: np.ndarray, sign: float, g: np.ndarray, inside: np.ndarray,
                delta: float) -> np.ndarray:
        """(N, K) moves toward the upper (sign 1) or lower (sign -1) target found by the paper's search with
        copies of the oracle (module docstring): each arm's bisection on log2 w, batched over the instances
        (an instance whose prediction is past the range end takes no update, w = 0)."""
        N, K = f.shape
        y = np.full(N, (self.max_reward if sign > 0 else self.min_reward) + sign)
        w0 = np.log2(np.where(inside, delta / (g * g), 1.0))          # w_0 = delta / g^2: v(w_0) <= delta
        lo, hi = w0 - SEARCH_SPAN, w0 + SEARCH_SPAN

        def feasible(w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            """(ok, m), (N, K) each: the moves m toward the target of a copy learning (x_k, y, w_k), arm by arm,
            and whether v(w) <= delta with the move not past the target (VW's w <= g / s; an update that
            overshoots, or a prediction NaN or inf, counts as too large a weight)."""
            m = np.empty((N, K))
            for k in range(K):
                oracle = copy.deepcopy(self.oracle_)
                oracle.update(X[:, k].astype(float, copy=False), y, np.where(inside[:, k], w[:, k], 0.0))
                m[:, k] = sign * (np.asarray(oracle.predict(X[:, k:k + 1]), dtype=float)[:, 0] - f[:, k])
            with np.errstate(invalid="ignore", over="ignore"):
                return (m <= g) & (w * (g * g - (g - m) ** 2) <= delta), m

        moves = np.zeros((N, K))            # the bracket's low end, 2^-40 w_0: taken as no move
        for _ in range(SEARCH_STEPS):
            mid = (lo + hi) / 2
            ok, m = feasible(np.exp2(mid))
            lo, hi = np.where(ok, mid, lo), np.where(ok, hi, mid)
            moves = np.where(ok, m, moves)
        return np.maximum(moves, 0.0)       # the fit itself is in the version space: a bound never crosses it

    ONE_INSTANCE = {**OracleAgent.ONE_INSTANCE, "_bounds1": "_bounds"}

    def _generic_bounds1(self, X: np.ndarray, lower: bool = True) -> tuple[np.ndarray, np.ndarray | None]:
        high, low = self._bounds(X[None], lower)
        return high[0], (None if low is None else low[0])

    def _bounds1(self, X: np.ndarray, lower: bool = True) -> tuple[np.ndarray, np.ndarray | None]:
        """`_bounds` of one instance's X (K, d): (high, low), (K,) each (the oracle's `width1` where it has one;
        the sensitivity and the search by the batched form)."""
        if self.via_ != "width":
            return self._generic_bounds1(X, lower)
        f = self._predict1(X)
        width1 = getattr(self.oracle_, "width1", None)
        width = width1(X) if width1 is not None else np.asarray(self.oracle_.width(X[None]), dtype=float)[0]
        half = math.sqrt(radius(self.c0, len(X), self.t_)) * width
        return f + half, f - half


@register("RegCB-opt")
class RegCBOpt(RegCB):
    """RegCB-opt (Foster et al. 2018, Alg. 2 with the optimistic rule; the Contextual Bandit Bake-off's best
    fixed setting c0 = 1e-3): play the arm with the highest upper bound high_a, ties split evenly.

    With the ridge oracle, high_a = <x_a, theta_hat> + sqrt(beta_t) ||x_a||_{V^{-1}}, beta_t = c0 log(K t):
    LinUCB with a radius that grows like sqrt(log t) (agents.regcb module docstring): the exact extremes
    of the version space, not clipped to a reward range. With oracle="sgd", VW's `--cb_explore_adf
    --regcb --regcbopt` bounds: the sensitivity's binary search, clipped to [min_reward, max_reward]
    (module docstring); with `search=True`, the paper's search with copies of any oracle. Only the upper
    bounds are computed (VW's `min_only`). The oracle learns the chosen arm's reward with weight 1 (VW
    sets its probability to 1; its mtr regression then weights it by 1 / K, tests/agents/test_regcb_bounds.py).

    Args:
        c0: the mellowness C0 of beta_t = C0 log(K t) (default 1e-3, the Bake-off's; VW's default 0.1).
        search, min_reward, max_reward: how the bounds of an oracle without `width` are found (RegCB).
        oracle: "ridge" (default), "sgd", or any oracle with `search=True` (agents.oracle).
        lam, lr: the oracle's settings (agents.oracle.OracleAgent).
    """

    def _policy(self, X: np.ndarray) -> np.ndarray:
        return argmax_probs(self._bounds(X, lower=False)[0])

    def _policy1(self, X: np.ndarray) -> np.ndarray:
        return argmax_probs(self._bounds1(X, lower=False)[0])


@register("RegCB-elim")
class RegCBElim(RegCB):
    """RegCB-elim (Foster et al. 2018, Alg. 1): uniform over A_t = {a : high_a >= max_b low_b}, the arms
    that some regressor of the version space F_t could make the best.

    The set is the paper's test and VW's `--regcb` rule (an arm stays while its lowest cost is at most
    the smallest highest cost), on the version space of every reward so far (updated each round, as in
    VW, not at the ends of the paper's epochs). Bounds as RegCB-opt's (the exact ellipsoid of the ridge
    oracle, VW's sensitivity bounds of the sgd oracle, or the search with copies), both of them; the
    chosen arm's reward learned with weight 1. The arm with the largest lower bound always stays, so
    A_t is never empty; with beta_t = 0 (before the first reward) A_t is the greedy arms.

    Args:
        c0: the mellowness C0 of beta_t = C0 log(K t) (default 1e-3, the Bake-off's; VW's default 0.1).
        search, min_reward, max_reward: how the bounds of an oracle without `width` are found (RegCB).
        oracle: "ridge" (default), "sgd", or any oracle with `search=True` (agents.oracle).
        lam, lr: the oracle's settings (agents.oracle.OracleAgent).
    """

    def _policy(self, X: np.ndarray) -> np.ndarray:
        high, low = self._bounds(X)
        alive = high >= low.max(axis=1, keepdims=True)                   # A_t
        return alive / alive.sum(axis=1, keepdims=True)

    def _policy1(self, X: np.ndarray) -> np.ndarray:
        high, low = self._bounds1(X)
        alive = high >= low.max()
        return alive / alive.sum()
