"""Cascading bandits: CascadeUCB1, CascadeKL-UCB (Kveton et al. 2015), CascadeTS (Cheung et al. 2019's
TS-Cascade), CascadeLinUCB and CascadeLinTS (Zong et al. 2016).

The cascade model (Kveton et al. 2015, §2): item e attracts the user with probability w(e); the user
scans the list top down and clicks the first attractive item. The agent learns from the positions
up to and including the first click (all K when there is none, `cascade_examined`): item a_k of
those positions was attractive exactly when it was clicked. Every agent ranks the K items of
largest index, ties at random (`random_ranking`).

The non-contextual agents identify items by row index (the env observes one-hot ids, the (L, L)
identity; any obs with L rows works, its values are not read). The linear ones read the rows as
item features x_e and model w(e) = x_e^T theta*.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import xlogy

from agents.base import register
from agents.linalg import potter_update_, rls_update_
from agents.params import Int, Real
from agents.ranking import RankingAgent, cascade_examined, random_ranking

__all__ = ["CascadeKLUCB", "CascadeLinTS", "CascadeLinUCB", "CascadeTS", "CascadeUCB1", "kl_ucb"]


def kl_ucb(w: np.ndarray, T: np.ndarray, level: float, iters: int = 8) -> np.ndarray:
    """max{q in [w, 1] : T d(w, q) <= level} elementwise (d the Bernoulli KL divergence); +inf where T = 0.

    Newton's method in u = -log(1 - q), where g(u) = d(w, q) - level / T is convex and increasing on
    the branch q >= w (g'(u) = (q - w) / q), started right of the root at the smaller of two upper
    bounds (Pinsker's q <= w + sqrt(level / 2T), and d(w, q) >= (1 - w) (u + log(1 - w)) + w log w):
    from there Newton's iterates decrease monotonically to the root. `iters` = 8 steps reach it
    to about 1e-12 (tests/agents/test_ranking_agents.py compares with a root finder). Each element
    iterates on its own, so a batch of instances gets exactly each instance's values.
    """
    b = level / np.maximum(T, 1)
    wc = np.minimum(w, 1 - 1e-15)                       # w = 1: the bound is 1 (set below)
    w_log_w = xlogy(wc, wc)
    a = 1 - wc
    c0 = w_log_w + xlogy(a, a) - b                      # g(u) = c0 - w log q + (1 - w) u
    u = (b - w_log_w) / a - np.log1p(-wc)
    with np.errstate(divide="ignore", invalid="ignore"):     # (u = 0 only where b = 0, masked below)
        u = np.minimum(u, -np.log1p(-np.minimum(wc + np.sqrt(b / 2), 1.0)))
        for _ in range(iters):
            q = -np.expm1(-u)
            u -= (c0 - wc * np.log(q) + a * u) * q / np.maximum(q - wc, 1e-300)
        q = np.where(w >= 1, 1.0, np.where(b > 0, np.maximum(-np.expm1(-u), w), w))
    return np.where(T > 0, q, np.inf)


class _Cascade(RankingAgent):
    """Per-item click statistics of the examined positions: T_ (N, L) times observed, S_ (N, L) clicks
    (Kveton et al. 2015, Alg. 1's update); the list is the top K of `_scores`."""

    def _start(self, X):
        self.T_ = np.zeros((self.n_, self.L_))
        self.S_ = np.zeros((self.n_, self.L_))

    def _rank(self, X):
        return random_ranking(self._scores(), self.K_, self.rng_)

    def _update(self, X, A, C):
        E = cascade_examined(C)
        flat = self._flat(A)
        self.T_.reshape(-1)[flat] += E
        self.S_.reshape(-1)[flat] += C * E

    def _means(self) -> np.ndarray:
        """w_hat (N, L): the click rate of each item's observations (0 when unobserved)."""
        return self.S_ / np.maximum(self.T_, 1)


@register("CascadeUCB1")
class CascadeUCB1(_Cascade):
    """CascadeUCB1 (Kveton, Szepesvari, Wen, Ashkan 2015, "Cascading bandits", Alg. 1 with UCB1's index):

        U_t(e) = w_hat(e) + sqrt(1.5 log(t - 1) / T_{t-1}(e))       (§3.1, c_{t,s} = sqrt(1.5 log t / s))

    at round t, with t - 1 rounds observed (log(t - 1), as in the code of Zhong, Cheung, Tan's
    comparison, github.com/zixinzh/2021-JMLR). The paper initialises every item with one draw w_0 of
    all weights, which a click env does not give; here an unobserved item has index +inf instead,
    so the first rounds show each item once (the usual practical initialisation).

    Args:
        num_positions: K, the length of the list.
    """

    def __init__(self, *, num_positions: int | None = None, seed=None, dim: int | None = None):
        super().__init__(num_positions=num_positions, seed=seed, dim=dim)

    def _scores(self):
        log_t = math.log(max(self.t_, 1))
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(self.T_ > 0, self._means() + np.sqrt(1.5 * log_t / self.T_), np.inf)


@register("CascadeKL-UCB")
class CascadeKLUCB(_Cascade):
    """CascadeKL-UCB (Kveton et al. 2015, Alg. 1 with KL-UCB's index, §3.1):

        U_t(e) = max{q in [w_hat(e), 1] : T_{t-1}(e) d(w_hat(e), q) <= log t + 3 log log t}

    at round t (1-based), d the Bernoulli KL divergence (`kl_ucb`, Newton's method to about 1e-12). The right
    side is taken as 0 while it is negative (t < 3, where log log t is negative or undefined), and
    an unobserved item has index +inf (see CascadeUCB1).

    Args:
        num_positions: K, the length of the list.
    """

    def __init__(self, *, num_positions: int | None = None, seed=None, dim: int | None = None):
        super().__init__(num_positions=num_positions, seed=seed, dim=dim)

    def _scores(self):
        t = self.t_ + 1
        level = max(math.log(t) + 3 * math.log(math.log(t)), 0.0) if t >= 3 else 0.0
        return kl_ucb(self._means(), self.T_, level)


@register("CascadeTS")
class CascadeTS(_Cascade):
    """TS-Cascade (Cheung, Tan, Zhong 2019, "Thompson sampling algorithms for cascading bandits",
    AISTATS, §3): Thompson sampling with one Gaussian draw Z_t ~ N(0, 1) shared by all items of a round,

        theta_t(i) = w_hat_t(i) + Z_t sigma_t(i),
        sigma_t(i) = max{ sqrt(nu_t(i) log(t + 1) / (N_t(i) + 1)), log(t + 1) / (N_t(i) + 1) },
        nu_t(i) = w_hat_t(i) (1 - w_hat_t(i)),

    w_hat_t(i) the click rate of item i's N_t(i) observations (0 when none), t the round (1-based)
    (as the authors' code, github.com/zixinzh/2021-JMLR, TSCascade). Not Beta-Bernoulli Thompson sampling: the Gaussian form with empirical variance is the one the
    paper analyses, and its single draw a round keeps it cheap.

    Args:
        num_positions: K, the length of the list.
    """

    def __init__(self, *, num_positions: int | None = None, seed=None, dim: int | None = None):
        super().__init__(num_positions=num_positions, seed=seed, dim=dim)

    def _scores(self):
        w = self._means()
        log_t1 = math.log(self.t_ + 2)              # log(t + 1), round t = t_ + 1
        sigma = np.maximum(np.sqrt(w * (1 - w) * log_t1 / (self.T_ + 1)), log_t1 / (self.T_ + 1))
        return w + self.rng_.standard_normal((self.n_, 1)) * sigma


class _CascadeLinear(RankingAgent):
    """Zong et al. 2016's statistics, M_t = I_d + sigma^{-2} sum x x^T and B_t = sum x 1{click} over the
    examined items (both algorithms' statistics update), held as W_ = [M^{-1} | theta_bar]
    (N, d, d + 1) with theta_bar = sigma^{-2} M^{-1} B: the rank-one updates of agents.linalg with
    x / sigma and targets 1{click} / sigma (the same M and theta_bar). An unexamined position's update
    is a zero vector, which leaves W_ exactly as it was (so instances learn from different numbers
    of positions in one batched call)."""

    params = {"sigma": Real(gt=0)}

    def _start(self, X):
        d = X.shape[2]
        self.W_ = np.zeros((self.n_, d, d + 1))
        self.W_[:, np.arange(d), np.arange(d)] = 1.0

    def _examined(self, X, A, C):
        """The examined positions' features / sigma and clicks / sigma, one (N, d) and (N,) pair per position,
        down to the last position any instance examined."""
        E = cascade_examined(C)
        scale = E / self.sigma
        x = X[np.arange(self.n_)[:, None], A] * scale[:, :, None]       # (N, K, d), 0 where unexamined
        y = C * scale
        for k in range(int(E.sum(axis=1).max())):
            yield x[:, k], y[:, k]

    def _update(self, X, A, C):
        for x, y in self._examined(X, A, C):
            rls_update_(self.W_, x, y[:, None])

    def _rank(self, X):
        return random_ranking(self._scores(X.astype(float)), self.K_, self.rng_)


@register("CascadeLinUCB")
class CascadeLinUCB(_CascadeLinear):
    """CascadeLinUCB (Zong, Ni, Sung, Ke, Wen, Kveton 2016, "Cascading bandits for large-scale
    recommendation problems", UAI, §4):

        U_t(e) = min{ x_e^T theta_bar_{t-1} + c sqrt(x_e^T M_{t-1}^{-1} x_e), 1 }

    with M_0 = I_d (ridge lambda = sigma^2 in the usual V = lambda I + sum x x^T terms). By default c
    is the theorem's width for a horizon of n rounds and ||theta*|| <= 1,

        c = (1 / sigma) sqrt(d log(1 + n K / (d sigma^2)) + 2 log(n K)) + 1,

    the value the authors' code (Zhong, Cheung, Tan 2021's comparison, sigma = 1) runs with.

    Args:
        sigma: the noise scale sigma of the paper's M_t = I + sigma^{-2} sum x x^T (default 1).
        c: the width of the confidence interval, or None for the theorem's c (needs `horizon`).
        horizon: n, the number of rounds (read only when c is None).
        num_positions: K, the length of the list.
    """

    params = {"c": (Real(ge=0), None), "horizon": (Int(ge=1), None)}

    def __init__(self, *, sigma: float = 1.0, c: float | None = None, horizon: int | None = None,
                 num_positions: int | None = None, seed=None, dim: int | None = None):
        self.sigma, self.c, self.horizon = sigma, c, horizon
        super().__init__(num_positions=num_positions, seed=seed, dim=dim)

    @classmethod
    def reads_horizon(cls, kwargs: dict) -> bool:
        return cls.setting(kwargs, "c") is None

    def _start(self, X):
        if self.c is None and self.horizon is None:
            raise ValueError("CascadeLinUCB needs c, or the horizon n for the theorem's c: pass horizon=n (or c=...)")
        super()._start(X)
        d, nK, s = X.shape[2], (self.horizon or 1) * self.K_, self.sigma
        self.c_ = self.c if self.c is not None else \
            math.sqrt(d * math.log(1 + nK / (d * s * s)) + 2 * math.log(nK)) / s + 1.0

    def _scores(self, X):
        d = X.shape[2]
        M_inv, theta = self.W_[:, :, :d], self.W_[:, :, d:]
        mean = (X @ theta)[:, :, 0]
        width = np.sqrt(np.maximum(((X @ M_inv) * X).sum(axis=2), 0.0))
        return np.minimum(mean + self.c_ * width, 1.0)


@register("CascadeLinTS")
class CascadeLinTS(_CascadeLinear):
    """CascadeLinTS (Zong et al. 2016, §4): theta_t ~ N(theta_bar_{t-1}, M_{t-1}^{-1}) and the K items
    of largest x_e^T theta_t. The sample is theta_bar + R z, z ~ N(0, I_d), with R R^T = M^{-1} kept
    by Potter's square-root update (agents.linalg.potter_update_, no Cholesky a round).

    Args:
        sigma: the noise scale sigma of M_t = I + sigma^{-2} sum x x^T (default 1, as the authors'
            code of Zhong, Cheung, Tan 2021's comparison).
        num_positions: K, the length of the list.
    """

    def __init__(self, *, sigma: float = 1.0, num_positions: int | None = None, seed=None, dim: int | None = None):
        self.sigma = sigma
        super().__init__(num_positions=num_positions, seed=seed, dim=dim)

    def _start(self, X):
        super()._start(X)
        self.R_ = np.repeat(np.eye(X.shape[2])[None], self.n_, axis=0)

    def _update(self, X, A, C):
        for x, y in self._examined(X, A, C):
            rls_update_(self.W_, x, y[:, None])
            potter_update_(self.R_, x)

    def _scores(self, X):
        d = X.shape[2]
        z = self.rng_.standard_normal((self.n_, d))
        theta = self.W_[:, :, d] + (self.R_ @ z[:, :, None])[:, :, 0]
        return (X @ theta[:, :, None])[:, :, 0]
