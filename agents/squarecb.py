"""Inverse gap weighting and greedy play on a regression oracle: SquareCB, FALCON, Oracle-Greedy, Oracle-epsilon-greedy.

Each agent is an `agents.oracle.OracleAgent`: the oracle (ridge by default, or "sgd", "mlp", a
scikit-learn or river regressor) predicts the reward f(x_a) of every arm, the agent turns the
predictions into a distribution `_policy(X)` (exact: `action_probs` is the policy) and draws from it.

Inverse gap weighting (IGW; Abe & Long 1999, Foster & Rakhlin 2020), `igw(f, gamma)`: with
b = argmax_a f_a,

    p_a = 1 / (K + gamma (f_b - f_a))   for a != b,      p_b = 1 - sum_{a != b} p_a,

so an arm is played less the further it is estimated below the best, and every arm at least
1 / (K + gamma (f_b - f_a)). Ties among the maximisers split p_b evenly (the average of the
distributions over the choice of b): the zoo's rule that ties are broken uniformly at random.
SquareCB and FALCON differ in gamma and in what the oracle sees.
"""

from __future__ import annotations

import math

import numpy as np

from agents.base import argmax_probs, register
from agents.oracle import OracleAgent, oracle_seqs
from agents.params import Int, LogUniform, Options, Real

__all__ = ["igw", "igw1", "greedy1", "SquareCB", "FALCON", "OracleGreedy", "OracleEpsilonGreedy"]

EPOCH_KEY = 0x0FA       # FALCON: epoch m's fresh oracle starts on the instances' children (ORACLE_KEY, EPOCH_KEY, m)


def igw(f: np.ndarray, gamma) -> np.ndarray:
    """Inverse gap weighting of the predicted rewards f (N, K) with greediness gamma (a number or (N,)):
    p_a = 1 / (K + gamma (max f - f_a)) off the maximisers, the rest split evenly among them, (N, K).
    The rest is 1 minus the others' sum added left to right (a cumulative sum: the order `igw1` adds in)."""
    K = f.shape[1]
    gap = f.max(axis=1, keepdims=True) - f
    top = gap == 0
    p = 1.0 / (K + np.reshape(gamma, (-1, 1)) * gap)
    p[top] = 0.0
    rest = 1.0 - np.cumsum(p, axis=1)[:, -1:]
    return np.where(top, rest / top.sum(axis=1, keepdims=True), p)


IGW1_FLOATS = 16        # igw1 on Python floats up to this many arms (numpy's calls cost more), on arrays beyond


def igw1(f: np.ndarray, gamma: float):
    """`igw(f[None], gamma)[0]` of one instance's predictions f (K,): the same operations in the same order
    (IEEE 754 rounds Python's float arithmetic as numpy's), as a list of K floats for small K, else an array."""
    K = len(f)
    if K > IGW1_FLOATS:
        return igw(f[None], gamma)[0]
    f = f.tolist()
    top = max(f)
    p = [0.0 if v == top else 1.0 / (K + gamma * (top - v)) for v in f]
    total = p[0]
    for q in p[1:]:
        total += q
    share = (1.0 - total) / f.count(top)
    return [share if v == top else q for v, q in zip(f, p)]


def greedy1(f: np.ndarray):
    """`argmax_probs(f[None])[0]` of one instance's predictions f (K,): 1 / (number of maximisers) on each of them,
    a list of floats for small K (the same division), else the array."""
    if len(f) > IGW1_FLOATS:
        return argmax_probs(f)
    f = f.tolist()
    top = max(f)
    share = 1 / f.count(top)
    return [share if v == top else 0.0 for v in f]


