"""gym_ctxbandits.feedback: logging a behaviour agent, the Parquet file, OBP's layout, and the
estimators of gym_ctxbandits.ope against the true value of a target policy on a synthetic env."""

import json
import re
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import agents
import gym_ctxbandits
from gym_ctxbandits import cli, feedback, ope

ENV = "CtxBandit/Linear-v0"
KW = dict(num_arms=10, dim=5, pool_size=100, instance_seed=7)    # one instance, arms drawn from a pool each round


def behaviour(seed=2):
    return agents.make("epsilon-greedy", epsilon=0.3, seed=seed)


@pytest.fixture(scope="module")
def logged():
    return gym_ctxbandits.log(ENV, behaviour(), 3000, seed=5, env_kwargs=KW)


@pytest.fixture(scope="module")
def target():
    """LinUCB trained on another episode of the same instance, then frozen (it observes no more)."""
    return feedback.train(agents.make("LinUCB", alpha=0.2, seed=1), ENV, 500, seed=100, env_kwargs=KW)


def test_ips_and_dr_recover_the_true_value(logged, target):
    pi = feedback.target_probs(target, logged)
    truth = feedback.true_value(logged, pi)
    behaviour_value = logged["expected_reward"][np.arange(3000), logged["action"]].mean()
    assert truth - behaviour_value > 0.2           # the target is much better: estimates must move
    for est in ope.evaluate(logged, pi, ("IPS", "DR", "SNIPS", "SNDR")):
        assert abs(est.value - truth) < 0.05, est
        assert est.low - 0.02 < truth < est.high + 0.02, est


def test_logging_changes_no_choice(logged):
    env = gym.make(ENV, max_episode_steps=3000, **KW)
    obs, _ = env.reset(seed=5)
    agent, actions = behaviour(), []
    for _ in range(3000):
        a = agent.act(obs)
        next_obs, r, *_ = env.step(a)
        agent.observe(obs, a, r)
        obs = next_obs
        actions.append(a)
    assert np.array_equal(logged["action"], actions)


def test_log_records_propensities_and_truth(logged):
    n, K = 3000, 10
    assert logged["context"].shape == (n, K, 5) and logged["action_prob"].shape == (n, K)
    assert np.allclose(logged["action_prob"].sum(axis=1), 1.0)
    assert np.array_equal(logged["pscore"], logged["action_prob"][np.arange(n), logged["action"]])
    tied = {round(0.03 + 0.7 / m, 6) for m in range(1, K + 1)}      # eps/K + (1 - eps)/m among m tied greedy arms
    assert set(np.round(np.unique(logged["pscore"]), 6)) <= tied | {0.03}
    mean = logged["expected_reward"][np.arange(n), logged["action"]]
    assert abs((logged["reward"] - mean).mean()) < 0.05     # rewards are the means plus noise
    assert logged["round"].tolist() == list(range(1, n + 1))


def test_parquet_round_trip(logged, tmp_path):
    path = tmp_path / "log.parquet"
    feedback.write(logged, path)
    back = feedback.read(path)
    for key in feedback.ARRAYS:
        assert np.array_equal(back[key], logged[key]), key
    assert back["meta"] == {"env": ENV, "env_kwargs": KW, "agent": "EpsilonGreedy", "seed": 5}
    assert (back["n_rounds"], back["n_actions"]) == (3000, 10)
    assert [p.name for p in tmp_path.iterdir()] == ["log.parquet"]


def test_obp_round_trip(logged):
    obp = feedback.to_obp(logged)
    assert obp["context"].shape == (3000, 50) and obp["pi_b"].shape == (3000, 10, 1)
    assert np.array_equal(obp["action_context"], np.eye(10)) and not obp["position"].any()
    back = feedback.from_obp(obp, dim=5)
    for key in ("context", "action", "reward", "pscore", "action_prob", "expected_reward", "round"):
        assert np.array_equal(back[key], logged[key]), key


