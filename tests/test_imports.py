"""A user's own agents and envs on every path of the command (issue 20 item 2): `--import MODULE`
(and a config file's `imports`) before any name is looked up, in the parent and in the workers of
every backend, whatever the start method; `module:Id` env ids; `ctxbandits list`; one-line errors."""

import functools
import sys
from pathlib import Path

import gymnasium as gym
import pandas as pd
import pytest

import agents
from gym_ctxbandits import backends
from gym_ctxbandits.cli import main
from gym_ctxbandits.results import load_results

MODULE = "my_bandits"
SOURCE = (Path(__file__).parent / "user_module" / f"{MODULE}.py").read_text()   # a researcher's module
COLS = ["env", "agent", "seed", "round", "reward", "regret", "cum_regret"]


@pytest.fixture
def user_module(tmp_path, monkeypatch):
    """my_bandits.py written into the test's folder, which is the current one. Afterwards the
    module, its agent and its env are gone from this process's registries and sys.path is as it was."""
    (tmp_path / f"{MODULE}.py").write_text(SOURCE)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    registered, envs = dict(agents.REGISTRY), set(gym.registry)
    yield tmp_path
    for name, module in list(sys.modules.items()):
        if str(tmp_path) in str(getattr(module, "__file__", None)):
            del sys.modules[name]
    agents.REGISTRY.clear()
    agents.REGISTRY.update(registered)
    for env_id in set(gym.registry) - envs:
        del gym.registry[env_id]


def run(*flags: str, out: str = "r") -> pd.DataFrame:
    """The table of a tiny `ctxbandits run` of the user's agent and LinUCB into `out`."""
    argv = ["run", "--agents", "My-Greedy,LinUCB", "--seeds", "2", "--horizon", "30", "--log-every", "10",
            "--out", out, "--quiet", *flags]
    if "--env" not in flags and "--config" not in flags:
        argv += ["--env", "MyBandit-v0,CtxBandit/Linear-v0"]
    assert main(argv) == 0
    return load_results(out)


def test_run_imports_the_users_module(user_module):
    table = run("--import", MODULE)
    assert set(table.agent) == {"My-Greedy", "LinUCB"} and set(table.env) == {"MyBandit-v0", "CtxBandit/Linear-v0"}
    batch_of_one = run("--import", MODULE, "--batch", "1", out="plain")
    pd.testing.assert_frame_equal(table[COLS], batch_of_one[COLS])       # the batched user agent equals its plain loop


def test_a_py_file_path_imports_too(user_module, monkeypatch):
    (user_module / "sub").mkdir()
    monkeypatch.chdir(user_module / "sub")
    table = run("--import", f"../{MODULE}.py")
    assert "My-Greedy" in set(table.agent)


@pytest.mark.parametrize("start_method", [None, "spawn", "forkserver"])
def test_processes_workers_import_it_under_every_start_method(user_module, monkeypatch, start_method):
    """A spawned or forkserver worker starts without the parent's imports (a forked one inherits
    them); each gets the module and gives the in-process numbers."""
    inprocess = run("--import", MODULE, out="a")
    monkeypatch.setattr(backends, "run_processes", functools.partial(backends.run_processes,
                                                                     start_method=start_method))
    processes = run("--import", MODULE, "--backend", "processes", "--workers", "2", out="b")
    pd.testing.assert_frame_equal(inprocess[COLS], processes[COLS])


@pytest.mark.slow
def test_ray_workers_import_it(user_module):
    inprocess = run("--import", MODULE, out="a")
    on_ray = run("--import", MODULE, "--backend", "ray", out="b")
    pd.testing.assert_frame_equal(inprocess[COLS], on_ray[COLS])


