"""Vowpal Wabbit's contextual-bandit explorers (`--cb_explore_adf`) as agents of the zoo.

    agent = agents.make("VW-SquareCB", seed=0)                           # a named configuration
    agent = agents.make("VW", args="--cb_explore_adf --softmax --lambda 10", seed=0)   # any explorer

The named agents are the configurations of the Contextual Bandit Bake-off (Bietti, Agarwal,
Langford, JMLR 2021) that VW runs, and SquareCB (Foster & Rakhlin 2020) with VW's defaults:

- ``VW-epsilon``   `--epsilon 0.02 --cb_type mtr`: epsilon-greedy on importance-weighted regression (IWR);
- ``VW-Bag``       `--bag 4 --greedify --cb_type mtr`: online bootstrap of 4 regressors, the first one greedy;
- ``VW-Cover-NU``  `--cover 4 --psi 0.1 --nounif --cb_type dr`: Online Cover, no uniform exploration;
- ``VW-RegCB-opt`` `--regcb --regcbopt --mellowness 0.001`: optimistic RegCB (c0 = 1e-3);
- ``VW-SquareCB``  `--squarecb --gamma_scale 10 --gamma_exponent 0.5`: inverse-gap weighting.

Features. Each round's obs is the (K, d) arm-feature matrix (on Supervised-v0 the disjoint block
encoding, mostly zeros). It goes to VW as one multi-line ADF example, one line per arm and no shared
line: arm k's nonzero entries j as integer features j of value X[k, j] in one namespace, through
the pylibvw bindings' example objects (`push_feature_list`), never formatted as text (docs/vw_agents.md
measures both ways). VW adds its constant feature to each line, so the model is <w, x_k> + b, the
linear regression of the arm's cost that the Bake-off's explorers use as their oracle.

Costs. VW minimises costs: arm a's reward r is learned as cost -r (on rewards 0/1, the -1/0 cost
encoding), labelled on a's line with VW's own probability of a (its PMF computed on the same obs just
before the update: predictions leave VW's state unchanged). An arm VW gave probability 0 (one the agent
did not choose) is learned with probability 1/K.

Randomness. `act` samples VW's PMF by inversion with one uniform from the agent's own stream
(agents.base.Streams); VW's own generator (Bag's bootstrap weights) is seeded with `--random_seed`
from a child of the instance's SeedSequence. Batched (obs (N, K, d)), each instance has its own VW
workspace and streams, so instance i acts bit for bit as a single agent seeded seed[i].

Copies. VW workspaces do not pickle, and VW's save-resume model file holds the whole state of a
learner on one regressor only (gd saves the normalized-update statistics of its first model). So
`__getstate__` saves each model to bytes (weights, optimizer state, counters, VW's random state) for
the explorers on one regressor (VW-epsilon, VW-RegCB-opt, VW-SquareCB: `ONE_REGRESSOR`), and the others
(VW-Bag, VW-Cover-NU, --cb_type dr, any option outside that list) keep a log of their updates (the nonzero
features as float32, the arm, the label), which a copy replays on a fresh workspace seeded as the
original. Either way a deepcopy or a pickle continues exactly as the original (tested).

Needs the vowpalwabbit package (`pip install "gym-ctxbandits[vw]"`); importing this module does not.
"""

from __future__ import annotations

import os
import shlex
import tempfile

import numpy as np

from agents.base import PROBS_KEY, BaseAgent, _child, check_finite, register
from agents.oracle import sample_arms
from agents.params import Bool, Int, IntLogUniform, LogUniform, Options, Real, Str

__all__ = ["VW", "VWBag", "VWCoverNU", "VWEpsilon", "VWRegCBOpt", "VWSquareCB", "pyvw"]

INSTALL = 'pip install "gym-ctxbandits[vw]" (or pip install -e ".[all]" in the clone)'
FLOAT32_MAX = float(np.finfo(np.float32).max)   # VW stores features and costs as float32
CONSTANT = 11650396         # VW's constant feature (vw/core/constant.h): its slot must not hold one of ours
NAMESPACE = ord("x")

