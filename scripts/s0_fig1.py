"""[S0] (anytime ensemble sampling) figure 1(a)-(f): the claims S0-C1 to S0-C4 of docs/papers.md.

(a) fig1a: linear bandit (K=50, d=20, noise sd 0.5, T=10^4, 50 repetitions): Lin-ES (m=25,
    lambda=1, sigma_R=0.1) against LinUCB and LinTS.
(b) fig1b: logistic bandit with Gaussian noise (same sizes): GLM-ES (m=10, sigma_R=0.1,
    warm-up 500 on a G-optimal design) and its doubling-trick variants DT100 / DT300 (b=2.618)
    against GLM baselines the paper does not name; we run [S1]'s GLM-TSL (a=1) and GLM-FPL (a=0.5)
    and the theory-width GLM-UCB and UCB-GLM (docs/papers.md, S0-A2).
(d) fig1d, (e) fig1e: distance and quadratic bandits, same sizes: Neural-ES (L=3,
    N=20, m=10, sigma_R=0.1, warm-up 50, 100 GD steps of 0.01 a round) and Neural-ES-DT against
    NeuralUCB, NeuralTS and Neural-PHE on the same network (agents.neural, [S0] 7.2's settings).
(f) the run time of each agent, act and observe apart: each panel's runtime.png (fig1e's is the
    paper's figure 1(f)).

The paper leaves the baselines' hyperparameters open (S0-A6): LinUCB and LinTS get the true
noise sd (sigma=0.5), otherwise their defaults (lam=1, OFUL radius with delta_t = t^-3, v=1).
Not in the paper: Lin-ES with the reward perturbation at the noise scale (sigma_R=0.5) and a prior
perturbation (prior_sd=1), to show why the paper's sigma_R=0.1 locks some runs on a wrong arm.

    python scripts/s0_fig1.py --panels fig1a,fig1b --batch 25   # the paper's setting (101 s on 2 idle cores)
    python scripts/s0_fig1.py --panels fig1d,fig1e --horizon 2000 --seeds 5   # the neural panels, reduced
    python scripts/s0_fig1.py                        # everything at the paper's scale (days of CPU)
    python scripts/s0_fig1.py --quick                # smoke run
"""

from pathlib import Path

from _paper import A, E, Panel, main

NEURAL = [A("Neural-ES"), A("Neural-ES-DT"), A("NeuralUCB"), A("NeuralTS"), A("Neural-PHE")]  # [S0] 7.2 defaults
QUICK_NEURAL = [A(a.name, a.label, **a.kwargs, steps=5) for a in NEURAL]   # smoke run: 5 GD steps a round

PANELS = [
    Panel("fig1a", [E("CtxBandit/Linear-v0")],
          [A("Lin-ES"), A("LinUCB", sigma=0.5), A("LinTS", sigma=0.5),
           A("Lin-ES", "Lin-ES (sigma_R=0.5, prior_sd=1)", sigma_R=0.5, prior_sd=1.0)], horizon=10_000, seeds=50),
    Panel("fig1b", [E("CtxBandit/Logistic-v0")],
          [A("GLM-ES"), A("GLM-ES-DT", "GLM-ES-DT100", T0=100), A("GLM-ES-DT", "GLM-ES-DT300", T0=300),
           A("GLM-TSL"), A("GLM-FPL"), A("GLM-UCB", alpha="theory"), A("UCB-GLM", alpha="theory")],
          horizon=10_000, seeds=50),
    *[Panel(name, [E(env)], NEURAL, horizon=10_000, seeds=50, quick_agents=QUICK_NEURAL)
      for name, env in (("fig1d", "CtxBandit/Distance-v0"), ("fig1e", "CtxBandit/Quadratic-v0"))],
]

if __name__ == "__main__":
    main(Path(__file__).stem, PANELS, __doc__)
