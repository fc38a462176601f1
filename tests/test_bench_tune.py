"""Fair tuning (issue 29, item 4): search spaces beside the hyper-parameters, `ctxbandits bench tune`
on the tune seeds only with the same budget for every agent, and the tuned track of `bench run`
and `bench report`. A tiny suite of its own (two cells of 60 rounds, three tune and three report
seeds) keeps every study here to a few seconds."""

import json
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

import agents
from agents.params import (
    Choice,
    IntLogUniform,
    LogUniform,
    Uniform,
    defaults,
    parse_space,
    search_space,
)
from gym_ctxbandits.bench import tune
from gym_ctxbandits.bench.report import finals
from gym_ctxbandits.bench.run import for_cell
from gym_ctxbandits.cli import main
from gym_ctxbandits.compare import run
from gym_ctxbandits.experiment import AgentSpec, EnvSpec
from gym_ctxbandits.results import load_results

BUILT = "bakeoff-v1"    # the suite whose references were all run (bakeoff-v2, the default, copies most)


def shown(name: str) -> str:
    """The table the docs show between `name`'s markers, on whichever page of docs/ holds them
    (scripts/make_tables.py writes them)."""
    import runpy

    return runpy.run_path(str(Path(__file__).resolve().parents[1] / "scripts" / "make_tables.py"))["shown"](name)[1]

TUNE_SEEDS, REPORT_SEEDS = [0, 1, 2], [1000, 1001, 1002]
SUITE = """name = "tiny"
version = 1
tune_seeds = "{tune}"
report_seeds = "{report}"
quick = {{ horizon = 20, seeds = 2 }}

[[cells]]
id = "s0-linear"
env = "CtxBandit/Linear-v0"
horizon = 60
tags = ["linear"]

[[cells]]
id = "s4-changing-1"
env = "CtxBandit/ChangingActionSet1-v0"
horizon = 60
tags = ["action-sets", "linear"]
"""


@pytest.fixture
def folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "tiny.toml").write_text(SUITE.format(tune="0:3", report="1000:1003"))
    yield tmp_path


def study(*extra: str, agents_: str = "LinUCB,epsilon-greedy", budget: int = 3, out: str = "study") -> int:
    return main(["bench", "tune", "--suite", "tiny.toml", "--agents", agents_, "--budget", str(budget), "--out", out,
                 "--quiet", "--sampler", "halton", *extra])


def seeds_under(where: Path) -> set[int]:
    """Every seed any results folder under `where` holds a run of."""
    return {int(s) for m in where.rglob("manifest.json") for s in load_results(m.parent)["seed"].unique()}


def one_line_error(argv, capsys, *words) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and all(w in err for w in words), err


# --- search spaces -------------------------------------------------------------------------------

def entries():
    for name, entry in agents.REGISTRY.items():
        try:
            yield name, entry.cls() if hasattr(entry, "cls") else entry
        except ImportError:                         # a neural agent without torch: its space is not reachable
            continue


def test_every_declared_space_holds_the_agents_defaults():
    classes = dict(entries())
    spaces = {name: search_space(cls) for name, cls in classes.items()}
    for name, space in spaces.items():
        for param, value in defaults(classes[name], space).items():
            assert space[param].contains(value), f"{name}'s default {param}={value!r} is outside {space[param]}"
    assert spaces["Random"] == {}
    for name in ("Greedy", "epsilon-greedy", "Softmax", "LinUCB", "LinTS", "LinTS-AG", "RRLS", "GLM-TSL", "GLM-UCB",
                 "UCB-GLM", "GLM-ES", "Logistic-UCB-1", "ada-OFU-ECOLog"):
        assert spaces[name], f"{name} declares no search space"
    assert set(spaces["epsilon-greedy"]) == {"lam", "epsilon"}          # Greedy's lam, inherited
    assert set(spaces["LinTS-AG"]) == {"R"} and set(spaces["RRLS"]) == {"prior_var", "sigma"}   # what they take


def test_spaces_map_the_unit_interval_onto_their_range():
    log, ints = LogUniform(0.01, 100), IntLogUniform(2, 32)
    assert log.value(0) == 0.01 and log.value(1) == 100 and log.value(0.5) == 1.0
    assert Uniform(0, 0.5).value(0.5) == 0.25 and Uniform(0, 1).contains(0) and not Uniform(0, 1).contains(1.5)
    assert [ints.value(u) for u in (0, 0.25, 0.5, 1)] == [2, 4, 8, 32] and not ints.contains(8.0)
    assert [Choice("a", "b").value(u) for u in (0, 0.49, 0.5, 1)] == ["a", "a", "b", "b"]
    assert log.value(0.3) == 0.1585                          # four significant digits
    with pytest.raises(ValueError, match="lo > 0"):
        LogUniform(0, 1)
    with pytest.raises(ValueError, match="lo < hi"):
        Uniform(1, 1)


def test_a_space_on_the_command_line():
    space = parse_space("lam=log:0.01:100, M=intlog:1:32,eps=uniform:0:0.5,link=choice:logistic|identity")
    assert space == {"lam": LogUniform(0.01, 100), "M": IntLogUniform(1, 32), "eps": Uniform(0, 0.5),
                     "link": Choice("logistic", "identity")}
    for bad in ("lam=log:0.01", "lam=normal:0:1", "lam=log:1:0.1", ""):
        with pytest.raises(ValueError, match="NAME=log:LO:HI"):
            parse_space(bad)


def test_the_design_starts_at_the_defaults_and_a_larger_budget_extends_it():
    space = {"alpha": LogUniform(0.01, 10), "M": IntLogUniform(2, 32)}
    start = {"alpha": 1.0, "M": 8}
    six = tune.halton(space, start, 6)
    assert six[0] == start and len(six) == 6 and tune.halton(space, start, 3) == six[:3] == tune.halton(space, start, 6)[:3]
    assert len({tune.config_id(c) for c in six}) == 6
    assert all(space[k].contains(v) for c in six for k, v in c.items())
    assert tune.halton(space, start, 1) == [start]


# --- the study -----------------------------------------------------------------------------------

