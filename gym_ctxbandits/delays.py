"""Delayed, censored and batched feedback: when (and whether) the reward of a round reaches the agent.

A `Feedback` model says, for each round s and instance, the round at which its reward is delivered
to the agent (or that it never is). Regret is counted when the agent acts, as in the papers; only
the learning is delayed. The pieces, applied in this order:

* a delay D_s >= 0 in rounds (`delay`, a spec string; delay 0 is today's loop, the reward
  delivered right after the step of its own round):

      none                 no delay: the same model as no `delay` at all (None), so the same numbers and file names
      fixed:D              D_s = D
      geometric:MEAN       P(D_s = k) = (1 - p)^k p on k = 0, 1, ..., p = 1 / (MEAN + 1): E[D_s] = MEAN
      geometric:p=P        the same with p given
      uniform:HIGH         D_s uniform on {0, ..., HIGH}; uniform:LOW:HIGH on {LOW, ..., HIGH}
      pareto:ALPHA:SCALE   D_s = floor(SCALE ((1 - U)^(-1/ALPHA) - 1)): a Lomax tail, P(D_s >= k) ~ (1 + k / SCALE)^(-ALPHA)
      reward:MAX:MIN       D_s = ceil(E_s (MIN + (1 - mu_s) (MAX - MIN))), E_s ~ Exp(1), mu_s the chosen arm's
                           expected reward clipped to [0, 1]: good arms report sooner (Open Bandit Pipeline's
                           expected-reward-weighted exponential delays, after Ktena et al. 2019; MIN defaults to 10)

* a censoring window m (`window`): a reward with D_s > m is never delivered, or with
  `default_reward` is replaced by that value and delivered at round s + m (Microsoft
  Personalizer's "reward wait time" and "default reward");
* conversions (`conversions=True`, Vernade et al. 2017, 2020): only a positive reward is ever
  revealed; a zero (no conversion) never arrives (or, with a window and a default reward, arrives
  as the default at s + m, like a conversion that came too late);
* batched updates: the rewards that have arrived reach the agent only at the end of each batch:
  every B rounds (`feedback_every=B`), or at the M batch ends t_1 < ... < t_M = T of a grid
  (`batch_grid`, Gao et al. 2019): "arithmetic:M" t_j = floor(j T / M); "geometric:M"
  t_j = floor(b^j), b = T^(1/M); "minimax:M" t_1 = floor(a), t_j = floor(a sqrt(u_{j-1})) with
  u_1 = a, u_j = a sqrt(u_{j-1}), a = T^(1 / (2 - 2^(1-M))) (the constant-free grids of the paper).
  `feedback_every` is the run loop's option; the neural agents' own `update_every` (how often a
  network trains on what it has observed) is another thing and stays what it is.

Common random numbers. Every delay is a function of one uniform variate U_s per round and
instance, drawn whatever the agent does from the delay stream: a SeedSequence child of the job seed
(spawn key `DELAY_KEY`), distinct from the env's stream (the seed itself) and the agent's
(jobs.agent_seed). So every agent compared on a seed faces the same delays, and delay models
compared on a seed are coupled too (a larger mean gives each round a delay at least as long). The
one exception is `reward:`, where the delay depends on the arm the agent chose: the agents then
share U_s (so E_s), not D_s. The variates are drawn `BLOCK` rounds at a time per instance, so an
instance's delays do not depend on how many instances run beside it nor on the horizon.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections import defaultdict
from dataclasses import dataclass

import numpy as np

__all__ = ["Feedback", "FeedbackQueue", "delay_model", "batch_ends", "delay_rng", "DELAY_KEY", "DELAYS", "GRIDS"]

DELAY_KEY = 0xDE1A      # spawn key of the delay stream under the job seed
NEVER = np.iinfo(np.int64).max
_LONGEST = 2.0**62      # delays are capped here before becoming int64 (a heavy Pareto tail overflows otherwise)


def _num(v: float) -> str:
    """A number as the specs write it: 100, not 100.0; a fraction exactly (repr round-trips)."""
    return str(int(v)) if float(v).is_integer() else repr(float(v))


@dataclass(frozen=True)
class Fixed:
    """D_s = d."""

    d: int
    needs_reward = False
    random = False

    @property
    def spec(self) -> str:
        return f"fixed:{self.d}"

    def draw(self, u: np.ndarray, mu=None) -> np.ndarray:
        return np.full(u.shape, self.d, np.int64)


@dataclass(frozen=True)
class Geometric:
    """P(D_s = k) = (1 - p)^k p, k >= 0 (mean (1 - p) / p): by inversion, floor(log(1 - U) / log(1 - p)).
    `mean`, when the spec gave the mean, is kept for its name."""

    p: float
    mean: float | None = None
    needs_reward = False
    random = True

    @property
    def spec(self) -> str:
        return f"geometric:{_num(self.mean)}" if self.mean is not None else f"geometric:p={_num(self.p)}"

    def draw(self, u: np.ndarray, mu=None) -> np.ndarray:
        if self.p == 1.0:
            return np.zeros(u.shape, np.int64)
        return _rounds(np.floor(np.log1p(-u) / math.log1p(-self.p)))


@dataclass(frozen=True)
class Uniform:
    """D_s uniform on {low, ..., high}."""

    low: int
    high: int
    needs_reward = False
    random = True

    @property
    def spec(self) -> str:
        return f"uniform:{self.low}:{self.high}"

    def draw(self, u: np.ndarray, mu=None) -> np.ndarray:
        return self.low + _rounds(np.floor(u * (self.high - self.low + 1)))


@dataclass(frozen=True)
class Pareto:
    """D_s = floor(scale ((1 - U)^(-1/alpha) - 1)): Lomax(alpha) scaled, a heavy tail (infinite mean for alpha <= 1)."""

    alpha: float
    scale: float
    needs_reward = False
    random = True

    @property
    def spec(self) -> str:
        return f"pareto:{_num(self.alpha)}:{_num(self.scale)}"

    def draw(self, u: np.ndarray, mu=None) -> np.ndarray:
        return _rounds(np.floor(self.scale * np.expm1(-np.log1p(-u) / self.alpha)))


@dataclass(frozen=True)
class RewardExponential:
    """D_s = ceil(E_s (min + (1 - mu_s) (max - min))), E_s = -log(1 - U_s) ~ Exp(1), mu_s in [0, 1] the
    chosen arm's expected reward: Open Bandit Pipeline's reward-weighted exponential delays."""

    max_scale: float
    min_scale: float = 10.0
    needs_reward = True
    random = True

    @property
    def spec(self) -> str:
        return f"reward:{_num(self.max_scale)}:{_num(self.min_scale)}"

    def draw(self, u: np.ndarray, mu=None) -> np.ndarray:
        scale = self.min_scale + (1.0 - np.clip(mu, 0.0, 1.0)) * (self.max_scale - self.min_scale)
        return _rounds(np.ceil(-np.log1p(-u) * scale))


def _rounds(x: np.ndarray) -> np.ndarray:
    return np.minimum(x, _LONGEST).astype(np.int64)


DELAYS = {"fixed": "fixed:D", "geometric": "geometric:MEAN or geometric:p=P", "uniform": "uniform:HIGH or uniform:LOW:HIGH",
          "pareto": "pareto:ALPHA:SCALE", "reward": "reward:MAX or reward:MAX:MIN"}
GRIDS = {"arithmetic", "geometric", "minimax"}
_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


def _spec(text, what: str, forms: str) -> tuple[str, list[float], dict[str, float]]:
    """(name, positional numbers, key=number pairs) of "name:a:b" / "name:key=v", or a one-line ValueError."""
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"{what} must be a text such as {forms}, got {text!r}")
    name, *args = [part.strip() for part in text.strip().split(":")]
    values, named = [], {}
    for arg in args:
        key, eq, value = arg.rpartition("=") if "=" in arg else ("", "", arg)
        if not _NUMBER.fullmatch(value) or (eq and not key.isidentifier()):
            raise ValueError(f"{what} {text!r}: {arg!r} is not a number (or key=number); give {forms}")
        if eq:
            named[key] = float(value)
        else:
            values.append(float(value))
    return name.lower(), values, named


def _whole(value: float, what: str, least: int = 0) -> int:
    if value != int(value) or value < least:
        raise ValueError(f"{what} must be a whole number >= {least}, got {value:g}")
    return int(value)


def delay_model(spec: str):
    """The delay model of a spec string (module docstring), None for "none" (no delay), or a
    one-line ValueError naming the forms."""
    forms = ", ".join(DELAYS.values()) + " or none"
    name, values, named = _spec(spec, "delay", forms)
    where = f"delay {spec!r}"
    if name == "none":
        if values or named:
            raise ValueError(f"{where}: none takes no numbers (no delay); give none")
        return None
    if name not in DELAYS:
        raise ValueError(f"{where}: unknown delay {name!r}; give one of {forms}")
    counts = {"fixed": (1,), "geometric": (0, 1), "uniform": (1, 2), "pareto": (2,), "reward": (1, 2)}[name]
    keys = {"mean", "p"} if name == "geometric" else set()
    given = len(values) + len(named)
    if len(values) not in counts or set(named) - keys or (name == "geometric" and given != 1):
        raise ValueError(f"{where}: give {DELAYS[name]}")
    if name == "fixed":
        return Fixed(_whole(values[0], f"{where}: D"))
    if name == "geometric":
        if "p" in named:
            if not 0 < named["p"] <= 1:
                raise ValueError(f"{where}: p must be in (0, 1], got {named['p']:g}")
            return Geometric(named["p"])
        mean = named.get("mean", values[0] if values else 0.0)
        if not (mean >= 0 and math.isfinite(mean)):
            raise ValueError(f"{where}: the mean delay must be a finite number >= 0, got {mean:g}")
        return Geometric(1.0 / (mean + 1.0), mean)
    if name == "uniform":
        lo, hi = (0.0, values[0]) if len(values) == 1 else values
        lo, hi = _whole(lo, f"{where}: LOW"), _whole(hi, f"{where}: HIGH")
        if hi < lo:
            raise ValueError(f"{where}: HIGH must be >= LOW, got {lo}:{hi}")
        return Uniform(lo, hi)
    if name == "pareto":
        if not (values[0] > 0 and values[1] > 0):
            raise ValueError(f"{where}: ALPHA and SCALE must be > 0, got {values[0]:g} and {values[1]:g}")
        return Pareto(*values)
    hi, lo = (values[0], 10.0) if len(values) == 1 else values
    if not 0 <= lo <= hi:
        raise ValueError(f"{where}: give 0 <= MIN <= MAX (the scales of the exponential delays), got MAX {hi:g}, "
                         f"MIN {lo:g}")
    return RewardExponential(hi, lo)


def batch_ends(grid: str, horizon: int) -> np.ndarray:
    """The 1-based rounds t_1 < ... < t_M = T that end the batches of `grid` ("arithmetic:M",
    "geometric:M" or "minimax:M"; module docstring). Batches that round to the same end merge (a
    short horizon), so there may be fewer than M."""
    name, values, named = _spec(grid, "batch grid", "arithmetic:M, geometric:M or minimax:M")
    if name not in GRIDS or len(values) != 1 or named:
        raise ValueError(f"batch grid {grid!r}: give arithmetic:M, geometric:M or minimax:M (M batches)")
    M, T = _whole(values[0], f"batch grid {grid!r}: M", 1), int(horizon)
    j = np.arange(1, M + 1)
    if name == "arithmetic":
        u = j * T / M
    elif name == "geometric":
        u = float(T) ** (j / M)
    else:                                         # u_1 = a, u_j = a sqrt(u_{j-1}): u_j = a^(2 - 2^(1-j))
        u = float(T) ** ((2.0 - 2.0 ** (1 - j)) / (2.0 - 2.0 ** (1 - M)))
    ends = np.clip(np.floor(u + 1e-9).astype(np.int64), 1, T)
    ends[-1] = T
    return np.unique(ends)


@dataclass(frozen=True)
class Feedback:
    """A feedback model (module docstring): delay spec, censoring window, conversions, batched updates.

    The fields are plain values, checked and put in a canonical form here, so a model is its own
    identity: `key()` names it in the result file names (Job.filename), and two spellings of one
    model ("geometric:100", "geometric:mean=100") give one key. `Feedback()` is today's loop (every
    reward at once); a comparison without feedback passes None, which keeps its old file names.
    """

    delay: str | None = None
    window: int | None = None
    default_reward: float | None = None
    conversions: bool = False
    feedback_every: int = 1
    batch_grid: str | None = None

    def __post_init__(self):
        if self.delay is not None:                          # "none": no delay, the same model as None
            model = delay_model(self.delay)
            object.__setattr__(self, "delay", None if model is None else model.spec)
        if self.window is not None and (isinstance(self.window, bool) or not isinstance(self.window, (int, np.integer))
                                        or self.window < 0):
            raise ValueError(f"window must be a whole number of rounds >= 0, got {self.window!r}")
        if self.default_reward is not None:
            if isinstance(self.default_reward, bool) or not isinstance(self.default_reward, (int, float)) or \
                    not math.isfinite(self.default_reward):
                raise ValueError(f"default_reward must be a finite number, got {self.default_reward!r}")
            if self.window is None:
                raise ValueError("default_reward replaces the rewards that miss the window: give a window too "
                                 "(--window M)")
            object.__setattr__(self, "default_reward", float(self.default_reward))
        if not isinstance(self.conversions, bool):
            raise ValueError(f"conversions must be True or False, got {self.conversions!r}")
        every = self.feedback_every
        if isinstance(every, bool) or not isinstance(every, (int, np.integer)) or every < 1:
            raise ValueError(f"feedback_every must be a whole number of rounds >= 1, got {every!r}")
        if self.batch_grid is not None:
            batch_ends(self.batch_grid, 100)                   # checks the spec
            if every != 1:
                raise ValueError("give either feedback_every (a batch every B rounds) or batch_grid (M batches), "
                                 "not both")

    @classmethod
    def of(cls, value) -> Feedback | None:
        """A Feedback from a Feedback, a dict of its fields, or None; None for the default model (today's loop)."""
        if value is None:
            return None
        if isinstance(value, dict):
            unknown = sorted(set(value) - {f.name for f in dataclasses.fields(cls)})
            if unknown:
                raise ValueError(f"feedback has no field {', '.join(map(repr, unknown))}; its fields are "
                                 f"{', '.join(f.name for f in dataclasses.fields(cls))}")
            value = cls(**value)
        if not isinstance(value, cls):
            raise ValueError(f"feedback must be a gym_ctxbandits.delays.Feedback, a dict of its fields or None, "
                             f"got {value!r}")
        return None if value == cls() else value

    @property
    def model(self):
        """The delay model (None: no delay)."""
        return None if self.delay is None else delay_model(self.delay)

    @property
    def partial(self) -> bool:
        """True when the instances of a batch may receive the rewards of a round at different rounds
        (random delays, conversions): a batched agent then needs `observe_rows` (experiment.py)."""
        model = self.model
        return self.conversions or (model is not None and model.random)

    def key(self) -> str:
        """The canonical text of the model, for file names and titles."""
        parts = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        return ",".join(f"{k}={v}" for k, v in parts.items() if v != getattr(Feedback, k, None) and v is not None)


def delay_rng(seed: int) -> np.random.Generator:
    """The delay stream of job seed `seed` (module docstring)."""
    return np.random.default_rng(np.random.SeedSequence(int(seed), spawn_key=(DELAY_KEY,)))


class FeedbackQueue:
    """Rewards on their way to the agent: for N instances, each round's (obs, action, reward) kept
    until the round its reward is delivered, keyed by that arrival round (as Open Bandit Pipeline's
    simulator and river's `simulate_qa` keep theirs).

    `push(t, obs, action, reward, mu)` files round t (0-based) once the env has stepped; `pop(t)`
    then gives the deliveries due at round t, oldest round first, as (s, obs_s, action_s, reward_s,
    rows): rows None when every instance's reward of round s arrives now, else the int array of
    those that do. Rewards that would arrive after the last round `horizon - 1` (None: no last
    round; a batch grid needs one), or never, are not kept. With `single`, action and reward are an int and a float and obs is one instance's (K, d).
    `rngs` are the instances' delay streams (`delay_rng`).
    """

    BLOCK = 1024

    def __init__(self, feedback: Feedback, rngs: list[np.random.Generator], horizon: int | None = None,
                 single: bool = False):
        self.fb, self.model, self.rngs, self.single = feedback, feedback.model, rngs, single
        self.partial = feedback.partial                  # (parses the delay spec: once, not every round)
        self.n, self.T = len(rngs), NEVER if horizon is None else int(horizon)
        if feedback.batch_grid is not None:
            if horizon is None:
                raise ValueError(f"batch_grid {feedback.batch_grid!r} places M batches over the horizon: give the "
                                 "horizon (the number of rounds) too")
            self.ends = batch_ends(feedback.batch_grid, self.T) - 1          # 0-based rounds that end a batch
        else:
            self.ends = None
        self.due: dict[int, list[tuple[int, np.ndarray | None]]] = defaultdict(list)
        self.held: dict[int, list] = {}                  # round s -> [obs, action, delivered rewards, pending rows]
        self._u, self._first = np.empty((self.n, 0)), 0

    def _uniforms(self, t: int) -> np.ndarray:
        """The delay variates U_t of the N instances, drawn BLOCK rounds at a time per instance."""
        if t - self._first >= self._u.shape[1]:
            self._first = t - t % self.BLOCK
            self._u = np.stack([g.random(self.BLOCK) for g in self.rngs])
        return self._u[:, t - self._first]

    def arrivals(self, t: int, reward: np.ndarray, mu=None) -> tuple[np.ndarray, np.ndarray]:
        """(arrival rounds (N,) int64, NEVER when never; the rewards delivered (N,)) of round t's rewards."""
        fb = self.fb
        value = reward
        if self.model is None:
            arrive = np.full(self.n, t, np.int64)
            delay = None
        else:
            if self.model.needs_reward and mu is None:
                raise ValueError("reward-dependent delays need the chosen arm's expected reward, info['expected_reward'], "
                                 "which this env does not give; choose another delay model")
            delay = self.model.draw(self._uniforms(t), mu)
            arrive = t + delay
        seen = np.ones(self.n, bool)
        if fb.conversions:
            seen = reward > 0
        if fb.window is not None and delay is not None:
            seen &= delay <= fb.window
        if not seen.all():
            if fb.default_reward is None:
                arrive = np.where(seen, arrive, NEVER)
            else:
                arrive = np.where(seen, arrive, t + fb.window)
                value = np.where(seen, reward, fb.default_reward)
        B = fb.feedback_every
        if B > 1:                                       # the end of the batch of B rounds the reward arrives in
            arrive = np.where(arrive < NEVER, (arrive // B + 1) * B - 1, NEVER)
        elif self.ends is not None:                     # the end of the grid's batch it arrives in
            nxt = np.searchsorted(self.ends, np.minimum(arrive, self.T))
            arrive = np.where(nxt < len(self.ends), self.ends[np.minimum(nxt, len(self.ends) - 1)], NEVER)
        return np.where(arrive < self.T, arrive, NEVER), value

    def common_arrival(self, t: int, reward):
        """(arrival round, NEVER when never; the reward delivered) of round t's rewards when they reach
        every instance at one round (not `feedback.partial`): plain integers, no arrays, since this
        runs every round of the common case (a fixed delay, batched updates)."""
        fb = self.fb
        d = 0 if self.model is None else self.model.d
        when = t + d
        if fb.window is not None and d > fb.window:
            if fb.default_reward is None:
                return NEVER, reward
            when = t + fb.window
            reward = fb.default_reward if self.single else np.full(self.n, fb.default_reward)
        if fb.feedback_every > 1:
            when = (when // fb.feedback_every + 1) * fb.feedback_every - 1
        elif self.ends is not None:
            k = int(np.searchsorted(self.ends, when))
            when = int(self.ends[k]) if k < len(self.ends) else NEVER
        return (when if when < self.T else NEVER), reward

    def push(self, t: int, obs, action, reward, mu=None) -> None:
        """File round t's feedback (module docstring: when each instance's reward arrives, if ever)."""
        if not self.partial:
            first, value = self.common_arrival(t, reward)
            if first == NEVER:
                return
            self.due[first].append((t, None))
            self.held[t] = [obs, action, value, 1]
            return
        r = np.array([reward], float) if self.single else np.asarray(reward, float)
        m = None if mu is None else np.reshape(np.asarray(mu, float), -1)
        arrive, value = self.arrivals(t, r, m)
        first = arrive[0]
        if self.n == 1 or (arrive == first).all():            # every instance at one round (or none)
            if first == NEVER:
                return
            self.due[int(first)].append((t, None))
            groups = 1
        else:
            rows: dict[int, list[int]] = {}               # arrival round -> instances (plain ints: N is small)
            for i, when in enumerate(arrive.tolist()):
                if when != NEVER:
                    rows.setdefault(when, []).append(i)
            for when, which in rows.items():
                self.due[when].append((t, np.array(which)))
            groups = len(rows)
            if not groups:
                return
        delivered = float(value[0]) if self.single else value
        self.held[t] = [obs, action, delivered, groups]

    def pop(self, t: int) -> list[tuple]:
        """The deliveries due at round t, oldest round first: (s, obs_s, action_s, reward_s, rows)."""
        out = []
        for s, rows in self.due.pop(t, ()):
            entry = self.held[s]
            out.append((s, entry[0], entry[1], entry[2], rows))
            entry[3] -= 1
            if not entry[3]:
                del self.held[s]
        return out
