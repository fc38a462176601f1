"""Linear Ensemble++: eqs. 2-4 against their unrolled closed form, Lemma 4.2 covariance tracking,
the reference / perturbation distributions of [S3] Table 1 / App. E, and the link to exact TS."""

import math

import numpy as np
import pytest

from agents.base import Streams
from agents.linear_ensemble import DISTRIBUTIONS, LinearEnsemblePP, sample_perturbation, sample_reference
from agents.linear import LinTS

D, K = 4, 6


def random_rounds(seed, rounds, n):
    rng = np.random.default_rng(seed)
    obs = rng.normal(size=(rounds, n, K, D)) / math.sqrt(D)
    actions = rng.integers(K, size=(rounds, n))
    rewards = rng.normal(size=(rounds, n))
    return obs, actions, rewards


def chosen(obs, actions):
    return np.take_along_axis(obs, actions[..., None, None], axis=-2)[..., 0, :]


@pytest.mark.parametrize("perturbation", DISTRIBUTIONS)
def test_updates_match_unrolled_closed_form(perturbation):
    """Sigma_t^{-1} = Sigma_0^{-1} + sum x x^T / sigma^2 and mu_t (eq. 2);
    A_t = Sigma_t (Sigma_0^{-1} A_0 + sum_s x_s z_s^T / sigma) (eq. 4 unrolled, = eq. 6)."""
    seed, n, M, T, prior_var, sigma = 3, 2, 5, 300, 2.5, 0.7
    agent = LinearEnsemblePP(M=M, perturbation=perturbation, prior_var=prior_var, sigma=sigma, seed=seed)
    obs, actions, rewards = random_rounds(0, T, n)
    for X, a, r in zip(obs, actions, rewards):
        agent.observe(X, a, r)                  # no act(): the draws are A_0 and the z's only
    rng = Streams(seed, n)                      # the agent's per-instance streams
    A0 = math.sqrt(prior_var / M) * rng.standard_normal((n, D, M))
    z = np.stack([sample_perturbation(perturbation, rng, n, M) for _ in range(T)])       # (T, N, M)
    x = chosen(obs, actions) / sigma
    precision = np.eye(D) / prior_var + np.einsum("tnd,tne->nde", x, x)
    Sigma = np.linalg.inv(precision)
    np.testing.assert_allclose(agent.Sigma_, Sigma, atol=1e-10)
    np.testing.assert_allclose(agent.mu_, (Sigma @ np.einsum("tnd,tn->nd", x, rewards / sigma)[:, :, None])[:, :, 0],
                               atol=1e-10)
    A = Sigma @ (A0 / prior_var + np.einsum("tnd,tnm->ndm", x, z))
    np.testing.assert_allclose(agent.A_, A, atol=1e-10)


@pytest.mark.parametrize("perturbation", ["gaussian", "sphere", "cube"])
def test_lemma_4_2_covariance_tracking(perturbation):
    """With M >> d: Sigma_t / 2 <= A_t A_t^T <= 3 Sigma_t / 2 along an adaptively chosen run."""
    agent = LinearEnsemblePP(M=1500, perturbation=perturbation, seed=0)
    rng = np.random.default_rng(1)
    theta = rng.normal(size=D)
    for t in range(300):
        X = rng.normal(size=(K, D)) / math.sqrt(D)
        a = agent.act(X)                          # actions depend on A: the sequential case
        agent.observe(X, a, X[a] @ theta + rng.normal())
        if t % 100 == 99:
            L = np.linalg.cholesky(agent.Sigma_[0])
            Linv = np.linalg.inv(L)
            ratio = np.linalg.eigvalsh(Linv @ agent.A_[0] @ agent.A_[0].T @ Linv.T)   # of A A^T vs Sigma
            assert 0.5 < ratio.min() and ratio.max() < 1.5, ratio


@pytest.mark.parametrize("kind", DISTRIBUTIONS)
def test_reference_distributions_are_isotropic(kind):
    M, n = 6, 40_000
    zeta = sample_reference(kind, np.random.default_rng(0), n, M, sparsity=2)
    np.testing.assert_allclose(zeta.mean(0), 0.0, atol=0.05)
    np.testing.assert_allclose(zeta.T @ zeta / n, np.eye(M), atol=0.08)
    z = sample_perturbation(kind, np.random.default_rng(1), 100, M)
    np.testing.assert_allclose(np.linalg.norm(z, axis=1), 1.0)


def test_reference_supports():
    rng, M = np.random.default_rng(0), 8
    np.testing.assert_allclose(np.linalg.norm(sample_reference("sphere", rng, 50, M), axis=1), math.sqrt(M))
    assert set(np.unique(sample_reference("cube", rng, 50, M))) == {-1.0, 1.0}
    coord = sample_reference("coordinate", rng, 50, M)
    assert ((coord != 0).sum(1) == 1).all() and np.allclose(np.abs(coord).sum(1), math.sqrt(M))
    sparse = sample_reference("sparse", rng, 50, M, sparsity=3)
    assert ((sparse != 0).sum(1) == 3).all() and np.allclose(np.abs(sparse[sparse != 0]), math.sqrt(M / 3))


def test_sampled_parameter_is_mu_plus_A_zeta():
    """Scores on obs = I are theta_t = mu + A zeta (eq. 3): mean mu, covariance A A^T."""
    agent = LinearEnsemblePP(M=6, seed=2)
    obs, actions, rewards = random_rounds(4, 100, 1)
    for X, a, r in zip(obs, actions, rewards):
        agent.observe(X, a, r)
    eye = np.eye(D)[None]
    samples = np.stack([agent._scores(eye)[0] for _ in range(6000)])
    AAt = agent.A_[0] @ agent.A_[0].T
    se = math.sqrt(AAt.diagonal().max() / len(samples))
    np.testing.assert_allclose(samples.mean(0), agent.mu_[0], atol=5 * se)
    np.testing.assert_allclose(np.cov(samples.T), AAt, atol=0.1 * np.abs(AAt).max())


def test_large_ensemble_approaches_thompson_sampling():
    """Same data: Ensemble++'s (mu_t, Sigma_t) is LinTS's posterior (lam = sigma^2 / prior_var), and
    with M large A_t A_t^T ~ Sigma_t, so mu + A zeta is approximately exact TS."""
    prior_var, sigma = 10.0, 0.5
    epp = LinearEnsemblePP(M=4000, prior_var=prior_var, sigma=sigma, seed=0)
    ts = LinTS(lam=sigma**2 / prior_var, sigma=sigma, seed=0)
    obs, actions, rewards = random_rounds(5, 200, 1)
    for X, a, r in zip(obs, actions, rewards):
        epp.observe(X, a, r)
        ts.observe(X, a, r)
    np.testing.assert_allclose(epp.mu_, ts.theta_, atol=1e-9)
    posterior = sigma**2 * ts.R_[0] @ ts.R_[0].T
    np.testing.assert_allclose(epp.Sigma_[0], posterior, atol=1e-9)
    np.testing.assert_allclose(epp.A_[0] @ epp.A_[0].T, posterior, atol=0.1 * np.abs(posterior).max())


@pytest.mark.parametrize("kwargs, word", [
    ({"M": 0}, "M"), ({"reference": "uniform"}, "reference"), ({"perturbation": "laplace"}, "perturbation"),
    ({"sparsity": 9}, "sparsity"), ({"prior_var": 0.0}, "prior_var"), ({"sigma": float("inf")}, "sigma"),
])
def test_bad_hyperparameters(kwargs, word):
    with pytest.raises(ValueError, match=word):
        LinearEnsemblePP(**kwargs)
