"""Generalized-linear-bandit agents: the mean reward of arm x is mu(x^T theta*) for a known link mu.

Registered names (papers' keys [S0]-[S4] as in docs/papers.md):

- ``GLM-TSL``   Laplace-approximation Thompson sampling, [S1] §3.1 eqs. 4-5.
- ``GLM-FPL``   follow the perturbed leader on a perturbed-reward MLE, [S1] §3.2 eq. 6.
- ``GLM-UCB``   Filippi et al. (2010), baseline of [S1] §5.1.
- ``UCB-GLM``   Li, Lu & Zhou (2017), baseline of [S1] §5.1.
- ``GLM-ES``    ensemble sampling with the GLM loss, [S0] Alg. 1 and eqs. 4.1-4.3, G-optimal warm-up.
- ``GLM-ES-DT`` GLM-ES made anytime by the doubling trick, [S0] §6 and §7.2.
- ``Logistic-UCB-1`` Faury et al. (2020) and ``ada-OFU-ECOLog`` Faury et al. (2022), baselines of [S2].

Every MLE is computed on sufficient statistics ([S1] §3.3): one row per distinct arm feature
vector with its pull count N_x and reward sum S_x, so with a fixed arm set an estimation step
costs O(K d^2) whatever the round. Estimates are refined by damped Newton (IRLS) warm-started
from the previous round's solution; design matrices are kept as inverses updated by
Sherman-Morrison.

Every agent here is batched (`batched = True`): obs (N, K, d) serves N instances in one object,
with one random stream per instance, and a single agent is the N = 1 case of the same code, so a
batched agent seeded [s_1..s_N] acts exactly as N single agents seeded s_i. The [S1] agents
build on `agents.glm_batch.BatchedGLMAgent`, GLM-ES and the [S2] baselines on `_GLMAgent` below
(GLM-ES-DT is the doubling-trick wrapper around a batched GLM-ES).
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit

from agents.anytime import GOLDEN_B, DoublingTrick
from agents.base import BaseAgent, _child, argmax_probs, check_finite, hyperparameters, random_argmax, register
from agents.design import g_optimal_design, round_design, round_robin
from agents.glm_batch import (LINKS, ArmStats, BatchedGLMAgent, RaggedNormals, _link, _logistic_dmu, _PerInstance,
                              fit_glm_batched, fit_glm_ensemble, glm_hessians)
from agents.params import Int, IntLogUniform, LogUniform, Options, Real
from agents.linalg import rls_update_


def glm_loss(theta, X, N, S, lam, link="logistic"):
    """Regularised negative log-likelihood on sufficient statistics, one value per column of S.

    L(theta) = lam/2 ||theta||^2 + sum_x [N_x b(x^T theta) - S_x x^T theta]  (S0 eq. 4.2, S1 §2),
    theta (m, d), X (n, d) distinct arms, N (n,) counts, S (n, m) reward sums.
    """
    b = _link(link)[2]
    s = X @ theta.T
    return 0.5 * lam * (theta**2).sum(axis=1) + (N[:, None] * b(s) - S * s).sum(axis=0)


def theory_a(algorithm: str, d: int, n: int, sigma=0.5, mu_dot_min=0.25, mu_dot_max=0.25) -> float:
    """Perturbation scale a of [S1]'s theorems: c1 sqrt(mu'_max) for GLM-TSL (§4.3, Lemma 2),
    c1 mu'_max for GLM-FPL (§4.4, Lemma 3), c1 = sigma / mu'_min sqrt(d log(n/d) + 2 log n).

    With [S1] §5.1's logistic values (sigma = 0.5, mu'_min = mu'_max = 0.25) and n = 50 000 this
    gives 8.23 / 10.33 / 13.35 (GLM-TSL) and half that (GLM-FPL) for d = 5 / 10 / 20.
    """
    c1 = sigma / mu_dot_min * np.sqrt(d * np.log(n / d) + 2 * np.log(n))
    if algorithm == "GLM-TSL":
        return float(c1 * np.sqrt(mu_dot_max))
    if algorithm == "GLM-FPL":
        return float(c1 * mu_dot_max)
    raise ValueError(f"theory_a knows 'GLM-TSL' and 'GLM-FPL', not {algorithm!r}")


class _GLMAgent(BaseAgent):
    """GLM-ES and the [S2] baselines on the one base, batched over N instances: sufficient
    statistics (`ArmStats`) and one numpy Generator per instance, made from the instance's seed
    itself, as these agents' single versions always drew. A single agent is the N = 1 case of the
    same code, and every instance's arithmetic is independent of the others (as in
    `agents.glm_batch`), so instance i of a batch seeded [s_1..s_N] computes bit for bit what a
    single agent seeded s_i computes and makes its choices.

    Subclasses declare `params`, store their hyperparameters, call `super().__init__(seed=seed,
    dim=dim)`, and implement `_setup(n, d)` (state that needs N and d), `_learn(x, y)` (x (N, d),
    y (N,), after the statistics got the round's pulls) and either `_choose(X)` ((N,) arms of X
    (N, K, d)) or, for an index policy (`index_policy = True`, greedy on deterministic scores, which
    makes `action_probs` exact), `_index(X)`: the (N, K) scores.
    """

    index_policy = False
    cols = None  # reward-sum columns in the sufficient statistics (m for an ensemble), None: one

    def _seed(self, seqs) -> None:
        """Instance i draws everything (ties included) from default_rng(seqs[i])."""
        self.rngs_ = [np.random.default_rng(s) for s in seqs]

    def _ties(self):
        return self.rngs_

    def _reset(self) -> None:
        self._stats = None

    @property
    def stats_(self):
        """The sufficient statistics (`StatsView`: X, N, S (rows, cols)): instance 0's table
        (single) or a list of them (batched); None before the first obs."""
        if self._stats is None:
            return None
        views = [self._stats.view(i) for i in range(self.n_)]
        return views[0] if self.single_ else views

    def _start(self, X) -> None:
        n, _, d = X.shape
        self._stats = ArmStats(X.astype(np.float64), self.cols)
        self._setup(n, d)

    def act(self, obs: np.ndarray) -> int | np.ndarray:
        """Index of the arm to pull among the rows of obs (K, d), or one per instance of obs (N, K, d)."""
        return self._unwrap(self._choose(self._check_obs(obs, finite=True).astype(np.float64, copy=False)))

    def observe(self, obs: np.ndarray, action, reward) -> None:
        """Record that arm `action` of obs gave `reward` (per instance when batched); update the estimates."""
        X = self._check_obs(obs, finite=True)
        a, y = self._feedback(X, action, reward)
        x = X[np.arange(self.n_), a].astype(np.float64)
        self.t_ += 1
        self._stats.add(a, x, self._targets(y))
        self._learn(x, y)

    def _targets(self, y: np.ndarray) -> np.ndarray:
        """What the statistics add to the pulled arms' reward sums: the rewards (N,)."""
        return y

    def _choose(self, X: np.ndarray) -> np.ndarray:
        """Greedy on the index, ties at random."""
        return self._argmax(self._index(X))

    def _probs(self, X: np.ndarray) -> np.ndarray | None:
        if not self.index_policy:
            return None
        return argmax_probs(self._index(check_finite(X).astype(np.float64, copy=False)))


