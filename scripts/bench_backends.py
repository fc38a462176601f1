"""What a backend costs per unit of work, and how many units a second it gets through: the same
comparison on `inprocess`, `processes` and `ray`, on units too small to matter (overhead) and on
units of about a second (throughput). The table is docs/cluster.md's.

Each unit is one job (`batch=1`): `--tiny` units of Random for 10 rounds (nothing to compute: the
time is the backend's), and `--units` units of LinUCB on [S0] §7.1's linear bandit for `--horizon`
rounds. Overhead per unit, from the tiny units = (backend's wall time x its slots - in-process
time) / units: the seconds a slot spends per unit besides the work. Ray's start (a local `ray.init`, or connecting to
`--address`) is timed apart from the run, since a cluster is started once for many runs.

    python scripts/bench_backends.py                       # 2 local processes, a local Ray of 2 CPUs
    python scripts/bench_backends.py --address 127.0.0.1:6379 --slots 2
"""

from __future__ import annotations

import argparse
import tempfile
import time
from dataclasses import dataclass

import gym_ctxbandits

ENV = "CtxBandit/Linear-v0"


@dataclass
class Args:
    tiny: int = 200             # units of Random for 10 rounds
    units: int = 20             # units of LinUCB for `horizon` rounds
    horizon: int = 2000
    slots: int = 2              # processes, and the CPUs of the local Ray
    address: str | None = None  # a Ray cluster to use instead of a local one


def timed(agent: str, n: int, horizon: int, out: str, **backend) -> float:
    start = time.perf_counter()
    gym_ctxbandits.run(ENV, [agent], seeds=n, horizon=horizon, log_every=horizon, batch=1, out=out, **backend)
    return time.perf_counter() - start


def main(args: Args) -> None:
    import ray

    from gym_ctxbandits.ray_backend import check_reachable, connect, runtime_env

    check_reachable(args.address)   # before the other backends' minutes: a ClusterError of one line, as the CLI's
    sizes = [("tiny", "Random", args.tiny, 10), ("LinUCB", "LinUCB", args.units, args.horizon)]
    walls = {}
    with tempfile.TemporaryDirectory() as tmp:
        timed("Random", 2, 10, f"{tmp}/warm-up")                # imports and first calls, not timed
        for size, agent, n, horizon in sizes:      # Ray last: a process pool forks this process, Ray's threads too
            walls[size, "inprocess"] = timed(agent, n, horizon, f"{tmp}/{size}-inprocess")
            walls[size, "processes"] = timed(agent, n, horizon, f"{tmp}/{size}-processes", backend="processes",
                                             workers=args.slots)
        start = time.perf_counter()
        connect(ray, args.address, runtime_env(), **({} if args.address else {"num_cpus": args.slots}))
        ray_start = time.perf_counter() - start
        for size, agent, n, horizon in sizes:
            for name in ("ray, first run", "ray, again"):        # the first starts the workers, the second reuses them
                walls[size, name] = timed(agent, n, horizon, f"{tmp}/{size}-{name}", backend="ray")
        ray.shutdown()
    print(f"Ray start ({'connect to ' + args.address if args.address else 'local ray.init'}): {ray_start:.1f} s\n")
    print("| units | rounds | n | backend | wall s | units / s | overhead ms / unit |\n|---|---|---|---|---|---|---|")
    for size, _, n, horizon in sizes:
        base = walls[size, "inprocess"]
        for name in ("inprocess", "processes", "ray, first run", "ray, again"):
            wall = walls[size, name]
            overhead = "-" if name == "inprocess" or size != "tiny" else f"{1000 * (wall * args.slots - base) / n:.1f}"
            print(f"| {size} | {horizon} | {n} | {name} | {wall:.2f} | {n / wall:.1f} | {overhead} |")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    for field, default in vars(Args()).items():
        parser.add_argument(f"--{field}", type=type(default) if default is not None else str, default=default)
    from gym_ctxbandits.ray_backend import ClusterError, parse_address

    args = Args(**vars(parser.parse_args()))
    try:
        parse_address(args.address)
        main(args)
    except ValueError as err:       # parse_address's: a malformed --address
        parser.exit(2, f"{parser.prog}: error: {err}\n")
    except ClusterError as err:
        parser.exit(1, f"{parser.prog}: error: {err}\n")