def test_a_study_cut_short_keeps_what_its_finished_configurations_cost(folder):
    """A study run again reads its finished runs back in a moment; OUT/costs.json keeps each
    configuration's CPU seconds as first measured, so tuned.json records those, not the re-read's."""
    assert study(agents_="LinUCB", budget=2) == 0
    costs = json.loads(Path("study/costs.json").read_text())
    first = json.loads(Path("study/tuned.json").read_text())
    configs = ["Random/" + tune.config_id({}), *(f"LinUCB/{c['id']}" for c in first["agents"]["LinUCB"]["candidates"])]
    assert set(costs) == {*configs, *(f"{c}/{cell}" for c in configs for cell in ("s0-linear", "s4-changing-1"))}
    Path("study/tuned.json").unlink()                      # as if cut short before tuned.json was written
    costs["LinUCB/" + first["agents"]["LinUCB"]["candidates"][1]["id"]] = 1234.5    # unmistakable
    Path("study/costs.json").write_text(json.dumps(costs))
    assert study(agents_="LinUCB", budget=2) == 0
    again = json.loads(Path("study/tuned.json").read_text())
    assert [c["cpu_seconds"] for c in again["agents"]["LinUCB"]["candidates"]] == \
        [first["agents"]["LinUCB"]["candidates"][0]["cpu_seconds"], 1234.5]
    assert again["random_cpu_seconds"] == first["random_cpu_seconds"]


def test_a_configuration_cut_short_counts_the_cells_it_finished_before_the_cut(folder):
    """A study cut short inside a configuration, then run again, reads the cells finished before
    the cut back in a moment: the configuration's cost is the sum of its cells' seconds as each
    was first measured (OUT/costs.json), those of the first run included, not the rerun's alone."""
    assert study(agents_="LinUCB", budget=1) == 0
    costs = json.loads(Path("study/costs.json").read_text())
    key = "LinUCB/" + tune.config_id(json.loads(Path("study/tuned.json").read_text())["agents"]["LinUCB"]["config"])
    del costs[key], costs[f"{key}/s4-changing-1"]          # as if cut while s4-changing-1 ran
    costs[f"{key}/s0-linear"] = 1234.5                        # finished before the cut (unmistakable)
    Path("study/costs.json").write_text(json.dumps(costs))
    Path("study/tuned.json").unlink()
    shutil.rmtree(Path("study") / key / "s4-changing-1")
    assert study(agents_="LinUCB", budget=1) == 0
    again = json.loads(Path("study/costs.json").read_text())
    cost = json.loads(Path("study/tuned.json").read_text())["agents"]["LinUCB"]["candidates"][0]["cpu_seconds"]
    assert cost == again[key] == round(1234.5 + again[f"{key}/s4-changing-1"], 2) and again[f"{key}/s4-changing-1"] > 0


def test_a_study_never_evaluates_a_report_seed_and_gives_every_agent_the_budget(folder, monkeypatch):
    played = []
    real = tune.Study._play

    def spy(self, spec, where):                              # every comparison a study asks the runner for
        played.append((spec.name, tuple(self.seeds)))
        return real(self, spec, where)

    monkeypatch.setattr(tune.Study, "_play", spy)
    assert study() == 0
    assert {s for _, seeds in played for s in seeds} == set(TUNE_SEEDS)
    assert seeds_under(folder / "study") == set(TUNE_SEEDS)                    # the files say so too
    assert [n for n, _ in played].count("Random") == 1                          # run once, cached
    record = json.loads((folder / "study" / "tuned.json").read_text())
    assert record["budget"] == 3 and record["tune_seeds"] == TUNE_SEEDS and not record["quick"]
    for name in ("LinUCB", "epsilon-greedy"):
        entry = record["agents"][name]
        candidates = entry["candidates"]
        assert len(candidates) == 3 == len({c["id"] for c in candidates})       # the same budget for each
        assert candidates[0]["config"] == entry["defaults"] == defaults(agents.REGISTRY[name], entry["space"])
        best = min(candidates, key=lambda c: c["objective"])
        assert entry["config"] == best["config"] and entry["objective"] == best["objective"]
        assert entry["default_objective"] == candidates[0]["objective"]
        assert all(c["objective"] == np.mean(list(c["cells"].values())) for c in candidates)


def test_the_objective_is_regret_over_randoms_on_the_tune_seeds(folder):
    assert study(agents_="LinUCB", budget=1) == 0
    entry = json.loads((folder / "study" / "tuned.json").read_text())["agents"]["LinUCB"]
    for cell, env in (("s0-linear", "CtxBandit/Linear-v0"), ("s4-changing-1", "CtxBandit/ChangingActionSet1-v0")):
        mine = run(EnvSpec(env), "LinUCB", seeds=TUNE_SEEDS, horizon=60).groupby("seed")["cum_regret"].last()
        random = run(EnvSpec(env), "Random", seeds=TUNE_SEEDS, horizon=60).groupby("seed")["cum_regret"].last()
        assert entry["candidates"][0]["cells"][cell] == mine.mean() / random.mean()


def test_a_rerun_reuses_every_finished_configuration(folder):
    assert study(agents_="LinUCB", budget=2) == 0
    files = sorted((folder / "study").rglob("*.parquet"))
    stamps = [f.stat().st_mtime_ns for f in files]
    before = json.loads((folder / "study" / "tuned.json").read_text())
    assert study(agents_="LinUCB", budget=2) == 0
    assert sorted((folder / "study").rglob("*.parquet")) == files and [f.stat().st_mtime_ns for f in files] == stamps
    after = json.loads((folder / "study" / "tuned.json").read_text())
    assert after == before


def test_a_space_given_on_the_command_line_replaces_the_declared_one(folder):
    assert study("--space", "alpha=log:0.1:1", agents_="LinUCB", budget=2) == 0
    entry = json.loads((folder / "study" / "tuned.json").read_text())["agents"]["LinUCB"]
    assert entry["space"] == {"alpha": {"log-uniform": [0.1, 1]}}
    assert [set(c["config"]) for c in entry["candidates"]] == [{"alpha"}, {"alpha"}]


class _Fragile(agents.linear.LinUCB):
    """LinUCB that diverges (a FloatingPointError, as a neural agent whose scores turn NaN) for
    alpha above `limit`."""

    limit = 2.0

    def act(self, obs):
        if self.alpha > self.limit:
            raise FloatingPointError(f"Fragile: the arm scores contain NaN or inf (lower alpha, currently {self.alpha})")
        return super().act(obs)


@pytest.fixture
def fragile(monkeypatch):
    """`Fragile` (diverges for alpha > 2) and `Hopeless` (for alpha > 0: every configuration)."""
    monkeypatch.setitem(agents.REGISTRY, "Fragile", type("Fragile", (_Fragile,), {}))
    monkeypatch.setitem(agents.REGISTRY, "Hopeless", type("Hopeless", (_Fragile,), {"limit": 0.0}))


