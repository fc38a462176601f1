"""Bad actions and bad kwargs fail loudly with a message that names the problem."""

import gymnasium as gym
import numpy as np
import pytest

import gym_ctxbandits  # noqa: F401
from gym_ctxbandits.envs.core import vector_env
from gym_ctxbandits.envs.pool import PoolEnv


@pytest.fixture
def env():
    e = gym.make("CtxBandit/FixedActionSet-v0")
    e.reset(seed=0)
    return e


@pytest.mark.parametrize("action", [3, -1, 100])
def test_out_of_range_action(env, action):
    with pytest.raises(ValueError, match="out of range: arms are 0..2"):
        env.step(action)


@pytest.mark.parametrize("action", [1.0, 1.5, np.nan, "1", None, True, np.array([0, 1]), np.array(0.0)])
def test_non_integer_action(env, action):
    with pytest.raises(TypeError, match="action must be an integer arm index"):
        env.step(action)


@pytest.mark.parametrize("action", [np.int64(1), np.array(1), np.array([1]), np.uint8(2)])
def test_numpy_integer_actions_accepted(env, action):
    env.step(action)


def test_step_before_reset():
    with pytest.raises(RuntimeError, match="reset"):
        gym.make("CtxBandit/Linear-v0").unwrapped.step(0)


class MaskedEnv(PoolEnv):
    """Four fixed arms, of which a random non-empty subset is available each round (test-only)."""

    def __init__(self, instance_seed=None):
        super().__init__(4, 2, noise="none", instance_seed=instance_seed)

    def draw_pool(self, rng):
        return np.eye(4, 2) + 0.1

    def draw_params(self, rng):
        return {"theta": np.array([1.0, -1.0])}

    def mean_reward(self, x, params):
        return x @ params["theta"]

    def draw_round(self, rng, instance, t):
        mask = rng.random(4) < 0.5
        mask[rng.integers(4)] = True
        return {"mask": mask}

    def round_arrays(self, instances, rounds):
        features, means, _ = super().round_arrays(instances, {})
        return features, means, rounds["mask"]


MaskedVectorEnv = vector_env(MaskedEnv, __name__)


def test_action_mask_is_given_and_enforced():
    env = MaskedEnv()
    obs, info = env.reset(seed=3)
    for _ in range(40):
        mask = info["action_mask"]
        assert mask.dtype == np.int8 and mask.shape == (4,) and mask.any()
        masked = np.flatnonzero(mask == 0)
        if len(masked):
            with pytest.raises(ValueError, match="not available this round"):
                env.step(int(masked[0]))
        allowed = np.flatnonzero(mask)
        obs, _, _, _, info = env.step(int(allowed[-1]))
        assert info["regret"] >= 0


def test_optimum_is_over_available_arms():
    env = MaskedEnv()
    _, info = env.reset(seed=4)
    for _ in range(40):
        mask = info["action_mask"].astype(bool)
        a = int(np.flatnonzero(mask)[0])
        _, _, _, _, step_info = env.step(a)
        assert mask[step_info["optimal_action"]]
        means = (np.eye(4, 2) + 0.1) @ [1.0, -1.0]
        assert step_info["optimal_expected_reward"] == pytest.approx(means[mask].max())
        info = step_info


def test_vector_env_bad_actions():
    vec = gym.make_vec("CtxBandit/Linear-v0", num_envs=2, vectorization_mode="vector_entry_point")
    vec.reset(seed=0)
    with pytest.raises(ValueError, match="expected 2 actions"):
        vec.step(np.array([0, 1, 2]))
    with pytest.raises(ValueError, match="out of range"):
        vec.step(np.array([0, 50]))
    with pytest.raises(TypeError, match="integer"):
        vec.step(np.array([0.5, 1.0]))
    masked = MaskedVectorEnv(num_envs=2)
    _, info = masked.reset(seed=0)
    while info["action_mask"][0].all():  # wait for a round with an unavailable arm in sub-env 0
        _, _, _, _, info = masked.step(np.zeros(2, int) + np.argmax(info["action_mask"], axis=1))
    bad = np.argmax(info["action_mask"], axis=1)
    bad[0] = np.argmin(info["action_mask"][0])
    with pytest.raises(ValueError, match="not available this round"):
        masked.step(bad)


@pytest.mark.parametrize("env_id,kwargs,match", [
    ("CtxBandit/Linear-v0", {"num_arms": 0}, "num_arms must be an integer >= 1"),
    ("CtxBandit/Linear-v0", {"num_arms": 2.5}, "num_arms must be an integer"),
    ("CtxBandit/Logistic-v0", {"dim": 0}, "dim must be an integer >= 1"),
    ("CtxBandit/Logistic-v0", {"dim": True}, "dim must be an integer"),
    ("CtxBandit/Distance-v0", {"noise_std": -0.5}, "noise_std must be a finite number >= 0"),
    ("CtxBandit/Quadratic-v0", {"noise_std": float("nan")}, "noise_std must be a finite number"),
    ("CtxBandit/QuadraticPool-v0", {"pool_size": 10}, "pool_size .* must be >= num_arms"),
    ("CtxBandit/NeuralLogisticH1-v0", {"reward_fn": "h7"}, "reward_fn must be one of"),
    ("CtxBandit/NeuralLogisticH1-v0", {"features": "disc"}, "features must be one of"),
    ("CtxBandit/BernoulliLogistic-v0", {"theta_variance": -1}, "theta_variance must be a finite number >= 0"),
    ("CtxBandit/FiniteLinear-v0", {"u": 0}, "u must be a finite number > 0"),
    ("CtxBandit/MLPTeacher-v0", {"temperature": 0}, "temperature must be a finite number > 0"),
    ("CtxBandit/ChangingActionSet1-v0", {"context_probs": [0.5, 0.6]}, "context_probs must be 2 non-negative numbers summing to 1"),
    ("CtxBandit/BoundedRegret-v0", {"theta": [1, 0, 0]}, "theta must be 2 finite numbers"),
    ("CtxBandit/BoundedRegret-v0", {"action_sets": [[1, 0], [0, 1]]}, r"action_sets must be nested lists of shape \(M, K, d\)"),
    ("CtxBandit/UnitCircle-v0", {"theta": [1, 0, 0]}, "theta must be 2 finite numbers or None"),
    ("CtxBandit/Linear-v0", {"instance_seed": -1}, "instance_seed must be an integer >= 0"),
])
def test_bad_kwargs_fail_at_construction(env_id, kwargs, match):
    with pytest.raises(ValueError, match=match):
        gym.make(env_id, **kwargs)


