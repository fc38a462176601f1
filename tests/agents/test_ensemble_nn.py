"""[S3]'s neural agents: the Ensemble++ loss against its equations, gradient routing, batching."""

import copy

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import agents  # noqa: E402
from agents.neural.ensemble_pp import EnsemblePP  # noqa: E402

K, D = 5, 4


def started(agent, n=None, rounds=3, seed=0):
    """An agent that has seen a few rounds of random data (its networks exist)."""
    rng = np.random.default_rng(seed)
    shape = (K, D) if n is None else (n, K, D)
    for _ in range(rounds):
        obs = rng.normal(size=shape)
        a = agent.act(obs)
        agent.observe(obs, a, rng.normal() if n is None else rng.normal(size=n))
    return agent


def test_symmetrised_loss_is_eq14_and_eq8():
    agent = started(EnsemblePP(M=3, sigma_z=0.5, prior_scale=0.7, posterior_scale=1.3, hidden=(6,), seed=1))
    rng = np.random.default_rng(2)
    x = torch.tensor(rng.normal(size=(1, 7, D)), dtype=torch.float32)
    y = torch.tensor(rng.normal(size=(1, 7)), dtype=torch.float32)
    z = torch.tensor(rng.normal(size=(1, 7, 3)), dtype=torch.float32)
    with torch.no_grad():
        loss = agent._loss(x, y, z).item()
        f = agent.net_(x)[0].numpy().astype(float)                           # x~ (B, D')
        b, th, th0 = (t[0].numpy().astype(float) for t in (agent.b_, agent.theta_, agent.theta0_))
    zn, yn = z[0].numpy().astype(float), y[0].numpy().astype(float)
    base = yn - f @ b
    heads = 0.5 * (0.5 * zn - 0.7 * f @ th0.T - 1.3 * f @ th.T) ** 2        # (B, M)
    eq14 = np.mean(0.5 * base ** 2) + heads.mean()
    assert loss == pytest.approx(eq14, rel=1e-5)
    # eq. 8 with the Coordinate update: regress f(x, beta e_m) on y + sigma_z beta z_m, beta = +-1, averaged
    eq8 = np.mean([0.5 * (yn + beta * 0.5 * zn[:, m] - (f @ b + beta * (1.3 * f @ th[m] + 0.7 * f @ th0[m]))) ** 2
                   for m in range(3) for beta in (1, -1)])
    assert eq8 == pytest.approx(eq14, rel=1e-5)


def test_gradients_follow_eqs_15_to_17():
    """The extractor and base head learn from the rewards only; the heads from their perturbations only."""
    agent = started(EnsemblePP(M=4, hidden=(8,), seed=3))
    rng = np.random.default_rng(4)
    x = torch.tensor(rng.normal(size=(1, 6, D)), dtype=torch.float32)

    def grads(y, z):
        for p in agent.opt_.param_groups[0]["params"]:
            p.grad = None
        agent._loss(x, torch.tensor(y, dtype=torch.float32), torch.tensor(z, dtype=torch.float32)).sum().backward()
        return {"w": agent.net_.params[0].grad.clone(), "b": agent.b_.grad.clone(), "theta": agent.theta_.grad.clone()}

    y, z = rng.normal(size=(1, 6)), rng.normal(size=(1, 6, 4))
    g = grads(y, z)
    g_y = grads(y + 1.0, z)                       # other rewards: same head gradients
    g_z = grads(y, z + 1.0)                       # other perturbations: same extractor and base gradients
    torch.testing.assert_close(g["theta"], g_y["theta"])
    torch.testing.assert_close(g["w"], g_z["w"])
    torch.testing.assert_close(g["b"], g_z["b"])
    assert not torch.allclose(g["b"], g_y["b"]) and not torch.allclose(g["theta"], g_z["theta"])


