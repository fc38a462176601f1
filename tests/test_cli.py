"""The `ctxbandits` command end to end: run, plot, list, bad input, and resuming after an interrupt."""

import time

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


def test_interrupted_run_resumes_without_recomputing(tmp_path, monkeypatch):
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
    with pytest.raises(KeyboardInterrupt):
        main(cmd)
    done = {p: p.stat().st_mtime_ns for p in out.glob("*.parquet")}
    assert len(done) == 6 and not list(out.glob(".tmp-*"))
    monkeypatch.setattr(backends, "run_unit", real)
    time.sleep(0.01)
    assert main(cmd) == 0
    assert len(list(out.glob("*.parquet"))) == 12 and not list(out.glob(".tmp-*"))
    for p, stamp in done.items():
        assert p.stat().st_mtime_ns == stamp, f"{p.name} was recomputed"
