"""The public env conformance suite (gym_ctxbandits.checks) passes a correct env given as a class and
catches each kind of broken env, with a message that names the problem. The registered ids run
through it in tests/envs/test_conformance.py."""

import gymnasium as gym
import numpy as np
import pytest

import gym_ctxbandits  # noqa: F401  (registers the ids)
from gym_ctxbandits import checks
from gym_ctxbandits.checks import check_env
from gym_ctxbandits.envs import DriftingLinearEnv
from gym_ctxbandits.envs.pool import PoolEnv


class TinyLinear(PoolEnv):
    """Three fixed arms in R^2, theta ~ N(0, I) per instance; a correct env (test-only)."""

    def __init__(self, noise_std: float = 0.5, instance_seed: int | None = None):
        super().__init__(3, 2, noise="gaussian", noise_std=noise_std, instance_seed=instance_seed)

    def draw_pool(self, rng):
        return np.array([[1.0, 0.0], [0.0, 1.0], [0.6, 0.6]])

    def draw_params(self, rng):
        return {"theta": rng.standard_normal(2)}

    def mean_reward(self, x, params):
        return x @ params["theta"]


class Masked(TinyLinear):
    """A random non-empty subset of the arms is available each round."""

    def draw_round(self, rng, instance, t):
        mask = rng.random(3) < 0.5
        mask[rng.integers(3)] = True
        return {"mask": mask}

    def round_arrays(self, instances, rounds):
        features, means, _ = super().round_arrays(instances, {})
        return features, means, rounds["mask"]


class GlobalNoise(TinyLinear):
    """Reward noise from numpy's global RNG: not reproducible from the seed."""

    def _rewards(self, rngs, means):
        return means + np.random.standard_normal(len(means))


class Unbatched(TinyLinear):
    """Every instance of a batch gets instance 0's expected rewards: right alone, wrong as a vector env."""

    def round_arrays(self, instances, rounds):
        features, means, mask = super().round_arrays(instances, rounds)
        return features, np.broadcast_to(means[:1], means.shape), mask


class Leaky(TinyLinear):
    """Shows the optimal arm before the agent acts."""

    def reset_info(self, instances, rounds):
        return {"optimal_action": instances["pool_means"].argmax(axis=1)}


class WrongRegret(TinyLinear):
    """Reports no regret whatever the arm."""

    def step_info(self, instances, rounds, actions):
        return {"regret": np.zeros(len(actions))}


class PlainInfo(TinyLinear):
    """Extra step info as Python floats, without a dtype."""

    def step_info(self, instances, rounds, actions):
        return {"extra": [0.0] * len(actions)}


class InitInstance(TinyLinear):
    """Draws theta once in __init__ from a fixed seed: the same instance for every episode seed."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.theta = np.random.default_rng(0).standard_normal(2)

    def draw_params(self, rng):
        return {"theta": self.theta}


class Unpicklable(TinyLinear):
    """Holds a lambda, which pickle refuses."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.transform = lambda x: x


class OutOfBounds(TinyLinear):
    """Arms outside the observation space's bounds."""

    def draw_pool(self, rng):
        return 3.0 * super().draw_pool(rng)


class UnlinkedBernoulli(TinyLinear):
    """Bernoulli rewards on x^T theta, which leaves [0, 1]: no link to a probability."""

    def __init__(self, instance_seed: int | None = None):
        PoolEnv.__init__(self, 3, 2, noise="bernoulli", instance_seed=instance_seed)


class LinkedBernoulli(UnlinkedBernoulli):
    """The same through the logistic link: a correct Bernoulli env."""

    def mean_reward(self, x, params):
        return 1.0 / (1.0 + np.exp(-x @ params["theta"]))


class OutOfBoundsLater(TinyLinear):
    """In bounds at reset, 3x out of them from round 2 on."""

    def draw_round(self, rng, instance, t):
        return {"scale": np.float32(3.0 if t >= 2 else 1.0)}

    def round_arrays(self, instances, rounds):
        features, means, mask = super().round_arrays(instances, {})
        return features * rounds["scale"][:, None, None], means, mask


@pytest.mark.parametrize("env", [TinyLinear, Masked, DriftingLinearEnv, LinkedBernoulli])
def test_a_correct_class_passes_every_check(env):
    check_env(env)


def test_ids_and_factories_pass_and_kwargs_reach_the_env():
    check_env("CtxBandit/UnitCircleSmall-v0", noise_std=0.1)
    with pytest.warns(UserWarning, match="no native vector env"):
        check_env(lambda **kw: TinyLinear(noise_std=0.2, **kw))
    with pytest.raises(TypeError, match="unexpected keyword"):
        check_env(TinyLinear, no_such_kwarg=1)


def test_an_env_object_is_refused_with_the_fix():
    with pytest.raises(TypeError, match=r"check_env\(MyEnv, \*\*kwargs\)"):
        check_env(TinyLinear())


def test_the_native_vector_env_of_a_class_is_checked():
    assert checks.as_factory(TinyLinear).make_vec is not None
    assert checks.as_factory(lambda **kw: TinyLinear(**kw)).make_vec is None
    assert checks.as_factory("CtxBandit/OpenBandit-v0").make_vec is None


@pytest.mark.parametrize("env, check, words", [
    (GlobalNoise, checks.check_determinism, "self.np_random"),
    (Unbatched, checks.check_vector_env, "round_arrays"),
    (Leaky, checks.check_info, "reset's info has ['optimal_action']"),
    (WrongRegret, checks.check_info, "is not optimal_expected_reward - expected_reward"),
    (PlainInfo, checks.check_info, "not numpy scalars"),
    (InitInstance, checks.check_instance_seed, "random_instance = False"),
    (Unpicklable, checks.check_pickle, "does not pickle"),
    (OutOfBounds, checks.check_gymnasium, "feature_bound=3"),
    (OutOfBoundsLater, checks.check_info, "step 1's observation is not within the observation space"),
    (OutOfBoundsLater, checks.check_info, "feature_bound=3"),
    (UnlinkedBernoulli, checks.check_info, "noise='bernoulli' draws each reward as Bernoulli(mean)"),
])
def test_each_broken_env_fails_its_check(env, check, words):
    with pytest.raises(AssertionError) as err:
        check(checks.as_factory(env, info_keys=("extra",)))
    assert words in str(err.value) and env.__name__ in str(err.value)


def test_an_env_without_a_native_vector_env_is_named_with_the_fix():
    """A factory (or an id registered without vector_entry_point) warns, saying how to add one; a replay
    env, which has none by design, does not (tests/envs/test_conformance.py runs it warning-free)."""
    with pytest.warns(UserWarning, match=r"TinyLinear has no native vector env.*vector_entry_point=vector_env"):
        checks.check_vector_env(checks.EnvFactory("TinyLinear", TinyLinear, None))


def test_undeclared_step_info_is_refused_until_named():
    with pytest.raises(AssertionError, match="info_keys"):
        check_env("CtxBandit/SphereLinear-v0", num_arms=20)
    check_env("CtxBandit/SphereLinear-v0", num_arms=20, info_keys=("sphere_regret",))


def test_a_given_instance_must_be_declared_honestly():
    class Declared(TinyLinear):
        random_instance = False

    with pytest.raises(AssertionError, match="remove the declaration"):
        checks.check_instance_seed(checks.as_factory(Declared))
    checks.check_instance_seed(checks.as_factory(gym.make("CtxBandit/FixedActionSet-v0").unwrapped.__class__))
