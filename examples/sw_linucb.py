# examples/sw_linucb.py
"""Sliding-window LinUCB (Cheung, Simchi-Levi, Zhu 2019): LinUCB on the last `window` rounds only.

A new agent in one small module: the linear base (agents.linear.LinearAgent) brings act/observe,
single and batched mode, seeding, validation and tie-breaking; the algorithm is its state, its
update and its arm scores, on arrays with the instance axis N first. `--import
examples/sw_linucb.py` makes "My-SW-LinUCB" known to `ctxbandits run` and every worker it starts
(the zoo's own "SW-LinUCB", agents.nonstationary, adds Cheung et al.'s confidence width).
"""

import numpy as np

import agents
from agents.linear import LinearAgent
from agents.params import Int, Real


@agents.register("My-SW-LinUCB")
class SlidingWindowLinUCB(LinearAgent):
    """LinUCB whose statistics cover the last `window` rounds: V = lam I + sum x x^T and b = sum y x
    over that window; play argmax_x <x, V^{-1} b> + alpha ||x||_{V^{-1}}. Forgets a drifting theta."""

    params = {"window": Int(ge=1), "alpha": Real(ge=0), "lam": Real(gt=0)}

    def __init__(self, *, window=200, alpha=1.0, lam=1.0, seed=None, dim=None):
        self.window, self.alpha, self.lam = window, alpha, lam
        super().__init__(seed=seed, dim=dim)

    def _init_state(self, n, d):                  # n instances of dimension d
        self.V_ = np.tile(self.lam * np.eye(d), (n, 1, 1))
        self.b_ = np.zeros((n, d))
        self.xs_, self.ys_ = np.zeros((n, self.window, d)), np.zeros((n, self.window))

    def _update(self, x, y):                      # x (N, d) chosen arms, y (N,) rewards
        slot = self.t_ % self.window              # the round leaving the window (zeros at first)
        old_x, old_y = self.xs_[:, slot], self.ys_[:, slot]
        self.V_ += x[:, :, None] * x[:, None, :] - old_x[:, :, None] * old_x[:, None, :]
        self.b_ += y[:, None] * x - old_y[:, None] * old_x
        self.xs_[:, slot], self.ys_[:, slot] = x, y

    def _scores(self, X):                         # X (N, K, d) -> (N, K)
        V_inv = np.linalg.inv(self.V_)
        theta = np.einsum("nde,ne->nd", V_inv, self.b_)
        width = np.sqrt(np.einsum("nkd,nkd->nk", X @ V_inv, X))    # X V^{-1} by BLAS, then the sum over d
        return np.einsum("nkd,nd->nk", X, theta) + self.alpha * width


if __name__ == "__main__":
    from agents.checks import check_agent

    check_agent(SlidingWindowLinUCB, rounds=250)  # the conformance suite, single and batched, past the window
    print("My-SW-LinUCB passes agents.checks")