def test_from_obp_native_contexts_concatenate_the_action_context():
    bf = {"n_rounds": 2, "n_actions": 3, "context": np.array([[1.0, 2.0], [3.0, 4.0]]),
          "action_context": np.eye(3), "action": np.array([0, 2]), "reward": np.array([1.0, 0.0]),
          "pscore": np.array([0.5, 0.5]), "position": np.zeros(2, dtype=int)}
    fb = feedback.from_obp(bf)
    assert fb["context"].shape == (2, 3, 5) and fb["position"] is None
    assert fb["context"][1, 2].tolist() == [3.0, 4.0, 0.0, 0.0, 1.0]
    ranking = feedback.from_obp(bf | {"position": np.array([0, 1])})      # a ranking keeps its slots
    assert ranking["position"].tolist() == [0, 1]
    assert feedback.to_obp(ranking)["position"].tolist() == [0, 1]
    slots = np.array([[[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]], [[0.0, 0.0], [0.0, 0.0], [1.0, 1.0]]])   # (n, K, 2)
    pi = ope.at_position(slots, ranking["position"])
    assert pi.tolist() == [[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]
    assert ope.evaluate(ranking, slots, ["IPS"], n_bootstrap=10)[0].value == pytest.approx((1 / 0.5 + 0) / 2)


def test_errors(tmp_path):
    with pytest.raises(ValueError, match="replays logged data"):
        gym_ctxbandits.log("CtxBandit/OpenBandit-v0", behaviour(), 10, seed=0)
    with pytest.raises(ValueError, match="no expected rewards"):
        feedback.true_value({"expected_reward": None}, np.ones((1, 2)))
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"x": [1]}), tmp_path / "other.parquet")
    with pytest.raises(ValueError, match="not logged bandit feedback"):
        feedback.read(tmp_path / "other.parquet")


def test_a_zero_monte_carlo_pscore_asks_for_more_draws():
    with pytest.raises(ValueError, match="estimated probability is 0; raise draws"):
        gym_ctxbandits.log(ENV, agents.make("LinTS", seed=0), 50, seed=0, env_kwargs=KW, draws=1)


def test_cli_log_then_ope(tmp_path, capsys):
    out = str(tmp_path / "log.parquet")
    assert cli.main(["log", "--env", ENV, "--env-kwargs", json.dumps(KW), "--agent", "epsilon-greedy",
                     "--agent-kwargs", '{"epsilon": 0.3}', "--rounds", "300", "--seed", "5", "--out", out]) == 0
    assert cli.main(["ope", out, "--target", "LinTS", "--train-rounds", "100", "--draws", "20",
                     "--estimators", "ips,dm", "--n-bootstrap", "50"]) == 0
    text = capsys.readouterr().out
    assert "| IPS |" in text and "| DM |" in text and "| truth (frozen target) |" in text and "SNIPS" not in text
    assert cli.main(["ope", out, "--target", "LinUCB", "--estimators", "bogus"]) == 2
    assert "unknown estimator BOGUS" in capsys.readouterr().err
    widths = []
    for refit in ([], ["--refit"]):                 # the refitted model's error widens DM's interval
        assert cli.main(["ope", out, "--target", "LinUCB", "--estimators", "dm", "--n-bootstrap", "50", *refit]) == 0
        low, high = re.search(r"\| DM \| \S+ \| \[(\S+), (\S+)\] \|", capsys.readouterr().out).groups()
        widths.append(float(high) - float(low))
    assert widths[1] > 2 * widths[0]


