"""gym_ctxbandits.slate_ope: each estimator's formula on a hand-computed log, the Plackett-Luce behaviour's
exact propensities against their definitions and Monte Carlo, the exact truth against the envs, the
estimators against the exact truth (unbiased where their click-model assumption holds, biased by many
standard errors where it does not), one-line errors for bad input, and the coverage script's quick run.

The envs and sizes here (PBM L = 7, K = 3; cascade L = 6, K = 3; bottom-up cascade L = 5, K = 3) are not
those the estimators were developed on (a cascade and a DCM of L = 8, K = 3) nor the coverage script's."""

import sys
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

from gym_ctxbandits import slate_ope as so

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))

import slate_ope_coverage

# A tiny log: 3 rounds, L = 3 items, K = 2 positions.
ACTION = np.array([[0, 1], [2, 0], [1, 2]])
CLICKS = np.array([[1.0, 1.0], [0.0, 1.0], [0.0, 0.0]])
PSCORE, TARGET_PSCORE = np.array([0.2, 0.1, 0.25]), np.array([0.4, 0.05, 0.1])              # w = 2, 0.5, 0.4
ITEM_POSITION = np.array([[0.5, 0.4], [0.2, 0.5], [0.3, 0.25]])
TARGET_ITEM_POSITION = np.array([[0.6, 0.2], [0.1, 0.25], [0.3, 0.5]])                     # w = [1.2, .5], [.5, .5], [1, 2]
CASCADE = np.array([[0.5, 0.2], [0.2, 0.1], [0.3, 0.25]])
TARGET_CASCADE = np.array([[0.6, 0.4], [0.1, 0.05], [0.3, 0.1]])                           # w = [1.2, 2], [.5, .5], [1, .4]
# pi(e at k | a(1:k-1)) of the target, consistent with TARGET_CASCADE (conditionals 2/3, 1/2, 1/3 at position 2)
DIST = np.array([[[0.6, 0.3, 0.1], [0, 2 / 3, 1 / 3]],
                 [[0.5, 0.4, 0.1], [0.5, 0.5, 0]],
                 [[0.2, 0.3, 0.5], [2 / 3, 0, 1 / 3]]])
Q_HAT = np.broadcast_to([[0.5, 0.3, 0.2], [0.2, 0.1, 0.4]], (3, 2, 3))
# Cascade-DR's terms, per round sum_k w(1:k) (r(k) - Q_k(a(k))) + w(1:k-1) sum_e pi(e | a(1:k-1)) Q_k(e):
#   round 0: 1.2 (1 - 0.5) + 0.41 + 2 (1 - 0.1) + 1.2 x 0.2 = 3.05
#   round 1: 0.5 (0 - 0.2) + 0.39 + 0.5 (1 - 0.2) + 0.5 x 0.15 = 0.765
#   round 2: 1 (0 - 0.3) + 0.29 + 0.4 (0 - 0.4) + 1 x 0.8 / 3 = 0.29 / 3
EXPECTED = {"SIPS": (2 * 2 + 0.5 * 1) / 3, "IIPS": (1.2 + 0.5 + 0.5) / 3, "RIPS": (1.2 + 2 + 0.5) / 3,
            "Cascade-DR": (3.05 + 0.765 + 0.29 / 3) / 3}


def hand(name, **kwargs):
    if name == "SIPS":
        return so.sips(CLICKS, PSCORE, TARGET_PSCORE, **kwargs)
    if name == "IIPS":
        return so.iips(CLICKS, ITEM_POSITION, TARGET_ITEM_POSITION, **kwargs)
    if name == "RIPS":
        return so.rips(CLICKS, CASCADE, TARGET_CASCADE, **kwargs)
    return so.cascade_dr(CLICKS, ACTION, CASCADE, TARGET_CASCADE, DIST, q_hat=Q_HAT, **kwargs)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_formula_on_a_hand_computed_log(name):
    est = hand(name)
    assert est.estimator == name and est.value == pytest.approx(EXPECTED[name], abs=1e-12)
    assert est.low <= est.value <= est.high and est.se > 0
    assert hand(name, seed=3) == hand(name, seed=3)


def test_cascade_dr_with_a_zero_baseline_is_rips():
    zero = so.cascade_dr(CLICKS, ACTION, CASCADE, TARGET_CASCADE, DIST, q_hat=np.zeros((3, 2, 3)))
    assert zero.value == pytest.approx(EXPECTED["RIPS"], abs=1e-12)


