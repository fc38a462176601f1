"""The non-stationary envs of issue 51 (envs/nonstationary.py, envs/schedule.py, Supervised-v0's relabel=):
Russac et al. 2019's schedules exactly as their code has them, the piecewise Bernoulli means and dynamic
regret, the schedule wrapper on several families, concept drift, and the public conformance suite
(`gym_ctxbandits.checks`) on every new id and on schedules whose change points fall inside its rollouts."""

import itertools

import gymnasium as gym
import numpy as np
import pandas as pd
import pytest

import gym_ctxbandits
from gym_ctxbandits.checks import CHECKS, as_factory
from gym_ctxbandits.experiment import EnvSpec

NEW_IDS = ["CtxBandit/RussacAbrupt-v0", "CtxBandit/RussacSlow-v0", "CtxBandit/PiecewiseBernoulli-v0",
           "CtxBandit/Scheduled-v0"]
SMALL = {"num_arms": 6, "dim": 3}
# (id, kwargs): the new ids as registered, and schedules that change inside the checks' 12-step rollouts.
CONFORMANCE = [(i, {}) for i in NEW_IDS] + [
    ("CtxBandit/PiecewiseBernoulli-v0", {"means": [[0.1, 0.9], [0.8, 0.3], [0.5, 0.5]], "change_points": [3, 7]}),
    ("CtxBandit/Scheduled-v0", {"env_kwargs": SMALL, "schedule": {"kind": "abrupt", "change_points": [3, 6]}}),
    ("CtxBandit/Scheduled-v0", {"env_kwargs": SMALL, "schedule": {"kind": "abrupt", "change_points": [4], "values": {
        "theta": [[1, 0, 0], [0, -1, 0]]}}}),
    ("CtxBandit/Scheduled-v0", {"env": "CtxBandit/SphereLinear-v0", "env_kwargs": SMALL,
                                "schedule": {"kind": "rotation", "period": 10}}),
    ("CtxBandit/Scheduled-v0", {"env": "CtxBandit/BernoulliLogistic-v0", "env_kwargs": SMALL,
                                "schedule": {"kind": "random_walk", "std": 0.3}}),
    ("CtxBandit/Supervised-v0", {"relabel": {"change_points": [3, 8]}}),
]


@pytest.mark.parametrize("check", CHECKS, ids=lambda c: c.__name__)
@pytest.mark.parametrize("env_id, kwargs", CONFORMANCE, ids=lambda x: x if isinstance(x, str) else "")
def test_conformance(env_id, kwargs, check):
    check(as_factory(env_id, info_keys=("change_point", "sphere_regret"), **kwargs))


def rollout(env, steps, action=0, seed=0):
    """[(obs shown, info after the step)] of `steps` rounds of one arm."""
    obs, _ = env.reset(seed=seed)
    out = []
    for _ in range(steps):
        shown = obs
        obs, _, _, _, info = env.step(action)
        out.append((shown, info))
    return out


def test_russac_abrupt_schedule_is_the_codes():
    """theta* = (1, 0) up to the code's 0-based loop index t = 1000, (-1, 0) from 1001, (0, 1) from 2001, (0, -1)
    from 3001 (exp_ABRUPT_ENV_NEW.ipynb's bp dict): 1-based change points 1002, 2002, 3002, flagged in info."""
    env = gym.make("CtxBandit/RussacAbrupt-v0")
    russac = env.unwrapped
    assert russac.change_points == (1002, 2002, 3002) and env.spec.max_episode_steps == 6000
    expected = {0: (1, 0), 1000: (1, 0), 1001: (-1, 0), 2000: (-1, 0), 2001: (0, 1), 3000: (0, 1), 3001: (0, -1),
                5999: (0, -1)}
    for t, theta in expected.items():
        np.testing.assert_array_equal(russac.theta(t), theta)
    rounds = rollout(env, 3002)
    flagged = [t + 1 for t, (_, info) in enumerate(rounds) if info["change_point"]]
    assert flagged == [1002, 2002, 3002]
    for t in (0, 1000, 1001, 2001, 3001):  # the means the agent faced are x^T theta*_t
        x, info = rounds[t]
        means = x.astype(np.float64) @ np.array(expected[t], float)
        assert info["expected_reward"] == pytest.approx(means[0], abs=1e-12)
        assert info["optimal_expected_reward"] == pytest.approx(means.max(), abs=1e-12)


