"""Run agents on a suite's report seeds with the comparison runner, one results folder per
(agent, cell): `OUT/<agent>/<cell id>/`, each an ordinary `gym_ctxbandits.run` folder.

One folder per agent and cell lets agents be added to a scorecard folder one at a time (a run's
manifest lists its own jobs only), and a finished (agent, cell) is never run again: the runner
resumes. `OUT/bench.json` pins the folder to one suite version and track, and keeps each
(agent, cell)'s wall time and CPU time (`cpu_clock`: with the processes backend, that of the worker
that ran the cell; otherwise this process's and its ended children's; a Ray cluster's workers are
not counted, being elsewhere; on a shared machine the CPU time is the steadier figure). Random is always run: every score is normalised by it
(on a ranking suite a random list: `baseline`).
The tracks: "report" (the defaults), "quick" (a smoke run), "tuned" (each agent with its
configuration of a `bench tune` file, pinned with its budget, its tune seeds and the configurations)
and the suite file's named tracks (`bench run --track glm`: the defaults on the track's cells), each
with its tuned twin (`--track glm --tuned FILE`: track "glm-tuned", the configurations of a study
of the glm track).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, nullcontext
from pathlib import Path

from gym_ctxbandits.bench.suite import SUITES, Suite, base_track, tuned_track
from gym_ctxbandits.experiment import AgentSpec, EnvSpec
from gym_ctxbandits.jobs import RANDOM_LIST, agent_device

MANIFEST = "bench.json"
BASELINE = "Random"


def cpu_clock() -> float:
    """CPU seconds (user and system) of this process and of its children that have ended: a cell's
    or a study's cost on this machine. The processes backend's workers end with each `run` (its pool
    closes), so their seconds count; the workers of a Ray cluster run elsewhere and do not."""
    try:
        import resource
    except ImportError:                                       # Windows: this process only
        return time.process_time()
    me, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + children.ru_utime + children.ru_stime


def slug(text: str) -> str:
    return "".join(c if c.isalnum() or c in "-+." else "_" for c in text)


def read_manifest(out: Path) -> dict:
    """The folder's bench.json, or a FileNotFoundError saying how to make one."""
    path = Path(out) / MANIFEST
    if not path.exists():
        raise FileNotFoundError(f"{out} has no {MANIFEST}: is it a folder written by `ctxbandits bench run`?")
    return json.loads(path.read_text())


def suite_of(manifest: dict) -> Suite:
    """The suite a folder's manifest pins: its suite file, or the shipped NAME-vVERSION."""
    from gym_ctxbandits.bench.suite import load

    return load(manifest.get("file") or f"{manifest['suite']}-v{manifest['version']}")


def _pinned(out: Path, suite: Suite, quick: bool, tuned: dict | None = None, track: str | None = None) -> dict:
    """The folder's manifest, new or checked to be of this suite version and track (and budget)."""
    track = tuned_track(track) if tuned else "quick" if quick else track or "report"
    mine = {"suite": suite.name, "version": suite.version, "track": track}
    if tuned:
        mine["budget"] = tuned["budget"]
    if (out / MANIFEST).exists():
        manifest = read_manifest(out)
        theirs = {k: manifest.get(k) for k in mine}
        if theirs != mine:
            raise ValueError(f"{out} holds results of {theirs}, not {mine}: give another --out (scores of two suite "
                             "versions or tracks are never mixed)")
        return manifest
    file = {} if suite.path is None or suite.path.parent == SUITES else {"file": str(suite.path.resolve())}
    cells, seeds = suite.track(track)
    return {**mine, **file, "seeds": list(seeds), "cells": [c.id for c in cells],
            "wall_seconds": {}, **({"tuned": {"tune_seeds": tuned["tune_seeds"], "configs": {}}} if tuned else {})}


