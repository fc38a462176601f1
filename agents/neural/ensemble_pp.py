"""The neural agents of [S3] (Li, Xu, Wang, Luo, "Scalable Exploration via Ensemble++"), section 5.2.

- ``Ensemble++``   shared feature extractor, base head, M stop-gradient ensemble heads and M fixed
                   prior heads, trained on the symmetrised loss (App. B eqs. 12-17);
- ``Ensemble+``    M heads on a shared extractor plus a fixed random prior network, one member
                   acting per round (Osband et al.; [S3] App. A.5 eq. 11, A.7.1);
- ``NeuralGreedy`` the same network without the ensemble factor, greedy on the mean ([S3]'s
                   "Greedy"; named apart from the linear ridge `Greedy`).

Defaults are App. B's: M = 8, a 2 x 64 ReLU extractor, perturbation scale sigma_z = 0.01, weight
decay 0.01, Adam with lr 1e-4, minibatch 128 from a FIFO buffer of 10,000, G = 1 gradient step per
round; Sphere reference, Coordinate update and Sphere perturbation distributions (App. B, App. E).
Weight decay is the authors' code's: lambda / n on the mean loss of the n points held, the
penalty of ridge regression on their sum, so it fades as data arrives. (Adam's own coupled
weight_decay = lambda would be ridge with n lambda: it keeps the ensemble heads from cancelling the
prior heads, and the ensemble's spread, the exploration, never shrinks.)
The authors' code differs in places (docs/papers.md, S3-A7): its `prior_scale`/`posterior_scale`
multipliers are kwargs here (default 1, the paper's equations).

All of them are batched: N instances are one set of stacked tensors (agents.neural.nets, agents.neural.buffer), and a
single agent is the N = 1 case, with the seeding rules of agents.linear.LinearAgent.
"""

from __future__ import annotations

import numpy as np
import torch

from agents.base import hyperparameters
from agents.linear import LinearAgent
from agents.params import Device, Int, LogUniform, Real, Widths
from agents.neural.buffer import ReplayBuffer
from agents.neural.optim import Adam, clear_grads
from agents.neural.nets import device_of, einsum, sphere, StackedMLP, tensor


def symmetrised_loss(y, base, z, prior, heads, scales) -> torch.Tensor:
    """[S3] eq. 14 on a minibatch, per instance (...,): the base head fits the rewards, the M
    ensemble heads their own perturbations against the fixed prior heads,

        mean_s 1/2 (y_s - base_s)^2 + 1/2 mean_{s,m} (sigma_z z_{s,m} - prior_scale prior_{s,m}
                                                       - posterior_scale heads_{s,m})^2,

    with base (..., B) = <x~_s, b>, prior and heads (..., B, M) = <sg(x~_s), theta0_m> and
    <sg(x~_s), theta_m>; `scales` has sigma_z, prior_scale and posterior_scale (Ensemble++ and
    GPT-Ensemble++, agents.neural.gpt_ensemble, share it).
    """
    fit = 0.5 * (y - base) ** 2
    target = scales.sigma_z * z - scales.prior_scale * prior
    return fit.mean(dim=-1) + 0.5 * ((target - scales.posterior_scale * heads) ** 2).mean(dim=(-2, -1))