def test_russac_slow_angle():
    """a_t = (pi / 2) min(t, 3000) / 3000 (utils.generate_smooth_theta with step_1 = 3000, t the 0-based index): at
    1-based rounds 1, 1500, 3000 and 6000 the angles 0, 1499/3000, 2999/3000 and 1 quarter turns; no change points."""
    env = gym.make("CtxBandit/RussacSlow-v0")
    russac = env.unwrapped
    assert russac.change_points == ()
    for round_, quarter in [(1, 0.0), (1500, 1499 / 3000), (3000, 2999 / 3000), (3001, 1.0), (6000, 1.0)]:
        angle = quarter * np.pi / 2
        np.testing.assert_allclose(russac.theta(round_ - 1), [np.cos(angle), np.sin(angle)], rtol=0, atol=1e-15)
    x, info = rollout(env, 1)[0]
    assert info["expected_reward"] == pytest.approx(float(x[0, 0]), abs=1e-7) and not info["change_point"]


def test_russac_arms_are_projected_into_the_unit_ball_and_the_noise_is_unit():
    """50 arms a round, U[-1, 1]^2 divided by the norm only when it exceeds 1 (environment_class.get_arms): all in
    the unit ball, the fraction on its boundary 1 - pi/4 = 0.215 (normalising would put all there), the rest
    uniform in the disc; rewards are the mean plus N(0, 1) (sigma_noise = 1)."""
    rounds = rollout(gym.make("CtxBandit/RussacAbrupt-v0"), 400, seed=3)
    x = np.concatenate([r[0] for r in rounds]).astype(np.float64)
    assert x.shape == (400 * 50, 2)
    norms = np.linalg.norm(x, axis=1)
    assert norms.max() <= 1 + 1e-6
    assert abs(np.mean(norms > 1 - 1e-6) - (1 - np.pi / 4)) < 0.02  # sd 0.003
    env = gym.make("CtxBandit/RussacAbrupt-v0")
    env.reset(seed=4)
    noise = []
    for _ in range(2000):
        _, reward, _, _, info = env.step(0)
        noise.append(reward - info["expected_reward"])
    assert abs(np.std(noise) - 1) < 0.06 and abs(np.mean(noise)) < 0.1  # sd 0.016 and 0.022


def test_piecewise_bernoulli_means_and_dynamic_regret():
    """SMPyBandits' problem: means per segment of 400 rounds; always playing arm 2 (.9, .9, .1, .1, .1) costs, against
    each round's best arm, 0 + 0 + 400 (.2 - .1) + 400 (.7 - .1) + 400 (.7 - .1) = 520 exactly."""
    env = gym.make("CtxBandit/PiecewiseBernoulli-v0")
    assert env.unwrapped.change_points == (401, 801, 1201, 1601) and env.spec.max_episode_steps == 2000
    means = np.array([[.2, .5, .9], [.2, .2, .9], [.2, .2, .1], [.7, .2, .1], [.7, .5, .1]])
    obs, _ = env.reset(seed=0)
    np.testing.assert_array_equal(obs, np.eye(3))
    regret, flagged, rewards = 0.0, [], []
    for t in range(2000):
        segment = t // 400
        np.testing.assert_array_equal(env.unwrapped.expected_rewards, means[segment])
        _, reward, _, truncated, info = env.step(2)
        assert info["optimal_expected_reward"] == means[segment].max() and info["expected_reward"] == means[segment, 2]
        regret += info["regret"]
        rewards.append(reward)
        flagged += [t + 1] if info["change_point"] else []
    assert regret == pytest.approx(520, abs=1e-9) and flagged == [401, 801, 1201, 1601] and truncated
    assert set(rewards) == {0.0, 1.0} and abs(np.mean(rewards[:800]) - 0.9) < 0.05  # Bernoulli(0.9), sd 0.011


def test_schedule_abrupt_values_on_linear():
    """Given values: the pool is drawn once, theta* takes each segment's value, the means follow (x^T theta_s)."""
    env = gym.make("CtxBandit/Scheduled-v0", env_kwargs=SMALL,
                   schedule={"kind": "abrupt", "change_points": [4], "values": {"theta": [[1, 0, 0], [0, 0, -2]]}})
    rounds = rollout(env, 6, action=1)
    for t, (x, info) in enumerate(rounds):
        theta = np.array([1.0, 0, 0]) if t < 3 else np.array([0, 0, -2.0])
        means = x.astype(np.float64) @ theta
        assert info["expected_reward"] == pytest.approx(means[1]) and info["optimal_action"] == means.argmax()
        assert info["change_point"] == (t + 1 == 4)
    np.testing.assert_array_equal(rounds[0][0], rounds[-1][0])  # the same fixed arms throughout
    np.testing.assert_array_equal(env.unwrapped.parameters["theta"], [0, 0, -2])