def baseline(suite: Suite) -> AgentSpec:
    """Random as `suite` plays it: the registered Random on a one-arm suite, and on a ranking suite
    (`Suite.kind`) a uniformly random list, TopK ranking Random's equal scores with ties broken at
    random, labelled Random (scripts/sanity.py's `Home.random`), which every score is normalised by."""
    return RANDOM_LIST if suite.kind == "ranking" else AgentSpec(BASELINE)


def spec_of(name: str, config: dict, suite: Suite) -> AgentSpec:
    """The spec of agent `name` with `config` on `suite`: `baseline(suite)` for Random, else the agent."""
    return baseline(suite) if name == BASELINE else AgentSpec(name, config)


def for_cell(spec: AgentSpec, cell, suite: Suite) -> AgentSpec:
    """`spec` as it plays `cell` of `suite`: given the cell's horizon when the suite says
    `horizon_to_agents` and the agent reads a `horizon` its kwargs do not set (as an agent whose
    schedule or confidence level is sized by T assumes; `agents.base.reads_horizon`: GLM-TSL reads
    it only for a="theory"); else `spec` itself."""
    from gym_ctxbandits.jobs import import_agents

    if (not suite.horizon_to_agents or "horizon" in spec.kwargs
            or not import_agents().base.reads_horizon(spec.name, spec.kwargs)):
        return spec
    return AgentSpec(spec.name, {**spec.kwargs, "horizon": cell.horizon}, spec.label)


def tuned_configs(tuned: dict, suite: Suite, agents: Sequence[str], quick: bool,
                  track: str | None = None) -> dict[str, dict]:
    """Each agent's configuration in the tuned file `tuned` (bench/tune.py), checked to be of this
    suite's cells of `track` (the report track's, or a named one's) and tuned on seeds none of which
    is a report seed; Random's is its defaults."""
    if quick:
        raise ValueError("--tuned plays the report seeds; --quick is a smoke run of the defaults: drop one of them")
    track = base_track(track or "report")
    cells = {c.id: c.spec for c in suite.tuning(track)}          # the held-out tune_cells where the suite has them
    theirs = tuned.get("track") or "report"
    if theirs != track:
        raise ValueError(f"the tuned configurations were chosen on the {theirs} track, and this run plays the {track} "
                         f"track: play them with --track {theirs}, or tune on this track (`ctxbandits bench tune "
                         f"--track {track}`)")
    if tuned["suite"] != suite.key or tuned["cells"] != cells or tuned.get("quick") or \
            tuned.get("horizon_to_agents", False) != suite.horizon_to_agents:
        raise ValueError(f"the tuned configurations are of {tuned['suite']}{' (quick track)' * bool(tuned.get('quick'))}, "
                         f"not of {suite.key}'s cells: tune on this suite (`ctxbandits bench tune --suite ...`, "
                         "without --quick)")
    if shared := sorted(set(tuned["tune_seeds"]) & set(suite.report_seeds)):
        raise ValueError(f"the tuned configurations were tuned on seeds {shared[:5]}, which are report seeds: a "
                         "tuned agent is never reported on a seed it was tuned on; tune on the suite's tune_seeds")
    missing = [a for a in agents if a != BASELINE and a not in tuned["agents"]]
    if missing:
        raise ValueError(f"no tuned configuration of {', '.join(missing)}: run `ctxbandits bench tune --agents "
                         f"{','.join(missing)} --budget {tuned['budget']}` (the same budget as the others)")
    return {a: tuned["agents"][a]["config"] for a in agents if a != BASELINE}


