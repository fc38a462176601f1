"""What a comparison runs: the specs of its envs and agents and its `Job`s, one per (env, agent, seed).

The bottom of the run path (cli -> config -> compare -> backends -> experiment -> jobs, results,
store): the names here say what is run and under which file name its result is kept, and import
nothing of the layers above. `gym_ctxbandits.experiment` runs a job; `gym_ctxbandits.results`
stores and reads its table. Every name is also importable from `gym_ctxbandits.experiment`, as it
was before this module existed.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import pickle
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

from gym_ctxbandits.delays import Feedback
from gym_ctxbandits.user_modules import UserModuleError, import_modules, user_code

COLUMNS = ["env", "env_kwargs", "agent", "agent_kwargs", "seed", "round", "reward", "regret",
           "cum_reward", "cum_regret", "act_seconds", "observe_seconds"]


def import_agents():
    """The project's `agents` package, or an ImportError saying what shadows it."""
    import agents

    if not getattr(agents, "__gym_ctxbandits__", False):
        raise ImportError(
            f"`import agents` found {getattr(agents, '__file__', agents)!r}, which is not gym-ctxbandits' agent zoo: "
            "another installed package (e.g. the OpenAI Agents SDK) also provides a top-level `agents`. "
            "Uninstall it in this environment or use a separate virtual environment for gym-ctxbandits."
        )
    return agents


def agent_seed(seed: int, label: str) -> int:
    """The agent's seed for job seed `seed`: its own stream, independent of the env's."""
    key = int.from_bytes(hashlib.sha256(label.encode()).digest()[:4], "little")
    return int(np.random.SeedSequence([seed, key]).generate_state(1)[0])


@dataclass(frozen=True)
class AgentSpec:
    """An agent of a comparison: a registered name with kwargs, shown as `label` (default the name)."""

    name: str
    kwargs: dict = field(default_factory=dict)
    label: str = ""

    @property
    def title(self) -> str:
        return self.label or self.name

    def build(self, seed: int, device: str | None = None, given: dict | None = None):
        """The agent for job seed `seed`, given `device` too unless that is None (see `agent_device`),
        and the env's `given` kwargs (`env_given`)."""
        return import_agents().make(self.name, seed=agent_seed(seed, self.title), **self.kwargs_on(device, given))

    def kwargs_on(self, device: str | None, given: dict | None = None) -> dict:
        """The agent's kwargs with `device` added (unless None) and, under them, what the env gives (`env_given`)."""
        kwargs = {**(given or {}), **self.kwargs}
        return kwargs if device is None else {**kwargs, "device": device}


KINDS = {"arm": "takes one arm a round", "ranking": "takes a ranked list of items a round (docs/ranking.md)"}
# What a ranking env tells the agents that take it, unless the comparison sets it: the list's length K and a
# position-based model's examination probabilities (PBM-UCB's and PBM-PIE's known kappas).
ENV_GIVEN = ("num_positions", "kappas")


def kind(target) -> str:
    """The kind of problem an env class or agent class (a registry entry) is for: "arm" (the K-armed
    contract, the default of anything that does not say) or "ranking"."""
    return getattr(target, "kind", "arm")


# Random on a ranking env: a uniformly random list, TopK ranking Random's equal probabilities with ties broken at
# random, labelled Random (the baseline the summary's "regret / Random" and the bench's scores divide by)
RANDOM_LIST = AgentSpec("TopK", {"agent": "Random"}, "Random")


def random_lists(envs: list[EnvSpec], agents: list[AgentSpec]) -> list[AgentSpec]:
    """`agents`, with a plain Random (no kwargs) made RANDOM_LIST when every env ranks items: `--agents
    Random,CascadeUCB1` on a ranking env compares against random lists, as a one-arm comparison does
    against random arms."""
    try:
        if not envs or any(kind(env_creator(e.id)) != "ranking" for e in envs):
            return agents
    except (gym.error.Error, UserModuleError, ImportError):   # an unknown env: check_comparison says so in one line
        return agents
    return [RANDOM_LIST if a.name == "Random" and not a.kwargs and a.title == "Random" else a for a in agents]


def check_kinds(envs: list[EnvSpec], agents: list[AgentSpec]) -> None:
    """A ValueError, in one line, for a comparison that pairs an agent with an env of another kind (a
    ranking agent on a one-arm env, or the reverse): its actions would not fit the env's."""
    registry = import_agents().REGISTRY
    for env in envs:
        want = kind(env_creator(env.id))
        if wrong := [a.name for a in agents if kind(registry.get(a.name)) != want]:
            others = sorted(n for n, e in registry.items() if kind(e) == want)
            raise ValueError(f"{', '.join(wrong)} cannot play {env.id}: the env {KINDS[want]}, and "
                             f"{'they do' if len(wrong) > 1 else 'it does'} not; give agents of its kind "
                             f"(e.g. {', '.join(others[:4])}) or an env of theirs")


