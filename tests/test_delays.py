"""Delayed, censored and batched feedback: the models (gym_ctxbandits.delays), the run loop that
delivers late rewards, the CLI and config, and the Gymnasium wrapper."""

import collections
import json
import math
import warnings

import gymnasium as gym
import numpy as np
import pandas as pd
import pytest

import agents
import gym_ctxbandits
from gym_ctxbandits import cli, experiment
from gym_ctxbandits import config as cfg
from gym_ctxbandits.checks import check_env
from gym_ctxbandits.delays import Feedback, FeedbackQueue, batch_ends, delay_model, delay_rng
from gym_ctxbandits.experiment import AgentSpec, EnvSpec, Job, RunLog, _replay_rounds, _rounds, run_batch, run_job
from gym_ctxbandits.wrappers import DelayedFeedback

ENV = EnvSpec("CtxBandit/Linear-v0", {"dim": 5, "num_arms": 10})
U = np.random.default_rng(0).random(50_000)


# -- the models --------------------------------------------------------------------------------
def test_delay_models_have_their_distributions():
    geo = delay_model("geometric:100").draw(U)
    assert geo.min() == 0 and abs(geo.mean() - 100) < 3                     # E[D] = MEAN, se ~ 0.45
    assert abs((geo == 0).mean() - 1 / 101) < 0.002                          # P(D = 0) = p
    assert np.array_equal(delay_model("geometric:p=0.5").draw(U), delay_model("geometric:1").draw(U))
    uni = delay_model("uniform:3:7").draw(U)
    assert set(np.unique(uni)) == {3, 4, 5, 6, 7} and abs(uni.mean() - 5) < 0.05
    par = delay_model("pareto:2:10").draw(U)
    for k in (10, 50, 200):                                                  # P(D >= k) = (1 + k / SCALE)^-ALPHA
        assert abs((par >= k).mean() - (1 + k / 10) ** -2) < 0.01
    assert np.array_equal(delay_model("fixed:7").draw(U[:5]), [7] * 5)


def test_delays_of_one_stream_are_coupled_across_models_and_arms():
    """One uniform per round drives every model: a longer mean never shortens a round's delay, and a
    better arm (higher expected reward) never waits longer under reward-dependent delays."""
    assert (delay_model("geometric:50").draw(U) <= delay_model("geometric:100").draw(U)).all()
    model = delay_model("reward:100:10")
    good, bad = model.draw(U, np.full(U.shape, 0.9)), model.draw(U, np.full(U.shape, 0.1))
    assert (good <= bad).all() and abs(bad.mean() - 91) < 2 and abs(good.mean() - 19) < 1   # E ceil(Exp(s)) ~ s + 1/2


@pytest.mark.parametrize("spec, canonical", [("geometric:mean=100", "geometric:100"), (" Geometric:100 ", "geometric:100"),
                                             ("uniform:20", "uniform:0:20"), ("reward:100", "reward:100:10"),
                                             ("pareto:1.5:100", "pareto:1.5:100"), ("fixed:0", "fixed:0")])
def test_delay_specs_have_one_canonical_form(spec, canonical):
    assert delay_model(spec).spec == canonical and Feedback(delay=spec).delay == canonical
    assert Job(ENV, AgentSpec("LinUCB"), 0, 10, feedback=Feedback(delay=spec)).filename == \
        Job(ENV, AgentSpec("LinUCB"), 0, 10, feedback=Feedback(delay=canonical)).filename


@pytest.mark.parametrize("spec, match", [("weibull:3", "unknown delay 'weibull'"), ("geometric:abc", "'abc' is not a number"),
                                         ("fixed:2.5", "whole number"), ("geometric:p=0", r"p must be in \(0, 1\]"),
                                         ("uniform:5:2", "HIGH must be >= LOW"), ("pareto:1", "give pareto:ALPHA:SCALE"),
                                         ("fixed", "give fixed:D"), ("", "must be a text")])
