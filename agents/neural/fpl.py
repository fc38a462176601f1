"""The deep-bandit agents of [S1] §5.2 (Kveton et al., "Randomized Exploration in Generalized Linear
Bandits"): DeepFPL, DeepFL and repGLM-FPL.

All three use one network shared by the arms (its input is an arm's feature vector, a 784-pixel
image in [S1]): one fully connected hidden layer of 50 units (ReLU or tanh) and a sigmoid output,
Keras' default initialisation (Glorot-uniform weights, zero biases), trained after every round by
one Adam step (Keras defaults: lr 1e-3, beta 0.9 / 0.999, epsilon 1e-7) on a minibatch of the 32
most recent examples.

- DeepFPL: GLM-FPL ([S1] eq. 6) with the network as the model. The rewards of the minibatch are
  perturbed by i.i.d. N(0, a^2), a = 1, drawn afresh each round; act greedily on the network.
- DeepFL: DeepFPL with a = 0 (follow the leader, no exploration).
- repGLM-FPL: a "Neural Linear" variant (Riquelme et al. 2018). For the first m% of rounds pull
  arms uniformly at random and train the network as DeepFPL does; then freeze it, drop its head
  and run GLM-FPL (logistic, agents.glm.GLMFPL) on the 50 hidden units as arm features.

Choices where [S1] is silent (docs/papers.md, S1-A7 to S1-A10), each a keyword:
- loss="bce": binary cross-entropy of the sigmoid output against the perturbed targets
  y + z, soft and unclipped (the logit form of the cross-entropy accepts any target). Its gradient in
  the output logit is mu(s) - y - z, exactly GLM-FPL's logistic-loss gradient with perturbed
  rewards, so this is the neural generalisation of eq. 6. loss="mse" is the other reading.
- perturbation="fresh": each round every example of the minibatch gets a new N(0, a^2) draw (FPL
  redraws all perturbations every round); "fixed" draws one per example when it is stored.
- steps=1 Adam step per round; no initial exploration; the first minibatches hold fewer than 32
  examples (all there are).
- repGLM-FPL: the phase-1 training is DeepFPL's (same a); the phase-1 examples, embedded by the
  frozen network, are GLM-FPL's first observations (all data are used, as in Neural Linear);
  GLM-FPL keeps its defaults (informal a = 0.5, ridge 1e-3, its [S1] §5.1 initial exploration,
  which pulls an arm only while one would enlarge the span of the pulled embeddings).

One agent serves one run (obs (K, d), int actions) or N runs at once (obs (N, K, d), (N,)
actions; `seed` a list of N ints), like the agents of agents.neural.core: the N networks are
stacked weights, so a round is a few batched matmuls for all of them. Each instance owns a
torch.Generator on the CPU (initial weights, perturbations; drawn there whatever the device) and
a numpy Generator (random tie-breaking, phase-1 exploration), derived from its seed and restarted
by `reset()`, so instance i makes exactly the choices of a single agent seeded seed[i]. float32
throughout; `device="cpu" | "cuda" | "cuda:<index>" | "mps" | "auto"`.
"""

from __future__ import annotations

import math

import numpy as np
import torch
import torch.nn.functional as F

from agents.base import _child
from agents.glm import GLMFPL
from agents.neural.buffer import ReplayBuffer
from agents.neural.core import TorchAgent
from agents.neural.nets import baddbmm, sigmoid
from agents.neural.optim import KerasAdam
from agents.params import Int, LogUniform, Options, Real

ACTIVATIONS = {"relu": torch.relu, "tanh": torch.tanh}
LOSSES = ("bce", "mse")
PERTURBATIONS = ("fresh", "fixed")


