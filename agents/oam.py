"""Optimal-allocation agents for linear contextual bandits with finitely many action sets:
OAM ([S4] Hao, Lattimore, Szepesvari, Alg. 1) and OSSB (Combes, Magureanu, Proutiere 2017).

Both solve an allocation program with CVXPY (the optional extra `pip install gym-ctxbandits[oam]`,
imported only when a first program is solved, so `import agents` works without it). Both are
single-instance agents (`batched = False`): obs is the (K, d) action set of the round.

Contexts. In [S4] the context *is* the action set: a context is identified by the exact bytes of the
obs array (converted to float64), discovered online. The first `max_contexts` distinct action sets
are tracked (statistics, counts, allocation); rounds with an action set beyond that budget (e.g. a
problem whose arms are redrawn every round, where these algorithms do not apply) are played by a
documented fallback and leave no per-context state, so memory stays bounded.

The allocation program (shared by both agents, solved in a rescaled form for numerical stability):

    minimise    sum_i cost_i w_i                   over w in [lo, 1]^P   (P = arms of all tracked contexts)
    subject to  v_i^T (sum_j w_j a_j a_j^T + ridge I)^{-1} v_i <= rho_i   for every constrained arm i,

with w = T / n (OAM: T counts, n the horizon; OSSB: eta rates over eta_max). `cp.matrix_frac` makes
each constraint a (d+1) x (d+1) linear matrix inequality. Arms whose estimated gap is 0 (estimated
optimal in their context) cost nothing, so they sit at the box, w = lo = 1, and are not constrained
([S4] (3.6) constrains suboptimal arms only; CATALOG ambiguity 21). Gaps too small to be resolved
within the box (even w = 1 for every arm cannot meet rho_i) would make the program infeasible; their
rho_i is raised to FEASIBILITY_FACTOR times the value reached at w = 1 for every arm, i.e. "learn this
gap as well as the horizon allows". If the solver still fails, the previous allocation is kept (or
none, see the agents) and `solver_failures_` counts it.
"""

from __future__ import annotations

import math
import operator
import warnings
from typing import Any

import numpy as np

from agents.base import random_argmax, register
from agents.linear import LinUCB, _positive

__all__ = ["OAM", "OSSB", "solve_allocation", "oam_f"]

FEASIBILITY_FACTOR = 2.0   # rho_i >= this x (value of v_i^T H^{-1} v_i at w = 1 for every arm)
_GAP_TOL = 1e-12           # estimated gaps below this (relative to the largest |<x, theta_hat>|) count as 0


def _cvxpy():
    try:
        import cvxpy as cp
    except ImportError:  # pragma: no cover - depends on the environment
        raise ImportError("OAM and OSSB solve their allocation program with CVXPY, which is not installed; "
                          "install it with `pip install cvxpy` or `pip install gym-ctxbandits[oam]`") from None
    return cp


def oam_f(n: int, delta: float, d: int, c: float = 1.0) -> float:
    """[S4] eq. (4.1): f_{n,delta} = 2 (1 + 1/log n) log(1/delta) + c d log(d log n)."""
    return 2.0 * (1.0 + 1.0 / math.log(n)) * math.log(1.0 / delta) + c * d * math.log(d * math.log(n))


class _Allocation:
    """A DPP-parametrised CVXPY program for fixed arms a_j and fixed constraint vectors v_i.

    Each constraint v_i^T H(w)^{-1} v_i <= rho_i is written as its Schur complement, the linear
    matrix inequality [[H(w), v_i], [v_i^T, rho_i]] >= 0 (what `cp.matrix_frac` expands to, but
    faster for CVXPY to compile). Built once per set of arms and re-solved with new (cost, rho, lo)
    parameters: CVXPY then skips most of the compilation, which dominates the time of a solve.
    Not pickled by the agents (a cache, rebuilt on demand).
    """

    def __init__(self, arms: np.ndarray, vecs: np.ndarray, ridge: float, solver: str | None):
        cp = _cvxpy()
        P, d = arms.shape
        self.w = cp.Variable(P)
        self.cost = cp.Parameter(P, nonneg=True)
        self.rho = cp.Parameter(P, pos=True)
        self.lo = cp.Parameter(P, nonneg=True)
        outer = np.einsum("pi,pj->ijp", arms, arms).reshape(d * d, P)   # column j: vec(a_j a_j^T)
        H = cp.reshape(outer @ self.w, (d, d), order="C") + ridge * np.eye(d)
        cons = [self.w >= self.lo, self.w <= 1.0]
        for i in range(P):
            v = vecs[i][:, None]
            cons.append(cp.bmat([[H, v], [v.T, cp.reshape(self.rho[i], (1, 1), order="C")]]) >> 0)
        self.problem = cp.Problem(cp.Minimize(self.cost @ self.w), cons)
        self.solver = solver

    def solve(self, cost, rho, lo) -> np.ndarray | None:
        self.cost.value, self.rho.value, self.lo.value = cost, rho, lo
        try:
            with warnings.catch_warnings():   # "Solution may be inaccurate": the status says so, accepted below
                warnings.simplefilter("ignore", UserWarning)
                self.problem.solve(solver=self.solver)
        except Exception:  # cvxpy.error.SolverError and numerical failures of the solver
            return None
        if self.problem.status not in ("optimal", "optimal_inaccurate") or self.w.value is None:
            return None
        return np.clip(self.w.value, lo, 1.0)


