"""TopRank (Lattimore, Kveton, Li, Szepesvari 2018, "TopRank: a practical algorithm for online
stochastic ranking", NeurIPS, Alg. 1): learns a partial order of the items from pairwise click
differences, for any click model where a more attractive item placed higher gets more clicks
(cascade, position-based and others alike); it needs no examination probabilities.

Items are identified by row index (the env observes one-hot ids).
"""

from __future__ import annotations

import math

import numpy as np

from agents.base import register
from agents.params import Int, Real
from agents.ranking import RankingAgent

__all__ = ["TOPRANK_C", "TopRank"]

# c = 4 sqrt(2 / pi) / erf(sqrt(2)) (Alg. 1), about 3.43
TOPRANK_C = 4 * math.sqrt(2 / math.pi) / math.erf(math.sqrt(2))


@register("TopRank")
class TopRank(RankingAgent):
    """TopRank (Lattimore et al. 2018, Alg. 1).

    A relation G_t holds the pairs found: `beats_[i, j]` is True when item i is shown to beat item j
    (the paper's (j, i) in G_t). The items are partitioned into blocks P_1, P_2, ...: P_d is the
    set of remaining items that no remaining item beats. Round t shows the blocks in order, each
    block's items in uniformly random order, and the first K of that permutation. Clicks C_ti (0 for
    an item not shown) update, for every pair i, j in the same block,

        S_ij += C_ti - C_tj,   N_ij += |C_ti - C_tj|,

    and G gains (j, i) once S_ij >= sqrt(2 N_ij log(c / delta sqrt(N_ij))), N_ij > 0.
    Theorem 1's delta = 1 / n, n the horizon: by default delta = 1 / horizon.

    Should G ever hold a cycle (a chance event the analysis excludes), the items caught in it form
    one block, so the partition is always defined.

    Args:
        horizon: n, the number of rounds (delta = 1 / n when `delta` is None).
        delta: the confidence level, or None for 1 / horizon.
        num_positions: K, the length of the list.
    """

    params = {"horizon": (Int(ge=1), None), "delta": (Real(gt=0, lt=1), None)}

    def __init__(self, *, horizon: int | None = None, delta: float | None = None, num_positions: int | None = None,
                 seed=None, dim: int | None = None):
        self.horizon, self.delta = horizon, delta
        super().__init__(num_positions=num_positions, seed=seed, dim=dim)

    @classmethod
    def reads_horizon(cls, kwargs: dict) -> bool:
        return cls.setting(kwargs, "delta") is None

    def _start(self, X):
        if self.delta is None and self.horizon is None:
            raise ValueError("TopRank needs delta, or the horizon n for Theorem 1's delta = 1 / n: pass horizon=n "
                             "(or delta=...)")
        self.delta_ = self.delta if self.delta is not None else 1.0 / self.horizon
        L = self.L_
        self.S_ = np.zeros((self.n_, L, L))
        self.N_ = np.zeros((self.n_, L, L))
        self.beats_ = np.zeros((self.n_, L, L), dtype=bool)
        self.block_ = np.zeros((self.n_, L), dtype=np.int64)      # all items in P_1

    def _rank(self, X):
        u = self.rng_.random((self.n_, self.L_))
        return np.lexsort((u, self.block_), axis=-1)[:, :self.K_]

    def _update(self, X, A, C):
        clicks = np.zeros((self.n_, self.L_))
        clicks[np.arange(self.n_)[:, None], A] = C
        same = self.block_[:, :, None] == self.block_[:, None, :]
        diff = (clicks[:, :, None] - clicks[:, None, :]) * same
        self.S_ += diff
        self.N_ += np.abs(diff)
        changed = diff != 0
        if changed.any():
            n = self.N_[changed]
            found = self.S_[changed] >= np.sqrt(2 * n * np.log(TOPRANK_C / self.delta_ * np.sqrt(n)))
            new = np.zeros_like(self.beats_)
            new[changed] = found
            if (new & ~self.beats_).any():
                self.beats_ |= new
                self.block_ = partition(self.beats_)


def partition(beats: np.ndarray) -> np.ndarray:
    """The block index (0-based) of every item, (N, L), from beats (N, L, L): block d holds the
    remaining items that no remaining item beats (Alg. 1's P_td); when none qualifies (a cycle),
    all remaining items form the block."""
    n, L = beats.shape[:2]
    block = np.full((n, L), -1, dtype=np.int64)
    remaining = np.ones((n, L), dtype=bool)
    for d in range(L):
        if not remaining.any():
            break
        beaten = (beats & remaining[:, :, None]).any(axis=1)
        top = remaining & ~beaten
        stuck = ~top.any(axis=1)
        top[stuck] = remaining[stuck]
        block[top] = d
        remaining &= ~top
    return block