class MLPAgent(LinearAgent):
    """A network f(x) trained by G Adam steps a round on minibatches of a FIFO buffer.

    Each step minimises the minibatch's mean loss plus weight_decay / (2 n) ||params||^2, n the
    number of points held (see the module docstring).

    Subclasses build their parameters in `_build(n, d)` (returning the trainable tensors), score
    arms in `_forward_scores(X)` and define `_loss(x, y, z)` on a minibatch and `_perturbation(n)`,
    the vector z stored with each observation.
    """

    params = {"hidden": Widths(), "lr": Real(gt=0), "weight_decay": Real(ge=0), "batch_size": Int(ge=1),
              "updates": Int(ge=1), "buffer_size": Int(ge=1), "device": Device()}
    search_space = {"lr": LogUniform(1e-5, 1e-3), "weight_decay": LogUniform(1e-3, 0.1)}

    def __init__(self, *, hidden=(64, 64), lr=1e-4, weight_decay=0.01, batch_size=128, updates=1,
                 buffer_size=10_000, device="cpu", seed=None, dim=None, **family):
        """`family`: a subclass's own hyper-parameters, stored and validated with these by the base."""
        super().__init__(hidden=hidden, lr=lr, weight_decay=weight_decay, batch_size=batch_size, updates=updates,
                         buffer_size=buffer_size, device=device, seed=seed, dim=dim, **family)

    def _check_params(self) -> None:
        device_of(self.device)     # a device this machine lacks fails when the agent is built, not at its first obs

    @property
    def z_dim(self) -> int:
        """Perturbations stored per observation: one per ensemble index (M), none without an ensemble."""
        return getattr(self, "M", 0)

    def _init_state(self, n, d):
        self.dev_ = device_of(self.device)
        self.net_ = StackedMLP(self.rng_, n, d, self.hidden, self.dev_)
        self.params_ = self.net_.params + self._build(n, self.net_.out_dim)
        self.opt_ = Adam(self.params_, lr=self.lr)
        self.buffer_ = ReplayBuffer(n, d, self.z_dim, self.buffer_size, self.dev_, torch.float32)

    def _scores(self, X):
        with torch.no_grad():
            return self._forward_scores(tensor(X, self.dev_)).cpu().double().numpy()

    def _update(self, x, y):
        self.buffer_.add(x, y, self._perturbation(len(y)))
        for _ in range(self.updates):
            xb, yb, zb = self._minibatch()
            clear_grads(self.params_)
            # Instances are independent: the sum of their losses has each instance's gradient.
            (self._loss(xb, yb, zb) + self._penalty()).sum().backward()
            self.opt_.step(self.params_, [p.grad for p in self.params_])

    def _minibatch(self):
        """(x (N, B, d), y (N, B), z (N, B, z_dim)) of B = min(batch_size, size) slots per instance,
        drawn uniformly with replacement from the instances' streams."""
        buf = self.buffer_
        idx = torch.as_tensor(self.rng_.integers(buf.size, size=(self.n_, min(self.batch_size, buf.size))),
                              device=self.dev_)
        x, y, z = buf.sample(idx)
        return x, y, z.transpose(1, 2)

    def _penalty(self):
        """weight_decay / (2 n) ||params||^2 per instance (N,), n = points held: ridge's penalty on a mean loss."""
        return sum((p ** 2).flatten(1).sum(1) for p in self.params_) * (self.weight_decay / (2 * self.buffer_.size))

    def _build(self, n, D):
        return []

    def _perturbation(self, n):
        return torch.zeros((n, 1), device=self.dev_)


class EnsemblePP(MLPAgent):
    """Neural Ensemble++ of [S3] section 3.3, Alg. 1, App. B.

    f(x, zeta) = <x~, b> + posterior_scale <sg(x~), sum_m zeta_m theta_m>
                 + prior_scale sg(<x~, sum_m zeta_m theta0_m>),    x~ = h(x; w)      (eq. 12)
    with trainable extractor h and base head b, M trainable heads theta_m that see x~ through a
    stop-gradient, and M fixed prior heads theta0_m (unit-norm random rows). Act: zeta from the
    reference distribution (Sphere: sqrt(M) U(S^{M-1})), greedy arm of f(., zeta). Learn: store
    (x, y, z) with z ~ U(S^{M-1}) (Sphere perturbation) and take `updates` Adam steps on the
    symmetrised loss with the Coordinate update distribution, which after the cross terms cancel is
    (eq. 14)  1/M sum_m mean_s [ 1/2 (y_s - <x~_s, b>)^2
                 + 1/2 (sigma_z z_{s,m} - prior_scale sg<x~_s, theta0_m> - posterior_scale <sg(x~_s), theta_m>)^2 ]:
    w and b fit the rewards, theta_m fits its own perturbations (eqs. 15-17).

    Args:
        M: ensemble size (number of index dimensions).
        sigma_z: perturbation scale ("symmetrised slack", 0.01).
        prior_scale, posterior_scale: multipliers of the prior and ensemble terms (the code's).
        hidden, lr, weight_decay, batch_size, updates (G), buffer_size, device: the network and
            its training (App. B defaults).
    """

    params = {"M": Int(ge=1), "sigma_z": Real(ge=0), "prior_scale": Real(ge=0), "posterior_scale": Real(ge=0)}
    search_space = {"prior_scale": LogUniform(0.1, 10), "sigma_z": LogUniform(1e-3, 0.1)}   # and lr, weight_decay

    def __init__(self, *, M=8, sigma_z=0.01, prior_scale=1.0, posterior_scale=1.0, hidden=(64, 64), lr=1e-4,
                 weight_decay=0.01, batch_size=128, updates=1, buffer_size=10_000, device="cpu", seed=None, dim=None):
        super().__init__(**hyperparameters(locals()))

    def _build(self, n, D):
        std = np.sqrt(2.0 / (D + 1))  # Xavier-normal for the trainable (D -> 1) heads
        self.b_ = tensor(std * self.rng_.standard_normal((n, D)), self.dev_).requires_grad_()
        self.theta_ = tensor(std * self.rng_.standard_normal((n, self.M, D)), self.dev_).requires_grad_()
        self.theta0_ = sphere(self.rng_, (n, self.M, D), self.dev_)
        return [self.b_, self.theta_]

    def _forward_scores(self, X):
        feats = self.net_(X)                                                  # (N, K, D)
        zeta = sphere(self.rng_, (self.n_, self.M), self.dev_, radius=np.sqrt(self.M))
        direction = (self.b_ + self.posterior_scale * einsum("nm,nmd->nd", zeta, self.theta_)
                     + self.prior_scale * einsum("nm,nmd->nd", zeta, self.theta0_))
        return einsum("nkd,nd->nk", feats, direction)

    def _perturbation(self, n):
        return sphere(self.rng_, (n, self.M), self.dev_)

    def _loss(self, x, y, z):
        feats = self.net_(x)                                                  # (N, B, D)
        sg = feats.detach()
        return symmetrised_loss(y, einsum("nbd,nd->nb", feats, self.b_), z,
                                einsum("nbd,nmd->nbm", sg, self.theta0_),
                                einsum("nbd,nmd->nbm", sg, self.theta_), self)


