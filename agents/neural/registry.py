"""Importing this module registers the neural agents of [S0] (agents.neural.LAZY) in agents.REGISTRY.

It imports no torch: each entry builds its agent, importing torch, when `agents.make` calls it.
"""

from agents.base import register
from agents.neural import LAZY

for _name, _factory in LAZY.items():
    register(_name)(_factory)
