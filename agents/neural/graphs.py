"""`NTKEnsemble.gd_steps` on CUDA, replayed from a captured CUDA graph: one launch a round.

At [S0]'s sizes (m = 10 networks of width 20, 50 arms) a round's 100 full-batch gradient steps
are about 1,200 kernels of a few microseconds each. On a GPU the host's launching of them, not
the GPU's arithmetic, is then the cost of a round. A CUDA graph (`torch.cuda.CUDAGraph`) records
the kernels of the 100 steps once and replays them with one launch.

Replay needs fixed shapes and addresses. The weights are updated in place (their addresses never
change); a round's rows, counts and targets are copied into static buffers; and the scalars that
change every round (the mean loss's alpha = 1/n and beta = lam N / n, n the observations held)
are read from a device tensor `coef` = (1 - lr beta, -lr alpha sqrt(N), lr beta) instead of being
baked into the kernels as Python floats. So the captured step computes the eager step's fused
update W <- (1 - lr beta) W - lr alpha sqrt(N) a^T delta + lr beta theta_0 as three kernels
(W *= decay; W += a^T (k delta); W += p theta_0): the same update, rounded differently. A GPU run
with graphs therefore equals the eager GPU run up to float tolerance, as the GPU run equals the
CPU's, not bit for bit; the graph's replay equals `scaled_steps` run eagerly bit for bit
(tests/test_cuda.py). The CPU never captures: its numbers are unchanged.

A new key (the shapes grow when an instance's table of distinct rows passes a multiple of
ROW_BLOCK rows, or the regulariser is switched off) captures anew; the first round of a key runs
`scaled_steps` eagerly on a side stream (this round's update, and the warm-up that CUDA graphs
need before a capture) and then records it. One graph is kept per ensemble (the last key's), so
an env whose rows never repeat captures every ROW_BLOCK rounds and holds one graph's memory.
`CUDA_GRAPHS = False` turns capture off (eager kernels, as on the CPU).
"""

from __future__ import annotations

import torch

from agents.neural.nets import NTKEnsemble

Tensor = torch.Tensor

CUDA_GRAPHS = True   # on CUDA, replay NTKEnsemble.gd_steps from a captured graph (False: launch eagerly)


def scaled_steps(net: NTKEnsemble, x: Tensor, count: Tensor, target: Tensor, steps: int, coef: Tensor,
                 pull: bool) -> None:
    """`steps` steps of `NTKEnsemble.gd_steps`, with its scalars read from the device tensor `coef` =
    (decay, k, p) = (1 - lr beta, -lr alpha sqrt(N), lr beta), so that one capture serves every round."""
    net.descend(x, count, target, steps, coef[0], coef[1], [A * coef[2] for A in net.anchor] if pull else None)


class CapturedSteps:
    """One captured `scaled_steps` of an ensemble: its static inputs and the graph."""

    def __init__(self, key: tuple, x: Tensor, count: Tensor, target: Tensor):
        self.key = key
        self.x, self.count, self.target = (t.clone(memory_format=torch.contiguous_format) for t in (x, count, target))
        self.coef = torch.empty(3, device=x.device, dtype=x.dtype)
        self.graph = torch.cuda.CUDAGraph()

    def load(self, x: Tensor, count: Tensor, target: Tensor, coef: tuple[float, float, float]) -> None:
        """Copy a round's inputs into the static buffers (stream-ordered before the replay)."""
        self.x.copy_(x)
        self.count.copy_(count)
        self.target.copy_(target)
        self.coef.copy_(torch.tensor(coef, dtype=self.coef.dtype))


def captured_gd_steps(net: NTKEnsemble, x: Tensor, count: Tensor, target: Tensor, *, steps: int, lr: float,
                      alpha: float, beta: float) -> None:
    """`net.gd_steps(...)` on CUDA by replaying the ensemble's graph (capturing it first for a new key)."""
    pull = bool(beta)
    key = (tuple(x.shape), tuple(count.shape), tuple(target.shape), steps, pull)
    coef = (1.0 - lr * beta, -lr * alpha * net.scale, lr * beta)
    captured = net.graph
    if captured is not None and captured.key == key:
        captured.load(x, count, target, coef)
        captured.graph.replay()
        return
    net.graph = None                    # free the old graph's memory before a new capture
    captured = CapturedSteps(key, x, count, target)
    captured.load(x, count, target, coef)
    side = torch.cuda.Stream(device=x.device)
    side.wait_stream(torch.cuda.current_stream(x.device))
    with torch.cuda.stream(side):       # this round's update, and the warm-up before the capture
        scaled_steps(net, captured.x, captured.count, captured.target, steps, captured.coef, pull)
    torch.cuda.current_stream(x.device).wait_stream(side)
    with torch.cuda.graph(captured.graph):
        scaled_steps(net, captured.x, captured.count, captured.target, steps, captured.coef, pull)
    net.graph = captured


def gd_steps(net: NTKEnsemble, x: Tensor, count: Tensor, target: Tensor, *, steps: int, lr: float, alpha: float,
             beta: float, capture: bool) -> None:
    """`net.gd_steps(...)`, replayed from a graph when `capture` (an agent's own ensemble, not a copy
    made for one update), the tensors are on CUDA and `CUDA_GRAPHS` is on; eager otherwise."""
    if capture and CUDA_GRAPHS and x.is_cuda:
        captured_gd_steps(net, x, count, target, steps=steps, lr=lr, alpha=alpha, beta=beta)
    else:
        net.gd_steps(x, count, target, steps=steps, lr=lr, alpha=alpha, beta=beta)
