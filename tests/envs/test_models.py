"""Each reward model against its formula in the papers, recomputed here from the instance."""

import gymnasium as gym
import numpy as np
import pytest

import gym_ctxbandits  # noqa: F401


def sig(x):
    return 1.0 / (1.0 + np.exp(-x))


def mlp_p2(x, p):
    h = np.maximum(x @ p["W0"], 0)
    h = np.maximum(h @ p["W1"], 0)
    z = h @ p["W2"] / 0.1
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return (e / e.sum(axis=1, keepdims=True))[:, 1]


# env id -> expected mean rewards of the (K, d) features x under instance p, written from the papers.
FORMULAS = {
    "Linear": lambda x, p: x @ p["theta"],
    "Logistic": lambda x, p: sig(x @ p["theta"]),
    "Distance": lambda x, p: -np.sqrt(((x - p["theta"]) ** 2).sum(axis=1)),
    # (optimize=True: the same sum contracted pairwise, not as one loop over all four indices)
    "Quadratic": lambda x, p: 1e-2 * np.einsum("ki,ij,lj,kl->k", x, p["A"], p["A"], x, optimize=True),
    "QuadraticPool": lambda x, p: 1e-2 * np.einsum("ki,ij,lj,kl->k", x, p["A"], p["A"], x, optimize=True),
    "BernoulliLogistic": lambda x, p: sig(x @ p["theta"]),
    "NeuralLogisticH1": lambda x, p: sig(0.2 * (x @ p["theta"]) ** 4),
    "NeuralLogisticH2": lambda x, p: sig(20 * np.cos(x @ p["theta"])),
    "NeuralLogisticH3": lambda x, p: sig(5 * np.array([v @ p["Theta"] @ v for v in x])),
    "NeuralLogisticH4": lambda x, p: sig(10 * (x @ p["theta"]) ** 2),
    "NeuralLogisticH5": lambda x, p: sig(np.array([v @ p["Theta"].T @ p["Theta"] @ v for v in x])),
    "NeuralLogisticH6": lambda x, p: sig(np.cos(3 * x @ p["theta"])),
    "FiniteLinear": lambda x, p: x @ p["theta"],
    "SphereLinear": lambda x, p: x @ p["theta"],
    "VectorQuadratic": lambda x, p: 10 * (x @ p["theta"]) ** 2,
    "MLPTeacher": mlp_p2,
    "FixedActionSet": lambda x, p: x @ p["theta"],
    "ChangingActionSet1": lambda x, p: x @ p["theta"],
    "ChangingActionSet2": lambda x, p: x @ p["theta"],
    "BoundedRegret": lambda x, p: x @ p["theta"],
    "UnitCircle": lambda x, p: x @ p["theta"],
    "UnitCircleSmall": lambda x, p: x @ p["theta"],
    "RandomTheta": lambda x, p: x @ p["theta"],
}


# Real-data ids: their reward models (true class, target class, moderation payoffs, replay) are
# tested on small made-up datasets in tests/envs/test_data_envs.py (Supervised: test_supervised_env.py).
DATA_IDS = {"Shuttle", "Mushroom", "Adult", "Covertype", "Magic", "Banknote", "Phoneme", "MNIST", "FashionMNIST",
            "MNISTTarget", "FashionMNISTTarget", "HateSpeech", "HateSpeechTokens", "OpenBandit", "Supervised"}


# Ids whose means change with the round index: tested against theta_t in tests/envs/test_drifting.py, against
# the items on show in tests/envs/test_retiring.py.
DRIFTING_IDS = {"DriftingLinear", "RetiringItems"}
# Ranking ids (issue 50): each click model's expected reward of a list and its best list in tests/envs/test_ranking.py.
RANKING_IDS = {"CascadeBLB", "CascadeRusso", "PBMKDD", "PBMYandex", "PBMStd", "DCM", "ContextualCascade"}
# Non-stationary ids (issue 51): their schedules of theta_t and means in tests/envs/test_nonstationary.py.
NONSTATIONARY_IDS = {"RussacAbrupt", "RussacSlow", "PiecewiseBernoulli", "Scheduled"}


def test_every_id_has_a_formula_test():
    ids = {i.split("/")[1].removesuffix("-v0") for i in gym.registry if i.startswith("CtxBandit/")}
    assert ids == set(FORMULAS) | DATA_IDS | DRIFTING_IDS | RANKING_IDS | NONSTATIONARY_IDS


@pytest.mark.parametrize("name", sorted(FORMULAS))
def test_expected_rewards_match_formula(name):
    env = gym.make(f"CtxBandit/{name}-v0")
    obs, _ = env.reset(seed=11)
    params = env.unwrapped.instance
    rng = np.random.default_rng(0)
    for _ in range(25):
        means = FORMULAS[name](obs.astype(np.float64), params)
        a = int(rng.integers(len(means)))
        obs_next, reward, _, _, info = env.step(a)
        assert info["expected_reward"] == pytest.approx(means[a], rel=1e-9, abs=1e-9)
        assert info["optimal_expected_reward"] == pytest.approx(means.max(), rel=1e-9, abs=1e-9)
        assert means[info["optimal_action"]] == pytest.approx(means.max(), rel=1e-9, abs=1e-9)
        obs = obs_next