def test_schedule_abrupt_fresh_instances_fixed_by_instance_seed():
    """Without values, each segment is a fresh instance (new arms and theta), drawn at reset; instance_seed fixes all."""
    def arms(seed, **kwargs):
        env = gym.make("CtxBandit/Scheduled-v0", env_kwargs=SMALL, schedule={"kind": "abrupt", "change_points": [3]},
                       **kwargs)
        return [x for x, _ in rollout(env, 4, seed=seed)]

    a = arms(0)
    np.testing.assert_array_equal(a[0], a[1])
    assert not np.array_equal(a[1], a[2]) and np.array_equal(a[2], a[3])
    fixed_1, fixed_2 = arms(1, instance_seed=5), arms(2, instance_seed=5)
    for x1, x2 in zip(fixed_1, fixed_2):
        np.testing.assert_array_equal(x1, x2)


def test_schedule_rotation_on_sphere_linear():
    """theta_t = cos(a_t) theta_0 + sin(a_t) ||theta_0|| v, a_t = 2 pi min(t, until) / period, v a unit vector
    orthogonal to theta_0; the means the agent faces are x^T theta_t; the turn stops at `until`."""
    env = gym.make("CtxBandit/Scheduled-v0", env="CtxBandit/SphereLinear-v0", env_kwargs=SMALL,
                   schedule={"kind": "rotation", "period": 12, "until": 5})
    obs, _ = env.reset(seed=2)
    instance = env.unwrapped.instance
    theta0, v = instance["theta"], instance["schedule/v"]
    assert abs(v @ theta0) < 1e-12 and np.linalg.norm(v) == pytest.approx(1)
    for t in range(8):
        angle = 2 * np.pi * min(t, 5) / 12
        theta = np.cos(angle) * theta0 + np.sin(angle) * np.linalg.norm(theta0) * v
        means = obs.astype(np.float64) @ theta
        obs, _, _, _, info = env.step(0)
        assert info["expected_reward"] == pytest.approx(means[0], abs=1e-12)
        assert info["optimal_expected_reward"] == pytest.approx(means.max(), abs=1e-12)
    np.testing.assert_array_equal(env.unwrapped.instance["theta"], theta0)  # the instance as drawn at reset


def test_schedule_random_walk_on_logistic_with_common_random_numbers():
    """theta_t = theta_{t-1} + std xi_t on a pool family (the pool's means mu(x^T theta_t) recomputed), the walk drawn
    from the episode's generator in a fixed count a round: two agents playing different arms see the same walk."""
    def walk(action):
        env = gym.make("CtxBandit/Scheduled-v0", env="CtxBandit/Logistic-v0", env_kwargs=SMALL,
                       schedule={"kind": "random_walk", "std": 0.5})
        env.reset(seed=7)
        thetas, infos = [env.unwrapped.parameters["theta"]], []
        for _ in range(5):
            infos.append(env.step(action)[4])
            thetas.append(env.unwrapped.parameters["theta"])
            pool = env.unwrapped.instance["pool"].astype(np.float64)
            np.testing.assert_allclose(env.unwrapped.expected_rewards, 1 / (1 + np.exp(-pool @ thetas[-1])), rtol=1e-12)
        return np.array(thetas), infos

    (a, infos_a), (b, infos_b) = walk(0), walk(4)
    np.testing.assert_array_equal(a, b)
    assert np.all(np.linalg.norm(np.diff(a, axis=0), axis=1) > 0)
    assert [i["optimal_expected_reward"] for i in infos_a] == [i["optimal_expected_reward"] for i in infos_b]


