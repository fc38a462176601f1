"""LMCTS, Langevin Monte Carlo Thompson sampling (Xu et al. 2022), a baseline of [S3] section 5.2.

It reuses the network, buffer and batching of agents.neural.ensemble_pp.MLPAgent (N instances as
stacked tensors, per-instance random streams); only the update differs: Langevin steps on the
whole buffer instead of Adam on minibatches.
"""

from __future__ import annotations

import numpy as np
import torch

from agents.base import hyperparameters
from agents.neural.ensemble_pp import MLPAgent
from agents.neural.nets import einsum, tensor
from agents.neural.optim import Langevin, clear_grads
from agents.params import Int, LogUniform, Real


class LMCTS(MLPAgent):
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
    search_space = {"lr": LogUniform(1e-4, 1e-2), "beta_inv": LogUniform(1e-3, 0.1)}   # and weight_decay

    def __init__(self, *, steps=10, lr=1e-3, beta_inv=0.01, weight_decay=0.01, hidden=(64, 64),
                 buffer_size=10_000, device="cpu", seed=None, dim=None):
        super().__init__(**hyperparameters(locals()), batch_size=buffer_size, updates=1)

    def _build(self, n, D):
        self.langevin_ = Langevin(self.lr, self._noise)
        self.b_ = tensor(np.sqrt(2.0 / (D + 1)) * self.rng_.standard_normal((n, D)), self.dev_).requires_grad_()
        return [self.b_]

    def _forward_scores(self, X):
        return einsum("nkd,nd->nk", self.net_(X), self.b_)

    def _noise(self, shape: tuple[int, ...]):
        """Standard normals of `shape` (N first) from the instances' streams, on the device."""
        return tensor(self.rng_.standard_normal(shape), self.dev_)

    def _update(self, x, y):
        self.buffer_.add(x, y, self._perturbation(len(y)))
        m = self.buffer_.size
        xb, yb, _ = self.buffer_.sample(torch.arange(m, device=self.dev_).expand(self.n_, m))   # every point held
        self.langevin_.scale = np.sqrt(2.0 * self.lr * self.beta_inv / m)
        for _ in range(self.steps):
            clear_grads(self.params_)
            fit = (0.5 * (yb - einsum("nbd,nd->nb", self.net_(xb), self.b_)) ** 2).mean(dim=1)
            (fit + self._penalty()).sum().backward()
            self.langevin_.step(self.params_, [p.grad for p in self.params_])
