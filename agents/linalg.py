"""Rank-one updates of inverse Gram matrices, batched over a leading axis.

Every linear agent keeps V_t^{-1} (or Sigma_t, or a square root of it) with
V_t = lambda I + sum_s x_s x_s^T and updates it with the Sherman-Morrison identity, O(d^2) per
round instead of a fresh O(d^3) inverse:

    (V + x x^T)^{-1} = V^{-1} - (V^{-1} x)(V^{-1} x)^T / (1 + x^T V^{-1} x)     (V symmetric)

Shapes: V_inv (d, d) with x (d,), or V_inv (N, d, d) with x (N, d) for N independent instances.
"""

from __future__ import annotations

import numpy as np


def sherman_morrison(V_inv: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Return (V + x x^T)^{-1} given a symmetric V_inv = V^{-1}; inputs are not modified.

    Works on V_inv (d, d), x (d,) and batched V_inv (N, d, d), x (N, d).
    """
    V_inv = np.array(V_inv, dtype=float)
    sherman_morrison_(V_inv, np.asarray(x, dtype=float))
    return V_inv


def sherman_morrison_(V_inv: np.ndarray, x: np.ndarray) -> np.ndarray:
    """In-place Sherman-Morrison: overwrite V_inv with (V + x x^T)^{-1}; return the gain vector.

    The gain k = V_t^{-1} x = V_{t-1}^{-1} x / (1 + x^T V_{t-1}^{-1} x) (the new inverse applied to
    x, shape of x) is what ridge updates need next: theta_t = theta_{t-1} + k (y - x^T theta_{t-1}).
    V_inv must be a writable float array and symmetric; x is only read.
    """
    u = V_inv @ x[..., None]                            # V^{-1} x, (..., d, 1)
    k = u / (1.0 + x[..., None, :] @ u)                 # / (1 + x^T V^{-1} x)
    V_inv -= k * u.swapaxes(-1, -2)
    return k[..., 0]


def rls_update_(W: np.ndarray, x: np.ndarray, target: np.ndarray | None = None) -> np.ndarray:
    """In-place recursive least squares on an augmented matrix W = [V^{-1} | C], C = V^{-1} B.

    W is (d, d + p) or (N, d, d + p); its first d columns hold the symmetric V^{-1} and the other p
    columns hold solutions C = V^{-1} B of ridge problems sharing V (theta_hat = V^{-1} b, an
    ensemble's members, Ensemble++'s [mu | A]). One call adds the data point x (shape (d,) or
    (N, d)) with targets `target` (shape (p,) or (N, p), a sequence of p numbers for x (d,); zeros
    if None) to all of them:

        V <- V + x x^T,  B <- B + x target^T,
        W <- W - k (x^T W - [0 | target]),  k = V_new^{-1} x = V^{-1} x / (1 + x^T V^{-1} x),

    the Sherman-Morrison step applied to all columns at once: O(d (d + p)) and no inverse.
    Returns 1 + x^T V^{-1} x (shape (N, 1, 1), a float64 for x (d,)), the factor det(V_new) / det(V).
    """
    if x.ndim == 2 and len(x) == 1:     # one instance: the 1-D form on views, the same products at half the cost
        return rls_update_(W[0], x[0], None if target is None else target[0])[None, None, None]
    d = x.shape[-1]
    if x.ndim == 1:                     # (ndarray.dot: the BLAS gemv and dot of the batched form, with less overhead)
        r = x.dot(W)
        denom = 1.0 + r[:d].dot(x)
        if target is not None and len(target) == 1:
            r[d] -= target[0]                           # one target (theta_hat): a scalar, no array call
        elif target is not None:
            r[d:] -= target
        W -= (r[:d, None] / denom) * r
        return denom
    r = x[..., None, :] @ W                             # x^T W = [(V^{-1} x)^T | x^T C], (..., 1, d + p)
    denom = 1.0 + r[..., :d] @ x[..., :, None]          # 1 + x^T V^{-1} x
    if target is not None:
        r[..., d:] -= target[..., None, :]
    W -= (r[..., :d].swapaxes(-1, -2) / denom) * r
    return denom


def potter_update_(R: np.ndarray, x: np.ndarray) -> np.ndarray:
    """In-place square-root update: given R with R R^T = V^{-1}, make R R^T = (V + x x^T)^{-1}.

    Potter's square-root form: with u = R^T x and s = u^T u,
        (V + x x^T)^{-1} = R (I - u u^T / (1 + s)) R^T = R (I - c u u^T)^2 R^T,
        c = 1 / (sqrt(1 + s) (sqrt(1 + s) + 1)),
    so R <- R - c (R u) u^T keeps an O(d^2) factor for sampling N(0, V^{-1}) without a Cholesky
    factorisation per round. R is (d, d) or (N, d, d), x is (d,) or (N, d); R must be writable.
    Returns the gain k = (V + x x^T)^{-1} x = R u / (1 + s), shaped like x.
    """
    if x.ndim == 2 and len(x) == 1:     # one instance: the 1-D form on views, the same products at half the cost
        return potter_update_(R[0], x[0])[None]
    if x.ndim == 1:                     # (ndarray.dot: the BLAS gemv and dot of the batched form, with less overhead)
        u = x.dot(R)
        s1 = 1.0 + u.dot(u)
        Ru = R.dot(u)
        r = np.sqrt(s1)
        R -= Ru[:, None] * (u / (r * (r + 1.0)))
        return Ru / s1
    u = x[..., None, :] @ R                             # (R^T x)^T, (..., 1, d)
    s1 = 1.0 + u @ u.swapaxes(-1, -2)                   # 1 + s, (..., 1, 1)
    Ru = R @ u.swapaxes(-1, -2)                         # (..., d, 1)
    r = np.sqrt(s1)
    R -= Ru * (u / (r * (r + 1.0)))
    return (Ru / s1)[..., 0]
