"""[S0]'s NTK network and replay buffer (agents.neural.nets, agents.neural.buffer): the symmetric
initialisation, hand-written gradients against autograd, the stacked ensemble against a loop of
separate networks, the per-arm gradient features, and the buffer's sufficient statistics."""

import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")
from agents.neural.buffer import ReplayBuffer, Schedule  # noqa: E402
from agents.neural.nets import NTKEnsemble, bmm, bmm_t, symmetric_init  # noqa: E402


pytestmark = pytest.mark.usefixtures("one_torch_thread")


def gen(seed=0):
    return torch.Generator().manual_seed(seed)


def perturbed(net, seed=1, scale=0.3):
    """The same ensemble with every member moved away from theta_0 differently (and ReLUs mixed)."""
    g = gen(seed)
    for W in net.weights:
        W.add_(scale * torch.randn(W.shape, generator=g, dtype=W.dtype))
    return net


def reference_f(weights, x):
    """f(x; theta) = sqrt(N) W_L relu(... relu(W_1 x)) of ONE network, written as in [S0] §4.3."""
    h = x
    for W in weights[:-1]:
        h = torch.relu(h @ W)
    return math.sqrt(weights[0].shape[-1]) * (h @ weights[-1])[:, 0]


def test_symmetric_init_blocks_variances_and_zero_output():
    d, N, L = 6, 8, 4
    for paired in (False, True):
        theta0 = symmetric_init(d, N, L, gen(), paired_input=paired, dtype=torch.float64)
        assert [tuple(W.shape) for W in theta0] == [(1, d, N), (1, N, N), (1, N, N), (1, N, 1)]
        for l, W in enumerate(theta0[:-1]):     # diag(W, W) up to the order of units: twins (2i, 2i+1)
            rows = W[0].T.reshape(N // 2, 2, -1)                 # (unit pair, twin, input)
            if l == 0 and not paired:                            # inputs j and j + d/2 ([x; x] order)
                top, bottom = rows[:, 0, : d // 2], rows[:, 1, d // 2:]
                assert not rows[:, 0, d // 2:].any() and not rows[:, 1, : d // 2].any()
            else:                                                # inputs 2j and 2j + 1
                top, bottom = rows[:, 0, 0::2], rows[:, 1, 1::2]
                assert not rows[:, 0, 1::2].any() and not rows[:, 1, 0::2].any()
            assert torch.equal(top, bottom)
        assert torch.equal(theta0[-1][0, 0::2], -theta0[-1][0, 1::2])         # (w, -w)
    net = NTKEnsemble.symmetric(3, d, N, L, gen(), paired_input=False, dtype=torch.float64)
    assert net.num_params == N * d + N * N * (L - 2) + N       # [S0] §4.3: N + N d + N^2 (L - 2)
    x = torch.randn(20, d // 2, generator=gen(5), dtype=torch.float64)
    x2 = torch.cat([x, x], 1) / math.sqrt(2)                     # [x; x] / sqrt 2, Remark 5.9
    assert net(x2).abs().max() < 1e-12
    assert (net(torch.randn(20, d, generator=gen(6), dtype=torch.float64)) != 0).float().mean() > 0.5
    # the entries' variances: N(0, 4/N) in the blocks, N(0, 2/N) in w
    big = symmetric_init(400, 400, 3, gen(2), dtype=torch.float64)
    assert big[0][0, 0::2, 0::2].var().item() == pytest.approx(4 / 400, rel=0.05)
    assert big[1][0, 0::2, 0::2].var().item() == pytest.approx(4 / 400, rel=0.05)
    assert big[2][0, 0::2].var().item() == pytest.approx(2 / 400, rel=0.25)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("m, d, N, L, B", [(10, 20, 20, 3, 50), (3, 7, 64, 4, 500), (1, 3, 200, 2, 7)])
def test_output_at_the_symmetric_init_is_exactly_zero(m, d, N, L, B, dtype):
    """f(x'; theta_0) == 0 bit for bit on x' = [x; x] / sqrt 2 (twins side by side), [S0] §7.2's sizes included."""
    for seed in range(5):
        net = NTKEnsemble.symmetric(m, 2 * d, N, L, gen(seed), dtype=dtype)
        x2 = torch.randn(B, d, generator=gen(100 + seed), dtype=dtype).repeat_interleave(2, 1) / math.sqrt(2)
        assert torch.equal(net(x2), torch.zeros(m, B, dtype=dtype))
        assert torch.equal(net.member(torch.tensor([m - 1]), x2), torch.zeros(1, B, dtype=dtype))


def test_symmetric_init_needs_even_sizes():
    with pytest.raises(ValueError, match="even"):
        symmetric_init(5, 8, 3, gen())
    with pytest.raises(ValueError, match="even"):
        symmetric_init(6, 7, 3, gen())


def loss_by_autograd(weights, anchor, x, count, target, alpha, beta):
    """sum over members of L_j, the loss NTKEnsemble.gradients differentiates, by autograd."""
    ws = [W.clone().requires_grad_() for W in weights]
    total = 0.0
    for j in range(weights[0].shape[0]):
        f = reference_f([W[j] for W in ws], x)
        data = alpha * (0.5 * count * f * f - target[j] * f).sum()
        reg = 0.5 * beta * sum(((W[j] - A[min(j, A.shape[0] - 1)]) ** 2).sum() for W, A in zip(ws, anchor))
        total = total + data + reg
    total.backward()
    return [W.grad for W in ws]


@pytest.mark.parametrize("depth", [2, 3, 4])
def test_hand_written_gradients_equal_autograd(depth):
    m, d, N, B = 4, 6, 10, 9
    net = perturbed(NTKEnsemble.symmetric(m, d, N, depth, gen(), dtype=torch.float64))
    x = torch.randn(B, d, generator=gen(3), dtype=torch.float64)
    count = torch.randint(1, 5, (B,), generator=gen(4)).double()
    target = torch.randn(m, B, generator=gen(5), dtype=torch.float64)
    grads = net.gradients(x, count, target, alpha=0.3, beta=0.7)
    expected = loss_by_autograd(net.weights, net.anchor, x, count, target, 0.3, 0.7)
    for g, e in zip(grads, expected):
        torch.testing.assert_close(g, e)


def test_fused_gd_step_is_theta_minus_lr_gradient():
    m, d, N = 3, 4, 6
    net = perturbed(NTKEnsemble.symmetric(m, d, N, 3, gen(), dtype=torch.float64))
    net.anchor = [A + 0.1 * torch.randn(W.shape, generator=gen(9), dtype=W.dtype)
                  for A, W in zip(net.anchor, net.weights)]
    x = torch.randn(7, d, generator=gen(1), dtype=torch.float64)
    count, target = torch.ones(7, dtype=torch.float64), torch.randn(m, 7, generator=gen(2), dtype=torch.float64)
    expected = [W - 0.05 * g for W, g in zip(net.weights, net.gradients(x, count, target, alpha=0.2, beta=0.4))]
    net.gd_steps(x, count, target, steps=1, lr=0.05, alpha=0.2, beta=0.4)
    for W, e in zip(net.weights, expected):
        torch.testing.assert_close(W, e)


@pytest.mark.parametrize("m", [1, 10])
@pytest.mark.parametrize("out", [1, 20])
def test_backward_product_equals_the_matmul_bit_for_bit(m, out):
    """bmm_t(delta, W) = delta @ W^T exactly, also through the read-out (out = 1) where it is a
    broadcast product instead of a one-column GEMM (the fused GD step relies on this)."""
    delta = torch.randn(m, 56, out, generator=gen(1))
    W = torch.randn(m, 20, out, generator=gen(2))
    assert torch.equal(bmm_t(delta, W), bmm(delta, W.transpose(1, 2)))


def test_batched_ensemble_equals_a_loop_of_separate_networks():
    """One stacked model of m members = m networks trained one by one (forward, gradients, 20 GD steps)."""
    m, d, N = 5, 6, 8
    ens = perturbed(NTKEnsemble.symmetric(m, d, N, 3, gen(), dtype=torch.float64))
    singles = [NTKEnsemble([W[j:j + 1].clone() for W in ens.weights], [A[j:j + 1].clone() for A in ens.anchor])
               for j in range(m)]
    x = torch.randn(11, d, generator=gen(2), dtype=torch.float64)
    count = torch.randint(1, 4, (11,), generator=gen(3)).double()
    target = torch.randn(m, 11, generator=gen(4), dtype=torch.float64)
    torch.testing.assert_close(ens(x), torch.cat([s(x) for s in singles]))
    for j, s in enumerate(singles):
        torch.testing.assert_close(ens.member(torch.tensor([j]), x)[0], reference_f([W[j] for W in ens.weights], x))
        for g, gs in zip(ens.gradients(x, count, target, 0.1, 0.5), s.gradients(x, count, target[j:j + 1], 0.1, 0.5)):
            torch.testing.assert_close(g[j:j + 1], gs)
    ens.gd_steps(x, count, target, steps=20, lr=0.05, alpha=0.1, beta=0.5)
    for j, s in enumerate(singles):
        s.gd_steps(x, count, target[j:j + 1], steps=20, lr=0.05, alpha=0.1, beta=0.5)
        for W, Ws in zip(ens.weights, s.weights):
            torch.testing.assert_close(W[j:j + 1], Ws)


def test_gradient_features_equal_autograd_per_row():
    d, N = 6, 8
    net = perturbed(NTKEnsemble.symmetric(1, d, N, 3, gen(), dtype=torch.float64))
    x = torch.randn(5, d, generator=gen(7), dtype=torch.float64)
    factors = net.grad_factors(x)
    G = NTKEnsemble.flat(factors)[0]
    assert G.shape == (5, net.num_params)
    for b in range(5):
        ws = [W[0].clone().requires_grad_() for W in net.weights]
        reference_f(ws, x[b:b + 1])[0].backward()
        torch.testing.assert_close(G[b], torch.cat([W.grad.flatten() for W in ws]))
    D = [torch.rand(W.shape[1:], generator=gen(8), dtype=torch.float64) for W in net.weights]
    quad = NTKEnsemble.diag_quadratic(factors, D)[0]
    torch.testing.assert_close(quad, (G * G * torch.cat([v.flatten() for v in D])).sum(1))


def test_restart_returns_to_theta0():
    net = NTKEnsemble.symmetric(2, 4, 6, 3, gen())
    init = [W.clone() for W in net.weights]
    perturbed(net)
    net.restart()
    for W, W0 in zip(net.weights, init):
        assert torch.equal(W, W0)


def test_buffer_rows_counts_and_sums_match_each_instances_history():
    """Two instances with their own arm sets: each table holds its own distinct rows, counts and sums."""
    buf = ReplayBuffer(2, 3, 2, None, "cpu", torch.float64)
    rng = np.random.default_rng(0)
    arms = rng.normal(size=(2, 5, 3))
    hist = []
    for t in range(200):                                         # grows past the initial 64 slots
        k = np.array([rng.integers(4), rng.integers(5)])         # instance 0 never pulls arm 4
        y, z = rng.normal(size=2), torch.tensor(rng.normal(size=(2, 2)))
        buf.add(arms[[0, 1], k], y, z)
        hist.append((k, y, z))
    rows, count, ysum, zsum = buf.full()
    assert buf.size == 200 and buf.n_rows == [4, 5] and rows.shape == (2, 5, 3)
    assert count[0, 4] == 0 and ysum[0, 4] == 0 and not rows[0, 4].any()    # padding adds nothing
    for i in range(2):
        for k in range(buf.n_rows[i]):
            u = [v for v in range(buf.n_rows[i]) if np.allclose(rows[i, v].numpy(), arms[i, k])][0]
            mine = [(h[1][i], h[2][i]) for h in hist if h[0][i] == k]
            assert count[i, u].item() == len(mine)
            assert ysum[i, u].item() == pytest.approx(sum(y for y, _ in mine))
            torch.testing.assert_close(zsum[i, :, u], sum(z for _, z in mine))


def test_fifo_buffer_keeps_the_last_capacity_observations():
    buf = ReplayBuffer(2, 2, 1, 10, "cpu", torch.float64)
    rng = np.random.default_rng(1)
    hist = []
    for t in range(57):
        x = rng.normal(size=(2, 2))
        if t % 3 == 0:
            x[0] = [1.0, 2.0]                                    # instance 0: a repeated row and fresh rows
        y, z = rng.normal(size=2), torch.tensor(rng.normal(size=(2, 1)))
        buf.add(x, y, z)
        hist.append((x, y, z))
    assert buf.size == 10 and max(buf.n_rows) <= 20              # rows without data are compacted away
    x, y, _ = buf.sample(torch.arange(10).expand(2, 10))          # the slots, a ring: round t in slot t % 10
    for t, (hx, hy, _) in enumerate(hist[-10:], start=47):
        np.testing.assert_allclose(x[:, t % 10].numpy(), hx)
        np.testing.assert_allclose(y[:, t % 10].numpy(), hy)
    rows, count, ysum, zsum = buf.full()
    last = hist[-10:]
    for i in range(2):
        assert count[i].sum().item() == 10
        assert ysum[i].sum().item() == pytest.approx(sum(h[1][i] for h in last))
        assert zsum[i].sum().item() == pytest.approx(sum(h[2][i].item() for h in last))
    rep = [u for u in range(buf.n_rows[0]) if np.allclose(rows[0, u].numpy(), [1.0, 2.0])][0]
    assert count[0, rep].item() == sum(np.allclose(h[0][0], [1.0, 2.0]) for h in last)
    idx = torch.randint(buf.size, (2, 500), generator=gen())
    x, y, z = buf.sample(idx)
    for i in range(2):
        held = {round(h[1][i], 12) for h in last}
        assert {round(v, 12) for v in y[i].tolist()} <= held
        for xb, yb, zb in zip(x[i], y[i], z[i, 0]):             # a minibatch row keeps its own x and z
            assert any(np.allclose(xb.numpy(), h[0][i]) and round(h[1][i], 12) == round(yb.item(), 12)
                       and h[2][i, 0].item() == zb.item() for h in last)


def test_schedule():
    s = Schedule(every=3, warmup=5)
    assert [t for t in range(1, 16) if s.due(t)] == [5, 8, 11, 14]
    assert [t for t in range(1, 4) if Schedule().due(t)] == [1, 2, 3]


def test_adam_foreach_equals_the_per_tensor_loop_bit_for_bit():
    """`optim.Adam` takes torch's foreach path on the CPU too: the weights after 50 steps with
    weight decay on tensors of several shapes equal the per-tensor loop's exactly."""
    from agents.neural.optim import Adam

    gen = torch.Generator().manual_seed(3)
    shapes = [(10, 8, 5), (10, 8), (10, 1, 8), (10,)]
    ours = [torch.randn(s, generator=gen) for s in shapes]
    ref = [p.clone() for p in ours]
    adam, loop = Adam(ours, lr=1e-2, weight_decay=0.1), torch.optim.Adam(ref, lr=1e-2, weight_decay=0.1, foreach=False)
    assert adam.defaults["foreach"] is True
    for _ in range(50):
        grads = [torch.randn(s, generator=gen) for s in shapes]
        for p, q, g in zip(ours, ref, grads):
            q.grad = g.clone()
        adam.step(ours, grads)
        loop.step()
    for p, q in zip(ours, ref):
        assert torch.equal(p, q)
