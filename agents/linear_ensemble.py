"""Linear Ensemble++ sampling ([S3] §3.1-3.2, Lemma 4.2) and its distributions ([S3] §4.2, App. E).

State per instance: the ridge posterior (mu_t, Sigma_t) of [S3] eq. 2 and the shared ensemble factor
A_t in R^{d x M}, which tracks Sigma_t^{1/2}: A_t A_t^T ~ Sigma_t once M ~ d log T (Lemma 4.2), so
mu_t + A_t zeta with zeta ~ N(0, I_M) is an approximate Thompson sample. Computed batched over N
instances with the conventions of agents.linear (lazy shape inference, one Generator).
"""

from __future__ import annotations

import math

import numpy as np

from agents.base import register
from agents.linalg import rls_update_
from agents.linear import LinearAgent, arm_scores, arm_scores1
from agents.params import Int, IntLogUniform, LogUniform, Options, Real

__all__ = ["LinearEnsemblePP", "DISTRIBUTIONS", "sample_reference", "sample_perturbation"]

DISTRIBUTIONS = ("gaussian", "sphere", "cube", "coordinate", "sparse")


def sample_reference(kind: str, rng: np.random.Generator, n: int, M: int, sparsity: int = 2) -> np.ndarray:
    """n draws zeta in R^M of a reference distribution of [S3] §4.2 Table 1 / App. E.

    All have E zeta = 0 and E zeta zeta^T = I_M:
    gaussian N(0, I_M); sphere sqrt(M) U(S^{M-1}) (App. E.1, Alg. 3); cube U({-1, 1}^M);
    coordinate U(sqrt(M) {+-e_1, ..., +-e_M}); sparse xi_i = omega_i eta_i sqrt(M / s) with
    omega ~ U({-1, 1}^M) and eta a uniformly random s-hot vector (App. E.5, Alg. 7).
    All but gaussian have norm exactly sqrt(M).
    """
    if kind == "gaussian":
        return rng.standard_normal((n, M))
    if kind == "sphere":
        v = rng.standard_normal((n, M))
        v *= np.sqrt(M / (v * v).sum(axis=1, keepdims=True))
        return v
    if kind == "cube":
        return 2.0 * rng.integers(0, 2, (n, M)) - 1.0
    if kind == "coordinate":
        out = np.zeros((n, M))
        out[np.arange(n), rng.integers(M, size=n)] = math.sqrt(M) * (2.0 * rng.integers(0, 2, n) - 1.0)
        return out
    if kind == "sparse":
        hot = np.argsort(rng.random((n, M)), axis=1) < sparsity       # s distinct coordinates per row
        signs = 2.0 * rng.integers(0, 2, (n, M)) - 1.0
        return hot * signs * math.sqrt(M / sparsity)
    raise ValueError(f"unknown distribution {kind!r}; choose one of {DISTRIBUTIONS}")


def sample_perturbation(kind: str, rng: np.random.Generator, n: int, M: int, sparsity: int = 2) -> np.ndarray:
    """n unit-norm perturbations z = zeta / ||zeta||_2 with zeta from `kind` ([S3] App. E intro).

    Unit norm is what Lemma 4.2 needs (with conditional 1/sqrt(M)-sub-Gaussianity). A normalised
    Gaussian is uniform on S^{M-1}, so "gaussian" and "sphere" perturbations coincide; the other
    families have norm sqrt(M) already.
    """
    zeta = sample_reference("sphere" if kind == "gaussian" else kind, rng, n, M, sparsity)
    return zeta / math.sqrt(M)


