"""[S0]'s neural agents: the NTK network's symmetric initialisation, NeuralUCB's widths against an
explicit computation, Neural-ES members, batching and the warm-up."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import agents  # noqa: E402
from agents.base import Streams  # noqa: E402
from agents.neural_es import NeuralES, NeuralUCB, ntk_forward, ntk_init  # noqa: E402

K, D = 4, 3
TINY = dict(width=6, depth=3, steps=3, warmup=2)


def feed(agent, rounds, n=None, seed=0):
    rng = np.random.default_rng(seed)
    for _ in range(rounds):
        obs = rng.normal(size=(K, D) if n is None else (n, K, D))
        a = agent.act(obs)
        agent.observe(obs, a, rng.normal() if n is None else rng.normal(size=n))
    return rng


def test_symmetric_initialisation_outputs_zero():
    weights = ntk_init(Streams(0, 2), 2, 3, 5, 8, 4, torch.device("cpu"))
    assert [tuple(W.shape) for W in weights] == [(6, 10, 8), (6, 8, 8), (6, 8, 8), (6, 8, 1)]
    x = torch.randn(6, 7, 5)
    torch.testing.assert_close(ntk_forward(weights, x), torch.zeros(6, 7))
    # the 3 copies of an instance share theta_0, the 2 instances do not
    torch.testing.assert_close(weights[0][0], weights[0][2])
    assert not torch.allclose(weights[0][0], weights[0][3])


def test_neural_es_members_differ_only_by_their_perturbations():
    agent = NeuralES(m=4, sigma_R=0.0, seed=1, **TINY)
    feed(agent, 8)
    X = np.random.default_rng(3).normal(size=(1, K, D))
    with torch.no_grad():
        f = agent._outputs(X)[0]
    torch.testing.assert_close(f, f[:1].expand_as(f))          # identical without perturbations
    agent = NeuralES(m=4, sigma_R=0.5, seed=1, **TINY)
    feed(agent, 8)
    with torch.no_grad():
        f = agent._outputs(X)[0]
    assert not torch.allclose(f[0], f[1])


@pytest.mark.parametrize("diag", [True, False])
def test_neural_ucb_width_against_explicit_computation(diag):
    recorded = []

    class Recording(NeuralUCB):
        def _after_fit(self, x):
            g, _ = self.gradients(x[:, None, :])
            recorded.append(g[0, 0].clone())
            super()._after_fit(x)

    agent = Recording(diag=diag, lam=0.5, seed=2, **TINY)
    feed(agent, 6)
    X = np.random.default_rng(9).normal(size=(1, K, D))
    g, f = agent.gradients(X)
    # per-arm gradients by autograd, one arm at a time
    for k in range(K):
        for W in agent.weights_:
            W.grad = None
        out = ntk_forward(agent.weights_, torch.tensor(X[:, k:k + 1], dtype=torch.float32))
        out.sum().backward()
        explicit = torch.cat([W.grad.reshape(-1) for W in agent.weights_])
        torch.testing.assert_close(g[0, k], explicit)
        torch.testing.assert_close(f[0, k], out[0, 0].detach())
    p, N = g.shape[-1], agent.width
    Z = 0.5 * torch.eye(p, dtype=torch.float64)
    for gi in recorded:
        Z += torch.outer(gi, gi).double() / N
    Zinv = torch.diag(1.0 / torch.diag(Z)) if diag else torch.linalg.inv(Z)
    expected = torch.einsum("kp,pq,kq->k", g[0].double(), Zinv, g[0].double()) / N
    torch.testing.assert_close(agent._widths(g)[0].double(), expected, rtol=1e-4, atol=1e-7)


@pytest.mark.parametrize("name", ["Neural-ES", "Neural-PHE", "NeuralUCB", "NeuralTS"])
def test_batched_agent_equals_single_agents(name):
    seeds = [4, 5, 6]
    batched = agents.make(name, seed=seeds, **TINY)
    singles = [agents.make(name, seed=s, **TINY) for s in seeds]
    rng = np.random.default_rng(7)
    for _ in range(12):
        obs = rng.normal(size=(3, K, D))
        a = batched.act(obs)
        assert a.tolist() == [s.act(obs[i]) for i, s in enumerate(singles)]
        r = rng.normal(size=3)
        batched.observe(obs, a, r)
        for i, s in enumerate(singles):
            s.observe(obs[i], int(a[i]), float(r[i]))


def test_warm_up_pulls_each_arm_once():
    agent = NeuralES(warmup=K, **{k: v for k, v in TINY.items() if k != "warmup"})
    rng = np.random.default_rng(0)
    actions = []
    for _ in range(K):
        obs = rng.normal(size=(K, D))
        actions.append(agent.act(obs))
        agent.observe(obs, actions[-1], 0.0)
    assert actions == list(range(K))
