"""Time the neural agents on [S0]'s quadratic bandit, and the stacked ensemble against loops.

Part 1: seconds per 1,000 rounds (act + observe) of every neural agent on [S0] §7.1's quadratic
bandit h(x) = 0.01 x^T A A^T x (K = 50 fixed unit-norm arms, d = 20, noise sd 0.5): Neural-ES,
Neural-ES-DT, NeuralUCB, NeuralTS and Neural-PHE with [S0] §7.2's settings (L = 3, N = 20, 100
full-batch gradient steps of 0.01 every round, m = 10); the [S1], [S2] and [S3] agents with their
own papers' defaults (their networks and update schedules differ, so their rows time each
paper's algorithm, not one common network). Only the agent's calls are timed. The machine may be
shared, so the figure is the median over 100-round blocks of the mean cost per round, times
1,000, and the best of `--repeat` runs (robust to bursts of foreign load, as bench_agents.py).

Part 2: one training update (100 gradient steps on the 50 arms' sufficient statistics) plus a
forward pass on the 50 arms, for m = 10 networks: the stacked ensemble (agents.neural.nets, one
batched matmul per layer) against (a) a Python loop over m single networks running the same
hand-written step, and (b) a loop over m `torch.nn` MLPs trained with autograd and
`torch.optim.SGD`, the usual way to write it.

    python scripts/bench_neural.py                 # the tables in docs/neural_agents.md
    python scripts/bench_neural.py --quick         # smoke run (a few seconds)
    python scripts/bench_neural.py --device cuda   # on a GPU
"""

from __future__ import annotations

import argparse
import math
import time
from dataclasses import dataclass, fields

import numpy as np
import torch

import agents
from agents.neural.nets import NTKEnsemble

BLOCK = 100
# The agents of the other papers, timed with their own defaults.
OTHERS = ["DeepFPL", "DeepFL", "repGLM-FPL",                                                   # [S1]
          "NeuralLog-UCB-1", "NeuralLog-UCB-2", "NeuralLog-TS-1", "NeuralLog-TS-2", "NCBF-UCB",  # [S2]
          "Ensemble++", "Ensemble+", "EpiNet", "NeuralGreedy", "LMCTS"]                        # [S3]
QUICK = {"LMCTS": dict(steps=2)}   # --quick: cheaper settings where the defaults are slow


@dataclass
class Args:
    T: int = 1_000          # rounds timed per agent (the warm-up rounds included: they are cheap)
    K: int = 50
    d: int = 20
    m: int = 10
    width: int = 20
    depth: int = 3
    steps: int = 100
    repeat: int = 3
    threads: int = 1
    device: str = "cpu"
    seed: int = 0
    quick: bool = False


def quadratic_problem(K: int, d: int, seed: int):
    """[S0] §7.1's quadratic bandit: unit-norm Gaussian arms, A_ij ~ N(0, 1), h = 0.01 ||A^T x||^2."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((K, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    A = rng.standard_normal((d, d))
    return X.astype(np.float32), 1e-2 * np.square(X @ A).sum(axis=1), rng


def time_agent(name: str, args: Args, kwargs: dict) -> tuple[float, float, float]:
    """(seconds per 1,000 rounds, share of it in act, regret per round) of one run."""
    X, mean, rng = quadratic_problem(args.K, args.d, args.seed)
    noise = 0.5 * rng.standard_normal(args.T)
    agent = agents.make(name, seed=args.seed, device=args.device, **kwargs)
    act_s, obs_s, regret = np.empty(args.T), np.empty(args.T), 0.0
    for t in range(args.T):
        t0 = time.perf_counter()
        a = agent.act(X)
        t1 = time.perf_counter()
        agent.observe(X, a, float(mean[a] + noise[t]))
        act_s[t], obs_s[t] = t1 - t0, time.perf_counter() - t1
        regret += mean.max() - mean[a]
    cost = act_s + obs_s
    n = max(1, len(cost) // BLOCK)
    per_round = float(np.median(cost[: n * BLOCK].reshape(n, -1).mean(axis=1)))
    return 1000 * per_round, float(act_s.sum() / cost.sum()), regret / args.T


# -- part 2: the stacked ensemble against loops --------------------------------------------------
def ensemble_problem(args: Args):
    g = torch.Generator(device=args.device).manual_seed(args.seed)
    dev = torch.device(args.device)
    net = NTKEnsemble.symmetric(args.m, 2 * args.d, args.width, args.depth, g, device=dev)
    for W in net.weights:                                   # trained-looking weights, members apart
        W.add_(0.1 * torch.randn(W.shape, generator=g, device=dev))
    x = torch.randn(args.K, 2 * args.d, generator=g, device=dev)
    count = torch.randint(1, 40, (args.K,), generator=g, device=dev).float()
    target = count * torch.randn(args.m, args.K, generator=g, device=dev)
    return net, x, count, target


def update_stacked(net, x, count, target, args: Args):
    n = float(count.sum())
    net.gd_steps(x, count, target, steps=args.steps, lr=0.01, alpha=1 / n, beta=args.width / n)
    return net(x)


def update_loop_same_step(nets, x, count, target, args: Args):
    n = float(count.sum())
    out = []
    for j, net in enumerate(nets):
        net.gd_steps(x, count, target[j:j + 1], steps=args.steps, lr=0.01, alpha=1 / n, beta=args.width / n)
        out.append(net(x))
    return torch.cat(out)


def make_modules(net, args: Args):
    """m torch.nn MLPs (no biases) holding the ensemble's weights, each with its anchor and SGD optimiser."""
    mods = []
    for j in range(net.m):
        layers = []
        for W in net.weights:
            lin = torch.nn.Linear(W.shape[1], W.shape[2], bias=False, device=W.device)
            with torch.no_grad():
                lin.weight.copy_(W[j].T)
            layers += [lin, torch.nn.ReLU()]
        mod = torch.nn.Sequential(*layers[:-1])
        anchor = [p.detach().clone() for p in mod.parameters()]
        mods.append((mod, anchor, torch.optim.SGD(mod.parameters(), lr=0.01)))
    return mods


