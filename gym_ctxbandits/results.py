"""Result files of a comparison: one Parquet file per job, written atomically, and a manifest.

A file is trusted only if it is complete (every logged round of its job present); a missing,
partial or unreadable file means the job is run again. Files are written to a temporary name and
renamed, so an interrupted comparison never leaves a half-written file under a job's name.
"""

from __future__ import annotations

import json
import os
import tempfile
import warnings
from pathlib import Path

from gym_ctxbandits.experiment import COLUMNS, Job

MANIFEST = "manifest.json"


def _file_mode() -> int:
    """The mode a plain `open` gives a new file (0644 under the usual umask 022); mkstemp's is 0600."""
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


FILE_MODE = _file_mode()


def write_atomic(table, path: Path) -> None:
    """Write `table` as Parquet to `path` via a temporary file and an atomic rename; the file gets
    the permissions of the manifest and the figures (0644 under umask 022), not mkstemp's 0600."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".parquet")
    os.close(fd)
    try:
        table.to_parquet(tmp, index=False)
        os.chmod(tmp, FILE_MODE)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def is_complete(job: Job, out: Path) -> bool:
    """True when `out` holds a readable result file of `job` with every logged round."""
    import pyarrow.parquet as pq

    path = out / job.filename
    if not path.exists():
        return False
    try:
        rounds = pq.read_table(path, columns=["round"]).column("round").to_numpy()
    except Exception as err:  # a corrupt file is redone, never trusted
        warnings.warn(f"{path} is unreadable ({err}); its job will be run again", stacklevel=2)
        return False
    return rounds.tolist() == job.log_rounds().tolist()


def write_manifest(out: Path, config: dict, jobs: list[Job]) -> None:
    """Record the comparison's config and its job files in the config's order (env, agent, seed),
    which is the order of the loaded table and of the plots' panels."""
    out.mkdir(parents=True, exist_ok=True)
    manifest = {"config": config, "files": [j.filename for j in jobs]}
    tmp = out / (MANIFEST + ".tmp")
    tmp.write_text(json.dumps(manifest, indent=2, sort_keys=True, default=str))
    os.replace(tmp, out / MANIFEST)


def load_results(out: str | Path):
    """All result rows of the comparison in folder `out`, as one tidy DataFrame."""
    import pandas as pd

    out = Path(out)
    manifest = out / MANIFEST
    if not manifest.exists():
        raise FileNotFoundError(f"{out} has no {MANIFEST}: is it a results folder written by `ctxbandits run`?")
    files = json.loads(manifest.read_text())["files"]
    missing = [f for f in files if not (out / f).exists()]
    if missing:
        raise FileNotFoundError(f"{len(missing)} of {len(files)} result files are missing in {out} (e.g. {missing[0]}); "
                                "run the same comparison again to finish it")
    return pd.concat([pd.read_parquet(out / f) for f in files], ignore_index=True)[COLUMNS]


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
