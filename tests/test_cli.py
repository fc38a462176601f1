"""The `ctxbandits` command end to end: run, plot, list, bad input, and resuming after an interrupt."""

import signal
import subprocess
import sys
import time

from gym_ctxbandits.cli import main

ENV = "CtxBandit/Linear-v0"


def test_run_then_plot(tmp_path, capsys):
    out = tmp_path / "x"
    assert main(["run", "--env", ENV, "--env-kwargs", '{"dim": 5}', "--agents", "LinUCB,LinTS", "--seeds", "2",
                 "--horizon", "300", "--log-every", "10", "--out", str(out), "--quiet"]) == 0
    printed = capsys.readouterr().out
    assert "LinUCB" in printed and "final_regret" in printed
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


def test_interrupted_run_resumes_without_recomputing(tmp_path):
    out = tmp_path / "r"
    cmd = [sys.executable, "-m", "gym_ctxbandits.cli", "run", "--env", ENV, "--agents", "LinTS", "--seeds", "12",
           "--horizon", "4000", "--log-every", "100", "--batch", "2", "--out", str(out), "--quiet"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 60
    while len(list(out.glob("*.parquet"))) < 2 and time.time() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    proc.wait(timeout=30)
    done = {p: p.stat().st_mtime_ns for p in out.glob("*.parquet")}
    assert 2 <= len(done) < 12, "the run should have been interrupted part-way"
    assert main(cmd[3:]) == 0
    assert len(list(out.glob("*.parquet"))) == 12 and not list(out.glob(".tmp-*"))
    for p, stamp in done.items():
        assert p.stat().st_mtime_ns == stamp, f"{p.name} was recomputed"