_POSITIVE = Real(gt=0)
_SCALE = (Real(ge=0), "theory")    # a perturbation or width scale: a number, or the theory value


# ---------------------------------------------------------------------------------------------
# [S1]: GLM-TSL and GLM-FPL, and the UCB baselines of its §5.1, all batched over N instances
# (agents.glm_batch: a single agent is the N = 1 case of the same code).

class _PerturbedGLM(BatchedGLMAgent):
    """What GLM-TSL and GLM-FPL share: the scale a (informal, or [S1]'s theory value for `theory`)."""

    theory = ""          # the algorithm whose theory scale `theory_a` gives
    params = {"a": _SCALE, "horizon": (Int(ge=2), None)}
    search_space = {"a": LogUniform(0.05, 5)}               # and lam (BatchedGLMAgent)
    theta_ = _PerInstance()

    @classmethod
    def reads_horizon(cls, kwargs: dict) -> bool:
        """n sizes only the theory scale (a="theory")."""
        return cls.setting(kwargs, "a") == "theory"

    def _check_params(self):
        if self.a == "theory" and self.horizon is None:
            raise ValueError("a='theory' needs the horizon n: pass horizon=...")

    def _hyper(self, d):
        self.a_ = theory_a(self.theory, d, self.horizon) if self.a == "theory" else float(self.a)


