"""The ranking envs (issue 50): each click model's expected reward against its closed form and against Monte
Carlo of the env, the optimal list against brute force over every list, the contract (regret, info, bad
actions, vector env = single envs), Gymnasium's and the package's conformance checks, and Stable-Baselines3."""

import itertools

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env as gymnasium_check_env

import gym_ctxbandits  # noqa: F401  (registers the ids)
from gym_ctxbandits.checks import check_env
from gym_ctxbandits.datasets import DatasetNotFound
from gym_ctxbandits.envs import CascadeEnv, ContextualCascadeEnv, DCMEnv, DistinctItems, PBMEnv, RankingSpace
from gym_ctxbandits.envs.ranking import ranking_vector_env

W6 = [0.1, 0.5, 0.3, 0.05, 0.4, 0.2]
# Small instances of every click model, with unequal position weights where the model has them.
SMALL = {
    "cascade": lambda: CascadeEnv(num_items=6, num_positions=3, attractions=W6),
    "pbm": lambda: PBMEnv(setting=None, attractions=W6, kappas=[0.5, 1.0, 0.7]),
    "dcm": lambda: DCMEnv(num_items=6, num_positions=3, attractions=W6, termination=[0.6, 0.9, 0.3]),
    "contextual": lambda: ContextualCascadeEnv(num_items=6, num_positions=3, dim=4),
}
RANKING_IDS = ["CascadeBLB", "CascadeRusso", "PBMStd", "DCM", "ContextualCascade"]


def closed_form(model: str, env, ranking) -> float:
    """The click model's expected reward of `ranking`, written from the papers' formulas."""
    u = env.unwrapped
    w = u.attractions[list(ranking)]
    if model == "pbm":
        return float(np.sum(u.kappas * w))                        # sum_k kappa_k theta(a_k)
    if model == "dcm":
        return float(1 - np.prod(1 - u.termination * w))         # 1 - prod_k (1 - v(k) w(a_k))
    return float(1 - np.prod(1 - w))                              # 1 - prod_k (1 - w(a_k))


def all_lists(env):
    u = env.unwrapped
    return itertools.permutations(range(u.num_items), u.num_positions)


@pytest.mark.parametrize("model", SMALL)
def test_expected_reward_and_optimum_against_closed_form_and_brute_force(model):
    env = SMALL[model]()
    env.reset(seed=3)
    values = {}
    for ranking in all_lists(env):
        clone_info = env.step(np.array(ranking))[4]
        values[ranking] = closed_form(model, env, ranking)
        assert clone_info["expected_reward"] == pytest.approx(values[ranking], abs=1e-12)
        assert clone_info["regret"] >= 0
    best = max(values.values())
    assert clone_info["optimal_expected_reward"] == pytest.approx(best, abs=1e-12)
    assert values[tuple(clone_info["optimal_action"])] == pytest.approx(best, abs=1e-12)
    assert env.step(clone_info["optimal_action"])[4]["regret"] == 0.0


def test_known_optima():
    """Cascade: the 3 most attractive items (1, 4, 2); PBM: them at positions in decreasing kappa (1.0, 0.7, 0.5);
    DCM: them in decreasing termination order (0.9, 0.6, 0.3); every order of the cascade's best set costs 0."""
    infos = {}
    for model in ("cascade", "pbm", "dcm"):
        env = SMALL[model]()
        env.reset(seed=0)
        infos[model] = env.step(np.array([0, 3, 5]))[4]
    assert infos["cascade"]["optimal_action"].tolist() == [1, 4, 2]
    assert infos["pbm"]["optimal_action"].tolist() == [2, 1, 4]
    assert infos["dcm"]["optimal_action"].tolist() == [4, 1, 2]
    assert infos["pbm"]["optimal_expected_reward"] == pytest.approx(0.5 * 0.3 + 1.0 * 0.5 + 0.7 * 0.4)
    env = SMALL["cascade"]()
    env.reset(seed=0)
    assert all(env.step(np.array(p))[4]["regret"] == 0.0 for p in itertools.permutations([1, 4, 2]))


