"""The Contextual Bandit Bake-off's protocol as `Supervised-v0` options (issue 49 item 3): one shuffled
pass over the rows (`stream="pass"`), the two cost encodings, raw features, the "cb-bakeoff" preset,
on arrays (always) and on a PMLB set (where $CTXBANDITS_DATA holds pmlb/); and the default stream's
numbers pinned, so that the options leave every existing env as it was."""

import os
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import gym_ctxbandits  # noqa: F401
from gym_ctxbandits.checks import check_env
from gym_ctxbandits.envs import SupervisedEnv

ID = "CtxBandit/Supervised-v0"
N = 40
X = np.arange(N, dtype=float)[:, None]  # the context is the row's index (scaling="none")
Y = np.arange(N) % 3
PMLB = Path(os.environ.get("CTXBANDITS_DATA") or "$CTXBANDITS_DATA (unset)") / "pmlb" / "iris"
needs_pmlb = pytest.mark.skipif(not PMLB.is_dir(), reason=f"no folder {PMLB} (set $CTXBANDITS_DATA to a data home "
                                                          "holding pmlb/)")


def rows_of_a_pass(env, seed=None):
    """The rows shown in one episode, until it truncates; and the number of steps."""
    _, info = env.reset(seed=seed)
    rows, steps, truncated = [int(info["context"][0])], 0, False
    while not truncated:
        _, _, _, truncated, info = env.step(0)
        steps += 1
        rows.append(int(info["context"][0]))
    return rows[:-1], steps   # the observation after the last round repeats the pass's first row


def test_one_pass_is_a_permutation_drawn_from_the_seed():
    env = gym.make(ID, X=X, y=Y, scaling="none", stream="pass", max_episode_steps=N)
    first, steps = rows_of_a_pass(env, seed=0)
    assert steps == N and sorted(first) == list(range(N))               # every row exactly once
    assert rows_of_a_pass(gym.make(ID, X=X, y=Y, scaling="none", stream="pass", max_episode_steps=N), 0)[0] == first
    assert rows_of_a_pass(env, seed=1)[0] != first                       # another seed, another order
    again, _ = rows_of_a_pass(env)                                       # the next episode: a new order
    assert sorted(again) == list(range(N)) and again != first
    short, steps = rows_of_a_pass(gym.make(ID, X=X, y=Y, scaling="none", stream="pass", max_episode_steps=15), 0)
    assert steps == 15 and short == first[:15]                           # T < n: the order's first T rows


def test_a_horizon_beyond_the_pass_is_refused_naming_the_fix():
    env = gym.make(ID, X=X, y=Y, scaling="none", stream="pass")         # the registered horizon, 10^4 > 40
    env.reset(seed=0)
    for _ in range(N):
        assert env.step(0)[3] is False
    with pytest.raises(ValueError, match=r"stream='pass': the pass over the 40 rows of arrays ended at round 40; "
                                         r"reset\(\) for another pass .*max_episode_steps\) <= 40, or use "
                                         r"stream='iid'") as err:
        env.step(0)
    assert "\n" not in str(err.value)
    env.reset()
    env.step(0)                                                          # a new pass


def test_instance_seed_leaves_the_order_to_the_episode_seed():
    env = gym.make(ID, X=X, y=Y, scaling="none", stream="pass", instance_seed=3, max_episode_steps=N)
    assert rows_of_a_pass(env, 0)[0] != rows_of_a_pass(env, 1)[0] and env.unwrapped.instance == {}


def test_vector_env_plays_the_single_envs_passes_and_refuses_a_longer_horizon():
    vec = gym.make_vec(ID, num_envs=2, vectorization_mode="vector_entry_point", X=X, y=Y, scaling="none",
                       stream="pass", max_episode_steps=N + 5)
    obs, _ = vec.reset(seed=4)
    shown = [obs[:, 0, 0].astype(int)]
    for _ in range(N):
        obs, _, _, truncated, _ = vec.step(np.zeros(2, int))
        shown.append(obs[:, 0, 0].astype(int))
    assert not truncated.any()
    for i in range(2):
        single = gym.make(ID, X=X, y=Y, scaling="none", stream="pass", max_episode_steps=N)
        assert [int(s[i]) for s in shown[:N]] == rows_of_a_pass(single, 4 + i)[0]
    with pytest.raises(ValueError, match=r"ended at round 40; .*keep the horizon \(max_episode_steps\) <= 40"):
        vec.step(np.zeros(2, int))


