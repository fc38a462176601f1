"""The shipped reference rows are what today's code gives (issue 48): a fixed sample of the rows of
every agent of every shipped suite version and track, the replay included, played again and
compared bit for bit where this machine has the kernels the rows were made with (elsewhere within
the tolerance `reproduce.compare` states: docs/reproducibility.md, `ctxbandits bench verify`); every
copied row equal to its source's."""

from __future__ import annotations

import functools
import json

import numpy as np
import pandas as pd
import pytest

from gym_ctxbandits import datasets
from gym_ctxbandits.bench import references, reproduce
from gym_ctxbandits.bench.suite import load
from gym_ctxbandits.jobs import AgentSpec, agent_device

SAMPLE = reproduce.sample()


def _id(row):
    suite, track, agent, cell, rounds = row
    return f"{suite.key}-{track}-{agent}-{cell}"


def test_the_sample_covers_every_agent_of_every_version_and_track_and_the_replay():
    folders = {(s.key, t) for s, t in reproduce.folders()}
    assert {(s.key, t) for s, t, *_ in SAMPLE} == folders and len(folders) == 24   # pmlb-v1's, nonstationary-v1's, ranking-v1's and its pbm track's too
    own = {(s.key, t, a) for s, t in reproduce.folders()
           for a, e in references.read(references.folder(s, t), s, verify=False, track=t)["agents"].items()
           if len(e.get("reused", {}).get("cells", ())) < len(s.track(t)[0])}
    assert own <= {(s.key, t, a) for s, t, a, *_ in SAMPLE}
    replay = {(s.key, t, a) for s, t, a, c, _ in SAMPLE if c == "obd-replay"}
    assert {("bakeoff-v1", "report", a) for a in ("Random", "LinUCB", "LinTS", "Greedy")} <= replay


@functools.cache
def shipped_manifest(key: str, track: str) -> dict:
    """A folder's manifest, its files checked against their SHA-256 once per test process."""
    return references.read(references.folder(load(key), track), load(key), track=track)


@pytest.mark.parametrize("row", SAMPLE, ids=_id)
def test_the_shipped_rows_reproduce(row):
    suite, track, agent, cell, rounds = row
    pytest.importorskip("torch") if agent_device(AgentSpec(agent), "cpu") is not None else None
    try:
        shipped, mine, replay = reproduce.rerun(suite, track, agent, cell, suite.report_seeds[:1], rounds,
                                                shipped_manifest(suite.key, track))
    except datasets.DatasetNotFound as err:          # offline without $CTXBANDITS_DATA: the real-data cells
        pytest.skip(f"{cell} needs its dataset: {str(err).splitlines()[0][:200]}")
    assert len(shipped) >= 1
    entry = shipped_manifest(suite.key, track)["agents"][agent]
    torch = agent_device(AgentSpec(agent, entry.get("config", {})), "cpu") is not None
    across = not reproduce.same_numerics(entry, cell, torch)
    assert reproduce.compare(shipped, mine, replay, across) == [], \
        f"kernels here {reproduce.numerics()}, the rows' {reproduce.rows_numerics(entry, cell)}"


def test_a_changed_number_is_caught():
    suite = load("bakeoff-v2")
    shipped, mine, replay = reproduce.rerun(suite, "report", "LinUCB", "s4-unit-circle", [1000], 250)
    assert reproduce.compare(shipped, mine, replay) == [] == reproduce.compare(shipped, mine, replay, across=True)
    nudged = shipped.copy()
    nudged.loc[1, "cum_regret"] = np.nextafter(nudged.loc[1, "cum_regret"], np.inf)    # one ulp
    assert len(reproduce.compare(nudged, mine, replay)) == 1
    assert reproduce.compare(nudged, mine, replay, across=True) == []                  # the last bits, across
    nudged.loc[1, "cum_regret"] *= 1 + 1e-6
    assert len(reproduce.compare(nudged, mine, replay, across=True)) == 1              # an early row changed
    other = reproduce.rerun(suite, "report", "LinTS", "s4-unit-circle", [1000], 250)[1]
    assert reproduce.compare(shipped, other, replay) and reproduce.compare(shipped, other, replay, across=True)


