"""The Contextual Bandit Bake-off's track, pmlb-v1 (docs/bench_pmlb.md): the suite file is its script's
output, the held-out tune cells are played by `bench tune` and by no track, the Bake-off's z-test and
wins - losses table on cases computed by hand, and a report of a tiny suite of the protocol (PMLB-format
sets written here, a few rounds) with its PV losses and table."""

import gzip
import importlib.util
import json
import math
import tomllib
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from gym_ctxbandits.bench import references, stats, suite, tune
from gym_ctxbandits.bench.report import results
from gym_ctxbandits.cli import main
from gym_ctxbandits.datasets import pmlb_sets

ROOT = Path(__file__).resolve().parents[1]


def script():
    spec = importlib.util.spec_from_file_location("make_pmlb_suite", ROOT / "scripts" / "make_pmlb_suite.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_suite_file_is_the_scripts_output():
    assert (suite.SUITES / "pmlb-v1.toml").read_text() == script().text(), \
        "pmlb-v1.toml is not scripts/make_pmlb_suite.py's output: run it (and never change a released suite's numbers)"


def test_every_set_is_a_report_cell_a_tune_cell_or_dropped_with_its_reason():
    s, sets = suite.load("pmlb-v1"), pmlb_sets().set_index("name")
    report, held = [c.id for c in s.cells], [c.id for c in s.tune_cells]
    text = s.path.read_text()
    dropped = [n for n in sets.index if n not in report + held]
    assert (len(report), len(held), len(dropped)) == (119, 40, 5) and not set(report) & set(held)
    assert all(f"#   {n}: K d = " in text for n in dropped) and "kddcup" in dropped
    kept = [n for n in sets.index if n not in dropped]
    assert held == kept[::4]                                          # every 4th by name, the first included
    for c in s.cells + s.tune_cells:
        name = c.id
        assert c.kwargs == {"source": f"pmlb:{name}", "preset": "cb-bakeoff"} and c.env == "CtxBandit/Supervised-v0"
        assert c.horizon == min(sets.loc[name, "rows"], 2000)
        assert ("binary" if sets.loc[name, "classes"] == 2 else "multiclass") in c.tags
    assert s.track("report")[0] == s.cells and s.tuning() == s.tune_cells
    assert not set(s.tune_seeds) & set(s.report_seeds) and len(s.report_seeds) == 10


def write_sets(home: Path, names, rows: int = 40) -> None:
    """Sets in PMLB's format at home/pmlb/NAME/NAME.tsv.gz: 3 features, 3 classes, the label a
    function of the first feature so that an agent can learn it."""
    for i, name in enumerate(names):
        rng = np.random.default_rng(i)
        x = rng.normal(size=(rows, 3)).round(3)
        table = pd.DataFrame({"a": x[:, 0], "b": x[:, 1], "c": x[:, 2], "target": np.digitize(x[:, 0], [-0.4, 0.4])})
        (home / "pmlb" / name).mkdir(parents=True, exist_ok=True)
        with gzip.open(home / "pmlb" / name / f"{name}.tsv.gz", "wt") as f:
            table.to_csv(f, sep="\t", index=False)


def write_suite(folder: Path, report=("set-a", "set-b"), held=("set-c",), horizon: int = 30) -> Path:
    home = folder / "home"
    write_sets(home, [*report, *held])
    def cell(table, name):
        return (f'\n[[{table}]]\nid = "{name}"\nenv = "CtxBandit/Supervised-v0"\nkwargs = {{ source = "pmlb:{name}", '
                f'preset = "cb-bakeoff", data_home = "{home}" }}\nhorizon = {horizon}\n'
                'tags = ["real-data", "multiclass", "small"]\n')
    text = ('name = "tiny"\nversion = 1\ntune_seeds = "0:2"\nreport_seeds = "1000:1006"\n'
            'quick = { horizon = 5, seeds = 1 }\nhorizon_to_agents = true\n')
    text += "".join(cell("cells", c) for c in report) + "".join(cell("tune_cells", c) for c in held)
    (folder / "tiny.toml").write_text(text)
    return folder / "tiny.toml"


def test_tune_cells_are_tuned_on_and_played_by_no_track(tmp_path):
    s = suite.load(write_suite(tmp_path))
    assert [c.id for c in s.cells] == ["set-a", "set-b"] and [c.id for c in s.tune_cells] == ["set-c"]
    assert [c.id for c in s.track("report")[0]] == [c.id for c in s.track(True)[0]] == ["set-a", "set-b"]
    assert [c.id for c in tune.Study(s, tmp_path / "study").cells] == ["set-c"]
    assert [c.horizon for c in tune.Study(s, tmp_path / "study", quick=True).cells] == [5]
    with pytest.raises(suite.SuiteError, match="tunes on its held-out tune_cells"):
        s.tuning("glm")
    data = tomllib.loads((tmp_path / "tiny.toml").read_text())
    data["tune_cells"][0]["id"] = "set-a"
    with pytest.raises(suite.SuiteError, match="tune_cells ids must be unique and none a report cell's, got \\['set-a'"):
        suite.parse(data)
    assert suite.load("bakeoff-v2").tune_cells == () and suite.load("bakeoff-v2").tuning() == suite.load(
        "bakeoff-v2").cells                                              # a suite without them tunes as before


def test_the_bakeoff_z_test_by_hand():
    z, p = stats.bakeoff_z(0.1, 0.2, 100)           # Z = 0.1 / sqrt(0.09 / 100 + 0.16 / 100) = 0.1 / 0.05 = 2
    assert z == pytest.approx(2.0, abs=1e-12) and p == pytest.approx(1 - math.erf(math.sqrt(2)), abs=1e-12)
    assert p == pytest.approx(0.0455003, abs=1e-7) and p < 0.05     # a win of 1 over 2, just
    z, p = stats.bakeoff_z(0.3, 0.35, 400)          # 0.05 / sqrt(0.21 / 400 + 0.2275 / 400) = 1.5119...
    assert z == pytest.approx(0.05 / math.sqrt(0.4375 / 400)) and p == pytest.approx(0.130570, abs=1e-5) and p > 0.05
    z, p = stats.bakeoff_z([0.0, 0.0, 1.0], [0.0, 1.0, 1.0], 10)       # no variance: equal ties, else decided
    assert list(z) == [0, np.inf, 0] and list(p) == [1, 0, 1]
    with pytest.raises(ValueError, match="losses in \\[0, 1\\]"):
        stats.bakeoff_z(-0.5, 0.2, 10)


def test_wins_minus_losses_by_hand():
    losses = [[0.1, 0.1, 0.5],          # agent 0: beats 1 on set 0 (Z = 2.9), loses to it on set 2 (Z = -2.95)
              [0.2, 0.1, 0.3],
              [0.5, 0.5, 0.5]]          # agent 2: loses to both on the first two sets, ties both on the last
    n = [1000, 1000, 100]
    assert stats.wins_losses(losses, n).tolist() == [[0, 0, 2], [0, 0, 3], [-2, -3, 0]]
    assert stats.bakeoff_outcomes(losses, n)[0, 1].tolist() == [1, 0, -1]


def test_report_on_a_suite_of_the_protocol_gives_pv_losses_and_the_bakeoffs_table(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    suite_file = write_suite(tmp_path)
    assert main(["bench", "run", "--suite", str(suite_file), "--agents", "LinUCB,Greedy", "--out", "card",
                 "--quiet"]) == 0
    assert main(["bench", "report", "card", "--bakeoff-agents", "LinUCB,Random"]) == 0
    card = json.loads(Path("card/scorecard.json").read_text())
    b = card["bakeoff"]
    assert b["agents"] == ["LinUCB", "Random"] and b["n"] == {"set-a": 30, "set-b": 30}
    rows = results("card", "LinUCB", "set-a")
    last = rows[rows["round"] == 30]
    assert b["pv_loss"]["set-a"]["LinUCB"] == pytest.approx(float(np.mean(1 - last["cum_reward"] / 30)))
    losses = np.array([[b["pv_loss"][c][a] for c in ("set-a", "set-b")] for a in b["agents"]])
    assert b["wins_minus_losses"]["LinUCB"]["Random"] == stats.wins_losses(losses, [30, 30])[0, 1]
    assert set(b["pv_loss"]["set-a"]) == {"Random", "LinUCB", "Greedy"}
    text = Path("card/scorecard.md").read_text()
    assert "## The Bake-off's rule: wins minus losses" in text and "| set-b | 30 |" in text
    assert "<h2>The Bake-off's rule: wins minus losses</h2>" in Path("card/scorecard.html").read_text()
    assert main(["bench", "report", "card", "--bakeoff-agents", "LinUCB,Nobody"]) == 2
    assert "Nobody: not on this scorecard" in capsys.readouterr().err


def test_the_references_hold_random_and_linucb_and_every_other_agent_has_a_reason():
    s = suite.load("pmlb-v1")
    manifest = references.read(references.folder(s), s, verify=False)
    assert {"Random", "LinUCB"} <= set(manifest["agents"]) and list(manifest["cells"]) == [c.id for c in s.cells]
    missing = references.absent(manifest)
    assert "not built yet" not in missing.values() and missing["NeuralUCB"] == references.NEURAL
    assert missing["Softmax"] == references.NOT_RUN["pmlb-v1"] and "CVXPY" in missing["OAM"]


@pytest.mark.tables
def test_the_docs_references_table_and_leaderboard_are_the_references():
    """docs/bench_pmlb.md's references table and leaderboard are scripts/make_tables.py's output of the
    shipped references (ranked by IQM, Random's 0)."""
    import runpy

    make = runpy.run_path(str(ROOT / "scripts" / "make_tables.py"))
    tables = make["pmlb_tables"]()
    for name, table in tables.items():
        assert make["shown"](name)[1] == table, f"docs/bench_pmlb.md's {name} table is stale: run " \
                                                "`python scripts/make_tables.py`"
    rows = [line.split(" | ") for line in tables["leaderboard-pmlb-v1"].splitlines()[2:]]
    iqm = [float(row[2].split()[0]) for row in rows]
    assert iqm == sorted(iqm, reverse=True) and rows[-1][1] == "Random" and iqm[-1] == 0
