"""Change-detection wrappers that restart a zoo agent: CUSUM-UCB (Liu, Lee, Shroff 2018), M-UCB (Cao,
Wen, Kveton, Xie 2019), GLR-klUCB (Besson, Kaufmann, Maillard, Seznec 2022), and Oracle-Restart, which
restarts at given change points (the baseline that knows them).

Each wraps any registered agent, `base` built by `agents.make(base, **base_kwargs)`, one single
agent per instance: instance i's inner agent is seeded from instance i's seed (and the number of
its restarts), so a batched wrapper acts, instance by instance, exactly as single wrappers do. A
detector watches the rewards of each arm (row index) since its last restart:

- a global restart replaces the instance's inner agent by a fresh one (fresh seed) and clears every
  arm's detector: works for any agent (LinUCB, LinTS, ...), the form M-UCB and Oracle-Restart use;
- a local restart forgets the alarmed arm's statistics only (`restart_arm`, which the K-armed agents
  of agents.mab have) and that arm's detector: CUSUM-UCB's rule (Liu et al. Alg. 1, their default,
  because a change of one arm leaves the others' estimates valid), and an option of GLR-klUCB.

The detectors read rewards in [0, 1] (Bernoulli in the papers); GLR's Bernoulli divergence clips
others to [0, 1]. Forced exploration (CUSUM-UCB: a uniform arm with probability alpha; M-UCB and
GLR-klUCB: round robin over the K arms on K rounds of every floor(K / alpha) since the last
restart) is what lets a change on an arm the inner agent has left be seen.
"""

from __future__ import annotations

import math

import numpy as np

from agents.base import REGISTRY, BaseAgent, UnknownAgent, _child, check_finite, did_you_mean, make, register
from agents.mab import kl_bernoulli
from agents.params import Int, Options, Real, Str

__all__ = ["CUSUMUCB", "MUCB", "GLRklUCB", "OracleRestart", "cusum_update", "glr_statistic", "mucb_statistic"]


class Kwargs:
    """A dict of keyword arguments (str keys), or None: the inner agent's hyper-parameters."""

    def accepts(self, value) -> bool:
        return isinstance(value, dict) and all(isinstance(k, str) for k in value)

    def __str__(self) -> str:
        return "a dict of keyword arguments"


class ChangePoints:
    """A tuple or list of increasing ints >= 2 (1-based rounds that start a segment; round 1 starts the first)."""

    def accepts(self, value) -> bool:
        return (isinstance(value, (tuple, list)) and all(isinstance(t, int) and not isinstance(t, bool) and t > 1
                                                         for t in value)
                and all(a < b for a, b in zip(value, value[1:])))

    def __str__(self) -> str:
        return "a tuple of increasing ints >= 2 (the 1-based first rounds of the new segments)"


def cusum_update(state: list, y: float, M: int, eps: float) -> float:
    """One sample y into the two-sided CUSUM state [k, u0_sum, g_plus, g_minus] (Liu et al. 2018, Alg. 2);
    returns max(g+, g-). The first M samples estimate u0 = their mean; after them
    g+ <- max(0, g+ + y - u0 - eps), g- <- max(0, g- + u0 - y - eps)."""
    state[0] += 1
    if state[0] <= M:
        state[1] += y
        return 0.0
    u0 = state[1] / M
    state[2] = max(0.0, state[2] + y - u0 - eps)
    state[3] = max(0.0, state[3] + u0 - y - eps)
    return max(state[2], state[3])


