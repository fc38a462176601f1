"""The `ctxbandits` command end to end: run, plot, list, bad input, and resuming after an interrupt."""

import json
import os
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from gym_ctxbandits.cli import main

ENV = "CtxBandit/Linear-v0"


def test_run_then_plot(tmp_path, capsys):
    out = tmp_path / "x"
    assert main(["run", "--env", ENV, "--env-kwargs", '{"dim": 5}', "--agents", "LinUCB,LinTS", "--seeds", "2",
                 "--horizon", "300", "--log-every", "10", "--out", str(out), "--quiet"]) == 0
    printed = capsys.readouterr().out
    assert "LinUCB" in printed and "final regret" in printed
    for name in ("regret.png", "regret.svg", "runtime.png", "runtime.svg", "manifest.json"):
        assert (out / name).stat().st_size > 0
    (out / "regret.png").unlink()
    assert main(["plot", str(out), "--band", "se"]) == 0
    assert (out / "regret.png").exists()


def test_list(capsys):
    assert main(["list"]) == 0
    printed = capsys.readouterr().out
    assert "CtxBandit/Logistic-v0" in printed and "LinUCB" in printed


def test_without_out_the_results_go_to_a_folder_named_after_the_env(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["run", "--env", ENV, "--agents", "Random", "--seeds", "1", "--horizon", "10", "--quiet"]) == 0
    name = ENV.rpartition("/")[2]
    assert f"the results go to results/{name}" in capsys.readouterr().err
    assert (tmp_path / "results" / name / "regret.png").exists()


def test_errors_are_one_clear_line(tmp_path, capsys):
    assert main(["run", "--agents", "LinUCB", "--out", str(tmp_path)]) == 2
    assert "give --config FILE, or both --env and --agents" in capsys.readouterr().err
    assert main(["run", "--env", ENV, "--agents", "LinUCB", "--env-kwargs", "{dim: 3}", "--out", str(tmp_path)]) == 2
    assert "--env-kwargs must be a JSON object" in capsys.readouterr().err
    assert main(["plot", str(tmp_path / "nothing")]) == 2
    assert "no manifest.json" in capsys.readouterr().err


def test_interrupted_run_resumes_without_recomputing(tmp_path, monkeypatch, capsys):
    """Ctrl-C in the middle of the 4th unit of work (a batch of 2 seeds): the 3 finished units'
    files stay, nothing half-written is left, and the rerun computes only the missing jobs."""
    from gym_ctxbandits import backends

    real, calls = backends.run_unit, []

    def interrupted(unit, out, progress=None):
        calls.append(len(unit))
        if len(calls) == 4:
            def ctrl_c(_):
                raise KeyboardInterrupt
            return real(unit, out, progress=ctrl_c)
        return real(unit, out, progress)

    out = tmp_path / "r"
    cmd = ["run", "--env", ENV, "--agents", "LinTS", "--seeds", "12", "--horizon", "400", "--log-every", "10",
           "--batch", "2", "--out", str(out), "--quiet"]
    monkeypatch.setattr(backends, "run_unit", interrupted)
    assert main(cmd) == 130                                      # Ctrl-C: one line saying how to resume
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "run the same command again to resume" in err
    done = {p: p.stat().st_mtime_ns for p in out.glob("*.parquet")}
    assert len(done) == 6 and not list(out.glob(".tmp-*"))
    monkeypatch.setattr(backends, "run_unit", real)
    time.sleep(0.01)
    assert main(cmd) == 0
    assert len(list(out.glob("*.parquet"))) == 12 and not list(out.glob(".tmp-*"))
    for p, stamp in done.items():
        assert p.stat().st_mtime_ns == stamp, f"{p.name} was recomputed"