# Options an argument string may not hold: the agent sets them itself, or they read or write files.
_IO = "the agent feeds VW its examples and saves the model itself (pickling)"
REFUSED = {
    "--random_seed": "the agent seeds VW from its own seed (seed=...)",
    "--testonly": "the agent must learn", "-t": "the agent must learn",
    "--predict_only_model": "a copy must resume VW's optimizer state",
    **dict.fromkeys(["-d", "--data", "-f", "--final_regressor", "-i", "--initial_regressor", "--readable_model",
                     "--invert_hash", "--save_per_pass", "-p", "--predictions", "-r", "--raw_predictions",
                     "-c", "--cache", "--cache_file", "--kill_cache", "--passes", "--daemon", "--port",
                     "--pid_file", "--port_file", "--audit", "-a", "--audit_regressor", "--json", "--dsjson",
                     "--dictionary", "--dictionary_path", "-P", "--progress", "--onethread"], _IO),
}


_ACCEPTED: set[str] = set()      # argument strings VW has accepted in this process (each is tried once)


def pyvw():
    """vowpalwabbit.pyvw, or an ImportError that says how to install it."""
    try:
        from vowpalwabbit import pyvw as module
    except ImportError as err:
        raise ImportError(f"the Vowpal Wabbit agents need the vowpalwabbit package: {INSTALL}") from err
    return module


def _options(args: str) -> list[str]:
    """The option names of a VW argument string (`--name`, `--name=value`, `-x`, `-xvalue`)."""
    names = []
    for token in shlex.split(args):
        if token.startswith("--"):
            names.append(token.split("=", 1)[0])
        elif token.startswith("-") and len(token) > 1 and not token[1].isdigit() and token[1] != ".":
            names.append(token[:2])                 # a short option, its value maybe attached
    return names


def check_args(args: str) -> list[str]:
    """The options of `args`, or a ValueError naming the option that is missing or refused."""
    if not isinstance(args, str):
        raise ValueError(f"VW arguments must be a string, got {type(args).__name__}")
    try:
        names = _options(args)
    except ValueError as err:
        raise ValueError(f"cannot read the VW arguments {args!r}: {err}") from None
    if "--cb_explore_adf" not in names:
        raise ValueError(f"VW arguments {args!r} lack --cb_explore_adf: the agents run VW's contextual-bandit "
                         "explorers on action-dependent features (e.g. '--cb_explore_adf --epsilon 0.05')")
    for name in names:
        if name in REFUSED:
            raise ValueError(f"VW arguments {args!r}: option {name} is not allowed here: {REFUSED[name]}")
    return names


def _value(args: str, option: str) -> str | None:
    """The value given to `option` in `args` (its last occurrence, `--name value` or `--name=value`), or None."""
    tokens, value = shlex.split(args), None
    for i, token in enumerate(tokens):
        if token == option and i + 1 < len(tokens):
            value = tokens[i + 1]
        elif token.startswith(option + "="):
            value = token.split("=", 1)[1]
    return value


def _bits(d: int) -> int:
    """VW's -b for d features: its default 18 unless d needs more, so that the feature indices 0..d-1 get slots
    of their own, below the slot of VW's constant feature (beyond 11.6 million features it shares one)."""
    b = 18
    while b < 30 and ((1 << b) < d or CONSTANT % (1 << b) < d):
        b += 1
    return b


def _check_values(X: np.ndarray) -> np.ndarray:
    """X itself, or a ValueError unless its features are finite and within float32, VW's feature type."""
    top = np.abs(check_finite(X)).max()
    if top > FLOAT32_MAX:
        raise ValueError(f"obs: features reach {top:.3g}, beyond float32 ({FLOAT32_MAX:.3g}), the type VW stores "
                         "them in; rescale the features")
    return X


def _sparse(X: np.ndarray) -> tuple[np.ndarray, np.ndarray, list[int]]:
    """One instance's (K, d) features as VW receives them: the columns (int32) and float32 values of the
    nonzero entries, arm by arm, and the K + 1 bounds of each arm's run in them."""
    rows, cols = np.nonzero(X)
    bounds = np.searchsorted(rows, np.arange(X.shape[0] + 1)).tolist()
    return cols.astype(np.int32), X[rows, cols].astype(np.float32), bounds