def noise_residuals(env_id, steps=4000, **kwargs):
    env = gym.make(env_id, **kwargs)
    env.reset(seed=5)
    out = []
    for t in range(steps):
        _, r, _, _, info = env.step(t % env.action_space.n)
        out.append((r, info["expected_reward"]))
    return np.array(out)


@pytest.mark.parametrize("env_id,std", [("CtxBandit/Linear-v0", 0.5), ("CtxBandit/FiniteLinear-v0", 1.0),
                                        ("CtxBandit/QuadraticPool-v0", 0.1), ("CtxBandit/UnitCircle-v0", 1.0)])
def test_gaussian_noise_mean_and_spread(env_id, std):
    r, m = noise_residuals(env_id).T
    resid = r - m
    assert abs(resid.mean()) < 4 * std / np.sqrt(len(resid))
    assert 0.93 * std < resid.std() < 1.07 * std


@pytest.mark.parametrize("env_id", ["CtxBandit/BernoulliLogistic-v0", "CtxBandit/NeuralLogisticH6-v0", "CtxBandit/MLPTeacher-v0"])
def test_bernoulli_rewards(env_id):
    r, m = noise_residuals(env_id).T
    assert set(np.unique(r)) <= {0.0, 1.0}
    assert abs((r - m).mean()) < 4 * 0.5 / np.sqrt(len(r))


def test_noise_std_kwarg_scales_noise():
    r, m = noise_residuals("CtxBandit/Linear-v0", steps=2000, noise_std=2.0).T
    assert 1.85 < (r - m).std() < 2.15
    r, m = noise_residuals("CtxBandit/Linear-v0", steps=50, noise_std=0.0).T
    np.testing.assert_array_equal(r, m)


def instances(env_id, n=200, **kwargs):
    env = gym.make(env_id, **kwargs)
    out = []
    for s in range(n):
        env.reset(seed=s)
        out.append(env.unwrapped.instance)
    return out


def test_s0_arms_and_theta_are_unit_norm():
    for inst in instances("CtxBandit/Logistic-v0", n=5):
        np.testing.assert_allclose(np.linalg.norm(inst["pool"], axis=1), 1, atol=1e-6)
        np.testing.assert_allclose(np.linalg.norm(inst["theta"]), 1)
    inst = instances("CtxBandit/Logistic-v0", n=1, num_arms=500, dim=50)[0]
    assert inst["pool"].shape == (500, 50)


@pytest.mark.parametrize("variance,expected", [(None, 3 / 10**2), (0.3, 0.3)])
def test_bernoulli_logistic_theta_variance(variance, expected):
    thetas = np.stack([i["theta"] for i in instances("CtxBandit/BernoulliLogistic-v0", theta_variance=variance)])
    assert 0.85 * expected < thetas.var() < 1.15 * expected
    arms = instances("CtxBandit/BernoulliLogistic-v0", n=1)[0]["pool"]
    assert arms.shape == (100, 10) and arms.min() >= -1 and arms.max() <= 1 and arms.min() < -0.9


def test_neural_logistic_pool_and_parameters():
    inst = instances("CtxBandit/NeuralLogisticH3-v0", n=1)[0]
    assert inst["pool"].shape == (2500, 20)
    np.testing.assert_allclose(np.linalg.norm(inst["pool"], axis=1), 1, atol=1e-6)
    assert np.abs(inst["Theta"]).max() <= 1 and inst["Theta"].std() == pytest.approx(1 / np.sqrt(3), rel=0.1)
    env = gym.make("CtxBandit/NeuralLogisticH1-v0", pool_size=10)
    obs, _ = env.reset(seed=0)
    pool = env.unwrapped.instance["pool"]
    seen = {row.tobytes() for _ in range(50) for row in env.step(0)[0]}
    assert seen <= {row.tobytes() for row in pool} and len(seen) == 10
    assert len({row.tobytes() for row in obs}) == 5, "arms of a round are drawn without replacement"