def test_bad_vector_kwargs():
    with pytest.raises(ValueError, match="num_envs must be an integer >= 1"):
        gym.make_vec("CtxBandit/Linear-v0", num_envs=0, vectorization_mode="vector_entry_point")
    with pytest.raises(ValueError, match="num_arms must be an integer >= 1"):
        gym.make_vec("CtxBandit/Linear-v0", num_envs=2, vectorization_mode="vector_entry_point", num_arms=-3)


def test_a_problem_too_large_for_the_memory_fails_at_once(monkeypatch):
    """The memory a problem needs is estimated before anything is allocated."""
    import time

    from gym_ctxbandits.envs import core

    monkeypatch.setattr(core, "available_memory", lambda: 2**30)          # a machine with 1 GiB free
    start = time.perf_counter()
    with pytest.raises(ValueError, match=r"needs about 3\.0 GiB of memory, but 1\.0 GiB is available"):
        gym.make("CtxBandit/Linear-v0", num_arms=100_000, dim=1000)
    with pytest.raises(ValueError, match="8 envs .* needs about 2.4 GiB"):
        gym.make_vec("CtxBandit/Linear-v0", num_envs=8, vectorization_mode="vector_entry_point", num_arms=10_000,
                     dim=1000)
    assert time.perf_counter() - start < 5
    gym.make("CtxBandit/Linear-v0", num_arms=1000, dim=20)                  # small problems are untouched


def test_a_large_problem_makes_without_building_its_bounds(monkeypatch):
    """K = 5 * 10^5 arms in d = 1000: the observation space's bounds are a row of d numbers broadcast to
    (K, d) (ScalarBox), not four K x d arrays (5.2 GB and 13 to 48 s in gym.make before), for the single env,
    the vector env, pickling and copies. Nothing is drawn here, so nothing of that size is allocated."""
    import copy
    import pickle
    import time
    import tracemalloc

    from gym_ctxbandits.envs import core

    monkeypatch.setattr(core, "available_memory", lambda: 2**50)          # as if the instance would fit
    tracemalloc.start()
    try:
        start = time.perf_counter()
        env = gym.make("CtxBandit/Linear-v0", num_arms=5 * 10**5, dim=1000, disable_env_checker=True)
        vec = gym.make_vec("CtxBandit/Linear-v0", num_envs=8, vectorization_mode="vector_entry_point",
                           num_arms=5 * 10**5, dim=1000)
        space, seconds = env.observation_space, time.perf_counter() - start
        assert len(pickle.dumps(env.unwrapped)) < 10_000 and copy.deepcopy(space) == space
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.reset_peak()
        gym.make("CtxBandit/Linear-v0", num_arms=10**5, dim=100)  # Gymnasium's checker: one (K, d) bool, 10 MB
        checked_peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 2**20 and seconds < 2, (peak, seconds)
    assert checked_peak < 30e6, checked_peak                                 # eager bounds: 100 MB
    assert space.shape == (5 * 10**5, 1000) and space.low.strides == (0, 4) and not space.low.flags.writeable
    assert vec.observation_space.shape == (8, 5 * 10**5, 1000) and vec.observation_space.low.strides[:2] == (0, 0)


def test_the_scalar_bound_box_behaves_as_gymnasiums_box():
    from gymnasium import spaces

    from gym_ctxbandits.envs.core import ScalarBox

    ours, box = ScalarBox(-2.0, 2.0, (4, 3)), spaces.Box(-2.0, 2.0, (4, 3), np.float32)
    assert ours == box and box == ours and repr(ours) == repr(box) and ours.is_bounded()
    assert ours != ScalarBox(-1.0, 1.0, (4, 3)) and ours != ScalarBox(-2.0, 2.0, (4, 2))
    for name in ("low", "high", "bounded_below", "bounded_above"):
        assert np.array_equal(getattr(ours, name), getattr(box, name))
    ours.seed(0)
    x = ours.sample()
    assert ours.contains(x) and box.contains(x) and not ours.contains(x + 5) and np.abs(x).max() <= 2
    unbounded = ScalarBox(-np.inf, np.inf, (2, 2))
    assert not unbounded.is_bounded() and unbounded.contains(np.full((2, 2), 1e30, np.float32))
    with pytest.raises(ValueError, match="nan"):
        ScalarBox(np.nan, 1.0, (2, 2))
