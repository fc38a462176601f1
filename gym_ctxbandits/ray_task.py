"""What a Ray worker runs for one unit of work: check that it imports the driver's gym-ctxbandits,
then run the unit and hand its tables back (or write them to a URI `--out`).

The Ray backend (ray_backend.py) sends this module to the workers by value (cloudpickle's
register_pickle_by_value), not as a name for them to import: the check then runs even on a node
whose installed gym-ctxbandits is older and has no such module. So this module imports only the
standard library and gym_ctxbandits.codehash (sent by value with it) at its top, and the rest of the
package after the check; the unit's jobs come pickled as bytes and are unpickled after the check too,
so a node whose gym-ctxbandits lacks their classes gets the check's one line, not an unpickling error.
"""

from __future__ import annotations

import importlib
import pickle
import socket
from pathlib import Path

from gym_ctxbandits.codehash import source_digest

PACKAGES = ("gym_ctxbandits", "agents")     # the project's code: what is shipped and what is compared
DEPENDENCIES = ("numpy", "scipy", "gymnasium", "pandas", "torch")   # compared too; a difference is a warning


def code_identity() -> dict:
    """This process's gym-ctxbandits: its version, a SHA-256 of the source of its packages (every
    .py and .toml file of gym_ctxbandits/ and agents/, by relative path), the folder it is imported
    from, and the versions of the dependencies that decide the numbers (those imported here)."""
    import sys

    roots = {name: Path(importlib.import_module(name).__file__).parent for name in PACKAGES}
    gym_ctxbandits = sys.modules["gym_ctxbandits"]
    return {"version": getattr(gym_ctxbandits, "__version__", "unknown"), "code": source_digest(roots),
            "folder": str(roots["gym_ctxbandits"]),
            "dependencies": {d: getattr(sys.modules[d], "__version__", "?") for d in DEPENDENCIES if d in sys.modules}}


def _node() -> str:
    import ray

    return f"{socket.gethostname()} ({ray.util.get_node_ip_address()})"


def check_identity(expected: dict, shipped: bool) -> tuple[str | None, list[str]]:
    """(the one-line reason this worker cannot run the driver's units, or None; warnings). The
    reason: it cannot import gym-ctxbandits, or imports another version or other code. Warnings: a
    dependency at another version than the driver's (the numbers may differ in the last digits)."""
    fix = ("install gym-ctxbandits and its dependencies on every node" if shipped else
           "install the driver's gym-ctxbandits on every node, or let the run ship its code (--ray-code ship, "
           "the default)")
    try:
        mine = code_identity()
    except Exception as err:                               # not installed, or a dependency missing
        return f"the Ray worker on {_node()} cannot import gym-ctxbandits ({type(err).__name__}: {err}): {fix}", []
    if (mine["version"], mine["code"]) != (expected["version"], expected["code"]):
        return (f"the Ray worker on {_node()} runs gym-ctxbandits {mine['version']} (code {mine['code']}) from "
                f"{mine['folder']}, not the driver's {expected['version']} (code {expected['code']} from "
                f"{expected['folder']}): {fix}"), []
    warnings = [f"the Ray worker on {_node()} has {d} {v}, the driver {expected['dependencies'][d]}: the numbers may "
                "differ in the last digits" for d, v in mine["dependencies"].items()
                if d in expected["dependencies"] and v != expected["dependencies"][d]]
    return None, warnings


def run(unit: bytes, modules: list[str], expected: dict, shipped: bool, threads: int, out: str | None):
    """Run `unit` (a pickled list of Jobs) here, after the identity check and the user's `modules` (names:
    shipped to this worker's path by the runtime_env). Returns ("mismatch", reason), or ("tables",
    [(file name, table)], warnings) for the driver to write, or ("written", [file names], warnings)
    when `out` is a URI this worker wrote them to."""
    reason, warnings = check_identity(expected, shipped)
    if reason:
        return "mismatch", reason
    import dataclasses

    import ray
    from threadpoolctl import threadpool_limits

    from gym_ctxbandits.backends import unit_tables
    from gym_ctxbandits.results import write_atomic
    from gym_ctxbandits.store import location
    from gym_ctxbandits.user_modules import import_modules

    import_modules(modules)
    unit = pickle.loads(unit)
    if ray.get_gpu_ids():         # Ray shows this task only its own GPUs: cuda:N of the driver's machine is cuda here
        unit = [dataclasses.replace(j, device="cuda") if str(j.device).startswith("cuda") else j for j in unit]
    with threadpool_limits(threads):
        tables = unit_tables(unit)
    if out is None:
        return "tables", [(job.filename, table) for job, table in zip(unit, tables)], warnings
    for job, table in zip(unit, tables):
        write_atomic(table, location(out) / job.filename)
    return "written", [job.filename for job in unit], warnings
