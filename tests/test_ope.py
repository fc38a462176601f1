"""gym_ctxbandits.ope: every estimator's formula on a hand-computed case, the bootstrap interval,
the reward model, and one-line errors for bad input."""

import numpy as np
import pytest
from sklearn.linear_model import LinearRegression

from gym_ctxbandits import ope

# Four logged rounds, two arms.
REWARD = np.array([1.0, 0.0, 1.0, 0.5])
ACTION = np.array([0, 1, 1, 0])
PSCORE = np.array([0.5, 0.25, 0.5, 0.8])
PI = np.array([[1.0, 0.0], [0.5, 0.5], [0.0, 1.0], [0.2, 0.8]])     # target's probabilities
Q = np.array([[0.5, 0.2], [0.4, 0.6], [0.1, 0.9], [0.3, 0.7]])      # reward model
# weights w = pi(a_i) / pscore_i = [2, 2, 2, 0.25]; w r = [2, 0, 2, 0.125] (sum 4.125), sum w = 6.25
# DM terms sum_k pi q = [0.5, 0.5, 0.9, 0.62] (mean 0.63); residuals r - q(a) = [0.5, -0.6, 0.1, 0.2]
# w * residual = [1, -1.2, 0.2, 0.05] (sum 0.05)
EXPECTED = {"ips": 4.125 / 4, "snips": 4.125 / 6.25, "dm": 0.63, "dr": 0.63 + 0.05 / 4, "sndr": 0.63 + 0.05 / 6.25}


def estimate(name, **kwargs):
    args = dict(reward=REWARD, action=ACTION, action_dist=PI)
    if name != "dm":
        args["pscore"] = PSCORE
    if name in ("dm", "dr", "sndr"):
        args["estimated_rewards"] = Q
    return getattr(ope, name)(**args, **kwargs)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_formula_on_a_hand_computed_case(name):
    est = estimate(name)
    assert est.value == pytest.approx(EXPECTED[name], abs=1e-12)
    assert est.estimator == name.upper()
    assert est.low <= est.value <= est.high


def test_clipping_caps_the_weights():
    # w = [1.5, 1.5, 1.5, 0.25]: w r = [1.5, 0, 1.5, 0.125]
    assert ope.ips(REWARD, ACTION, PSCORE, PI, clip=1.5).value == pytest.approx(3.125 / 4)
    assert ope.snips(REWARD, ACTION, PSCORE, PI, clip=1.5).value == pytest.approx(3.125 / 4.75)
    assert ope.dr(REWARD, ACTION, PSCORE, PI, estimated_rewards=Q, clip=1.5).value == pytest.approx(
        0.63 + (0.75 - 0.9 + 0.15 + 0.05) / 4)


def test_obp_shaped_action_dist_is_accepted():
    assert ope.ips(REWARD, ACTION, PSCORE, PI[:, :, None]).value == pytest.approx(EXPECTED["ips"])


def test_bootstrap_interval_is_seeded_and_covers_the_mean():
    rng = np.random.default_rng(0)
    n = 2000
    reward = rng.normal(1.0, 1.0, size=n)
    action = np.zeros(n, dtype=int)
    pi, pscore = np.tile([1.0, 0.0], (n, 1)), np.ones(n)        # on-policy: IPS is the sample mean
    est = ope.ips(reward, action, pscore, pi, seed=3)
    assert est == ope.ips(reward, action, pscore, pi, seed=3)
    assert est != ope.ips(reward, action, pscore, pi, seed=4)
    half_width = 1.96 * reward.std() / np.sqrt(n)
    assert est.value == pytest.approx(reward.mean())
    assert est.high - est.low == pytest.approx(2 * half_width, rel=0.15)
    narrow = ope.ips(reward, action, pscore, pi, alpha=0.5)
    assert narrow.high - narrow.low < est.high - est.low


def test_reward_model_fits_the_pulled_arms_and_predicts_every_arm():
    rng = np.random.default_rng(1)
    context = rng.normal(size=(50, 3, 2))
    action = rng.integers(3, size=50)
    theta = np.array([0.5, -1.0])
    reward = context[np.arange(50), action] @ theta
    q = ope.reward_model(context, action, reward, LinearRegression())
    assert np.allclose(q, context @ theta)
    pi = np.full((50, 3), 1 / 3)
    assert ope.dm(reward, action, pi, context=context, model=LinearRegression()).value == pytest.approx(
        (context @ theta).mean())
    assert ope.dm(reward, action, pi, context=context).value == pytest.approx((context @ theta).mean(), abs=0.1)


@pytest.mark.parametrize("bad, words", [
    (dict(pscore=None), "pscore is missing"),
    (dict(pscore=np.array([0.5, 0.0, 0.5, 0.8])), r"pscore must lie in \(0, 1\]"),
    (dict(pscore=np.array([0.5, 1.5, 0.5, 0.8])), r"pscore must lie in \(0, 1\]"),
    (dict(pscore=np.array([0.5, np.nan, 0.5, 0.8])), "NaN"),
    (dict(pscore=PSCORE[:3]), "pscore must have shape"),
    (dict(action_dist=PI[:3]), r"action_dist must be .* shape \(n_rounds, n_actions\)"),
    (dict(action_dist=PI[:, :1]), "action must lie in"),
    (dict(action_dist=PI * 2), "sum to 1"),
    (dict(action=ACTION.astype(float)), "action must be an int array"),
    (dict(clip=0.0), "clip must be a positive"),
    (dict(alpha=1.0), "alpha must lie in"),
    (dict(action_dist=np.eye(PI.shape[1])[(ACTION + 1) % PI.shape[1]]), "the target never takes a logged action"),
])
def test_bad_input_gets_one_clear_line(bad, words):
    args = dict(reward=REWARD, action=ACTION, pscore=PSCORE, action_dist=PI) | bad
    with pytest.raises(ValueError, match=words) as err:
        ope.ips(**args)
    assert "\n" not in str(err.value)


