"""Neural-ES and its anytime version Neural-ES-DT ([S0] §4.3, Alg. 1, §6, §7.2)."""

from __future__ import annotations

import torch

from agents.anytime import GOLDEN_B, DoublingTrick
from agents.neural.core import NeuralAgent
from agents.params import Int, LogUniform, Real


class NeuralES(NeuralAgent):
    """Neural ensemble sampling, [S0] §4.3 eq. 4.4 with Alg. 1 (choices: docs/papers.md, S0-A7 to S0-A10).

    m NTK ReLU networks ([S0] §4.3) start from one shared symmetric theta_0. Member j keeps its
    own perturbed history {(X_l, Y_l + Z^j_l)}, Z^j_l ~ N(0, sigma_R^2) drawn once when the
    observation arrives and never redrawn (Alg. 1 lines 6-8), and after every round takes
    `steps` gradient-descent steps (warm-started) on eq. 4.4,
        L(theta; D^j_t) = 1/2 sum_{l<=t} (f(X_l; theta) - Y_l - Z^j_l)^2 + 1/2 lam N ||theta - theta_0||^2,
    divided by the number of observations n when `mean_loss` (same minimiser, a step size that
    stays stable; see NeuralAgent). Act: j_t ~ Unif[m], pull argmax_X f(X; theta^{j_t}) (Alg. 1
    lines 4-5), ties at random. Warm-up: the first `warmup` rounds pull arms round-robin (50 = K
    in [S0] §7.2: each arm once, §4.3); their data enter every member's history, perturbed, and
    the first update follows round `warmup`. All m members are one stacked model trained in
    parallel (NTKEnsemble), as [S0] §7.3 runs them.

    Not in [S0] (off by default): `prior_sd > 0` anchors member j's regulariser at
    theta_0 + prior_sd xi_j, xi_j ~ N(0, I), the prior perturbation of Lee & Oh (2024) (as
    `prior_sd` of Lin-ES); the members still start from theta_0.

    With `m=1, sigma_R=0` this is the greedy network (same training, no exploration).

    Args:
        m: ensemble size ([S0] §7.2: 10).
        sigma_R: perturbation std of the reward perturbations Z ([S0] §7.2: 0.1).
        prior_sd: std of the anchor perturbation (0: the paper's shared theta_0).
        warmup: round-robin warm-up rounds ([S0] §7.2: 50).
        width, depth, lam, lr, steps, update_every, batch_size, buffer_size: see NeuralAgent ([S0] §7.2:
            N = 20, L = 3, lam = 1, 100 GD steps of size 0.01 each round, full batch).
        warm_start, mean_loss, duplicate_input, device, dtype, dim, seed: see NeuralAgent.
    """

    params = {"m": Int(ge=1), "sigma_R": Real(ge=0), "prior_sd": Real(ge=0)}
    search_space = {"sigma_R": LogUniform(0.01, 1)}         # and lr, lam (NeuralAgent)

    def __init__(self, *, m=10, sigma_R=0.1, prior_sd=0.0, width=20, depth=3, lam=1.0, lr=0.01, steps=100,
                 update_every=1, batch_size=None, buffer_size=None, warm_start=True, warmup=50, mean_loss=True,
                 duplicate_input=True, device="cpu", dtype="float32", dim=None, seed=None):
        self.m, self.sigma_R, self.prior_sd = m, sigma_R, prior_sd
        super().__init__(width=width, depth=depth, lam=lam, lr=lr, steps=steps, update_every=update_every,
                         batch_size=batch_size, buffer_size=buffer_size, warm_start=warm_start, warmup=warmup,
                         mean_loss=mean_loss, duplicate_input=duplicate_input, device=device, dtype=dtype, dim=dim,
                         seed=seed)

    @property
    def members(self) -> int:
        return self.m

    @property
    def z_dim(self) -> int:
        return self.m

    def _setup(self):
        if self.prior_sd > 0:      # per layer, each instance's m anchors from its own generator
            net = self.net_
            net.anchor = [A + self.prior_sd * self._randn(self.m, *W.shape[1:]).flatten(0, 1)
                          for A, W in zip(net.anchor, net.weights)]

    def _perturbation(self):
        # Z^j_t ~ N(0, sigma_R^2), one per member, kept for good (Alg. 1 line 7)
        return self.sigma_R * self._randn(self.m)

    def _scores(self, X):
        j = self._randint(self.m)                                  # j_t ~ Unif[m], per instance
        return self.net_.member(j + self.m * torch.arange(self.n_, device=j.device), X)

    def _targets(self, y_sum, z_sum, count):
        return y_sum[:, None] + z_sum    # sum over the row's observations of Y_l + Z^j_l, (N, m, U)

    def _batch_targets(self, noise, idx, y, z):
        return y[:, None] + z            # Y_l + Z^j_l, (N, m, B)


class NeuralESDT(DoublingTrick):
    """Anytime Neural-ES ("Neural-ES-DT<T0>", [S0] §6, §7.2): restarts at T_i = floor(T0 b^i).

    Epoch i (length tau_i) runs a fresh Neural-ES with m = max(1, round(2 ln tau_i)) members and
    sigma_R = 0.02 ln tau_i ([S0] §7.2, natural log, docs/papers.md, S0-A5), warm-up 50 and lam = 1;
    data and networks are discarded at each restart (agents.anytime.DoublingTrick).

    Batched like Neural-ES: with `seed=[s_1, ..., s_N]` every epoch's agent serves the N instances
    (all restart at the same rounds), and instance i acts as a Neural-ES-DT seeded s_i.

    Args:
        T0, b: schedule ([S0]: T0 in {100, 300}, b = (3 + sqrt 5)/2).
        m_per_log, sigma_per_log: m and sigma_R per unit of ln tau_i (2 and 0.02).
        prior_sd, width, depth, lam, lr, steps, update_every, batch_size: passed to every epoch's Neural-ES.
        buffer_size, warm_start, warmup, mean_loss, duplicate_input, device, dtype, dim: likewise.
        seed: seed of the wrapper's generator, which seeds each epoch's agent (a list: one per instance).
    """

    batched = True

    def __init__(self, *, T0=100, b=GOLDEN_B, m_per_log=2.0, sigma_per_log=0.02, prior_sd=0.0, width=20, depth=3,
                 lam=1.0, lr=0.01, steps=100, update_every=1, batch_size=None, buffer_size=None, warm_start=True,
                 warmup=50, mean_loss=True, duplicate_input=True, device="cpu", dtype="float32", dim=None, seed=None):
        self.prior_sd, self.width, self.depth, self.lam, self.lr, self.steps = prior_sd, width, depth, lam, lr, steps
        self.update_every, self.batch_size, self.buffer_size = update_every, batch_size, buffer_size
        self.warm_start, self.warmup, self.mean_loss = warm_start, warmup, mean_loss
        self.duplicate_input = duplicate_input
        self.device, self.dtype, self.dim = device, dtype, dim
        super().__init__(NeuralES, T0=T0, b=b, m_per_log=m_per_log, sigma_per_log=sigma_per_log, seed=seed)

    def _epoch_kwargs(self) -> dict:
        names = ("prior_sd", "width", "depth", "lam", "lr", "steps", "update_every", "batch_size", "buffer_size",
                 "warm_start", "warmup", "mean_loss", "duplicate_input", "device", "dtype", "dim")
        return {name: getattr(self, name) for name in names}
