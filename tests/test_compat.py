"""Code written against the previous release keeps working, with a DeprecationWarning that says what to
change (the policy: docs/extending.md, "Deprecation policy"), and CHANGELOG.md describes this version."""

import re
import tomllib
import warnings
from pathlib import Path

import numpy as np
import pytest

import gym_ctxbandits
from agents.checks import check_agent, check_constructor
from agents.linear import LinUCB
from agents.params import Real
from gym_ctxbandits.checks import check_env
from gym_ctxbandits.envs import CtxBanditEnv
from gym_ctxbandits.envs.synthetic import LinearEnv

ROOT = Path(__file__).resolve().parents[1]


class _Fresh(CtxBanditEnv):
    """K fresh arms in [-1, 1]^d a round, linear means: the problem both signatures below draw."""

    def __init__(self, num_arms=4, dim=3, instance_seed=None):
        super().__init__(num_arms, dim, noise="gaussian", noise_std=0.1, instance_seed=instance_seed)

    def draw_instance(self, rng):
        return {"theta": rng.standard_normal(self.dim)}

    def round_arrays(self, instances, rounds):
        x = rounds["x"]
        return x, np.einsum("nkd,nd->nk", x.astype(np.float64), instances["theta"]), None


with warnings.catch_warnings():
    warnings.simplefilter("error")                     # the current signature is adopted as it is, silently

    class CurrentEnv(_Fresh):
        def draw_round(self, rng, instance, t):
            return {"x": rng.uniform(-1, 1, (self.num_arms, self.dim)).astype(np.float32)}


with warnings.catch_warnings(record=True) as DEFINED:   # at module level, so that the suite can pickle it
    warnings.simplefilter("always")

    class OldEnv(_Fresh):
        def draw_round(self, rng, instance):           # 0.1.0's documented signature
            return {"x": rng.uniform(-1, 1, (self.num_arms, self.dim)).astype(np.float32)}


def test_an_env_with_the_0_1_draw_round_runs_with_a_deprecation_warning():
    assert [w.category for w in DEFINED] == [DeprecationWarning] and DEFINED[0].filename == __file__
    assert re.search(r"OldEnv\.draw_round\(rng, instance\) .* def draw_round\(self, rng, instance, t\)",
                     str(DEFINED[0].message))
    old, new = OldEnv(), CurrentEnv()
    for env in (old, new):
        env.reset(seed=3)
    for a in (0, 1, 2, 3, 0):
        x, y = old.step(a), new.step(a)
        assert np.array_equal(x[0], y[0]) and x[1:4] == y[1:4]
    check_env(OldEnv)                                  # the whole suite, its vector env included
    assert CurrentEnv.draw_round is vars(CurrentEnv)["draw_round"]   # the current signature is not wrapped


with warnings.catch_warnings(record=True) as DEFINED_SUB:
    warnings.simplefilter("always")

    class OldLinear(LinearEnv):
        """A 0.1.0 subclass of a built-in env that extends its round through super()."""

        def draw_round(self, rng, instance):
            return dict(super().draw_round(rng, instance), extra=np.array(1))


def test_a_0_1_subclass_of_a_builtin_env_calling_super_draw_round_runs():
    assert [w.category for w in DEFINED_SUB] == [DeprecationWarning]
    kwargs = dict(num_arms=5, pool_size=20, dim=3)
    old, new = OldLinear(**kwargs), LinearEnv(**kwargs)
    for env in (old, new):
        env.reset(seed=4)
    for a in (0, 3, 1):
        x, y = old.step(a), new.step(a)
        assert np.array_equal(x[0], y[0]) and x[1:4] == y[1:4]


class ScaledLinUCB(LinUCB):
    """LinUCB with one more keyword hyper-parameter, written to 0.1.0's API: `scale` is not in `params`."""

    def __init__(self, *, scale=1.0, **kwargs):
        self.scale = scale
        super().__init__(**kwargs)


def test_an_agent_with_undeclared_hyperparameters_passes_the_checks_with_a_deprecation_warning():
    with pytest.warns(DeprecationWarning, match=r"\['scale'\] are not declared in ScaledLinUCB\.params.*0\.4\.0"):
        check_agent(ScaledLinUCB, batched=False)

    class Declared(ScaledLinUCB):
        """The fix the warning names."""

        params = {"scale": Real(gt=0)}

    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        check_constructor(Declared)


def test_the_changelog_describes_the_current_version():
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert gym_ctxbandits.__version__ == version
    changelog = (ROOT / "CHANGELOG.md").read_text()
    section = re.search(rf"^## \[{re.escape(version)}\] - \d{{4}}-\d{{2}}-\d{{2}}\n(.*?)(?=^## \[)", changelog,
                        re.DOTALL | re.MULTILINE)
    assert section, f"CHANGELOG.md has no '## [{version}] - YYYY-MM-DD' section"
    assert re.search(r"^### (Added|Changed|Deprecated|Removed|Fixed)$", section.group(1), re.MULTILINE)
    assert re.search(r"^## \[0\.1\.0\]", changelog, re.MULTILINE)
