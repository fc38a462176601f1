"""[S4] (optimal allocation matching) figures 1-3 and App. D figure 4: the claims S4-C1 to S4-C6 of docs/papers.md.

Hand-built instances, noise N(0, 1), n=10^4 rounds, 100 realisations (the horizon is not
printed: 10^4 is read from the plots, docs/papers.md, S4-A1).
- fig1: fixed action set, u = 0.1 and 0.2: LinUCB stops pulling the informative arm x_2 and pays
  more regret than OAM.
- fig2: changing action sets, scenario one (LinUCB starts better, ends worse than OAM) and
  scenario two (nearly indistinguishable).
- fig3: the bounded-regret instance (both bounded) and 100 arms on the unit circle (OSSB large and
  unstable, theory LinTS very large, OAM best).
- figD: App. D: 5 arms on the unit circle (OAM beats OSSB) and a random theta (heuristic LinTS best
  by a modest margin).
- sweep: not a figure; the settings [S4] leaves open, on fig. 1's instance (u = 0.2 and 0.1) at
  n = 3x10^4: LinUCB's confidence multiplier alpha in {0.5, 1 (the OFUL radius), 2, 4} and OAM's
  forced-exploration rate epsilon in {0.001, 0.01, 1/log log t}, 20 realisations: under which
  setting does OAM beat LinUCB (claim S4-C1)?
Agents: OAM with the paper's defaults (c=1, zeta=0.1, epsilon_t = 1/log log t, which makes every
exploration round a forced round-robin one when epsilon_t >= 1/K, see docs/oam.md), OAM with a
small fixed forced-exploration rate (epsilon=0.001), OAM with epsilon=0.01 forced only on a
barycentric spanner (Remark 4.2), LinUCB with the OFUL radius at delta = 1/n, OSSB
(epsilon = gamma = 0), theory LinTS (Agrawal & Goyal) and heuristic LinTS (v=1).

    python scripts/s4_figs.py                     # the paper's setting
    python scripts/s4_figs.py --seeds 20          # what docs/reproductions.md reports if not 100
    python scripts/s4_figs.py --panels sweep      # the LinUCB-radius x OAM-epsilon sweep
    python scripts/s4_figs.py --quick             # smoke run
"""

from pathlib import Path

from _paper import A, E, Panel, main

N = 10_000
BASE = [A("OAM", "OAM (eps_t = 1/log log t)", horizon=N, epsilon=None), A("OAM", "OAM (eps=0.001)", horizon=N),
        A("OAM", "OAM (eps=0.01, spanner)", horizon=N, epsilon=0.01, spanner=True), A("LinUCB", delta=1 / N)]
ALL = BASE + [A("OSSB", horizon=N), A("LinTS-AG", "LinTS (theory)", horizon=N), A("LinTS", "LinTS (heuristic)")]
PANELS = [
    Panel("fig1", [E("CtxBandit/FixedActionSet-v0", u=0.1), E("CtxBandit/FixedActionSet-v0", u=0.2)], BASE, N, 100),
    Panel("fig2", [E("CtxBandit/ChangingActionSet1-v0"), E("CtxBandit/ChangingActionSet2-v0")], BASE, N, 100),
    Panel("fig3", [E("CtxBandit/BoundedRegret-v0"), E("CtxBandit/UnitCircle-v0")], ALL, N, 100),
    Panel("figD", [E("CtxBandit/UnitCircleSmall-v0"), E("CtxBandit/RandomTheta-v0")], ALL, N, 100),
    Panel("sweep", [E("CtxBandit/FixedActionSet-v0", u=0.2), E("CtxBandit/FixedActionSet-v0", u=0.1)],
          [*(A("LinUCB", f"LinUCB (alpha={a})", delta=1 / (3 * N), alpha=a) for a in (0.5, 1, 2, 4)),
           *(A("OAM", f"OAM (eps={e})", horizon=3 * N, epsilon=e) for e in (0.001, 0.01)),
           A("OAM", "OAM (eps_t = 1/log log t)", horizon=3 * N, epsilon=None)], 3 * N, 20),
]

if __name__ == "__main__":
    main(Path(__file__).stem, PANELS, __doc__)
