"""Neural-PHE / NPR, "neural bandit with perturbed rewards" (Jia et al. 2022), baseline of [S0] §7."""

from __future__ import annotations

import torch

from agents.neural.core import NeuralAgent
from agents.params import LogUniform, Real


class NeuralPHE(NeuralAgent):
    """Neural bandit with perturbed rewards (Jia, Zhang, Zhou, Gu, Wang 2022); [S0]'s "Neural-PHE".

    One NTK network (Neural-ES's). After every round, fresh perturbations gamma_l ~ N(0, nu^2)
    are drawn for ALL observations l <= t and the network takes `steps` gradient steps
    (warm-started) on
        1/2 sum_{l<=t} (f(x_l; theta) - r_l - gamma_l)^2 + 1/2 lam N ||theta - theta_0||^2;
    act greedily on f (ties at random). [S0] Remarks 4.1 and 4.4 contrast this with Neural-ES,
    which keeps its perturbations: PHE redraws t of them every round.

    With full-batch training only the sum of a row's perturbations enters the gradient, so for
    the n_u observations of distinct row u one draw sqrt(n_u) nu xi_u ~ N(0, n_u nu^2) is exactly
    the law of that sum: the redraw costs O(distinct rows), O(t) when contexts never repeat.
    With minibatches every stored observation gets its own fresh gamma_l each round.

    Args:
        nu: perturbation std ([S0] gives none; default 0.1, the sigma_R of Neural-ES, which
            this perturbation plays the role of; docs/papers.md, S0-A6).
        width, depth, lam, lr, steps, update_every, batch_size, buffer_size: see NeuralAgent (Neural-ES's
            network and training).
        warm_start, warmup, mean_loss, duplicate_input, device, dtype, dim, seed: see NeuralAgent (no
            warm-up by default).
    """

    params = {"nu": Real(ge=0)}
    search_space = {"nu": LogUniform(0.01, 1)}              # and lr, lam (NeuralAgent)

    def __init__(self, *, nu=0.1, width=20, depth=3, lam=1.0, lr=0.01, steps=100, update_every=1, batch_size=None,
                 buffer_size=None, warm_start=True, warmup=0, mean_loss=True, duplicate_input=True, device="cpu",
                 dtype="float32", dim=None, seed=None):
        self.nu = nu
        super().__init__(width=width, depth=depth, lam=lam, lr=lr, steps=steps, update_every=update_every,
                         batch_size=batch_size, buffer_size=buffer_size, warm_start=warm_start, warmup=warmup,
                         mean_loss=mean_loss, duplicate_input=duplicate_input, device=device, dtype=dtype, dim=dim,
                         seed=seed)

    def _scores(self, X):
        return self.net_(X)

    def _targets(self, y_sum, z_sum, count):
        # sum over the row's observations of r_l + gamma_l, gamma_l fresh: N(y_sum, n_u nu^2); instance i
        # draws one normal per row of its own table (padding rows have count 0)
        U = count.shape[1]
        xi = torch.stack([torch.cat([torch.randn(u, generator=g, dtype=self._dtype),
                                     torch.zeros(U - u, dtype=self._dtype)]) for g, u in zip(self.gens_, self.buffer_.n_rows)])
        xi = xi.to(self._dev)
        return (y_sum + self.nu * count.sqrt() * xi)[:, None]

    def _update_noise(self):
        return self.nu * self._randn(self.buffer_.obs_y.shape[1])     # gamma per observation slot

    def _batch_targets(self, noise, idx, y, z):
        return (y + noise.gather(1, idx))[:, None]