def test_bad_delay_specs_are_one_line_errors_naming_the_forms(spec, match):
    with pytest.raises(ValueError, match=match) as err:
        delay_model(spec)
    assert "\n" not in str(err.value)


def test_batch_grids_are_gao_et_al_s():
    assert batch_ends("arithmetic:4", 100).tolist() == [25, 50, 75, 100]
    assert batch_ends("geometric:4", 10_000).tolist() == [10, 100, 1000, 10_000]
    a = 10_000 ** (1 / (2 - 2 ** (1 - 3)))                                   # minimax: u_1 = a, u_j = a sqrt(u_{j-1})
    assert batch_ends("minimax:3", 10_000).tolist() == [math.floor(a), math.floor(a * math.sqrt(a)), 10_000]
    assert batch_ends("geometric:5", 8).tolist() == [1, 2, 3, 5, 8]          # T^(j/5) for T = 8
    with pytest.raises(ValueError, match="arithmetic:M, geometric:M or minimax:M"):
        batch_ends("log:3", 100)


@pytest.mark.parametrize("kwargs, match", [({"default_reward": 0.0}, "give a window too"),
                                           ({"feedback_every": 5, "batch_grid": "geometric:3"}, "not both"),
                                           ({"window": -1}, "window must be"), ({"feedback_every": 0}, "feedback_every"),
                                           ({"delay": "fixed:-1"}, "whole number >= 0")])
def test_bad_feedback_models_are_refused(kwargs, match):
    with pytest.raises(ValueError, match=match):
        Feedback(**kwargs)


def test_the_default_feedback_model_is_none():
    assert Feedback.of(Feedback()) is None and Feedback.of({}) is None and Feedback.of(None) is None
    assert Feedback.of({"delay": "fixed:3"}) == Feedback(delay="fixed:3")
    with pytest.raises(ValueError, match="no field 'delays'"):
        Feedback.of({"delays": "fixed:3"})


# -- the queue ---------------------------------------------------------------------------------
def arrivals(feedback, rewards, horizon=100):
    """{round s: (the round its reward arrives, the reward delivered)} of a single run of `horizon`
    rounds whose first rounds pay `rewards`."""
    queue = FeedbackQueue(feedback, [delay_rng(0)], horizon, single=True)
    got = {}
    for t in range(horizon):
        if t < len(rewards):
            queue.push(t, None, 0, rewards[t])
        got.update({s: (t, value) for s, _, _, value, _ in queue.pop(t)})
    assert not queue.held and not queue.due                  # nothing kept that would arrive after the last round
    return got


def test_the_queue_delivers_at_the_delay_within_the_window():
    got = arrivals(Feedback(delay="fixed:3"), np.ones(10), horizon=10)
    assert got == {s: (s + 3, 1.0) for s in range(7)}                    # rounds 7..9 would arrive after the end
    draws = delay_model("geometric:4").draw(np.stack([delay_rng(0).random(1024)])[0][:50])
    got = arrivals(Feedback(delay="geometric:4", window=5), np.arange(50.0), horizon=1000)
    assert got == {s: (s + d, float(s)) for s, d in enumerate(draws) if d <= 5}     # later ones are dropped
    got = arrivals(Feedback(delay="geometric:4", window=5, default_reward=-1.0), np.arange(50.0), horizon=1000)
    assert got == {s: (s + d, float(s)) if d <= 5 else (s + 5, -1.0) for s, d in enumerate(draws)}


def test_conversions_reveal_only_positive_rewards():
    rewards = np.array([1.0, 0.0, 1.0, 0.0])
    assert arrivals(Feedback(conversions=True), rewards) == {0: (0, 1.0), 2: (2, 1.0)}
    assert arrivals(Feedback(conversions=True, window=2, default_reward=0.0), rewards, horizon=5) == \
        {0: (0, 1.0), 1: (3, 0.0), 2: (2, 1.0)}             # round 3's default would come at round 5, after the end


