"""The runner and the plots on non-stationary envs (docs/nonstationary.md): a run without a horizon plays
the env's registered T, and the regret figure marks the env's change points."""

import gym_ctxbandits
from gym_ctxbandits.plots import change_points, plot_regret


def test_change_points_come_from_the_env_and_only_from_a_moving_one():
    assert change_points("CtxBandit/RussacAbrupt-v0", "{}") == (1002, 2002, 3002)
    assert change_points("CtxBandit/RussacSlow-v0", "{}") == ()                       # it turns, it never jumps
    assert change_points("CtxBandit/PiecewiseBernoulli-v0", '{"change_points": [5, 9], "means": '
                         '[[0.1, 0.9], [0.9, 0.1], [0.5, 0.5]]}') == (5, 9)
    assert change_points("CtxBandit/Supervised-v0", '{"relabel": {"change_points": [30]}}') == (30,)
    assert change_points("CtxBandit/Linear-v0", "{}") == ()                           # not built at all


def test_a_run_without_a_horizon_plays_the_registered_one_and_its_figure_marks_the_changes(tmp_path):
    table = gym_ctxbandits.run("CtxBandit/PiecewiseBernoulli-v0", ["UCB1", "Random"], seeds=1, horizon=None)
    assert table["round"].max() == 2000                                              # the id's registered T
    svg = next(p for p in plot_regret(table, tmp_path) if p.suffix == ".svg").read_text()
    assert svg.count("change point") == 1                                            # one legend entry, four lines
