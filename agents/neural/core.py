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

Randomness: instance i owns a torch.Generator on the CPU (initial weights, perturbations,
member choice, minibatches, Thompson samples) and a numpy Generator for random tie-breaking
(agents.base.random_argmax), both derived from its seed and restarted by `reset()`: `seed` is an
int (or None) for one instance, or a list of N ints, and then instance i makes exactly the draws
of a single agent seeded seed[i] (an int seed with N > 1 instances is spawned into N children).
The generators stay on the CPU whatever the device, and every draw is made there and then moved
to the device: a CUDA generator would give other numbers than a CPU one from the same seed, so a
run's random variates, and its choices up to float tolerance, do not depend on the device.
In the round loop the host-device traffic is the observation, the reward and those variates going
in and the arm scores coming back to pick the actions. On CUDA the training steps of an update are
replayed from a captured graph (agents.neural.graphs).
"""

from __future__ import annotations

import math

import numpy as np
import torch

from agents.base import BaseAgent, argmax_probs, check_finite
from agents.params import Bool, Device, Int, LogUniform, Options, Real
from agents.neural import graphs
from agents.neural.buffer import ReplayBuffer, Schedule

from agents.neural.nets import NTKEnsemble, device_of

DTYPES = {"float32": torch.float32, "float64": torch.float64}
ROW_BLOCK = 8   # full-history training pads each instance's table of distinct rows to a multiple of this


class TorchAgent(BaseAgent):
    """The one base with per-instance torch streams (`torch_streams`), a device and a dtype.

    What the torch agents serving N instances share (NeuralAgent, agents.neural.fpl.DeepFPL):
    the device and dtype are checked once, and instance i draws from `gens_[i]` (a
    torch.Generator on the CPU, module docstring) and breaks ties with `rngs_[i]`.
    """

    torch_streams = True
    params = {"device": Device(), "dtype": Options(*DTYPES)}

    def _check_params(self) -> None:
        self._dev = device_of(self.device)
        if self._dev.type == "mps" and self.dtype == "float64":
            raise ValueError("dtype='float64' is not available on device 'mps' (MPS has no float64); use "
                             "dtype='float32' or device='cpu'")
        self._dtype = DTYPES[self.dtype]

    def _randn(self, *shape: int) -> torch.Tensor:
        """Standard normals (N, *shape) on the device, row i drawn on the CPU from instance i's generator."""
        return torch.stack([torch.randn(shape, generator=g, dtype=self._dtype) for g in self.gens_]).to(self._dev)

    def _randint(self, high: int, *shape: int) -> torch.Tensor:
        """Integers uniform in [0, high), (N, *shape) on the device, row i drawn on the CPU from instance i's."""
        return torch.stack([torch.randint(high, shape, generator=g) for g in self.gens_]).to(self._dev)