@register("GLM-TSL")
class GLMTSL(_PerturbedGLM):
    """GLM-TSL ([S1] §3.1, Alg. 1): Thompson sampling from the Laplace approximation.

    theta~_t ~ N(theta_bar_t, a^2 H_t^{-1}) (eq. 4) with theta_bar_t the MLE and
    H_t = sum_l mu'(X_l^T theta_bar_t) X_l X_l^T its Hessian (eq. 5); pull argmax_i x_i^T theta~_t.
    obs (K, d) for one instance or (N, K, d) for N (`seed` then a list of N ints).

    Args:
        a: posterior inflation; 1.0 is [S1] §5.1's informal design (the plain Laplace
            approximation), "theory" is a = c1 sqrt(mu'_max) of §4.3 (see `theory_a`).
        lam: ridge on the MLE. [S1]'s MLE is unregularised; a small lam keeps it finite while
            the data are still separable (Bernoulli rewards after the first d pulls).
        init_explore: first pull d linearly independent arms ([S1] §5.1, all algorithms).
        link: "logistic" (default) or "identity".
        horizon: n, needed only for a="theory".
        dim: d, otherwise taken from the first observation.
        seed: seed of the agent's own streams (an int, or one int per instance).
    """

    theory = "GLM-TSL"
    root_ = _PerInstance()

    def __init__(self, *, a=1.0, lam=1e-3, init_explore=True, link="logistic", horizon=None, dim=None, seed=None):
        super().__init__(**hyperparameters(locals()))

    def _init_state(self, n, d):
        self._theta = np.zeros((n, d))
        self._root = np.tile(np.eye(d) / np.sqrt(self.lam), (n, 1, 1))  # L^{-T}, H = L L^T: root root^T = H^{-1}

    def _scores(self, X):
        eps = self.rng_.standard_normal((self.n_, self.d_))
        theta = self._theta + self.a_ * (self._root @ eps[..., None])[..., 0]
        return (X @ theta[..., None])[..., 0]

    def _learn(self, x, y):
        self._theta = self._fit(self._theta)
        X, N, _ = self._stats.blocks()
        H = glm_hessians(self._theta[:, None], X, N, self.lam, self.link)[:, 0]     # eq. 5 at the MLE
        self._root = np.swapaxes(np.linalg.inv(np.linalg.cholesky(H)), -1, -2)
        self._H_inv = (self._root @ np.swapaxes(self._root, -1, -2))[:, None]        # next round's kept H^-1


@register("GLM-FPL")
class GLMFPL(_PerturbedGLM):
    """GLM-FPL ([S1] §3.2, eq. 6): greedy on the MLE of rewards perturbed by fresh N(0, a^2) noise.

    Each round every past reward gets new noise; on sufficient statistics that is one
    N(0, N_x a^2) draw per distinct arm added to its reward sum S_x ([S1] §3.3). The perturbed MLE
    is warm-started from the previous round's.

    Args:
        a: perturbation scale; 0.5 is [S1] §5.1's informal design, "theory" is
            a = c1 mu'_max of §4.4 (see `theory_a`).
        lam, init_explore, link, horizon, dim, seed: as for GLM-TSL. The ridge also keeps the MLE
            finite when a perturbed reward sum leaves [0, N_x] (logistic loss unbounded below).
    """

    theory = "GLM-FPL"

    def __init__(self, *, a=0.5, lam=1e-3, init_explore=True, link="logistic", horizon=None, dim=None, seed=None):
        super().__init__(**hyperparameters(locals()))

    def _init_state(self, n, d):
        self._theta = np.zeros((n, d))
        self._noise = RaggedNormals([_child(s, 3) for s in self.seqs_])  # one draw per table row

    def _reseed(self, seqs):
        super()._reseed(seqs)
        self._noise = RaggedNormals([_child(s, 3) for s in seqs])

    def _scores(self, X):
        st = self._stats
        m = st.width()
        S = st.S[:, :m] + self.a_ * np.sqrt(st.N[:, :m]) * self._noise.take(st.rows, m)
        self._theta = self._fit(self._theta, S)
        return (X @ self._theta[..., None])[..., 0]


