"""EpiNet (Osband et al. 2023) and LMCTS (Xu et al. 2022): the other baselines of [S3] section 5.2.

Both reuse the network, buffer and batching of agents.ensemble_nn (N instances as stacked
tensors, per-instance random streams), so they differ from Ensemble++ only in how they explore.
"""

from __future__ import annotations

import numpy as np

from agents.base import register
from agents.ensemble_nn import _NeuralAgent
from agents.params import Int, Real, Widths
from agents.torch_batch import StackedMLP, linear_layer, tensor, torch


@register("EpiNet")
class EpiNet(_NeuralAgent):
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

    def __init__(self, *, M=8, sigma_z=0.01, prior_scale=1.0, index_samples=16, epinet_hidden=(15, 15),
                 prior_hidden=(5, 5), hidden=(64, 64), lr=1e-4, weight_decay=0.01, batch_size=128, updates=1,
                 buffer_size=10_000, device="cpu", seed=None, dim=None):
        self.M, self.sigma_z, self.prior_scale, self.index_samples = M, sigma_z, prior_scale, index_samples
        self.epinet_hidden, self.prior_hidden = epinet_hidden, prior_hidden
        super().__init__(hidden=hidden, lr=lr, weight_decay=weight_decay, batch_size=batch_size, updates=updates,
                         buffer_size=buffer_size, device=device, seed=seed, dim=dim)

    @property
    def z_dim(self):
        return self.M

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
        t = torch()
        n, B, _ = x.shape
        J, M = z.shape[1], self.M
        feats = self.net_(x)                                                       # (N, B, D)
        mu = t.einsum("nbd,nd->nb", feats, self.b_)[:, None, :]                   # (N, 1, B)
        inp = t.cat([x[:, None].expand(n, J, B, -1), feats.detach()[:, None].expand(n, J, B, -1),
                     z[:, :, None].expand(n, J, B, M)], dim=-1).reshape(n, J * B, -1)
        w, b = self.epi_out_
        epi = t.baddbmm(b, self.epi_(inp), w).reshape(n, J, B, M)
        learnable = (epi * z[:, :, None, :]).sum(-1)                               # (N, J, B)
        w0, b0 = self.prior_out_
        g = t.baddbmm(b0, self.prior_(x.repeat_interleave(M, dim=0)), w0).reshape(n, M, B)
        prior = t.einsum("njm,nmb->njb", z, g)
        return mu + learnable + self.prior_scale * prior

    def _forward_scores(self, X):
        z = tensor(self.rng_.standard_normal((self.n_, 1, self.M)), self.dev_)
        return self._f(X, z)[:, 0]

    def _perturbation(self, n):
        v = self.rng_.standard_normal((n, self.M))
        return tensor(v / np.linalg.norm(v, axis=-1, keepdims=True), self.dev_)

    def _loss(self, x, y, z):
        idx = tensor(self.rng_.standard_normal((self.n_, self.index_samples, self.M)), self.dev_)
        target = y[:, None, :] + self.sigma_z * torch().einsum("njm,nbm->njb", idx, z)
        return (0.5 * (target - self._f(x, idx)) ** 2).mean(dim=(1, 2))


@register("LMCTS")
class LMCTS(_NeuralAgent):
    """Langevin Monte Carlo Thompson sampling (Xu et al. 2022), the [S3] baseline (docs/papers.md, S3-A10).

    Each round runs `steps` Langevin steps on the network's parameters theta over the whole buffer
    (full batch, the official code's default; the buffer holds the last `buffer_size` points):
        theta <- theta - lr grad L(theta) + sqrt(2 lr beta_inv / n) eps,   eps ~ N(0, I),
    L = mean_s 1/2 (y_s - f(x_s))^2 + weight_decay / (2 n) ||theta||^2 on the n points held, which
    is Langevin dynamics for the posterior exp(-(n L) / beta_inv); then acts greedily on f. Its cost
    per round grows with the data held (the [S3] section 4.3 remark). beta_inv = 0.01 as in the code;
    the paper gives no step size or step count (both kwargs).
    """

    params = {"steps": Int(ge=1), "beta_inv": Real(gt=0)}

    def __init__(self, *, steps=10, lr=1e-3, beta_inv=0.01, weight_decay=0.01, hidden=(64, 64),
                 buffer_size=10_000, device="cpu", seed=None, dim=None):
        self.steps, self.beta_inv = steps, beta_inv
        super().__init__(hidden=hidden, lr=lr, weight_decay=weight_decay, batch_size=buffer_size, updates=1,
                         buffer_size=buffer_size, device=device, seed=seed, dim=dim)

    def _build(self, n, D):
        self.b_ = tensor(np.sqrt(2.0 / (D + 1)) * self.rng_.standard_normal((n, D)), self.dev_).requires_grad_()
        return [self.b_]

    def _forward_scores(self, X):
        return torch().einsum("nkd,nd->nk", self.net_(X), self.b_)

    def _update(self, x, y):
        t = torch()
        self.buffer_.add(tensor(x, self.dev_), tensor(y, self.dev_), self._perturbation(len(y)))
        m = self.buffer_.size
        xb, yb = self.buffer_.x[:, :m], self.buffer_.y[:, :m]
        noise = np.sqrt(2.0 * self.lr * self.beta_inv / m)
        for _ in range(self.steps):
            for p in self.params_:
                p.grad = None
            fit = (0.5 * (yb - t.einsum("nbd,nd->nb", self.net_(xb), self.b_)) ** 2).mean(dim=1)
            (fit + self._penalty()).sum().backward()
            with t.no_grad():
                for p in self.params_:
                    p -= self.lr * p.grad
                    p += noise * tensor(self.rng_.standard_normal(tuple(p.shape)), self.dev_)
