"""Every environment id of the package, registered under the `CtxBandit/` namespace on import.

One id per named problem of the papers, with the paper's defaults as registered kwargs; variants
are kwargs (`gym.make("CtxBandit/Logistic-v0", num_arms=500, dim=50)`), and the horizon T is
`max_episode_steps` (`gym.make(id, max_episode_steps=...)` overrides it).
"""

from __future__ import annotations

import gymnasium as gym

# id name -> dataset name of gym_ctxbandits.datasets, for the classification bandits
CLASSIFICATION = {
    "Shuttle": "shuttle", "Mushroom": "mushroom", "Adult": "adult", "Covertype": "covertype", "Magic": "magic",
    "Banknote": "banknote", "Phoneme": "phoneme", "MNIST": "mnist", "FashionMNIST": "fashion-mnist",
}

# The image bandits draw from the 10,000 test images by default: the same law as the 60,000 training
# images for a bandit that samples examples, and the MNIST file that is most often at hand.
IMAGE_SPLIT = {"mnist": {"split": "test"}, "fashion-mnist": {"split": "test"}}

# id name -> (family, horizon T, registered kwargs, paper and section; docs/papers.md has the details)
ENVIRONMENTS: dict[str, tuple[str, int, dict, str]] = {
    # [S0] Sun, Wang, Xu: anytime ensemble sampling, section 7.1.
    "Linear": ("Linear", 10_000, {}, "[S0] 7.1 linear"),
    "Logistic": ("Logistic", 10_000, {}, "[S0] 7.1 logistic with Gaussian noise"),
    "Distance": ("Distance", 10_000, {}, "[S0] 7.1 distance"),
    "Quadratic": ("Quadratic", 10_000, {}, "[S0] 7.1 quadratic"),
    # [S1] Kveton et al.: GLM-TSL / GLM-FPL, section 5.1.
    "BernoulliLogistic": ("BernoulliLogistic", 50_000, {}, "[S1] 5.1 logistic with Bernoulli rewards"),
    # [S2] Bae, Lee: neural logistic bandits, section 7 and App. J. The pool's distribution is not stated
    # (S2-A1): U[-1, 1]^d for h1 and h2, which are nearly flat on the unit sphere; the sphere for the others.
    **{
        f"NeuralLogisticH{i}": ("NeuralLogistic", 2_000, {"reward_fn": f"h{i}", "features": "cube" if i < 3 else "sphere"},
                                f"[S2] 7 / App. J, h{i}")
        for i in range(1, 7)
    },
    # [S3] Li, Xu, Wang, Luo: Ensemble++, section 5 and App. F.
    "FiniteLinear": ("FiniteLinear", 1_000, {}, "[S3] 5.1 finite-action linear"),
    "SphereLinear": ("SphereLinear", 1_000, {}, "[S3] App. F.1 sphere-action linear"),
    "QuadraticPool": ("Quadratic", 100_000, {"num_arms": 50, "dim": 100, "pool_size": 1000, "noise_std": 0.1},
                      "[S3] 5.2 quadratic"),
    "VectorQuadratic": ("VectorQuadratic", 100_000, {}, "[S3] App. F.2 vector quadratic"),
    "MLPTeacher": ("MLPTeacher", 100_000, {}, "[S3] 5.2 neural (MLP teacher)"),
    # [S4] Hao, Lattimore, Szepesvari: OAM, section 5 and App. D.
    "FixedActionSet": ("FixedActionSet", 10_000, {}, "[S4] 5.1 fixed action set"),
    "ChangingActionSet1": ("ActionSets", 10_000, {
        "action_sets": [[[1, 0, 0], [0, 1, 0], [0.9, 0.5, 0]], [[0, 1, 0], [0, 0, 1], [0, 0.5, 0.9]]],
        "context_probs": [0.3, 0.7], "theta": [1, 0, 1]}, "[S4] 5.2 changing action set, scenario one"),
    "ChangingActionSet2": ("ActionSets", 10_000, {
        "action_sets": [[[1, 0], [0, 1], [0.9, 0.5]], [[0, 1], [-1, 0], [-1, 0]]],
        "context_probs": [0.99, 0.01], "theta": [1, 0]}, "[S4] 5.2 changing action set, scenario two"),
    "BoundedRegret": ("ActionSets", 10_000, {
        "action_sets": [[[1, 0], [0, 1], [0.9, 0.5]], [[0, 1], [-1, 0], [-1, 0]]],
        "context_probs": [0.8, 0.2], "theta": [1, 0]}, "[S4] 5.3 bounded regret"),
    "UnitCircle": ("UnitCircle", 10_000, {}, "[S4] 5.4 large fixed action set"),
    "UnitCircleSmall": ("UnitCircle", 10_000, {"num_arms": 5}, "[S4] App. D(1) small fixed action set"),
    "RandomTheta": ("UnitCircle", 10_000, {"theta": None}, "[S4] App. D(2) random theta"),
    # Not from the papers: a non-stationary example, theta drifting (envs/drifting.py).
    "DriftingLinear": ("DriftingLinear", 10_000, {}, "not from the papers: linear with a rotating theta_t"),
    # Chapelle & Li 2011, section 3: items retire and are replaced (envs/retiring.py), the delayed-feedback testbed.
    "RetiringItems": ("RetiringItems", 100_000, {}, "Chapelle & Li 2011, 3: retiring items"),
    # Classification datasets as bandits: [S0] App. F.2, [S2] 7 / App. J, [S3] 5.2 (presets "S0", "S2", "S3").
    **{
        name: ("Classification", 10_000, {"dataset": dataset, **IMAGE_SPLIT.get(dataset, {})},
               f"[S0] F.2, [S2] 7, [S3] 5.2: {dataset}")
        for name, dataset in CLASSIFICATION.items()
    },
    # Any supervised dataset as the same bandit: arrays, or a source string (a file, openml:, hf:, sklearn:).
    "Supervised": ("Supervised", 10_000, {},
                   "any classification dataset (X=, y= or source=; without: iris), as [S0] F.2"),
    # [S1] Kveton et al. section 5.2: the deep bandit with a target class.
    "MNISTTarget": ("ClassTarget", 10_000, {"dataset": "mnist", "split": "test"}, "[S1] 5.2 deep bandit on MNIST"),
    "FashionMNISTTarget": ("ClassTarget", 10_000, {"dataset": "fashion-mnist", "split": "test"},
                           "[S1] 5.2 deep bandit on Fashion-MNIST"),
    # [S3] Li et al. App. G: online hate-speech moderation (embeddings computed once and cached).
    "HateSpeech": ("HateSpeech", 10_000, {}, "[S3] 5.2(4) / App. G hate-speech moderation"),
    "HateSpeechTokens": ("HateSpeech", 10_000, {"observation": "tokens"},
                         "[S3] App. G.4 moderation with token ids, for fine-tuned backbones"),
    # [S2] Bae, Lee App. J.1: the Open Bandit Dataset replay (horizon in accepted events, set by the run loop).
    "OpenBandit": ("OpenBandit", None, {}, "[S2] App. J.1 Open Bandit Dataset replay"),
    # Non-stationary (issue 51): envs/nonstationary.py, envs/schedule.py, docs/nonstationary.md.
    "RussacAbrupt": ("Russac", 6_000, {"schedule": "abrupt"},
                     "Russac et al. 2019: theta* jumping at t = 1001, 2001, 3001 (their code)"),
    "RussacSlow": ("Russac", 6_000, {"schedule": "slow"},
                   "Russac et al. 2019: theta* turning a quarter circle over 3,000 rounds (their code)"),
    "PiecewiseBernoulli": ("PiecewiseBernoulli", 2_000, {},
                           "SMPyBandits (Besson): 3 Bernoulli arms, a change every 400 rounds"),
    "Scheduled": ("Scheduled", 10_000, {}, "any env's parameters on a schedule (abrupt, rotation, random walk)"),
    # Rankings (issue 50): lists of K distinct items of L, click models (envs/click_models.py, docs/ranking.md).
    "CascadeBLB": ("Cascade", 100_000, {"num_items": 16, "num_positions": 4, "p": 0.2, "delta": 0.15},
                   "Kveton et al. 2015, 6.1: BLB(L=16, K=4, p=0.2, Delta=0.15)"),
    "CascadeRusso": ("Cascade", 5_000, {"num_items": 50, "num_positions": 10, "beta_prior": (1.0, 10.0)},
                     "Russo et al. 2018, 7: cascading recommendations, Beta(1, 10) attractions"),
    "PBMKDD": ("PBM", 100_000, {"setting": "kdd"}, "Gauthier et al. 2021 (GRAB), 5: PBM fitted on KDD Cup 2012"),
    "PBMYandex": ("PBM", 100_000, {"setting": "yandex"}, "Gauthier et al. 2021 (GRAB), 5: PBM fitted on Yandex"),
    "PBMStd": ("PBM", 100_000, {"setting": "std"}, "Gauthier et al. 2021 (GRAB), 5: simulated PBM \"std\""),
    "DCM": ("DCM", 100_000, {}, "Katariya et al. 2016: DCM on BLB(16, 4, 0.2, 0.15), termination 0.8"),
    "ContextualCascade": ("ContextualCascade", 100_000, {}, "Zong et al. 2016: cascade with linear attraction"),
}
# Replay families: no simulated regret, no native vector env, the episode ends when the log does.
REPLAY = {"OpenBandit"}

