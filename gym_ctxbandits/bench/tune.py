"""Fair tuning: one configuration per agent per suite, chosen on the tune seeds only, with the same
budget for every agent (Bietti et al. 2021; Eimer et al. 2023, docs/tuning.md).

An agent's class declares its search space beside its hyper-parameters (`search_space`,
agents/params.py). A study evaluates `budget` configurations of it, the defaults always the first,
on every cell of the suite and its `tune_seeds` (never a report seed); the objective is the mean
over cells of the agent's regret over Random's on the same seeds (the replay, where clicks are
the measure: 2 - clicks / Random's, so Random is 1 there too and lower is better). Without Optuna
the other configurations are a scrambled Halton design of the space with a fixed seed (its first
points are those of any smaller budget); with Optuna (`pip install -e ".[tune]"`), TPE with a
fixed seed, its study kept in `OUT/optuna.db`. Every configuration's runs are ordinary results
folders, `OUT/<agent>/<config id>/<cell>/` (Random's once, `OUT/Random/<cell>/`), so a study run
again reuses what it finished, and `OUT/costs.json` keeps each cell's and configuration's CPU seconds
as first measured. `OUT/tuned.json` records, per agent, the space, every candidate
with its objective, and the one chosen; `bench run --tuned` plays those on the report seeds, and
`ship` merges them into the package's file of the suite (`bench tune --ship`), the tuned track's.
A study of a named track (`bench tune --track glm`, for agents that cannot afford the report
track) plays that track's cells on the tune seeds, and ships into the track's own file
(`tuned/<suite key>-glm.json`), the configurations of its tuned twin "glm-tuned". On a new
version of a suite, an agent whose study would replay a former version's shipped one run for run
(`inherited`: an agent that takes no `horizon`, on bakeoff-v2) takes that study instead of
running it again.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from gym_ctxbandits.bench.run import (
    BASELINE,
    baseline,
    cpu_clock,
    for_cell,
    play_cells,
    slug,
)
from gym_ctxbandits.bench.suite import (
    DEFAULT,
    SUITES,
    Suite,
    SuiteError,
    base_track,
    earlier,
)
from gym_ctxbandits.experiment import AgentSpec, is_replay

FILE = "tuned.json"
COSTS = "costs.json"      # each cell's and configuration's CPU seconds as first measured (a rerun reads runs back)
TUNED = Path(__file__).parent / "tuned"           # the package's tuned configurations, one file per suite
SEED = 0                                          # of the Halton scrambling and of TPE
OBJECTIVE = ("mean over cells of the agent's final regret / Random's on the tune seeds (the replay: 2 - clicks / "
             "Random's); lower is better, Random = 1")
NO_PARAMS = {"seed", "dim", "device", "dtype"}
SAMPLERS = {"halton": "scrambled-halton", "tpe": "optuna-tpe"}   # --sampler: the name a tuned file records
HEAD = ("suite", "suite_file", "quick", "tune_seeds", "cells", "budget", "objective")   # what a study was run on
                                                  # (and "track", a named one: a report-track file names none)


class TuneError(ValueError):
    """A tuning study that cannot run as asked."""


def agent_class(name: str):
    import agents

    return agents.base.agent_class(name)


def space_of(name: str, override: dict | None = None) -> dict:
    """`name`'s search space: `override` (checked against its hyper-parameters), else its class's."""
    from agents.params import SPACE_SYNTAX, keyword_parameters, search_space

    cls = agent_class(name)
    takes = [p.name for p in keyword_parameters(cls) if p.name not in NO_PARAMS]
    if override:
        if unknown := sorted(set(override) - set(takes)):
            raise TuneError(f"--space names {', '.join(unknown)}, which {name} does not take; its hyper-parameters "
                            f"are {', '.join(takes)}")
        return override
    if not takes:
        raise TuneError(f"{name} has no hyper-parameters: nothing to tune (its defaults are its tuned track)")
    if not (space := search_space(cls)):
        raise TuneError(f"{name} declares no search space, so `bench tune` cannot search it: give its class "
                        "`search_space = {'lam': LogUniform(0.01, 100), ...}` (agents/params.py), or pass --space "
                        f"({SPACE_SYNTAX})")
    return space


def defaults_in(name: str, space: dict) -> dict:
    """The constructor's defaults of the searched hyper-parameters, each checked to lie in the space."""
    from agents.params import defaults

    found = defaults(agent_class(name), space)
    if outside := [f"{k}={v!r} ({space[k]})" for k, v in found.items() if not space[k].contains(v)]:
        raise TuneError(f"{name}'s default {', '.join(outside)} is outside its search space: widen the space so "
                        "the defaults are one of the candidates")
    return found