def env_given(env, agent: AgentSpec, horizon: int | None = None) -> dict:
    """What a run gives a ranking agent besides its spec's kwargs, where the agent takes it and the spec
    leaves it unset: the kwargs of ENV_GIVEN that `env` (a built env or vector env) holds (the list's
    length; on a position-based model, its kappas) and the run's `horizon` (TopRank's delta = 1 / n and
    PBM-PIE's log T are the papers' in T). A one-arm agent gets nothing: its kwargs are its spec's."""
    if kind(import_agents().REGISTRY.get(agent.name)) != "ranking":
        return {}
    model = getattr(env, "model", None) or env.unwrapped
    value = lambda v: v.tolist() if isinstance(v, np.ndarray) else v     # noqa: E731  (JSON-like, as a config)
    offered = {**{k: value(getattr(model, k)) for k in ENV_GIVEN if getattr(model, k, None) is not None},
               **({"horizon": int(horizon)} if horizon is not None else {})}
    takes = import_agents().base.hyperparameter_names(agent.name)
    return {k: v for k, v in offered.items() if k in takes and k not in agent.kwargs}


def agent_device(spec: AgentSpec, device: str) -> str | None:
    """The device a comparison on torch device `device` passes to the agent of `spec`: `device` when
    the agent takes a `device` hyper-parameter (the torch agents) and its kwargs do not set one (an
    agent's own kwarg wins), else None (numpy agents have nothing to put on a device)."""
    if "device" in spec.kwargs or "device" not in import_agents().base.hyperparameter_names(spec.name):
        return None
    return device


@dataclass(frozen=True)
class EnvSpec:
    """An environment of a comparison: a registered id with kwargs (horizon T separately)."""

    id: str
    kwargs: dict = field(default_factory=dict)

    @property
    def title(self) -> str:
        if not self.kwargs:
            return self.id
        return f"{self.id}({', '.join(f'{k}={_short(v)}' for k, v in sorted(self.kwargs.items()))})"


def _is_data(value: Any) -> bool:
    """An array-like kwarg (numpy, pandas, scipy.sparse: Supervised-v0's X and y), whose str() abbreviates."""
    return isinstance(value, np.ndarray) or hasattr(value, "to_numpy") or hasattr(value, "tocsr")


def _short(value: Any) -> str:
    """A kwarg as titles, result tables and file names show it: data by type, shape and a hash of its
    content (str() abbreviates a large array, and two datasets of one shape must stay apart),
    anything else by str()."""
    if not _is_data(value):
        return str(value)
    digest = hashlib.sha256(pickle.dumps(value, protocol=5)).hexdigest()[:12]
    return f"<{type(value).__name__} {'x'.join(map(str, np.shape(value)))} sha256:{digest}>"


@dataclass(frozen=True)
class Job:
    """One agent on one env for one seed and `horizon` rounds; rows logged at `log_rounds`.

    `device` is the torch device the comparison passes to the agent (`agent_device`; None: none
    passed). `feedback` is the delayed or batched feedback model of the run (gym_ctxbandits.delays;
    None: every reward at once, the loop as it always was). `inputs` are what decides the numbers besides the spec, as (path, digest) pairs: the
    data files named by the kwargs and the user's code (`job_inputs`, computed once by the process
    that makes the jobs). Both travel with the job to the worker that runs it.
    """

    env: EnvSpec
    agent: AgentSpec
    seed: int
    horizon: int
    log_every: int = 1
    device: str | None = None
    inputs: tuple[tuple[str, str], ...] = ()
    feedback: Feedback | None = None

    @functools.cached_property
    def filename(self) -> str:
        """A stable, filesystem-safe name: readable parts plus a hash of the full spec (computed once a
        job: an array kwarg is hashed by its content, and the run loop asks for the name often).

        The hash covers the device type when it is not the CPU: a GPU's numbers may differ from the
        CPU's by float tolerance, so a GPU run of a comparison writes files of its own and never
        resumes from (or overwrites) the CPU's; a CPU job keeps the name it had before devices
        existed, so older results folders still resume. Likewise the digests of `inputs`: a job
        with a data file or the user's code gets a new name when their content changes (and is run
        again), while a job with neither keeps the name it had before inputs were recorded; and the
        feedback model (Feedback.key): a delayed run never resumes from an undelayed one, and a job
        without one keeps its name.
        """
        parts = [self.env.id, self.env.kwargs, self.agent.name, self.agent.kwargs, self.agent.title, self.horizon,
                 self.log_every]
        if self.device not in (None, "cpu"):
            parts.append(self.device.partition(":")[0])       # cuda:0 and cuda:1 compute alike
        if self.inputs:
            parts.append([digest for _, digest in self.inputs])  # by content: a moved file keeps its results
        if self.feedback is not None:
            parts.append({"feedback": self.feedback.key()})
        spec = json.dumps(parts, sort_keys=True, default=_short)
        digest = hashlib.sha256(spec.encode()).hexdigest()[:10]
        slug = lambda s: "".join(c if c.isalnum() or c in "-+." else "_" for c in s)  # noqa: E731
        return f"{slug(self.env.id.split('/')[-1])}__{slug(self.agent.title)}__seed{self.seed}__{digest}.parquet"

    @property
    def legacy_filename(self) -> str:
        """The name this job's file had before gym-ctxbandits recorded its inputs: a file under it was
        computed from data and code that can no longer be told (results.legacy_results)."""
        return dataclasses.replace(self, inputs=()).filename

    def log_rounds(self) -> np.ndarray:
        """1-based rounds that get a row: every `log_every`-th round and always the last."""
        rounds = np.arange(self.log_every, self.horizon + 1, self.log_every)
        return rounds if rounds.size and rounds[-1] == self.horizon else np.append(rounds, self.horizon)


