"""Linear bandits that forget: D-LinUCB (Russac, Vernade, Cappe 2019), SW-LinUCB (Cheung, Simchi-Levi,
Zhu 2019), D-LinTS and SW-LinTS (Kim & Tewari 2020).

Discounted (Russac et al. 2019, Alg. 1): with weights gamma^{t-s} on round s,
    V_t = gamma V_{t-1} + x_t x_t^T + (1 - gamma) lam I       = lam I + sum_s gamma^{t-s} x_s x_s^T,
    V~_t = gamma^2 V~_{t-1} + x_t x_t^T + (1 - gamma^2) lam I = lam I + sum_s gamma^{2(t-s)} x_s x_s^T,
    b_t = gamma b_{t-1} + y_t x_t,  theta_hat_t = V_t^{-1} b_t,
and the arm of largest <x, theta_hat> + alpha beta_t ||x||_{V_t^{-1} V~_t V_t^{-1}} with (their Thm 1)
    beta_t = sqrt(lam) S + sigma sqrt(2 log(1/delta) + d log(1 + L^2 (1 - gamma^{2t}) / (lam d (1 - gamma^2)))),
(1 - gamma^{2t}) / (1 - gamma^2) kept as the sum w_t = gamma^2 w_{t-1} + 1, which is t at gamma = 1.
(YRussac/WeightedLinearBandits' D_LinUCB_class.py updates V~ from the already updated V, gamma^2 V_t
where the paper has gamma^2 V~_{t-1}; this module follows the paper.)

Sliding window (Cheung et al. 2019, §4): V_t = lam I + sum of x x^T over the last w rounds, b_t
likewise, and the width beta = sqrt(lam) S + sigma sqrt(d log((1 + w L^2 / lam) / delta)) (their
Thm 2, as YRussac's SW_LinUCB_class.py computes it).

The state keeps V, V~ (discounted only) and b, and after each reward rewrites LinUCB's augmented
W_ = [M | theta_hat] with M = V^{-1} V~ V^{-1} (discounted) or V^{-1} (window), so LinUCB's scores
(agents.linear) serve unchanged: O(d^3) a round for the inverse (d = 2 in the papers). gamma = 1 and
window = None are LinUCB's own rank-one updates (M = V^{-1}), so they reproduce LinUCB bit for bit
with the same width (tests/agents/test_nonstationary.py).
"""

from __future__ import annotations

import math

import numpy as np

from agents.linalg import rls_update_
from agents.base import register
from agents.linear import LinUCB, _ridge_init, arm_scores
from agents.params import Int, LogUniform, Real

__all__ = ["DLinUCB", "SWLinUCB", "DLinTS", "SWLinTS", "discounted_beta", "window_beta"]


try:    # np.linalg.inv's gufunc without its Python wrapper (half of D-LinUCB's update at d = 2); V is positive definite
    from numpy.linalg._umath_linalg import inv as _inv

    def inv(a: np.ndarray) -> np.ndarray:
        return _inv(a, signature="d->d")
except ImportError:     # another numpy layout
    inv = np.linalg.inv


def discounted_beta(w: float, d: int, lam: float, S: float, sigma: float, delta: float, L: float) -> float:
    """Russac et al.'s beta_t with w = (1 - gamma^{2t}) / (1 - gamma^2) = sum_{s<t} gamma^{2s}."""
    return math.sqrt(lam) * S + sigma * math.sqrt(2.0 * math.log(1.0 / delta)
                                                   + d * math.log(1.0 + L * L * w / (lam * d)))


def window_beta(w: float, d: int, lam: float, S: float, sigma: float, delta: float, L: float) -> float:
    """Cheung et al.'s beta for a window of w rounds: sqrt(lam) S + sigma sqrt(d log((1 + w L^2 / lam) / delta))."""
    return math.sqrt(lam) * S + sigma * math.sqrt(d * math.log((1.0 + w * L * L / lam) / delta))


_COMMON = {"lam": Real(gt=0), "sigma": Real(gt=0), "S": Real(gt=0), "delta": Real(gt=0, lt=1), "alpha": Real(ge=0),
           "L": Real(gt=0), "horizon": Int(ge=2), "B_T": Real(gt=0)}