def halton(space: dict, defaults: dict, budget: int) -> list[dict]:
    """The defaults and budget - 1 points of a scrambled Halton design (fixed seed) over `space`:
    the first points of one sequence, so a larger budget keeps a smaller one's configurations."""
    from scipy.stats import qmc

    points = qmc.Halton(d=len(space), scramble=True, seed=SEED).random(budget - 1) if budget > 1 else ()
    return [defaults, *({n: s.value(u) for (n, s), u in zip(space.items(), row)} for row in points)]


def config_id(config: dict) -> str:
    """A configuration's folder name: a hash of its values (the same values, the same folder)."""
    return "cfg-" + hashlib.sha256(json.dumps(config, sort_keys=True).encode()).hexdigest()[:10]


class Study:
    """One suite's tuning folder: its track (cells, tune seeds), Random's cached values, and the
    evaluation of an agent's configuration on it (resumable, through the comparison runner).
    `track`: the report track's cells (default) or a named track's (the quick one with `quick`)."""

    def __init__(self, suite: Suite, out, quick: bool = False, progress=print, track: str = "report", **run_options):
        self.suite, self.out, self.quick, self.progress, self.run_options = suite, Path(out), quick, progress, run_options
        self.track = base_track(track)
        if quick and self.track != "report":
            raise TuneError(f"--quick is the quick track's cells; --track {track} is another track's: give one of them")
        try:
            self.cells = suite.tuning(self.track, quick)     # the held-out tune_cells where the suite has them
        except SuiteError as err:
            raise TuneError(str(err)) from None
        self.seeds = list(suite.tune_seeds[:suite.quick_seeds] if quick else suite.tune_seeds)
        if shared := sorted(set(self.seeds) & set(suite.report_seeds)):
            raise TuneError(f"tune seeds {shared[:5]} are report seeds: a tuner never sees a report seed")
        self._random = None

    def head(self, budget: int) -> dict:
        """The header of this study's tuned file (HEAD): what its configurations were chosen on."""
        path = self.suite.path and self.suite.path.resolve()
        file = None if path is None or path.parent == SUITES.resolve() else str(path)
        return {"suite": self.suite.key, "suite_file": file, "quick": self.quick, "tune_seeds": self.seeds,
                "cells": {c.id: c.spec for c in self.cells},
                "budget": budget, "objective": OBJECTIVE, **({"track": self.track} if self.track != "report" else {}),
                **({"horizon_to_agents": True} if self.suite.horizon_to_agents else {})}

    def _play(self, spec: AgentSpec, folder: Path) -> dict[str, np.ndarray]:
        """Run `spec` on every cell and tune seed into `folder`/<cell>; each cell's final (regret or
        reward) per seed."""
        from gym_ctxbandits.bench.report import finals

        key = f"{slug(spec.name)}/{config_id(spec.kwargs)}"
        play_cells([(spec.name, for_cell(spec, cell, self.suite), cell, folder / cell.id) for cell in self.cells],
                   self.seeds, self.run_options, lambda _, cell, wall, cpu: self._keep(f"{key}/{cell.id}", cpu))
        return {cell.id: finals(folder.parent, folder.name, cell.id, self.seeds)["reward" if is_replay(cell.env)
                                                                                else "regret"] for cell in self.cells}

    def _costs(self) -> dict[str, float]:
        """OUT/costs.json: CPU seconds by "agent/config" and "agent/config/cell" (empty before any)."""
        path = self.out / COSTS
        return json.loads(path.read_text()) if path.exists() else {}

    def _keep(self, key: str, cpu: float) -> float:
        """OUT/costs.json's entry `key`: `cpu` CPU seconds, written when first measured, then kept."""
        costs = self._costs()
        if key not in costs:
            costs[key] = round(cpu, 2)
            (self.out / COSTS).write_text(json.dumps(costs, indent=1, sort_keys=True) + "\n")
        return costs[key]

    def cost(self, name: str, config: dict, cpu: float) -> float:
        """The CPU seconds of `name` with `config` on this study, kept in OUT/costs.json when first
        known, so a study cut short and run again, which reads its finished runs back in seconds,
        still records what each configuration cost. Each cell's seconds are kept as the cell ends
        (`_play`), so a configuration the cut fell in counts its cells of both runs; `cpu`, this
        run's seconds for the whole configuration, counts where it is more (a cell that failed and
        so kept nothing)."""
        key = f"{slug(name)}/{config_id(config)}"
        cells = sum(v for k, v in self._costs().items() if k.startswith(f"{key}/"))
        return self._keep(key, max(cpu, cells))

    def random(self) -> dict[str, np.ndarray]:
        """Random's final values per cell and tune seed: run once into OUT/Random, then kept."""
        if self._random is None:
            self._random = self._play(baseline(self.suite), self.out / BASELINE)     # a random list on a ranking suite
        return self._random

    def evaluate(self, name: str, config: dict) -> tuple[float, dict[str, float], str | None]:
        """(objective, per-cell loss, failure) of agent `name` with hyper-parameters `config`. An
        agent that diverges under `config` (a FloatingPointError: its scores turned NaN or inf)
        fails it: objective NaN, no losses, the error's message; the study goes on, and never
        chooses it. Any other error stops the study."""
        try:
            mine = self._play(AgentSpec(name, config), self.out / slug(name) / config_id(config))
        except FloatingPointError as err:
            return float("nan"), {}, str(err)
        losses = {}
        for cell in self.cells:
            a, r = mine[cell.id].mean(), self.random()[cell.id].mean()
            with np.errstate(divide="ignore", invalid="ignore"):
                losses[cell.id] = float(2 - a / r if is_replay(cell.env) else a / r) if r else float("nan")
        scored = [v for v in losses.values() if np.isfinite(v)]
        return (float(np.mean(scored)) if scored else float("nan")), losses, None