# The README's environment table, written by scripts/make_tables.py from the registry (ids, T) and
# this: id name -> (paper and section, reward model). Consecutive ids with the same entry share a row.
_CLASSIFICATION_ROW = ("[S0] App. F.2, [S2] 7 / App. J, [S3] 5.2",
                       "one example a round, arm k = x in block k, reward 1 for the true class; `preset=\"S0\"` "
                       "(L2 rows, default), `\"S2\"` (min-max, 14x14 MNIST), `\"S3\"` (+ N(0, 0.1^2))")
TABLE_ROWS: dict[str, tuple[str, str]] = {
    "Linear": ("[S0] 7.1", "x^T theta* + N(0, 0.5^2), K=50 fixed unit arms, d=20"),
    "Logistic": ("[S0] 7.1", "mu(x^T theta*) + N(0, 0.5^2)"),
    "Distance": ("[S0] 7.1", "-‖x - theta*‖ + N(0, 0.5^2)"),
    "Quadratic": ("[S0] 7.1", "10^-2 x^T A A^T x + N(0, 0.5^2)"),
    "BernoulliLogistic": ("[S1] 5.1", "Ber(mu(x^T theta*)), K=100 arms in U[-1,1]^d, d=10"),
    **{f"NeuralLogisticH{i}": ("[S2] 7 and App. J", "Ber(mu(h_i(x))), K=5 of a 2,500-vector pool in U[-1,1]^20")
       for i in (1, 2)},
    **{f"NeuralLogisticH{i}": ("[S2] 7 and App. J", "Ber(mu(h_i(x))), K=5 of a 2,500-vector pool on the unit sphere, "
                               "d=20") for i in range(3, 7)},
    "FiniteLinear": ("[S3] 5.1", "x^T theta + N(0, 1), 10,000 arms in U[-u,u]^50, theta ~ N(0, 10 I)"),
    "SphereLinear": ("[S3] App. F.1", "x^T theta + N(0, 1), K fresh points of the unit sphere a round"),
    "QuadraticPool": ("[S3] 5.2", "10^-2 x^T A A^T x + N(0, 0.1^2), 50 of 1,000 arms, d=100"),
    "VectorQuadratic": ("[S3] App. F.2", "10 (x^T theta)^2 + N(0, 0.1^2)"),
    "MLPTeacher": ("[S3] 5.2", "Ber(softmax(MLP(x)/0.1)_2)"),
    "FixedActionSet": ("[S4] 5.1", "{(1,0), (0,1), (1-u, 5u)}, theta=(1,0), N(0,1)"),
    "ChangingActionSet1": ("[S4] 5.2", "two action sets, P = 0.3 / 0.7, d=3"),
    "ChangingActionSet2": ("[S4] 5.2", "two action sets, P = 0.99 / 0.01"),
    "BoundedRegret": ("[S4] 5.3", "two action sets, P = 0.8 / 0.2"),
    "UnitCircle": ("[S4] 5.4", "100 arms on the unit circle, theta=(1,0)"),
    "UnitCircleSmall": ("[S4] App. D(1)", "5 arms on the unit circle"),
    "RandomTheta": ("[S4] App. D(2)", "100 arms on the circle, random unit theta"),
    "DriftingLinear": ("not from the papers: a non-stationary example",
                       "x^T theta_t + N(0, 0.1^2), theta_t turning a full circle every 2,000 rounds, K=10 fresh "
                       "points of the unit sphere a round, d=5"),
    "RetiringItems": ("Chapelle & Li 2011, §3", "Ber(p_i), K=10 items, p_i ~ Beta(4, 4); each step one item retires "
                      "with probability 10^-3 for a new one; item i's features e_i (one-hot id, d=256)"),
    **{name: _CLASSIFICATION_ROW for name in CLASSIFICATION},
    "Supervised": ("as the row above", "the same bandit on any dataset: `X=`, `y=` arrays, or `source=` a .csv or "
                   ".parquet file, `openml:NAME`, `hf:NAME`, `sklearn:LOADER` (none: iris, shipped); non-numeric "
                   "columns one-hot, columns min-max scaled (`preset=` a paper's)"),
    "MNISTTarget": ("[S1] 5.2", "10 random images a round, Ber(0.75) for the target class, Ber(0.25) otherwise"),
    "FashionMNISTTarget": ("[S1] 5.2",
                           "10 random images a round, Ber(0.75) for the target class, Ber(0.25) otherwise"),
    **{name: ("[S3] 5.2(4) / App. G", "publish or block a post embedded by GPT-2 (or any Hugging Face model; the "
              "`Tokens` id gives its token ids): +1, -0.5, +0.5") for name in ("HateSpeech", "HateSpeechTokens")},
    "OpenBandit": ("[S2] App. J.1", "Open Bandit Dataset replay, K=5 reduced action set, reward = logged click on "
                   "accepted events"),
    # Non-stationary (issue 51): regret against the round's best arm (dynamic regret).
    "RussacAbrupt": ("Russac et al. 2019 (code)", "x^T theta*_t + N(0, 1), 50 fresh arms of U[-1,1]^2 / max(1, ‖x‖) a "
                     "round; theta* = (1,0), (-1,0), (0,1), (0,-1), changing at rounds 1002, 2002, 3002"),
    "RussacSlow": ("Russac et al. 2019 (code)", "x^T theta*_t + N(0, 1), the same arms; theta*_t turning from angle 0 "
                   "to pi/2 over the first 3,000 rounds, then still"),
    "PiecewiseBernoulli": ("SMPyBandits (Besson)", "Ber(mu_k), K=3 one-hot arms, means [.2,.5,.9], [.2,.2,.9], "
                           "[.2,.2,.1], [.7,.2,.1], [.7,.5,.1] changing at rounds 401, 801, 1201, 1601"),
    "Scheduled": ("any env of the package", "`env=` an id, `schedule=` abrupt change points (fresh instances or given "
                  "values), rotation or random walk of theta"),
    # Rankings (issue 50): the action is a list of K distinct items of L.
    "CascadeBLB": ("Kveton et al. 2015, §6.1", "cascade: 1 - prod_k (1 - w(a_k)); L=16 items, K=4 positions, w = 0.2 "
                   "for K items, 0.05 for the others"),
    "CascadeRusso": ("Russo et al. 2018, §7", "cascade, L=50 items, K=10 positions, w(e) ~ Beta(1, 10) per instance"),
    "PBMKDD": ("Gauthier et al. 2021, §5", "PBM: sum_k kappa_k theta(a_k), fitted on KDD Cup 2012 (a query of 8: "
               "5-11 items, 3 positions; $CTXBANDITS_DATA/ranking/param_KDD.json)"),
    "PBMYandex": ("Gauthier et al. 2021, §5", "PBM fitted on Yandex (a query of 60: its 10 most attractive items, 5 "
                  "most examined positions; $CTXBANDITS_DATA/ranking/param_Yandex.json)"),
    "PBMStd": ("Gauthier et al. 2021, §5", "PBM, simulated: 10 items, kappas 1, 0.75, 0.6, 0.3, 0.1"),
    "DCM": ("Katariya et al. 2016", "DCM: 1 - prod_k (1 - v(k) w(a_k)); BLB(16, 4, 0.2, 0.15), v(k) = 0.8"),
    "ContextualCascade": ("Zong et al. 2016", "cascade with w(e) = x_e^T theta*, L=100 items, K=4, d=20"),
}


def register_all() -> None:
    """Register every id of ENVIRONMENTS (idempotent)."""
    for name, (family, horizon, kwargs, _) in ENVIRONMENTS.items():
        env_id = f"CtxBandit/{name}-v0"
        if env_id in gym.registry:
            continue
        gym.register(
            id=env_id,
            entry_point=f"gym_ctxbandits.envs:{family}Env",
            vector_entry_point=None if family in REPLAY else f"gym_ctxbandits.envs.vector:{family}VectorEnv",
            max_episode_steps=horizon,
            kwargs=kwargs,
        )


def other_env_ids() -> list[str]:
    """The registered ids that are neither this package's nor gymnasium's own: a user's envs (e.g.
    registered by a module of `ctxbandits run --import`) and other packages'."""
    ours = {f"CtxBandit/{name}-v0" for name in ENVIRONMENTS}

    def gymnasiums(entry_point) -> bool:
        module = entry_point if isinstance(entry_point, str) else getattr(entry_point, "__module__", "")
        return module.startswith("gymnasium.")

    return [env_id for env_id, spec in gym.registry.items() if env_id not in ours and not gymnasiums(spec.entry_point)]
