"""Where the work of a comparison runs: in this process, in local processes, or on a Ray cluster.

The unit of work is a list of jobs: one job (the plain loop), or the seeds of one (env, agent)
run as one batch (native vector env and batched agent). Every backend runs the same units
through `run_unit` and writes the same files, so the numbers do not depend on the backend;
only the wall-clock timings do.
"""

from __future__ import annotations

import os
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

from gym_ctxbandits.experiment import Job, run_batch, run_job
from gym_ctxbandits.results import write_atomic

BACKENDS = ("inprocess", "processes", "ray")


class WorkerDied(RuntimeError):
    """A local worker process died mid-run; the message names its jobs and how to resume."""


def run_unit(unit: list[Job], out: str, progress=None) -> int:
    """Run a unit of work and write one file per job under `out`; returns the number of jobs."""
    tables = run_batch(unit, progress) if len(unit) > 1 else [run_job(unit[0], progress=progress)]
    for job, table in zip(unit, tables):
        write_atomic(table, Path(out) / job.filename)
    return len(unit)


def _one_blas_thread() -> None:
    """Worker initializer: one BLAS thread per process. The parallelism is across processes; a
    multi-threaded BLAS in each of them oversubscribes the cores (a (10000, 50) matrix-vector
    product measured 5-8x slower with 2 processes x 2 OpenBLAS threads on 2 cores)."""
    from threadpoolctl import threadpool_limits

    threadpool_limits(1)


def _init_worker(parent: int) -> None:
    """Worker initializer: one BLAS thread, and exit at once if the parent process dies (a killed
    `ctxbandits run` leaves no orphan computing jobs nobody will collect: a watcher thread checks
    every half second that the process is still the parent's child)."""
    import threading
    import time

    _one_blas_thread()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(1)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


def _run_unit_one_thread(unit: list[Job], out: str) -> int:
    _one_blas_thread()
    return run_unit(unit, out)


def _bar(total: int, enabled: bool, desc: str, **kwargs):
    from tqdm.auto import tqdm

    return tqdm(total=total, disable=not enabled, desc=desc, unit="job", **kwargs)


def run_inprocess(units: list[list[Job]], out: Path, progress: bool) -> None:
    from tqdm.auto import tqdm

    with _bar(sum(map(len, units)), progress, "jobs", position=0) as overall:
        for unit in units:
            rounds = unit[0].horizon * len(unit)
            desc = f"{unit[0].agent.title} seed {unit[0].seed}" + (f" (+{len(unit) - 1} batched)" if len(unit) > 1 else "")
            with tqdm(total=rounds, disable=not progress or rounds < 5000, leave=False, position=1, desc=desc,
                      unit="round") as bar:
                overall.update(run_unit(unit, str(out), progress=bar.update))


def run_processes(units: list[list[Job]], out: Path, progress: bool, workers: int | None = None) -> None:
    workers = workers or os.cpu_count() or 1
    with ProcessPoolExecutor(max_workers=workers, initializer=_init_worker, initargs=(os.getpid(),)) as pool, \
            _bar(sum(map(len, units)), progress, f"jobs ({workers} processes)") as bar:
        futures = {pool.submit(run_unit, unit, str(out)): unit for unit in units}
        for future in as_completed(futures):
            try:
                bar.update(future.result())
            except BrokenProcessPool:
                jobs = ", ".join(job.filename for job in futures[future])
                raise WorkerDied(f"a worker process died (killed, or out of memory) while running {jobs}; the "
                                 "finished jobs' files are kept: run the same command again to resume") from None


def run_ray(units: list[list[Job]], out: Path, progress: bool, address: str | None = None) -> None:
    """Run on the Ray cluster at `address` (e.g. "ray://host:10001" or "auto"), or a local one.

    `out` must be a path every worker can write (a shared filesystem on a real cluster).
    """
    try:
        import ray
    except ImportError:
        raise ImportError("the Ray backend needs Ray: pip install ray, or pip install -e '.[ray]' in the "
                          "gym-ctxbandits clone") from None
    started = not ray.is_initialized()
    if started:
        ray.init(address=address, include_dashboard=False, log_to_driver=False)
    try:
        remote = ray.remote(_run_unit_one_thread)
        pending = [remote.remote(unit, str(out.resolve())) for unit in units]
        with _bar(sum(map(len, units)), progress, "jobs (ray)") as bar:
            while pending:
                done, pending = ray.wait(pending, num_returns=1)
                bar.update(sum(ray.get(done)))
    finally:
        if started:
            ray.shutdown()
