"""Reference results: every shipped agent's runs of a suite's report track, in the package.

`references/<suite key>/<agent>.parquet` holds one agent's rows: per cell and report seed, the
cumulative regret at log-spaced and evenly spaced checkpoints of the logged rounds, the last one
included (the final values the scorecard compares, the curves it draws), and at the last one the
cumulative reward and act/observe seconds (NaN before it, as noisy floats cost half the file; on
the replay, whose measure is the reward, the reward at every checkpoint). `manifest.json` beside them pins the suite (key, seeds, each cell's env, kwargs and
horizon) and says, per agent, the file's SHA-256 and size, the package and library versions, the
machine, and the wall and CPU seconds of each cell. `bench report` takes these agents as the zoo
beside a folder's own (same seeds, hence the same env draws: paired), and `bench regen` rebuilds
them; one file per agent, so the zoo can be built and committed in slices.

A named track's references (`references/<suite key>-<track>/`, e.g. the GLM track's) reuse the
report track's, or another named track's: a cell of the track that is the other track's own (same
env, kwargs and horizon, on the same report seeds and checkpoints) gives the same rows bit for bit
(the timings aside), so `regen` runs an agent that has such references on the track's other cells
only and copies the rest from that file (the report track's, else a track that holds all its cells); the
manifest's `reused` says which cells came from which file and SHA-256, and their wall and CPU
seconds are that file's (what the rows cost to make). A new version of a suite reuses its former
version's references the same way: on a cell both play alike, an agent given the same kwargs in
both (bakeoff-v2 gives an agent that reads a `horizon` the cell's, which bakeoff-v1 did not) has
the same rows, so only the agents the change touches run again.

The tuned track's references (`references/<suite key>-tuned/`, `bench regen --tuned shipped`)
are the same rows of each agent played with its configuration of the package's tuned file
(tune.py); their manifest adds the budget, the tune seeds, the SHA-256 of the tuned file the
configurations come from and each agent's configuration, so a tuned file and its references move
together. A named track's tuned twin (`references/<suite key>-glm-tuned/`, `bench regen --track
glm --tuned shipped`) is the same for the agents tuned on that track (tune.py, `--track glm`).
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import shutil
import tempfile
import time
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path

import numpy as np

from gym_ctxbandits.bench import tune
from gym_ctxbandits.bench.reproduce import numerics, rows_numerics
from gym_ctxbandits.bench.run import BASELINE, for_cell, read_manifest, run_suite, slug
from gym_ctxbandits.bench.run import MANIFEST as RUN_MANIFEST
from gym_ctxbandits.bench.suite import Suite, base_track, earlier, is_tuned, tuned_track
from gym_ctxbandits.experiment import is_replay
from gym_ctxbandits.jobs import AgentSpec, agent_device, kind

REFERENCES = Path(__file__).parent / "references"
MANIFEST = "manifest.json"
CHECKPOINTS = 16            # log-spaced rows kept per run, and half as many evenly spaced (the last one among them)
CHECKPOINT_RULE = (f"logged rounds at {CHECKPOINTS} log-spaced and {CHECKPOINTS // 2} evenly spaced positions per "
                   "run, the last included")
COLUMNS = ["cell", "seed", "round", "cum_regret", "cum_reward", "act_seconds", "observe_seconds"]
LIBRARIES = ("numpy", "scipy", "pandas", "pyarrow", "gymnasium", "scikit-learn", "torch")


# The package's agents that have no reference file on a shipped suite, and why (for a neural agent
# not named here, NEURAL). A test requires every registered agent to be shipped or to have a reason.
# The neural agents' costs and failures are bench_cost.py's and bench_neural.py's (docs/bench_costs.md).
WHY_ABSENT = {
    "bakeoff-v1": {
        **dict.fromkeys(("OAM", "OSSB"), "[S4]'s algorithms for finitely many action sets: on 21 of the 35 cells (s2, "
                        "the s3 pools, drifting-linear, the real data, the replay) the arms are redrawn every round, "
                        "so after max_contexts=10 action sets OAM plays its LinUCB fallback and OSSB a random arm, "
                        "which a reference would score in their name; their allocation program needs CVXPY (the "
                        "optional `oam` extra) and is slow on the large fixed sets (OAM on s1-bernoulli-logistic: "
                        "17 CPU-s for 20 rounds of 2 seeds); they run with `bench run` where CVXPY is installed"),
        **dict.fromkeys(("GLM-TSL", "GLM-UCB", "UCB-GLM", "Logistic-UCB-1"),
                        "GLM agents too costly for the report track's 1,200 CPU-s: each round a d x d inverse and "
                        "a Hessian over every distinct arm pulled so far, over 20 CPU-s a seed on covertype (d = "
                        "378) alone and over 145 a seed on the suite; they play the GLM track (`bench run --track "
                        "glm`), whose references hold UCB-GLM, Logistic-UCB-1, GLM-TSL and GLM-UCB beside the zoo "
                        "(docs/bench_costs.md: the measured costs)"),
        **{name: f"[S2]'s logistic loss, softplus(f) - r f summed, has no minimiser once a reward leaves [0, 1]: at "
                 f"its defaults the network diverges (its arm scores turn NaN, an error) on {cells} (Gaussian rewards; "
                 "one report seed each, scripts/bench_cost.py), so the report track cannot be played at its "
                 "defaults; it plays the bounded track (`bench run --track bounded`: the 18 cells whose rewards are 0 "
                 "or 1), whose references hold [S2]'s five agents beside the zoo (docs/bench_tracks.md)"
           for name, cells in (("NeuralLog-UCB-1", "s0-distance, s3-finite-linear, s3-sphere-linear and "
                                                   "s4-unit-circle-small"),
                               ("NeuralLog-UCB-2", "s0-distance and s3-sphere-linear"),
                               ("NeuralLog-TS-1", "s3-sphere-linear"), ("NeuralLog-TS-2", "s3-sphere-linear"),
                               ("NCBF-UCB", "s0-distance"))},
        **{name: f"neural, trained on its whole history every round ({how}), so on the 21 cells whose arms are "
                 "redrawn every round a round's training grows with the round: NeuralUCB's ten seeds cost 295 CPU-s "
                 "on s2-h1 alone at its 2,000 rounds (64 on s0-linear, whose 50 arms are fixed), putting the report "
                 "track over a neural agent's 3,600; it plays the neural track (`bench run --track neural`: the "
                 "cells but the replay at 500 rounds), whose references hold it beside the zoo "
                 "(docs/bench_costs.md)"
           for name, how in (*((n, "[S0]'s full-batch gradient descent, 100 steps") for n in
                                ("NeuralUCB", "NeuralTS", "Neural-PHE")),
                             ("LMCTS", "Langevin steps on batches of up to 10,000 rows"))},
        "Neural-ES": ("neural, over a neural agent's 3,600 CPU-s even on the neural track (its ten seeds: 308 CPU-s on "
                      "s3-mlp-teacher alone at 500 rounds): it plays the neural track on a GPU, whose references hold "
                      "it, made on an H200 with `--device cuda` in 385 s of wall time (docs/bench_costs.md)"),
        "Neural-ES-DT": ("neural, over a neural agent's 3,600 CPU-s even on the neural track (about 2.5 times "
                         "Neural-ES): a GPU's (`--device cuda`); the GPU lease of 2026-11-27 ran 25 of the neural "
                         "track's 34 cells before its time ran out (about 90 s of GPU time left to run; "
                         "docs/bench_costs.md)"),
        "GLM-FPL": ("GLM agent too costly for the report and GLM tracks' budget: over 238 CPU-s a seed on the GLM "
                    "track (a perturbed MLE refitted from fresh noise every round); on the neural track's covertype "
                    "and mnist [S1]'s initial exploration of d = 378 and 490 arms fills 378 and 490 of the 500 "
                    "rounds; it plays the short GLM track (`bench run --track glm-short`: the neural track without "
                    "those two cells), whose references hold it beside the zoo (docs/bench_costs.md)"),
        **dict.fromkeys(("GPT-Ensemble++", "GPT-Greedy"),
                        "text agents: their observations are the token ids of CtxBandit/HateSpeechTokens-v0, an env "
                        "the suite leaves out (a GPU's cells: docs/bench_tracks.md)"),
    },
}
WHY_ABSENT["bakeoff-v1"].update(dict.fromkeys(
    ("SquareCB", "FALCON", "Oracle-Greedy", "Oracle-epsilon-greedy", "RegCB-opt", "RegCB-elim", "Cover", "Cover-NU",
     "Bag", "Bag-greedy", "VW", "VW-epsilon", "VW-Bag", "VW-Cover-NU", "VW-RegCB-opt", "VW-SquareCB"),
    "the Contextual Bandit Bake-off's family (regression oracles and Vowpal Wabbit, added in the release after "
    "0.17.0): its references are to be made on the Bake-off's own real-data sets (a PMLB suite, issue 49), and "
    "none are made on this suite yet; `ctxbandits bench run --agents NAME` scores one here"))
WHY_ABSENT["bakeoff-v2"] = WHY_ABSENT["bakeoff-v1"]     # v1's cells and tracks, so v1's reasons
NEURAL = "neural, not measured on this suite yet: `scripts/bench_cost.py` sizes it (docs/bench_costs.md)"
NONSTATIONARY = ("issue 51's agents for changing worlds and their K-armed bases (added after 0.17.0): not run on "
                 "this suite yet; `ctxbandits bench run --agents NAME` scores one")
RANKING = ("a ranking agent (its action is a list of items, docs/ranking.md): every cell of this suite takes one arm "
           "a round")
ONE_ARM = ("a one-arm agent: every cell of this ranking suite takes a list of items a round (docs/ranking.md); TopK and "
           "RankedBandits rank with one (their `agent=`), and their references hold them with UCB1")
# pmlb-v1 (the Contextual Bandit Bake-off's PMLB sets, docs/bench_pmlb.md): the agents without references, for
# a neural agent NEURAL, for the others NOT_RUN (the default of `absent` on the suite) unless named here.
WHY_ABSENT["pmlb-v1"] = {
    **dict.fromkeys(("OAM", "OSSB"), "[S4]'s algorithms for finitely many action sets: each round's arms are a new "
                    "example's, so past max_contexts=10 action sets they play their fallback, and their allocation "
                    "program needs CVXPY (the optional `oam` extra)"),
    **dict.fromkeys(("GPT-Ensemble++", "GPT-Greedy"), "text agents: their observations are token ids, and the PMLB "
                    "sets are tables of numbers"),
}
NOT_RUN = {"pmlb-v1": "not run yet on this suite: its report track, 119 cells x 10 seeds (110,837 rounds a seed), "
                      "took LinUCB 180 CPU-s and the shipped oracle and VW agents 38 to 210 (docs/bench_pmlb.md); "
                      "`ctxbandits bench run --suite pmlb-v1 --agents NAME` scores one",
           "nonstationary-v1": "a stationary agent, not run on this suite: its references hold Random, LinUCB and LinTS "
                               "as the stationary yardsticks beside issue 51's agents (docs/bench_nonstationary.md); "
                               "`ctxbandits bench run --suite nonstationary-v1 --agents NAME` scores one"}
# ranking-v1 (issue 50, docs/bench_ranking.md): every ranking agent is shipped, the PBM agents on the PBM track only.
WHY_ABSENT["ranking-v1"] = dict.fromkeys(
    ("PBM-UCB", "PBM-PIE"), "a position-based model's agent: it needs the positions' examination probabilities, "
    "kappas, which only the PBM cells have (the runner gives it theirs); it plays the PBM track (`bench run --track "
    "pbm`: the three PBM cells), whose references (references/ranking-v1-pbm) hold it beside the others")
# nonstationary-v1 (issue 51, docs/bench_nonstationary.md): every agent for changing worlds is shipped, the
# K-armed ones included, but the oracle, which needs each cell's own change points.
WHY_ABSENT["nonstationary-v1"] = {
    "Oracle-Restart": ("restarts its base at the change points it is given, and a suite gives an agent one "
                       "configuration for every cell while each cell has its own (two have none, being drifts); at "
                       "its default, change_points=(), it is UCB1 exactly; `ctxbandits run --agents Oracle-Restart "
                       "--agent-kwargs ...` plays it on one env with that env's change points"),
    **{name: WHY_ABSENT["pmlb-v1"][name] for name in ("OAM", "OSSB")},
    **dict.fromkeys(("GPT-Ensemble++", "GPT-Greedy"), "text agents: their observations are token ids, and no cell "
                    "of this suite is a text env"),
}


class ReferenceMismatch(ValueError):
    """Reference results that do not belong to the suite asked for, or whose file changed."""


def folder(suite: Suite, track: str = "report") -> Path:
    """Where the package keeps `suite`'s references of `track` (the report track's, or a named
    track's: `references/<suite key>-<track>/`)."""
    return REFERENCES / (suite.key if track == "report" else f"{suite.key}-{track}")


