"""The replay buffer and update schedule shared by the neural agents of [S0].

`ReplayBuffer` holds the history {(x_l, y_l, z_l)} (z_l: a member's perturbations, Neural-ES) in
two forms on the agent's device:

- per observation, in arrival order, for minibatches and for FIFO eviction when a `capacity` is
  set (the papers keep everything: capacity None);
- per distinct feature row, as sufficient statistics: the count n_u of observations of row u,
  the reward sum sum_l y_l and the perturbation sums sum_l z_l. A full-batch gradient of the
  squared loss needs nothing else (agents.neural.nets.NTKEnsemble.gradients), so with the fixed
  arm sets of [S0] §7.1 a full-batch step costs O(K), not O(t) ([S1] §3.3 uses the same idea
  for GLMs). With contexts that never repeat the table simply has one row per observation.

`Schedule` says when and how to train: every `every` rounds (after the warm-up), `steps`
gradient steps on the full history or on minibatches of `batch_size`, from the previous
parameters (`warm_start`) or from theta_0.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch


@dataclass(frozen=True)
class Schedule:
    """When and how the networks are trained (the papers': every round, 100 full-batch GD steps)."""

    every: int = 1                  # train after every `every` rounds
    steps: int = 100                # gradient steps per update (J of [S0] eq. 4.4, G elsewhere)
    batch_size: int | None = None   # None: full batch (gradient descent); int: minibatch SGD
    warm_start: bool = True         # start each update from the current weights (else from theta_0)
    warmup: int = 0                 # rounds before the first update (the update at round `warmup` is the first)

    def due(self, t: int) -> bool:
        """Train after the t-th observation?"""
        return t >= max(self.warmup, 1) and (t - max(self.warmup, 1)) % self.every == 0


class ReplayBuffer:
    """FIFO history of (x (d,), y, z (z_dim,)) with per-distinct-row sufficient statistics.

    Args:
        d: feature dimension (of the network input).
        z_dim: perturbations stored per observation (0: none).
        capacity: keep only the last `capacity` observations (None: all).
    """

    def __init__(self, d: int, z_dim: int, capacity: int | None, device, dtype):
        self.d, self.z_dim, self.capacity = d, z_dim, capacity
        self.device, self.dtype = device, dtype
        start = 64 if capacity is None else min(64, capacity)
        # distinct rows
        self.keys: dict[bytes, int] = {}
        self.row_keys: list[bytes] = []
        self.rows = torch.zeros((start, d), device=device, dtype=dtype)
        self.count = torch.zeros(start, device=device, dtype=dtype)
        self.ysum = torch.zeros(start, device=device, dtype=dtype)
        self.zsum = torch.zeros((z_dim, start), device=device, dtype=dtype)
        self.count_host = np.zeros(start, dtype=np.int64)
        # observations, a ring of `capacity` slots (grown on demand up to it)
        self.obs_row = torch.zeros(start, device=device, dtype=torch.long)
        self.obs_row_host = np.zeros(start, dtype=np.int64)
        self.obs_y = torch.zeros(start, device=device, dtype=dtype)
        self.obs_z = torch.zeros((z_dim, start), device=device, dtype=dtype)
        self.size = 0    # observations held
        self.pos = 0     # next slot to write

    @property
    def n_rows(self) -> int:
        """Distinct rows in the table (including rows whose observations were all evicted)."""
        return len(self.row_keys)

    def add(self, x: np.ndarray, y: float, z: torch.Tensor | None = None) -> None:
        """Append one observation: features x (host array, the network input), reward y, perturbations z."""
        if self.size == self.capacity:
            self._evict(self.pos)
        elif self.pos == self.obs_y.shape[0]:
            self._grow_obs()
        u = self._row(x)
        p = self.pos
        self.obs_row[p] = u
        self.obs_row_host[p] = u
        self.obs_y[p] = y
        self.count[u] += 1
        self.count_host[u] += 1
        self.ysum[u] += y
        if self.z_dim:
            self.obs_z[:, p] = z
            self.zsum[:, u] += z
        self.size = min(self.size + 1, self.capacity or self.size + 1)
        self.pos = (p + 1) % self.capacity if self.capacity is not None else p + 1

    def full(self) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        """(rows (U, d), counts (U,), reward sums (U,), perturbation sums (z_dim, U)) over the history held."""
        U = self.n_rows
        return self.rows[:U], self.count[:U], self.ysum[:U], self.zsum[:, :U]

    def sample(self, batch_size: int, generator: torch.Generator):
        """A minibatch of `batch_size` observations uniformly with replacement: (idx, x, y, z (z_dim, B)).

        idx are the observations' slots (to look up per-observation quantities such as
        Neural-PHE's fresh perturbations, drawn per slot).
        """
        idx = torch.randint(self.size, (batch_size,), generator=generator, device=self.device)
        rows = self.obs_row[idx]
        return idx, self.rows[rows], self.obs_y[idx], self.obs_z[:, idx]

    # -- internals ------------------------------------------------------------------------------
    def _row(self, x: np.ndarray) -> int:
        key = np.ascontiguousarray(x, dtype=np.float32).tobytes()
        u = self.keys.get(key)
        if u is None:
            if self.capacity is not None and self.n_rows >= 2 * self.capacity:
                self._compact()
            u = self.n_rows
            if u == self.rows.shape[0]:
                self._grow_rows()
            self.keys[key] = u
            self.row_keys.append(key)
            self.rows[u] = torch.as_tensor(np.asarray(x), dtype=self.dtype).to(self.device)
        return u

    def _evict(self, p: int) -> None:
        """Remove the observation in slot p (the oldest) from the row statistics."""
        u = int(self.obs_row_host[p])
        self.count[u] -= 1
        self.count_host[u] -= 1
        self.ysum[u] -= self.obs_y[p]
        if self.z_dim:
            self.zsum[:, u] -= self.obs_z[:, p]
        if self.count_host[u] == 0:       # exact zeros, not rounding residue, for rows no longer held
            self.ysum[u] = 0
            if self.z_dim:
                self.zsum[:, u] = 0

    def _compact(self) -> None:
        """Drop the rows with no observation left (FIFO with contexts that do not repeat)."""
        U = self.n_rows
        alive = np.flatnonzero(self.count_host[:U] > 0)
        new_index = np.full(U, -1, dtype=np.int64)
        new_index[alive] = np.arange(len(alive))
        keep = torch.as_tensor(alive, device=self.device)
        for name in ("rows", "count", "ysum"):
            old = getattr(self, name)
            fresh = torch.zeros_like(old)
            fresh[: len(alive)] = old[keep]
            setattr(self, name, fresh)
        zsum = torch.zeros_like(self.zsum)
        zsum[:, : len(alive)] = self.zsum[:, keep]
        self.zsum = zsum
        count_host = np.zeros_like(self.count_host)
        count_host[: len(alive)] = self.count_host[alive]
        self.count_host = count_host
        self.row_keys = [self.row_keys[i] for i in alive]
        self.keys = {k: i for i, k in enumerate(self.row_keys)}
        self.obs_row_host[: self.size] = new_index[self.obs_row_host[: self.size]]
        self.obs_row[: self.size] = torch.as_tensor(self.obs_row_host[: self.size], device=self.device)

    def _grow_rows(self) -> None:
        n = self.rows.shape[0]
        self.rows = torch.cat([self.rows, torch.zeros_like(self.rows)])
        self.count = torch.cat([self.count, torch.zeros_like(self.count)])
        self.ysum = torch.cat([self.ysum, torch.zeros_like(self.ysum)])
        self.zsum = torch.cat([self.zsum, torch.zeros_like(self.zsum)], dim=1)
        self.count_host = np.concatenate([self.count_host, np.zeros(n, dtype=np.int64)])

    def _grow_obs(self) -> None:
        n = self.obs_y.shape[0]
        new = 2 * n if self.capacity is None else min(2 * n, self.capacity)
        extra = new - n
        self.obs_row = torch.cat([self.obs_row, self.obs_row.new_zeros(extra)])
        self.obs_row_host = np.concatenate([self.obs_row_host, np.zeros(extra, dtype=np.int64)])
        self.obs_y = torch.cat([self.obs_y, self.obs_y.new_zeros(extra)])
        self.obs_z = torch.cat([self.obs_z, self.obs_z.new_zeros((self.z_dim, extra))], dim=1)
