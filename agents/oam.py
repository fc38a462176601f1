"""Optimal-allocation agents for linear contextual bandits with finitely many action sets:
OAM ([S4] Hao, Lattimore, Szepesvari, Alg. 1) and OSSB (Combes, Magureanu, Proutiere 2017).

Both are single-instance agents (`batched = False`): obs is the (K, d) action set of the round.
CVXPY (the optional extra: `pip install -e ".[oam]"` in the clone) is imported only when a semidefinite
program is actually needed (see below), so `import agents` works without it.

Contexts. In [S4] the context *is* the action set: a context is identified by the exact bytes of the
obs array (converted to float64), discovered online. The first `max_contexts` distinct action sets
are tracked (statistics, counts, allocation); rounds with an action set beyond that budget (e.g. a
problem whose arms are redrawn every round, where these algorithms do not apply) are played by a
documented fallback and leave no per-context state, so memory stays bounded.

The allocation program ([S4] Def. 4.1, eq. 4.2; shared by both agents) is solved exactly over
T in [0, inf] by `optimal_allocation`: the estimated-optimal arms cost nothing and get T = inf, which
reduces the program to the orthogonal complement of their span (dimension k). k = 0: free (bounded
regret); k = 1 (every d = 2 instance of [S4], and its d = 3 changing-action-set instance): a closed
form; k >= 2: an SDP compiled once (CVXPY Parameters) and re-solved. An earlier version boxed T <= n
and, where the box made the program infeasible, raised the rhs to 2x its value at "every arm n
times"; for small gaps (100 arms on the unit circle) that demanded a design as large as pulling
half the arms n times and put T = n on arms with gaps ~0.5: OAM's tracking then pulled bad arms.
See docs/oam.md.
"""

from __future__ import annotations

import math
import operator
import warnings
from typing import Any

import numpy as np

from agents.base import check_finite, random_argmax, register
from agents.linear import LinUCB
from agents.params import Bool, Int, Real, Str

__all__ = ["OAM", "OSSB", "optimal_allocation", "barycentric_spanner", "oam_f"]

_GAP_TOL = 1e-12           # estimated gaps below this (relative to the largest |<x, theta_hat>|) count as 0


def _cvxpy():
    try:
        import cvxpy as cp
    except ImportError:  # pragma: no cover - depends on the environment
        raise ImportError("OAM and OSSB solve their allocation program with CVXPY, which is not installed; "
                          "install it with `pip install cvxpy`, or `pip install -e \".[oam]\"` in the gym-ctxbandits "
                          "clone") from None
    return cp


def oam_f(n: int, delta: float, d: int, c: float = 1.0) -> float:
    """[S4] eq. (4.1): f_{n,delta} = 2 (1 + 1/log n) log(1/delta) + c d log(d log n)."""
    return 2.0 * (1.0 + 1.0 / math.log(n)) * math.log(1.0 / delta) + c * d * math.log(d * math.log(n))


class _ProjectedSDP:
    """The projected program (see `optimal_allocation`) for k >= 2, as a DPP-parametrised CVXPY problem.

        minimise  sum_j cost_j w_j   over w >= 0,
        s.t.      [[H(w), z_i], [z_i^T, rho_i]] >= 0 for every i,   H(w) = sum_j w_j z_j z_j^T  (k x k),

    the Schur-complement form of z_i^T H(w)^{-1} z_i <= rho_i. The projected arms z_j, the costs and
    the rhs are Parameters, so the problem is compiled once per (P, k) and re-solved with new values
    (CVXPY then skips the compilation, which dominates a solve). Unconstrained rows get z_i = 0,
    rho_i = 1 (a vacuous constraint). Not pickled by the agents (a cache, rebuilt on demand).
    """

    def __init__(self, P: int, k: int, solver: str | None):
        cp = _cvxpy()
        self.w = cp.Variable(P, nonneg=True)
        self.cost = cp.Parameter(P, nonneg=True)
        self.rho = cp.Parameter(P, pos=True)
        self.Z = cp.Parameter((P, k))
        self.outer = cp.Parameter((k * k, P))                             # column j: vec(z_j z_j^T)
        H = cp.Variable((k, k), symmetric=True)
        cons = [cp.vec(H, order="C") == self.outer @ self.w]
        for i in range(P):
            z = cp.reshape(self.Z[i, :], (k, 1), order="C")
            cons.append(cp.bmat([[H, z], [z.T, cp.reshape(self.rho[i], (1, 1), order="C")]]) >> 0)
        self.problem = cp.Problem(cp.Minimize(self.cost @ self.w), cons)
        self.solver = solver

    def solve(self, Z, cost, rho) -> np.ndarray | None:
        P, k = Z.shape
        self.Z.value, self.cost.value, self.rho.value = Z, cost, rho
        self.outer.value = np.einsum("pi,pj->ijp", Z, Z).reshape(k * k, P)
        try:
            with warnings.catch_warnings():   # "Solution may be inaccurate": the status says so, accepted below
                warnings.simplefilter("ignore", UserWarning)
                self.problem.solve(solver=self.solver)
        except Exception:  # cvxpy.error.SolverError and numerical failures of the solver
            return None
        if self.problem.status not in ("optimal", "optimal_inaccurate") or self.w.value is None:
            return None
        return np.maximum(self.w.value, 0.0)


