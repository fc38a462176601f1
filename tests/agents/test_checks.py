"""Every registered agent through agents.checks, one test per (agent, check, mode); and the
suite itself catches a deliberately broken agent."""

import numpy as np
import pytest

from agents import checks
from agents.checks import all_checks, check_agent
from agents.linear import LinUCB
from agents.neural import LAZY, TOKENS


# Tiny networks and few gradient steps keep the neural agents' checks fast (the checks are about
# the protocol, not learning); check_constructor still inspects the papers' defaults.
NTK = dict(width=4, depth=3, steps=2, warmup=3)
SMALL = {
    "Neural-ES": dict(m=3, **NTK), "Neural-PHE": NTK, "NeuralUCB": NTK, "NeuralTS": NTK,
    "Neural-ES-DT": dict(T0=10, width=4, steps=2, warmup=3),
    **{name: dict(hidden=(8,), batch_size=8) for name in ("Ensemble++", "Ensemble+", "NeuralGreedy")},
    "EpiNet": dict(hidden=(8,), batch_size=8, index_samples=2, epinet_hidden=(4, 4)),
    "LMCTS": dict(hidden=(8,), steps=2),
    "DeepFPL": dict(hidden=8), "DeepFL": dict(hidden=8), "repGLM-FPL": dict(hidden=8, explore_rounds=6),
    **{name: dict(width=4, steps=2, update_every=5)
       for name in ("NeuralLog-UCB-1", "NeuralLog-UCB-2", "NeuralLog-TS-1", "NeuralLog-TS-2", "NCBF-UCB")},
    # model=None: the float check problems are the features (the backbone path: test_gpt_ensemble.py)
    **{name: dict(model=None, batch_size=8) for name in ("GPT-Ensemble++", "GPT-Greedy")},
    # warm-ups of 8 rounds (Alg. 3's floor of 2 pulls per arm) in the checks' 24, so they check the
    # ensemble's sampling too (GLM-ES-DT: in its third epoch, rounds 11-27)
    "GLM-ES": dict(warmup=1, design_a=0.9), "GLM-ES-DT": dict(T0=4, warmup=1, design_a=0.9),
}


def factory(name):
    if name not in SMALL:
        return checks.as_factory(name)

    def small(**kwargs):
        return checks.make(name, **SMALL[name], **kwargs)

    small.__name__ = name
    return small


@pytest.mark.parametrize(
    "name, check, batched",
    [pytest.param(n, c, b, id=f"{n}-{c.__name__}-{'batched' if b else 'single'}") for n, c, b in all_checks()],
)
def test_registered_agent(name, check, batched):
    check(factory(name), batched)


class Sloppy:
    def __init__(self, weights=[], seed=None):  # noqa: B006 - the mutable default is the point
        self.weights, self.seed = weights, seed
        self.reset()

    def reset(self):
        self.rng = np.random.default_rng(self.seed)

    def act(self, obs):
        obs[0, 0] = 0.0                       # mutates its input
        return int(np.random.randint(len(obs)))  # global RNG: not reproducible

    def observe(self, obs, action, reward):
        pass


@pytest.mark.parametrize("check", [checks.check_inputs_not_mutated, checks.check_seeded_determinism,
                                   checks.check_constructor, checks.check_bad_inputs])
def test_suite_catches_a_sloppy_agent(check):
    with pytest.raises(AssertionError):
        check(Sloppy, False)


def test_check_agent_accepts_names_and_factories():
    check_agent("LinUCB")
    check_agent(lambda **kw: checks.make("LinTS", v=0.5, **kw), batched=False)


@pytest.mark.parametrize("name", sorted(set(LAZY) - TOKENS))      # the GPT agents read token ids: their own tests
def test_neural_defaults_take_unnormalised_inputs(name):
    """With its registered defaults (not the small test settings), every neural agent takes
    unnormalised N(0, I_8) features and N(0, 1) rewards without diverging."""
    checks.check_plain_inputs(checks.as_factory(name))


class ForgetsBadly(LinUCB):
    """LinUCB that breaks its statistics from round 45 on (a window bug)."""

    def _update(self, x, y):
        super()._update(x, y if self.t_ < 45 else y * np.nan)


def test_rounds_reach_past_an_agents_memory():
    """check_agent(rounds=R): a fault that appears only once a window fills is caught with R past it."""
    check_agent(ForgetsBadly, batched=False)                 # 24 rounds: the bug never shows
    with pytest.raises((AssertionError, ValueError)):
        check_agent(ForgetsBadly, batched=False, rounds=60)
    with pytest.raises(ValueError, match="rounds must be an integer >= 6"):
        check_agent("LinUCB", rounds=2)
