"""Result files of a comparison: one Parquet file per job, written atomically, and a manifest.

A file is trusted only if it is complete (every logged round of its job present) and its values
still have the SHA-256 recorded in its Parquet metadata when it was written; a missing, partial,
unreadable or altered file means the job is run again on resume, and `load_results` (plot, the
summary) refuses it, naming it. Files are written to a temporary name and renamed, so an
interrupted comparison never leaves a half-written file under a job's name.

The folder is a local path or a URI (s3://, gs://, file://: store.py), under the same rules.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import tempfile
import warnings
from pathlib import Path

from gym_ctxbandits.jobs import COLUMNS, Job
from gym_ctxbandits.store import UriPath, location

MANIFEST = "manifest.json"
CHECKSUM = b"gym_ctxbandits.sha256"   # Parquet metadata key: SHA-256 of the table's values


class ResultCorrupt(ValueError):
    """A result file that cannot be trusted: unreadable, or its values changed since it was written."""


def content_digest(table) -> str:
    """SHA-256 of a result table's values, row by row over every column (what a flipped byte changes)."""
    import pandas as pd

    return hashlib.sha256(pd.util.hash_pandas_object(table, index=False).to_numpy().tobytes()).hexdigest()


def read_checked(path: Path | UriPath):
    """The table in result file `path`, or a ResultCorrupt naming it when it is unreadable, has no
    checksum, or its values no longer match the checksum recorded when it was written."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    if isinstance(path, UriPath):
        data = path.read_bytes()                  # a network or permission error is not the file's fault
        try:
            arrow = pq.read_table(pa.BufferReader(data))
        except Exception as err:
            raise ResultCorrupt(f"{path} is unreadable ({err})") from None
        return _checked(arrow, path)
    for attempt in range(3):
        before = os.stat(path)
        try:
            arrow = pq.read_table(path)
            break
        except Exception as err:
            after = os.stat(path)
            if attempt < 2 and (after.st_ino, after.st_mtime_ns) != (before.st_ino, before.st_mtime_ns):
                continue                          # replaced by a writer while being read: read the new file
            raise ResultCorrupt(f"{path} is unreadable ({err})") from None
    return _checked(arrow, path)


def _checked(arrow, path):
    """The pandas table of `arrow` (read from `path`) if its checksum holds, else a ResultCorrupt."""
    expected = (arrow.schema.metadata or {}).get(CHECKSUM)
    table = arrow.to_pandas()
    if expected is None:
        raise ResultCorrupt(f"{path} has no checksum (written by an older gym-ctxbandits or another program)")
    if content_digest(table) != expected.decode():
        raise ResultCorrupt(f"{path} is damaged: its values do not match the checksum recorded when it was written")
    return table


def _file_mode() -> int:
    """The mode a plain `open` gives a new file (0644 under the usual umask 022); mkstemp's is 0600."""
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


FILE_MODE = _file_mode()


