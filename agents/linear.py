"""Linear-bandit agents: Random, Greedy, epsilon-greedy, Softmax, LinUCB/OFUL, LinTS, Lin-ES, ES, RRLS.

All of them share `LinearAgent`, which validates inputs in one place, infers the feature dimension
d (and the number of instances N) from the first observation, and runs every computation batched
over N independent instances: a single agent is the N = 1 case of the same math (its rounds run
one-instance forms of the same numpy calls, see `LinearAgent`).

- `act(obs)` with obs (K, d) returns an int; with obs (N, K, d) it returns an (N,) int array.
- `observe(obs, action, reward)` takes the same obs shape, an int / (N,) actions and a float / (N,)
  rewards. The shape of the first obs fixes the mode (single or N instances) until `reset()`.
- Randomness: every instance has its own random stream (`agents.base.Streams`). `seed` is an int
  (or None) for one instance, or a sequence of N seeds for N instances; then instance i of the
  batched agent makes exactly the choices of a single agent seeded seeds[i] on the same data. An
  int seed with N > 1 instances is spawned into N child streams.
- Statistics use rank-one updates (agents.linalg), never a fresh inverse per round. The ridge
  notation is V_t = lam I + sum_{s<=t} x_s x_s^T, b_t = sum_{s<=t} x_s y_s, theta_hat = V_t^{-1} b_t.
  Learned state lives in attributes ending in `_`.
- Partial feedback: `observe_rows(obs, action, reward, rows)` updates only the instances `rows`
  (the run loop's delayed rewards reach the instances of a batch at different rounds); instance i
  then makes exactly the choices of a single agent fed the rewards that reached instance i. Each
  instance counts its own rewards (`observed_`), and an update's random draws come from the
  instance's own stream (`Streams.rows`). `observe_arrivals([(obs, action, reward, rows), ...])` takes
  a round's deliveries from several past rounds in one call, as `observe_rows` on each in turn.
"""

from __future__ import annotations

import contextlib
import math

import numpy as np

from agents.base import (F64, MAX_REWARD, BaseAgent, argmax_probs, check_chosen, check_finite, check_rewards,
                         check_single_feedback, random_argmax, register)
from agents.linalg import potter_update_, rls_update_
from agents.params import Int, IntLogUniform, LogUniform, Real

try:    # np.einsum (optimize=False) calls this C function through a Python wrapper that costs about as much
    from numpy._core.multiarray import c_einsum as einsum      # as a LinUCB score sum at K = 50, d = 20
except ImportError:     # numpy < 2
    einsum = np.einsum

__all__ = ["LinearAgent", "Random", "Greedy", "EpsilonGreedy", "Softmax", "LinUCB", "LinTS", "LinTSAG", "LinES", "ES",
           "RRLS"]