def env_spec(env_id: str) -> gym.envs.registration.EnvSpec:
    """The registered spec of `env_id`. A `module:Id` id imports `module` first, as `gym.make` does
    (`gym.spec` does not), so a user's env needs no --import."""
    module, _, name = env_id.rpartition(":")
    if module.endswith(".py"):
        raise UserModuleError(f"env {env_id!r}: before ':' goes a module name, as gym.make takes it; for a file, "
                              f"--import {module} and give the env id {name!r}")
    import_modules([module] if module else [], given_as=f"env {env_id!r}: module")
    return gym.spec(name)


def env_creator(env_id: str):
    """The class or function that builds `env_id`: its entry point, loaded when given as "module:Name"."""
    entry = env_spec(env_id).entry_point
    return gym.envs.registration.load_env_creator(entry) if isinstance(entry, str) else entry


def is_replay(env_id: str) -> bool:
    """True for a replay env (e.g. the Open Bandit Dataset): rounds are accepted events, no regret."""
    return bool(getattr(env_creator(env_id), "replay", False))


def job_inputs(env: EnvSpec, agent: AgentSpec) -> tuple[tuple[str, str], ...]:
    """What decides the numbers of `agent` on `env` besides their ids and kwargs, as (path, digest)
    pairs, so that results computed from other inputs are never taken for theirs (Job.filename):

    * each local file a string kwarg of the env or the agent names (Supervised-v0's `source=` CSV or
      Parquet, or the file a `pmlb:NAME` source reads): the SHA-256 of its content, remembered by size
      and mtime (datasets.manifest.sha256_of);
    * the user's code defining the env and the agent class (user_modules.user_code: an
      `--import`ed module, a `module:Id` env's module, a script), and, for an env id registered by
      someone else than this package, the registration's own kwargs.

    A folder is not hashed (a dataset folder is checked by its loader against the manifest), nor is
    gym-ctxbandits' own code (its version is the user's to pin) or an installed package's.
    """
    from gym_ctxbandits.datasets.manifest import sha256_of
    from gym_ctxbandits.registration import ENVIRONMENTS

    found = []
    for kwargs in (env.kwargs, agent.kwargs):
        for key in sorted(kwargs):
            try:
                path = Path(kwargs[key]).expanduser() if isinstance(kwargs[key], str) else None
                if path is not None and kwargs[key].startswith("pmlb:"):
                    from gym_ctxbandits.datasets import pmlb

                    path = pmlb.path(kwargs[key][5:], env.kwargs.get("data_home"))
                if path is not None and path.is_file():
                    found.append((str(path.resolve()), sha256_of(path)[:16]))
            except (OSError, ValueError):      # a string no file system takes as a name (too long, a NUL)
                pass
    for code in (env_creator(env.id), import_agents().REGISTRY.get(agent.name)):  # a lazy entry: the zoo's own
        if (where := user_code(code)) is not None:
            found.append(where)
    name = env.id.rpartition(":")[2]
    if name not in {f"CtxBandit/{n}-v0" for n in ENVIRONMENTS}:
        registered = json.dumps(env_spec(env.id).kwargs, sort_keys=True, default=_short)
        found.append((f"registration of {name}", hashlib.sha256(registered.encode()).hexdigest()[:12]))
    return tuple(dict.fromkeys(found))


