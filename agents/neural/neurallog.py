"""Neural logistic bandits of [S2] (Bae, Lee): NeuralLog-UCB-1/2, NeuralLog-TS-1/2, and NCBF-UCB.

Choices: docs/papers.md, S2-A3 to S2-A12. Rewards are Bernoulli, r ~ Bern(mu(h(x))) with mu the sigmoid; one NTK
ReLU network f(x; theta) ([S0] §4.3, [S2] §4: depth L = 2, width m = 20, symmetric theta_0) is
fitted to the history by gradient descent on the regularised binary cross-entropy (TrainNN of
Alg. 1), and exploration comes from the gradient features phi(x) of the network through a
design matrix:

    V_t = sum_i phi_i phi_i^T + kappa lam_t I                 NCBF-UCB, NeuralLog-UCB-1, -TS-1
    W_t = sum_i mu'(f(x_i; theta_i)) phi_i phi_i^T + lam_t I  NeuralLog-UCB-2, -TS-2 (Alg. 2 line 6)

    NCBF-UCB         mu(f(x; theta_{t-1})) + beta_{t-1} ||phi(x)||_{V_{t-1}^{-1}}
    NeuralLog-UCB-1  mu(f(x; theta_{t-1})) + beta_{t-1} ||phi(x)||_{V_{t-1}^{-1}},  beta = R sqrt(kappa) nu^(1)
    NeuralLog-UCB-2  m(x) + beta_{t-1} ||phi(x)||_{W_{t-1}^{-1}},                   beta = nu^(2)   (eq. 5)
    NeuralLog-TS-1   draw N(f(x; theta_{t-1}), beta_{t-1}^2 ||phi(x)||^2_{V_{t-1}^{-1}}),  beta = sqrt(kappa) nu^(1)
    NeuralLog-TS-2   draw N(m(x), beta_{t-1}^2 ||phi(x)||^2_{W_{t-1}^{-1}}),               beta = nu^(2)

and play the argmax (ties at random). The TS widths are App. I's nu_T^2 sigma_{t-1}^2(x):
sigma^2 = kappa lam_t ||phi||^2_{V^-1} and nu = nu^(1) lam_t^{-1/2} multiply to kappa nu^(1)2
||phi||^2_{V^-1} (lam_t cancels), and likewise nu'^2 sigma'^2 = nu^(2)2 ||phi||^2_{W^-1} for TS-2
(Remark I.2's norm taken squared, docs/papers.md, S2-A4). m(x) is the latent estimate: f(x;
theta_{t-1}) in practice, g(x; theta_0)^T (theta_{t-1} - theta_0) in the theory version.

Two levels, chosen by keyword:

- Practical ([S2] §7, App. A; the defaults): `gradient="current"`, phi(x) = g(x; theta_{t-1})
  (the gradient at the weights that scored the round, without 1/sqrt m; the history term i uses
  theta_{i-1}, App. A's sigma(x; nu, {x_i, theta_{i-1}}, ...)), the loss's regulariser
  lam ||theta||^2; `schedule="fixed"`: a fixed lam and a radius that keeps the orders in kappa,
  S and the effective dimension of the theory, times the tuned nu (App. A):
      NCBF-UCB: beta = nu sqrt(kappa) sqrt(d~),  d~ = log det(sum phi phi^T / kappa + I)
      UCB-1:    beta = nu R sqrt(kappa) S^2 sqrt(d~),   TS-1: beta = nu sqrt(kappa) S^2 sqrt(d~)
      UCB-2, TS-2: beta = nu S^2 sqrt(d~),  d~ = log det(sum R phi phi^T + I)   (R = 1/4)
  (nu^(1), nu^(2) = O~(S^2 sqrt(d~)), App. I; NCBF's O~(sqrt(kappa d~)), [S2] §3.)
- Theory (§4-5): `gradient="initial"`, phi(x) = g(x; theta_0) / sqrt(m) and the regulariser
  1/2 m lam_t ||theta - theta_0||^2; `schedule="theory"`: lam_t, iota_t and nu^(1)_t, nu^(2)_t
  of eqs. 1-3 and Lemma 5.1 with the unspecified absolute constants `C1` and `C_nu` (C6 for the
  type-1 algorithms, C7 for type 2) as keywords, still multiplied by `nu` (1: the formulas as
  printed). TS's nu_T needs the data of all T rounds; the anytime nu_{t-1} is used.

Design matrices are diagonal by default (`diag=True`, [S2] §7 after Zhou et al. 2020): one
number per parameter, kept as one (in, out) tensor per layer, the widths computed from the
factored per-arm gradients without forming them, and log det = a sum of logs. `diag=False`
keeps the full p x p sums and factorises sum + ridge I by Cholesky once per round (lam_t may
change every round, so no rank-one inverse update applies); for small networks only.

Training (TrainNN, Alg. 1): after every `update_every` rounds (first after round
`update_every`: [S2] §7 "every 50 rounds"), `steps` full-batch gradient-descent steps of size
`lr` on
    L(theta) = sum_i [softplus(f(x_i)) - r_i f(x_i)] + regulariser,
warm-started from the current weights, divided by the number n of observations when
`mean_loss` (the minimiser is unchanged; the sum's curvature grows like t and step 0.01 on it
diverges within a few hundred rounds, as for [S0] in agents.neural.core). A row pulled n_u times
with reward sum s_u contributes n_u softplus(f) - s_u f: the replay buffer's sufficient
statistics are all the gradient needs.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from agents.neural.buffer import Schedule
from agents.neural.core import ROW_BLOCK, NeuralAgent
from agents.params import Bool, LogUniform, Options, Real
from agents.neural.nets import bmm, bmm_t, NTKEnsemble, readout, sigmoid

GRADIENTS = ("current", "initial")
SCHEDULES = ("fixed", "theory")


def bce_gradient_descent(net: NTKEnsemble, x: torch.Tensor, count: torch.Tensor, reward_sum: torch.Tensor, *,
                         steps: int, lr: float, alpha: float, beta: float, anchor: list[torch.Tensor] | None) -> None:
    """`steps` gradient-descent steps, in place, on the first network of `net` for

        L(theta) = alpha sum_u [c_u softplus(f(x_u)) - s_u f(x_u)] + beta/2 ||theta - anchor||^2

    for every network of `net` (one per instance) on its own rows x (n, U, d), counts c (n, U) and
    reward sums s (n, U) (anchor None means 0; beta a float or one value per network), the binary
    cross-entropy of the c_u observations of row u, whose derivative in f is c_u mu(f) - s_u.
    The backward pass is NTKEnsemble.gradients' with the sigmoid residual.
    """
    weights = net.weights
    beta = torch.as_tensor(beta, dtype=weights[0].dtype, device=weights[0].device).reshape(-1, 1, 1)
    for _ in range(steps):
        acts, f = net.activations(x)
        delta = (alpha * net.scale) * (count * sigmoid(f) - reward_sum).unsqueeze(-1)    # (n, U, 1)
        for l in range(len(weights) - 1, -1, -1):
            back = bmm_t(delta, weights[l]) if l else None         # with the weights before the step
            grad = bmm(acts[l].transpose(1, 2), delta)
            grad.add_((weights[l] if anchor is None else weights[l] - anchor[l]) * beta)
            weights[l].sub_(grad, alpha=lr)
            if l:
                delta = torch.ops.aten.threshold_backward(back, acts[l], 0)


class NeuralLogistic(NeuralAgent):
    """What the five [S2] agents share (the module docstring gives the algorithms).

    Subclasses set class attributes: `weighted` (design W with mu' weights and ridge lam_t,
    instead of V with ridge kappa lam_t), `thompson` (Gaussian draws instead of an optimistic
    index), `sigmoid_mean` (index on the reward scale mu(f), UCB-1 and NCBF, instead of the
    latent scale), `constant_lam` and `S_power` (NCBF), and the radius' factors
    `_kappa_factor` and `_logdet_scale`.

    Args:
        nu: exploration parameter, multiplies the radius ([S2] §7 tunes it on {0.01, 0.1, 1, 10,
            100} and does not report the value; 0.01 was best for all five on h3 here, see
            docs/s2_neurallog_agents.md).
        lam: regulariser of the loss and ridge of the design matrix (same grid; 1 here; 0.1 was
            as good, 10 worse).
        S, kappa, R: norm bound, worst-case 1/mu' and sup mu' ([S2] §7: S = 1, kappa = 10, R = 1/4).
        gradient: "current" (g(x; theta_{t-1}), no 1/sqrt(m), lam ||theta||^2: [S2] §7) or
            "initial" (g(x; theta_0)/sqrt(m), 1/2 m lam ||theta - theta_0||^2: Alg. 1-2).
        schedule: "fixed" (fixed lam and the App. A radius) or "theory" (lam_t, nu_t of eqs. 1-3).
        delta, C1, C_nu: confidence level and absolute constants of eqs. 1-3 (schedule="theory").
        diag: diagonal design matrix ([S2] §7) or the full p x p one.
        width, depth: m and L of the network ([S2] §7: 20 and 2).
        lr, steps, update_every: GD step size, steps per update, rounds between updates
            ([S2] §7: 0.01, 100, 50).
        warm_start, warmup, mean_loss, duplicate_input, device, dtype, dim, seed: see NeuralAgent.
    """

    weighted = False
    thompson = False
    sigmoid_mean = False
    constant_lam = False    # NCBF-UCB: no lam_t schedule
    S_power = 2             # nu^(1), nu^(2) = O~(S^2 sqrt(d~)) (App. I); NCBF's width has no S

    @property
    def index_policy(self) -> bool:
        """The UCB variants' index draws nothing (action_probs is exact); the TS variants' does."""
        return not self.thompson

    params = {"nu": Real(ge=0), "lam": Real(gt=0), "S": Real(gt=0), "kappa": Real(gt=0), "R": Real(gt=0),
              "C1": Real(gt=0), "C_nu": Real(gt=0), "delta": Real(gt=0, lt=1),
              "gradient": Options(*GRADIENTS),    # g(x; theta_t) ([S2] §7) or g(x; theta_0)/sqrt(m) (Alg. 1-2)
              "schedule": Options(*SCHEDULES),    # fixed nu, lam ([S2] §7) or eqs. 1-3
              "diag": Bool()}
    search_space = {"nu": LogUniform(1e-4, 1)}              # and lr, lam (NeuralAgent)

    def _check_params(self) -> None:
        super()._check_params()
        if self.schedule == "theory" and self.constant_lam:
            raise ValueError(f"{type(self).__name__} uses a constant lam (Verma et al. 2025): schedule must be "
                             "'fixed'; NeuralLog-UCB-1 is the version with the data-adaptive lam_t")

    def __init__(self, *, nu=0.01, lam=1.0, S=1.0, kappa=10.0, R=0.25, gradient="current", schedule="fixed",
                 delta=0.05, C1=1.0, C_nu=1.0, diag=True, width=20, depth=2, lr=0.01, steps=100, update_every=50,
                 warm_start=True, warmup=0, mean_loss=True, duplicate_input=True, device="cpu", dtype="float32",
                 dim=None, seed=None):
        self.nu, self.S, self.kappa, self.R = nu, S, kappa, R
        self.gradient, self.schedule, self.delta, self.C1, self.C_nu, self.diag = \
            gradient, schedule, delta, C1, C_nu, diag
        super().__init__(width=width, depth=depth, lam=lam, lr=lr, steps=steps, update_every=update_every,
                         warm_start=warm_start, warmup=warmup, mean_loss=mean_loss, duplicate_input=duplicate_input,
                         device=device, dtype=dtype, dim=dim, seed=seed)
        # first update after round `update_every` (then every `update_every` rounds), not after round 1
        self._schedule = Schedule(update_every, steps, None, bool(warm_start), max(warmup, update_every))
        # lam_0 = 8 sqrt(2) C1 L^{1/2} S^{-1} log(4/delta), Alg. 1 input
        self._lam0 = 8 * math.sqrt(2) * C1 * math.sqrt(depth) / S * math.log(4 / delta)

    # -- the radius -----------------------------------------------------------------------------
    def _kappa_factor(self) -> float:
        """The factor of beta in front of nu^(1) or nu^(2) (R sqrt(kappa) for UCB-1, ...)."""
        return 1.0

    def _logdet_scale(self) -> float:
        """c of the practical effective dimension d~ = log det(c sum phi phi^T + I) (App. A): R."""
        return self.R

    def _log_term(self) -> float:
        """log(4 t^2 / delta) of eqs. 2-3 at the current t (t >= 1)."""
        return math.log(4 * max(self.t_, 1) ** 2 / self.delta)

    def lam_t(self) -> torch.Tensor:
        """lam_t per instance (N,): the fixed `lam`, or eq. 3 with the data of the rounds so far."""
        if self.schedule == "fixed":
            return torch.full((self.n_,), float(self.lam), device=self._dev, dtype=self._dtype)
        log_term = self._log_term()
        d0 = self.logdet(1.0 / (4 * self._lam0))
        return (64 / self.S**2 * d0 * log_term
                + 16 * self.C1**2 * self.depth / (self.S**2 * self._lam0) * log_term**2)

    def radius(self) -> torch.Tensor:
        """beta_{t-1} per instance (N,): the multiplier of ||phi(x)||_{M^{-1}} in the index (UCB) or the draw's std (TS)."""
        if self.schedule == "fixed":
            dim = self.logdet(self._logdet_scale())
            return self.nu * self._kappa_factor() * self.S**self.S_power * dim.clamp_min(0).sqrt()
        log_term = self._log_term()
        d0 = self.logdet(1.0 / (4 * self._lam0))                # eq. 2
        iota = (16 * (d0.clamp_min(0) * log_term).sqrt()
                + 8 * self.C1 * math.sqrt(self.depth / self._lam0) * log_term)
        L, S = self.depth, self.S
        nu_t = self.C_nu * (1 + math.sqrt(L) * S + L * S**2) * iota + 1     # eq. 1 / Lemma 5.1
        return self.nu * self._kappa_factor() * nu_t

    def ridge(self) -> torch.Tensor:
        """The ridge of the design matrix per instance (N,): kappa lam_t (V) or lam_t (W)."""
        return self.lam_t() * (1.0 if self.weighted else self.kappa)

    # -- design matrices (one per instance: (N, in, out) diagonals per layer, or (N, p, p)) -------------
    def _setup(self):
        W = self.net_.weights
        self._phi_scale = 1.0 if self.gradient == "current" else 1.0 / self.width   # phi phi^T = g g^T / m
        self.net0_ = NTKEnsemble([W0.clone() for W0 in self.net_.init]) if self.gradient == "initial" else None
        zeros = (lambda w: torch.zeros(w.shape, device=w.device, dtype=w.dtype)) if self.diag else \
            (lambda w: torch.zeros((self.n_, *(self.net_.num_params,) * 2), device=w.device, dtype=w.dtype))
        self.G_ = [zeros(w) for w in W] if self.diag else zeros(W[0])          # sum phi phi^T
        self.Gw_ = ([zeros(w) for w in W] if self.diag else zeros(W[0])) if self.weighted else None
        self._pending = None

    def _factors(self, X: torch.Tensor) -> list[tuple[torch.Tensor, torch.Tensor]]:
        """g(x; theta_{t-1}) or g(x; theta_0) of the rows of X (N, B, d') in factored form (unscaled)."""
        return (self.net_ if self.net0_ is None else self.net0_).grad_factors(X)

    def _add(self, M, factors, weight: torch.Tensor | float = 1.0) -> None:
        """M += weight phi phi^T (its diagonal when diag) for each instance's single row of `factors`
        (weight: a float or one value per instance)."""
        w = torch.as_tensor(weight * self._phi_scale, device=self._dev, dtype=self._dtype).reshape(-1, 1, 1)
        if self.diag:
            for (a, d), Ml in zip(factors, M):
                Ml.add_((a * a).transpose(1, 2) * (d * d) * w)
        else:
            g = NTKEnsemble.flat(factors)[:, 0]
            M.add_(g[:, :, None] * g[:, None, :] * w)

    def design_sum(self) -> torch.Tensor:
        """sum phi phi^T (weighted by mu' for UCB-2/TS-2) as flat diagonals (N, p) or (N, p, p) matrices."""
        M = self.Gw_ if self.weighted else self.G_
        return torch.cat([Ml.flatten(1) for Ml in M], 1) if self.diag else M

    def logdet(self, c: float) -> torch.Tensor:
        """log det(c sum phi phi^T + I) of the unweighted sum per instance (N,) (diagonal: sum of log(1 + c G_jj))."""
        if self.diag:
            return sum(torch.log1p(c * G).sum((1, 2)) for G in self.G_)
        eye = torch.eye(self.G_.shape[-1], device=self.G_.device, dtype=self.G_.dtype)
        chol = torch.linalg.cholesky(c * self.G_ + eye)
        return 2.0 * torch.log(torch.diagonal(chol, dim1=-2, dim2=-1)).sum(-1)

    def _quadratic(self, factors) -> torch.Tensor:
        """||phi(x)||^2_{(M + ridge I)^{-1}} for every row of `factors` (N, K)."""
        ridge = self.ridge()[:, None, None]
        M = self.Gw_ if self.weighted else self.G_
        if self.diag:
            q = NTKEnsemble.diag_quadratic(factors, [1.0 / (Ml + ridge) for Ml in M])
        else:
            eye = torch.eye(M.shape[-1], device=M.device, dtype=M.dtype)
            chol = torch.linalg.cholesky(M + ridge * eye)           # once per round, not per arm
            Z = torch.linalg.solve_triangular(chol, NTKEnsemble.flat(factors).transpose(1, 2), upper=False)
            q = (Z * Z).sum(1)
        return q.clamp_min(0) * self._phi_scale

    def _before_store(self, x):
        """V's (unweighted) sum gets phi(x_t) phi(x_t)^T with phi at theta_{t-1}; W's waits for theta_t."""
        factors = self._factors(x[:, None])
        self._add(self.G_, factors)
        if self.weighted:
            self._pending = (x, factors)

    def observe(self, obs, action, reward) -> None:
        """Record the round and train if due (NeuralAgent.observe); then, for W, add
        mu'(f(x_t; theta_t)) phi phi^T with theta_t the weights after this round's training (Alg. 2 line 6)."""
        super().observe(obs, action, reward)
        if self._pending is not None:
            x, factors = self._pending
            self._pending = None
            with torch.no_grad():
                p = sigmoid(self.net_(x[:, None])[:, 0])
                self._add(self.Gw_, factors, p * (1 - p))

    # -- acting and training ----------------------------------------------------------------------
    def _mean(self, factors_now, factors0) -> torch.Tensor:
        """The point estimate of the index (N, K): mu(f), f, or g(x; theta_0)^T (theta_{t-1} - theta_0),
        from the factored gradients at theta_{t-1} and (gradient="initial") at theta_0."""
        net = self.net_
        f = readout(factors_now[-1][0], net.weights[-1][:, None, :, 0]) * net.scale
        if self.sigmoid_mean:
            return sigmoid(f)
        if self.net0_ is None:
            return f
        return sum((bmm(a, W - W0) * d).sum(-1)
                   for (a, d), W, W0 in zip(factors0, net.weights, self.net0_.weights))

    def _scores(self, X):
        factors_now = self.net_.grad_factors(X)
        factors = factors_now if self.net0_ is None else self.net0_.grad_factors(X)
        width = self.radius()[:, None] * self._quadratic(factors).sqrt()
        mean = self._mean(factors_now, factors)
        if self.thompson:
            return mean + width * self._randn(mean.shape[1])
        return mean + width

    def _penalty(self, lam: torch.Tensor) -> tuple[torch.Tensor, list[torch.Tensor] | None]:
        """(beta, anchor) of the regulariser beta/2 ||theta - anchor||^2 per instance."""
        if self.gradient == "current":
            return 2 * lam, None                             # lam ||theta||^2 ([S2] §7)
        return self.width * lam, self.net_.anchor           # 1/2 m lam_t ||theta - theta_0||^2 (TrainNN)

    def _divergence_fix(self) -> str:
        """The logistic loss has no minimiser once a reward leaves [0, 1]: name that first."""
        return ("its logistic loss has no minimiser when rewards leave [0, 1], so rescale the rewards into [0, 1]; "
                "else " + super()._divergence_fix())

    def _train(self) -> None:
        """TrainNN: `steps` GD steps on the regularised BCE of the whole history (module docstring)."""
        net, buf = self.net_, self.buffer_
        if not self._schedule.warm_start:
            net.restart()
        groups = buf.table_groups(ROW_BLOCK)
        rows, count, y_sum, _ = buf.full(max(length for length, _ in groups))
        beta, anchor = self._penalty(self.lam_t())
        alpha = 1.0 / buf.size if self.mean_loss else 1.0
        for length, inst in groups:     # one network per instance: network i is instance i's
            sub, pick = self._group(inst)
            bce_gradient_descent(sub, rows[pick, :length], count[pick, :length], y_sum[pick, :length],
                                 steps=self.steps, lr=self.lr, alpha=alpha, beta=alpha * beta[pick],
                                 anchor=None if anchor is None else sub.anchor)
            if sub is not net:
                net.assign(self._networks(inst), sub)

    def loss(self) -> float | np.ndarray:
        """The training objective L(theta) at the current weights (the sum, not divided by n): a float,
        or one per instance (N,) when batched."""
        rows, count, y_sum, _ = self.buffer_.full()
        with torch.no_grad():
            f = self.net_(rows)
            data = (count * torch.nn.functional.softplus(f) - y_sum * f).sum(1)
            beta, anchor = self._penalty(self.lam_t())
            anchor = anchor or [0.0] * len(self.net_.weights)
            reg = 0.5 * beta * sum(((W - A) ** 2).sum((1, 2)) for W, A in zip(self.net_.weights, anchor))
            out = (data + reg).cpu().double().numpy()
        return float(out[0]) if self.single_ else out


