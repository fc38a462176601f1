"""The run loop, result files, resume, backends and configs."""

import json
import re
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import gym_ctxbandits
from gym_ctxbandits import config as cfg
from gym_ctxbandits.experiment import AgentSpec, EnvSpec, Job, agent_seed, run_job, seed_list
from gym_ctxbandits.results import is_complete, load_results, write_atomic

ENV = "CtxBandit/Linear-v0"


def test_run_job_table_is_tidy_and_exact():
    job = Job(EnvSpec(ENV, {"dim": 5, "num_arms": 10}), AgentSpec("LinUCB"), seed=3, horizon=200, log_every=1)
    table = run_job(job)
    assert list(table["round"]) == list(range(1, 201))
    np.testing.assert_array_equal(table["cum_regret"], np.cumsum(table["regret"]))    # running sums, bit for bit
    np.testing.assert_array_equal(table["cum_reward"], np.cumsum(table["reward"]))
    assert (table["regret"] >= 0).all() and table["act_seconds"].is_monotonic_increasing
    grid = run_job(Job(job.env, job.agent, seed=3, horizon=200, log_every=30))
    assert list(grid["round"]) == [30, 60, 90, 120, 150, 180, 200]
    full = table.set_index("round").loc[grid["round"]]
    np.testing.assert_allclose(grid["cum_regret"], full["cum_regret"])
    np.testing.assert_allclose(grid["reward"], full["reward"])


def test_common_random_numbers_across_agents():
    """Two agents that play the same arm on the same seed get the same rewards."""
    job = Job(EnvSpec(ENV), AgentSpec("Random"), seed=1, horizon=50)

    class Always:
        def act(self, obs):
            return 2

        def observe(self, obs, action, reward):
            pass

    a = run_job(job, agent_factory=lambda seed: Always())
    b = run_job(job, agent_factory=lambda seed: Always())
    np.testing.assert_array_equal(a["reward"], b["reward"])


def test_agent_seed_is_not_the_env_seed():
    assert agent_seed(0, "LinTS") != 0 and agent_seed(0, "LinTS") != agent_seed(0, "LinUCB")
    assert agent_seed(5, "LinTS") == agent_seed(5, "LinTS")


def test_bad_agent_output_names_agent_and_round():
    class Broken:
        def act(self, obs):
            return float("nan")

        def observe(self, obs, action, reward):
            pass

    job = Job(EnvSpec(ENV), AgentSpec("Random", label="broken"), seed=0, horizon=5)
    with pytest.raises(TypeError, match="agent 'broken' on CtxBandit/Linear-v0, seed 0, round 1: action must be an integer"):
        run_job(job, agent_factory=lambda seed: Broken())


def test_resume_skips_finished_jobs_and_redoes_broken_ones(tmp_path):
    kwargs = dict(seeds=3, horizon=100, out=tmp_path, log_every=10)
    first = gym_ctxbandits.run(ENV, ["LinUCB", "Random"], **kwargs)
    files = sorted(p for p in tmp_path.glob("*.parquet"))
    assert len(files) == 6 and not list(tmp_path.glob(".tmp-*"))
    stamps = {p: p.stat().st_mtime_ns for p in files}
    files[0].unlink()                                         # an interrupted job: no file
    files[1].write_bytes(files[1].read_bytes()[:100])         # a corrupt file
    time.sleep(0.01)
    with pytest.warns(UserWarning, match="unreadable"):
        again = gym_ctxbandits.run(ENV, ["LinUCB", "Random"], **kwargs)
    numbers = ["env", "agent", "seed", "round", "reward", "regret", "cum_reward", "cum_regret"]
    pd.testing.assert_frame_equal(first[numbers], again[numbers])
    for p in files[2:]:
        assert p.stat().st_mtime_ns == stamps[p], f"{p.name} was recomputed"
    assert files[1].stat().st_mtime_ns != stamps[files[1]]
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert manifest["config"]["horizon"] == 100 and len(manifest["files"]) == 6


