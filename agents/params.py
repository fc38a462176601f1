"""Declared hyper-parameters, validated in one place (as scikit-learn's parameter constraints).

An agent class lists its hyper-parameters in `params`, a dict name -> constraint; a constraint is
one rule or a tuple of alternatives, where a rule is a `Real`, `Int`, `Options`, `Bool`, `Str`,
`Widths`, `Device` or a literal value (None, "theory") accepted as itself:

    params = {"lam": Real(gt=0), "delta": (Real(gt=0, lt=1), None), "link": Options("logistic", "identity")}

`agents.base.BaseAgent` checks every declared value at construction, so a wrong value fails at
once with one message naming the parameter, what it accepts and what it got. A keyword
hyper-parameter left undeclared is not checked; `agents.checks` passes it with a DeprecationWarning
in 0.2 and 0.3 and fails it from 0.4 (docs/extending.md, "Deprecation policy").

Beside them, a class may declare what a tuner may try, `search_space`, a dict name -> `LogUniform`,
`Uniform`, `IntLogUniform` or `Choice`, merged with its bases' like `params` (None drops an
inherited entry); `ctxbandits bench tune` searches it (docs/tuning.md):

    search_space = {"alpha": LogUniform(0.01, 10), "lam": LogUniform(0.01, 100)}
"""

from __future__ import annotations

import inspect

import math
import numbers
from typing import Any

import numpy as np


class Real:
    """A finite real number (not a bool) within optional bounds: gt, ge, lt, le."""

    def __init__(self, *, gt=None, ge=None, lt=None, le=None):
        self.bounds = [(op, v) for op, v in ((">", gt), (">=", ge), ("<", lt), ("<=", le)) if v is not None]

    def _bounded(self, value) -> bool:
        tests = {">": value.__gt__, ">=": value.__ge__, "<": value.__lt__, "<=": value.__le__}
        return all(tests[op](v) for op, v in self.bounds)

    def accepts(self, value) -> bool:
        return (isinstance(value, numbers.Real) and not isinstance(value, bool) and math.isfinite(value)
                and self._bounded(value))

    def __str__(self) -> str:
        return "a finite number" + "".join(f" {op} {v}" for op, v in self.bounds)


class Int(Real):
    """An integer (not a bool) within optional bounds."""

    def accepts(self, value) -> bool:
        return isinstance(value, numbers.Integral) and not isinstance(value, bool) and self._bounded(value)

    def __str__(self) -> str:
        return "an int" + "".join(f" {op} {v}" for op, v in self.bounds)


class Options:
    """One of a fixed set of values (strings, usually)."""

    def __init__(self, *values):
        self.values = values

    def accepts(self, value) -> bool:
        return any(value == v and type(value) is type(v) for v in self.values)

    def __str__(self) -> str:
        return "one of " + ", ".join(repr(v) for v in self.values)


class Bool:
    """True or False."""

    def accepts(self, value) -> bool:
        return isinstance(value, (bool, np.bool_))

    def __str__(self) -> str:
        return "a bool"


class Str:
    """Any string (a name checked later, e.g. a solver or a model)."""

    def accepts(self, value) -> bool:
        return isinstance(value, str)

    def __str__(self) -> str:
        return "a string"


class Widths:
    """A non-empty tuple of positive ints: the hidden layer widths of a network."""

    def accepts(self, value) -> bool:
        return (isinstance(value, tuple) and len(value) > 0
                and all(isinstance(h, numbers.Integral) and not isinstance(h, bool) and h > 0 for h in value))

    def __str__(self) -> str:
        return "a non-empty tuple of positive ints (layer widths)"


