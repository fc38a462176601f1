"""The neural agents of [S0] (Sun, Wang, Xu) section 4.3 and its baselines, on the NTK network of catalog C4.

- ``Neural-ES``    m networks from one symmetric initialisation theta_0, member j fit by gradient
                   descent to (X_l, Y_l + Z^j_l), one member acting per round ([S0] eq. 4.4, Alg. 1, N1);
- ``Neural-ES-DT`` Neural-ES made anytime by the doubling trick ([S0] section 6, N2);
- ``NeuralUCB``    Zhou et al. 2020 (N3) and ``NeuralTS`` Zhang et al. 2021 (N4): confidence widths
                   from gradient features with the diagonal approximation of Z (full matrix: diag=False);
- ``Neural-PHE``   Jia et al. 2022 (N5): fresh reward perturbations of the whole history every round.

Network ([S0] App. C.1): f(x) = sqrt(N) W_L relu(... relu(W_1 x')), width N, depth L, on
x' = [x; x] / sqrt(2) with the symmetric initialisation W_l = diag(W, W) (entries N(0, 4/N)) and
W_L = (w, -w) (entries N(0, 2/N)), so f(x; theta_0) = 0 for every x. Training: `steps` gradient
steps of size `lr` on the regularised squared loss of eq. 4.4 divided by the number n of data
points (the same minimiser; on the plain sum the printed step 0.01 diverges once n is in the
hundreds), warm-started from the previous round (catalog ambiguity, N1). Defaults are [S0] section
7.2's: L = 3, N = 20, 100 steps of 0.01, lam = 1, m = 10, sigma_R = 0.1, a warm-up pulling each arm
once (50 rounds, K = 50). Every agent is batched: N instances x m members are one stack of
networks (agents.torch_batch), a single agent is the N = 1 case.
"""

from __future__ import annotations

import math

import numpy as np

from agents.anytime import GOLDEN_B, DoublingTrick
from agents.base import register
from agents.ensemble_nn import _positive_int
from agents.linear import LinearAgent, _nonnegative, _positive
from agents.torch_batch import device_of, tensor, torch


def ntk_init(rng, n: int, groups: int, d: int, width: int, depth: int, device):
    """Symmetric NTK initialisation (catalog C4) of n instances, shared by `groups` copies each.

    Returns the weights [W_1 (2d, N), W_2 .. W_{L-1} (N, N), W_L (N, 1)], each (n * groups, in, out).
    """
    if width % 2 or depth < 2:
        raise ValueError(f"width must be even and depth >= 2, got width={width}, depth={depth}")
    half = width // 2
    weights = []
    for fan_in in [d] + [half] * (depth - 2):
        W = math.sqrt(4.0 / width) * rng.standard_normal((n, fan_in, half))
        block = np.zeros((n, 2 * fan_in, width))
        block[:, :fan_in, :half], block[:, fan_in:, half:] = W, W
        weights.append(block)
    w = math.sqrt(2.0 / width) * rng.standard_normal((n, half, 1))
    weights.append(np.concatenate([w, -w], axis=1))
    return [tensor(np.repeat(W, groups, axis=0), device).requires_grad_() for W in weights]


def ntk_forward(weights, x):
    """f(x) of stacked networks: x (G, B, d) -> (G, B)."""
    t = torch()
    h = t.cat([x, x], dim=-1) / math.sqrt(2.0)
    for W in weights[:-1]:
        h = t.relu(t.bmm(h, W))
    return math.sqrt(weights[-1].shape[1]) * t.bmm(h, weights[-1])[..., 0]