def test_a_rejected_run_leaves_an_existing_results_folder_as_it_was(tmp_path, capsys):
    """Every input is checked before anything is written: a typo does not rewrite the manifest."""
    out = tmp_path / "good"
    assert main(["run", "--env", ENV, "--agents", "LinUCB,LinTS", "--seeds", "2", "--horizon", "30",
                 "--out", str(out), "--quiet"]) == 0
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    capsys.readouterr()
    bad_runs = {
        "LinTs": (["--agents", "LinUCB,LinTs"], "Did you mean 'LinTS'"),
        "seeds 0": (["--seeds", "0"], "seeds must be a count >= 1"),
        "env id": (["--env", "CtxBandit/Logistc-v0"], "Did you mean 'CtxBandit/Logistic-v0'"),
        "env kwarg": (["--env-kwargs", '{"dimm": 3}'], "takes no argument 'dimm'"),
        "agent kwarg": (["--agent-kwargs", '{"lamda": 2}'], "no hyper-parameter 'lamda'"),
        "workers": (["--workers", "0", "--backend", "processes"], "workers must be an integer >= 1"),
    }
    for what, (flags, message) in bad_runs.items():
        argv = ["run", "--env", ENV, "--agents", "LinUCB,LinTS", "--seeds", "2", "--horizon", "30",
                "--out", str(out), "--quiet"]
        for flag, value in zip(flags[::2], flags[1::2]):
            if flag in argv:
                argv[argv.index(flag) + 1] = value
            else:
                argv += [flag, value]
        assert main(argv) == 2, what
        err = capsys.readouterr().err
        assert message in err and err.count("\n") == 1, (what, err)
        assert {p.name: p.read_bytes() for p in out.iterdir()} == before, what
    assert main(["plot", str(out)]) == 0


def test_out_that_is_a_file_is_one_clear_error(tmp_path, capsys):
    target = tmp_path / "results.txt"
    target.write_text("not a folder")
    assert main(["run", "--env", ENV, "--agents", "LinUCB", "--seeds", "1", "--horizon", "5", "--out", str(target),
                 "--quiet"]) == 2
    assert "is a file" in capsys.readouterr().err and target.read_text() == "not a folder"


def test_result_files_have_the_manifests_permissions(tmp_path):
    out = tmp_path / "r"
    assert main(["run", "--env", ENV, "--agents", "LinUCB", "--seeds", "1", "--horizon", "5", "--out", str(out),
                 "--quiet"]) == 0
    modes = {p.name: p.stat().st_mode & 0o777 for p in out.iterdir()}
    parquet = [m for name, m in modes.items() if name.endswith(".parquet")]
    assert parquet and set(parquet) == {modes["manifest.json"]}, modes


@pytest.mark.skipif(__import__("multiprocessing").get_start_method() != "fork",
                    reason="the stand-in agent reaches the workers through a forked registry")
def test_a_killed_worker_is_one_line_naming_its_job(tmp_path, capsys, monkeypatch):
    """A worker that dies (killed, out of memory) is reported with the job it was running and how to resume."""
    import agents
    from agents.linear import Random

    parent = os.getpid()

    class Dies(Random):
        """Random, whose process dies at its first act in a worker (as under kill -9)."""

        def act(self, obs):
            if os.getpid() != parent:
                os._exit(9)
            return super().act(obs)

    monkeypatch.setitem(agents.REGISTRY, "Dies", Dies)      # the forked workers inherit the registry
    argv = ["run", "--env", ENV, "--agents", "Dies", "--seeds", "2", "--horizon", "20", "--batch", "1",
            "--backend", "processes", "--workers", "2", "--out", str(tmp_path / "r"), "--quiet"]
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "a worker process died" in err and "run the same command again" in err
    assert "Linear-v0__Dies__seed" in err


def test_another_top_level_agents_package_is_named_on_every_path(tmp_path):
    """With another project's `agents` first on the path (the OpenAI Agents SDK installs one), the
    envs still work and say so at import, and `ctxbandits list` is one clear line, not a traceback."""
    import subprocess
    import sys

    (tmp_path / "agents").mkdir()
    (tmp_path / "agents" / "__init__.py").write_text('"""Another project\'s agents."""\n')
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(tmp_path), os.environ.get("PYTHONPATH")]))}
    code = "import gymnasium as gym, gym_ctxbandits; gym.make('CtxBandit/Linear-v0').reset(seed=0)"
    envs = subprocess.run([sys.executable, "-c", code], env=env, cwd=tmp_path, capture_output=True, text=True)
    assert envs.returncode == 0 and "not gym-ctxbandits' agent zoo" in envs.stderr, envs.stderr[-2000:]
    listing = subprocess.run([sys.executable, "-m", "gym_ctxbandits.cli", "list"], env=env, cwd=tmp_path,
                             capture_output=True, text=True)
    assert listing.returncode == 2 and "ctxbandits: error:" in listing.stderr and "Traceback" not in listing.stderr


