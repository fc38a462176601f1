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


def random_argmax(values: np.ndarray, rng: np.random.Generator, atol: float = 0.0) -> int | np.ndarray:
    """Index of the largest value along the last axis, ties broken uniformly at random.

    Works on (K,) -> int and on (N, K) -> (N,) int array. Values within `atol` of the maximum
    count as ties. NaN in `values` is an error: it means the agent's statistics are corrupt.
    """
    values = np.asarray(values)
    best = values.max(axis=-1, keepdims=True)
    if np.isnan(best).any():
        raise FloatingPointError("agent scores contain NaN; its statistics are corrupt (check rewards and features for NaN/inf)")
    ties = values >= best - atol
    # A uniform key per candidate, -1 for non-candidates: the argmax is uniform among ties.
    keys = np.where(ties, rng.random(values.shape), -1.0)
    out = keys.argmax(axis=-1)
    return int(out) if out.ndim == 0 else out


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
