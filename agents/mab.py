"""K-armed bandit agents, stationary and non-stationary: UCB1, kl-UCB, TS (Bernoulli Thompson sampling),
D-UCB and SW-UCB (Garivier & Moulines 2011), D-TS (Raj & Kalyani 2017) and SW-TS (Trovo et al. 2020).

These agents identify an arm by its ROW INDEX in obs (K, d) and ignore the features: arm k is the
same arm every round (an env that shows its K arms as one-hot ids, or in a fixed order). The first
obs fixes K; an obs with another number of rows is refused. Rewards are expected in [0, 1] (the
papers' setting, B = 1); the UCB indices take any real reward, while kl-UCB's Bernoulli divergence and
TS's Beta posterior read a reward clipped to [0, 1] (TS draws a Bernoulli(r) success from it,
Agrawal & Goyal 2012's trick for rewards in [0, 1]).

All of them keep per-arm statistics (N, K) for N instances, forgotten in one of three ways:
    N_k <- gamma N_k + 1{A = k},  S_k <- gamma S_k + r 1{A = k}       (discount gamma; 1: none)
or the same sums over the last `window` rounds only (a ring buffer of the arms and rewards that
leave it). gamma = 1 and window = None run the stationary arithmetic exactly (the same float
operations, so D-UCB(gamma=1) and SW-UCB(window=None) with UCB1's constants are UCB1 bit for bit).
`restart_arm(arm, rows)` forgets one arm's statistics (the local restarts of CUSUM-UCB and
GLR-klUCB, agents.changepoint).
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import betaincinv

from agents.base import BaseAgent, argmax_probs, check_finite, register
from agents.params import Int, LogUniform, Real

__all__ = ["UCB1", "KLUCB", "BernoulliTS", "DUCB", "SWUCB", "DTS", "SWTS", "kl_bernoulli", "klucb_index"]

EPS = 1e-15       # means are kept in [EPS, 1 - EPS] inside the Bernoulli divergence (log 0 otherwise)


def kl_bernoulli(p, q):
    """kl(p, q) = p log(p / q) + (1 - p) log((1 - p) / (1 - q)), elementwise, with p, q clipped to [EPS, 1 - EPS]."""
    p, q = np.clip(p, EPS, 1 - EPS), np.clip(q, EPS, 1 - EPS)
    return p * np.log(p / q) + (1 - p) * np.log((1 - p) / (1 - q))


def klucb_index(mean: np.ndarray, level: np.ndarray, steps: int = 20) -> np.ndarray:
    """max{q in [mean, 1]: kl(mean, q) <= level}, elementwise (Garivier & Cappe 2011, eq. 2 with level =
    (log n + c log log n) / N), by `steps` bisections (kl(mean, .) increases on [mean, 1]; 20 steps: within
    1e-6 of it, below, as SMPyBandits' default precision). kl(p, q) = p log p + (1 - p) log(1 - p)
    - p log q - (1 - p) log(1 - q): only the last two terms change with q."""
    p = np.clip(mean, EPS, 1 - EPS)
    # kl(p, q) <= level  <=>  -p log q - (1 - p) log(1 - q) <= target
    target = level - p * np.log(p) - (1 - p) * np.log1p(-p)
    lo, hi = np.clip(mean, 0.0, 1.0), np.ones(np.shape(mean))    # (a mean outside [0, 1]: its clipped value)
    for _ in range(steps):
        mid = (lo + hi) * 0.5
        q = np.minimum(mid, 1 - EPS)
        above = -(p * np.log(q) + (1 - p) * np.log1p(-q)) > target
        hi = np.where(above, mid, hi)
        lo = np.where(above, lo, mid)
    return lo


class _ArmAgent(BaseAgent):
    """Per-arm counts and sums over the arms' row indices, discounted (`_gamma`) or windowed (`_window`).

    Subclasses give `_gamma()` (1.0: no discount), `_window()` (None: no window) and `_scores()`
    -> (N, K) from counts_ (N_k) and sums_ (S_k); an index policy (`index_policy`) draws nothing in
    `_scores`, so its action distribution is uniform over its maximisers.
    """

    index_policy = True

    def _start(self, X):
        n, self.K_ = self.n_, X.shape[1]
        self.counts_ = np.zeros((n, self.K_))       # N_k: (discounted / windowed) number of pulls
        self.sums_ = np.zeros((n, self.K_))         # S_k: (discounted / windowed) sum of rewards
        window = self._window()
        if window is not None:                       # the last `window` (arm, reward), -1: an empty slot
            self.arms_ = np.full((n, window), -1, np.int64)
            self.rewards_ = np.zeros((n, window))

    def _arms(self, obs, finite: bool = False) -> np.ndarray:
        return self._same_k(self._check_obs(obs, finite=finite))

    def _same_k(self, X: np.ndarray) -> np.ndarray:
        if X.shape[1] != self.K_:
            raise ValueError(f"obs has {X.shape[1]} arms (rows) but this agent started with {self.K_}; its arms are "
                             "row indices, so K must stay fixed (call reset() to change)")
        return X

    def act(self, obs):
        """The arm (row) of largest score; obs (K, d) -> int, (N, K, d) -> (N,) ints."""
        self._arms(obs, finite=True)
        return self._unwrap(self._argmax(self._checked(self._scores())))

    def observe(self, obs, action, reward) -> None:
        """Add the reward of the chosen row to its statistics (after forgetting, by discount or window)."""
        X = self._arms(obs)
        a, y = self._feedback(X, action, reward)
        self._update(a, self._target(y))
        self.t_ += 1

    def _target(self, y: np.ndarray) -> np.ndarray:
        """What the sums add for rewards y (N,): the reward itself (TS: a Bernoulli success)."""
        return y

    def _update(self, a: np.ndarray, y: np.ndarray) -> None:
        rows, gamma, window = np.arange(self.n_), self._gamma(), self._window()
        if gamma != 1.0:
            self.counts_ *= gamma                   # N_k <- gamma N_k, S_k <- gamma S_k (every arm)
            self.sums_ *= gamma
        if window is not None:
            slot = self.t_ % window                 # the round leaving the window
            old = self.arms_[:, slot]
            full = old >= 0
            self.counts_[rows[full], old[full]] -= 1.0
            self.sums_[rows[full], old[full]] -= self.rewards_[full, slot]
            self.arms_[:, slot], self.rewards_[:, slot] = a, y
        self.counts_[rows, a] += 1.0
        self.sums_[rows, a] += y

    def restart_arm(self, arm: int, rows=None) -> None:
        """Forget arm `arm`'s statistics in the instances `rows` (None: all): a local restart."""
        rows = np.arange(self.n_) if rows is None else np.atleast_1d(rows)
        self.counts_[rows, arm] = 0.0
        self.sums_[rows, arm] = 0.0
        if self._window() is not None:             # its rounds in the window leave without a trace
            mask = np.zeros(self.arms_.shape, bool)
            mask[rows] = self.arms_[rows] == arm
            self.arms_[mask], self.rewards_[mask] = -1, 0.0

    def _checked(self, scores: np.ndarray) -> np.ndarray:
        if np.isnan(scores).any():
            raise FloatingPointError("arm scores contain NaN; the agent's statistics are corrupt")
        return scores

    def _probs(self, X):
        check_finite(self._same_k(X))
        return argmax_probs(self._checked(self._scores())) if self.index_policy else None

    def _gamma(self) -> float:
        return 1.0

    def _window(self) -> int | None:
        return None

    def _ucb(self, c: float, B: float = 1.0) -> np.ndarray:
        """mean_k + B sqrt(c log n / N_k), n = sum_k N_k; +inf for an arm never pulled (N_k = 0):
        UCB1's index with c = 2, B = 1 (Auer et al. 2002), D-UCB's and SW-UCB's with theirs."""
        N = self.counts_
        n = N.sum(axis=1, keepdims=True)
        pulled = N > 0
        safe = np.where(pulled, N, 1.0)                 # (no division by 0: those arms' index is +inf)
        index = self.sums_ / safe + B * np.sqrt(c * np.log(np.maximum(n, 1.0)) / safe)
        return np.where(pulled, index, np.inf)


def _theory_window(horizon: int, changes: int, B: float = 1.0) -> int:
    """Garivier & Moulines (2011) §4's window tau = 2 B sqrt(T log T / Upsilon_T), rounded (at least 1)."""
    return max(1, round(2.0 * B * math.sqrt(horizon * math.log(horizon) / changes)))


def _theory_discount(horizon: int, changes: int, B: float = 1.0) -> float:
    """Garivier & Moulines (2011) §3's discount gamma = 1 - (4 B)^{-1} sqrt(Upsilon_T / T)."""
    return 1.0 - math.sqrt(changes / horizon) / (4.0 * B)


_FORGET_PARAMS = {"horizon": Int(ge=2), "changes": Int(ge=1)}


@register("UCB1")
class UCB1(_ArmAgent):
    """UCB1 (Auer, Cesa-Bianchi, Fischer 2002, Fig. 1): pull each arm once, then the arm (row index) of
    largest mean_k + sqrt(2 log n / N_k), n the pulls so far. Stationary: the base of the forgetting
    and change-detecting agents."""

    def __init__(self, *, seed=None, dim: int | None = None):
        super().__init__(seed=seed, dim=dim)

    def _scores(self):
        return self._ucb(2.0)


@register("kl-UCB")
class KLUCB(_ArmAgent):
    """kl-UCB for Bernoulli rewards (Garivier & Cappe 2011, eq. 2): the arm (row index) of largest
    max{q: N_k kl(mean_k, q) <= log n + c log log n}, n the pulls so far, rewards clipped to [0, 1] in
    the divergence. c = 0 is the paper's recommended practical setting (c = 3 its theory).

    Args:
        c: weight of the log log n term.
    """

    params = {"c": Real(ge=0)}

    def __init__(self, *, c: float = 0.0, seed=None, dim: int | None = None):
        self.c = c
        super().__init__(seed=seed, dim=dim)

    def _scores(self):
        N = self.counts_
        n = np.maximum(N.sum(axis=1, keepdims=True), 1.0)
        loglog = np.log(np.maximum(np.log(n), 1.0)) if self.c else 0.0
        pulled = N > 0
        safe = np.where(pulled, N, 1.0)                 # (no division by 0: those arms' index is +inf)
        index = klucb_index(self.sums_ / safe, (np.log(n) + self.c * loglog) / safe)
        return np.where(pulled, index, np.inf)


@register("D-UCB")
class DUCB(_ArmAgent):
    """Discounted UCB (Garivier & Moulines 2011, §3): discounted counts N_t(gamma, k) = sum_s gamma^{t-s}
    1{A_s = k} and sums, index mean_k + 2 B sqrt(xi log n_t(gamma) / N_t(gamma, k)) with n_t(gamma) =
    sum_k N_t(gamma, k), computed as B sqrt(4 xi log n / N) (so xi = 1/2, gamma = 1 is UCB1 bit for bit).

    Default gamma = 1 - (4 B)^{-1} sqrt(Upsilon_T / T) (§3, their theory value) from `horizon` T and
    `changes` Upsilon_T (the number of breakpoints; default 5, a handful per run as in the paper's
    simulations), and B = 1. xi defaults to 0.1, a practical value: the theory's xi > 1/2 (0.6 in
    SW-UCB's experiments) keeps, at that gamma's short memory 1 / (1 - gamma) = 4 sqrt(T / Upsilon_T),
    the bonus of an arm 0.2 below the best above the gap, so D-UCB never settles and ends above UCB1's
    regret (T = 3,000, one change: 337 against UCB1's 284; xi = 0.1: 138; tests/agents/test_nonstationary.py).

    Args:
        gamma: discount in (0, 1], or None for the theory value.
        xi: exploration constant (> 1/2 in the theory).
        B: bound on the rewards.
        horizon: T, read only by gamma=None.
        changes: Upsilon_T, the number of breakpoints assumed, read only by gamma=None.
    """

    params = {"gamma": (Real(gt=0, le=1), None), "xi": Real(gt=0), "B": Real(gt=0), **_FORGET_PARAMS}
    search_space = {"xi": LogUniform(0.1, 2.0)}

    def __init__(self, *, gamma: float | None = None, xi: float = 0.1, B: float = 1.0, horizon: int = 10_000,
                 changes: int = 5, seed=None, dim: int | None = None):
        self.gamma, self.xi, self.B, self.horizon, self.changes = gamma, xi, B, horizon, changes
        super().__init__(seed=seed, dim=dim)

    @classmethod
    def reads_horizon(cls, kwargs: dict) -> bool:
        return cls.setting(kwargs, "gamma") is None

    def _gamma(self):
        return _theory_discount(self.horizon, self.changes, self.B) if self.gamma is None else float(self.gamma)

    def _scores(self):
        return self._ucb(4.0 * self.xi, self.B)


@register("SW-UCB")
class SWUCB(_ArmAgent):
    """Sliding-window UCB (Garivier & Moulines 2011, §4): counts and sums over the last tau rounds,
    index mean_k + B sqrt(xi log min(t, tau) / N_t(tau, k)) (min(t, tau) = the rounds in the window).

    Default window tau = 2 B sqrt(T log T / Upsilon_T) (§4's theory value) from `horizon` and `changes`
    (default 5); xi = 0.6, B = 1 as in §5. window=None keeps every round: with xi = 2, UCB1 bit for bit.

    Args:
        window: tau, a number of rounds, or None for no window.
        xi: exploration constant.
        B: bound on the rewards.
        horizon: T, read only by the theory window (window="theory").
        changes: Upsilon_T, read only by the theory window.
    """

    params = {"window": (Int(ge=1), None, "theory"), "xi": Real(gt=0), "B": Real(gt=0), **_FORGET_PARAMS}
    search_space = {"xi": LogUniform(0.1, 2.0)}

    def __init__(self, *, window: int | str | None = "theory", xi: float = 0.6, B: float = 1.0,
                 horizon: int = 10_000, changes: int = 5, seed=None, dim: int | None = None):
        self.window, self.xi, self.B, self.horizon, self.changes = window, xi, B, horizon, changes
        super().__init__(seed=seed, dim=dim)

    @classmethod
    def reads_horizon(cls, kwargs: dict) -> bool:
        return cls.setting(kwargs, "window") == "theory"

    def _window(self):
        return _theory_window(self.horizon, self.changes, self.B) if self.window == "theory" else self.window

    def _scores(self):
        return self._ucb(self.xi, self.B)


@register("TS")
class BernoulliTS(_ArmAgent):
    """Thompson sampling for Bernoulli rewards (Agrawal & Goyal 2012, Alg. 2): arm k's posterior is
    Beta(alpha0 + S_k, beta0 + N_k - S_k); each round draws one sample per arm and pulls the largest.
    A reward r in [0, 1] counts as a success with probability r (clipped to [0, 1]; a 0/1 reward is
    itself). The Beta draws invert the CDF at uniforms of the instance's stream (one per arm a round,
    one per reward), so instance i of a batched agent draws exactly as a single agent seeded seed[i].

    Args:
        alpha0: prior successes.
        beta0: prior failures.
    """

    params = {"alpha0": Real(gt=0), "beta0": Real(gt=0)}
    index_policy = False

    def __init__(self, *, alpha0: float = 1.0, beta0: float = 1.0, seed=None, dim: int | None = None):
        self.alpha0, self.beta0 = alpha0, beta0
        super().__init__(seed=seed, dim=dim)

    def _target(self, y):
        return (self.rng_.random(self.n_) < np.clip(y, 0.0, 1.0)).astype(float)

    def _scores(self):
        u = self.rng_.random((self.n_, self.K_))
        return betaincinv(self.alpha0 + self.sums_, self.beta0 + (self.counts_ - self.sums_), u)


@register("D-TS")
class DTS(BernoulliTS):
    """Discounted Thompson sampling (Raj & Kalyani 2017, Alg. 2): TS whose success and failure counts
    are discounted every round, S_k <- gamma S_k + r~ 1{A = k}, F_k <- gamma F_k + (1 - r~) 1{A = k},
    samples Beta(S_k + alpha0, F_k + beta0). The paper gives no theory value of gamma; default 0.99, a
    memory of about 1 / (1 - gamma) = 100 rounds (0.95 forgets too fast to tell arms 0.2 apart: on the
    tests' abrupt problem 248 against 116 at 0.99, UCB1 284).

    Args:
        gamma: discount in (0, 1].
        alpha0: prior successes.
        beta0: prior failures.
    """

    params = {"gamma": Real(gt=0, le=1)}
    search_space = {"gamma": LogUniform(0.8, 0.999)}

    def __init__(self, *, gamma: float = 0.99, alpha0: float = 1.0, beta0: float = 1.0, seed=None,
                 dim: int | None = None):
        self.gamma = gamma
        super().__init__(alpha0=alpha0, beta0=beta0, seed=seed, dim=dim)

    def _gamma(self):
        return float(self.gamma)


@register("SW-TS")
class SWTS(BernoulliTS):
    """Sliding-window Thompson sampling (Trovo, Paladino, Restelli, Gatti 2020, Alg. 1): TS on the
    successes and failures of the last tau rounds. Default tau: Garivier & Moulines' SW-UCB window
    2 sqrt(T log T / Upsilon_T) from `horizon` and `changes` (Trovo et al.'s bound takes a window of
    that order, sqrt(T log T / Upsilon_T) up to a constant); window=None is TS.

    Args:
        window: tau, or None, or "theory".
        alpha0: prior successes.
        beta0: prior failures.
        horizon: T, read only by the theory window.
        changes: Upsilon_T, read only by the theory window.
    """

    params = {"window": (Int(ge=1), None, "theory"), **_FORGET_PARAMS}

    def __init__(self, *, window: int | str | None = "theory", alpha0: float = 1.0, beta0: float = 1.0,
                 horizon: int = 10_000, changes: int = 5, seed=None, dim: int | None = None):
        self.window, self.horizon, self.changes = window, horizon, changes
        super().__init__(alpha0=alpha0, beta0=beta0, seed=seed, dim=dim)

    @classmethod
    def reads_horizon(cls, kwargs: dict) -> bool:
        return cls.setting(kwargs, "window") == "theory"

    def _window(self):
        return _theory_window(self.horizon, self.changes) if self.window == "theory" else self.window