def optimal_allocation(arms: np.ndarray, gaps: np.ndarray, scale: float, *, solver: str | None = "CLARABEL",
                       cache: dict | None = None, method: str = "auto"):
    """[S4] Definition 4.1 / eq. (4.2), solved exactly over T in [0, inf]:

        minimise  sum_x T_x gap_x   s.t.  ||x||^2_{H_T^{-1}} <= gap_x^2 / scale  for every x with gap_x > 0,
        H_T = sum_x T_x x x^T,

    with `arms` (P, d) the arms of all contexts stacked and `gaps` their estimated gaps, each in its
    own context (0 for an estimated-optimal arm x_hat*_m). OAM: scale = f_n; OSSB: scale = 2 (its
    vectors x - x_hat* project to the same z below, so it is the same program).

    Estimated-optimal arms cost nothing, so the infimum puts T = inf on them (allowed: [S4] writes
    T in [0, inf]). With S = span{x_hat*_m} and U (d, k) an orthonormal basis of its orthogonal
    complement, lim_{t->inf} (H + t P_S)^{-1} = U (U^T H U)^{-1} U^T, so the program is exactly

        minimise  sum_x T_x gap_x   s.t.  z_x^T (sum_y T_y z_y z_y^T)^{-1} z_x <= gap_x^2 / scale,  z_x = U^T x,

    over the suboptimal arms (an arm with z_x = 0 is constrained by nothing and informs nothing: T_x = 0).
    - k = 0 (the x_hat*_m span R^d, [S4] section 3.1, sub-logarithmic regret): T = 0 off the optimal arms.
    - k = 1 (e.g. every d = 2 instance; changing action sets in d = 3): H is the scalar h = sum T_y z_y^2,
      every constraint reads h >= scale z_x^2 / gap_x^2, and the cheapest way to buy h is the arm with the
      most information per unit regret, argmax z_y^2 / gap_y: the closed form
          T_b = h* / z_b^2,  h* = scale max_x z_x^2 / gap_x^2,  b = argmax_y z_y^2 / gap_y
      (ties share h* equally; the program's solution is then not unique, [S4] Remark 4.4).
    - k >= 2: a semidefinite program (`_ProjectedSDP`), compiled once per (P, k) and kept in `cache`.
    `method="sdp"` forces the SDP for k = 1 too (used by the tests to check the closed form).

    Returns (T, info): T (P,) with inf on the estimated-optimal arms, or None if the solver failed;
    info has `k`, `method` ("span", "closed_form", "sdp") and `lhs` (||x||^2_{H_T^{-1}} with T = inf
    on the optimal arms, i.e. z^T (U^T H U)^{-1} z; 0 for the optimal arms), to compare with gaps^2 / scale.
    """
    arms, gaps = np.asarray(arms, float), np.asarray(gaps, float)
    P, d = arms.shape
    opt = gaps <= 0
    T = np.where(opt, np.inf, 0.0)
    info: dict[str, Any] = {"k": d, "lhs": np.zeros(P)}
    S = arms[opt]
    if S.shape[0]:
        _, sv, Vt = np.linalg.svd(S, full_matrices=True)
        rank = int((sv > 1e-10 * max(sv.max(), 1e-300)).sum())
        U = Vt[rank:].T                                                  # (d, k) orthonormal complement
    else:
        U = np.eye(d)
    k = U.shape[1]
    info["k"] = k
    if k == 0:
        info["method"] = "span"
        return T, info
    Z = arms @ U                                                         # (P, k) projected arms
    znorm2 = (Z * Z).sum(axis=1)
    active = ~opt & (znorm2 > 1e-18 * np.maximum((arms * arms).sum(axis=1), 1e-300))
    if not active.any():
        info["method"] = "span"
        return T, info
    g = np.where(active, gaps, 1.0)
    if k == 1 and method == "auto":
        z2 = Z[:, 0] ** 2
        h = scale * np.max(np.where(active, z2 / g**2, 0.0))
        value = np.where(active, z2 / g, -np.inf)                       # information per unit regret
        best = active & (value >= value.max() * (1.0 - 1e-9))
        T[best] = h / (best.sum() * z2[best])
        info["method"] = "closed_form"
        Hk = np.array([[h]])
    else:
        gmin = gaps[active].min()
        cost = np.where(active, gaps / gmin, 0.0)
        rho = np.where(active, (gaps / gmin) ** 2, 1.0)
        Zc = np.where(active[:, None], Z, 0.0)
        key = (P, k)
        program = cache.get(key) if cache is not None else None
        if program is None:
            program = _ProjectedSDP(P, k, solver)
            if cache is not None:
                cache[key] = program
        w = program.solve(Zc, cost, rho)
        info["method"] = "sdp"
        if w is None:
            return None, info
        # w is T / scale in units of 1 / gmin^2: z^T H_w^{-1} z <= (gap / gmin)^2  <=>  ||x||^2_{H_T^{-1}} <= gap^2 / scale
        T[active] = w[active] * scale / gmin**2
        Hk = (Zc.T * np.where(active, T, 0.0)) @ Zc
    try:
        Hinv = np.linalg.inv(Hk)
    except np.linalg.LinAlgError:
        Hinv = np.linalg.pinv(Hk)
    info["lhs"] = np.where(active, np.einsum("pi,ij,pj->p", Z, Hinv, Z), 0.0)
    return T, info


