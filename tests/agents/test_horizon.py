"""`reads_horizon`: a suite that gives agents the cell's horizon (bakeoff-v2) gives it only to an
agent that reads it, so the hook must say exactly when an agent's play depends on T."""

import numpy as np
import pytest

import agents
from agents.base import reads_horizon

K, D, ROUNDS = 6, 3, 100
CASES = [("GLM-TSL", {}), ("GLM-FPL", {}), ("GLM-UCB", {}), ("OSSB", {}),
         ("LinTS-AG", {"epsilon": 0.5, "delta": 0.1}), ("repGLM-FPL", {"explore_rounds": 3}),
         ("GLM-TSL", {"a": "theory"}), ("GLM-FPL", {"a": "theory"}), ("GLM-UCB", {"alpha": "theory"}),
         ("LinTS-AG", {}), ("LinTS-AG", {"epsilon": 0.5}), ("BaSE", {}), ("repGLM-FPL", {}), ("OAM", {}),
         ("SquareCB", {}), ("SquareCB", {"schedule": "theory"}),
         # issue 51: the forgetting agents' theory windows and discounts, the detectors' thresholds
         ("D-UCB", {}), ("D-UCB", {"gamma": 0.9}), ("SW-UCB", {}), ("SW-UCB", {"window": 10}), ("SW-TS", {}),
         ("SW-TS", {"window": 10}), ("D-LinUCB", {}), ("D-LinUCB", {"gamma": 0.9}), ("SW-LinUCB", {}),
         ("SW-LinUCB", {"window": 10}), ("D-LinTS", {}), ("D-LinTS", {"gamma": 0.9}), ("SW-LinTS", {}),
         ("SW-LinTS", {"window": 10}), ("CUSUM-UCB", {}), ("CUSUM-UCB", {"h": 2.0, "alpha": 0.1}),
         ("M-UCB", {"w": 10, "gamma": None}), ("M-UCB", {"b": 5.0}), ("GLR-klUCB", {}),
         ("GLR-klUCB", {"delta": 0.1, "alpha": 0.1})]


LINEAR = {"OAM", "OSSB", "LinTS-AG", "BaSE"}      # Gaussian rewards; the others' are Bernoulli (a GLM's)


def actions(name: str, kwargs: dict, horizon: int) -> list[int]:
    """The agent's actions on one fixed bandit of K arms (linear with Gaussian noise for a linear
    agent, else logistic), the same rewards' draws."""
    rng = np.random.default_rng(7)
    X = rng.normal(size=(K, D)) / np.sqrt(D)
    means = X @ rng.normal(size=D)
    agent = agents.make(name, horizon=horizon, seed=3, **kwargs)
    played = []
    for _ in range(ROUNDS):
        a = int(agent.act(X))
        noise = rng.normal() / 2 if name in LINEAR else rng.random()
        agent.observe(X, a, float(means[a] + noise if name in LINEAR else noise < 1 / (1 + np.exp(-2 * means[a]))))
        played.append(a)
    return played


def test_every_agent_that_takes_a_horizon_is_in_the_cases():
    takes = {n for n in agents.REGISTRY if "horizon" in agents.base.hyperparameter_names(n)
             and getattr(agents.REGISTRY[n], "kind", "arm") == "arm"}      # the ranking agents': test_ranking_agents.py
    assert takes == {name for name, _ in CASES}, "an agent with a `horizon` added: add it to CASES"
    assert not reads_horizon("LinUCB", {})


@pytest.mark.parametrize("name, kwargs", CASES, ids=[f"{n}-{'-'.join(map(str, k.values())) or 'defaults'}"
                                                      for n, k in CASES])
def test_an_agent_plays_alike_at_any_horizon_exactly_when_it_says_it_does_not_read_it(name, kwargs):
    short, long = actions(name, kwargs, ROUNDS), actions(name, kwargs, 100_000)
    assert (short == long) != reads_horizon(name, kwargs), (name, kwargs, short, long)
