"""Rerun shipped reference rows and compare them: does this machine give the bench's numbers?

A reference row is a checkpoint of one agent's run on one cell and report seed (references.py).
`rerun` plays the agent again as its file says it was played (the cell's env, kwargs and log
spacing; on a tuned track the agent's configuration from the manifest; the cell's horizon where
the suite gives agents theirs), on chosen seeds, for the whole horizon or its first `rounds`, and
returns the same checkpoints; `compare` names the rows that differ. A row copied from another
file (the manifest's `reused`) is rerun like any other: the copy claims the same numbers.

Why rows can differ from one machine to another: numpy's OpenBLAS and torch choose their kernels
by the CPU's instruction set (AVX-512, AVX2, ...). Another kernel sums in another order, so its
products differ in the last bits; where an agent's choice is a near tie (two replay arms with the
same features, a network's close logits) it then plays another arm, and the two runs part. The
replay's LinUCB clicks part from round 240 on seven of ten seeds on an AVX2 machine for that
reason. `numerics()` names this machine's kernels; `bench regen` records them in each manifest
entry (`machine.numerics`), and where they are the rows' own a rerun must match bit for bit.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import nullcontext

import numpy as np

from gym_ctxbandits.bench.run import for_cell, one_torch_thread, spec_of
from gym_ctxbandits.bench.suite import Suite, is_tuned
from gym_ctxbandits.experiment import is_replay
from gym_ctxbandits.jobs import AgentSpec, agent_device

# The kernels of the machines that made the references shipped up to 0.16.0 (Intel Xeons with
# AVX-512), recorded since: a sampled rerun of every agent of every shipped folder on an AMD EPYC
# with AVX-512 matches them bit for bit (the SkylakeX OpenBLAS kernels are the same code there),
# the torch agents' first checkpoints included; later, a torch agent's runs may part (MKL, torch's
# BLAS, takes another path on an AMD CPU): NeuralUCB's on s1-bernoulli-logistic from round 248.
SHIPPED_NUMERICS = {"blas": "SkylakeX", "torch": "AVX512", "vendor": "GenuineIntel"}
# Across kernels: the first ACROSS_EXACT checkpoints of a run agree to ACROSS_RTOL (sums taken in
# another order differ in the last bits: 1e-16 relative on s3-mlp-teacher), the later ones, where a
# near tie may have flipped, within ACROSS_LOOSE of the shipped value (relative, or that many
# clicks on the replay): the largest parting measured is NeuralUCB's, 0.198 (docs/reproducibility.md).
ACROSS_EXACT, ACROSS_RTOL, ACROSS_LOOSE = 2, 1e-9, 0.3


def numerics() -> dict:
    """The kernels this machine's numbers come from: numpy's OpenBLAS core ("SkylakeX", "Haswell",
    ...; OPENBLAS_CORETYPE sets it), torch's CPU capability ("AVX512", "AVX2", ...;
    ATEN_CPU_CAPABILITY sets it) and the CPU's vendor (MKL, torch's BLAS, dispatches on it), each
    None where it cannot be read (no threadpoolctl, no torch, no /proc/cpuinfo)."""
    found = {"blas": None, "torch": None, "vendor": None}
    try:
        from threadpoolctl import threadpool_info
        found["blas"] = next((i.get("architecture") for i in threadpool_info()
                              if i.get("internal_api") == "openblas" and "numpy" in i.get("filepath", "")), None)
    except ImportError:
        pass
    try:
        import torch
        found["torch"] = torch.backends.cpu.get_cpu_capability()
    except ImportError:
        pass
    try:
        found["vendor"] = next(line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo")
                               if line.startswith("vendor_id"))
    except (OSError, StopIteration):
        pass
    return found


def rows_numerics(entry: dict, cell: str | None = None) -> dict:
    """The kernels a manifest entry's rows (of `cell`: a copied cell's are its source's) were made
    with; SHIPPED_NUMERICS for rows older than the record."""
    copied = entry.get("reused", {})
    if cell is not None and cell in copied.get("cells", ()):
        return copied.get("numerics") or SHIPPED_NUMERICS
    return entry.get("machine", {}).get("numerics") or SHIPPED_NUMERICS


def same_numerics(entry: dict, cell: str, uses_torch: bool) -> bool:
    """Whether this machine computes as the one that made `entry`'s rows of `cell`: the same
    OpenBLAS core, and for an agent on torch the same torch capability and CPU vendor."""
    mine, theirs = numerics(), rows_numerics(entry, cell)
    return mine["blas"] == theirs["blas"] and (not uses_torch or all(mine[k] == theirs[k] for k in ("torch", "vendor")))


def spec(suite: Suite, track: str, agent: str, cell, manifest: dict) -> AgentSpec:
    """`agent` as its references of `track` played `cell`: its tuned configuration on a tuned
    track, the cell's horizon where the suite gives one (`run.for_cell`)."""
    config = manifest["agents"][agent].get("config", {}) if is_tuned(track) else {}
    return for_cell(spec_of(agent, config, suite), cell, suite)                # Random: a random list on a ranking suite


