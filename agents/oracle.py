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

`make_oracle(spec, lam=..., lr=...)` turns an agent's `oracle` hyper-parameter into one:

    "ridge"   `RidgeOracle`: closed-form weighted ridge regression, exact (the default; takes lam);
    "sgd"     `SGDOracle`: an online linear model by SGD, VW's default update (adaptive, normalized,
              importance-invariant: the Contextual Bandit Bake-off's learner; takes lr);
    "mlp"     `MLPOracle`: a small ReLU network trained by Adam on a replay buffer (PyTorch; takes lr);
    an object with the three methods (an `Oracle`), used as it is;
    a scikit-learn-style regressor (`partial_fit(X, y[, sample_weight])` and `predict(X)`, e.g.
              SGDRegressor()) or a river-style one (`learn_one(x, y[, w])` and `predict_one(x)`, e.g.
              river.linear_model.LinearRegression()), wrapped by `SklearnOracle` / `RiverOracle`.

An oracle may give more, which the agents use where it is there (the ridge oracle gives all of them
but the sensitivity): `width(X)` (RegCB's confidence widths), `sensitivity(X, Y)` (VW's change of f(x)
per unit weight of an example (x, y): RegCB's bounds on the sgd oracle), `update_arms(X, Y, W)` (an
update per arm in turn, Cover's cost-sensitive step), `layout(K)` (told the number of arms before its
first update: FALCON's fresh oracles) and the one-instance forms `predict1(X)` (X (K, d) -> (K,)) and
`update1(x, y, w)` (x (d,), Python floats), which a single agent's rounds call (`OracleAgent`).

An object given by the user is a prototype: each agent (and each `reset`) works on its own deep
copy, and a wrapped regressor on one deep copy per instance, so one object can be passed to many
agents. Its own settings win; `lam` and `lr` are for the named oracles (lr=None: the oracle's default).

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
import importlib.util
import inspect
import math
import numbers
from typing import Protocol, runtime_checkable

import numpy as np

from agents.base import F64, BaseAgent, Streams, check_chosen, check_single_feedback
from agents.linalg import rls_update_
from agents.linear import arm_scores, arm_scores1, einsum
from agents.params import Device, LogUniform, Real, Widths

__all__ = ["Oracle", "RidgeOracle", "SGDOracle", "MLPOracle", "SklearnOracle", "RiverOracle", "ORACLES", "OracleSpec",
           "make_oracle", "OracleAgent", "sample_arms", "sample_arm", "predict", "predict1", "oracle_seqs"]

ORACLE_KEY = 0x0AC      # first spawn-key element of an oracle's own streams (the agent's streams use 0-3)


def oracle_seqs(seqs: list, *key: int) -> list:
    """The SeedSequences of an oracle's own random streams: children (ORACLE_KEY, *key) of the instances'
    seqs, so an oracle's draws (a network's initialisation, its minibatches) never repeat the agent's."""
    return [np.random.SeedSequence(s.entropy, spawn_key=s.spawn_key + (ORACLE_KEY, *key), pool_size=s.pool_size)
            for s in seqs]


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

    Block-disjoint features. On a classification bandit (the disjoint encoding of
    `CtxBandit/Supervised-v0` and the UCI ids) arm k's features are nonzero only in block k of
    p = d / K, so every update's x lies in one aligned block and V stays block-diagonal: the
    oracle is K independent ridge regressions of size p. The oracle finds this out itself. The
    first X it is shown (`predict`, `width`, `update_arms`) fixes the layout, K blocks of p = d / K
    (when K > 1 divides d and d >= `BLOCK_MIN_D`: below, the dense form's few products cost less
    than the bookkeeping); each instance then keeps [V_k^{-1} | theta_k] per block (`B_`, (N, K, p,
    p + 1)), an update costs O(p^2) instead of O(d^2), and the predictions and widths of an X whose
    arm k lies in block k (two counts of nonzeros tell it) are computed per block, O(K p) and
    O(K p^2) instead of O(K d) and O(K d^2). The first update of an instance whose x is not inside
    one block turns that instance to the dense form for good (`W_`, rebuilt from its blocks: they
    are the diagonal blocks of V^{-1}, zeros elsewhere), as does an update before any X was shown.
    Both forms are exact; they differ by rounding only (the products add in another order).
    `blocks=False` keeps the dense form throughout.

    Beyond the protocol: `update_arms(X, Y, W)` (an update per arm, as Cover's cost-sensitive
    policies learn: one batched step over the K blocks), and the one-instance forms `predict1`,
    `update1` that a single agent's rounds call (the same kernels as the batched forms on
    instance 0's views, so the same bits).
    """

    BLOCK_MIN_D = 32        # the block form from this many features on

    def __init__(self, lam: float = 1.0, blocks: bool = True):
        if not (isinstance(lam, (int, float)) and math.isfinite(lam) and lam > 0):
            raise ValueError(f"RidgeOracle: lam must be a finite number > 0, got {lam!r}")
        if not isinstance(blocks, (bool, np.bool_)):
            raise ValueError(f"RidgeOracle: blocks must be a bool, got {blocks!r}")
        self.lam, self.blocks = lam, blocks

    def start(self, n: int, d: int, seqs: list) -> None:
        self.n_, self.d_ = n, d
        self.k_ = None                      # the blocks of the layout; None before the first X, 0: none
        self.p_ = 0                         # their size
        self.B_ = None                      # (n, K, p, p + 1) [V_k^{-1} | theta_k] of the block instances
        self.W_ = None                      # (n, d, d + 1) [V^{-1} | theta] of the dense instances' rows
        self.dense_ = np.zeros(n, bool)     # the instances in the dense form
        self.all_dense_ = False             # every instance in the dense form (the fast test of the usual case)

    def layout(self, K: int) -> None:
        """Fix the layout for X of K arms, as the first X shown does (no-op once fixed): K blocks, or the
        dense form for every instance (K = 0: an update before any X)."""
        if self.k_ is not None:
            return
        d = self.d_
        if self.blocks and K > 1 and d % K == 0 and d >= self.BLOCK_MIN_D:
            self.k_, self.p_ = K, d // K
            self.B_ = np.zeros((self.n_, K, self.p_, self.p_ + 1))
            self.B_[:, :, np.arange(self.p_), np.arange(self.p_)] = 1.0 / self.lam
            self._diag = np.arange(K) * (K + 1)             # the rows of X.reshape(K * K, p) in arm k's own block
        else:
            self.k_ = 0
            self._densify(np.arange(self.n_))

    def _densify(self, rows: np.ndarray) -> None:
        """Turn the instances `rows` to the dense form: V^{-1} block-diagonal from their blocks (1/lam I
        before the layout), theta their concatenation."""
        n, d = self.n_, self.d_
        if self.W_ is None:
            self.W_ = np.zeros((n, d, d + 1))
        if self.B_ is None:
            self.W_[np.ix_(rows, np.arange(d), np.arange(d))] = np.eye(d) / self.lam
        else:
            K, p = self.k_, self.p_
            idx = np.arange(d).reshape(K, p)
            for i in rows.tolist():
                self.W_[i] = 0.0
                self.W_[i, idx[:, :, None], idx[:, None, :]] = self.B_[i, :, :, :p]
                self.W_[i, idx, d] = self.B_[i, :, :, p]
        self.dense_[rows] = True
        self.all_dense_ = bool(self.dense_.all())

    @property
    def theta(self) -> np.ndarray:
        """(N, d) ridge estimates."""
        out = np.zeros((self.n_, self.d_))
        if self.B_ is not None:
            out[:] = self.B_[..., -1].reshape(self.n_, self.d_)
        if self.W_ is not None:
            out[self.dense_] = self.W_[self.dense_, :, -1]
        return out

    @property
    def V_inv(self) -> np.ndarray:
        """(N, d, d) V^{-1}, assembled (a copy)."""
        if self.k_ is None:
            return np.broadcast_to(np.eye(self.d_) / self.lam, (self.n_, self.d_, self.d_)).copy()
        out = np.zeros((self.n_, self.d_, self.d_))
        if self.B_ is not None:
            idx = np.arange(self.d_).reshape(self.k_, self.p_)
            out[:, idx[:, :, None], idx[:, None, :]] = self.B_[..., :-1]
        if self.W_ is not None:
            out[self.dense_] = self.W_[self.dense_, :, :-1]
        return out

    def _local(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
        """(rows, Xb): the block instances whose X (N, K, d) has arm k inside block k, and their
        arms' own blocks (len(rows), K, p); the other rows take the dense formulas."""
        N, K, d = X.shape
        if self.k_ is None:
            self.layout(K)
        if K != self.k_ or self.all_dense_:
            return _NONE, None
        p = self.p_
        if N == 1:
            if _between(X[0], K, d, p).any():
                return _NONE, None
            return _ONE, X[0].reshape(K * K, p)[self._diag][None]
        inside = ~_between(X, K, d, p).any(axis=(1, 2))
        rows = np.flatnonzero(inside & ~self.dense_)
        return rows, X[rows].reshape(len(rows), K * K, p)[:, self._diag]

    def _dense_rows(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """[V^{-1} | theta] (len(rows), d, d + 1) of `rows` for the dense formulas: W_'s rows, or a block
        instance's assembled."""
        if self.dense_[rows].all():
            return self.W_ if len(rows) == self.n_ else self.W_[rows]
        out = np.zeros((len(rows), self.d_, self.d_ + 1))
        out[:, :, :-1] = self.V_inv[rows]
        out[:, :, -1] = self.theta[rows]
        return out

    def predict(self, X: np.ndarray) -> np.ndarray:
        if self.all_dense_:
            return arm_scores(X, self.W_[:, :, -1])
        rows, Xb = self._local(X)
        if len(rows) == len(X):
            return (Xb * self.B_[:, :, :, -1]).sum(axis=-1)
        if not len(rows):
            return arm_scores(X, self._dense_rows(np.arange(len(X)))[:, :, -1])
        f = np.empty(X.shape[:2])
        f[rows] = (Xb * self.B_[rows, :, :, -1]).sum(axis=-1)
        rest = np.setdiff1d(np.arange(len(X)), rows)
        f[rest] = arm_scores(X[rest], self._dense_rows(rest)[:, :, -1])
        return f

    def width(self, X: np.ndarray) -> np.ndarray:
        """(N, K) sqrt(x^T V^{-1} x) of every arm."""
        if self.all_dense_:
            return _dense_width(X, self.W_)
        rows, Xb = self._local(X)
        out = np.empty(X.shape[:2])
        if len(rows):
            out[rows] = _block_width(Xb, self.B_[rows])
        if len(rows) < len(X):
            rest = np.setdiff1d(np.arange(len(X)), rows)
            out[rest] = _dense_width(X[rest], self._dense_rows(rest))
        return out

    def update(self, x: np.ndarray, y: np.ndarray, w: np.ndarray) -> None:
        s = np.sqrt(w)
        xs, ys = x * s[:, None], y * s
        if self.k_ is None:
            self.layout(0)                 # an update before any X: the dense form
        if self.all_dense_:
            rls_update_(self.W_, xs, ys[:, None])
            return
        if not self.dense_.all():
            N, K, p = len(xs), self.k_, self.p_
            nonzero = (xs.reshape(N, K, p) != 0).any(axis=2)            # (N, K): the blocks x touches
            inside = nonzero.sum(axis=1) <= 1
            k = nonzero.argmax(axis=1)                                  # its block (0 for x = 0)
            out = np.flatnonzero(~inside & ~self.dense_)
            if len(out):
                self._densify(out)
            rows = np.flatnonzero(~self.dense_)
            if len(rows):
                k = k[rows]
                G = self.B_[rows, k]
                rls_update_(G, xs[rows[:, None], k[:, None] * p + np.arange(p)], ys[rows, None])
                self.B_[rows, k] = G
        if self.dense_.any():
            if self.dense_.all():
                rls_update_(self.W_, xs, ys[:, None])
            else:
                rows = np.flatnonzero(self.dense_)
                G = self.W_[rows]
                rls_update_(G, xs[rows], ys[rows, None])
                self.W_[rows] = G

    def update_arms(self, X: np.ndarray, Y: np.ndarray, W: np.ndarray) -> None:
        """An update per arm, (X[:, b], Y[:, b], W[:, b]) for b = 0, .., K - 1 in turn (X (N, K, d), Y and W
        (N, K)): the same as K calls of `update`; one batched step over the K blocks of an instance
        whose arm k lies in block k."""
        rows, Xb = self._local(X)
        if len(rows) == len(X):
            N, K, p = Xb.shape
            s = np.sqrt(W)
            rls_update_(self.B_.reshape(N * K, p, p + 1), (Xb * s[:, :, None]).reshape(N * K, p),
                        (Y * s).reshape(N * K, 1))
            return
        for b in range(X.shape[1]):
            self.update(X[:, b].astype(float, copy=False), Y[:, b], W[:, b])

    # -- one instance (N = 1): the batched forms' kernels on instance 0's views ---------------------------
    def predict1(self, X: np.ndarray) -> np.ndarray:
        """`predict(X[None])[0]` of X (K, d), (K,)."""
        if self.all_dense_:
            return X.dot(self.W_[0, :, -1]) if X.size <= 20_000 else arm_scores1(X, self.W_[0, :, -1])
        K, p = len(X), self.p_
        if K == self.k_ and not _between(X, K, self.d_, p).any():       # (k_ is None or 0 before the blocks)
            return (X.reshape(K * K, p)[self._diag] * self.B_[0, :, :, -1]).sum(axis=-1)
        return self.predict(X[None])[0]

    def width1(self, X: np.ndarray) -> np.ndarray:
        """`width(X[None])[0]` of X (K, d), (K,)."""
        if self.all_dense_:
            XV = X @ self.W_[0, :, :-1]
            return np.sqrt(np.maximum(einsum("kd,kd->k", XV, X), 0.0))
        return self.width(X[None])[0]

    def update1(self, x: np.ndarray, y: float, w: float) -> None:
        """`update(x[None], [y], [w])` of x (d,) float64."""
        if w != 1.0:                        # (x * 1.0 is x: the batched form's product at w = 1)
            s = math.sqrt(w)
            x, y = x * s, y * s
        if self.k_ is None:
            self.layout(0)
        if not self.all_dense_:
            p = self.p_
            touched = np.flatnonzero(x)
            k = int(touched[0]) // p if len(touched) else 0
            if not len(touched) or touched[-1] < (k + 1) * p:
                rls_update_(self.B_[0, k], x[k * p:(k + 1) * p], (y,))
                return
            self._densify(np.arange(1))
        # `rls_update_(self.W_[0], x, (y,))` inline (its 1-D form: the same calls on the same arrays)
        W, d = self.W_[0], self.d_
        r = x.dot(W)
        u = r[:d]                                           # (V^{-1} x)^T
        denom = 1.0 + u.dot(x)
        r[d] = r.item(d) - y                                # `r[d] -= y` on Python floats (the same subtraction)
        W -= (u[:, None] / denom) * r


_NONE, _ONE = np.arange(0), np.arange(1)        # `RidgeOracle._local`'s rows: none, or the one instance


def _between(X: np.ndarray, K: int, d: int, p: int) -> np.ndarray:
    """The features of X (..., K, d) outside each arm's own block, (..., K - 1, d): in the flat (K d,) features of
    an instance arm k's block starts at k (d + p), so what lies between two blocks is d features, a view."""
    flat = X.reshape(*X.shape[:-2], K * d)
    return flat[..., :(K - 1) * (d + p)].reshape(*X.shape[:-2], K - 1, d + p)[..., p:]


def _dense_width(X: np.ndarray, W: np.ndarray) -> np.ndarray:
    """(N, K) sqrt(x^T V^{-1} x) of the arms of X (N, K, d), W (N, d, d + 1) = [V^{-1} | theta]."""
    return np.sqrt(np.maximum(einsum("nkd,nkd->nk", X @ W[:, :, :-1], X), 0.0))


def _block_width(Xb: np.ndarray, B: np.ndarray) -> np.ndarray:
    """(N, K) sqrt(x_k^T V_k^{-1} x_k) of arms whose features Xb (N, K, p) lie in their own blocks k, B (N, K, p,
    p + 1) = [V_k^{-1} | theta_k]."""
    Xb = Xb.astype(float, copy=False)
    return np.sqrt(np.maximum(((Xb[:, :, None, :] @ B[:, :, :, :-1])[:, :, 0, :] * Xb).sum(axis=-1), 0.0))


class SGDOracle:
    """An online linear model f(x) = <w, x> by stochastic gradient steps on w (y - f(x))^2, as VW's `gd`.

    The Contextual Bandit Bake-off (Bietti, Agarwal, Langford, JMLR 2021) ran every agent on VW's
    default learner: adaptive, normalized and importance-weight-aware updates, learning rate 0.5.
    This is that update (VW's gd.cc) on dense features, per instance: a feature equal to 0 takes no
    part in a step, as an absent feature of VW's sparse examples. An example with weight h > 0, error
    r = y - f(x) != 0 and a nonzero feature is learned (VW skips the others):

    - adaptive (AdaGrad, Duchi et al. 2011): G_i += h (2 r)^2 x_i^2, a per-feature rate 1 / sqrt(G_i);
      else (plain SGD) one rate for all, lr (t_0 + t)^-power_t with t the total weight seen, this
      example's included, and VW's initial t_0 (1, or 0 with `normalized`; `--sgd` is this step);
    - normalized (Ross, Mineiro, Langford 2013): s_i = max |x_i| seen; when s_i grows, w_i is shrunk by
      s_i,old / s_i,new (that ratio squared without adaptive), the rate is divided by s_i (s_i^2), and
      the step is multiplied by sqrt(H / sum_h h ||x / s||^2) (without the root without adaptive), H
      the total weight learned;
    - invariant (Karampatziakis & Langford 2011): with eta = lr h and the step's sensitivity q (the
      change of f(x) per unit step, sum_i x_i^2 rate_i times that multiplier), the step is
      u = r (1 - exp(-2 eta q)) / q, the limit of infinitely many small steps of total weight h: f(x)
      moves toward y by at most r, whatever h (a weight of 500 lands on y, not 1000 times past it).
      Without it, VW's plain ("unsafe") step u = 2 eta r, which a large h overshoots.

    Then w_i += u x_i rate_i (times the multiplier). It makes VW's predictions to float32 precision
    (tests/agents/test_oracle.py runs both on one stream, where vowpalwabbit is installed). Not
    reproduced: VW's clipping of predictions to the range of the labels seen (`--min_prediction`,
    `--max_prediction`), its constant feature (add one for an intercept) and its exponents for a
    power_t other than 0.5 with `normalized`. No regulariser (VW's default l2 = 0). The state is
    (N, d) arrays.

    Args:
        lr: the learning rate eta (VW's -l, default 0.5).
        adaptive, normalized, invariant: VW's three defaults, each on by default.
        power_t: without `adaptive`, the plain rate's decay exponent (VW's 0.5; 0: a constant rate).
    """

    def __init__(self, lr: float = 0.5, adaptive: bool = True, normalized: bool = True, invariant: bool = True,
                 power_t: float = 0.5):
        if not (isinstance(lr, numbers.Real) and math.isfinite(lr) and lr > 0):
            raise ValueError(f"SGDOracle: lr must be a finite number > 0, got {lr!r}")
        if not (isinstance(power_t, numbers.Real) and math.isfinite(power_t) and power_t >= 0):
            raise ValueError(f"SGDOracle: power_t must be a finite number >= 0, got {power_t!r}")
        for name, flag in (("adaptive", adaptive), ("normalized", normalized), ("invariant", invariant)):
            if not isinstance(flag, (bool, np.bool_)):
                raise ValueError(f"SGDOracle: {name} must be a bool, got {flag!r}")
        self.lr, self.adaptive, self.normalized, self.invariant, self.power_t = lr, adaptive, normalized, invariant, power_t

    def start(self, n: int, d: int, seqs: list) -> None:
        self.w_ = np.zeros((n, d))
        self.G_ = np.zeros((n, d))          # adaptive: sum of h g^2 x_i^2
        self.s_ = np.zeros((n, d))          # normalized: the largest |x_i| seen
        self.seen_ = np.zeros(n)            # the weight of every example seen (the plain rate's t)
        self.learned_ = np.zeros(n)         # normalized: the weight of the examples learned (T_h)
        self.norms_ = np.zeros(n)           # normalized: their sum of h ||x / s||^2

    @property
    def theta(self) -> np.ndarray:
        """(N, d) weights."""
        return self.w_

    def predict(self, X: np.ndarray) -> np.ndarray:
        return (X * self.w_[:, None, :]).sum(axis=-1)

    def update(self, x: np.ndarray, y: np.ndarray, w: np.ndarray) -> None:
        h = np.asarray(w, dtype=float)
        r = y - (x * self.w_).sum(axis=1)
        self.seen_ += h
        # VW learns only examples with a loss, a weight and a feature (an all-zero x has nothing to learn:
        # its normalized step would be 0 / 0)
        go = (h > 0) & (r != 0) & (x != 0).any(axis=1)
        if not go.any():
            return
        on = (x != 0) & go[:, None]                  # the features that take part
        x2 = x * x
        rate, multiplier = np.where(on, 1.0, 0.0), np.ones(len(h))
        if self.adaptive:
            self.G_ += np.where(on, (h * 4 * r * r)[:, None] * x2, 0.0)
            rate = np.divide(1.0, np.sqrt(self.G_), out=np.zeros_like(x), where=on & (self.G_ > 0))
        if self.normalized:
            ax = np.abs(x)
            grow = on & (ax > self.s_)
            shrink = np.divide(self.s_, ax, out=np.ones_like(ax), where=grow & (self.s_ > 0))
            self.w_ *= shrink if self.adaptive else shrink * shrink
            self.s_ = np.where(grow, ax, self.s_)
            inv_s = np.divide(1.0, self.s_, out=np.zeros_like(ax), where=on)
            self.learned_ += np.where(go, h, 0.0)
            self.norms_ += np.where(go, h * (x2 * inv_s * inv_s).sum(axis=1), 0.0)
            ratio = np.divide(self.learned_, self.norms_, out=np.ones(len(h)), where=go)
            multiplier = np.sqrt(ratio) if self.adaptive else ratio
            rate *= inv_s if self.adaptive else inv_s * inv_s
        eta = self.lr * h
        if not self.adaptive and self.power_t:
            eta = eta * np.power((0.0 if self.normalized else 1.0) + self.seen_, -self.power_t)
        q = multiplier * (x2 * rate).sum(axis=1)     # the change of f(x) per unit step
        u = 2 * eta * r                              # the plain step (VW's unsafe update)
        if self.invariant:
            small = eta * q < 1e-6                   # 1 - exp(-z) ~ z: the plain step, without cancellation
            exact = np.divide(r * -np.expm1(-2 * eta * q), q, out=np.zeros_like(r), where=~small & go)
            u = np.where(small, u, exact)
        self.w_ += np.where(go, u * multiplier, 0.0)[:, None] * x * rate

    def sensitivity(self, X: np.ndarray, Y: np.ndarray) -> np.ndarray:
        """(N, K) VW's sensitivity of every arm: eta q, the change of f(x_k) per unit step of an example
        (x_k, Y[:, k]) of weight 1, computed as if that example were learned without changing the state.

        VW's gd `sensitivity` (gd.cc, `get_pred_per_update` in its stateless form, times `get_scale` of
        weight 1): the example's gradient h (2 r)^2 x_i^2, r = y - f(x), is added to G_i, its scales to s_i
        and its weight and norm to the normalizer's sums before the rate 1 / (sqrt(G_i) s_i) and the
        multiplier are taken, exactly as `update` would with h = 1; eta = lr (times (t_0 + t + 1)^-power_t
        without `adaptive`). A feature equal to 0 takes no part (as in `update`), so an all-zero x has
        sensitivity 0. RegCB's bounds (agents.regcb) take eta q w as the move of f(x_k) that an update of
        weight w would make, VW's linear approximation in `cb_explore_adf_regcb.cc` (for w -> 0 the plain
        step moves f(x_k) by 2 r eta q w: the approximation drops the factor 2 r).
        """
        X = np.asarray(X, dtype=float)
        r = np.asarray(Y, dtype=float) - self.predict(X)                 # (N, K)
        on = X != 0
        x2 = X * X
        rate, multiplier = np.where(on, 1.0, 0.0), np.ones(r.shape)
        if self.adaptive:
            G = self.G_[:, None, :] + np.where(on, (4 * r * r)[..., None] * x2, 0.0)
            rate = np.divide(1.0, np.sqrt(G), out=np.zeros_like(X), where=on & (G > 0))
        if self.normalized:
            s = np.where(on & (np.abs(X) > self.s_[:, None, :]), np.abs(X), self.s_[:, None, :])
            inv_s = np.divide(1.0, s, out=np.zeros_like(X), where=on)
            norms = self.norms_[:, None] + (x2 * inv_s * inv_s).sum(axis=-1)
            ratio = np.divide(self.learned_[:, None] + 1.0, norms, out=np.ones(r.shape), where=norms > 0)
            multiplier = np.sqrt(ratio) if self.adaptive else ratio
            rate *= inv_s if self.adaptive else inv_s * inv_s
        eta = self.lr
        if not self.adaptive and self.power_t:
            eta = eta * np.power((0.0 if self.normalized else 1.0) + self.seen_[:, None] + 1.0, -self.power_t)
        return eta * multiplier * (x2 * rate).sum(axis=-1)


class MLPOracle:
    """A small ReLU network regressor per instance, trained by Adam on a replay buffer (PyTorch).

    f(x) = <head, MLP(x)> + b with `hidden` ReLU layers (agents.neural.nets.StackedMLP: the N
    instances' networks as stacked weights, PyTorch's default initialisation drawn from the
    instance's own stream, so instance i of a batched agent is the network of a single agent with
    instance i's seed). Each update stores (x, y, h) in a FIFO buffer of `buffer_size` and takes
    `steps` Adam steps on minibatches of `batch_size` drawn uniformly (with replacement) from it, on
    the weighted mean of the squared errors, sum h (y - f(x))^2 / sum h: an importance weight
    tilts the minibatch's loss toward its point, and the step stays one Adam step of at most about
    lr per weight whatever h (a weight of 500 cannot blow it up). Adam is Kingma & Ba's form
    (agents.neural.optim.KerasAdam: plain tensor arithmetic, without the second-long import of
    torch's compiler that torch.optim triggers). torch is imported when the first observation
    starts the oracle, never by `import agents`.

    Args:
        hidden: the hidden layer widths.
        lr: Adam's learning rate.
        steps: Adam steps per update.
        batch_size: points per minibatch (fewer while the buffer holds fewer).
        buffer_size: points kept (the oldest dropped first).
        device: the torch device ("cpu", "cuda", ...).
    """

    def __init__(self, hidden: tuple = (32,), lr: float = 0.01, steps: int = 1, batch_size: int = 32,
                 buffer_size: int = 1000, device: str = "cpu"):
        if not Widths().accepts(hidden):
            raise ValueError(f"MLPOracle: hidden must be {Widths()}, got {hidden!r}")
        if not (isinstance(lr, numbers.Real) and math.isfinite(lr) and lr > 0):
            raise ValueError(f"MLPOracle: lr must be a finite number > 0, got {lr!r}")
        for name, v in (("steps", steps), ("batch_size", batch_size), ("buffer_size", buffer_size)):
            if not (isinstance(v, numbers.Integral) and not isinstance(v, bool) and v >= 1):
                raise ValueError(f"MLPOracle: {name} must be an int >= 1, got {v!r}")
        if not Device().accepts(device):
            raise ValueError(f"MLPOracle: device must be {Device()}, got {device!r}")
        self.hidden, self.lr, self.steps, self.batch_size = hidden, lr, steps, batch_size
        self.buffer_size, self.device = buffer_size, device

    def start(self, n: int, d: int, seqs: list) -> None:
        torch = _torch("mlp")
        from agents.neural.nets import StackedMLP, device_of, linear_layer
        from agents.neural.optim import KerasAdam

        self.dev_ = device_of(self.device)
        self.rng_ = Streams(oracle_seqs(seqs), n)
        self.net_ = StackedMLP(self.rng_, n, d, self.hidden, self.dev_)
        self.head_ = list(linear_layer(self.rng_, n, self.net_.out_dim, 1, self.dev_))
        self.params_ = self.net_.params + self.head_
        self.opt_ = KerasAdam(self.params_, lr=self.lr)
        self.x_ = torch.zeros((n, self.buffer_size, d), device=self.dev_)
        self.y_ = torch.zeros((n, self.buffer_size), device=self.dev_)
        self.h_ = torch.zeros((n, self.buffer_size), device=self.dev_)
        self.size_ = self.pos_ = 0

    def _forward(self, x):
        """(N, B) outputs of the (N, B, d) tensor x."""
        from agents.neural.nets import baddbmm

        w, b = self.head_
        return baddbmm(b, self.net_(x), w)[..., 0]

    def predict(self, X: np.ndarray) -> np.ndarray:
        import torch

        from agents.neural.nets import tensor

        with torch.no_grad():
            return self._forward(tensor(X, self.dev_)).cpu().double().numpy()

    def update(self, x: np.ndarray, y: np.ndarray, w: np.ndarray) -> None:
        import torch

        from agents.neural.nets import tensor
        from agents.neural.optim import clear_grads

        n = len(y)
        self.x_[:, self.pos_] = tensor(x, self.dev_)
        self.y_[:, self.pos_] = tensor(y, self.dev_)
        self.h_[:, self.pos_] = tensor(w, self.dev_)
        self.pos_, self.size_ = (self.pos_ + 1) % self.buffer_size, min(self.size_ + 1, self.buffer_size)
        rows = torch.arange(n, device=self.dev_)[:, None]
        for _ in range(self.steps):
            idx = torch.as_tensor(self.rng_.integers(self.size_, size=(n, min(self.batch_size, self.size_))),
                                  device=self.dev_)
            xb, yb, hb = self.x_[rows, idx], self.y_[rows, idx], self.h_[rows, idx]
            clear_grads(self.params_)
            loss = (hb * (yb - self._forward(xb)) ** 2).sum(dim=1) / hb.sum(dim=1).clamp_min(1e-12)
            loss.sum().backward()       # instances are independent: the sum has each one's gradient
            self.opt_.step(self.params_, [p.grad for p in self.params_])


def _torch(what: str):
    """torch, or an ImportError that says how to install it."""
    try:
        import torch
    except ImportError:
        raise ImportError(f'the {what!r} oracle needs PyTorch: pip install torch, or pip install -e ".[neural]" in '
                          "the gym-ctxbandits clone") from None
    return torch


class SklearnOracle:
    """A scikit-learn-style regressor (`partial_fit(X, y[, sample_weight])`, `predict(X)`) as an `Oracle`.

    One deep copy of `model` per instance, each fed its instance's rows one at a time; the importance
    weight goes to `sample_weight` when partial_fit takes it (else it is dropped: an unweighted
    update), and a weight of 0 is no update. Predictions are 0 until an instance's first fit. A copy
    whose `random_state` is None gets one drawn from its instance's seed (so runs are reproducible
    and never touch numpy's global generator); a random_state set by the user is kept.
    """

    def __init__(self, model):
        self.model = model

    def start(self, n: int, d: int, seqs: list) -> None:
        takes = inspect.signature(self.model.partial_fit).parameters
        self.weighted_ = "sample_weight" in takes or any(p.kind is p.VAR_KEYWORD for p in takes.values())
        self.models_ = [copy.deepcopy(self.model) for _ in range(n)]
        for model, seq in zip(self.models_, oracle_seqs(seqs)):
            get = getattr(model, "get_params", None)
            if get is not None and get(deep=False).get("random_state", 0) is None:
                model.set_params(random_state=int(seq.generate_state(1)[0] >> 1))
        self.fitted_ = np.zeros(n, bool)

    def predict(self, X: np.ndarray) -> np.ndarray:
        out = np.zeros(X.shape[:2])
        for i in np.flatnonzero(self.fitted_):
            out[i] = np.asarray(self.models_[i].predict(X[i]), dtype=float).reshape(-1)
        return out

    def update(self, x: np.ndarray, y: np.ndarray, w: np.ndarray) -> None:
        for i in np.flatnonzero(np.asarray(w) > 0):
            if self.weighted_:
                self.models_[i].partial_fit(x[i:i + 1], y[i:i + 1], sample_weight=np.asarray(w[i:i + 1], float))
            else:
                self.models_[i].partial_fit(x[i:i + 1], y[i:i + 1])
            self.fitted_[i] = True


class RiverOracle:
    """A river-style regressor (`learn_one(x, y[, w])`, `predict_one(x)` on dicts) as an `Oracle`.

    One deep copy of `model` per instance; a feature vector x goes in as {0: x_0, 1: x_1, ...}. The
    importance weight goes to `w` when learn_one takes it (else it is dropped: an unweighted update),
    and a weight of 0 is no update. Predictions are 0 until an instance's first update.
    """

    def __init__(self, model):
        self.model = model

    def start(self, n: int, d: int, seqs: list) -> None:
        self.weighted_ = "w" in inspect.signature(self.model.learn_one).parameters
        self.models_ = [copy.deepcopy(self.model) for _ in range(n)]
        self.fitted_ = np.zeros(n, bool)

    def predict(self, X: np.ndarray) -> np.ndarray:
        out = np.zeros(X.shape[:2])
        for i in np.flatnonzero(self.fitted_):
            model = self.models_[i]
            out[i] = [float(model.predict_one(dict(enumerate(row)))) for row in X[i].tolist()]
        return out

    def update(self, x: np.ndarray, y: np.ndarray, w: np.ndarray) -> None:
        for i in np.flatnonzero(np.asarray(w) > 0):
            features = dict(enumerate(x[i].tolist()))
            if self.weighted_:
                self.models_[i].learn_one(features, float(y[i]), w=float(w[i]))
            else:
                self.models_[i].learn_one(features, float(y[i]))
            self.fitted_[i] = True


ORACLES = {"ridge": RidgeOracle, "sgd": SGDOracle, "mlp": MLPOracle}


def _form(value) -> str | None:
    """How `make_oracle` takes `value`: "name", "oracle", "sklearn", "river", or None (not an oracle)."""
    if isinstance(value, str):
        return "name" if value in ORACLES else None
    if isinstance(value, type):         # a class, not an instance (SGDRegressor for SGDRegressor())
        return None
    if isinstance(value, Oracle):
        return "oracle"
    if callable(getattr(value, "partial_fit", None)) and callable(getattr(value, "predict", None)):
        return "sklearn"
    if callable(getattr(value, "learn_one", None)) and callable(getattr(value, "predict_one", None)):
        return "river"
    return None


class OracleSpec:
    """The params rule of an agent's `oracle`: a registered name ("ridge", "sgd", "mlp"), an `Oracle`
    object, or a scikit-learn-style or river-style regressor (wrapped)."""

    def accepts(self, value) -> bool:
        return _form(value) is not None

    def __str__(self) -> str:
        return (f"one of {', '.join(map(repr, ORACLES))}, an object with start(n, d, seqs), predict(X) and "
                "update(x, y, w) (agents.oracle.Oracle), a scikit-learn-style regressor instance with partial_fit(X, "
                "y) and predict(X), or a river-style one with learn_one(x, y) and predict_one(x)")


def make_oracle(spec, **settings) -> Oracle:
    """A fresh oracle of `spec`: a name of `ORACLES` built with the settings it takes (ridge: lam; sgd and
    mlp: lr; a setting None is left to the oracle's default), a deep copy of an `Oracle` object, or a
    scikit-learn-style or river-style regressor wrapped (`SklearnOracle`, `RiverOracle`) around a deep
    copy of it (an object's own settings win). Anything else is a ValueError naming what is accepted."""
    form = _form(spec)
    if form == "name":
        cls = ORACLES[spec]
        takes = inspect.signature(cls).parameters
        return cls(**{k: v for k, v in settings.items() if k in takes and v is not None})
    if form is None:
        hint = f"; pass an instance, {spec.__name__}()" if isinstance(spec, type) else ""
        raise ValueError(f"oracle must be {OracleSpec()}, got {spec!r}{hint}")
    spec = copy.deepcopy(spec)
    if form == "oracle":
        return spec
    return (SklearnOracle if form == "sklearn" else RiverOracle)(spec)


def sample_arms(P: np.ndarray, u: np.ndarray) -> np.ndarray:
    """(N,) arms drawn from the rows of P (N, K) by inverting their CDFs at u (N,) uniforms in [0, 1):
    the arm a with cdf_{a-1} <= u * total < cdf_a, so an arm of probability 0 is never drawn."""
    cdf = np.cumsum(P, axis=1)
    return (cdf <= u[:, None] * cdf[:, -1:]).sum(axis=1)


def sample_arm(P, u: float) -> int:
    """`sample_arms` of one row P (K,), a list of floats or an array, at the uniform u: the same sums in
    the same order (numpy's cumsum adds left to right, as this loop), so the same arm."""
    if type(P) is not list:
        cdf = np.cumsum(P)
        return int(np.count_nonzero(cdf <= u * cdf[-1]))
    cdf, total = [], 0.0
    for q in P:
        total = total + q if cdf else q
        cdf.append(total)
    cut = u * total
    return sum(1 for c in cdf if c <= cut)


class OracleAgent(BaseAgent):
    """The base of the regression-oracle agents: a policy from the oracle's predictions, sampled exactly.

    Subclasses declare `params`, store their hyper-parameters, call `super().__init__(oracle=..,
    lam=.., lr=.., seed=seed, dim=dim)` and give `_policy(X) -> (N, K)`; `_learn` and `_init_state`
    are hooks. `oracle_` is the instances' oracle, built in `_start` by `_new_oracle()` (from
    `oracle`, `lam` and `lr`; a family holding several oracles builds them all with it).

    Args (of every agent of the family):
        oracle: "ridge" (closed-form weighted ridge regression), "sgd" (VW's online SGD), "mlp" (a
            small network, PyTorch), an `Oracle` object, or a scikit-learn-style / river-style
            regressor (copied; the module docstring).
        lam: the ridge oracle's regulariser lambda (V_0 = lam I).
        lr: the learning rate of the "sgd" and "mlp" oracles; None: their defaults (0.5, VW's; 0.01).
    """

    params = {"oracle": OracleSpec(), "lam": Real(gt=0), "lr": (Real(gt=0), None)}
    search_space = {"lam": LogUniform(0.01, 100)}
    iwr = True          # learn by importance-weighted regression on the chosen arm (weight 1 / p)

    def __init__(self, *, oracle="ridge", lam: float = 1.0, lr: float | None = None, seed=None, dim: int | None = None,
                 **hyperparameters):
        super().__init__(oracle=oracle, lam=lam, lr=lr, seed=seed, dim=dim, **hyperparameters)

    def _check_params(self) -> None:
        if isinstance(self.oracle, str) and self.oracle == "mlp" and importlib.util.find_spec("torch") is None:
            _torch("mlp")       # its ImportError when the agent is built, not at its first obs

    def _new_oracle(self) -> Oracle:
        """A fresh, unstarted oracle of the agent's `oracle`, `lam` and `lr`."""
        return make_oracle(self.oracle, lam=self.lam, lr=self.lr)

    # each one-instance hook and the batched method it stands for: a hook defined above the class that
    # defines that method (a subclass's override without its one-instance form) is replaced by the
    # generic form, which calls the batched method on X[None]
    ONE_INSTANCE = {"_predict1": "_predict", "_policy1": "_policy", "_learn1": "_learn"}

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        for hook, batched in cls.ONE_INSTANCE.items():
            owner = next(c for c in cls.__mro__ if hook in c.__dict__)
            if not issubclass(owner, next(c for c in cls.__mro__ if batched in c.__dict__)):
                setattr(cls, hook, getattr(cls, f"_generic{hook}"))

    def _start(self, X: np.ndarray) -> None:
        self.oracle_ = self._new_oracle()
        self.oracle_.start(self.n_, self.d_, self.seqs_)
        self._acted = None      # (obs, round, policy) of the last act, for observe
        self._acted1 = None     # the same of the last one-instance act
        self._init_state(X)

    def _init_state(self, X: np.ndarray) -> None:
        """Family state beyond the oracle, once the first obs X (N, K, d) fixes N and d (hook)."""

    def _predict(self, X: np.ndarray) -> np.ndarray:
        """The oracle's (N, K) predictions, or a ValueError if any is NaN or inf."""
        return predict(self.oracle_, X)

    def _policy(self, X: np.ndarray) -> np.ndarray:
        """(N, K) distribution of the next action on X (N, K, d), computed without changing the agent."""
        raise NotImplementedError

    def _probs(self, X: np.ndarray) -> np.ndarray:
        return self._policy(X)

    # One-instance rounds. A started single agent (first obs (K, d)) runs `act` and `observe` on the
    # (K, d) obs itself, with no (1, K, d) views and (1,) arrays: `_predict1(X) -> (K,)`, `_policy1(X)`
    # (K probabilities, a list of floats or an array) and `_learn1(X, a, y, p)` on Python scalars, the
    # same arithmetic as the batched forms by the same kernels (the ridge oracle's `predict1` and
    # `update1`), so the same bits: a single agent seeded s makes the choices of instance s of a
    # batched agent (tests/agents/test_oracle.py holds every agent of the family to it, state
    # included). Every check stays: the obs by one test (2-D, d columns, K >= 1, a real dtype;
    # anything else takes the general path, which names the problem), the predictions finite, the
    # action and reward (`check_single_feedback`), the chosen features (`check_chosen`).
    def _generic_predict1(self, X: np.ndarray) -> np.ndarray:
        return self._predict(X[None])[0]

    def _generic_policy1(self, X: np.ndarray):
        return self._policy(X[None])[0]

    def _generic_learn1(self, X: np.ndarray, a: int, y: float, p: float) -> None:
        self._learn(X[None], np.array([a]), np.array([y]), np.array([p]))

    def _predict1(self, X: np.ndarray) -> np.ndarray:
        """`_predict(X[None])[0]`: the oracle's `predict1` where it has one."""
        return predict1(self.oracle_, X)

    _policy1 = _generic_policy1

    def _learn1(self, X: np.ndarray, a: int, y: float, p: float) -> None:
        """`_learn` of one instance: the oracle's `update1` where it has one."""
        update1 = getattr(self.oracle_, "update1", None)
        if update1 is None:
            return self._generic_learn1(X, a, y, p)
        x = X[a]
        w = (1.0 / p if p > 0 else 1.0) if self.iwr else 1.0
        update1(x if x.dtype is F64 else x.astype(float), y, w)

    def _one(self, obs) -> np.ndarray | None:
        """obs itself when the agent is a started single one and obs its usual (K, d) real array, else None."""
        if self.single_ and type(obs) is np.ndarray:
            shape = obs.shape
            if len(shape) == 2 and shape[1] == self.d_ and shape[0] and obs.dtype.kind in "fiu":
                return obs
        return None

    def act(self, obs):
        """An arm of obs (K, d) -> int, or one per instance of obs (N, K, d) -> (N,): drawn from `_policy`."""
        X = self._one(obs)
        if X is not None:
            P = self._policy1(X)
            self._acted1, self._acted = (obs, self.t_, P), None
            return sample_arm(P, self.rng_.random1())
        X = self._check_obs(obs)
        P = self._policy(X)
        self._acted, self._acted1 = (obs, self.t_, P), None
        return self._unwrap(sample_arms(P, self.rng_.random(self.n_)))

    def observe(self, obs, action, reward) -> None:
        """Learn the reward of the chosen arm (int and float, or (N,) arrays when batched)."""
        X = self._one(obs)
        if X is not None:
            a, y = check_single_feedback(action, reward, len(X))
            check_chosen(X[a])
            acted = self._acted1
            P = acted[2] if acted is not None and acted[0] is obs and acted[1] == self.t_ else self._policy1(X)
            self._acted1 = self._acted = None
            self._learn1(X, a, y, float(P[a]))
            self.t_ += 1
            return
        X = self._check_obs(obs)
        a, y = self._feedback(X, action, reward)
        acted = getattr(self, "_acted", None)
        P = acted[2] if acted is not None and acted[0] is obs and acted[1] == self.t_ else self._policy(X)
        self._acted = self._acted1 = None
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


def predict(oracle, X: np.ndarray) -> np.ndarray:
    """`oracle`'s (N, K) predictions of the arms of X (N, K, d), or a ValueError if their shape is wrong or
    any is NaN or inf."""
    f = np.asarray(oracle.predict(X), dtype=float)
    if f.shape != X.shape[:2]:
        raise ValueError(f"the oracle's predict returned shape {f.shape} for obs {X.shape}; it must return "
                         f"(N, K) = {X.shape[:2]}")
    if not np.isfinite(f).all():
        raise ValueError(NOT_FINITE)
    return f


def predict1(oracle, X: np.ndarray) -> np.ndarray:
    """`predict(oracle, X[None])[0]` of an oracle serving one instance and X (K, d): its `predict1` where it
    has one, the same ValueError if a prediction is NaN or inf."""
    predict1 = getattr(oracle, "predict1", None)
    if predict1 is None:
        return predict(oracle, X[None])[0]
    f = predict1(X)
    total = sum(f.tolist()) if len(f) <= 16 else f.sum()               # (a few: Python's sum is the cheaper)
    if not math.isfinite(total) and not np.isfinite(f).all():          # (finite values whose sum overflows pass)
        raise ValueError(NOT_FINITE)
    return f


NOT_FINITE = ("the oracle's predictions are not finite: obs contains NaN or inf, or the oracle diverged (lower its "
              "learning rate)")