def write_atomic(table, path: Path | UriPath) -> None:
    """Write `table` as Parquet to `path` via a temporary file and an atomic rename, with the SHA-256
    of its values in the file's metadata; the file gets the permissions of the manifest and the
    figures (0644 under umask 022), not mkstemp's 0600. At a URI: written whole under a temporary
    name, then moved (UriPath.write_bytes)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    path.parent.mkdir(parents=True, exist_ok=True)
    arrow = pa.Table.from_pandas(table, preserve_index=False)
    arrow = arrow.replace_schema_metadata({**(arrow.schema.metadata or {}), CHECKSUM: content_digest(table).encode()})
    if isinstance(path, UriPath):
        sink = pa.BufferOutputStream()
        pq.write_table(arrow, sink)
        path.write_bytes(sink.getvalue().to_pybytes())
        return
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".parquet")
    os.close(fd)
    try:
        pq.write_table(arrow, tmp)
        os.chmod(tmp, FILE_MODE)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def is_complete(job: Job, out: Path) -> bool:
    """True when `out` holds an intact result file of `job` (its checksum holds) with every logged round."""
    path = out / job.filename
    if not path.exists():
        return False
    try:
        rounds = read_checked(path)["round"].to_numpy()
    except ResultCorrupt as err:  # a damaged file is redone, never trusted
        warnings.warn(f"{err}; its job will be run again", stacklevel=2)
        return False
    return rounds.tolist() == job.log_rounds().tolist()


def _claim_path(out: Path, job: Job) -> Path:
    return out / f".{job.filename}.claim"


def claim(out: Path, job: Job) -> bool:
    """Take job's claim in `out` (a file made with O_EXCL, naming this host and process): True when
    this process may run the job, False while another live process holds it. Two identical
    commands on one folder thus share the jobs instead of both running each; a claim left by a
    process that died (same host, pid gone) is taken over. A URI folder is not claimed (store.py)."""
    if isinstance(out, UriPath):
        return True
    path = _claim_path(out, job)
    for _ in range(2):
        try:
            fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, FILE_MODE)
        except FileExistsError:
            try:
                host, pid = path.read_text().split()
            except (OSError, ValueError):
                return False                      # being written this instant: someone else's
            if host == socket.gethostname() and not _alive(int(pid)):
                path.unlink(missing_ok=True)      # stale: its process died
                continue
            return False
        with os.fdopen(fd, "w") as f:
            f.write(f"{socket.gethostname()} {os.getpid()}")
        return True
    return False


def release(out: Path, job: Job) -> None:
    """Drop this process's claim on job (after its file is written, or when giving up)."""
    if isinstance(out, UriPath):
        return
    _claim_path(out, job).unlink(missing_ok=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def legacy_results(jobs: list[Job], out: Path | UriPath) -> int:
    """How many of `jobs` (not finished under their own names) have a file in `out` under the name an
    older gym-ctxbandits gave them (Job.legacy_filename): it did not record their data files or user
    code, so whether the old numbers come from today's inputs cannot be told. They are run again
    (compare.run says so); a job without such inputs keeps its old name and simply resumes."""
    return sum(1 for job in jobs if job.inputs and (out / job.legacy_filename).exists())


def write_manifest(out: Path, config: dict, jobs: list[Job]) -> None:
    """Record the comparison's config and its job files in the config's order (env, agent, seed),
    which is the order of the loaded table and of the plots' panels, and, for the jobs that have
    any, the inputs behind each file (its data files' and user code's digests, Job.inputs)."""
    out.mkdir(parents=True, exist_ok=True)
    manifest = {"config": config, "files": [j.filename for j in jobs]}
    if inputs := {j.filename: dict(j.inputs) for j in jobs if j.inputs}:
        manifest["inputs"] = inputs
    if isinstance(out, UriPath):
        (out / MANIFEST).write_text(json.dumps(manifest, indent=2, sort_keys=True, default=str))
        return
    tmp = out / f".{MANIFEST}.{os.getpid()}.tmp"     # per process: two runs may write it at once
    tmp.write_text(json.dumps(manifest, indent=2, sort_keys=True, default=str))
    os.replace(tmp, out / MANIFEST)


def manifest_files(out: Path | UriPath) -> list[str]:
    """The result files listed by the manifest of folder `out`; a missing manifest is a
    FileNotFoundError, a damaged one (not JSON, no list of files, an empty list) a ValueError of
    one line naming it and the way back: the comparison's command rewrites it and resumes."""
    manifest = out / MANIFEST
    if not manifest.exists():
        raise FileNotFoundError(f"{out} has no {MANIFEST}: is it a results folder written by `ctxbandits run`?")
    recover = ("run the comparison's `ctxbandits run` command into this folder again: it rewrites the manifest and "
               "reuses the finished jobs' files")
    try:
        files = json.loads(manifest.read_text()).get("files")
    except (ValueError, AttributeError) as err:      # not JSON (UnicodeDecodeError too), or JSON but not an object
        reason = f"is not valid JSON ({err})" if isinstance(err, ValueError) else "is not a JSON object"
        raise ValueError(f"{manifest} {reason}; {recover}") from None
    if not isinstance(files, list) or not all(isinstance(f, str) for f in files):
        raise ValueError(f"{manifest} has no list of result file names under 'files'; {recover}")
    if not files:
        raise ValueError(f"{manifest} lists no result files; {recover}")
    return files


def load_results(out: str | Path):
    """All result rows of the comparison in folder `out` (a path or a URI), as one tidy DataFrame."""
    import pandas as pd

    out = location(out)
    files = manifest_files(out)
    missing = [f for f in files if not (out / f).exists()]
    if missing:
        raise FileNotFoundError(f"{len(missing)} of {len(files)} result files are missing in {out} (e.g. {missing[0]}); "
                                "run the same comparison again to finish it")
    try:
        tables = [read_checked(out / f) for f in files]
    except ResultCorrupt as err:
        raise ResultCorrupt(f"{err}. Run the same comparison again: it redoes that job.") from None
    return pd.concat(tables, ignore_index=True)[COLUMNS]


def _mean_se(values, digits: int = 1) -> str:
    """'mean ± standard error' of a column of final values; 'n/a' when it has none (a replay's regret)."""
    if values.isna().all():
        return "n/a"
    se = values.std(ddof=1) / len(values) ** 0.5 if len(values) > 1 else float("nan")
    return f"{values.mean():.{digits}f} ± {se:.{digits}f}"


def summary(table) -> str:
    """Markdown table of a comparison: per env and agent, the final cumulative regret and reward
    (mean ± standard error over seeds), seconds per 1,000 rounds, and, when the env's comparison
    includes the Random agent, the final regret as a fraction of Random's ("regret / Random")."""
    last = table.loc[table.groupby(["env", "env_kwargs", "agent", "seed"])["round"].idxmax()]
    last = last.assign(ms=1000 * (last["act_seconds"] + last["observe_seconds"]) / last["round"])
    random = last[last["agent"] == "Random"].groupby(["env", "env_kwargs"])["cum_regret"].mean()
    rows = ["| env | kwargs | agent | seeds | T | final regret (mean ± se) | regret / Random | final reward (mean ± se) "
            "| s / 1000 rounds |", "|---|---|---|---|---|---|---|---|---|"]
    for (env, kwargs, agent), g in last.groupby(["env", "env_kwargs", "agent"], sort=False):
        base = random.get((env, kwargs))
        ratio = f"{g['cum_regret'].mean() / base:.2f}" if base and not g["cum_regret"].isna().all() else "n/a"
        rows.append(f"| {env.removeprefix('CtxBandit/')} | `{kwargs}` | {agent} | {len(g)} | {g['round'].max()} "
                    f"| {_mean_se(g['cum_regret'])} | {ratio} | {_mean_se(g['cum_reward'])} | {g['ms'].mean():.3f} |")
    return "\n".join(rows)