class NCBFUCB(NeuralLogistic):
    """NCBF-UCB (Verma et al. 2025), the neural logistic baseline (1) of [S2] §7.

    Constant lam, worst-case variance in V_t = sum phi phi^T + kappa lam I and the index
    mu(f(x; theta_{t-1})) + nu sqrt(kappa d~_t) ||phi(x)||_{V_{t-1}^{-1}} with
    d~_t = log det(sum phi phi^T / kappa + I) (App. A; the O~(sqrt(kappa d~)) width of [S2] §3).
    [S2] only cites it (docs/papers.md, S2-A12). `schedule` must be "fixed": the constant lam is what sets it
    apart from NeuralLog-UCB-1.
    
    Args: see NeuralLogistic.
    """

    sigmoid_mean = True
    constant_lam = True
    S_power = 0

    def _kappa_factor(self):
        return math.sqrt(self.kappa)

    def _logdet_scale(self):
        return 1.0 / self.kappa


class NeuralLogUCB1(NeuralLogistic):
    """NeuralLog-UCB-1, [S2] §4, Alg. 1.

    Pull argmax mu(f(x; theta_{t-1})) + R sqrt(kappa) nu^(1)_{t-1} ||phi(x)||_{V_{t-1}^{-1}},
    V_t = sum phi phi^T + kappa lam_t I; train on the regularised BCE (module docstring).
    Regret O~(S^2 d~ sqrt(kappa T) + S^2.5 sqrt(kappa d~ T)) (Thm 4.6).
    
    Args: see NeuralLogistic.
    """

    sigmoid_mean = True

    def _kappa_factor(self):
        return self.R * math.sqrt(self.kappa)