class LinearAgent(BaseAgent):
    """The linear families' act/observe on the one base: greedy on `_scores`, or `_choose`.

    Subclasses declare `params`, store their hyperparameters, call
    `super().__init__(seed=seed, dim=dim)` and provide `_init_state(n, d)` (allocate state for n
    instances of dimension d), `_update(x, y)` (x (N, d) chosen features, y (N,) rewards) and either
    `_scores(X) -> (N, K)` (arm indices; checked for NaN/inf, ties broken at random) or
    `_choose(X) -> (N,)` (then checking X is theirs), with X the (N, K, d) obs.

    Finiteness is checked where the values are used: on the arm scores in `act` (a score is finite
    exactly when its arm's features are, and checking K scores is much cheaper than K d features)
    and on the chosen arm's features in `observe`.

    `index_policy = True` declares `_scores` a deterministic function of the state (no draws), so
    that `action_probs` is exact: uniform over the arms of maximal score.

    `row_state` names the per-instance state (arrays with a leading axis N) that `_update` reads
    or writes: `observe_rows` and `observe_arrivals` run `_update` on those rows of it alone
    (`_restricted`), so a subset of the instances learns with the very arithmetic of a full update.

    One-instance rounds. A started single agent (first obs (K, d)) is what an RL pipeline drives
    round by round, and there the (1, K, d) forms and the dozen hook calls of the batched code
    cost more than the arithmetic (K = 50, d = 20: a third of a round). A family may therefore give
    the same arithmetic on one instance's arrays: `_scores1(X) -> (K,)` (X (K, d)), and/or
    `_choose1(X) -> int` where it overrides `_choose`, and `_update1(x, y)` (x (d,) float, y a
    float). `act` and `observe` then check the obs with one test (2-D, d columns, K >= 1, a real
    dtype; anything else takes the general path, which names the problem), and keep every other
    check: the scores are finite, the feedback is an arm index and a finite reward
    (`check_single_feedback`), the chosen features are finite and bounded (`check_chosen`), ties go
    to `random_argmax` with the instance's own stream. The hooks run the batched forms' numpy and
    BLAS calls on views of instance 0 and draw the same values from the instance's stream
    (`Streams.random1` etc.): the same kernels, so the same bits, and a single agent seeded s
    still makes exactly the choices of instance s of a batched agent (tests/agents/
    test_one_instance.py holds every family to it, scores and state included). A hook is used
    only where it is defined at or below every class that defines one of the batched methods it
    stands for (`ONE_INSTANCE`, which a family extends: LinUCB's `_scores1` stands for
    `_set_width` too): a subclass that overrides `_scores`, `_choose` or `_update` without the
    one-instance form gets the general path, never a stale shortcut. `observe_arrivals` runs
    `_update1` on one instance of a batched agent too (its state's rows as views, its stream as
    `Streams.rows`), for rewards that reach the instances one by one. A batched agent serving one
    instance (obs (1, K, d): a runner playing one seed through the batched path) takes the hooks
    on obs[0] too, when the action and reward are the usual (1,) int and real arrays
    (`_one_feedback`; anything else takes the general path and its errors), and returns a (1,)
    action array: its rounds cost a single agent's, not twice as much.
    """

    index_policy = False
    row_state: tuple[str, ...] = ()
    # each one-instance hook and the batched methods it stands for (see the class docstring)
    ONE_INSTANCE = {"_choose1": ("_choose", "_checked_scores", "_argmax", "_probs", "_ties", "_check_obs", "_unwrap"),
                    "_scores1": ("_scores",),
                    "_update1": ("_update", "_feedback", "_check_obs")}
    _act1 = _observe1 = False     # whether this class's one-instance hooks stand for its act and observe

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls._act1 = _stands_for(cls, "_choose1") and _stands_for(cls, "_scores1")
        cls._observe1 = _stands_for(cls, "_update1")

    def act(self, obs: np.ndarray) -> int | np.ndarray:
        """Choose an arm of obs (K, d) -> int, or one arm per instance of obs (N, K, d) -> (N,)."""
        if self._act1 and self.n_ == 1:
            X = obs if type(obs) is np.ndarray else np.asarray(obs)
            shape = X.shape
            if self.single_:
                if len(shape) == 2 and shape[1] == self.d_ and shape[0] and X.dtype.kind in "fiu":
                    return self._choose1(X)
            elif len(shape) == 3 and shape[0] == 1 and shape[2] == self.d_ and shape[1] and X.dtype.kind in "fiu":
                return np.array([self._choose1(X[0])])        # a batched agent serving one instance
        return self._unwrap(self._choose(self._check_obs(obs)))

    def observe(self, obs: np.ndarray, action, reward) -> None:
        """Update with the reward of the chosen arm (int and float, or (N,) arrays when batched)."""
        if self._observe1 and self.n_ == 1:
            X = obs if type(obs) is np.ndarray else np.asarray(obs)
            shape = X.shape
            if self.single_:
                if len(shape) == 2 and shape[1] == self.d_ and shape[0] and X.dtype.kind in "fiu":
                    a, y = check_single_feedback(action, reward, shape[0])
                    x = X[a]
                    check_chosen(x)
                    self._update1(x if x.dtype is F64 else x.astype(float, copy=False), y)
                    self.t_ += 1
                    self.observed_[0] = self.t_
                    return
            elif len(shape) == 3 and shape[0] == 1 and shape[2] == self.d_ and shape[1] and X.dtype.kind in "fiu" \
                    and (feedback := _one_feedback(action, reward, shape[1])):
                x = X[0, feedback[0]]                   # a batched agent serving one instance, as a single one
                check_chosen(x)
                self._update1(x if x.dtype is F64 else x.astype(float, copy=False), feedback[1])
                self.t_ += 1
                self.observed_[0] = self.t_
                return
        X = self._check_obs(obs)
        a, y = self._feedback(X, action, reward)
        x = X[:, a[0]] if self.single_ else X[self._rows, a]      # a view for one instance
        self._update(x.astype(float, copy=False), y)
        self.t_ += 1
        self.observed_ += 1

    def observe_rows(self, obs: np.ndarray, action, reward, rows) -> None:
        """Update only the instances `rows` (distinct ints in [0, N)) with their rewards.

        obs (N, K, d), action (N,) and reward (N,) are laid out as for `observe`; only the rows of
        `rows` are read (the others may hold anything). Each instance learns exactly as a single
        agent would from the same rewards: its own count of rewards observed (`observed_`) and its
        own random stream. Several rewards of one instance go in separate calls, in the order they
        arrived (or in one `observe_arrivals`).
        """
        self.observe_arrivals([(obs, action, reward, rows)])

    def observe_arrivals(self, arrivals) -> None:
        """Apply several deliveries of rewards in one call, bit for bit as `observe_rows` on each in turn.

        `arrivals` is a sequence of (obs, action, reward, rows), each laid out as for `observe_rows`
        (rows None: every instance): the run loop's arrivals of one round, from several past rounds,
        an instance possibly among the rows of several of them. Each instance learns its rewards in
        the order given. The checks run once, on all of them; the rewards are then applied one by
        one on views of their instances' state by the family's one-instance update (`_update1`, the
        class docstring), or, for a family without one, in layers (`_observe_layers`).
        """
        inst, x, y = self._arrivals(arrivals)
        if not inst:
            return
        if self._observe1:
            self._observe_each(inst, x, y)
        else:
            self._observe_layers(inst, x, y)
        self.t_ = int(self.observed_.max())

    def _observe_each(self, inst: list[int], x: np.ndarray, y: np.ndarray) -> None:
        """Reward k to instance inst[k] by `_update1`, on views of that instance's state: a single
        agent's kernels, and no copy (at N = 10 and d = 50 a third of the cost of a vectorised update
        per layer of arrivals, which cuts the rows out of the state and pays numpy's overhead per layer)."""
        names, full = self.row_state, [getattr(self, name) for name in self.row_state]
        saved, observed = (self.n_, self._rows, self.rng_, self.t_), self.observed_
        if getattr(self, "_row_streams", (None,))[0] is not self.rng_:     # each instance's stream, as a view
            self._row_streams = self.rng_, [self.rng_.rows(np.array([i])) for i in range(self.n_)]
        streams, counts = self._row_streams[1], observed.tolist()
        self.n_, self._rows = 1, self._rows[:1]
        try:
            for k, (i, reward) in enumerate(zip(inst, y.tolist())):
                views = [value[i:i + 1] for value in full]
                for name, view in zip(names, views):
                    setattr(self, name, view)
                self.rng_, self.t_ = streams[i], counts[i]
                self._update1(x[k], reward)
                for name, value, view in zip(names, full, views):
                    if getattr(self, name) is not view:        # replaced, not updated in place
                        value[i:i + 1] = getattr(self, name)
                counts[i] += 1
                observed[i] = counts[i]
        finally:
            for name, value in zip(names, full):
                setattr(self, name, value)
            self.n_, self._rows, self.rng_, self.t_ = saved

    def _observe_layers(self, inst: list[int], x: np.ndarray, y: np.ndarray) -> None:
        """Reward k to instance inst[k] by `_update`, in layers: layer j holds every instance's j-th
        reward. The instances that learn are cut out of the state once (`_restricted`), those with the
        most rewards first, so that every layer is a prefix of them, updated on views of the cut."""
        n = self.n_
        mine: list[list[int]] = [[] for _ in range(n)]       # each instance's arrivals, in order
        for k, i in enumerate(inst):
            mine[i].append(k)
        learn = sorted((i for i in range(n) if mine[i]), key=lambda i: -len(mine[i]))    # most rewards first
        layers: list[list[int]] = []                          # layer j: the j-th arrivals, as `learn`: a prefix
        for i in learn:
            for j, k in enumerate(mine[i]):
                if j == len(layers):
                    layers.append([])
                layers[j].append(k)
        order = np.array([k for layer in layers for k in layer])
        x, y, start = x[order], y[order], 0
        everyone = len(layers[-1]) == n                           # every layer of every instance: no cut
        with contextlib.nullcontext() if everyone else self._restricted(np.array(learn)):
            for size in map(len, layers):
                with contextlib.nullcontext() if size == self.n_ else self._restricted(slice(0, size)):
                    self._update(x[start:start + size], y[start:start + size])
                self.observed_[:size] += 1
                start += size

    def _arrivals(self, arrivals) -> tuple[list[int], np.ndarray, np.ndarray]:
        """(instances, chosen features (M, d) float, rewards (M,) float) of `observe_arrivals`' M rewards
        in order, or a ValueError naming the problem (the checks of `observe_rows`, those on values
        once on all M: a round's arrivals are a few rows from each of several rounds, gathered as
        Python scalars, since numpy calls on arrays of one or two rows cost more than their arithmetic)."""
        inst, chosen, rewards = [], [], []
        n = self.n_
        for obs, action, reward, rows in arrivals:
            X = self._check_obs(obs)
            a, r = np.asarray(action), np.asarray(reward)
            if a.shape != (n,) or r.shape != (n,):
                raise ValueError(f"actions and rewards must have shape ({n},) (every instance's, of which only "
                                 f"`rows` are read), got {a.shape} and {r.shape}")
            if a.dtype.kind not in "iu" or r.dtype.kind not in "fiu":
                raise ValueError(f"actions must be an int array and rewards a real array, got {a.dtype} and {r.dtype}")
            a, r, K = a.tolist(), r.tolist(), X.shape[1]
            for i in range(n) if rows is None else self._row_list(rows):
                if not 0 <= a[i] < K:
                    raise ValueError(f"action out of range for {K} arms: got {a[i]} (instance {i})")
                inst.append(i)
                chosen.append(X[i, a[i]])
                rewards.append(r[i])
        x = np.empty((len(inst), self.d_))
        for k, row in enumerate(chosen):
            x[k] = row
        y = np.array(rewards, float)
        check_rewards(y)
        check_chosen(x)
        return inst, x, y

    @contextlib.contextmanager
    def _restricted(self, rows: np.ndarray | slice):
        """The agent as if it served the instances `rows` alone: its `row_state`, counts (`observed_`)
        and random streams (`Streams.rows`) cut to those rows, written back to them on success.
        `rows` is an int array (the cut is a copy) or a slice (views: what is updated in place is
        written already)."""
        full = {name: getattr(self, name) for name in (*self.row_state, "observed_")}
        cut = {name: value[rows] for name, value in full.items()}
        which = self._rows[rows] if isinstance(rows, slice) else rows
        saved = self.n_, self._rows, self.rng_
        for name, value in cut.items():
            setattr(self, name, value)
        self.n_, self._rows, self.rng_ = len(which), self._rows[:len(which)], self.rng_.rows(which)
        try:
            yield
            for name, value in full.items():
                new = getattr(self, name)
                if new is not cut[name] or not isinstance(rows, slice):
                    value[rows] = new
        finally:
            for name, value in full.items():
                setattr(self, name, value)
            self.n_, self._rows, self.rng_ = saved

    def _observed(self) -> np.ndarray:
        return self.observed_

    def _start(self, X):
        self._rows = np.arange(self.n_)
        self.observed_ = np.zeros(self.n_, np.int64)     # rewards observed by each instance
        self._init_state(self.n_, self.d_)

    def _checked_scores(self, X: np.ndarray) -> np.ndarray:
        return _finite_scores(self._scores(X))

    def _choose(self, X: np.ndarray) -> np.ndarray:
        """Greedy arm of the scores, uniform among tied arms."""
        return self._argmax(self._checked_scores(X))

    def _choose1(self, X: np.ndarray) -> int:
        """`_choose` on one instance's X (K, d): the greedy arm of `_scores1`, a tie to `random_argmax`
        (which draws from the instance's stream as `_argmax` does).

        With finite scores (`_greatest`), the first maximiser is the only one when the scores after it
        are all smaller: one argmax over that contiguous tail (a reversed view's argmax copies it first).
        """
        scores = self._scores1(X)
        a, top = _greatest(scores)
        rest = scores[a + 1:]
        if not len(rest) or rest.item(rest.argmax()) < top:
            return a
        return random_argmax(scores, self._ties())

    def _probs(self, X: np.ndarray) -> np.ndarray | None:
        """An index policy's action distribution: uniform over the maximisers of its scores."""
        return argmax_probs(self._checked_scores(X)) if self.index_policy else None

    def _init_state(self, n: int, d: int) -> None:
        pass

    def _update(self, x: np.ndarray, y: np.ndarray) -> None:
        pass

    def _update1(self, x: np.ndarray, y: float) -> None:
        pass