@register("SquareCB")
class SquareCB(OracleAgent):
    """SquareCB (Foster & Rakhlin 2020, "Beyond UCB: Optimal and Efficient Contextual Bandits with
    Regression Oracles", Algorithm 1): inverse gap weighting on an online regression oracle.

    Each round: predict f(x_a) for every arm, play a ~ IGW(f, gamma_t) (module docstring; the
    paper's mu = K), and give the oracle (x_a, r), unweighted: the paper's square-loss oracle sees
    the chosen arm's reward with no importance weight, and VW's `--squarecb` likewise sets the
    label's probability to 1 before its `mtr` regression (cb_explore_adf_squarecb.cc).

    gamma_t, `schedule`:
      - "vw" (default): VW's gamma_t = gamma_scale * t^gamma_exponent, defaults 10 and 0.5, where t
        counts the examples learned before this round (0 in the first round: gamma = 0, uniform play);
        the anytime form the Bake-off line of work runs.
      - "theory": the paper's fixed gamma = sqrt(K T / (Reg_Sq(T) + log(2 / delta))) (Theorem 1), which
        needs the `horizon` T; Reg_Sq(T), the oracle's square-loss regret, is taken as d log(1 + T / d),
        the order of online ridge regression's (Vovk-Azoury-Warmuth) for d features.
    Ties of f: the greedy mass is split evenly among the maximisers (VW gives it to the first one).

    Args:
        gamma_scale, gamma_exponent: VW's --gamma_scale and --gamma_exponent ("vw" schedule).
        schedule: "vw" or "theory".
        horizon: T, for the "theory" schedule.
        delta: the confidence of the "theory" schedule.
        oracle, lam, lr: the regression oracle (agents.oracle.OracleAgent).
    """

    params = {"gamma_scale": Real(gt=0), "gamma_exponent": Real(ge=0), "schedule": Options("vw", "theory"),
              "horizon": (Int(ge=1), None), "delta": Real(gt=0, lt=1)}
    search_space = {"gamma_scale": LogUniform(1, 1000)}        # and lam
    iwr = False

    def __init__(self, *, gamma_scale: float = 10.0, gamma_exponent: float = 0.5, schedule: str = "vw",
                 horizon: int | None = None, delta: float = 0.05, oracle="ridge", lam: float = 1.0,
                 lr: float | None = None, seed=None, dim: int | None = None):
        super().__init__(gamma_scale=gamma_scale, gamma_exponent=gamma_exponent, schedule=schedule, horizon=horizon,
                         delta=delta, oracle=oracle, lam=lam, lr=lr, seed=seed, dim=dim)

    def _check_params(self) -> None:
        super()._check_params()
        if self.schedule == "theory" and self.horizon is None:
            raise ValueError('SquareCB: schedule="theory" sets gamma from the horizon T; give horizon=T')

    @classmethod
    def reads_horizon(cls, kwargs: dict) -> bool:
        return cls.setting(kwargs, "schedule") == "theory"

    def gamma(self, K: int) -> float:
        """The greediness gamma of the next round for K arms."""
        if self.schedule == "theory":
            T, d = self.horizon, self.d_
            return math.sqrt(K * T / (d * math.log1p(T / d) + math.log(2 / self.delta)))
        return self.gamma_scale * float(self.t_) ** self.gamma_exponent

    def _policy(self, X):
        return igw(self._predict(X), self.gamma(X.shape[1]))

    def _policy1(self, X):
        return igw1(self._predict1(X), self.gamma(len(X)))


