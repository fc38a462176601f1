"""Every paper-experiment script runs end to end in its --quick mode (small T, 2 seeds); bad input to
the scripts (an unreachable --address, a missing dataset or prior file) is one error line."""

import re
import runpy
import socket
import subprocess
import sys
import types
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1] / "scripts"
SCRIPTS = sorted(p for p in ROOT.glob("s[0-9]_*.py")) + [ROOT / "real_data_linear.py"]
# The default suite runs every script at T = 20 (every panel, env and agent of the script, a few
# rounds: what a smoke run is for; at --quick's T = 100 the nine scripts took 390 s of the suite under
# load, s2_figs alone 100 s); `-m slow` runs them at --quick's own T = 100 as well.
SHORT_HORIZON = 20


def test_every_paper_experiment_has_a_script():
    assert {p.name.split("_")[0] for p in SCRIPTS} >= {"s0", "s1", "s3", "s4"}


def run_quick(script, tmp_path, run_script, capsys, horizon=None):
    """Run `script --quick` (at `horizon` rounds if given) and check its panels, figures and tables.

    The script runs in this process (`run_script`, tests/conftest.py), as `python script ...` runs
    it. test_envs_option_runs_only_the_matching_envs runs a script as a command."""
    argv = ["--quick", "--quiet", "--backend", "inprocess", "--out", str(tmp_path), "--figures", str(tmp_path / "figures")]
    if horizon:
        argv += ["--horizon", str(horizon)]
    code = run_script(script, *argv)
    out, err = capsys.readouterr()
    if code and "DatasetNotFound" in err:
        line = next(x for x in err.splitlines() if "DatasetNotFound" in x)
        pytest.skip(f"real data not present: {line[:300]}")
    assert code == 0, err[-3000:]
    panels = [p for p in tmp_path.iterdir() if p.is_dir() and p.name != "figures"]
    assert panels
    for panel in panels:
        assert (panel / "regret.png").stat().st_size > 1000 and (panel / "runtime.svg").exists()
        table = (panel / "summary.md").read_text()
        assert table.count("\n") >= 3 and "nan ±" not in table
        if horizon:
            assert f"| {horizon} |" in table
        assert (tmp_path / "figures" / f"{script.stem}_{panel.name}.png").exists()
    assert "final regret" in out


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.stem)
def test_quick_mode_runs(script, tmp_path, run_script, capsys):
    run_quick(script, tmp_path, run_script, capsys, SHORT_HORIZON)


@pytest.mark.slow
@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.stem)
def test_quick_mode_runs_at_the_quick_horizon(script, tmp_path, run_script, capsys):
    run_quick(script, tmp_path, run_script, capsys)