def test_a_failed_log_writes_nothing(tmp_path, monkeypatch, capsys):
    out = tmp_path / "log.parquet"
    argv = ["log", "--env", ENV, "--env-kwargs", json.dumps(KW), "--agent", "LinTS", "--draws", "1", "--rounds", "50",
            "--out", str(out)]
    assert cli.main(argv) == 2                     # a zero Monte-Carlo pscore stops it half way
    assert "raise draws" in capsys.readouterr().err and not list(tmp_path.iterdir())
    assert cli.main(argv[:-1] + [str(tmp_path / "no" / "log.parquet")]) == 2
    assert "folder" in capsys.readouterr().err and not list(tmp_path.iterdir())
    import pyarrow.parquet as pq

    def crash(table, where):                       # a disk that fills up half way through the file
        open(where, "wb").write(b"PAR1 half")
        raise OSError("No space left on device")

    monkeypatch.setattr(pq, "write_table", crash)
    with pytest.raises(OSError):
        feedback.write(gym_ctxbandits.log(ENV, behaviour(), 20, seed=0, env_kwargs=KW), out)
    assert not list(tmp_path.iterdir())


@pytest.fixture(scope="module")
def cli_log(tmp_path_factory):
    path = tmp_path_factory.mktemp("cli") / "log.parquet"
    assert cli.main(["log", "--env", ENV, "--env-kwargs", json.dumps(KW), "--agent", "epsilon-greedy",
                     "--rounds", "200", "--seed", "5", "--out", str(path)]) == 0
    return path


def broken(cli_log, tmp_path, **change):
    """A copy of the CLI's log with some of its entries replaced."""
    fb = feedback.read(cli_log)
    fb.update(change)
    path = tmp_path / "broken.parquet"
    feedback.write(fb, path)
    return str(path)


def test_cli_ope_of_a_target_whose_arms_were_never_drawn(cli_log, tmp_path, capsys):
    """The behaviour (epsilon-greedy) could pull every arm, but the target's were never pulled: IPS
    is 0 and DR equals DM, not a refusal (a coverage study that dropped such logs would keep the
    lucky ones); SNIPS is 0 / 0."""
    path = broken(cli_log, tmp_path, action=never_taken(cli_log))
    with pytest.warns(RuntimeWarning, match="SNIPS is 0 / 0"):
        assert cli.main(["ope", path, "--target", "LinUCB", "--train-rounds", "50", "--n-bootstrap", "20",
                         "--estimators", "ips,snips,dm,dr,switch-dr,DROS"]) == 0
    values = dict(re.findall(r"\| (\S+) \| (\S+) \|", capsys.readouterr().out))
    assert values["IPS"] == "0.0000" and values["SNIPS"] == "nan"
    assert values["DR"] == values["Switch-DR"] == values["DRos"] != "0.0000"


def test_evaluate_and_true_value_refuse_a_target_of_more_arms(cli_log):
    fb = feedback.read(cli_log)
    wide = np.full((200, 20), 1 / 20)                  # half its mass on arms 10-19, which the log does not have
    for call in (lambda: ope.evaluate(fb, wide, ["IPS"]), lambda: ope.ips(fb["reward"], fb["action"], fb["pscore"],
                                                                           wide, behaviour_dist=fb["action_prob"]),
                 lambda: ope.dm(fb["reward"], fb["action"], wide, context=fb["context"]),
                 lambda: feedback.true_value(fb, wide)):
        with pytest.raises(ValueError, match=r"action_dist has (20 columns|shape \(200, 20\)) but "
                                             r"(the log|the behaviour|context)") as err:
            call()
        assert "\n" not in str(err.value)


def test_log_and_ope_of_an_env_registered_with_its_class(tmp_path, capsys):
    """examples/piecewise_env.py registers its class itself as entry_point (docs/extending.md)."""
    example = str(Path(__file__).resolve().parents[1] / "examples" / "piecewise_env.py")
    out = str(tmp_path / "pw.parquet")
    try:
        assert cli.main(["log", "--import", example, "--env", "MyBandits/PiecewiseLinear-v0", "--agent", "Random",
                         "--rounds", "100", "--out", out]) == 0
        assert cli.main(["ope", out, "--import", example, "--target", "LinUCB", "--estimators", "ips,dr",
                         "--n-bootstrap", "20"]) == 0
        assert "| DR |" in capsys.readouterr().out
    finally:
        gym.registry.pop("MyBandits/PiecewiseLinear-v0", None)