class _NTKAgent(LinearAgent):
    """G = n_ * copies NTK networks fit by gradient descent on the data of their instance.

    Subclasses set `copies` (networks per instance), `_targets(y_hist)` (the regression targets of
    each network, (N, copies, n)) and `_choose_scores(X, f)` from the networks' outputs.
    """

    copies = 1

    def __init__(self, *, width=20, depth=3, steps=100, lr=0.01, lam=1.0, warmup=50, buffer_size=10_000,
                 device="cpu", seed=None, dim=None):
        _positive_int("width", width)
        _positive_int("depth", depth)
        _positive_int("steps", steps)
        _positive_int("buffer_size", buffer_size)
        if not (isinstance(warmup, int) and warmup >= 0):
            raise ValueError(f"warmup must be an int >= 0, got {warmup!r}")
        _positive("lr", lr)
        _nonnegative("lam", lam)
        device_of(device)
        self.width, self.depth, self.steps, self.lr, self.lam = width, depth, steps, lr, lam
        self.warmup, self.buffer_size, self.device = warmup, buffer_size, device
        super().__init__(seed=seed, dim=dim)

    def _init_state(self, n, d):
        t = torch()
        self.dev_ = device_of(self.device)
        self.weights_ = ntk_init(self.rng_, n, self.copies, d, self.width, self.depth, self.dev_)
        self.theta0_ = [W.detach().clone() for W in self.weights_]
        self.x_ = t.zeros((n, self.buffer_size, d), device=self.dev_)
        self.y_ = t.zeros((n, self.buffer_size), device=self.dev_)
        self.size_ = 0

    def _outputs(self, X):
        """Every network's f on the (N, K, d) arms: (N, copies, K)."""
        x = tensor(X, self.dev_).repeat_interleave(self.copies, dim=0)
        return ntk_forward(self.weights_, x).reshape(self.n_, self.copies, -1)

    def _choose(self, X):
        if self.t_ < self.warmup:  # pull each arm once (round robin), [S0] section 4.3
            if not np.isfinite(X).all():
                raise ValueError("obs contains NaN or inf")
            return np.full(self.n_, self.t_ % X.shape[1])
        return super()._choose(X)

    def _update(self, x, y):
        t = torch()
        slot = self.t_ % self.buffer_size
        self.x_[:, slot], self.y_[:, slot] = tensor(x, self.dev_), tensor(y, self.dev_)
        self.size_ = min(self.size_ + 1, self.buffer_size)
        self._record(x)
        n = self.size_
        xs = self.x_[:, :n].repeat_interleave(self.copies, dim=0)            # (G, n, d)
        targets = self._targets(self.y_[:, :n]).reshape(-1, n)               # (G, n)
        reg = self.lam * self.width / 2.0
        for _ in range(self.steps):
            for W in self.weights_:
                W.grad = None
            fit = 0.5 * ((ntk_forward(self.weights_, xs) - targets) ** 2).sum()
            prior = reg * sum(((W - W0) ** 2).sum() for W, W0 in zip(self.weights_, self.theta0_))
            ((fit + prior) / n).backward()
            with t.no_grad():
                for W in self.weights_:
                    W -= self.lr * W.grad
        self._after_fit(x)

    def _record(self, x):
        """Per-point state besides (x, y) (e.g. perturbations), before the fit."""

    def _after_fit(self, x):
        """State updated with the new parameters (e.g. NeuralUCB's Z)."""


@register("Neural-ES")
class NeuralES(_NTKAgent):
    """Neural ensemble sampling, [S0] section 4.3 eq. 4.4 and Alg. 1 (catalog N1).

    m networks share theta_0; member j fits (X_l, Y_l + Z^j_l) with Z^j_l ~ N(0, sigma_R^2) drawn
    once when the point arrives, under the penalty lam N / 2 ||theta - theta_0||^2 (eq. 4.4); each
    round j_t ~ Unif[m] acts greedily. Members differ only through their perturbations.

    Args:
        m: ensemble size; sigma_R: perturbation std; width, depth, steps, lr, lam, warmup,
        buffer_size (the most recent points kept), device: see the module docstring.
    """

    def __init__(self, *, m=10, sigma_R=0.1, width=20, depth=3, steps=100, lr=0.01, lam=1.0, warmup=50,
                 buffer_size=10_000, device="cpu", seed=None, dim=None):
        _positive_int("m", m)
        _nonnegative("sigma_R", sigma_R)
        self.m, self.sigma_R = m, sigma_R
        super().__init__(width=width, depth=depth, steps=steps, lr=lr, lam=lam, warmup=warmup,
                         buffer_size=buffer_size, device=device, seed=seed, dim=dim)

    @property
    def copies(self):
        return self.m

    def _init_state(self, n, d):
        super()._init_state(n, d)
        self.z_ = torch().zeros((n, self.m, self.buffer_size), device=self.dev_)

    def _record(self, x):
        self.z_[:, :, self.t_ % self.buffer_size] = tensor(self.sigma_R * self.rng_.standard_normal((self.n_, self.m)),
                                                           self.dev_)

    def _targets(self, y):
        return y[:, None, :] + self.z_[:, :, : y.shape[1]]

    def _scores(self, X):
        with torch().no_grad():
            f = self._outputs(X)                                               # (N, m, K)
        j = self.rng_.integers(self.m, size=self.n_)
        return f[np.arange(self.n_), j].double().cpu().numpy()