def _record(config, objective, losses, cpu, failed: str | None = None) -> dict:
    return {"id": config_id(config), "config": config, "objective": objective, "cells": losses,
            "cpu_seconds": round(cpu, 2), **({"failed": failed} if failed else {})}


def _said(record: dict) -> str:
    """A candidate's outcome for the progress line: its objective, or why it failed."""
    return f"failed ({record['failed']})" if "failed" in record else f"objective {record['objective']:.4f}"


def search_halton(study: Study, name: str, space: dict, defaults: dict, budget: int) -> list[dict]:
    out = []
    for i, config in enumerate(halton(space, defaults, budget)):
        start = cpu_clock()
        objective, losses, failed = study.evaluate(name, config)
        out.append(_record(config, objective, losses, study.cost(name, config, cpu_clock() - start), failed))
        if study.progress:
            study.progress(f"{name} {i + 1}/{budget} {config}: {_said(out[-1])}")
    return out


def search_tpe(study: Study, name: str, space: dict, defaults: dict, budget: int) -> list[dict]:
    """TPE (Optuna) with a fixed seed, the defaults enqueued first; the study lives in
    OUT/optuna.db, so a rerun continues it: only its finished trials count towards the budget."""
    import optuna
    from optuna.trial import TrialState

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    distributions = {n: s.distribution() for n, s in space.items()}
    storage = f"sqlite:///{(study.out / 'optuna.db').resolve()}"
    tpe = optuna.create_study(study_name=f"{study.suite.key}{'-quick' if study.quick else ''}:{name}", storage=storage,
                              sampler=optuna.samplers.TPESampler(seed=SEED), direction="minimize", load_if_exists=True)
    for trial in tpe.get_trials(states=(TrialState.RUNNING,)):      # cut short by an interruption: run again
        tpe.tell(trial.number, state=TrialState.FAIL)
    if not tpe.get_trials(states=(TrialState.COMPLETE, TrialState.WAITING)):
        tpe.enqueue_trial(defaults)                                 # the defaults are always a candidate
    records = {}
    for trial in tpe.get_trials(states=(TrialState.COMPLETE, TrialState.FAIL)):
        if "record" in trial.user_attrs:                            # a failed configuration counts too
            records[trial.number] = trial.user_attrs["record"]
    while len(records) < budget:
        trial = tpe.ask(distributions)
        config = {n: trial.params[n] for n in space}
        start = cpu_clock()
        objective, losses, failed = study.evaluate(name, config)
        records[trial.number] = _record(config, objective, losses, study.cost(name, config, cpu_clock() - start),
                                        failed)
        trial.set_user_attr("record", records[trial.number])
        if failed:
            tpe.tell(trial, state=TrialState.FAIL)
        else:
            tpe.tell(trial, objective)
        if study.progress:
            study.progress(f"{name} {len(records)}/{budget} {config}: {_said(records[trial.number])}")
    return [records[k] for k in sorted(records)][:budget]


