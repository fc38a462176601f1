"""[S3] (Ensemble++) figure 3, the nonlinear bandits: the claim S3-C4 of docs/papers.md.

Ensemble++ (M=8, a 2 x 64 ReLU extractor, App. B) against Ensemble+, EpiNet, LMCTS and Greedy
(the same network without the ensemble factor) on:
- `quadratic`: 10^-2 x^T Theta Theta^T x + N(0, 0.1^2), d=100, 50 of 1000 unit actions a round;
- `neural`: Bernoulli rewards of a random MLP teacher, d=100, 50 of 1000 actions;
- `shuttle`: the UCI Shuttle classification bandit with [S3]'s N(0, 0.1^2) noise, G=100 updates
  a round for Ensemble++ as App. B tunes it;
- `hate`: content moderation on the Davidson corpus with MiniLM embeddings (the offline
  stand-ins for the Hugging Face corpus and GPT-2; frozen backbone, the network on the embedding).

The claims: Ensemble++ has sublinear regret and beats Ensemble+, EpiNet and Greedy; on Quadratic
all baselines have linear regret. The paper does not give T (the code runs 10^5 rounds) and uses
10 seeds. LMCTS's cost grows with the data it holds; its buffer is capped at 2,000 points here.

    python scripts/s3_fig3.py                       # T = 10,000, 10 seeds (hours on a CPU)
    python scripts/s3_fig3.py --horizon 2000 --seeds 5
    python scripts/s3_fig3.py --quick
"""

from pathlib import Path

from _paper import A, E, Panel, main


def agents(updates: int = 1):
    """The five agents with App. B's defaults; `updates` = G gradient steps a round for the SGD ones."""
    return [A("Ensemble++", updates=updates), A("Ensemble+", updates=updates), A("EpiNet", updates=updates),
            A("NeuralGreedy", "Greedy", updates=updates), A("LMCTS", buffer_size=2000)]


HATE = dict(corpus="davidson", model="all-MiniLM-L6-v2")
PANELS = [
    Panel("quadratic", [E("CtxBandit/QuadraticPool-v0")], agents(), horizon=10_000, seeds=10),
    Panel("neural", [E("CtxBandit/MLPTeacher-v0")], agents(), horizon=10_000, seeds=10),
    Panel("shuttle", [E("CtxBandit/Shuttle-v0", preset="S3")], agents(100), horizon=10_000, seeds=10,
          quick_agents=agents()),
    Panel("hate", [E("CtxBandit/HateSpeech-v0", **HATE)], agents(), horizon=10_000, seeds=10,
          quick_envs=[E("CtxBandit/HateSpeech-v0", **HATE, max_posts=500)]),
]

if __name__ == "__main__":
    main(Path(__file__).stem, PANELS, __doc__)