def barycentric_spanner(A: np.ndarray, C: float = 2.0) -> np.ndarray:
    """Indices of a C-approximate barycentric spanner of the rows of A (Awerbuch & Kleinberg 2004,
    Prop. 2.4), the forced-exploration set of [S4] Remark 4.2: d arms such that every arm is a
    combination of them with coefficients in [-C, C]. Greedy |det| maximisation, then swaps that
    grow |det| by more than C. If A does not span R^d, all indices are returned."""
    A = np.asarray(A, dtype=float)
    K, d = A.shape
    B = np.eye(d)
    idx = [-1] * d

    def dets(i):
        M = np.repeat(B[None], K, axis=0)
        M[:, i, :] = A
        return np.abs(np.linalg.det(M))

    for i in range(d):
        v = dets(i)
        idx[i] = int(np.argmax(v))
        B[i] = A[idx[i]]
    cur = abs(np.linalg.det(B))
    if cur <= 1e-12 * max(np.abs(A).max(), 1e-300) ** d:
        return np.arange(K)
    for _ in range(100):
        changed = False
        for i in range(d):
            v = dets(i)
            j = int(np.argmax(v))
            if v[j] > C * cur:
                B[i], idx[i], cur, changed = A[j], j, v[j], True
        if not changed:
            break
    return np.unique(idx)


class _ContextTable:
    """Action sets seen so far, keyed by the bytes of the float64 (K, d) array; at most `limit`."""

    def __init__(self, limit: int):
        self.limit = limit
        self.index: dict[bytes, int] = {}
        self.arms: list[np.ndarray] = []

    def lookup(self, X: np.ndarray, add: bool) -> int | None:
        key = np.ascontiguousarray(X, dtype=np.float64).tobytes()
        m = self.index.get(key)
        if m is None and add and len(self.arms) < self.limit:
            m = self.index[key] = len(self.arms)
            self.arms.append(np.array(X, dtype=np.float64))
        return m


# what OAM and OSSB share besides LinUCB's lam
_COMMON = {"horizon": Int(ge=3), "max_contexts": Int(ge=1), "zeta": Real(ge=0), "solver": (Str(), None)}