def test_plackett_luce_probabilities_are_exact_and_match_monte_carlo():
    """L = 4, K = 2: the 12 list probabilities and the marginals sum to 1, the logged lists' propensities
    are the enumerated ones, and 20,000 draws of act() match them within 0.015 (4 standard errors)."""
    L, K = 4, 2
    obs = np.eye(L)
    policy = so.PlackettLuce(np.array([1.0, 0.2, -0.5, 0.7]), K, temperature=0.8, seed=0)
    lists, p = policy.lists(obs)
    assert lists.shape == (12, K) and p.sum() == pytest.approx(1, abs=1e-12)
    s = np.exp(policy.theta / 0.8)
    assert p[0] == pytest.approx(s[0] / s.sum() * s[1] / (s.sum() - s[0]))       # list (0, 1) by hand
    marg = policy.marginals(obs)
    assert np.allclose(marg.sum(axis=1), 1) and (marg.sum(axis=0) <= 1 + 1e-12).all()
    draws = np.array([policy.act(obs) for _ in range(20_000)])
    freq = (draws[:, None, :] == lists[None]).all(axis=2).mean(axis=0)
    assert np.abs(freq - p).max() < 0.015
    mc_marg = np.stack([np.bincount(draws[:, k], minlength=L) / len(draws) for k in range(K)])
    assert np.abs(mc_marg - marg).max() < 0.015
    logged = lists[[0, 5, 11]]
    props = so.propensities(policy, np.broadcast_to(obs, (3, L, L)), logged, prefix="b_")
    assert np.allclose(props["b_pscore"], p[[0, 5, 11]])
    first = [p[lists[:, 0] == a].sum() for a in logged[:, 0]]
    assert np.allclose(props["b_pscore_cascade"][:, 0], first) and np.allclose(props["b_pscore_cascade"][:, 1],
                                                                                 props["b_pscore"])
    assert np.allclose(props["b_pscore_item_position"], marg[np.arange(K), logged])
    assert np.allclose(props["b_action_dist"].sum(axis=2), 1) and props["b_action_dist"][0, 1, 0] == 0


def test_probabilities_stay_exact_when_the_scores_are_far_apart():
    """Scores 1 and 0 ahead of -40, -45, -80: after the top two, the items left weigh e^-40 of the total, which
    a total-minus-listed sum would lose to rounding; summed over the items left, the third position is exact."""
    policy = so.PlackettLuce(np.array([0, -40, -45, -80.0, 1]), 3)
    _, p = policy.lists(np.eye(5))
    assert p.sum() == pytest.approx(1, abs=1e-12)
    third = np.exp([-40, -45, -80.0]) / np.exp([-40, -45, -80.0]).sum()
    assert policy.marginals(np.eye(5))[2, 1:4] == pytest.approx(third, rel=1e-9)


def test_expected_clicks_are_the_envs_expected_reward_and_dcms_click_rates():
    """Cascade and PBM: the per-position click probabilities sum to info['expected_reward'] of every logged
    list; DCM (whose reward is satisfaction, not clicks): 4,000 users of one list click at each position
    as often as expected_clicks says, within 4 standard errors."""
    behaviour = so.PlackettLuce(np.zeros(6), 3, seed=0)
    for env in (gym.make("CtxBandit/CascadeBLB-v0", num_items=6, num_positions=3, attractions=[.5, .1, .3, .2, .6, .05]),
                so.BottomUp(gym.make("CtxBandit/CascadeBLB-v0", num_items=6, num_positions=3)),
                gym.make("CtxBandit/PBMStd-v0", setting=None, attractions=[.5, .1, .3, .2, .6, .05], kappas=[.9, .5, .2])):
        lg = so.log(env, behaviour, 50, 0)
        assert np.allclose(lg["expected_clicks"].sum(axis=1), lg["expected_reward"])
    env = gym.make("CtxBandit/ContextualCascade-v0", num_items=7, num_positions=3, dim=4)
    lg = so.log(env, so.PlackettLuce(np.ones(4), 3, seed=0), 50, 0, target=so.PlackettLuce(np.arange(4.0), 3))
    assert np.allclose(lg["expected_clicks"].sum(axis=1), lg["expected_reward"])
    assert 0 < so.true_value(env, so.PlackettLuce(np.arange(4.0), 3), lg["context"]) < 1
    env = gym.make("CtxBandit/DCM-v0", num_items=6, num_positions=3, attractions=[.5, .1, .3, .2, .6, .05],
                   termination=[0.7, 0.4, 0.9])
    env.reset(seed=1)
    a = np.array([4, 0, 2])
    clicks = np.array([env.step(a)[4]["clicks"] for _ in range(4000)])
    rate = so.expected_clicks(env, a[None])[0]
    assert rate == pytest.approx([0.6, 0.5 * (1 - 0.7 * 0.6), 0.3 * (1 - 0.42) * (1 - 0.2)])
    assert (np.abs(clicks.mean(axis=0) - rate) < 4 * np.sqrt(rate * (1 - rate) / 4000)).all()


def test_true_value_is_the_mean_of_the_targets_expected_clicks():
    """The enumerated truth against 20,000 lists drawn from the target, their exact expected clicks averaged."""
    env = gym.make("CtxBandit/DCM-v0", num_items=6, num_positions=3, attractions=[.5, .1, .3, .2, .6, .05])
    obs, _ = env.reset(seed=0)
    target = so.PlackettLuce(np.array([2.0, 0, 1, 0.5, 2.5, -1]), 3, seed=4)
    draws = np.array([target.act(obs) for _ in range(20_000)])
    mc = so.expected_clicks(env, draws).sum(axis=1)
    assert so.true_value(env, target, obs[None]) == pytest.approx(mc.mean(), abs=4 * mc.std() / np.sqrt(len(mc)))


