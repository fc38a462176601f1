"""dLinUCB (Wu, Iyer, Wang 2018, "Learning Contextual Bandits in a Non-stationary Environment", Alg. 1):
a master that keeps a set of LinUCB "slave" models, each scored by its recent rate of badly predicted
rewards, acts with the least bad one, discards the bad and starts a new one when none is good enough.

As Russac et al. (2019) run it as their baseline (YRussac/WeightedLinearBandits, dLinUCB_class.py, from
the authors' NonstationaryBanditLib), so that their figures can be reproduced:

- after a reward y of features x, slave m predicts it well when |<x, theta_m> - y| <= beta_m ||x||_{V_m^{-1}}
  + eta, eta = sqrt(2) sigma erfinv(1 - delta); only the slaves that predict it well learn it (ridge, V_m
  and b_m); each keeps its failures e_m in {0, 1};
- badness d_m = the mean of its last tau failures, with the confidence sqrt(log(1 / delta_2) / (2 n)), n the
  failures counted (at most tau); a slave with d_m >= cb + delta is discarded; if no slave has
  d_m < cb + tilde_delta (or none is left), a new one starts;
- the master acts with the slave of least d_m - sqrt(log tau) cb (a new slave: d = 0, cb = 1/2), the
  first of the least in order of creation, by LinUCB's index with beta_m = sqrt(lam) S + sigma sqrt(2 log(1
  / delta) + d log(1 + t_m / (lam d))), alpha times; t_m counts from the round the slave was created, as
  in that code (its creation round plus its updates).
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import erfinv

from agents.base import BaseAgent, argmax_probs, register
from agents.linalg import rls_update_
from agents.params import Int, Real

__all__ = ["DynamicLinUCB"]


class _Slave:
    """One LinUCB model: W = [V^{-1} | theta_hat], its clock t_m and its failures (the last tau kept)."""

    def __init__(self, d: int, lam: float, created: int):
        self.W = np.zeros((d, d + 1))
        self.W[:, :d] = np.eye(d) / lam
        self.time = created
        self.fails: list[int] = []
        self.badness, self.cb = 0.0, 0.5


@register("dLinUCB")
class DynamicLinUCB(BaseAgent):
    """dLinUCB (Wu, Iyer, Wang 2018, Alg. 1) as Russac et al. (2019) run it: the module docstring.

    Defaults: the constructor of Russac et al.'s code (tau = 200, delta = 0.01, delta_2 = 0.01,
    tilde_delta = 0.002, alpha = 1, sigma = 1, S = 1) with lam = 0.1, the lambda of their experiments
    (their constructor's default is 0.01).

    Args:
        tau: failures that estimate a slave's badness.
        delta: confidence of the slaves' LinUCB and of eta; also the badness that discards a slave.
        delta_2: confidence of the badness estimate.
        tilde_delta: badness below which a slave counts as good (none good: a new slave).
        alpha: width multiplier.
        lam: regulariser lambda of every slave.
        sigma: noise scale.
        S: bound on ||theta*||.
    """

    params = {"tau": Int(ge=1), "delta": Real(gt=0, lt=1), "delta_2": Real(gt=0, lt=1), "tilde_delta": Real(ge=0),
              "alpha": Real(ge=0), "lam": Real(gt=0), "sigma": Real(gt=0), "S": Real(gt=0)}

    def __init__(self, *, tau: int = 200, delta: float = 0.01, delta_2: float = 0.01, tilde_delta: float = 0.002,
                 alpha: float = 1.0, lam: float = 0.1, sigma: float = 1.0, S: float = 1.0, seed=None,
                 dim: int | None = None):
        self.tau, self.delta, self.delta_2, self.tilde_delta = tau, delta, delta_2, tilde_delta
        self.alpha, self.lam, self.sigma, self.S = alpha, lam, sigma, S
        super().__init__(seed=seed, dim=dim)

    def _start(self, X):
        self.slaves_ = [[_Slave(self.d_, self.lam, 0)] for _ in range(self.n_)]
        self.created_ = np.zeros(self.n_, np.int64)      # slaves started after the first, per instance

    def _beta(self, slave: _Slave) -> float:
        d = self.d_
        return math.sqrt(self.lam) * self.S + self.sigma * math.sqrt(
            2.0 * math.log(1.0 / self.delta) + d * math.log(1.0 + slave.time / (self.lam * d)))

    def _master(self, i: int) -> _Slave:
        """Instance i's slave of least badness LCB d_m - sqrt(log tau) cb_m (the first such)."""
        root = math.sqrt(math.log(self.tau))
        return min(self.slaves_[i], key=lambda s: s.badness - root * s.cb)

    def _scores(self, X: np.ndarray) -> np.ndarray:
        scores = np.empty(X.shape[:2])
        for i in range(self.n_):
            slave, d = self._master(i), self.d_
            XW = X[i] @ slave.W
            width = np.sqrt(np.einsum("kd,kd->k", XW[:, :d], X[i]))
            scores[i] = XW[:, d] + self.alpha * self._beta(slave) * width
        return scores

    def act(self, obs):
        """LinUCB's arm of the master's slave for each instance."""
        X = self._check_obs(obs, finite=True)
        return self._unwrap(self._argmax(self._scores(X)))

    def observe(self, obs, action, reward) -> None:
        """Score every slave on the reward, update those that predicted it, discard and create slaves."""
        X = self._check_obs(obs)
        a, y = self._feedback(X, action, reward)
        eta = math.sqrt(2.0) * self.sigma * float(erfinv(1.0 - self.delta))
        d = self.d_
        for i, (arm, r) in enumerate(zip(a.tolist(), y.tolist())):
            x = X[i, arm].astype(float)
            create, discard = True, []
            for slave in self.slaves_[i]:
                r_x = x @ slave.W
                if abs(r_x[d] - r) <= math.sqrt(max(float(r_x[:d] @ x), 0.0)) * self._beta(slave) + eta:
                    rls_update_(slave.W, x, (r,))
                    slave.time += 1
                    slave.fails.append(0)
                else:
                    slave.fails.append(1)
                del slave.fails[:-self.tau]
                slave.badness = sum(slave.fails) / len(slave.fails)
                slave.cb = math.sqrt(math.log(1.0 / self.delta_2) / (2 * len(slave.fails)))
                if slave.badness < slave.cb + self.tilde_delta:
                    create = False
                elif slave.badness >= slave.cb + self.delta:
                    discard.append(slave)
            self.slaves_[i] = [s for s in self.slaves_[i] if s not in discard]
            if create or not self.slaves_[i]:
                self.slaves_[i].append(_Slave(d, self.lam, self.t_ + 1))
                self.created_[i] += 1
        self.t_ += 1

    def _probs(self, X):
        return argmax_probs(self._scores(X))
