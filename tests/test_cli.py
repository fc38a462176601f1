"""The `ctxbandits` command end to end: run, plot, list, bad input, and resuming after an interrupt."""

import os
import time

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


def test_errors_are_one_clear_line(tmp_path, capsys):
    assert main(["run", "--env", ENV, "--agents", "LinUCB", "--horizon", "10"]) == 2
    assert "give --out DIR" in capsys.readouterr().err
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