def solve_allocation(arms: np.ndarray, vecs: np.ndarray, gaps: np.ndarray, rhs: np.ndarray, scale: float,
                     ridge: float = 0.0, solver: str | None = "CLARABEL", program: _Allocation | None = None):
    """Solve  min sum_i gaps_i T_i  s.t.  vecs_i^T (sum_j T_j a_j a_j^T + ridge I)^{-1} vecs_i <= rhs_i
    for every i with gaps_i > 0,  0 <= T <= scale;  arms with gap 0 are fixed at T = scale.

    Returns (T, info): T (P,) or None if the solver failed, and info with the constraint values
    `lhs` (vecs_i^T H(T)^{-1} vecs_i at the solution), the rhs actually used `rhs_used` (raised for
    unresolvable gaps, see the module docstring) and `raised` (bool mask). `program`, if given, is a
    prebuilt `_Allocation(arms, vecs, ridge / scale, solver)` re-solved without recompiling.
    Problem (4.2) of [S4] is vecs = arms, rhs = gaps^2 / f_n, scale = n.
    """
    arms, vecs = np.asarray(arms, float), np.asarray(vecs, float)
    gaps, rhs = np.asarray(gaps, float), np.asarray(rhs, float)
    P, d = arms.shape
    free = gaps <= 0
    lo = free.astype(float)
    # Rescaled: w = T / scale, H(T) = scale (sum w a a^T + ridge / scale I), so the constraint reads
    # v^T (sum w a a^T + ridge/scale I)^{-1} v <= scale * rhs.
    r = ridge / scale
    full = arms.T @ arms + r * np.eye(d)
    at_box = np.einsum("pd,de,pe->p", vecs, np.linalg.pinv(full), vecs)   # lhs at w = 1 everywhere
    rho = scale * rhs
    raised = ~free & (rho < FEASIBILITY_FACTOR * at_box)
    rho = np.where(raised, FEASIBILITY_FACTOR * at_box, rho)
    # Gap-0 arms: inactive (w = 1 for such an arm a gives a^T H^{-1} a <= 1; OSSB's v = 0 for x_hat*).
    rho = np.where(free, 2.0 * np.maximum(at_box, 1.0), rho)
    rho = np.maximum(rho, 1e-12)
    if program is None:
        program = _Allocation(arms, vecs, r, solver)
    wv = program.solve(np.maximum(gaps, 0.0), rho, lo)
    info: dict[str, Any] = {"rhs_used": rho / scale, "raised": raised, "free": free}
    if wv is None:
        return None, info
    H = (arms.T * wv) @ arms + r * np.eye(d)
    info["lhs"] = np.einsum("pd,de,pe->p", vecs, np.linalg.inv(H), vecs) / scale
    return wv * scale, info


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


def _check_common(horizon, max_contexts, zeta, solver) -> None:
    if not (isinstance(horizon, (int, np.integer)) and not isinstance(horizon, bool) and horizon >= 3):
        raise ValueError(f"horizon must be an int >= 3 (the run length n), got {horizon!r}")
    if not (isinstance(max_contexts, (int, np.integer)) and not isinstance(max_contexts, bool) and max_contexts >= 1):
        raise ValueError(f"max_contexts must be an int >= 1, got {max_contexts!r}")
    if not (isinstance(zeta, (int, float, np.integer, np.floating)) and zeta >= 0 and math.isfinite(zeta)):
        raise ValueError(f"zeta must be a finite number >= 0 (0: re-solve every round), got {zeta!r}")
    if solver is not None and not isinstance(solver, str):
        raise ValueError(f"solver must be a CVXPY solver name (e.g. 'CLARABEL', 'SCS') or None, got {solver!r}")