def _one_feedback(action, reward, num_arms: int) -> tuple[int, float] | None:
    """(arm, reward) of a batched agent's one instance, as Python scalars, when action and reward
    are the usual (1,) int and real arrays and pass `check_feedback`'s tests (an arm in range, a
    finite reward within MAX_REWARD); None otherwise: the general path then says what is wrong."""
    if type(action) is np.ndarray and type(reward) is np.ndarray and action.shape == (1,) == reward.shape and \
            (action.dtype is I64 or action.dtype.kind in "iu") and (reward.dtype is F64 or reward.dtype.kind in "fiu"):
        a, y = action.item(), float(reward.item())
        if 0 <= a < num_arms and abs(y) <= MAX_REWARD:                        # (NaN fails the second test)
            return a, y
    return None


I64 = np.dtype(np.int64)     # with F64, the usual dtypes of a batched agent's actions and rewards: identity tests

NOT_FINITE = "obs contains NaN or inf (or features so large that the arm scores overflow)"


def _finite_scores(scores: np.ndarray) -> np.ndarray:
    """scores, or a ValueError if any is NaN or +-inf (one sum in the usual case; the exact test only
    when the sum is not finite, so finite scores whose sum overflows pass, as in `_choose1`)."""
    if not math.isfinite(scores.sum()) and not np.isfinite(scores).all():
        raise ValueError(NOT_FINITE)
    return scores