class NeuralLogUCB2(NeuralLogistic):
    """NeuralLog-UCB-2, [S2] §5, Alg. 2.

    Pull argmax m(x) + nu^(2)_{t-1} ||phi(x)||_{W_{t-1}^{-1}} (eq. 5) on the latent scale,
    W_t = sum_i mu'(f(x_i; theta_i)) phi_i phi_i^T + lam_t I with theta_i the weights after round
    i's update: the network's own variance estimate replaces the worst case kappa.
    Regret O~(S^2 d~ sqrt(T / kappa*) + ...) (Thm 5.2).
    
    Args: see NeuralLogistic.
    """

    weighted = True


class NeuralLogTS1(NeuralLogistic):
    """NeuralLog-TS-1, [S2] App. I: Thompson sampling with NeuralLog-UCB-1's statistics.

    Each round draw r~(x) ~ N(f(x; theta_{t-1}), kappa nu^(1)2 ||phi(x)||^2_{V_{t-1}^{-1}})
    independently per arm (App. I's nu_T^2 sigma_{t-1}^2 with lam_t cancelled) and pull the largest.
    
    Args: see NeuralLogistic.
    """

    thompson = True

    def _kappa_factor(self):
        return math.sqrt(self.kappa)


class NeuralLogTS2(NeuralLogistic):
    """NeuralLog-TS-2, [S2] App. I Remark I.2, App. J: Thompson sampling with W.

    Each round draw r~(x) ~ N(m(x), nu^(2)2 ||phi(x)||^2_{W_{t-1}^{-1}}) per arm (the norm
    squared, docs/papers.md, S2-A4) and pull the largest; W and training as NeuralLog-UCB-2.
    
    Args: see NeuralLogistic.
    """

    weighted = True
    thompson = True