def test_a_configuration_under_which_the_agent_diverges_fails_and_the_study_goes_on(folder, fragile, capsys):
    """A configuration whose run raises a FloatingPointError (the agent diverged) is recorded as
    failed, with the error, and never chosen; the study plays the others, and a rerun reads the
    same back. When every configuration fails the study says so in one line, naming the fix."""
    space = "alpha=log:0.5:50"
    assert study("--space", space, agents_="Fragile", budget=5) == 0
    entry = json.loads(Path("study/tuned.json").read_text())["agents"]["Fragile"]
    failed = [c for c in entry["candidates"] if "failed" in c]
    assert failed and len(failed) < 5 and all(c["config"]["alpha"] > 2 for c in failed)
    assert all("lower alpha" in c["failed"] and np.isnan(c["objective"]) and c["cells"] == {} for c in failed)
    assert all(np.isfinite(c["objective"]) for c in entry["candidates"] if c["config"]["alpha"] <= 2)
    assert entry["config"]["alpha"] <= 2 and np.isfinite(entry["objective"])
    assert study("--space", space, agents_="Fragile", budget=5) == 0
    assert json.loads(Path("study/tuned.json").read_text())["agents"]["Fragile"] == entry
    one_line_error(["bench", "tune", "--suite", "tiny.toml", "--agents", "Hopeless", "--budget", "2", "--out",
                    "hopeless", "--sampler", "halton"], capsys, "every configuration of Hopeless failed",
                   "narrow its search space (--space)")
    one_line_error(["bench", "run", "--suite", "tiny.toml", "--agents", "Hopeless", "--out", "card"], capsys,
                   "the arm scores contain NaN or inf (lower alpha")     # a run: one line, not a traceback


def test_bad_input_is_one_line(folder, capsys):
    one_line_error(["bench", "tune", "--suite", "tiny.toml", "--agents", "LinUCB", "--budget", "0", "--out", "s"],
                   capsys, "--budget must be an integer >= 1")
    one_line_error(["bench", "tune", "--suite", "tiny.toml", "--agents", "GLM-ES-DT", "--budget", "2", "--out", "s"],
                   capsys, "GLM-ES-DT declares no search space", "search_space", "--space")
    one_line_error(["bench", "tune", "--suite", "tiny.toml", "--agents", "Random", "--budget", "2", "--out", "s"],
                   capsys, "nothing to tune")
    one_line_error(["bench", "tune", "--suite", "tiny.toml", "--agents", "LinUCB", "--budget", "2", "--out", "s",
                    "--space", "beta=log:0.1:1"], capsys, "does not take", "alpha")
    one_line_error(["bench", "tune", "--suite", "tiny.toml", "--agents", "LinUCB", "--budget", "2", "--out", "s",
                    "--space", "alpha=log:0.1:0.5"], capsys, "alpha=1.0", "outside its search space")
    assert not Path("s").exists()                                          # nothing ran
    assert study(agents_="LinUCB", budget=1) == 0
    one_line_error(["bench", "tune", "--suite", "tiny.toml", "--agents", "LinTS", "--budget", "2", "--out", "study"],
                   capsys, "budget=1", "same budget")


def test_the_quick_study_plays_the_quick_cells_on_the_first_tune_seeds(folder, capsys):
    assert study("--quick", agents_="LinUCB", budget=2) == 0
    record = json.loads((folder / "study" / "tuned.json").read_text())
    assert record["quick"] and record["tune_seeds"] == [0, 1] and seeds_under(folder / "study") == {0, 1}
    assert {c["horizon"] for c in record["cells"].values()} == {20}
    one_line_error(["bench", "run", "--suite", "tiny.toml", "--agents", "LinUCB", "--tuned", "study/tuned.json",
                    "--out", "card"], capsys, "(quick track)", "without --quick")


# --- the tuned track -----------------------------------------------------------------------------

def test_the_tuned_track_plays_the_tuned_configurations_on_the_report_seeds(folder):
    assert study() == 0
    tuned = json.loads((folder / "study" / "tuned.json").read_text())
    assert main(["bench", "run", "--suite", "tiny.toml", "--agents", "LinUCB,epsilon-greedy", "--tuned",
                 "study/tuned.json", "--out", "card", "--quiet"]) == 0
    manifest = json.loads((folder / "card" / "bench.json").read_text())
    assert manifest["track"] == "tuned" and manifest["budget"] == 3 and manifest["tuned"]["tune_seeds"] == TUNE_SEEDS
    assert manifest["tuned"]["configs"] == {a: tuned["agents"][a]["config"] for a in ("LinUCB", "epsilon-greedy")}
    assert seeds_under(folder / "card") == set(REPORT_SEEDS)
    config = tuned["agents"]["LinUCB"]["config"]
    direct = run(EnvSpec("CtxBandit/Linear-v0"), AgentSpec("LinUCB", config), seeds=REPORT_SEEDS, horizon=60)
    np.testing.assert_array_equal(finals("card", "LinUCB", "s0-linear", REPORT_SEEDS)["regret"],
                                  direct.groupby("seed")["cum_regret"].last().to_numpy())
    assert main(["bench", "report", "--out", "card"]) == 0
    card = json.loads((folder / "card" / "scorecard.json").read_text())
    assert card["track"] == "tuned" and card["tracks"] == {"Random": "defaults", "LinUCB": "tuned (budget 3)",
                                                           "epsilon-greedy": "tuned (budget 3)"}
    text = (folder / "card" / "scorecard.md").read_text()
    assert "| LinUCB | tuned (budget 3) |" in text and "| Random | defaults |" in text
    assert "LinUCB: tuned (budget 3)" in (folder / "card" / "scorecard.html").read_text()
    # the shipped references are of the defaults track: none by default, labelled so when asked for
    assert main(["bench", "regen", "--suite", "tiny.toml", "--agents", "Random,Greedy", "--dest", "refs", "--quiet"]) == 0
    assert main(["bench", "report", "--out", "card", "--references", "refs"]) == 0
    card = json.loads((folder / "card" / "scorecard.json").read_text())
    assert card["tracks"]["Greedy"] == "defaults" and card["tracks"]["LinUCB"] == "tuned (budget 3)"


def test_the_tuned_track_refuses_report_seeds_it_was_tuned_on(folder, capsys):
    # the same suite's cells, but its tune seeds are the tiny suite's report seeds
    Path("leaky.toml").write_text(SUITE.format(tune="1000:1003", report="0:3"))
    assert main(["bench", "tune", "--suite", "leaky.toml", "--agents", "LinUCB", "--budget", "1", "--out", "leak",
                 "--quiet"]) == 0
    one_line_error(["bench", "run", "--suite", "tiny.toml", "--agents", "LinUCB", "--tuned", "leak/tuned.json",
                    "--out", "card"], capsys, "tuned on seeds [1000, 1001, 1002]", "report seeds")
    assert not Path("card").exists()
    assert study(agents_="LinUCB", budget=1) == 0
    assert main(["bench", "run", "--suite", "tiny.toml", "--agents", "LinUCB", "--tuned", "study/tuned.json",
                 "--out", "card", "--quiet"]) == 0
    manifest = json.loads(Path("card/bench.json").read_text())
    manifest["tuned"]["tune_seeds"] = [2, 1001]                           # a folder whose record says otherwise
    Path("card/bench.json").write_text(json.dumps(manifest))
    one_line_error(["bench", "report", "--out", "card"], capsys, "tuned on seeds [1001]", "report seeds")