def _greatest(scores: np.ndarray) -> tuple[int, float]:
    """The first maximiser of one instance's scores (K,) and its score, or `_finite_scores`' ValueError:
    they are all finite exactly when the largest and the smallest are (argmax and argmin stop at the
    first NaN), two index scans instead of a sum's reduction."""
    a = int(scores.argmax())
    top = scores.item(a)                                  # Python floats: no numpy scalars made
    if not (math.isfinite(top) and math.isfinite(scores.item(scores.argmin()))):
        raise ValueError(NOT_FINITE)
    return a, top


def _owner(cls: type, name: str) -> type | None:
    """The class of cls's MRO that defines `name`, or None."""
    return next((c for c in cls.__mro__ if name in c.__dict__), None)


def _stands_for(cls: type, hook: str) -> bool:
    """Whether cls's one-instance `hook` is defined at or below every class that defines one of the
    batched methods it stands for (a hook that no class defines stands for nothing defined)."""
    owner = _owner(cls, hook)
    for name in cls.ONE_INSTANCE[hook]:
        defined = _owner(cls, name)
        if defined is not None and (owner is None or not issubclass(owner, defined)):
            return False
    return True


def arm_scores(X: np.ndarray, theta: np.ndarray) -> np.ndarray:
    """<x, theta> of every arm: X (N, K, d), theta (N, d) -> (N, K).

    numpy's batched matmul is fastest on small arm sets but copies mixed-dtype operands
    (float32 features, float64 theta) and got 3x slower than einsum at K = 10,000, d = 50.
    """
    if X.shape[1] * X.shape[2] > 20_000:
        return np.einsum("nkd,nd->nk", X, theta)
    return (X @ theta[:, :, None])[:, :, 0]


def arm_scores1(X: np.ndarray, theta: np.ndarray) -> np.ndarray:
    """`arm_scores` of one instance: X (K, d), theta (d,) -> (K,), by the same kernels (the same bits).

    `ndarray.dot` calls the BLAS gemv that matmul calls, with less overhead (3,500 instructions a
    round here); the one-instance hooks use it for matrix-vector products (for matrix products
    matmul is the cheaper)."""
    if X.shape[0] * X.shape[1] > 20_000:
        return np.einsum("kd,d->k", X, theta)
    return X.dot(theta)


def _ridge_init(agent, n: int, d: int, lam: float, p: int = 1) -> None:
    """W_ = [V^{-1} | theta_hat] = [I / lam | 0] for n instances (p solution columns)."""
    agent.W_ = np.zeros((n, d, d + p))
    agent.W_[:, :, :d] = np.eye(d) / lam


@register("Random")
class Random(LinearAgent):
    """Uniformly random arm each round; the floor every comparison should beat."""

    def _choose(self, X):
        check_finite(X)
        return self.rng_.integers(X.shape[1], size=self.n_)

    def _choose1(self, X):
        check_finite(X)
        return self.rng_.integers1(X.shape[0])

    def _probs(self, X):
        check_finite(X)
        return np.full(X.shape[:2], 1.0 / X.shape[1])


@register("Greedy")
class Greedy(LinearAgent):
    """Ridge regression, act greedily on theta_hat = V_t^{-1} b_t ([S3] §5.2 baseline, no exploration).

    Args:
        lam: ridge regulariser lambda (V_0 = lam I).
    """

    params = {"lam": Real(gt=0)}
    search_space = {"lam": LogUniform(0.01, 100)}
    index_policy = True
    row_state = ("W_",)

    def __init__(self, *, lam: float = 1.0, seed=None, dim: int | None = None):
        self.lam = lam
        super().__init__(seed=seed, dim=dim)

    def _init_state(self, n, d):
        _ridge_init(self, n, d, self.lam)

    def _update(self, x, y):
        rls_update_(self.W_, x, y[:, None])                 # V_t^{-1}, theta_hat_t = V_t^{-1} b_t

    def _update1(self, x, y):
        rls_update_(self.W_[0], x, (y,))

    def _scores(self, X):
        return arm_scores(X, self.W_[:, :, -1])              # <x, theta_hat>

    def _scores1(self, X):
        return arm_scores1(X, self.W_[0, :, -1])


