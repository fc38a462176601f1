"""Position-based model agents: PBM-UCB and PBM-PIE (Lagree, Vernade, Cappe 2016, "Multiple-play bandits
in the position-based model", NeurIPS, §4).

The position-based model (§2): position l is examined with a known probability kappa_l, item k
attracts with an unknown theta_k, and a click at l is the product of the two independent draws.
Items are identified by row index (the env observes one-hot ids). The statistics of §4, for item
k and position l, are the clicks S_{k,l}(t) and displays N_{k,l}(t) of the rounds before t, with
S_k = sum_l S_{k,l}, N_k = sum_l N_{k,l}, N~_k = sum_l kappa_l N_{k,l} and theta_hat_k = S_k / N~_k.
The chosen items go to the positions in decreasing order of kappa (the best item where the user
looks most; positions 0, 1, ... when the kappas decrease, as usual).
"""

from __future__ import annotations

import math

import numpy as np

from agents.base import register
from agents.params import Int, Real
from agents.ranking import RankingAgent, bernoulli_kl, random_ranking

__all__ = ["PBMPIE", "PBMUCB", "pbm_kl_divergence"]


def pbm_kl_divergence(S: np.ndarray, Nkl: np.ndarray, kappas: np.ndarray, q: np.ndarray) -> np.ndarray:
    """phi_k(q) = sum_l N_{k,l} d(S_{k,l} / N_{k,l}, kappa_l q) (§4.2; d the Bernoulli KL divergence, a
    position where item k was never shown counts 0), for S, Nkl (N, L, K) and q (N, L) -> (N, L)."""
    return (Nkl * bernoulli_kl(S / np.maximum(Nkl, 1), kappas * q[..., None])).sum(axis=2)


class Kappas:
    """A non-empty sequence of examination probabilities in (0, 1], as an agents.params rule."""

    def accepts(self, value) -> bool:
        if isinstance(value, (str, bytes, dict)) or np.ndim(value) != 1 or len(value) == 0:
            return False
        try:
            k = np.asarray(value, dtype=float)
        except (TypeError, ValueError):
            return False
        return bool(((k > 0) & (k <= 1)).all())

    def __str__(self) -> str:
        return "a sequence of K examination probabilities in (0, 1] (one per position)"


class _PBM(RankingAgent):
    """The §4 statistics S_ and N_ (N, L, K), per item and position, and the kappa order of positions."""

    params = {"kappas": (Kappas(), None)}

    def _start(self, X):
        if self.kappas is None:
            raise ValueError(f"{type(self).__name__} needs the positions' examination probabilities: pass "
                             "kappas=[kappa_1, ..., kappa_K] (a PBM env's env.unwrapped.kappas; the runner passes them)")
        if len(self.kappas) != self.K_:
            raise ValueError(f"kappas has {len(self.kappas)} values but num_positions={self.K_}; give one per position")
        self.kappa_ = np.asarray(self.kappas, dtype=float)
        self.slots_ = np.argsort(-self.kappa_, kind="stable")    # positions, most examined first
        self.S_ = np.zeros((self.n_, self.L_, self.K_))
        self.N_ = np.zeros((self.n_, self.L_, self.K_))

    def _place(self, best: np.ndarray) -> np.ndarray:
        """The list that puts best[:, j], the j-th best item, at the j-th most examined position."""
        A = np.empty_like(best)
        A[:, self.slots_] = best
        return A

    def _update(self, X, A, C):
        rows, pos = np.arange(self.n_)[:, None], np.arange(self.K_)
        self.S_[rows, A, pos] += C
        self.N_[rows, A, pos] += 1

    def _theta(self) -> tuple[np.ndarray, np.ndarray]:
        """(theta_hat (N, L), N~ (N, L)); theta_hat is 0 where N~ = 0."""
        Nt = self.N_ @ self.kappa_
        return self.S_.sum(axis=2) / np.maximum(Nt, 1e-300), Nt


