"""Time act + observe per round of the linear agents, single-instance and batched, against a bare loop.

The problem is [S0] §7.1's linear bandit (K = 50 arms, d = 20, T = 10,000, noise sd 0.5) generated
with numpy, no environment. A round is the agent's `act`, the reward lookup and its `observe`;
the reference is a bare numpy Sherman-Morrison LinUCB loop (same rounds, same OFUL radius, no
validation) that makes the same choices as `LinUCB` (`bare_linucb`; tests/agents/test_linear.py
checks it), so "x bare" is what the agent's checks and bookkeeping cost on top of the textbook
loop. Time is the process's CPU time (foreign load on a shared machine preempts the process but
does not add to it), a run's figure is the median over its 500-round blocks, each cell is the
best of `--repeat` runs, and the single-instance runs interleave with runs of the bare loop, so
a slow spell of the machine moves both.

    python scripts/bench_agents.py                      # the table in docs/agents.md
    python scripts/bench_agents.py --T 2000 --agents LinUCB LinTS

`--problem s1` is [S1] §5.1's logistic bandit instead (K = 100 fixed arms in [-1, 1]^d per instance,
theta* ~ N(0, 3/d^2 I), Bernoulli rewards), for the GLM agents; `--skip` rounds are played
before the timed ones, and an agent takes keyword arguments as NAME:key=value,... (the table in
docs/glm_agents.md):

    python scripts/bench_agents.py --problem s1 --K 100 --d 20 --skip 5000 --T 500 --N 10 50 --repeat 1 \
        --agents GLM-TSL GLM-TSL:a=theory,horizon=50000 GLM-FPL GLM-FPL:a=theory,horizon=50000 \
                 GLM-UCB:horizon=50000 GLM-UCB:alpha=0.5 UCB-GLM UCB-GLM:alpha=0.5
"""

from __future__ import annotations

import argparse
import ast
import math
import time

import numpy as np
from scipy.special import expit

import agents

POOL = 64   # distinct arm sets, cycled (a full (T, N, K, d) array would not fit in memory)
BLOCK = 500


