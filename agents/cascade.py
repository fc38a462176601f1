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

__all__ = ["CascadeUCB1", "CascadeKLUCB", "CascadeTS", "CascadeLinUCB", "CascadeLinTS", "kl_ucb"]


def kl_ucb(w: np.ndarray, T: np.ndarray, level: float, iters: int = 40) -> np.ndarray:
    """max{q in [w, 1] : T d(w, q) <= level} elementwise (Bernoulli KL d), by `iters` bisection steps
    (an upper end within 2^-iters of the exact bound, never below it); inf where T = 0.

    d(w, .) increases on [w, 1], so the bound is where T d(w, q) crosses `level`. Each element
    bisects on its own, so a batch of instances gets exactly each instance's values.
    """
    budget = level / np.maximum(T, 1)
    lo, hi = w.copy(), np.ones_like(w)
    negent = xlogy(w, w) + xlogy(1 - w, 1 - w)
    for _ in range(iters):
        mid = 0.5 * (lo + hi)
        ok = negent - xlogy(w, mid) - xlogy(1 - w, 1 - mid) <= budget
        lo = np.where(ok, mid, lo)
        hi = np.where(ok, hi, mid)
    return np.where(T > 0, hi, np.inf)


class _Cascade(RankingAgent):
    """Per-item click statistics of the examined positions: T_ (N, L) times observed, S_ (N, L) clicks
    (Kveton et al. 2015, Alg. 1 lines 12-15); the list is the top K of `_scores`."""

    def _start(self, X):
        self.T_ = np.zeros((self.n_, self.L_))
        self.S_ = np.zeros((self.n_, self.L_))

    def _rank(self, X):
        return random_ranking(self._scores(), self.K_, self.rng_)

    def _update(self, X, A, C):
        E = cascade_examined(C)
        rows = np.arange(self.n_)[:, None]
        self.T_[rows, A] += E
        self.S_[rows, A] += C * E

    def _means(self) -> np.ndarray:
        """w_hat (N, L): the click rate of each item's observations (0 when unobserved)."""
        return self.S_ / np.maximum(self.T_, 1)


@register("CascadeUCB1")
class CascadeUCB1(_Cascade):
    """CascadeUCB1 (Kveton, Szepesvari, Wen, Ashkan 2015, "Cascading bandits", Alg. 1 with UCB1's index):

        U_t(e) = w_hat(e) + sqrt(1.5 log(t - 1) / T_{t-1}(e))       (§3.1, c_{t,s} = sqrt(1.5 log t / s))

    at round t, with t - 1 rounds observed. The paper initialises every item with one draw w_0 of
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

        U_t(e) = max{q in [w_hat(e), 1] : T_{t-1}(e) d(w_hat(e), q) <= log(t - 1) + 3 log log(t - 1)}

    (d the Bernoulli KL divergence; `kl_ucb`, bisection to 2^-40). The right side is taken as 0
    while it is negative (t - 1 < 3, where log log is negative or undefined). Unobserved items have
    index +inf (see CascadeUCB1).

    Args:
        num_positions: K, the length of the list.
    """

    def __init__(self, *, num_positions: int | None = None, seed=None, dim: int | None = None):
        super().__init__(num_positions=num_positions, seed=seed, dim=dim)

    def _scores(self):
        t = self.t_
        level = max(math.log(t) + 3 * math.log(math.log(t)), 0.0) if t >= 3 else 0.0
        return kl_ucb(self._means(), self.T_, level)


@register("CascadeTS")
class CascadeTS(_Cascade):
    """TS-Cascade (Cheung, Tan, Zhong 2019, "Thompson sampling algorithms for cascading bandits",
    AISTATS, §3): Thompson sampling with one Gaussian draw Z_t ~ N(0, 1) shared by all items of a round,

        theta_t(i) = w_hat_t(i) + Z_t sigma_t(i),
        sigma_t(i) = max{ sqrt(nu_t(i) log(t + 1) / (N_t(i) + 1)), log(t + 1) / (N_t(i) + 1) },
        nu_t(i) = w_hat_t(i) (1 - w_hat_t(i)),

    w_hat_t(i) the click rate of item i's N_t(i) observations (0 when none), t the round (1-based).
    Not Beta-Bernoulli Thompson sampling: the Gaussian form with empirical variance is the one the
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
        """The examined positions' features / sigma and clicks / sigma, one (N, d) and (N,) pair per position."""
        E = cascade_examined(C)
        rows = np.arange(self.n_)
        for k in range(self.K_):
            x = X[rows, A[:, k]].astype(float) * (E[:, k] / self.sigma)[:, None]
            yield x, C[:, k] * E[:, k] / self.sigma

    def _update(self, X, A, C):
        for x, y in self._examined(X, A, C):
            rls_update_(self.W_, x, y[:, None])

    def _rank(self, X):
        return random_ranking(self._scores(X.astype(float)), self.K_, self.rng_)


@register("CascadeLinUCB")
class CascadeLinUCB(_CascadeLinear):
    """CascadeLinUCB (Zong, Ni, Sung, Ke, Wen, Kveton 2016, "Cascading bandits for large-scale
    recommendation problems", §4, CascadeLinUCB):

        U_t(e) = min{ x_e^T theta_bar_{t-1} + c sqrt(x_e^T M_{t-1}^{-1} x_e), 1 }

    with M_0 = I_d (ridge lambda = sigma^2 in the usual V = lambda I + sum x x^T terms).

    Args:
        sigma: the noise scale sigma of the paper's M_t = I + sigma^{-2} sum x x^T (default 0.1).
        c: the width of the confidence interval (default 1).
        num_positions: K, the length of the list.
    """

    params = {"c": Real(ge=0)}

    def __init__(self, *, sigma: float = 0.1, c: float = 1.0, num_positions: int | None = None, seed=None,
                 dim: int | None = None):
        self.sigma, self.c = sigma, c
        super().__init__(num_positions=num_positions, seed=seed, dim=dim)

    def _scores(self, X):
        d = X.shape[2]
        M_inv, theta = self.W_[:, :, :d], self.W_[:, :, d:]
        mean = (X @ theta)[:, :, 0]
        width = np.sqrt(np.maximum(((X @ M_inv) * X).sum(axis=2), 0.0))
        return np.minimum(mean + self.c * width, 1.0)


@register("CascadeLinTS")
class CascadeLinTS(_CascadeLinear):
    """CascadeLinTS (Zong et al. 2016, §4, CascadeLinTS): theta_t ~ N(theta_bar_{t-1}, M_{t-1}^{-1}) and the K items
    of largest x_e^T theta_t. The sample is theta_bar + R z, z ~ N(0, I_d), with R R^T = M^{-1} kept
    by Potter's square-root update (agents.linalg.potter_update_, no Cholesky a round).

    Args:
        sigma: the noise scale sigma of M_t = I + sigma^{-2} sum x x^T (default 0.1).
        num_positions: K, the length of the list.
    """

    def __init__(self, *, sigma: float = 0.1, num_positions: int | None = None, seed=None, dim: int | None = None):
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
