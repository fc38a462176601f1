"""Online Cover and Cover-NU (Agarwal, Hsu, Kale, Langford, Li, Schapire, ICML 2014, "Taming the Monster"),
as the Contextual Bandit Bake-off (Bietti, Agarwal, Langford, JMLR 2021) and VW's `--cover M --psi P
[--nounif]` run it: M policies, each the greedy policy of a cost-sensitive regressor (an oracle
that learns an estimated reward for every arm each round), trained so that they disagree.

With mu_t = min(1/K, 1/sqrt(K t)) after t rewards (1/K at t = 0), the policy is

    p_t(a) = mu_t + (1 - K mu_t) (1/M) sum_i 1{pi_i(x_t) = a}        (Cover; Cover-NU: mu_t = 0 here)

(ties of a policy split evenly). After the reward y of the arm a_t drawn with probability p:
r_hat(b) is the doubly robust estimate f_1(x_b) + 1{b = a_t} (y - f_1(x_b)) / p (or, with
`estimator="ips"`, the inverse-propensity one 1{b = a_t} y / p); policy 1 learns the data as is,
and policy i >= 2 learns r_hat(b) + psi mu_t / (mu_t + (1 - K mu_t) q_i(b)) for every arm b, where
q_i is the vote share of the policies before it on x_t: a bonus for the arms they leave uncovered.
"""

from __future__ import annotations

import math

import numpy as np

from agents.base import argmax_probs, check_chosen, register
from agents.oracle_ensemble import OracleEnsemble
from agents.params import IntLogUniform, LogUniform, Options, Real

__all__ = ["Cover", "CoverNU", "floor"]


def floor(num_arms: int, t: int) -> float:
    """mu_t = min(1/K, 1/sqrt(K t)), the smallest probability of an arm of Cover after t rewards (1/K at
    t = 0, as VW's min(1/K, 1/sqrt(0)))."""
    return 1.0 / num_arms if t == 0 else min(1.0 / num_arms, 1.0 / math.sqrt(num_arms * t))