def test_the_tuned_track_is_one_line_when_it_does_not_fit(folder, capsys):
    assert study(agents_="LinUCB", budget=1) == 0
    one_line_error(["bench", "run", "--suite", "tiny.toml", "--agents", "LinTS", "--tuned", "study/tuned.json",
                    "--out", "card"], capsys, "no tuned configuration of LinTS", "--budget 1")
    one_line_error(["bench", "run", "--suite", "tiny.toml", "--agents", "LinUCB", "--tuned", "nowhere.json",
                    "--out", "card"], capsys, "no tuned-configuration file")
    one_line_error(["bench", "run", "--suite", "bakeoff-v1", "--agents", "LinUCB", "--tuned", "study/tuned.json",
                    "--out", "card"], capsys, "not of bakeoff-v1's cells")
    one_line_error(["bench", "run", "--agents", "LinUCB", "--tuned", "shipped", "--suite", "tiny.toml",
                    "--out", "card"], capsys, "tiny-v1.json")
    assert main(["bench", "run", "--suite", "tiny.toml", "--agents", "LinUCB", "--out", "card", "--quiet"]) == 0
    one_line_error(["bench", "run", "--suite", "tiny.toml", "--agents", "LinUCB", "--tuned", "study/tuned.json",
                    "--out", "card"], capsys, "holds results of", "give another --out")


# --- Optuna --------------------------------------------------------------------------------------

def test_the_tpe_study_starts_at_the_defaults_and_resumes(folder):
    pytest.importorskip("optuna", reason="Optuna is not installed (pip install -e '.[tune]'): the TPE path is "
                                         "untested here; the Halton path above is")
    argv = ["bench", "tune", "--suite", "tiny.toml", "--agents", "LinUCB", "--budget", "3", "--out", "tpe", "--quiet",
            "--sampler", "tpe"]
    assert main(argv) == 0
    entry = json.loads(Path("tpe/tuned.json").read_text())["agents"]["LinUCB"]
    assert entry["sampler"] == "optuna-tpe" and Path("tpe/optuna.db").exists()
    assert len(entry["candidates"]) == 3 and entry["candidates"][0]["config"] == {"alpha": 1.0, "lam": 1.0}
    assert seeds_under(Path("tpe")) == set(TUNE_SEEDS)
    stamps = {f: f.stat().st_mtime_ns for f in Path("tpe").rglob("*.parquet")}
    assert main(argv) == 0                                                  # resumed: no trial, no run again
    assert {f: f.stat().st_mtime_ns for f in Path("tpe").rglob("*.parquet")} == stamps
    assert json.loads(Path("tpe/tuned.json").read_text())["agents"]["LinUCB"] == entry


def test_tpe_without_optuna_is_one_line(folder, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "optuna", None)                      # as if it were not installed
    one_line_error(["bench", "tune", "--suite", "tiny.toml", "--agents", "LinUCB", "--budget", "2", "--out", "s",
                    "--sampler", "tpe"], capsys, "needs Optuna", "--sampler halton")
    assert tune.sampler_name("auto") == "halton"


def test_the_docs_table_is_the_registrys_spaces_and_the_shipped_file():
    from gym_ctxbandits.bench import suite

    assert shown("spaces") == tune.markdown_spaces(suite.load(suite.DEFAULT)), \
        "docs/tuning.md's table of search spaces is stale: run `python scripts/make_tables.py`"


# --- the shipped tuned configurations ------------------------------------------------------------

def test_the_shipped_tuned_configurations_are_the_codes_study_of_the_suite():
    """The package's tuned file is of bakeoff-v1's cells and tune seeds, its candidates are the
    Halton design of each agent's declared space (the defaults first), the chosen one is the best,
    and one cheap cell's loss reproduces exactly from the tune seeds."""
    from gym_ctxbandits.bench import suite
    from gym_ctxbandits.bench.run import tuned_configs

    shipped = suite.load(BUILT)
    record = tune.read(tune.shipped(shipped))
    assert record["tune_seeds"] == list(shipped.tune_seeds) and not record["quick"] and record["suite_file"] is None
    configs = tuned_configs(record, shipped, list(record["agents"]), quick=False)     # what `bench run --tuned` checks
    for name, entry in record["agents"].items():
        space = tune.space_of(name)
        assert entry["space"] == {k: v.to_json() for k, v in space.items()} and entry["sampler"] == "scrambled-halton"
        assert [c["config"] for c in entry["candidates"]] == tune.halton(space, entry["defaults"], record["budget"])
        best = min(entry["candidates"], key=lambda c: c["objective"])
        assert configs[name] == entry["config"] == best["config"] and entry["objective"] <= entry["default_objective"]
        assert set(best["cells"]) == {c.id for c in shipped.cells}
    name, entry = next(iter(record["agents"].items()))
    seeds = list(shipped.tune_seeds)
    final = {a: run(EnvSpec("CtxBandit/Linear-v0"), AgentSpec(a, c), seeds=seeds, horizon=2000, log_every=20)
             .groupby("seed")["cum_regret"].last().mean() for a, c in ((name, entry["config"]), ("Random", {}))}
    assert final[name] / final["Random"] == min(entry["candidates"], key=lambda c: c["objective"])["cells"]["s0-linear"]


# --- the tuned track's references ----------------------------------------------------------------

