"""The import graph reads top-down (issue 31 item 9): the run path is layered
cli -> config -> compare -> backends, ray_backend -> ray_task -> experiment -> jobs, results, store,
user_modules, codehash, with no module importing one above it, and the agent zoo never imports the env
package. Read statically from the sources (every import, lazy ones inside functions too), so a cycle
shows here even when it happens to work at run time."""

import ast
import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy.sparse import csr_array
from scipy.sparse.csgraph import breadth_first_order, connected_components

ROOT = Path(__file__).resolve().parents[1]
RUN_PATH = ["cli", "config", "compare", "backends", "ray_backend", "ray_task", "experiment", "feedback", "jobs",
            "results", "store", "user_modules", "codehash"]


def import_graph() -> tuple[list[str], set[tuple[str, str]]]:
    """The project's modules (gym_ctxbandits.*, agents.*) and the module -> module edges between them."""
    modules = {".".join(p.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__"): p
               for package in ("gym_ctxbandits", "agents") for p in (ROOT / package).rglob("*.py")}
    edges = set()
    for name, path in modules.items():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                subs = [f"{node.module}.{a.name}" for a in node.names if f"{node.module}.{a.name}" in modules]
                targets = subs if len(subs) == len(node.names) else [node.module, *subs]
            else:
                continue
            edges.update((name, t) for t in targets if t in modules and t != name)
    return sorted(modules), edges


def strong_components(nodes: list[str], edges) -> list[set[str]]:
    """The import cycles among `nodes`: strongly connected components of more than one module."""
    index = {n: i for i, n in enumerate(nodes)}
    pairs = [(index[a], index[b]) for a, b in edges if a in index and b in index]
    matrix = csr_array((np.ones(len(pairs)), tuple(zip(*pairs)) if pairs else ([], [])), shape=(len(nodes),) * 2)
    _, labels = connected_components(matrix, directed=True, connection="strong")
    groups = [{n for n, label in zip(nodes, labels) if label == k} for k in set(labels)]
    return [g for g in groups if len(g) > 1]


def reaches(nodes: list[str], edges, source: str, target: str) -> bool:
    """Whether `source` imports `target`, directly or through other modules."""
    index = {n: i for i, n in enumerate(nodes)}
    pairs = [(index[a], index[b]) for a, b in edges]
    matrix = csr_array((np.ones(len(pairs)), tuple(zip(*pairs))), shape=(len(nodes),) * 2)
    return index[target] in breadth_first_order(matrix, index[source], directed=True, return_predecessors=False)


def test_the_run_path_has_no_cycle_and_reads_top_down():
    nodes, edges = import_graph()
    cycles = strong_components([f"gym_ctxbandits.{m}" for m in RUN_PATH] + ["gym_ctxbandits"], edges)
    assert not cycles, f"import cycles in the run path: {cycles}"
    for lower, upper in [("experiment", "compare"), ("experiment", "backends"), ("results", "experiment"),
                         ("jobs", "experiment"), ("store", "results"), ("user_modules", "ray_task")]:
        assert not reaches(nodes, edges, f"gym_ctxbandits.{lower}", f"gym_ctxbandits.{upper}"), (lower, upper)


def test_the_agent_zoo_does_not_import_the_env_package():
    _, edges = import_graph()
    wrong = sorted((a, b) for a, b in edges if a.startswith("agents") and b.startswith("gym_ctxbandits"))
    assert not wrong, f"agents imports gym_ctxbandits: {wrong}"


def test_the_ray_identity_check_unpickles_on_a_node_without_this_package(tmp_path):
    """ray_task and codehash go to the workers by value: a process that cannot import gym_ctxbandits at
    all still loads the check and computes the same digest (an older node gets the check's one line)."""
    cloudpickle = pytest.importorskip("cloudpickle")
    from gym_ctxbandits import codehash, ray_task

    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "a.py").write_text("x = 1\n")
    for module in (codehash, ray_task):
        cloudpickle.register_pickle_by_value(module)
    try:
        payload = cloudpickle.dumps((ray_task.source_digest, ray_task.check_identity))
    finally:
        for module in (codehash, ray_task):
            cloudpickle.unregister_pickle_by_value(module)
    script = ("import pickle, sys; sys.modules['gym_ctxbandits'] = None; "
              "digest, check = pickle.loads(sys.stdin.buffer.read()); "
              f"print(digest({{'pkg': __import__('pathlib').Path({str(tmp_path / 'pkg')!r})}}))")
    proc = subprocess.run([sys.executable, "-c", script], input=payload, capture_output=True, timeout=60)
    assert proc.returncode == 0, proc.stderr.decode()[-2000:]
    assert proc.stdout.decode().strip() == codehash.source_digest({"pkg": tmp_path / "pkg"})
    assert pickle.loads(pickle.dumps(ray_task.run)) is ray_task.run     # by reference when not registered