@pytest.mark.parametrize("model", ["cascade", "pbm", "dcm"])
def test_monte_carlo_of_the_env_matches_the_click_model(model):
    """Mean reward, click rate and examination rate per position over 8,000 users (a 64-env vector env),
    against the model's probabilities, within 5 standard errors."""
    n_envs, rounds = 64, 125
    single = SMALL[model]()
    kwargs = {"cascade": {"num_items": 6, "num_positions": 3, "attractions": W6},
              "pbm": {"setting": None, "attractions": W6, "kappas": [0.5, 1.0, 0.7]},
              "dcm": {"num_items": 6, "num_positions": 3, "attractions": W6, "termination": [0.6, 0.9, 0.3]}}[model]
    vec = ranking_vector_env(type(single), __name__)(num_envs=n_envs, **kwargs)
    vec.reset(seed=0)
    ranking = np.array([4, 0, 2])
    rewards, clicks, examined = [], [], []
    for _ in range(rounds):
        _, r, _, _, info = vec.step(np.tile(ranking, (n_envs, 1)))
        rewards.append(r)
        clicks.append(info["clicks"])
        examined.append(info["examined"])
    rewards, clicks, examined = np.concatenate(rewards), np.concatenate(clicks), np.concatenate(examined)
    single.reset(seed=0)
    w = single.attractions[ranking]
    if model == "pbm":
        kappa = single.kappas
        p_click, p_exam = kappa * w, kappa
    else:
        v = single.termination if model == "dcm" else np.ones(3)     # the cascade stops at the first click
        p_exam = np.r_[1.0, np.cumprod(1 - v * w)[:-1]]              # not stopped before position k
        p_click = p_exam * w
    n = len(rewards)
    expected = closed_form(model, single, ranking)
    assert abs(rewards.mean() - expected) < 5 * rewards.std() / np.sqrt(n) + 1e-9
    for observed, p in ((clicks.mean(0), p_click), (examined.mean(0), p_exam)):
        assert np.all(np.abs(observed - p) < 5 * np.sqrt(p * (1 - p) / n) + 1e-9), (observed, p)


def test_common_random_numbers_same_users_whatever_the_list():
    """Two envs of one seed: the top item's click and the rewards of a later common list do not depend on
    the lists shown before (one uniform per item and per position a round)."""
    a, b = SMALL["cascade"](), SMALL["cascade"]()
    a.reset(seed=5)
    b.reset(seed=5)
    for _ in range(50):
        ia, ib = a.step(np.array([1, 0, 3]))[4], b.step(np.array([1, 5, 2]))[4]
        assert ia["clicks"][0] == ib["clicks"][0]
    assert [a.step(np.array([0, 1, 2]))[1] for _ in range(20)] == [b.step(np.array([0, 1, 2]))[1] for _ in range(20)]


def test_vector_env_equals_single_envs_bit_for_bit():
    vec = gym.make_vec("CtxBandit/CascadeRusso-v0", num_envs=3, vectorization_mode="vector_entry_point")
    singles = [gym.make("CtxBandit/CascadeRusso-v0") for _ in range(3)]
    obs, _ = vec.reset(seed=10)
    for i, s in enumerate(singles):
        assert np.array_equal(obs[i], s.reset(seed=10 + i)[0])
    rng = np.random.default_rng(0)
    for _ in range(30):
        actions = np.stack([rng.permutation(50)[:10] for _ in range(3)])
        obs, rewards, _, _, info = vec.step(actions)
        for i, s in enumerate(singles):
            o, r, _, _, inf = s.step(actions[i])
            assert np.array_equal(obs[i], o) and rewards[i] == r
            assert all(np.array_equal(info[k][i], inf[k]) for k in inf)
    with pytest.raises(ValueError, match="one ranking per sub-environment"):
        vec.step(np.arange(10))