@register("Neural-ES-DT")
class NeuralESDT(DoublingTrick):
    """Anytime Neural-ES ([S0] section 6, 7.2; catalog N2): Neural-ES restarted at T_i = floor(T0 b^i),
    epoch i with m = max(1, round(2 ln tau_i)) members and sigma_R = 0.02 ln tau_i.

    Args:
        T0, b, m_per_log, sigma_per_log: the schedule; width, depth, steps, lr, lam, warmup, device:
        passed to every epoch's Neural-ES; seed: seeds the epochs' agents.
    """

    def __init__(self, *, T0=100, b=GOLDEN_B, m_per_log=2.0, sigma_per_log=0.02, width=20, depth=3, steps=100,
                 lr=0.01, lam=1.0, warmup=50, device="cpu", dim=None, seed=None):
        self.width, self.depth, self.steps, self.lr, self.lam = width, depth, steps, lr, lam
        self.warmup, self.device, self.dim = warmup, device, dim
        super().__init__(NeuralES, T0=T0, b=b, m_per_log=m_per_log, sigma_per_log=sigma_per_log, seed=seed)

    def _epoch_kwargs(self) -> dict:
        return dict(width=self.width, depth=self.depth, steps=self.steps, lr=self.lr, lam=self.lam,
                    warmup=self.warmup, device=self.device, dim=self.dim)


@register("Neural-PHE")
class NeuralPHE(_NTKAgent):
    """Neural bandit with perturbed rewards (Jia et al. 2022), [S0]'s baseline (catalog N5).

    Each round every past reward gets a fresh perturbation gamma_l ~ N(0, nu^2) and the network is
    refit to (X_l, Y_l + gamma_l); it acts greedily. Sampling costs Theta(t) a round ([S0] Remark 4.1).
    """

    def __init__(self, *, nu=0.1, width=20, depth=3, steps=100, lr=0.01, lam=1.0, warmup=50, buffer_size=10_000,
                 device="cpu", seed=None, dim=None):
        _nonnegative("nu", nu)
        self.nu = nu
        super().__init__(width=width, depth=depth, steps=steps, lr=lr, lam=lam, warmup=warmup,
                         buffer_size=buffer_size, device=device, seed=seed, dim=dim)

    def _targets(self, y):
        return (y + tensor(self.nu * self.rng_.standard_normal(tuple(y.shape)), self.dev_))[:, None, :]

    def _scores(self, X):
        with torch().no_grad():
            return self._outputs(X)[:, 0].double().cpu().numpy()


