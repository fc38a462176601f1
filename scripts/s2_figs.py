"""[S2] (Neural Logistic Bandits) figures 1 and 2: the claims S2-C1 and S2-C2 of docs/papers.md.

NeuralLog-UCB-1, NeuralLog-UCB-2, NeuralLog-TS-1, NeuralLog-TS-2 and NCBF-UCB (agents.neural.neurallog,
the practical settings of [S2] §7: L = 2, m = 20, diagonal design matrices, 100 GD steps of 0.01
every 50 rounds, S = 1, kappa = 10) against the linear logistic baselines Logistic-UCB-1 and
ada-OFU-ECOLog (agents.glm) and uniform Random as the floor, on:
- `fig1`: the synthetic bandits h1 = 0.2 (x^T theta)^4, h2 = 20 cos(x^T theta), h3 = 5 x^T Theta x,
  d = 20, K = 5 of a pool of 2500 vectors (U[-1, 1]^d for h1 and h2, the unit sphere for h3: the
  `features` panel shows why), Bernoulli rewards;
- `fig2`: mushroom and shuttle, and `mnist`: mnist, as K-class bandits with the disjoint block
  encoding and [S2]'s min-max preprocessing (`preset="S2"`: 14 x 14 mnist, random values for
  categories). mnist is its own panel because it costs about 20 times more than the others
  (and goes without Logistic-UCB-1, whose d = 1960 MLE would take hours);
- `features`: not a figure of [S2] but the sweep behind S2-A1. [S2] does not say how the pool
  vectors are drawn; h1, h2 and h3 under each choice (unit sphere, unit ball, N(0, I_d), U[-1, 1]^d),
  with the three NeuralLog/NCBF UCB agents and Random, show which choices leave them learnable;
- `obd`: App. J.1 Table 2, the Open Bandit Dataset replay (random/all, K = 5 reduced action sets,
  the first row's m = 20, kappa = 50, S = 1), with LinUCB and LinTS beside [S2]'s seven; the
  score is the final CTR over T accepted events. [S2] runs T = 2000 on the full log; the sample
  that ships with the dataset (10,000 events) yields about 2,000 accepted events, so T = 1,800
  here (a replay that runs out of events stops with an error).

The claims: the linear baselines are worst, NCBF-UCB is moderate, NeuralLog-UCB-2 is best.
[S2]: T = 2000, 10 repetitions. nu and lam are the agents' defaults (docs/s2_neurallog_agents.md).

    python scripts/s2_figs.py                             # T = 2000, 10 seeds
    python scripts/s2_figs.py --panels fig1,fig2 --seeds 5 --backend inprocess
    python scripts/s2_figs.py --panels features --seeds 5   # the pool-distribution sweep
    python scripts/s2_figs.py --panels obd                  # Table 2 (needs the Open Bandit sample)
    python scripts/s2_figs.py --quick
"""

from pathlib import Path

from _paper import A, E, Panel, main


# Logistic-UCB-1 with the authors' nu = 1, as in the runs docs/s2_neurallog_agents.md reports (its
# default is 0.1: docs/papers.md, S2-A13).
THEORY = {"Logistic-UCB-1": {"nu": 1.0}}


def agents(steps: int = 100, linear: tuple[str, ...] = ("Logistic-UCB-1", "ada-OFU-ECOLog")):
    """The paper's algorithms (1)-(5), its two TS variants and Random; `steps` GD steps per update."""
    neural = dict(steps=steps)
    return [A("NCBF-UCB", **neural), *(A(name, **THEORY.get(name, {})) for name in linear),
            A("NeuralLog-UCB-1", **neural),
            A("NeuralLog-UCB-2", **neural), A("NeuralLog-TS-1", **neural), A("NeuralLog-TS-2", **neural),
            A("Random")]


def classification(dataset: str):
    return E(f"CtxBandit/{dataset}-v0", preset="S2")


PANELS = [
    Panel("fig1", [E(f"CtxBandit/NeuralLogisticH{i}-v0") for i in (1, 2, 3)], agents(), horizon=2000, seeds=10,
          quick_agents=agents(steps=10)),
    Panel("fig2", [classification("Mushroom"), classification("Shuttle")], agents(), horizon=2000, seeds=10,
          quick_agents=agents(steps=10)),
    # mnist (d = 196 x 10 classes = 1960 per arm): the full-batch updates of the neural agents
    # cost about 2.5 min a run on one CPU core, Logistic-UCB-1's MLE is much slower and is left out.
    Panel("mnist", [classification("MNIST")], agents(linear=("ada-OFU-ECOLog",)), horizon=2000, seeds=10,
          quick_agents=agents(steps=2, linear=())),
    Panel("features", [E(f"CtxBandit/NeuralLogistic{h}-v0", features=f) for h in ("H1", "H2", "H3")
                       for f in ("sphere", "ball", "gaussian", "cube")],
          [A("NCBF-UCB"), A("NeuralLog-UCB-1"), A("NeuralLog-UCB-2"), A("Random")], horizon=2000, seeds=5,
          quick_agents=[A("NeuralLog-UCB-1", steps=10), A("Random")]),
    Panel("obd", [E("CtxBandit/OpenBandit-v0")],
          [A("NCBF-UCB", kappa=50), A("Logistic-UCB-1", kappa=50, nu=1.0), A("ada-OFU-ECOLog"),
           A("NeuralLog-UCB-1", kappa=50),
           A("NeuralLog-UCB-2", kappa=50), A("NeuralLog-TS-1", kappa=50), A("NeuralLog-TS-2", kappa=50),
           A("LinUCB"), A("LinTS"), A("Random")], horizon=1800, seeds=10,
          quick_agents=[A("NeuralLog-TS-1", kappa=50, steps=10), A("LinUCB"), A("Random")]),
]

if __name__ == "__main__":
    main(Path(__file__).stem, PANELS, __doc__)