@register("Cover")
class Cover(OracleEnsemble):
    """Online Cover (Agarwal et al. 2014; the Bake-off's Cover, VW's `--cover M --psi P`): the module docstring.

    Choices where the sources differ:
    - the uniform part is the Bake-off's mixture mu_t + (1 - K mu_t) share(a); VW instead raises the
      arms below mu_t to it and rescales the others (the same when every share is 0 or >= mu_t);
    - q_i is the share of the policies before i as they voted on x_t when the arm was drawn (VW's
      order: its learn pass predicts each policy before updating it); the Bake-off's pseudocode uses
      the already updated ones;
    - `estimator="dr"` (default) is VW's default arrangement (`--cb_type mtr`): policy 1 learns the
      chosen arm's reward by importance-weighted regression (weight 1 / p) and is the reward model of
      the doubly robust estimates the other policies learn, each arm with weight 1. With "ips", every
      policy learns the inverse-propensity estimates of all arms (VW's `--cb_type ips`);
    - a reward of probability 0 (a logged arm the policy would not play) is weighted 1 instead of 1 / p.

    Each round costs M predictions and 1 + (M - 1) K oracle updates ("ips": M K).

    Args:
        M: the number of policies (default 4, the Bake-off's `cover:4`).
        psi: the weight psi of the disagreement bonus (default 0.1, the Bake-off's; VW's default 1).
        estimator: "dr" or "ips", the reward estimates the policies learn (above).
        oracle, lam, lr: the regression oracle (agents.oracle.OracleAgent), one per policy.
    """

    params = {"psi": Real(ge=0), "estimator": Options("dr", "ips")}
    search_space = {"M": IntLogUniform(2, 16), "psi": LogUniform(0.01, 1.0)}       # and lam
    uniform = True      # mix in the uniform floor mu_t (Cover); False: Cover-NU

    def __init__(self, *, M: int = 4, psi: float = 0.1, estimator: str = "dr", oracle="ridge", lam: float = 1.0,
                 lr: float | None = None, seed=None, dim: int | None = None):
        super().__init__(oracle=oracle, lam=lam, lr=lr, seed=seed, dim=dim, M=M, psi=psi, estimator=estimator)

    def _policy(self, X: np.ndarray) -> np.ndarray:
        return self._mix(self.votes(X).mean(axis=0), X.shape[1])

    def _policy1(self, X: np.ndarray) -> np.ndarray:
        return self._mix(self.votes1(X).mean(axis=0), len(X))

    def _mix(self, share: np.ndarray, K: int) -> np.ndarray:
        """The policy from the vote shares of K arms: with the floor mu_t (Cover), or as they are (Cover-NU)."""
        if not self.uniform:
            return share
        mu = floor(K, self.t_)
        return mu + (1.0 - K * mu) * share

    def _learn(self, X: np.ndarray, a: np.ndarray, y: np.ndarray, p: np.ndarray) -> None:
        check_chosen(X)                         # every arm is learned: all their features enter the statistics
        n, K = X.shape[:2]
        rows = np.arange(n)
        f = self.predictions(X)                 # (M, N, K), before this round's updates
        iw = np.ones(n)
        np.divide(1.0, p, out=iw, where=p > 0)  # 1 / p, 1 where p = 0
        chosen = np.zeros((n, K))
        chosen[rows, a] = 1.0
        if self.estimator == "dr":
            r_hat = f[0] + chosen * ((y - f[0, rows, a]) * iw)[:, None]
            self.oracles_[0].update(X[rows, a].astype(float, copy=False), y, iw)
        else:
            r_hat = chosen * (y * iw)[:, None]
            self._regress(self.oracles_[0], X, r_hat)
        mu = floor(K, self.t_)
        votes = argmax_probs(f)
        for i in range(1, self.M):
            q = votes[:i].mean(axis=0)          # q_i: the policies before i
            self._regress(self.oracles_[i], X, r_hat + self.psi * mu / (mu + (1.0 - K * mu) * q))

    def _learn1(self, X: np.ndarray, a: int, y: float, p: float) -> None:
        """`_learn` of one instance (X (K, d), Python scalars): the same arithmetic on (M, K) and (K,) arrays."""
        check_chosen(X)
        K = len(X)
        f = self.predictions1(X)
        iw = 1.0 / p if p > 0 else 1.0
        chosen = np.zeros(K)
        chosen[a] = 1.0
        if self.estimator == "dr":
            r_hat = f[0] + chosen * ((y - f.item(0, a)) * iw)
            first = self.oracles_[0]
            if hasattr(first, "update1"):
                first.update1(X[a].astype(float), y, iw)
            else:
                first.update(X[a][None].astype(float), np.array([y]), np.array([iw]))
        else:
            r_hat = chosen * (y * iw)
            self._regress(self.oracles_[0], X[None], r_hat[None])
        mu = floor(K, self.t_)
        votes = argmax_probs(f)
        for i in range(1, self.M):
            q = votes[:i].mean(axis=0)
            self._regress(self.oracles_[i], X[None], (r_hat + self.psi * mu / (mu + (1.0 - K * mu) * q))[None])

    def _regress(self, oracle, X: np.ndarray, targets: np.ndarray) -> None:
        """One update of weight 1 per arm b in turn: (x_b, targets[:, b]), the cost-sensitive oracle's step
        (one call of the oracle's `update_arms` where it has one: the ridge oracle's one step over its blocks)."""
        if hasattr(oracle, "update_arms"):
            oracle.update_arms(X, targets, np.ones(targets.shape))
            return
        ones = np.ones(self.n_)
        for b in range(X.shape[1]):
            oracle.update(X[:, b].astype(float, copy=False), targets[:, b], ones)


@register("Cover-NU")
class CoverNU(Cover):
    """Online Cover without the uniform floor (the Bake-off's Cover-NU, VW's `--cover M --psi P --nounif`):
    p_t(a) = (1/M) sum_i 1{pi_i(x_t) = a}, ties split evenly; the policies learn as Cover's, the
    disagreement bonus still with mu_t = min(1/K, 1/sqrt(K t)). Defaults as the Bake-off's best
    fixed setting, `cover:4 psi:0.1 nounif`. An arm no policy picks has probability 0. (VW's `--nounif`
    still raises the arms of positive share below mu_t to it, uniform over the voted arms while
    K mu_t = 1; here the shares stay as they are.)

    Args:
        M: the number of policies (default 4).
        psi: the weight of the disagreement bonus (default 0.1).
        estimator: "dr" (policy 1 by importance-weighted regression, the others on doubly robust
            estimates) or "ips" (Cover's).
        oracle, lam, lr: the regression oracle (agents.oracle.OracleAgent), one per policy.
    """

    uniform = False