class _ConfidenceAgent(_NTKAgent):
    """NeuralUCB / NeuralTS: f(x; theta) and the width g^T Z^{-1} g / N, Z = lam I + sum g g^T / N.

    g is the gradient of f at the current parameters. diag=True keeps only the diagonal of Z (the
    usual practice, and what makes the per-arm width O(p)); diag=False keeps Z^{-1} exactly by
    Sherman-Morrison (O(p^2) per arm).
    """

    def __init__(self, *, diag=True, width=20, depth=3, steps=100, lr=0.01, lam=1.0, warmup=50,
                 buffer_size=10_000, device="cpu", seed=None, dim=None):
        if not isinstance(diag, bool):
            raise ValueError(f"diag must be True or False, got {diag!r}")
        self.diag = diag
        super().__init__(width=width, depth=depth, steps=steps, lr=lr, lam=lam, warmup=warmup,
                         buffer_size=buffer_size, device=device, seed=seed, dim=dim)

    def _init_state(self, n, d):
        super()._init_state(n, d)
        t = torch()
        p = sum(W[0].numel() for W in self.weights_)
        lam = max(self.lam, 1e-12)
        self.Zinv_ = (t.ones((n, p)) / lam if self.diag else t.eye(p).repeat(n, 1, 1) / lam).to(self.dev_)

    def gradients(self, X):
        """Per-arm gradient features g(x; theta) of every instance, (N, K, p), and f, (N, K)."""
        t = torch()
        from torch.func import functional_call, grad, vmap  # noqa: F401

        params = [W.detach() for W in self.weights_]

        def f_single(ws, x):
            return ntk_forward([w[None] for w in ws], x[None, None])[0, 0]

        per_arm = vmap(grad(f_single), in_dims=(None, 0))
        per_instance = vmap(per_arm, in_dims=(0, 0))
        x = tensor(X, self.dev_)
        grads = per_instance(params, x)
        g = t.cat([G.reshape(G.shape[0], G.shape[1], -1) for G in grads], dim=-1)
        with t.no_grad():
            f = self._outputs(X)[:, 0]
        return g, f

    def _widths(self, g):
        """g^T Z^{-1} g / N for every arm, (N, K)."""
        if self.diag:
            return (g ** 2 * self.Zinv_[:, None, :]).sum(-1) / self.width
        return torch().einsum("nkp,npq,nkq->nk", g, self.Zinv_, g) / self.width

    def _after_fit(self, x):
        g, _ = self.gradients(x[:, None, :])
        g = g[:, 0] / math.sqrt(self.width)                                   # Z += g g^T / N
        if self.diag:
            self.Zinv_ = 1.0 / (1.0 / self.Zinv_ + g ** 2)
        else:
            u = torch().einsum("npq,nq->np", self.Zinv_, g)
            self.Zinv_ -= torch().einsum("np,nq->npq", u, u) / (1.0 + (g * u).sum(-1))[:, None, None]

    def _targets(self, y):
        return y[:, None, :]


@register("NeuralUCB")
class NeuralUCB(_ConfidenceAgent):
    """NeuralUCB (Zhou et al. 2020), [S0]'s baseline (catalog N3): argmax f(x) + gamma sqrt(g^T Z^{-1} g / N)."""

    def __init__(self, *, gamma=1.0, diag=True, width=20, depth=3, steps=100, lr=0.01, lam=1.0, warmup=50,
                 buffer_size=10_000, device="cpu", seed=None, dim=None):
        _nonnegative("gamma", gamma)
        self.gamma = gamma
        super().__init__(diag=diag, width=width, depth=depth, steps=steps, lr=lr, lam=lam, warmup=warmup,
                         buffer_size=buffer_size, device=device, seed=seed, dim=dim)

    def _scores(self, X):
        g, f = self.gradients(X)
        return (f + self.gamma * self._widths(g).clamp(min=0).sqrt()).double().cpu().numpy()


@register("NeuralTS")
class NeuralTS(_ConfidenceAgent):
    """NeuralTS (Zhang et al. 2021), [S0]'s baseline (catalog N4): per arm r ~ N(f(x), nu^2 lam g^T U^{-1} g / N)."""

    def __init__(self, *, nu=1.0, diag=True, width=20, depth=3, steps=100, lr=0.01, lam=1.0, warmup=50,
                 buffer_size=10_000, device="cpu", seed=None, dim=None):
        _nonnegative("nu", nu)
        self.nu = nu
        super().__init__(diag=diag, width=width, depth=depth, steps=steps, lr=lr, lam=lam, warmup=warmup,
                         buffer_size=buffer_size, device=device, seed=seed, dim=dim)

    def _scores(self, X):
        g, f = self.gradients(X)
        std = (self.nu ** 2 * self.lam * self._widths(g)).clamp(min=0).sqrt()
        eps = tensor(self.rng_.standard_normal(tuple(f.shape)), self.dev_)
        return (f + std * eps).double().cpu().numpy()