def test_neural_logistic_pool_distributions():
    """features= picks the pool's law (S2-A1): sphere, ball, N(0, I_d), U[-1, 1]^d; h1 and h2 default to the cube."""
    def pool(features, env_id="CtxBandit/NeuralLogisticH3-v0"):
        env = gym.make(env_id, **({"features": features} if features else {}))
        env.reset(seed=0)
        return env.unwrapped.instance["pool"].astype(np.float64), env.observation_space

    norms = {f: np.linalg.norm(pool(f)[0], axis=1) for f in ("sphere", "ball", "gaussian", "cube")}
    np.testing.assert_allclose(norms["sphere"], 1, atol=1e-6)
    assert norms["ball"].max() <= 1 and norms["ball"].mean() == pytest.approx(20 / 21, abs=0.01)  # E|x| = d/(d+1)
    assert norms["gaussian"].mean() == pytest.approx(np.sqrt(19.5), rel=0.02)
    cube, space = pool("cube")
    assert np.abs(cube).max() <= 1 and cube.var() == pytest.approx(1 / 3, rel=0.03) and space.high.max() == 1
    assert np.isinf(pool("gaussian")[1].high).all(), "N(0, I_d) features are unbounded"
    for h, default in [("H1", "cube"), ("H2", "cube"), ("H3", "sphere"), ("H6", "sphere")]:
        np.testing.assert_array_equal(pool(None, f"CtxBandit/NeuralLogistic{h}-v0")[0],
                                      pool(default, f"CtxBandit/NeuralLogistic{h}-v0")[0])


def test_finite_linear_box_and_prior():
    thetas = np.stack([i["theta"] for i in instances("CtxBandit/FiniteLinear-v0", n=100, num_arms=100, dim=10)])
    assert 8.5 < thetas.var() < 11.5
    u = 1 / np.sqrt(10)
    pool = instances("CtxBandit/FiniteLinear-v0", n=1, num_arms=100, dim=10, u=u)[0]["pool"]
    assert np.abs(pool).max() <= u and np.abs(pool).max() > 0.95 * u


def test_sphere_regret_is_against_the_whole_sphere():
    env = gym.make("CtxBandit/SphereLinear-v0")
    obs, _ = env.reset(seed=1)
    theta = env.unwrapped.instance["theta"]
    np.testing.assert_allclose(np.linalg.norm(obs, axis=1), 1, atol=1e-6)
    _, _, _, _, info = env.step(3)
    assert info["sphere_regret"] == pytest.approx(np.linalg.norm(theta) - obs[3].astype(np.float64) @ theta)
    assert info["sphere_regret"] >= info["regret"]


def test_quadratic_pool_shows_fifty_of_a_thousand():
    env = gym.make("CtxBandit/QuadraticPool-v0")
    obs, _ = env.reset(seed=0)
    assert obs.shape == (50, 100) and env.unwrapped.instance["pool"].shape == (1000, 100)


def test_allocation_instances_as_printed():
    env = gym.make("CtxBandit/FixedActionSet-v0", u=0.2)
    obs, _ = env.reset(seed=0)
    np.testing.assert_allclose(obs, [[1, 0], [0, 1], [0.8, 1.0]])
    gaps = [env.step(a)[4]["regret"] for a in range(3)]
    np.testing.assert_allclose(gaps, [0, 1, 0.2], atol=1e-7)

    env = gym.make("CtxBandit/ChangingActionSet1-v0")
    obs, info = env.reset(seed=0)
    sets = np.array([[[1, 0, 0], [0, 1, 0], [0.9, 0.5, 0]], [[0, 1, 0], [0, 0, 1], [0, 0.5, 0.9]]], np.float32)
    contexts = []
    for _ in range(3000):
        np.testing.assert_array_equal(obs, sets[info["context"]])
        contexts.append(info["context"])
        obs, _, _, _, info = env.step(0)
    assert 0.27 < 1 - np.mean(contexts) < 0.33  # P(A^1) = 0.3

    env = gym.make("CtxBandit/ChangingActionSet2-v0")
    obs, info = env.reset(seed=0)
    counts = np.zeros(2)
    for _ in range(3000):
        counts[info["context"]] += 1
        obs, _, _, _, info = env.step(0)
        assert info["optimal_action"] == 0  # x^1_1 and x^2_1 are the optimal arms
    assert counts[1] / counts.sum() < 0.025


def test_unit_circle_sets_and_random_theta():
    inst = instances("CtxBandit/UnitCircle-v0", n=2)
    np.testing.assert_allclose(np.linalg.norm(inst[0]["pool"], axis=1), 1, atol=1e-6)
    assert inst[0]["pool"].shape == (100, 2) and not np.array_equal(inst[0]["pool"], inst[1]["pool"])
    np.testing.assert_array_equal(inst[0]["theta"], [1, 0])
    assert instances("CtxBandit/UnitCircleSmall-v0", n=1)[0]["pool"].shape == (5, 2)
    thetas = [i["theta"] for i in instances("CtxBandit/RandomTheta-v0", n=20)]
    np.testing.assert_allclose(np.linalg.norm(thetas, axis=1), 1)
    assert len({t.tobytes() for t in thetas}) == 20


def test_mlp_teacher_means_are_probabilities():
    env = gym.make("CtxBandit/MLPTeacher-v0")
    env.reset(seed=0)
    means = env.unwrapped.instance["pool_means"]
    assert means.min() >= 0 and means.max() <= 1 and means.std() > 0.05