def test_module_colon_id_env_ids_import_the_module(user_module, monkeypatch, capsys):
    """`my_bandits:MyBandit-v0` as gym.make takes it: checked, run here and in spawned workers, no --import."""
    monkeypatch.setattr(backends, "run_processes", functools.partial(backends.run_processes, start_method="spawn"))
    env = f"{MODULE}:MyBandit-v0"
    table = run("--env", env, "--agents", "LinUCB", "--backend", "processes", "--workers", "2")
    assert set(table.env) == {env}
    for bad, message in [(f"{MODULE}:MyBandt-v0", "Did you mean 'MyBandit-v0'"),
                         ("nowhere:MyBandit-v0", "env 'nowhere:MyBandit-v0': module nowhere: No module named 'nowhere' "
                          "(run from the folder that holds nowhere.py")]:
        assert main(["run", "--env", bad, "--agents", "LinUCB", "--out", "x", "--quiet"]) == 2
        err = capsys.readouterr().err
        assert message in err and err.count("\n") == 1, err
    assert not (user_module / "x").exists()


def test_config_imports_and_the_flag_extends_them(user_module, capsys):
    (user_module / "other.py").write_text('import agents\nfrom agents.linear import Random\n'
                                          'agents.register("Other-Random")(Random)\n')
    (user_module / "c.toml").write_text(f'imports = ["{MODULE}"]\nenvs = ["MyBandit-v0"]\n'
                                        'agents = ["My-Greedy", "Other-Random"]\n')
    assert main(["run", "--config", "c.toml", "--seeds", "2", "--horizon", "5", "--out", "r", "--quiet"]) == 2
    assert "unknown agent 'Other-Random'" in capsys.readouterr().err
    assert main(["run", "--config", "c.toml", "--import", "other", "--seeds", "2", "--horizon", "5", "--out", "r",
                 "--quiet"]) == 0
    assert set(load_results("r").agent) == {"My-Greedy", "Other-Random"}


def test_list_shows_the_users_agents_and_envs(user_module, capsys):
    assert main(["list"]) == 0
    assert "My-Greedy" not in capsys.readouterr().out
    assert main(["list", "--import", MODULE]) == 0
    printed = capsys.readouterr().out
    assert "  My-Greedy\n" in printed and "  MyBandit-v0: my_bandits:MyBandit; T=1000\n" in printed
    assert "CartPole" not in printed and "CtxBandit/Logistic-v0" in printed


def test_plot_takes_import(user_module, capsys):
    run("--import", MODULE)
    (user_module / "r" / "regret.png").unlink()
    assert main(["plot", "r", "--import", MODULE]) == 0
    assert (user_module / "r" / "regret.png").exists()


BAD = {  # --import ARGUMENT: (the source of the file it names, or None for no file; the error line)
    "nowhere": (None, "--import nowhere: No module named 'nowhere' (run from the folder that holds nowhere.py"),
    "raises": ("x = 1\nraise RuntimeError('no GPU here')\n",
               "--import raises: importing it raised RuntimeError: no GPU here ("),
    "needs": ("import not_installed_pkg\n", "--import needs: No module named 'not_installed_pkg', which the module "
              "imports (install it)"),
    "broken": ("def f(:\n", "--import broken: importing it raised SyntaxError"),
    "missing.py": (None, "--import missing.py: no such file"),
    "sub/agents.py": ("", "--import sub/agents.py: the module name 'agents' is already taken by"),
}


@pytest.mark.parametrize("name", BAD)
def test_a_module_that_fails_to_import_is_one_line_and_writes_nothing(user_module, capsys, name):
    source, message = BAD[name]
    if source is not None:
        path = user_module / (name if name.endswith(".py") else f"{name}.py")
        path.parent.mkdir(exist_ok=True)
        path.write_text(source)
    for command in (["run", "--env", "CtxBandit/Linear-v0", "--agents", "LinUCB", "--out", "r", "--quiet"],
                    ["list"]):
        assert main([*command, "--import", name]) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"ctxbandits: error: {message}") and err.count("\n") == 1, err
    assert not (user_module / "r").exists()


def test_unknown_names_after_the_import_keep_their_did_you_mean(user_module, capsys):
    base = ["run", "--import", MODULE, "--seeds", "1", "--horizon", "5", "--out", "r", "--quiet"]
    assert main([*base, "--env", "MyBandit-v0", "--agents", "My-Gredy"]) == 2
    assert "Did you mean 'My-Greedy'" in capsys.readouterr().err
    assert main([*base, "--env", "MyBandt-v0", "--agents", "LinUCB"]) == 2
    assert "Did you mean 'MyBandit-v0'" in capsys.readouterr().err
    assert not (user_module / "r").exists()
