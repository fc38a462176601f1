"""The agent protocol, the one random tie-breaking helper, and the registry behind `agents.make`.

Agents see only arrays: `obs` is the (K, d) arm-feature matrix of a round (or (N, K, d) for a
batched agent serving N independent instances). They never hold an environment nor see `info`.
"""

from __future__ import annotations

import copy
import difflib
import inspect
import math
import operator
from typing import Any, Callable, Protocol, runtime_checkable

import numpy as np

from agents.params import Int, keyword_parameters, validate

try:    # np.vdot without its array-function dispatch (a fifth of its cost on a d = 20 vector)
    from numpy._core._multiarray_umath import vdot
except ImportError:     # numpy < 2
    vdot = np.vdot

F64 = np.dtype(float)   # the dtype object of numpy's usual float64 arrays: `x.dtype is F64` is the cheapest dtype test


@runtime_checkable
class Agent(Protocol):
    """What every policy of the zoo provides.

    Optional capabilities are discovered with `hasattr`: `action_probs(obs)`, batched
    `act(obs[N, K, d]) -> actions[N]` (attribute `batched = True`), `observe_rows(obs, action,
    reward, rows)` (a batched agent updating only the instances `rows`, for rewards that reach the
    instances at different rounds), `observe_arrivals(arrivals)` (several such deliveries in one
    call, as `observe_rows` on each in turn), `state_dict()` / `load_state_dict()`.
    """

    def act(self, obs: np.ndarray) -> int: ...

    def observe(self, obs: np.ndarray, action: int, reward: float) -> None: ...

    def reset(self) -> None: ...


class _Buffer:
    """Variates of one kind (standard normal or uniform) for N streams, drawn a block at a time.

    Row i of the buffer holds the next values of stream i, in order. Draws for every row consume
    the streams in lockstep (every call takes the same number of values from each), so one
    position `pos` serves all rows, and what instance i receives depends only on its own
    Generator, never on N. A draw for some rows only (`rows`: an agent updating the instances
    whose rewards arrived) takes the next values of just those streams: the rows then keep their
    own positions `at` until they are in step again, and the buffer keeps every value from the
    lowest position on. Either way instance i gets the values of its own stream in the order it
    asks for them (numpy's Generators give the same sequence whatever the sizes of the blocks).
    """

    BLOCK = 2048

    def __init__(self, gens: list[np.random.Generator], method: str):
        self.gens, self.method = gens, method
        self.buf = np.empty((len(gens), 0))
        self.pos = 0
        self.at = None      # (N,) positions of rows out of step; None while they are in step at `pos`

    def _refill(self, start: int, size: int) -> None:
        """Drop the values before column `start` and append `size` fresh ones to every row."""
        fresh = [getattr(g, self.method)(size) for g in self.gens]
        self.buf = np.concatenate([self.buf[:, start:], np.stack(fresh)], axis=1)

    def take(self, k: int, rows: np.ndarray | None = None) -> np.ndarray:
        """The next k values of every stream, (N, k), or of the streams of `rows` (distinct ints), (len(rows), k)."""
        if rows is None and self.at is None:
            if self.pos + k > self.buf.shape[1]:
                self._refill(self.pos, max(self.BLOCK, k))
                self.pos = 0
            out = self.buf[:, self.pos:self.pos + k]
            self.pos += k
            return out
        if self.at is None:
            self.at = np.full(len(self.gens), self.pos)
        rows = np.arange(len(self.gens)) if rows is None else rows
        at = self.at[rows]
        need = int(at.max(initial=0)) + k
        if need > self.buf.shape[1]:
            start = int(self.at.min())
            self._refill(start, max(self.BLOCK, need - self.buf.shape[1]))
            self.at -= start
            at -= start
        out = self.buf[rows[:, None], at[:, None] + np.arange(k)]
        self.at[rows] += k
        if (self.at == self.at[0]).all():     # in step again: back to the one position
            self.pos, self.at = int(self.at[0]), None
        return out

    def take1(self, k: int) -> np.ndarray:
        """`take(k)[0]` of a single stream (N = 1), (k,)."""
        pos = self.pos
        if pos + k > self.buf.shape[1] or self.at is not None:
            return self.take(k)[0]
        self.pos = pos + k
        return self.buf[0, pos:pos + k]


