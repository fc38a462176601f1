"""The NTK-parameterised ReLU network of [S0] §4.3 / App. C.1 and its batched ensemble.

    f(x; theta) = sqrt(N) W_L phi(W_{L-1} phi( ... phi(W_1 x))),   phi = ReLU, no biases,

width N, depth L (W_1: N x d, W_l: N x N, W_L: 1 x N). `NTKEnsemble` holds m such networks as
ONE model: layer l is a stacked weight tensor of shape (m, in, out) (the transpose of the paper's
W_l, so that a batch of rows goes through with one batched matmul), and every forward pass,
gradient and gradient-descent step is a handful of `torch.bmm` calls over all m members at once,
never a Python loop over members. A single network (NeuralUCB, NeuralTS, Neural-PHE) is m = 1.

Gradients are written out by hand (the backward pass of a bias-free ReLU MLP is three lines per
layer): at the sizes of the papers (N = 20, a few dozen distinct arms) a step is dominated by the
per-operation overhead of the framework, and the hand-written step needs about half the
operations of autograd plus an optimiser. tests/agents/test_neural_nets.py checks it against
autograd and against a loop over m separate networks.

Symmetric initialisation ([S0] §4.3, App. C.1): W_l = diag(W, W) with W's entries N(0, 4/N)
(W is N/2 x N/2, or N/2 x d/2 for l = 1) and W_L = (w^T, -w^T) with w's entries N(0, 2/N). With
an input whose two halves are equal ([x]_j = [x]_{j+d/2}, the paper's x' = [x; x] / sqrt 2,
Remark 5.9) the two halves of every hidden layer are equal and f(x; theta_0) = 0.

Layout: the twin hidden units (unit i of each block) are stored next to each other (units 2i,
2i+1), and so are the twin inputs when `paired_input` (x' = (x_1, x_1, x_2, x_2, ...) / sqrt 2).
This re-indexing of the paper's block layout computes the same function with the same law of
theta_0; it is what makes f(x; theta_0) = 0 hold EXACTLY in floating point, because the twins then
meet the same summation order in a matrix product, and the read-out adds each twin pair
(+p) + (-p) = 0 before summing over pairs.

`StackedMLP` is the same idea for the [S3] agents, trained by autograd: N instances' (or N G)
ReLU MLPs with PyTorch's default initialisation as stacked (N, in, out) weights, one `baddbmm` a
layer, initialised from the agent's numpy streams.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from agents.params import Device

Tensor = torch.Tensor


# -- stacked products that do not depend on the stack size --------------------------------------
# A single agent is a stack of one network (or one ensemble), and instance i of a batched agent is
# slice i of a larger stack. Torch sends a stack of one to other kernels than a larger stack (gemv
# or ger instead of the batched gemm when a dimension is 1), whose last bits differ; the two would
# drift apart and, at a near tie, choose differently. These wrappers run such a stack of one as a
# stack of two (the operand repeated), so every stack size takes the batched kernel and a batched
# agent equals its single agents bit for bit. The extra work falls on single mode only.

def _two(x: Tensor) -> Tensor:
    # A copy under autograd: the gradient of an expanded operand would be summed over the stack
    # and the broadcast axes at once, in another order than a larger stack's.
    return torch.cat((x, x)) if x.requires_grad else x.expand(2, *x.shape[1:])


def _vector_shaped(a: Tensor, b: Tensor) -> bool:
    """A stack of one product with a dimension of 1 (a matrix-vector or outer product)."""
    return a.shape[0] == 1 and 1 in (a.shape[1], a.shape[2], b.shape[2])


def bmm(a: Tensor, b: Tensor) -> Tensor:
    """torch.bmm(a, b), the same numbers for every stack size."""
    if _vector_shaped(a, b):
        return torch.bmm(_two(a), _two(b))[:1]
    return torch.bmm(a, b)


def baddbmm(c: Tensor, a: Tensor, b: Tensor, *, beta: float = 1.0, alpha: float = 1.0) -> Tensor:
    """torch.baddbmm(c, a, b), the same numbers for every stack size."""
    if _vector_shaped(a, b):
        return torch.baddbmm(_two(c), _two(a), _two(b), beta=beta, alpha=alpha)[:1]
    return torch.baddbmm(c, a, b, beta=beta, alpha=alpha)


def baddbmm_(c: Tensor, a: Tensor, b: Tensor, *, beta: float = 1.0, alpha: float = 1.0) -> Tensor:
    """c.baddbmm_(a, b) in place, the same numbers for every stack size."""
    if _vector_shaped(a, b):
        return c.copy_(torch.baddbmm(_two(c), _two(a), _two(b), beta=beta, alpha=alpha)[:1])
    return c.baddbmm_(a, b, beta=beta, alpha=alpha)


def bmm_t(delta: Tensor, W: Tensor) -> Tensor:
    """delta @ W^T over the stack, the backward pass through weights W (m, in, out), the same numbers
    for every stack size.

    Through the read-out layer (out = 1) every entry is one product delta_b w_i, no sum: it is
    computed as the broadcast product, which gives the matmul's numbers (a single rounding; zeros
    may differ in sign only) without a one-column GEMM call, 3-4x dearer at [S0]'s sizes.
    """
    if W.shape[2] == 1:
        return delta * W.transpose(1, 2)
    return bmm(delta, W.transpose(1, 2))


def einsum(equation: str, *operands: Tensor) -> Tensor:
    """torch.einsum over operands stacked on their first axis, the same numbers for every stack size."""
    if operands[0].shape[0] == 1:
        return torch.einsum(equation, *map(_two, operands))[:1]
    return torch.einsum(equation, *operands)


def sigmoid(x: Tensor) -> Tensor:
    """torch.sigmoid computed row by row (over the last axis), the same numbers for every stack size.

    Torch runs an elementwise function over a contiguous tensor as one flat loop, vectorised with a
    scalar tail, and its vectorised sigmoid rounds differently from the scalar one: the last elements
    of a row would be computed by other code alone than in a stack. A padded view cannot be
    flattened, so every row gets the same loop whatever the number of rows.
    """
    return torch.sigmoid(torch.nn.functional.pad(x, (0, 1))[..., :-1])


def symmetric_init(d_in: int, width: int, depth: int, generator: torch.Generator, *, paired_input: bool = True,
                   device=None, dtype=torch.float32) -> list[Tensor]:
    """theta_0 of [S0] §4.3 as layer weights of shape (1, in, out): (d_in, N), (N, N)..., (N, 1).

    Twin hidden units are 2i and 2i+1; twin inputs are 2j and 2j+1 when `paired_input`, else j
    and j + d_in/2 (the paper's [x; x] order). Needs even `d_in` and `width`. Draws come from
    `generator` only, made on the generator's device and then moved to `device` (the agents keep
    their generators on the CPU, so theta_0 does not depend on the device).
    """
    if d_in % 2 or width % 2:
        raise ValueError(f"the symmetric initialisation needs an even input dimension and width, "
                         f"got d={d_in}, N={width}")
    if depth < 2:
        raise ValueError(f"depth L must be >= 2 (input layer and output layer), got {depth}")
    h = width // 2

    def normal(shape, var):
        draw = torch.randn(shape, generator=generator, device=generator.device, dtype=dtype)
        return math.sqrt(var) * draw.to(device)

    def twins(block, paired_rows=True):   # (in/2, out/2) -> (in, out), diag(block, block) re-indexed
        W = block.new_zeros((2 * block.shape[0], 2 * block.shape[1]))
        top, bottom = (slice(0, None, 2), slice(1, None, 2)) if paired_rows else \
            (slice(0, block.shape[0]), slice(block.shape[0], None))
        W[top, 0::2] = block
        W[bottom, 1::2] = block
        return W

    weights = [twins(normal((d_in // 2, h), 4.0 / width), paired_input)]        # W_1^T
    for _ in range(depth - 2):
        weights.append(twins(normal((h, h), 4.0 / width)))                       # W_l^T, 2 <= l <= L-1
    w = normal((h, 1), 2.0 / width)
    weights.append(torch.stack([w, -w], 1).reshape(width, 1))                     # W_L^T = (w, -w), paired
    return [W[None] for W in weights]


def readout(a: Tensor, w: Tensor) -> Tensor:
    """sum_i a_i w_i over the last axis, twin pairs (2i, 2i+1) added first (exact 0 at theta_0)."""
    prod = a * w
    return (prod[..., 0::2] + prod[..., 1::2]).sum(-1)


class NTKEnsemble:
    """m NTK ReLU networks of width N as stacked weights `weights[l]` of shape (m, in_l, out_l).

    `anchor` is the point theta_0 of the regulariser 1/2 beta ||theta_j - anchor_j||^2 (shape
    (1, in, out) when shared by all members, or (m, in, out); default: member 0's initial
    weights); `init` keeps the initial weights for `restart()`. Inputs x are (B, d), shared by
    all members, or (m, B, d). The stack may hold the members of several bandit instances
    (`symmetric` with one generator per instance): every operation is per network, so the
    instances stay independent.
    """

    def __init__(self, weights: list[Tensor], anchor: list[Tensor] | None = None):
        self.weights = weights
        self.init = [W.clone() for W in weights]
        self.anchor = [W[:1].clone() for W in weights] if anchor is None else anchor
        self.width = weights[0].shape[-1]
        self.scale = math.sqrt(self.width)           # the sqrt(N) in front of W_L
        self.graph = None                            # the captured steps on CUDA (agents.neural.graphs)

    def __getstate__(self) -> dict:
        return {**self.__dict__, "graph": None}      # a CUDA graph is not copied: the copy captures its own

    @classmethod
    def symmetric(cls, m: int, d_in: int, width: int, depth: int, generators, *, paired_input: bool = True,
                  device=None, dtype=torch.float32) -> NTKEnsemble:
        """n blocks of m copies of one symmetric theta_0 each ([S0] §4.3), one block per generator.

        `generators` is one torch.Generator (n = 1) or a list of them, one per bandit instance:
        the stack holds n m networks, instance-major (networks i m .. i m + m - 1 are instance
        i's m members, all starting from, and anchored at, instance i's theta_0).
        """
        gens = [generators] if isinstance(generators, torch.Generator) else list(generators)
        theta0 = [symmetric_init(d_in, width, depth, g, paired_input=paired_input, device=device, dtype=dtype)
                  for g in gens]
        weights = [torch.cat([layers[l].repeat(m, 1, 1) for layers in theta0]) for l in range(depth)]
        return cls(weights, [W.clone() for W in weights])

    @property
    def m(self) -> int:
        return self.weights[0].shape[0]

    @property
    def num_params(self) -> int:
        """dim theta = N d + N^2 (L - 2) + N ([S0] §4.3), per member."""
        return sum(W[0].numel() for W in self.weights)

    def subset(self, networks: Tensor) -> NTKEnsemble:
        """The networks of stack indices `networks` as an ensemble of their own (copies), anchors included."""
        sub = NTKEnsemble.__new__(NTKEnsemble)
        sub.weights = [W.index_select(0, networks) for W in self.weights]
        sub.anchor = [A if A.shape[0] == 1 else A.index_select(0, networks) for A in self.anchor]
        sub.init, sub.width, sub.scale, sub.graph = None, self.width, self.scale, None
        return sub

    def assign(self, networks: Tensor, sub: NTKEnsemble) -> None:
        """Write the weights of `sub` (made by `subset(networks)`) back into their places."""
        for W, S in zip(self.weights, sub.weights):
            W.index_copy_(0, networks, S)

    def restart(self) -> None:
        """Every member back to its initial weights (training from theta_0, no warm start)."""
        for W, W0 in zip(self.weights, self.init):
            W.copy_(W0)

    # -- forward ----------------------------------------------------------------------------------
    def _expand(self, x: Tensor) -> Tensor:
        return x.expand(self.m, *x.shape) if x.dim() == 2 else x

    def _hidden(self, x: Tensor) -> list[Tensor]:
        """[x, a_1, ..., a_{L-1}], each (m, B, .)."""
        acts = [self._expand(x)]
        for W in self.weights[:-1]:
            acts.append(bmm(acts[-1], W).relu_())
        return acts

    def activations(self, x: Tensor) -> tuple[list[Tensor], Tensor]:
        """Hidden activations [x, a_1, ..., a_{L-1}] (each (m, B, .)) and f = (m, B)."""
        acts = self._hidden(x)
        return acts, readout(acts[-1], self.weights[-1][:, None, :, 0]) * self.scale

    def __call__(self, x: Tensor) -> Tensor:
        """f(x; theta_j) for every member: (m, B)."""
        return self.activations(x)[1]

    def member(self, j: Tensor, x: Tensor) -> Tensor:
        """f(x_i; theta_{j_i}) of one network j_i per row of x: j (n,) stack indices (left on the
        device, no sync), x (n, B, d), or (B, d) shared by all; returns (n, B)."""
        h = x if x.dim() == 3 else x.expand(len(j), *x.shape)
        for W in self.weights[:-1]:
            h = bmm(h, W.index_select(0, j)).relu_()
        return readout(h, self.weights[-1].index_select(0, j)[:, None, :, 0]) * self.scale

    # -- training -------------------------------------------------------------------------------
    def gradients(self, x: Tensor, count: Tensor, target: Tensor, alpha: float, beta: float) -> list[Tensor]:
        """Gradient of every member's loss, one (m, in, out) tensor per layer:

            L_j(theta_j) = alpha sum_b [1/2 c_b f(x_b; theta_j)^2 - s_jb f(x_b; theta_j)]
                           + 1/2 beta ||theta_j - anchor_j||^2,

        with counts c (B,) and targets s (m, B). With c_b = 1 and s_jb = y_b this is
        alpha sum_b 1/2 (f - y_b)^2 up to a constant; with c_b the number of times row x_b was
        observed and s_jb the sum of its (perturbed) rewards it is the same loss over the full
        history (the rows of a fixed arm set repeat, so this costs O(distinct rows), not O(t)).
        """
        acts, out = self.activations(x)
        resid = (count * out - target).unsqueeze(-1)            # dL/df / alpha, (m, B, 1)
        grads = []
        delta = resid * self.scale                              # dL/d(pre-activation of the output)
        for l in range(len(self.weights) - 1, -1, -1):
            W = self.weights[l]
            grads.append(alpha * bmm(acts[l].transpose(1, 2), delta) + beta * (W - self.anchor[l]))
            if l:
                delta = torch.ops.aten.threshold_backward(bmm_t(delta, W), acts[l], 0)
        return grads[::-1]

    def gd_steps(self, x: Tensor, count: Tensor, target: Tensor, *, steps: int, lr: float, alpha: float,
                 beta: float) -> None:
        """`steps` steps of gradient descent theta <- theta - lr grad L (the loss of `gradients`), in place.

        The update is fused into one `baddbmm` per layer: W <- (1 - lr beta) W + lr beta A
        - lr alpha a^T delta, with the backward pass run on the weights before the step. Everything
        that does not change between steps (transposed views of the weights, scaled counts and
        targets, the anchor pull) is prepared once: at the papers' sizes a step is about a dozen
        small kernels and each saved call counts (docs/agents.md, "Neural rounds against the peak").
        """
        pull = [lr * beta * A for A in self.anchor] if beta else None      # lr beta anchor
        self.descend(x, count, target, steps, 1.0 - lr * beta, -lr * alpha * self.scale, pull)

    def descend(self, x: Tensor, count: Tensor, target: Tensor, steps: int, decay: float | Tensor,
                k: float | Tensor, pull: list[Tensor] | None) -> None:
        """The steps of `gd_steps`, W <- decay W + k a^T delta (+ pull), with decay = 1 - lr beta and
        k = -lr alpha sqrt(N) as Python floats (one fused `baddbmm` a layer), or as 0-dim device
        tensors, which a CUDA graph reads at replay (W *= decay, then W += a^T (k delta): the same
        update, rounded differently; agents.neural.graphs)."""
        fused = not isinstance(decay, Tensor)
        weights = self.weights
        back_w = [None] + [W.transpose(1, 2) for W in weights[1:]]         # views: follow the in-place updates
        last = len(weights) - 1                                            # the read-out, one column (bmm_t)
        scaled_count = (count * self.scale).unsqueeze(-1)                  # (B, 1)
        neg_target = (-target).unsqueeze(-1)                               # (m, B, 1)
        x = self._expand(x)
        x_t = x.transpose(1, 2)
        for _ in range(steps):
            acts = [x]
            for W in weights[:-1]:
                acts.append(bmm(acts[-1], W).relu_())
            delta = torch.addcmul(neg_target, scaled_count, bmm(acts[-1], weights[-1]))   # c f - s
            for l in range(last, -1, -1):
                if l:    # delta W_l^T as bmm_t computes it, with the weights before the step
                    back = delta * back_w[l] if l == last else bmm(delta, back_w[l])
                a_t = acts[l].transpose(1, 2) if l else x_t
                if fused:
                    baddbmm_(weights[l], a_t, delta, beta=decay, alpha=k)
                else:
                    baddbmm_(weights[l].mul_(decay), a_t, delta * k)
                if pull is not None:
                    weights[l].add_(pull[l])
                if l:
                    delta = torch.ops.aten.threshold_backward(back, acts[l], 0)

    # -- gradient features (NeuralUCB, NeuralTS) -------------------------------------------------
    def grad_factors(self, x: Tensor) -> list[tuple[Tensor, Tensor]]:
        """Per-row gradients g(x_b; theta_j) = grad_theta f(x_b; theta_j) of every network, factored.

        x is (m, B, d) (row block j through network j) or (B, d) (through every network). For
        layer l the gradient of f(x_b) with respect to the (in, out) weight is the outer product
        a_{l-1}[b] delta_l[b]^T: returns [(a_{l-1}, delta_l)] with shapes (m, B, in), (m, B, out).
        """
        acts = self._hidden(x)
        delta = torch.full((*acts[0].shape[:2], 1), self.scale, dtype=x.dtype, device=x.device)
        factors = []
        for l in range(len(self.weights) - 1, -1, -1):
            factors.append((acts[l], delta))
            if l:
                delta = torch.ops.aten.threshold_backward(bmm_t(delta, self.weights[l]), acts[l], 0)
        return factors[::-1]

    @staticmethod
    def flat(factors: list[tuple[Tensor, Tensor]]) -> Tensor:
        """The gradients g(x_b) as rows of an (m, B, p) tensor (layer by layer, (in, out) row-major)."""
        return torch.cat([(a[..., :, None] * d[..., None, :]).flatten(-2) for a, d in factors], dim=-1)

    @staticmethod
    def diag_quadratic(factors: list[tuple[Tensor, Tensor]], inv_diag: list[Tensor]) -> Tensor:
        """g(x_b)^T D_j g(x_b) for diagonals D_j given per layer as (m, in, out) tensors (or (in, out),
        shared), without forming g: (m, B)."""
        return sum(((bmm(a * a, D) if D.dim() == 3 else a * a @ D) * (d * d)).sum(-1) for (a, d), D in zip(factors, inv_diag))


# -- devices and the [S3] agents' stacked MLPs -------------------------------------------------

def device_of(name: str) -> torch.device:
    """torch.device of an agents.params.Device name ("auto": cuda when available, else cpu), or a
    ValueError in one line when the name is malformed or this machine lacks the device, so an agent
    asked for a missing device fails when it is built, not at its first round."""
    if not Device().accepts(name):
        raise ValueError(f"device must be {Device()}, got {name!r}")
    if why := Device.missing(name):
        raise ValueError(f"device={name!r}: {why}; use device='cpu'")
    return torch.device(Device.resolve(name))


def tensor(x: np.ndarray, device) -> Tensor:
    """A float32 tensor of `x` on `device` (a copy: obs arrays may be read-only views of the env's data)."""
    return torch.tensor(np.asarray(x, dtype=np.float32), device=device)


class StackedMLP:
    """N independent ReLU MLPs d -> hidden[0] -> ... -> hidden[-1] as stacked (N, in, out) weights.

    PyTorch's default Linear initialisation, U(-1/sqrt(in), 1/sqrt(in)) for weights and biases,
    drawn from the per-instance streams. Output: the last hidden layer (ReLU applied), (N, B, D).
    `groups` = G stacks G networks per instance (N G of them, instance-major), e.g. EpiNet's M
    prior networks.
    """

    def __init__(self, rng, n: int, d: int, hidden: tuple[int, ...], device, trainable: bool = True, groups: int = 1):
        self.params = []
        sizes = (d, *hidden)
        for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
            self.params += list(linear_layer(rng, n, fan_in, fan_out, device, groups, trainable))
        self.out_dim = sizes[-1]

    def __call__(self, x: Tensor) -> Tensor:
        h = x
        for w, b in zip(self.params[::2], self.params[1::2]):
            h = torch.relu(baddbmm(b, h, w))
        return h


def linear_layer(rng, n: int, fan_in: int, fan_out: int, device, groups: int = 1, trainable: bool = True):
    """Stacked weights (N G, in, out) and biases (N G, 1, out), PyTorch's default initialisation."""
    bound = 1.0 / math.sqrt(fan_in)
    w = bound * (2 * rng.random((n, groups * fan_in * fan_out)) - 1)
    b = bound * (2 * rng.random((n, groups * fan_out)) - 1)
    w = tensor(w.reshape(n * groups, fan_in, fan_out), device).requires_grad_(trainable)
    b = tensor(b.reshape(n * groups, 1, fan_out), device).requires_grad_(trainable)
    return w, b


def sphere(rng, shape, device, radius: float = 1.0) -> Tensor:
    """Uniform points of the sphere of `radius` in R^shape[-1] (N, ..., M), from normals / norm."""
    v = rng.standard_normal(shape)
    return tensor(radius * v / np.linalg.norm(v, axis=-1, keepdims=True), device)