def test_softmax_floor_bounds_the_weights_exactly():
    """Softmax(epsilon=0.5) on 10 arms: every logged propensity is at least 0.05, and the log's
    action_prob is the plain softmax's mixed with uniform, exactly."""
    plain = gym_ctxbandits.log(ENV, agents.make("Softmax", tau=0.01, seed=3), 300, seed=1, env_kwargs=KW)
    floored = gym_ctxbandits.log(ENV, agents.make("Softmax", tau=0.01, epsilon=0.5, seed=3), 300, seed=1, env_kwargs=KW)
    assert plain["action_prob"].min() < 1e-6 and floored["action_prob"].min() >= 0.05 - 1e-15
    agent = agents.make("Softmax", tau=0.01, seed=3)
    twin = agents.make("Softmax", tau=0.01, epsilon=0.5, seed=3)
    for x, a, r in zip(plain["context"][:50], plain["action"][:50], plain["reward"][:50]):
        agent.observe(x, a, r)
        twin.observe(x, a, r)
    x = plain["context"][50]
    assert np.allclose(twin.action_probs(x), 0.5 * agent.action_probs(x) + 0.05, rtol=0, atol=1e-15)


def test_sampled_propensities_report_their_cost(monkeypatch, capsys):
    monkeypatch.setattr(feedback, "PROGRESS_AFTER", 0.0)
    gym_ctxbandits.log(ENV, agents.make("LinTS", seed=1), 10, seed=0, env_kwargs=KW, draws=100)
    err = capsys.readouterr().err
    assert "LinTS has no closed-form _probs, so its propensities are estimated by playing 100 copies" in err
    assert "s on round 2, about" in err and "3/10 rounds" in err and "10/10 rounds" in err
    gym_ctxbandits.log(ENV, agents.make("LinUCB", seed=0), 20, seed=0, env_kwargs=KW)   # exact: nothing to say
    gym_ctxbandits.log(ENV, agents.make("LinTS", seed=1), 10, seed=0, env_kwargs=KW, draws=100, progress=False)
    assert capsys.readouterr().err == ""


def never_taken(cli_log):
    """Each round's action replaced by an arm that LinUCB trained as `ctxbandits ope` trains it never picks."""
    fb = feedback.read(cli_log)
    target = feedback.train(agents.make("LinUCB", seed=0), ENV, 50, 5, KW)
    return feedback.target_probs(target, fb).argmin(axis=1)


@pytest.mark.parametrize("case, extra, words", [
    ("no pscore", [], "the log has no 'pscore' column .* IPS, SNIPS, DR, SNDR needs"),
    ("no reward", [], "the log has no 'reward' column"),
    ("no context", [], "the log has no 'context' column"),
    ("pscore 0", [], r"pscore must lie in \(0, 1\], got values from 0"),
    ("pscore 1.5", [], r"pscore must lie in \(0, 1\], got values from .* to 1.5"),
    ("unsupported", [], r"the target takes arms that the behaviour never could \(propensity 0\) on \d+ of 200 rounds "
                        r"\(0-based rows \d+, "),
    ("other env", ["--env-kwargs", '{"num_arms": 10, "dim": 6}'], r"\(K, d\) = \(10, 5\) .* shows \(10, 6\)"),
    ("other K", ["--env-kwargs", '{"num_arms": 4, "dim": 5, "pool_size": 100}'], r"shows \(4, 5\)"),
    ("no env", [], "names no env to train the target on"),
    ("replay, not uniform", ["--estimators", "replay"], "replay needs a uniformly random log"),
])
def test_cli_ope_bad_logs_get_one_line(cli_log, tmp_path, capsys, case, extra, words):
    change = {"no pscore": dict(pscore=None), "pscore 0": dict(pscore=np.zeros(200)),
              "pscore 1.5": dict(pscore=np.full(200, 1.5)), "no env": dict(meta={}), "no reward": dict(reward=None),
              "no context": dict(context=None)}.get(case, {})
    if case == "unsupported":                       # a deterministic behaviour: every other arm has propensity 0
        fb = feedback.read(cli_log)
        change = dict(action_prob=np.eye(10)[fb["action"]], pscore=np.ones(200))
    path = broken(cli_log, tmp_path, **change) if change else str(cli_log)
    assert cli.main(["ope", path, "--target", "LinUCB", "--train-rounds", "50", *extra]) == 2
    err = capsys.readouterr().err
    assert re.search(words, err) and err.startswith("ctxbandits: error:") and err.count("\n") == 1, err


