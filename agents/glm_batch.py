"""Batched machinery of the [S1] GLM agents (GLM-TSL, GLM-FPL, GLM-UCB, UCB-GLM): N instances in one object.

A single agent is the N = 1 case of the same code, so instance i of a batched agent seeded
[s_1..s_N] computes bit for bit what a single agent seeded s_i computes, and acts identically:

- Sufficient statistics ([S1] §3.3) are kept per instance in arrays of fixed-size row blocks
  (`ArmStats`): the first observation's K arms are rows 0..K-1 (with a fixed arm set, as in
  [S1] §5.1, that is all: (N, K) counts and reward sums), and an arm not seen before gets the
  instance's next free row. Every reduction over rows is done per block and the blocks are added
  in order, so the zero blocks that pad an instance to the batch's longest table add exact zeros
  and change nothing.
- The MLE is damped Newton (IRLS) on the stacked (N, d, d) Hessians (`fit_glm_batched`), with a
  per-instance convergence test: a converged instance is dropped from the working set and keeps
  its estimate, so it follows exactly the iterations it would follow alone. Stacked matmul,
  `np.linalg.solve` and `np.linalg.cholesky` compute each instance's slice independently of the
  others (checked by the tests).
- Randomness: per-instance streams (`agents.base.Streams`) for draws of a fixed size per round
  and `RaggedNormals` for GLM-FPL's one perturbation per table row (a count that differs between
  instances when the arm sets change).
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import expit

from agents.base import BaseAgent, argmax_probs, check_finite, random_argmax
from agents.params import Bool, LogUniform, Options, Real

__all__ = ["LINKS", "ArmStats", "BatchedGLMAgent", "RaggedNormals", "fit_glm", "fit_glm_batched", "fit_glm_ensemble", "glm_hessians"]


# Links: mean function mu = b', its derivative mu', and the log-partition b of the exponential
# family (S0 eq. 4.1, S1 §2). All are evaluated element by element (no SIMD-vs-scalar paths whose
# rounding could depend on an array's length).

def _logistic_dmu(s):
    p = expit(s)
    return p * (1.0 - p)


LINKS = {
    "logistic": (expit, _logistic_dmu, lambda s: np.logaddexp(0.0, s)),
    "identity": (lambda s: s, np.ones_like, lambda s: 0.5 * s * s),
}


def _logistic_mu_dmu(s):
    p = expit(s)
    return p, p * (1.0 - p)


_MU_DMU = {"logistic": _logistic_mu_dmu, "identity": lambda s: (s, np.ones_like(s))}  # (mu, mu') at once


def _link(name: str):
    try:
        return LINKS[name]
    except KeyError:
        raise ValueError(f"unknown link {name!r}; choose one of {sorted(LINKS)}") from None


class RaggedNormals:
    """Standard normals for N streams, a different number from each stream per call.

    `take(counts, width)` gives row i the next counts[i] values of stream i followed by zeros. What
    instance i receives depends only on its own generator and its own counts, never on N.
    """

    BLOCK = 4096

    def __init__(self, seqs: list[np.random.SeedSequence]):
        self.gens = [np.random.default_rng(s) for s in seqs]
        n = len(seqs)
        self.buf = np.zeros((n, 0))
        self.pos = np.zeros(n, dtype=np.int64)   # next unused value of each row
        self.fill = np.zeros(n, dtype=np.int64)  # end of each row's drawn values

    def take(self, counts: np.ndarray, width: int) -> np.ndarray:
        for i in np.flatnonzero(self.pos + counts > self.fill):
            rest = self.buf[i, self.pos[i]:self.fill[i]]
            new = np.concatenate([rest, self.gens[i].standard_normal(max(self.BLOCK, int(counts[i])))])
            if new.size > self.buf.shape[1]:
                self.buf = np.concatenate([self.buf, np.zeros((len(self.gens), new.size - self.buf.shape[1]))], axis=1)
            self.buf[i, :new.size] = new
            self.pos[i], self.fill[i] = 0, new.size
        cols = np.arange(width)
        idx = np.minimum(self.pos[:, None] + cols, self.buf.shape[1] - 1)
        out = np.take_along_axis(self.buf, idx, axis=1)
        out[cols >= counts[:, None]] = 0.0
        self.pos += counts
        return out


class ArmStats:
    """Per-instance sufficient statistics: distinct arms x with pull counts N_x and reward sums S_x
    ([S1] §3.3), the one statistics table of every GLM agent.

    Rows live in blocks of B = max(K, 64) (K the first observation's arm count): `X` (N, M, d),
    `N` (N, M) and `S` (N, M), or (N, M, cols) with `cols` reward-sum columns (an ensemble's m
    perturbed histories, GLM-ES), with M a multiple of B, `rows` (N,) the rows in use. The first observation's
    arms are registered as rows 0..K-1 (a repeated arm maps to its first row), so on a fixed arm
    set an arm's row is its index; another arm is found by its float64 bytes in the instance's
    dictionary and gets the next free row.
    """

    MIN_BLOCK = 64

    def __init__(self, X0: np.ndarray, cols: int | None = None):
        n, K, d = X0.shape
        self.B = max(K, self.MIN_BLOCK)
        self.X = np.zeros((n, self.B, d))
        self.N = np.zeros((n, self.B))
        self.S = np.zeros((n, self.B) if cols is None else (n, self.B, cols))
        self.rows = np.zeros(n, dtype=np.int64)
        self.keys: list[dict[bytes, int]] = [{} for _ in range(n)]
        self.pool_row = np.empty((n, K), dtype=np.int64)   # row of arm k of the first observation
        for i in range(n):
            for k in range(K):
                self.pool_row[i, k] = self._row(i, X0[i, k])
        self._all = np.arange(n)

    def _row(self, i: int, x: np.ndarray) -> int:
        """Row of arm x in instance i's table, appending it if new."""
        key = x.tobytes()
        r = self.keys[i].get(key)
        if r is None:
            r = self.keys[i][key] = int(self.rows[i])
            if r == self.X.shape[1]:
                grow = self.X.shape[1]                   # double the capacity (blocks in use are what costs)
                self.X = np.concatenate([self.X, np.zeros((len(self.rows), grow, self.X.shape[2]))], axis=1)
                self.N = np.concatenate([self.N, np.zeros((len(self.rows), grow))], axis=1)
                self.S = np.concatenate([self.S, np.zeros((len(self.rows), grow, *self.S.shape[2:]))], axis=1)
            self.X[i, r] = x
            self.rows[i] += 1
        return r

    def add(self, a: np.ndarray, x: np.ndarray, y: np.ndarray) -> None:
        """Record one pull per instance: arm index a (N,) of the current obs, features x (N, d), rewards y (N,)
        (or (N, cols))."""
        K = self.pool_row.shape[1]
        r = self.pool_row[self._all, np.minimum(a, K - 1)]
        same = (a < K) & (self.X[self._all, r] == x).all(axis=1)   # still the first observation's arm
        for i in np.flatnonzero(~same):
            r[i] = self._row(i, x[i])
        self.N[self._all, r] += 1.0
        self.S[self._all, r] += y

    def width(self) -> int:
        """Rows in the blocks in use: the longest table rounded up to whole blocks."""
        return -(-int(self.rows.max()) // self.B) * self.B

    def blocks(self, S: np.ndarray | None = None):
        """(X, N, S) of the blocks in use, shaped (n, nb, B, d) and (n, nb, B) (views)."""
        m = self.width()
        n, d = len(self.rows), self.X.shape[2]
        nb = m // self.B
        S = self.S if S is None else S
        return (self.X[:, :m].reshape(n, nb, self.B, d), self.N[:, :m].reshape(n, nb, self.B),
                S[:, :m].reshape(n, nb, self.B, *S.shape[2:]))

    def view(self, i: int) -> "StatsView":
        r = int(self.rows[i])
        S = self.S[i, :r]
        return StatsView(self.X[i, :r], self.N[i, :r], S[:, None] if S.ndim == 1 else S)


class StatsView:
    """Instance i's table: X (n, d) rows in use, N (n,) counts, S (n, cols) reward sums."""

    def __init__(self, X, N, S):
        self.X, self.N, self.S, self.n = X, N, S, len(N)


def _blocksum(a: np.ndarray) -> np.ndarray:
    """Sum over axis 1 (the blocks), in order, so that trailing zero blocks change nothing."""
    out = a[:, 0]
    for j in range(1, a.shape[1]):
        out = out + a[:, j]
    return out


def _line_search(th, step, s, u, N, S, dec, lam, mu_dmu, c=0.01, max_iter=60):
    """Step sizes t (n,) that nearly minimise g(t) = L(th - t step) for each instance.

    g is convex with g'(0) = -dec < 0; safeguarded Newton on g'(t) (bisection on a bracket when a
    Newton step leaves it, doubling while no upper end is known) until |g'(t)| <= c dec. The
    scores along the line are s - t u with u = X step, so an evaluation is elementwise; an
    instance that is done leaves the working set. lam is per instance, (n,).
    """
    pp, tp = (step * step).sum(axis=-1), (th * step).sum(axis=-1)
    n = len(th)
    out = np.ones(n)
    idx, t, lo, hi = np.arange(n), np.ones(n), np.zeros(n), np.full(n, np.inf)
    for _ in range(max_iter):
        m, dm = mu_dmu(s - t[:, None, None] * u)
        slope = lam * (t * pp - tp) - _blocksum(((N * m - S) * u).sum(axis=-1))       # g'(t)
        done = np.abs(slope) <= c * dec
        if done.any():
            out[idx[done]] = t[done]
            keep = ~done
            if not keep.any():
                return out
            idx, t, lo, hi, slope, m, dm = idx[keep], t[keep], lo[keep], hi[keep], slope[keep], m[keep], dm[keep]
            s, u, N, S, pp, tp, dec, lam = s[keep], u[keep], N[keep], S[keep], pp[keep], tp[keep], dec[keep], lam[keep]
        curv = lam * pp + _blocksum((N * dm * u * u).sum(axis=-1))                   # g''(t) > 0
        lo, hi = np.where(slope < 0, t, lo), np.where(slope < 0, hi, t)
        new = t - slope / curv
        outside = ~((lo < new) & (new < hi))
        t = np.where(outside, np.where(np.isinf(hi), 2.0 * t, 0.5 * (lo + hi)), new)
    out[idx] = t
    return out


# Restart rule and ridge continuation of `fit_glm_batched` (chosen on problems recorded from GLM-FPL
# and GLM-TSL runs, see docs/glm_agents.md).
JUMP = 20.0           # a first Newton step that moves a pulled arm's score by more than this restarts
LAM_TOP = 10.0        # ... from theta = 0 with ridge LAM_TOP, divided by LAM_FACTOR at each stage
LAM_FACTOR = 10.0
STAGE_TOL = 100.0     # squared Newton decrement that ends an intermediate stage


def fit_glm_batched(theta, X, N, S, lam, link, tol=1e-12, max_iter=100):
    """Minimise lam/2 ||theta||^2 + sum_x [N_x b(x^T theta) - S_x x^T theta] for n instances at once.

    theta (n, d) warm starts; X (n, nb, B, d), N and S (n, nb, B) from `ArmStats.blocks`; `link` a
    name of `LINKS`. Newton (IRLS, [S1] §3.3) with gradient sum_x (N_x mu(x^T theta) - S_x) x
    + lam theta and Hessian sum_x N_x mu'(x^T theta) x x^T + lam I; while the squared Newton
    decrement exceeds 1e-4 the step length comes from a line search (`_line_search`), then full
    steps; an instance stops when its decrement is <= tol. Returns (theta, H) with H the Hessian
    at the returned theta (at the last iterate if max_iter is reached).

    When the first step from the warm start would move the score x^T theta of a pulled arm by more
    than JUMP (the quadratic model is meaningless that far out on the logistic), the instance
    restarts from 0 and follows the ridge path lam_k = LAM_TOP / LAM_FACTOR^k down to lam, each
    intermediate stage solved loosely. That is GLM-FPL with [S1]'s theory perturbation: the
    perturbed sums leave [0, N_x], the loss is bounded only by the ridge, the minimiser is huge
    (|theta| ~ 1e5 at d = 20) and a fresh perturbation every round makes the warm start useless.
    There Armijo backtracking from the warm start stopped at max_iter far from the optimum;
    this converges in about 20 steps.
    """
    mu_dmu = _MU_DMU[link]
    theta = np.array(theta, dtype=float)
    n, d = theta.shape
    H_out = np.empty((n, d, d))
    eye = np.eye(d)
    active, th = np.arange(n), theta
    lams, tols = np.full(n, float(lam)), np.full(n, float(tol))
    for it in range(max_iter):
        s = (X @ th[:, None, :, None])[..., 0]                                  # (na, nb, B)
        m, dm = mu_dmu(s)
        grad = lams[:, None] * th + _blocksum(((N * m - S)[..., None, :] @ X)[..., 0, :])
        H = _blocksum(np.swapaxes(X * (N * dm)[..., None], -1, -2) @ X) + lams[:, None, None] * eye
        step = np.linalg.solve(H, grad[..., None])[..., 0]
        dec = (grad * step).sum(axis=-1)                                        # squared Newton decrement
        done = dec <= tols
        finished = done & (lams == lam)
        if finished.any():
            theta[active[finished]], H_out[active[finished]] = th[finished], H[finished]
            if finished.all():
                return theta, H_out
            keep = ~finished
            active, th, X, N, S, s = active[keep], th[keep], X[keep], N[keep], S[keep], s[keep]
            H, step, dec, done, lams, tols = H[keep], step[keep], dec[keep], done[keep], lams[keep], tols[keep]
        t = np.where(done, 0.0, 1.0)                 # done with an intermediate stage: next ridge, no step
        if done.any():
            lower = lams / LAM_FACTOR
            lams = np.where(done, np.where(lower < 1.5 * lam, lam, lower), lams)
            tols = np.where(lams == lam, tol, tols)
        far = np.flatnonzero(~done & (dec > 1e-4))
        restart = np.zeros(len(active), dtype=bool)
        if far.size:
            u = (X[far] @ step[far, None, :, None])[..., 0]
            if it == 0 and lam * LAM_FACTOR <= LAM_TOP:
                restart[far] = np.where(N[far] > 0, np.abs(u), 0.0).max(axis=(1, 2)) > JUMP
            search = ~restart[far]
            if search.any():
                f = far[search]
                t[f] = _line_search(th[f], step[f], s[f], u[search], N[f], S[f], dec[f], lams[f], mu_dmu)
        th = th - t[:, None] * step
        if restart.any():
            th[restart] = 0.0
            lams, tols = np.where(restart, LAM_TOP, lams), np.where(restart, STAGE_TOL, tols)
    theta[active], H_out[active] = th, H
    return theta, H_out


def _hessians(X, w, lam):
    """sum_x w_x x x^T + lam I per member: X (n, nb, B, d), weights w (n, nb, B, m) -> (n, m, d, d)."""
    X5 = X[:, :, None]
    W = np.moveaxis(w, -1, 2)[..., None, :]                                    # (n, nb, m, 1, B)
    return _blocksum((np.swapaxes(X5, -1, -2) * W) @ X5) + lam * np.eye(X.shape[-1])


def glm_hessians(theta, X, N, lam, link):
    """The Hessians sum_x N_x mu'(x^T theta_j) x x^T + lam I at theta (n, m, d) -> (n, m, d, d)."""
    return _hessians(X, N[..., None] * _MU_DMU[link](X @ np.swapaxes(theta, -1, -2)[:, None])[1], lam)


CHORD_RATE = 0.03  # a chord step must shrink a member's gradient norm this much, or its instance refreshes H


def fit_glm_ensemble(theta, H_inv, X, N, S, lam, link, tol=1e-12, max_iter=12):
    """The m perturbed MLEs of each of n instances (GLM-ES's members), warm-started, by chord Newton.

    theta (n, m, d) warm starts; H_inv (n, m, d, d) inverse Hessians from an earlier iterate (a
    Hessian kept across rounds), NaN for an instance that has none yet; X (n, nb, B, d) and N
    (n, nb, B) from `ArmStats.blocks`, S (n, nb, B, m) member j's perturbed reward sums in column j.
    Minimises what `fit_glm_batched` minimises and stops at the same certificate,
    ||grad||^2 <= lam tol (so the squared Newton decrement is <= tol, as H >= lam I).

    Why: a warm-started member moves by O(1/t) a round, so the Hessian of an earlier round is a
    good preconditioner: theta <- theta - H_inv grad costs two products with the (B, d) table per
    member (O(B d)) where a Newton step forms and solves a Hessian (O(B d^2 + d^3)). An instance
    whose members' gradients shrink by less than CHORD_RATE in a step gets exact Hessians at the
    current iterate (that step is Newton's); an instance without a kept Hessian, whose Newton step
    does not shrink the gradient, or that reaches max_iter goes to `fit_glm_batched` (line search,
    ridge continuation) from where it is. Every instance's arithmetic is its own (stacked matmul and
    inv work slice by slice, sums over blocks in order), so a batch computes what singles do.
    Returns (theta, H_inv): theta a new array, H_inv updated in place.
    """
    mu_dmu = _MU_DMU[link]
    theta = np.array(theta, dtype=float)
    n, m, d = theta.shape
    robust = np.isnan(H_inv[:, 0, 0, 0])
    active = np.flatnonzero(~robust)
    if active.size == n:                              # no copies of the tables on the usual path
        th, Hi, Xa, Na, Sa = theta, H_inv, X, N, S
    else:
        th, Hi, Xa, Na, Sa = theta[active], H_inv[active], X[active], N[active], S[active]
    live = np.ones(len(active), dtype=bool)           # instances still iterating (the others are frozen)
    fresh = np.zeros(len(active), dtype=bool)
    gg_prev = None
    for it in range(max_iter + 1):
        s = Xa @ np.swapaxes(th, -1, -2)[:, None]                              # (na, nb, B, m)
        mu, dmu = mu_dmu(s)
        grad = lam * th + np.swapaxes(_blocksum(np.swapaxes(Xa, -1, -2) @ (Na[..., None] * mu - Sa)), -1, -2)
        gg = (grad * grad).sum(axis=-1)                                        # (na, m)
        conv = (gg <= lam * tol) | ~live[:, None]
        refresh = fail = np.zeros(len(active), dtype=bool)
        if gg_prev is not None:
            slow = ~conv & (gg > CHORD_RATE ** 2 * gg_prev)
            fail = (slow & fresh[:, None] & (gg >= gg_prev)).any(axis=1)
            refresh = slow.any(axis=1) & ~fail
        if it == max_iter:
            fail = ~conv.all(axis=1)
        robust[active[fail]] = True
        live &= ~(conv.all(axis=1) | fail)
        if not live.any():
            break
        conv |= fail[:, None]
        if refresh.any():                                       # Newton: exact Hessians at this iterate
            Hi[refresh] = np.linalg.inv(_hessians(Xa[refresh], Na[refresh][..., None] * dmu[refresh], lam))
        fresh = refresh
        step = (Hi @ grad[..., None])[..., 0]
        th = th - np.where(conv[..., None], 0.0, step)
        gg_prev = gg
    theta[active], H_inv[active] = th, Hi
    rows = np.flatnonzero(robust)
    if rows.size:
        Xr = np.repeat(X[rows], m, axis=0)
        th, H = fit_glm_batched(theta[rows].reshape(-1, d), Xr, np.repeat(N[rows], m, axis=0),
                                np.moveaxis(S[rows], -1, 1).reshape(rows.size * m, *N.shape[1:]), lam, link)
        theta[rows], H_inv[rows] = th.reshape(rows.size, m, d), np.linalg.inv(H).reshape(rows.size, m, d, d)
    return theta, H_inv


def fit_glm(theta, X, N, S, lam, link="logistic", tol=1e-12, max_iter=100):
    """`fit_glm_batched` for m problems on one table (an ensemble's m perturbed histories).

    theta (m, d) warm starts, X (n, d) distinct arms, N (n,) counts, S (n, m) reward sums, one
    column per problem. Returns (theta (m, d), H (m, d, d)) as `fit_glm_batched`.
    """
    m = np.shape(theta)[0]
    Xb = np.broadcast_to(np.asarray(X, dtype=float)[None, None], (m, 1, *np.shape(X)))
    Nb = np.broadcast_to(np.asarray(N, dtype=float)[None, None], (m, 1, len(N)))
    Sb = np.asarray(S, dtype=float).T[:, None, :]
    return fit_glm_batched(theta, Xb, Nb, Sb, lam, link, tol, max_iter)


class _PerInstance:
    """Learned state kept as (N, ...) arrays in `_name`; read as `name_`: instance 0's slice for a
    single agent, the whole array for a batched one."""

    def __set_name__(self, owner, name):
        self.slot = "_" + name.rstrip("_")

    def __get__(self, obj, owner=None):
        if obj is None:
            return self
        value = getattr(obj, self.slot)
        return value[0] if obj.single_ else value


class BatchedGLMAgent(BaseAgent):
    """The [S1] agents on the one base: sufficient statistics and [S1] §5.1's initial exploration.

    Subclasses declare `params`, store their hyperparameters, call `super().__init__(seed=seed,
    dim=dim)`, and implement `_hyper(d)` (scalars that need d), `_init_state(n, d)`,
    `_scores(X)` ((N, K) policy scores; called every round, exploration or not, so that every
    instance draws the same amount each round) and `_learn(x, y)` (after the statistics got the
    round's pulls).
    """

    params = {"lam": Real(gt=0), "init_explore": Bool(), "link": Options(*LINKS)}
    search_space = {"lam": LogUniform(1e-5, 0.1)}
    index_policy = False
    rank_ = _PerInstance()
    basis_ = _PerInstance()

    def _reset(self) -> None:
        self._stats = None
        if self.dim is not None:
            self._hyper(self.dim)

    @property
    def stats_(self):
        """The sufficient statistics: instance 0's table (single) or a list of them (batched)."""
        if self._stats is None:
            return None
        views = [self._stats.view(i) for i in range(self.n_)]
        return views[0] if self.single_ else views

    def _start(self, X: np.ndarray) -> None:
        """Allocate everything once the first (finite) obs fixes N and d."""
        n, _, d = X.shape
        check_finite(X)
        if self.dim is None:
            self._hyper(d)
        self._stats = ArmStats(X.astype(np.float64, copy=False))
        self._basis = np.zeros((n, d, d))     # orthonormal basis of each instance's pulled arms' span
        self._rank = np.zeros(n, dtype=np.int64)
        self._H_inv = np.full((n, 1, d, d), np.nan)   # the kept inverse Hessian of `_fit` (none yet)
        self._init_state(n, d)

    # -- the protocol ---------------------------------------------------------------------------
    def act(self, obs: np.ndarray) -> int | np.ndarray:
        """Index of the arm to pull among the rows of obs (K, d), or one per instance of obs (N, K, d)."""
        Xf = self._check_obs(obs, finite=True).astype(np.float64, copy=False)
        scores = self._scores(Xf)
        if not math.isfinite(scores.sum()):
            raise ValueError("obs: features so large that the arm scores overflow")
        actions = self._argmax(scores)
        rows, residual = self._exploring(Xf)
        if rows.size:
            actions[rows] = random_argmax(residual, [self.rng_.gens[i] for i in rows])
        return self._unwrap(actions)

    def _exploring(self, Xf: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """[S1] §5.1's initial exploration on Xf (N, K, d): the instances that explore this round and,
        for each, every arm's distance to the span of the arms it pulled (it pulls the farthest)."""
        exploring = np.flatnonzero(self._rank < self.d_) if self.init_explore else np.zeros(0, dtype=np.int64)
        if not exploring.size:
            return exploring, np.zeros((0, Xf.shape[1]))
        Xe, Be = Xf[exploring], self._basis[exploring]
        residual = np.linalg.norm(Xe - (Xe @ Be) @ np.swapaxes(Be, -1, -2), axis=-1)
        go = residual.max(axis=-1) > 1e-8 * np.maximum(1.0, np.abs(Xe).max(axis=(1, 2)))
        return exploring[go], residual[go]

    def _probs(self, X: np.ndarray) -> np.ndarray | None:
        """Exact for an index policy (`index_policy = True`: `_scores` draws nothing), else None."""
        if not self.index_policy:
            return None
        Xf = check_finite(X).astype(np.float64, copy=False)
        probs = argmax_probs(self._scores(Xf))
        rows, residual = self._exploring(Xf)
        probs[rows] = argmax_probs(residual)
        return probs

    def observe(self, obs: np.ndarray, action, reward) -> None:
        """Record that arm `action` of obs gave `reward` (per instance when batched); update the estimates."""
        X = self._check_obs(obs)
        a, y = self._feedback(X, action, reward)
        x = X[np.arange(X.shape[0]), a].astype(np.float64)
        self._track_span(x)
        self.t_ += 1
        self._stats.add(a, x, y)
        self._learn(x, y)

    def _track_span(self, x: np.ndarray) -> None:
        """Gram-Schmidt: extend each instance's basis of the pulled arms' span by its new arm."""
        growing = np.flatnonzero(self._rank < self.d_)
        if not growing.size:
            return
        xe, Be = x[growing], self._basis[growing]
        v = xe - (Be @ (np.swapaxes(Be, -1, -2) @ xe[..., None]))[..., 0]
        norm = np.linalg.norm(v, axis=-1)
        new = norm > 1e-8 * np.maximum(1.0, np.abs(xe).max(axis=-1))
        rows = growing[new]
        self._basis[rows, :, self._rank[rows]] = v[new] / norm[new, None]
        self._rank[rows] += 1

    # -- shared by subclasses -------------------------------------------------------------------
    def _fit(self, theta: np.ndarray, S: np.ndarray | None = None) -> np.ndarray:
        """The (perturbed, if S is given) MLE of every instance, warm-started at theta, by chord
        Newton with the Hessian kept from earlier rounds (`fit_glm_ensemble`, one member)."""
        X, N, S = self._stats.blocks(S)
        theta, self._H_inv = fit_glm_ensemble(theta[:, None], self._H_inv, X, N, S[..., None], self.lam, self.link)
        return theta[:, 0]

    def _hyper(self, d: int) -> None:
        pass

    def _init_state(self, n: int, d: int) -> None:
        pass

    def _learn(self, x: np.ndarray, y: np.ndarray) -> None:
        pass