def test_incomplete_file_is_not_trusted(tmp_path):
    job = Job(EnvSpec(ENV), AgentSpec("Random"), seed=0, horizon=40, log_every=10)
    write_atomic(run_job(job).iloc[:2], tmp_path / job.filename)
    assert not is_complete(job, tmp_path)
    run_job(job).to_parquet(tmp_path / job.filename)            # complete, but written without a checksum
    with pytest.warns(UserWarning, match="no checksum"):
        assert not is_complete(job, tmp_path)
    write_atomic(run_job(job), tmp_path / job.filename)
    assert is_complete(job, tmp_path)


def test_process_backend_gives_the_same_numbers(tmp_path):
    kwargs = dict(seeds=[0, 7], horizon=150, log_every=5)
    local = gym_ctxbandits.run(ENV, ["LinTS", "Random"], out=tmp_path / "a", **kwargs)
    procs = gym_ctxbandits.run(ENV, ["LinTS", "Random"], out=tmp_path / "b", backend="processes", workers=2, **kwargs)
    cols = ["env", "agent", "seed", "round", "reward", "regret", "cum_regret"]
    pd.testing.assert_frame_equal(local[cols], procs[cols])


def test_run_rejects_bad_arguments(tmp_path):
    with pytest.raises(ValueError, match="backend must be one of"):
        gym_ctxbandits.run(ENV, "Random", seeds=1, horizon=5, backend="gpu")
    with pytest.raises(ValueError, match="horizon must be an integer >= 1"):
        gym_ctxbandits.run(ENV, "Random", seeds=1, horizon=0)
    with pytest.raises(ValueError, match="distinct labels"):
        gym_ctxbandits.run(ENV, ["Random", "Random"], seeds=1, horizon=5)
    with pytest.raises(KeyError, match="unknown agent 'NoSuchAgent'"):
        gym_ctxbandits.run(ENV, "NoSuchAgent", seeds=1, horizon=5)
    with pytest.raises(FileNotFoundError, match="manifest"):
        load_results(tmp_path)


def test_config_file_round_trip(tmp_path):
    path = tmp_path / "c.toml"
    path.write_text('horizon = 50\nseeds = [1, 2]\nenvs = ["CtxBandit/Linear-v0", {id = "CtxBandit/Logistic-v0", '
                    'kwargs = {dim = 4}}]\nagents = ["LinUCB", {name = "LinTS", kwargs = {v = 0.5}, label = "TS"}]\n')
    comp = cfg.load(path)
    assert comp.horizon == 50 and comp.seeds == [1, 2]
    assert comp.envs[1] == EnvSpec("CtxBandit/Logistic-v0", {"dim": 4})
    assert comp.agents[1] == AgentSpec("LinTS", {"v": 0.5}, "TS")
    yml = tmp_path / "c.yaml"
    yml.write_text("horizon: 50\nenvs: [CtxBandit/Linear-v0]\nagents:\n  - name: LinUCB\n")
    assert cfg.load(yml).agents == [AgentSpec("LinUCB")]


@pytest.mark.parametrize("text,match", [
    ('horizn = 5\nenvs = ["a"]\nagents = ["b"]', "config key 'horizn' is unknown"),
    ('horizon = "5"\nenvs = ["a"]\nagents = ["b"]', "config key 'horizon' must be int, got str"),
    ('horizon = true\nenvs = ["a"]\nagents = ["b"]', "config key 'horizon' must be int, got bool"),
    ('envs = ["a"]\nagents = [{name = "b", kwrgs = {}}]', r"config key 'agents\[0\].kwrgs' is unknown"),
    ('envs = ["a"]\nagents = [{label = "b"}]', r"config key 'agents\[0\].name' is missing"),
    ('envs = [{id = "a", kwargs = 3}]\nagents = ["b"]', r"config key 'envs\[0\].kwargs' must be dict"),
    ('envs = ["a"]', "config key 'agents' is missing or empty"),
    ('seeds = [1, "x"]\nenvs = ["a"]\nagents = ["b"]', r"config key 'seeds\[1\]' must be int"),
    ('horizon = 0\nenvs = ["a"]\nagents = ["b"]', "config key 'horizon' must be >= 1"),
    ("horizon = = 3", "cannot read"),
])
def test_config_errors_name_the_key(tmp_path, text, match):
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(cfg.ConfigError, match=match):
        cfg.load(path)