class _GLMUCBBase(BatchedGLMAgent):
    """MLE theta_hat_t plus a bonus alpha_t ||x||_{V_t^{-1}}, V_t = lam I + sum_l X_l X_l^T."""

    params = {"alpha": _SCALE, "delta": _POSITIVE, "sigma": _POSITIVE, "mu_dot_min": _POSITIVE}
    search_space = {"alpha": LogUniform(0.05, 5)}           # and lam (BatchedGLMAgent)
    index_policy = True
    theta_ = _PerInstance()
    V_inv_ = _PerInstance()

    def _init_state(self, n, d):
        self._theta = np.zeros((n, d))
        self._V_inv = np.tile(np.eye(d) / self.lam, (n, 1, 1))

    def _learn(self, x, y):
        rls_update_(self._V_inv, x)
        self._theta = self._fit(self._theta)

    def _means(self, X):
        return (X @ self._theta[..., None])[..., 0]

    def _widths(self, X):
        return np.sqrt(np.maximum(((X @ self._V_inv) * X).sum(axis=-1), 0.0))


@register("GLM-UCB")
class GLMUCB(_GLMUCBBase):
    """GLM-UCB (Filippi, Cappe, Garivier, Szepesvari 2010): argmax mu(x^T theta_hat) + rho(t) ||x||_{V^{-1}}.

    Theory width (Filippi et al. Thm 1, without their constant kappa >= sqrt(3) and projection
    step): rho(t) = 2 k_mu sigma / c_mu sqrt(2 d log t log(2 d n / delta)) with k_mu = mu'_max and
    c_mu = mu'_min set, as in [S1] §5.1, to 0.25 and sigma = 0.5 (Bernoulli rewards). n is the
    horizon if given, else the current round (anytime), with alpha="theory". A number for `alpha`
    replaces rho(t); the default is [S1]'s informal design alpha=0.5, because the theory width (61-77
    on a [0, 1] mean scale) leaves GLM-UCB at Random's regret for 10^4 rounds (docs/sanity.md).

    Args:
        alpha: a constant width scale (default 0.5) or "theory".
        delta, sigma, mu_dot_min, mu_dot_max: constants of the theory width.
        lam, init_explore, link, horizon, dim, seed: as for GLM-TSL.
    """

    params = {"mu_dot_max": _POSITIVE, "horizon": (Int(ge=2), None)}

    def __init__(self, *, alpha=0.5, delta=0.05, sigma=0.5, mu_dot_min=0.25, mu_dot_max=0.25, lam=1e-3,
                 init_explore=True, link="logistic", horizon=None, dim=None, seed=None):
        super().__init__(alpha=alpha, delta=delta, sigma=sigma, mu_dot_min=mu_dot_min, mu_dot_max=mu_dot_max, lam=lam,
                    init_explore=init_explore, link=link, horizon=horizon, dim=dim, seed=seed)

    @classmethod
    def reads_horizon(cls, kwargs: dict) -> bool:
        """n sizes only the theory width (alpha="theory")."""
        return cls.setting(kwargs, "alpha") == "theory"

    def _scores(self, X):
        if self.alpha == "theory":
            t, d = max(self.t_, 2), self.d_
            n = max(self.horizon or t, 2)
            rho = 2 * self.mu_dot_max * self.sigma / self.mu_dot_min * np.sqrt(
                2 * d * np.log(t) * np.log(2 * d * n / self.delta))
        else:
            rho = self.alpha
        return _link(self.link)[0](self._means(X)) + rho * self._widths(X)