@register("Linear-Ensemble++")
class LinearEnsemblePP(LinearAgent):
    """Linear Ensemble++ sampling, [S3] §3.1 eqs. 2-4 (choices: docs/papers.md, S3-A5).

    Init: mu_0 = 0, Sigma_0 = prior_var I, A_0 = M^{-1/2} [A~_{0,1}, ..., A~_{0,M}], A~_{0,m} ~ N(0, Sigma_0).
    Act:  zeta_t ~ P_zeta (`reference`), theta_t = mu_{t-1} + A_{t-1} zeta_t (eq. 3), greedy arm.
    Observe: z_t ~ P_z (`perturbation`, unit norm), and with x = X_t / sigma, y = Y_t / sigma
        Sigma_t^{-1} = Sigma_{t-1}^{-1} + x x^T,  mu_t = Sigma_t (Sigma_{t-1}^{-1} mu_{t-1} + x y)   (eq. 2)
        A_t = Sigma_t (Sigma_{t-1}^{-1} A_{t-1} + x z_t^T)                                      (eq. 4)
    computed in the equivalent O(d^2 + d M) form with k = Sigma_t x (Sherman-Morrison):
        mu_t = mu_{t-1} + k (y - x^T mu_{t-1}),  A_t = A_{t-1} + k (z_t^T - x^T A_{t-1}),
    as one rank-one update of the stacked state W_ = [Sigma_t | mu_t | A_t] (agents.linalg.rls_update_).
    Unrolled, A_t = Sigma_t (Sigma_0^{-1} A_0 + sum_s x_s z_s^T), the solution of the symmetrised
    ridge problem eqs. 5-8 (eq. 6). Lemma 4.2: if M >~ d (log(1/delta) + log T),
    Sigma_t / 2 <= A_t A_t^T <= 3 Sigma_t / 2 for all t <= T w.p. 1 - delta; with M large the agent
    is exact Thompson sampling in the limit. No variance inflation (the experiments of [S3] use none).

    Defaults follow [S3] §5.1 / App. F.1: Gaussian reference, Sphere perturbation, prior N(0, 10 I),
    noise sd 1, and M = 8 ("nearly match TS with M = 8", Fig. 3(a); also the authors' code default).
    `reference="coordinate"` is [S3]'s stand-in for Lu & Van Roy ensemble sampling (§5.1).

    Args:
        M: ensemble size (columns of A).
        reference: reference distribution P_zeta, one of DISTRIBUTIONS.
        perturbation: perturbation distribution P_z (normalised to unit norm), one of DISTRIBUTIONS.
        prior_var: prior variance, Sigma_0 = prior_var I.
        sigma: reward noise standard deviation (the paper assumes 1).
        sparsity: s of the sparse distribution (code default 2), used only by "sparse".
    """

    params = {"M": Int(ge=1), "reference": Options(*DISTRIBUTIONS), "perturbation": Options(*DISTRIBUTIONS),
              "prior_var": Real(gt=0), "sigma": Real(gt=0), "sparsity": Int(ge=1)}
    row_state = ("W_", "_target")
    search_space = {"M": IntLogUniform(2, 32), "prior_var": LogUniform(0.1, 1000), "sigma": LogUniform(0.1, 10)}

    def __init__(self, *, M: int = 8, reference: str = "gaussian", perturbation: str = "sphere",
                 prior_var: float = 10.0, sigma: float = 1.0, sparsity: int = 2,
                 seed=None, dim: int | None = None):
        self.M, self.reference, self.perturbation = M, reference, perturbation
        self.prior_var, self.sigma, self.sparsity = prior_var, sigma, sparsity
        super().__init__(seed=seed, dim=dim)

    def _check_params(self):
        if self.sparsity > self.M:
            raise ValueError(f"sparsity must be an int in [1, M={self.M}], got {self.sparsity!r}")

    def _init_state(self, n, d):
        self.W_ = np.empty((n, d, d + 1 + self.M))          # [Sigma_t | mu_t | A_t], one RLS system
        self.W_[:, :, :d] = self.prior_var * np.eye(d)
        self.W_[:, :, d] = 0.0
        # A_0 = M^{-1/2} [A~_{0,m}], A~_{0,m} ~ N(0, prior_var I)
        self.W_[:, :, d + 1:] = math.sqrt(self.prior_var / self.M) * self.rng_.standard_normal((n, d, self.M))
        self._target = np.empty((n, 1 + self.M))          # buffer for [y_t / sigma | z_t^T]

    @property
    def Sigma_(self) -> np.ndarray:
        """Posterior covariance Sigma_t, (N, d, d)."""
        return self.W_[:, :, :self.d_]

    @property
    def mu_(self) -> np.ndarray:
        """Posterior mean mu_t, (N, d)."""
        return self.W_[:, :, self.d_]

    @property
    def A_(self) -> np.ndarray:
        """Ensemble factor A_t, (N, d, M)."""
        return self.W_[:, :, self.d_ + 1:]

    def _update(self, x, y):
        # eqs. 2 and 4 share Sigma_t: W <- W - k (x^T W - [0 | y | z^T]), k = Sigma_t x
        self._target[:, 0] = y / self.sigma
        self._target[:, 1:] = sample_perturbation(self.perturbation, self.rng_, self.n_, self.M, self.sparsity)
        rls_update_(self.W_, x / self.sigma, self._target)

    def _update1(self, x, y):
        target = self._target[0]
        target[0] = y / self.sigma
        z = target[1:]
        if self.perturbation in ("gaussian", "sphere"):     # `sample_perturbation`'s arithmetic on one row, in place
            v = self.rng_.standard_normal1(self.M)
            np.multiply(v, math.sqrt(self.M / float((v * v).sum())), out=z)
            z /= math.sqrt(self.M)
        else:
            z[:] = sample_perturbation(self.perturbation, self.rng_, 1, self.M, self.sparsity)[0]
        rls_update_(self.W_[0], x if self.sigma == 1.0 else x / self.sigma, target)     # x / 1.0 is x, bit for bit

    def _scores(self, X):
        zeta = sample_reference(self.reference, self.rng_, self.n_, self.M, self.sparsity)
        theta = self.W_[:, :, self.d_] + (self.A_ @ zeta[:, :, None])[:, :, 0]   # eq. 3
        return arm_scores(X, theta)

    def _scores1(self, X):
        zeta = (self.rng_.standard_normal1(self.M) if self.reference == "gaussian" else     # the same values
                sample_reference(self.reference, self.rng_, 1, self.M, self.sparsity)[0])
        W, d = self.W_[0], self.d_
        return arm_scores1(X, W[:, d] + W[:, d + 1:].dot(zeta))