TINY = ["--env", ENV, "--env-kwargs", '{"num_arms": 3, "dim": 2}', "--agents", "LinUCB", "--horizon", "5", "--quiet"]


def seeds_run(out, seeds):
    """The result table of a tiny `ctxbandits run --seeds SEEDS` into `out`."""
    from gym_ctxbandits.results import load_results

    assert main(["run", *TINY, "--seeds", seeds, "--out", str(out)]) == 0
    return load_results(out)


@pytest.mark.parametrize("seeds,expected", [("3", [0, 1, 2]), ("1000:1003", [1000, 1001, 1002]),
                                            ("3,7,11", [3, 7, 11]), (" 12, 4 ", [4, 12]), ("7:8", [7])])
def test_seeds_forms_run_exactly_those_seeds(tmp_path, seeds, expected, capsys):
    table = seeds_run(tmp_path / "r", seeds)
    assert sorted(table.seed.unique()) == expected
    assert len(list((tmp_path / "r").glob("*.parquet"))) == len(expected)


def test_a_seed_has_the_same_numbers_in_a_range_a_list_and_a_count(tmp_path, capsys):
    """Seed 1001's numbers depend on the seed only, not on the form or the other seeds; `--seeds 3`
    is the API's seeds=3 (0, 1, 2), as before."""
    import gym_ctxbandits

    cols = ["round", "reward", "regret", "cum_regret"]
    ranged = seeds_run(tmp_path / "range", "1000:1003")
    listed = seeds_run(tmp_path / "list", "5,1001")
    pick = [t[t.seed == 1001][cols].reset_index(drop=True) for t in (ranged, listed)]
    assert len(pick[0]) == 5
    pd.testing.assert_frame_equal(*pick)
    count = seeds_run(tmp_path / "count", "3")
    api = gym_ctxbandits.run(gym_ctxbandits.EnvSpec(ENV, {"num_arms": 3, "dim": 2}), "LinUCB", seeds=3, horizon=5)
    pd.testing.assert_frame_equal(count.sort_values(["seed", "round"])[["seed", *cols]].reset_index(drop=True),
                                  api.sort_values(["seed", "round"])[["seed", *cols]].reset_index(drop=True))


@pytest.mark.parametrize("line,expected", [('seeds = "1000:1002"', [1000, 1001]), ('seeds = "3,7,11"', [3, 7, 11]),
                                           ("seeds = [4, 2]", [2, 4]), ("seeds = 2", [0, 1])])
def test_config_file_seeds_forms(tmp_path, line, expected, capsys):
    from gym_ctxbandits.results import load_results

    config = tmp_path / "c.toml"
    config.write_text(f'{line}\nhorizon = 5\nenvs = [{{id = "{ENV}", kwargs = {{num_arms = 3, dim = 2}}}}]\n'
                      f'agents = ["Random"]\nout = "{tmp_path / "r"}"\n')
    assert main(["run", "--config", str(config), "--quiet"]) == 0
    assert sorted(load_results(tmp_path / "r").seed.unique()) == expected
    assert main(["run", "--config", str(config), "--seeds", "20:21", "--out", str(tmp_path / "s"), "--quiet"]) == 0
    assert sorted(load_results(tmp_path / "s").seed.unique()) == [20]     # the flag overrides the file


BAD_SEEDS = {"0": "must be a count >= 1", "-3": "must be a count >= 1", "5:5": "is an empty range",
             "10:2": "is an empty range", "a:b": "is not a range A:B", "1:2:3": "is not a range A:B",
             "1,1": "repeats seed 1", "3,x": "is not a list of integers", "1.5": "got '1.5'", "": "got ''"}