@register("UCB-GLM")
class UCBGLM(_GLMUCBBase):
    """UCB-GLM (Li, Lu, Zhou 2017): argmax x^T theta_hat + alpha_t ||x||_{V^{-1}}.

    Theory width (Li et al. Thm 2): alpha_t = sigma / kappa sqrt(d/2 log(1 + 2t/d) + log(1/delta)),
    kappa = mu'_min set to [S1] §5.1's most optimistic 0.25, sigma = 0.5, with alpha="theory". A
    number for `alpha` replaces alpha_t; the default is [S1]'s informal design alpha=0.5, as for
    GLM-UCB (the theory width learns slowly on [S0]'s logistic bandit, docs/sanity.md). Li et al. start with random pulls
    until V is well conditioned; here, as in [S1] §5.1, with d linearly independent arms.

    Args:
        alpha: a constant width scale (default 0.5) or "theory".
        delta, sigma, mu_dot_min: constants of the theory width.
        lam, init_explore, link, dim, seed: as for GLM-TSL.
    """

    def __init__(self, *, alpha=0.5, delta=0.05, sigma=0.5, mu_dot_min=0.25, lam=1e-3,
                 init_explore=True, link="logistic", dim=None, seed=None):
        super().__init__(alpha=alpha, delta=delta, sigma=sigma, mu_dot_min=mu_dot_min, lam=lam,
                    init_explore=init_explore, link=link, dim=dim, seed=seed)

    def _scores(self, X):
        if self.alpha == "theory":
            d = self.d_
            alpha = self.sigma / self.mu_dot_min * np.sqrt(
                d / 2 * np.log(1 + 2 * self.t_ / d) + np.log(1 / self.delta))
        else:
            alpha = self.alpha
        return self._means(X) + alpha * self._widths(X)


# ---------------------------------------------------------------------------------------------
# [S0]: GLM-ES and its anytime version.

