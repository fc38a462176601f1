"""EpiNet (Osband et al. 2023), a baseline of [S3] section 5.2.

It reuses the network, buffer and batching of agents.neural.ensemble_pp.MLPAgent (N instances as
stacked tensors, per-instance random streams), so it differs from Ensemble++ only in how it explores.
"""

from __future__ import annotations

import numpy as np
import torch

from agents.base import hyperparameters
from agents.neural.ensemble_pp import MLPAgent
from agents.params import Int, LogUniform, Real, Widths
from agents.neural.nets import baddbmm, einsum, linear_layer, StackedMLP, tensor


class EpiNet(MLPAgent):
    """EpiNet as [S3] App. A.7.1 describes it.

    f(x, z) = mu(x) + sigma_L([x, sg(x~), z]) + prior_scale sigma_P(x, z), index z ~ N(0, I_M):
    mu(x) = <x~, b> with x~ = h(x; w) the shared extractor; the learnable epinet sigma_L is an MLP
    with 2 hidden layers of 15 units on [x, sg(x~), z] whose M outputs are contracted with z; the
    fixed prior sigma_P is M small MLPs (2 hidden layers of 5 units) on the raw x, combined with z.
    Act: one z per round, greedy arm of f(., z). Learn (the code's form, docs/papers.md, S3-A9): `index_samples`
    indices z_j ~ N(0, I_M) per minibatch, regress f(x_s, z_j) on y_s + sigma_z z_j^T z_s with the
    stored z_s ~ U(S^{M-1}). Not applicable to a transformer backbone (it needs the raw input).
    """

    params = {"M": Int(ge=1), "sigma_z": Real(ge=0), "prior_scale": Real(ge=0), "index_samples": Int(ge=1),
              "epinet_hidden": Widths(), "prior_hidden": Widths()}
    search_space = {"prior_scale": LogUniform(0.1, 10), "sigma_z": LogUniform(1e-3, 0.1)}   # and lr, weight_decay

    def __init__(self, *, M=8, sigma_z=0.01, prior_scale=1.0, index_samples=16, epinet_hidden=(15, 15),
                 prior_hidden=(5, 5), hidden=(64, 64), lr=1e-4, weight_decay=0.01, batch_size=128, updates=1,
                 buffer_size=10_000, device="cpu", seed=None, dim=None):
        super().__init__(**hyperparameters(locals()))

    def _build(self, n, D):
        rng, dev, M = self.rng_, self.dev_, self.M
        self.b_ = tensor(np.sqrt(2.0 / (D + 1)) * rng.standard_normal((n, D)), dev).requires_grad_()
        self.epi_ = StackedMLP(rng, n, self.d_ + D + M, self.epinet_hidden, dev)
        self.epi_out_ = linear_layer(rng, n, self.epi_.out_dim, M, dev)
        self.prior_ = StackedMLP(rng, n, self.d_, self.prior_hidden, dev, trainable=False, groups=M)
        self.prior_out_ = linear_layer(rng, n, self.prior_.out_dim, 1, dev, groups=M, trainable=False)
        return [self.b_, *self.epi_.params, *self.epi_out_]

    def _f(self, x, z):
        """f(x, z) for x (N, B, d) and indices z (N, J, M): (N, J, B)."""
        n, B, _ = x.shape
        J, M = z.shape[1], self.M
        feats = self.net_(x)                                                       # (N, B, D)
        mu = einsum("nbd,nd->nb", feats, self.b_)[:, None, :]                   # (N, 1, B)
        inp = torch.cat([x[:, None].expand(n, J, B, -1), feats.detach()[:, None].expand(n, J, B, -1),
                     z[:, :, None].expand(n, J, B, M)], dim=-1).reshape(n, J * B, -1)
        w, b = self.epi_out_
        epi = baddbmm(b, self.epi_(inp), w).reshape(n, J, B, M)
        learnable = (epi * z[:, :, None, :]).sum(-1)                               # (N, J, B)
        w0, b0 = self.prior_out_
        g = baddbmm(b0, self.prior_(x.repeat_interleave(M, dim=0)), w0).reshape(n, M, B)
        prior = einsum("njm,nmb->njb", z, g)
        return mu + learnable + self.prior_scale * prior

    def _forward_scores(self, X):
        z = tensor(self.rng_.standard_normal((self.n_, 1, self.M)), self.dev_)
        return self._f(X, z)[:, 0]

    def _perturbation(self, n):
        v = self.rng_.standard_normal((n, self.M))
        return tensor(v / np.linalg.norm(v, axis=-1, keepdims=True), self.dev_)

    def _loss(self, x, y, z):
        idx = tensor(self.rng_.standard_normal((self.n_, self.index_samples, self.M)), self.dev_)
        target = y[:, None, :] + self.sigma_z * einsum("njm,nbm->njb", idx, z)
        return (0.5 * (target - self._f(x, idx)) ** 2).mean(dim=(1, 2))
