"""Time act + observe per round of the linear agents, single-instance and batched.

The problem is [S0] §7.1's linear bandit (K = 50 arms, d = 20, T = 10,000, noise sd 0.5) generated
with numpy, no environment. Only the agent's calls are timed. The machine is a shared VM whose
speed varies in bursts, so a run's figure is the median over its 500-round blocks of the mean
cost per round, and the best of `--repeat` runs is kept: an estimate of the agent's own cost
that a burst of foreign load does not move.

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
import time

import numpy as np
from scipy.special import expit

import agents

POOL = 64   # distinct arm sets, cycled (a full (T, N, K, d) array would not fit in memory)
BLOCK = 500


def _per_round_us(cost: np.ndarray) -> float:
    """Median over blocks of BLOCK rounds of the mean seconds per round, in microseconds."""
    blocks = cost[: len(cost) // BLOCK * BLOCK].reshape(-1, BLOCK).mean(axis=1)
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


def run(spec: str, K: int, d: int, T: int, n: int | None, seed: int) -> tuple[float, float]:
    """Return (microseconds of act + observe per round, mean per-round regret of instance 0)."""
    name, kwargs = parse_agent(spec)
    rng = np.random.default_rng(seed)
    shape = (POOL, K, d) if n is None else (POOL, n, K, d)
    pool = rng.normal(size=shape) / np.sqrt(d)
    theta = rng.normal(size=d) / np.sqrt(d)
    means = pool @ theta                                         # (POOL, [n,] K)
    noise = 0.5 * rng.standard_normal((T,) if n is None else (T, n))
    rows = None if n is None else np.arange(n)
    agent = agents.make(name, seed=seed, **kwargs)
    cost, regret = np.empty(T), 0.0
    for t in range(T):
        obs, mean = pool[t % POOL], means[t % POOL]
        start = time.perf_counter()
        a = agent.act(obs)
        mid = time.perf_counter()
        r = (mean[a] if n is None else mean[rows, a]) + noise[t]
        start2 = time.perf_counter()
        agent.observe(obs, a, r)
        cost[t] = (mid - start) + (time.perf_counter() - start2)
        best = mean.max(axis=-1)
        regret += float(best - mean[a]) if n is None else float(best[0] - mean[0, a[0]])
    return _per_round_us(cost), regret / T


def plain_linucb(K: int, d: int, T: int, seed: int) -> float:
    """Reference: a bare numpy LinUCB loop (fixed width, np.argmax, no validation), us per round."""
    rng = np.random.default_rng(seed)
    pool = rng.normal(size=(POOL, K, d)) / np.sqrt(d)
    theta_star = rng.normal(size=d) / np.sqrt(d)
    means = pool @ theta_star
    noise = 0.5 * rng.standard_normal(T)
    V_inv, b, theta = np.eye(d), np.zeros(d), np.zeros(d)
    stamps = np.empty(T + 1)
    for t in range(T):
        stamps[t] = time.perf_counter()
        X = pool[t % POOL]
        a = int(np.argmax(X @ theta + np.sqrt(np.einsum("kd,kd->k", X @ V_inv, X))))
        x = X[a]
        u = V_inv @ x
        V_inv -= np.outer(u, u) / (1.0 + x @ u)
        b += (means[t % POOL, a] + noise[t]) * x
        theta = V_inv @ b
    stamps[T] = time.perf_counter()
    return _per_round_us(np.diff(stamps))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", nargs="+", default=["LinUCB", "LinTS", "Lin-ES", "Linear-Ensemble++"])
    parser.add_argument("--problem", choices=["linear", "s1"], default="linear")
    parser.add_argument("--K", type=int, default=50)
    parser.add_argument("--d", type=int, default=20)
    parser.add_argument("--T", type=int, default=10_000)
    parser.add_argument("--skip", type=int, default=0, help="untimed rounds before the T timed ones (--problem s1)")
    parser.add_argument("--N", type=int, nargs="+", default=[50], help="instances served by one batched agent")
    parser.add_argument("--repeat", type=int, default=3, help="runs per cell; the fastest is reported")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    if args.problem == "s1":
        bench = lambda spec, n: run_s1(spec, args.K, args.d, args.T, n, args.seed, args.skip)  # noqa: E731
    else:
        bench = lambda spec, n: run(spec, args.K, args.d, args.T, n, args.seed)  # noqa: E731
    print(f"{args.problem}: K={args.K} d={args.d} T={args.T} after {args.skip} rounds; microseconds per round "
          f"(act + observe), median of {BLOCK}-round blocks, best of {args.repeat} runs")
    head = "".join(f" batched N={n} (us/round, all instances) | batched / single | per instance (us) |" for n in args.N)
    print(f"| agent | single (us/round) |{head} mean regret/round |")
    print("|---|---:|" + "---:|---:|---:|" * len(args.N) + "---:|")
    if args.problem == "linear":
        run(args.agents[0], args.K, args.d, 2 * BLOCK, None, args.seed)   # warm-up: the first timed run was 1.7x slow
    for name in args.agents:
        single = [bench(name, None) for _ in range(args.repeat)]
        s = min(us for us, _ in single)
        cells = ""
        for n in args.N:
            b = min(bench(name, n)[0] for _ in range(args.repeat))
            cells += f" {b:.1f} | {b / s:.2f} | {b / n:.2f} |"
        print(f"| {name} | {s:.1f} |{cells} {single[0][1]:.4f} |", flush=True)
    if args.problem == "linear":
        plain = min(plain_linucb(args.K, args.d, args.T, args.seed) for _ in range(args.repeat))
        print(f"| bare numpy LinUCB loop (reference, includes the reward lookup) | {plain:.1f} | | | | |")


if __name__ == "__main__":
    main()