class _SingleInstance:
    """What OAM and OSSB share on top of LinUCB: one instance per object, `observe` keeps the
    round's (obs, action) for `_update`, which needs the whole action set, not only the pulled arm,
    and pickling drops the compiled CVXPY programs (a cache, rebuilt on demand)."""

    index_policy = False     # LinUCB's scores decide only the "wasted" rounds: action_probs samples

    def __getstate__(self):
        state = self.__dict__.copy()
        state["_programs"] = {}              # compiled CVXPY programs are a cache, rebuilt on demand
        return state

    def observe(self, obs, action, reward) -> None:
        self._pending = (obs, action)
        try:
            super().observe(obs, action, reward)
        finally:
            self._pending = None


@register("OAM")
class OAM(_SingleInstance, LinUCB):
    """Optimal Allocation Matching, [S4] section 4.1 Algorithm 1 (choices: docs/papers.md, S4-A1 to S4-A9).

    Statistics: least squares theta_hat_t = G_t^{-1} sum X_s Y_s with G_t = lam I + sum X_s X_s^T
    ([S4] has no regulariser; lam = 1e-6 only keeps G invertible before the initialisation ends and
    for action sets that do not span R^d; it is far below one observation's weight). G_t^{-1},
    theta_hat and log det G_t are LinUCB's own rank-one-updated state (this class is LinUCB with
    OAM's decision rule; its wasted rounds use LinUCB's scoring). Estimated gaps
    Delta_hat^m_x = max_y <y - x, theta_hat>, Delta_hat_min the smallest nonzero one over the
    tracked contexts (and the current one).

    Each round t with context (action set) A^{c_t}:
    1. Initialisation (while G is rank deficient, i.e. the first d rounds when every action set spans
       R^d): play the arm with the largest component orthogonal to the span of the arms played so
       far ([S4]: "any arm not in the span"). If the action set adds no new direction, play as in 4.
    2. Exploit if ||x||^2_{G^{-1}} <= max(Delta_hat_min^2, (Delta_hat_x)^2) / f_n for every x in
       A^{c_t} (eq. 4.3; f_n = f_{n,1/n} of eq. 4.1 with the constant c and the horizon n): play
       argmax <x, theta_hat> (eq. 4.4).
    3. Otherwise explore: s <- s + 1; target_x = min(T^{c_t}_x(Delta_hat), f_n / Delta_hat_min^2)
       (the text of section 4.1; the box prints a misplaced square, docs/papers.md, S4-A8). If some arm
       has N_x < target_x: b1 = argmin N_x / target_x, b2 = argmin N_x (eq. 4.5); play b2 if
       N_b2 <= epsilon_t s (forced exploration, s = s(t) after the increment, as in the text), else b1.
       With `spanner=True`, b2 is the least played arm of a barycentric spanner of A^{c_t} ([S4]
       Remark 4.2: forced exploration then costs d arms instead of K).
    4. Otherwise the round is "wasted": play LinUCB (eq. 4.6),
       argmax <x, theta_hat> + sqrt(f_{n, 1/s^2}) ||x||_{G^{-1}}.

    N_x counts pulls of arm x *in its context* (T^m_x is per context too; an arm vector shared by two
    action sets is counted separately in each). Ties break at random (agents.base.random_argmax).
    Rounds whose action set is beyond `max_contexts` have no allocation (target 0): they exploit or
    fall back to LinUCB. The empirical context distribution is kept (`context_counts_`, `p_hat`) but
    the allocation does not use it: [S4]'s optimal allocation does not depend on p.

    The allocation T(Delta_hat) solves (4.2) over the arms of all tracked contexts,
        min sum_m sum_x T^m_x Delta_hat^m_x  s.t.  ||x||^2_{H_T^{-1}} <= (Delta_hat^m_x)^2 / f_n for Delta_hat^m_x > 0,
    H_T = sum T^m_x x x^T, T in [0, inf], with the estimated gaps in the constraint (docs/papers.md,
    S4-A7), exactly: T = inf on the estimated-optimal arms (free), closed form when they leave one free
    direction (see `optimal_allocation`). So the target of x_hat* is f_n / Delta_hat_min^2, and the
    tracking (b1) pulls x_hat* and the arms with the most information per unit regret.
    Lazily ([S4] section 5): re-solved when det G_t has grown by a factor (1 + zeta) since the last
    solve, when a new action set is tracked, or when the set of estimated-optimal arms x_hat*_m has
    changed (Alg. 1 re-solves every round; without this an allocation with T = inf on a former
    x_hat* would be tracked until det G grew). `solves_` and `solve_reasons_` count the solves.

    Forced exploration. With the paper's rate epsilon_t = 1 / log log t (epsilon=None; >= 0.45 for
    t <= 10^4) and K >= 3 arms, N_b2 <= epsilon_t s(t) holds in every exploration round (min N <= s /
    K): every exploration round is forced, i.e. round-robin over the arms, and the regret is linear
    until (4.3) holds ([S4]'s proof, App. B.3, needs epsilon_t <= 1 / |A|, "satisfied when t is
    large"). The default is therefore a constant epsilon = 0.001, well below 1 / K, which learns;
    epsilon=0.01 with spanner=True (forced fraction d * epsilon) is another. Measurements: docs/oam.md.

    Args:
        horizon: n, the run length used by f_n ([S4] does not state it; docs/papers.md, S4-A1).
        c: the absolute constant c of f_{n,delta} (eq. 4.1; [S4] gives no value, S4-A2: c = 1).
        zeta: lazy-update factor (re-solve when det G_t >= (1 + zeta) det G_at_last_solve); [S4]: 0.1.
        epsilon: forced-exploration rate, a constant in [0, 1] (default 0.001), or None for [S4] Thm
            4.3's epsilon_t = 1 / log(log t), capped at 1 (for t < e^e, where log log t <= 1).
        spanner: forced exploration on a barycentric spanner of each action set (Remark 4.2) instead
            of on all its arms.
        lam: ridge keeping G_t invertible (see above).
        max_contexts: number of distinct action sets tracked.
        solver: CVXPY solver name, or None for CVXPY's default choice.
    """

    batched = False
    params = {**_COMMON, "c": Real(ge=0), "epsilon": (Real(ge=0, le=1), None), "spanner": Bool()}

    def __init__(self, *, horizon: int = 10_000, c: float = 1.0, zeta: float = 0.1, epsilon: float | None = 0.001,
                 spanner: bool = False, lam: float = 1e-6, max_contexts: int = 10, solver: str | None = "CLARABEL",
                 seed: int | None = None, dim: int | None = None):
        self.horizon, self.c, self.zeta, self.epsilon, self.spanner = horizon, c, zeta, epsilon, spanner
        self.max_contexts, self.solver = max_contexts, solver
        super().__init__(lam=lam, seed=seed, dim=dim)

    # -- state ----------------------------------------------------------------------------------
    def reset(self) -> None:
        super().reset()
        self.s_ = 0                          # exploration rounds s(t)
        self.solves_ = 0                     # allocation programs solved
        self.solver_failures_ = 0
        self.rounds_ = {"init": 0, "exploit": 0, "explore": 0, "forced": 0, "wasted": 0}
        self.contexts_ = None                # _ContextTable, created with the first obs
        self.pulls_ = []                     # N^m_x, one (K_m,) int array per tracked context
        self.spanners_ = []                  # forced-exploration arms per tracked context (all, or Remark 4.2's spanner)
        self.context_counts_ = []            # rounds observed per tracked context
        self.untracked_rounds_ = 0
        self.allocation_ = []                # T^m_x (K_m,) per context solved so far
        self.solved_contexts_ = 0            # tracked contexts at the last solve
        self.logdet_at_solve_ = -np.inf
        self.optimal_at_solve_ = b""         # which arms were estimated optimal at the last solve
        self.solve_reasons_ = {"context": 0, "argmax": 0, "det": 0}
        self.basis_ = None                   # orthonormal basis of the span of the arms played (initialisation)
        self._programs = {}
        self._pending = None

    def _init_state(self, n, d):
        super()._init_state(n, d)
        self.f_n_ = oam_f(self.horizon, 1.0 / self.horizon, d, self.c)
        self.contexts_ = _ContextTable(self.max_contexts)
        self.basis_ = np.zeros((0, d))

    def _set_width(self, t: int = 1) -> None:
        """eq. (4.6): the LinUCB width sqrt(f_{n, 1/s^2}) with s the exploration count."""
        s = max(getattr(self, "s_", 0), 1)
        self.width_ = np.full((1, 1), math.sqrt(oam_f(self.horizon, 1.0 / s**2, self.d_, self.c)))

    @property
    def p_hat(self) -> np.ndarray:
        """Empirical distribution of the tracked contexts (order of discovery)."""
        counts = np.asarray(self.context_counts_, dtype=float)
        return counts / counts.sum() if counts.sum() > 0 else counts

    # -- the protocol ---------------------------------------------------------------------------
    def _update(self, x, y):
        obs, action = self._pending
        X = np.asarray(obs, dtype=float)
        a = operator.index(action)
        super()._update(x, y)
        m = self.contexts_.lookup(X, add=True)
        if m is None:
            self.untracked_rounds_ += 1
        else:
            self._grow(m, X.shape[0])
            self.pulls_[m][a] += 1
            self.context_counts_[m] += 1
        if self.basis_.shape[0] < self.d_:
            r = x[0] - self.basis_.T @ (self.basis_ @ x[0])
            if np.linalg.norm(r) > 1e-9 * max(np.linalg.norm(x[0]), 1e-300):
                self.basis_ = np.vstack([self.basis_, r / np.linalg.norm(r)])

    def _grow(self, m: int, K: int) -> None:
        while len(self.pulls_) <= m:
            self.pulls_.append(np.zeros(K, dtype=np.int64))
            self.context_counts_.append(0)
            arms = self.contexts_.arms[len(self.spanners_)]
            self.spanners_.append(barycentric_spanner(arms) if self.spanner else np.arange(K))

    # -- decision -------------------------------------------------------------------------------
    def _gaps(self, arms: np.ndarray, theta: np.ndarray) -> np.ndarray:
        v = arms @ theta
        gaps = v.max() - v
        tol = _GAP_TOL * max(np.abs(v).max(), 1.0)
        return np.where(gaps > tol, gaps, 0.0)

    def _epsilon(self, t: int) -> float:
        if self.epsilon is not None:
            return float(self.epsilon)
        return 1.0 / max(1.0, math.log(math.log(max(t, 3))))

    def _choose(self, X):
        A = check_finite(X[0]).astype(float, copy=False)
        theta = self.W_[0, :, -1]                                     # theta_hat_{t-1}
        Ginv = self.W_[0, :, :-1]                                     # G_{t-1}^{-1}
        t = self.t_ + 1
        if self.basis_.shape[0] < self.d_:                           # 1. initialisation
            resid = A - (A @ self.basis_.T) @ self.basis_
            r = np.linalg.norm(resid, axis=1)
            if r.max() > 1e-9 * max(np.linalg.norm(A, axis=1).max(), 1e-300):
                self.rounds_["init"] += 1
                self.contexts_.lookup(A, add=True)
                return np.array([random_argmax(r, self.rng_, atol=1e-12 * r.max())])
        m = self.contexts_.lookup(A, add=True)
        if m is not None:
            self._grow(m, A.shape[0])
        # Delta_hat^m(t-1) for every tracked context; Delta_hat_min(t-1) over them (and the current set)
        all_gaps = [self._gaps(arms, theta) for arms in self.contexts_.arms]
        gaps = all_gaps[m] if m is not None else self._gaps(A, theta)
        pos = np.concatenate([g[g > 0] for g in all_gaps + [gaps]])
        gmin = float(pos.min()) if pos.size else 0.0
        if m is not None:
            optimal = np.concatenate([g == 0 for g in all_gaps]).tobytes()   # which arms are x_hat*_m
            reason = ("context" if m >= self.solved_contexts_ else
                      "argmax" if optimal != self.optimal_at_solve_ else
                      "det" if self.logdet_[0, 0] - self.logdet_at_solve_ >= math.log1p(self.zeta) else None)
            if reason is not None:
                self.solve_reasons_[reason] += 1
                self._solve(all_gaps, optimal)
        norms = np.einsum("kd,de,ke->k", A, Ginv, A)                # ||x||^2_{G_{t-1}^{-1}}
        if np.all(norms <= np.maximum(gmin**2, gaps**2) / self.f_n_):   # 2. exploit: (4.3) holds
            self.rounds_["exploit"] += 1
            return np.array([random_argmax(A @ theta, self.rng_)])  # (4.4)
        self.s_ += 1                                                   # 3. explore: s(t) = s(t-1) + 1
        if m is not None and m < len(self.allocation_):
            cap = self.f_n_ / gmin**2 if gmin > 0 else np.inf
            target = np.minimum(self.allocation_[m], cap)             # min(T^{c_t}_x, f_n / Delta_hat_min^2)
        else:
            target = np.zeros(A.shape[0])
        N = self.pulls_[m] if m is not None else np.zeros(A.shape[0], dtype=np.int64)
        if np.any(N < target):
            with np.errstate(divide="ignore", invalid="ignore"):
                ratio = np.where(target > 0, N / target, np.inf)
            b1 = random_argmax(-ratio, self.rng_)                     # (4.5): argmin N_x / target_x
            if m is not None and self.spanner:                        # Remark 4.2: argmin over the spanner
                sp = self.spanners_[m]
                b2 = int(sp[random_argmax(-N[sp].astype(float), self.rng_)])
            else:
                b2 = random_argmax(-N.astype(float), self.rng_)       # (4.5): argmin N_x
            if N[b2] <= self._epsilon(t) * self.s_:                   # forced exploration, eps_t s(t)
                self.rounds_["forced"] += 1
                return np.array([b2])
            self.rounds_["explore"] += 1
            return np.array([b1])
        self.rounds_["wasted"] += 1                                    # 4. wasted: LinUCB (4.6)
        self._set_width()
        return random_argmax(self._checked_scores(X.astype(float, copy=False)), self.rng_)

    def _solve(self, all_gaps: list, optimal: bytes) -> None:
        """Solve (4.2) at Delta_hat(t-1) over all tracked contexts (`optimal_allocation`: exact, T = inf
        on the estimated-optimal arms); on a solver failure keep the previous allocation."""
        sets = self.contexts_.arms
        T, _ = optimal_allocation(np.concatenate(sets), np.concatenate(all_gaps), self.f_n_,
                                  solver=self.solver, cache=self._programs)
        self.solves_ += 1
        self.logdet_at_solve_ = self.logdet_[0, 0]
        self.optimal_at_solve_ = optimal
        self.solved_contexts_ = len(sets)       # attempted; a failed solve keeps the old allocation
        if T is None:
            self.solver_failures_ += 1
            return
        self.allocation_ = np.split(T, np.cumsum([len(a) for a in sets])[:-1])