# Options after which VW's model file holds the learner's whole state: explorers on one regressor. VW's
# save-resume model keeps the normalized-update statistics of gd's first model only, so a learner of several
# (--bag, --cover, --cb_type dr's own regressor, ...) restored from it drifts apart from the original; such
# agents keep a log of their updates, which a copy replays (`VWAgent.__setstate__`).
ONE_REGRESSOR = {
    "--cb_explore_adf", "--epsilon", "--squarecb", "--gamma_scale", "--gamma_exponent", "--elim", "--regcb",
    "--regcbopt", "--mellowness", "--cb_min_cost", "--cb_max_cost", "--first_only", "--softmax", "--lambda",
    "--first", "--cb_type", "-l", "--learning_rate", "--power_t", "--initial_t", "--decay_learning_rate", "--l1",
    "--l2", "-q", "--quadratic", "--interactions", "--noconstant", "-b", "--bit_precision", "--quiet",
}


def one_regressor(args: str) -> bool:
    """Whether VW's model file holds the whole state of the learner `args` makes (see ONE_REGRESSOR)."""
    return set(_options(args)) <= ONE_REGRESSOR and _value(args, "--cb_type") in (None, "mtr", "ips", "dm")


def _sample(P: np.ndarray, u: np.ndarray) -> np.ndarray:
    """One arm per row of VW's (N, K) PMFs P by inversion of the uniforms u (N,) (`agents.oracle.sample_arms`),
    kept in range should a PMF sum to 0."""
    return np.minimum(sample_arms(P, u), P.shape[1] - 1)