@register("FALCON")
class FALCON(OracleAgent):
    """FALCON (Simchi-Levi & Xu 2020, "Bypassing the Monster: A Faster and Simpler Optimal Algorithm
    for Contextual Bandits under Realizability", Algorithm 1): inverse gap weighting with an offline
    least-squares oracle called once per epoch.

    Epochs m = 1, 2, ... cover the rounds tau_{m-1} < t <= tau_m, tau_0 = 0, tau_m = 2^m (the
    schedule for an unknown horizon). Epoch m plays IGW on f_m, the least-squares fit on the data of
    epoch m - 1 alone, unweighted (f_1 = the untrained oracle: 0 for ridge), with

        gamma_m = c sqrt(K tau_{m-1} / log(|F| tau_{m-1} / delta)),   gamma_1 = 1,

    the paper's c = 1/30. A fresh oracle learns each epoch's data (ridge: the exact regularised
    least-squares fit), and becomes the predictor at the epoch's end. For the linear class log|F|
    is taken as d log(tau_{m-1}) (a 1 / tau-cover of a ball of R^d), so the log term is
    (d + 1) log(tau_{m-1}) + log(1 / delta).

    The default c = 10 is not the paper's: with c = 1/30, gamma_m stays below 1 for any practical T
    (iris, K = 3, d = 12: gamma = 0.14 at tau = 512, 0.5 at tau = 2^17), the policy stays nearly
    uniform and plays like Random (0.98x Random's regret on iris at T = 1,000). Of c = 1, 3, 10, 30
    (on iris, T = 3,000, and UCI Shuttle, T = 5,000) regret falls with c, and c = 10 is within a
    quarter of c = 30's while it keeps more exploration (docs/oracle_agents.md has the numbers);
    c = 1/30 reproduces the theory.

    Args:
        c: the constant of gamma_m (the paper's 1/30).
        delta: the confidence in gamma_m's log term.
        oracle, lam, lr: the regression oracle (agents.oracle.OracleAgent).
    """

    params = {"c": Real(gt=0), "delta": Real(gt=0, lt=1)}
    search_space = {"c": LogUniform(1 / 30, 100)}               # and lam
    iwr = False

    def __init__(self, *, c: float = 10.0, delta: float = 0.05, oracle="ridge", lam: float = 1.0,
                 lr: float | None = None, seed=None, dim: int | None = None):
        super().__init__(c=c, delta=delta, oracle=oracle, lam=lam, lr=lr, seed=seed, dim=dim)

    @staticmethod
    def tau(m: int) -> int:
        """The last round of epoch m (tau_0 = 0)."""
        return 0 if m == 0 else 2 ** m

    def _init_state(self, X):
        self.epoch_ = 1
        self.next_ = self._fresh(2, X.shape[1])

    def _fresh(self, m: int, num_arms: int):
        """A started, untrained oracle that learns epoch m - 1's data to predict in epoch m (told the number of
        arms where it takes it, `RidgeOracle.layout`: it learns before it predicts)."""
        oracle = self._new_oracle()
        oracle.start(self.n_, self.d_, oracle_seqs(self.seqs_, EPOCH_KEY, m))
        if hasattr(oracle, "layout"):
            oracle.layout(num_arms)
        return oracle

    def gamma(self, K: int) -> float:
        """gamma_m of the current epoch m for K arms."""
        if self.epoch_ == 1:
            return 1.0
        tau = self.tau(self.epoch_ - 1)
        return self.c * math.sqrt(K * tau / ((self.d_ + 1) * math.log(tau) + math.log(1 / self.delta)))

    def _policy(self, X):
        return igw(self._predict(X), self.gamma(X.shape[1]))

    def _policy1(self, X):
        return igw1(self._predict1(X), self.gamma(len(X)))

    def _learn(self, X, a, y, p):
        self.next_.update(X[np.arange(self.n_), a].astype(float, copy=False), y, np.ones(self.n_))
        if self.t_ + 1 == self.tau(self.epoch_):          # the epoch's last round: its fit predicts next
            self.epoch_ += 1
            self.oracle_, self.next_ = self.next_, self._fresh(self.epoch_ + 1, X.shape[1])


@register("Oracle-Greedy")
class OracleGreedy(OracleAgent):
    """Greedy on a regression oracle: play argmax_a f(x_a), ties split evenly; the oracle learns the
    chosen arm's reward unweighted. The no-exploration baseline of the oracle family (the Bake-off's
    "greedy", Bietti et al. 2021, section 3), on any oracle; on the ridge oracle it is the linear
    `Greedy`'s policy.

    Args:
        oracle, lam, lr: the regression oracle (agents.oracle.OracleAgent).
    """

    iwr = False

    def _policy(self, X):
        return argmax_probs(self._predict(X))

    def _policy1(self, X):
        return greedy1(self._predict1(X))


@register("Oracle-epsilon-greedy")
class OracleEpsilonGreedy(OracleAgent):
    """epsilon-greedy on a regression oracle, as the Contextual Bandit Bake-off runs it (Bietti,
    Agarwal, Langford, JMLR 2021, section 3.1): the greedy arm of f (ties split evenly) with
    probability 1 - epsilon, a uniform arm with probability epsilon, so
    p_a = (1 - epsilon) [a greedy] + epsilon / K; the oracle learns the chosen arm's reward by
    importance-weighted regression (weight 1 / p_a, the Bake-off's IWR). epsilon = 0.02, the
    Bake-off's default (VW's --epsilon 0.02 with --cb_type mtr).

    Args:
        epsilon: the share of uniform play, in [0, 1].
        oracle, lam, lr: the regression oracle (agents.oracle.OracleAgent).
    """

    params = {"epsilon": Real(ge=0, le=1)}
    search_space = {"epsilon": LogUniform(0.005, 0.2)}          # and lam
    iwr = True

    def __init__(self, *, epsilon: float = 0.02, oracle="ridge", lam: float = 1.0, lr: float | None = None, seed=None,
                 dim: int | None = None):
        super().__init__(epsilon=epsilon, oracle=oracle, lam=lam, lr=lr, seed=seed, dim=dim)

    def _policy(self, X):
        return (1 - self.epsilon) * argmax_probs(self._predict(X)) + self.epsilon / X.shape[1]

    def _policy1(self, X):
        greedy, keep, spread = greedy1(self._predict1(X)), 1 - self.epsilon, self.epsilon / len(X)
        if type(greedy) is list:
            return [keep * q + spread for q in greedy]
        return keep * greedy + spread
