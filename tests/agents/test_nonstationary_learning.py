"""Forgetting on small abrupt problems (issue 51): the non-stationary agents at their defaults for the
problem's horizon and one change, against the stationary agent they extend (dynamic regret, the
round's best arm as reference; two seeds, margins of about 1.5 times the measured ratios)."""

import numpy as np

import agents

ARMS = np.eye(3)          # three arms shown as one-hot ids: the K-armed agents read the row index


def test_forgetting_beats_linucb_after_a_change():
    """d = 2, 20 arms on the unit circle a round, theta* = (1, 0) then (-1, 0) from round 1,000 (unit noise):
    the forgetting agents' dynamic regret over 2,000 rounds is below 0.6 times LinUCB's, at their theory
    defaults for T = 2,000 and B_T = 2 (dLinUCB at its defaults; measured: LinUCB 1,795 a seed, D-LinUCB
    485, SW-LinUCB 355, D-LinTS 557, SW-LinTS 603, dLinUCB 324: 0.34 times at most)."""
    T, K, seeds = 2000, 20, [0, 1]
    rng = np.random.default_rng(11)
    angles = rng.uniform(0, 2 * np.pi, (T, len(seeds), K))
    X = np.stack([np.cos(angles), np.sin(angles)], axis=-1)
    theta = np.where(np.arange(T)[:, None] < T // 2, 1.0, -1.0)[:, :, None] * np.array([1.0, 0.0])
    means = np.einsum("tnkd,td->tnk", X, theta[:, 0])
    noise = rng.normal(size=(T, len(seeds)))
    regret = {}
    for name in ("LinUCB", "D-LinUCB", "SW-LinUCB", "D-LinTS", "SW-LinTS", "dLinUCB"):
        agent = agents.make(name, seed=seeds, **({} if name in ("LinUCB", "dLinUCB") else {"horizon": T, "B_T": 2.0}))
        total, rows = 0.0, np.arange(len(seeds))
        for t in range(T):
            a = agent.act(X[t])
            total += (means[t].max(axis=1) - means[t, rows, a]).sum()
            agent.observe(X[t], a, means[t, rows, a] + noise[t])
        regret[name] = total / len(seeds)
    for name in ("D-LinUCB", "SW-LinUCB", "D-LinTS", "SW-LinTS", "dLinUCB"):
        assert regret[name] < 0.6 * regret["LinUCB"], regret


def test_forgetting_beats_ucb1_after_a_change():
    """Three Bernoulli arms (0.9, 0.7, 0.1), the first falling to 0.2 at round 2,000 of 3,000: UCB1's
    counts keep it on arm 0 for hundreds of rounds. Every forgetting or restarting agent's dynamic regret,
    at its defaults for T = 3,000 and one change, is below 0.65 times UCB1's (measured, a seed: UCB1 282,
    D-UCB 124, SW-UCB 115, D-TS 106, SW-TS 79, CUSUM-UCB 112, M-UCB 161, Oracle-Restart 82: 0.57 times at most;
    GLR-klUCB, 108, is left out for its cost, 4 s here: kl-UCB's bisection every round)."""
    T, seeds = 3000, [0, 1]
    rng = np.random.default_rng(7)
    means = np.where(np.arange(T)[:, None] < 2000, [0.9, 0.7, 0.1], [0.2, 0.7, 0.1])
    u = rng.random((T, len(seeds)))
    obs = np.stack([ARMS] * len(seeds))
    regret = {}
    settings = {"UCB1": {}, "D-UCB": {}, "SW-UCB": {}, "D-TS": {}, "SW-TS": {}, "CUSUM-UCB": {}, "M-UCB": {},
                "Oracle-Restart": {"change_points": (2001,)}}
    for name, kwargs in settings.items():
        if "horizon" in agents.base.hyperparameter_names(name):
            kwargs = dict(kwargs, horizon=T, changes=1)
        agent = agents.make(name, seed=seeds, **kwargs)
        total = 0.0
        for t in range(T):
            a = agent.act(obs)
            total += (means[t].max() - means[t, a]).sum()
            agent.observe(obs, a, (u[t] < means[t, a]).astype(float))
        regret[name] = total / len(seeds)
    for name in settings:
        if name != "UCB1":
            assert regret[name] < 0.65 * regret["UCB1"], regret