@register("GLM-ES")
class GLMES(_GLMAgent):
    """GLM-ES ([S0] Alg. 1 with the GLM loss, §4.2): ensemble sampling for generalized linear bandits.

    Warm-up ([S0] App. B.4, Alg. 2-3): pull arms by a G-optimal design of the observed arm set,
    rounded to pull counts for `warmup` rounds and played round-robin (recomputed if the arm set
    changes). Member j keeps its own perturbed history {(X_l, Y_l + Z_l^j)}, Z_l^j ~ N(0, sigma_R^2)
    drawn once per observation and never resampled, warm-up data included, and the estimate
    theta^j_t = argmin lam/2 ||theta||^2 - sum_l [(Y_l + Z_l^j) X_l^T theta - b(X_l^T theta)]
    (eqs. 4.2-4.3). Each round pulls argmax_x mu(x^T theta^{j_t}) for j_t ~ Unif[m].

    [S0] §7.2 approximates the argmin with 100 gradient steps of size 0.01; here it is solved to
    convergence (||grad||^2 <= 1e-12 lam), warm-started from the previous round, by chord Newton
    with a Hessian kept across rounds (`agents.glm_batch.fit_glm_ensemble`).

    Batched: obs (K, d) for one instance or (N, K, d) for N (`seed` then a list of N ints). The m
    members of all N instances are one stacked solve; each instance draws from its own Generator
    in the single agent's order (j_t, then a tie if any, at `act`; the m perturbations at `observe`).

    Args:
        m: ensemble size ([S0] §7.2: 10).
        sigma_R: perturbation std ([S0] §7.2: 0.1).
        lam: ridge lam of eq. 4.2 ([S0] §7.2: 1.0).
        warmup: warm-up rounds tau ([S0] §7.2: 500); 0 disables the warm-up.
        design_a: rounding parameter a of Alg. 3 (theory: 0.5).
        link: "logistic" (default) or "identity" (then GLM-ES is Lin-ES with a warm-up).
        dim, seed: as for GLM-TSL.
    """

    params = {"m": Int(ge=1), "sigma_R": Real(ge=0), "lam": _POSITIVE, "warmup": Int(ge=0),
              "design_a": Real(gt=0, lt=1), "link": Options(*LINKS)}
    search_space = {"m": IntLogUniform(2, 50), "sigma_R": LogUniform(0.01, 1), "lam": LogUniform(0.01, 100)}
    theta_ = _PerInstance()        # members' estimates, (m, d) or (N, m, d)
    warmup_end_ = _PerInstance()   # last warm-up round (tau, or the sum of the rounded counts once known)

    def __init__(self, *, m=10, sigma_R=0.1, lam=1.0, warmup=500, design_a=0.5, link="logistic", dim=None, seed=None):
        super().__init__(**hyperparameters(locals()))

    @property
    def cols(self):
        return self.m

    def _setup(self, n, d):
        self._theta = np.zeros((n, self.m, d))
        self._H_inv = np.full((n, self.m, d, d), np.nan)   # members' kept inverse Hessians (none before the first fit)
        self._warmup_end = np.full(n, self.warmup)
        self.design_arms_ = [None] * n        # per instance, the arm set its warm-up schedule was computed for
        self.schedules_ = [np.zeros(0, dtype=np.int64)] * n
        self.schedule_starts_ = np.zeros(n, dtype=np.int64)   # round at which each schedule starts

    def _choose(self, X):
        actions = np.zeros(self.n_, dtype=np.int64)
        sampling = np.ones(self.n_, dtype=bool)
        for i in np.flatnonzero(self.t_ < self._warmup_end):
            arm = self._warmup_arm(i, X[i])
            if arm is not None:
                actions[i], sampling[i] = arm, False
        rows = np.flatnonzero(sampling)
        if rows.size:
            gens = [self.rngs_[i] for i in rows]
            j = np.array([g.integers(self.m) for g in gens])                      # j_t ~ Unif[m]
            theta = self._theta[rows, j]
            actions[rows] = random_argmax((X[rows] @ theta[..., None])[..., 0], gens)
        return actions

    def _warmup_arm(self, i: int, X: np.ndarray) -> int | None:
        """Instance i's warm-up pull on its arms X (K, d), or None once its schedule is used up.

        A new arm set gets a design for the rounds left; the first design fixes the warm-up length
        (tau, or more when Alg. 3's floor adds pulls).
        """
        if self.design_arms_[i] is None or not np.array_equal(X, self.design_arms_[i]):
            remaining = self._warmup_end[i] - self.t_
            counts = round_design(g_optimal_design(X), remaining, self.d_, self.design_a)
            self.schedules_[i] = round_robin(counts)
            if self.design_arms_[i] is None:
                self._warmup_end[i] = self.t_ + self.schedules_[i].size
            self.schedule_starts_[i] = self.t_
            self.design_arms_[i] = X.copy()
        k = self.t_ - self.schedule_starts_[i]
        return int(self.schedules_[i][k]) if k < self.schedules_[i].size else None

    def _targets(self, y):
        Z = np.stack([g.standard_normal(self.m) for g in self.rngs_])   # Z_l^j, drawn once per observation
        return y[:, None] + self.sigma_R * Z                            # member j's Y_l + Z_l^j

    def _learn(self, x, y):
        """theta^j_t of every member of the instances past their warm-up (eq. 4.3), warm-started:
        their m perturbed histories on each instance's table are the problems of one solve."""
        rows = np.flatnonzero(self.t_ >= self._warmup_end)
        if not rows.size:
            return
        X, N, S = self._stats.blocks()
        sub = slice(None) if rows.size == self.n_ else rows      # views, not copies, once all are past it
        self._theta[sub], self._H_inv[sub] = fit_glm_ensemble(
            self._theta[sub], self._H_inv[sub], X[sub], N[sub], S[sub], self.lam, self.link)


@register("GLM-ES-DT")
class GLMESDT(DoublingTrick):
    """Anytime GLM-ES ("GLM-ES-DT<T0>", [S0] §6, §7.2): GLM-ES restarted at T_i = floor(T0 b^i).

    Batched like GLM-ES: with `seed` a list of N ints and obs (N, K, d), instance i acts as a
    single GLM-ES-DT seeded seed[i] (`agents.anytime.DoublingTrick`).

    Epoch i (length tau_i) runs a fresh GLM-ES with m = max(1, round(2 ln tau_i)) members and
    sigma_R = 0.02 ln tau_i ([S0] §7.2; natural log, docs/papers.md, S0-A5). The warm-up (500 rounds)
    is cut short by the restart when an epoch is shorter, e.g. the first one for T0 = 100.

    Args:
        T0, b: schedule ([S0]: T0 in {100, 300}, b = (3 + sqrt 5)/2).
        m_per_log, sigma_per_log: m and sigma_R per unit of ln tau_i.
        lam, warmup, design_a, link, dim: passed to every epoch's GLM-ES.
        seed: seed of the wrapper's generator, which seeds each epoch's agent (an int, or one int per instance).
    """

    batched = True

    def __init__(self, *, T0=100, b=GOLDEN_B, m_per_log=2.0, sigma_per_log=0.02, lam=1.0, warmup=500,
                 design_a=0.5, link="logistic", dim=None, seed=None):
        self.lam, self.warmup, self.design_a, self.link, self.dim = lam, warmup, design_a, link, dim
        super().__init__(GLMES, T0=T0, b=b, m_per_log=m_per_log, sigma_per_log=sigma_per_log, seed=seed)

    def _epoch_kwargs(self) -> dict:
        return dict(lam=self.lam, warmup=self.warmup, design_a=self.design_a, link=self.link, dim=self.dim)


