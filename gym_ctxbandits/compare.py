"""`gym_ctxbandits.run`: a whole comparison (envs x agents x seeds), resumable, on any backend."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

from gym_ctxbandits import backends
from gym_ctxbandits.experiment import AgentSpec, EnvSpec, Job, batchable, make_jobs, run_batch, run_job
from gym_ctxbandits.results import is_complete, load_results, write_manifest


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


def run(envs, agents, seeds=10, horizon: int = 1000, out: str | Path | None = None, backend: str = "inprocess",
        workers: int | None = None, address: str | None = None, log_every: int = 1, progress: bool = False,
        batch: int = 10):
    """Run every agent on every env for `horizon` rounds and each seed; return the tidy table.

    envs: env ids or `EnvSpec(id, kwargs)`; agents: registered names or `AgentSpec(name, kwargs,
    label)`; seeds: a count (0..n-1) or a list. With `out`, each job's table is written there as
    Parquet and a job whose complete file exists is not run again (resume); without `out` the
    comparison runs in this process and nothing is written. `backend` is "inprocess",
    "processes" (`workers` local processes, default all cores) or "ray" (`address` of an
    existing cluster, default a new local one). The seeds of an (env, agent) whose agent serves N
    instances at once run `batch` at a time as one native vector env and one batched agent (the
    plain loop's numbers in less time; the files of a batch are written when it ends, so a
    smaller batch loses less to an interruption); `batch=1` runs every job in the plain loop.
    """
    if backend not in backends.BACKENDS:
        raise ValueError(f"backend must be one of {backends.BACKENDS}, got {backend!r}")
    if not isinstance(horizon, int) or horizon < 1:
        raise ValueError(f"horizon must be an integer >= 1, got {horizon!r}")
    if not isinstance(batch, int) or batch < 1:
        raise ValueError(f"batch must be an integer >= 1 (seeds per batched run; 1 = plain loop), got {batch!r}")
    if not isinstance(log_every, int) or log_every < 1:
        raise ValueError(f"log_every must be an integer >= 1, got {log_every!r}")
    env_specs = [e if isinstance(e, EnvSpec) else EnvSpec(e) for e in _as_list(envs)]
    agent_specs = [a if isinstance(a, AgentSpec) else AgentSpec(a) for a in _as_list(agents)]
    jobs = make_jobs(env_specs, agent_specs, seeds, horizon, log_every)
    if out is None:
        if backend != "inprocess":
            raise ValueError(f"backend {backend!r} writes result files: give `out`, a results folder")
        import pandas as pd

        units = _units(jobs, batch)
        return pd.concat([t for u in units for t in (run_batch(u) if len(u) > 1 else [run_job(u[0])])],
                         ignore_index=True)
    out = Path(out)
    config = {"envs": [asdict(e) for e in env_specs], "agents": [asdict(a) for a in agent_specs],
              "seeds": sorted({j.seed for j in jobs}), "horizon": horizon, "log_every": log_every}
    write_manifest(out, config, jobs)
    todo = _units([job for job in jobs if not is_complete(job, out)], batch)
    if backend == "inprocess":
        backends.run_inprocess(todo, out, progress)
    elif backend == "processes":
        backends.run_processes(todo, out, progress, workers)
    else:
        backends.run_ray(todo, out, progress, address)
    return load_results(out)
