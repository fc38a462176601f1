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

Part 3: the agents that serve N instances in one object (the [S0] and [S2] agents of
agents.neural.core, the [S3] agents of agents.neural.ensemble_pp, epinet, lmcts): seconds per 1,000 rounds of
one agent serving `--N` instances of the quadratic bandit (each with its own arms), per instance,
against the single-instance cost of part 1.

Part 4: each agent's floating-point rate against the machine's. The work of a round is counted
by torch.utils.flop_counter.FlopCounterMode over a second run of the same rounds (same seed, so
the same work): every matrix product that runs (bmm, baddbmm, mm, addmm; Cholesky and triangular
solves, which it does not know, added by their closed forms in EXTRA_FLOPS), forward, backward
and optimiser alike. Elementwise work (ReLU, Adam's moments, sigmoid) is not counted: O(B width)
per operation against O(B in out) for a product. repGLM-FPL's numpy phase is not torch, so not
counted either. Achieved GFLOP/s = counted GFLOP per round / the seconds per round of part 1's
measure; the peak is a 2048 x 2048 float32 matmul timed just before each row with the same
thread count, so that foreign load on a shared machine moves both alike. The same for one agent
serving `--N` instances. `--profile NAME,...` prints torch.profiler's busiest kernels of 100
rounds of those agents (where the time goes).

    python scripts/bench_neural.py                 # the tables in docs/neural_agents.md
    python scripts/bench_neural.py --quick         # smoke run (a few seconds)
    python scripts/bench_neural.py --device cuda   # on a GPU
    python scripts/bench_neural.py --device cuda --cuda_graphs 0   # on a GPU, eager kernels (no CUDA graphs)
    python scripts/bench_neural.py --N 10 --parts 3  # only the batched-instances table
    python scripts/bench_neural.py --parts 3 --agents DeepFPL,Neural-ES-DT   # some agents only
    python scripts/bench_neural.py --parts 4 --repeat 1 --profile Neural-ES   # GFLOP/s against the peak
"""

from __future__ import annotations

import argparse
import contextlib
import math
import time
from dataclasses import dataclass, fields

import numpy as np
import torch
from torch.utils.flop_counter import FlopCounterMode

import agents
from agents.neural import graphs
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
    N: int = 10             # instances served by one batched agent (part 3)
    parts: str = "123"      # which tables to print (4: GFLOP/s against the peak)
    cuda_graphs: int = 1    # on CUDA, replay the training steps from a captured graph (0: eager kernels)
    agents: str = ""        # comma-separated agent names to time (default: all)
    profile: str = ""       # comma-separated agent names to profile (part 4)
    quick: bool = False


def quadratic_problem(K: int, d: int, seed: int):
    """[S0] §7.1's quadratic bandit: unit-norm Gaussian arms, A_ij ~ N(0, 1), h = 0.01 ||A^T x||^2."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((K, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    A = rng.standard_normal((d, d))
    return X.astype(np.float32), 1e-2 * np.square(X @ A).sum(axis=1), rng


def time_agent(name: str, args: Args, kwargs: dict, n: int | None = None,
               mode=contextlib.nullcontext()) -> tuple[float, float, float]:
    """(seconds per 1,000 rounds, share of it in act, regret per round) of one run; n: one agent
    serving n instances (seeds seed..seed+n-1, each its own quadratic bandit; regret per instance);
    mode: a context the rounds run in (a FlopCounterMode or a profiler)."""
    seeds = [args.seed + i for i in range(n or 1)]
    problems = [quadratic_problem(args.K, args.d, s) for s in seeds]
    X, mean = np.stack([p[0] for p in problems]), np.stack([p[1] for p in problems])
    noise = 0.5 * problems[0][2].standard_normal((args.T, len(seeds)))
    agent = agents.make(name, seed=seeds if n else args.seed, device=args.device, **kwargs)
    rows = np.arange(len(seeds))
    act_s, obs_s, regret = np.empty(args.T), np.empty(args.T), 0.0
    with mode:
        for t in range(args.T):
            obs = X if n else X[0]
            t0 = time.perf_counter()
            a = agent.act(obs)
            t1 = time.perf_counter()
            r = mean[rows, a] + noise[t]
            agent.observe(obs, a, r if n else float(r[0]))
            act_s[t], obs_s[t] = t1 - t0, time.perf_counter() - t1
            regret += float(np.mean(mean.max(axis=1) - mean[rows, a]))
    cost = act_s + obs_s
    n = max(1, len(cost) // BLOCK)
    per_round = float(np.median(cost[: n * BLOCK].reshape(n, -1).mean(axis=1)))
    return 1000 * per_round, float(act_s.sum() / cost.sum()), regret / args.T


# -- part 4: floating-point rate against the peak ------------------------------------------------
def baddbmm_flop(c_shape, a_shape, b_shape, *args, **kwargs) -> int:
    """2 b m k n for a stack of b (m, k) @ (k, n) products, as FlopCounterMode counts baddbmm."""
    return 2 * a_shape[0] * a_shape[1] * a_shape[2] * b_shape[2]


def cholesky_flop(a_shape, *args, **kwargs) -> int:
    """n^3 / 3 multiply-adds (2 flops each) per (n, n) matrix of the stack."""
    return 2 * math.prod(a_shape[:-2]) * a_shape[-1] ** 3 // 3


def solve_triangular_flop(a_shape, b_shape, *args, **kwargs) -> int:
    """n^2 k flops per triangular (n, n) system with k right-hand sides, over the stack."""
    return math.prod(b_shape[:-2]) * a_shape[-1] ** 2 * b_shape[-1]


# What FlopCounterMode does not count by itself: the in-place baddbmm_ of the fused GD step and the
# full design matrices' factorisations (agents.neural.neurallog with diag=False).
EXTRA_FLOPS = {torch.ops.aten.baddbmm_: baddbmm_flop, torch.ops.aten.linalg_cholesky_ex: cholesky_flop,
               torch.ops.aten.linalg_solve_triangular: solve_triangular_flop}


def flops_per_round(name: str, args: Args, kwargs: dict, n: int | None = None) -> float:
    """Matrix-product FLOPs of act + observe per round, counted over a run of the rounds `time_agent` times."""
    counter = FlopCounterMode(display=False, custom_mapping=EXTRA_FLOPS)
    time_agent(name, args, kwargs, n, mode=counter)
    return counter.get_total_flops() / args.T


def peak_gflops(device: str, size: int = 2048, repeat: int = 3) -> float:
    """GFLOP/s of a size x size float32 matmul, best of `repeat` (torch's current thread count)."""
    a, b = (torch.randn(size, size, device=device) for _ in range(2))
    best = min(best_times([lambda: a @ b], repeat, device))
    return 2 * size**3 / best / 1e9


def flops_table(runs, args: Args) -> None:
    """Part 4: counted GFLOP per round, ms per round (timed right after the peak), achieved GFLOP/s
    and the peak, single and with `--N` instances in one agent."""
    N = args.N
    print(f"\nMatrix-product work per round (FlopCounterMode) against a 2048^2 float32 matmul, "
          f"torch threads={args.threads}, device={args.device}:")
    print(f"| agent | GFLOP / round | ms / round | GFLOP/s | peak GFLOP/s | % of peak | N={N}: GFLOP / round "
          f"| N={N}: ms / round | N={N}: GFLOP/s | N={N}: % of peak |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for label, name, kwargs in runs:
        cells = []
        for n in (None, N) if agents.REGISTRY[name].batched else (None,):
            peak = peak_gflops(args.device, 512 if args.quick else 2048)
            ms = min(time_agent(name, args, kwargs, n)[0] for _ in range(args.repeat))
            gflop = flops_per_round(name, args, kwargs, n) / 1e9
            rate = gflop / ms * 1e3
            cells += [f"{gflop:.4g}", f"{ms:.3g}", f"{rate:.3g}"] + ([f"{peak:.0f}"] if n is None else []) + \
                     [f"{rate / peak:.1%}"]
        print(f"| {label} | " + " | ".join(cells) + " |", flush=True)


MATMULS = {"aten::bmm", "aten::baddbmm", "aten::baddbmm_", "aten::mm", "aten::addmm", "aten::matmul",
           "aten::linalg_cholesky_ex", "aten::linalg_solve_triangular"}


def profile_table(name: str, kwargs: dict, args: Args, rounds: int = 100) -> None:
    """Where `rounds` rounds of one agent spend their time: torch.profiler's self CPU time split into
    matrix products, other operators and the rest (framework and Python), then the busiest operators."""
    from torch.profiler import ProfilerActivity, profile
    short = Args(**{**vars(args), "T": rounds})
    time_agent(name, short, kwargs)                                        # warm-up
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
        wall = time_agent(name, short, kwargs)[0] * rounds / 1e3           # seconds
    events = prof.key_averages()
    ops = [e for e in events if e.key.startswith("aten::")]
    matmul = sum(e.self_cpu_time_total for e in ops if e.key in MATMULS) / 1e6
    other = sum(e.self_cpu_time_total for e in ops if e.key not in MATMULS) / 1e6
    calls = sum(e.count for e in ops) / rounds
    print(f"\nProfile of {name}, {rounds} rounds: {1e3 * wall / rounds:.2f} ms a round under the profiler, "
          f"of which matrix products {matmul / wall:.0%}, other operators {other / wall:.0%}, the rest "
          f"(Python, autograd, the profiler) {1 - (matmul + other) / wall:.0%}; {calls:.0f} operator calls a round.")
    print(prof.key_averages(group_by_input_shape=True).table(
        sort_by="self_cpu_time_total", row_limit=12, max_name_column_width=28, max_shapes_column_width=60))


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
        args.T, args.steps, args.repeat, args.N = 60, 5, 1, 3
    torch.set_num_threads(args.threads)
    graphs.CUDA_GRAPHS = bool(args.cuda_graphs)

    common = dict(width=args.width, depth=args.depth, steps=args.steps)
    s0 = [("Neural-ES", dict(m=args.m)), ("Neural-ES-DT", {}), ("NeuralUCB", {}), ("NeuralTS", {}),
          ("Neural-PHE", {}), ("NeuralUCB", dict(diag=False))]
    runs = [(name, {**common, **extra}) for name, extra in s0] + [(name, {}) for name in OTHERS]
    runs = [(name, {**kwargs, **QUICK.get(name, {})} if args.quick else kwargs) for name, kwargs in runs
            if not args.agents or name in args.agents.split(",")]
    runs = [(name + "".join(f" {k}={v}" for k, v in kw.items() if k == "diag"), name, kw) for name, kw in runs]
    single = {}     # label -> part 1's (s / 1,000 rounds, act share, regret / round)
    if set("134") & set(args.parts):
        print(f"[S0] quadratic bandit, K={args.K} d={args.d}; L={args.depth} N={args.width}, {args.steps} GD steps "
              f"per round; device={args.device}, torch threads={args.threads}, T={args.T}"
              + (f", CUDA graphs {'on' if args.cuda_graphs else 'off'}" if args.device.startswith("cuda") else ""))
    if "1" in args.parts:
        print("| agent | s / 1,000 rounds | act share | regret / round (seed 0) |")
        print("|---|---:|---:|---:|")
    for label, name, kwargs in runs:
        if "1" in args.parts or ("3" in args.parts and agents.REGISTRY[name].batched):
            s, share, reg = single[label] = min(time_agent(name, args, kwargs) for _ in range(args.repeat))
            if "1" in args.parts:
                print(f"| {label} | {s:.2f} | {share:.0%} | {reg:.4f} |", flush=True)

    if "2" in args.parts:
        update_table(args)

    if "4" in args.parts:
        flops_table(runs, args)
        for name in filter(None, args.profile.split(",")):
            profile_table(name, dict(next((kw for _, n, kw in runs if n == name), {})), args, min(100, args.T))

    if "3" in args.parts:
        print(f"\nOne agent serving N={args.N} instances (each its own arms and seed) against N single agents:")
        print(f"| agent | s / 1,000 rounds, all {args.N} | per instance | single agent (part 1) | speed-up |")
        print("|---|---:|---:|---:|---:|")
        for label, name, kwargs in runs:
            if label in single and agents.REGISTRY[name].batched:
                s = min(time_agent(name, args, kwargs, n=args.N)[0] for _ in range(args.repeat))
                one = single[label][0]
                print(f"| {label} | {s:.2f} | {s / args.N:.2f} | {one:.2f} | {one * args.N / s:.1f}x |",
                      flush=True)


def update_table(args: Args) -> None:
    """Part 2: the stacked ensemble's update against loops over its members."""
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