def rerun(suite: Suite, track: str, agent: str, cell_id: str, seeds: Sequence[int], rounds: int | None = None,
          manifest: dict | None = None):
    """`agent`'s reference rows of `cell_id` on `seeds` (report seeds), played again on this
    machine: the checkpoints of the shipped file that lie within the first `rounds` logged rounds
    (all of them by default), as a table of the file's columns."""
    import pandas as pd

    from gym_ctxbandits.bench import references
    from gym_ctxbandits.compare import run

    where = references.folder(suite, track)
    manifest = manifest or references.read(where, suite, track=track)
    cell = next(c for c in suite.track(track)[0] if c.id == cell_id)
    played = spec(suite, track, agent, cell, manifest)
    horizon = min(rounds or cell.horizon, cell.horizon)
    torch_agent = agent_device(played, "cpu") is not None
    with one_torch_thread() if torch_agent else nullcontext():
        table = run(_env(cell), played, seeds=list(seeds), horizon=horizon,
                    log_every=cell.log_every)
    shipped = references.table(where, manifest, agent)
    keep = shipped[(shipped["cell"] == cell_id) & shipped["seed"].isin(seeds) & (shipped["round"] <= horizon)]
    mine = table.set_index(["seed", "round"]).loc[pd.MultiIndex.from_frame(keep[["seed", "round"]])].reset_index()
    return keep.reset_index(drop=True), mine[["seed", "round", "cum_regret", "cum_reward"]], is_replay(cell.env)


def compare(shipped, mine, replay: bool, across: bool = False) -> list[str]:
    """The rows where `mine` differs from `shipped` (rerun's pair): on the replay its cumulative
    clicks, elsewhere its cumulative regret, and the final cumulative reward. Bit for bit, or with
    `across` (another machine's kernels) each seed's first ACROSS_EXACT checkpoints within
    ACROSS_RTOL and the later ones within ACROSS_LOOSE."""
    column = "cum_reward" if replay else "cum_regret"
    a, b = shipped[column].to_numpy(float), mine[column].to_numpy(float)
    final = shipped["cum_reward"].notna().to_numpy() & (not replay)
    fa, fb = shipped["cum_reward"].to_numpy(float), mine["cum_reward"].to_numpy(float)
    if across:
        early = shipped.groupby("seed").cumcount().to_numpy() < ACROSS_EXACT
        loose = np.where(early, ACROSS_RTOL, ACROSS_LOOSE)
        bad = ~np.isclose(b, a, rtol=loose, atol=np.where(early | (not replay), 0.0, ACROSS_LOOSE * 10), equal_nan=True)
        bad |= final & ~np.isclose(fb, fa, rtol=loose, atol=0.0)
    else:
        bad = ~((a == b) | (np.isnan(a) & np.isnan(b))) | (final & (fa != fb))
    return [f"seed {s} round {r}: {column} {x!r} shipped, {y!r} here"
            for s, r, x, y in zip(shipped["seed"][bad], shipped["round"][bad], a[bad], b[bad])]


def _env(cell):
    from gym_ctxbandits.experiment import EnvSpec
    return EnvSpec(cell.env, cell.kwargs)


def folders() -> list[tuple[Suite, str]]:
    """Every shipped (suite, track) with references: the report track, the tuned one, the named
    tracks and their tuned twins of every shipped suite version."""
    from gym_ctxbandits.bench import references
    from gym_ctxbandits.bench.suite import load, shipped

    found = []
    for key in shipped():
        suite = load(key)
        for track in ("report", "tuned", *suite.tracks, *(f"{t}-tuned" for t in suite.tracks)):
            if (references.folder(suite, track) / references.MANIFEST).exists():
                found.append((suite, track))
    return found


