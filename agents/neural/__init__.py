"""The neural agents of [S0] (Sun, Wang, Xu, anytime ensemble sampling), [S1] (Kveton et al., §5.2)
and [S2] (Bae, Lee, neural logistic bandits); the [S3] family is agents.ensemble_nn / agents.epinet.

- ``Neural-ES``     neural ensemble sampling (eq. 4.4, Alg. 1), m networks trained as one stacked model;
- ``Neural-ES-DT``  its anytime version by the doubling trick (§6, agents.anytime);
- ``NeuralUCB``, ``NeuralTS``  Zhou et al. (2020), Zhang et al. (2021), diagonal design matrix by default;
- ``Neural-PHE``    perturbed-reward neural bandit of Jia et al. (2022);
- ``DeepFPL``, ``DeepFL``, ``repGLM-FPL``  [S1] §5.2's deep bandit agents (agents.neural.fpl);
- ``NeuralLog-UCB-1/2``, ``NeuralLog-TS-1/2``, ``NCBF-UCB``  [S2] (agents.neural.neurallog).

The modules need PyTorch; this package does not. `LAZY` holds one small factory per name
(`LazyAgent`) that imports torch and the implementing module on first use; importing
`agents.neural.registry` puts them in agents.REGISTRY, so `import agents` works without torch,
and `agents.make("Neural-ES")` without torch raises an ImportError that says to
`pip install "gym-ctxbandits[neural]"`. Importing this package itself registers nothing.
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
}


class LazyAgent:
    """Registry entry for a torch agent: calling it imports the module and builds the agent.

    `cls()` gives the agent class itself (for signatures and docs).
    """

    # what agents.make's callers look up before building (the run loop's batching test), without
    # torch: every agent here serves N instances in one object (agents.base.BaseAgent)
    batched = True

    def __init__(self, name: str, module: str, attr: str):
        self.name, self.module, self.attr = name, module, attr
        self.__name__ = name
        self.__doc__ = f"{name}: agents.neural.{module}.{attr} (imports torch on first use)."

    def cls(self):
        try:
            import torch  # noqa: F401
        except ImportError:
            raise ImportError(f'the neural agent {self.name!r} needs PyTorch: '
                              'pip install "gym-ctxbandits[neural]"') from None
        return getattr(importlib.import_module(f"agents.neural.{self.module}"), self.attr)

    def __call__(self, **kwargs):
        return self.cls()(**kwargs)

    def __repr__(self) -> str:
        return f"<lazy agent {self.name!r}: agents.neural.{self.module}.{self.attr}>"


LAZY = {name: LazyAgent(name, module, attr) for name, (module, attr) in NAMES.items()}
