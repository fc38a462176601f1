"""What the torch agents share: N instances' networks as stacked weights, a FIFO buffer, the device.

Every neural agent serves N independent instances (N = 1 for a single agent) with one set of
stacked tensors: an MLP's layer is a weight (N, in, out) applied with one batched matmul, an
ensemble's M heads are one (N, M, D) tensor, never a Python loop over instances or members. All
random draws (initial weights, indices, perturbations, minibatches) come from the agent's
per-instance `Streams`, so instance i depends on its own seed only, on any device.

torch is imported lazily: `import agents` works without it, and the first use of a torch agent
without torch raises an ImportError that says how to install it.
"""

from __future__ import annotations

import math

import numpy as np


def torch():
    """The torch module, or an ImportError naming the extra to install."""
    try:
        import torch as _torch
    except ImportError:
        raise ImportError('the neural agents need PyTorch: pip install "gym-ctxbandits[neural]"') from None
    return _torch


def device_of(name: str):
    """torch.device for "cpu", "cuda" or "auto" (cuda when available)."""
    t = torch()
    if name == "auto":
        return t.device("cuda" if t.cuda.is_available() else "cpu")
    if name not in ("cpu", "cuda") and not str(name).startswith("cuda:"):
        raise ValueError(f"device must be 'cpu', 'cuda' or 'auto', got {name!r}")
    return t.device(name)


def tensor(x: np.ndarray, device):
    """A float32 tensor of `x` on `device` (a copy: obs arrays may be read-only views of the env's data)."""
    return torch().tensor(np.asarray(x, dtype=np.float32), device=device)


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
        self._relu = torch().relu

    def __call__(self, x):
        h = x
        for w, b in zip(self.params[::2], self.params[1::2]):
            h = self._relu(torch().baddbmm(b, h, w))
        return h


def linear_layer(rng, n: int, fan_in: int, fan_out: int, device, groups: int = 1, trainable: bool = True):
    """Stacked weights (N G, in, out) and biases (N G, 1, out), PyTorch's default initialisation."""
    bound = 1.0 / math.sqrt(fan_in)
    w = bound * (2 * rng.random((n, groups * fan_in * fan_out)) - 1)
    b = bound * (2 * rng.random((n, groups * fan_out)) - 1)
    w = tensor(w.reshape(n * groups, fan_in, fan_out), device).requires_grad_(trainable)
    b = tensor(b.reshape(n * groups, 1, fan_out), device).requires_grad_(trainable)
    return w, b


class FifoBuffer:
    """The last `capacity` (x, y, z) of N instances; minibatches drawn uniformly per instance."""

    def __init__(self, n: int, capacity: int, d: int, z_dim: int, device):
        t = torch()
        self.x = t.zeros((n, capacity, d), device=device)
        self.y = t.zeros((n, capacity), device=device)
        self.z = t.zeros((n, capacity, max(z_dim, 1)), device=device)
        self.capacity, self.size, self.pos = capacity, 0, 0
        self.rows = t.arange(n, device=device)[:, None]

    def add(self, x, y, z) -> None:
        self.x[:, self.pos], self.y[:, self.pos], self.z[:, self.pos] = x, y, z
        self.pos = (self.pos + 1) % self.capacity
        self.size = min(self.size + 1, self.capacity)

    def sample(self, rng, batch_size: int, device):
        """(x (N, B, d), y (N, B), z (N, B, M)): B = min(batch_size, size) rows per instance, with replacement."""
        b = min(batch_size, self.size)
        idx = torch().as_tensor(rng.integers(self.size, size=(len(self.rows), b)), device=device)
        return self.x[self.rows, idx], self.y[self.rows, idx], self.z[self.rows, idx]


def sphere(rng, shape, device, radius: float = 1.0):
    """Uniform points of the sphere of `radius` in R^shape[-1] (N, ..., M), from normals / norm."""
    v = rng.standard_normal(shape)
    return tensor(radius * v / np.linalg.norm(v, axis=-1, keepdims=True), device)