class _Forgetting(LinUCB):
    """LinUCB's scores on the W_ = [M | theta_hat] and width_ of a forgetting statistic.

    Subclasses give `_forgets()` (False: LinUCB's rank-one update), `_forget_update(x, y)` (V_, b_,
    the count w_ and their own state after a reward, when forgetting), `_metric(V_inv)` -> M and
    `_beta(w)` -> beta of an instance whose count is w.
    """

    row_state = ("W_", "width_", "V_", "b_", "w_")
    _scores1 = LinUCB._scores1          # the same arithmetic on one instance (LinUCB's one-instance form)

    def _init_state(self, n, d):
        _ridge_init(self, n, d, self.lam)
        self.V_ = np.tile(self.lam * np.eye(d), (n, 1, 1))
        self.b_ = np.zeros((n, d))
        self.w_ = np.zeros((n, 1))          # sum_{s<t} gamma^{2s}, or the rounds in the window
        self.width_ = np.zeros((n, 1))
        self._set_width()

    def _update(self, x, y):
        if self._forgets():
            self._forget_update(x, y)
            V_inv = inv(self.V_)
            self.W_[:, :, :self.d_] = self._metric(V_inv)
            self.W_[:, :, self.d_] = (V_inv @ self.b_[:, :, None])[:, :, 0]
        else:
            rls_update_(self.W_, x, y[:, None])         # LinUCB's V^{-1} and theta_hat (M = V^{-1})
            self.w_ += 1.0
        self._set_width()

    def _set_width(self, t=None) -> None:
        """alpha beta of each instance, in place (LinUCB's one-instance views read width_), by `math` on
        Python floats row by row: the same bits for an instance whether it is served alone or batched."""
        beta, width = self._beta, self.width_
        for i, w in enumerate(self.w_[:, 0].tolist()):
            width[i, 0] = self.alpha * beta(w)

    def _theory_t(self) -> float:
        """(d T / B_T)^{2/3}: Russac et al.'s 1 / (1 - gamma) and window tau (§4.3)."""
        return (self.d_ * self.horizon / self.B_T) ** (2.0 / 3.0)




@register("D-LinUCB")
class DLinUCB(_Forgetting):
    """D-LinUCB (Russac, Vernade, Cappe 2019, Alg. 1): the module docstring's discounted statistics and width.

    Defaults: lam = 0.1, delta = 0.01, S = 1, sigma = 1, L = 1 (the paper's experiments, §5) and
    gamma = 1 - (B_T / (d T))^{2/3} (§4.3, their theory value) from `horizon` T, the variation budget
    `B_T` = sum_t ||theta*_{t+1} - theta*_t|| (default 5.0, the order of the paper's abrupt setting, where
    B_T = 4 + sqrt(2): gamma = 0.99412 at T = 6,000) and d (the first obs's). gamma = 1 is LinUCB with
    this width (the rank-one update of agents.linear).

    Args:
        gamma: discount in (0, 1], or None for the theory value.
        lam: regulariser lambda.
        sigma: sub-Gaussian noise scale.
        S: bound on ||theta*||.
        delta: confidence level.
        alpha: width multiplier (1 = theory).
        L: bound on the arms' norms ||x||.
        horizon: T, read by gamma=None.
        B_T: the variation budget, read by gamma=None.
    """

    params = {**_COMMON, "gamma": (Real(gt=0, le=1), None)}
    # the discount through the theory's input, the variation budget B_T (gamma = 1 - (B_T / (d T))^(2/3)): its
    # default gamma=None is then in the space (B_T from 0.1 to 100: gamma 0.9999 to 0.992 at d = 2, T = 6,000)
    search_space = {"B_T": LogUniform(0.1, 100.0), "delta": None}
    row_state = (*_Forgetting.row_state, "Vt_")

    def __init__(self, *, gamma: float | None = None, lam: float = 0.1, sigma: float = 1.0, S: float = 1.0,
                 delta: float = 0.01, alpha: float = 1.0, L: float = 1.0, horizon: int = 10_000, B_T: float = 5.0,
                 seed=None, dim: int | None = None):
        self.gamma, self.L, self.horizon, self.B_T = gamma, L, horizon, B_T
        super().__init__(lam=lam, sigma=sigma, S=S, delta=delta, alpha=alpha, seed=seed, dim=dim)

    @classmethod
    def reads_horizon(cls, kwargs: dict) -> bool:
        return cls.setting(kwargs, "gamma") is None

    def discount(self) -> float:
        """gamma: given, or 1 - (B_T / (d T))^{2/3} (needs d: known from the first obs)."""
        return 1.0 - 1.0 / self._theory_t() if self.gamma is None else float(self.gamma)

    def _init_state(self, n, d):
        self.gamma_ = g = self.discount()
        super()._init_state(n, d)
        self.Vt_ = self.V_.copy()
        self._ridges = (1.0 - g) * self.lam * np.eye(d), (1.0 - g * g) * self.lam * np.eye(d)

    def _forgets(self):
        return self.gamma_ != 1.0

    def _update1(self, x, y):
        """One instance's reward (x (d,), y a float) by `_update`'s very calls on (1, ...) arrays (the same
        bits), without the general observe path's checks of batched arrays (LinearAgent's one-instance rounds)."""
        self._update(x[None], np.array([y]))

    def _forget_update(self, x, y):
        g, (ridge, ridge2) = self.gamma_, self._ridges
        xx = x[:, :, None] * x[:, None, :]
        self.V_ *= g
        self.V_ += xx + ridge                                          # V_t = gamma V + x x^T + (1 - gamma) lam I
        self.Vt_ *= g * g
        self.Vt_ += xx + ridge2                                        # V~_t, with gamma^2 and 1 - gamma^2
        self.b_ *= g
        self.b_ += y[:, None] * x                                      # b_t = gamma b + y x
        self.w_ *= g * g
        self.w_ += 1.0                                                 # sum_{s<t} gamma^{2s}

    def _metric(self, V_inv):
        return np.matmul(np.matmul(V_inv, self.Vt_), V_inv)

    def _beta(self, w: float) -> float:
        return discounted_beta(w, self.d_, self.lam, self.S, self.sigma, self.delta, self.L)