def test_across_kernels_later_rows_may_part_within_the_stated_tolerance():
    rounds = [100, 200, 300, 400]
    shipped = pd.DataFrame({"seed": 1000, "round": rounds, "cum_regret": [1.0, 2.0, 3.0, 10.0],
                            "cum_reward": [np.nan, np.nan, np.nan, 5.0]})
    parted = shipped.assign(cum_regret=[1.0, 2.0, 3.5, 12.9], cum_reward=[np.nan, np.nan, np.nan, 6.0])
    assert reproduce.compare(shipped, parted, False, across=True) == []
    assert len(reproduce.compare(shipped, parted, False)) == 2
    assert len(reproduce.compare(shipped, parted.assign(cum_regret=[1.0, 2.0, 3.0, 13.1]), False, across=True)) == 1
    clicks = shipped.assign(cum_reward=[0.0, 1.0, 2.0, 3.0])
    assert reproduce.compare(clicks, clicks.assign(cum_reward=[0.0, 1.0, 4.0, 6.0]), True, across=True) == []
    assert len(reproduce.compare(clicks, clicks.assign(cum_reward=[0.0, 2.0, 2.0, 3.0]), True, across=True)) == 1


@functools.cache
def parquet(name: str) -> pd.DataFrame:
    """A shipped reference file, `<folder>/<file>`, read once per test process."""
    return pd.read_parquet(references.REFERENCES / name)


@pytest.mark.parametrize("suite, track", reproduce.folders(), ids=lambda x: getattr(x, "key", x))
def test_every_copied_row_is_its_source_row(suite, track):
    where = references.folder(suite, track)
    manifest = shipped_manifest(suite.key, track)
    for agent, entry in manifest["agents"].items():
        if not (copied := entry.get("reused")):
            continue
        columns = list(references.COLUMNS)
        source = parquet(copied["from"])
        mine = parquet(f"{where.name}/{entry['file']}")
        a, b = (t[t["cell"].isin(copied["cells"])] for t in (mine, source))     # both in the suite's cell order
        assert len(a) == len(b) > 0, f"{agent}: {copied['from']}"
        for column in columns:
            x, y = (t[column].to_numpy(str if column == "cell" else None) for t in (a, b))
            same = (x == y) | (pd.isna(x) & pd.isna(y)) if x.dtype.kind == "f" else x == y
            assert same.all(), f"{agent}'s {column} differs from {copied['from']}'s"


def test_the_manifest_records_the_kernels(tmp_path):
    made = references.machine()["numerics"]
    assert made == reproduce.numerics() and set(made) == {"blas", "torch", "vendor"}
    entry = {"machine": {"numerics": {"blas": "Haswell", "torch": "AVX2"}},
             "reused": {"cells": ["s0-linear"], "numerics": {"blas": "SkylakeX", "torch": "AVX512"}}}
    assert reproduce.rows_numerics(entry, "s0-linear")["blas"] == "SkylakeX"
    assert reproduce.rows_numerics(entry, "mnist")["blas"] == "Haswell"
    assert reproduce.rows_numerics({}, "mnist") == reproduce.SHIPPED_NUMERICS
    assert json.loads(json.dumps(made)) == made


def test_bench_verify_reruns_the_chosen_rows_and_says_which_reproduce(capsys, monkeypatch):
    from gym_ctxbandits.cli import main

    argv = ["bench", "verify", "--suite", "bakeoff-v1", "--track", "report", "--agents", "Lin-ES,RRLS", "--quiet"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "| bakeoff-v1 | 2 |" in out and "2 of 2 runs reproduce" in out and "kernels here" in out
    real = reproduce.compare
    monkeypatch.setattr(reproduce, "compare", lambda a, b, replay, across=False: real(a, b.assign(
        cum_regret=b["cum_regret"] * 1.01, cum_reward=b["cum_reward"] + 1), replay, across))
    assert main(argv) == 1
    assert "0 of 2 runs reproduce" in capsys.readouterr().out
    assert main(["bench", "verify", "--suite", "bakeoff-v9", "--agents", "LinUCB"]) == 2
    assert "no shipped reference rows match" in capsys.readouterr().err


def test_bench_verify_says_which_rows_it_could_not_run_for_want_of_data(capsys, monkeypatch):
    from gym_ctxbandits.cli import main

    def missing(*args, **kwargs):
        raise datasets.DatasetNotFound("banknote: no local copy found\nFiles needed: ...")
    monkeypatch.setattr(reproduce, "rerun", missing)
    assert main(["bench", "verify", "--suite", "bakeoff-v1", "--track", "report", "--agents", "Lin-ES", "--quiet"]) == 0
    assert "0 of 0 runs reproduce (0 compared bit for bit, 0 across kernels); 1 not run, their datasets not at hand " \
           "(the first: banknote: no local copy found)" in capsys.readouterr().out