def sample(checkpoints: int = 2, budget: float = 0.15, replay: Sequence[str] = ("Random", "LinUCB", "LinTS", "Greedy"),
           copied_agents: int = 2) -> list[tuple[Suite, str, str, str, int]]:
    """A fixed sample of shipped rows to rerun: (suite, track, agent, cell id, rounds). Every agent
    of every folder that made rows of its own (not copied from another file) gets one cell, the
    first `checkpoints` logged rounds of it, a cell chosen by turns among those whose rows are its
    own and cost at most `budget` CPU-s a seed to rerun (as the manifest timed them; the cheapest
    if none); a folder whose rows are all copies gets its first `copied_agents` agents so; the
    replay cell is added for the `replay` agents of every folder that holds them. Deterministic:
    the same list on every machine."""
    from gym_ctxbandits.bench import references

    chosen = []
    for suite, track in folders():
        manifest = references.read(references.folder(suite, track), suite, verify=False, track=track)
        cells = {c.id: c for c in suite.track(track)[0]}
        per_seed = 1 / len(manifest["seeds"])
        for i, (agent, entry) in enumerate(sorted(manifest["agents"].items())):
            copied = set(entry.get("reused", {}).get("cells", ()))
            own = [c for c in cells if c not in copied]
            if not own and i >= copied_agents:
                continue

            def cost(c):
                return (entry["cpu_seconds"].get(c) or 1e9) * per_seed * checkpoints / 16
            pool = [c for c in (own or cells) if cost(c) <= budget and not is_replay(cells[c].env)]
            pool = pool or [min(own or cells, key=cost)]
            cell = pool[(i + len(chosen)) % len(pool)]
            chosen.append((suite, track, agent, cell, checkpoints * cells[cell].log_every))
            on_replay = next((c for c in cells if is_replay(cells[c].env)), None)
            if on_replay and agent in replay and on_replay not in copied:
                chosen.append((suite, track, agent, on_replay, cells[on_replay].horizon))
    return chosen


def every_row(checkpoints: int = 2) -> list[tuple[Suite, str, str, str, int]]:
    """Every (suite, track, agent, cell) whose rows the shipped references made themselves (a copied
    row is its source's, which tests compare file to file), at its first `checkpoints` checkpoints:
    `sample`'s whole population."""
    from gym_ctxbandits.bench import references

    return [(s, t, a, c.id, checkpoints * c.log_every) for s, t in folders()
            for a, e in references.read(references.folder(s, t), s, verify=False, track=t)["agents"].items()
            for c in s.track(t)[0] if c.id not in e.get("reused", {}).get("cells", ())]


def verify(rows, progress=None) -> list[dict]:
    """Rerun `rows` ((suite, track, agent, cell, rounds), e.g. `sample()`) on the first report seed
    and compare each with its shipped rows: bit for bit where this machine has their kernels, else
    across kernels (`compare`). One dict per row: folder, agent, cell, rows, across, differences
    (`compare`'s lines), seconds; or folder, agent, cell and `skipped`, why, for a cell whose dataset
    is not at hand."""
    import time

    from gym_ctxbandits.bench import references
    from gym_ctxbandits.datasets import DatasetNotFound

    manifests, out = {}, []
    for suite, track, agent, cell, rounds in rows:
        where = references.folder(suite, track)
        if where not in manifests:
            manifests[where] = references.read(where, suite, track=track)
        start = time.perf_counter()
        try:
            shipped, mine, replay = rerun(suite, track, agent, cell, suite.report_seeds[:1], rounds, manifests[where])
        except DatasetNotFound as err:
            out.append({"folder": where.name, "agent": agent, "cell": cell, "skipped": str(err).splitlines()[0]})
            continue
        entry = manifests[where]["agents"][agent]
        across = not same_numerics(entry, cell, agent_device(AgentSpec(agent, entry.get("config", {})), "cpu")
                                   is not None)
        out.append({"folder": where.name, "agent": agent, "cell": cell, "rows": len(shipped), "across": across,
                    "differences": compare(shipped, mine, replay, across), "seconds": time.perf_counter() - start})
        if progress:
            progress(f"{where.name} {agent} {cell}: {'differs' if out[-1]['differences'] else 'same'}")
    return out