@register("SW-LinUCB")
class SWLinUCB(_Forgetting):
    """SW-LinUCB (Cheung, Simchi-Levi, Zhu 2019, §4): LinUCB on the last `window` rounds, with the module
    docstring's width beta (constant once w is fixed; for window=None the rounds so far stand for w).

    Defaults: lam = 0.1, delta = 0.01, S = 1, sigma = 1, L = 1 (Russac et al.'s experiments, where it
    is a baseline) and window tau = (d T / B_T)^{2/3} (the theory value Russac et al. §4.3 quote) from
    `horizon`, the variation budget `B_T` (default 5.0; 4 + sqrt(2) in their abrupt setting: tau = 170)
    and d. window=None keeps every round: LinUCB with this width.

    Args:
        window: w, a number of rounds, None (no window) or "theory".
        lam: regulariser lambda.
        sigma: sub-Gaussian noise scale.
        S: bound on ||theta*||.
        delta: confidence level.
        alpha: width multiplier (1 = theory).
        L: bound on the arms' norms.
        horizon: T, read by the theory window.
        B_T: the variation budget, read by the theory window.
    """

    params = {**_COMMON, "window": (Int(ge=1), None, "theory")}
    search_space = {"delta": None}
    row_state = (*_Forgetting.row_state, "xs_", "ys_")

    def __init__(self, *, window: int | str | None = "theory", lam: float = 0.1, sigma: float = 1.0, S: float = 1.0,
                 delta: float = 0.01, alpha: float = 1.0, L: float = 1.0, horizon: int = 10_000, B_T: float = 5.0,
                 seed=None, dim: int | None = None):
        self.window, self.L, self.horizon, self.B_T = window, L, horizon, B_T
        super().__init__(lam=lam, sigma=sigma, S=S, delta=delta, alpha=alpha, seed=seed, dim=dim)

    @classmethod
    def reads_horizon(cls, kwargs: dict) -> bool:
        return cls.setting(kwargs, "window") == "theory"

    def window_size(self) -> int | None:
        """w: given, None, or round((d T / B_T)^{2/3}) (needs d: known from the first obs)."""
        return max(1, round(self._theory_t())) if self.window == "theory" else self.window

    def _init_state(self, n, d):
        self.window_ = self.window_size()
        w = 0 if self.window_ is None else self.window_
        self.xs_, self.ys_ = np.zeros((n, w, d)), np.zeros((n, w))     # the last w rounds, a ring buffer
        super()._init_state(n, d)

    def _forgets(self):
        return self.window_ is not None

    def _forget_update(self, x, y):
        rows, slot = np.arange(len(x)), self.observed_ % self.window_  # each instance's oldest round
        old_x, old_y = self.xs_[rows, slot], self.ys_[rows, slot]       # zeros while the window fills
        self.V_ += x[:, :, None] * x[:, None, :] - old_x[:, :, None] * old_x[:, None, :]
        self.b_ += y[:, None] * x - old_y[:, None] * old_x
        self.xs_[rows, slot], self.ys_[rows, slot] = x, y
        self.w_ = np.minimum(self.w_ + 1.0, self.window_)

    def _metric(self, V_inv):
        return V_inv

    def _beta(self, w: float) -> float:
        w = w if self.window_ is None else self.window_
        return window_beta(w, self.d_, self.lam, self.S, self.sigma, self.delta, self.L)