def test_reward_model_input_is_one_of_context_or_estimates():
    with pytest.raises(ValueError, match="either context"):
        ope.dr(REWARD, ACTION, PSCORE, PI)
    with pytest.raises(ValueError, match="estimated_rewards must have shape"):
        ope.dr(REWARD, ACTION, PSCORE, PI, estimated_rewards=Q[:, :1])
    with pytest.raises(ValueError, match="context must be the per-arm features"):
        ope.dm(REWARD, ACTION, PI, context=np.zeros((4, 2)))


def test_self_normalised_intervals_leave_out_resamples_without_weight():
    # One round in 200 has a positive weight: a resample misses it with probability (199/200)^200 = 37%,
    # where SNIPS is 0/0; the interval comes from the other resamples.
    n = 200
    action = np.zeros(n, dtype=int)
    action[0] = 1
    pi = np.tile([0.0, 1.0], (n, 1))
    est = ope.snips(np.ones(n), action, np.full(n, 0.5), pi, n_bootstrap=200)
    assert (est.value, est.low, est.high) == (1.0, 1.0, 1.0)


def test_effective_sample_size_of_the_weights():
    # w = [2, 2, 2, 0.25]: (sum w)^2 / sum w^2 = 6.25^2 / 12.0625
    assert ope.effective_sample_size(ACTION, PSCORE, PI) == (pytest.approx(6.25 ** 2 / 12.0625), 2.0)
    assert ope.effective_sample_size(ACTION, np.ones(4), np.eye(2)[ACTION]) == (4.0, 1.0)   # on-policy: every round


def test_refit_bootstrap_is_the_explicit_loop():
    """refit=True: each resample's value comes from a model fitted on that resample alone (a fresh
    clone each time); the point estimate is the fixed model's."""
    rng = np.random.default_rng(2)
    n, K = 60, 3
    context = rng.normal(size=(n, K, 2))
    action = rng.integers(K, size=n)
    reward = context[np.arange(n), action] @ np.array([1.0, -0.5]) + rng.normal(size=n)
    pscore, pi = np.full(n, 1 / K), rng.dirichlet(np.ones(K), size=n)
    w = pi[np.arange(n), action] / pscore
    values = {"DM": [], "DR": [], "SNDR": []}
    draws = np.random.default_rng(7)
    for _ in range(30):
        i = draws.integers(n, size=n)
        q = LinearRegression().fit(context[i, action[i]], reward[i]).predict(context[i].reshape(-1, 2)).reshape(n, K)
        direct, residual = (pi[i] * q).sum(axis=1).mean(), w[i] * (reward[i] - q[np.arange(n), action[i]])
        values["DM"].append(direct)
        values["DR"].append(direct + residual.mean())
        values["SNDR"].append(direct + residual.mean() / w[i].mean())
    for name, fn in (("DM", ope.dm), ("DR", ope.dr), ("SNDR", ope.sndr)):
        kwargs = dict(context=context, model=LinearRegression(), n_bootstrap=30, seed=7)
        if name != "DM":
            kwargs["pscore"] = pscore
        fixed, refit = fn(reward, action, action_dist=pi, **kwargs), fn(reward, action, action_dist=pi, refit=True,
                                                                         **kwargs)
        assert refit.value == fixed.value
        assert (refit.low, refit.high) == pytest.approx(tuple(np.quantile(values[name], [0.025, 0.975])), abs=1e-12)


def test_refit_puts_the_models_error_into_dms_interval():
    """Arm features 0 and 1 on every round, a model with an intercept: q(arm 1) is the mean reward of
    the arm-1 rounds, and DM of the target 'always arm 1' is that mean. With the model held fixed
    the interval has zero width; refitted, it is the mean's: 2 * 1.96 / sqrt(n_1) for unit noise."""
    rng = np.random.default_rng(3)
    n = 2000
    context = np.broadcast_to(np.array([[0.0], [1.0]]), (n, 2, 1))
    action = rng.integers(2, size=n)
    reward = action + rng.normal(size=n)
    pi = np.tile([0.0, 1.0], (n, 1))
    fixed = ope.dm(reward, action, pi, context=context, model=LinearRegression())
    refit = ope.dm(reward, action, pi, context=context, model=LinearRegression(), refit=True, n_bootstrap=400)
    assert fixed.high - fixed.low < 1e-12
    assert refit.high - refit.low == pytest.approx(2 * 1.96 / np.sqrt((action == 1).sum()), rel=0.15)


def test_refit_needs_the_context():
    with pytest.raises(ValueError, match="refit=True .* needs context") as err:
        ope.dr(REWARD, ACTION, PSCORE, PI, estimated_rewards=Q, refit=True)
    assert "\n" not in str(err.value)