def built_twins(suite: Suite) -> list[str]:
    """The tuned twins ("NAME-tuned") of `suite`'s named tracks whose references the package holds."""
    return [f"{t}-tuned" for t in suite.tracks if (folder(suite, f"{t}-tuned") / MANIFEST).exists()]


def _head(suite: Suite, track: str) -> dict:
    """What a manifest pins: the suite, its track (a named one or a tuned one only), report seeds and cells."""
    cells, seeds = suite.track(track)
    return {"suite": suite.key, **({"track": track} if track != "report" else {}), "seeds": list(seeds),
            "cells": {c.id: c.spec for c in cells},
            **({"horizon_to_agents": True} if suite.horizon_to_agents else {})}


def cell_spec(cell) -> dict:
    """What decides a cell's numbers (besides the seed and the agent): env, kwargs, horizon (`Cell.spec`;
    kept for code that calls it)."""
    return cell.spec


def checkpoints(table):
    """The rows of `table` (one run per seed, every logged round) at log-spaced positions of each
    seed's logged rounds (the first included) and at evenly spaced ones (the last included): the
    start of a curve in detail, its whole length drawn on a linear axis."""
    def pick(g):
        k = np.union1d(np.geomspace(1, len(g), CHECKPOINTS), np.linspace(0, len(g), CHECKPOINTS // 2 + 1)[1:])
        return g.iloc[np.unique(k.round().astype(int)) - 1]
    table = table.sort_values(["seed", "round"])
    return table.groupby("seed", group_keys=False)[table.columns.tolist()].apply(pick)


def sha256(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def machine() -> dict:
    """The machine a reference was made on, as the manifest records it (no host name), with the
    kernels its numbers come from (`reproduce.numerics`: a rerun matches bit for bit where they are
    the same)."""
    cpu = platform.processor()
    try:
        cpu = next(line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                   if line.startswith("model name")) or cpu
    except (OSError, StopIteration):
        pass
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    return {"system": platform.platform(), "cpu": cpu, "cores": os.cpu_count(), "python": platform.python_version(),
            "load_average": round(load, 1) if load is not None else None, "numerics": numerics()}


def played_on(work: Path, agent: str, cells, copied=()) -> str:
    """The torch device `agent`'s runs in `work` gave it ("cpu" for a numpy agent, whatever the
    comparison's device), as the runs' own manifests record it."""
    devices = set()
    for cell in cells:
        if cell.id not in copied:
            config = json.loads((work / slug(agent) / cell.id / "manifest.json").read_text())["config"]
            devices.add(agent_device(AgentSpec(agent, config["agents"][0]["kwargs"]), config.get("device", "cpu"))
                        or "cpu")
    if len(devices) > 1:
        raise ReferenceMismatch(f"{agent}'s runs in {work} played on several devices ({', '.join(sorted(devices))}): "
                                "one reference file holds one device's runs; rerun its cells on one")
    return devices.pop() if devices else "cpu"


def _accelerator(work: Path, agent: str, cells, source: dict | None) -> str | None:
    """The accelerator of an agent's rows, those run in `work` and those copied (`source`,
    `reusable`'s answer) alike; None for the CPU. Rows of two devices in one file are refused."""
    dev = played_on(work, agent, cells, source["cells"] if source else ())
    ran = accelerator(dev) if dev != "cpu" else None
    copied = source["entry"].get("accelerator") if source else None
    if source and len(source["cells"]) < len(cells) and (ran or "cpu").split(":")[0] != (copied or "cpu").split(":")[0]:
        raise ReferenceMismatch(f"{agent}'s copied rows ({source['from']}) were made on {copied or 'the cpu'} and its "
                                f"runs in {work} on {ran or 'the cpu'}: one reference file holds one device's runs; "
                                "give --rerun-all")
    return ran or copied


def accelerator(device: str) -> str:
    """The torch device a reference ran on, named as a reader needs it: "cuda: NVIDIA H200" (the
    device type alone where this machine cannot name it)."""
    import torch

    dev = torch.device(device)
    name = torch.cuda.get_device_name(dev) if dev.type == "cuda" and torch.cuda.is_available() else None
    return f"{dev.type}: {name}" if name else dev.type


def versions() -> dict:
    """The package's and the numerical libraries' versions (those installed)."""
    import gym_ctxbandits

    found = {"gym-ctxbandits": gym_ctxbandits.__version__}
    for name in LIBRARIES:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            pass
    return found


def track_of(where: Path) -> str:
    """The track the references in `where` say they are of ("report" when their manifest names none)."""
    path = Path(where) / MANIFEST
    return (json.loads(path.read_text()).get("track") if path.exists() else None) or "report"


def read(where: Path, suite: Suite, verify: bool = True, track: str = "report") -> dict:
    """The manifest of the references in `where`, checked to be `suite`'s `track` (same suite
    key, track, report seeds and cell definitions) and every file against its SHA-256; a
    ReferenceMismatch naming the difference otherwise (`verify=False`: the files unchecked)."""
    path = Path(where) / MANIFEST
    if not path.exists():
        raise ReferenceMismatch(f"{where} has no {MANIFEST}: not a folder of reference results (`ctxbandits bench "
                                "regen` writes one)")
    manifest = json.loads(path.read_text())
    mine = {**_head(suite, track), "track": None if track == "report" else track,
            "horizon_to_agents": True if suite.horizon_to_agents else None}
    for key, value in mine.items():
        if manifest.get(key) != value:
            raise ReferenceMismatch(f"the references in {where} are not of this suite's {track} track: their {key!r} "
                                    f"differs; rebuild them with `ctxbandits bench regen --suite ... --dest {where}`")
    for agent, entry in manifest["agents"].items() if verify else ():
        path = Path(where) / entry["file"]
        if not path.exists() or sha256(path) != entry["sha256"]:
            raise ReferenceMismatch(f"{path} is missing or does not match its SHA-256 in {MANIFEST}: rebuild it with "
                                    f"`ctxbandits bench regen --agents {agent}`")
    return manifest


def table(where: Path, manifest: dict, agent: str):
    """An agent's reference rows (`read` has checked its file)."""
    import pandas as pd

    return pd.read_parquet(Path(where) / manifest["agents"][agent]["file"])


def reusable(suite: Suite, track: str, agent: str, source: Path | None = None, config: dict | None = None) -> dict | None:
    """Which of `track`'s cells `agent`'s references in `source` already hold: the cells whose env,
    kwargs and horizon are those of the references' own track, when they are of this suite (or of
    a former version of it, the same track), on the track's seeds and checkpoints, and hold the
    agent. `source` defaults to the package's folder of the same track in a former version of the
    suite (`suite.earlier`: a cell it played as this one does, the agent given the same kwargs
    there, which a suite's `horizon_to_agents` may change), and, on a named track, of the suite's report track, else of another named track that holds
    every cell of `track` (the short GLM track's cells are all neural-track cells): of these, the
    one that holds the most cells. A named track's tuned twin ("glm-tuned") reuses the tuned
    track's references instead, of an agent played there with the same `config`.
    Returns {"from", "sha256", "cells", "entry", "path", "why"} (the file as `<folder>/<file>`, its
    SHA-256, the cell ids, its manifest entry, its path, why its rows are this track's), or None:
    nothing to reuse. A file that no longer matches its SHA-256 is a ReferenceMismatch, not a silent
    rerun."""
    tuned = is_tuned(track)
    if source is None:
        found = [r for old in earlier(suite) if (r := reusable(suite, track, agent, folder(old, track), config))]
        if base_track(track) != "report":
            whole = len(suite.track(track)[0])
            mine = [folder(suite, "tuned")] if tuned else [folder(suite)]
            found += [r for s in mine if (r := reusable(suite, track, agent, s, config))]
            found += [r for t in suite.tracks if not tuned and t != track
                      and (r := reusable(suite, track, agent, folder(suite, t))) and len(r["cells"]) == whole]
        return max(found, key=lambda r: len(r["cells"]), default=None)     # the first of the most cells
    source = Path(source)
    if not (source / MANIFEST).exists():
        return None
    manifest = json.loads((source / MANIFEST).read_text())
    cells, seeds = suite.track(track)
    older = next((old for old in earlier(suite) if old.key == manifest.get("suite")), None)
    theirs = manifest.get("track") or "report"
    if ((manifest.get("suite") != suite.key and (older is None or theirs != track))
            or is_tuned(theirs) != tuned or (theirs == track and older is None)
            or manifest.get("seeds") != list(seeds) or manifest.get("checkpoints") != CHECKPOINT_RULE
            or (older is None and manifest.get("horizon_to_agents", False) != suite.horizon_to_agents)
            or agent not in manifest["agents"] or tuned and manifest["agents"][agent].get("config") != config):
        return None       # a tuned agent's rows are its configuration's: another one's differ
    entry = manifest["agents"][agent]
    path = source / entry["file"]
    if not path.exists() or sha256(path) != entry["sha256"]:
        raise ReferenceMismatch(f"{path} is missing or does not match its SHA-256 in {MANIFEST}: rebuild it with "
                                f"`ctxbandits bench regen --agents {agent}`, or give --rerun-all")
    spec = AgentSpec(agent, config or {})
    same = [c.id for c in cells if manifest["cells"].get(c.id) == c.spec
            and (older is None or for_cell(spec, c, older).kwargs == for_cell(spec, c, suite).kwargs)]
    whose = f"{older.key}'s " if older else ""
    why = (f"{whose}{theirs} track's cells (same env, kwargs, horizon, seeds, checkpoints"
           f"{', configuration' if tuned else ''}{', and the kwargs the agent plays' if older else ''})")
    return {"from": f"{source.name}/{entry['file']}", "sha256": entry["sha256"], "cells": same, "entry": entry,
            "path": path, "why": why} if same else None


def pack(work: Path, suite: Suite, agents: Sequence[str], dest: Path, backend: str = "inprocess",
         reused: dict | None = None, track: str | None = None, tuned_file: Path | None = None) -> dict:
    """Write the reference file of each of `agents` from `work` (a `bench run` folder of `suite`'s
    report track, its tuned track or a named track) into `dest`, and record it in dest's manifest;
    return the manifest. A tuned run's configurations must be those of `tuned_file` (default: the
    package's tuned file of the suite), whose SHA-256 the manifest records. `reused`: per agent, `reusable`'s answer: its cells' rows are copied from that file
    (and its manifest's seconds), not read from `work`, and the manifest's entry says so; `track`:
    the track when `work` may hold no run at all (every cell copied). An agent whose runs played off
    the CPU (the device their manifests record) has that device in its entry (`accelerator`): its
    numbers are the CPU's only up to float tolerance (docs/neural_agents.md, "On a GPU")."""
    import pandas as pd
    import pyarrow as pa
    import pyarrow.parquet as pq

    from gym_ctxbandits.results import load_results

    work, dest = Path(work), Path(dest)
    run = (read_manifest(work) if track is None or (work / RUN_MANIFEST).exists()
           else {"suite": suite.name, "version": suite.version, "track": track})
    track = run["track"]
    if track == "quick" or run["suite"] != suite.name or run["version"] != suite.version:
        raise ReferenceMismatch(f"{work} is not a run of {suite.key}'s report track, its tuned track or a named track")
    cells = suite.track(track)[0]
    dest.mkdir(parents=True, exist_ok=True)
    manifest = (read(dest, suite, verify=False, track=track) if (dest / MANIFEST).exists()
                else {**_head(suite, track), "agents": {}})
    reused = reused or {}
    configs = _tuned(run, manifest, agents, tune.read(tuned_file) if tuned_file else tune.played(suite, track),
                     reused) if is_tuned(track) else {}
    manifest["checkpoints"] = CHECKPOINT_RULE
    for agent in agents:
        source = reused.get(agent)
        copies = source["cells"] if source else []
        copied = pd.read_parquet(source["path"]) if source else None
        parts = []
        for cell in cells:
            if cell.id in copies:
                parts.append(copied[copied["cell"] == cell.id].astype({"cell": str})[COLUMNS])
                continue
            rows = load_results(work / slug(agent) / cell.id)
            rows = checkpoints(rows[rows["seed"].isin(suite.report_seeds)])
            final = rows["round"] == rows.groupby("seed")["round"].transform("max")
            rows.loc[~final, ["act_seconds", "observe_seconds"]] = np.nan
            if not is_replay(cell.env):
                rows.loc[~final, "cum_reward"] = np.nan
            parts.append(rows.assign(cell=cell.id)[COLUMNS])
        rows = pd.concat(parts, ignore_index=True)
        schema = pa.schema([("cell", pa.dictionary(pa.int8(), pa.string())), ("seed", pa.int32()),
                            ("round", pa.int32()), ("cum_regret", pa.float64()), ("cum_reward", pa.float64()),
                            ("act_seconds", pa.float32()), ("observe_seconds", pa.float32())])
        path = dest / f"{slug(agent)}.parquet"
        data = pa.Table.from_pandas(rows, schema, preserve_index=False).replace_schema_metadata(None)
        pq.write_table(data, path, compression="zstd",
                       compression_level=19, use_byte_stream_split=["cum_regret", "cum_reward", "act_seconds",
                                                                    "observe_seconds"])
        manifest["agents"][agent] = {
            "file": path.name, "sha256": sha256(path), "bytes": path.stat().st_size, "rows": len(rows),
            "versions": versions(), "machine": machine(), "backend": backend,
            "created": time.strftime("%Y-%m-%d", time.gmtime()), **configs.get(agent, {}),
            **({"accelerator": made} if (made := _accelerator(work, agent, cells, source)) else {}),
            **{kind: {c.id: (source["entry"][kind] if c.id in copies else run.get(kind, {}).get(agent, {})).get(c.id)
                      for c in cells} for kind in ("wall_seconds", "cpu_seconds")}}
        if source:
            made = source["entry"]
            manifest["agents"][agent]["reused"] = {
                "from": source["from"], "sha256": source["sha256"], "cells": source["cells"],
                "made_with": f"gym-ctxbandits {made['versions']['gym-ctxbandits']}, numpy {made['versions']['numpy']}",
                "numerics": rows_numerics(made),
                "created": made["created"],
                "why": f"{source['why']}: the same rows; their seconds are those of that file"}
    manifest["agents"] = dict(sorted(manifest["agents"].items()))
    (dest / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n")
    return manifest


def regen(suite: Suite, agents: Sequence[str] | None = None, dest: Path | None = None, work: Path | None = None,
          progress=print, track: str = "report", reuse: bool = True, tuned_file: Path | None = None,
          **run_options) -> dict:
    """Run `agents` (default: those already in `dest`) on `suite`'s `track` (the report track, a
    named one, or a tuned one, "tuned" or "NAME-tuned": each agent's configuration of
    `tuned_file`, default the package's of the track) and
    write their reference files into `dest` (default: the package's folder of the suite's track).
    With `reuse`, an agent whose references elsewhere already hold some of the track's cells, as it
    plays them here, runs only the others, those rows copied from that file (`reusable`: a former
    suite version's same track, or on a named track the report track's; `reuse=False`,
    `--rerun-all`: every cell run). `work` keeps the runs (resumable; default a
    temporary folder, removed after); `run_options` go to run_suite."""
    if is_tuned(track):
        run_options["tuned"] = tune.read(tuned_file) if tuned_file else tune.played(suite, track)
    dest = Path(dest) if dest is not None else folder(suite, track)
    if agents is None:
        agents = list(read(dest, suite, verify=False, track=track)["agents"]) if (dest / MANIFEST).exists() else []
        if not agents:
            raise ReferenceMismatch(f"{dest} has no references yet: name the agents to build with --agents")
    configs = {a: run_options["tuned"]["agents"].get(a, {}).get("config", {}) for a in agents} if is_tuned(track) else {}
    reused = {a: r for a in agents if reuse and (r := reusable(suite, track, a, config=configs.get(a)))}
    groups: dict[tuple, list[str]] = {}              # the cells to run -> the agents that need them run
    for agent in agents:
        cells = tuple(c.id for c in suite.track(track)[0] if c.id not in reused.get(agent, {}).get("cells", ()))
        groups.setdefault(cells, []).append(agent)
    scratch = work is None
    work = Path(tempfile.mkdtemp(prefix="bench-regen-")) if scratch else Path(work)
    try:
        for cells, names in groups.items():
            if cells:
                if progress and len(cells) < len(suite.track(track)[0]):
                    sources = sorted({reused[a]["from"].partition("/")[0] for a in names if a in reused})
                    progress(f"{', '.join(names)}: running {len(cells)} cells, the others copied from the "
                             f"references in {', '.join(sources)}")
                run_suite(suite, [a for a in names if a != BASELINE], work, progress=progress,
                          track=None if base_track(track) == "report" else base_track(track), only_cells=cells,
                          **run_options)
        manifest = pack(work, suite, agents, dest, run_options.get("backend", "inprocess"), reused, track, tuned_file)
    finally:
        if scratch:
            shutil.rmtree(work, ignore_errors=True)
    return manifest


def _tuned(run: dict, manifest: dict, agents: Sequence[str], record: dict, reused: dict) -> dict[str, dict]:
    """Pin a tuned run's budget, tune seeds and tuned file(s) (their SHA-256, `tune.pins`) in the
    references' `manifest`, refusing a run whose configurations are not the `record`'s (a tuned
    file's, or `tune.played`'s); each agent's configuration. An agent whose every cell is copied
    (`reused`, `reusable`'s answer per agent) is not in the run: its configuration is its source's,
    which `reusable` matched to the one it plays."""
    tuned_file = record["source"]
    pinned = {"budget": record["budget"], "tune_seeds": record["tune_seeds"]}
    # No "tuned" in `run` when nothing ran (every cell copied): only the manifest is checked then.
    ran_apart = "tuned" in run and (run["budget"], run["tuned"]["tune_seeds"]) != tuple(pinned.values())
    if ran_apart or any(manifest.get(k, v) != v for k, v in pinned.items()):
        raise ReferenceMismatch(f"the tuned run, the tuned file {tuned_file} and the references' manifest must share "
                                "one budget and the tune seeds: regenerate with `ctxbandits bench regen --tuned FILE`")
    configs = {}
    ran = run.get("tuned", {}).get("configs", {})
    for agent in agents:
        config = ran[agent] if agent in ran else reused.get(agent, {}).get("entry", {}).get("config", {})  # Random: {}
        if agent != BASELINE and record["agents"].get(agent, {}).get("config") != config:
            raise ReferenceMismatch(f"{agent} was run with {config}, which is not its configuration in {tuned_file}: "
                                    "regenerate with `ctxbandits bench regen --tuned FILE`")
        configs[agent] = {"config": config}
    if stale := [a for a, e in manifest["agents"].items() if a not in agents and a != BASELINE
                 and record["agents"].get(a, {}).get("config") != e["config"]]:
        raise ReferenceMismatch(f"the references of {', '.join(stale)} are of other configurations than "
                                f"{tuned_file}'s: rebuild them too (`ctxbandits bench regen --tuned FILE --agents ...`)")
    manifest.update(pinned, tuned_file=tune.pins(record))
    return configs


def absent(manifest: dict) -> dict[str, str]:
    """The package's registered agents without a reference file in `manifest`, each with the reason
    (WHY_ABSENT of the manifest's suite, else NEURAL for a neural agent, on a ranking suite ONE_ARM
    for a one-arm one; on the tuned track, why the
    agent has no tuned configuration, tune.untuned); NOT_RUN's reason of the suite (pmlb-v1), else "not
    built yet", otherwise."""
    import agents                      # registers the zoo
    from gym_ctxbandits.bench.suite import load

    if is_tuned(manifest.get("track")):
        suite = load(manifest["suite"])
        elsewhere = {a: f"tuned on the {t} track: its tuned references are references/"
                        f"{folder(suite, tuned_track(t)).name}"
                     for a, (t, _) in tune.tuned_agents(suite).items() if t != base_track(manifest["track"])}
        why = {**dict.fromkeys(tune.NO_SPACE, "no search space (docs/tuning.md, Search spaces)"),
               **tune.untuned(suite), **elsewhere}
    elif load(manifest["suite"]).kind == "ranking":
        why = {**{n: ONE_ARM for n, e in agents.REGISTRY.items() if kind(e) != "ranking"},
               **WHY_ABSENT.get(manifest["suite"], {})}
    else:
        why = {**{n: NEURAL for n, e in agents.REGISTRY.items() if e.__module__.startswith("agents.neural")},
               **{n: RANKING for n, e in agents.REGISTRY.items() if kind(e) == "ranking"},
               **{n: NONSTATIONARY for n, e in agents.REGISTRY.items()
                  if e.__module__ in ("agents.nonstationary", "agents.mab", "agents.changepoint", "agents.dlinucb")},
               **WHY_ABSENT.get(manifest["suite"], {})}
    default = None if is_tuned(manifest.get("track")) else NOT_RUN.get(manifest["suite"])
    return {name: why.get(name) or default or "not built yet" for name, entry in agents.REGISTRY.items()
            if entry.__module__.startswith("agents.") and name not in manifest["agents"]}


def markdown_table(manifest: dict) -> str:
    """The shipped agents with their bytes and cost, as docs/bench_references.md shows them (a test keeps
    the two equal)."""
    rows = ["| agent | bytes | CPU-s | wall s | costliest cell (CPU-s) | made with |", "|---|---|---|---|---|---|"]
    for agent, e in manifest["agents"].items():
        cpu = {c: t for c, t in e["cpu_seconds"].items() if t is not None}
        worst = max(cpu, key=cpu.get, default=None)
        made = f"gym-ctxbandits {e['versions']['gym-ctxbandits']}, numpy {e['versions']['numpy']}, {e['backend']}"
        made += f", {e['accelerator']}" if "accelerator" in e else ""
        wall = sum(t for t in e["wall_seconds"].values() if t is not None)
        rows.append(f"| {agent} | {e['bytes']:,} | {sum(cpu.values()):.0f} | {wall:.0f} | "
                    f"{f'{worst} ({cpu[worst]:.1f})' if worst else 'n/a'} | {made} |")
    total = sum(e["bytes"] for e in manifest["agents"].values())
    by_reason: dict[str, list[str]] = {}
    for agent, reason in absent(manifest).items():
        if reason.startswith("not tuned yet"):           # each study's cost: the table of search spaces
            reason = reason.partition(":")[0] + " (docs/tuning.md's table of search spaces gives each study's cost)"
        by_reason.setdefault(reason, []).append(agent)
    lines = [f"Not shipped: {', '.join(names)}. Why: {reason}." for reason, names in by_reason.items()]
    return "\n".join(rows + [f"| all | {total:,} | | | | |", ""] + lines)