@pytest.mark.parametrize("name", ["Ensemble++", "Ensemble+", "NeuralGreedy", "EpiNet"])
def test_an_update_is_adam_on_the_mean_loss_plus_ridge_penalty_over_n(name):
    """Weight decay as in the authors' code: lambda / n on the mean loss of the n points held."""
    agent = started(agents.make(name, hidden=(6,), weight_decay=0.3, batch_size=4, seed=7), rounds=5)
    assert agent.buffer_.size == 5
    rng = np.random.default_rng(8)
    obs, r = rng.normal(size=(K, D)), 0.4
    a = agent.act(obs)
    before = [p.detach().clone() for p in agent.params_]
    # Replay the update by hand on a copy: Adam's step on the stated objective, same random draws.
    twin = copy.deepcopy(agent)
    twin.buffer_.add(obs[a][None], np.array([r]), twin._perturbation(1))
    xb, yb, zb = twin._minibatch()
    twin.opt_.zero_grad()
    penalty = 0.3 / (2 * 6) * sum((p ** 2).sum() for p in twin.params_)
    (twin._loss(xb, yb, zb).sum() + penalty).backward()
    twin.opt_.step()
    agent.observe(obs, a, r)
    for p, q in zip(agent.params_, twin.params_):
        torch.testing.assert_close(p, q)
    assert any(not torch.equal(p, q) for p, q in zip(agent.params_, before))


def test_ensemble_spread_shrinks_with_data():
    """Posterior contraction: with data the ensemble heads cancel the prior heads where the data
    lies, so the spread of f(x, zeta) over zeta keeps falling. (With Adam's coupled weight decay 0.01
    it stalled: the decay held the heads near zero.)"""
    rng = np.random.default_rng(0)
    agent = EnsemblePP(hidden=(16,), lr=1e-2, batch_size=32, seed=0)
    X = rng.normal(size=(K, D))

    def spread():
        with torch.no_grad():
            return float(torch.stack([agent._forward_scores(torch.tensor(X[None], dtype=torch.float32))
                                      for _ in range(64)]).std(0).mean())

    agent.act(X)
    start = spread()
    for _ in range(2000):
        obs = rng.normal(size=(K, D))
        a = agent.act(obs)
        agent.observe(obs, a, float(obs[a, 0]) + 0.1 * rng.normal())
    assert spread() < 0.05 * start  # measured 0.026 x start (0.014 x after 3000 rounds); 0.09 x with Adam's coupled weight decay


def test_prior_heads_are_fixed_and_unit_norm():
    agent = started(EnsemblePP(hidden=(8,), lr=1e-2, seed=0), rounds=2)
    before = agent.theta0_.clone()
    started(agent, rounds=20, seed=1)
    torch.testing.assert_close(agent.theta0_, before)
    torch.testing.assert_close(before.norm(dim=-1), torch.ones(1, 8))


def test_ensemble_pp_explores_where_greedy_locks_in():
    """Known answer, wide margin: 10 fixed unit arms in R^5, linear mean rewards, noise sd 1, 600
    rounds, 8 instances. With sigma_z at the noise scale (the theory's choice) Ensemble++ has about
    a third of the regret of the greedy network, which locks onto poor arms on some instances
    (measured 78 vs 223)."""
    rng = np.random.default_rng(100)
    X = rng.normal(size=(8, 10, 5))                                   # 8 instances as one batched agent
    X /= np.linalg.norm(X, axis=-1, keepdims=True)
    theta = rng.normal(size=(8, 5))
    mu = np.einsum("nkd,nd->nk", X, theta / np.linalg.norm(theta, axis=1, keepdims=True))

    def regret(name, **kwargs):
        agent = agents.make(name, seed=list(range(8)), hidden=(32, 32), lr=1e-2, batch_size=32, **kwargs)
        noise = np.random.default_rng(1).normal(size=(600, 8))
        total = np.zeros(8)
        for t in range(600):
            a = agent.act(X)
            agent.observe(X, a, mu[np.arange(8), a] + noise[t])
            total += mu.max(axis=1) - mu[np.arange(8), a]
        return total

    ens, greedy = regret("Ensemble++", sigma_z=1.0).mean(), regret("NeuralGreedy").mean()
    assert ens < 0.7 * greedy, (ens, greedy)