@pytest.mark.parametrize("seeds,expected", [
    (3, [0, 1, 2]), (np.int64(2), [0, 1]), ("3", [0, 1, 2]), ("1000:1003", [1000, 1001, 1002]), ("7:8", [7]),
    ("3,7,11", [3, 7, 11]), ([5, 1], [5, 1]), ((0, 9), [0, 9]), (range(4, 6), [4, 5]),
])
def test_seed_list_forms(seeds, expected):
    assert seed_list(seeds) == expected


@pytest.mark.parametrize("seeds,match", [
    (0, "count >= 1"), ("0", "count >= 1"), ("-3", "count >= 1"), ("5:5", "empty range"), ("10:2", "empty range"),
    ("a:b", "not a range A:B"), ("-1:3", "not a range A:B"), ("1,1", "repeats seed 1"), ([2, 2, 3], "repeats seed 2"),
    ("1.5", "got '1.5'"), ("1,-2", "not a list of integers"), ([1, -2], "holds -2"), ([True], "holds True"),
    ([], "non-empty"), (True, "non-empty"), (2.0, "non-empty"), (None, "non-empty"),
])
def test_seed_list_rejects_bad_seeds_naming_the_forms(seeds, match):
    with pytest.raises(ValueError, match=match) as err:
        seed_list(seeds)
    assert "1000:1010" in str(err.value) and "\n" not in str(err.value)


def test_run_takes_the_text_forms_and_rejects_repeated_seeds():
    table = gym_ctxbandits.run(ENV, "Random", seeds="1000:1002", horizon=5)
    assert sorted(table.seed.unique()) == [1000, 1001]
    with pytest.raises(ValueError, match="repeats seed 1"):
        gym_ctxbandits.run(ENV, "Random", seeds=[1, 1], horizon=5)


def test_config_seeds_forms(tmp_path):
    """A range or list of seeds in TOML or YAML; YAML's `1:4` is the range, not the base-60 number 64."""
    base = 'envs = ["a"]\nagents = ["b"]\n'
    for line, expected in [('seeds = "1000:1010"', list(range(1000, 1010))), ('seeds = "3,7,11"', [3, 7, 11]),
                           ("seeds = [3, 7]", [3, 7]), ("seeds = 4", 4)]:
        (tmp_path / "c.toml").write_text(f"{line}\n{base}")
        assert cfg.load(tmp_path / "c.toml").seeds == expected, line
    for line, expected in [("seeds: 1:4", [1, 2, 3]), ("seeds: 3,7,11", [3, 7, 11]), ("seeds: '10:12'", [10, 11]),
                           ("seeds: [3, 7]", [3, 7]), ("seeds: 4", 4)]:
        (tmp_path / "c.yaml").write_text(f"{line}\nhorizon: 0x10\nenvs: [a]\nagents: [b]\n")
        comp = cfg.load(tmp_path / "c.yaml")
        assert comp.seeds == expected and comp.horizon == 16, line


@pytest.mark.parametrize("line,match", [
    ('seeds = "5:5"', "config key 'seeds' '5:5' is an empty range"), ("seeds = 0", "config key 'seeds' must be a count"),
    ("seeds = [1, 1]", "config key 'seeds' .* repeats seed 1"), ("seeds = [-1]", "config key 'seeds' .* holds -1"),
    ('seeds = "x"', "config key 'seeds' must be an integer count"), ("seeds = []", "non-empty"),
])
def test_config_seeds_errors_name_the_key(tmp_path, line, match):
    (tmp_path / "c.toml").write_text(f'{line}\nenvs = ["a"]\nagents = ["b"]\n')
    with pytest.raises(cfg.ConfigError, match=match):
        cfg.load(tmp_path / "c.toml")


@pytest.mark.slow
def test_ray_backend_gives_the_same_numbers(tmp_path):
    kwargs = dict(seeds=[0, 3], horizon=100, log_every=10)
    local = gym_ctxbandits.run(ENV, ["LinTS", "Random"], out=tmp_path / "a", **kwargs)
    on_ray = gym_ctxbandits.run(ENV, ["LinTS", "Random"], out=tmp_path / "b", backend="ray", **kwargs)
    cols = ["env", "agent", "seed", "round", "reward", "regret", "cum_regret"]
    pd.testing.assert_frame_equal(local[cols], on_ray[cols])