@contextmanager
def one_torch_thread() -> Iterator[None]:
    """Torch's intra-op threads pinned to one in this process while the torch agents play (restored
    after): the references are made that way (in-process backend, `OMP_NUM_THREADS=1`), and a rerun
    at torch's default, a thread per core, may split a product's sums otherwise and miss their bits."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


def _write(out: Path, manifest: dict) -> None:
    tmp = out / f".{MANIFEST}.{os.getpid()}.tmp"
    tmp.write_text(json.dumps(manifest, indent=2, sort_keys=True))
    os.replace(tmp, out / MANIFEST)


def run_suite(suite: Suite, agents: Sequence[str], out, quick: bool = False, imports: Sequence[str] = (),
              backend: str = "inprocess", workers: int | None = None, address: str | None = None,
              device: str = "cpu", batch: int = 10, progress=print, tuned: dict | None = None,
              track: str | None = None, only_cells: Sequence[str] | None = None) -> dict:
    """Run `agents` (registered names) and Random on every cell of `suite` (its quick track when
    `quick`) into `out`; return bench.json's content. Finished (agent, cell) folders are kept.
    `tuned`: a tuned-configuration file's content (bench/tune.py): the agents play its
    configurations on the report seeds, the folder's track is "tuned" with its budget. `track`: a
    named track of the suite file (e.g. "glm"), its cells at their horizons on the report seeds
    (with `tuned`: its tuned twin "glm-tuned", the file's configurations chosen on that track).
    `only_cells`: only these cell ids of the track (`bench regen` of a named track runs only the cells
    whose rows it cannot copy from the report track's references)."""
    from gym_ctxbandits.compare import check_comparison
    from gym_ctxbandits.user_modules import import_modules

    out = Path(out)
    names = list(dict.fromkeys([BASELINE, *agents]))
    if track is not None and quick:
        raise ValueError(f"--track {track} plays the report seeds on its cells; --quick is a track of its own: give "
                         "one of them")
    if track is not None and base_track(track) != track:
        if not tuned:
            raise ValueError(f"track {track} plays tuned configurations: give --track {base_track(track)} --tuned FILE")
        track = base_track(track)
    track = None if track == "report" else track
    cells, seeds = suite.track(track or quick)
    if only_cells is not None:
        if unknown := sorted(set(only_cells) - {c.id for c in cells}):
            raise ValueError(f"the track has no cells {unknown}; its cells are {', '.join(c.id for c in cells)}")
        cells = tuple(c for c in cells if c.id in only_cells)
    import_modules(imports)          # every name, env and option checked before anything runs (a typo costs nothing)
    configs = tuned_configs(tuned, suite, names, quick, track) if tuned else {}
    specs = {n: spec_of(n, configs.get(n, {}), suite) for n in names}     # suite.kind: a mix of kinds refused
    check_comparison([EnvSpec(c.env, c.kwargs) for c in cells], list(specs.values()), list(seeds), workers,
                     out, device, backend)
    manifest = _pinned(out, suite, quick, tuned, track)
    if tuned:
        if changed := [a for a, c in configs.items() if manifest["tuned"]["configs"].get(a, c) != c]:
            raise ValueError(f"{out} holds {', '.join(changed)} with another tuned configuration: give another --out "
                             "(one configuration per agent per folder)")
        manifest["tuned"]["configs"].update(configs)
        manifest["tuned"].setdefault("sources", {}).update({a: tuned.get("source") for a in configs})
        manifest["tuned"]["tune_seeds"] = sorted({*manifest["tuned"]["tune_seeds"], *tuned["tune_seeds"]})
    out.mkdir(parents=True, exist_ok=True)
    _write(out, manifest)
    with one_torch_thread() if any(agent_device(s, "cpu") for s in specs.values()) else nullcontext():
        _play(suite, cells, seeds, specs, out, manifest, progress, backend=backend, workers=workers,
              address=address, batch=batch, imports=imports, device=device)
    return manifest


def _play(suite: Suite, cells, seeds, specs: dict, out: Path, manifest: dict, progress, **options) -> None:
    """Run each agent of `specs` on each of `cells` of `suite` into `out` (`for_cell`), recording
    its seconds in `manifest`."""
    done = {name: 0 for name in specs}

    def record(name, cell, wall, cpu_s):
        times = manifest["wall_seconds"].setdefault(name, {})
        cpu = manifest.setdefault("cpu_seconds", {}).setdefault(name, {})
        times.setdefault(cell.id, round(wall, 2))                # a resumed cell keeps its first run's
        cpu.setdefault(cell.id, round(cpu_s, 2))
        _write(out, manifest)
        done[name] += 1
        if progress:
            progress(f"{name} {done[name]}/{len(cells)} {cell.id}: {times[cell.id]:.1f} s ({cpu[cell.id]:.1f} CPU-s)")

    play_cells([(name, for_cell(spec, cell, suite), cell, out / slug(name) / cell.id) for name, spec in specs.items()
                for cell in cells], seeds, options, record)


def play_cells(tasks, seeds, options: dict, record) -> None:
    """Run each task (key, AgentSpec, cell, folder) on `seeds` into its folder, calling
    `record(key, cell, wall seconds, CPU seconds)` as each ends; `options` are the comparison
    runner's (backend, workers, batch, imports, device, ...).

    In-process and on Ray the cells run one after another, each a comparison that spreads its seeds
    (Ray: its units) as it can; with `backend="processes"` the cells themselves are spread over the
    `workers` processes, each cell run in-process there, since a batched agent makes a cell one
    unit of ten seeds and the other workers would wait. A cell's numbers are the same either way.
    When a cell fails, the cells not started yet are cancelled and its error raised; the finished
    ones are kept."""
    if options.get("backend") != "processes":
        for key, spec, cell, folder in tasks:
            record(key, cell, *_play_cell(cell, spec, seeds, str(folder), options))
        return
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed
    from concurrent.futures.process import BrokenProcessPool

    from gym_ctxbandits.backends import WorkerDied, _init_worker

    workers = options.get("workers") or os.cpu_count() or 1
    method = "spawn" if options.get("device", "cpu") != "cpu" else None           # CUDA needs a fresh process
    with ProcessPoolExecutor(max_workers=max(1, min(workers, len(tasks))), initializer=_init_worker,
                             mp_context=multiprocessing.get_context(method)) as pool:
        futures = {pool.submit(_play_cell_in_worker, cell, spec, seeds, str(folder), options, os.getcwd()): (key, cell)
                   for key, spec, cell, folder in tasks}
        for future in as_completed(futures):
            try:
                record(*futures[future], *future.result())
            except BrokenProcessPool:
                key, cell = futures[future]
                raise WorkerDied(f"a worker process died (killed, or out of memory) while running {key} on {cell.id}; "
                                 "the finished cells are kept: run the same command again to resume") from None
            except BaseException:
                for pending in futures:         # the call fails: the cells not started yet would run for nothing
                    pending.cancel()            # (a study's diverging candidate stops at its first failed cell)
                raise


def _play_cell(cell, spec: AgentSpec, seeds, folder: str, options: dict) -> tuple[float, float]:
    """One (agent, cell) comparison into `folder`; its (wall, CPU) seconds (`cpu_clock`)."""
    from gym_ctxbandits.compare import run

    start, start_cpu = time.perf_counter(), cpu_clock()
    run(EnvSpec(cell.env, cell.kwargs), spec, seeds=list(seeds), horizon=cell.horizon, out=folder,
        log_every=cell.log_every, **options)
    return time.perf_counter() - start, cpu_clock() - start_cpu


def _play_cell_in_worker(cell, spec: AgentSpec, seeds, folder: str, options: dict, root: str) -> tuple[float, float]:
    """`_play_cell` in a worker of `play_cells`: the user's modules imported from the parent's
    folder `root` first, the cell run in-process with torch on one thread (as the references are
    made)."""
    from gym_ctxbandits.user_modules import import_modules

    import_modules(options.get("imports", ()), root)
    with one_torch_thread() if agent_device(spec, "cpu") is not None else nullcontext():
        return _play_cell(cell, spec, seeds, folder, {**options, "backend": "inprocess", "workers": None})