class VWAgent(BaseAgent):
    """Base of the VW agents: one VW workspace per instance, built from `_vw_args()` at the first obs.

    Subclasses give `_vw_args()`, the argument string (without --quiet, -b and --random_seed, which
    the agent adds). See the module docstring for the features, costs, seeds and copies.
    """

    batched = True

    def __init__(self, *, seed=None, dim=None, **hyperparameters):
        pyvw()              # making a VW agent needs vowpalwabbit (a clear ImportError here, not at the first obs)
        super().__init__(seed=seed, dim=dim, **hyperparameters)

    def _vw_args(self) -> str:
        raise NotImplementedError

    def _check_params(self) -> None:
        """Our rules on the argument string, then VW's own: a workspace built once and thrown away turns
        an unknown option or a bad value into a ValueError now, not at the first obs."""
        args = self._vw_args()
        names = check_args(args)
        if args not in _ACCEPTED:
            module = pyvw()
            try:
                ws = module.Workspace(args + " --quiet")
            except RuntimeError as err:
                raise ValueError(f"VW refused the arguments {args!r}: {err}") from None
            try:
                if ws.get_prediction_type() != module.PredictionType.ACTION_PROBS or not ws._is_multiline():
                    raise ValueError(f"VW arguments {args!r} do not make a --cb_explore_adf learner (action "
                                     "probabilities over multi-line examples); remove the options that change it")
            finally:
                ws.finish()
            _ACCEPTED.add(args)
        self._user_bits = "-b" in names or "--bit_precision" in names
        self._replays = not one_regressor(args)

    def _reset(self) -> None:
        self.ws_ = None             # one VW workspace per instance, built at the first obs
        self.vw_seeds_ = None       # (N,) VW's --random_seed of each instance
        self.log_ = None            # per instance, its updates (features, arm, label), where copies replay them
        self.observed_ = None       # (N,) rewards each instance has learned from

    def _flags(self) -> str:
        """The agent's own options: --quiet, and -b when d needs more than VW's default 18 bits."""
        return " --quiet" + ("" if self._user_bits or _bits(self.d_) == 18 else f" -b {_bits(self.d_)}")

    def _workspace(self, seed: int):
        return pyvw().Workspace(f"{self._vw_args()}{self._flags()} --random_seed {seed}")

    def _start(self, X: np.ndarray) -> None:
        # VW's generator from child 3 of each instance's SeedSequence (Streams use children 0-2)
        self.vw_seeds_ = [int(_child(seq, 3).generate_state(1)[0]) for seq in self.seqs_]
        self.ws_ = [self._workspace(seed) for seed in self.vw_seeds_]
        self.log_ = [[] for _ in self.seqs_] if self._replays else None
        self.observed_ = np.zeros(self.n_, dtype=np.int64)

    # -- examples and distributions ---------------------------------------------------------------
    @staticmethod
    def _lines(ws, sparse: tuple) -> list:
        """The multi-line ADF example of one instance's arms, from `_sparse`: line k holds arm k's nonzero
        entries as integer features (index, value), pushed through the bindings, not parsed from text."""
        lib = pyvw().pylibvw
        cols, values, bounds = sparse
        pairs = list(zip(cols.tolist(), values.tolist()))
        lines = []
        for k in range(len(bounds) - 1):
            ex = lib.example(ws, _CB_LABEL)
            ex.ensure_namespace_exists(NAMESPACE)
            ex.push_feature_list(ws, NAMESPACE, 0, pairs[bounds[k]:bounds[k + 1]])
            ws.setup_example(ex)
            lines.append(ex)
        return lines

    @staticmethod
    def _predict(ws, lines: list) -> np.ndarray:
        """VW's PMF over the arms of `lines` (predict only: VW's state does not change), normalised in
        float64 (VW's float32 sums to 1 up to rounding; RegCB-opt gives each tied optimistic arm 1)."""
        pyvw().pylibvw.vw.predict_multi(ws, lines)
        p = np.array(lines[0].get_action_scores(), dtype=float)
        total = p.sum()
        if not (np.isfinite(total) and total > 0 and (p >= 0).all()):
            raise FloatingPointError(f"VW returned {p.tolist()} as its action probabilities; its model is corrupt "
                                     "(check rewards and features)")
        return p / total

    def _pmf(self, X: np.ndarray) -> np.ndarray:
        """(N, K) VW's distributions on X (N, K, d), one workspace per instance."""
        return np.stack([self._predict(ws, self._lines(ws, _sparse(Xi))) for ws, Xi in zip(self.ws_, X)])

    def _obs(self, obs) -> np.ndarray:
        """obs as (N, K, d), checked by `_check_values`; the first obs starts the agent."""
        return _check_values(self._check_obs(obs))

    # -- the protocol -----------------------------------------------------------------------------
    def act(self, obs):
        """Sample an arm of VW's PMF on obs (K, d) -> int, or one per instance of obs (N, K, d) -> (N,)."""
        X = self._obs(obs)
        return self._unwrap(_sample(self._pmf(X), self.rng_.random(self.n_)))

    def observe(self, obs, action, reward) -> None:
        """Learn cost -reward of the chosen arm (int and float, or (N,) arrays when batched)."""
        X = self._obs(obs)
        a, y = self._feedback(X, action, reward)
        self._learn(X, a, y, range(self.n_))
        self.t_ += 1

    def observe_rows(self, obs, action, reward, rows) -> None:
        """Learn only the instances `rows` (distinct ints in [0, N)); obs (N, K, d), action and reward (N,)
        are laid out as for `observe`, and only their rows of `rows` are read."""
        X = self._obs(obs)
        rows = self._check_rows(rows)
        a, y, _ = self._rows_feedback(X, action, reward, rows)
        self._learn(X[rows], a, y, rows.tolist())

    def _learn(self, X: np.ndarray, actions: np.ndarray, rewards: np.ndarray, rows) -> None:
        """One VW update per instance of `rows`, with X, actions and rewards of those rows, in order."""
        if np.abs(rewards).max() > FLOAT32_MAX:
            raise ValueError(f"reward {np.abs(rewards).max():.3g} is beyond float32 ({FLOAT32_MAX:.3g}), the type of "
                             "VW's costs; rescale the rewards")
        for Xi, a, r, i in zip(X, actions.tolist(), rewards.tolist(), rows):
            ws, sparse = self.ws_[i], _sparse(Xi)
            lines = self._lines(ws, sparse)
            p = float(self._predict(ws, lines)[a])
            label = f"0:{-r!r}:{(p if p > 0 else 1.0 / len(lines))!r}"      # action:cost:probability (ADF)
            self._update(ws, lines, a, label)
            if self.log_ is not None:
                self.log_[i].append((*sparse, a, label))
            self.observed_[i] += 1

    @staticmethod
    def _update(ws, lines: list, arm: int, label: str) -> None:
        """VW's update on `lines`, the label on line `arm` (a line VW predicted on or a fresh one: the same)."""
        lib = pyvw().pylibvw
        lines[arm].set_label_string(ws, label, _CB_LABEL)
        lib.vw.learn_multi(ws, lines)
        lib.vw._finish_example_multi_ex(ws, lines)

    # -- propensities -----------------------------------------------------------------------------
    def _probs(self, X: np.ndarray) -> np.ndarray:
        """VW's own PMF: exactly what `act` samples (predict only, the agent unchanged)."""
        return self._pmf(_check_values(X))

    def _observed(self):
        return self.observed_.tolist()

    def _sampled_probs(self, obs, draws: int, salt: int = 0) -> np.ndarray:
        """BaseAgent's Monte-Carlo frequencies of `act` on reseeded copies, with copies that share this
        agent's VW workspaces instead of copying them: `act` only predicts, which leaves VW unchanged,
        and draws its one uniform from the copy's own (reseeded) streams."""
        if not (isinstance(draws, (int, np.integer)) and draws >= 1):
            raise ValueError(f"draws must be a positive integer, got {draws!r}")
        agent = self
        if self.n_ is None:
            agent = type(self).__new__(type(self))
            agent.__dict__.update(self.__dict__)
            agent._obs(obs)                         # starts the twin only
        counts = np.zeros((agent.n_, np.shape(obs)[-2]))
        rows = np.arange(agent.n_)
        for j in range(draws):
            twin = type(agent).__new__(type(agent))
            twin.__dict__.update(agent.__dict__)
            twin._reseed([np.random.SeedSequence(s.entropy, spawn_key=s.spawn_key + (PROBS_KEY, salt, t, j),
                                                 pool_size=s.pool_size) for s, t in zip(agent.seqs_, agent._observed())])
            counts[rows, np.reshape(twin.act(obs), -1)] += 1
        return counts / draws

    # -- copies -----------------------------------------------------------------------------------
    def __getstate__(self) -> dict:
        """Picklable state: each VW model as bytes (save-resume: weights, optimizer state, counters, VW's random
        state) where VW's model file holds its whole state, else nothing but the log a copy replays."""
        state = super().__getstate__()
        workspaces, state["ws_"] = state.get("ws_"), None
        if workspaces is not None and self.log_ is None:
            with tempfile.TemporaryDirectory() as folder:
                path = os.path.join(folder, "model")
                state["ws_"] = []
                for ws in workspaces:
                    ws.save(path)
                    with open(path, "rb") as f:
                        state["ws_"].append(f.read())
        return state

    def __setstate__(self, state: dict) -> None:
        models = state.get("ws_")
        super().__setstate__(dict(state, ws_=None))
        if self.log_ is not None:           # a fresh workspace seeded as the original, through its updates
            self.ws_ = [self._workspace(seed) for seed in self.vw_seeds_]
            for ws, log in zip(self.ws_, self.log_):
                for *sparse, arm, label in log:
                    self._update(ws, self._lines(ws, sparse), arm, label)
        elif models is not None:
            self.ws_ = []
            with tempfile.TemporaryDirectory() as folder:
                path = os.path.join(folder, "model")
                for model in models:
                    with open(path, "wb") as f:
                        f.write(model)
                    # the model holds VW's random state as its --random_seed: not given again
                    self.ws_.append(pyvw().Workspace(f"{self._vw_args()}{self._flags()} -i {shlex.quote(path)}"))