def test_tuned_references_pin_the_file_and_are_the_tuned_zoo_of_a_tuned_folder(folder, capsys):
    """`bench regen --tuned FILE` packs each agent played with its configuration of FILE, the
    manifest pins the budget, the tune seeds and FILE's SHA-256; a tuned folder's report takes them
    as a zoo labelled "tuned (budget B)"; references of another budget or of the report track's
    reference file are refused; a run whose configuration is not the file's is never packed."""
    from gym_ctxbandits.bench import references, suite

    assert study() == 0
    assert main(["bench", "regen", "--suite", "tiny.toml", "--tuned", "study/tuned.json", "--agents",
                 "Random,LinUCB", "--dest", "refs", "--quiet"]) == 0
    tuned = json.loads(Path("study/tuned.json").read_text())
    s = suite.load("tiny.toml")
    manifest = references.read(Path("refs"), s, track="tuned")
    assert manifest["track"] == "tuned" and manifest["budget"] == 3 and manifest["tune_seeds"] == TUNE_SEEDS
    assert manifest["tuned_file"]["sha256"] == references.sha256(Path("study/tuned.json"))
    assert manifest["agents"]["LinUCB"]["config"] == tuned["agents"]["LinUCB"]["config"]
    assert manifest["agents"]["Random"]["config"] == {}
    table = references.table(Path("refs"), manifest, "LinUCB")
    direct = run(EnvSpec("CtxBandit/Linear-v0"), AgentSpec("LinUCB", tuned["agents"]["LinUCB"]["config"]),
                 seeds=REPORT_SEEDS, horizon=60)
    np.testing.assert_array_equal(table[table["cell"] == "s0-linear"].groupby("seed")["cum_regret"].last(),
                                  direct.groupby("seed")["cum_regret"].last())
    with pytest.raises(references.ReferenceMismatch, match="not of this suite's report track"):
        references.read(Path("refs"), s)
    assert main(["bench", "run", "--suite", "tiny.toml", "--agents", "epsilon-greedy", "--tuned", "study/tuned.json",
                 "--out", "card", "--quiet"]) == 0
    assert main(["bench", "report", "--out", "card", "--references", "refs"]) == 0
    card = json.loads(Path("card/scorecard.json").read_text())
    assert card["references"] == {"folder": "refs", "agents": ["LinUCB"], "budget": 3}
    assert card["tracks"] == {"Random": "defaults", "epsilon-greedy": "tuned (budget 3)", "LinUCB": "tuned (budget 3)"}
    # a tuned run of another budget is not reported beside them
    assert study(budget=2, out="study2") == 0
    assert main(["bench", "run", "--suite", "tiny.toml", "--agents", "LinUCB", "--tuned", "study2/tuned.json",
                 "--out", "card2", "--quiet"]) == 0
    capsys.readouterr()
    one_line_error(["bench", "report", "--out", "card2", "--references", "refs"], capsys, "budget 3", "budget 2")
    # a run of another file's configurations is refused by the pack
    tuned["agents"]["epsilon-greedy"]["config"] = {"lam": 1.0, "epsilon": 0.2}
    Path("other.json").write_text(json.dumps(tuned))
    with pytest.raises(references.ReferenceMismatch, match="not its configuration in other.json"):
        references.pack(Path("card"), s, ["epsilon-greedy"], Path("refs"), tuned_file=Path("other.json"))
    with pytest.raises(references.ReferenceMismatch, match="references of LinUCB are of other configurations"):
        tuned["agents"]["LinUCB"]["config"] = {"alpha": 2.0, "lam": 1.0}
        Path("other.json").write_text(json.dumps(tuned))
        references.pack(Path("card"), s, ["Random"], Path("refs"), tuned_file=Path("other.json"))


def test_the_shipped_tuned_references_reproduce_exactly_and_match_the_tuned_file(tmp_path):
    """The package's tuned-track references are of the shipped tuned file (its SHA-256, budget,
    tune seeds, each agent's configuration), hold every tuned agent and Random, and two cheap cells
    of LinUCB's tuned configuration on three report seeds give the shipped rows bit for bit, as does
    one of repGLM-FPL's, given the cell's horizon (tuned on bakeoff-v2, whose agents read it)."""
    from gym_ctxbandits.bench import references, suite

    shipped = suite.load(suite.DEFAULT)
    where = references.folder(shipped, "tuned")
    manifest = references.read(where, shipped, track="tuned")              # every file's SHA-256 checked
    record = tune.read(tune.shipped(shipped))
    assert manifest["tuned_file"] == {"file": tune.shipped(shipped).name, "sha256": references.sha256(tune.shipped(shipped))}
    assert (manifest["budget"], manifest["tune_seeds"]) == (record["budget"], record["tune_seeds"])
    assert set(manifest["agents"]) == {"Random", *record["agents"]}, \
        "a tuned agent without tuned references: `ctxbandits bench regen --tuned shipped --agents NAME`"
    assert all(manifest["agents"][a]["config"] == record["agents"][a]["config"] for a in record["agents"])
    cells = {c.id: c for c in shipped.cells}
    # and a neural agent tuned on bakeoff-v2 that reads the horizon: given the cell's, as its rows were made
    for agent, cell_id in (("LinUCB", "s0-linear"), ("LinUCB", "s4-changing-1"), ("repGLM-FPL", "s3-sphere-linear")):
        cell, table = cells[cell_id], references.table(where, manifest, agent)
        spec = for_cell(AgentSpec(agent, record["agents"][agent]["config"]), cell, shipped)
        assert ("horizon" in spec.kwargs) == (agent == "repGLM-FPL")
        run(EnvSpec(cell.env, cell.kwargs), spec, seeds=REPORT_SEEDS, horizon=cell.horizon, log_every=cell.log_every,
            out=tmp_path / agent / cell_id)
        mine = references.checkpoints(load_results(tmp_path / agent / cell_id)).reset_index(drop=True)
        theirs = table[(table["cell"] == cell_id) & (table["seed"] < 1003)].reset_index(drop=True)
        assert len(mine) == len(theirs) > 3 * 10
        for column in ("seed", "round", "cum_regret"):
            np.testing.assert_array_equal(mine[column], theirs[column], err_msg=f"{agent} on {cell_id}: {column}")


def test_every_agent_has_a_tuned_track_or_a_stated_reason():
    from gym_ctxbandits.bench import references, suite

    shipped = suite.load(suite.DEFAULT)
    manifest = references.read(references.folder(shipped, "tuned"), shipped, track="tuned", verify=False)
    missing = references.absent(manifest)
    assert {"Random", "LinUCB", "LinTS", "epsilon-greedy"}.isdisjoint(missing) and "Neural-ES" in missing
    assert "not built yet" not in missing.values(), \
        f"a reason for {[a for a, r in missing.items() if r == 'not built yet']} (tune.WHY_UNTUNED)"
    assert missing["GLM-ES-DT"].startswith("no search space")
    # an agent that plays a named track only is tuned there: its hint names the track and its cost there
    assert "6 x its neural track references'" in missing["Neural-ES"] and "s on cuda" in missing["Neural-ES"]
    assert missing["Neural-ES"].endswith("--track neural --device cuda`")     # its references were made on a GPU
    assert missing["Neural-ES"].startswith("not tuned yet, for lack of a GPU:")   # not of time: a CPU can't afford it
    assert missing["NeuralUCB"].startswith("tuned on the neural track")


