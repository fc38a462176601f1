"""Regression oracles and the one base of the agents built on them (the Contextual Bandit Bake-off's family).

An oracle is any online regressor of the reward on an arm's features: the agents of Foster &
Rakhlin 2020 (SquareCB), Simchi-Levi & Xu 2020 (FALCON), Foster et al. 2018 (RegCB), Agarwal et
al. 2014 (Cover) and the bootstrap (Bag) differ only in how they turn its predictions into a
distribution over the arms, and in the weights of the examples they feed it. One protocol serves
them all, batched over N independent instances like every agent of the zoo:

    oracle.start(n, d, seqs)    fresh state for n instances of d features (seqs: their SeedSequences)
    oracle.predict(X)           X (N, K, d) -> (N, K) predicted rewards
    oracle.update(x, y, w)      x (N, d) features, y (N,) targets, w (N,) importance weights >= 0:
                                one step of weighted squared loss, w (y - f(x))^2

`make_oracle(spec, lam=...)` turns an agent's `oracle` hyper-parameter into one: "ridge" (the
default, `RidgeOracle`: closed-form weighted ridge regression, exact), or an object that already
has the three methods. An oracle object given by the user is a prototype: each agent (and each
`reset`) works on its own deep copy, so one object can be passed to many agents.

`OracleAgent` is the base of the family: a subclass gives `_policy(X) -> (N, K)`, the distribution
the next action is drawn from (a deterministic function of the state, so `action_probs` is exact:
it is the policy), and `_learn(X, a, y, p)`, what to do with a reward (by default, `iwr`: one
oracle update on the chosen arm with importance weight 1 / p, the importance-weighted regression
of the Bake-off, or weight 1 with `iwr = False`). An action is drawn by inverting the policy's
cumulative distribution with one uniform of the instance's own stream, so instance i of a batched
agent seeded [s_1, .., s_N] makes the choices of a single agent seeded s_i.

`observe(obs, action, reward)` needs the chosen arm's probability: the policy of the last `act`
when obs is the array that act was given, else the policy recomputed on obs (the same numbers while
the state has not changed since). A reward the current policy could not have drawn (probability 0:
a delayed or logged action) is learned with weight 1.
"""

from __future__ import annotations

import copy
import math
from typing import Protocol, runtime_checkable

import numpy as np

from agents.base import BaseAgent
from agents.linalg import rls_update_
from agents.params import Real

__all__ = ["Oracle", "RidgeOracle", "OracleSpec", "make_oracle", "OracleAgent", "sample_arms"]


@runtime_checkable
class Oracle(Protocol):
    """An online weighted least-squares regressor for N instances (the module docstring)."""

    def start(self, n: int, d: int, seqs: list) -> None: ...

    def predict(self, X: np.ndarray) -> np.ndarray: ...

    def update(self, x: np.ndarray, y: np.ndarray, w: np.ndarray) -> None: ...


class RidgeOracle:
    """Weighted ridge regression in closed form: theta = V^{-1} b, V = lam I + sum w x x^T, b = sum w y x.

    Exact (no learning rate): the least-squares oracle of the papers' analyses with the linear
    class. An update with weight w is the rank-one step of sqrt(w) x with target sqrt(w) y
    (`agents.linalg.rls_update_` on the augmented [V^{-1} | theta]), O(d^2) per instance; w = 0
    changes nothing. `width(X)` is ||x||_{V^{-1}} of every arm, (N, K): the half-width of the
    confidence ellipsoid that RegCB's bounds scale.
    """

    def __init__(self, lam: float = 1.0):
        if not (isinstance(lam, (int, float)) and math.isfinite(lam) and lam > 0):
            raise ValueError(f"RidgeOracle: lam must be a finite number > 0, got {lam!r}")
        self.lam = lam

    def start(self, n: int, d: int, seqs: list) -> None:
        self.W_ = np.zeros((n, d, d + 1))
        self.W_[:, np.arange(d), np.arange(d)] = 1.0 / self.lam

    @property
    def theta(self) -> np.ndarray:
        """(N, d) ridge estimates."""
        return self.W_[:, :, -1]

    def predict(self, X: np.ndarray) -> np.ndarray:
        return (X @ self.W_[:, :, -1:])[..., 0]

    def width(self, X: np.ndarray) -> np.ndarray:
        """(N, K) sqrt(x^T V^{-1} x) of every arm."""
        d = X.shape[-1]
        return np.sqrt(np.maximum(np.einsum("nkd,nkd->nk", X @ self.W_[:, :, :d], X), 0.0))

    def update(self, x: np.ndarray, y: np.ndarray, w: np.ndarray) -> None:
        s = np.sqrt(w)
        rls_update_(self.W_, x * s[:, None], (y * s)[:, None])


ORACLES = {"ridge": RidgeOracle}


