"""What the neural agents of [S0] and [S2] share: validation, seeding, device, the network input, training.

Each agent is a plain class with `act(obs) -> action`, `observe(obs, action, reward)` and
`reset()`; subclasses say how many networks they train, what perturbations they store, how they
score arms and what targets they fit (`NeuralAgent` below).

One agent serves one bandit run (obs (K, d), int actions) or N independent runs at once (obs
(N, K, d), (N,) actions; the N seeds of a comparison): the N instances' m networks are one
stacked model of N m networks (agents.neural.nets.NTKEnsemble, instance-major), their histories
one buffer, and every forward pass and gradient step is one batched matmul per layer for all of
them. A single agent is the N = 1 case of the same code. The shape of the first obs fixes the mode
until `reset()`.

Randomness: instance i owns a torch.Generator on the device (initial weights, perturbations,
member choice, minibatches, Thompson samples) and a numpy Generator for random tie-breaking
(agents.base.random_argmax), both derived from its seed and restarted by `reset()`: `seed` is an
int (or None) for one instance, or a list of N ints, and then instance i makes exactly the draws
of a single agent seeded seed[i] (an int seed with N > 1 instances is spawned into N children).
In the round loop the only host-device traffic is the observation and reward going in and the
arm scores coming back to pick the actions.
"""

from __future__ import annotations

import math
import numbers

import numpy as np
import torch

from agents.base import _child, check_feedbacks, check_instances, random_argmax, seed_sequences, seed_spec
from agents.neural.buffer import ReplayBuffer, Schedule
from agents.neural.nets import NTKEnsemble
from agents.torch_batch import device_of

DTYPES = {"float32": torch.float32, "float64": torch.float64}


def check_int(name: str, value, low: int = 1) -> None:
    if not (isinstance(value, (int, np.integer)) and not isinstance(value, bool) and value >= low):
        raise ValueError(f"{name} must be an int >= {low}, got {value!r}")


def check_real(name: str, value, *, positive: bool = False) -> None:
    ok = isinstance(value, numbers.Real) and not isinstance(value, bool) and math.isfinite(value)
    if not (ok and (value > 0 if positive else value >= 0)):
        raise ValueError(f"{name} must be a finite number {'>' if positive else '>='} 0, got {value!r}")


class InstanceStreams:
    """What the torch agents serving N instances share (NeuralAgent, agents.neural.fpl.DeepFPL): the
    mode fixed by the first obs, per-instance random streams, and pickling them.

    Subclasses set `_seed_spec` (agents.base.seed_spec), `_dev`, `_dtype` and `dim`, and build
    their state in `_start(n, d, single)`, which calls `_seed_streams`.
    """

    def _seed_streams(self, n: int, d: int, single: bool) -> None:
        """Instance i's torch.Generator (child 0 of its seed) and numpy Generator (child 1; ties)."""
        self.n_, self.single_, self.d_ = n, single, d
        self.seqs_ = seed_sequences(self._seed_spec, n)
        self.gens_, self.rngs_ = [], []
        for seq in self.seqs_:      # children that do not advance seq: reset() replays them
            self.gens_.append(torch.Generator(device=self._dev))
            self.gens_[-1].manual_seed(int(_child(seq, 0).generate_state(1, np.uint64)[0]))
            self.rngs_.append(np.random.default_rng(_child(seq, 1)))

    def _check_obs(self, obs) -> np.ndarray:
        """obs as a finite (N, K, d) array (a view), after checking it against the agent's mode."""
        X, single = check_instances(obs, self.d_ if self.d_ is not None else self.dim, self.n_, self.single_)
        if self.n_ is None:
            self._start(X.shape[0], X.shape[2], single)
        return X

    def _randn(self, *shape: int) -> torch.Tensor:
        """Standard normals (N, *shape), row i from instance i's generator."""
        return torch.stack([torch.randn(shape, generator=g, device=self._dev, dtype=self._dtype) for g in self.gens_])

    def _randint(self, high: int, *shape: int) -> torch.Tensor:
        """Integers uniform in [0, high), (N, *shape), row i from instance i's generator."""
        return torch.stack([torch.randint(high, shape, generator=g, device=self._dev) for g in self.gens_])

    def _unwrap(self, values: np.ndarray):
        """An (N,) result as the caller's mode wants it: a Python scalar for a single agent."""
        return values[0].item() if self.single_ else values

    def __getstate__(self) -> dict:
        """Pickle the generators as their states (torch.Generator pickles only in recent torch)."""
        state = self.__dict__.copy()
        if self.gens_ is not None:
            state["gens_"] = [g.get_state() for g in self.gens_]
        return state

    def __setstate__(self, state: dict) -> None:
        if state["gens_"] is not None:
            gens = []
            for g_state in state["gens_"]:
                gens.append(torch.Generator(device=state["_dev"]))
                gens[-1].set_state(g_state)
            state = dict(state, gens_=gens)
        self.__dict__.update(state)


