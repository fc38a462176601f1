"""Anytime versions of horizon-dependent ensemble agents by the doubling trick ([S0] §6, App. E).

The base agent is fully restarted (data and models discarded) after rounds T_i = floor(T0 b^i),
i = 0, 1, ...; epoch i has length tau_0 = T0, tau_i = T_i - T_{i-1}, and the epoch's agent is
built for that horizon: ensemble size m = max(1, round(m_per_log ln tau_i)) and perturbation
std sigma_R = sigma_per_log ln tau_i ([S0] §7.2: 2 ln tau_i and 0.02 ln tau_i; natural log).
With b = (3 + sqrt 5)/2 and T0 >= 100 the regret bound grows by at most l(T0, b) ~ 3.3 (Thm 6.1).
"""

from __future__ import annotations

import math
from typing import Any, Callable, Mapping

import numpy as np

from agents.base import REGISTRY, did_you_mean, seed_spec

GOLDEN_B = (3 + 5**0.5) / 2


def doubling_constant(T0: float, b: float, gamma: float = 0.5, delta: float = 1.5) -> float:
    """Regret-bound factor l(T0, b) of the doubling trick ([S0] Lemma E.1, Besson & Kaufmann 2018 Thm 4).

    l = (log(T0 (b-1) + 1) / log(T0 (b-1)))^delta * b^gamma (b-1)^gamma / (b^gamma - 1); for
    regret O(sqrt(T) log(T)^{3/2}) (gamma = 1/2, delta = 3/2) and b = (3 + sqrt 5)/2 it is ~3.3.
    """
    x = T0 * (b - 1)
    return (math.log(x + 1) / math.log(x)) ** delta * b**gamma * (b - 1) ** gamma / (b**gamma - 1)


def epoch_ends(T0: int, b: float, count: int) -> list[int]:
    """The first `count` restart points T_i = floor(T0 b^i)."""
    return [math.floor(T0 * b**i) for i in range(count)]


class DoublingTrick:
    """Anytime wrapper: restarts `factory(m=..., sigma_R=..., seed=..., **agent_kwargs)` each epoch.

    Args:
        factory: an ensemble agent class (or any callable, or a registered name such as "Lin-ES")
            taking keywords `m`, `sigma_R` and `seed`.
        T0: length of the first epoch ([S0]: 100 or 300; theory T0 >= 100).
        b: growth factor of the epochs (default and optimum (3 + sqrt 5)/2, [S0] Thm 6.1).
        m_per_log, sigma_per_log: m and sigma_R per unit of ln tau_i ([S0] §7.2: 2 and 0.02).
        agent_kwargs: further keywords for every epoch's agent.
        seed: seed of the wrapper's generator, which draws each epoch agent's seed; or a list of N
            seeds when the base agent is batched: then each instance has its own generator, each
            epoch's agent is seeded with the N draws, and instance i makes the choices of a
            wrapper seeded seed[i].
    """

    def __init__(self, factory: Callable[..., Any] | str, *, T0: int = 100, b: float = GOLDEN_B,
                 m_per_log: float = 2.0, sigma_per_log: float = 0.02,
                 agent_kwargs: Mapping[str, Any] | None = None, seed: int | None = None):
        if not (isinstance(T0, (int, np.integer)) and T0 >= 1):
            raise ValueError(f"T0 must be a positive integer, got {T0!r}")
        if not (b > 1 and T0 * (b - 1) >= 1):
            raise ValueError(f"need b > 1 and T0 (b - 1) >= 1 so that every epoch has a round, got T0={T0}, b={b}")
        if isinstance(factory, str) and factory not in REGISTRY:
            raise ValueError(f"unknown agent {factory!r}.{did_you_mean(factory, REGISTRY)}")
        self.factory, self.T0, self.b = factory, T0, b
        self.m_per_log, self.sigma_per_log = m_per_log, sigma_per_log
        self.agent_kwargs, self.seed = agent_kwargs, seed
        self._seed_spec = seed_spec(seed)
        self.reset()

    def _epoch_kwargs(self) -> dict:
        """Keywords every epoch's agent gets besides m, sigma_R and seed."""
        return dict(self.agent_kwargs or {})

    def _start_epoch(self, tau: int) -> None:
        factory = REGISTRY[self.factory] if isinstance(self.factory, str) else self.factory
        log_tau = math.log(tau)
        self.tau_ = tau
        self.agent_ = factory(m=max(1, round(self.m_per_log * log_tau)), sigma_R=self.sigma_per_log * log_tau,
                              seed=self._epoch_seed(), **self._epoch_kwargs())

    def _epoch_seed(self) -> int | list[int]:
        seeds = [int(rng.integers(2**63)) for rng in self.rng_]
        return seeds if isinstance(self._seed_spec, list) else seeds[0]

    def reset(self) -> None:
        """Back to round 1 of epoch 0 with the generator restarted from `seed`."""
        seeds = self._seed_spec if isinstance(self._seed_spec, list) else [self._seed_spec]
        self.rng_ = [np.random.default_rng(s) for s in seeds]
        self.t_ = 0
        self.epoch_ = 0
        self.end_ = self.T0  # T_i, the last round of the current epoch
        self._start_epoch(self.T0)

    def act(self, obs: np.ndarray) -> int:
        """The current epoch's agent's action."""
        return self.agent_.act(obs)

    def action_probs(self, obs: np.ndarray, draws: int | None = None) -> np.ndarray:
        """The current epoch's agent's action distribution (`agents.BaseAgent.action_probs`)."""
        return self.agent_.action_probs(obs, draws)

    def _sampled_probs(self, obs: np.ndarray, draws: int, salt: int = 0) -> np.ndarray:
        return self.agent_._sampled_probs(obs, draws, salt)

    def observe(self, obs: np.ndarray, action: int, reward: float) -> None:
        """Feed the current epoch's agent; restart with the next epoch's horizon after round T_i."""
        self.agent_.observe(obs, action, reward)
        self.t_ += 1
        if self.t_ >= self.end_:
            self.epoch_ += 1
            end = math.floor(self.T0 * self.b**self.epoch_)
            tau, self.end_ = end - self.end_, end
            self._start_epoch(tau)