class Device:
    """A torch device name: "cpu", "cuda", "cuda:<index>", "mps" or "auto" (cuda when available, else cpu).

    "auto" never picks mps: the agents' float64 options and some of their linear algebra have no
    MPS kernels, so mps is used only when asked for by name.
    """

    def accepts(self, value) -> bool:
        return isinstance(value, str) and (value in ("cpu", "cuda", "mps", "auto")
                                           or (value.startswith("cuda:") and value[5:].isdigit()))

    def __str__(self) -> str:
        return "'cpu', 'cuda', 'cuda:<index>', 'mps' or 'auto'"

    @staticmethod
    def resolve(name: str) -> str:
        """The device "auto" stands for on this machine ("cuda" or "cpu"); any other name as it is."""
        if name != "auto":
            return name
        try:
            import torch
        except ImportError:
            return "cpu"
        return "cuda" if torch.cuda.is_available() else "cpu"

    @staticmethod
    def missing(name: str) -> str | None:
        """Why this machine cannot run torch on the accepted device `name`, or None when it can
        (torch is imported only for a name other than "cpu" and "auto")."""
        if name in ("cpu", "auto"):
            return None
        try:
            import torch
        except ImportError:
            return 'it needs PyTorch: pip install torch, or pip install -e ".[neural]" in the gym-ctxbandits clone'
        if name == "mps":
            return None if torch.backends.mps.is_available() else \
                "MPS is not available on this machine (torch.backends.mps.is_available() is False)"
        if not torch.cuda.is_available():
            return "CUDA is not available on this machine (torch.cuda.is_available() is False)"
        index, count = int(name.partition(":")[2] or 0), torch.cuda.device_count()
        if index >= count:
            return f"this machine has {count} CUDA device(s), cuda:0 to cuda:{count - 1}"
        return None


def _alternatives(constraint) -> tuple:
    return constraint if isinstance(constraint, tuple) else (constraint,)


def _accepts(rule, value) -> bool:
    if hasattr(rule, "accepts"):
        return rule.accepts(value)
    return value is rule if rule is None else (type(value) is type(rule) and value == rule)


def _describe(rule) -> str:
    return str(rule) if hasattr(rule, "accepts") else repr(rule)


def check_param(name: str, value: Any, constraint) -> None:
    """Raise a ValueError naming `name` unless `value` satisfies `constraint`."""
    rules = _alternatives(constraint)
    if not any(_accepts(rule, value) for rule in rules):
        raise ValueError(f"{name} must be {' or '.join(_describe(r) for r in rules)}, got {value!r}")


def keyword_parameters(cls) -> list[inspect.Parameter]:
    """The keyword parameters of `cls`'s constructor, followed up the MRO through `**kwargs`: a
    subclass that adds one hyper-parameter and passes `**kwargs` on has its parent's too, so it
    need not repeat them (agents.make's messages and agents.checks see them all)."""
    found: dict[str, inspect.Parameter] = {}
    for klass in cls.__mro__:
        if "__init__" not in vars(klass):
            continue
        params = inspect.signature(vars(klass)["__init__"]).parameters.values()
        for p in params:
            if p.name != "self" and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                found.setdefault(p.name, p)
        if not any(p.kind is p.VAR_KEYWORD for p in params):
            break
    return list(found.values())


def declared(cls) -> dict[str, Any]:
    """Every hyper-parameter declared by `cls` and its bases (a subclass's entry wins)."""
    out: dict[str, Any] = {}
    for klass in reversed(cls.__mro__):
        out.update(vars(klass).get("params", {}))
    return out


def validate(agent) -> None:
    """Check every declared hyper-parameter of `agent` (its attributes of the same names)."""
    for name, constraint in declared(type(agent)).items():
        check_param(name, getattr(agent, name), constraint)


# --- search spaces: what a tuner may try (`ctxbandits bench tune`, docs/tuning.md) ----------

class _Range:
    """A range [lo, hi] of a hyper-parameter's search space; `value(u)` maps u in [0, 1] onto it."""

    kind = ""

    def __init__(self, lo, hi):
        if not (isinstance(lo, numbers.Real) and isinstance(hi, numbers.Real) and lo < hi):
            raise ValueError(f"a {self.kind} range needs lo < hi, got [{lo!r}, {hi!r}]")
        if self.kind.startswith(("log", "int-log")) and lo <= 0:
            raise ValueError(f"a {self.kind} range needs lo > 0, got [{lo!r}, {hi!r}]")
        self.lo, self.hi = lo, hi

    def contains(self, value) -> bool:
        return isinstance(value, numbers.Real) and not isinstance(value, bool) and self.lo <= value <= self.hi

    def _round(self, x: float) -> float:
        """`x` to 4 significant digits (a finer setting is noise to a tuner), within the range."""
        return min(self.hi, max(self.lo, float(f"{x:.4g}")))

    def to_json(self) -> dict:
        return {self.kind: [self.lo, self.hi]}

    def __str__(self) -> str:
        return f"{self.kind} on [{self.lo:g}, {self.hi:g}]"

    def __eq__(self, other) -> bool:
        return type(other) is type(self) and (other.lo, other.hi) == (self.lo, self.hi)