class Streams:
    """N independent random streams behind a Generator-like interface, for batched agents.

    Every draw has a leading axis of length N, and row i depends on the seed of instance i alone:
    a batched agent seeded s_1..s_N makes exactly the draws of N single agents seeded s_1..s_N,
    which is what lets the run loop use batched agents and the plain loop interchangeably.
    Normals and uniforms come from per-instance blocks (one Generator call per instance every
    few hundred rounds, not every round: drawing N small arrays each round would cost more than
    the agents' own math); integers are floor(u * range) of a uniform; `gens` are per-instance
    Generators for the rare draws of a single row (tie-breaking).

    `rows(rows)` is a view of some of the streams, for an agent that updates only the instances
    whose rewards arrived: its draws have a leading axis of len(rows) and take the next values of
    just those instances' streams, so instance i's draws never depend on which other instances
    learn beside it (the rule `_Buffer` states).

    `seed` is an int, None (fresh entropy) or a SeedSequence and then serves N = 1 (or is spawned
    into N children for N > 1), or a sequence of N such seeds.
    """

    def __init__(self, seed, n: int):
        if isinstance(seed, (list, tuple, np.ndarray)):
            if len(seed) != n:
                raise ValueError(f"got {len(seed)} seeds for {n} instances; pass one seed per instance "
                                 "(or a single int seed)")
            seqs = [s if isinstance(s, np.random.SeedSequence) else np.random.SeedSequence(int(s)) for s in seed]
        else:
            root = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
            seqs = [root] if n == 1 else [_child(root, i) for i in range(n)]
        self.n = n
        self.gens = [np.random.default_rng(_child(s, 0)) for s in seqs]
        self._normal = _Buffer([np.random.default_rng(_child(s, 1)) for s in seqs], "standard_normal")
        self._uniform = _Buffer([np.random.default_rng(_child(s, 2)) for s in seqs], "random")
        self._sub = None            # the rows of a view (`rows`), None for all of them

    def rows(self, rows: np.ndarray) -> Streams:
        """The streams of instances `rows` (distinct ints, in any order), as a Streams of len(rows) rows."""
        view = object.__new__(Streams)
        view.__dict__.update(self.__dict__, n=len(rows), gens=[self.gens[i] for i in np.asarray(rows).tolist()],
                             _sub=np.asarray(rows) if self._sub is None else self._sub[rows])
        return view

    def _shape(self, size) -> tuple[tuple[int, ...], int]:
        """(shape, values per stream) of a draw of `size` = N or (N, ...)."""
        size = tuple(size) if isinstance(size, (tuple, list)) else (int(size),)
        if size[0] != self.n:
            raise ValueError(f"draw of shape {size} from {self.n} streams: the first axis must be N")
        return size, math.prod(size[1:])

    def random(self, size) -> np.ndarray:
        """Uniform [0, 1) of shape `size` = (N, ...)."""
        size, k = self._shape(size)
        return self._uniform.take(k, self._sub).reshape(size)

    def standard_normal(self, size) -> np.ndarray:
        size, k = self._shape(size)
        return self._normal.take(k, self._sub).reshape(size)

    def normal(self, loc: float = 0.0, scale: float = 1.0, size=None) -> np.ndarray:
        return loc + scale * self.standard_normal(size)

    def integers(self, low, high=None, size=None) -> np.ndarray:
        """Integers uniform in [low, high) (or [0, low)), as floor of a scaled uniform."""
        low, high = (0, low) if high is None else (low, high)
        return low + (self.random(size) * (high - low)).astype(np.int64)

    # One instance (N = 1, or a view `rows` of one row): the same values as the draws above with size
    # (1, k) or 1, without their shape handling (what a one-instance round of agents.linear draws,
    # several times a round).
    def random1(self) -> float:
        """The next uniform, as `random(1)[0]`."""
        return (self._uniform.take1(1) if self._sub is None else self._uniform.take(1, self._sub)[0])[0]

    def standard_normal1(self, k: int) -> np.ndarray:
        """The next k standard normals (k,), as `standard_normal((1, k))[0]`."""
        return self._normal.take1(k) if self._sub is None else self._normal.take(k, self._sub)[0]

    def normal1(self, loc: float, scale: float, k: int) -> np.ndarray:
        """The next k normals N(loc, scale^2) (k,), as `normal(loc, scale, (1, k))[0]`."""
        return loc + scale * (self._normal.take1(k) if self._sub is None else self._normal.take(k, self._sub)[0])

    def integers1(self, high: int) -> int:
        """An integer uniform in [0, high), as `integers(high, size=1)[0]`."""
        return int((self._uniform.take1(1) if self._sub is None else self._uniform.take(1, self._sub)[0])[0] * high)


