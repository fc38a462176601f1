"""Time GPT-Ensemble++ and GPT-Greedy per round at their sanity home, with and without the cached prefix.

The home of scripts/sanity.py: CtxBandit/HateSpeechTokens-v0 on the Davidson corpus (its first 500
posts, up to 128 tokens), one post a round, and the agents' defaults (all-MiniLM-L6-v2 with its
last block fine-tuned, one Adam step a round on a minibatch of up to 128 buffered posts). An agent
first plays `--warmup` rounds, so that its minibatches are full; then two copies of it play the same
`--rounds` rounds: one as it is (the frozen prefix's hidden states cached per post, only the trained
block run: agents.neural.backbone) and one that runs the whole backbone on every minibatch (what
each round cost before the cache, and what a backbone of an unknown architecture still costs).
Only the agent's act and observe are timed, with torch on `--threads` threads; the figure is the
median over the rounds, robust to bursts of foreign load on a shared machine.

    python scripts/bench_gpt.py            # the table in docs/s3_neural_agents.md
    python scripts/bench_gpt.py --quick    # a smoke run (a few seconds)

The code from before the cache (commit 63b9243, which also ran each minibatch row, repeats
included, through the whole model) times its one path with this script:

    git archive 63b9243 agents gym_ctxbandits | tar -x -C /tmp/before
    PYTHONPATH=/tmp/before python scripts/bench_gpt.py

Without the corpus (or torch and the text extra) it stops with one `error:` message, the loader's:
the files needed and where to put them.
"""

from __future__ import annotations

import argparse
import copy
import time
from pathlib import Path

import gymnasium as gym
import numpy as np

import agents
import gym_ctxbandits  # noqa: F401  (registers the envs)
from gym_ctxbandits.datasets import DatasetCorrupt

ENV = dict(corpus="davidson", max_posts=500)


def play(agent, env, rounds: int, rng: np.random.Generator) -> list[float]:
    """Seconds of act + observe of each of `rounds` rounds, one post drawn uniformly a round."""
    seconds = []
    for row in rng.integers(len(env.y), size=rounds):
        obs = np.repeat(env.X[row][None], 2, axis=0)
        start = time.process_time()
        a = agent.act(obs)
        agent.observe(obs, a, float(env.payoff[env.y[row]][a]))
        seconds.append(time.process_time() - start)
    return seconds


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog=Path(__file__).name, description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--warmup", type=int, default=128, help="rounds before the timed ones (128: full minibatches)")
    parser.add_argument("--rounds", type=int, default=20, help="timed rounds per path")
    parser.add_argument("--threads", type=int, default=1, help="torch threads")
    parser.add_argument("--quick", action="store_true", help="4 + 3 rounds, minibatches of 8: a smoke run")
    args = parser.parse_args(argv)
    kwargs = dict(batch_size=8) if args.quick else {}
    if args.quick:
        args.warmup, args.rounds = 4, 3
    try:
        import torch

        env = gym.make("CtxBandit/HateSpeechTokens-v0", **ENV).unwrapped
    except (FileNotFoundError, ImportError, DatasetCorrupt) as err:   # the corpus, or torch / the text extra
        parser.exit(2, f"{parser.prog}: error: {type(err).__name__}: {err}\n")
    torch.set_num_threads(args.threads)
    print(f"HateSpeechTokens-v0 {ENV}, agents' defaults {kwargs or ''}; {args.warmup} rounds first, then the median "
          f"CPU seconds a round (act + observe) over {args.rounds} rounds, torch threads={args.threads}")
    print("| agent | whole backbone a round | cached prefix | speed-up |")
    print("|---|---:|---:|---:|")
    for name in ("GPT-Ensemble++", "GPT-Greedy"):
        agent = agents.make(name, seed=0, **kwargs)
        play(agent, env, args.warmup, np.random.default_rng(0))
        if not hasattr(agent, "start_"):     # a checkout from before the cache (module docstring)
            print(f"| {name} | {np.median(play(agent, env, args.rounds, np.random.default_rng(1))):.3f} | | |")
            continue
        assert agent.start_ is not None, "the default backbone should take the cached path"
        whole = copy.deepcopy(agent)
        whole.start_ = None                  # the full forward: agents.neural.backbone.hidden_states
        cached = np.median(play(agent, env, args.rounds, np.random.default_rng(1)))
        full = np.median(play(whole, env, args.rounds, np.random.default_rng(1)))
        print(f"| {name} | {full:.3f} | {cached:.3f} | {full / cached:.1f}x |", flush=True)


if __name__ == "__main__":
    main()