@register("epsilon-greedy")
class EpsilonGreedy(Greedy):
    """Greedy on the ridge estimate, but a uniformly random arm with probability epsilon.

    Args:
        epsilon: exploration probability in [0, 1].
        lam: ridge regulariser lambda.
    """

    params = {"epsilon": Real(ge=0, le=1)}
    search_space = {"epsilon": LogUniform(0.01, 0.5)}        # and Greedy's lam

    def __init__(self, *, epsilon: float = 0.1, lam: float = 1.0, seed=None, dim: int | None = None):
        self.epsilon = epsilon
        super().__init__(lam=lam, seed=seed, dim=dim)

    def _choose(self, X):
        greedy = super()._choose(X)
        explore = self.rng_.random(self.n_) < self.epsilon
        uniform = self.rng_.integers(X.shape[1], size=self.n_)
        return np.where(explore, uniform, greedy)

    def _choose1(self, X):
        greedy = super()._choose1(X)
        explore = self.rng_.random1() < self.epsilon               # the same draws, in the same order
        uniform = self.rng_.integers1(X.shape[0])
        return uniform if explore else greedy

    def _probs(self, X):
        return (1.0 - self.epsilon) * super()._probs(X) + self.epsilon / X.shape[1]


@register("Softmax")
class Softmax(Greedy):
    """Boltzmann exploration on the ridge estimate: P(a) proportional to exp(<x_a, theta_hat> / tau).

    Greedy's theta_hat, but every arm keeps a probability that falls smoothly with its estimated
    gap, instead of epsilon-greedy's one floor epsilon / K for every arm but the greedy one: a
    behaviour policy for off-policy evaluation with exact propensities, whose weights stay moderate
    when the target's arm is a close second. The draw takes one uniform u per instance and inverts
    the cumulative distribution (the arm whose CDF interval holds u). As tau -> 0 it becomes
    Greedy (ties split evenly), as tau -> inf Random.

    Default tau = 0.1, in reward units: the [S0] envs' mean rewards lie in [-1, 1] (noise 0.5), so
    an arm estimated 0.1 below the best is played e^-1 ~ 0.37 times as often and one 0.5 below
    e^-5 ~ 0.007 times: it exploits clear gaps and keeps the close arms in play. Rewards on
    another scale want tau on that scale.

    `epsilon` bounds the importance weights whatever the reward scale: the softmax is mixed with
    the uniform distribution, P(a) = (1 - epsilon) softmax(a) + epsilon / K, so every arm's
    probability is at least epsilon / K (stated exactly in `action_probs`) and no weight
    pi(a) / P(a) of an off-policy estimate exceeds K / epsilon. Default 0: the plain softmax.

    Args:
        tau: temperature tau > 0.
        epsilon: share of uniform play, in [0, 1]: each arm's probability is at least epsilon / K.
        lam: ridge regulariser lambda.
    """

    params = {"tau": Real(gt=0), "epsilon": Real(ge=0, le=1)}
    search_space = {"tau": LogUniform(0.01, 1.0)}            # and lam; epsilon (OPE weights' floor) stays 0
    index_policy = False

    def __init__(self, *, tau: float = 0.1, epsilon: float = 0.0, lam: float = 1.0, seed=None,
                 dim: int | None = None):
        self.tau, self.epsilon = tau, epsilon
        super().__init__(lam=lam, seed=seed, dim=dim)

    def _probs(self, X):
        scores = self._checked_scores(X)
        return self._softmax(scores - scores.max(axis=1, keepdims=True), axis=1)

    def _probs1(self, X):
        """`_probs` of one instance's X (K, d), (K,)."""
        scores = self._scores1(X)
        return self._softmax(scores - _greatest(scores)[1], axis=0)

    def _softmax(self, shifted: np.ndarray, axis: int) -> np.ndarray:
        """P(a) from the scores less their maximum, (N, K) along axis 1 or (K,) along axis 0.

        shifted / tau is <= 0 with maximum 0 exactly for any tau > 0, so exp cannot overflow and
        scipy.special.softmax's own shift (by that 0) would change no bit: its other numpy calls,
        without its array-API dispatch (which cost as much as the rest of a round at K = 50).
        """
        e = np.exp(shifted / self.tau)
        probs = e / e.sum(axis=axis, keepdims=True)
        return (1 - self.epsilon) * probs + self.epsilon / probs.shape[axis] if self.epsilon else probs

    def _choose(self, X):
        cdf = np.cumsum(self._probs(X), axis=1)
        u = self.rng_.random(self.n_)[:, None] * cdf[:, -1:]           # u ~ Unif[0, total), total = 1 up to rounding
        return (cdf <= u).sum(axis=1)                                  # the arm a with cdf_{a-1} <= u < cdf_a

    def _choose1(self, X):
        cdf = np.cumsum(self._probs1(X))
        return int(np.count_nonzero(cdf <= self.rng_.random1() * cdf[-1]))


