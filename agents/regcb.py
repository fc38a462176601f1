"""RegCB (Foster, Agarwal, Dudik, Luo, Schapire, ICML 2018): confidence bounds from a regression oracle.

The version space of round t is every regressor whose summed squared loss on the data so far is
within beta_t of the least-squares fit's, F_t = {f : R_t(f) - min R_t <= beta_t}; each arm gets the
highest and the lowest reward any f of F_t predicts for it. RegCB-opt plays the arm of the highest
upper bound, RegCB-elim plays uniformly over the arms that some f of F_t could make the best.

With ridge regression the version space is an ellipsoid and the bounds are exact in closed form:
the summed loss of theta exceeds the ridge fit's by (theta - theta_hat)^T V (theta - theta_hat),
V = lam I + sum x x^T, so the extremes of <x, theta> over F_t are

    high(x) = <x, theta_hat> + sqrt(beta_t) ||x||_{V^{-1}},   low(x) = <x, theta_hat> - sqrt(beta_t) ||x||_{V^{-1}},

which is what an oracle's `width(X)` (||x||_{V^{-1}}, `agents.oracle.RidgeOracle.width`) scales.
"""

from __future__ import annotations

import copy
import math

import numpy as np

from agents.base import argmax_probs, register
from agents.oracle import ORACLES, OracleAgent
from agents.params import LogUniform, Real

__all__ = ["RegCB", "RegCBElim", "RegCBOpt", "radius"]


def radius(c0: float, num_arms: int, t: int) -> float:
    """beta_t = c0 log(K t), the version space's radius on the summed squared loss after t rewards
    (the Bake-off's Delta_t = c0 log(K t) / t on the average loss, VW's `--mellowness` c0 with costs in
    [0, 1]); 0 before the first reward, where VW's log(0) = -inf also leaves the bounds at the fit."""
    return c0 * math.log(num_arms * t) if t > 0 else 0.0


class RegCB(OracleAgent):
    """The two RegCB rules' shared part: upper and lower bounds of every arm's reward (module docstring).

    Args:
        c0: the mellowness C0 of beta_t = C0 log(K t) (`radius`).
        oracle: "ridge" (default) or an oracle object with `width(X)`, the (N, K) half-widths
            ||x||_{V^{-1}} of its confidence ellipsoid; an oracle without one ("sgd", "mlp", a
            scikit-learn or river regressor) is refused.
        lam, lr: the oracle's settings (agents.oracle.OracleAgent).
    """

    params = {"c0": Real(ge=0)}
    search_space = {"c0": LogUniform(1e-4, 1.0)}         # and lam
    iwr = False         # VW's regcb learns the chosen arm's reward unweighted (its probability set to 1)

    def __init__(self, *, c0: float = 1e-3, oracle="ridge", lam: float = 1.0, lr: float | None = None, seed=None,
                 dim: int | None = None):
        super().__init__(oracle=oracle, lam=lam, lr=lr, seed=seed, dim=dim, c0=c0)

    def _check_params(self) -> None:
        super()._check_params()
        has_width = hasattr(ORACLES[self.oracle] if isinstance(self.oracle, str) else self.oracle, "width")
        if not has_width:
            takes = [name for name, cls in ORACLES.items() if hasattr(cls, "width")]
            raise ValueError(
                f"{type(self).__name__}: oracle {self.oracle!r} has no width(X), the ||x||_{{V^-1}} that RegCB's "
                f"confidence bounds scale; use {' or '.join(map(repr, takes))} or an oracle object with "
                "width(X) -> (N, K) (VW's sensitivity-based bounds for other regressors are not implemented)")

    def bounds(self, obs) -> tuple[np.ndarray, np.ndarray]:
        """(high, low): the largest and smallest reward the version space gives each arm of obs, (K,) each
        for obs (K, d), (N, K) for (N, K, d); computed without changing the agent (as `action_probs`)."""
        agent = self if self.n_ is not None else copy.deepcopy(self)       # a first obs would start self
        high, low = agent._bounds(agent._check_obs(obs))
        return (high[0], low[0]) if agent.single_ else (high, low)

    def _bounds(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(high, low), each (N, K), of the arms of X (N, K, d)."""
        f = self._predict(X)
        half = math.sqrt(radius(self.c0, X.shape[1], self.t_)) * np.asarray(self.oracle_.width(X), dtype=float)
        return f + half, f - half

    ONE_INSTANCE = {**OracleAgent.ONE_INSTANCE, "_bounds1": "_bounds"}

    def _generic_bounds1(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        high, low = self._bounds(X[None])
        return high[0], low[0]

    def _bounds1(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """`_bounds` of one instance's X (K, d): (high, low), (K,) each (the oracle's `width1` where it has one)."""
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
    LinUCB with a radius that grows like sqrt(log t) (agents.regcb module docstring). The oracle learns
    the chosen arm's reward with weight 1, as VW's `--regcb --regcbopt` does. Unlike VW, the bounds
    are the exact extremes of the version space (VW approximates them with the regressor's sensitivity)
    and are not clipped to a reward range (VW clips them to its cost range, [0, 1] by default).

    Args:
        c0: the mellowness C0 of beta_t = C0 log(K t) (default 1e-3, the Bake-off's; VW's default 0.1).
        oracle: "ridge" or an oracle object with `width(X)` (an oracle without one is refused).
        lam, lr: the oracle's settings (agents.oracle.OracleAgent).
    """

    def _policy(self, X: np.ndarray) -> np.ndarray:
        return argmax_probs(self._bounds(X)[0])

    def _policy1(self, X: np.ndarray) -> np.ndarray:
        return argmax_probs(self._bounds1(X)[0])


@register("RegCB-elim")
class RegCBElim(RegCB):
    """RegCB-elim (Foster et al. 2018, Alg. 1): uniform over A_t = {a : high_a >= max_b low_b}, the arms
    that some regressor of the version space F_t could make the best.

    The set is the paper's test and VW's `--regcb` rule (an arm stays while its lowest cost is at most
    the smallest highest cost), on the version space of every reward so far (updated each round, as in
    VW, not at the ends of the paper's epochs). Bounds as RegCB-opt's (exact ellipsoid, not clipped to a
    reward range), the chosen arm's reward learned with weight 1. The arm with the largest lower bound
    always stays, so A_t is never empty; with beta_t = 0 (before the first reward) A_t is the greedy arms.

    Args:
        c0: the mellowness C0 of beta_t = C0 log(K t) (default 1e-3, the Bake-off's; VW's default 0.1).
        oracle: "ridge" or an oracle object with `width(X)` (an oracle without one is refused).
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