# First spawn-key element of the streams of `action_probs`' copies (the agent's own streams use 0-3).
PROBS_KEY = 0x0B5


def _child(seq: np.random.SeedSequence, i: int) -> np.random.SeedSequence:
    """The i-th child that seq.spawn() would give, without advancing seq (so reset() replays)."""
    return np.random.SeedSequence(seq.entropy, spawn_key=seq.spawn_key + (i,), pool_size=seq.pool_size)


def random_argmax(values: np.ndarray, rng, atol: float = 0.0) -> int | np.ndarray:
    """Index of the largest value along the last axis, ties broken uniformly at random.

    Works on (K,) -> int and on (N, K) -> (N,) int array. Values within `atol` of the maximum
    count as ties. A random number is drawn only for a row that has a tie, from `rng` (a
    Generator), or from that row's own stream when `rng` is a `Streams` or a list of one
    Generator per row, so instance i of a batched agent breaks its ties exactly as a single agent
    with instance i's seed would. NaN in `values` is an error: it means the agent's statistics
    are corrupt.
    """
    values = np.asarray(values)
    best = values.max(axis=-1, keepdims=True)
    if np.isnan(best).any():
        raise FloatingPointError("agent scores contain NaN; its statistics are corrupt (check rewards and features for NaN/inf)")
    ties = (values >= best - atol).reshape(-1, values.shape[-1])
    out = ties.argmax(axis=-1)
    if np.count_nonzero(ties) > len(ties):        # some row has a tie (the rare case)
        for row in np.flatnonzero(ties.sum(axis=-1) > 1):
            gen = rng.gens[row] if isinstance(rng, Streams) else rng[row] if isinstance(rng, list) else rng
            candidates = np.flatnonzero(ties[row])
            out[row] = candidates[gen.integers(len(candidates))]
    return int(out[0]) if values.ndim == 1 else out


def argmax_probs(values: np.ndarray, atol: float = 0.0) -> np.ndarray:
    """The distribution `random_argmax(values, rng, atol)` draws from: uniform over the maximisers of
    each row, (K,) or (N, K), with the same tie rule (within `atol` of the maximum)."""
    values = np.asarray(values, dtype=float)
    best = values.max(axis=-1, keepdims=True)
    if np.isnan(best).any():
        raise FloatingPointError("agent scores contain NaN; its statistics are corrupt (check rewards and features for NaN/inf)")
    ties = values >= best - atol
    return ties / ties.sum(axis=-1, keepdims=True)


# Rewards beyond this magnitude are rejected: squared and summed in float64 statistics they would
# overflow to inf and leave an agent acting on NaN (bandit rewards are O(1); rescale larger ones).
MAX_REWARD = 1e100


def check_feedback(action, reward, n: int, num_arms: int, single: bool) -> tuple[np.ndarray, np.ndarray]:
    """(actions (n,), rewards (n,)) of an `observe`, or a ValueError naming the problem: an int
    and a real number for a single agent (n = 1), (n,) int and real arrays for a batched one."""
    if single:
        a, y = check_single_feedback(action, reward, num_arms)
        return np.array([a]), np.array([y])
    a, y = np.asarray(action), np.asarray(reward)
    if a.shape != (n,) or a.dtype.kind not in "iu":
        raise ValueError(f"actions must be an int array of shape ({n},), got {a.dtype} {a.shape}")
    if y.shape != (n,) or y.dtype.kind not in "fiu":
        raise ValueError(f"rewards must be a real array of shape ({n},), got {y.dtype} {y.shape}")
    a, y = a.astype(np.int64, copy=False), y.astype(float, copy=False)
    if a.min() < 0 or a.max() >= num_arms:
        raise ValueError(f"action out of range for {num_arms} arms: got {a}")
    if not np.isfinite(y).all():
        bad = np.flatnonzero(~np.isfinite(y))
        raise ValueError(f"reward must be finite, got {y} (NaN or inf at instances {bad})")
    if np.abs(y).max() > MAX_REWARD:
        raise ValueError(_too_large_reward(np.abs(y).max()))
    return a, y


def check_rewards(y: np.ndarray) -> None:
    """A ValueError unless the rewards y (a float array) are finite and at most MAX_REWARD in magnitude
    (one reduction: the largest |y| is NaN when any is)."""
    top = np.abs(y).max(initial=0.0)
    if not top <= MAX_REWARD:
        if not np.isfinite(y).all():
            raise ValueError(f"reward must be finite, got {y}")
        raise ValueError(_too_large_reward(top))


