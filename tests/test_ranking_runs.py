"""The runner with ranking envs and agents (docs/ranking.md): a ranking agent learns from the clicks per
position, gets the env's list length, kappas and the run's horizon unless its kwargs set them, runs
batched with the plain loop's numbers, and is never paired with an env of the other kind."""

import numpy as np
import pandas as pd
import pytest

import gym_ctxbandits
from gym_ctxbandits.jobs import AgentSpec, EnvSpec, env_given


def test_a_comparison_that_mixes_kinds_is_refused_in_one_line():
    with pytest.raises(ValueError, match=r"^LinUCB cannot play CtxBandit/CascadeBLB-v0: the env takes a ranked list.*"
                                         r"e\.g\. Cascade") as err:
        gym_ctxbandits.run("CtxBandit/CascadeBLB-v0", ["CascadeUCB1", "LinUCB"], seeds=1, horizon=5)
    assert "\n" not in str(err.value)
    with pytest.raises(ValueError, match="CascadeUCB1 cannot play CtxBandit/Linear-v0: the env takes one arm"):
        gym_ctxbandits.run("CtxBandit/Linear-v0", ["CascadeUCB1"], seeds=1, horizon=5)


def test_delayed_feedback_is_refused_on_a_ranking_env():
    with pytest.raises(ValueError, match="delayed or batched feedback is for one-arm envs"):
        gym_ctxbandits.run("CtxBandit/CascadeBLB-v0", ["CascadeUCB1"], seeds=1, horizon=5,
                           feedback={"delay": "fixed:3"})


def test_batched_seeds_give_the_plain_loops_numbers():
    """Three seeds as one vector env and one batched agent, and each seed alone: the same tables."""
    agents = ["CascadeKL-UCB", "CascadeTS", AgentSpec("TopK", {"agent": "LinUCB"})]
    env = EnvSpec("CtxBandit/CascadeBLB-v0", {"num_items": 8, "num_positions": 2})
    batched = gym_ctxbandits.run([env], agents, seeds=3, horizon=60, batch=3)
    plain = gym_ctxbandits.run([env], agents, seeds=3, horizon=60, batch=1)
    pd.testing.assert_frame_equal(batched.drop(columns=["act_seconds", "observe_seconds"]),
                                  plain.drop(columns=["act_seconds", "observe_seconds"]))
    final = batched[batched["round"] == 60]
    assert (final["cum_regret"] >= 0).all() and final["reward"].isin([0, 1]).all()   # a cascade: one click at most


def test_the_env_gives_num_positions_kappas_and_the_horizon_unless_the_kwargs_do():
    import gymnasium as gym

    env = gym.make("CtxBandit/PBMStd-v0")
    given = env_given(env, AgentSpec("PBM-PIE"), horizon=500)
    assert given["num_positions"] == env.unwrapped.num_positions and given["horizon"] == 500
    np.testing.assert_array_equal(given["kappas"], env.unwrapped.kappas)
    assert "kappas" not in env_given(env, AgentSpec("PBM-UCB", {"kappas": [1.0] * 5}))      # the spec's own wins
    assert "kappas" not in env_given(env, AgentSpec("CascadeUCB1"))                       # it takes none
    assert env_given(env, AgentSpec("LinUCB"), horizon=500) == {}                          # a one-arm agent: nothing


def test_random_on_a_ranking_env_is_a_random_list_labelled_random():
    """`--agents Random,...` on a ranking env plays uniformly random lists (TopK over Random), so the summary's
    "regret / Random" has its baseline; on a one-arm env Random is Random."""
    table = gym_ctxbandits.run("CtxBandit/PBMStd-v0", ["Random", "PBM-UCB"], seeds=1, horizon=300)
    final = table[table["round"] == 300].set_index("agent")["cum_regret"]
    assert set(final.index) == {"Random", "PBM-UCB"} and final["PBM-UCB"] < final["Random"]
    assert (table[table["agent"] == "Random"]["agent_kwargs"] == '{"agent": "Random"}').all()
