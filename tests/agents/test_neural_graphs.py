"""CUDA graphs of the [S0] agents' training steps (agents.neural.graphs).

The CPU tests hold the arithmetic: `scaled_steps`, the step with its scalars in a device tensor
(what a graph records), is the eager `NTKEnsemble.gd_steps` up to rounding, and the CPU never
captures. The tests marked `gpu` need a CUDA device and are not in the default run (`-m 'not
slow and not gpu'`): `python -m pytest -m gpu tests/agents/test_neural_graphs.py -n 0 -s` on a
GPU machine (docs/neural_agents.md, "On a GPU", has their last results). They hold that a replay
equals `scaled_steps` bit for bit, including across a new capture, and that the [S0] agents on CUDA
choose as on the CPU on the same history, up to float tolerance.
"""

import copy

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import agents  # noqa: E402
from agents.neural import graphs  # noqa: E402
from agents.neural.nets import NTKEnsemble  # noqa: E402

S0_AGENTS = ["Neural-ES", "Neural-ES-DT", "NeuralUCB", "NeuralTS", "Neural-PHE"]


def ensemble(m, d, N, device="cpu", dtype=torch.float64, seed=0):
    g = torch.Generator().manual_seed(seed)
    net = NTKEnsemble.symmetric(m, d, N, 3, g, dtype=dtype)
    for W in net.weights:                      # away from theta_0, so that every ReLU pattern occurs
        W.add_(0.3 * torch.randn(W.shape, generator=g, dtype=dtype))
    net.weights = [W.to(device) for W in net.weights]
    net.anchor = [A.to(device) for A in net.anchor]
    net.init = [W.clone() for W in net.weights]
    return net


def problem(m, B, d, device="cpu", dtype=torch.float64, seed=1):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(B, d, generator=g, dtype=dtype)
    x /= x.norm(dim=1, keepdim=True)          # rows in the unit ball, as the agents feed them
    count = torch.randint(0, 5, (B,), generator=g).to(dtype)
    target = count * torch.randn(m, B, generator=g, dtype=dtype)
    return x.to(device), count.to(device), target.to(device)


def coef(lr, alpha, beta, net, dtype, device="cpu"):
    return torch.tensor((1.0 - lr * beta, -lr * alpha * net.scale, lr * beta), dtype=dtype, device=device)


@pytest.mark.parametrize("m", [1, 4])
@pytest.mark.parametrize("beta", [0.0, 0.02])
def test_scaled_steps_equal_gd_steps_up_to_rounding(m, beta):
    eager, scaled = ensemble(m, 6, 8), ensemble(m, 6, 8)
    x, count, target = problem(m, 5, 6)
    eager.gd_steps(x, count, target, steps=50, lr=0.05, alpha=0.1, beta=beta)
    graphs.scaled_steps(scaled, x, count, target, 50, coef(0.05, 0.1, beta, scaled, torch.float64), bool(beta))
    moved = max(float((W - W0).abs().max()) for W, W0 in zip(eager.weights, eager.init))
    assert moved > 0.01                       # the steps did something
    for We, Ws in zip(eager.weights, scaled.weights):
        torch.testing.assert_close(Ws, We, rtol=1e-12, atol=1e-12)


def test_the_cpu_never_captures():
    net = ensemble(2, 4, 6)
    x, count, target = problem(2, 3, 4)
    before = [W.clone() for W in net.weights]
    graphs.gd_steps(net, x, count, target, steps=3, lr=0.05, alpha=0.1, beta=0.01, capture=True)
    eager = ensemble(2, 4, 6)
    eager.gd_steps(x, count, target, steps=3, lr=0.05, alpha=0.1, beta=0.01)
    assert net.graph is None
    for W, We, W0 in zip(net.weights, eager.weights, before):
        assert torch.equal(W, We) and not torch.equal(W, W0)   # the eager step, bit for bit


def test_a_copy_of_an_ensemble_leaves_its_graph_behind():
    net = ensemble(2, 4, 6)
    net.graph = object()                       # stands for a captured graph, which cannot be copied
    clone = copy.deepcopy(net)
    assert clone.graph is None and net.graph is not None
    assert all(torch.equal(a, b) for a, b in zip(clone.weights, net.weights))


