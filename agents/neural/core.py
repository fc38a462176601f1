"""What the neural agents of [S0] share: validation, seeding, device, the network input, training.

Each agent is a plain class with `act(obs (K, d)) -> int`, `observe(obs, action, reward)` and
`reset()`; subclasses say how many networks they train, what perturbations they store, how they
score arms and what targets they fit (`NeuralAgent` below). One instance serves one bandit run
(no `batched` mode: the N seeds of a comparison run as N agents).

Randomness: the agent owns a torch.Generator on its device (initial weights, perturbations,
member choice, minibatches, Thompson samples) and a numpy Generator for random tie-breaking
(agents.base.random_argmax), both derived from `seed` and restarted by `reset()`. In the round
loop the only host-device traffic is the observation and reward going in and the K arm scores
coming back to pick the action.
"""

from __future__ import annotations

import math
import numbers

import numpy as np
import torch

from agents.base import check_feedback, check_obs, random_argmax
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


class NeuralAgent:
    """Shared machinery of the [S0] neural agents (subclasses document the algorithms).

    Network and training (the same for all, [S0] §7.2 "the network structure is the same"):
        width, depth: N and L of the NTK ReLU network (catalog C4; [S0]: 20 and 3).
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
        dim: feature dimension d, if known before the first observation.
        seed: int or None (fresh entropy, replayed by reset()).

    Why `mean_loss=True` by default: eq. 4.4 sums the squared errors over the history, whose
    curvature grows like t N, so gradient descent with the paper's step 0.01 diverges once an arm
    has been pulled a few dozen times. Dividing the whole loss (data term and regulariser) by n
    keeps the minimiser of eq. 4.4 and makes the step size 0.01 stable at every t; [S0] does not
    say how its code scales the loss (catalog G1/N1 ambiguity "sum vs mean").
    """

    batched = False

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
        self._seed_seq = np.random.SeedSequence(seed)   # seed=None: fresh entropy, replayed by reset()
        self.reset()

    # -- what subclasses provide ----------------------------------------------------------------
    members = 1      # networks trained (m)
    z_dim = 0        # perturbations stored per observation

    def _setup(self) -> None:
        """Extra state once the input dimension is known (self.net_ exists)."""

    def _scores(self, X: torch.Tensor) -> torch.Tensor:
        """Arm scores (K,) on the device for the network inputs X (K, d')."""
        raise NotImplementedError

    def _perturbation(self) -> torch.Tensor | None:
        """The z (z_dim,) stored with a new observation."""
        return None

    def _before_store(self, x: torch.Tensor) -> None:
        """Called with the chosen arm's network input (d',) before it is stored (design-matrix updates)."""

    def _targets(self, y_sum: torch.Tensor, z_sum: torch.Tensor, count: torch.Tensor) -> torch.Tensor:
        """Full-batch targets s (members, U) from the per-row sums of the rewards and perturbations."""
        return y_sum.expand(self.members, -1)

    def _update_noise(self) -> torch.Tensor | None:
        """Drawn once per minibatch update and passed to `_batch_targets` (Neural-PHE's fresh perturbations)."""
        return None

    def _batch_targets(self, noise, idx: torch.Tensor, y: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
        """Minibatch targets (members, B) of the observations in slots idx."""
        return y.expand(self.members, -1)

    # -- the protocol ---------------------------------------------------------------------------
    def reset(self) -> None:
        """Forget all data and restart the random streams: the agent behaves as when constructed."""
        torch_seed, numpy_seed = _children(self._seed_seq)
        self.rng_ = np.random.default_rng(numpy_seed)
        self.gen_ = torch.Generator(device=self._dev)
        self.gen_.manual_seed(int(torch_seed.generate_state(1, np.uint64)[0]))
        self.t_ = 0
        self.d_ = None
        self.net_ = None
        self.buffer_ = None
        if self.dim is not None:
            self._init(self.dim)

    def act(self, obs: np.ndarray) -> int:
        """Index of the arm to pull among the rows of obs (K, d)."""
        X = self._check_obs(obs)
        if self.t_ < self.warmup:
            return self.t_ % X.shape[0]
        with torch.no_grad():
            scores = self._scores(self._to_device(self._input(X))).double().cpu().numpy()
        if not np.isfinite(scores).all():
            raise FloatingPointError(f"{type(self).__name__}: the arm scores contain NaN or inf (the network "
                                     f"diverged; lower lr, currently {self.lr}, or use mean_loss=True)")
        return int(random_argmax(scores, self.rng_))

    def observe(self, obs: np.ndarray, action: int, reward: float) -> None:
        """Record that arm `action` of obs gave `reward`, then train if the schedule says so."""
        X = self._check_obs(obs)
        a, y = check_feedback(action, reward, X.shape[0])
        x = self._input(X[a][None])[0]
        with torch.no_grad():
            self._before_store(self._to_device(x))
            self.buffer_.add(x, y, self._perturbation())
            self.t_ += 1
            if self._schedule.due(self.t_):
                self._train()

    def __getstate__(self) -> dict:
        """Pickle the generator as its state (torch.Generator pickles only in recent torch)."""
        state = self.__dict__.copy()
        state["gen_"] = self.gen_.get_state()
        return state

    def __setstate__(self, state: dict) -> None:
        gen = torch.Generator(device=state["_dev"])
        gen.set_state(state["gen_"])
        self.__dict__.update(state, gen_=gen)

    # -- helpers --------------------------------------------------------------------------------
    def _init(self, d: int) -> None:
        d_in = 2 * d if self.duplicate_input else d
        if d_in % 2:
            raise ValueError(f"obs has an odd feature dimension d={d}: the symmetric initialisation needs an even "
                             "input, so use duplicate_input=True")
        self.d_ = d
        self.net_ = NTKEnsemble.symmetric(self.members, d_in, self.width, self.depth, self.gen_,
                                          paired_input=self.duplicate_input, device=self._dev, dtype=self._dtype)
        self.buffer_ = ReplayBuffer(d_in, self.z_dim, self.buffer_size, self._dev, self._dtype)
        self._setup()

    def _check_obs(self, obs) -> np.ndarray:
        X = check_obs(obs, self.d_)
        if self.d_ is None:
            self._init(X.shape[1])
        return X

    def _input(self, X: np.ndarray) -> np.ndarray:
        """The network input of the rows of X (a fresh host array): [x; x] / sqrt 2 or x."""
        dt = np.float32 if self._dtype == torch.float32 else np.float64
        if self.duplicate_input:     # [x; x] / sqrt 2 with the twin coordinates side by side (see nets)
            return np.repeat(X.astype(dt), 2, axis=1) / dt(math.sqrt(2.0))
        return np.array(X, dtype=dt)

    def _to_device(self, x: np.ndarray) -> torch.Tensor:
        return torch.from_numpy(x).to(self._dev)

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
            net.gd_steps(rows, count, self._targets(y_sum, z_sum, count), steps=self.steps, lr=self.lr,
                         alpha=alpha, beta=beta)
            return
        ones = torch.ones(self.batch_size, device=self._dev, dtype=self._dtype)
        alpha, beta = self._loss_scales(self.batch_size)
        noise = self._update_noise()
        for _ in range(self.steps):
            idx, x, y, z = buf.sample(self.batch_size, self.gen_)
            net.gd_steps(x, ones, self._batch_targets(noise, idx, y, z), steps=1, lr=self.lr, alpha=alpha, beta=beta)


def _children(seq: np.random.SeedSequence) -> tuple[np.random.SeedSequence, np.random.SeedSequence]:
    """Two child sequences of seq (torch, numpy) that do not advance seq, so reset() replays them."""
    return tuple(np.random.SeedSequence(seq.entropy, spawn_key=seq.spawn_key + (i,), pool_size=seq.pool_size)
                 for i in range(2))
