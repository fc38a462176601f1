"""`gym_ctxbandits.run`: a whole comparison (envs x agents x seeds), resumable, on any backend."""

from __future__ import annotations

import inspect
import os
import sys
import time
import warnings
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path

import gymnasium as gym

from gym_ctxbandits import backends, ray_backend
from gym_ctxbandits.delays import Feedback
from gym_ctxbandits.experiment import batchable, run_batch, run_job
from gym_ctxbandits.jobs import (AgentSpec, EnvSpec, Job, agent_device, check_kinds, env_creator, env_spec,
                                 import_agents, kind, make_jobs, random_lists, seed_list)
from gym_ctxbandits.registration import other_env_ids
from gym_ctxbandits.results import claim, is_complete, legacy_results, load_results, release, write_manifest
from gym_ctxbandits.store import UriPath, location
from gym_ctxbandits.user_modules import import_modules


def _units(jobs: list[Job], batch: int) -> list[list[Job]]:
    """Group the jobs into units of work: the seeds of a batchable (env, agent) in chunks of at most
    `batch`, every other job alone."""
    groups: dict[tuple, list[Job]] = {}
    for job in jobs:
        key = (job.env.title, job.agent.title) if batch > 1 and batchable(job) else (job.filename,)
        groups.setdefault(key, []).append(job)
    return [g[i:i + batch] for g in groups.values() for i in range(0, len(g), batch)]


def _as_list(x):
    return [x] if isinstance(x, (str, EnvSpec, AgentSpec)) else list(x)


# what gym.make takes besides an env's own keyword arguments
MAKE_KWARGS = {"max_episode_steps", "disable_env_checker", "render_mode", "autoreset", "apply_api_compatibility"}


def check_env_spec(spec: EnvSpec) -> None:
    """A registered env id (else a ValueError with the closest ids) whose kwargs the env takes; a
    `module:Id` id imports `module` first."""
    try:
        registered = env_spec(spec.id)
    except gym.error.Error:
        others = set(other_env_ids())
        ids = [k for k in gym.registry if k.startswith("CtxBandit/") or k in others]
        hint = import_agents().base.did_you_mean(spec.id.rpartition(":")[2], ids, "CtxBandit/")
        raise ValueError(f"unknown env id {spec.id!r}.{hint} `ctxbandits list` lists the registered ids (a user's "
                         "env: --import the module that registers it, or give the id as `module:Id`).") from None
    creator = registered.entry_point
    if isinstance(creator, str):
        creator = gym.envs.registration.load_env_creator(creator)
    params = inspect.signature(creator).parameters
    if any(p.kind == p.VAR_KEYWORD for p in params.values()):
        return
    bad = sorted(set(spec.kwargs) - set(params) - MAKE_KWARGS)
    if bad:
        valid = [p for p in params if p not in ("self",)]
        raise ValueError(f"env {spec.id!r} takes no argument {', '.join(map(repr, bad))}; its arguments are "
                         f"{', '.join(valid)}")


def check_device(device, flag: str = "", cluster: bool = False) -> str:
    """The torch device of a comparison, checked against this machine: "cpu", "cuda", "cuda:N", "mps"
    or "auto", returned with "auto" resolved (cuda when available, else cpu) so that the jobs, and
    their result files, name the device that runs them. A malformed name or a device this machine
    lacks is a ValueError in one line, naming it as `flag` does ("--device") or else as `device=`.
    With `cluster` (the Ray backend) CUDA runs on the cluster's GPU nodes, not here: it is not
    looked for on this machine (the units ask Ray for GPUs instead: ray_backend.py)."""
    rule = import_agents().params.Device
    shown = (lambda d: f"{flag} {d}") if flag else (lambda d: f"device={d!r}")
    if not rule().accepts(device):
        raise ValueError(f"{shown(device)}: not a device; give {rule()}")
    if not (cluster and device.startswith("cuda")) and (why := rule.missing(device)):
        raise ValueError(f"{shown(device)}: {why}; use {shown('cpu')}")
    return rule.resolve(device)