@pytest.mark.parametrize("action, error, match", [
    ([1, 1, 2], ValueError, "repeats items \\[1\\]"),
    ([0, 1, 6], ValueError, "out of range"),
    ([0, 1], ValueError, "exactly 3 items"),
    ([0.0, 1.0, 2.0], TypeError, "integer item indices"),
    ([True, False, True], TypeError, "integer item indices"),
    (3, ValueError, "exactly 3 items"),
])
def test_bad_actions_are_refused_with_the_fix(action, error, match):
    env = SMALL["cascade"]()
    env.reset(seed=0)
    with pytest.raises(error, match=match):
        env.step(action)


@pytest.mark.parametrize("make, match", [
    (lambda: CascadeEnv(num_items=3, num_positions=4), "exceeds num_items"),
    (lambda: CascadeEnv(p=0.1, delta=0.2), "delta <= p"),
    (lambda: CascadeEnv(num_items=3, num_positions=2, attractions=[0.1, 1.5, 0.2]), "probabilities"),
    (lambda: CascadeEnv(num_items=3, num_positions=2, attractions=[0.1, 0.2]), "needs 3 values"),
    (lambda: CascadeEnv(attractions=[0.1] * 16, beta_prior=(1, 10)), "not both"),
    (lambda: DCMEnv(termination=[0.5, 0.5]), "termination needs 4 values"),
    (lambda: PBMEnv(setting="bing"), "unknown PBM setting"),
    (lambda: PBMEnv(attractions=[0.1, 0.2]), "both attractions and kappas"),
    (lambda: PBMEnv(setting="std", query=3, attractions=[0.1, 0.2], kappas=[1.0]), "setting=None"),
    (lambda: ContextualCascadeEnv(theta_norm=2.0), "unit ball"),
])
def test_bad_kwargs_are_refused(make, match):
    with pytest.raises(ValueError, match=match):
        make()


def test_ranking_space_samples_distinct_items_and_refuses_repeats():
    space = RankingSpace(5, 4, seed=0)
    assert isinstance(space, gym.spaces.MultiDiscrete) and space.nvec.tolist() == [5] * 4
    samples = [space.sample() for _ in range(200)]
    assert all(len(set(s)) == 4 and space.contains(s) for s in samples)
    assert not space.contains(np.array([0, 0, 1, 2]))


def test_distinct_items_wrapper_repairs_repeats_in_order():
    env = DistinctItems(CascadeEnv(num_items=6, num_positions=4, attractions=W6))
    assert env.action(np.array([3, 3, 1, 3])).tolist() == [3, 0, 1, 2]
    assert env.action(np.array([5, 4, 3, 2])).tolist() == [5, 4, 3, 2]


def test_instances_blb_russo_and_contextual():
    blb = gym.make("CtxBandit/CascadeBLB-v0", num_items=32, num_positions=8)
    blb.reset(seed=0)
    assert blb.unwrapped.attractions.tolist() == [0.2] * 8 + [pytest.approx(0.05)] * 24
    russo = gym.make("CtxBandit/CascadeRusso-v0")
    draws = np.concatenate([(russo.reset(seed=s), russo.unwrapped.attractions)[1] for s in range(40)])
    assert abs(draws.mean() - 1 / 11) < 0.01  # Beta(1, 10) has mean 1/11; 2,000 draws, sd 0.0019
    fixed = gym.make("CtxBandit/CascadeRusso-v0", instance_seed=4)
    fixed.reset(seed=1)
    first = fixed.unwrapped.attractions
    fixed.reset(seed=2)
    assert np.array_equal(first, fixed.unwrapped.attractions)
    ctx = gym.make("CtxBandit/ContextualCascade-v0")
    obs, _ = ctx.reset(seed=0)
    u = ctx.unwrapped
    assert obs.shape == (100, 20) and obs.min() >= 0 and np.linalg.norm(obs, axis=1).max() <= 1 + 1e-6
    assert np.allclose(u.attractions, obs.astype(np.float64) @ u.instance["theta"])
    assert np.linalg.norm(u.instance["theta"]) == pytest.approx(0.5)