SEED_FORMS = ("a count N >= 1 (seeds 0..N-1), a range A:B (seeds A..B-1, e.g. 1000:1010) "
              "or a list of distinct seeds >= 0 (e.g. 3,7,11)")


def seed_list(seeds, name: str = "seeds") -> list[int]:
    """The seeds of a comparison, from a count N (0..N-1), a text "N", "A:B" (A..B-1, as `range`) or
    "3,7,11", or a list; anything else is a ValueError naming `name` and the accepted forms, so a
    typo never runs (or writes) the wrong seeds."""
    def bad(problem: str) -> ValueError:
        return ValueError(f"{name} {problem}; give {SEED_FORMS}")

    def is_int(x) -> bool:
        return isinstance(x, (int, np.integer)) and not isinstance(x, bool)

    given = seeds
    if isinstance(seeds, str):
        text = seeds.strip()
        if re.fullmatch(r"[+-]?[0-9]+", text):
            seeds = int(text)
        elif ":" in text:
            parts = [p.strip() for p in text.split(":")]
            if len(parts) != 2 or not all(re.fullmatch(r"[0-9]+", p) for p in parts):
                raise bad(f"{seeds!r} is not a range A:B of integers >= 0")
            start, stop = map(int, parts)
            if stop <= start:
                raise bad(f"{seeds!r} is an empty range: A:B runs seeds A..B-1, so B must be greater than A")
            return list(range(start, stop))
        elif "," in text:
            items = [p.strip() for p in text.split(",")]
            wrong = next((p for p in items if not re.fullmatch(r"[0-9]+", p)), None)
            if wrong is not None:
                raise bad(f"{seeds!r} is not a list of integers >= 0 (item {wrong!r})")
            seeds = [int(p) for p in items]
        else:
            raise bad(f"must be an integer count, a range or a list, got {seeds!r}")
    if is_int(seeds):
        if seeds < 1:
            raise bad(f"must be a count >= 1, got {int(seeds)}")
        return list(range(int(seeds)))
    if not isinstance(seeds, (list, tuple, range)) or len(seeds) == 0:
        raise bad(f"must be a count >= 1 or a non-empty list of seeds >= 0, got {seeds!r}")
    wrong = next((s for s in seeds if not is_int(s) or s < 0), None)
    if wrong is not None:
        raise bad(f"{given!r} holds {wrong!r}, not an integer >= 0")
    repeated = sorted(s for s, n in Counter(int(s) for s in seeds).items() if n > 1)
    if repeated:
        raise bad(f"{given!r} repeats seed {', '.join(map(str, repeated))} (each seed runs once)")
    return [int(s) for s in seeds]


DEFAULT_HORIZON = 1000   # rounds of a run on an env registered without a horizon (a replay: accepted events)


def registered_horizon(env_id: str) -> int:
    """The horizon T `env_id` is registered with (its paper's, `max_episode_steps`), else DEFAULT_HORIZON."""
    return env_spec(env_id).max_episode_steps or DEFAULT_HORIZON


def make_jobs(envs, agents, seeds, horizon: int | None, log_every: int = 1, device: str = "cpu",
              feedback: Feedback | dict | None = None) -> list[Job]:
    """The job list of a comparison: every env x agent x seed, envs and agents as specs, names or ids,
    each env for `horizon` rounds (None: its registered T, `registered_horizon`); each job carries the
    torch device its agent gets (`agent_device`) and the feedback model (gym_ctxbandits.delays.Feedback,
    a dict of its fields, or None)."""
    feedback = Feedback.of(feedback)
    env_specs = [e if isinstance(e, EnvSpec) else EnvSpec(e) for e in envs]
    agent_specs = [a if isinstance(a, AgentSpec) else AgentSpec(a) for a in agents]
    seeds = seed_list(seeds)
    titles = [a.title for a in agent_specs]
    if len(set(titles)) != len(titles):
        raise ValueError(f"agents need distinct labels in one comparison, got {titles}; set `label` on repeated names")
    devices = [agent_device(a, device) for a in agent_specs]
    horizons = [int(horizon) if horizon is not None else registered_horizon(e.id) for e in env_specs]
    return [Job(e, a, int(s), T, int(log_every), dev, inputs, feedback) for e, T in zip(env_specs, horizons)
            for a, dev in zip(agent_specs, devices) for inputs in [job_inputs(e, a)] for s in seeds]
