"""Agents for delayed and batched feedback: OTFLinUCB, OTFLinTS (Vernade et al. 2020) and BaSE (Gao et al. 2019).

How a late reward reaches an agent: `observe(obs_s, a_s, r_s)` with the features of the round s
the reward belongs to, possibly several rounds after `act`, possibly never. The agents here are
built for that:

- OTFLinUCB and OTFLinTS ("on the fly") put the chosen features x_s into the design matrix when
  they act, V_t = lam I + sum_{s<t} x_s x_s^T over every action taken, and add x_s r_s to
  b_t = sum x_s r_s only when the reward arrives: a pending reward counts as 0 until then, so
  `observe` never touches V and x_s is never counted twice. The estimate theta_hat = V_t^{-1} b_t is
  biased towards 0 by the rewards still missing; the window m bounds that bias (Vernade et al.'s
  censoring: a reward older than m rounds never arrives), and the agents widen their confidence
  set by it. Every `observe` must be of an action the agent chose (a reward of an action it
  never played would enter b without its x x^T in V). A reward of 0 changes nothing, which makes
  "no reward arrived for this instance" a no-op row of a batched `observe`.
- BaSE plays K arms by index on a fixed batch grid and eliminates arms only at the grid's points,
  with the rewards that have arrived by then.

Every agent serves N instances in one object (obs (N, K, d)), instance i acting exactly as a
single agent seeded seed[i].
"""

from __future__ import annotations

import math

import numpy as np

from agents.base import MAX_REWARD, BaseAgent, argmax_probs, check_finite, register
from agents.linalg import potter_update_, rls_update_
from agents.linear import LinearAgent, _ridge_init
from agents.params import Int, IntLogUniform, LogUniform, Options, Real

__all__ = ["BaSE", "OTFLinTS", "OTFLinUCB", "base_grid"]


class _OnTheFly(LinearAgent):
    """The OTF bookkeeping on LinearAgent: V at act time, b on arrival, a ring buffer of the last m actions.

    Subclasses provide `_init_state(n, d)`, `_act_update(x)` (x (N, d) the chosen features, the
    design matrix step) and `_update(x, y)` (a reward y (N,) of features x (N, d) arrived: b only),
    and `_scores(X)` as any LinearAgent. `observe`, `observe_rows` and `observe_arrivals` are
    LinearAgent's: a reward that arrives touches b alone (`row_state`), never the act-time state.
    """

    def act(self, obs: np.ndarray) -> int | np.ndarray:
        """Choose an arm of obs (K, d) (or one per instance of (N, K, d)) and add its features to V."""
        X = self._check_obs(obs)
        a = self._choose(X)
        x = X[self._rows, a].astype(float, copy=False)
        top = float(np.abs(x).max())
        if not math.isfinite(top) or top > MAX_REWARD:
            raise ValueError(f"obs: the chosen arm's features reach {top:.3g}; they must be finite and below "
                             f"{MAX_REWARD:.0e} in magnitude for the agent's float64 statistics (rescale the features)")
        self._act_update(x)
        if self.m > 0:
            self.window_[:, self.rounds_ % self.m] = x
        self.rounds_ += 1
        return self._unwrap(a)

    def _start(self, X):
        self.rounds_ = 0                                       # actions taken (t_ counts rewards observed)
        self.window_ = np.zeros((self.n_, self.m, self.d_))   # the last m chosen features, a ring buffer
        super()._start(X)