@pytest.mark.parametrize("model", SMALL)
def test_gymnasium_check_env(model):
    env = SMALL[model]()
    gymnasium_check_env(env, skip_render_check=True)
    assert env.kind == "ranking"


@pytest.mark.parametrize("cls, kwargs", [
    (CascadeEnv, {"num_items": 6, "num_positions": 3, "beta_prior": (1.0, 3.0)}),
    (DCMEnv, {"num_items": 5, "num_positions": 5}),
    (ContextualCascadeEnv, {"num_items": 8, "num_positions": 3, "dim": 2}),
])
def test_package_checks_on_env_classes(cls, kwargs):
    check_env(cls, **kwargs)


class Lenient(CascadeEnv):
    """Plays a list without checking it (a repeated item is accepted)."""

    def step(self, action):
        rewards, info = self._batch.step(np.asarray(action, dtype=np.int64)[None])
        return self._batch.features[0].copy(), float(rewards[0]), False, False, {k: v[0] for k, v in info.items()}


class NoCRN(CascadeEnv):
    """Position k uses the k-th smallest uniform of the listed items: the top user depends on the whole list."""

    def clicks(self, instances, w, u_items, u_positions):
        return super().clicks(instances, w, np.sort(u_items, axis=1), u_positions)


class WrongOptimum(PBMEnv):
    """Puts the best items at the least examined positions."""

    def position_weights(self, instances):
        return -super().position_weights(instances)


@pytest.mark.parametrize("cls, kwargs, match", [
    (Lenient, {"num_items": 6, "num_positions": 3}, "with a repeated item was accepted"),
    (NoCRN, {"num_items": 6, "num_positions": 3, "attractions": W6}, "common random numbers"),
    (WrongOptimum, {"setting": "std"}, "above the optimal"),
])
def test_the_checks_catch_broken_ranking_envs(cls, kwargs, match):
    with pytest.raises(AssertionError, match=match):
        check_env(cls, **kwargs)


def test_observation_is_a_new_one_hot_array_each_call():
    env = gym.make("CtxBandit/PBMStd-v0")
    obs, _ = env.reset(seed=0)
    assert obs.dtype == np.float32 and np.array_equal(obs, np.eye(10))
    obs[0, 0] = 7
    assert env.step(np.arange(5))[0][0, 0] == 1
    assert env.unwrapped.kappas.tolist() == [1, 0.75, 0.6, 0.3, 0.1]


def test_data_ids_make_from_the_data_home_or_name_the_file(monkeypatch, tmp_path):
    monkeypatch.setenv("CTXBANDITS_DATA", str(tmp_path))
    with pytest.raises(DatasetNotFound, match="param_KDD.json or param_KDD.txt not found.*gaudel/ranking_bandits"):
        gym.make("CtxBandit/PBMKDD-v0")


def test_stable_baselines3_learns_on_a_ranking_env():
    """SB3 builds a MultiDiscrete policy; DistinctItems repairs its independently drawn positions (issue 50: RL
    libraries drive the envs). In the default suite: torch and SB3 are imported by tests/test_delays.py's SB3
    test too, so this adds PPO's 64 steps (3.3 s on an idle core with the imports, under 1 s without)."""
    ppo = pytest.importorskip("stable_baselines3").PPO
    env = DistinctItems(gym.make("CtxBandit/PBMStd-v0", max_episode_steps=32))
    model = ppo("MlpPolicy", env, n_steps=32, batch_size=32, n_epochs=1, seed=0, device="cpu").learn(64)
    assert model.num_timesteps == 64


@pytest.mark.parametrize("env_id", RANKING_IDS)
def test_registered_ids_make_and_step(env_id):
    env = gym.make(f"CtxBandit/{env_id}-v0")
    env.reset(seed=0)
    info = env.step(env.action_space.sample())[4]
    assert set(info) == {"clicks", "examined", "expected_reward", "optimal_expected_reward", "optimal_action", "regret"}
