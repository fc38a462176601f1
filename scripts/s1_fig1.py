"""[S1] (GLM-TSL / GLM-FPL) figure 1: the claims S1-C1 to S1-C3 of docs/papers.md.

Logistic bandit with Bernoulli rewards (K=100 fixed arms in [-1,1]^d, theta* ~ N(0, 3/d^2 I)),
d in {5, 10, 20}, n=50,000 rounds, 100 instances; every algorithm first pulls d linearly
independent arms. Theory designs: GLM-TSL and GLM-FPL with a from §4.3/§4.4, GLM-UCB (Filippi et
al.) and UCB-GLM (Li et al.) with their theory widths (mu'_min = 0.25, sigma = 0.5). Informal
designs: GLM-TSL a=1, GLM-FPL a=0.5, and both UCBs with width 0.5 ||x||_{G^-1}.

The claims: theory GLM-TSL/FPL beat theory GLM-UCB but not theory UCB-GLM; the informal UCBs have
linear regret; informal GLM-TSL and GLM-FPL have low, sublinear regret.

    python scripts/s1_fig1.py --batch 50                       # the paper's setting (about 3 h on 2 busy cores)
    python scripts/s1_fig1.py --batch 50 --envs dim=20         # one dimension of it
    python scripts/s1_fig1.py --horizon 10000 --seeds 10      # what docs/reproductions.md reports
    python scripts/s1_fig1.py --quick                          # smoke run
"""

from pathlib import Path

from _paper import A, E, Panel, main

N = 50_000
AGENTS = [
    A("GLM-TSL", "GLM-TSL (theory)", a="theory", horizon=N), A("GLM-FPL", "GLM-FPL (theory)", a="theory", horizon=N),
    A("GLM-UCB", "GLM-UCB (theory)", alpha="theory", horizon=N), A("UCB-GLM", "UCB-GLM (theory)", alpha="theory"),
    A("GLM-TSL", "GLM-TSL (a=1)"), A("GLM-FPL", "GLM-FPL (a=0.5)"),
    A("GLM-UCB", "GLM-UCB (0.5)", alpha=0.5), A("UCB-GLM", "UCB-GLM (0.5)", alpha=0.5),
]
PANELS = [Panel("fig1", [E("CtxBandit/BernoulliLogistic-v0", dim=d) for d in (5, 10, 20)], AGENTS,
                horizon=N, seeds=100)]

if __name__ == "__main__":
    main(Path(__file__).stem, PANELS, __doc__)