@register("OSSB")
class OSSB(_SingleInstance, LinUCB):
    """OSSB, Optimal Sampling for Structured Bandits (Combes, Magureanu, Proutiere 2017), for a
    linear bandit with Gaussian noise (the standard definition, as [S4] only cites it; docs/papers.md, S4-A4).

    Per arm empirical means mu_hat_x and counts N_x (no least squares: OSSB estimates each arm's mean
    on its own and uses the linear structure only in the allocation). Each round, with
    x_hat* = argmax mu_hat and Delta_hat_x = mu_hat(x_hat*) - mu_hat_x:
    - an arm never pulled is pulled first (mu_hat undefined);
    - eta(Delta_hat) solves the Graves-Lai program for linear-Gaussian structure
          min sum_x eta_x Delta_hat_x  s.t.  ||x - x_hat*||^2_{(sum eta_x x x^T)^{-1}} <= Delta_hat_x^2 / 2  (Delta_hat_x > 0),
      eta in [0, inf]: x_hat* costs nothing, eta = inf on it, and the program is OAM's with f_n
      replaced by 2 (`optimal_allocation`, closed form for d = 2; an earlier version boxed
      eta <= n / log n);
    - exploit (play x_hat*) if N_x >= (1 + gamma) eta_x log t for every x with Delta_hat_x > 0;
    - otherwise s <- s + 1; play argmin N_x if min N_x <= epsilon s (forced exploration), else
      argmin_{x: Delta_hat_x > 0} N_x / eta_x.
    Defaults epsilon = gamma = 0 (docs/papers.md, S4-A4; with epsilon = 0 forced exploration happens
    only for never-pulled arms). Combes et al. re-solve every round; to save computation the program
    is re-solved lazily as OAM's ([S4] section 5): when det(lam I + sum_x N_x x x^T) has grown by
    (1 + zeta) or the estimated optimal arm changed (zeta = 0 re-solves every round).

    Contexts: OSSB is defined for one fixed action set; here each distinct action set (identified by its
    bytes, at most `max_contexts`) runs its own OSSB with its own counts, means and allocation (the
    contexts share nothing). Rounds with an action set beyond that budget play a uniformly random arm.

    Args:
        epsilon: forced-exploration rate (>= 0).
        gamma: exploitation slack (>= 0).
        horizon: accepted for a uniform interface with OAM; not used (OSSB is anytime).
        zeta: lazy-update factor.
        lam: ridge of the design matrix used by the lazy rule and the program (keeps it invertible).
        max_contexts: number of distinct action sets tracked.
        solver: CVXPY solver name, or None for CVXPY's default choice.
    """

    batched = False
    params = {**_COMMON, "epsilon": Real(ge=0), "gamma": Real(ge=0)}

    def __init__(self, *, epsilon: float = 0.0, gamma: float = 0.0, horizon: int = 10_000, zeta: float = 0.1,
                 lam: float = 1e-6, max_contexts: int = 10, solver: str | None = "CLARABEL",
                 seed: int | None = None, dim: int | None = None):
        self.epsilon, self.gamma, self.horizon, self.zeta = epsilon, gamma, horizon, zeta
        self.max_contexts, self.solver = max_contexts, solver
        super().__init__(lam=lam, seed=seed, dim=dim)

    def reset(self) -> None:
        super().reset()
        self.contexts_ = None
        self.ctx_ = []         # per tracked context: dict(N, sums, s, eta, logdet_at_solve, best_at_solve)
        self.solves_ = 0
        self.solver_failures_ = 0
        self.untracked_rounds_ = 0
        self._programs = {}
        self._pending = None

    def _init_state(self, n, d):
        super()._init_state(n, d)
        self.contexts_ = _ContextTable(self.max_contexts)

    def _context(self, A: np.ndarray) -> dict | None:
        m = self.contexts_.lookup(A, add=True)
        if m is None:
            return None
        while len(self.ctx_) <= m:
            K, d = A.shape
            self.ctx_.append({"N": np.zeros(K, dtype=np.int64), "sums": np.zeros(K), "s": 0, "eta": None,
                              "V": self.lam * np.eye(d), "logdet_at_solve": -np.inf, "best_at_solve": -1})
        return self.ctx_[m]

    def _update(self, x, y):
        obs, action = self._pending
        a = operator.index(action)
        super()._update(x, y)   # LinUCB's state is not used by OSSB's rule; kept for the shared validation
        st = self._context(np.asarray(obs, dtype=float))
        if st is None:
            self.untracked_rounds_ += 1
            return
        st["N"][a] += 1
        st["sums"][a] += y[0]
        st["V"] += np.outer(x[0], x[0])

    def _choose(self, X):
        A = check_finite(X[0]).astype(float, copy=False)
        st = self._context(A)
        if st is None:
            return self.rng_.integers(A.shape[0], size=1)
        N = st["N"]
        if (N == 0).any():
            return np.array([random_argmax((N == 0).astype(float), self.rng_)])
        mu = st["sums"] / N
        best = random_argmax(mu, self.rng_)
        gaps = mu[best] - mu
        gaps[best] = 0.0
        gaps = np.where(gaps > 0, gaps, 0.0)
        logdet = np.linalg.slogdet(st["V"])[1]
        if st["eta"] is None or best != st["best_at_solve"] or logdet - st["logdet_at_solve"] >= math.log1p(self.zeta):
            self._solve(st, A, best, gaps, logdet)
        t = self.t_ + 1
        eta = st["eta"] if st["eta"] is not None else np.zeros(A.shape[0])
        need = (1.0 + self.gamma) * eta * math.log(max(t, 2))
        sub = gaps > 0
        need = np.where(sub, need, 0.0)                                # eta = inf on x_hat*: not a requirement
        if not np.any(sub & (N < need)):
            return np.array([best])                                    # exploit
        st["s"] += 1
        if N.min() <= self.epsilon * st["s"]:
            return np.array([random_argmax(-N.astype(float), self.rng_)])
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(sub & (eta > 0) & np.isfinite(eta), N / eta, np.inf)
        return np.array([random_argmax(-ratio, self.rng_)])

    def _solve(self, st: dict, A: np.ndarray, best: int, gaps: np.ndarray, logdet: float) -> None:
        """The Graves-Lai program at the empirical gaps: `optimal_allocation` with scale 2 (eta = inf on
        x_hat*, so x - x_hat* and x project to the same vector; exact, closed form when k <= 1)."""
        eta, _ = optimal_allocation(A, gaps, 2.0, solver=self.solver, cache=self._programs)
        self.solves_ += 1
        st["logdet_at_solve"], st["best_at_solve"] = logdet, best
        if eta is None:
            self.solver_failures_ += 1
            return
        st["eta"] = eta