def update_loop_autograd(mods, x, count, target, args: Args):
    n = float(count.sum())
    scale = math.sqrt(args.width)
    out = []
    for j, (mod, anchor, opt) in enumerate(mods):
        for _ in range(args.steps):
            opt.zero_grad()
            f = scale * mod(x)[:, 0]
            loss = (0.5 * count * f * f - target[j] * f).sum() / n
            loss = loss + 0.5 * args.width / n * sum(((p - a) ** 2).sum() for p, a in zip(mod.parameters(), anchor))
            loss.backward()
            opt.step()
        with torch.no_grad():
            out.append(scale * mod(x)[:, 0])
    return torch.stack(out)


def best_times(fns, repeat: int, device: str) -> list[float]:
    """Best of `repeat` timings of each function, the functions interleaved (so load bursts hit all alike)."""
    def once(fn):
        if device.startswith("cuda"):
            torch.cuda.synchronize()
        t = time.perf_counter()
        fn()
        if device.startswith("cuda"):
            torch.cuda.synchronize()
        return time.perf_counter() - t

    for fn in fns:                                            # warm-up
        fn()
    return [min(ts) for ts in zip(*[[once(fn) for fn in fns] for _ in range(repeat)])]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for f in fields(Args):
        if f.name == "quick":
            parser.add_argument("--quick", action="store_true", help="smoke run: T=60, 5 steps, 1 repeat")
        else:
            parser.add_argument(f"--{f.name}", type=type(f.default), default=f.default)
    args = Args(**vars(parser.parse_args()))
    if args.quick:
        args.T, args.steps, args.repeat = 60, 5, 1
    torch.set_num_threads(args.threads)

    common = dict(width=args.width, depth=args.depth, steps=args.steps)
    s0 = [("Neural-ES", dict(m=args.m)), ("Neural-ES-DT", {}), ("NeuralUCB", {}), ("NeuralTS", {}),
          ("Neural-PHE", {}), ("NeuralUCB", dict(diag=False))]
    runs = [(name, {**common, **extra}) for name, extra in s0] + [(name, {}) for name in OTHERS]
    print(f"[S0] quadratic bandit, K={args.K} d={args.d}; L={args.depth} N={args.width}, {args.steps} GD steps per "
          f"round; device={args.device}, torch threads={args.threads}, T={args.T}")
    print("| agent | s / 1,000 rounds | act share | regret / round (seed 0) |")
    print("|---|---:|---:|---:|")
    for name, kwargs in runs:
        if args.quick and name in QUICK:
            kwargs = {**kwargs, **QUICK[name]}
        s, share, reg = min(time_agent(name, args, kwargs) for _ in range(args.repeat))
        label = name + "".join(f" {k}={v}" for k, v in kwargs.items() if k == "diag")
        print(f"| {label} | {s:.2f} | {share:.0%} | {reg:.4f} |", flush=True)

    net, x, count, target = ensemble_problem(args)
    singles = [NTKEnsemble([W[j:j + 1].clone() for W in net.weights], [A[j:j + 1].clone() for A in net.anchor])
               for j in range(args.m)]
    mods = make_modules(net, args)
    stacked, loop, auto = best_times([lambda: update_stacked(net, x, count, target, args),
                                      lambda: update_loop_same_step(singles, x, count, target, args),
                                      lambda: update_loop_autograd(mods, x, count, target, args)],
                                     1 if args.quick else max(5, args.repeat), args.device)
    print(f"\nOne update ({args.steps} full-batch GD steps on K={args.K} rows) + forward, m={args.m} networks:")
    print("| implementation | ms per update | speed-up of the stacked ensemble |")
    print("|---|---:|---:|")
    print(f"| stacked ensemble (agents.neural.nets, one bmm per layer) | {1e3 * stacked:.1f} | 1.0x |")
    print(f"| loop over m single networks, same hand-written step | {1e3 * loop:.1f} | {loop / stacked:.1f}x |")
    print(f"| loop over m torch.nn MLPs, autograd + optim.SGD | {1e3 * auto:.1f} | {auto / stacked:.1f}x |")


if __name__ == "__main__":
    main()