class _SampledTheta:
    """Thompson sampling on a forgetting statistic (Kim & Tewari 2020): theta~ = theta_hat + v beta_t C eps,
    C C^T = M (a Cholesky factor of the statistic's metric), eps ~ N(0, I_d) from the instance's
    stream; the arm of largest <x, theta~>."""

    index_policy = False

    def _scores(self, X):
        d = self.d_
        C = np.linalg.cholesky(self.W_[:, :, :d])
        eps = self.rng_.standard_normal((self.n_, d, 1))
        theta = self.W_[:, :, d] + self.v * self.width_ * (C @ eps)[:, :, 0]
        return arm_scores(X, theta)


@register("D-LinTS")
class DLinTS(_SampledTheta, DLinUCB):
    """D-LinTS (Kim & Tewari 2020, Alg. 1): theta~ ~ N(theta_hat_t, v^2 beta_t^2 V_t^{-1} V~_t V_t^{-1})
    on D-LinUCB's discounted statistics and beta_t; v = 1 is the analysed algorithm, smaller v the
    usual practical tuning. D-LinUCB's defaults (gamma from `horizon` and `B_T`).

    Args:
        v: scale of the sampling covariance (1 = theory).
        (and D-LinUCB's: gamma, lam, sigma, S, delta, L, horizon, B_T)
    """

    params = {"v": Real(ge=0)}
    search_space = {"v": LogUniform(0.01, 1.0)}

    def __init__(self, *, v: float = 1.0, gamma: float | None = None, lam: float = 0.1, sigma: float = 1.0,
                 S: float = 1.0, delta: float = 0.01, L: float = 1.0, horizon: int = 10_000, B_T: float = 5.0,
                 seed=None, dim: int | None = None):
        self.v = v
        super().__init__(gamma=gamma, lam=lam, sigma=sigma, S=S, delta=delta, alpha=1.0, L=L, horizon=horizon,
                         B_T=B_T, seed=seed, dim=dim)


@register("SW-LinTS")
class SWLinTS(_SampledTheta, SWLinUCB):
    """SW-LinTS (Kim & Tewari 2020, Alg. 2): theta~ ~ N(theta_hat_t, v^2 beta^2 V_t^{-1}) on SW-LinUCB's
    windowed statistics and beta; v = 1 is the analysed algorithm. SW-LinUCB's defaults.

    Args:
        v: scale of the sampling covariance (1 = theory).
        (and SW-LinUCB's: window, lam, sigma, S, delta, L, horizon, B_T)
    """

    params = {"v": Real(ge=0)}
    search_space = {"v": LogUniform(0.01, 1.0)}

    def __init__(self, *, v: float = 1.0, window: int | str | None = "theory", lam: float = 0.1, sigma: float = 1.0,
                 S: float = 1.0, delta: float = 0.01, L: float = 1.0, horizon: int = 10_000, B_T: float = 5.0,
                 seed=None, dim: int | None = None):
        self.v = v
        super().__init__(window=window, lam=lam, sigma=sigma, S=S, delta=delta, alpha=1.0, L=L, horizon=horizon,
                         B_T=B_T, seed=seed, dim=dim)