@register("LinUCB")
class LinUCB(LinearAgent):
    """LinUCB / OFUL (Abbasi-Yadkori, Pal, Szepesvari 2011), the baseline of [S0] §7 and [S4] §5.

    X_t = argmax_x <theta_hat_{t-1}, x> + alpha * beta_t^{1/2} ||x||_{V_{t-1}^{-1}}   ([S4] eq. 4.6 form)
    with the OFUL radius (Abbasi-Yadkori et al. 2011, Thm 2)
        beta_t^{1/2} = sigma * sqrt(2 log(1/delta_t) + log(det V_{t-1} / lam^d)) + sqrt(lam) * S.
    The log-determinant is tracked exactly (det(V + x x^T) = det V (1 + x^T V^{-1} x)); when
    ||x|| <= 1 it is at most d log(1 + t / (lam d)), the familiar closed form, so this radius is never
    wider than that one and needs no bound on ||x||. Default delta_t = t^{-3} ([S4] Thm 3.9:
    P(||theta_hat_t - theta||_{V_t} >= beta_t^{1/2}) <= 1/t^3; anytime, no horizon needed); a float
    `delta` fixes it. [S0] and [S4] give no constants (docs/papers.md, S4-A3), so lam = 1, sigma = 1, S = 1.

    Args:
        lam: ridge regulariser lambda.
        sigma: sub-Gaussian noise scale R.
        S: bound on ||theta*||.
        delta: confidence level, or None for delta_t = t^{-3}.
        alpha: width multiplier (1 = theory; smaller values are the usual practical tuning).
    """

    params = {"lam": Real(gt=0), "sigma": Real(gt=0), "S": Real(gt=0), "delta": (Real(gt=0, lt=1), None),
              "alpha": Real(ge=0)}
    search_space = {"alpha": LogUniform(0.01, 10), "lam": LogUniform(0.01, 100)}
    index_policy = True
    row_state = ("W_", "logdet_", "width_")
    # _scores1 reads the width as the scalar of LinUCB's (N, 1) width_ and _update1 computes it as _set_width does:
    # a subclass with its own width takes the general path
    ONE_INSTANCE = {**LinearAgent.ONE_INSTANCE, "_scores1": ("_scores", "_set_width"),
                    "_update1": (*LinearAgent.ONE_INSTANCE["_update1"], "_set_width")}

    def __init__(self, *, lam: float = 1.0, sigma: float = 1.0, S: float = 1.0, delta: float | None = None,
                 alpha: float = 1.0, seed=None, dim: int | None = None):
        self.lam, self.sigma, self.S, self.delta, self.alpha = lam, sigma, S, delta, alpha
        super().__init__(seed=seed, dim=dim)

    def _init_state(self, n, d):
        _ridge_init(self, n, d, self.lam)
        self.logdet_ = np.zeros((n, 1))  # log(det V_t / lam^d)
        self.width_ = np.zeros((n, 1))
        self._set_width()

    def _update(self, x, y):
        growth = rls_update_(self.W_, x, y[:, None])        # det V_t / det V_{t-1}
        if self.n_ == 1:    # one instance: a scalar, no array calls (the same float64 arithmetic)
            self.logdet_[0, 0] += np.log(growth[0, 0, 0])
        else:
            self.logdet_ += np.log(growth[:, 0])
        self._set_width(self.observed_ + 2)

    def _update1(self, x, y):
        # `rls_update_(self.W_[0], x, (y,))` inline (its 1-D form: the same calls on the same arrays)
        W, d = self.W_[0], len(x)
        r = x.dot(W)
        u = r[:d]                                            # (V^{-1} x)^T
        denom = 1.0 + u.dot(x)
        r[d] = r.item(d) - y                                 # `r[d] -= y` on Python floats (the same subtraction)
        W -= (u[:, None] / denom) * r
        logdet = self.logdet_.item() + float(np.log(denom))  # `_update`'s sum, on floats
        self.logdet_[0, 0] = logdet
        # `_set_width(t_ + 2)` inline, on the Python floats it computes for one instance (the same bits)
        log_inv_delta = 3.0 * math.log(self.t_ + 2) if self.delta is None else -math.log(self.delta)
        a = self.alpha
        self.width_[0, 0] = a * self.sigma * math.sqrt(logdet + 2.0 * log_inv_delta) + a * math.sqrt(self.lam) * self.S

    def _set_width(self, t: int | np.ndarray = 1) -> None:
        """alpha * beta_t^{1/2} for the coming round t of each instance (an int, or (N,) ints), shape (N, 1).

        Each instance's round is its own (rewards observed + 1): under partial feedback they differ."""
        if not isinstance(t, int) and (self.n_ == 1 or (t == t[0]).all()):
            t = int(t[0])                   # one round for all: Python floats, the arithmetic of a single agent
        if self.delta is not None:
            log_inv_delta = -math.log(self.delta)
        elif isinstance(t, int):
            log_inv_delta = 3.0 * math.log(t)
        else:                               # math.log row by row: the bits a single agent gets
            log_inv_delta = np.array([3.0 * math.log(v) for v in t.tolist()])[:, None]
        a = self.alpha
        if self.n_ == 1:    # one instance: the same float64 arithmetic on Python floats (the same bits, no array calls)
            root = math.sqrt(self.logdet_.item() + 2.0 * log_inv_delta)
            self.width_[0, 0] = a * self.sigma * root + a * math.sqrt(self.lam) * self.S
        else:
            self.width_ = a * self.sigma * np.sqrt(self.logdet_ + 2.0 * log_inv_delta) + a * math.sqrt(self.lam) * self.S

    def _scores(self, X):
        XW = X @ self.W_                                     # [x^T V^{-1} | <x, theta_hat>]
        scores = einsum("nkd,nkd->nk", XW[:, :, :-1], X)  # ||x||^2_{V^{-1}}, then in place (no temporaries):
        np.sqrt(scores, out=scores)
        scores *= self.width_
        scores += XW[:, :, -1]                               # <x, theta_hat> + width ||x||_{V^{-1}}
        return scores

    def _scores1(self, X):
        """`_scores` of one instance's X (K, d): the same matmul, einsum and in-place operations,
        X @ W_[0] written into a scratch [x^T V^{-1} | <x, theta_hat>] kept with its two column
        views, and the width a 0-d view of width_ (`_views1`)."""
        views = self._views1
        if views is None or views[0] is not self.W_ or views[1] is not self.width_ or views[4] != len(X):
            views = self._views(len(X))
        _, _, W, width, _, XW, left, right = views
        np.matmul(X, W, XW)
        scores = einsum("kd,kd->k", left, X)
        np.sqrt(scores, scores)
        scores *= width                                      # a 0-d array: the cheapest scalar operand
        scores += right
        return scores

    _views1 = None      # (W_, width_, W_[0], width_ as 0-d, K, scratch (K, d + 1), its first d columns, its last)

    def _views(self, k: int) -> tuple:
        """`_scores1`'s views of the state and its scratch for K = k arms (rebuilt when W_ or width_ is
        another array or K changes; never copied or pickled: `__getstate__`)."""
        XW = np.empty((k, self.d_ + 1))
        self._views1 = (self.W_, self.width_, self.W_[0], self.width_.reshape(()), k, XW, XW[:, :-1], XW[:, -1])
        return self._views1

    def __getstate__(self) -> dict:
        state = super().__getstate__()
        state.pop("_views1", None)        # views of the state: a copy would no longer see the state
        return state