def test_concept_drift_relabels_the_classes():
    """relabel=: in segment s an example of class c pays at arm sigma_s(c); given permutations are used as they are,
    drawn ones start with the identity, change at every change point and are fixed by instance_seed."""
    y = np.arange(30) % 3
    data = {"X": pd.DataFrame(np.eye(3)[y], columns=list("abc")), "y": y}
    perms = [[0, 1, 2], [2, 0, 1], [1, 2, 0]]
    env = gym.make("CtxBandit/Supervised-v0", relabel={"change_points": [4, 7], "permutations": perms}, **data)
    assert env.unwrapped.change_points == (4, 7)
    _, info = env.reset(seed=0)
    for t in range(9):
        c = int(np.argmax(info["context"]))  # the one-hot context gives the example's class
        segment = 0 if t < 3 else 1 if t < 6 else 2
        paying = perms[segment][c]
        np.testing.assert_array_equal(env.unwrapped.expected_rewards, np.eye(3)[paying])
        *_, info = env.step(c)
        assert info["regret"] == (0.0 if paying == c else 1.0) and info["change_point"] == (t + 1 in (4, 7))

    def drawn(seed, **kwargs):
        e = gym.make("CtxBandit/Supervised-v0", relabel={"change_points": [10, 20, 30]}, **data, **kwargs)
        e.reset(seed=seed)
        return e.unwrapped.instance["relabel"]

    first = drawn(0)
    np.testing.assert_array_equal(first[0], [0, 1, 2])
    assert all(sorted(p) == [0, 1, 2] for p in first) and all((a != b).any() for a, b in itertools.pairwise(first))
    np.testing.assert_array_equal(drawn(1, instance_seed=3), drawn(2, instance_seed=3))
    assert any(not np.array_equal(drawn(0), drawn(s)) for s in range(1, 5))


def test_runner_runs_a_schedule_from_json_kwargs():
    """`ctxbandits run`'s path: an EnvSpec of JSON-able kwargs, the seeds batched in the native vector env."""
    spec = EnvSpec("CtxBandit/Scheduled-v0", {"env": "CtxBandit/Linear-v0", "env_kwargs": SMALL,
                                              "schedule": {"kind": "abrupt", "change_points": [10]}})
    table = gym_ctxbandits.run([spec], ["LinUCB"], seeds=2, horizon=20)
    assert len(table) == 40 and (table["regret"] >= 0).all()


@pytest.mark.parametrize("env_id, kwargs, words", [
    ("CtxBandit/RussacAbrupt-v0", {"schedule": "fast"}, "schedule must be one of"),
    ("CtxBandit/PiecewiseBernoulli-v0", {"means": [[0.1, 0.2]]}, "one row of K arm means per segment"),
    ("CtxBandit/PiecewiseBernoulli-v0", {"means": [[0.1], [1.2]], "change_points": [5]}, r"in \[0, 1\]"),
    ("CtxBandit/PiecewiseBernoulli-v0", {"means": [[0.1], [0.2], [0.3]], "change_points": [5, 5]}, "strictly increasing"),
    ("CtxBandit/PiecewiseBernoulli-v0", {"means": [[0.1], [0.2]], "change_points": [1]}, ">= 2"),
    ("CtxBandit/Scheduled-v0", {"schedule": {"kind": "jump"}}, "'kind' one of"),
    ("CtxBandit/Scheduled-v0", {"schedule": {"kind": "abrupt"}}, "needs 'change_points'"),
    ("CtxBandit/Scheduled-v0", {"schedule": {"kind": "rotation", "period": 5, "speed": 1}}, "not \\['speed'\\]"),
    ("CtxBandit/Scheduled-v0", {"schedule": {"kind": "rotation", "period": 5, "param": "phi"}}, "its keys are"),
    ("CtxBandit/Scheduled-v0", {"schedule": {"kind": "rotation", "period": 0}}, "period"),
    ("CtxBandit/Scheduled-v0", {"env": "CtxBandit/Quadratic-v0", "schedule": {"kind": "rotation", "period": 5,
                                                                               "param": "A"}}, "turns a vector"),
    ("CtxBandit/Scheduled-v0", {"schedule": {"kind": "random_walk", "std": -1}}, "std"),
    ("CtxBandit/Scheduled-v0", {"schedule": {"kind": "abrupt", "change_points": [5], "values": {"theta": [[1]]}}},
     "2 finite values"),
    ("CtxBandit/Scheduled-v0", {"env": "CtxBandit/FixedActionSet-v0", "schedule": {"kind": "abrupt",
                                                                                    "change_points": [5]}}, "given"),
    ("CtxBandit/Scheduled-v0", {"env_kwargs": {"instance_seed": 1}}, "give instance_seed to Scheduled-v0"),
    ("CtxBandit/Supervised-v0", {"relabel": {"change_points": [5], "permutations": [[0, 1, 2], [0, 0, 1]]}},
     "permutations of 0..2"),
    ("CtxBandit/Supervised-v0", {"relabel": {"at": [5]}}, "relabel must be a dict"),
])
def test_bad_kwargs_name_the_fix(env_id, kwargs, words):
    with pytest.raises(ValueError, match=words):
        gym.make(env_id, **kwargs)