@pytest.mark.tables
def test_the_docs_tables_of_the_tuned_track_are_its_references():
    """The docs' leaderboard of the tuned track and its tuning gains are the default suite's
    references; its references table is bakeoff-v1's, where they were run."""
    from gym_ctxbandits.bench import leaderboard, references, suite

    shipped, built = suite.load(suite.DEFAULT), suite.load(BUILT)
    board = leaderboard.card(shipped, track="tuned")
    assert board["tracks"]["Random"] == "defaults" and board["tracks"]["LinUCB"] == "tuned (budget 6)"
    gains = leaderboard.tuning_gains(shipped)
    rows = [row.split(" | ") for row in gains.splitlines()[2:]]
    assert [row[0].removeprefix("| ") for row in rows] == [a for a in leaderboard.ranked(
        {a: board["aggregates"]["overall"]["iqm"][a][0] for a in board["agents"]}) if a != "Random"]
    assert rows[0][1].split(" → ")[1].endswith(f"(1 of {len(board['agents'])})")       # best tuned first
    for name, table in (("leaderboard-tuned", leaderboard.markdown(board)), ("tuning-gains", gains),
                        ("references-tuned", references.markdown_table(
                            references.read(references.folder(built, "tuned"), built, track="tuned")))):
        assert shown(name) == table, f"the docs' {name} table is stale: run `python scripts/make_tables.py`"


# --- shipping a study into the package's tuned file ----------------------------------------------

@pytest.fixture
def package(folder, monkeypatch):
    """The tiny suite as if shipped (its .toml in the package's suites folder) and its package file
    of tuned configurations in the temp folder: the real package file is never written."""
    from gym_ctxbandits.bench import suite

    real = tune.shipped(suite.load(suite.DEFAULT))
    before = real.read_bytes()
    monkeypatch.setattr(tune, "SUITES", folder)
    monkeypatch.setattr(tune, "TUNED", folder / "tuned")
    yield folder / "tuned" / "tiny-v1.json"
    assert real.read_bytes() == before


def test_ship_merges_a_study_into_the_package_file_and_a_rerun_ships_nothing(package, capsys):
    import difflib

    assert study("--ship", agents_="LinUCB", budget=2) == 0
    out = capsys.readouterr().out
    record = json.loads(Path("study/tuned.json").read_text())
    text = package.read_text()
    shipped = json.loads(text)
    assert text == json.dumps(shipped, indent=1) + "\n"                        # tune's format
    assert shipped == {**{k: record[k] for k in tune.HEAD}, "agents": {"LinUCB": record["agents"]["LinUCB"]}}
    assert "LinUCB (added)" in out and "ctxbandits bench regen --tuned shipped --suite tiny-v1 --agents LinUCB" in out
    assert "python scripts/make_tables.py" in out
    # another agent of the same study folder: added, sorted, and no line of the file removed
    assert study("--ship", agents_="epsilon-greedy", budget=2) == 0
    after = package.read_text()
    assert list(json.loads(after)["agents"]) == ["LinUCB", "epsilon-greedy"]
    assert json.loads(after)["agents"]["LinUCB"] == shipped["agents"]["LinUCB"]
    assert not [line for line in difflib.ndiff(text.splitlines(), after.splitlines()) if line.startswith("- ")]
    # the finished study run again with --ship: the same configurations keep the shipped entries as
    # they are (here a CPU time edited by hand), so the file and its references stay; no next step
    edited = json.loads(after)
    edited["agents"]["LinUCB"]["cpu_seconds"] = 12345.0
    package.write_text(json.dumps(edited, indent=1) + "\n")
    after = package.read_text()
    capsys.readouterr()
    assert study("--ship", agents_="LinUCB,epsilon-greedy", budget=2) == 0
    out = capsys.readouterr().out
    assert package.read_text() == after and "LinUCB (unchanged), epsilon-greedy (unchanged)" in out
    assert "next:" not in out


def test_ship_refuses_a_study_that_does_not_fit_the_package_file(package, capsys):
    from gym_ctxbandits.bench import suite

    assert study("--ship", agents_="LinUCB", budget=2) == 0
    text = package.read_text()
    argv = ["bench", "tune", "--suite", "tiny.toml", "--agents", "LinTS", "--out", "other", "--quiet", "--sampler",
            "halton"]
    one_line_error([*argv, "--budget", "1", "--ship"], capsys, "at budget 2", "this study at budget 1", "--budget 2")
    one_line_error([*argv, "--budget", "2", "--ship", "--quick"], capsys, "smoke run", "without --quick")
    one_line_error([*argv, "--budget", "2", "--replace"], capsys, "--replace", "with --ship")
    Path("mine").mkdir()
    Path("mine/tiny.toml").write_text(Path("tiny.toml").read_text())        # a suite file outside the package
    one_line_error([*argv, "--budget", "2", "--ship", "--suite", "mine/tiny.toml"], capsys, "not a shipped suite",
                   "--tuned OUT/tuned.json")
    assert not Path("other").exists() and package.read_text() == text       # refused before any study ran
    # another configuration of a shipped agent: refused, unless --replace, which says to rebuild the references
    shipped = json.loads(text)
    shipped["agents"]["LinUCB"]["config"] = {"alpha": 0.5, "lam": 1.0}
    package.write_text(json.dumps(shipped, indent=1) + "\n")
    edited = package.read_text()
    one_line_error(["bench", "tune", "--suite", "tiny.toml", "--agents", "LinUCB", "--budget", "2", "--out", "study",
                    "--sampler", "halton", "--ship"], capsys, "LinUCB's shipped configuration {'alpha': 0.5",
                   "--ship --replace", "bench regen --tuned shipped --agents LinUCB")
    assert package.read_text() == edited
    assert study("--ship", "--replace", agents_="LinUCB", budget=2) == 0
    assert "LinUCB (replaced)" in capsys.readouterr().out
    assert package.read_text() == text
    # the library call: tune seeds, cells and sampler must be the file's too
    s, record = suite.load("tiny.toml"), tune.read("study/tuned.json")
    for key, value in (("tune_seeds", [0, 1]), ("cells", {}), ("objective", "another")):
        package.write_text(json.dumps({**shipped, key: value}, indent=1) + "\n")
        with pytest.raises(tune.TuneError, match=f"tiny-v1.json's {key} are not this study's"):
            tune.ship(record, s, ["LinUCB"])
    package.write_text(text)
    record["agents"]["LinUCB"]["sampler"] = "optuna-tpe"
    with pytest.raises(tune.TuneError, match="LinUCB tuned by optuna-tpe.*--sampler halton"):
        tune.ship(record, s, ["LinUCB"])
    with pytest.raises(tune.TuneError, match="the study holds no LinTS"):
        tune.ship(record, s, ["LinTS"])
    assert package.read_text() == text