# FiniteLinear's fixed pool (shared by the rounds, not copied) at 500 of its default 10,000 arms.
@pytest.mark.parametrize("env", [ENV, "CtxBandit/BernoulliLogistic-v0", EnvSpec("CtxBandit/FiniteLinear-v0",
                                                                                {"num_arms": 500})],
                         ids=["Linear", "BernoulliLogistic", "FiniteLinear"])
def test_batched_run_equals_plain_loop(env):
    """Vector env + batched agent (all seeds in one object) gives the plain loop's numbers exactly."""
    names = ["LinUCB", "LinTS", "Lin-ES", "Linear-Ensemble++", "Random", "epsilon-greedy"]
    kwargs = dict(seeds=[0, 5, 9], horizon=120, log_every=7)
    plain = gym_ctxbandits.run(env, names, batch=1, **kwargs)
    batched = gym_ctxbandits.run(env, names, batch=2, **kwargs)   # a batch of 2 and one of 1
    cols = ["env", "agent", "seed", "round", "reward", "regret", "cum_reward", "cum_regret"]
    pd.testing.assert_frame_equal(plain[cols], batched[cols])
    assert (batched["act_seconds"] > 0).all()


def test_run_memory_does_not_grow_with_the_horizon():
    """The loop keeps the logged rows only (experiment.RunLog): 4x the rounds, logged at the same 40
    rounds, allocate no more (per-round arrays would take 16 bytes x 10 instances x 1,200 rounds more)."""
    import tracemalloc

    from gym_ctxbandits.experiment import make_jobs, run_batch

    def peak(T):
        tracemalloc.start()
        run_batch(make_jobs(["CtxBandit/BernoulliLogistic-v0"], ["Random"], 10, T, log_every=T // 40))
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        return peak

    peak(40)                                  # imports and caches first
    assert peak(1600) - peak(400) < 20_000


@pytest.mark.parametrize("T, n, every", [(1, 1, 1), (5, 3, 2), (1024, 2, 7), (1025, 1, 1), (2049, 3, 1000)])
def test_run_log_equals_cumsum_over_the_whole_run(T, n, every):
    """RunLog's logged rows, across its 1,024-round blocks, are np.cumsum of full per-round arrays, bit for bit."""
    from gym_ctxbandits.experiment import RunLog

    rng = np.random.default_rng(T)
    reward, regret = rng.standard_normal((T, n)).astype(np.float32), rng.random((T, n))
    act, obs = rng.random(T), rng.random(T)
    rounds = Job(EnvSpec(ENV), AgentSpec("Random"), 0, T, every).log_rounds()
    log = RunLog(rounds, n)
    for t in range(T):
        log.add(t, reward[t] if n > 1 else float(reward[t, 0]), regret[t], act[t], obs[t])
    rows = rounds - 1
    for got, full in [(log.reward, reward.astype(float)), (log.regret, regret), (log.cum_reward, np.cumsum(reward.astype(float), 0)),
                      (log.cum_regret, np.cumsum(regret, 0)), (log.act_seconds, np.cumsum(act)),
                      (log.observe_seconds, np.cumsum(obs))]:
        np.testing.assert_array_equal(got, full[rows])


@pytest.mark.slow
def test_s1_fig1_unit_stays_far_below_2_gb():
    """scripts/bench_memory.py on [S1] fig. 1's unit of 100 instances at n = 5,000 (docs/agents.md has
    n = 50,000): peak RSS under 2 GB, and RSS at the end within 100 MB of RSS when the rounds start."""
    script = Path(__file__).parents[1] / "scripts" / "bench_memory.py"
    proc = subprocess.run([sys.executable, str(script), "--horizon", "5000", "--agents", "GLM-TSL (a=1)"],
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    row = next(line for line in proc.stdout.splitlines() if line.startswith("| GLM-TSL (a=1) |"))
    peak, start, end = (float(c) for c in row.split("|")[2:5])
    assert peak < 2048 and end - start < 100, row


def test_run_is_importable_where_users_look_for_it():
    from gym_ctxbandits import compare, experiment

    assert gym_ctxbandits.run is compare.run
    with pytest.raises(AttributeError, match=r"experiment\.run was removed in 0\.4\.0 .* use gym_ctxbandits\.run"):
        experiment.run


def test_the_job_names_stay_importable_from_experiment():
    from gym_ctxbandits import experiment, jobs

    for name in ("AgentSpec", "EnvSpec", "Job", "COLUMNS", "seed_list", "make_jobs", "job_inputs", "env_spec",
                 "is_replay", "agent_seed", "import_agents"):
        assert getattr(experiment, name) is getattr(jobs, name)


def _children(parent: int) -> list[int]:
    """Pids whose parent is `parent` (Linux /proc)."""
    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == parent:
            out.append(int(stat.parent.name))
    return out


def _running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads the process table in /proc")
def test_killing_the_parent_of_a_processes_run_leaves_no_worker_behind(tmp_path):
    script = ("import os, sys, gym_ctxbandits\nprint(os.getpid(), flush=True)\n"
              "gym_ctxbandits.run('CtxBandit/Linear-v0', ['LinUCB', 'LinTS'], seeds=4, horizon=300_000, out=sys.argv[1],"
              " backend='processes', workers=2, batch=1)\n")
    proc = subprocess.Popen([sys.executable, "-c", script, str(tmp_path / "out")], stdout=subprocess.PIPE, text=True)
    try:
        parent = int(proc.stdout.readline())
        deadline = time.monotonic() + 60
        while len(_children(parent)) < 2 and time.monotonic() < deadline:
            time.sleep(0.2)
        workers = _children(parent)
        assert len(workers) >= 2, "the workers did not start"
    finally:
        proc.kill()
        proc.wait()
    deadline = time.monotonic() + 15
    while any(map(_running, workers)) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not any(map(_running, workers)), "workers outlived their killed parent"


def _alter(path: Path) -> None:
    """Change one reward in a result file but keep its metadata: a readable file with a wrong value."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    arrow = pq.read_table(path)
    table = arrow.to_pandas()
    table.loc[3, "reward"] += 1.0
    altered = pa.Table.from_pandas(table, preserve_index=False).replace_schema_metadata(arrow.schema.metadata)
    pq.write_table(altered, path)


@pytest.mark.parametrize("damage", ["altered", "truncated"])
def test_a_damaged_result_file_is_never_used(tmp_path, damage):
    from gym_ctxbandits.results import ResultCorrupt

    out = tmp_path / "r"
    good = gym_ctxbandits.run(ENV, ["LinUCB"], seeds=2, horizon=40, out=out)
    path = sorted(out.glob("*seed1*.parquet"))[0]
    if damage == "altered":
        _alter(path)
    else:
        path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    with pytest.raises(ResultCorrupt, match=path.name):
        load_results(out)                                       # plot and the summary refuse it, naming it
    with pytest.warns(UserWarning, match=path.name):
        again = gym_ctxbandits.run(ENV, ["LinUCB"], seeds=2, horizon=40, out=out)   # resume redoes that job
    cols = ["seed", "round", "reward", "cum_reward", "regret", "cum_regret"]
    pd.testing.assert_frame_equal(again[cols], good[cols])


def test_two_identical_runs_into_one_folder_share_the_jobs(tmp_path):
    """Each job has a claim, so two identical commands started together run every job once between
    them, and both end with the whole table. Each unit sleeps 0.5 s, so the nine jobs take over 4 s of
    wall time (little CPU) and the second process starts while the first holds its claims."""
    script = (
        "import sys, time, gym_ctxbandits\nfrom gym_ctxbandits import backends\n"
        "real = backends.run_unit\n"
        "def logged(unit, out, progress=None):\n"
        "    with open(sys.argv[2], 'a') as log:\n"
        "        log.writelines(job.filename + '\\n' for job in unit)\n"
        "    time.sleep(0.5)\n"
        "    return real(unit, out, progress)\n"
        "backends.run_unit = logged\n"
        "table = gym_ctxbandits.run('CtxBandit/Linear-v0', ['LinUCB', 'LinTS', 'Random'], seeds=3, horizon=1000,"
        " log_every=50, batch=1, out=sys.argv[1])\n"
        "print(len(table))\n")
    out = tmp_path / "shared"
    procs = [subprocess.Popen([sys.executable, "-c", script, str(out), str(tmp_path / f"log{i}")],
                              stdout=subprocess.PIPE, text=True) for i in range(2)]
    results = [p.communicate(timeout=300)[0] for p in procs]
    assert [p.returncode for p in procs] == [0, 0] and [r.split() for r in results] == [["180"], ["180"]]
    logs = [set((tmp_path / f"log{i}").read_text().split()) if (tmp_path / f"log{i}").exists() else set()
            for i in range(2)]
    assert not logs[0] & logs[1], "a job ran twice"
    assert len(logs[0] | logs[1]) == 9 and not list(out.glob(".*.claim"))


def test_array_kwargs_get_file_names_by_content():
    """str() of a large array abbreviates it: two datasets of one shape must not share result files."""
    from gym_ctxbandits.experiment import AgentSpec, EnvSpec, Job

    X1 = np.zeros((2000, 3))
    X2 = X1.copy()
    X2[1000, 1] = 1.0
    assert str(X1) == str(X2)
    y = np.arange(2000) % 3

    def job(X, y):
        return Job(EnvSpec("CtxBandit/Supervised-v0", {"X": X, "y": y}), AgentSpec("LinUCB", {}, ""), 0, 10)

    assert job(X1, y).filename != job(X2, y).filename
    assert job(X1, y).filename == job(X1.copy(), y.copy()).filename
    assert job(X1, y).env.title != job(X2, y).env.title
    assert re.fullmatch(r"CtxBandit/Supervised-v0\(X=<DataFrame 2000x3 sha256:\w{12}>, y=<Series 2000 sha256:\w{12}>\)",
                        job(pd.DataFrame(X1), pd.Series(y)).env.title)


def test_job_inputs_are_the_files_kwargs_name_by_content(tmp_path, monkeypatch):
    """A string kwarg naming a file puts the file's content hash in the job's identity; other strings
    (a preset, one too long to be a path) do not, and a job without inputs keeps its old name."""
    from gym_ctxbandits.experiment import job_inputs, make_jobs

    monkeypatch.setenv("CTXBANDITS_CACHE", str(tmp_path / "cache"))
    csv = tmp_path / "d.csv"
    csv.write_text("x,y\n1,0\n2,1\n")
    env = EnvSpec("CtxBandit/Supervised-v0", {"source": str(csv), "preset": "S0", "label": "y" * 5000})
    (path, digest), = job_inputs(env, AgentSpec("LinUCB"))
    assert path == str(csv.resolve()) and len(digest) == 16
    before = make_jobs([env], ["LinUCB"], 1, 10)[0]
    csv.write_text("x,y\n1,1\n2,0\n")
    after = make_jobs([env], ["LinUCB"], 1, 10)[0]
    assert after.inputs != before.inputs and after.filename != before.filename
    assert after.legacy_filename == before.legacy_filename == Job(env, AgentSpec("LinUCB"), 0, 10).filename
    assert make_jobs([ENV], ["LinUCB"], 1, 10)[0].inputs == ()


def test_an_env_registered_with_its_class_runs_in_the_plain_loop():
    """gym.register(entry_point=TheClass), as docs/extending.md shows: is_replay and job_inputs take it."""
    import gymnasium as gym

    from gym_ctxbandits.envs import LinearEnv
    from gym_ctxbandits.experiment import job_inputs

    gym.register("ClassEntry-v0", entry_point=LinearEnv, kwargs={"num_arms": 3, "dim": 2})
    try:
        assert len(run_job(Job(EnvSpec("ClassEntry-v0"), AgentSpec("LinUCB"), 0, 10))) == 10
        (what, _), = job_inputs(EnvSpec("ClassEntry-v0"), AgentSpec("LinUCB"))   # its registration's kwargs
        assert what == "registration of ClassEntry-v0"
    finally:
        del gym.registry["ClassEntry-v0"]