class NeuralAgent(InstanceStreams):
    """Shared machinery of the [S0] neural agents (subclasses document the algorithms).

    Network and training (the same for all, [S0] §7.2 "the network structure is the same"):
        width, depth: N and L of the NTK ReLU network ([S0] §4.3; [S0]: 20 and 3).
        lam: regulariser lambda of 1/2 lam N ||theta - theta_0||^2 ([S0] eq. 4.4: 1.0).
        lr, steps: gradient-descent step size and steps per update ([S0] §7.2: 0.01 and 100).
        update_every: train every k rounds (1: every round, as in the papers).
        batch_size: None for full-batch gradient descent over the history (the papers'), or an
            int for minibatch SGD with that many observations per step.
        buffer_size: keep only the last `buffer_size` observations, FIFO (None: all, the papers').
        warm_start: each update starts from the current weights (True) or from theta_0.
        warmup: rounds of round-robin over the arm indices before acting on the model (the
            first update happens after round `warmup`).
        mean_loss: minimise L / n (n = observations held) instead of the sum L of eq. 4.4; the
            minimiser is the same, only the gradient-descent step is scaled by 1/n (see below).
        duplicate_input: feed x' = [x; x] / sqrt(2) ([S0] Remark 5.9), so that the symmetric
            initialisation gives f(x; theta_0) = 0 for every x; with False the raw x (needs even d;
            f(x; theta_0) = 0 only when [x]_j = [x]_{j+d/2}).
        device: "cpu", "cuda" or "auto" (cuda when available).
        dtype: "float32" (default) or "float64".
        dim: feature dimension d, if known before the first observation (checked against it).
        seed: int or None (fresh entropy, replayed by reset()) for one instance, or a list of N
            ints for N instances (module docstring).

    Why `mean_loss=True` by default: eq. 4.4 sums the squared errors over the history, whose
    curvature grows like t N, so gradient descent with the paper's step 0.01 diverges once an arm
    has been pulled a few dozen times. Dividing the whole loss (data term and regulariser) by n
    keeps the minimiser of eq. 4.4 and makes the step size 0.01 stable at every t; [S0] does not
    say how its code scales the loss (docs/papers.md, S0-A7).
    """

    batched = True

    def __init__(self, *, width=20, depth=3, lam=1.0, lr=0.01, steps=100, update_every=1, batch_size=None,
                 buffer_size=None, warm_start=True, warmup=0, mean_loss=True, duplicate_input=True, device="cpu",
                 dtype="float32", dim=None, seed=None):
        check_int("width", width, 2)
        if width % 2:
            raise ValueError(f"width must be even (the symmetric initialisation has two blocks), got {width}")
        check_int("depth", depth, 2)
        check_real("lam", lam)
        check_real("lr", lr, positive=True)
        check_int("steps", steps, 0)
        check_int("update_every", update_every)
        if batch_size is not None:
            check_int("batch_size", batch_size)
        if buffer_size is not None:
            check_int("buffer_size", buffer_size)
        check_int("warmup", warmup, 0)
        if dim is not None:
            check_int("dim", dim)
        if dtype not in DTYPES:
            raise ValueError(f"dtype must be 'float32' or 'float64', got {dtype!r}")
        dev = device_of(device)
        if dev.type == "cuda" and not torch.cuda.is_available():
            raise ValueError(f"device={device!r} but torch.cuda.is_available() is False; use device='cpu' or 'auto'")
        self.width, self.depth, self.lam, self.lr, self.steps = width, depth, lam, lr, steps
        self.update_every, self.batch_size, self.buffer_size = update_every, batch_size, buffer_size
        self.warm_start, self.warmup, self.mean_loss = warm_start, warmup, mean_loss
        self.duplicate_input, self.device, self.dtype, self.dim, self.seed = duplicate_input, device, dtype, dim, seed
        self._dev = dev
        self._dtype = DTYPES[dtype]
        self._schedule = Schedule(update_every, steps, batch_size, bool(warm_start), warmup)
        self._seed_spec = seed_spec(seed)
        self.reset()

    # -- what subclasses provide (tensors carry the instance axis N first) ------------------------
    members = 1      # networks trained per instance (m)
    z_dim = 0        # perturbations stored per observation

    def _setup(self) -> None:
        """Extra state once N and the input dimension are known (self.net_ exists)."""

    def _scores(self, X: torch.Tensor) -> torch.Tensor:
        """Arm scores (N, K) on the device for the network inputs X (N, K, d')."""
        raise NotImplementedError

    def _perturbation(self) -> torch.Tensor | None:
        """The z (N, z_dim) stored with the new observations."""
        return None

    def _before_store(self, x: torch.Tensor) -> None:
        """Called with the chosen arms' network inputs (N, d') before they are stored (design-matrix updates)."""

    def _targets(self, y_sum: torch.Tensor, z_sum: torch.Tensor, count: torch.Tensor) -> torch.Tensor:
        """Full-batch targets s (N, members, U) from the per-row sums of the rewards (N, U) and perturbations."""
        return y_sum[:, None].expand(-1, self.members, -1)

    def _update_noise(self) -> torch.Tensor | None:
        """Drawn once per minibatch update and passed to `_batch_targets` (Neural-PHE's fresh perturbations)."""
        return None

    def _batch_targets(self, noise, idx: torch.Tensor, y: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
        """Minibatch targets (N, members, B) of the observations in slots idx (N, B)."""
        return y[:, None].expand(-1, self.members, -1)

    # -- the protocol ---------------------------------------------------------------------------
    def reset(self) -> None:
        """Forget all data and restart the random streams: the agent behaves as when constructed."""
        self.gens_ = None       # per instance: torch.Generator on the device
        self.rngs_ = None       # per instance: numpy Generator (ties)
        self.n_ = None          # number of instances, fixed by the first obs
        self.single_ = None     # True when the first obs was (K, d)
        self.t_ = 0
        self.d_ = None
        self.net_ = None
        self.buffer_ = None

    def act(self, obs: np.ndarray) -> int | np.ndarray:
        """Index of the arm to pull among the rows of obs (K, d), or one per instance of obs (N, K, d)."""
        X = self._check_obs(obs)
        if self.t_ < self.warmup:
            actions = np.full(self.n_, self.t_ % X.shape[1])
        else:
            with torch.no_grad():
                scores = self._scores(self._to_device(self._input(X))).double().cpu().numpy()
            if not np.isfinite(scores).all():
                raise FloatingPointError(f"{type(self).__name__}: the arm scores contain NaN or inf (the network "
                                         f"diverged; lower lr, currently {self.lr}, or use mean_loss=True)")
            actions = random_argmax(scores, self.rngs_)
        return self._unwrap(actions)

    def observe(self, obs: np.ndarray, action, reward) -> None:
        """Record that arm `action` of obs gave `reward` (per instance when batched), then train if the schedule says so."""
        X = self._check_obs(obs)
        a, y = check_feedbacks(action, reward, self.n_, X.shape[1], self.single_)
        x = self._input(X[np.arange(self.n_), a])
        with torch.no_grad():
            self._before_store(self._to_device(x))
            self.buffer_.add(x, y, self._perturbation())
            self.t_ += 1
            if self._schedule.due(self.t_):
                self._train()

    # -- helpers --------------------------------------------------------------------------------
    def _start(self, n: int, d: int, single: bool) -> None:
        """Seed the N instances' streams and build their networks and buffer once the first obs fixes N and d."""
        d_in = 2 * d if self.duplicate_input else d
        if d_in % 2:
            raise ValueError(f"obs has an odd feature dimension d={d}: the symmetric initialisation needs an even "
                             "input, so use duplicate_input=True")
        self._seed_streams(n, d, single)
        self.net_ = NTKEnsemble.symmetric(self.members, d_in, self.width, self.depth, self.gens_,
                                          paired_input=self.duplicate_input, device=self._dev, dtype=self._dtype)
        self.buffer_ = ReplayBuffer(n, d_in, self.z_dim, self.buffer_size, self._dev, self._dtype)
        self._setup()

    def _input(self, X: np.ndarray) -> np.ndarray:
        """The network input of the rows of X (..., d) (a fresh host array): [x; x] / sqrt 2 or x."""
        dt = np.float32 if self._dtype == torch.float32 else np.float64
        if self.duplicate_input:     # [x; x] / sqrt 2 with the twin coordinates side by side (see nets)
            return np.repeat(X.astype(dt), 2, axis=-1) / dt(math.sqrt(2.0))
        return np.array(X, dtype=dt)

    def _to_device(self, x: np.ndarray) -> torch.Tensor:
        return torch.from_numpy(x).to(self._dev)

    def _per_network(self, t: torch.Tensor) -> torch.Tensor:
        """An (N, ...) tensor repeated for each instance's `members` networks: (N members, ...)."""
        m = self.members
        return t if m == 1 else t[:, None].expand(t.shape[0], m, *t.shape[1:]).flatten(0, 1)

    def _loss_scales(self, batch: int) -> tuple[float, float]:
        """(alpha, beta) of NTKEnsemble.gradients for a step on `batch` of the n observations held."""
        n = self.buffer_.size
        reg = self.lam * self.width
        if self.mean_loss:
            return 1.0 / batch, reg / n
        return n / batch, reg

    def _train(self) -> None:
        """`steps` gradient steps on L(theta) = 1/2 sum_l (f(x_l) - target_l)^2 + 1/2 lam N ||theta - theta_0||^2."""
        net, buf = self.net_, self.buffer_
        if not self._schedule.warm_start:
            net.restart()
        if self.batch_size is None:
            rows, count, y_sum, z_sum = buf.full()
            alpha, beta = self._loss_scales(buf.size)
            net.gd_steps(self._per_network(rows), self._per_network(count),
                         self._targets(y_sum, z_sum, count).flatten(0, 1), steps=self.steps, lr=self.lr,
                         alpha=alpha, beta=beta)
            return
        ones = torch.ones(self.batch_size, device=self._dev, dtype=self._dtype)
        alpha, beta = self._loss_scales(self.batch_size)
        noise = self._update_noise()
        for _ in range(self.steps):
            idx = self._randint(buf.size, self.batch_size)
            x, y, z = buf.sample(idx)
            net.gd_steps(self._per_network(x), ones, self._batch_targets(noise, idx, y, z).flatten(0, 1),
                         steps=1, lr=self.lr, alpha=alpha, beta=beta)