def sampler_name(sampler: str) -> str:
    """"halton" or "tpe" for the --sampler choice ("auto": tpe when Optuna is installed)."""
    if sampler == "auto":
        try:
            import optuna
            return "tpe"
        except ImportError:
            return "halton"
    if sampler == "tpe":
        try:
            import optuna  # noqa: F401
        except ImportError:
            raise TuneError('--sampler tpe needs Optuna: pip install optuna, or pip install -e ".[tune]" in the '
                            "gym-ctxbandits clone (or --sampler halton, the deterministic design)") from None
    return sampler


def read(path) -> dict:
    """A tuned-configuration file (`bench tune`'s tuned.json, or a shipped one)."""
    path = Path(path)
    if not path.is_file():
        raise TuneError(f"no tuned-configuration file {str(path)!r}: `ctxbandits bench tune --out DIR` writes "
                        f"DIR/{FILE}")
    return {**json.loads(path.read_text()), "source": str(path)}


def shipped(suite: Suite, track: str = "report") -> Path:
    """The package's tuned configurations of `suite`'s `track` (the report track's, or a named
    one's: `tuned/<suite key>-<track>.json`; a tuned twin's are its track's)."""
    track = base_track(track)
    return TUNED / (f"{suite.key}.json" if track == "report" else f"{suite.key}-{track}.json")


def played(suite: Suite, track: str = "report") -> dict:
    """The package's tuned configurations that `track`'s tuned twin plays, as one tuned record: on
    the report track its file; on a named track one configuration per agent per suite, the one
    chosen on the track itself (its file, `bench tune --track`) or else on the report track, each
    entry saying where (`"track"`) and `"files"` naming every file read (`pins` gives their SHA-256)."""
    base = base_track(track)
    found = files(suite)
    if base == "report" or base not in found and "report" not in found:
        return read(shipped(suite, base))           # (no file: read's error says how to make one)
    mine = found.get(base, found["report"])
    used = [found[t] for t in dict.fromkeys(("report", base)) if t in found]
    return {**{k: v for k, v in mine.items() if k not in ("agents", "source")},
            **Study(suite, ".", track=base).head(mine["budget"]),
            "agents": {a: {**e, "track": t} for f, t in ((f, track_of(f)) for f in used) for a, e in f["agents"].items()},
            "source": "package: " + " + ".join(f"tuned/{Path(f['source']).name}" for f in used),
            "files": [f["source"] for f in used]}


def pins(record: dict) -> dict | list:
    """What a tuned-track reference pins of the tuned configurations it plays: the file's name and
    SHA-256 (a list of them for `played`'s record of a named track)."""
    def pin(path):
        return {"file": Path(path).name, "sha256": hashlib.sha256(Path(path).read_bytes()).hexdigest()}
    return [pin(f) for f in record["files"]] if "files" in record else pin(record["source"])


def track_of(record: dict) -> str:
    """The track a study or tuned file's configurations were chosen on ("report" when it names none)."""
    return record.get("track") or "report"