# -- on a GPU ----------------------------------------------------------------------------------

cuda = pytest.mark.gpu


@cuda
def test_replay_equals_scaled_steps_bit_for_bit_across_captures():
    replayed, eager = ensemble(10, 40, 20, "cuda", torch.float32), ensemble(10, 40, 20, "cuda", torch.float32)
    keys = []
    for r, B in enumerate([8, 8, 8, 16, 16, 8]):             # shapes change: a new capture, then replays
        x, count, target = problem(10, B, 40, "cuda", torch.float32, seed=r)
        n = float(count.sum())
        alpha, beta = 1.0 / n, 20.0 / n                       # mean loss: 1/n and lam N / n, new every round
        graphs.captured_gd_steps(replayed, x, count, target, steps=100, lr=0.01, alpha=alpha, beta=beta)
        graphs.scaled_steps(eager, x, count, target, 100, coef(0.01, alpha, beta, eager, torch.float32, "cuda"), True)
        keys.append(replayed.graph.key)
        print(f"round {r}: largest difference {max(float((a - b).abs().max()) for a, b in zip(replayed.weights, eager.weights)):.3g}")
        for Wr, We in zip(replayed.weights, eager.weights):
            assert torch.isfinite(Wr).all() and torch.equal(Wr, We), f"round {r}"
    assert len(set(keys)) == 2 and keys[1] == keys[0] and keys[3] != keys[2]


@cuda
def test_replay_equals_eager_gd_steps_up_to_float_tolerance():
    replayed, eager = ensemble(10, 40, 20, "cuda", torch.float32), ensemble(10, 40, 20, "cuda", torch.float32)
    for r in range(5):
        x, count, target = problem(10, 16, 40, "cuda", torch.float32, seed=r)
        n = float(count.sum())
        kw = dict(steps=100, lr=0.01, alpha=1.0 / n, beta=20.0 / n)
        graphs.gd_steps(replayed, x, count, target, capture=True, **kw)
        eager.gd_steps(x, count, target, **kw)
    assert replayed.graph is not None
    moved = max(float((W - W0).abs().max()) for W, W0 in zip(eager.weights, eager.init))
    assert moved > 0.01                       # the steps did something
    for Wr, We in zip(replayed.weights, eager.weights):
        torch.testing.assert_close(Wr, We, rtol=1e-4, atol=1e-5)


@cuda
@pytest.mark.parametrize("name", S0_AGENTS)
def test_s0_agents_on_cuda_choose_as_on_the_cpu(name):
    """Open loop: the CPU agent's choices drive both agents, so they see the same history and make
    the same random draws (the streams live on the CPU); the CUDA agent, with graphs, must choose
    as the CPU's in almost every round and end with weights equal up to float tolerance."""
    import gymnasium as gym
    import gym_ctxbandits  # noqa: F401

    env = gym.make("CtxBandit/Quadratic-v0")
    obs, _ = env.reset(seed=3)
    cpu, gpu = agents.make(name, seed=3), agents.make(name, seed=3, device="cuda")
    T, agree = 200, 0
    for _ in range(T):
        a = cpu.act(obs)
        agree += int(gpu.act(obs) == a)
        nxt, reward, *_ = env.step(a)
        cpu.observe(obs, a, reward)
        gpu.observe(obs, a, reward)
        obs = nxt
    nets = [(cpu.net_, gpu.net_)] if hasattr(cpu, "net_") else [(cpu.agent_.net_, gpu.agent_.net_)]
    rel = max(float((Wg.cpu() - Wc).abs().max() / Wc.abs().max())
              for c, g in nets for Wc, Wg in zip(c.weights, g.weights))
    print(f"\n{name}: {agree}/{T} choices equal, weights' largest relative difference {rel:.2e}, "
          f"graph captured: {all(g.graph is not None for _, g in nets)}")
    assert all(g.graph is not None for _, g in nets)
    assert agree >= 0.95 * T
    assert rel < 1e-2
    assert np.isfinite(rel)