@register("OTFLinUCB")
class OTFLinUCB(_OnTheFly):
    """OTFLinUCB of Vernade, Carpentier, Lattimore, Zappella, Ermis, Brueckner (2020), "Linear bandits
    with stochastic delayed feedback" (ICML).

    V_t = lam I + sum_{s<t} x_s x_s^T over all actions taken (updated when acting), b_t the sum of
    x_s r_s over the rewards arrived so far, theta_hat^W_t = V_t^{-1} b_t, and

        A_t = argmax_a <a, theta_hat^W_t> + alpha (2 f_t ||a||_{V_t^{-1}} + sum_{s=t-m}^{t-1} |a^T V_t^{-1} A_s|).

    theta_hat^W estimates tau_m theta (tau_m = P(delay <= m)), which ranks the arms as theta does;
    2 f_t covers the reward noise and the censoring noise (two self-normalised martingales: the
    paper's Theorem 1 holds with probability 1 - 2 delta); the sum over the last m actions covers the
    rewards still in flight, which can only raise theta_hat. f_t is the OFUL radius with the exact
    log-determinant, as in `agents.linear.LinUCB`: f_t = sigma sqrt(2 log(1/delta_t) + log(det V_t / lam^d)),
    with the regularisation term sqrt(lam) S added once; for ||x|| <= 1 it is at most the paper's
    f_{t,delta} = sqrt(2 log(1/delta) + d log((d lam + t) / (d lam))).

    Which form: the paper's text was not available to us here. Its Theorem 1 as quoted from the
    preprint bounds ||theta_hat^W - tau_m theta||_{V_t} by 2 f_{t,delta} + sum_{s=t-m}^{t-1} ||A_s||_{V_t^{-1}},
    whose index is (2 f + sum_s ||A_s||_{V^{-1}}) ||a||_{V^{-1}}; we use the per-arm sum
    |a^T V^{-1} A_s|, which the same proof gives before Cauchy-Schwarz and which is never wider (by
    Cauchy-Schwarz |a^T V^{-1} A_s| <= ||a||_{V^{-1}} ||A_s||_{V^{-1}}). The authors' released code
    uses another, much narrower width (bonus="code" below). Cost per round: O(K d m) for the sum, O(d^2) for V.

    Where it coincides with LinUCB: with m = 0 and every reward arriving before the next act, the
    statistics are LinUCB's and the index is LinUCB's with sigma doubled: OTFLinUCB(m=0, sigma=s)
    chooses as LinUCB(sigma=2 s) (the scores agree to rounding: here V and b take two updates, LinUCB one).
    With m > 0 it is wider than that LinUCB by the sum over the window, even without delay: the
    agent cannot tell a reward that arrived from a 0 that may still turn into a 1.

    Defaults: the paper gives no constants for its experiments beyond the windows (m in {100, 500}):
    m = 100, and LinUCB's lam = 1, sigma = 1, S = 1, delta_t = t^{-3}. Set m to the feedback loop's
    censoring window yourself (`--window` does not set it: give both, `--agents "OTFLinUCB(m=500)"
    --window 500`); rewards older than m that still arrive are added all the same (the agent cannot
    tell a reward's round from its features), which only removes bias.

    bonus="code" is the index of the authors' released code (`PolicyDeLinUCB`, as copied into
    MarcoGigli/bootstrap-conversions, linear_delayed/de_lin_ucb.py; docs/delayed_agents.md compares
    the two line by line), which their experiments ran:

        A_t = argmax_a <a, theta_hat^W_t> + alpha (sqrt(beta_t + lam) + sum_{s=t-m}^{t-1} ||A_s||^2_{V_s^{-1}}) ||a||^2_{V_t^{-1}},

    beta_t = 2 log(1/delta) + d log(1 + (t - 1)/(lam d)) with t - 1 the actions taken: one radius, not
    two; the arm's squared norm ||a||^2_{V^{-1}} = a^T V^{-1} a where the theorem has its norm; and the
    window's squared norms taken with V_s, the design matrix when A_s was chosen. sigma and S play no
    part in it (the code has neither). With bonus="code" the bonus shrinks like 1/t rather than
    1/sqrt(t): far less exploration than the theorem's, and no per-arm sum over the window.

    Args:
        m: window: rewards more than m rounds old never arrive (0: every reward arrives before the next act).
        lam: ridge regulariser lambda.
        sigma: sub-Gaussian scale of the noise in f_t.
        S: bound on ||theta||.
        delta: confidence level, or None for delta_t = t^{-3}.
        alpha: width multiplier (1 = theory).
        bonus: "theorem" (the index above, from Theorem 1) or "code" (the authors' released code's).
    """

    params = {"m": Int(ge=0), "lam": Real(gt=0), "sigma": Real(gt=0), "S": Real(gt=0),
              "delta": (Real(gt=0, lt=1), None), "alpha": Real(ge=0), "bonus": Options("theorem", "code")}
    search_space = {"alpha": LogUniform(0.01, 10), "lam": LogUniform(0.01, 100), "m": IntLogUniform(10, 1000)}
    index_policy = True
    row_state = ("W_",)

    def __init__(self, *, m: int = 100, lam: float = 1.0, sigma: float = 1.0, S: float = 1.0,
                 delta: float | None = None, alpha: float = 1.0, bonus: str = "theorem", seed=None,
                 dim: int | None = None):
        self.m, self.lam, self.sigma, self.S, self.delta, self.alpha = m, lam, sigma, S, delta, alpha
        self.bonus = bonus
        super().__init__(seed=seed, dim=dim)

    def _init_state(self, n, d):
        _ridge_init(self, n, d, self.lam)     # W_ = [V^{-1} | theta_hat]
        self.logdet_ = np.zeros((n, 1))       # log(det V_t / lam^d)
        if self.bonus == "code":
            self.bias_ = np.zeros((n, self.m))   # ||A_s||^2_{V_s^{-1}} of the last m actions, a ring buffer
        self._set_width()

    def _act_update(self, x):
        if self.bonus == "code" and self.m > 0:    # V_s^{-1}: before x enters V
            self.bias_[:, self.rounds_ % self.m] = np.einsum("nd,nd->n", (self.W_[:, :, :-1] @ x[:, :, None])[:, :, 0], x)
        growth = rls_update_(self.W_, x)      # V += x x^T with target 0: theta_hat = V^{-1} b for the new V
        self.logdet_ += np.log(growth[:, 0])
        self._set_width(self.rounds_ + 2)

    def _update(self, x, y):
        self.W_[:, :, -1] += (self.W_[:, :, :-1] @ x[:, :, None])[:, :, 0] * y[:, None]   # + V^{-1} x y

    def _set_width(self, t: int = 1) -> None:
        """alpha (2 f_t + sqrt(lam) S) for the coming round t, (N, 1); with bonus="code"
        alpha (sqrt(beta_t + lam) + the window's sum of ||A_s||^2_{V_s^{-1}})."""
        log_inv_delta = 3.0 * math.log(t) if self.delta is None else -math.log(self.delta)
        a = self.alpha
        if self.bonus == "code":
            beta = 2.0 * log_inv_delta + self.d_ * math.log1p((t - 1) / (self.lam * self.d_))
            self.width_ = a * (math.sqrt(beta + self.lam) + self.bias_.sum(axis=1, keepdims=True))
            return
        self.width_ = a * (2.0 * self.sigma) * np.sqrt(self.logdet_ + 2.0 * log_inv_delta) + a * math.sqrt(self.lam) * self.S

    def _scores(self, X):
        XW = X @ self.W_                                               # [a^T V^{-1} | <a, theta_hat>]
        if self.bonus == "code":                                       # the squared norm, no window sum
            return XW[:, :, -1] + self.width_ * np.einsum("nkd,nkd->nk", XW[:, :, :-1], X)
        norm = np.sqrt(np.einsum("nkd,nkd->nk", XW[:, :, :-1], X))     # ||a||_{V^{-1}}
        scores = XW[:, :, -1] + self.width_ * norm
        if self.m > 0:                                                 # sum_s |a^T V^{-1} A_s| over the window
            scores += self.alpha * np.abs(XW[:, :, :-1] @ self.window_.swapaxes(1, 2)).sum(axis=2)
        return scores