@register("OAM")
class OAM(LinUCB):
    """Optimal Allocation Matching, [S4] section 4.1 Algorithm 1 (CATALOG L8).

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
       (the text of section 4.1; the box prints a misplaced square, CATALOG ambiguity 22). If some arm
       has N_x < target_x: b1 = argmin N_x / target_x, b2 = argmin N_x (eq. 4.5); play b2 if
       N_b2 <= epsilon_t s (forced exploration, s = s(t) after the increment, as in the text), else b1.
    4. Otherwise the round is "wasted": play LinUCB (eq. 4.6),
       argmax <x, theta_hat> + sqrt(f_{n, 1/s^2}) ||x||_{G^{-1}}.

    N_x counts pulls of arm x *in its context* (T^m_x is per context too; an arm vector shared by two
    action sets is counted separately in each). Ties break at random (agents.base.random_argmax).
    Rounds whose action set is beyond `max_contexts` have no allocation (target 0): they exploit or
    fall back to LinUCB. The empirical context distribution is kept (`context_counts_`, `p_hat`) but
    the allocation does not use it: [S4]'s optimal allocation does not depend on p.

    The allocation T(Delta_hat) solves (4.2) over the arms of all tracked contexts,
        min sum_m sum_x T^m_x Delta_hat^m_x  s.t.  ||x||^2_{H_T^{-1}} <= (Delta_hat^m_x)^2 / f_n for Delta_hat^m_x > 0,
    H_T = sum T^m_x x x^T + lam I, 0 <= T <= n, with the estimated gaps in the constraint and the
    box T <= n (CATALOG ambiguity 21; estimated-optimal arms sit at T = n at no cost). Lazily ([S4]
    section 5): it is re-solved only when det G_t has grown by a factor (1 + zeta) since the last solve,
    or when a new action set is tracked. `solves_` counts the solves. See the module docstring for
    the rescaling and for gaps too small to resolve within the horizon.

    With the default epsilon_t (>= 0.45 for t <= 10^4) forced exploration dominates finite-time
    regret (round-robin over the arms until (4.3) holds); `epsilon=0.01` (about 1/K or less) is the
    practical setting. Measurements and timings: docs/oam.md.

    Args:
        horizon: n, the run length used by f_n (CATALOG ambiguity 20: [S4] does not state it).
        c: the absolute constant c of f_{n,delta} (eq. 4.1; [S4] gives no value, CATALOG: c = 1).
        zeta: lazy-update factor (re-solve when det G_t >= (1 + zeta) det G_at_last_solve); [S4]: 0.1.
        epsilon: forced-exploration rate; None for epsilon_t = 1 / log(log t) ([S4] Thm 4.3), capped at 1
            (for t < e^e, where log log t <= 1); a float in [0, 1] for a constant rate.
        lam: ridge keeping G_t invertible (see above).
        max_contexts: number of distinct action sets tracked.
        solver: CVXPY solver name, or None for CVXPY's default choice.
    """

    batched = False

    def __init__(self, *, horizon: int = 10_000, c: float = 1.0, zeta: float = 0.1, epsilon: float | None = None,
                 lam: float = 1e-6, max_contexts: int = 10, solver: str | None = "CLARABEL",
                 seed: int | None = None, dim: int | None = None):
        _check_common(horizon, max_contexts, zeta, solver)
        if not (isinstance(c, (int, float, np.integer, np.floating)) and c >= 0 and math.isfinite(c)):
            raise ValueError(f"c must be a finite number >= 0, got {c!r}")
        if epsilon is not None and not (isinstance(epsilon, (int, float, np.integer, np.floating))
                                        and 0.0 <= epsilon <= 1.0):
            raise ValueError(f"epsilon must be None (1 / log log t) or a number in [0, 1], got {epsilon!r}")
        self.horizon, self.c, self.zeta, self.epsilon = horizon, c, zeta, epsilon
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
        self.context_counts_ = []            # rounds observed per tracked context
        self.untracked_rounds_ = 0
        self.allocation_ = []                # T^m_x (K_m,) per context solved so far
        self.solved_contexts_ = 0            # tracked contexts at the last solve
        self.logdet_at_solve_ = -np.inf
        self.basis_ = None                   # orthonormal basis of the span of the arms played (initialisation)
        self._program = None
        self._pending = None

    def __getstate__(self):
        state = self.__dict__.copy()
        state["_program"] = None             # a compiled CVXPY program is a cache, rebuilt on demand
        return state

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
    def _check_obs(self, obs):
        if np.ndim(obs) == 3:
            raise ValueError(f"{type(self).__name__} serves one instance: obs must be a (K, d) action set, got shape "
                             f"{np.shape(obs)}; run one agent per instance")
        return super()._check_obs(obs)

    def observe(self, obs, action, reward) -> None:
        self._pending = (obs, action)
        try:
            super().observe(obs, action, reward)
        finally:
            self._pending = None

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
        A = X[0]
        if not np.isfinite(A).all():
            raise ValueError("obs contains NaN or inf")
        A = A.astype(float, copy=False)
        theta = self.W_[0, :, -1]
        Ginv = self.W_[0, :, :-1]
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
        if m is not None and (m >= self.solved_contexts_
                              or self.logdet_[0, 0] - self.logdet_at_solve_ >= math.log1p(self.zeta)):
            self._solve(theta)
        gaps = self._gaps(A, theta)
        gmin = self._min_gap(theta, gaps)
        norms = np.einsum("kd,de,ke->k", A, Ginv, A)                # ||x||^2_{G^{-1}}
        if np.all(norms <= np.maximum(gmin**2, gaps**2) / self.f_n_):   # 2. exploit (4.3)
            self.rounds_["exploit"] += 1
            return np.array([random_argmax(A @ theta, self.rng_)])
        self.s_ += 1                                                   # 3. explore
        if m is not None and m < len(self.allocation_):
            cap = self.f_n_ / gmin**2 if gmin > 0 else np.inf
            target = np.minimum(self.allocation_[m], cap)
        else:
            target = np.zeros(A.shape[0])
        N = self.pulls_[m] if m is not None else np.zeros(A.shape[0], dtype=np.int64)
        if np.any(N < target):
            with np.errstate(divide="ignore", invalid="ignore"):
                ratio = np.where(target > 0, N / target, np.inf)
            b1 = random_argmax(-ratio, self.rng_)
            b2 = random_argmax(-N.astype(float), self.rng_)
            if N[b2] <= self._epsilon(t) * self.s_:
                self.rounds_["forced"] += 1
                return np.array([b2])
            self.rounds_["explore"] += 1
            return np.array([b1])
        self.rounds_["wasted"] += 1                                    # 4. wasted: LinUCB (4.6)
        self._set_width()
        return random_argmax(self._checked_scores(X.astype(float, copy=False)), self.rng_)

    def _min_gap(self, theta: np.ndarray, current: np.ndarray) -> float:
        """Delta_hat_min: the smallest nonzero estimated gap over tracked contexts and the current one."""
        pos = [current[current > 0]]
        for arms in self.contexts_.arms:
            g = self._gaps(arms, theta)
            pos.append(g[g > 0])
        pos = np.concatenate(pos)
        return float(pos.min()) if pos.size else 0.0

    def _solve(self, theta: np.ndarray) -> None:
        """Re-solve (4.2) at Delta_hat(t-1) over all tracked contexts; keep the old one on failure."""
        sets = self.contexts_.arms
        arms = np.concatenate(sets)
        gaps = np.concatenate([self._gaps(a, theta) for a in sets])
        if self._program is None or self._program_size != arms.shape[0]:
            self._program = _Allocation(arms, arms, self.lam / self.horizon, self.solver)
            self._program_size = arms.shape[0]
        T, _ = solve_allocation(arms, arms, gaps, gaps**2 / self.f_n_, self.horizon, self.lam,
                                self.solver, self._program)
        self.solves_ += 1
        self.logdet_at_solve_ = self.logdet_[0, 0]
        self.solved_contexts_ = len(sets)       # attempted; a failed solve keeps the old allocation
        if T is None:
            self.solver_failures_ += 1
            return
        self.allocation_ = np.split(T, np.cumsum([len(a) for a in sets])[:-1])