@pytest.mark.parametrize("name", ["NeuralUCB", "Neural-PHE"])
def test_one_group_padded_to_the_longest_table_trains_as_the_groups(name, monkeypatch):
    """What a batched agent trains when it captures (on CUDA): every instance padded to the longest
    table in one group. Run here on the CPU (eagerly) against the grouped training, on a history
    where the instances' tables differ in length (several groups): the same up to rounding."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((4, 30, 6))
    X /= np.linalg.norm(X, axis=-1, keepdims=True)
    grouped, padded = (agents.make(name, seed=[1, 2, 3, 4], width=8, steps=20, dtype="float64") for _ in range(2))
    calls = []
    monkeypatch.setattr(type(padded), "_captures", lambda self: calls.append(self is padded) or self is padded)
    for t in range(40):
        a = np.array([t % 30, (3 * t) % 30, t % 5, 0])      # 30, 30, 5 and 1 distinct arms: 4 / 1 rows blocks
        r = rng.standard_normal(4)
        grouped.observe(X, a, r)
        padded.observe(X, a, r)
    assert len(grouped.buffer_.table_groups(8)) == 3 and sum(calls) == 40    # padded trained as one group
    for Wg, Wp in zip(grouped.net_.weights, padded.net_.weights):
        torch.testing.assert_close(Wp, Wg, rtol=1e-9, atol=1e-12)
    assert not torch.equal(grouped.net_.weights[0], grouped.net_.init[0])


@cuda
@pytest.mark.parametrize("name", S0_AGENTS)
def test_batched_s0_agents_on_cuda_train_as_one_group_and_choose_as_on_the_cpu(name):
    """The batched agent on CUDA trains its instances as one group padded to the longest table
    (one graph), where the CPU trains them in groups by padded length. Open loop on a history where
    the tables differ (instance 0 keeps its arms, the others draw fresh ones): the CUDA agent must
    choose as the CPU's in almost every round and instance, with weights equal up to float tolerance.
    The tolerance is float32's own: 8,000 gradient steps amplify a last-bit difference, and on the CPU
    one ulp added to NeuralUCB's weights after round 1 ends 1.6e-2 apart (relative) on this history,
    with 479 of 480 choices equal; on an H200 the CUDA agent ended 1.2e-2 apart (NeuralUCB, 478 of
    480 choices equal), the four others 1e-4 to 3.2e-3 (docs/neural_agents.md, "On a GPU")."""
    N, K, d, T = 6, 20, 8, 80
    rng = np.random.default_rng(5)
    obs = rng.standard_normal((T, N, K, d))
    obs[:, 0] = obs[0, 0]
    obs /= np.linalg.norm(obs, axis=-1, keepdims=True)
    theta = rng.standard_normal((N, d))
    kw = dict(warmup=5) if name.startswith("Neural-ES") else {}
    seeds = list(range(10, 10 + N))
    cpu, gpu = agents.make(name, seed=seeds, **kw), agents.make(name, seed=seeds, device="cuda", **kw)
    agree = 0
    for t in range(T):
        a = cpu.act(obs[t])
        agree += int((gpu.act(obs[t]) == a).sum())
        mean = (obs[t, np.arange(N), a] * theta).sum(1)
        reward = mean ** 2 + 0.1 * rng.standard_normal(N)
        cpu.observe(obs[t], a, reward)
        gpu.observe(obs[t], a, reward)
    c, g = (cpu.agent_, gpu.agent_) if name == "Neural-ES-DT" else (cpu, gpu)
    rel = max(float((Wg.cpu() - Wc).abs().max() / Wc.abs().max())
              for Wc, Wg in zip(c.net_.weights, g.net_.weights))
    print(f"\n{name} x{N}: {agree}/{T * N} choices equal, weights' largest relative difference {rel:.2e}, "
          f"graph captured: {g.net_.graph is not None}")
    assert g.net_.graph is not None and g._captures()
    assert agree >= 0.95 * T * N
    assert np.isfinite(rel) and rel < 5e-2