def check_single_feedback(action, reward, num_arms: int) -> tuple[int, float]:
    """A single agent's (action, reward) as a Python int and float, or check_feedback's ValueError:
    the same checks on scalars, with no array made (a tenth of the cost, paid every round)."""
    try:
        a = operator.index(action)
    except TypeError:
        raise ValueError(f"action must be an integer arm index, got {action!r}") from None
    try:
        y = float(reward)
    except (TypeError, ValueError):
        raise ValueError(f"reward must be a real number, got {reward!r}") from None
    if not 0 <= a < num_arms:
        raise ValueError(f"action out of range for {num_arms} arms: got {a}")
    if not math.isfinite(y):
        raise ValueError(f"reward must be finite, got {y}")
    if abs(y) > MAX_REWARD:
        raise ValueError(_too_large_reward(abs(y)))
    return a, y


def _too_large_reward(top: float) -> str:
    return (f"reward {top:.3g} is too large for the agent's float64 statistics (|reward| must stay below "
            f"{MAX_REWARD:.0e}); rescale the rewards")


def seed_spec(seed) -> list[int] | np.random.SeedSequence:
    """A batched agent's `seed` checked: a list of ints (one per instance) stays a list; an int or
    None becomes one SeedSequence (None: fresh entropy drawn once, which reset() replays)."""
    if isinstance(seed, (list, tuple, np.ndarray)):
        if len(seed) == 0 or not all(isinstance(s, (int, np.integer)) for s in seed):
            raise ValueError("seed must be an int, None, or a non-empty sequence of ints (one per instance); "
                             f"got {seed!r}")
        return [int(s) for s in seed]
    return np.random.SeedSequence(seed)


def seed_sequences(seed, n: int) -> list[np.random.SeedSequence]:
    """One SeedSequence per instance, as `Streams` derives them (its streams are children 0-2):
    `seed` a list of n ints, or one SeedSequence (n = 1: itself; n > 1: its children)."""
    if isinstance(seed, list):
        if len(seed) != n:
            raise ValueError(f"obs holds {n} instances but the agent was given {len(seed)} seeds")
        return [np.random.SeedSequence(int(s)) for s in seed]
    return [seed] if n == 1 else [_child(seed, i) for i in range(n)]