def test_cli_replay_of_a_learning_target(tmp_path, capsys):
    out = str(tmp_path / "uniform.parquet")
    assert cli.main(["log", "--env", ENV, "--env-kwargs", json.dumps(KW), "--agent", "Random", "--rounds", "500",
                     "--seed", "5", "--out", out]) == 0
    assert cli.main(["ope", out, "--target", "LinUCB", "--estimators", "ips,replay", "--n-bootstrap", "50"]) == 0
    text = capsys.readouterr().out
    kept = int(re.search(r"\| Replay \(keeps learning; (\d+) rounds kept\) \| ", text)[1])
    assert 25 < kept < 80 and "| IPS |" in text and "| truth (frozen target) |" in text


def test_true_value_refuses_a_target_whose_rows_do_not_sum_to_1():
    fb = {"expected_reward": np.array([[1.0, 0.0], [0.0, 1.0], [0.5, 0.5]])}
    pi = np.array([[1.0, 0.0], [0.3, 0.3], [0.5, 0.5]])
    with pytest.raises(ValueError, match=r"action_dist must hold the target's probabilities, non-negative rows that "
                                         r"sum to 1, but row 1 sums to 0.6 on 1 of 3 rounds \(0-based row 1\)") as err:
        feedback.true_value(fb, pi)
    assert "\n" not in str(err.value)
    assert feedback.true_value(fb, np.array([[1.0, 0.0], [0.5, 0.5], [0.5, 0.5]])) == pytest.approx(2 / 3)


def test_cli_ope_of_a_missing_log_file_says_how_to_make_one(tmp_path, capsys):
    missing = str(tmp_path / "nolog.parquet")
    assert cli.main(["ope", missing, "--target", "LinUCB"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"ctxbandits: error: no log file {missing}: make one with `ctxbandits log ") and \
        f"--out {missing}`" in err and err.count("\n") == 1, err
    with pytest.raises(FileNotFoundError, match="no log file"):
        feedback.read(missing)


def test_cli_ope_prints_the_tuned_tau_and_lambda_and_takes_given_ones(cli_log, capsys):
    argv = ["ope", str(cli_log), "--target", "LinUCB", "--train-rounds", "50", "--n-bootstrap", "20",
            "--estimators", "dr,switch-dr,dros"]
    assert cli.main(argv) == 0
    out = capsys.readouterr().out
    assert re.search(r"chosen on this log \(least estimated MSE bound; --switch-tau, --dros-lambda to set\): "
                     r"Switch-DR tau \S+, DRos lambda \S+\n", out), out
    assert cli.main(argv + ["--switch-tau", "0", "--dros-lambda", "inf"]) == 0
    out = capsys.readouterr().out
    values = dict(re.findall(r"\| (\S+) \| (\S+) \|", out))
    assert "chosen on this log" not in out and values["DRos"] == values["DR"]


def test_a_ranking_env_or_agent_is_refused_in_one_line_pointing_to_slate_logs(tmp_path):
    from gym_ctxbandits.feedback import log

    for env_id, agent in (("CtxBandit/CascadeBLB-v0", "CascadeUCB1"), ("CtxBandit/Linear-v0", "CascadeUCB1")):
        with pytest.raises(ValueError, match=r"ranks items: log a ranking with gym_ctxbandits\.slate_ope\.log"):
            log(env_id, agent, 5, 0, out=tmp_path / "x.parquet")
    assert not (tmp_path / "x.parquet").exists()