@register("LinTS")
class LinTS(LinearAgent):
    """Linear Thompson sampling, Bayesian / "heuristic" form ([S3] §3.1 eq. 2, App. A.1; [S4] App. D).

    With prior theta ~ N(0, sigma^2 / lam I) and noise N(0, sigma^2) the posterior is
    N(theta_hat_t, sigma^2 V_t^{-1}); each round samples theta~ = theta_hat + v sigma R eps with
    eps ~ N(0, I_d) and R R^T = V^{-1} kept by Potter's square-root update (O(d^2) a round, no
    Cholesky), and acts greedily on theta~. v = 1 is exact TS ([S4] App. D "heuristic LinTS":
    no variance blow-up); [S3]'s TS (prior N(0, 10 I), sigma = 1) is lam = 0.1.

    Args:
        lam: ridge regulariser lambda = sigma^2 / prior variance.
        sigma: noise standard deviation.
        v: posterior scale multiplier.
    """

    params = {"lam": Real(gt=0), "sigma": Real(gt=0), "v": Real(ge=0)}
    row_state = ("R_", "theta_")
    search_space = {"v": LogUniform(0.01, 10), "lam": LogUniform(0.01, 100)}

    def __init__(self, *, lam: float = 1.0, sigma: float = 1.0, v: float = 1.0,
                 seed=None, dim: int | None = None):
        self.lam, self.sigma, self.v = lam, sigma, v
        super().__init__(seed=seed, dim=dim)

    def _scale(self, d: int) -> float:
        return self.v * self.sigma

    def _init_state(self, n, d):
        self.R_ = np.tile(np.eye(d) / math.sqrt(self.lam), (n, 1, 1))   # R R^T = V^{-1}
        self.theta_ = np.zeros((n, d))
        self._scale_ = self._scale(d)

    def _update(self, x, y):
        k = potter_update_(self.R_, x)                      # k = V_t^{-1} x
        self.theta_ += k * (y - (x * self.theta_).sum(axis=1))[:, None]   # recursive least squares

    def _update1(self, x, y):
        k = potter_update_(self.R_[0], x)
        theta = self.theta_[0]
        theta += k * (y - (x * theta).sum())

    def _scores(self, X):
        eps = self.rng_.standard_normal((self.n_, self.d_, 1))
        theta = self.theta_ + self._scale_ * (self.R_ @ eps)[:, :, 0]
        return arm_scores(X, theta)

    def _scores1(self, X):
        eps = self.rng_.standard_normal1(self.d_)
        return arm_scores1(X, self.theta_[0] + self._scale_ * self.R_[0].dot(eps))


@register("LinTS-AG")
class LinTSAG(LinTS):
    """LinTS, theory version of Agrawal & Goyal (2013) ([S4] §5.4 baseline; docs/papers.md, S4-A5).

    B_t = I + sum x x^T (lam = 1), theta~ ~ N(theta_hat, v^2 B_t^{-1}) with the inflated scale
    v = R sqrt(24 / epsilon * d * log(1 / delta)). Agrawal & Goyal take epsilon = 1 / log T; [S4]
    gives no values, so epsilon and delta default to 1 / log(horizon) and 1 / horizon.

    Args:
        R: sub-Gaussian noise scale.
        epsilon: the algorithm's epsilon in (0, 1], or None for 1 / log(horizon).
        delta: failure probability in (0, 1), or None for 1 / horizon.
        horizon: T, used only for the two defaults above.
    """

    params = {"R": Real(gt=0), "epsilon": (Real(gt=0, le=1), None), "delta": (Real(gt=0, lt=1), None),
              "horizon": Int(ge=3)}
    search_space = {"R": LogUniform(0.001, 10)}           # the theory scale is wide: smaller R, the usual tuning

    def __init__(self, *, R: float = 1.0, epsilon: float | None = None, delta: float | None = None,
                 horizon: int = 10_000, seed=None, dim: int | None = None):
        self.R, self.epsilon, self.delta, self.horizon = R, epsilon, delta, horizon
        super().__init__(lam=1.0, sigma=1.0, v=1.0, seed=seed, dim=dim)

    @classmethod
    def reads_horizon(cls, kwargs: dict) -> bool:
        """T sizes only the defaults of epsilon and delta."""
        return cls.setting(kwargs, "epsilon") is None or cls.setting(kwargs, "delta") is None

    def _scale(self, d: int) -> float:
        epsilon = 1.0 / math.log(self.horizon) if self.epsilon is None else self.epsilon
        delta = 1.0 / self.horizon if self.delta is None else self.delta
        return self.R * math.sqrt(24.0 / epsilon * d * math.log(1.0 / delta))


