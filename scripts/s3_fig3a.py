"""[S3] (Ensemble++) figure 3(a)(a): the claim S3-C1 of docs/papers.md.

Finite-action linear bandit (Russo & Van Roy): d=50, |X|=10,000 actions in
Unif([-1/sqrt 5, 1/sqrt 5]^d), theta ~ N(0, 10 I) redrawn per run, noise N(0, 1), T=1000, 200 runs.
Linear Ensemble Sampling (ES: Ensemble++ with the coordinate reference, [S3] §5.1) and Linear
Ensemble++ (ES++: Gaussian reference), both with the sphere perturbation, for M in {2, 4, 8, 16, 32}
(the paper does not list its M), against exact Thompson sampling (TS: LinTS with the true prior,
lam = sigma^2 / prior_var = 0.1).

The claims: ES++ beats ES for every M; ES++ with M=8 nearly matches TS.

    python scripts/s3_fig3a.py                    # the paper's setting
    python scripts/s3_fig3a.py --seeds 50         # what docs/reproductions.md reports if not 200
    python scripts/s3_fig3a.py --quick            # smoke run
"""

from pathlib import Path

from _paper import A, E, Panel, main

MS = (2, 4, 8, 16, 32)
AGENTS = ([A("Linear-Ensemble++", f"ES (M={m})", M=m, reference="coordinate") for m in MS]
          + [A("Linear-Ensemble++", f"ES++ (M={m})", M=m) for m in MS]
          + [A("LinTS", "TS", lam=0.1, sigma=1.0)])
PANELS = [Panel("fig3a", [E("CtxBandit/FiniteLinear-v0")], AGENTS, horizon=1000, seeds=200)]

if __name__ == "__main__":
    main(Path(__file__).stem, PANELS, __doc__)