class OracleSpec:
    """The params rule of an agent's `oracle`: a registered name ("ridge", ...) or an `Oracle` object."""

    def accepts(self, value) -> bool:
        return (isinstance(value, str) and value in ORACLES) or isinstance(value, Oracle)

    def __str__(self) -> str:
        return (f"one of {', '.join(map(repr, ORACLES))} or an object with start(n, d, seqs), predict(X) and "
                "update(x, y, w) (agents.oracle.Oracle)")


def make_oracle(spec, **settings) -> Oracle:
    """A fresh oracle of `spec`: a name of `ORACLES` built with the settings it takes (ridge: lam), or a
    deep copy of an `Oracle` object (its own settings win; `settings` are for the named oracles)."""
    if isinstance(spec, str):
        cls = ORACLES[spec]
        import inspect

        takes = inspect.signature(cls).parameters
        return cls(**{k: v for k, v in settings.items() if k in takes})
    return copy.deepcopy(spec)


def sample_arms(P: np.ndarray, u: np.ndarray) -> np.ndarray:
    """(N,) arms drawn from the rows of P (N, K) by inverting their CDFs at u (N,) uniforms in [0, 1):
    the arm a with cdf_{a-1} <= u * total < cdf_a, so an arm of probability 0 is never drawn."""
    cdf = np.cumsum(P, axis=1)
    return (cdf <= u[:, None] * cdf[:, -1:]).sum(axis=1)


class OracleAgent(BaseAgent):
    """The base of the regression-oracle agents: a policy from the oracle's predictions, sampled exactly.

    Subclasses declare `params`, store their hyper-parameters, call `super().__init__(oracle=..,
    lam=.., seed=seed, dim=dim)` and give `_policy(X) -> (N, K)`; `_learn` and `_init_state` are
    hooks. `oracle_` is the instances' oracle, built in `_start` from `oracle` and `lam`.

    Args (of every agent of the family):
        oracle: "ridge" (closed-form weighted ridge regression) or an `Oracle` object (copied).
        lam: the ridge oracle's regulariser lambda (V_0 = lam I).
    """

    params = {"oracle": OracleSpec(), "lam": Real(gt=0)}
    iwr = True          # learn by importance-weighted regression on the chosen arm (weight 1 / p)

    def __init__(self, *, oracle="ridge", lam: float = 1.0, seed=None, dim: int | None = None, **hyperparameters):
        super().__init__(oracle=oracle, lam=lam, seed=seed, dim=dim, **hyperparameters)

    def _start(self, X: np.ndarray) -> None:
        self.oracle_ = make_oracle(self.oracle, lam=self.lam)
        self.oracle_.start(self.n_, self.d_, self.seqs_)
        self._acted = None      # (obs, round, policy) of the last act, for observe
        self._init_state(X)

    def _init_state(self, X: np.ndarray) -> None:
        """Family state beyond the oracle, once the first obs X (N, K, d) fixes N and d (hook)."""

    def _predict(self, X: np.ndarray) -> np.ndarray:
        """The oracle's (N, K) predictions, or a ValueError if any is NaN or inf."""
        f = np.asarray(self.oracle_.predict(X), dtype=float)
        if f.shape != X.shape[:2]:
            raise ValueError(f"the oracle's predict returned shape {f.shape} for obs {X.shape}; it must return "
                             f"(N, K) = {X.shape[:2]}")
        if not np.isfinite(f).all():
            raise ValueError("the oracle's predictions are not finite: obs contains NaN or inf, or the oracle "
                             "diverged (lower its learning rate)")
        return f

    def _policy(self, X: np.ndarray) -> np.ndarray:
        """(N, K) distribution of the next action on X (N, K, d), computed without changing the agent."""
        raise NotImplementedError

    def _probs(self, X: np.ndarray) -> np.ndarray:
        return self._policy(X)

    def act(self, obs):
        """An arm of obs (K, d) -> int, or one per instance of obs (N, K, d) -> (N,): drawn from `_policy`."""
        X = self._check_obs(obs)
        P = self._policy(X)
        self._acted = obs, self.t_, P
        return self._unwrap(sample_arms(P, self.rng_.random(self.n_)))

    def observe(self, obs, action, reward) -> None:
        """Learn the reward of the chosen arm (int and float, or (N,) arrays when batched)."""
        X = self._check_obs(obs)
        a, y = self._feedback(X, action, reward)
        acted = getattr(self, "_acted", None)
        P = acted[2] if acted is not None and acted[0] is obs and acted[1] == self.t_ else self._policy(X)
        self._acted = None
        self._learn(X, a, y, P[np.arange(self.n_), a])
        self.t_ += 1

    def _learn(self, X: np.ndarray, a: np.ndarray, y: np.ndarray, p: np.ndarray) -> None:
        """The update after the rewards y (N,) of the arms a (N,), drawn with probabilities p (N,):
        the oracle learns the chosen arm's reward, with weight 1 / p (`iwr`) or 1."""
        x = X[np.arange(self.n_), a].astype(float, copy=False)
        w = np.ones(self.n_)
        if self.iwr:
            np.divide(1.0, p, out=w, where=p > 0)
        self.oracle_.update(x, y, w)