def test_the_untuned_hint_is_one_command_that_tunes_and_ships():
    import shlex

    from gym_ctxbandits.bench import suite
    from gym_ctxbandits.cli import build_parser

    args = build_parser().parse_args(shlex.split(tune.STUDY.format(name="OTFLinTS", budget=6))[1:])
    assert (args.agents, args.budget, args.sampler, args.ship) == ("OTFLinTS", 6, "halton", True) and args.out
    assert args.track == "report"
    hint = tune.untuned(suite.load(suite.DEFAULT))["Neural-ES"].rpartition("`")[0].rpartition("`")[2]      # its named track's study
    args = build_parser().parse_args(shlex.split(hint)[1:])
    assert (args.agents, args.track, args.ship, args.device) == ("Neural-ES", "neural", True, "cuda")
    assert args.suite in (None, suite.DEFAULT)
    hint = tune.untuned(suite.load("bakeoff-v1"))["Neural-ES"].rpartition("`")[0].rpartition("`")[2]   # not the default's
    assert build_parser().parse_args(shlex.split(hint)[1:]).suite == "bakeoff-v1"


def test_the_next_hints_keep_the_import_so_following_them_works(folder, capsys):
    """A study of a user's agent (--import) says `next: ctxbandits bench run --import ... --tuned ...`;
    following it runs the agent (without the --import: "unknown agent"), and that run's own hint,
    `bench report --import ... FOLDER`, writes the scorecard."""
    import shlex

    (folder / "my_linucb.py").write_text('import agents\nfrom agents.linear import LinUCB\n\n\n'
                                         '@agents.register("My-LinUCB")\nclass MyLinUCB(LinUCB):\n    pass\n')
    registered = dict(agents.REGISTRY)

    def forget():                                               # a fresh process: only --import registers it
        agents.REGISTRY.clear()
        agents.REGISTRY.update(registered)
        sys.modules.pop("my_linucb", None)

    try:
        assert study("--import", "my_linucb.py", agents_="My-LinUCB", budget=1) == 0
        hint = capsys.readouterr().out.rpartition("next: ")[2].strip()
        assert hint.startswith("ctxbandits bench run --import my_linucb.py --agents My-LinUCB --tuned study/tuned.json")
        forget()
        assert main([*shlex.split(hint.replace("DIR", "card"))[1:], "--suite", "tiny.toml", "--quiet"]) == 0
        hint = capsys.readouterr().out.rpartition("next: ")[2].strip()
        assert hint == "ctxbandits bench report --import my_linucb.py card"
        forget()
        assert main(shlex.split(hint)[1:]) == 0 and (folder / "card" / "scorecard.html").exists()
    finally:
        forget()


# --- a named track's tuned twin ------------------------------------------------------------------

def test_a_named_tracks_study_plays_its_cells_ships_into_its_own_file_and_is_its_tuned_twin(package, capsys):
    """`bench tune --track short` plays the track's cells (one dropped, one cut) on the tune seeds,
    ships into tiny-v1-short.json at the suite's one budget, and `bench run --track short --tuned
    shipped` plays those configurations as track "short-tuned", reported as tuned."""
    from gym_ctxbandits.bench import suite

    Path("tiny.toml").write_text(Path("tiny.toml").read_text() + '\n[tracks.short]\nhorizons = { s0-linear = 30 }\n'
                                 'drop = ["s4-changing-1"]\n')
    assert study("--ship", agents_="LinUCB", budget=2) == 0                 # the report track's file: budget 2
    one_line_error(["bench", "tune", "--suite", "tiny.toml", "--agents", "LinTS", "--budget", "1", "--out", "s",
                    "--track", "short", "--ship"], capsys, "tiny-v1.json's agents are tuned at budget 2", "--budget 2")
    assert study("--ship", "--track", "short", agents_="LinTS", budget=2, out="short") == 0
    assert "--track short --agents LinTS" in capsys.readouterr().out       # the next step: its tuned references
    record = json.loads(Path("short/tuned.json").read_text())
    assert record["track"] == "short" and record["cells"] == {
        "s0-linear": {"env": "CtxBandit/Linear-v0", "kwargs": {}, "horizon": 30}}
    assert seeds_under(Path("short")) == set(TUNE_SEEDS)
    assert {len(load_results(m.parent)) for m in Path("short").rglob("manifest.json")} == {30 * len(TUNE_SEEDS)}
    shipped = json.loads((package.parent / "tiny-v1-short.json").read_text())
    assert shipped["track"] == "short" and list(shipped["agents"]) == ["LinTS"]
    assert json.loads(package.read_text())["agents"].keys() == {"LinUCB"}   # the report track's file untouched
    s = suite.load("tiny.toml")
    assert tune.tuned_agents(s) == {"LinUCB": ("report", json.loads(package.read_text())["agents"]["LinUCB"]),
                                    "LinTS": ("short", shipped["agents"]["LinTS"])}
    # the configurations chosen on the short track play its tuned twin, never the report track
    one_line_error(["bench", "run", "--suite", "tiny.toml", "--agents", "LinTS", "--tuned", "short/tuned.json",
                    "--out", "card"], capsys, "chosen on the short track", "--track short")
    one_line_error(["bench", "run", "--suite", "tiny.toml", "--agents", "LinTS", "--track", "short-tuned",
                    "--out", "card"], capsys, "--track short --tuned FILE")
    assert main(["bench", "run", "--suite", "tiny.toml", "--agents", "LinTS", "--track", "short", "--tuned",
                 "shipped", "--out", "card", "--quiet"]) == 0
    bench = json.loads(Path("card/bench.json").read_text())
    assert bench["track"] == "short-tuned" and bench["tuned"]["configs"] == {"LinTS": shipped["agents"]["LinTS"]["config"]}
    assert seeds_under(Path("card")) == set(REPORT_SEEDS)
    assert main(["bench", "report", "--out", "card"]) == 0
    card = json.loads(Path("card/scorecard.json").read_text())
    assert card["tracks"]["LinTS"] == "tuned (budget 2)" and list(card["cells"]) == ["s0-linear"]


def test_the_old_neural_reason_is_removed_naming_its_replacement():
    with pytest.raises(AttributeError, match=r"removed in 0\.10\.0.*tune\.untuned\(suite\)"):
        tune.NEURAL
    with pytest.raises(AttributeError, match="no attribute 'NOPE'"):
        tune.NOPE


# A built twin's agent and cell that the reproduction test reruns: cheap, and run by its references,
# not copied from another file's.
TWIN_CELLS = {"glm-tuned": ("LinUCB", "s3-quadratic-pool"), "glm-short-tuned": ("LinUCB", "s0-linear"),
              "bounded-tuned": ("NeuralLog-UCB-1", "s1-bernoulli-logistic"), "neural-tuned": ("LinTS", "s4-changing-1")}


def built_twins() -> list[str]:
    from gym_ctxbandits.bench import references, suite

    return references.built_twins(suite.load(BUILT))