class BaseAgent:
    """The one skeleton of every agent of the zoo: mode, seeds, validation, ties, reset, pickling.

    Mode. `act(obs)` takes the (K, d) arm features of one bandit run and returns an int, or the
    (N, K, d) features of N independent runs (the N seeds of a comparison) and returns (N,) ints;
    `observe(obs, action, reward)` takes the same obs with an int and a float, or (N,) arrays. The
    first obs fixes the mode, N and d until `reset()`. An agent with `batched = False` serves one
    run only. Internally everything is (N, ...) with N = 1 for a single run: a single agent is the
    N = 1 case of the batched code. (The linear and regression-oracle families add one-instance
    forms of their hooks for the round of a started single agent, the same arithmetic on 2-D arrays,
    held bit for bit to this code by tests: `agents.linear.LinearAgent`, `agents.oracle.OracleAgent`.)

    Seeds. `seed` is an int or None (one run, or spawned into N children), or a sequence of N ints,
    one per instance; instance i then makes exactly the draws of a single agent seeded seed[i].
    `seqs_` holds the N SeedSequences; `_seed(seqs)` turns them into the family's streams: numpy
    `Streams` (`rng_`) by default, per-instance torch (on the CPU) and numpy Generators for torch
    agents (`agents.neural.core.TorchAgent`). `seed=None` draws entropy once, so `reset()` replays the same run.

    Hyper-parameters. A class declares `params` (agents.params), the constructor stores every
    hyper-parameter unmodified as an attribute of the same name and calls
    `super().__init__(seed=seed, dim=dim)`, which validates them all in one place. Learned state
    lives in attributes ending in `_`.

    Subclasses provide `act` and `observe` on top of `_check_obs` (shape, dtype and mode),
    `_feedback` (actions and rewards), `_argmax` (random tie-breaking) and `_unwrap`; their state
    is built in `_start(X)` once the first obs fixes N and d.

    Propensities. `action_probs(obs)` gives the distribution of the next action, for off-policy
    evaluation: a family with a closed form provides `_probs(X)`, every other agent gets a
    Monte-Carlo estimate from reseeded copies (`_reseed`), which never touches its own streams.
    """

    batched = True
    probs_draws = 100       # Monte-Carlo copies behind `action_probs` for policies without a closed form
    torch_streams = False   # True: per-instance CPU torch Generators (gens_) and numpy ones for ties (rngs_)
    params: dict = {"dim": (Int(ge=1), None)}

    def __init__(self, *, seed=None, dim=None, **hyperparameters):
        self.__dict__.update(hyperparameters)
        self.seed, self.dim = seed, dim
        validate(self)
        self._check_params()
        self._seed_spec = seed_spec(seed)
        self.reset()

    def _check_params(self) -> None:
        """Rules that tie several hyper-parameters together (hook; each one alone is in `params`)."""

    @classmethod
    def reads_horizon(cls, kwargs: dict) -> bool:
        """Whether an agent built with `kwargs` reads its `horizon` hyper-parameter (a schedule or a
        confidence level sized by T); False for a class that takes none. A suite that gives agents
        the cell's horizon (`horizon_to_agents`) gives it only where it is read, so a configuration
        that leaves T unread (GLM-TSL's scale a set to a number, not "theory") plays, and is
        recorded, as it would be without it. A family whose T matters only for some settings says
        which (hook)."""
        return any(p.name == "horizon" for p in keyword_parameters(cls))

    @classmethod
    def setting(cls, kwargs: dict, name: str):
        """Hyper-parameter `name` as an agent built with `kwargs` holds it: given, or the default."""
        return kwargs[name] if name in kwargs else next(p.default for p in keyword_parameters(cls) if p.name == name)

    def reset(self) -> None:
        """Forget all data and restart the random streams: the agent behaves as when constructed."""
        self.n_ = None       # number of instances, fixed by the first obs
        self.single_ = None  # True when the first obs was (K, d)
        self.d_ = None
        self.seqs_ = None
        self.t_ = 0          # rounds observed
        if self.torch_streams:
            self.gens_ = self.rngs_ = None
        self._reset()

    def _reset(self) -> None:
        """Family state that exists before the first obs (hook of reset)."""

    # -- the mode -------------------------------------------------------------------------------
    def _check_obs(self, obs, finite: bool = False) -> np.ndarray:
        """obs as an (N, K, d) view after checking its shape and dtype against the agent's mode
        (and, with `finite`, that it holds no NaN or inf); the first obs starts the agent."""
        X = np.asarray(obs)
        if X.ndim == 2 and self.single_ and X.shape[1] == self.d_ and X.shape[0] and X.dtype.kind in "fiu":
            return check_finite(X)[None] if finite else X[None]      # a started single agent's usual obs
        if X.ndim == 3 and self.single_ is False and X.shape[0] == self.n_ and X.shape[2] == self.d_ and X.shape[1] \
                and X.dtype.kind in "fiu":
            return check_finite(X) if finite else X                  # a started batched agent's usual obs
        if X.ndim not in (2, 3) or 0 in X.shape:
            raise ValueError(f"obs must be the (K, d) arm-feature matrix, or (N, K, d) for N instances, with "
                             f"K, d >= 1; got shape {X.shape}")
        if X.dtype.kind not in "fiu":
            raise ValueError(f"obs must be a finite real array, got dtype {X.dtype}")
        single, X = X.ndim == 2, (X[None] if X.ndim == 2 else X)
        d = self.d_ if self.d_ is not None else self.dim
        if d is not None and X.shape[2] != d:
            raise ValueError(f"obs has d={X.shape[2]} features per arm but this agent was set up for dim={d}")
        if not single and not self.batched:
            raise ValueError(f"obs has shape {np.shape(obs)}: {type(self).__name__} serves one instance, so obs "
                             "must be the (K, d) arm features of one run")
        if self.n_ is not None and (single != self.single_ or X.shape[0] != self.n_):
            want = f"(K, {self.d_})" if self.single_ else f"({self.n_}, K, {self.d_})"
            raise ValueError(f"obs has shape {np.shape(obs)} but this agent started with obs of shape {want}; "
                             "call reset() to change")
        if finite:
            check_finite(X)
        if self.n_ is None:
            if isinstance(self._seed_spec, list) and len(self._seed_spec) != X.shape[0]:
                raise ValueError(f"obs holds {X.shape[0]} instances but the agent was given "
                                 f"{len(self._seed_spec)} seeds")
            self.n_, self.single_, self.d_ = X.shape[0], single, X.shape[2]
            self.seqs_ = seed_sequences(self._seed_spec, self.n_)
            try:
                self._seed(self.seqs_)
                self._start(X)
            except BaseException:
                self.reset()             # a first obs that cannot start the agent leaves it as it was
                raise
        return X

    def _seed(self, seqs: list[np.random.SeedSequence]) -> None:
        """The instances' random streams: numpy `Streams` (children 0-2 of each instance's seed), or
        with `torch_streams` a torch.Generator (child 0) and a numpy Generator for ties (child 1)
        per instance. The torch generators live on the CPU whatever the agent's device: a CUDA
        generator seeded alike gives other numbers, and the draws must not depend on the device."""
        if not self.torch_streams:
            self.rng_ = Streams(seqs, len(seqs))
            return
        import torch

        self.gens_, self.rngs_ = [], []
        for seq in seqs:            # children that do not advance seq: reset() replays them
            self.gens_.append(torch.Generator())
            self.gens_[-1].manual_seed(int(_child(seq, 0).generate_state(1, np.uint64)[0]))
            self.rngs_.append(np.random.default_rng(_child(seq, 1)))

    def _start(self, X: np.ndarray) -> None:
        """Build the learned state once the first obs X (N, K, d) fixes N and d."""

    def _feedback(self, X: np.ndarray, action, reward) -> tuple[np.ndarray, np.ndarray]:
        """(actions (N,), rewards (N,)) of an `observe`, checked against obs X (N, K, d); the chosen
        arms' features must be finite and below MAX_REWARD in magnitude (their squares enter the statistics)."""
        if self.single_:
            arm, y = check_single_feedback(action, reward, X.shape[1])
            a, y, x = np.array([arm]), np.array([y]), X[0, arm]
        else:
            a, y = check_feedback(action, reward, X.shape[0], X.shape[1], False)
            x = X[np.arange(len(a)), a]
        check_chosen(x)
        return a, y

    def _row_list(self, rows) -> list[int]:
        """`rows` as a list of distinct ints in [0, N), in the order given, or a ValueError naming the
        problem (on Python ints: a delivery holds a few rows, where numpy calls cost more than the test)."""
        r = np.asarray(rows)
        if r.ndim != 1 or (r.size and r.dtype.kind not in "iu"):
            raise ValueError(f"rows must be a 1-D array of instance indices, got {r.dtype} {r.shape}")
        r = r.tolist()
        if r and (min(r) < 0 or max(r) >= self.n_):
            raise ValueError(f"rows must lie in [0, {self.n_}) for {self.n_} instances, got {r}")
        if len(set(r)) != len(r):
            raise ValueError(f"rows must be distinct, got {r}: give an instance's several rewards in separate "
                             "calls, in the order they arrived")
        return r

    def _check_rows(self, rows) -> np.ndarray:
        """`rows` as increasing distinct int64s in [0, N), or `_row_list`'s ValueError."""
        return np.array(sorted(self._row_list(rows)), dtype=np.int64)

    def _rows_feedback(self, X: np.ndarray, action, reward, rows: np.ndarray) -> tuple[np.ndarray, ...]:
        """(actions, rewards, chosen features) of the instances `rows` (checked by `_check_rows`) of an
        `observe_rows(obs, action, reward, rows)`: action and reward are (N,) arrays of which only `rows`
        are read, checked as `_feedback` checks an `observe`'s."""
        a, y = np.asarray(action), np.asarray(reward)
        if a.shape != (self.n_,) or y.shape != (self.n_,):
            raise ValueError(f"actions and rewards must have shape ({self.n_},) (every instance's, of which only "
                             f"`rows` are read), got {a.shape} and {y.shape}")
        a, y = check_feedback(a[rows], y[rows], len(rows), X.shape[1], False)
        x = X[rows, a]
        check_chosen(x)
        return a, y, x

    def _ties(self):
        """What `random_argmax` draws from: one Generator per instance (or a `Streams`)."""
        return self.rngs_ if self.torch_streams else self.rng_

    def _argmax(self, scores: np.ndarray) -> np.ndarray:
        """Greedy arm of each row of the (N, K) scores, ties uniform with the instance's own stream.

        The usual case, one maximiser per row, is told cheaply: argmax from the front and from
        the back agree, and the maximum is not NaN (argmax stops at the first NaN). Then
        `random_argmax` would draw nothing and return the same; every other case goes to it.
        """
        if len(scores) == 1:
            row = scores[0]
            a = row.argmax()
            if a + row[::-1].argmax() == len(row) - 1 and not math.isnan(row[a]):   # from the end: the last maximiser
                return np.array([a])
        else:
            first = scores.argmax(axis=1)
            if ((first + scores[:, ::-1].argmax(axis=1)) == scores.shape[1] - 1).all() and not np.isnan(scores.max()):
                return first
        return random_argmax(scores, self._ties())

    def _unwrap(self, values: np.ndarray):
        """An (N,) result as the caller's mode wants it: a Python int for a single agent."""
        return values[0].item() if self.single_ else values

    # -- propensities ---------------------------------------------------------------------------
    def action_probs(self, obs, draws: int | None = None) -> np.ndarray:
        """The distribution the next `act(obs)` draws its arm from: (K,) for obs (K, d), (N, K) for obs (N, K, d).

        Exact where the policy has a closed form (`_probs`: Random, epsilon-greedy, Softmax, and the index
        agents that act greedily on deterministic scores, ties split evenly among the maximisers).
        Otherwise (Thompson sampling, ensembles, perturbed histories, ...) a Monte-Carlo estimate:
        the share of `draws` (default `probs_draws`) copies of the agent, each with its random
        streams reseeded from the agent's own seed, the round and the copy's index, that pick each
        arm. The estimate is therefore reproducible, and the agent itself is left untouched: its
        streams are not consumed and its state (forced-exploration counters, warm starts, the
        first obs that starts it) does not change, so logging propensities never changes a run.
        """
        agent = self if self.n_ is not None else copy.deepcopy(self)   # a first obs would start self
        X = agent._check_obs(obs)
        probs = agent._probs(X)
        if probs is None:
            probs = agent._sampled_probs(obs, self.probs_draws if draws is None else draws)
        return probs[0] if agent.single_ else probs

    def _probs(self, X: np.ndarray) -> np.ndarray | None:
        """The (N, K) closed-form distribution of the next action on X (N, K, d), computed without
        changing the agent; None (the default) when the policy has none and must be sampled."""
        return None

    def _sampled_probs(self, obs, draws: int, salt: int = 0) -> np.ndarray:
        """(N, K) frequencies of the arms that `draws` reseeded copies of this agent pick on obs.
        `salt` tells independent sets of copies apart (agents.checks compares two)."""
        if not (isinstance(draws, (int, np.integer)) and draws >= 1):
            raise ValueError(f"draws must be a positive integer, got {draws!r}")
        agent = self if self.n_ is not None else copy.deepcopy(self)
        agent._check_obs(obs)
        counts = np.zeros((agent.n_, np.shape(obs)[-2]))
        rows, observed = np.arange(agent.n_), [int(t) for t in agent._observed()]
        for j in range(draws):
            twin = copy.deepcopy(agent)
            twin._reseed([np.random.SeedSequence(s.entropy, spawn_key=s.spawn_key + (PROBS_KEY, salt, t, j),
                                                 pool_size=s.pool_size) for s, t in zip(agent.seqs_, observed)])
            counts[rows, np.reshape(twin.act(obs), -1)] += 1
        return counts / draws

    def _observed(self):
        """The rewards each instance has observed ((N,) ints): the round of its propensities' copies."""
        return [self.t_] * self.n_

    def _reseed(self, seqs: list[np.random.SeedSequence]) -> None:
        """Replace every random stream the agent draws from by streams of `seqs` (one per instance),
        keeping its learned state. A family that seeds more than `_seed` does extends this."""
        self.seqs_ = seqs
        self._seed(seqs)

    def __getstate__(self) -> dict:
        """Pickle torch generators as their states (torch.Generator pickles only in recent torch)."""
        state = self.__dict__.copy()
        if state.get("gens_") is not None:
            state["gens_"] = [g.get_state() for g in state["gens_"]]
        return state

    def __setstate__(self, state: dict) -> None:
        if state.get("gens_") is not None:
            import torch

            gens = []
            for g_state in state["gens_"]:
                gens.append(torch.Generator())
                gens[-1].set_state(g_state)
            state = dict(state, gens_=gens)
        self.__dict__.update(state)


