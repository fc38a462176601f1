"""NeuralUCB (Zhou et al. 2020) and NeuralTS (Zhang et al. 2021), baselines of [S0] §7.

[S0] only names them (docs/papers.md, S0-A11): the definitions are those of the original papers, with the
network and training of Neural-ES ([S0] §7.2: "the network structure is the same"). With
g(x) = grad_theta f(x; theta_{t-1}) and N the width (the m of the original papers):

    Z_0 = lam I,  Z_t = Z_{t-1} + g(x_t) g(x_t)^T / N,  sigma_t(x)^2 = g(x)^T Z_{t-1}^{-1} g(x) / N,
    NeuralUCB:  U_t(x) = f(x; theta_{t-1}) + nu sigma_t(x)                       (gamma_t = nu fixed)
    NeuralTS:   r~_t(x) ~ N(f(x; theta_{t-1}), nu^2 lam sigma_t(x)^2), independently per arm.

Z is diagonal by default (`diag=True`, the usual practice and the authors' code): one number per
parameter, kept as one (in, out) tensor per layer, and sigma^2 is computed from the factored
per-arm gradients without forming them. `diag=False` keeps the full p x p inverse Z^{-1}, updated
by Sherman-Morrison (O(p^2) a round, O(K p^2) to score K arms; never a fresh inverse).

The gradient entering Z_t is taken at theta_{t-1}, the weights that scored the arms, before the
round's training (as the authors' public code does).
"""

from __future__ import annotations

import torch

from agents.neural.core import NeuralAgent
from agents.params import Bool, LogUniform, Real
from agents.neural.nets import bmm, NTKEnsemble, readout


class _NeuralConfidence(NeuralAgent):
    """A single NTK network with a (diagonal or full) design matrix Z of its gradient features."""

    params = {"nu": Real(ge=0), "diag": Bool(), "lam": Real(gt=0)}   # Z_0 = lam I must be invertible
    search_space = {"nu": LogUniform(0.01, 10)}             # and lr, lam (NeuralAgent)

    def __init__(self, *, nu=1.0, diag=True, width=20, depth=3, lam=1.0, lr=0.01, steps=100, update_every=1,
                 batch_size=None, buffer_size=None, warm_start=True, warmup=0, mean_loss=True, duplicate_input=True,
                 device="cpu", dtype="float32", dim=None, seed=None):
        self.nu, self.diag = nu, diag
        super().__init__(width=width, depth=depth, lam=lam, lr=lr, steps=steps, update_every=update_every,
                         batch_size=batch_size, buffer_size=buffer_size, warm_start=warm_start, warmup=warmup,
                         mean_loss=mean_loss, duplicate_input=duplicate_input, device=device, dtype=dtype, dim=dim,
                         seed=seed)

    def _setup(self):
        W = self.net_.weights      # (N, in, out) per layer: one network per instance
        if self.diag:
            self.Z_ = [torch.full(w.shape, float(self.lam), device=w.device, dtype=w.dtype) for w in W]
        else:
            p = self.net_.num_params
            eye = torch.eye(p, device=W[0].device, dtype=W[0].dtype) / self.lam
            self.Zinv_ = eye.repeat(self.n_, 1, 1)

    def _before_store(self, x):
        """Z_t = Z_{t-1} + g g^T / N with g = g(x_t; theta_{t-1}), for every instance."""
        factors = self.net_.grad_factors(x[:, None])
        N = self.width
        if self.diag:
            for (a, d), Z in zip(factors, self.Z_):
                Z.addcmul_((a * a).transpose(1, 2), d * d, value=1.0 / N)
        else:
            g = NTKEnsemble.flat(factors)[:, 0]                                  # (N, p)
            v = bmm(self.Zinv_, g[:, :, None])[:, :, 0]
            denom = N + (g * v).sum(1)
            self.Zinv_.sub_(v[:, :, None] * v[:, None, :] / denom[:, None, None])   # Sherman-Morrison for Z + g g^T / N

    def _mean_and_variance(self, X):
        """f(x; theta) and sigma^2(x) = g^T Z^{-1} g / N for every arm: two (N, K) tensors."""
        net = self.net_
        factors = net.grad_factors(X)
        f = readout(factors[-1][0], net.weights[-1][:, None, :, 0]) * net.scale
        if self.diag:
            q = NTKEnsemble.diag_quadratic(factors, [1.0 / Z for Z in self.Z_])
        else:
            G = NTKEnsemble.flat(factors)
            q = (bmm(G, self.Zinv_) * G).sum(-1)
        return f, q.clamp_min(0) / self.width


class NeuralUCB(_NeuralConfidence):
    """NeuralUCB (Zhou, Li, Gu 2020), the "Neural-UCB" baseline of [S0] §7.

    Pull argmax_x f(x; theta_{t-1}) + nu sqrt(g^T Z_{t-1}^{-1} g / N), then add the pulled
    arm's g g^T / N to Z and train the network as Neural-ES trains one member, without
    perturbations (eq. 4.4 with Z = 0). A fixed exploration scale nu replaces the theoretical
    gamma_t, as in practice.

    Args:
        nu: exploration scale gamma ([S0] gives none; the authors' code default 1;
            docs/papers.md, S0-A6).
        diag: diagonal approximation of Z (True) or the full matrix by Sherman-Morrison.
        width, depth, lam, lr, steps, update_every, batch_size, buffer_size: see NeuralAgent (Neural-ES's
            network and training).
        warm_start, warmup, mean_loss, duplicate_input, device, dtype, dim, seed: see NeuralAgent (no
            warm-up by default).
    """

    index_policy = True

    def _scores(self, X):
        f, var = self._mean_and_variance(X)
        return f + self.nu * var.sqrt()


class NeuralTS(_NeuralConfidence):
    """NeuralTS (Zhang, Zhou, Li, Gu 2021), the "Neural-TS" baseline of [S0] §7.

    Each round draw r~(x) ~ N(f(x; theta_{t-1}), nu^2 lam g^T U_{t-1}^{-1} g / N) independently
    for every arm and pull the largest; U (called Z here) and the training are NeuralUCB's.

    Args:
        nu: exploration variance scale ([S0] gives none; the authors' code uses 1, which leaves NeuralTS
            at 0.89x Random's regret on [S0]'s distance bandit at T = 2,000, 0.1 at 0.41x: a search
            over {1, 0.3, 0.1} on seeds 200-204, docs/papers.md S0-A6; default 0.1).
        diag, width, depth, lam, lr, steps, update_every, batch_size, buffer_size: as NeuralUCB.
        warm_start, warmup, mean_loss, duplicate_input, device, dtype, dim, seed: as NeuralUCB.
    """

    def __init__(self, *, nu=0.1, diag=True, width=20, depth=3, lam=1.0, lr=0.01, steps=100, update_every=1,
                 batch_size=None, buffer_size=None, warm_start=True, warmup=0, mean_loss=True, duplicate_input=True,
                 device="cpu", dtype="float32", dim=None, seed=None):
        super().__init__(nu=nu, diag=diag, width=width, depth=depth, lam=lam, lr=lr, steps=steps,
                         update_every=update_every, batch_size=batch_size, buffer_size=buffer_size,
                         warm_start=warm_start, warmup=warmup, mean_loss=mean_loss, duplicate_input=duplicate_input,
                         device=device, dtype=dtype, dim=dim, seed=seed)

    def _scores(self, X):
        f, var = self._mean_and_variance(X)
        xi = self._randn(f.shape[1])
        return f + self.nu * (self.lam * var).sqrt() * xi