def test_every_built_twin_has_a_cell_to_reproduce():
    assert set(built_twins()) == set(TWIN_CELLS), \
        "a tuned twin built or removed: name a cheap cell of its own for the reproduction test in TWIN_CELLS"


@pytest.mark.parametrize("twin", sorted(TWIN_CELLS))
def test_a_tracks_tuned_twin_plays_the_shipped_configurations_and_reproduces_exactly(twin, tmp_path):
    """A twin's references, on the default suite and on bakeoff-v1, pin every tuned file they
    played (a tuned file changed makes them stale: this fails, naming the command) and hold Random
    and every agent tuned on the track or the report track at its one configuration of the suite;
    and a cell bakeoff-v1's twin ran, not copied, of an agent's tuned configuration (LinUCB on the
    GLM track's s3-quadratic-pool at 1,000 rounds and the short GLM track's s0-linear at 500,
    NeuralLog-UCB-1 on the bounded track's s1-bernoulli-logistic at 2,000, LinTS on the neural
    track's s4-changing-1 at 500) gives the shipped rows (bakeoff-v2 copies them)."""
    from gym_ctxbandits.bench import references, suite
    from gym_ctxbandits.bench.suite import base_track

    track = base_track(twin)
    for shipped in (suite.load(suite.DEFAULT), suite.load(BUILT)):     # BUILT last: its rows are rerun
        where = references.folder(shipped, twin)
        manifest = references.read(where, shipped, track=twin)
        played = tune.played(shipped, track)
        command = f"`ctxbandits bench regen --suite {shipped.key} --track {track} --tuned shipped"
        assert manifest["tuned_file"] == tune.pins(played), f"a tuned file changed: rebuild {command}` (its agents)"
        assert set(manifest["agents"]) == {"Random", *played["agents"]}, \
            f"an agent without {twin} references: {command} --agents NAME`"
        assert all(manifest["agents"][a]["config"] == e["config"] for a, e in played["agents"].items())
    agent, cell = TWIN_CELLS[twin]
    cell = {c.id: c for c in shipped.track(track)[0]}[cell]
    assert cell.id not in manifest["agents"][agent].get("reused", {}).get("cells", ())
    run(EnvSpec(cell.env, cell.kwargs), AgentSpec(agent, played["agents"][agent]["config"]),
        seeds=REPORT_SEEDS, horizon=cell.horizon, log_every=cell.log_every, out=tmp_path / cell.id)
    mine = references.checkpoints(load_results(tmp_path / cell.id)).reset_index(drop=True)
    table = references.table(where, manifest, agent)
    theirs = table[(table["cell"] == cell.id) & (table["seed"] < 1003)].reset_index(drop=True)
    assert len(mine) == len(theirs) > 3 * 10
    for column in ("seed", "round", "cum_regret"):
        np.testing.assert_array_equal(mine[column], theirs[column], err_msg=f"{agent} on {cell.id}: {column}")


@pytest.mark.tables
def test_the_docs_tables_of_the_tuned_twins_are_their_references():
    """Every named track's tuned twin with references has its leaderboard (the default suite's) and
    references table (bakeoff-v1's, where they were run) in docs/bench_tracks.md (`python
    scripts/make_tables.py` writes them); the GLM track's is built."""
    from gym_ctxbandits.bench import leaderboard, references, suite

    shipped, built, twins = suite.load(suite.DEFAULT), suite.load(BUILT), built_twins()
    assert twins == references.built_twins(shipped)
    for twin in twins:
        board = leaderboard.card(shipped, track=twin)
        assert board["tracks"]["Random"] == "defaults" and board["tracks"]["LinUCB"] == "tuned (budget 6)"
        for name, table in ((f"leaderboard-{twin}", leaderboard.markdown(board)), (f"references-{twin}", (
                references.markdown_table(references.read(references.folder(built, twin), built, track=twin))))):
            assert shown(name) == table, \
                f"docs/bench_tracks.md's {name} table is stale: run `python scripts/make_tables.py`"


def test_a_study_on_a_new_suite_version_inherits_the_former_ones_where_it_would_replay_it():
    """On bakeoff-v2 a study of LinUCB (no horizon) would play every configuration as bakeoff-v1's
    did, so `tune.inherited` gives v1's shipped entry, saying where from; BaSE is given the cell's
    horizon on v2, and another budget or the quick track is another study: those run."""
    from gym_ctxbandits.bench import suite

    one, two = suite.load("bakeoff-v1"), suite.load("bakeoff-v2")
    head = tune.Study(two, ".").head(6)
    spaces = {a: tune.space_of(a) for a in ("LinUCB", "BaSE")}
    found = tune.inherited(two, head, "LinUCB", spaces["LinUCB"], tune.defaults_in("LinUCB", spaces["LinUCB"]),
                           "halton")
    v1 = tune.read(tune.shipped(one))["agents"]["LinUCB"]
    assert {k: v for k, v in found.items() if k != "inherited"} == v1
    assert found["inherited"]["from"] == "bakeoff-v1 (tuned/bakeoff-v1.json)"
    assert tune.inherited(two, head, "BaSE", spaces["BaSE"], tune.defaults_in("BaSE", spaces["BaSE"]), "halton") is None
    for other in (tune.Study(two, ".").head(5), tune.Study(two, ".", quick=True).head(6)):
        assert tune.inherited(two, other, "LinUCB", spaces["LinUCB"], tune.defaults_in("LinUCB", spaces["LinUCB"]),
                              "halton") is None
    assert tune.inherited(two, head, "LinUCB", spaces["LinUCB"], tune.defaults_in("LinUCB", spaces["LinUCB"]),
                          "tpe") is None
    assert tune.inherited(one, tune.Study(one, ".").head(6), "LinUCB", spaces["LinUCB"],
                          tune.defaults_in("LinUCB", spaces["LinUCB"]), "halton") is None     # v1 has no former


def test_a_new_package_file_keeps_the_studys_horizon_to_agents(package):
    """A study of a suite that gives agents the cell's horizon ships into a new package file that
    says so, so the configurations play on that suite (`bench run --tuned shipped`), never on one
    that does not (0.12.0 fixed the file made without the key, which its own suite then refused)."""
    Path("tiny.toml").write_text(Path("tiny.toml").read_text().replace('quick = {', 'horizon_to_agents = true\nquick = {'))
    assert study("--ship", agents_="BaSE", budget=2) == 0
    assert json.loads(package.read_text())["horizon_to_agents"] is True
    assert main(["bench", "run", "--suite", "tiny.toml", "--agents", "BaSE", "--tuned", "shipped", "--out", "card",
                 "--quiet"]) == 0
