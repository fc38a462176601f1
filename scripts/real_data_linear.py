"""Linear baselines on the real-data bandits: a short run of LinUCB and LinTS on each.

- `uci`: Shuttle (K=7), Mushroom (K=2) and MNIST (K=10, 14x14 = 196 pixels) with [S2] section 7's
  preparation (`preset="S2"`: per-feature min-max to [-1, 1], mushroom categories as random
  values, disjoint block arms, 0/1 reward for the true class), T=2000, 10 seeds ([S2]'s setting).
- `hate`: the moderation bandit of [S3] App. G on the Davidson corpus (the offline stand-in for
  the Hugging Face corpus) with the all-MiniLM-L6-v2 sentence encoder, T=2000, 10 seeds.
- `obd`: the Open Bandit Dataset replay of [S2] App. J.1 on the 10,000-event `random/all`
  sample that obp ships, 1500 accepted events (a run accepts about 2000 of the 10,000 events;
  the paper's 2000 needs the full log), 10 seeds; the reward is the click, no regret exists.

The data must be in the data home (`$CTXBANDITS_DATA`, e.g. `~/datasets`) or downloadable.
LinUCB is the theory radius (alpha = 1) and a practical one (alpha = 0.1); LinTS is exact TS with
sigma = 1 and a narrower posterior (v = 0.1). These baselines are not tuned per dataset.

    CTXBANDITS_DATA=~/datasets python scripts/real_data_linear.py
    CTXBANDITS_DATA=~/datasets python scripts/real_data_linear.py --quick
"""

from pathlib import Path

from _paper import A, E, Panel, main

AGENTS = [A("LinUCB"), A("LinUCB", "LinUCB (alpha=0.1)", alpha=0.1), A("LinTS"), A("LinTS", "LinTS (v=0.1)", v=0.1)]
UCI = [E(f"CtxBandit/{name}-v0", preset="S2") for name in ("Shuttle", "Mushroom", "MNIST")]
HATE = dict(corpus="davidson", model="all-MiniLM-L6-v2")
PANELS = [
    Panel("uci", UCI, AGENTS, horizon=2000, seeds=10),
    Panel("hate", [E("CtxBandit/HateSpeech-v0", **HATE)], AGENTS, horizon=2000, seeds=10,
          quick_envs=[E("CtxBandit/HateSpeech-v0", **HATE, max_posts=500)]),
    Panel("obd", [E("CtxBandit/OpenBandit-v0")], AGENTS + [A("Random")], horizon=1500, seeds=10),
]

if __name__ == "__main__":
    main(Path(__file__).stem, PANELS, __doc__)