def _per_round_us(cost: np.ndarray) -> float:
    """Median over blocks of BLOCK rounds (one block when fewer) of the mean seconds per round, in microseconds."""
    block = min(BLOCK, len(cost))
    blocks = cost[: len(cost) // block * block].reshape(-1, block).mean(axis=1)
    return float(np.median(blocks)) * 1e6


def parse_agent(spec: str) -> tuple[str, dict]:
    """'NAME' or 'NAME:key=value,...' (values read as Python literals, else kept as strings)."""
    name, _, args = spec.partition(":")
    kwargs = {}
    for item in filter(None, args.split(",")):
        key, _, value = item.partition("=")
        try:
            kwargs[key] = ast.literal_eval(value)
        except (ValueError, SyntaxError):
            kwargs[key] = value
    return name, kwargs


def run_s1(spec: str, K: int, d: int, T: int, n: int | None, seed: int, skip: int = 0) -> tuple[float, float]:
    """As `run` on [S1] §5.1's Bernoulli logistic bandit with fixed arms, timing the T rounds after `skip`."""
    name, kwargs = parse_agent(spec)
    rng = np.random.default_rng(seed)
    m = 1 if n is None else n
    arms = rng.uniform(-1.0, 1.0, (m, K, d))
    theta = rng.normal(0.0, np.sqrt(3.0 / d**2), (m, d))
    means = expit((arms @ theta[:, :, None])[:, :, 0])             # (m, K)
    obs = arms[0] if n is None else arms
    rows = np.arange(m)
    agent = agents.make(name, seed=seed, **kwargs)
    cost, regret = np.empty(T), 0.0
    for t in range(skip + T):
        start = time.perf_counter()
        a = agent.act(obs)
        mid = time.perf_counter()
        p = means[rows, a]
        r = (rng.random(m) < p).astype(float)
        start2 = time.perf_counter()
        agent.observe(obs, a, float(r[0]) if n is None else r)
        if t >= skip:
            cost[t - skip] = (mid - start) + (time.perf_counter() - start2)
            regret += float(means[0].max() - p[0])
    return _per_round_us(cost), regret / T


def linear_problem(K: int, d: int, T: int, n: int | None, seed: int):
    """[S0] §7.1's rounds: POOL arm sets (K, d) (or (n, K, d)), their mean rewards and T rounds of noise."""
    rng = np.random.default_rng(seed)
    shape = (POOL, K, d) if n is None else (POOL, n, K, d)
    pool = rng.normal(size=shape) / np.sqrt(d)
    theta = rng.normal(size=d) / np.sqrt(d)
    noise = 0.5 * rng.standard_normal((T,) if n is None else (T, n))
    return pool, pool @ theta, noise


def _cpu_us(stamps: list[float], T: int) -> float:
    """Median over the blocks between `stamps` (taken every BLOCK rounds and at the end) of the CPU
    microseconds per round."""
    sizes = np.diff(list(range(0, T, BLOCK)) + [T])
    return float(np.median(np.diff(stamps) / sizes)) * 1e6


def run(spec: str, K: int, d: int, T: int, n: int | None, seed: int) -> tuple[float, float, np.ndarray]:
    """(CPU microseconds per round: act, reward lookup, observe; mean per-round regret of instance 0;
    the actions (T,) or (T, n)) of the agent `spec` on the linear problem."""
    name, kwargs = parse_agent(spec)
    pool, means, noise = linear_problem(K, d, T, n, seed)
    # a round's means, (K,) or flattened (n * K,): a batched round's rewards are one fancy index at i * K + a_i
    rounds = means if n is None else means.reshape(len(means), n * K)
    offsets = 0 if n is None else np.arange(n) * K
    agent = agents.make(name, seed=seed, **kwargs)
    actions = []
    stamps = []
    for t in range(T):
        if t % BLOCK == 0:
            stamps.append(time.thread_time())
        obs = pool[t % POOL]
        a = agent.act(obs)
        agent.observe(obs, a, rounds[t % POOL][a if n is None else offsets + a] + noise[t])
        actions.append(a)
    stamps.append(time.thread_time())
    actions = np.array(actions, dtype=np.int64)
    seen = means[np.arange(T) % POOL]                            # (T, [n,] K)
    if n is not None:
        seen, first = seen[:, 0], actions[:, 0]
    else:
        first = actions
    regret = float(np.mean(seen.max(axis=-1) - seen[np.arange(T), first]))
    return _cpu_us(stamps, T), regret, actions


def bare_linucb(K: int, d: int, T: int, seed: int) -> tuple[float, np.ndarray]:
    """Reference: the textbook numpy LinUCB loop on the same rounds, (CPU us per round, actions (T,)).

    V^{-1} by Sherman-Morrison, theta_hat = V^{-1} b, and LinUCB's defaults (lam = sigma = S = alpha
    = 1, delta_t = t^-3): width sqrt(log det(V) + 2 log t^3) + 1 (`agents.linear.LinUCB`), np.argmax,
    no validation. It makes LinUCB's choices (tests/agents/test_linear.py), so the two do the same work.
    """
    pool, means, noise = linear_problem(K, d, T, None, seed)
    V_inv, b, theta, logdet = np.eye(d), np.zeros(d), np.zeros(d), 0.0
    actions = []
    stamps = []
    for t in range(T):
        if t % BLOCK == 0:
            stamps.append(time.thread_time())
        X = pool[t % POOL]
        width = math.sqrt(logdet + 6.0 * math.log(t + 1)) + 1.0
        a = int(np.argmax(X @ theta + width * np.sqrt(np.einsum("kd,kd->k", X @ V_inv, X))))
        x = X[a]
        u = V_inv @ x
        denom = 1.0 + x @ u
        V_inv -= np.outer(u, u) / denom
        logdet += math.log(denom)
        b += (means[t % POOL, a] + noise[t]) * x
        theta = V_inv @ b
        actions.append(a)
    stamps.append(time.thread_time())
    return _cpu_us(stamps, T), np.array(actions, dtype=np.int64)


def linear_agents() -> list[str]:
    """The registered agents of agents.linear and agents.linear_ensemble."""
    return [name for name, entry in agents.REGISTRY.items()
            if getattr(entry, "__module__", "") in ("agents.linear", "agents.linear_ensemble")]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", nargs="+", default=None, help="default: every agent of agents.linear and "
                        "agents.linear_ensemble (--problem linear)")
    parser.add_argument("--problem", choices=["linear", "s1"], default="linear")
    parser.add_argument("--K", type=int, default=50)
    parser.add_argument("--d", type=int, default=20)
    parser.add_argument("--T", type=int, default=10_000)
    parser.add_argument("--skip", type=int, default=0, help="untimed rounds before the T timed ones (--problem s1)")
    parser.add_argument("--N", type=int, nargs="+", default=[50], help="instances served by one batched agent")
    parser.add_argument("--repeat", type=int, default=5, help="runs per cell; the fastest is reported")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if args.problem == "s1":
        return main_s1(args)
    names = args.agents or linear_agents()

    # single instance: every repeat runs the bare loop, then each agent, so slow spells hit both
    run(names[0], args.K, args.d, 2 * BLOCK, None, args.seed)      # warm-up (the first timed run was slow)
    bare, single, first = [], {name: [] for name in names}, {}
    for _ in range(args.repeat):
        us, bare_actions = bare_linucb(args.K, args.d, args.T, args.seed)
        bare.append(us)
        for name in names:
            us, regret, actions = run(name, args.K, args.d, args.T, None, args.seed)
            single[name].append(us)
            first.setdefault(name, (regret, actions))
    b = min(bare)
    print(f"linear: K={args.K} d={args.d} T={args.T}; CPU microseconds per round (act, reward lookup, observe), "
          f"median of {BLOCK}-round blocks, best of {args.repeat} runs, single runs interleaved with the bare loop's")
    head = "".join(f" batched N={n} (us/round, all instances) | batched / single | batched / bare loop | per instance (us) |"
                   for n in args.N)
    print(f"| agent | single (us/round) | single / bare loop |{head} mean regret/round |")
    print("|---|---:|---:|" + "---:|---:|---:|---:|" * len(args.N) + "---:|")
    for name in names:
        s = min(single[name])
        cells = ""
        for n in args.N:
            bn = min(run(name, args.K, args.d, args.T, n, args.seed)[0] for _ in range(args.repeat))
            cells += f" {bn:.1f} | {bn / s:.2f} | {bn / b:.2f} | {bn / n:.2f} |"
        print(f"| {name} | {s:.1f} | {s / b:.2f} |{cells} {first[name][0]:.4f} |", flush=True)
    print(f"| bare numpy LinUCB loop (reference) | {b:.1f} | 1.00 |" + " | | | |" * len(args.N) + " |")
    if "LinUCB" in first:
        same = int((first["LinUCB"][1] == bare_actions).sum())
        print(f"\nThe bare loop chose LinUCB's arm in {same} of {args.T} rounds.")


def main_s1(args) -> None:
    """The GLM table of docs/glm_agents.md: wall-clock us per round of the agent's calls."""
    bench = lambda spec, n: run_s1(spec, args.K, args.d, args.T, n, args.seed, args.skip)  # noqa: E731
    names = args.agents or linear_agents()
    print(f"s1: K={args.K} d={args.d} T={args.T} after {args.skip} rounds; microseconds per round "
          f"(act + observe), median of {BLOCK}-round blocks, best of {args.repeat} runs")
    head = "".join(f" batched N={n} (us/round, all instances) | batched / single | per instance (us) |" for n in args.N)
    print(f"| agent | single (us/round) |{head} mean regret/round |")
    print("|---|---:|" + "---:|---:|---:|" * len(args.N) + "---:|")
    for name in names:
        single = [bench(name, None) for _ in range(args.repeat)]
        s = min(us for us, _ in single)
        cells = ""
        for n in args.N:
            bn = min(bench(name, n)[0] for _ in range(args.repeat))
            cells += f" {bn:.1f} | {bn / s:.2f} | {bn / n:.2f} |"
        print(f"| {name} | {s:.1f} |{cells} {single[0][1]:.4f} |", flush=True)


if __name__ == "__main__":
    main()
