"""The ranking suite, ranking-v1 (issue 50, docs/bench_ranking.md): every cell a ranking env, its Random
a random list that every score is normalised by, a suite that mixes kinds refused in one line, the
references holding every ranking agent (the PBM ones on the PBM track) with a reason for every other
agent, and the docs' tables the references'."""

import json
import runpy
from pathlib import Path

import pytest

from gym_ctxbandits.bench import references, suite
from gym_ctxbandits.cli import main
from gym_ctxbandits.compare import check_env_spec
from gym_ctxbandits.experiment import EnvSpec

ROOT = Path(__file__).resolve().parents[1]
KEY = "ranking-v1"
REPORT = {"Random", "CascadeUCB1", "CascadeKL-UCB", "CascadeTS", "CascadeLinUCB", "CascadeLinTS", "TopRank",
          "RankedBandits", "TopK"}
PBM = {"PBM-UCB", "PBM-PIE"}


def test_every_cell_is_a_ranking_env_and_the_pbm_track_holds_the_pbm_cells(monkeypatch):
    monkeypatch.setenv("CTXBANDITS_DATA", str(ROOT / "data" / "fixtures" / "home"))     # the fitted PBMs' fixtures
    s = suite.load(KEY)
    assert s.kind == "ranking" and suite.load("nonstationary-v1").kind == "arm" and s.horizon_to_agents
    assert not set(s.tune_seeds) & set(s.report_seeds) and len(s.report_seeds) == 10
    for cell in s.cells:
        check_env_spec(EnvSpec(cell.env, cell.kwargs))
        assert cell.why and cell.horizon == (5000 if cell.id == "cascade-russo" else 10_000)
    assert [c.id for c in s.track("pbm")[0]] == [c.id for c in s.cells if "PBM" in c.env]


def write_suite(path: Path, envs) -> Path:
    cells = "".join(f'\n[[cells]]\nid = "c{i}"\nenv = "CtxBandit/{env}"\nhorizon = 40\ntags = ["cascade"]\n'
                    for i, env in enumerate(envs))
    path.write_text('name = "tiny"\nversion = 1\ntune_seeds = "0:2"\nreport_seeds = "1000:1006"\n'
                    f'quick = {{ horizon = 5, seeds = 1 }}\n{cells}')
    return path


def test_random_plays_a_random_list_and_a_mix_of_kinds_is_one_line(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    tiny = write_suite(tmp_path / "tiny.toml", ["CascadeBLB-v0", "DCM-v0"])
    run = ["bench", "run", "--suite", str(tiny), "--quiet", "--agents"]
    assert main([*run, "CascadeUCB1", "--out", "card"]) == 0
    played = json.loads(Path("card/Random/c0/manifest.json").read_text())["config"]["agents"][0]
    assert (played["name"], played["kwargs"]) == ("TopK", {"agent": "Random"})
    assert main(["bench", "report", "card", "--no-references"]) == 0
    card = json.loads(Path("card/scorecard.json").read_text())
    assert all(c["agents"]["Random"]["score"] == 0 and c["agents"]["CascadeUCB1"]["score"] > 0
               for c in card["cells"].values())
    capsys.readouterr()
    assert main([*run, "LinUCB", "--out", "other"]) == 2                     # a one-arm agent on a ranking suite
    assert "LinUCB cannot play CtxBandit/CascadeBLB-v0" in capsys.readouterr().err
    mixed = write_suite(tmp_path / "mixed.toml", ["CascadeBLB-v0", "Linear-v0"])
    assert main(["bench", "run", "--suite", str(mixed), "--quiet", "--agents", "CascadeUCB1", "--out", "mix"]) == 2
    err = capsys.readouterr().err
    assert "suite tiny-v1 mixes kinds of problem: c1 arm; c0 ranking" in err and len(err.strip().splitlines()) == 1
    with pytest.raises(suite.SuiteError, match="mixes kinds"):
        assert suite.load(mixed).kind


def test_every_ranking_agent_is_shipped_and_every_other_has_a_reason():
    s = suite.load(KEY)
    report = references.read(references.folder(s), s, verify=False)
    pbm = references.read(references.folder(s, "pbm"), s, verify=False, track="pbm")
    assert set(report["agents"]) == REPORT and set(pbm["agents"]) == REPORT | PBM
    assert all(set(pbm["agents"][a]["reused"]["cells"]) == set(pbm["cells"]) for a in REPORT)   # copied rows
    missing = references.absent(report)
    assert "not built yet" not in missing.values() and "PBM track" in missing["PBM-UCB"]
    assert missing["LinUCB"] == missing["D-LinUCB"] == missing["NeuralUCB"] == references.ONE_ARM


@pytest.mark.tables
def test_the_docs_references_tables_and_leaderboards_are_the_references():
    """docs/bench_ranking.md's tables are scripts/make_tables.py's output of the shipped references
    (ranked by IQM, Random's 0)."""
    make = runpy.run_path(str(ROOT / "scripts" / "make_tables.py"))
    tables = make["ranking_tables"]()
    assert set(tables) == {f"{kind}-{KEY}{track}" for kind in ("references", "leaderboard") for track in ("", "-pbm")}
    for name, table in tables.items():
        page, shown = make["shown"](name)
        assert page.name == "bench_ranking.md" and shown == table, \
            f"docs/bench_ranking.md's {name} table is stale: run `python scripts/make_tables.py`"
    for board in (f"leaderboard-{KEY}", f"leaderboard-{KEY}-pbm"):
        iqm = [float(row.split(" | ")[2].split()[0]) for row in tables[board].splitlines()[2:]]
        assert iqm == sorted(iqm, reverse=True) and iqm[-1] == 0