@register("OTFLinTS")
class OTFLinTS(_OnTheFly):
    """OTFLinTS, the Thompson-sampling variant of OTFLinUCB (Vernade et al. 2020).

    The OTF statistics of OTFLinUCB (V at act time, b on arrival) with LinTS's sampling for the noise
    and OTFLinUCB's term for the rewards in flight: each round draws theta~ = theta_hat^W + v sigma R eps,
    eps ~ N(0, I_d), R R^T = V_t^{-1} (Potter's square-root update, as `agents.linear.LinTS`), and plays

        A_t = argmax_a <a, theta~> + sum_{s=t-m}^{t-1} |a^T V_t^{-1} A_s|,

    the second term being Theorem 1's bound on how much the rewards still missing can lower <a, theta_hat^W>.
    We could not consult the paper's exact OTFLinTS here; this is the form we implement and why: with
    m = 0 and no delay it is exactly LinTS (same statistics, same draws: OTFLinTS(m=0) chooses as LinTS
    with the same seed, to rounding), and the per-arm bias term is what makes OTFLinUCB work. Two
    alternatives we measured are worse: scaling the posterior by (sigma + sum_s ||A_s||_{V^{-1}})
    (one scalar for every direction) stayed at 0.74 to 0.97 of Random's regret where this form reached
    0.16 to 0.61 (d = 5, 10 fresh arms, Bernoulli clicks with geometric delays of mean 30 and 100 cut
    at m = 100, T = 1,000, 3 seeds); the authors' released code rescales V by (sigma_0 + sum of
    ||A_s||^2_{V^{-1}}). Cost per round: O(K d m + (K + m) d^2).

    bonus="code" is the authors' released code's draw (`PolicyDeLinTS`, MarcoGigli/bootstrap-conversions,
    linear_delayed/de_lin_ts.py), which their experiments ran: no in-flight term, and the posterior
    covariance ((sigma_0 + S_t) V_t)^{-1} with sigma_0 = sigma, S_t the window's sum of the last m
    actions' x^T ((sigma_0 + S) V)^{-1} x, each taken just after x entered V with the scale of its
    round. The code scales theta_hat by 1/(sigma_0 + S_t) as well, which changes no argmax, so this
    draws theta~ = theta_hat^W + v sqrt(sigma + S_t) R eps and plays argmax_a <a, theta~>. The code's
    prior V_0 = sigma_0^2 I is lam = sigma^2 here (set it; lam stays a parameter of its own).

    Args:
        m: window: rewards more than m rounds old never arrive (0: no widening).
        lam: ridge regulariser lambda = sigma^2 / prior variance.
        sigma: noise standard deviation (with bonus="code", the code's sigma_0).
        v: posterior scale multiplier.
        bonus: "theorem" (the in-flight term above) or "code" (the authors' released code's draw).
    """

    params = {"m": Int(ge=0), "lam": Real(gt=0), "sigma": Real(gt=0), "v": Real(ge=0),
              "bonus": Options("theorem", "code")}
    row_state = ("R_", "theta_")
    search_space = {"v": LogUniform(0.01, 10), "lam": LogUniform(0.01, 100), "m": IntLogUniform(10, 1000)}

    def __init__(self, *, m: int = 100, lam: float = 1.0, sigma: float = 1.0, v: float = 1.0,
                 bonus: str = "theorem", seed=None, dim: int | None = None):
        self.m, self.lam, self.sigma, self.v, self.bonus = m, lam, sigma, v, bonus
        super().__init__(seed=seed, dim=dim)

    def _init_state(self, n, d):
        self.R_ = np.tile(np.eye(d) / math.sqrt(self.lam), (n, 1, 1))   # R R^T = V^{-1}
        self.theta_ = np.zeros((n, d))                                   # V^{-1} b
        if self.bonus == "code":
            self.bias_ = np.zeros((n, self.m))                # x^T ((sigma + S) V)^{-1} x of the last m actions
            self.scale_ = np.full((n, 1), float(self.sigma))  # sigma + S_t, the draw's variance factor

    def _act_update(self, x):
        k = potter_update_(self.R_, x)                                   # k = V_new^{-1} x
        self.theta_ -= k * (x * self.theta_).sum(axis=1)[:, None]        # V_new^{-1} b, b unchanged
        if self.bonus == "code":
            self.scale_ = self.sigma + self.bias_.sum(axis=1, keepdims=True)
            if self.m > 0:
                self.bias_[:, self.rounds_ % self.m] = (x * k).sum(axis=1) / self.scale_[:, 0]

    def _update(self, x, y):
        self.theta_ += (self.R_ @ (x[:, None, :] @ self.R_).swapaxes(1, 2))[:, :, 0] * y[:, None]   # + V^{-1} x y

    def _in_flight(self, X: np.ndarray) -> np.ndarray:
        """sum over the window of |a^T V_t^{-1} A_s| = |(R^T a)^T (R^T A_s)| for every arm a of X, (N, K)."""
        return np.abs((X @ self.R_) @ (self.window_ @ self.R_).swapaxes(1, 2)).sum(axis=2)

    def _scores(self, X):
        eps = self.rng_.standard_normal((self.n_, self.d_, 1))
        if self.bonus == "code":
            theta = self.theta_ + self.v * np.sqrt(self.scale_) * (self.R_ @ eps)[:, :, 0]
            return (X @ theta[:, :, None])[:, :, 0]
        theta = self.theta_ + self.v * self.sigma * (self.R_ @ eps)[:, :, 0]
        scores = (X @ theta[:, :, None])[:, :, 0]
        return scores + self._in_flight(X) if self.m > 0 else scores


