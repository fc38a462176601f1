"""The project's regression-oracle agents against Vowpal Wabbit's, head to head on PMLB sets (issue 49 item 6).

Each set plays the Contextual Bandit Bake-off's protocol (`Supervised-v0` with `source="pmlb:NAME"`,
`preset="cb-bakeoff"`: one shuffled pass, reward 1 for the true class, raw features), for
horizon = min(rows, --cap), with the same seeds for every agent. Each pair is one of the project's
agents and Vowpal Wabbit's same explorer (docs/oracle_agents.md, docs/vw_agents.md). The table gives,
per set, each agent's mean reward over the pass (1 - the progressive-validation loss), the ratio of
ours to VW's, and the CPU microseconds per round (act + observe, per instance, from the runner's own
timings); beside them VW's own C++ loop, `vw --cbify K --cb_explore_adf <the VW agent's options>` reading
the same rows as a text file with named features, one pass, timed in the same run (CPU time of the
parse-learn loop, per example). A summary line per pair counts the sets where ours is at least as good
(ratio >= 0.99) and the median cost ratios.

    python scripts/vw_head_to_head.py --sets 12 --seeds 3 --cap 2000 --markdown /tmp/h2h.md

The sets are the multiclass PMLB sets (3 classes or more) with at least `--min-rows` rows, by name
(`--names` picks others). The data must be in $CTXBANDITS_DATA/pmlb.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time

import numpy as np

import agents
import gym_ctxbandits
from gym_ctxbandits.datasets import pmlb_sets, supervised
from gym_ctxbandits.experiment import EnvSpec

PAIRS = [("SquareCB", "VW-SquareCB"), ("RegCB-opt", "VW-RegCB-opt"), ("Cover-NU", "VW-Cover-NU"),
         ("Bag-greedy", "VW-Bag"), ("Oracle-epsilon-greedy", "VW-epsilon")]


def chosen_sets(args) -> list[tuple[str, int, int]]:
    """(name, horizon, classes) of the sets to play."""
    table = pmlb_sets()
    if args.names:
        table = table[table.name.isin(args.names.split(","))]
    else:
        table = table[(table.classes >= 3) & (table.rows >= args.min_rows)].sort_values("name").head(args.sets)
    return [(r.name, int(min(r.rows, args.cap)), int(r.classes)) for r in table.itertuples()]


def play(name: str, horizon: int, agent_names: list[str], seeds: int):
    """{agent: (mean reward per round over seeds, CPU us per round per instance)} on one set."""
    env = EnvSpec("CtxBandit/Supervised-v0", {"source": f"pmlb:{name}", "preset": "cb-bakeoff"})
    table = gym_ctxbandits.run(env, agent_names, seeds=seeds, horizon=horizon, log_every=horizon)
    out = {}
    for agent, rows in table.groupby("agent"):
        last = rows[rows["round"] == rows["round"].max()]
        seconds = (rows["act_seconds"] + rows["observe_seconds"]).groupby(rows["seed"]).sum().mean()
        out[agent] = (float(last["cum_reward"].mean()) / horizon, 1e6 * seconds / horizon)
    return out


def vw_cbify(name: str, horizon: int, classes: int, vw_agent: str, seed: int) -> tuple[float, float]:
    """(1 - VW's progressive loss, CPU us per example) of VW's own C++ loop, `--cbify K --cb_explore_adf`
    with the VW agent's exploration options, over the first `horizon` rows of the set in a seeded order,
    read from a text file with named features."""
    from vowpalwabbit import Workspace

    data = supervised.load(f"pmlb:{name}")
    X, y = np.asarray(data.X, float), np.asarray(data.y)
    order = np.random.default_rng(seed).permutation(len(X))[:horizon]
    labels = {c: i + 1 for i, c in enumerate(np.unique(y))}
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "data.txt")
        with open(path, "w") as f:
            for i in order:
                feats = " ".join(f"f{j}:{v:.6g}" for j, v in enumerate(X[i]) if v)
                f.write(f"{labels[y[i]]} | {feats}\n")
        # the VW agent's options but its cost range (set for costs -reward in [-1, 0]; --cbify's are 0 or 1)
        words, options = agents.make(vw_agent, seed=seed)._vw_args().split(), []
        while words:
            word = words.pop(0)
            if word in ("--cb_min_cost", "--cb_max_cost"):
                words.pop(0)
            elif word != "--cb_explore_adf":
                options.append(word)
        options = " ".join(options)
        empty = os.path.join(tmp, "empty.txt")
        open(empty, "w").close()
        cpu = []
        for file in (empty, path):      # pyvw runs the whole pass when a -d workspace is built: time that,
            start = time.process_time()    # less the set-up (the same options on an empty file)
            ws = Workspace(f"--cbify {classes} --cb_explore_adf {options} -d {file} --quiet --random_seed {seed}")
            cpu.append(time.process_time() - start)
            loss = ws.get_sum_loss() / max(ws.get_weighted_examples(), 1)
            ws.finish()
    return 1.0 - loss, 1e6 * max(cpu[1] - cpu[0], 0.0) / horizon


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", type=int, default=12, help="how many sets (default 12)")
    parser.add_argument("--names", default="", help="comma-separated PMLB names instead")
    parser.add_argument("--min-rows", type=int, default=1000)
    parser.add_argument("--cap", type=int, default=2000, help="rounds at most per set (default 2,000)")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--pairs", default="", help="comma-separated of ours to play (default every pair)")
    parser.add_argument("--markdown", default="", help="also write the tables to this file")
    args = parser.parse_args(argv)
    pairs = [p for p in PAIRS if not args.pairs or p[0] in args.pairs.split(",")]
    lines = ["| set | K | T | " + " | ".join(f"{a} / {b}: reward, ratio, us ours / VW / VW's --cbify" for a, b in pairs)
             + " |", "|---|---:|---:|" + "---|" * len(pairs)]
    summary = {p: [] for p in pairs}
    started = time.time()
    for name, horizon, classes in chosen_sets(args):
        scores = play(name, horizon, [n for p in pairs for n in p], args.seeds)
        cells = []
        for ours, theirs in pairs:
            (r1, c1), (r2, c2) = scores[ours], scores[theirs]
            cb_reward, cb_us = vw_cbify(name, horizon, classes, theirs, seed=0)
            ratio = r1 / r2 if r2 > 0 else float("nan")
            summary[(ours, theirs)].append((ratio, c1 / c2, c1 / cb_us))
            cells.append(f"{r1:.3f} / {r2:.3f} ({cb_reward:.3f}), {ratio:.2f}, {c1:.0f} / {c2:.0f} / {cb_us:.0f}")
        lines.append(f"| {name} | {classes} | {horizon} | " + " | ".join(cells) + " |")
        print(lines[-1], flush=True)
    lines += ["", "| pair | sets | ours at least as good (ratio >= 0.99) | median reward ratio | median cost ours / VW "
              "agent | median cost ours / VW's --cbify |", "|---|---:|---:|---:|---:|---:|"]
    for (ours, theirs), rows in summary.items():
        ratio, cost, loop = zip(*rows)
        lines.append(f"| {ours} vs {theirs} | {len(rows)} | {sum(r >= 0.99 for r in ratio)} | "
                     f"{statistics.median(ratio):.2f} | {statistics.median(cost):.2f} | {statistics.median(loop):.2f} |")
    lines.append(f"\n{len(summary[pairs[0]])} sets, {args.seeds} seeds, {time.time() - started:.0f} s")
    print("\n".join(lines[-len(summary) - 4:]))
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
