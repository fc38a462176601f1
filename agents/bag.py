"""Bag and Bag-greedy: exploration by an online bootstrap of the regression oracle (VW's `--bag M [--greedify]`).

M oracles learn the same stream, each reward with an independent Poisson(1) bootstrap weight (the
online bootstrap of Oza & Russell 2001, as VW's `bs` reduction draws it); the policy plays the
greedy arm of a member chosen uniformly at random: p(a) is the share of members whose greedy arm is
a, ties split evenly (Bietti, Agarwal, Langford, "A Contextual Bandit Bake-off", JMLR 2021).
"""

from __future__ import annotations

import math

import numpy as np

from agents.base import register
from agents.oracle_ensemble import OracleEnsemble
from agents.params import IntLogUniform

__all__ = ["Bag", "BagGreedy", "poisson1", "POISSON_MAX"]

POISSON_MAX = 20        # the largest bootstrap weight drawn (P(k > 20) < 1e-19; VW's bs caps at 20 as well)
# cdf of Poisson(1) at 0..POISSON_MAX - 1: P(k <= j) = e^-1 sum_{i <= j} 1 / i!
_CDF = np.cumsum([math.exp(-1.0) / math.factorial(j) for j in range(POISSON_MAX)])


def poisson1(u: np.ndarray) -> np.ndarray:
    """Poisson(1) draws (int64, same shape) from uniforms u in [0, 1) by inverting the CDF: the smallest
    k with u < P(K <= k), capped at POISSON_MAX. One uniform a draw, so each instance's weights come
    from its own stream alone."""
    return np.searchsorted(_CDF, u, side="right")


@register("Bag")
class Bag(OracleEnsemble):
    """Bootstrapped regression oracles (the Bake-off's Bag, VW's `--cb_explore_adf --bag M`).

    p(a) = (1/M) sum_i 1{a = argmax_b f_i(x_b)}, ties of a member split evenly over its maximisers
    (VW's default, without `--first_only`). After a reward y of the arm a drawn with probability p,
    member i learns (x_a, y) with weight k_i / p, k_i ~ Poisson(1) drawn from the instance's own stream
    by `poisson1` (one uniform per member and round): VW's bag repeats the base learner's update k_i
    times, and its base (`--cb_type mtr`, the default) is importance-weighted regression on the chosen
    arm. One update of weight k_i / p stands for k_i updates of weight 1 / p: the same for the ridge
    oracle, to first order in the step for a gradient oracle. A reward of probability 0 (a logged arm
    the policy would not play) gets weight k_i. Before any reward every member predicts alike, so the
    first policy is uniform.

    Args:
        M: the number of bootstrapped oracles (default 4, the Bake-off's).
        oracle, lam, lr: the regression oracle (agents.oracle.OracleAgent), one per member.
    """

    search_space = {"M": IntLogUniform(2, 32)}          # and lam
    greedify = False    # Bag-greedy: member 0 learns every reward with k = 1 (VW's --greedify)

    def __init__(self, *, M: int = 4, oracle="ridge", lam: float = 1.0, lr: float | None = None, seed=None,
                 dim: int | None = None):
        super().__init__(oracle=oracle, lam=lam, lr=lr, seed=seed, dim=dim, M=M)

    def _policy(self, X: np.ndarray) -> np.ndarray:
        return self.votes(X).mean(axis=0)

    def _policy1(self, X: np.ndarray) -> np.ndarray:
        return self.votes1(X).mean(axis=0)

    def weights(self) -> np.ndarray:
        """(M, N) bootstrap weights k of this round's update, drawn from the instances' streams (M - 1 of
        them with `greedify`, whose member 0 takes k = 1 without a draw, as VW's)."""
        first = int(self.greedify)
        k = np.ones((self.M, self.n_))
        k[first:] = poisson1(self.rng_.random((self.n_, self.M - first))).T
        return k

    def _learn(self, X: np.ndarray, a: np.ndarray, y: np.ndarray, p: np.ndarray) -> None:
        x = X[np.arange(self.n_), a].astype(float, copy=False)
        iw = np.ones(self.n_)
        np.divide(1.0, p, out=iw, where=p > 0)                              # 1 / p, 1 where p = 0
        for member, k in zip(self.oracles_, self.weights()):
            member.update(x, y, k * iw)

    def _learn1(self, X: np.ndarray, a: int, y: float, p: float) -> None:
        if not all(hasattr(member, "update1") for member in self.oracles_):
            return self._generic_learn1(X, a, y, p)
        x = X[a].astype(float)
        iw = 1.0 / p if p > 0 else 1.0
        for member, k in zip(self.oracles_, self.weights()[:, 0].tolist()):
            member.update1(x, y, k * iw)


@register("Bag-greedy")
class BagGreedy(Bag):
    """Bag whose first oracle learns every reward (bootstrap weight 1), VW's `--bag M --greedify`.

    The greedy member's arm always gets at least 1/M of the probability: the Bake-off's best bagging
    variant ("Bag-greedy", N = 4). Everything else as `Bag`.

    Args:
        M: the number of oracles (default 4, the Bake-off's), the greedy one included.
        oracle, lam, lr: the regression oracle (agents.oracle.OracleAgent), one per member.
    """

    greedify = True