class NeuralAgent(TorchAgent):
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
        device: "cpu", "cuda", "cuda:<index>", "mps" or "auto" (cuda when available).
        dtype: "float32" (default) or "float64".
        dim: feature dimension d, if known before the first observation (checked against it).
        seed: int or None (fresh entropy, replayed by reset()) for one instance, or a list of N
            ints for N instances (module docstring).

    Why `mean_loss=True` by default: eq. 4.4 sums the squared errors over the history, whose
    curvature grows like t N, so gradient descent with the paper's step 0.01 diverges once an arm
    has been pulled a few dozen times. Dividing the whole loss (data term and regulariser) by n
    keeps the minimiser of eq. 4.4 and makes the step size 0.01 stable at every t; [S0] does not
    say how its code scales the loss (docs/papers.md, S0-A7).

    Input scale: [S0]'s analysis and every env of the papers keep features in the unit ball, and the
    curvature of the loss grows with ||x||^2, so the step 0.01 diverges on larger features (e.g.
    x ~ N(0, I_8), norm about 3). An instance whose first obs has a row longer than 1 therefore
    divides every feature it ever sees by that first obs's largest row norm (fixed from then on, so
    the network learns one function); features already in the unit ball are used as they are.

    Batched mode equals N single agents bit for bit. Full-history training pads each instance's
    table of distinct rows to a multiple of ROW_BLOCK rows and trains the instances whose tables pad
    to the same length together (`ReplayBuffer.table_groups`), so no instance is padded to another's
    length; agents.neural.nets makes every stacked product independent of the stack size. On CUDA
    with graphs (`_captures`) all instances train as one group instead, equal to the single agents
    up to float tolerance.
    """

    params = {"width": Int(ge=2), "depth": Int(ge=2), "lam": Real(ge=0), "lr": Real(gt=0), "steps": Int(ge=0),
              "update_every": Int(ge=1), "batch_size": (Int(ge=1), None), "buffer_size": (Int(ge=1), None),
              "warm_start": Bool(), "warmup": Int(ge=0), "mean_loss": Bool(), "duplicate_input": Bool()}
    search_space = {"lr": LogUniform(1e-3, 0.1), "lam": LogUniform(0.1, 10)}

    def __init__(self, *, width=20, depth=3, lam=1.0, lr=0.01, steps=100, update_every=1, batch_size=None,
                 buffer_size=None, warm_start=True, warmup=0, mean_loss=True, duplicate_input=True, device="cpu",
                 dtype="float32", dim=None, seed=None):
        super().__init__(width=width, depth=depth, lam=lam, lr=lr, steps=steps, update_every=update_every,
                         batch_size=batch_size, buffer_size=buffer_size, warm_start=warm_start, warmup=warmup,
                         mean_loss=mean_loss, duplicate_input=duplicate_input, device=device, dtype=dtype, dim=dim,
                         seed=seed)

    def _check_params(self) -> None:
        super()._check_params()
        if self.width % 2:
            raise ValueError(f"width must be even (the symmetric initialisation has two blocks), got {self.width}")
        self._schedule = Schedule(self.update_every, self.steps, self.batch_size, bool(self.warm_start), self.warmup)

    # -- what subclasses provide (tensors carry the instance axis N first) ------------------------
    index_policy = False   # True: `_scores` draws nothing, so action_probs is exact (greedy, ties split)
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
    def _reset(self) -> None:
        self.net_ = None
        self.buffer_ = None

    def act(self, obs: np.ndarray) -> int | np.ndarray:
        """Index of the arm to pull among the rows of obs (K, d), or one per instance of obs (N, K, d)."""
        X = self._check_obs(obs, finite=True)
        if self.t_ < self.warmup:
            actions = np.full(self.n_, self.t_ % X.shape[1])
        else:
            actions = self._argmax(self._checked_scores(X))
        return self._unwrap(actions)

    def _probs(self, X: np.ndarray) -> np.ndarray | None:
        """The warm-up's round-robin arm, or uniform over the maximisers of an index policy's scores
        (`index_policy = True`: `_scores` draws nothing); None (sampled) otherwise."""
        check_finite(X)
        if self.t_ < self.warmup:
            return np.eye(X.shape[1])[np.full(self.n_, self.t_ % X.shape[1])]
        return argmax_probs(self._checked_scores(X)) if self.index_policy else None

    def _checked_scores(self, X: np.ndarray) -> np.ndarray:
        """`_scores` of the obs X (N, K, d) as a float64 host array, checked finite."""
        with torch.no_grad():
            scores = self._scores(self._to_device(self._input(X))).cpu().double().numpy()
        if not np.isfinite(scores).all():
            raise FloatingPointError(f"{type(self).__name__}: the arm scores contain NaN or inf (the network "
                                     f"diverged; {self._divergence_fix()})")
        return scores

    def _divergence_fix(self) -> str:
        """What to change when the network diverged (the error of `_checked_scores`)."""
        return f"lower lr, currently {self.lr}" + ("" if self.mean_loss else ", or use mean_loss=True")

    def observe(self, obs: np.ndarray, action, reward) -> None:
        """Record that arm `action` of obs gave `reward` (per instance when batched), then train if the schedule says so."""
        X = self._check_obs(obs, finite=True)
        a, y = self._feedback(X, action, reward)
        x = self._input(X[np.arange(self.n_), a])
        with torch.no_grad():
            self._before_store(self._to_device(x))
            self.buffer_.add(x, y, self._perturbation())
            self.t_ += 1
            if self._schedule.due(self.t_):
                self._train()

    # -- helpers --------------------------------------------------------------------------------
    def _start(self, X: np.ndarray) -> None:
        """Build the N instances' networks and buffer once the first obs fixes N and d."""
        n, d = self.n_, self.d_
        longest = np.linalg.norm(X, axis=-1).max(axis=-1)                   # (N,)
        self.input_scale_ = np.where(longest > 1.0 + 1e-6, 1.0 / longest, 1.0)
        d_in = 2 * d if self.duplicate_input else d
        if d_in % 2:
            raise ValueError(f"obs has an odd feature dimension d={d}: the symmetric initialisation needs an even "
                             "input, so use duplicate_input=True")
        self.net_ = NTKEnsemble.symmetric(self.members, d_in, self.width, self.depth, self.gens_,
                                          paired_input=self.duplicate_input, device=self._dev, dtype=self._dtype)
        self.buffer_ = ReplayBuffer(n, d_in, self.z_dim, self.buffer_size, self._dev, self._dtype)
        self._setup()

    def _input(self, X: np.ndarray) -> np.ndarray:
        """The network input of the rows of X (N, ..., d) (a fresh host array): [x; x] / sqrt 2 or x,
        after the instance's input scale (class docstring)."""
        dt = np.float32 if self._dtype == torch.float32 else np.float64
        X = X * self.input_scale_.reshape(-1, *(1,) * (X.ndim - 1))
        if self.duplicate_input:     # [x; x] / sqrt 2 with the twin coordinates side by side (see nets)
            return np.repeat(X.astype(dt), 2, axis=-1) / dt(math.sqrt(2.0))
        return np.array(X, dtype=dt)

    def _to_device(self, x: np.ndarray) -> torch.Tensor:
        return torch.from_numpy(x).to(self._dev)

    def _per_network(self, t: torch.Tensor) -> torch.Tensor:
        """An (N, ...) tensor repeated for each instance's `members` networks: (N members, ...)."""
        m = self.members
        return t if m == 1 else t[:, None].expand(t.shape[0], m, *t.shape[1:]).flatten(0, 1)

    def _networks(self, inst: np.ndarray) -> torch.Tensor:
        """The stack indices of the networks of instances `inst` (each instance's `members`, in order)."""
        m = self.members
        return torch.as_tensor((inst[:, None] * m + np.arange(m)).ravel(), device=self._dev)

    def _group(self, inst: np.ndarray | None) -> tuple[NTKEnsemble, slice | torch.Tensor]:
        """(the networks, the instance index) of a group of `ReplayBuffer.table_groups`: the whole
        ensemble when the group holds every instance, else a copy of the group's networks."""
        if inst is None:
            return self.net_, slice(None)
        return self.net_.subset(self._networks(inst)), torch.as_tensor(inst, device=self._dev)

    def _loss_scales(self, batch: int) -> tuple[float, float]:
        """(alpha, beta) of NTKEnsemble.gradients for a step on `batch` of the n observations held."""
        n = self.buffer_.size
        reg = self.lam * self.width
        if self.mean_loss:
            return 1.0 / batch, reg / n
        return n / batch, reg

    def _captures(self) -> bool:
        """Whether the training steps are replayed from a CUDA graph (agents.neural.graphs).

        Then all instances train as one group, padded to the longest table: rows of count 0 add
        exactly nothing to a loss or a gradient, and one group is one graph, where groups of
        instances (each trained on a copy of its networks) would run eagerly. The padding changes
        the last bits of the sums, so on CUDA a batched agent equals its single agents up to float
        tolerance, as the GPU equals the CPU; on the CPU the groups keep them equal bit for bit.
        """
        return graphs.CUDA_GRAPHS and self._dev.type == "cuda"

    def _train(self) -> None:
        """`steps` gradient steps on L(theta) = 1/2 sum_l (f(x_l) - target_l)^2 + 1/2 lam N ||theta - theta_0||^2."""
        net, buf = self.net_, self.buffer_
        if not self._schedule.warm_start:
            net.restart()
        if self.batch_size is None:
            groups = buf.table_groups(ROW_BLOCK)
            longest = max(length for length, _ in groups)
            if self._captures():    # one graph for all: every instance padded to the longest table
                groups = [(longest, None)]
            rows, count, y_sum, z_sum = buf.full(longest)
            target = self._targets(y_sum, z_sum, count)
            alpha, beta = self._loss_scales(buf.size)
            for length, inst in groups:
                sub, pick = self._group(inst)
                graphs.gd_steps(sub, self._per_network(rows[pick, :length]), self._per_network(count[pick, :length]),
                                target[pick, :, :length].flatten(0, 1), steps=self.steps, lr=self.lr, alpha=alpha,
                                beta=beta, capture=sub is net)
                if sub is not net:
                    net.assign(self._networks(inst), sub)
            return
        ones = torch.ones(self.batch_size, device=self._dev, dtype=self._dtype)
        alpha, beta = self._loss_scales(self.batch_size)
        noise = self._update_noise()
        for _ in range(self.steps):
            idx = self._randint(buf.size, self.batch_size)
            x, y, z = buf.sample(idx)
            graphs.gd_steps(net, self._per_network(x), ones, self._batch_targets(noise, idx, y, z).flatten(0, 1),
                            steps=1, lr=self.lr, alpha=alpha, beta=beta, capture=True)

