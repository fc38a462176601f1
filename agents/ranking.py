"""Ranking agents (issue 50): the common base, and two lifts of any one-arm zoo agent to rankings.

A ranking env shows L candidate items a round, as their features obs (L, d) (one-hot ids, the
(L, L) identity, for non-contextual click models), and takes an ordered list of K distinct items
(position 0 is the top). A ranking agent (class attribute `kind = "ranking"`) answers

    act(obs (L, d)) -> (K,) int array          batched: act(obs (N, L, d)) -> (N, K)
    observe(obs, ranking, clicks)              clicks: the env's info["clicks"], (K,) or (N, K) 0/1

and infers what the user examined from its own click model (a cascade agent: the positions up to
and including the first click, all K when there is none; `cascade_examined`). The number of
positions K is the hyper-parameter `num_positions` (the runner passes the env's); an agent without
it fails at its first act with a message that says so. Seeds, modes (single or N instances),
validation, reset and pickling are `agents.base.BaseAgent`'s: a batched agent seeded [s_1..s_N]
gives instance i exactly the lists of a single agent seeded s_i.

Ties between items break at random through one helper, `random_ranking`: every round it draws one
uniform per item from the instance's own stream and sorts by (score desc, uniform), so the draws
do not depend on the scores and instance i's lists never depend on the others.
"""

from __future__ import annotations

import inspect

import numpy as np
from scipy.special import xlogy

from agents.base import BaseAgent, Streams, _child, agent_class, make, register
from agents.params import Int, Str

__all__ = ["RankedBandits", "RankingAgent", "TopK", "bernoulli_kl", "cascade_examined", "random_ranking"]


def random_ranking(scores: np.ndarray, K: int, rng: Streams) -> np.ndarray:
    """The K items of largest score in each row of scores (N, L), best first, as (N, K) int64;
    ties in uniformly random order (one uniform per item from each instance's stream, drawn every
    call). NaN scores are an error: the agent's statistics are corrupt."""
    if np.isnan(scores).any():
        raise FloatingPointError("item scores contain NaN; the agent's statistics are corrupt "
                                 "(check clicks and features for NaN/inf)")
    u = rng.random(scores.shape)
    return np.lexsort((u, -scores), axis=-1)[:, :K]


def cascade_examined(clicks: np.ndarray) -> np.ndarray:
    """Which positions a cascade user examined, (N, K) bool from 0/1 clicks (N, K): every position up
    to and including the first click, all K when there is none (Kveton et al. 2015, §2: the user
    scans the list top down and stops at the first attractive item), i.e. the positions with no
    click above them."""
    return np.cumsum(clicks, axis=1) - clicks == 0


