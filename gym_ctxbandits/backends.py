"""Where the jobs of a comparison run: in this process, in local processes, or on a Ray cluster.

Every backend runs the same job list through `run_and_save` and writes the same files, so the
numbers do not depend on the backend; only the wall-clock timings do.
"""

from __future__ import annotations

import os
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

from gym_ctxbandits.experiment import Job, run_job
from gym_ctxbandits.results import write_atomic

BACKENDS = ("inprocess", "processes", "ray")


def run_and_save(job: Job, out: str) -> str:
    """Run `job` and write its table under `out`; returns the file name."""
    write_atomic(run_job(job), Path(out) / job.filename)
    return job.filename


def _bar(total: int, enabled: bool, desc: str, **kwargs):
    from tqdm.auto import tqdm

    return tqdm(total=total, disable=not enabled, desc=desc, unit="job", **kwargs)


def run_inprocess(jobs: list[Job], out: Path, progress: bool) -> None:
    from tqdm.auto import tqdm

    with _bar(len(jobs), progress, "jobs", position=0) as overall:
        for job in jobs:
            with tqdm(total=job.horizon, disable=not progress or job.horizon < 5000, leave=False, position=1,
                      desc=f"{job.agent.title} seed {job.seed}", unit="round") as rounds:
                write_atomic(run_job(job, progress=rounds.update), out / job.filename)
            overall.update()


def run_processes(jobs: list[Job], out: Path, progress: bool, workers: int | None = None) -> None:
    workers = workers or os.cpu_count() or 1
    with ProcessPoolExecutor(max_workers=workers) as pool, _bar(len(jobs), progress, f"jobs ({workers} processes)") as bar:
        futures = [pool.submit(run_and_save, job, str(out)) for job in jobs]
        for future in as_completed(futures):
            future.result()
            bar.update()


def run_ray(jobs: list[Job], out: Path, progress: bool, address: str | None = None) -> None:
    """Run on the Ray cluster at `address` (e.g. "ray://host:10001" or "auto"), or a local one.

    `out` must be a path every worker can write (a shared filesystem on a real cluster).
    """
    try:
        import ray
    except ImportError:
        raise ImportError("the Ray backend needs Ray: pip install 'gym-ctxbandits[ray]'") from None
    started = not ray.is_initialized()
    if started:
        ray.init(address=address, include_dashboard=False, log_to_driver=False)
    try:
        remote = ray.remote(run_and_save)
        pending = [remote.remote(job, str(out.resolve())) for job in jobs]
        with _bar(len(jobs), progress, "jobs (ray)") as bar:
            while pending:
                done, pending = ray.wait(pending, num_returns=1)
                ray.get(done)
                bar.update(len(done))
    finally:
        if started:
            ray.shutdown()
