"""Measure what agents cost on a suite's cells: CPU seconds per report seed, one cell at a time.

    python scripts/bench_cost.py --agents GLM-TSL,GLM-UCB --seeds 1 --limit 300 --out cost.json
    python scripts/bench_cost.py --agents GLM-TSL --cells covertype,mnist --horizons covertype=500,mnist=400 --out cost.json

An agent's cells run one after the other in a child process (in-process backend, one BLAS thread)
on the first `--seeds` report seeds at the cell's horizon; the child's CPU time of a cell's run
(env and agent made, every round played) divided by the seeds is the cell's cost per seed. A cell
whose run passes `--limit` CPU seconds is stopped (RLIMIT_CPU: the child is ended and a new one
goes on with the next cell) and its cost is written as null, printed "> limit / seeds"; a cell
where the agent raises an error is written as "failed: " and the error's last line, and the next
cell goes on. `--horizons`
plays cells at other horizons (a track being sized), recorded as `cell@T`. Sizes a suite's tracks
(docs/bench_costs.md) before a whole `bench run` is spent on them.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

CHILD = """
import json, resource, sys, time
from gym_ctxbandits.compare import run
from gym_ctxbandits.experiment import AgentSpec, EnvSpec
agent, seeds, limit, cells = json.loads(sys.argv[1])
for env, kwargs, horizon in cells:
    used = resource.getrusage(resource.RUSAGE_SELF)
    used = used.ru_utime + used.ru_stime
    resource.setrlimit(resource.RLIMIT_CPU, (int(used + limit) + 1, resource.RLIM_INFINITY))
    start = time.process_time()
    run(EnvSpec(env, kwargs), AgentSpec(agent), seeds=seeds, horizon=horizon, log_every=max(1, horizon // 100))
    print(json.dumps(time.process_time() - start), flush=True)
"""


def measure(cells, agent: str, seeds: list[int], limit: float, done=print) -> None:
    """Call done(cell, CPU seconds per seed, None past `limit`, or "failed: ERROR") for each of `cells` in turn."""
    env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    while cells:
        args = json.dumps([agent, seeds, limit, [[c.env, c.kwargs, c.horizon] for c in cells]])
        child = subprocess.Popen([sys.executable, "-c", CHILD, args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 text=True, env=env)
        for line in child.stdout:
            done(cells.pop(0), json.loads(line) / len(seeds))
        err = child.stderr.read()
        if child.wait() != 0:
            if child.returncode == -24:                      # SIGXCPU: the cell passed the limit
                done(cells.pop(0), None)
            elif "Error: " in err:                           # the agent failed: its error's last line
                done(cells.pop(0), "failed: " + err.strip().splitlines()[-1])
            else:
                raise RuntimeError(f"{agent} on {cells[0].id} failed:\n{err[-2000:]}")


def main(argv=None) -> int:
    from gym_ctxbandits.bench.suite import DEFAULT, load

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--agents", required=True, help="comma-separated agent names")
    parser.add_argument("--suite", default=DEFAULT)
    parser.add_argument("--cells", help="comma-separated cell ids (default: all)")
    parser.add_argument("--seeds", type=int, default=1, help="the first N report seeds")
    parser.add_argument("--limit", type=float, default=300, help="CPU seconds after which a cell's run is stopped")
    parser.add_argument("--horizons", help="other horizons for some cells: 'covertype=500,mnist=400'")
    parser.add_argument("--out", required=True, help="JSON file of {agent: {cell: CPU-s per seed, null (past --limit) or 'failed: ERROR'}}; resumes")
    args = parser.parse_args(argv)
    suite = load(args.suite)
    horizons = {}
    for item in filter(None, (args.horizons or "").split(",")):
        cell, _, value = item.partition("=")
        if cell not in {c.id for c in suite.cells} or not value.isdigit() or int(value) < 1:
            parser.error(f"--horizons: {item!r} is not CELL=T with a cell of {suite.key} and T >= 1")
        horizons[cell] = int(value)
    cells = [dataclasses.replace(c, id=f"{c.id}@{horizons[c.id]}", horizon=horizons[c.id]) if c.id in horizons else c
             for c in suite.cells if not args.cells or c.id in args.cells.split(",")]
    seeds = list(suite.report_seeds[:args.seeds])
    out = Path(args.out)
    found = json.loads(out.read_text()) if out.exists() else {}

    for agent in args.agents.split(","):
        mine = found.setdefault(agent, {})

        def done(cell, cost):
            mine[cell.id] = cost
            out.write_text(json.dumps(found, indent=1))
            shown = (cost if isinstance(cost, str) else
                     f"{f'> {args.limit / len(seeds):.0f}' if cost is None else f'{cost:.1f}'} CPU-s per seed")
            print(f"{agent} {cell.id}: {shown}", flush=True)

        measure([c for c in cells if c.id not in mine], agent, seeds, args.limit, done)
    return 0


if __name__ == "__main__":
    sys.exit(main())
