"""Where the work of a comparison runs: in this process, in local processes, or on a Ray cluster
(ray_backend.py).

The unit of work is a list of jobs: one job (the plain loop), or the seeds of one (env, agent)
run as one batch (native vector env and batched agent). Every backend computes the same units
through `unit_tables` and writes the same files, so the numbers do not depend on the backend;
only the wall-clock timings do.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

from gym_ctxbandits.experiment import run_batch, run_job
from gym_ctxbandits.jobs import Job
from gym_ctxbandits.results import write_atomic
from gym_ctxbandits.store import location
from gym_ctxbandits.user_modules import import_modules

BACKENDS = ("inprocess", "processes", "ray")


class WorkerDied(RuntimeError):
    """A local worker process died mid-run; the message names its jobs and how to resume."""


def unit_tables(unit: list[Job], progress=None) -> list:
    """The result tables of a unit of work, one per job: one batched run, or the plain loop."""
    return run_batch(unit, progress) if len(unit) > 1 else [run_job(unit[0], progress=progress)]


def run_unit(unit: list[Job], out: str | Path, progress=None) -> int:
    """Run a unit of work and write one file per job under `out` (a folder or a URI); returns the
    number of jobs."""
    for job, table in zip(unit, unit_tables(unit, progress)):
        write_atomic(table, location(out) / job.filename)
    return len(unit)


def _one_blas_thread() -> None:
    """Worker initializer: one BLAS thread per process. The parallelism is across processes; a
    multi-threaded BLAS in each of them oversubscribes the cores (a (10000, 50) matrix-vector
    product measured 5-8x slower with 2 processes x 2 OpenBLAS threads on 2 cores)."""
    from threadpoolctl import threadpool_limits

    threadpool_limits(1)


def _init_worker() -> None:
    """Worker initializer: one BLAS thread, and exit at once if the parent process dies (a killed
    `ctxbandits run` leaves no orphan computing jobs nobody will collect). A watcher thread waits
    on multiprocessing's sentinel of the parent, which works under every start method: under
    forkserver the worker's parent in the OS is the fork server, not the comparison's process."""
    import threading

    _one_blas_thread()
    parent = multiprocessing.parent_process()

    def watch() -> None:
        parent.join()
        os._exit(1)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


def _run_unit_in_worker(unit: list[Job], out: str, imports: list[str], root: str) -> int:
    """`run_unit` in a worker, after importing the user's modules from the parent's folder `root`:
    a spawned or forkserver worker starts without them (a forked one has them already, and
    importing them again costs nothing)."""
    import_modules(imports, root)
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
                overall.update(run_unit(unit, out, progress=bar.update))


def run_processes(units: list[list[Job]], out: Path, progress: bool, workers: int | None = None,
                  imports: Sequence[str] = (), root: str | None = None, start_method: str | None = None) -> None:
    """Run on `workers` local processes (default: all cores), each importing the user's modules
    `imports` from the folder `root` (default: the current one) first. `start_method` is
    multiprocessing's ("fork", "spawn" or "forkserver"; default: Python's default, but "spawn" when
    a job runs on a GPU: a forked child cannot use CUDA once its parent has touched it, and checking
    the device, torch.cuda.is_available(), already does). Each worker then holds its own CUDA
    context, so a few workers share a GPU better than one per core."""
    if start_method is None and any(job.device not in (None, "cpu") for unit in units for job in unit):
        start_method = "spawn"
    workers = workers or os.cpu_count() or 1
    root = root or os.getcwd()
    with ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context(start_method),
                             initializer=_init_worker) as pool, \
            _bar(sum(map(len, units)), progress, f"jobs ({workers} processes)") as bar:
        futures = {pool.submit(_run_unit_in_worker, unit, str(out), list(imports), root): unit for unit in units}
        for future in as_completed(futures):
            try:
                bar.update(future.result())
            except BrokenProcessPool:
                jobs = ", ".join(job.filename for job in futures[future])
                raise WorkerDied(f"a worker process died (killed, or out of memory) while running {jobs}; the "
                                 "finished jobs' files are kept: run the same command again to resume") from None
