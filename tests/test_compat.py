"""What a release removes fails at once, naming the fix, after a release of DeprecationWarnings (the
policy: docs/extending.md, "Deprecation policy"), and CHANGELOG.md describes this version."""

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


def test_an_env_with_the_0_1_draw_round_is_refused_at_definition_naming_the_fix():
    """Deprecated in 0.2.0 with a warning, removed in 0.4.0: the class statement itself fails."""
    fix = r"OldEnv\.draw_round\(rng, instance\) is the 0\.1 signature, removed in 0\.4\.0 .* " \
          r"def draw_round\(self, rng, instance, t\)"
    with pytest.raises(TypeError, match=fix):
        class OldEnv(_Fresh):
            def draw_round(self, rng, instance):           # 0.1.0's documented signature
                return {"x": rng.uniform(-1, 1, (self.num_arms, self.dim)).astype(np.float32)}

    with pytest.raises(TypeError, match=r"OldLinear\.draw_round\(rng, instance\)"):
        class OldLinear(LinearEnv):                          # a 0.1 subclass of a built-in env
            def draw_round(self, rng, instance):
                return dict(super().draw_round(rng, instance), extra=np.array(1))

    assert CurrentEnv.draw_round is vars(CurrentEnv)["draw_round"]   # the current signature is taken as it is
    check_env(CurrentEnv)


class ScaledLinUCB(LinUCB):
    """LinUCB with one more keyword hyper-parameter, written to 0.1.0's API: `scale` is not in `params`."""

    def __init__(self, *, scale=1.0, **kwargs):
        self.scale = scale
        super().__init__(**kwargs)


def test_an_agent_with_undeclared_hyperparameters_fails_the_checks_naming_the_fix():
    """A warning in 0.2.0 and 0.3.0, a failed check from 0.4.0; declaring it with its rule passes."""
    with pytest.raises(AssertionError, match=r"\['scale'\] are not declared in ScaledLinUCB\.params.*"
                                             r"params = \{'scale': Real\(gt=0\)\}"):
        check_constructor(ScaledLinUCB)

    class Declared(ScaledLinUCB):
        """The fix the message names."""

        params = {"scale": Real(gt=0)}

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