def hyperparameters(local_vars: dict) -> dict:
    """A constructor's keyword arguments from its `locals()`, for `super().__init__(**hyperparameters(locals()))`."""
    return {k: v for k, v in local_vars.items() if k not in ("self", "__class__")}


def check_chosen(x: np.ndarray) -> None:
    """A ValueError unless the chosen arms' features x (any shape) are finite and at most MAX_REWARD in
    magnitude (their squares enter the agent's float64 statistics).

    One dot product settles the usual float64 case: a sum of squares <= 1e199 puts every |x_i|
    below 3.2e99 < MAX_REWARD (NaN and inf fail the test); only otherwise, or for other float
    dtypes (whose squares may overflow), the exact test runs. Integers are always finite and in bounds.
    """
    if x.dtype is F64 and vdot(x, x) <= 1e199:       # the usual case, told by the cheapest tests
        return
    if x.dtype.kind == "f" and (x.dtype.itemsize != 8 or not vdot(x, x) <= 1e199):   # (ndarray.dot warns on overflow)
        top = float(np.abs(x).max())   # as a float64: 1e100 is inf in float32
        if not math.isfinite(top):
            raise ValueError("obs: the chosen arm's features contain NaN or inf (they must be finite)")
        if top > MAX_REWARD:
            raise ValueError(f"obs: the chosen arm's features reach {top:.3g}, too large for the agent's "
                             f"float64 statistics (|x| must stay below {MAX_REWARD:.0e}); rescale the features")


