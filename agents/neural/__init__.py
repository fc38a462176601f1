"""The neural agents of the four papers, on one engine: [S0] (Sun, Wang, Xu, anytime ensemble
sampling), [S1] (Kveton et al., §5.2), [S2] (Bae, Lee, neural logistic bandits) and [S3] (Li, Xu,
Wang, Luo, Ensemble++).

The engine: `core` (TorchAgent, the one base with torch streams; NeuralAgent, the NTK agents'
skeleton), `nets` (the stacked networks: NTKEnsemble with hand-written gradients, StackedMLP for
autograd), `buffer` (ReplayBuffer: FIFO slots for minibatches and per-row statistics for full batches; Schedule),
`optim` (Adam, Keras-style Adam, Langevin behind one `step`).
Each paper's agents are a small module on top:

- ``Neural-ES``     neural ensemble sampling (eq. 4.4, Alg. 1), m networks trained as one stacked model;
- ``Neural-ES-DT``  its anytime version by the doubling trick (§6, agents.anytime);
- ``NeuralUCB``, ``NeuralTS``  Zhou et al. (2020), Zhang et al. (2021), diagonal design matrix by default;
- ``Neural-PHE``    perturbed-reward neural bandit of Jia et al. (2022);
- ``DeepFPL``, ``DeepFL``, ``repGLM-FPL``  [S1] §5.2's deep bandit agents (agents.neural.fpl);
- ``NeuralLog-UCB-1/2``, ``NeuralLog-TS-1/2``, ``NCBF-UCB``  [S2] (agents.neural.neurallog);
- ``Ensemble++``, ``Ensemble+``, ``NeuralGreedy`` [S3] §5.2 (agents.neural.ensemble_pp), ``EpiNet``
  (agents.neural.epinet), ``LMCTS`` (agents.neural.lmcts), ``GPT-Ensemble++``, ``GPT-Greedy`` [S3]
  App. G (agents.neural.gpt_ensemble). The linear Ensemble++ is ``Linear-Ensemble++``
  (agents.linear_ensemble).

The modules need PyTorch; this package does not. `LAZY` holds one small factory per name
(`LazyAgent`) that imports torch and the implementing module on first use; importing
`agents.neural.registry` puts them in agents.REGISTRY, so `import agents` works without torch,
and `agents.make("Neural-ES")` without torch raises an ImportError that says to
`pip install -e ".[neural]"` (in the clone). Importing this package itself registers nothing.
"""

from __future__ import annotations

import importlib

# registered name -> (module of agents.neural, class)
NAMES = {
    "Neural-ES": ("es", "NeuralES"),
    "Neural-ES-DT": ("es", "NeuralESDT"),
    "NeuralUCB": ("ucb_ts", "NeuralUCB"),
    "NeuralTS": ("ucb_ts", "NeuralTS"),
    "Neural-PHE": ("phe", "NeuralPHE"),
    # [S1] section 5.2 (agents.neural.fpl)
    "DeepFPL": ("fpl", "DeepFPL"),
    "DeepFL": ("fpl", "DeepFL"),
    "repGLM-FPL": ("fpl", "RepGLMFPL"),
    # [S2] sections 4-5, App. I (agents.neural.neurallog)
    "NeuralLog-UCB-1": ("neurallog", "NeuralLogUCB1"),
    "NeuralLog-UCB-2": ("neurallog", "NeuralLogUCB2"),
    "NeuralLog-TS-1": ("neurallog", "NeuralLogTS1"),
    "NeuralLog-TS-2": ("neurallog", "NeuralLogTS2"),
    "NCBF-UCB": ("neurallog", "NCBFUCB"),
    # [S3] section 5.2 and App. G
    "Ensemble++": ("ensemble_pp", "EnsemblePP"),
    "Ensemble+": ("ensemble_pp", "EnsemblePlus"),
    "NeuralGreedy": ("ensemble_pp", "NeuralGreedy"),
    "EpiNet": ("epinet", "EpiNet"),
    "LMCTS": ("lmcts", "LMCTS"),
    "GPT-Ensemble++": ("gpt_ensemble", "GPTEnsemblePP"),
    "GPT-Greedy": ("gpt_ensemble", "GPTGreedy"),
}
TOKENS = {"GPT-Ensemble++", "GPT-Greedy"}   # they read token ids through a language model, not float features


class LazyAgent:
    """Registry entry for a torch agent: calling it imports the module and builds the agent.

    `cls()` gives the agent class itself (for signatures and docs).
    """

    def __init__(self, name: str, module: str, attr: str):
        self.name, self.module, self.attr = name, module, attr
        # what agents.make's callers look up before building (the run loop's batching test), without
        # torch: every neural agent serves N instances in one object
        self.batched = True
        self.__name__ = name
        self.__doc__ = f"{name}: agents.neural.{module}.{attr} (imports torch on first use)."

    def cls(self):
        try:
            import torch  # noqa: F401
        except ImportError:
            raise ImportError(f'the neural agent {self.name!r} needs PyTorch: pip install torch, or '
                              'pip install -e ".[neural]" in the gym-ctxbandits clone') from None
        return getattr(importlib.import_module(f"agents.neural.{self.module}"), self.attr)

    def __call__(self, **kwargs):
        return self.cls()(**kwargs)

    def __repr__(self) -> str:
        return f"<lazy agent {self.name!r}: agents.neural.{self.module}.{self.attr}>"


LAZY = {name: LazyAgent(name, module, attr) for name, (module, attr) in NAMES.items()}