def mucb_statistic(last: list, w: int) -> float:
    """M-UCB's change statistic (Cao et al. 2019, Alg. 2) on an arm's last w rewards: |sum of the second
    half - sum of the first half|; 0 until it has w of them."""
    if len(last) < w:
        return 0.0
    y = np.asarray(last[-w:])
    return abs(y[w // 2:].sum() - y[:w // 2].sum())


def glr_statistic(history: list) -> float:
    """The Bernoulli GLR statistic (Besson et al. 2022, eq. 3) of an arm's n rewards since its restart:
    max over 1 <= s < n of s kl(mu_{1:s}, mu_{1:n}) + (n - s) kl(mu_{s+1:n}, mu_{1:n}), rewards clipped
    to [0, 1]; 0 for n < 2."""
    n = len(history)
    if n < 2:
        return 0.0
    S = np.cumsum(np.clip(history, 0.0, 1.0))
    s = np.arange(1, n)
    mu = S[-1] / n
    first, second = S[:-1] / s, (S[-1] - S[:-1]) / (n - s)
    return float((s * kl_bernoulli(first, mu) + (n - s) * kl_bernoulli(second, mu)).max())


class _Restarting(BaseAgent):
    """The wrapper's bookkeeping: one inner agent per instance, forced exploration, detectors, restarts.

    Subclasses give `_fresh()` (one arm's detector state), `_alarm(state, y)` (add the reward y of the
    arm to its state; True when the detector fires) and `_forced(i)` (the arm instance i must explore
    this round, or -1), and may override `_mix(p, i)` (the action distribution given the inner
    agent's p) and `_draw()` (the round's random draws).
    """

    params = {"base": Str(), "base_kwargs": (None, Kwargs()), "restart": Options("global", "local")}

    def _check_params(self) -> None:
        if self.base not in REGISTRY:
            raise UnknownAgent(f"base: unknown agent {self.base!r}.{did_you_mean(self.base, REGISTRY)} "
                               "Pass a registered name (agents.REGISTRY)")
        if "seed" in (self.base_kwargs or {}):
            raise ValueError("base_kwargs must not set a seed: the wrapper seeds each instance's base agent from its "
                             "own seed (and its restarts); pass seed= to the wrapper")
        probe = make(self.base, **(self.base_kwargs or {}))
        if self.restart == "local" and not hasattr(probe, "restart_arm"):
            raise ValueError(f"restart='local' needs a base that can forget one arm (restart_arm: UCB1, kl-UCB, TS, "
                             f"... of agents.mab); {self.base!r} cannot: pass restart='global'")

    def _inner(self, i: int):
        """Instance i's inner agent after restarts_[i] restarts, seeded from child (3, restarts) of its seed."""
        seq = self.seqs_[i]
        return self._make(np.random.SeedSequence(seq.entropy, spawn_key=seq.spawn_key + (3, int(self.restarts_[i])),
                                                 pool_size=seq.pool_size))

    def _make(self, seq: np.random.SeedSequence):
        """A fresh inner agent whose int seed is drawn from seq."""
        return make(self.base, seed=int(seq.generate_state(1, np.uint64)[0] >> 1), **(self.base_kwargs or {}))

    def _start(self, X):
        self.K_ = X.shape[1]
        self.restarts_ = np.zeros(self.n_, np.int64)     # restarts of each instance (global and local)
        self.since_ = np.zeros(self.n_, np.int64)        # rounds since each instance's last restart
        self.inner_ = [self._inner(i) for i in range(self.n_)]
        self.detectors_ = [[self._fresh() for _ in range(self.K_)] for _ in range(self.n_)]

    def _arms(self, obs, finite: bool = False) -> np.ndarray:
        return self._same_k(self._check_obs(obs, finite=finite))

    def _same_k(self, X: np.ndarray) -> np.ndarray:
        if X.shape[1] != self.K_:
            raise ValueError(f"obs has {X.shape[1]} arms (rows) but this agent started with {self.K_}; its detectors "
                             "watch arms by row index, so K must stay fixed (call reset() to change)")
        return X

    def act(self, obs):
        """The forced arm of an exploration round, else the inner agent's choice."""
        X = self._arms(obs, finite=True)
        draws = self._draw()
        out = np.empty(self.n_, np.int64)
        for i in range(self.n_):
            forced = self._forced(i, draws)
            out[i] = forced if forced >= 0 else self.inner_[i].act(X[i])
        return self._unwrap(out)

    def observe(self, obs, action, reward) -> None:
        """Feed the reward to the inner agent and to the chosen arm's detector; restart on an alarm."""
        X = self._arms(obs)
        a, y = self._feedback(X, action, reward)
        for i, (arm, r) in enumerate(zip(a.tolist(), y.tolist())):
            self.inner_[i].observe(X[i], arm, r)
            self.since_[i] += 1
            if self._alarm(self.detectors_[i][arm], r):
                self._restart(i, arm)
        self.t_ += 1

    def _restart(self, i: int, arm: int | None) -> None:
        """Restart instance i: forget arm `arm` (restart="local"), or everything (global, or arm None)."""
        self.restarts_[i] += 1
        self.since_[i] = 0
        if self.restart == "local" and arm is not None:
            self.inner_[i].restart_arm(arm)
            self.detectors_[i][arm] = self._fresh()
        else:
            self.inner_[i] = self._inner(i)
            self.detectors_[i] = [self._fresh() for _ in range(self.K_)]

    def _draw(self):
        return None

    def _round_robin(self, i: int, alpha: float) -> int:
        """Arm (t - tau) mod floor(K / alpha) when that is below K, else -1 (Cao et al. Alg. 1 line 4;
        Besson et al. Alg. 1), t - tau the rounds since instance i's last restart."""
        period = max(self.K_, math.floor(self.K_ / alpha)) if alpha > 0 else 0
        step = int(self.since_[i]) % period if period else self.K_
        return step if step < self.K_ else -1

    def _probs(self, X):
        check_finite(self._same_k(X))
        out = np.empty(X.shape[:2])
        for i in range(self.n_):
            out[i] = self._mix(np.asarray(self.inner_[i].action_probs(X[i])), i)
        return out

    def _mix(self, p: np.ndarray, i: int) -> np.ndarray:
        """The wrapper's action distribution given the inner agent's p: the forced arm, else p."""
        forced = self._forced(i, None)
        return p if forced < 0 else np.eye(self.K_)[forced]

    def _reseed(self, seqs) -> None:
        super()._reseed(seqs)
        for i, inner in enumerate(self.inner_ or ()):      # the inner agents' streams too (ties, samples)
            if inner.n_ is None:
                self.inner_[i] = self._make(_child(seqs[i], 3))
            else:
                inner._reseed([_child(seqs[i], 3)])

    def _reset(self) -> None:
        self.inner_ = None


def _theory_T(horizon: int, changes: int) -> float:
    return max(horizon / changes, math.e)


@register("CUSUM-UCB")
class CUSUMUCB(_Restarting):
    """CUSUM-UCB (Liu, Lee, Shroff 2018, Alg. 1 with the two-sided CUSUM of Alg. 2): with probability
    alpha a uniformly random arm, else the base agent's; each arm's rewards since its restart feed a
    CUSUM test (`cusum_update`) that fires when g+ or g- exceeds h, and then that arm is restarted
    (restart="local", the paper's rule) or the whole base agent (restart="global", any base).

    Defaults: h = log(T / Upsilon_T) and alpha = sqrt(Upsilon_T / T * log(T / Upsilon_T)) (§4, Cor. 1,
    the simplified form SMPyBandits uses) from `horizon` T and `changes` Upsilon_T (default 5);
    M = 100 samples to estimate u0 and eps = 0.05 (the drift correction; no theory value).

    Args:
        base: the registered agent restarted (arms are row indices; default UCB1).
        base_kwargs: its hyper-parameters.
        restart: "local" (forget the alarmed arm; needs a base with restart_arm) or "global".
        M: samples of an arm that estimate its mean before its test starts.
        eps: drift correction epsilon.
        h: threshold, or None for log(T / Upsilon_T).
        alpha: uniform exploration probability, or None for the theory value.
        horizon: T, read by h=None and alpha=None.
        changes: Upsilon_T, the number of breakpoints assumed, read by h=None and alpha=None.
    """

    params = {"M": Int(ge=1), "eps": Real(ge=0), "h": (Real(gt=0), None), "alpha": (Real(ge=0, le=1), None),
              "horizon": Int(ge=2), "changes": Int(ge=1)}

    def __init__(self, *, base: str = "UCB1", base_kwargs: dict | None = None, restart: str = "local", M: int = 100,
                 eps: float = 0.05, h: float | None = None, alpha: float | None = None, horizon: int = 10_000,
                 changes: int = 5, seed=None, dim: int | None = None):
        self.base, self.base_kwargs, self.restart, self.M, self.eps = base, base_kwargs, restart, M, eps
        self.h, self.alpha, self.horizon, self.changes = h, alpha, horizon, changes
        super().__init__(seed=seed, dim=dim)

    @classmethod
    def reads_horizon(cls, kwargs: dict) -> bool:
        return cls.setting(kwargs, "h") is None or cls.setting(kwargs, "alpha") is None

    def threshold(self) -> float:
        """h: given, or log(T / Upsilon_T)."""
        return math.log(_theory_T(self.horizon, self.changes)) if self.h is None else float(self.h)

    def exploration(self) -> float:
        """alpha: given, or sqrt(Upsilon_T / T log(T / Upsilon_T)), at most 1."""
        ratio = _theory_T(self.horizon, self.changes)
        return min(1.0, math.sqrt(math.log(ratio) / ratio)) if self.alpha is None else float(self.alpha)

    def _fresh(self):
        return [0, 0.0, 0.0, 0.0]

    def _alarm(self, state, y):
        return cusum_update(state, y, self.M, self.eps) > self.threshold()

    def _draw(self):
        return self.rng_.random((self.n_, 2))          # (explore?, which arm) for every instance, every round

    def _forced(self, i, draws):
        if draws is None or draws[i, 0] >= self.exploration():
            return -1
        return int(draws[i, 1] * self.K_)

    def _mix(self, p, i):
        alpha = self.exploration()
        return (1.0 - alpha) * p + alpha / self.K_


@register("M-UCB")
class MUCB(_Restarting):
    """M-UCB, monitored UCB (Cao, Wen, Kveton, Xie 2019, Alg. 1-2): round-robin forced exploration on K
    of every floor(K / gamma) rounds since the last restart, else the base agent; each arm's last w
    rewards feed the test |sum of the last w/2 - sum of the first w/2| > b (`mucb_statistic`), and an
    alarm restarts everything (the paper's global restart).

    Defaults: w = 800 (their experiments, §6) and b = sqrt(w/2 log(2 K T^2)) (Thm 1) from `horizon` T;
    gamma = 0.05, a practical value: Thm 1's gamma = sqrt(Upsilon_T K (2 b + 3 sqrt(w)) / (2 T))
    (gamma=None, from `changes` Upsilon_T) is 0.5 at T = 3,000, K = 3 (half the rounds forced), and
    ends at 2.3 times UCB1's regret on the tests' abrupt problem, where gamma = 0.05 ends at 0.56 times.

    Args:
        base: the registered agent restarted (default UCB1).
        base_kwargs: its hyper-parameters.
        w: window of the test (even).
        b: threshold, or None for the theory value.
        gamma: forced-exploration rate, or None for the theory value.
        horizon: T, read by b=None and gamma=None.
        changes: Upsilon_T, read by gamma=None.
    """

    params = {"w": Int(ge=2), "b": (Real(gt=0), None), "gamma": (Real(ge=0, le=1), None), "horizon": Int(ge=2),
              "changes": Int(ge=1), "restart": Options("global")}

    def __init__(self, *, base: str = "UCB1", base_kwargs: dict | None = None, w: int = 800, b: float | None = None,
                 gamma: float | None = 0.05, horizon: int = 10_000, changes: int = 5, seed=None,
                 dim: int | None = None):
        self.base, self.base_kwargs, self.w, self.b, self.gamma = base, base_kwargs, w, b, gamma
        self.horizon, self.changes, self.restart = horizon, changes, "global"
        super().__init__(seed=seed, dim=dim)

    def _check_params(self):
        if self.w % 2:
            raise ValueError(f"w must be even (the test compares two halves of the window), got {self.w}")
        super()._check_params()

    @classmethod
    def reads_horizon(cls, kwargs: dict) -> bool:
        return cls.setting(kwargs, "b") is None or cls.setting(kwargs, "gamma") is None

    def threshold(self, K: int) -> float:
        """b: given, or sqrt(w/2 log(2 K T^2))."""
        return math.sqrt(self.w / 2 * math.log(2 * K * self.horizon ** 2)) if self.b is None else float(self.b)

    def exploration(self, K: int) -> float:
        """gamma: given, or sqrt(Upsilon_T K (2 b + 3 sqrt(w)) / (2 T)), at most 1."""
        if self.gamma is not None:
            return float(self.gamma)
        b = self.threshold(K)
        return min(1.0, math.sqrt(self.changes * K * (2 * b + 3 * math.sqrt(self.w)) / (2 * self.horizon)))

    def _fresh(self):
        return []

    def _alarm(self, last, y):
        last.append(y)
        if len(last) > self.w:
            del last[0]
        return mucb_statistic(last, self.w) > self.threshold(self.K_)

    def _forced(self, i, draws):
        return self._round_robin(i, self.exploration(self.K_))


@register("GLR-klUCB")
class GLRklUCB(_Restarting):
    """GLR-klUCB (Besson, Kaufmann, Maillard, Seznec 2022, Alg. 1): kl-UCB (or any base) with round-robin
    forced exploration at rate alpha, and each arm's rewards since its restart tested by the Bernoulli
    GLR (`glr_statistic`) against beta(n, delta) = log(3 n^{3/2} / delta) (their practical threshold, §5).

    restart="global" (default) restarts the whole base agent, which works for any base and is the
    variant with the paper's simpler analysis; "local" forgets only the alarmed arm (needs a K-armed base).
    Defaults: delta = 1 / sqrt(T) and alpha = sqrt(Upsilon_T K log T / T) (Cor. of Thm 6, capped at 1),
    from `horizon` T and `changes` Upsilon_T (default 5).

    Args:
        base: the registered agent restarted (default kl-UCB).
        base_kwargs: its hyper-parameters.
        restart: "global" or "local".
        delta: confidence of the test, or None for 1 / sqrt(T).
        alpha: forced-exploration rate, or None for the theory value.
        horizon: T, read by delta=None and alpha=None.
        changes: Upsilon_T, read by alpha=None.
    """

    params = {"delta": (Real(gt=0, lt=1), None), "alpha": (Real(ge=0, le=1), None), "horizon": Int(ge=2),
              "changes": Int(ge=1)}

    def __init__(self, *, base: str = "kl-UCB", base_kwargs: dict | None = None, restart: str = "global",
                 delta: float | None = None, alpha: float | None = None, horizon: int = 10_000, changes: int = 5,
                 seed=None, dim: int | None = None):
        self.base, self.base_kwargs, self.restart, self.delta, self.alpha = base, base_kwargs, restart, delta, alpha
        self.horizon, self.changes = horizon, changes
        super().__init__(seed=seed, dim=dim)

    @classmethod
    def reads_horizon(cls, kwargs: dict) -> bool:
        return cls.setting(kwargs, "delta") is None or cls.setting(kwargs, "alpha") is None

    def threshold(self, n: int) -> float:
        """beta(n, delta) = log(3 n^{3/2} / delta)."""
        delta = 1.0 / math.sqrt(self.horizon) if self.delta is None else self.delta
        return math.log(3.0 * n ** 1.5 / delta)

    def exploration(self, K: int) -> float:
        """alpha: given, or sqrt(Upsilon_T K log T / T), at most 1."""
        if self.alpha is not None:
            return float(self.alpha)
        return min(1.0, math.sqrt(self.changes * K * math.log(self.horizon) / self.horizon))

    def _fresh(self):
        return []

    def _alarm(self, history, y):
        history.append(y)
        return glr_statistic(history) >= self.threshold(len(history))

    def _forced(self, i, draws):
        return self._round_robin(i, self.exploration(self.K_))


@register("Oracle-Restart")
class OracleRestart(_Restarting):
    """The base agent restarted at the true change points: `change_points` are the 1-based rounds that
    start a new segment, as the non-stationary envs list them (`env.unwrapped.change_points`,
    gym_ctxbandits.envs.nonstationary): the instance's base agent is fresh from round c on, i.e. after
    c - 1 rewards. The baseline every change detector is measured against; it knows what they detect.

    Args:
        base: the registered agent restarted (default UCB1).
        base_kwargs: its hyper-parameters.
        change_points: the 1-based first rounds of the new segments, increasing ints >= 2.
    """

    params = {"change_points": ChangePoints()}

    def __init__(self, *, base: str = "UCB1", base_kwargs: dict | None = None, change_points: tuple = (),
                 seed=None, dim: int | None = None):
        self.base, self.base_kwargs, self.change_points, self.restart = base, base_kwargs, change_points, "global"
        super().__init__(seed=seed, dim=dim)

    def _fresh(self):
        return None

    def _alarm(self, state, y):
        return False

    def _forced(self, i, draws):
        return -1

    def observe(self, obs, action, reward) -> None:
        super().observe(obs, action, reward)
        if self.t_ + 1 in self.change_points:          # the next round, 1-based, starts a segment
            for i in range(self.n_):
                self._restart(i, None)