def check_finite(X: np.ndarray) -> np.ndarray:
    """X itself, or a ValueError if it holds NaN or inf (one sum in the usual, finite case)."""
    if not math.isfinite(X.sum()) and not np.isfinite(X).all():
        raise ValueError("obs must be a finite real array (found NaN or inf)")
    return X


REGISTRY: dict[str, Callable[..., Any]] = {}


def register(name: str) -> Callable:
    """Class decorator: make the agent available as `agents.make(name)`."""

    def wrap(cls):
        if name in REGISTRY:
            raise ValueError(f"agent name {name!r} registered twice ({REGISTRY[name]} and {cls})")
        REGISTRY[name] = cls
        return cls

    return wrap


class UnknownAgent(KeyError, ValueError):
    """An agent name that is not registered: a KeyError for a lookup, a ValueError for bad input."""

    def __str__(self) -> str:
        return str(self.args[0])


def did_you_mean(name: str, known, strip: str = "") -> str:
    """' Did you mean 'X'?' for the registered names closest to `name` (case-insensitive, compared
    without the common prefix `strip`), or ''."""
    lower = {k.lower().removeprefix(strip.lower()): k for k in known}
    close = difflib.get_close_matches(name.lower().removeprefix(strip.lower()), list(lower), n=3, cutoff=0.6)
    return f" Did you mean {' or '.join(repr(lower[c]) for c in close)}?" if close else ""


