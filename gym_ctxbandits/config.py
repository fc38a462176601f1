"""Comparison configs from TOML or YAML files, validated: an unknown key or a wrong type is an
error that names the key.

    horizon = 2000
    seeds = 5                      # a count (0..n-1), "1000:1010" (1000..1009), "3,7,11" or [3, 7, 11]
    log_every = 10
    batch = 10                     # seeds per batched run (1: the plain loop for every job)
    out = "results/logistic"
    backend = "processes"          # inprocess | processes | ray
    device = "cpu"                 # torch agents' device: cpu | cuda | cuda:N | mps | auto
    envs = ["CtxBandit/Logistic-v0", {id = "CtxBandit/Linear-v0", kwargs = {dim = 10}}]
    agents = ["LinUCB", {name = "LinTS", kwargs = {v = 0.5}, label = "LinTS-0.5"}]
    imports = ["mymodule"]         # the user's modules registering agents or envs (--import extends it)
    ray = {code = "ship", cpus_per_unit = 1, gpus_per_unit = 0.25, max_in_flight = 64}   # backend ray's options
    delay = "geometric:100"        # delayed feedback (gym_ctxbandits.delays): fixed:D, geometric:MEAN, ..., "none"
    window = 500                   # rewards later than this many rounds are never delivered ...
    default_reward = 0.0           # ... or are delivered as this value (needs window)
    conversions = false            # only positive rewards are ever revealed
    feedback_every = 50            # the agent learns every B rounds (or batch_grid = "geometric:5": M batches)
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gym_ctxbandits.delays import Feedback
from gym_ctxbandits.jobs import AgentSpec, EnvSpec, seed_list


class ConfigError(ValueError):
    """A comparison config that cannot be run as written."""


@dataclass
class Comparison:
    """A validated comparison: what `gym_ctxbandits.run` takes, plus where and how to run it."""

    envs: list[EnvSpec]
    agents: list[AgentSpec]
    horizon: int | None = None                           # None: each env's registered T (jobs.registered_horizon)
    seeds: int | list[int] | str = 10
    log_every: int = 1
    batch: int = 10
    out: str | None = None
    backend: str = "inprocess"
    workers: int | None = None
    address: str | None = None
    device: str = "cpu"                                  # given to the torch agents (compare.run)
    imports: list[str] = field(default_factory=list)     # the user's modules, imported first (user_modules.py)
    ray: dict = field(default_factory=dict)              # the Ray backend's options (ray_backend.RayOptions)
    rerun: bool = False                                  # run finished jobs again (`ctxbandits run --rerun`)
    feedback: Feedback | None = None                     # delayed or batched feedback (gym_ctxbandits.delays)


TOP = {"envs": list, "agents": list, "horizon": int, "seeds": (int, list, str), "log_every": int, "batch": int,
       "out": str, "backend": str, "workers": int, "address": str, "device": str, "imports": list, "ray": dict}
FEEDBACK = {"delay": str, "window": int, "default_reward": (int, float), "conversions": bool, "feedback_every": int,
            "batch_grid": str}      # the fields of a Feedback, as top-level keys
TOP |= FEEDBACK
ENV_KEYS = {"id": str, "kwargs": dict}
AGENT_KEYS = {"name": str, "kwargs": dict, "label": str}


def _check(where: str, value: Any, types) -> None:
    types = types if isinstance(types, tuple) else (types,)
    if isinstance(value, bool) and bool not in types or not isinstance(value, types):
        names = " or ".join(t.__name__ for t in types)
        raise ConfigError(f"config key {where!r} must be {names}, got {type(value).__name__} {value!r}")


def _table(where: str, value: Any, schema: dict, required: str) -> dict:
    if isinstance(value, str):
        return {required: value}
    _check(where, value, dict)
    for key, v in value.items():
        if key not in schema:
            raise ConfigError(f"config key '{where}.{key}' is unknown; allowed keys: {', '.join(schema)}")
        _check(f"{where}.{key}", v, schema[key])
    if required not in value:
        raise ConfigError(f"config key '{where}.{required}' is missing")
    return value


def parse(data: dict) -> Comparison:
    """A Comparison from the dict of a config file, or a ConfigError naming the bad key."""
    _check("<top level>", data, dict)
    for key, value in data.items():
        if key not in TOP:
            raise ConfigError(f"config key {key!r} is unknown; allowed keys: {', '.join(TOP)}")
        _check(key, value, TOP[key])
    for key in ("envs", "agents"):
        if not data.get(key):
            raise ConfigError(f"config key {key!r} is missing or empty")
    envs = [_table(f"envs[{i}]", e, ENV_KEYS, "id") for i, e in enumerate(data["envs"])]
    agents = [_table(f"agents[{i}]", a, AGENT_KEYS, "name") for i, a in enumerate(data["agents"])]
    for i, module in enumerate(data.get("imports", [])):
        _check(f"imports[{i}]", module, str)
    if isinstance(data.get("seeds"), list):
        for i, s in enumerate(data["seeds"]):
            _check(f"seeds[{i}]", s, int)
    if "seeds" in data:
        try:
            seeds = seed_list(data["seeds"], "config key 'seeds'")
        except ValueError as err:
            raise ConfigError(str(err)) from None
        if isinstance(data["seeds"], str):
            data = {**data, "seeds": seeds}
    for key in ("horizon", "log_every", "batch", "workers"):
        if key in data and data[key] < 1:
            raise ConfigError(f"config key {key!r} must be >= 1, got {data[key]}")
    if "ray" in data:
        from gym_ctxbandits.ray_backend import RayOptions

        try:
            RayOptions.of(data["ray"])
        except ValueError as err:
            raise ConfigError(f"config key 'ray': {err}") from None
    try:
        feedback = Feedback.of({k: v for k, v in data.items() if k in FEEDBACK})
    except ValueError as err:
        raise ConfigError(f"config: {err}") from None
    rest = {k: v for k, v in data.items() if k not in ("envs", "agents", *FEEDBACK)}
    return Comparison(envs=[EnvSpec(e["id"], e.get("kwargs", {})) for e in envs],
                      agents=[AgentSpec(a["name"], a.get("kwargs", {}), a.get("label", "")) for a in agents],
                      feedback=feedback, **rest)


def _yaml_loads(text: str):
    """PyYAML's safe load without YAML 1.1's base-60 integers, so `seeds: 1:10` is the range
    1..9, not the number 70."""
    import yaml

    class Loader(yaml.SafeLoader):
        pass

    int_tag = "tag:yaml.org,2002:int"
    Loader.yaml_implicit_resolvers = {first: [(tag, rx) for tag, rx in resolvers if tag != int_tag]
                                      for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()}
    Loader.add_implicit_resolver(int_tag, re.compile(r"^(?:[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)"
                                                     r"|[-+]?0x[0-9a-fA-F_]+)$"), list("-+0123456789"))
    return yaml.load(text, Loader=Loader)


def load(path: str | Path) -> Comparison:
    """Read and validate a .toml, .yaml or .yml comparison config."""
    path = Path(path)
    if not path.exists():
        raise ConfigError(f"config file {path} does not exist")
    text = path.read_text()
    try:
        if path.suffix == ".toml":
            data = tomllib.loads(text)
        elif path.suffix in (".yaml", ".yml"):
            data = _yaml_loads(text)
        else:
            raise ConfigError(f"config file {path} must end in .toml, .yaml or .yml")
    except (tomllib.TOMLDecodeError, ImportError) as err:
        raise ConfigError(f"cannot read {path}: {err}") from err
    except Exception as err:  # yaml's own parse errors
        if type(err).__module__.startswith("yaml"):
            raise ConfigError(f"cannot parse {path}: {err}") from err
        raise
    return parse(data or {})