def tune(suite: Suite, agents: Sequence[str], budget: int, out, quick: bool = False, sampler: str = "auto",
         space: dict | None = None, imports: Sequence[str] = (), progress=print, track: str = "report",
         **run_options) -> dict:
    """Tune each of `agents` with `budget` configurations on `suite`'s tune seeds into folder `out`;
    write and return OUT/tuned.json. `space` replaces the declared search space (one agent only);
    `track`: the cells played, the report track's (default) or a named track's."""
    from gym_ctxbandits.user_modules import import_modules

    if not isinstance(budget, int) or isinstance(budget, bool) or budget < 1:
        raise TuneError(f"--budget must be an integer >= 1 (configurations per agent, the defaults one of them), "
                        f"got {budget!r}")
    if space and len(agents) != 1:
        raise TuneError("--space is one agent's search space: name one agent with --agents")
    if BASELINE in agents:
        raise TuneError(f"{BASELINE} has no hyper-parameters: nothing to tune (it is run once as the baseline)")
    import_modules(imports)
    spaces = {a: space_of(a, space) for a in agents}          # every agent checked before anything runs
    starts = {a: defaults_in(a, spaces[a]) for a in agents}
    kind = sampler_name(sampler)
    out = Path(out)
    study = Study(suite, out, quick, progress, track, imports=imports, **run_options)
    head = study.head(budget)
    if (out / FILE).exists():
        record = read(out / FILE)
        record.pop("source")
        if theirs := {k: record.get(k) for k in head if record.get(k) != head[k]}:
            raise TuneError(f"{out / FILE} is a study of {', '.join(f'{k}={v}' for k, v in theirs.items())}, not this "
                            f"one: one folder, one suite, track and budget (every agent gets the same budget); give "
                            "another --out")
    else:
        record = {**head, "agents": {}}
    out.mkdir(parents=True, exist_ok=True)
    start = cpu_clock()
    study.random()                                          # Random first, so no candidate's cost includes it
    record.setdefault("random_cpu_seconds", study.cost(BASELINE, {}, cpu_clock() - start))
    search = search_tpe if kind == "tpe" else search_halton
    for name in agents:
        if found := inherited(suite, head, name, spaces[name], starts[name], kind):
            progress(f"{name}: {found['inherited']['from']}'s study, which this one would replay run for run")
            record["agents"][name] = found
            record["agents"] = dict(sorted(record["agents"].items()))
            (out / FILE).write_text(json.dumps(record, indent=1) + "\n")
            continue
        candidates = search(study, name, spaces[name], starts[name], budget)
        first = {c["id"]: c["cpu_seconds"] for c in record["agents"].get(name, {}).get("candidates", ())}
        for c in candidates:                                # a reused configuration keeps its first run's cost
            c["cpu_seconds"] = first.get(c["id"], c["cpu_seconds"])
        best = min(candidates, key=lambda c: (not np.isfinite(c["objective"]), c["objective"]))
        if "failed" in best:
            raise TuneError(f"every configuration of {name} failed, e.g. {best['config']}: {best['failed']}; narrow "
                            f"its search space (--space) to where it does not diverge")
        record["agents"][name] = {
            "config": best["config"], "objective": best["objective"], "default_objective": candidates[0]["objective"],
            "sampler": SAMPLERS[kind], "seed": SEED,
            "space": {k: v.to_json() for k, v in spaces[name].items()}, "defaults": starts[name],
            "candidates": candidates, "cpu_seconds": round(sum(c["cpu_seconds"] for c in candidates), 2)}
        record["agents"] = dict(sorted(record["agents"].items()))
        (out / FILE).write_text(json.dumps(record, indent=1) + "\n")
    return record



def inherited(suite: Suite, head: dict, name: str, space: dict, defaults: dict, kind: str) -> dict | None:
    """`name`'s entry in the package's tuned file of a former version of `suite` (`suite.earlier`),
    same track, when the study `head` describes would replay it run for run: the same cells, tune
    seeds, budget and objective, the same search space, defaults, sampler and seed, and the agent
    given the same kwargs by both versions at each of its configurations on every cell
    (`bench.run.for_cell`: bakeoff-v2 gives an agent that reads a `horizon` the cell's), so every
    configuration scores as it did. The entry
    says where it came from (`inherited`); None where nothing fits."""
    cells = [c for c in suite.tuning(track_of(head)) if c.id in head["cells"]]
    for old in earlier(suite):
        path = shipped(old, track_of(head))
        file = read(path) if path.exists() else {"agents": {}}
        entry = file["agents"].get(name)
        if entry is None:
            continue
        if ([file.get(k) for k in HEAD if k != "suite"] != [head.get(k) for k in HEAD if k != "suite"]
                or track_of(file) != track_of(head)
                or [entry["sampler"], entry["seed"], entry["space"], entry["defaults"]]
                != [SAMPLERS[kind], SEED, {k: v.to_json() for k, v in space.items()}, defaults]
                or any(for_cell(AgentSpec(name, k["config"]), c, old).kwargs
                       != for_cell(AgentSpec(name, k["config"]), c, suite).kwargs
                       for k in entry["candidates"] for c in cells)):
            continue
        return {**entry, "inherited": {"from": f"{old.key} (tuned/{path.name})",
                                       "sha256": hashlib.sha256(path.read_bytes()).hexdigest()}}
    return None


