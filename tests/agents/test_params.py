"""agents.params: the declared hyper-parameter constraints and the one place that checks them."""

import numpy as np
import pytest

import agents
from agents.params import Bool, Device, Int, Options, Real, Str, Widths, check_param, declared


@pytest.mark.parametrize("rule, good, bad", [
    (Real(gt=0), [1e-3, 2, np.float32(0.5)], [0, -1, float("nan"), float("inf"), True, "1"]),
    (Real(ge=0, le=1), [0, 0.5, 1], [-1e-9, 1.01]),
    (Int(ge=1), [1, 10, np.int64(3)], [0, 1.0, True, "2"]),
    (Options("a", "b"), ["a", "b"], ["c", 1, None]),
    (Bool(), [True, False, np.bool_(True)], [0, 1, "True"]),
    (Str(), ["x"], [None, 1]),
    (Widths(), [(1,), (64, 64)], [(), [64], (0,), (1.5,)]),
    (Device(), ["cpu", "cuda", "cuda:1", "auto"], ["gpu", "cuda:x", 0]),
    ((Real(gt=0), None), [None, 1.0], ["theory", 0]),
    ((Real(ge=0), "theory"), ["theory", 0.5], ["Theory", None, -1]),
])
def test_rules_accept_and_reject(rule, good, bad):
    for value in good:
        check_param("x", value, rule)
    for value in bad:
        with pytest.raises(ValueError, match=r"^x must be .*, got "):
            check_param("x", value, rule)


def test_a_subclass_declares_on_top_of_its_bases():
    from agents.linear import LinTSAG

    assert {"lam", "sigma", "v", "R", "epsilon", "delta", "horizon", "dim"} <= set(declared(LinTSAG))


@pytest.mark.parametrize("name, kwargs, word", [
    ("LinUCB", dict(lam=0), "lam"), ("Lin-ES", dict(m=0), "m must"), ("GLM-TSL", dict(link="probit"), "link"),
    ("GLM-TSL", dict(a="theory"), "horizon"), ("Linear-Ensemble++", dict(M=2, sparsity=3), "sparsity"),
    ("OAM", dict(spanner=1), "spanner"), ("LinTS", dict(dim=0), "dim"),
])
def test_a_bad_value_fails_at_construction_naming_the_parameter(name, kwargs, word):
    with pytest.raises(ValueError, match=word):
        agents.make(name, **kwargs)


class DiscountedLinUCB(agents.linear.LinUCB):
    """LinUCB with one more hyper-parameter; the parent's arrive through **kwargs (issue 20 item 5)."""

    params = {"gamma": Real(gt=0, le=1)}

    def __init__(self, *, gamma=0.99, **kwargs):
        self.gamma = gamma
        super().__init__(**kwargs)


def test_a_subclass_need_not_repeat_its_parents_hyperparameters():
    from agents.checks import check_constructor
    from agents.params import keyword_parameters

    names = [p.name for p in keyword_parameters(DiscountedLinUCB)]
    assert names[0] == "gamma" and {"lam", "alpha", "delta", "seed"} <= set(names)
    check_constructor(DiscountedLinUCB)
    check_constructor(DiscountedLinUCB, batched=True)
    agents.register("D-LinUCB-test")(DiscountedLinUCB)
    try:
        assert agents.make("D-LinUCB-test", lam=2.0, gamma=0.9, seed=0).lam == 2.0
        with pytest.raises(ValueError, match=r"no hyper-parameter 'lamm'; its hyper-parameters are gamma, lam, "):
            agents.make("D-LinUCB-test", lamm=2.0, seed=0)
        with pytest.raises(ValueError, match="lam must be"):
            agents.make("D-LinUCB-test", lam=-1.0)
    finally:
        del agents.REGISTRY["D-LinUCB-test"]