def _registered(name: str):
    """The registry entry of `name`, or an UnknownAgent naming the closest registered names."""
    try:
        return REGISTRY[name]
    except KeyError:
        raise UnknownAgent(f"unknown agent {name!r}.{did_you_mean(name, REGISTRY)} `ctxbandits list` (or "
                           f"agents.REGISTRY) lists the {len(REGISTRY)} registered agents (an agent of your own "
                           "module: `ctxbandits run --import MODULE`).") from None


def agent_class(name: str):
    """The class (or factory) registered under `name`; a lazy entry (a torch agent's) imports it here."""
    entry = _registered(name)
    return entry.cls() if hasattr(entry, "cls") else entry


def hyperparameter_names(name: str) -> list[str]:
    """The keyword arguments the agent registered under `name` takes (a torch agent's entry imports
    torch here), e.g. to tell whether it takes a `device`."""
    target = agent_class(name)
    names = [p.name for p in (keyword_parameters(target) if isinstance(target, type) else
                              inspect.signature(target).parameters.values())]
    return [p for p in names if p not in ("family", "hyperparameters")]


def reads_horizon(name: str, kwargs: dict) -> bool:
    """Whether the agent registered under `name`, built with `kwargs`, reads a `horizon`: its class's
    `BaseAgent.reads_horizon`, or, for an agent of one's own that is not a BaseAgent, whether it
    takes one."""
    target = agent_class(name)
    if isinstance(target, type) and issubclass(target, BaseAgent):
        return target.reads_horizon(kwargs)
    return "horizon" in hyperparameter_names(name)


def make(name: str, **kwargs: Any):
    """Build the agent registered under `name` (a paper's name, e.g. 'LinUCB', 'GLM-TSL')."""
    cls = _registered(name)
    try:
        return cls(**kwargs)
    except TypeError as err:
        if "unexpected keyword argument" not in str(err):
            raise
        valid = hyperparameter_names(name)
        bad = sorted(set(kwargs) - set(valid))
        raise ValueError(f"agent {name!r} has no hyper-parameter {', '.join(map(repr, bad)) or str(err)}; "
                         f"its hyper-parameters are {', '.join(valid)}") from None