def _fits(head: dict, suite: Suite) -> Path:
    """`suite`'s package file of tuned configurations, once a study's `head` is checked to fit it:
    a shipped suite (a .toml path has no package file), not the quick track, and the file's budget
    (every shipped agent tuned at the same one), tune seeds, cells and objective; the file is the
    study's track's (`shipped`)."""
    if head["suite"] != suite.key:
        raise TuneError(f"the study is of {head['suite']}, not {suite.key}: ship it into its own suite's file")
    if head["suite_file"] is not None:
        raise TuneError(f"{suite.key} is read from {head['suite_file']}, not a shipped suite: only a shipped suite "
                        "(`ctxbandits bench suites`) has a package file of tuned configurations to ship into; play "
                        "the study's with `bench run --tuned OUT/tuned.json` instead")
    if head["quick"]:
        raise TuneError("a --quick study is a smoke run of the machinery, not a tuning: rerun it without --quick "
                        "(into another --out) to ship it")
    path = shipped(suite, track_of(head))
    for other in files(suite).values():
        if head["budget"] != other["budget"]:
            raise TuneError(f"{Path(other['source']).name}'s agents are tuned at budget {other['budget']}, this study "
                            f"at budget {head['budget']}: every shipped agent of a suite gets the same budget; rerun "
                            f"it with --budget {other['budget']} (into another --out)")
    if path.exists():
        file = read(path)
        if other := [k for k in (*HEAD, "track", "horizon_to_agents") if head.get(k) != file.get(k)]:
            raise TuneError(f"{path.name}'s {', '.join(other)} are not this study's: its agents were tuned on "
                            f"another protocol (the suite's file or the objective changed since); retune them all "
                            "into a new file rather than mix the two")
    return path


def shippable(suite: Suite, budget: int, quick: bool = False, track: str = "report") -> Path:
    """`suite`'s package file of `track`, once a study of it at `budget` is checked to fit it
    (`ship`): `bench tune --ship` asks before its study, so it refuses in a second what it would
    refuse after hours."""
    return _fits(Study(suite, ".", quick, track=track).head(budget), suite)


def ship(record: dict, suite: Suite, agents: Sequence[str], replace: bool = False) -> dict[str, str]:
    """Merge `agents`' entries of a study's `record` (tune's tuned.json) into the package's tuned
    file of `suite` (`shipped`): the configurations `bench run --tuned shipped` plays and `bench
    regen --tuned shipped` makes the tuned track's references of. The study must fit the file (one
    suite, tune seeds, cells, objective, and budget for every agent: `_fits`) and use its agents'
    sampler; a file not there yet is made from the study's header. An agent already shipped with the
    same configuration and objective stays as it is (a rerun ships nothing, and its references stay
    valid); another configuration replaces it only with `replace`, since the references of the one
    shipped then go stale. Agents stay sorted and the file in tune's format (indent 1), so a merge
    adds only its agents' lines. Returns each agent's fate: "added", "replaced" or "unchanged"."""
    path = _fits(record, suite)
    file = {k: v for k, v in read(path).items() if k != "source"} if path.exists() else \
        {**{k: record[k] for k in HEAD}, **{k: record[k] for k in ("track", "horizon_to_agents") if k in record},
         "agents": {}}
    if missing := [a for a in agents if a not in record["agents"]]:
        raise TuneError(f"the study holds no {', '.join(missing)}: tune it first (`--agents {','.join(missing)}`)")
    samplers = {e["sampler"] for f in (file, *files(suite).values()) for e in f["agents"].values()}
    if odd := [a for a in agents if samplers and record["agents"][a]["sampler"] not in samplers]:
        flags = {v: k for k, v in SAMPLERS.items()}
        raise TuneError(f"{', '.join(odd)} tuned by {record['agents'][odd[0]]['sampler']}, the shipped agents by "
                        f"{', '.join(sorted(samplers))}: one design for every agent; rerun it with --sampler "
                        f"{'/'.join(flags.get(s, s) for s in sorted(samplers))} (into another --out)")
    fate, changed = {}, []
    for name in agents:
        new, old = record["agents"][name], file["agents"].get(name)
        if old is None:
            fate[name] = "added"
        elif json.dumps([old["config"], old["objective"]]) == json.dumps([new["config"], new["objective"]]):
            fate[name] = "unchanged"
        elif replace:
            fate[name] = "replaced"
        else:
            changed.append((name, (f"{name}'s shipped configuration {old['config']} (objective "
                                   f"{old['objective']:.4f}) is not this study's {new['config']} "
                                   f"({new['objective']:.4f})")))
    if changed:
        raise TuneError(f"{'; '.join(why for _, why in changed)}: to ship it, rerun with --ship --replace and rebuild "
                        "its tuned-track references, which go stale (`ctxbandits bench regen --tuned shipped --agents "
                        f"{','.join(name for name, _ in changed)}`)")
    if merged := {a: record["agents"][a] for a, f in fate.items() if f != "unchanged"}:
        file["agents"] = dict(sorted({**file["agents"], **merged}.items()))
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(file, indent=1) + "\n")
    return fate


