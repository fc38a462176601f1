"""The optimisers of the neural agents, behind one interface: `step(params, grads)` updates a list
of tensors in place from their gradients (the [S3] agents pass the `.grad` that autograd left).

- `Adam`: PyTorch's Adam ([S3]'s Ensemble++, Ensemble+, EpiNet, NeuralGreedy, GPT-Ensemble++).
- `KerasAdam`: Adam as Keras computes it ([S1]'s DeepFPL, which the paper ran in Keras).
- `Langevin`: a gradient step plus Gaussian noise (LMCTS, Xu et al. 2022).
- Plain gradient descent, the [S0]/[S2] agents' optimiser, is fused into the hand-written backward
  pass of `agents.neural.nets.NTKEnsemble.gd_steps` (one `baddbmm` a layer), not a separate step.
"""

from __future__ import annotations

import math
from typing import Callable

import torch

Tensor = torch.Tensor


def clear_grads(params: list[Tensor]) -> None:
    """Forget the gradients autograd left (before the next backward pass), as `zero_grad` does."""
    for p in params:
        p.grad = None


class Adam(torch.optim.Adam):
    """torch.optim.Adam: m <- b1 m + (1 - b1) g, v <- b2 v + (1 - b2) g^2,
    theta <- theta - lr m_hat / (sqrt(v_hat) + eps); `step(params, grads)` as the other optimisers
    (PyTorch's own state, `param_groups` and `zero_grad` are kept).

    `foreach=True` by default, also on the CPU (where PyTorch would take its per-tensor loop): the
    same arithmetic on every tensor, so the same weights bit for bit, in fewer operator calls
    (docs/agents.md, the neural profile). `fused=True` would be faster still but rounds otherwise.
    """

    def __init__(self, params, lr=1e-3, *, foreach: bool | None = True, **kwargs):
        super().__init__(params, lr=lr, foreach=foreach, **kwargs)

    def step(self, params: list[Tensor] | None = None, grads: list[Tensor] | None = None, closure=None):
        for p, g in zip(params or [], grads or []):
            if p.grad is not g:
                p.grad = g
        return super().step(closure)


class KerasAdam:
    """Adam as Keras implements it (Kingma & Ba's "epsilon hat" form), on a list of tensors in place:

        m <- b1 m + (1 - b1) g,   v <- b2 v + (1 - b2) g^2,
        theta <- theta - lr sqrt(1 - b2^t) / (1 - b1^t) * m / (sqrt(v) + eps).

    torch.optim.Adam adds eps to sqrt(v / (1 - b2^t)) instead; the two agree for eps = 0.
    """

    def __init__(self, params: list[Tensor], lr=1e-3, beta1=0.9, beta2=0.999, eps=1e-7):
        self.lr, self.beta1, self.beta2, self.eps = lr, beta1, beta2, eps
        self.m = [torch.zeros_like(p) for p in params]
        self.v = [torch.zeros_like(p) for p in params]
        self.t = 0

    @torch.no_grad()
    def step(self, params: list[Tensor], grads: list[Tensor]) -> None:
        self.t += 1
        alpha = self.lr * math.sqrt(1 - self.beta2**self.t) / (1 - self.beta1**self.t)
        for p, g, m, v in zip(params, grads, self.m, self.v):
            m.lerp_(g, 1 - self.beta1)
            v.mul_(self.beta2).addcmul_(g, g, value=1 - self.beta2)
            p.addcdiv_(m, v.sqrt().add_(self.eps), value=-alpha)


class Langevin:
    """Langevin dynamics: theta <- theta - lr g + scale eps, eps ~ N(0, I) from `noise(shape)`.

    With scale = sqrt(2 lr beta_inv / n) on a loss averaged over n points this samples
    exp(-(n L) / beta_inv) (LMCTS); `scale` is set per step because n grows with the data.
    """

    def __init__(self, lr: float, noise: Callable[[tuple[int, ...]], Tensor]):
        self.lr, self.noise, self.scale = lr, noise, 0.0

    @torch.no_grad()
    def step(self, params: list[Tensor], grads: list[Tensor]) -> None:
        for p, g in zip(params, grads):
            p -= self.lr * g
            p += self.scale * self.noise(tuple(p.shape))
