"""The non-stationary suite, nonstationary-v1 (issue 51, docs/bench_nonstationary.md): its cells are the
settings the docs name at the horizons they state, its references hold every agent for changing worlds
and give every other registered agent a reason, and the docs' tables are the references'."""

import runpy
from pathlib import Path

import gymnasium as gym
import pytest

from gym_ctxbandits.bench import references, suite
from gym_ctxbandits.compare import check_env_spec
from gym_ctxbandits.experiment import EnvSpec

ROOT = Path(__file__).resolve().parents[1]
KEY = "nonstationary-v1"
SHIPPED = {"Random", "LinUCB", "LinTS", "D-LinUCB", "SW-LinUCB", "D-LinTS", "SW-LinTS", "dLinUCB", "UCB1", "kl-UCB",
           "TS", "D-UCB", "SW-UCB", "D-TS", "SW-TS", "CUSUM-UCB", "M-UCB", "GLR-klUCB"}


def test_the_cells_are_the_settings_at_their_stated_horizons():
    s = suite.load(KEY)
    assert not set(s.tune_seeds) & set(s.report_seeds) and len(s.report_seeds) == 10 and s.horizon_to_agents
    cells = {c.id: c for c in s.cells}
    for cell in s.cells:
        check_env_spec(EnvSpec(cell.env, cell.kwargs))
        assert cell.why and ("abrupt" in cell.tags) != ("drift" in cell.tags)
    for cell_id, env in (("russac-abrupt", "RussacAbrupt"), ("russac-slow", "RussacSlow"),
                         ("piecewise-bernoulli", "PiecewiseBernoulli")):       # the papers' own T
        assert cells[cell_id].horizon == gym.spec(f"CtxBandit/{env}-v0").max_episode_steps
    drift = cells["iris-relabel"]
    env = gym.make(drift.env, **drift.kwargs)
    env.reset(seed=s.report_seeds[0])
    assert env.unwrapped.change_points == (1001, 2001) and drift.horizon == 3000


def test_every_agent_for_changing_worlds_is_shipped_and_every_other_has_a_reason():
    s = suite.load(KEY)
    manifest = references.read(references.folder(s), s, verify=False)
    assert set(manifest["agents"]) == SHIPPED and list(manifest["cells"]) == [c.id for c in s.cells]
    missing = references.absent(manifest)
    assert "not built yet" not in missing.values() and references.NONSTATIONARY not in missing.values()
    assert "UCB1 exactly" in missing["Oracle-Restart"] and missing["Greedy"] == references.NOT_RUN[KEY]
    assert missing["CascadeUCB1"] == references.RANKING and missing["NeuralUCB"] == references.NEURAL


@pytest.mark.tables
def test_the_docs_references_table_and_leaderboard_are_the_references():
    """docs/bench_nonstationary.md's tables are scripts/make_tables.py's output of the shipped references
    (ranked by IQM, Random's 0)."""
    make = runpy.run_path(str(ROOT / "scripts" / "make_tables.py"))
    tables = make["nonstationary_tables"]()
    for name, table in tables.items():
        page, shown = make["shown"](name)
        assert page.name == "bench_nonstationary.md" and shown == table, \
            f"docs/bench_nonstationary.md's {name} table is stale: run `python scripts/make_tables.py`"
    rows = [line.split(" | ") for line in tables[f"leaderboard-{KEY}"].splitlines()[2:]]
    iqm = [float(row[2].split()[0]) for row in rows]
    assert iqm == sorted(iqm, reverse=True) and iqm[-1] == 0 and len(rows) == len(SHIPPED)