def test_bad_seeds_are_one_line_and_leave_the_results_folder_as_it_was(tmp_path, capsys):
    out = tmp_path / "good"
    seeds_run(out, "2")
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    capsys.readouterr()
    for seeds, message in BAD_SEEDS.items():
        assert main(["run", *TINY, f"--seeds={seeds}", "--out", str(out)]) == 2, seeds
        err = capsys.readouterr().err
        assert err.startswith("ctxbandits: error: --seeds") and message in err and err.count("\n") == 1, (seeds, err)
        assert "1000:1010" in err and "3,7,11" in err                        # the line says what to give
        assert {p.name: p.read_bytes() for p in out.iterdir()} == before, seeds
    assert main(["run", *TINY, "--seeds", "0", "--out", str(tmp_path / "new")]) == 2
    assert not (tmp_path / "new").exists()


def test_out_under_a_file_is_one_clear_error(tmp_path, capsys):
    target = tmp_path / "results.txt"
    target.write_text("not a folder")
    assert main(["run", *TINY, "--seeds", "1", "--out", str(target / "sub")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{str(target)!r} is a file" in err and target.read_text() == "not a folder"


@pytest.mark.parametrize("text,problem", [('{"files": [}', "is not valid JSON"), ('{"config": {}}', "has no list of result"),
                                          ('{"files": "a.parquet"}', "has no list of result"), ("[1, 2]", "is not a JSON object"),
                                          ('{"files": []}', "lists no result files")])
def test_plot_of_a_damaged_manifest_names_it_and_the_way_back(tmp_path, capsys, text, problem):
    (tmp_path / "manifest.json").write_text(text)
    assert main(["plot", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{tmp_path / 'manifest.json'} {problem}" in err, err
    assert "`ctxbandits run` command into this folder again" in err and "reuses the finished jobs" in err


def test_agents_take_their_own_hyperparameters(tmp_path, capsys):
    """`--agents "LinUCB(alpha=0.5),LinUCB(alpha=2)"`: two jobs per seed with their own kwargs and labels;
    --agent-kwargs goes to both, an agent's own value wins."""
    from gym_ctxbandits.results import load_results

    out = tmp_path / "r"
    assert main(["run", *TINY, "--agents", "LinUCB(alpha=0.5),LinUCB( alpha = 2.0 ),LinUCB", "--agent-kwargs",
                 '{"alpha": 7}', "--seeds", "1", "--horizon", "60", "--out", str(out)]) == 0
    table = load_results(out)
    kwargs = table.groupby("agent", sort=False)["agent_kwargs"].first().to_dict()
    assert kwargs == {"LinUCB(alpha=0.5)": '{"alpha": 0.5}', "LinUCB(alpha=2.0)": '{"alpha": 2.0}', "LinUCB": '{"alpha": 7}'}
    assert len(list(out.glob("*.parquet"))) == 3
    final = table.groupby("agent")["cum_regret"].last()
    assert final["LinUCB(alpha=0.5)"] != final["LinUCB(alpha=2.0)"]
    assert "| LinUCB(alpha=0.5) |" in capsys.readouterr().out


def test_agent_spec_reads_literals_only():
    from gym_ctxbandits import config as cfg
    from gym_ctxbandits.cli import agent_spec, split_list

    assert split_list("A(x=1, y=(2, 3)),B, C(s='a,b)')", "--agents") == ["A(x=1, y=(2, 3))", "B", "C(s='a,b)')"]
    spec = agent_spec("SW-LinUCB(window=50, name='w,1', on=True)", {"lam": 1})
    assert (spec.name, spec.kwargs) == ("SW-LinUCB", {"lam": 1, "window": 50, "name": "w,1", "on": True})
    assert spec.title == "SW-LinUCB(window=50, name='w,1', on=True)"
    assert agent_spec("LinTS()", {}).title == "LinTS"
    for bad in ("LinUCB(0.5)", "LinUCB(alpha=__import__('os').getpid())", "LinUCB(alpha=", "(alpha=1)",
                "LinUCB(**d)", "LinUCB(alpha=1)x"):
        with pytest.raises(cfg.ConfigError, match="--agents item"):
            agent_spec(bad, {})
    with pytest.raises(cfg.ConfigError, match="unbalanced"):
        split_list("LinUCB(alpha=1,LinTS", "--agents")


def test_agent_kwargs_that_one_agent_lacks_say_they_go_to_every_agent(tmp_path, capsys):
    assert main(["run", *TINY, "--agents", "LinUCB,Random", "--agent-kwargs", '{"alpha": 0.5}', "--seeds", "1",
                 "--out", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--agent-kwargs applies to every agent, and 'Random' has no" in err
    assert '--agents "LinUCB(alpha=0.5),LinTS"' in err and not (tmp_path / "r").exists()


def test_every_run_says_what_it_reused_and_rerun_recomputes(tmp_path, capsys):
    out = tmp_path / "r"
    cmd = ["run", *TINY, "--agents", "LinUCB,Random", "--seeds", "2", "--out", str(out)]
    assert main(cmd) == 0
    assert "4 jobs run, 0 finished ones reused" in capsys.readouterr().out
    stamps = {p: p.stat().st_mtime_ns for p in out.glob("*.parquet")}
    assert main(cmd) == 0
    assert "0 jobs run, 4 finished ones reused, --rerun runs them again" in capsys.readouterr().out
    assert {p: p.stat().st_mtime_ns for p in out.glob("*.parquet")} == stamps
    time.sleep(0.01)
    assert main([*cmd, "--rerun"]) == 0
    assert "4 jobs run, 0 finished ones reused" in capsys.readouterr().out
    assert all(p.stat().st_mtime_ns != stamp for p, stamp in stamps.items())


def supervised_run(csv, out, *flags):
    """The final regret per seed of LinUCB on Supervised-v0 read from `csv`, run into `out`."""
    from gym_ctxbandits.results import load_results

    assert main(["run", "--env", "CtxBandit/Supervised-v0", "--env-kwargs", json.dumps({"source": str(csv),
                 "label": "y"}), "--agents", "LinUCB", "--seeds", "2", "--horizon", "40", "--out", str(out), "--quiet",
                 *flags]) == 0
    return load_results(out).groupby("seed")["cum_regret"].last().tolist()


def test_an_edited_data_file_is_run_again_and_its_old_content_reused(tmp_path, capsys):
    """The result of a `source=` env is named by the file's content: edit the CSV and the rerun computes
    (with the new data's numbers); put the old content back and the first results are reused."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 2))
    data = {"a": pd.DataFrame({"x1": X[:, 0], "x2": X[:, 1], "y": (X[:, 0] > 0).astype(int)}),
            "b": pd.DataFrame({"x1": X[:, 0], "x2": X[:, 1], "y": (X[:, 1] > 0).astype(int)})}
    csv, out = tmp_path / "data.csv", tmp_path / "r"
    data["a"].to_csv(csv, index=False)
    first = supervised_run(csv, out)
    assert "2 jobs run, 0 finished" in capsys.readouterr().out
    data["b"].to_csv(csv, index=False)
    edited = supervised_run(csv, out)
    assert "2 jobs run, 0 finished" in capsys.readouterr().out and edited != first
    assert edited == supervised_run(csv, tmp_path / "fresh")      # the numbers of the new data
    capsys.readouterr()
    data["a"].to_csv(csv, index=False)
    assert supervised_run(csv, out) == first
    assert "0 jobs run, 2 finished ones reused" in capsys.readouterr().out
    inputs = json.loads((out / "manifest.json").read_text())["inputs"]
    assert all(list(i) == [str(csv.resolve())] for i in inputs.values()) and len(inputs) == 2


@pytest.fixture
def stale_module(tmp_path, monkeypatch):
    """A user's module with an agent, in the test's folder (the current one); afterwards its agent and
    the module are gone from this process."""
    import sys

    import agents

    (tmp_path / "stale_agents.py").write_text(
        "import agents\nfrom agents.linear import Random\n\n\n@agents.register('Stale-Random')\nclass StaleRandom(Random):\n"
        "    '''Random, by another name.'''\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    registered = dict(agents.REGISTRY)
    yield tmp_path / "stale_agents.py"
    sys.modules.pop("stale_agents", None)
    agents.REGISTRY.clear()
    agents.REGISTRY.update(registered)


def test_an_edited_user_module_is_run_again(stale_module, capsys):
    """Only the jobs of the user's agent: LinUCB's files do not depend on the module."""
    cmd = ["run", *TINY, "--import", "stale_agents.py", "--agents", "Stale-Random,LinUCB", "--seeds", "2",
           "--out", "r"]
    assert main(cmd) == 0
    capsys.readouterr()
    stale_module.write_text(stale_module.read_text() + "\n# edited\n")
    assert main(cmd) == 0
    assert "2 jobs run, 2 finished ones reused" in capsys.readouterr().out
    assert len(list(Path("r").glob("Linear-v0__Stale-Random__*.parquet"))) == 4    # the old ones are kept


def test_a_folder_of_an_older_version_resumes_and_reruns_only_what_it_cannot_vouch_for(tmp_path, capsys):
    """A folder whose files have the names of before inputs were recorded (as an older gym-ctxbandits
    wrote them): the jobs without data files or user code resume, those with a `source=` file are run
    again, with a warning that says why."""
    from gym_ctxbandits.experiment import AgentSpec, EnvSpec, Job, job_inputs

    plain = Job(EnvSpec(ENV, {"num_arms": 3, "dim": 2}), AgentSpec("LinUCB"), 0, 5)
    assert plain.filename == "Linear-v0__LinUCB__seed0__d2bb6a2794.parquet"     # the name it always had
    csv, out = tmp_path / "data.csv", tmp_path / "r"
    pd.DataFrame({"x": np.arange(20.0), "y": np.arange(20) % 2}).to_csv(csv, index=False)
    config = tmp_path / "c.toml"
    config.write_text(f'horizon = 5\nseeds = 1\nagents = ["LinUCB"]\nout = "{out}"\nenvs = [{{id = "{ENV}", kwargs = '
                      f'{{num_arms = 3, dim = 2}}}}, {{id = "CtxBandit/Supervised-v0", kwargs = {{source = "{csv}", '
                      'label = "y"}}]\n')
    assert main(["run", "--config", str(config), "--quiet"]) == 0
    data_job = Job(EnvSpec("CtxBandit/Supervised-v0", {"source": str(csv), "label": "y"}), AgentSpec("LinUCB"), 0, 5)
    data_job = Job(data_job.env, data_job.agent, 0, 5, inputs=job_inputs(data_job.env, data_job.agent))
    (out / data_job.filename).rename(out / data_job.legacy_filename)           # as an older version named it
    stamp = (out / plain.filename).stat().st_mtime_ns
    capsys.readouterr()
    with pytest.warns(UserWarning, match="1 of 2 jobs .* written by an older gym-ctxbandits, which did not record"):
        assert main(["run", "--config", str(config), "--quiet"]) == 0
    assert "1 jobs run, 1 finished ones reused" in capsys.readouterr().out
    assert (out / plain.filename).stat().st_mtime_ns == stamp and (out / data_job.filename).exists()


def test_plot_leaves_agents_out_and_draws_a_log_scale(tmp_path, capsys, monkeypatch):
    """`run` and `plot` take --log and --exclude: the figures leave the agent out, the summary keeps it."""
    from gym_ctxbandits import plots

    drawn, real = {}, plots._save

    def save(fig, where, stem):
        ax = fig.axes[0]
        labels = ax.get_legend().get_texts() if stem == "regret" else ax.get_xticklabels()
        drawn[stem] = (ax.get_yscale(), [t.get_text() for t in labels])
        return real(fig, where, stem)

    monkeypatch.setattr(plots, "_save", save)
    out = tmp_path / "r"
    assert main(["run", *TINY, "--agents", "LinUCB,Random", "--seeds", "2", "--horizon", "30", "--out", str(out),
                 "--log", "--exclude", "Random"]) == 0
    assert drawn == {"regret": ("log", ["LinUCB (n=2)"]), "runtime": ("linear", ["LinUCB"])}
    assert "| Random |" in capsys.readouterr().out
    assert main(["plot", str(out)]) == 0
    assert drawn["regret"] == ("linear", ["Random, baseline (n=2)", "LinUCB (n=2)"])
    assert main(["plot", str(out), "--exclude", "Randm"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--exclude Randm: no such agent in the results; its agents are LinUCB, Random" in err