@register("OSSB")
class OSSB(LinUCB):
    """OSSB, Optimal Sampling for Structured Bandits (Combes, Magureanu, Proutiere 2017), for a
    linear bandit with Gaussian noise (CATALOG L9, NIS: the standard definition, as [S4] only cites it).

    Per arm empirical means mu_hat_x and counts N_x (no least squares: OSSB estimates each arm's mean
    on its own and uses the linear structure only in the allocation). Each round, with
    x_hat* = argmax mu_hat and Delta_hat_x = mu_hat(x_hat*) - mu_hat_x:
    - an arm never pulled is pulled first (mu_hat undefined);
    - eta(Delta_hat) solves the Graves-Lai program for linear-Gaussian structure
          min sum_x eta_x Delta_hat_x  s.t.  ||x - x_hat*||^2_{(sum eta_x x x^T)^{-1}} <= Delta_hat_x^2 / 2  (Delta_hat_x > 0),
      0 <= eta <= eta_max = n / log n (a box, as OAM's T <= n; estimated-optimal arms cost nothing and
      sit at the box);
    - exploit (play x_hat*) if N_x >= (1 + gamma) eta_x log t for every x with Delta_hat_x > 0 (the
      optimal arm's box value is not a requirement: it is pulled whenever OSSB exploits);
    - otherwise s <- s + 1; play argmin N_x if min N_x <= epsilon s (forced exploration), else
      argmin_{x: Delta_hat_x > 0} N_x / eta_x.
    Defaults epsilon = gamma = 0 (CATALOG ambiguity 20; with epsilon = 0 forced exploration happens
    only for never-pulled arms). Combes et al. re-solve every round; to save computation the program
    is re-solved lazily as OAM's ([S4] section 5): when det(lam I + sum_x N_x x x^T) has grown by
    (1 + zeta) or the estimated optimal arm changed (zeta = 0 re-solves every round).

    Contexts: OSSB is defined for one fixed action set; here each distinct action set (identified by its
    bytes, at most `max_contexts`) runs its own OSSB with its own counts, means and allocation (the
    contexts share nothing). Rounds with an action set beyond that budget play a uniformly random arm.

    Args:
        epsilon: forced-exploration rate (>= 0).
        gamma: exploitation slack (>= 0).
        horizon: n, fixing the box eta_max = n / log n.
        zeta: lazy-update factor.
        lam: ridge of the design matrix used by the lazy rule and the program (keeps it invertible).
        max_contexts: number of distinct action sets tracked.
        solver: CVXPY solver name, or None for CVXPY's default choice.
    """

    batched = False

    def __init__(self, *, epsilon: float = 0.0, gamma: float = 0.0, horizon: int = 10_000, zeta: float = 0.1,
                 lam: float = 1e-6, max_contexts: int = 10, solver: str | None = "CLARABEL",
                 seed: int | None = None, dim: int | None = None):
        _check_common(horizon, max_contexts, zeta, solver)
        for name, value in (("epsilon", epsilon), ("gamma", gamma)):
            if not (isinstance(value, (int, float, np.integer, np.floating)) and value >= 0 and math.isfinite(value)):
                raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")
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
        self._pending = None

    def _init_state(self, n, d):
        super()._init_state(n, d)
        self.contexts_ = _ContextTable(self.max_contexts)

    def _check_obs(self, obs):
        if np.ndim(obs) == 3:
            raise ValueError(f"{type(self).__name__} serves one instance: obs must be a (K, d) action set, got shape "
                             f"{np.shape(obs)}; run one agent per instance")
        return super()._check_obs(obs)

    def observe(self, obs, action, reward) -> None:
        self._pending = (obs, action)
        try:
            super().observe(obs, action, reward)
        finally:
            self._pending = None

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
        A = X[0]
        if not np.isfinite(A).all():
            raise ValueError("obs contains NaN or inf")
        A = A.astype(float, copy=False)
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
        if not np.any(sub & (N < need)):
            return np.array([best])                                    # exploit
        st["s"] += 1
        if N.min() <= self.epsilon * st["s"]:
            return np.array([random_argmax(-N.astype(float), self.rng_)])
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(sub & (eta > 0), N / eta, np.inf)
        return np.array([random_argmax(-ratio, self.rng_)])

    def _solve(self, st: dict, A: np.ndarray, best: int, gaps: np.ndarray, logdet: float) -> None:
        eta_max = self.horizon / math.log(self.horizon)
        eta, _ = solve_allocation(A, A - A[best], gaps, gaps**2 / 2.0, eta_max, self.lam, self.solver)
        self.solves_ += 1
        st["logdet_at_solve"], st["best_at_solve"] = logdet, best
        if eta is None:
            self.solver_failures_ += 1
            return
        st["eta"] = eta