def bernoulli_kl(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """d(p, q) = p log(p/q) + (1-p) log((1-p)/(1-q)), the Bernoulli KL divergence (0 log 0 = 0)."""
    return xlogy(p, p) - xlogy(p, q) + xlogy(1 - p, 1 - p) - xlogy(1 - p, 1 - q)


class RankingAgent(BaseAgent):
    """The one skeleton of the ranking agents: `act` returns the list, `observe` takes the clicks.

    Subclasses store their hyper-parameters, call `super().__init__(num_positions=..., seed=...,
    dim=...)`, and provide `_start(X)` (state for N instances of L items, from the first obs X
    (N, L, d)), `_rank(X) -> (N, K)` int64 lists and `_update(X, A, C)` (A the (N, K) lists shown,
    C the (N, K) float clicks, both checked). `K_` and `L_` are fixed by the first obs.
    """

    kind = "ranking"
    params = {"num_positions": (Int(ge=1), None)}

    def __init__(self, *, num_positions: int | None = None, seed=None, dim: int | None = None, **hyperparameters):
        super().__init__(num_positions=num_positions, seed=seed, dim=dim, **hyperparameters)

    def _reset(self) -> None:
        self.K_ = self.L_ = None

    def _check_obs(self, obs, finite: bool = True) -> np.ndarray:
        """obs as (N, L, d), checked as BaseAgent checks it (finite, too), with L fixed by the first obs
        and at least num_positions items; the first obs starts the agent."""
        if self.n_ is None:
            X = np.asarray(obs)
            if self.num_positions is None:
                raise ValueError(f"{type(self).__name__} needs num_positions, the number K of positions of the "
                                 "list it ranks: pass num_positions=K (the runner passes the env's)")
            if X.ndim in (2, 3) and X.shape[-2] < self.num_positions:
                raise ValueError(f"obs shows {X.shape[-2]} items but num_positions={self.num_positions}: a list "
                                 "of K distinct items needs K <= L; lower num_positions")
            self.K_ = self.num_positions
            if X.ndim in (2, 3):
                self.L_ = X.shape[-2]
        X = super()._check_obs(obs, finite=finite)
        if X.shape[1] != self.L_:
            raise ValueError(f"obs shows {X.shape[1]} items but this agent started with {self.L_}; "
                             "call reset() to change")
        return X

    def act(self, obs: np.ndarray) -> np.ndarray:
        """The list of K distinct items, best first: (K,) ints for obs (L, d), (N, K) for obs (N, L, d)."""
        A = self._rank(self._check_obs(obs))
        return A[0] if self.single_ else A

    def observe(self, obs: np.ndarray, ranking, clicks) -> None:
        """Learn from the clicks (K,) (or (N, K)) on the list `ranking` shown on obs."""
        X = self._check_obs(obs)
        A, C = self._ranking_feedback(ranking, clicks)
        self._update(X, A, C)
        self.t_ += 1

    @property
    def action_probs(self):
        """Not offered: a ranking agent's action is a list, whose distribution has no (K,) form
        (an AttributeError, so `hasattr(agent, "action_probs")` is False)."""
        raise AttributeError(f"{type(self).__name__} is a ranking agent and offers no action_probs")

    def _ranking_feedback(self, ranking, clicks) -> tuple[np.ndarray, np.ndarray]:
        """(lists (N, K) int64, clicks (N, K) float) of an observe, or a ValueError naming the problem."""
        shape = (self.K_,) if self.single_ else (self.n_, self.K_)
        A, C = np.asarray(ranking), np.asarray(clicks)
        if A.shape != shape or A.dtype.kind not in "iu":
            raise ValueError(f"ranking must be an int array of shape {shape} (the list act returned), "
                             f"got {A.dtype} {A.shape}")
        if C.shape != shape or C.dtype.kind not in "biuf":
            raise ValueError(f"clicks must be a 0/1 array of shape {shape} (the env's info['clicks']), "
                             f"got {C.dtype} {C.shape}")
        A, C = A.reshape(-1, self.K_).astype(np.int64, copy=False), C.reshape(-1, self.K_).astype(float)
        if A.size <= 256:           # a few lists: Python sets cost less than numpy's reductions
            lists, values = A.tolist(), set(C.ravel().tolist())
            out = any(min(r) < 0 or max(r) >= self.L_ for r in lists)
            repeats = any(len(set(r)) != self.K_ for r in lists)
            not01 = not values <= {0.0, 1.0}
        else:
            ordered = np.sort(A, axis=1)
            out = ordered[:, 0].min() < 0 or ordered[:, -1].max() >= self.L_
            repeats = bool((ordered[:, 1:] == ordered[:, :-1]).any())
            not01 = not ((C == 0.0) | (C == 1.0)).all()
        if out:
            raise ValueError(f"ranking holds items out of range [0, {self.L_}): {A.tolist()}")
        if repeats:
            raise ValueError(f"ranking repeats an item: {A.tolist()}; a list holds K distinct items")
        if not01:
            raise ValueError(f"clicks must be 0 or 1 per position, got {C.tolist()}")
        return A, C

    def _flat(self, A: np.ndarray) -> np.ndarray:
        """The (N, K) lists as indices into an (N, L) array's flat view (distinct within a row, so
        `state.reshape(-1)[flat] += values` adds each value once)."""
        return A + np.arange(0, self.n_ * self.L_, self.L_)[:, None]

    def _int_seeds(self, key: int) -> list[int]:
        """One int seed per instance for an inner agent: child `key` of each instance's SeedSequence
        (keys from 8 on; the agent's own streams use 0-2)."""
        return [int(_child(s, key).generate_state(1, np.uint64)[0]) for s in self.seqs_]

    def _inner(self, name: str, kwargs: dict | None, key: int):
        """A zoo agent for N instances, seeded from this agent's seeds (so batched equals singles)."""
        seeds = self._int_seeds(key)
        return make(name, **dict(kwargs or {}), seed=seeds[0] if self.single_ else seeds)


class Kwargs:
    """A dict of keyword arguments (an inner agent's hyper-parameters), as an agents.params rule."""

    def accepts(self, value) -> bool:
        return isinstance(value, dict) and all(isinstance(k, str) for k in value)

    def __str__(self) -> str:
        return "a dict of keyword arguments"


def _check_inner(name: str, kwargs: dict | None) -> None:
    """A ValueError unless `name` is a registered one-arm agent (a lift takes a K-armed agent) and its
    kwargs leave the seed to the lift."""
    if getattr(agent_class(name), "kind", "arm") != "arm":
        raise ValueError(f"agent={name!r} is a ranking agent; the lift takes a one-arm zoo agent, e.g. 'UCB1'")
    if kwargs and "seed" in kwargs:
        raise ValueError("agent_kwargs must not hold a seed: the lift seeds its inner agents from its own `seed`")


class _Lift(RankingAgent):
    """What the two lifts of a one-arm agent share: the inner agent's name and kwargs, checked at once."""

    params = {"agent": Str(), "agent_kwargs": (Kwargs(), None)}

    def __init__(self, *, agent: str = "UCB1", agent_kwargs: dict | None = None, num_positions: int | None = None,
                 seed=None, dim: int | None = None):
        self.agent, self.agent_kwargs = agent, agent_kwargs
        super().__init__(num_positions=num_positions, seed=seed, dim=dim)

    def _check_params(self) -> None:
        _check_inner(self.agent, self.agent_kwargs)


@register("RankedBandits")
class RankedBandits(_Lift):
    """Ranked bandits (Radlinski, Kleinberg, Joachims 2008, "Learning diverse rankings with multi-armed
    bandits", Alg. 1 RBA): one one-arm zoo agent per position, each choosing among all L items.

    Round t: the slot-k agent picks b_k = act(obs); when b_k was already placed above, position k
    shows an arbitrary unused item instead (here: uniform among the unused, from the instance's
    stream). Feedback: the slot-k agent observes (obs, b_k, f_k), f_k = 1 when the item shown at k is
    its own pick and was clicked, else 0 (a replaced pick is rewarded 0, the paper's rule).

    The paper's analysis takes any MAB algorithm (EXP3 for its adversarial bound); the default slot
    agent is UCB1 on the items' row indices (one-hot ids); a contextual one (LinUCB, LinTS, ...)
    reads the items' features.

    Args:
        agent: the registered name of the slot agents (a one-arm zoo agent).
        agent_kwargs: their hyper-parameters (a dict, or None).
    """


    def _start(self, X):
        self.slots_ = [self._inner(self.agent, self.agent_kwargs, 8 + k) for k in range(self.K_)]
        self.picks_ = None

    def _rank(self, X):
        obs = X[0] if self.single_ else X
        picks = np.stack([np.reshape(slot.act(obs), -1) for slot in self.slots_], axis=1)     # (N, K)
        A = picks.copy()
        u = self.rng_.random((self.n_, self.K_))         # one uniform per position, drawn every round
        for k in range(1, self.K_):                      # top down: a pick already shown above is replaced
            for i in np.flatnonzero((A[:, :k] == A[:, k:k + 1]).any(axis=1)):
                unused = np.setdiff1d(np.arange(self.L_), A[i, :k])
                A[i, k] = unused[int(u[i, k] * len(unused))]
        self.picks_ = picks
        return A

    def _update(self, X, A, C):
        if self.picks_ is None:
            raise ValueError("observe before act: RankedBandits rewards each slot's own pick, so observe the list "
                             "its last act returned")
        obs = X[0] if self.single_ else X
        for k, slot in enumerate(self.slots_):
            f = np.where(self.picks_[:, k] == A[:, k], C[:, k], 0.0)
            if self.single_:
                slot.observe(obs, int(self.picks_[0, k]), float(f[0]))
            else:
                slot.observe(obs, self.picks_[:, k], f)


@register("TopK")
class TopK(_Lift):
    """Top-K by a one-arm zoo agent's scores: the list is the K items of largest score, best first.

    The scores are the agent's arm indices where it has them (`_scores`, e.g. UCB1's or LinUCB's
    UCBs, a LinTS sample; numpy agents on agents.BaseAgent), else its `action_probs(obs)`. The
    default agent is UCB1 on the items' row indices (one-hot ids). Ties break at
    random (`random_ranking`). Feedback: the inner agent observes the top position only, (obs,
    item at position 0, click at position 0), one observation a round as in its own one-arm
    problem: the top position is examined under the cascade and position-based models alike, so
    its click is an unbiased draw of the item's attraction (times kappa_1 under the PBM); lower
    positions' clicks depend on the items above them and are not fed to it.

    Args:
        agent: the registered name of the inner agent (a one-arm agent).
        agent_kwargs: its hyper-parameters (a dict, or None).
    """


    def _start(self, X):
        self.inner_ = inner = self._inner(self.agent, self.agent_kwargs, 8)
        # _scores(X) (the linear families) or _scores() (the K-armed agents of agents.mab), or none
        self.reads_scores_ = (None if not (hasattr(inner, "_scores") and isinstance(inner, BaseAgent))
                              or inner.torch_streams else bool(inspect.signature(inner._scores).parameters))

    def _rank(self, X):
        inner, obs = self.inner_, X[0] if self.single_ else X
        if self.reads_scores_ is None:
            scores = inner.action_probs(obs)
        else:
            Xi = inner._check_obs(obs, finite=True)
            scores = inner._scores(Xi) if self.reads_scores_ else inner._scores()
        return random_ranking(np.asarray(scores, dtype=float).reshape(self.n_, self.L_), self.K_, self.rng_)

    def _update(self, X, A, C):
        if self.single_:
            self.inner_.observe(X[0], int(A[0, 0]), float(C[0, 0]))
        else:
            self.inner_.observe(X, A[:, 0], C[:, 0])