_CB_LABEL = 4               # pyvw.LabelType.CONTEXTUAL_BANDIT (a constant, so that this module imports without VW)

_LEARNING_RATE = {"learning_rate": Real(gt=0)}
_CB_TYPES = Options("ips", "dr", "mtr")


@register("VW")
class VW(VWAgent):
    """Any Vowpal Wabbit `--cb_explore_adf` explorer, from its argument string.

    Args:
        args: VW's arguments; must hold --cb_explore_adf. The agent adds --quiet, -b when d needs
            more than VW's default 18 bits, and --random_seed from its own seed; options that fix the
            seed or read or write files (--random_seed, -d, -f, -i, -p, --cache, ...) are refused.
    """

    params = {"args": Str()}

    def __init__(self, *, args: str = "--cb_explore_adf --epsilon 0.05", seed=None, dim: int | None = None):
        self.args = args
        super().__init__(seed=seed, dim=dim)

    def _vw_args(self) -> str:
        return self.args


@register("VW-epsilon")
class VWEpsilon(VWAgent):
    """Epsilon-greedy on VW's cost regression, the Bake-off's εG: `--cb_explore_adf --epsilon 0.02 --cb_type mtr`.

    Args:
        epsilon: the probability spread uniformly over the arms (VW's PMF: 1 - eps + eps/K on the greedy arm).
        cb_type: the reduction, "mtr" (the Bake-off's IWR), "dr" or "ips".
        learning_rate: VW's -l.
        extra: more VW arguments, appended (the rules of `VW` apply).
    """

    params = {"epsilon": Real(ge=0, le=1), "cb_type": _CB_TYPES, **_LEARNING_RATE, "extra": Str()}
    search_space = {"epsilon": LogUniform(0.005, 0.2), "learning_rate": LogUniform(0.01, 10)}

    def __init__(self, *, epsilon: float = 0.02, cb_type: str = "mtr", learning_rate: float = 0.5, extra: str = "",
                 seed=None, dim: int | None = None):
        self.epsilon, self.cb_type, self.learning_rate, self.extra = epsilon, cb_type, learning_rate, extra
        super().__init__(seed=seed, dim=dim)

    def _vw_args(self) -> str:
        return (f"--cb_explore_adf --epsilon {self.epsilon!r} --cb_type {self.cb_type} -l {self.learning_rate!r} "
                f"{self.extra}").strip()