class _RidgeEnsemble(LinearAgent):
    """m ridge models sharing V_t, each fitting its own perturbed targets; one acts per round.

    Subclasses give `_spec()`: (ensemble size, lambda, perturbation sd, prior sd).
    """

    row_state = ("W_",)

    def _init_state(self, n, d):
        m, lam, _, prior_sd = self._spec()
        _ridge_init(self, n, d, lam, p=m)                   # W_ = [V^{-1} | theta^1 ... theta^m]
        if prior_sd > 0:                                    # theta^j_0 = V_0^{-1} lam theta~^j_0 = theta~^j_0
            self.W_[:, :, d:] = prior_sd * self.rng_.standard_normal((n, d, m))

    def _update(self, x, y):
        m, _, sigma_R, _ = self._spec()
        z = self.rng_.normal(0.0, sigma_R, (self.n_, m))   # Z^j_t, drawn once and kept
        rls_update_(self.W_, x, y[:, None] + z)

    def _update1(self, x, y):
        m, _, sigma_R, _ = self._spec()
        rls_update_(self.W_[0], x, y + self.rng_.normal1(0.0, sigma_R, m))

    def _scores(self, X):
        j = self.rng_.integers(self._spec()[0], size=self.n_)        # j_t ~ Unif[m]
        theta = self.W_[self._rows, :, self.d_ + j]                    # (N, d)
        return arm_scores(X, theta)

    def _scores1(self, X):
        j = self.rng_.integers1(self._spec()[0])
        return arm_scores1(X, self.W_[0, :, self.d_ + j].copy())      # contiguous, as the batched copy


@register("Lin-ES")
class LinES(_RidgeEnsemble):
    """Linear ensemble sampling, [S0] §4.1 Alg. 1 with the ridge loss (§7.2 defaults).

    m ridge models share V_t = lam I + sum x x^T; model j has targets perturbed once and for all,
        theta^j_t = V_t^{-1} (lam theta~^j_0 + sum_{l<=t} x_l (y_l + Z^j_l)),  Z^j_l ~ N(0, sigma_R^2),
    and each round one model j_t ~ Unif[m] picks the greedy arm (Alg. 1 lines 4-5). [S0] has no
    prior perturbation (theta~^j_0 = 0, the default `prior_sd = 0`); `prior_sd > 0` draws
    theta~^j_0 ~ N(0, prior_sd^2 I) as in Lee & Oh (2024) / Lu & Van Roy (2017). Per round:
    O(d^2) for V^{-1} and the chosen model, O(m d) for the m perturbed sums b^j.

    Args:
        m: ensemble size.
        lam: ridge regulariser lambda.
        sigma_R: standard deviation of the reward perturbations Z.
        prior_sd: standard deviation of the prior perturbation theta~_0 (0: none).
    """

    params = {"m": Int(ge=1), "lam": Real(gt=0), "sigma_R": Real(gt=0), "prior_sd": Real(ge=0)}
    search_space = {"m": IntLogUniform(4, 100), "lam": LogUniform(0.01, 100), "sigma_R": LogUniform(0.01, 1)}

    def __init__(self, *, m: int = 25, lam: float = 1.0, sigma_R: float = 0.1, prior_sd: float = 0.0,
                 seed=None, dim: int | None = None):
        self.m, self.lam, self.sigma_R, self.prior_sd = m, lam, sigma_R, prior_sd
        super().__init__(seed=seed, dim=dim)

    def _spec(self) -> tuple[int, float, float, float]:
        """(ensemble size, lambda, perturbation sd, prior sd) in the ridge form above."""
        return self.m, self.lam, self.sigma_R, self.prior_sd


@register("ES")
class ES(_RidgeEnsemble):
    """Linear ensemble sampling of Lu & Van Roy (2017) as described in [S3] App. A.5.

    theta_{0,m} ~ N(0, Sigma_0 = prior_var I); act greedily on a uniformly chosen member; every
    member takes the RRLS step of [S3] eq. 10 with its own fresh noise Z_{t,m} ~ N(0, sigma^2):
        theta_{t,m} = Sigma_t (Sigma_{t-1}^{-1} theta_{t-1,m} + x_t (y_t + Z_{t,m}) / sigma^2).
    This is Lin-ES in ridge form with lam = sigma^2 / prior_var, sigma_R = sigma and
    prior_sd = sqrt(prior_var), which is how it is computed. Defaults: [S3] §5.1 / App. F.1
    (prior N(0, 10 I), sigma = 1) and M = 8, the size at which [S3] Fig. 3(a) compares.

    Args:
        M: ensemble size.
        prior_var: prior variance (Sigma_0 = prior_var I).
        sigma: reward noise standard deviation.
    """

    params = {"M": Int(ge=1), "prior_var": Real(gt=0), "sigma": Real(gt=0)}
    search_space = {"M": IntLogUniform(2, 32), "prior_var": LogUniform(0.1, 1000), "sigma": LogUniform(0.1, 10)}

    def __init__(self, *, M: int = 8, prior_var: float = 10.0, sigma: float = 1.0,
                 seed=None, dim: int | None = None):
        self.M, self.prior_var, self.sigma = M, prior_var, sigma
        super().__init__(seed=seed, dim=dim)

    def _spec(self):
        return self.M, self.sigma**2 / self.prior_var, self.sigma, math.sqrt(self.prior_var)


@register("RRLS")
class RRLS(ES):
    """Recursive randomized least squares, [S3] App. A.4 Alg. 2 / eq. 10: ES with M = 1.

    Kept as the sequential-dependence counterexample of [S3] (it may suffer linear regret).

    Args:
        prior_var: prior variance (theta_0 ~ N(0, prior_var I)).
        sigma: reward noise standard deviation.
    """

    def __init__(self, *, prior_var: float = 10.0, sigma: float = 1.0, seed=None, dim: int | None = None):
        super().__init__(M=1, prior_var=prior_var, sigma=sigma, seed=seed, dim=dim)