class NeuralGreedy(MLPAgent):
    """[S3]'s Greedy: Ensemble++'s extractor and base head, no ensemble factor.

    f(x) = <h(x; w), b> fit by squared loss on the buffer; act greedily on f. The same network and
    training as Ensemble++ (App. B), so the two differ only in exploration.
    """

    index_policy = True

    def _build(self, n, D):
        self.b_ = tensor(np.sqrt(2.0 / (D + 1)) * self.rng_.standard_normal((n, D)), self.dev_).requires_grad_()
        return [self.b_]

    def _forward_scores(self, X):
        return einsum("nkd,nd->nk", self.net_(X), self.b_)

    def _loss(self, x, y, z):
        return (0.5 * (y - einsum("nbd,nd->nb", self.net_(x), self.b_)) ** 2).mean(dim=1)


class EnsemblePlus(MLPAgent):
    """Ensemble+ (Osband et al. 2018, 2019) as described in [S3] App. A.5 eq. 11 and A.7.1 (S3-A8).

    M members share a trainable extractor x~ = h(x; w) with M trainable linear heads theta_m, plus
    a separate fixed random prior network x^ = h0(x) with M fixed prior heads theta0_m:
        f_m(x) = <x~, theta_m> + prior_scale <x^, theta0_m>.
    Each round one member m_t ~ Unif[M] acts greedily. Member m regresses y + Z_{s,m} with
    Z_{s,m} ~ N(0, sigma_z^2) drawn once per data point (eq. 11); the loss averages the members.
    Same network, optimiser, buffer and scales as Ensemble++ (App. F.2).
    """

    params = {"M": Int(ge=1), "sigma_z": Real(ge=0), "prior_scale": Real(ge=0)}
    search_space = {"prior_scale": LogUniform(0.1, 10), "sigma_z": LogUniform(1e-3, 0.1)}   # and lr, weight_decay

    def __init__(self, *, M=8, sigma_z=0.01, prior_scale=1.0, hidden=(64, 64), lr=1e-4, weight_decay=0.01,
                 batch_size=128, updates=1, buffer_size=10_000, device="cpu", seed=None, dim=None):
        super().__init__(**hyperparameters(locals()))

    def _build(self, n, D):
        self.prior_net_ = StackedMLP(self.rng_, n, self.d_, self.hidden, self.dev_, trainable=False)
        std = np.sqrt(2.0 / (D + 1))
        self.theta_ = tensor(std * self.rng_.standard_normal((n, self.M, D)), self.dev_).requires_grad_()
        self.theta0_ = tensor(std * self.rng_.standard_normal((n, self.M, D)), self.dev_)
        return [self.theta_]

    def _members(self, x):
        """Every member's prediction, (N, B, M)."""
        prior = einsum("nbd,nmd->nbm", self.prior_net_(x), self.theta0_)
        return einsum("nbd,nmd->nbm", self.net_(x), self.theta_) + self.prior_scale * prior

    def _forward_scores(self, X):
        member = torch.as_tensor(self.rng_.integers(self.M, size=self.n_), device=self.dev_)
        f = self._members(X)                                                   # (N, K, M)
        return f[torch.arange(self.n_), :, member]

    def _perturbation(self, n):
        return tensor(self.sigma_z * self.rng_.standard_normal((n, self.M)), self.dev_)

    def _loss(self, x, y, z):
        return ((y[..., None] + z - self._members(x)) ** 2).mean(dim=(1, 2))