def check_comparison(envs: list[EnvSpec], agents: list[AgentSpec], seeds, workers, out, device="cpu",
                     backend: str = "inprocess") -> str:
    """Everything a comparison needs, checked before anything is written: a rejected run leaves an
    existing results folder as it was. The torch device first (`check_device`; on the Ray backend
    CUDA is the cluster's); agents are built once on it (their state waits for the first obs, so
    this is cheap); envs are checked by id and keyword names, not built (a dataset may be large);
    a URI `out` must name a filesystem this machine has the library of, and answer. Returns the
    device, resolved."""
    device = check_device(device, cluster=backend == "ray")
    seed_list(seeds)
    if workers is not None and not (isinstance(workers, int) and not isinstance(workers, bool) and workers >= 1):
        raise ValueError(f"workers must be an integer >= 1 (local processes), got {workers!r}")
    for env in envs:
        check_env_spec(env)
    check_kinds(envs, agents)
    for agent in agents:
        agent.build(0, agent_device(agent, device))
    if out is not None and isinstance(location(out), UriPath):
        check_uri(location(out))
    elif out is not None:
        path = Path(out)
        if path.exists() and not path.is_dir():
            raise ValueError(f"out {str(path)!r} is a file; give a folder for the result files")
        existing = next(p for p in (path, *path.parents) if p.exists())
        if not existing.is_dir():
            raise ValueError(f"out {str(path)!r}: {str(existing)!r} is a file, so no folder can be made under it; "
                             "give a folder path")
        if not os.access(existing, os.W_OK):
            raise ValueError(f"out {str(path)!r} is not writable ({str(existing)!r} is read-only); give another folder")
    return device


def check_uri(out: UriPath) -> None:
    """A URI results folder that answers and is not a file; its failures as one ValueError line."""
    try:
        is_file = out.exists() and not out.is_dir()
    except Exception as err:
        raise ValueError(f"out {str(out)!r}: cannot reach it ({type(err).__name__}: {err}); check the credentials "
                         "and the network, or give a local folder") from None
    if is_file:
        raise ValueError(f"out {str(out)!r} is a file; give a folder for the result files")