# Why an agent of the zoo has no search space (docs/tuning.md's table of spaces says it).
NO_SPACE = {
    "GLM-ES-DT": "a doubling trick over GLM-ES, whose ensemble grows per epoch: tune GLM-ES",
    "Neural-ES-DT": "a doubling trick over Neural-ES: tune Neural-ES",
    "GPT-Ensemble++": "text envs only, not in the suite; each configuration fine-tunes a language model (a GPU's job)",
    "GPT-Greedy": "text envs only, not in the suite; each configuration fine-tunes a language model (a GPU's job)",
}


# Why an agent with a search space has no tuned configuration of a shipped suite, beyond "not yet"
# (which `untuned` words with the study's cost on the agent's track). A test requires every
# registered agent to be tuned, to have no space, or to have a reason.
_NO_REFERENCES = dict.fromkeys(("OAM", "OSSB"), "no defaults-track references to compare with (the redrawn arms of "
                               "21 cells, and CVXPY: references.WHY_ABSENT), so nothing a tuned one would be set beside")
WHY_UNTUNED = {
    "bakeoff-v1": {
        **_NO_REFERENCES,
        "repGLM-FPL": "tuned on bakeoff-v2 only, the default suite: it reads the cell's horizon, which bakeoff-v2 gives "
                      "it and bakeoff-v1 does not, so bakeoff-v1's would be a study of its own",
    },
    "bakeoff-v2": _NO_REFERENCES,
}
# The command that tunes an agent at the shipped file's budget and ships it (`untuned` words it).
STUDY = "ctxbandits bench tune --agents {name} --budget {budget} --sampler halton --out results/tune --ship"


def files(suite: Suite) -> dict[str, dict]:
    """The package's tuned files of `suite`, by track: the report track's and each named track's
    that has one."""
    return {t: read(shipped(suite, t)) for t in ("report", *suite.tracks) if shipped(suite, t).exists()}


def tuned_agents(suite: Suite) -> dict[str, tuple[str, dict]]:
    """Every agent of the package's tuned files of `suite`: its track and its entry there (an agent
    is tuned on one track of a suite, the report track if it can afford it)."""
    return {a: (t, e) for t, file in reversed(files(suite).items()) for a, e in file["agents"].items()}


def home(suite: Suite, name: str) -> tuple[str, dict] | None:
    """The track of `suite` an agent's tuning study would play and its references' entry there: the
    report track if its references hold the agent, else the first named track's that do; None
    without references."""
    from gym_ctxbandits.bench import references

    for track in ("report", *suite.tracks):
        try:
            entry = references.read(references.folder(suite, track), suite, verify=False, track=track)["agents"]
        except (references.ReferenceMismatch, FileNotFoundError):
            continue
        if name in entry:
            return track, entry[name]
    return None


