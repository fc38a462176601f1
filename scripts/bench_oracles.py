"""CPU time a round (act + observe) of single agents on one precomputed stream: the oracle agents' costs.

The stream is T rounds of `CtxBandit/Supervised-v0` (iris, or `--source pmlb:NAME`), seed 0, recorded
once; every agent plays the same obs with reward 1 for the true class and 0 otherwise, and each figure
is the best of `--repeat` runs, the agents interleaved within a repeat so a slow spell hits them all.
The ratio is to the first agent (docs/oracle_agents.md, "What they cost and how they do"):

    OPENBLAS_NUM_THREADS=1 python scripts/bench_oracles.py --T 2000
    OPENBLAS_NUM_THREADS=1 python scripts/bench_oracles.py --source pmlb:letter --T 300

An agent may carry its hyper-parameters as `ctxbandits run --agents` takes them, e.g.
`--agents "RegCB-opt,RegCB-opt(oracle='sgd'),VW-RegCB-opt"`.
"""

from __future__ import annotations

import argparse
import time

import gymnasium as gym

import agents
import gym_ctxbandits  # noqa: F401  (registers the envs)
from gym_ctxbandits.cli import agent_spec, split_list

AGENTS = "LinUCB,SquareCB,Oracle-Greedy,RegCB-opt,Bag,Cover-NU"


def stream(source: str | None, T: int, seed: int = 0) -> list:
    """T rounds of (obs, the true class's arm)."""
    env = gym.make("CtxBandit/Supervised-v0", **({"source": source} if source else {}))
    obs, _ = env.reset(seed=seed)
    rounds = []
    for _ in range(T):
        nxt, _, _, _, info = env.step(0)
        rounds.append((obs, int(info["optimal_action"])))
        obs = nxt
    return rounds


def cpu_per_round(item: str, rounds: list, seed: int = 0) -> float:
    """CPU seconds a round of a fresh single agent `item` (a name, or NAME(key=value, ...)) playing `rounds`."""
    spec = agent_spec(item, {})
    agent = agents.make(spec.name, seed=seed, **spec.kwargs)
    start = time.process_time()
    for X, best in rounds:
        a = agent.act(X)
        agent.observe(X, a, 1.0 if a == best else 0.0)
    return (time.process_time() - start) / len(rounds)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", default=None, help="a Supervised-v0 source (default: iris)")
    parser.add_argument("--T", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--agents", default=AGENTS, help=f"comma-separated (default {AGENTS})")
    args = parser.parse_args(argv)
    names, rounds = split_list(args.agents, "--agents"), stream(args.source, args.T)
    best = {n: float("inf") for n in names}
    for _ in range(args.repeat):
        for n in names:
            best[n] = min(best[n], cpu_per_round(n, rounds))
    print(f"| agent | us a round ({args.source or 'iris'}, T = {args.T}, best of {args.repeat}) | / {names[0]} |")
    print("|---|---:|---:|")
    for n in names:
        print(f"| {n} | {best[n] * 1e6:.1f} | {best[n] / best[names[0]]:.2f} |")


if __name__ == "__main__":
    main()