class DeepFPL(TorchAgent):
    """DeepFPL ([S1] §5.2): follow the perturbed leader with a neural network.

    Each round pull argmax_i f(x_i) (ties at random), f the network; then take one Adam step on
    the mean loss of the 32 most recent examples (x_l, y_l + z_l), z_l ~ N(0, a^2) i.i.d., drawn
    afresh for every example each round.

    Args:
        a: perturbation std ([S1]: 1; 0 is DeepFL).
        hidden: hidden units ([S1]: 50).
        activation: "relu" or "tanh" ([S1] runs both).
        lr: Adam step size (Keras default 1e-3).
        batch_size: the minibatch is the `batch_size` most recent examples (Keras default 32).
        steps: Adam steps per round (1), all on the same perturbed minibatch.
        loss: "bce" (sigmoid cross-entropy with soft targets, default) or "mse" (squared error
            of the sigmoid output); see the module docstring.
        perturbation: "fresh" (redrawn every round, default) or "fixed" (one draw per example).
        device: "cpu", "cuda", "cuda:<index>", "mps" or "auto" (cuda when available).
        dim: feature dimension d, if known before the first observation (checked against it).
        seed: int or None (fresh entropy, replayed by reset()), or a list of N ints for N instances.
    """

    params = {"a": Real(ge=0), "hidden": Int(ge=1), "activation": Options(*ACTIVATIONS), "lr": Real(gt=0),
              "batch_size": Int(ge=1), "steps": Int(ge=0),
              "loss": Options(*LOSSES),                  # cross-entropy ([S1] default here) or squared error
              "perturbation": Options(*PERTURBATIONS)}   # redrawn each round, or one per example
    search_space = {"a": LogUniform(0.05, 5), "lr": LogUniform(1e-4, 1e-2)}

    def __init__(self, *, a=1.0, hidden=50, activation="relu", lr=1e-3, batch_size=32, steps=1, loss="bce",
                 perturbation="fresh", device="cpu", dim=None, seed=None):
        super().__init__(a=a, hidden=hidden, activation=activation, lr=lr, batch_size=batch_size, steps=steps,
                         loss=loss, perturbation=perturbation, device=device, dtype="float32", dim=dim, seed=seed)

    # -- the protocol ---------------------------------------------------------------------------
    def _reset(self) -> None:
        self.params_ = None     # [W1 (N, d, H), b1 (N, 1, H), w2 (N, H, 1), b2 (N, 1, 1)]

    def act(self, obs: np.ndarray) -> int | np.ndarray:
        """Index of the arm to pull among the rows of obs (K, d) (one per instance of obs (N, K, d)):
        argmax of the network's output."""
        return self._unwrap(self._greedy(self._check_obs(obs, finite=True)))

    def observe(self, obs: np.ndarray, action, reward) -> None:
        """Store (x_action, reward) and take `steps` Adam steps on the perturbed recent minibatch."""
        X = self._check_obs(obs, finite=True)
        a, y = self._feedback(X, action, reward)
        self._store(X[np.arange(self.n_), a], y)
        self.t_ += 1
        self._train()

    # -- the network ----------------------------------------------------------------------------
    def _start(self, X: np.ndarray) -> None:
        """Build the N instances' networks (Keras' defaults: Glorot-uniform W1, w2,
        U(+-sqrt(6 / (fan_in + fan_out))), zero biases) once the first obs fixes N and d."""
        n, d = self.n_, self.d_
        H, dev = self.hidden, self._dev

        def glorot(fan_in, fan_out, shape):
            bound = math.sqrt(6.0 / (fan_in + fan_out))
            return torch.stack([(2 * torch.rand(shape, generator=g) - 1) * bound for g in self.gens_]).to(dev)

        W1 = glorot(d, H, (d, H))                       # each instance draws W1, then w2
        w2 = glorot(H, 1, (H,))[:, :, None]
        self.params_ = [W1, torch.zeros((n, 1, H), device=dev), w2, torch.zeros((n, 1, 1), device=dev)]
        self.adam_ = KerasAdam(self.params_, lr=self.lr)
        # the batch_size most recent examples (and, perturbation="fixed", their z_l ~ N(0, 1), scaled by a)
        self.fixed_z_ = self.perturbation == "fixed" and bool(self.a)
        self.buffer_ = ReplayBuffer(n, d, int(self.fixed_z_), self.batch_size, dev, torch.float32)

    def embed(self, X: torch.Tensor, params=None) -> torch.Tensor:
        """Hidden layer phi(x) = act(x W1 + b1) of the rows of X (N, B, d): (N, B, H)."""
        W1, b1 = (params or self.params_)[:2]
        return ACTIVATIONS[self.activation](baddbmm(b1, X, W1))

    def logits(self, X: torch.Tensor, params=None) -> torch.Tensor:
        """The output's logit s(x) = phi(x)^T w2 + b2 (the prediction is sigmoid(s)): (N, B)."""
        params = params or self.params_
        return baddbmm(params[3], self.embed(X, params), params[2])[..., 0]

    def _greedy(self, X: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            scores = self.logits(self._tensor(X)).cpu().double().numpy()
        if not np.isfinite(scores).all():
            raise FloatingPointError(f"{type(self).__name__}: the arm scores contain NaN or inf (the network "
                                     f"diverged; lower lr, currently {self.lr})")
        return self._argmax(scores)   # sigmoid is increasing: argmax of the logits

    def _store(self, x: np.ndarray, y: np.ndarray) -> None:
        self.buffer_.add(x, y, self._randn()[:, None] if self.fixed_z_ else None)

    def minibatch(self) -> tuple[torch.Tensor, torch.Tensor]:
        """The `batch_size` most recent examples (x (N, B, d), y (N, B)), B = min(batch_size, t), any order."""
        n = self.buffer_.size
        x, y, _ = self.buffer_.sample(torch.arange(n, device=self._dev).expand(self.n_, n))
        return x, y

    def perturbed_targets(self, y: torch.Tensor) -> torch.Tensor:
        """y + z with z ~ N(0, a^2): a fresh draw per example, or its stored one ("fixed"); y when a = 0."""
        if not self.a:
            return y
        if self.perturbation == "fixed":
            return y + self.a * self.buffer_.obs_z[:, 0, : y.shape[1]]
        return y + self.a * self._randn(y.shape[1])

    def batch_loss(self, params, x: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        """Each instance's mean loss of its minibatch (Keras' reduction), summed over the instances (so
        instance i's parameters get instance i's gradient): cross-entropy or squared error of sigmoid(s)."""
        s = self.logits(x, params)
        if self.loss == "bce":
            return _BCEWithLogits.apply(s, target).mean(1).sum()
        return ((sigmoid(s) - target) ** 2).mean(1).sum()

    def _train(self) -> None:
        x, y = self.minibatch()
        target = self.perturbed_targets(y)     # one perturbed problem per round, `steps` steps on it
        for _ in range(self.steps):
            params = [p.detach().requires_grad_() for p in self.params_]
            with torch.enable_grad():
                grads = torch.autograd.grad(self.batch_loss(params, x, target), params)
            self.adam_.step(self.params_, grads)

    # -- validation and helpers ---------------------------------------------------------------------
    def _tensor(self, x: np.ndarray) -> torch.Tensor:
        """A float32 copy on the device (obs may be a read-only view of the env's data)."""
        return torch.tensor(np.asarray(x, dtype=np.float32), device=self._dev)



class _BCEWithLogits(torch.autograd.Function):
    """Binary cross-entropy of sigmoid(s) against soft targets t, elementwise. Its gradient
    sigmoid(s) - t is taken with `nets.sigmoid`, so an instance's gradient is the same alone and
    in a stack (torch's own backward computes the sigmoid over the whole stack at once)."""

    @staticmethod
    def forward(ctx, s: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        ctx.save_for_backward(s, t)
        return F.binary_cross_entropy_with_logits(s, t, reduction="none")

    @staticmethod
    def backward(ctx, grad: torch.Tensor):
        s, t = ctx.saved_tensors
        return grad * (sigmoid(s) - t), None


class DeepFL(DeepFPL):
    """DeepFL ([S1] §5.2): DeepFPL with a = 0, i.e. follow the (unperturbed) leader.

    The same network, minibatch and Adam step as DeepFPL; it draws no perturbation at all.

    Args:
        hidden, activation, lr, batch_size, steps, loss, device, dim, seed: as DeepFPL.
    """

    def __init__(self, *, hidden=50, activation="relu", lr=1e-3, batch_size=32, steps=1, loss="bce", device="cpu",
                 dim=None, seed=None):
        super().__init__(a=0.0, hidden=hidden, activation=activation, lr=lr, batch_size=batch_size, steps=steps,
                         loss=loss, device=device, dim=dim, seed=seed)


class RepGLMFPL(DeepFPL):
    """repGLM-FPL ([S1] §5.2; docs/papers.md, S1-A10): learn a representation, then GLM-FPL on it.

    Phase 1 (the first `explore_rounds` rounds, m% of the horizon): pull an arm uniformly at
    random and train DeepFPL's network on what is observed (DeepFPL's loss, perturbation and
    Adam step). Phase 2: freeze the network, "chop its head off" and embed every arm as its
    hidden layer phi(x) (`hidden` features); GLM-FPL (agents.glm.GLMFPL, logistic link) acts
    and learns on the embedded arms. Its first observations are the phase-1 examples embedded by
    the frozen network.

    Args:
        explore_fraction, horizon: phase 1 lasts round(explore_fraction * horizon) rounds
            ([S1]: m from 1% to 20% of n = 10,000; default 5%).
        explore_rounds: phase-1 length in rounds; when given it replaces explore_fraction * horizon.
        glm_a: GLM-FPL's perturbation scale in phase 2 ([S1] §5.1's informal 0.5).
        glm_lam: GLM-FPL's ridge (its default 1e-3).
        a, hidden, activation, lr, batch_size, steps, loss, perturbation, device, dim, seed: the
            phase-1 network and its training, as DeepFPL.
    """

    params = {"explore_fraction": Real(ge=0, le=1), "horizon": Int(ge=1), "explore_rounds": (Int(ge=0), None),
              "glm_a": Real(ge=0), "glm_lam": Real(gt=0)}

    def __init__(self, *, explore_fraction=0.05, horizon=10_000, explore_rounds=None, glm_a=0.5, glm_lam=1e-3,
                 a=1.0, hidden=50, activation="relu", lr=1e-3, batch_size=32, steps=1, loss="bce",
                 perturbation="fresh", device="cpu", dim=None, seed=None):
        self.explore_fraction, self.horizon, self.explore_rounds = explore_fraction, horizon, explore_rounds
        self.glm_a, self.glm_lam = glm_a, glm_lam
        self.explore_rounds_ = (explore_rounds if explore_rounds is not None
                                else int(round(explore_fraction * horizon)))
        super().__init__(a=a, hidden=hidden, activation=activation, lr=lr, batch_size=batch_size, steps=steps,
                         loss=loss, perturbation=perturbation, device=device, dim=dim, seed=seed)

    @classmethod
    def reads_horizon(cls, kwargs: dict) -> bool:
        """T sizes phase 1 only when explore_rounds is not given."""
        return cls.setting(kwargs, "explore_rounds") is None

    def _reset(self) -> None:
        super()._reset()
        self.history_x_, self.history_y_ = [], []     # phase-1 examples, replayed into GLM-FPL
        self.glm_ = None
        self.frozen_ = None

    @property
    def exploring(self) -> bool:
        """True in phase 1 (uniform exploration while the representation is trained)."""
        return self.t_ < self.explore_rounds_

    def act(self, obs: np.ndarray) -> int | np.ndarray:
        X = self._check_obs(obs, finite=True)
        if self.exploring:
            return self._unwrap(np.array([rng.integers(X.shape[1]) for rng in self.rngs_]))
        return self._phase2().act(self._glm_obs(self._embedded(X)))

    def observe(self, obs: np.ndarray, action, reward) -> None:
        X = self._check_obs(obs, finite=True)
        a, y = self._feedback(X, action, reward)
        if self.exploring:
            self.history_x_.append(np.asarray(X[np.arange(self.n_), a], dtype=np.float32).copy())
            self.history_y_.append(y)
            super().observe(obs, action, reward)
        else:
            self._phase2().observe(self._glm_obs(self._embedded(X)), self._unwrap(a), self._unwrap(y))
            self.t_ += 1

    def _reseed(self, seqs) -> None:
        super()._reseed(seqs)
        if self.glm_ is not None:       # phase 2 draws from GLM-FPL's streams
            self.glm_._reseed([_child(seq, 2) for seq in seqs])

    def _embedded(self, X: np.ndarray) -> np.ndarray:
        """phi(x) of the rows of X (N, K, d) by the frozen network, as float64 for GLM-FPL: (N, K, hidden)."""
        with torch.no_grad():
            return self.embed(self._tensor(X), self.frozen_).cpu().double().numpy()

    def _glm_obs(self, E: np.ndarray) -> np.ndarray:
        """GLM-FPL's obs: (K, hidden) for a single agent, (N, K, hidden) for N instances."""
        return E[0] if self.single_ else E

    def _phase2(self) -> GLMFPL:
        """GLM-FPL on the frozen embedding, built at the first round of phase 2 from the phase-1 data;
        batched over the instances, instance i seeded from instance i's seed."""
        if self.glm_ is None:
            self.frozen_ = [p.clone() for p in self.params_]
            seeds = [int(_child(seq, 2).generate_state(1)[0]) for seq in self.seqs_]
            self.glm_ = GLMFPL(a=self.glm_a, lam=self.glm_lam, dim=self.hidden,
                               seed=seeds[0] if self.single_ else seeds)
            zeros = np.zeros(self.n_, dtype=np.int64)
            for x, y in zip(self.history_x_, self.history_y_):
                E = self._embedded(x[:, None])                       # (N, 1, hidden): the pulled arm alone
                self.glm_.observe(self._glm_obs(E), self._unwrap(zeros), self._unwrap(y))
            self.history_x_, self.history_y_ = [], []
        return self.glm_