def base_grid(horizon: int, M: int, grid: str = "minimax") -> np.ndarray:
    """The M batch ends t_1 < ... < t_M = T of Gao et al. (2019), section 3 ((M,) ints):

    - "minimax":    t_m = floor(a^(2 - 2^(1-m))), a = T^(1 / (2 - 2^(1-M))), i.e. t_1 = a, t_m = a sqrt(t_{m-1})
                    before the floor: the grid of their minimax bound (T^(1/(2 - 2^(1-M))) regret);
    - "geometric":  t_m = floor(b^m), b = T^(1/M): the grid of their problem-dependent bound;
    - "arithmetic": t_m = floor(m T / M): equal batches, the naive baseline.
    t_M is T in each. A ValueError when the grid has an empty batch (M too large for T).
    """
    m = np.arange(1, M + 1)
    if grid == "minimax":
        a = horizon ** (1.0 / (2.0 - 2.0 ** (1 - M)))
        ends = np.floor(a ** (2.0 - 2.0 ** (1.0 - m)))
    elif grid == "geometric":
        ends = np.floor(horizon ** (m / M))
    elif grid == "arithmetic":
        ends = np.floor(m * horizon / M)
    else:
        raise ValueError(f"grid must be 'minimax', 'geometric' or 'arithmetic', got {grid!r}")
    ends = ends.astype(np.int64)
    ends[-1] = horizon
    if ends[0] < 1 or (np.diff(ends) < 1).any():
        raise ValueError(f"the {grid} grid of M={M} batches over T={horizon} rounds, {ends.tolist()}, has an empty "
                         "batch: lower M or raise horizon")
    return ends