@register("VW-Bag")
class VWBag(VWAgent):
    """Online bootstrap ("Bag", bootstrapped Thompson sampling), the Bake-off's B-g:
    `--cb_explore_adf --bag 4 --greedify --cb_type mtr`.

    Args:
        bag: the number of bootstrapped regressors (Poisson(1) weights from VW's seeded generator).
        greedify: the first regressor learns without bootstrap weights (the Bake-off's greedy bag).
        cb_type, learning_rate, extra: as for VW-epsilon.
    """

    params = {"bag": Int(ge=1), "greedify": Bool(), "cb_type": _CB_TYPES, **_LEARNING_RATE, "extra": Str()}
    search_space = {"bag": IntLogUniform(2, 16), "learning_rate": LogUniform(0.01, 10)}

    def __init__(self, *, bag: int = 4, greedify: bool = True, cb_type: str = "mtr", learning_rate: float = 0.5,
                 extra: str = "", seed=None, dim: int | None = None):
        self.bag, self.greedify, self.cb_type = bag, greedify, cb_type
        self.learning_rate, self.extra = learning_rate, extra
        super().__init__(seed=seed, dim=dim)

    def _vw_args(self) -> str:
        return (f"--cb_explore_adf --bag {self.bag}{' --greedify' if self.greedify else ''} --cb_type {self.cb_type} "
                f"-l {self.learning_rate!r} {self.extra}").strip()


@register("VW-Cover-NU")
class VWCoverNU(VWAgent):
    """Online Cover without uniform exploration, the Bake-off's C-nu:
    `--cb_explore_adf --cover 4 --psi 0.1 --nounif --cb_type dr`.

    Args:
        cover: the number of policies of the cover.
        psi: the disagreement parameter (VW's --psi).
        cb_type: the reduction of the cover's policies, "dr" (default), "ips" or "mtr" (VW's default for
            --cover: its first policy on IWR, the others on DR).
        learning_rate, extra: as for VW-epsilon.
    """

    params = {"cover": Int(ge=1), "psi": Real(ge=0), "cb_type": _CB_TYPES, **_LEARNING_RATE, "extra": Str()}
    search_space = {"psi": LogUniform(0.01, 1), "learning_rate": LogUniform(0.01, 10)}

    def __init__(self, *, cover: int = 4, psi: float = 0.1, cb_type: str = "dr", learning_rate: float = 0.5,
                 extra: str = "", seed=None, dim: int | None = None):
        self.cover, self.psi, self.cb_type, self.learning_rate, self.extra = cover, psi, cb_type, learning_rate, extra
        super().__init__(seed=seed, dim=dim)

    def _vw_args(self) -> str:
        return (f"--cb_explore_adf --cover {self.cover} --psi {self.psi!r} --nounif --cb_type {self.cb_type} "
                f"-l {self.learning_rate!r} {self.extra}").strip()


