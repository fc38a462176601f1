"""G-optimal (Kiefer-Wolfowitz) design on a finite arm set and its rounding to pull counts.

GLM-ES warms up by pulling arms in proportion to a G-optimal design ([S0] App. B.4, Alg. 2-3):

    pi = argmin_{pi in simplex} max_x ||x||^2_{V(pi)^{-1}},   V(pi) = sum_x pi(x) x x^T,

solved by Frank-Wolfe (the Fedorov-Wynn algorithm). By the Kiefer-Wolfowitz theorem the optimum
is max_x ||x||^2_{V(pi)^{-1}} = r (the rank of the arm set); the solver stops at r (1 + eps).
"""

from __future__ import annotations

import numpy as np

from agents.linalg import rls_update_


def g_optimal_design(X: np.ndarray, eps: float = 0.01, max_iter: int = 100_000) -> np.ndarray:
    """G-optimal design pi (K,) on the rows of X (K, d) by Frank-Wolfe with exact line search.

    Returns pi with max_x ||x||^2_{V(pi)^{-1}} <= r (1 + eps), r = rank(X) (Kiefer-Wolfowitz,
    Lattimore & Szepesvari 2020, Thm 21.1 and Note 21.2). Rank-deficient arm sets are handled in
    the span of the arms (V^{-1} is then the pseudo-inverse).
    """
    X = np.asarray(X, dtype=float)
    K = X.shape[0]
    U, s, _ = np.linalg.svd(X, full_matrices=False)
    r = int((s > s[0] * 1e-10).sum()) if s.size and s[0] > 0 else 0
    if r == 0:
        return np.full(K, 1.0 / K)
    Z = U[:, :r] * s[:r]                       # arms in an orthonormal basis of their span (K, r)
    pi = np.full(K, 1.0 / K)
    V_inv = np.linalg.inv(Z.T @ (pi[:, None] * Z))
    g = np.einsum("ki,ij,kj->k", Z, V_inv, Z)  # ||z_k||^2_{V(pi)^{-1}}
    for it in range(max_iter):
        if it % 200 == 0:                      # refresh the incremental g against rounding drift
            g = np.einsum("ki,ij,kj->k", Z, V_inv, Z)
        j = int(g.argmax())
        if g[j] <= r * (1 + eps):
            break
        # Exact line search for log det: pi <- (1 - gamma) pi + gamma e_j.
        gamma = (g[j] / r - 1) / (g[j] - 1)
        pi *= 1 - gamma
        pi[j] += gamma
        # V' = (1 - gamma)(V + c z z^T), c = gamma / (1 - gamma): one rank-one update.
        c = gamma / (1 - gamma)
        u = Z @ (V_inv @ Z[j])                 # z_k^T V^{-1} z_j for all k
        g = (g - c * u**2 / (1 + c * g[j])) / (1 - gamma)
        rls_update_(V_inv, np.sqrt(c) * Z[j])
        V_inv /= 1 - gamma
    return pi


def kiefer_wolfowitz_value(X: np.ndarray, pi: np.ndarray) -> float:
    """max_x ||x||^2_{V(pi)^{-1}} (pseudo-inverse on the span of X): d at the G-optimal design."""
    X = np.asarray(X, dtype=float)
    V_pinv = np.linalg.pinv(X.T @ (np.asarray(pi)[:, None] * X), hermitian=True)
    return float(np.einsum("ki,ij,kj->k", X, V_pinv, X).max())


def round_design(pi: np.ndarray, tau: int, d: int, a: float = 0.5) -> np.ndarray:
    """Pull counts N (K,) from design pi for tau warm-up rounds ([S0] Alg. 3; Pukelsheim ch. 12).

    N_i = ceil((tau - K/2) pi_i), moved one pull at a time to sum to tau (only arms in the design's
    support gain pulls), then floored at ceil(r(a)/K) with r(a) = (d(d+1)/2 + 1)/a, as in the last
    line of Alg. 3. That floor can make sum N exceed tau: the warm-up then lasts sum N rounds.
    """
    pi = np.asarray(pi, dtype=float)
    K = pi.size
    support = pi > 0
    N = np.ceil(max(tau - K / 2, 0.0) * pi).astype(np.int64)
    with np.errstate(divide="ignore", invalid="ignore"):
        while (total := N.sum()) != tau:
            ratio = (N - 1) / pi
            if total < tau:
                j = np.argmin(np.where(support, ratio, np.inf))
                N[j] += 1
            else:
                j = np.argmax(np.where(N > 0, ratio, -np.inf))
                N[j] -= 1
    floor = int(np.ceil((d * (d + 1) / 2 + 1) / a / K))
    return np.maximum(N, floor)


def round_robin(N: np.ndarray) -> np.ndarray:
    """Arm sequence pulling arm i N_i times, interleaved (every arm once, then again, ...).

    [S0] leaves the order open; interleaving keeps any prefix close to the design's proportions,
    which matters when a doubling-trick epoch ends before the warm-up does.
    """
    N = np.asarray(N, dtype=np.int64)
    arms = np.repeat(np.arange(N.size), N)
    rank = np.arange(arms.size) - np.repeat(np.cumsum(N) - N, N)
    return arms[np.argsort(rank, kind="stable")]