def test_batched_updates_deliver_at_the_ends_of_batches():
    got = arrivals(Feedback(feedback_every=4), np.ones(12), horizon=12)
    assert got == {s: (s // 4 * 4 + 3, 1.0) for s in range(12)}
    got = arrivals(Feedback(delay="fixed:2", feedback_every=4), np.ones(12), horizon=12)
    assert got == {s: ((s + 2) // 4 * 4 + 3, 1.0) for s in range(10) if (s + 2) // 4 * 4 + 3 < 12}
    got = arrivals(Feedback(batch_grid="arithmetic:3"), np.ones(12), horizon=12)
    assert got == {s: (s // 4 * 4 + 3, 1.0) for s in range(12)}


def test_an_instance_s_delays_do_not_depend_on_its_neighbours():
    """Common random numbers: instance i of a batch faces the delays of seed i run alone, whatever
    the rewards, actions and the other instances."""
    def when(seeds, rewards):
        queue = FeedbackQueue(Feedback(delay="geometric:30"), [delay_rng(s) for s in seeds], 5000)
        return np.stack([queue.arrivals(t, rewards)[0] for t in range(1500)])
    alone, batch = when([7], np.zeros(1)), when([3, 7, 11], np.ones(3))
    assert np.array_equal(alone[:, 0], batch[:, 1]) and not np.array_equal(batch[:, 0], batch[:, 1])


# -- the run loop ------------------------------------------------------------------------------
class Recorder:
    """A single agent that plays arm t mod K and records which round's obs each observe carries."""

    def __init__(self):
        self.obs, self.got = [], []

    def act(self, obs):
        self.obs.append(obs)
        return (len(self.obs) - 1) % 3

    def observe(self, obs, action, reward):
        s = next(i for i, o in enumerate(self.obs) if o is obs)
        assert action == s % 3
        self.got.append((s, len(self.obs) - 1))


def test_the_agent_gets_round_s_features_when_its_reward_arrives():
    agent = Recorder()
    run_job(Job(ENV, AgentSpec("Random"), 1, 60, feedback=Feedback(delay="fixed:5", feedback_every=10)),
            agent_factory=lambda seed: agent)
    assert agent.got == [(s, (s + 5) // 10 * 10 + 9) for s in range(55)]     # oldest first, at the end of a batch


def test_a_replay_delays_its_accepted_events():
    """On a replay (rounds are accepted events) the reward of accepted event t arrives at accepted event t + D."""
    class Log:                                   # every other logged event is accepted; event i pays i
        events = 0

        def step(self, action):
            self.events += 1
            return np.zeros((2, 1)), float(self.events), False, False, {"accepted": self.events % 2 == 0}

    class Agent:
        def __init__(self):
            self.acts, self.got = 0, []

        def act(self, obs):
            self.acts += 1
            return 0

        def observe(self, obs, action, reward):
            self.got.append((reward, self.acts))

    agent = Agent()
    queue = FeedbackQueue(Feedback(delay="fixed:2"), [delay_rng(0)], 10, single=True)
    _replay_rounds(Log(), agent, np.zeros((2, 1)), 10, RunLog(np.arange(1, 11), 1), "", None, queue)
    assert agent.got == [(2.0 * (t + 1), 2 * (t + 3)) for t in range(8)]   # event 2(t+1), seen after act 2(t+3)


@pytest.mark.parametrize("name", ["LinUCB", "LinTS", "epsilon-greedy", "Linear-Ensemble++"])
@pytest.mark.parametrize("env", [ENV, EnvSpec("CtxBandit/BernoulliLogistic-v0")], ids=["Linear", "BernoulliLogistic"])
def test_zero_delay_through_the_queue_gives_today_s_numbers(name, env):
    """The queue with nothing to delay (delay 0, a window no delay exceeds) reproduces the undelayed
    loop bit for bit, single and batched."""
    cols = ["reward", "regret", "cum_reward", "cum_regret"]
    today = [run_job(Job(env, AgentSpec(name), s, 150)) for s in (0, 5)]
    for fb in (Feedback(delay="fixed:0"), Feedback(window=3)):
        jobs = [Job(env, AgentSpec(name), s, 150, feedback=fb) for s in (0, 5)]
        for got in ([run_job(j) for j in jobs], run_batch(jobs)):
            for a, b in zip(today, got):
                assert a[cols].equals(b[cols])


@pytest.mark.parametrize("fb", [Feedback(delay="geometric:20"), Feedback(delay="fixed:30", feedback_every=7),
                                Feedback(delay="reward:40:5", window=30, default_reward=0.0),
                                Feedback(conversions=True, batch_grid="minimax:3")], ids=lambda f: f.key())
def test_a_delayed_batched_run_equals_its_instances_run_singly(fb):
    cols = ["reward", "regret", "cum_reward", "cum_regret"]
    for name in ("LinUCB", "LinTS"):
        jobs = [Job(EnvSpec("CtxBandit/BernoulliLogistic-v0"), AgentSpec(name), s, 200, log_every=9, feedback=fb)
                for s in (0, 4, 7)]
        batch = run_batch(jobs)
        for job, got in zip(jobs, batch):
            assert run_job(job)[cols].equals(got[cols])
        undelayed = run_job(Job(jobs[0].env, jobs[0].agent, 0, 200, log_every=9))
        assert not undelayed["cum_regret"].equals(batch[0]["cum_regret"])    # the delays reached the agent


LINEAR = ["Random", "Greedy", "epsilon-greedy", "Softmax", "LinUCB", "LinTS", "LinTS-AG", "Lin-ES", "ES", "RRLS",
          "Linear-Ensemble++", "OTFLinUCB", "OTFLinTS"]


@pytest.mark.parametrize("name, kwargs", [*((name, {}) for name in LINEAR),
                                          ("BaSE", {"horizon": 120, "M": 3, "gamma": 0.1})], ids=[*LINEAR, "BaSE"])
def test_an_agent_under_random_delays_learns_row_subsets_as_its_instances_alone(name, kwargs, monkeypatch):
    """Geometric delays reach the 4 instances at different rounds, several at once: the batched agent
    takes them natively (the linear agents' `observe_arrivals`: a round's arrivals from several rounds
    in one call; BaSE's `observe_rows`: one call per past round; never N single agents) and instance i
    acts, round by round, exactly as seed i run alone on the same arrivals. (BaSE's grid of 3 batches
    over the 120 rounds ends at 15 and 60: it eliminates and commits within the run.)"""
    def no_fallback(singles):
        raise AssertionError("the batch fell back to N single agents")

    calls = collections.Counter()
    method = "observe_arrivals" if hasattr(agents.make(name), "observe_arrivals") else "observe_rows"
    owner = next(c for c in type(agents.make(name)).__mro__ if method in vars(c))
    original = getattr(owner, method)

    def spy_arrivals(self, arrivals):
        rows = [i for *_, r in arrivals for i in (range(self.n_) if r is None else r)]
        calls["native"] += len(arrivals) > 1                  # several past rounds in one call ...
        calls["mixed"] += len(set(rows)) < len(rows)          # ... an instance's rewards among them twice
        return original(self, arrivals)

    def spy_rows(self, obs, action, reward, rows):
        calls["native"] += 1                                  # once per past round of a round's arrivals
        calls["mixed"] += len(rows) < self.n_                 # a row subset
        return original(self, obs, action, reward, rows)

    monkeypatch.setattr(experiment, "PerInstance", no_fallback)
    monkeypatch.setattr(owner, method, spy_arrivals if method == "observe_arrivals" else spy_rows)
    cols = ["reward", "regret", "cum_reward", "cum_regret"]
    fb = Feedback(delay="geometric:4")
    jobs = [Job(ENV, AgentSpec(name, kwargs), s, 120, log_every=1, feedback=fb) for s in (0, 4, 7, 9)]
    batch = run_batch(jobs)
    assert calls["native"] > 50 and calls["mixed"] > 10
    for job, got in zip(jobs, batch):
        assert run_job(job)[cols].equals(got[cols])


def test_an_agent_without_observe_rows_runs_as_single_agents():
    """OAM does not offer `observe_rows` (hasattr is False), so random delays run it as N single agents."""
    assert not hasattr(agents.make("OAM"), "observe_rows") and hasattr(agents.make("LinUCB"), "observe_rows")
    assert not hasattr(agents.make("OAM"), "observe_arrivals") and hasattr(agents.make("LinUCB"), "observe_arrivals")


def test_a_job_without_feedback_keeps_its_file_name():
    job = Job(ENV, AgentSpec("LinUCB"), seed=3, horizon=300)
    assert job.filename == "Linear-v0__LinUCB__seed3__5e8da464d0.parquet"     # the name before feedback existed
    names = {Job(ENV, AgentSpec("LinUCB"), 3, 300, feedback=Feedback(**kw)).filename
             for kw in ({"delay": "fixed:3"}, {"delay": "fixed:4"}, {"delay": "fixed:3", "window": 9}, {"feedback_every": 2})}
    assert len(names) == 4 and job.filename not in names


def test_run_resumes_a_delayed_comparison_and_records_its_model(tmp_path):
    kwargs = dict(seeds=2, horizon=80, out=tmp_path, feedback={"delay": "geometric:10", "window": 20})
    first = gym_ctxbandits.run(ENV, ["LinUCB", "Random"], **kwargs)
    again = gym_ctxbandits.run(ENV, ["LinUCB", "Random"], **kwargs)
    assert again.attrs["reused"] == 4 and first.equals(again)
    assert json.loads((tmp_path / "manifest.json").read_text())["config"]["feedback"]["delay"] == "geometric:10"
    other = gym_ctxbandits.run(ENV, ["LinUCB", "Random"], **{**kwargs, "feedback": {"delay": "geometric:10"}})
    assert other.attrs["reused"] == 0


def test_cli_flags_and_config_keys_make_the_feedback_model(tmp_path):
    path = tmp_path / "c.toml"
    path.write_text('envs = ["CtxBandit/Linear-v0"]\nagents = ["LinUCB"]\ndelay = "geometric:100"\nwindow = 500\n'
                    f'out = "{tmp_path}"\n')
    assert cfg.load(path).feedback == Feedback(delay="geometric:100", window=500)
    args = cli.build_parser().parse_args(["run", "--config", str(path), "--feedback-every", "50", "--default-reward", "0"])
    assert cli.comparison_from_args(args).feedback == Feedback("geometric:100", 500, 0.0, False, 50)
    args = cli.build_parser().parse_args(["run", "--config", str(path), "--batch-grid", "geometric:5"])
    assert cli.comparison_from_args(args).feedback.batch_grid == "geometric:5"
    path.write_text('envs = ["CtxBandit/Linear-v0"]\nagents = ["LinUCB"]\ndelay = "geometric"\n')
    with pytest.raises(cfg.ConfigError, match="config: delay 'geometric': give geometric:MEAN"):
        cfg.load(path)


@pytest.mark.parametrize("spec", ["none", " None ", "NONE"])
def test_delay_none_is_no_delay(spec):
    """"none" is the natural word for no delay: the model None, the default feedback, its file names."""
    assert delay_model(spec) is None and Feedback(delay=spec) == Feedback() and Feedback.of({"delay": spec}) is None
    assert Feedback(delay=spec, window=9) == Feedback(window=9)
    assert Job(ENV, AgentSpec("LinUCB"), 3, 300, feedback=Feedback.of({"delay": spec})).filename == \
        Job(ENV, AgentSpec("LinUCB"), 3, 300).filename
    with pytest.raises(ValueError, match="none takes no numbers"):
        delay_model("none:3")


def test_cli_and_config_delay_none_give_the_rows_of_no_delay(tmp_path):
    """`--delay none` (and the config's `delay = "none"`) runs as no flag at all: the same comparison,
    the same file names, the same rows bit for bit; on the command line it also cancels a config's delay."""
    common = ["run", "--env", "CtxBandit/Linear-v0", "--env-kwargs", '{"dim": 3, "num_arms": 4}', "--agents",
              "LinUCB,LinTS", "--seeds", "2", "--horizon", "60", "--quiet"]
    for name, extra in (("plain", []), ("none", ["--delay", "none"])):
        assert cli.main([*common, *extra, "--out", str(tmp_path / name)]) == 0
    plain, none = (sorted((tmp_path / name).glob("*.parquet")) for name in ("plain", "none"))
    assert [p.name for p in plain] == [p.name for p in none] and len(plain) == 4
    for a, b in zip(plain, none):                                       # the rows bit for bit, but the timings
        a, b = (pd.read_parquet(f).drop(columns=["act_seconds", "observe_seconds"]) for f in (a, b))
        assert a.equals(b) and a["regret"].to_numpy().tobytes() == b["regret"].to_numpy().tobytes()
    path = tmp_path / "c.toml"
    path.write_text('envs = ["CtxBandit/Linear-v0"]\nagents = ["LinUCB"]\ndelay = "none"\n')
    assert cfg.load(path).feedback is None
    path.write_text('envs = ["CtxBandit/Linear-v0"]\nagents = ["LinUCB"]\ndelay = "geometric:100"\nwindow = 500\n'
                    f'out = "{tmp_path}"\n')
    args = cli.build_parser().parse_args(["run", "--config", str(path), "--delay", "none"])
    assert cli.comparison_from_args(args).feedback == Feedback(window=500)


def test_cli_rejects_a_bad_delay_in_one_line(capsys):
    assert cli.main(["run", "--env", "CtxBandit/Linear-v0", "--agents", "LinUCB", "--delay", "geometric:x",
                     "--out", "unused"]) != 0
    err = capsys.readouterr().err.strip()
    assert err.startswith("ctxbandits: error: --delay: delay 'geometric:x'") and "\n" not in err


# -- the wrapper -------------------------------------------------------------------------------
def test_the_wrapper_passes_the_env_checks():
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "<lambda> has no native vector env")
        check_env(lambda **kw: DelayedFeedback(gym.make("CtxBandit/Linear-v0", **kw), delay="geometric:3", window=8),
                  info_keys=("arrivals",))


def test_the_wrapper_pays_what_arrives_and_lists_it():
    plain = gym.make("CtxBandit/Linear-v0")
    env = DelayedFeedback(gym.make("CtxBandit/Linear-v0"), delay="fixed:2", feedback_every=3)
    plain.reset(seed=4), env.reset(seed=4)
    paid = []
    for t in range(12):
        r = plain.step(t % 5)[1]
        _, got, _, _, info = env.step(t % 5)
        paid.append(r)
        due = [s for s in range(t + 1) if (s + 2) // 3 * 3 + 2 == t]
        assert info["arrivals"]["round"].tolist() == due and info["arrivals"]["action"].tolist() == [s % 5 for s in due]
        assert got == sum(paid[s] for s in due) and isinstance(got, float)
    with pytest.raises(ValueError, match="give horizon=T"):
        DelayedFeedback(plain, batch_grid="geometric:3")


def test_a_stable_baselines3_agent_learns_through_the_wrapper():
    sb3 = pytest.importorskip("stable_baselines3")
    env = DelayedFeedback(gym.make("CtxBandit/Linear-v0", max_episode_steps=32), delay="geometric:2")
    model = sb3.A2C("MlpPolicy", env, n_steps=16, seed=0, device="cpu").learn(64)
    assert model.num_timesteps == 64