@register("VW-RegCB-opt")
class VWRegCBOpt(VWAgent):
    """Optimistic RegCB (Foster et al. 2018), the Bake-off's RO and its best method:
    `--cb_explore_adf --regcb --regcbopt --mellowness 0.001`, with VW's cost range set to the rewards'.

    Args:
        mellowness: c0, the width of the confidence set of regressors (the Bake-off's 1e-3).
        min_reward, max_reward: the range of the rewards; the costs -reward then lie in
            [-max_reward, -min_reward] (VW's --cb_min_cost and --cb_max_cost, whose defaults 0 and 1
            would not hold the costs of 0/1 rewards).
        learning_rate, extra: as for VW-epsilon. RegCB's reduction is always mtr.
    """

    params = {"mellowness": Real(gt=0), "min_reward": Real(), "max_reward": Real(), **_LEARNING_RATE, "extra": Str()}
    search_space = {"mellowness": LogUniform(1e-5, 0.1), "learning_rate": LogUniform(0.01, 10)}

    def __init__(self, *, mellowness: float = 1e-3, min_reward: float = 0.0, max_reward: float = 1.0,
                 learning_rate: float = 0.5, extra: str = "", seed=None, dim: int | None = None):
        self.mellowness, self.min_reward, self.max_reward = mellowness, min_reward, max_reward
        self.learning_rate, self.extra = learning_rate, extra
        super().__init__(seed=seed, dim=dim)

    def _check_params(self) -> None:
        if not self.min_reward < self.max_reward:
            raise ValueError(f"min_reward must be below max_reward, got {self.min_reward!r} and {self.max_reward!r}")
        super()._check_params()

    def _vw_args(self) -> str:
        return (f"--cb_explore_adf --regcb --regcbopt --mellowness {self.mellowness!r} "
                f"--cb_min_cost {0.0 - self.max_reward!r} --cb_max_cost {0.0 - self.min_reward!r} "
                f"-l {self.learning_rate!r} {self.extra}").strip()


@register("VW-SquareCB")
class VWSquareCB(VWAgent):
    """SquareCB (Foster & Rakhlin 2020), inverse-gap weighting on VW's cost regression:
    `--cb_explore_adf --squarecb --gamma_scale 10 --gamma_exponent 0.5` (VW's defaults).

    Each arm a other than the greedy one gets 1 / (K + gamma (f(a) - f(greedy))), with f VW's predicted
    costs and gamma = gamma_scale * t^gamma_exponent after t updates; the greedy arm the rest.

    Args:
        gamma_scale, gamma_exponent: gamma's scale and its exponent on the number of updates.
        learning_rate, extra: as for VW-epsilon. SquareCB's reduction is always mtr.
    """

    params = {"gamma_scale": Real(ge=0), "gamma_exponent": Real(ge=0), **_LEARNING_RATE, "extra": Str()}
    search_space = {"gamma_scale": LogUniform(1, 1000), "learning_rate": LogUniform(0.01, 10)}

    def __init__(self, *, gamma_scale: float = 10.0, gamma_exponent: float = 0.5, learning_rate: float = 0.5,
                 extra: str = "", seed=None, dim: int | None = None):
        self.gamma_scale, self.gamma_exponent = gamma_scale, gamma_exponent
        self.learning_rate, self.extra = learning_rate, extra
        super().__init__(seed=seed, dim=dim)

    def _vw_args(self) -> str:
        return (f"--cb_explore_adf --squarecb --gamma_scale {self.gamma_scale!r} "
                f"--gamma_exponent {self.gamma_exponent!r} -l {self.learning_rate!r} {self.extra}").strip()