# ---------------------------------------------------------------------------------------------
# Linear-logistic baselines of [S2] §7 (definitions from the original papers; docs/papers.md, S2-A13).

@register("Logistic-UCB-1")
class LogisticUCB1(_GLMAgent):
    """Logistic-UCB-1 (Faury, Abeille, Calauzenes, Fercoq 2020), baseline (2) of [S2] §7.

    theta_hat_t is the lam-regularised logistic MLE (the projection step is dropped, as in [S2]
    App. A), H_t its Hessian, V_t = sum_l X_l X_l^T + kappa lam I. Pull
    argmax_x mu(x^T theta_hat_t) + nu rho_t ||x||_{V_t^{-1}} with (Faury et al. Thm 1, as in the
    authors' code) rho_t = sqrt(kappa)/4 min(sqrt(1 + 2S) gamma_t, gamma_t + gamma_t^2/sqrt(lam))
    + sqrt(lam) S and gamma_t = sqrt(lam)/2 + 2/sqrt(lam) (log(1/delta) + log det(H_t)/2 - d/2 log lam).

    Args:
        nu: bonus multiplier ([S2] tunes it on {0.01, 0.1, 1, 10, 100}). Default 0.1: with nu = 1 (the
            authors' code) the bonus explores for thousands of rounds even on a well-specified
            logistic bandit (0.89x Random on [S1]'s at T = 2,000; 0.1: 0.59x, docs/sanity.md).
        kappa, S: problem constants ([S2] §7: kappa = 10, S = 1).
        lam: ridge ([S2] tunes it on the same grid).
        delta: confidence level.
        dim, seed: as for GLM-TSL.
    """

    index_policy = True
    params = {"nu": _POSITIVE, "kappa": _POSITIVE, "S": _POSITIVE, "lam": _POSITIVE, "delta": _POSITIVE}
    search_space = {"nu": LogUniform(0.01, 1), "lam": LogUniform(0.01, 100)}
    theta_ = _PerInstance()
    V_inv_ = _PerInstance()
    logdet_H_ = _PerInstance()

    def __init__(self, *, nu=0.1, kappa=10.0, S=1.0, lam=1.0, delta=0.05, dim=None, seed=None):
        super().__init__(nu=nu, kappa=kappa, S=S, lam=lam, delta=delta, dim=dim, seed=seed)

    def _setup(self, n, d):
        self._theta = np.zeros((n, d))
        self._V_inv = np.tile(np.eye(d) / (self.kappa * self.lam), (n, 1, 1))
        self._logdet_H = np.full(n, d * np.log(self.lam))

    def _learn(self, x, y):
        rls_update_(self._V_inv, x)
        X, N, S = self._stats.blocks()
        self._theta, H = fit_glm_batched(self._theta, X, N, S, self.lam, "logistic")
        self._logdet_H = np.linalg.slogdet(H)[1]

    def _index(self, X):
        lam, S = self.lam, self.S
        gamma = np.sqrt(lam) / 2 + 2 / np.sqrt(lam) * (
            np.log(1 / self.delta) + 0.5 * self._logdet_H - 0.5 * self.d_ * np.log(lam))
        rho = (np.sqrt(self.kappa) / 4 * np.minimum(np.sqrt(1 + 2 * S) * gamma, gamma + gamma**2 / np.sqrt(lam))
               + np.sqrt(lam) * S)
        width = np.sqrt(np.maximum(((X @ self._V_inv) * X).sum(axis=-1), 0.0))
        return expit((X @ self._theta[..., None])[..., 0]) + self.nu * rho[:, None] * width


