"""Agents that hold M regression oracles at once (Cover's policies, Bag's bootstrap replicates).

`OracleEnsemble` is an `agents.oracle.OracleAgent` whose state is M oracles per instance: member 0
is the base's `oracle_` (started on the instances' SeedSequences) and member i >= 1 is started on
their children `oracle_seqs(seqs, MEMBER_KEY, i)`, so an oracle with a random initialisation (a
network) starts each member differently, and the same way for a batched instance as for a single agent.
`votes(X)` gives each member's greedy distribution (ties split evenly), the building block of both
families' policies.
"""

from __future__ import annotations

import numpy as np

from agents.base import argmax_probs
from agents.oracle import OracleAgent, oracle_seqs, predict, predict1
from agents.params import Int

__all__ = ["OracleEnsemble", "MEMBER_KEY"]

MEMBER_KEY = 0x0E5      # member i >= 1 starts on the instances' children (ORACLE_KEY, MEMBER_KEY, i)


class OracleEnsemble(OracleAgent):
    """An OracleAgent holding M oracles, `oracles_` (member 0 is `oracle_`); subclasses give the policy.

    Args:
        M: the number of oracles (policies, bootstrap replicates).
    """

    params = {"M": Int(ge=1)}

    def _init_state(self, X: np.ndarray) -> None:
        self.oracles_ = [self.oracle_]
        for i in range(1, self.M):
            member = self._new_oracle()
            member.start(self.n_, self.d_, oracle_seqs(self.seqs_, MEMBER_KEY, i))
            self.oracles_.append(member)

    def predictions(self, X: np.ndarray) -> np.ndarray:
        """(M, N, K) every member's predicted rewards of the arms of X (N, K, d), or OracleAgent's ValueError
        if any is not finite."""
        out = np.empty((self.M, *X.shape[:2]))
        for i, member in enumerate(self.oracles_):
            out[i] = predict(member, X)
        return out

    def votes(self, X: np.ndarray) -> np.ndarray:
        """(M, N, K) each member's greedy arm of X as a distribution: 1 on its argmax, ties split evenly."""
        return argmax_probs(self.predictions(X))

    def predictions1(self, X: np.ndarray) -> np.ndarray:
        """`predictions(X[None])[:, 0]` of one instance's X (K, d), (M, K) (the members' `predict1`)."""
        out = np.empty((self.M, len(X)))
        for i, member in enumerate(self.oracles_):
            out[i] = predict1(member, X)
        return out

    def votes1(self, X: np.ndarray) -> np.ndarray:
        """`votes(X[None])[:, 0]` of one instance's X (K, d), (M, K)."""
        return argmax_probs(self.predictions1(X))