def run(envs, agents, seeds=10, horizon: int | None = 1000, out: str | Path | None = None, backend: str = "inprocess",
        workers: int | None = None, address: str | None = None, log_every: int = 1, progress: bool = False,
        batch: int = 10, imports: Sequence[str] = (), device: str = "cpu", ray=None, rerun: bool = False,
        feedback: Feedback | dict | None = None):
    """Run every agent on every env for `horizon` rounds and each seed; return the tidy table.

    envs: env ids or `EnvSpec(id, kwargs)`; agents: registered names or `AgentSpec(name, kwargs,
    label)`; seeds: a count N (0..N-1), a list, or the text "A:B" (A..B-1) or "3,7,11"; horizon: the
    rounds of every run, or None for each env's registered T (its paper's; 1,000 where it has none). With
    `out`, each job's table is written there as Parquet and a job whose complete file exists is
    not run again (resume): its file is named by everything that decides its numbers, the data
    files its kwargs name and the user's code included (experiment.job_inputs), so an edited
    dataset or agent is run again, never taken from the old file. The table's `attrs["reused"]`
    counts the finished jobs reused (said on stderr with `progress`); `rerun=True` runs them all
    again. Without `out` the comparison runs in this process and nothing is
    written. `backend` is "inprocess", "processes" (`workers` local processes, default all
    cores) or "ray" (`address` of an existing cluster, default a new local one; `ray`: its
    RayOptions or a dict of them, see ray_backend.py). `out` may also be a URI (s3://, gs://,
    file://: store.py). The seeds of an
    (env, agent) whose agent serves N instances at once run `batch` at a time as one native
    vector env and one batched agent (the plain loop's numbers in less time; the files of a
    batch are written when it ends, so a smaller batch loses less to an interruption); `batch=1`
    runs every job in the plain loop. `imports` are the user's modules that register the
    comparison's own agents or envs (dotted names importable from the current folder, or paths of
    .py files): imported here before any name is looked up, and again in every worker. `device`
    ("cpu", "cuda", "cuda:N", "mps" or "auto": cuda when available) is given to every agent that
    takes a `device` hyper-parameter (the torch agents) unless its kwargs set one, and ignored by the
    others; a device this machine lacks is a ValueError before anything runs. The jobs carry it to
    every worker, and a job whose agent runs off the CPU gets result files of its own (Job.filename).
    `feedback` delays, censors or batches the rewards every agent learns from
    (gym_ctxbandits.delays.Feedback, or a dict of its fields, e.g. {"delay": "geometric:100",
    "window": 500, "feedback_every": 50}; None: each reward at once); regret is still counted when
    the agent acts, and the model is part of every job's file name.
    """
    if backend not in backends.BACKENDS:
        raise ValueError(f"backend must be one of {backends.BACKENDS}, got {backend!r}")
    if horizon is not None and (not isinstance(horizon, int) or isinstance(horizon, bool) or horizon < 1):
        raise ValueError(f"horizon must be an integer >= 1, or None for each env's registered T; got {horizon!r}")
    if not isinstance(batch, int) or batch < 1:
        raise ValueError(f"batch must be an integer >= 1 (seeds per batched run; 1 = plain loop), got {batch!r}")
    if not isinstance(log_every, int) or log_every < 1:
        raise ValueError(f"log_every must be an integer >= 1, got {log_every!r}")
    feedback = Feedback.of(feedback)
    imports = [imports] if isinstance(imports, str) else list(imports)
    import_modules(imports)
    env_specs = [e if isinstance(e, EnvSpec) else EnvSpec(e) for e in _as_list(envs)]
    agent_specs = random_lists(env_specs, [a if isinstance(a, AgentSpec) else AgentSpec(a) for a in _as_list(agents)])
    ray = ray_backend.RayOptions.of(ray) if backend == "ray" else None
    device = check_comparison(env_specs, agent_specs, seeds, workers, out, device, backend)
    if feedback is not None and (ranked := [e.id for e in env_specs if kind(env_creator(e.id)) == "ranking"]):
        raise ValueError(f"feedback: delayed or batched feedback is for one-arm envs; {', '.join(ranked)} ranks items "
                         "(a ranking agent learns from each round's clicks at once): drop `feedback` (--delay, "
                         "--window, --feedback-every) or the ranking env")
    jobs = make_jobs(env_specs, agent_specs, seeds, horizon, log_every, device, feedback)
    if out is None:
        if backend != "inprocess":
            raise ValueError(f"backend {backend!r} writes result files: give `out`, a results folder")
        import pandas as pd

        units = _units(jobs, batch)
        return pd.concat([t for u in units for t in (run_batch(u) if len(u) > 1 else [run_job(u[0])])],
                         ignore_index=True)
    out = location(out)
    config = {"envs": [asdict(e) for e in env_specs], "agents": [asdict(a) for a in agent_specs],
              "seeds": sorted({j.seed for j in jobs}), "horizon": horizon, "log_every": log_every, "device": device}
    if feedback is not None:
        config["feedback"] = asdict(feedback)
    write_manifest(out, config, jobs)
    # what a worker imports first (from this process's folder): the user's modules and those of `module:Id` ids
    modules = [*imports, *(m for e in env_specs if (m := e.id.rpartition(":")[0]))]
    pending = jobs if rerun else [job for job in jobs if not is_complete(job, out)]
    reused = len(jobs) - len(pending)
    if reused and progress:
        print(f"{out}: reusing the {reused} of {len(jobs)} jobs finished there with the same inputs (--rerun, or "
              "rerun=True, runs them again)", file=sys.stderr)
    if not rerun and (legacy := legacy_results(pending, out)):
        warnings.warn(f"{legacy} of {len(jobs)} jobs in {out} have results written by an older gym-ctxbandits, which "
                      "did not record the data files and user code behind them: they are run again (under new names; "
                      "the old files are kept), so their numbers are those of today's data and code", stacklevel=2)
    while pending:
        mine = [job for job in pending if claim(out, job)]   # the others are being run by another process
        if not mine:
            time.sleep(0.5)
        else:
            try:
                todo = _units(mine, batch)
                if backend == "inprocess":
                    backends.run_inprocess(todo, out, progress)
                elif backend == "processes":
                    backends.run_processes(todo, out, progress, workers, modules, os.getcwd())
                else:
                    ray_backend.run_ray(todo, out, progress, address, modules, os.getcwd(), ray)
            finally:
                for job in mine:
                    release(out, job)
        done = {job.filename for job in mine}
        # another process's job is done when its file is whole (with `rerun`: when this process has run it too)
        pending = [job for job in pending if job.filename not in done and (rerun or not is_complete(job, out))]
    table = load_results(out)
    table.attrs["reused"] = reused
    return table