def untuned(suite: Suite) -> dict[str, str]:
    """Every registered agent with a search space but no configuration in the package's tuned files
    of `suite`, and why: WHY_UNTUNED, or "not tuned yet" with the cost of a study at the files'
    budget on the agent's `home` track (that many times its references' CPU-s there, or wall
    seconds on the accelerator they were made on: "for lack of a GPU" there, else "of time") and STUDY, the
    one command that tunes it and ships it (`--ship`; with `--device cuda` for an agent whose references
    were made on a GPU, and `--suite` for a suite other than the default)."""
    import agents

    budget = next((f["budget"] for f in files(suite).values()), 6)
    tuned = tuned_agents(suite)
    why = WHY_UNTUNED.get(suite.key, {})
    path = suite.path and suite.path.resolve()
    where = str(path) if path and path.parent != SUITES.resolve() else suite.key     # a file of one's own, or shipped
    named = "" if where == DEFAULT else f" --suite {where}"
    found = {}
    for name, entry in agents.REGISTRY.items():
        if name in tuned or name in NO_SPACE or name == BASELINE or not entry.__module__.startswith("agents."):
            continue
        if name in why:
            found[name] = why[name]
            continue
        cost, track, lack = "unmeasured", "", "time"
        if where := home(suite, name):
            gpu = "accelerator" in where[1]              # made on a GPU: tuned on one
            kind, unit = ("wall_seconds", f"s on {where[1]['accelerator']}") if gpu else ("cpu_seconds", "CPU-s")
            cost = sum(t for t in where[1][kind].values() if t is not None)
            cost = f"about {budget * cost:,.0f} {unit} ({budget} x its {where[0]} track references' {cost:,.0f})"
            track = ("" if where[0] == "report" else f" --track {where[0]}") + (" --device cuda" if gpu else "")
            lack = "a GPU" if gpu else "time"
        found[name] = (f"not tuned yet, for lack of {lack}: a study at budget {budget} costs {cost}; "
                       f"`{STUDY.format(name=name, budget=budget)}{track}{named}`")
    return found


def markdown_spaces(suite: Suite) -> str:
    """Every registered agent's search space and whether the package ships its tuned configuration
    of `suite` (and why not), as docs/tuning.md shows them (a test keeps the two equal)."""
    import agents

    budgets = {t: f["budget"] for t, f in files(suite).items()}
    tuned = tuned_agents(suite)
    why = untuned(suite)
    rows = ["| agent | search space | tuned configuration shipped |", "|---|---|---|"]
    for name in agents.REGISTRY:
        try:
            space = space_of(name)
            text = "; ".join(f"{k}: {v}" for k, v in space.items())
        except TuneError as err:
            text = "none: " + (NO_SPACE.get(name) or str(err).partition(": ")[2] or str(err))
        except ImportError:
            text = "(needs PyTorch to read)"
        track, entry = tuned.get(name, (None, None))
        on = "" if track in (None, "report") else f" on the {track} track"
        status = (f"budget {budgets[track]}{on}: {entry['config']}" if entry else
                  "n/a" if text.startswith("none") else "no (below)" if name in why else "not yet")
        rows.append(f"| {name} | {text} | {status} |")
    by_reason: dict[str, list[str]] = {}
    for name, reason in why.items():
        by_reason.setdefault(reason, []).append(name)
    late = {n: why[n].partition("costs about ")[2].partition(" (")[0] or "unmeasured" for n in why
            if why[n].startswith("not tuned yet")}
    lines = [f"Not tuned: {', '.join(names)}. Why: {reason}." for reason, names in by_reason.items()
             if not reason.startswith("not tuned yet")]
    if late:
        budget = next(iter(budgets.values()), 6)
        lacks = {why[n].partition("for lack of ")[2].partition(":")[0] for n in late}
        lack = ("time or, where the cost is a GPU's, of a GPU" if len(lacks) > 1 else lacks.pop() or "time")
        lines.append(f"Not tuned yet, for lack of {lack}: "
                     f"{', '.join(f'{n} ({c})' for n, c in late.items())}: a study at budget {budget} costs about "
                     f"that, {budget} times the agent's references' seconds (on the track it plays, on the GPU where "
                     f"they were made on one); `{STUDY.format(name='NAME', budget=budget)}` (and `--track NAME` for "
                     "an agent that plays a named track, `--device cuda` for a GPU's).")
    return "\n".join(rows + ([""] + lines if lines else []))


def __getattr__(name: str):
    """`NEURAL`, the reason once given for a neural agent without report-track references: removed in
    0.10.0 (deprecated in 0.9.0), an AttributeError naming `untuned`, which gives every untuned agent's
    reason and its study's cost on the track it plays."""
    if name == "NEURAL":
        raise AttributeError("gym_ctxbandits.bench.tune.NEURAL was removed in 0.10.0 (deprecated since 0.9.0): a "
                             "neural agent is tuned on the track it plays (`bench tune --track`); read "
                             "tune.untuned(suite) for why an agent has no tuned configuration")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
