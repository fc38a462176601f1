"""A benchmark suite: a named, versioned list of cells read from a TOML file of the package.

A cell is one problem of the bake-off: an env id with its kwargs, a horizon and the tags of the
report's spokes. A suite also fixes the seeds: `report_seeds` are the ones every agent's scorecard
runs on, `tune_seeds` the only ones a tuner may look at (Eimer et al. 2023: tuning and test seeds
disjoint), and loading refuses a suite whose two sets overlap. Its `quick` track plays every cell
for a few rounds on the first report seeds: a smoke run, not a result. A released suite never
changes: a changed cell is a new version, in a new file (`suites/NAME-vVERSION.toml`). A named
track (`[tracks.NAME]`, e.g. `glm`) may be added to a released file: the report seeds on the same
cells, some dropped and some at stated shorter horizons, for agents that cannot afford the report
track; it leaves the report track's cells as they are, and its scores are never mixed with them.
Every cell of a suite is of one kind of problem (`Suite.kind`): one-arm envs, or ranking envs
(ranking-v1), whose baseline Random plays a random list (run.baseline); a mix is refused.
Every track but the quick one has a tuned twin (`tuned_track`): its cells and seeds, each agent
playing its configuration tuned on them ("tuned" for the report track, "NAME-tuned" for a named one).
A suite whose file says `horizon_to_agents = true` gives an agent that reads a `horizon`
hyper-parameter the cell's (unless its configuration sets one); bakeoff-v1 does not: its agents
play their default horizons, as its references were made. bakeoff-v2 is bakeoff-v1 with that key.
A suite may hold out cells for tuning (`[[tune_cells]]`, as the Contextual Bandit Bake-off held out
datasets: pmlb-v1): `bench tune` then plays those cells (on the tune seeds) instead of the report
track's, and no track ever plays them; a suite without them tunes on its report cells, as before.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path

from gym_ctxbandits.experiment import seed_list

SUITES = Path(__file__).parent / "suites"
DEFAULT = "bakeoff-v2"     # since 0.14.0 (bakeoff-v1 until 0.13.0, which announced the change)
PMLB_TAGS = ("binary", "multiclass", "small", "medium", "large")     # pmlb-v1's: classes, and rows < 1k, < 10k, more
NONSTATIONARY_TAGS = ("abrupt", "drift", "k-armed")  # nonstationary-v1's: change points, drift, one-hot arms
RANKING_TAGS = ("cascade", "pbm", "dcm")        # ranking-v1's: the click model
TAGS = ("linear", "glm", "non-linear", "real-data", "action-sets", "non-stationary", "replay", "noise-scale", *PMLB_TAGS,
        *NONSTATIONARY_TAGS, *RANKING_TAGS)
TOP = {"name": str, "version": int, "description": str, "tune_seeds": (str, list), "report_seeds": (str, list),
       "quick": dict, "cells": list, "tracks": dict, "horizon_to_agents": bool, "tune_cells": list}
CELL = {"id": str, "env": str, "kwargs": dict, "horizon": int, "tags": list, "cost_s": (int, float), "why": str,
        "unscored": str}
QUICK = {"horizon": int, "seeds": int}
TRACK = {"description": str, "horizons": dict, "drop": list}
BUILTIN = ("report", "quick", "tuned")          # tracks every suite has (tuned: the report cells, tuned agents)
TUNED = "-tuned"                                # a named track's tuned twin: "glm-tuned"
CHECKPOINTS = 100    # rows kept per run: every horizon // 100 rounds (and the last)


class SuiteError(ValueError):
    """A suite file that cannot be used as written."""


@dataclass(frozen=True)
class Cell:
    """One problem of a suite: `env` with `kwargs` for `horizon` rounds; `cost_s` is the CPU seconds
    LinUCB took on it (every report seed, one core), `why` what it tests; `unscored`, when given,
    why the cell is shown on a scorecard but left out of its IQM scores (the replay: too few clicks
    to separate agents)."""

    id: str
    env: str
    kwargs: dict
    horizon: int
    tags: tuple[str, ...]
    cost_s: float | None = None
    why: str = ""
    unscored: str = ""

    @property
    def spec(self) -> dict:
        """What decides the cell's numbers (besides the seed and the agent): env, kwargs, horizon."""
        return {"env": self.env, "kwargs": self.kwargs, "horizon": self.horizon}

    @property
    def log_every(self) -> int:
        return max(1, self.horizon // CHECKPOINTS)


@dataclass(frozen=True)
class Track:
    """A named track of a suite: its cells less `drop`, those in `horizons` cut to that many rounds."""

    name: str
    horizons: dict
    drop: tuple[str, ...] = ()
    description: str = ""


@dataclass(frozen=True)
class Suite:
    name: str
    version: int
    cells: tuple[Cell, ...]
    tune_seeds: tuple[int, ...]
    report_seeds: tuple[int, ...]
    quick_horizon: int
    quick_seeds: int
    description: str = ""
    path: Path | None = field(default=None, compare=False)
    tracks: dict = field(default_factory=dict)
    horizon_to_agents: bool = False   # an agent that reads a `horizon` is given the cell's (bench.run.for_cell)
    tune_cells: tuple[Cell, ...] = ()  # held out for `bench tune`, played by no track (pmlb-v1)

    @property
    def key(self) -> str:
        return f"{self.name}-v{self.version}"

    @property
    def kind(self) -> str:
        """The kind of problem of every cell (`jobs.kind` of its env class): "arm", or "ranking" (the
        action a list of items: ranking-v1), which decides the agents that can play the suite and its
        baseline, Random (a random list on a ranking suite: run.baseline). A suite whose cells mix
        kinds is a SuiteError: one scorecard normalises every cell by one Random."""
        from gym_ctxbandits.jobs import env_creator, kind

        kinds: dict[str, list[str]] = {}
        for cell in (*self.cells, *self.tune_cells):
            kinds.setdefault(kind(env_creator(cell.env)), []).append(cell.id)
        if len(kinds) > 1:
            raise SuiteError(f"suite {self.key} mixes kinds of problem: " + "; ".join(
                f"{', '.join(ids[:3])}{' ...' * (len(ids) > 3)} {k}" for k, ids in sorted(kinds.items())) +
                             ": every cell of a suite must be of one kind (a suite of its own for the others)")
        return next(iter(kinds))

    def track(self, quick: bool | str) -> tuple[tuple[Cell, ...], tuple[int, ...]]:
        """The cells and seeds of a track: the report track (`quick` False, "report" or "tuned"),
        the quick one (True or "quick": horizons cut to the quick one, the first report seeds), or
        a named track of the file (its cells less the dropped ones, some at a shorter horizon; the
        report seeds), or its tuned twin ("NAME-tuned": the same). A cut cell's `cost_s` (LinUCB's at the full horizon) is None."""
        name = base_track(("quick" if quick else "report") if isinstance(quick, bool) else quick)
        if name == "report":
            return self.cells, self.report_seeds
        if name == "quick":
            cells = tuple(replace(c, horizon=min(c.horizon, self.quick_horizon), cost_s=None)
                          for c in self.cells)
            return cells, self.report_seeds[:self.quick_seeds]
        if name not in self.tracks:
            raise SuiteError(f"suite {self.key} has no track {name!r}; its tracks are "
                             f"{', '.join([*BUILTIN, *self.tracks])}")
        t = self.tracks[name]
        cells = tuple(c if c.id not in t.horizons else
                      replace(c, horizon=t.horizons[c.id], cost_s=None)
                      for c in self.cells if c.id not in t.drop)
        return cells, self.report_seeds

    def tuning(self, track: str = "report", quick: bool = False) -> tuple[Cell, ...]:
        """The cells a `bench tune` study of `track` plays: the held-out `tune_cells` where the suite
        has them (cut to the quick horizon with `quick`), else the track's own cells (`track`)."""
        if not self.tune_cells:
            return self.track(True if quick else track)[0]
        if base_track(track) != "report":
            raise SuiteError(f"suite {self.key} tunes on its held-out tune_cells, which no named track cuts: tune "
                             "on the report track (drop --track)")
        if quick:
            return tuple(replace(c, horizon=min(c.horizon, self.quick_horizon), cost_s=None) for c in self.tune_cells)
        return self.tune_cells


def is_tuned(track: str | None) -> bool:
    """Whether `track` is a tuned track: "tuned" (the report track's cells) or "NAME-tuned"."""
    return track is not None and (track == "tuned" or track.endswith(TUNED))


def tuned_track(track: str | None) -> str:
    """The tuned twin of a track: "tuned" for the report track (None), "NAME-tuned" for NAME."""
    if track in (None, "report", "tuned") or track.endswith(TUNED):
        return "tuned" if track in (None, "report", "tuned") else track
    if track == "quick":
        raise SuiteError("the quick track is a smoke run of the defaults: it has no tuned twin")
    return track + TUNED


def base_track(track: str) -> str:
    """The track whose cells and seeds a track plays: "report" for "tuned", NAME for "NAME-tuned"."""
    return "report" if track == "tuned" else track.removesuffix(TUNED) if track.endswith(TUNED) else track


def _check(where: str, value, types) -> None:
    types = types if isinstance(types, tuple) else (types,)
    if isinstance(value, bool) != (bool in types) or not isinstance(value, types):     # a bool is no int here
        names = " or ".join(t.__name__ for t in types)
        raise SuiteError(f"suite key {where!r} must be {names}, got {value!r}")


def _keys(where: str, table: dict, schema: dict, required) -> None:
    for key, value in table.items():
        if key not in schema:
            raise SuiteError(f"suite key '{where}{key}' is unknown; allowed keys: {', '.join(schema)}")
        _check(where + key, value, schema[key])
    for key in required:
        if key not in table:
            raise SuiteError(f"suite key '{where}{key}' is missing")


def parse(data: dict, path: Path | None = None) -> Suite:
    """A Suite from the dict of a suite file, or a SuiteError naming the bad key."""
    _keys("", data, TOP, ("name", "version", "tune_seeds", "report_seeds", "quick", "cells"))
    seeds = {}
    for key in ("tune_seeds", "report_seeds"):
        try:
            seeds[key] = tuple(seed_list(data[key], f"suite key {key!r}"))
        except ValueError as err:
            raise SuiteError(str(err)) from None
    if shared := sorted(set(seeds["tune_seeds"]) & set(seeds["report_seeds"])):
        raise SuiteError(f"suite {data['name']!r}: tune_seeds and report_seeds share seeds {shared[:5]}; a tuner must "
                         "never see a report seed: make the two ranges disjoint (a new suite version)")
    _keys("quick.", data["quick"], QUICK, QUICK)
    if data["quick"]["seeds"] < 1 or data["quick"]["horizon"] < 1:
        raise SuiteError("suite keys 'quick.seeds' and 'quick.horizon' must be >= 1")
    cells, tune_cells = _cells("cells", data["cells"]), _cells("tune_cells", data.get("tune_cells", []))
    ids = [c.id for c in cells]
    if not cells or len(set(ids)) < len(ids):
        raise SuiteError(f"suite {data['name']!r}: cell ids must be unique and at least one, got {ids}")
    held = [c.id for c in tune_cells]
    if len(set(held)) < len(held) or set(held) & set(ids):
        raise SuiteError(f"suite {data['name']!r}: tune_cells ids must be unique and none a report cell's, got "
                         f"{sorted(set(held) & set(ids))[:5] or held} in both or twice")
    tracks = {name: _track(name, table, {c.id: c for c in cells}) for name, table in data.get("tracks", {}).items()}
    return Suite(data["name"], data["version"], tuple(cells), seeds["tune_seeds"], seeds["report_seeds"],
                 data["quick"]["horizon"], data["quick"]["seeds"], data.get("description", ""), path, tracks,
                 data.get("horizon_to_agents", False), tuple(tune_cells))


def _cells(key: str, table: list) -> list[Cell]:
    """The cells of the list `key` of a suite file ("cells", or "tune_cells"), each checked."""
    cells = []
    for i, cell in enumerate(table):
        _check(f"{key}[{i}]", cell, dict)
        _keys(f"{key}[{i}].", cell, CELL, ("id", "env", "horizon", "tags"))
        if unknown := sorted(set(cell["tags"]) - set(TAGS)):
            raise SuiteError(f"cell {cell['id']!r}: unknown tags {unknown}; the tags are {', '.join(TAGS)}")
        if cell["horizon"] < 1 or not cell["tags"]:
            raise SuiteError(f"cell {cell['id']!r}: needs a horizon >= 1 and at least one tag")
        cells.append(Cell(cell["id"], cell["env"], cell.get("kwargs", {}), cell["horizon"], tuple(cell["tags"]),
                          cell.get("cost_s"), cell.get("why", ""), cell.get("unscored", "")))
    return cells


def _track(name: str, table, cells: dict) -> Track:
    """A `[tracks.NAME]` table checked against the suite's cells: known ids, horizons cut (never
    lengthened), a cell either cut or dropped, at least one cell left."""
    where = f"tracks.{name}."
    _check(where[:-1], table, dict)
    _keys(where, table, TRACK, ("horizons",))
    if name in BUILTIN or name.endswith(TUNED):
        raise SuiteError(f"suite key 'tracks.{name}': {', '.join(BUILTIN)} are the built-in tracks and NAME{TUNED} a "
                         "named track's tuned twin; name it otherwise")
    drop = table.get("drop", [])
    if not all(isinstance(c, str) for c in drop):
        raise SuiteError(f"suite key '{where}drop' must be a list of cell ids, got {drop!r}")
    for cell, horizon in table["horizons"].items():
        _check(f"{where}horizons.{cell}", horizon, int)
    if unknown := sorted({*table["horizons"], *drop} - set(cells)):
        raise SuiteError(f"suite key '{where[:-1]}' names cells {unknown} the suite does not have")
    if longer := sorted(c for c, h in table["horizons"].items() if not 1 <= h < cells[c].horizon):
        raise SuiteError(f"suite key '{where}horizons': {longer} must be cut to fewer rounds than the cell's own "
                         "(a track never plays a cell longer)")
    if both := sorted(set(drop) & set(table["horizons"])):
        raise SuiteError(f"suite key '{where[:-1]}': cells {both} are both cut and dropped; a cell is one or the other")
    if len(set(drop)) == len(cells):
        raise SuiteError(f"suite key '{where}drop': drops every cell; a track keeps at least one")
    return Track(name, dict(table["horizons"]), tuple(drop), table.get("description", ""))


def shipped() -> list[str]:
    """The suites of the package, by `NAME-vVERSION`."""
    return sorted(p.stem for p in SUITES.glob("*.toml"))


def earlier(suite: Suite) -> list[Suite]:
    """The package's former versions of `suite` (its name, a lower version), newest first: where a
    new version plays a cell as an old one did, the old references' rows stand (references.reusable)."""
    versions = {int(key.rpartition("-v")[2]): key for key in shipped() if key.rpartition("-v")[0] == suite.name}
    return [load(versions[v]) for v in sorted(versions, reverse=True) if v < suite.version]


def load(suite: str | Path | None = None) -> Suite:
    """A shipped suite by `NAME-vVERSION`, or a suite file by path; its name and version must be
    those of its file name, so a shipped version is found under the name it was released as.
    Without one, DEFAULT (bakeoff-v2 since 0.14.0; bakeoff-v1 before): code whose numbers must not
    move with the default names its suite."""
    suite = DEFAULT if suite is None else suite
    path = Path(suite)
    if path.suffix != ".toml":
        path = SUITES / f"{suite}.toml"
        if not path.exists():
            raise SuiteError(f"no suite {suite!r}; the shipped suites are {', '.join(shipped())} (or give a .toml path)")
    if not path.exists():
        raise SuiteError(f"suite file {str(path)!r} does not exist")
    try:
        result = parse(tomllib.loads(path.read_text()), path)
    except tomllib.TOMLDecodeError as err:
        raise SuiteError(f"cannot read suite file {path}: {err}") from None
    if path.parent == SUITES and result.key != path.stem:
        raise SuiteError(f"suite file {path.name} holds {result.key!r}: a shipped file is named NAME-vVERSION.toml")
    return result


def markdown_table(suite: Suite) -> str:
    """The suite's cells as the Markdown table of docs/bench_tracks.md (a test keeps the two equal)."""
    rows = ["| cell | env | kwargs | T | tags | what it tests | LinUCB CPU-s |", "|---|---|---|---|---|---|---|"]
    for c in suite.cells:
        kwargs = ", ".join(f"{k}={v}" for k, v in c.kwargs.items())
        rows.append(f"| `{c.id}` | `{c.env}` | {kwargs} | {c.horizon:,} | {', '.join(c.tags)} | {c.why} | "
                    f"{c.cost_s if c.cost_s is not None else 'n/a'} |")
    total = sum(c.cost_s or 0 for c in suite.cells)
    return "\n".join(rows + [f"| all | | | | | | {total:.0f} |"])


def __getattr__(name: str):
    """`NEXT_DEFAULT`, 0.13.0's announcement that the default suite would become bakeoff-v2: removed in
    0.14.0, which made the change, an AttributeError naming DEFAULT."""
    if name == "NEXT_DEFAULT":
        raise AttributeError("gym_ctxbandits.bench.suite.NEXT_DEFAULT was removed in 0.14.0, which made the change it "
                             f"announced: the default suite is bench.suite.DEFAULT ({DEFAULT!r}); name a suite to "
                             "keep it, e.g. load('bakeoff-v1')")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