@register("BaSE")
class BaSE(BaseAgent):
    """BaSE, batched successive elimination of Gao, Han, Ren, Zhou (2019), "Batched multi-armed bandits
    problem" (NeurIPS), Algorithm 1, on the grid `base_grid(horizon, M, grid)`.

    A K-armed policy: it plays arms by index and ignores the features, so it is meant for an env whose
    arm k is the same arm every round (a fixed arm set: CtxBandit/FixedActionSet-v0, Linear-v0,
    UnitCircle-v0); on an env with fresh arms each round its choices carry no information, and it
    refuses an obs whose number of arms K changes. Batches 1..M-1 pull the active arms in turn
    (round-robin, so their counts differ by at most one); at the end t_m of each the arm k is
    eliminated when

        max_{j active} Y_j - Y_k >= sqrt(gamma sigma^2 log(T K) / tau),

    Y the empirical means of the rewards that have arrived by t_m and tau the fewest arrived rewards of
    an active arm (the paper's common count tau_m without delay; with delays the widest threshold,
    and no elimination while an active arm has none). From t_{M-1} on it plays the active arm of
    largest mean at t_{M-1} (ties at random), also after T. The decisions use data only at the grid
    points, so feedback batched on the same grid costs BaSE nothing.

    sigma is the rewards' noise scale (sub-Gaussian, or the standard deviation): Gao et al. take
    N(mu, 1) rewards and state the rule for sigma = 1, noting that other variances carry over; at
    scale sigma the same confidence takes sigma^2 times the threshold's square. Bernoulli rewards have
    sigma <= 1/2 (exactly 1/2 at mean 1/2): with the default sigma = 1 BaSE would wait for four times
    the evidence it needs and, on gaps of a few hundredths, eliminate nothing (docs/delayed.md,
    Batches). Only gamma sigma^2 enters the rule, so `search_space` tunes gamma alone (as LinUCB's
    alpha, not its sigma).

    Defaults: horizon T = 10^4, M = 3 batches (about log log T, where Gao et al. show the minimax
    rate is reached), the minimax grid, gamma = 4 and sigma = 1: with unit-variance noise the
    threshold is then sqrt(2 log(TK)) standard deviations of the difference of two arms' means, so
    the best arm survives each comparison with probability about 1 - 1/(TK). The paper's theorems ask
    gamma above an absolute constant; its experiments' value we could not consult here.

    Partial feedback: `observe_rows(obs, action, reward, rows)` adds the rewards of the instances
    `rows` alone (the run loop's delayed rewards reach a batch's instances at different rounds);
    BaSE draws nothing when it learns, so instance i then acts exactly as a single agent fed the
    rewards that reached instance i.

    Args:
        horizon: T, the number of rounds the grid spans.
        M: number of batches (>= 2: one to explore, the last to commit).
        grid: "minimax", "geometric" or "arithmetic" (`base_grid`).
        gamma: elimination threshold tuning gamma > 0.
        sigma: noise scale of the rewards (1 for the paper's N(mu, 1); 1/2 bounds a Bernoulli's).
    """

    params = {"horizon": Int(ge=2), "M": Int(ge=2), "grid": Options("minimax", "geometric", "arithmetic"),
              "gamma": Real(gt=0), "sigma": Real(gt=0)}
    search_space = {"gamma": LogUniform(0.5, 32), "M": IntLogUniform(2, 8)}

    def __init__(self, *, horizon: int = 10_000, M: int = 3, grid: str = "minimax", gamma: float = 4.0,
                 sigma: float = 1.0, seed=None, dim: int | None = None):
        self.horizon, self.M, self.grid, self.gamma, self.sigma = horizon, M, grid, gamma, sigma
        super().__init__(seed=seed, dim=dim)

    def _check_params(self):
        self.grid_ = base_grid(self.horizon, self.M, self.grid)

    def _start(self, X):
        n, k = X.shape[:2]
        self.k_, self.rows_ = k, np.arange(n)
        self.rounds_ = 0                           # rounds played
        self.batch_ = 0                            # 0-based batch of the last round played
        self.active_ = np.ones((n, k), bool)
        self.counts_ = np.zeros((n, k))            # arrived rewards per arm
        self.sums_ = np.zeros((n, k))
        self.observed_ = np.zeros(n, np.int64)     # rewards arrived, per instance
        self.best_ = None                          # the committed arm of each instance, from t_{M-1} on

    def _checked(self, obs, finite: bool = True) -> np.ndarray:
        """obs as (N, K, d) after the base's checks (`finite`: also that it holds no NaN or inf), and K the
        same as at the start."""
        X = self._check_obs(obs, finite=finite)
        if X.shape[1] != self.k_:
            raise ValueError(f"obs has {X.shape[1]} arms but BaSE started with {self.k_}: it plays arms by index and "
                             "needs the same K arms every round (a fixed-arm env)")
        return X

    def _ended(self, t: int) -> tuple[int, np.ndarray]:
        """(batch, active arms) for round t (1-based) after the eliminations of every batch end before t."""
        batch, active = self.batch_, self.active_
        while batch < self.M - 1 and t > self.grid_[batch]:
            active = self._eliminate(active)
            batch += 1
        return batch, active

    def _eliminate(self, active: np.ndarray) -> np.ndarray:
        """The active arms that survive the elimination rule on the rewards arrived so far."""
        means = self.sums_ / np.maximum(self.counts_, 1)
        tau = np.where(active, self.counts_, np.inf).min(axis=1, keepdims=True)
        with np.errstate(divide="ignore"):
            threshold = np.sqrt(self.gamma * self.sigma ** 2 * math.log(self.horizon * self.k_) / tau)       # inf while tau = 0
        top = np.where(active, means, -np.inf).max(axis=1, keepdims=True)
        return active & ~(top - means >= threshold)

    def _final_means(self, active: np.ndarray) -> np.ndarray:
        return np.where(active, self.sums_ / np.maximum(self.counts_, 1), -np.inf)

    def _explore(self, batch: int, active: np.ndarray, t: int) -> np.ndarray:
        """The round-robin arm of round t in exploration batch `batch`: the j-th active arm, j = pulls so far mod |A|."""
        j = t - 1 - (self.grid_[batch - 1] if batch else 0)
        which = j % active.sum(axis=1)
        return (np.cumsum(active, axis=1) > which[:, None]).argmax(axis=1)

    def act(self, obs) -> int | np.ndarray:
        """The arm of the coming round: round-robin over the active arms, or the committed arm in the last batch."""
        self._checked(obs)
        t = self.rounds_ + 1
        self.batch_, self.active_ = self._ended(t)
        if self.batch_ < self.M - 1:
            arms = self._explore(self.batch_, self.active_, t)
        else:
            if self.best_ is None:
                self.best_ = self._argmax(self._final_means(self.active_))
            arms = self.best_
        self.rounds_ += 1
        return self._unwrap(arms.copy())

    def observe(self, obs, action, reward) -> None:
        """A reward arrived for arm `action`: it counts at the next batch end."""
        X = self._checked(obs)
        a, y = self._feedback(X, action, reward)
        self.counts_[self.rows_, a] += 1
        self.sums_[self.rows_, a] += y
        self.observed_ += 1
        self.t_ += 1

    def observe_rows(self, obs, action, reward, rows) -> None:
        """Rewards arrived for the instances `rows` alone (distinct ints in [0, N)); obs, action and reward
        laid out as for `observe`, only the rows of `rows` read. Several rewards of one instance go in
        separate calls, in the order they arrived."""
        X = self._checked(obs, finite=False)                  # the other rows may hold anything
        rows = self._check_rows(rows)
        if not len(rows):
            return
        check_finite(X[rows])
        a, y, _ = self._rows_feedback(X, action, reward, rows)
        self.counts_[rows, a] += 1
        self.sums_[rows, a] += y
        self.observed_[rows] += 1
        self.t_ = int(self.observed_.max())

    def _observed(self) -> np.ndarray:
        return self.observed_

    def _probs(self, X: np.ndarray) -> np.ndarray:
        """Exact: a point mass on the round-robin or committed arm, uniform over tied means when it commits now."""
        self._checked(X if not self.single_ else X[0])
        t = self.rounds_ + 1
        batch, active = self._ended(t)
        probs = np.zeros((self.n_, self.k_))
        if batch < self.M - 1:
            probs[self.rows_, self._explore(batch, active, t)] = 1.0
        elif self.best_ is None:
            probs = argmax_probs(self._final_means(active))
        else:
            probs[self.rows_, self.best_] = 1.0
        return probs