def exact_truth_errors(env, theta_behaviour, theta_target, n, seed):
    """Every estimator's error in standard errors against the exact truth, on one log of n rounds."""
    K = env.unwrapped.num_positions
    lg = so.log(env, so.PlackettLuce(theta_behaviour, K, seed=seed), n, seed,
                target=so.PlackettLuce(theta_target, K))
    truth = so.true_value(env, so.PlackettLuce(theta_target, K), lg["context"])
    return {e.estimator: (e.value - truth) / e.se for e in so.evaluate(lg, n_bootstrap=50, seed=seed)}


def test_on_a_pbm_every_estimator_is_unbiased():
    att = np.array([0.45, 0.3, 0.25, 0.6, 0.1, 0.15, 0.05])
    env = gym.make("CtxBandit/PBMStd-v0", setting=None, attractions=att, kappas=[1.0, 0.6, 0.3])
    t = exact_truth_errors(env, np.linspace(-0.5, 0.5, 7), 4 * att, 2500, 21)
    assert all(abs(z) < 3 for z in t.values()), t


def test_on_a_cascade_iips_is_biased_and_the_others_are_not():
    att = np.array([0.2, 0.7, 0.1, 0.4, 0.05, 0.3])
    env = gym.make("CtxBandit/CascadeBLB-v0", num_items=6, num_positions=3, attractions=att)
    t = exact_truth_errors(env, np.zeros(6), 4 * att, 3000, 22)
    assert all(abs(t[name]) < 3 for name in ("SIPS", "RIPS", "Cascade-DR")), t
    assert abs(t["IIPS"]) > 5, t


def test_bottom_up_cascade_leaves_only_sips_unbiased():
    """A user who reads the list from the bottom: the click at k depends on the items below k, so RIPS and
    Cascade-DR (the cascade assumption) are biased as well as IIPS."""
    att = np.array([0.6, 0.15, 0.35, 0.05, 0.5])
    env = so.BottomUp(gym.make("CtxBandit/CascadeBLB-v0", num_items=5, num_positions=3, attractions=att))
    t = exact_truth_errors(env, np.zeros(5), 5 * att, 3000, 23)
    assert abs(t["SIPS"]) < 3, t
    assert all(abs(t[name]) > 4 for name in ("IIPS", "RIPS", "Cascade-DR")), t


@pytest.mark.parametrize("call, match", [
    (lambda: so.sips(CLICKS[:, 0], PSCORE, TARGET_PSCORE), "per-position rewards"),
    (lambda: so.sips(CLICKS, np.array([0.2, 0.0, 0.25]), TARGET_PSCORE), r"must lie in \(0, 1\]"),
    (lambda: so.iips(CLICKS, ITEM_POSITION[:, 0], TARGET_ITEM_POSITION), r"shape \(3, 2\)"),
    (lambda: so.rips(CLICKS, np.c_[CASCADE[:, 0], [0.9, 0.9, 0.9]], TARGET_CASCADE), "running product"),
    (lambda: so.cascade_dr(CLICKS, ACTION, CASCADE, TARGET_CASCADE, DIST[:, ::-1], q_hat=Q_HAT),
     "running product of target_action_dist"),
    (lambda: so.cascade_dr(CLICKS, ACTION, CASCADE, TARGET_CASCADE, DIST, q_hat=Q_HAT, context=np.zeros((3, 3, 3))),
     "not both"),
    (lambda: so.cascade_dr(CLICKS, np.array([[0, 0], [2, 0], [1, 2]]), CASCADE, TARGET_CASCADE, DIST, q_hat=Q_HAT),
     "distinct"),
    (lambda: so.PlackettLuce(np.zeros(16), 6).lists(np.eye(16)), "MAX_LISTS"),
    (lambda: so.log(gym.make("CtxBandit/CascadeBLB-v0", max_episode_steps=5), so.PlackettLuce(np.zeros(16), 4), 10, 0),
     "max_episode_steps >= 10"),
    (lambda: so.log(gym.make("CtxBandit/CascadeBLB-v0"), so.PlackettLuce(np.zeros(16), 3), 10, 0), "num_positions=4"),
    (lambda: so.log(gym.make("CtxBandit/Linear-v0"), so.PlackettLuce(np.zeros(5), 2), 10, 0), "not a ranking env"),
    (lambda: so.evaluate({"clicks": CLICKS}), "no target propensities"),
])
def test_bad_input_is_refused_in_one_line(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_an_env_without_a_known_click_model_has_no_truth():
    env = gym.make("CtxBandit/Linear-v0")
    with pytest.raises(ValueError, match="no exact click model for"):
        so.expected_clicks(env, np.array([[0, 1]]))


def test_coverage_quick_run_prints_every_row(capsys):
    assert slate_ope_coverage.main(["--quick"]) == 0
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if line.startswith("| ") and not line.startswith("| env")]
    assert len(rows) == len(slate_ope_coverage.ENVS) * len(so.ESTIMATORS)
    assert "| PBM |" in out and "| cascade |" in out and "nan" not in out