def test_envs_option_runs_only_the_matching_envs(tmp_path):
    script = ROOT / "s1_fig1.py"
    proc = subprocess.run([sys.executable, str(script), "--quick", "--quiet", "--backend", "inprocess",
                           "--envs", "dim=20", "--seeds", "1", "--horizon", "30", "--out", str(tmp_path)],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert len(list((tmp_path / "fig1").glob("*.parquet"))) == 8  # 8 agents x 1 env x 1 seed
    table = (tmp_path / "fig1" / "summary.md").read_text()
    assert '{"dim": 20}' in table and '{"dim": 5}' not in table and '{"dim": 10}' not in table


def test_envs_option_that_matches_nothing_names_the_envs(tmp_path):
    proc = subprocess.run([sys.executable, str(ROOT / "s1_fig1.py"), "--quick", "--envs", "dim=7",
                           "--out", str(tmp_path)], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 2
    assert "matches none" in proc.stderr and "dim=20" in proc.stderr


def test_seeds_option_takes_a_count_a_range_or_a_list(tmp_path, monkeypatch, capsys):
    """The paper scripts' --seeds is `ctxbandits run`'s: N (0..N-1), A:B or 3,7,11; a bad value is
    one line and exit code 2 before anything is written; no --seeds is the panel's count."""
    monkeypatch.syspath_prepend(str(ROOT))
    from _paper import A, E, Panel, main

    from gym_ctxbandits.results import load_results

    panels = [Panel("p", [E("CtxBandit/Linear-v0", num_arms=3, dim=2)], [A("Random")], horizon=5, seeds=3)]
    common = ["--backend", "inprocess", "--quiet", "--horizon", "5"]
    for seeds, expected in [(None, [0, 1, 2]), ("1000:1002", [1000, 1001]), ("3,7", [3, 7])]:
        out = tmp_path / str(seeds)
        main("s9_test", panels, "", [*common, "--out", str(out)] + (["--seeds", seeds] if seeds else []))
        assert sorted(load_results(out / "p").seed.unique()) == expected, seeds
        assert f"{len(expected)} seeds" in capsys.readouterr().out
    for bad in ["0", "5:5", "1,1", "1.5"]:
        with pytest.raises(SystemExit) as stop:
            main("s9_test", panels, "", [*common, f"--seeds={bad}", "--out", str(tmp_path / "bad")])
        err = capsys.readouterr().err
        assert stop.value.code == 2 and err.count("\n") == 1 and "error: --seeds" in err, (bad, err)
    assert not (tmp_path / "bad").exists()


def test_sanity_report_quick(tmp_path):
    """scripts/sanity.py at small size: each agent next to Random at its home env, a ratio per seed
    set, a verdict, and the document; every registered agent has a home."""
    sys.path.insert(0, str(ROOT))
    try:
        import sanity
    finally:
        sys.path.remove(str(ROOT))
    import agents

    assert set(sanity.HOMES) == set(agents.REGISTRY) - {"Random"}
    doc = tmp_path / "sanity.md"
    code = sanity.main(["--quick", "--agents", "LinTS,GLM-TSL,OAM", "--fresh-seeds", "5:7", "--workers", "1",
                        "--out", str(tmp_path / "out"), "--markdown", str(doc)])
    text = doc.read_text()
    rows = [line for line in text.splitlines() if line.startswith("| ") and "[S" in line]
    assert [r.split(" | ")[0] for r in rows] == ["| LinTS", "| GLM-TSL", "| OAM"]
    assert "seeds 0-1" in text and "seeds 5-6" in text and "python scripts/sanity.py --quick" in text
    assert code == (1 if "FAILS" in text else 0)


def test_sanity_report_adds_agents_rows_to_an_existing_page(tmp_path, monkeypatch):
    """--agents with --markdown on an existing report adds (or replaces) just those agents' rows, in
    name order, and lists the command under the page's; other seed sets than the page's are refused
    before anything runs."""
    monkeypatch.syspath_prepend(str(ROOT))
    import sanity

    doc, common = tmp_path / "sanity.md", ["--quick", "--fresh-seeds", "5:7", "--workers", "1", "--out", str(tmp_path)]
    sanity.main(["--agents", "Softmax,OAM", *common, "--markdown", str(doc)])
    first = [line for line in doc.read_text().splitlines() if line.startswith("| ") and "[S" in line]
    sanity.main(["--agents", "LinTS", *common, "--markdown", str(doc)])
    text = doc.read_text()
    rows = [line for line in text.splitlines() if line.startswith("| ") and "[S" in line]
    assert [r.split(" | ")[0] for r in rows] == ["| LinTS", "| OAM", "| Softmax"] and rows[1:] == first[::-1]
    block = re.search(r"```bash\n(.*?)\n```", text, re.S).group(1).splitlines()
    assert [c.split("--agents ")[1].split()[0] for c in block] == ["Softmax,OAM", "LinTS"]
    assert "each further one, run on\nsome agents, added (or replaced) their rows" in text
    with pytest.raises(SystemExit, match="no sanity table with the columns of these seeds"):
        sanity.main(["--agents", "LinTS", "--quick", "--fresh-seeds", "9:11", "--out", str(tmp_path / "no"),
                     "--markdown", str(doc)])
    assert not (tmp_path / "no").exists()


def test_the_sanity_page_has_every_registered_agent():
    """docs/sanity.md lists every registered agent but Random (BaSE, OTFLinUCB and OTFLinTS were
    once missing): a new agent gets its row (`scripts/sanity.py --agents NAME ... --markdown docs/sanity.md`)."""
    import agents

    text = (ROOT.parent / "docs" / "sanity.md").read_text()
    rows = [line for line in text.splitlines() if line.startswith("| ") and not line.startswith("| agent |")]
    listed = {line.split(" | ")[0][2:] for line in rows}
    assert listed == set(agents.REGISTRY) - {"Random"}


@pytest.mark.parametrize("argv, message", [(["--agents", "LinUBC"], "unknown agent 'LinUBC'. Did you mean 'LinUCB'"),
                                           (["--seeds", "5:5"], "--seeds")])
def test_sanity_report_bad_input_is_one_line(argv, message, tmp_path):
    proc = subprocess.run([sys.executable, str(ROOT / "sanity.py"), *argv, "--out", str(tmp_path)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0 and message in proc.stderr and len(proc.stderr.strip().splitlines()) == 1, proc.stderr


def paper_main(argv, tmp_path, monkeypatch, envs=("CtxBandit/Linear-v0",), agent="Random"):
    """scripts/_paper.main on a one-panel figure of `envs` x `agent`, run in this process; its exit code."""
    monkeypatch.syspath_prepend(str(ROOT))
    monkeypatch.chdir(tmp_path)
    import _paper

    panel = _paper.Panel("p", [_paper.E(e) for e in envs], [_paper.A(agent)], horizon=10, seeds=1)
    try:
        _paper.main("demo", [panel], "a test figure", argv=argv)
    except SystemExit as stop:
        return stop.code
    return 0


def test_dry_run_checks_and_runs_nothing(tmp_path, monkeypatch, capsys):
    assert paper_main(["--dry-run", "--out", "out"], tmp_path, monkeypatch) == 0
    assert "demo p: 1 envs x 1 agents x 1 seeds, T=10" in capsys.readouterr().out
    assert not (tmp_path / "out").exists()
    assert paper_main(["--dry-run"], tmp_path, monkeypatch, agent="NoSuchAgent") != 0


def test_device_is_checked_before_any_panel(tmp_path, monkeypatch, capsys):
    """--device of `ctxbandits run`: a device this machine lacks is one line, and nothing runs."""
    torch = pytest.importorskip("torch")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert paper_main(["--device", "cuda", "--out", "out"], tmp_path, monkeypatch, agent="NeuralTS") == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.endswith(": error: --device cuda: CUDA is not available on this machine "
                                                 "(torch.cuda.is_available() is False); use --device cpu\n")
    assert not (tmp_path / "out").exists()


def test_quick_refuses_the_published_figures(tmp_path, monkeypatch, capsys):
    """A smoke run's figures must not replace docs/figures' (one line, exit 2, nothing run)."""
    figures = str(ROOT.parent / "docs" / "figures")
    assert paper_main(["--quick", "--figures", figures, "--out", "out"], tmp_path, monkeypatch) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "docs/figures" in err and not (tmp_path / "out").exists()


def test_a_missing_dataset_is_one_error_not_a_traceback(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("CTXBANDITS_DATA", str(tmp_path / "empty"))
    code = paper_main(["--quick", "--backend", "inprocess", "--quiet", "--out", "out"], tmp_path, monkeypatch,
                      envs=("CtxBandit/Phoneme-v0",))
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("demo: error: DatasetNotFound: phoneme:") and "Traceback" not in err


def refused_port() -> int:
    """A port of this machine where nothing listens: bound and closed again (connecting is refused)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("address", ["127.0.0.1:{port}", "ray://127.0.0.1:{port}"])
def test_an_unreachable_address_is_one_line_as_the_cli_says_it(address, tmp_path, monkeypatch, capsys):
    """The paper scripts run a panel as `ctxbandits run` does, and end as it does: ClusterError's line, exit 1."""
    fake = types.ModuleType("ray")                  # Ray is not reached: nothing answers at the address
    fake.is_initialized = lambda: False
    monkeypatch.setitem(sys.modules, "ray", fake)
    monkeypatch.setitem(sys.modules, "grpc", types.ModuleType("grpc"))
    address = address.format(port=refused_port())
    assert paper_main(["--backend", "ray", "--address", address, "--quiet", "--out", "out"], tmp_path, monkeypatch) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"demo: error: --address {address}: nothing answers at 127.0.0.1:")
    assert "Traceback" not in err


@pytest.mark.parametrize("argv, message", [
    (["--address", "http://127.0.0.1:8265"], "that is a dashboard's (Ray Jobs') address, for `ray job submit"),
    (["--address", "head"], "--address head: not an address"),
    (["--cpus-per-unit", "0"], "ray cpus_per_unit must be a number > 0 (--cpus-per-unit)")])
def test_bad_ray_options_are_one_line_before_any_panel(argv, message, tmp_path, monkeypatch, capsys):
    assert paper_main(["--backend", "ray", *argv, "--out", "out"], tmp_path, monkeypatch) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err and not (tmp_path / "out").exists()


def test_ctrl_c_says_how_to_resume(tmp_path, monkeypatch, capsys):
    monkeypatch.syspath_prepend(str(ROOT))
    import _paper

    def interrupted(*args):
        raise KeyboardInterrupt
    monkeypatch.setattr(_paper, "run_comparison", interrupted)
    assert paper_main(["--out", "out"], tmp_path, monkeypatch) == 130
    assert "demo: interrupted; the finished jobs' files are kept: run the same command again" in capsys.readouterr().err


@pytest.mark.parametrize("address, code, message", [("127.0.0.1:{port}", 1, "nothing answers at 127.0.0.1:"),
                                                     ("http://127.0.0.1:8265", 2, "that is a dashboard's")])
def test_bench_backends_bad_address_is_one_line_before_it_runs(address, code, message, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "ray", types.ModuleType("ray"))   # never reached
    address = address.format(port=refused_port())
    monkeypatch.setattr(sys, "argv", ["bench_backends.py", "--address", address])
    with pytest.raises(SystemExit) as stop:
        runpy.run_path(str(ROOT / "bench_backends.py"), run_name="__main__")
    err = capsys.readouterr().err
    assert stop.value.code == code and err.count("\n") == 1
    assert err.startswith(f"bench_backends.py: error: --address {address}: {message}")


def script_main(name: str, argv: list[str], monkeypatch):
    """scripts/`name`.main(argv) in this process; its exit code."""
    monkeypatch.syspath_prepend(str(ROOT))
    module = __import__(name)
    try:
        return module.main(argv)
    except SystemExit as stop:
        return stop.code


@pytest.mark.parametrize("content, message", [
    (None, "no such file; give OBP's prior_bts.yaml, or the obp wheel that holds it (pip download obp==0.4.1"),
    ("all: [1, 2", "not a wheel or a yaml file (ParserError); give OBP's prior_bts.yaml"),
    ("men:\n  alpha: [1]\n  beta: [2]\n", "no numeric alpha and beta lists under campaign 'all'; give OBP's")])
def test_ope_obd_bad_prior_file_is_one_line_before_the_logs_load(content, message, tmp_path, monkeypatch, capsys):
    prior = tmp_path / "prior.yaml"
    if content is not None:
        prior.write_text(content)
    monkeypatch.setenv("CTXBANDITS_DATA", str(tmp_path / "empty"))    # no logs either: the prior is checked first
    assert script_main("ope_obd", ["--bts-prior", str(prior)], monkeypatch) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"ope_obd.py: error: --bts-prior {prior}: {message}") and err.count("\n") == 1


def test_ope_obd_and_bench_gpt_without_their_data_are_one_error(tmp_path, monkeypatch, capsys):
    """The loader's DatasetNotFound (the files needed and where to put them), not a traceback."""
    monkeypatch.setenv("CTXBANDITS_DATA", str(tmp_path / "empty"))
    assert script_main("ope_obd", [], monkeypatch) == 2
    err = capsys.readouterr().err
    assert err.startswith("ope_obd.py: error: DatasetNotFound: open-bandit:") and "Traceback" not in err
    pytest.importorskip("torch")
    assert script_main("bench_gpt", ["--quick"], monkeypatch) == 2
    err = capsys.readouterr().err
    assert err.startswith("bench_gpt.py: error: DatasetNotFound: davidson:") and "labeled_data.csv" in err


def test_linear_ceiling_is_zero_when_well_specified_and_high_on_h3(monkeypatch):
    """sanity.linear_ceiling: the best linear-logit policy is exact on a logistic bandit, near Random on h3."""
    monkeypatch.syspath_prepend(str(ROOT))
    import sanity

    assert sanity.linear_ceiling("CtxBandit/BernoulliLogistic-v0", [0], 200) < 0.01
    assert sanity.linear_ceiling("CtxBandit/NeuralLogisticH3-v0", [0, 1], 500) > 0.8


# --- the delayed-feedback reproductions (scripts/_delayed.py: one comparison per feedback model) -----

DELAYED = {"c11_table1": ["| 1 |", "| 1000 |", "| 24,145 |"],
           "v20_linear_delays": ["| no delay |", "| geometric:1000, m=500 |"],
           "delay_regret": ["| LinUCB | 400 |", "| LinTS | 100 |", "D = 30"],
           "batches": ["| 2 |", "| 6 |", "| online | — | — |", "| gamma 1, gap 0.2 | worst gap |", "UCB online: gap 0.05"]}


@pytest.mark.parametrize("name", DELAYED)
def test_delayed_reproduction_quick(name, tmp_path, monkeypatch, capsys):
    """Each delayed-feedback script's --quick run: its table, every row of its axis, finite numbers,
    written to <out>/<script>.md with the run's size and time."""
    argv = ["--quick", "--quiet", "--backend", "inprocess", "--out", str(tmp_path)]
    assert script_main(name, argv + (["--figures", str(tmp_path / "fig")] if name == "batches" else []),
                       monkeypatch) is None
    text = (tmp_path / f"{name}.md").read_text()
    assert text in capsys.readouterr().out
    assert "2 seeds" in text and "CPU-s" in text and "nan" not in text
    assert all(row in text for row in DELAYED[name]), text
    if name == "batches":
        assert (tmp_path / "fig" / "batches.png").stat().st_size > 1000


def test_v20_linear_env_clicks_with_probability_x_theta(tmp_path, monkeypatch):
    """The Vernade script's linear env: conforms, and P(click) = x^T theta, in [0, 1] with a spread
    (positive-orthant unit arms and theta); its logistic twin runs too (--link logistic)."""
    monkeypatch.syspath_prepend(str(ROOT))
    import numpy as np
    import v20_linear_delays as v20

    from gym_ctxbandits.checks import check_env

    check_env(v20.FreshBernoulliLinearEnv, pool_size=50)
    env = v20.FreshBernoulliLinearEnv(pool_size=2000)
    env.reset(seed=3)
    inst = env.instance
    assert np.allclose(np.linalg.norm(inst["pool"], axis=1), 1, atol=1e-6) and inst["theta"].min() >= 0
    assert np.allclose(inst["pool_means"], inst["pool"].astype(float) @ inst["theta"], atol=1e-6)
    assert 0 <= inst["pool_means"].min() and inst["pool_means"].max() <= 1 and inst["pool_means"].std() > 0.05
    assert v20.main(["--quick", "--quiet", "--backend", "inprocess", "--seeds", "1", "--horizon", "20",
                     "--link", "logistic", "--out", str(tmp_path)]) is None
    assert "(logistic link)" in (tmp_path / "v20_linear_delays.md").read_text()


def test_v20_authors_code_gives_only_the_otf_agents_the_code_bonus(monkeypatch):
    """--authors-code: the OTF agents take bonus="code" with the published run's constants and the window m;
    the baselines' specs are those of the default run (their results repeat it)."""
    monkeypatch.syspath_prepend(str(ROOT))
    import v20_linear_delays as v20

    default, code = v20.agents("geometric:100, m=500"), v20.agents("geometric:100, m=500", authors_code=True)
    assert [a.kwargs for a in code if not a.name.startswith("OTF")] == [a.kwargs for a in default
                                                                          if not a.name.startswith("OTF")]
    otf = {a.name: a.kwargs for a in code if a.name.startswith("OTF")}
    assert otf["OTFLinUCB"] == {"sigma": 0.5, "m": 500, "bonus": "code", "alpha": 1.0, "delta": 0.1, "lam": 1.0}
    assert otf["OTFLinTS"] == {"sigma": 0.5, "m": 500, "bonus": "code", "lam": 0.25}


def test_delayed_reproduction_bad_seeds_is_one_line(tmp_path, monkeypatch, capsys):
    assert script_main("delay_regret", ["--seeds", "5:5", "--out", str(tmp_path)], monkeypatch) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "error: --seeds" in err and not any(tmp_path.iterdir())


def test_retiring_ids_outnumber_the_items_of_an_episode(monkeypatch):
    """c11_table1.id_dim: K + pT + 6 sqrt(pT) id directions, so newcomers never reuse a retired item's."""
    monkeypatch.syspath_prepend(str(ROOT))
    import c11_table1

    assert c11_table1.id_dim(30_000) == 10 + 30 + 33 + 1 and c11_table1.id_dim(10**6) > 10 + 1000 + 6 * 31


def test_vw_head_to_head_plays_each_pair_and_vws_own_loop(tmp_path, monkeypatch):
    """scripts/vw_head_to_head.py on one PMLB set at a tiny size: a row per set with each pair's rewards,
    ratio and costs (VW's --cbify loop included), and the summary per pair."""
    pytest.importorskip("vowpalwabbit")
    monkeypatch.syspath_prepend(str(ROOT))
    import vw_head_to_head

    if not vw_head_to_head.supervised.home_of(None).joinpath("pmlb", "iris").exists():
        pytest.skip("the PMLB sets are not in the data home ($CTXBANDITS_DATA/pmlb)")
    out = tmp_path / "h2h.md"
    vw_head_to_head.main(["--names", "iris", "--seeds", "1", "--cap", "40", "--pairs", "SquareCB",
                          "--markdown", str(out)])
    text = out.read_text()
    row = next(line for line in text.splitlines() if line.startswith("| iris | 3 | 40 |"))
    rewards = re.match(r"\| iris \| 3 \| 40 \| ([\d.]+) / ([\d.]+) \(([\d.]+)\), ([\d.]+), (\d+) / (\d+) / (\d+) \|", row)
    assert rewards and all(0 <= float(rewards[i]) <= 1 for i in (1, 2, 3)), row
    assert "| SquareCB vs VW-SquareCB | 1 |" in text and "VW-RegCB-opt" not in text


# --- the ranking and non-stationary reproductions (scripts/_tables.py: one comparison, a table) ---------

REPRODUCTIONS = {"kveton2015": ["| 16 | 2 |", "| 16 | 4 |", "| 16 | 8 |", "| CascadeKL-UCB | "],
           "lagree2016": ["| PBM-UCB |", "| PBM-PIE |", "| TopRank |", "| CascadeKL-UCB |"],
           "zong2016": ["| CascadeLinUCB |", "| CascadeLinTS |", "| CascadeUCB1 |", "| CascadeKL-UCB |"],
           "russac2019": ["| LinUCB-OR |", "| dLinUCB |", "| SW-LinUCB |", "Slow changes", "| 4,150 |"],
           "piecewise_bernoulli": ["| CUSUM-UCB |", "| GLR-klUCB |", "| Oracle-Restart |", "| Random |"]}


@pytest.mark.parametrize("name", REPRODUCTIONS)
def test_reproduction_quick(name, tmp_path, monkeypatch, capsys):
    """Each ranking or non-stationary script's --quick run (at 200 rounds): its table, a row for every
    problem and agent,
    finite numbers, written to <out>/<script>.md with the run's size and time."""
    argv = ["--quick", "--horizon", "200", "--quiet", "--backend", "inprocess", "--out", str(tmp_path)]
    text = script_main(name, argv, monkeypatch)
    assert (tmp_path / f"{name}.md").read_text() == text and text in capsys.readouterr().out
    assert "2 seeds" in text and "CPU-s" in text and "nan" not in text
    assert all(row in text for row in REPRODUCTIONS[name]), text