@register("ada-OFU-ECOLog")
class AdaOFUECOLog(_GLMAgent):
    """ada-OFU-ECOLog (Faury, Abeille, Jun, Calauzenes 2022), baseline (3) of [S2] §7.

    One online step per round, O(d^2): theta_{t+1} = argmin_theta l(theta; X_t, Y_t)
    + 1/2 ||theta - theta_t||^2_{W_t} with l the logistic loss of the new sample. The minimiser is
    theta_t - c W_t^{-1} X_t with a scalar c, found by Newton on one equation. Then
    W_{t+1} = W_t + mu'(X_t^T theta_{t+1}) X_t X_t^T (Sherman-Morrison), W_0 = lam I. Pull
    argmax_x mu(x^T theta_t) + nu rho_t ||x||_{W_t^{-1}}, rho_t^2 = 2 lam S^2 + (1 + S)^2 gamma_t,
    gamma_t = sqrt(lam)/2 + 2/sqrt(lam) log(2 sqrt(1 + t/(4 lam)) / delta): the warm-up-free
    variant of the authors' code, without the constraint ||theta|| <= S and the data-dependent
    loss-difference term (projection-type steps dropped as in [S2] App. A).

    Args:
        nu: bonus multiplier ([S2] tunes it on {0.01, 0.1, 1, 10, 100}). Default 1, the authors'
            code (Logistic-UCB-1's default is 0.1); bench tune's choice on bakeoff-v1 is nu = 0.28
            with lam = 21 (docs/tuning_studies.md).
        S: bound on ||theta*|| ([S2] §7: 1).
        lam: ridge of W_0 ([S2] tunes it on the same grid).
        delta: confidence level.
        dim, seed: as for GLM-TSL.
    """

    index_policy = True
    params = {"nu": _POSITIVE, "S": _POSITIVE, "lam": _POSITIVE, "delta": _POSITIVE}
    search_space = {"nu": LogUniform(0.1, 10), "lam": LogUniform(0.01, 100)}
    theta_ = _PerInstance()
    W_inv_ = _PerInstance()

    def __init__(self, *, nu=1.0, S=1.0, lam=1.0, delta=0.05, dim=None, seed=None):
        super().__init__(nu=nu, S=S, lam=lam, delta=delta, dim=dim, seed=seed)

    def _setup(self, n, d):
        self._theta = np.zeros((n, d))
        self._W_inv = np.tile(np.eye(d) / self.lam, (n, 1, 1))

    def _learn(self, x, y):
        Wx = (self._W_inv @ x[..., None])[..., 0]
        q, s0 = (x * Wx).sum(axis=-1), (x * self._theta).sum(axis=-1)
        s, live = s0.copy(), np.arange(len(s0))
        for _ in range(50):  # s - s0 + (mu(s) - y) q = 0, increasing in s; root within s0 +- q (per instance)
            si, s0i, qi = s[live], s0[live], q[live]
            g = si - s0i + (expit(si) - y[live]) * qi
            s[live] = np.clip(si - g / (1 + _logistic_dmu(si) * qi), s0i - qi, s0i + qi)
            live = live[np.abs(g) >= 1e-12]
            if not live.size:
                break
        self._theta = self._theta - (expit(s) - y)[:, None] * Wx
        rls_update_(self._W_inv, np.sqrt(_logistic_dmu((x * self._theta).sum(axis=-1)))[:, None] * x)

    def _index(self, X):
        lam, S = self.lam, self.S
        gamma = np.sqrt(lam) / 2 + 2 / np.sqrt(lam) * np.log(2 * np.sqrt(1 + self.t_ / (4 * lam)) / self.delta)
        rho = np.sqrt(2 * lam * S**2 + (1 + S) ** 2 * gamma)
        width = np.sqrt(np.maximum(((X @ self._W_inv) * X).sum(axis=-1), 0.0))
        return expit((X @ self._theta[..., None])[..., 0]) + self.nu * rho * width
