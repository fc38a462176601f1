"""gym-ctxbandits' agent zoo: policies with `act(obs) -> action` and `observe(obs, action, reward)`.

`agents.make(name, **kwargs)` builds any registered agent by its paper's name; `agents.REGISTRY`
lists them. Importing this package needs only numpy and scipy (no gymnasium, no torch: the torch
agents are registered lazily and import torch when made). Every agent stands on
`agents.BaseAgent` (agents.base); docs/agents.md shows how to write a new one.
"""

from agents.base import REGISTRY, Agent, BaseAgent, make, random_argmax, register

# Marker checked by gym_ctxbandits: another widely installed package (the OpenAI Agents SDK)
# also installs a top-level `agents`; this tells the two apart.
__gym_ctxbandits__ = True

# Importing the families fills REGISTRY.
from agents import delayed, glm, linear, linear_ensemble, oam  # noqa: E402,F401
from agents import squarecb  # noqa: E402,F401  (the oracle family: SquareCB, FALCON, Oracle-Greedy, ...)
from agents import bag, cover, regcb  # noqa: E402,F401  (regression-oracle agents: RegCB, Cover, Bag)
from agents import cascade, pbm, ranking, toprank  # noqa: E402,F401  (ranking agents, issue 50)
from agents import changepoint, dlinucb, mab, nonstationary  # noqa: E402,F401  (non-stationary agents, issue 51)
from agents import vw  # noqa: E402,F401  (Vowpal Wabbit's explorers: vowpalwabbit loads when one is made)
from agents.neural import registry as _neural  # noqa: E402,F401  (lazy entries: torch loads on first use)

__all__ = ["Agent", "BaseAgent", "REGISTRY", "make", "random_argmax", "register"]
