"""The agent protocol, the one random tie-breaking helper, and the registry behind `agents.make`.

Agents see only arrays: `obs` is the (K, d) arm-feature matrix of a round (or (N, K, d) for a
batched agent serving N independent instances). They never hold an environment nor see `info`.
"""

from __future__ import annotations

from typing import Any, Callable, Protocol, runtime_checkable

import numpy as np


@runtime_checkable
class Agent(Protocol):
    """What every policy of the zoo provides.

    Optional capabilities are discovered with `hasattr`: `action_probs(obs)`, batched
    `act(obs[N, K, d]) -> actions[N]` (attribute `batched = True`), `state_dict()` /
    `load_state_dict()`.
    """

    def act(self, obs: np.ndarray) -> int: ...

    def observe(self, obs: np.ndarray, action: int, reward: float) -> None: ...

    def reset(self) -> None: ...


class Streams:
    """N independent random streams behind one Generator-like interface, for batched agents.

    Every draw has a leading axis of length N, and row i comes from stream i alone (each stream
    draws a (1, ...) array and the rows are stacked). So a batched agent seeded with seeds
    s_1..s_N makes exactly the draws of N single agents seeded s_1..s_N, which is what lets the
    run loop use batched agents and the plain loop interchangeably. With N = 1 the draw goes
    straight to the one Generator (no copy).

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
            # the children root.spawn(n) would give, without advancing root (so reset() replays them)
            seqs = [root] if n == 1 else [np.random.SeedSequence(root.entropy, spawn_key=root.spawn_key + (i,))
                                          for i in range(n)]
        self.gens = [np.random.default_rng(s) for s in seqs]

    def _draw(self, method: str, size, *args) -> np.ndarray:
        size = (size,) if np.ndim(size) == 0 else tuple(size)
        if size[0] != len(self.gens):
            raise ValueError(f"draw of shape {size} from {len(self.gens)} streams: the first axis must be N")
        if len(self.gens) == 1:
            return getattr(self.gens[0], method)(*args, size=size)
        return np.concatenate([getattr(g, method)(*args, size=(1,) + size[1:]) for g in self.gens])

    def random(self, size) -> np.ndarray:
        return self._draw("random", size)

    def standard_normal(self, size) -> np.ndarray:
        return self._draw("standard_normal", size)

    def normal(self, loc: float = 0.0, scale: float = 1.0, size=None) -> np.ndarray:
        return self._draw("normal", size, loc, scale)

    def integers(self, low, high=None, size=None) -> np.ndarray:
        return self._draw("integers", size, low, high)


def random_argmax(values: np.ndarray, rng, atol: float = 0.0) -> int | np.ndarray:
    """Index of the largest value along the last axis, ties broken uniformly at random.

    Works on (K,) -> int and on (N, K) -> (N,) int array. Values within `atol` of the maximum
    count as ties. A random number is drawn only for a row that has a tie, from `rng` (a
    Generator), or from that row's own stream when `rng` is a `Streams`, so instance i of a
    batched agent breaks its ties exactly as a single agent with instance i's seed would.
    NaN in `values` is an error: it means the agent's statistics are corrupt.
    """
    values = np.asarray(values)
    best = values.max(axis=-1, keepdims=True)
    if np.isnan(best).any():
        raise FloatingPointError("agent scores contain NaN; its statistics are corrupt (check rewards and features for NaN/inf)")
    ties = (values >= best - atol).reshape(-1, values.shape[-1])
    out = ties.argmax(axis=-1)
    for row in np.flatnonzero(ties.sum(axis=-1) > 1):
        gen = rng.gens[row] if isinstance(rng, Streams) else rng
        candidates = np.flatnonzero(ties[row])
        out[row] = candidates[gen.integers(len(candidates))]
    return int(out[0]) if values.ndim == 1 else out


REGISTRY: dict[str, Callable[..., Any]] = {}


def register(name: str) -> Callable:
    """Class decorator: make the agent available as `agents.make(name)`."""

    def wrap(cls):
        if name in REGISTRY:
            raise ValueError(f"agent name {name!r} registered twice ({REGISTRY[name]} and {cls})")
        REGISTRY[name] = cls
        return cls

    return wrap


def make(name: str, **kwargs: Any):
    """Build the agent registered under `name` (a paper's name, e.g. 'LinUCB', 'GLM-TSL')."""
    try:
        cls = REGISTRY[name]
    except KeyError:
        known = ", ".join(sorted(REGISTRY)) or "(none registered)"
        raise KeyError(f"unknown agent {name!r}; known agents: {known}") from None
    return cls(**kwargs)