class Uniform(_Range):
    """A real drawn uniformly in [lo, hi] (a probability, a share)."""

    kind = "uniform"

    def value(self, u: float) -> float:
        return self._round(self.lo + u * (self.hi - self.lo))

    def distribution(self):
        """The range as an Optuna distribution (for its samplers)."""
        from optuna.distributions import FloatDistribution

        return FloatDistribution(self.lo, self.hi)


class LogUniform(_Range):
    """A real whose logarithm is uniform in [log lo, log hi]: a scale (a width, a regulariser, a
    learning rate), where 0.01 against 0.1 matters as much as 1 against 10."""

    kind = "log-uniform"

    def value(self, u: float) -> float:
        return self._round(self.lo * (self.hi / self.lo) ** u)

    def distribution(self):
        from optuna.distributions import FloatDistribution

        return FloatDistribution(self.lo, self.hi, log=True)


class IntLogUniform(_Range):
    """An integer whose logarithm is uniform in [log lo, log hi] (an ensemble size, a layer width)."""

    kind = "int-log-uniform"

    def contains(self, value) -> bool:
        return isinstance(value, numbers.Integral) and super().contains(value)

    def value(self, u: float) -> int:
        return int(min(self.hi, max(self.lo, round(self.lo * (self.hi / self.lo) ** u))))

    def distribution(self):
        from optuna.distributions import IntDistribution

        return IntDistribution(self.lo, self.hi, log=True)


class Choice:
    """One of a few values, each as likely (a link function, a distribution)."""

    kind = "choice"

    def __init__(self, *values):
        if not values:
            raise ValueError("a choice needs at least one value")
        self.values = values

    def contains(self, value) -> bool:
        return any(value == v and type(value) is type(v) for v in self.values)

    def value(self, u: float):
        return self.values[min(int(u * len(self.values)), len(self.values) - 1)]

    def distribution(self):
        from optuna.distributions import CategoricalDistribution

        return CategoricalDistribution(list(self.values))

    def to_json(self) -> dict:
        return {self.kind: list(self.values)}

    def __str__(self) -> str:
        return "one of " + ", ".join(map(repr, self.values))

    def __eq__(self, other) -> bool:
        return type(other) is Choice and other.values == self.values


SPACES = {c.kind: c for c in (Uniform, LogUniform, IntLogUniform, Choice)}
SPACE_SYNTAX = "NAME=log:LO:HI, NAME=uniform:LO:HI, NAME=intlog:LO:HI or NAME=choice:A|B|C, comma-separated"


def search_space(cls) -> dict[str, Any]:
    """The search space of agent class `cls`: its `search_space` dict merged with its bases' (a
    subclass's entry wins; None removes one), keeping only the hyper-parameters its constructor
    takes (LinTS-AG, a LinTS, fixes lam and so does not search it). {} when nothing is declared."""
    out: dict[str, Any] = {}
    for klass in reversed(cls.__mro__):
        out.update(vars(klass).get("search_space", {}))
    takes = {p.name for p in keyword_parameters(cls)}
    return {k: v for k, v in out.items() if v is not None and k in takes}


def defaults(cls, names) -> dict[str, Any]:
    """The constructor's default values of the hyper-parameters `names` of `cls`."""
    found = {p.name: p.default for p in keyword_parameters(cls)}
    return {n: found[n] for n in names}


def parse_space(text: str) -> dict[str, Any]:
    """A search space from the command line's text, e.g. "lam=log:0.01:100,epsilon=uniform:0:0.5"
    (a ValueError naming the bad entry and the syntax otherwise)."""
    def number(s: str):
        try:
            return int(s)
        except ValueError:
            return float(s)

    def literal(s: str):
        try:
            return number(s)
        except ValueError:
            return s

    kinds = {"log": LogUniform, "uniform": Uniform, "intlog": IntLogUniform}
    space: dict[str, Any] = {}
    for entry in filter(None, (e.strip() for e in text.split(","))):
        name, _, spec = entry.partition("=")
        kind, _, rest = spec.partition(":")
        try:
            if kind == "choice":
                space[name.strip()] = Choice(*(literal(v) for v in rest.split("|")))
            else:
                lo, hi = rest.split(":")
                space[name.strip()] = kinds[kind](number(lo), number(hi))
        except (KeyError, ValueError) as err:
            raise ValueError(f"cannot read search space entry {entry!r} ({err}); write {SPACE_SYNTAX}") from None
    if not space:
        raise ValueError(f"empty search space {text!r}; write {SPACE_SYNTAX}")
    return space