@pytest.mark.parametrize("encoding, hit, miss", [(None, 1.0, 0.0), ("-1/0", 1.0, 0.0), ("0/1", 0.0, -1.0)])
def test_cost_encodings(encoding, hit, miss):
    """reward = -cost: "-1/0" pays 1 for the true class and 0 otherwise, "0/1" 0 and -1; the regret is the same."""
    env = gym.make(ID, X=X, y=Y, scaling="none", stream="pass", cost_encoding=encoding)
    _, info = env.reset(seed=2)
    for t in range(2 * N // 3):
        label = Y[int(info["context"][0])]
        _, reward, _, _, info = env.step(t % 3)
        assert reward == (hit if t % 3 == label else miss) and info["regret"] == float(t % 3 != label)
        assert info["optimal_expected_reward"] == hit and info["optimal_action"] == label


def test_the_cb_bakeoff_preset_and_kwargs_over_it():
    raw = np.random.default_rng(0).normal(scale=50, size=(30, 2))
    env = gym.make(ID, X=raw, y=np.arange(30) % 2, preset="cb-bakeoff").unwrapped
    assert (env.stream, env.cost_encoding, env.scaling, env.noise_std) == ("pass", "-1/0", "none", 0.0)
    np.testing.assert_array_equal(env.X, raw.astype(np.float32))           # features as they are
    assert env.observation_space.high.max() == np.abs(env.X).max()
    env = gym.make(ID, X=raw, y=np.arange(30) % 2, preset="cb-bakeoff", stream="iid", cost_encoding="0/1",
                   scaling="l2").unwrapped
    assert (env.stream, env.cost_encoding, env.scaling) == ("iid", "0/1", "l2")


@pytest.mark.parametrize("kwargs, match", [
    ({"stream": "shuffled"}, r"stream must be one of \('iid', 'pass'\), got 'shuffled'"),
    ({"cost_encoding": "1/0"}, r"cost_encoding must be one of \('-1/0', '0/1'\), got '1/0'"),
    ({"preset": "bakeoff"}, r"preset must be one of \('S0', 'S3', 'S2', 'cb-bakeoff'\) or None"),
])
def test_bad_options_are_named(kwargs, match):
    with pytest.raises(ValueError, match=match):
        gym.make(ID, X=X, y=Y, **kwargs)


def test_conformance_of_the_pass_stream_on_arrays():
    check_env(ID, X=np.random.default_rng(1).normal(size=(80, 3)), y=np.arange(80) % 4, stream="pass",
              cost_encoding="0/1")


@needs_pmlb
def test_conformance_and_one_pass_of_a_pmlb_set():
    check_env(ID, source="pmlb:iris", preset="cb-bakeoff")
    check_env(SupervisedEnv, source="pmlb:iris", preset="cb-bakeoff")
    env = gym.make(ID, source="pmlb:iris", preset="cb-bakeoff", max_episode_steps=150)
    data = env.unwrapped.X
    _, info = env.reset(seed=0)
    shown, truncated = [info["context"]], False
    while not truncated:
        _, _, _, truncated, info = env.step(0)
        shown.append(info["context"])
    shown = np.array(shown[:-1])
    assert len(shown) == 150 and env.unwrapped.classes == ("0", "1", "2")
    order = np.lexsort(shown.T[::-1])
    np.testing.assert_array_equal(shown[order], data[np.lexsort(data.T[::-1])])  # the rows, each once


def test_the_default_stream_is_unchanged():
    """The i.i.d. rows of iris for seed 0, as every version since 0.2 drew them (known answer), and the
    defaults' trajectory equal to the explicit iid / -1/0 one."""
    env, explicit = gym.make(ID), gym.make(ID, stream="iid", cost_encoding="-1/0")
    (_, info), (_, info2) = env.reset(seed=0), explicit.reset(seed=0)
    data = env.unwrapped.X
    for t, row in enumerate([127, 95, 11, 2, 75, 90, 83, 140]):
        np.testing.assert_array_equal(info["context"], data[row])
        np.testing.assert_array_equal(info2["context"], data[row])
        a, b = env.step(t % 3), explicit.step(t % 3)
        info, info2 = a[4], b[4]
        np.testing.assert_array_equal(a[0], b[0])
        assert a[1:4] == b[1:4] and not a[3]
