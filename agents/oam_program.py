"""The allocation program of OAM and OSSB ([S4] Hao, Lattimore, Szepesvari, Def. 4.1, eq. 4.2), the
confidence level f_{n,delta} of eq. 4.1 and the barycentric spanner of Remark 4.2: the optimisation
side of agents/oam.py, which holds the agents.

The program is solved exactly over T in [0, inf] by `optimal_allocation`: the estimated-optimal arms
cost nothing and get T = inf, which reduces the program to the orthogonal complement of their span
(dimension k). k = 0: free (bounded regret); k = 1 (every d = 2 instance of [S4], and its d = 3
changing-action-set instance): a closed form; k >= 2: an SDP compiled once (CVXPY Parameters) and
re-solved. CVXPY (the optional extra: `pip install -e ".[oam]"` in the clone) is imported only when
that SDP is actually needed, so `import agents` works without it. An earlier version boxed T <= n
and, where the box made the program infeasible, raised the rhs to 2x its value at "every arm n
times"; for small gaps (100 arms on the unit circle) that demanded a design as large as pulling
half the arms n times and put T = n on arms with gaps ~0.5: OAM's tracking then pulled bad arms.
See docs/oam.md.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

__all__ = ["optimal_allocation", "barycentric_spanner", "oam_f"]


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