@register("PBM-UCB")
class PBMUCB(_PBM):
    """PBM-UCB (Lagree et al. 2016, §4.1): the K items of largest

        U_k(t, delta) = S_k / N~_k + sqrt(N_k / N~_k) sqrt(delta / (2 N~_k)),   delta = (1 + epsilon) log t,

    t the round (1-based; log t as the GRAB authors' code, github.com/gaudel/ranking_bandits). An item
    never shown has index +inf (so the first rounds show each once).

    Args:
        kappas: the K positions' examination probabilities (known, as in the paper).
        epsilon: the epsilon of delta (the theorems take epsilon > 0; default 0, a setting the GRAB
            authors' code leaves to its command line).
        num_positions: K, the length of the list.
    """

    params = {"epsilon": Real(ge=0)}

    def __init__(self, *, kappas=None, epsilon: float = 0.0, num_positions: int | None = None, seed=None,
                 dim: int | None = None):
        self.kappas, self.epsilon = kappas, epsilon
        super().__init__(num_positions=num_positions, seed=seed, dim=dim)

    def _scores(self) -> np.ndarray:
        theta, Nt = self._theta()
        delta = (1 + self.epsilon) * math.log(self.t_ + 1)
        with np.errstate(divide="ignore", invalid="ignore"):
            bonus = np.sqrt(self.N_.sum(axis=2) / Nt) * np.sqrt(delta / (2 * Nt))
        return np.where(Nt > 0, theta + bonus, np.inf)

    def _rank(self, X):
        return self._place(random_ranking(self._scores(), self.K_, self.rng_))


@register("PBM-PIE")
class PBMPIE(_PBM):
    """PBM-PIE (Lagree et al. 2016, §4.2, "position-based parsimonious item exploration"):

    a warm-up of L rounds shows each item at each position once (round t shows items t, t+1, ... mod
    L, the most examined position first), so every theta_hat is defined. Then, with L(t) the K items of largest theta_hat (best
    first) and B(t) = {k not in L(t) : U_k(t, delta) >= theta_hat of L(t)'s last item}, delta =
    (1 + epsilon) log T: show L(t) when B(t) is empty; otherwise, with probability 1/2 show L(t),
    else L(t) with its last item replaced by one drawn uniformly from B(t).

    The index U_k(t, delta) = sup{q in [theta_hat_k, 1] : phi_k(q) <= delta}, phi_k(q) =
    sum_l N_{k,l} d(S_{k,l} / N_{k,l}, kappa_l q) (`pbm_kl_divergence`), is not computed: phi_k is
    convex, with its minimum at theta_hat_k when the kappas are equal (next to it otherwise), and
    where it grows U_k >= c exactly when phi_k(c) <= delta, so B(t) takes one evaluation of phi_k at
    c = theta_hat of L(t)'s last item (>= theta_hat_k). The two tests differ only for a c between
    theta_hat_k and phi_k's minimum with phi_k(c) > delta, a history that no attraction near its
    estimate explains at level delta.

    delta = (1 + epsilon) log T with the horizon T, as the GRAB authors' code runs it
    (github.com/gaudel/ranking_bandits, pbm_pie.py); that code warms up for two such cycles (2L
    rounds) and adds Beta(1, 1) pseudo-counts, which this agent does not.

    Args:
        kappas: the K positions' examination probabilities (known).
        horizon: T, the number of rounds (delta grows with log T).
        epsilon: the epsilon of delta (default 0).
        num_positions: K, the length of the list.
    """

    params = {"epsilon": Real(ge=0), "horizon": (Int(ge=1), None)}

    def __init__(self, *, kappas=None, horizon: int | None = None, epsilon: float = 0.0,
                 num_positions: int | None = None, seed=None, dim: int | None = None):
        self.kappas, self.horizon, self.epsilon = kappas, horizon, epsilon
        super().__init__(num_positions=num_positions, seed=seed, dim=dim)

    def _start(self, X):
        if self.horizon is None:
            raise ValueError("PBM-PIE needs the horizon T (delta = (1 + epsilon) log T): pass horizon=T")
        super()._start(X)

    def _rank(self, X):
        u = self.rng_.random((self.n_, 2))               # the coin and the pick from B(t), drawn every round
        if self.t_ < self.L_:
            best = np.broadcast_to((self.t_ + np.arange(self.K_)) % self.L_, (self.n_, self.K_))
            return self._place(best.copy())
        theta, _ = self._theta()
        best = random_ranking(theta, self.K_, self.rng_)
        rows = np.arange(self.n_)
        last = theta[rows, best[:, -1]]
        c = np.broadcast_to(last[:, None], theta.shape)
        B = pbm_kl_divergence(self.S_, self.N_, self.kappa_, c) <= (1 + self.epsilon) * math.log(self.horizon)
        B[rows[:, None], best] = False
        size = B.sum(axis=1)
        swap = (size > 0) & (u[:, 0] >= 0.5)
        for i in np.flatnonzero(swap):
            best[i, -1] = np.flatnonzero(B[i])[int(u[i, 1] * size[i])]
        return self._place(best)

