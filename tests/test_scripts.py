"""Every paper-experiment script runs end to end in its --quick mode (small T, 2 seeds)."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1] / "scripts"
SCRIPTS = sorted(p for p in ROOT.glob("s[0-9]_*.py")) + [ROOT / "real_data_linear.py"]
# The costliest smoke runs (a language model every round, 500 posts to embed, MNIST's d = 1960 arms)
# run at T = 20 in the default suite: every panel, env and agent of the script, fewer rounds. Under
# `-m slow` they run at --quick's T = 100 too; the other scripts run at T = 100 in the default suite.
SHORT_HORIZON = {"s3_fig3": 20, "s3_moderation": 20, "real_data_linear": 20}


def test_every_paper_experiment_has_a_script():
    assert {p.name.split("_")[0] for p in SCRIPTS} >= {"s0", "s1", "s3", "s4"}
    assert set(SHORT_HORIZON) <= {p.stem for p in SCRIPTS}


def run_quick(script, tmp_path, horizon=None):
    """Run `script --quick` (at `horizon` rounds if given) and check its panels, figures and tables."""
    cmd = [sys.executable, str(script), "--quick", "--quiet", "--backend", "inprocess",
           "--out", str(tmp_path), "--figures", str(tmp_path / "figures")]
    if horizon:
        cmd += ["--horizon", str(horizon)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if proc.returncode and "DatasetNotFound" in proc.stderr:
        line = next(x for x in proc.stderr.splitlines() if "DatasetNotFound" in x)
        pytest.skip(f"real data not present: {line[:300]}")
    assert proc.returncode == 0, proc.stderr[-3000:]
    panels = [p for p in tmp_path.iterdir() if p.is_dir() and p.name != "figures"]
    assert panels
    for panel in panels:
        assert (panel / "regret.png").stat().st_size > 1000 and (panel / "runtime.svg").exists()
        table = (panel / "summary.md").read_text()
        assert table.count("\n") >= 3 and "nan ±" not in table
        if horizon:
            assert f"| {horizon} |" in table
        assert (tmp_path / "figures" / f"{script.stem}_{panel.name}.png").exists()
    assert "final regret" in proc.stdout


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.stem)
def test_quick_mode_runs(script, tmp_path):
    run_quick(script, tmp_path, SHORT_HORIZON.get(script.stem))


@pytest.mark.slow
@pytest.mark.parametrize("script", [p for p in SCRIPTS if p.stem in SHORT_HORIZON], ids=lambda p: p.stem)
def test_quick_mode_runs_at_the_quick_horizon(script, tmp_path):
    run_quick(script, tmp_path)


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


def test_linear_ceiling_is_zero_when_well_specified_and_high_on_h3(monkeypatch):
    """sanity.linear_ceiling: the best linear-logit policy is exact on a logistic bandit, near Random on h3."""
    monkeypatch.syspath_prepend(str(ROOT))
    import sanity

    assert sanity.linear_ceiling("CtxBandit/BernoulliLogistic-v0", [0], 200) < 0.01
    assert sanity.linear_ceiling("CtxBandit/NeuralLogisticH3-v0", [0, 1], 500) > 0.8
