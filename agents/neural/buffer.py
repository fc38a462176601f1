"""The replay buffer and update schedule of every neural agent.

`ReplayBuffer` holds the histories {(x_l, y_l, z_l)} of N instances (z_l: a member's
perturbations, Neural-ES) in two forms on the agent's device:

- per observation, in arrival order, for minibatches and for FIFO eviction when a `capacity` is
  set (the papers keep everything: capacity None);
- per distinct feature row, as sufficient statistics: the count n_u of observations of row u,
  the reward sum sum_l y_l and the perturbation sums sum_l z_l. A full-batch gradient of the
  squared loss needs nothing else (agents.neural.nets.NTKEnsemble.gradients), so with the fixed
  arm sets of [S0] §7.1 a full-batch step costs O(K), not O(t) ([S1] §3.3 uses the same idea
  for GLMs). With contexts that never repeat the table simply has one row per observation.

All instances observe once a round, so they share the observation slots; each has its own table
of distinct rows, and `full()` pads the tables to the longest with rows of count 0, which add
nothing to a loss or a gradient.

The [S3] agents (agents.neural.ensemble_pp) use the same buffer for their minibatches (`sample`
on slots drawn from their streams) and LMCTS for its full-buffer Langevin steps; the [S0]/[S2]
agents' full-batch steps use the row statistics (`full`).

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
    """FIFO histories of (x (d,), y, z (z_dim,)) of N instances with per-distinct-row statistics.

    Args:
        n: number of instances.
        d: feature dimension (of the network input).
        z_dim: perturbations stored per observation (0: none).
        capacity: keep only the last `capacity` observations (None: all).
    """

    def __init__(self, n: int, d: int, z_dim: int, capacity: int | None, device, dtype, actions: bool = False):
        self.n, self.d, self.z_dim, self.capacity = n, d, z_dim, capacity
        self.device, self.dtype = device, dtype
        start = 64 if capacity is None else min(64, capacity)
        self._inst = torch.arange(n, device=device)
        self._inst_host = np.arange(n)
        # distinct rows, one table per instance
        self.keys: list[dict[bytes, int]] = [{} for _ in range(n)]
        self.row_keys: list[list[bytes]] = [[] for _ in range(n)]
        self.rows = torch.zeros((n, start, d), device=device, dtype=dtype)
        self.count = torch.zeros((n, start), device=device, dtype=dtype)
        self.ysum = torch.zeros((n, start), device=device, dtype=dtype)
        self.zsum = torch.zeros((n, z_dim, start), device=device, dtype=dtype)
        self.count_host = np.zeros((n, start), dtype=np.int64)
        # observations, a ring of `capacity` slots shared by the instances (grown on demand up to it)
        self.obs_row = torch.zeros((n, start), device=device, dtype=torch.long)
        self.obs_row_host = np.zeros((n, start), dtype=np.int64)
        self.obs_y = torch.zeros((n, start), device=device, dtype=dtype)
        self.obs_z = torch.zeros((n, z_dim, start), device=device, dtype=dtype)
        # with `actions`: the action of each observation (GPT-Ensemble++'s per-action heads)
        self.obs_a = torch.zeros((n, start), device=device, dtype=torch.long) if actions else None
        self.size = 0    # observations held per instance
        self.pos = 0     # next slot to write

    @property
    def n_rows(self) -> list[int]:
        """Distinct rows in each instance's table (including rows whose observations were all evicted)."""
        return [len(k) for k in self.row_keys]

    def add(self, x: np.ndarray, y: np.ndarray, z: torch.Tensor | None = None, a: np.ndarray | None = None) -> None:
        """Append one observation per instance: features x (n, d) (host, the network input),
        rewards y (n,) (host), perturbations z (n, z_dim) (device), actions a (n,) (with `actions`)."""
        if self.size == self.capacity:
            self._evict(self.pos)
        elif self.pos == self.obs_y.shape[1]:
            self._grow_obs()
        u = self._row_indices(x)
        p, i = self.pos, self._inst
        u_dev = torch.as_tensor(u, device=self.device)
        y_dev = torch.as_tensor(np.asarray(y), device=self.device, dtype=self.dtype)
        self.obs_row[:, p] = u_dev
        self.obs_row_host[:, p] = u
        self.obs_y[:, p] = y_dev
        self.count[i, u_dev] += 1
        self.count_host[self._inst_host, u] += 1
        self.ysum[i, u_dev] += y_dev
        if self.z_dim:
            self.obs_z[:, :, p] = z
            self.zsum[i, :, u_dev] += z
        if self.obs_a is not None:
            self.obs_a[:, p] = torch.as_tensor(np.asarray(a), device=self.device)
        self.size = min(self.size + 1, self.capacity or self.size + 1)
        self.pos = (p + 1) % self.capacity if self.capacity is not None else p + 1

    def full(self, length: int | None = None) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        """(rows (n, U, d), counts (n, U), reward sums (n, U), perturbation sums (n, z_dim, U)) over the
        histories held, U = `length` (default the longest table; shorter tables padded with zero rows
        of count 0)."""
        U = max(self.n_rows) if length is None else length
        if U > self.rows.shape[1]:
            pad = U - self.rows.shape[1]
            F = torch.nn.functional
            return (F.pad(self.rows, (0, 0, 0, pad)), F.pad(self.count, (0, pad)), F.pad(self.ysum, (0, pad)),
                    F.pad(self.zsum, (0, pad)))
        return self.rows[:, :U], self.count[:, :U], self.ysum[:, :U], self.zsum[:, :, :U]

    def table_groups(self, block: int) -> list[tuple[int, np.ndarray | None]]:
        """The instances grouped by the length of their table padded to a multiple of `block` rows:
        [(length, instances)], instances None for all when every table pads to the same length.

        Full-history training runs once per group, on exactly the padded length that instance would
        have alone: a matrix product over rows gives other last bits when zero rows are appended (the
        BLAS kernel changes with the length), so padding an instance to another instance's length
        would make a batched agent differ from its single agents.
        """
        lengths = -(-np.asarray(self.n_rows) // block) * block
        values = np.unique(lengths)
        if len(values) == 1:
            return [(int(values[0]), None)]
        return [(int(v), np.flatnonzero(lengths == v)) for v in values]

    def sample(self, idx: torch.Tensor):
        """The observations in slots idx (n, B): (x (n, B, d), y (n, B), z (n, z_dim, B))."""
        rows = self.obs_row.gather(1, idx)
        z = self.obs_z.gather(2, idx[:, None, :].expand(-1, self.z_dim, -1))
        return self.rows[self._inst[:, None], rows], self.obs_y.gather(1, idx), z

    def actions(self, idx: torch.Tensor) -> torch.Tensor:
        """The actions of the observations in slots idx (n, B) (a buffer made with `actions`)."""
        return self.obs_a.gather(1, idx)

    # -- internals ------------------------------------------------------------------------------
    def _row_indices(self, x: np.ndarray) -> np.ndarray:
        """Each instance's table index of its row of x, adding the rows not seen before."""
        x32 = np.ascontiguousarray(x, dtype=np.float32)
        u = np.empty(self.n, dtype=np.int64)
        new = []
        for i in range(self.n):
            key = x32[i].tobytes()
            ui = self.keys[i].get(key)
            if ui is None:
                if self.capacity is not None and len(self.row_keys[i]) >= 2 * self.capacity:
                    self._compact(i)
                ui = len(self.row_keys[i])
                self.keys[i][key] = ui
                self.row_keys[i].append(key)
                new.append(i)
            u[i] = ui
        while u.max() >= self.rows.shape[1]:
            self._grow_rows()
        if new:
            self.rows[new, u[new]] = torch.as_tensor(np.asarray(x)[new], dtype=self.dtype).to(self.device)
        return u

    def _evict(self, p: int) -> None:
        """Remove the observations in slot p (the oldest) from the row statistics."""
        u = self.obs_row_host[:, p]
        i, u_dev = self._inst, self.obs_row[:, p]
        self.count[i, u_dev] -= 1
        self.count_host[self._inst_host, u] -= 1
        self.ysum[i, u_dev] -= self.obs_y[:, p]
        if self.z_dim:
            self.zsum[i, :, u_dev] -= self.obs_z[:, :, p]
        empty = np.flatnonzero(self.count_host[self._inst_host, u] == 0)
        if len(empty):                     # exact zeros, not rounding residue, for rows no longer held
            self.ysum[empty, u[empty]] = 0
            if self.z_dim:
                self.zsum[empty, :, u[empty]] = 0

    def _compact(self, i: int) -> None:
        """Drop instance i's rows with no observation left (FIFO with contexts that do not repeat)."""
        U = len(self.row_keys[i])
        alive = np.flatnonzero(self.count_host[i, :U] > 0)
        new_index = np.full(U, -1, dtype=np.int64)
        new_index[alive] = np.arange(len(alive))
        keep = torch.as_tensor(alive, device=self.device)
        k = len(alive)
        for name in ("rows", "count", "ysum"):
            table = getattr(self, name)
            kept = table[i, keep]
            table[i] = 0
            table[i, :k] = kept
        kept = self.zsum[i][:, keep]
        self.zsum[i] = 0
        self.zsum[i, :, :k] = kept
        kept = self.count_host[i, alive]
        self.count_host[i] = 0
        self.count_host[i, :k] = kept
        self.row_keys[i] = [self.row_keys[i][j] for j in alive]
        self.keys[i] = {key: j for j, key in enumerate(self.row_keys[i])}
        self.obs_row_host[i, : self.size] = new_index[self.obs_row_host[i, : self.size]]
        self.obs_row[i, : self.size] = torch.as_tensor(self.obs_row_host[i, : self.size], device=self.device)

    def _grow_rows(self) -> None:
        self.rows = torch.cat([self.rows, torch.zeros_like(self.rows)], dim=1)
        self.count = torch.cat([self.count, torch.zeros_like(self.count)], dim=1)
        self.ysum = torch.cat([self.ysum, torch.zeros_like(self.ysum)], dim=1)
        self.zsum = torch.cat([self.zsum, torch.zeros_like(self.zsum)], dim=2)
        self.count_host = np.concatenate([self.count_host, np.zeros_like(self.count_host)], axis=1)

    def _grow_obs(self) -> None:
        n = self.obs_y.shape[1]
        new = 2 * n if self.capacity is None else min(2 * n, self.capacity)
        extra = new - n
        self.obs_row = torch.cat([self.obs_row, self.obs_row.new_zeros((self.n, extra))], dim=1)
        self.obs_row_host = np.concatenate([self.obs_row_host, np.zeros((self.n, extra), dtype=np.int64)], axis=1)
        self.obs_y = torch.cat([self.obs_y, self.obs_y.new_zeros((self.n, extra))], dim=1)
        self.obs_z = torch.cat([self.obs_z, self.obs_z.new_zeros((self.n, self.z_dim, extra))], dim=2)
        if self.obs_a is not None:
            self.obs_a = torch.cat([self.obs_a, self.obs_a.new_zeros((self.n, extra))], dim=1)

