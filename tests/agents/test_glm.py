"""GLM agents: numerics against from-scratch formulas and scipy, the G-optimal design, and a
known-answer regret comparison on a simulated Bernoulli logistic bandit ([S1] §5.1 style)."""

import copy
import pickle

import numpy as np
import pytest
from scipy.optimize import minimize
from scipy.special import expit

import agents
from agents.design import g_optimal_design, kiefer_wolfowitz_value, round_design, round_robin
from agents.glm import GLMES, GLMTSL, glm_loss, theory_a
from agents.glm_batch import ArmStats, fit_glm

GLM_NAMES = ["GLM-TSL", "GLM-FPL", "GLM-UCB", "UCB-GLM", "GLM-ES", "GLM-ES-DT", "Logistic-UCB-1", "ada-OFU-ECOLog"]


def logistic_problem(K=50, d=5, seed=0):
    """[S1] §5.1: x ~ U[-1, 1]^d fixed, theta* ~ N(0, 3/d I) (var x^T theta* = 1; docs/papers.md, S1-A1)."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (K, d))
    theta = rng.normal(0, np.sqrt(3 / d), d)
    return X, expit(X @ theta), rng


def play(agent, X, p, rng, n):
    """Run n rounds on a fixed-arm Bernoulli bandit; return the pseudo-regret and the history."""
    regret, history = 0.0, []
    for _ in range(n):
        a = agent.act(X)
        y = float(rng.random() < p[a])
        agent.observe(X, a, y)
        regret += p.max() - p[a]
        history.append((a, y))
    return regret, history


def raw_loss(theta, X, y, lam):
    s = X @ theta
    return 0.5 * lam * theta @ theta + np.sum(np.logaddexp(0, s) - y * s)


# --- MLE ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("lam", [1e-3, 1.0])
def test_irls_on_sufficient_statistics_matches_scipy_on_raw_data(lam):
    rng = np.random.default_rng(1)
    arms = rng.uniform(-1, 1, (15, 4))
    idx = rng.integers(15, size=300)
    y = (rng.random(300) < expit(arms[idx] @ np.array([1.0, -2.0, 0.5, 0.0]))).astype(float)
    table = ArmStats(arms[None], cols=1)
    for i, r in zip(idx, y):
        table.add(np.array([i]), arms[i][None], np.array([[r]]))
    stats = table.view(0)
    theta, H = fit_glm(np.zeros((1, 4)), stats.X, stats.N, stats.S, lam)
    ref = minimize(raw_loss, np.zeros(4), args=(arms[idx], y, lam), method="BFGS", options={"gtol": 1e-10}).x
    np.testing.assert_allclose(theta[0], ref, atol=1e-5)
    w = expit(arms[idx] @ theta[0]) * (1 - expit(arms[idx] @ theta[0]))
    np.testing.assert_allclose(H[0], (arms[idx] * w[:, None]).T @ arms[idx] + lam * np.eye(4), atol=1e-10)
    assert glm_loss(theta, stats.X, stats.N, stats.S, lam)[0] == pytest.approx(raw_loss(theta[0], arms[idx], y, lam))


def test_batched_newton_solves_each_column_and_identity_link_is_ridge():
    rng = np.random.default_rng(2)
    X, N = rng.normal(size=(30, 3)), rng.integers(1, 5, 30).astype(float)
    S = rng.normal(size=(30, 4)) * N[:, None]
    theta, _ = fit_glm(rng.normal(size=(4, 3)), X, N, S, 0.5, link="identity")
    ridge = np.linalg.solve((X * N[:, None]).T @ X + 0.5 * np.eye(3), X.T @ S).T
    np.testing.assert_allclose(theta, ridge, atol=1e-10)
    Sb = rng.random((30, 4)) * N[:, None]  # valid Bernoulli sums
    theta, _ = fit_glm(np.zeros((4, 3)), X, N, Sb, 0.5)
    for j in range(4):
        np.testing.assert_allclose(theta[j], fit_glm(np.zeros((1, 3)), X, N, Sb[:, j:j + 1], 0.5)[0][0], atol=1e-10)


def test_newton_survives_separable_data_and_perturbed_sums_outside_range():
    X = np.eye(3)
    theta, _ = fit_glm(np.zeros((1, 3)), X, np.ones(3), np.array([[1.0], [0.0], [2.5]]), 1e-3)
    assert np.isfinite(theta).all() and theta[0, 0] > 5 and theta[0, 1] < -5


# --- incremental statistics equal the from-scratch formulas ---------------------------------------

def test_incremental_statistics_match_closed_form_after_random_rounds():
    X, p, rng = logistic_problem(K=30, d=4, seed=3)
    tsl, ucb = agents.make("GLM-TSL", seed=0), agents.make("UCB-GLM", seed=0)
    _, hist = play(tsl, X, p, rng, 300)
    A = X[[a for a, _ in hist]]
    y = np.array([r for _, r in hist])
    for a, r in hist:
        ucb.observe(X, a, r)
    st = tsl.stats_
    assert st.N.sum() == 300 and st.S.sum() == pytest.approx(y.sum())
    for i, arm in enumerate(st.X):
        rows = (A == arm).all(axis=1)
        assert st.N[i] == rows.sum() and st.S[i, 0] == pytest.approx(y[rows].sum())
    # MLE and Laplace precision H_t = sum mu'(x^T theta_bar) x x^T (+ lam I), [S1] eq. 5.
    ref = minimize(raw_loss, np.zeros(4), args=(A, y, tsl.lam), method="BFGS", options={"gtol": 1e-10}).x
    np.testing.assert_allclose(tsl.theta_, ref, atol=1e-5)
    w = expit(A @ tsl.theta_) * (1 - expit(A @ tsl.theta_))
    H = (A * w[:, None]).T @ A + tsl.lam * np.eye(4)
    np.testing.assert_allclose(tsl.root_ @ tsl.root_.T, np.linalg.inv(H), rtol=1e-8)
    # Sherman-Morrison V_t^{-1} against the direct inverse.
    np.testing.assert_allclose(ucb.V_inv_, np.linalg.inv(ucb.lam * np.eye(4) + A.T @ A), rtol=1e-7, atol=1e-12)
    np.testing.assert_allclose(ucb.theta_, ref, atol=1e-5)


def test_glm_es_members_minimise_their_perturbed_losses():
    X, p, rng = logistic_problem(K=20, d=3, seed=4)
    es = GLMES(m=4, warmup=30, seed=1)
    play(es, X, p, rng, 200)
    st = es.stats_
    assert st.S.shape == (st.n, 4) and st.N.sum() == 200
    for j in range(4):
        ref = minimize(lambda th: glm_loss(th[None], st.X, st.N, st.S[:, j:j + 1], 1.0)[0], np.zeros(3),
                       method="BFGS", options={"gtol": 1e-10}).x
        np.testing.assert_allclose(es.theta_[j], ref, atol=1e-5)
    # Perturbations are independent across members and kept fixed: member sums differ, their
    # common part is the observed rewards.
    assert np.ptp(st.S, axis=1).max() > 0
    zero = GLMES(m=3, sigma_R=0.0, warmup=0, seed=1)
    _, hist = play(zero, X, p, rng, 50)
    np.testing.assert_allclose(zero.stats_.S.sum(axis=0), sum(r for _, r in hist))


# --- G-optimal design ----------------------------------------------------------------------------

@pytest.mark.parametrize("K,d", [(20, 5), (50, 20), (7, 7)])
def test_frank_wolfe_design_satisfies_kiefer_wolfowitz(K, d):
    X = np.random.default_rng(K).normal(size=(K, d))
    pi = g_optimal_design(X, eps=0.01)
    assert pi.min() >= 0 and pi.sum() == pytest.approx(1)
    assert kiefer_wolfowitz_value(X, pi) <= d * 1.01 + 1e-9
    assert kiefer_wolfowitz_value(X, np.full(K, 1 / K)) >= d - 1e-9  # no design beats d


def test_design_on_rank_deficient_arms_uses_their_span():
    X = np.array([[1.0, 0, 0], [0, 1, 0], [1, 1, 0], [2, 0, 0]])
    pi = g_optimal_design(X)
    assert kiefer_wolfowitz_value(X, pi) <= 2 * 1.01


def test_rounding_and_round_robin_schedule():
    pi = np.array([0.5, 0.3, 0.2, 0.0])
    N = round_design(pi, 100, d=1, a=0.5)  # floor ceil(2 / 0.5 / 4) = 1 pull for every arm
    assert N.sum() == 101 and N[3] == 1 and N[0] > N[1] > N[2]
    seq = round_robin(N)
    np.testing.assert_array_equal(np.bincount(seq, minlength=4), N)
    np.testing.assert_array_equal(seq[:4], [0, 1, 2, 3])
    assert round_design(np.full(5, 0.2), 3, d=1, a=0.9).sum() == 5  # every arm floored at one pull


def test_glm_es_warmup_follows_the_design_then_samples_members():
    X, p, rng = logistic_problem(K=10, d=3, seed=5)
    es = GLMES(m=5, warmup=40, seed=0)
    _, hist = play(es, X, p, rng, 60)
    counts = round_design(g_optimal_design(X), 40, 3, 0.5)
    np.testing.assert_array_equal([a for a, _ in hist[: counts.sum()]], round_robin(counts))
    assert es.warmup_end_ == counts.sum()


# --- [S1] conventions ------------------------------------------------------------------------------

def test_theory_a_matches_s1_values():
    for d, a in [(5, 8.23), (10, 10.33), (20, 13.35)]:
        assert theory_a("GLM-TSL", d, 50_000) == pytest.approx(a, abs=0.01)
        assert theory_a("GLM-FPL", d, 50_000) == pytest.approx(a / 2, abs=0.01)
    assert GLMTSL(a="theory", horizon=50_000, dim=5).a_ == pytest.approx(8.23, abs=0.01)
    with pytest.raises(ValueError, match="horizon"):
        GLMTSL(a="theory")


@pytest.mark.parametrize("name", ["GLM-TSL", "GLM-FPL", "GLM-UCB", "UCB-GLM"])
def test_initial_exploration_pulls_d_linearly_independent_arms(name):
    X, p, rng = logistic_problem(K=30, d=6, seed=6)
    agent = agents.make(name, seed=0)
    _, hist = play(agent, X, p, rng, 6)
    assert np.linalg.matrix_rank(X[[a for a, _ in hist]]) == 6 and agent.rank_ == 6


# --- protocol -------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", GLM_NAMES)
def test_seeded_runs_repeat_and_copies_continue_identically(name):
    X, p, _ = logistic_problem(K=12, d=3, seed=7)
    kw = {"warmup": 20} if name.startswith("GLM-ES") else {}
    a1, a2 = agents.make(name, seed=3, **kw), agents.make(name, seed=3, **kw)
    h1 = play(a1, X, p, np.random.default_rng(0), 60)[1]
    assert play(a2, X, p, np.random.default_rng(0), 60)[1] == h1
    c1, c2 = copy.deepcopy(a1), pickle.loads(pickle.dumps(a1))
    futures = [play(c, X, p, np.random.default_rng(1), 20)[1] for c in (a1, c1, c2)]
    assert futures[0] == futures[1] == futures[2]
    a1.reset()
    assert play(a1, X, p, np.random.default_rng(0), 60)[1] == h1


@pytest.mark.parametrize("name", GLM_NAMES)
def test_bad_inputs_raise_clear_errors(name):
    agent = agents.make(name, seed=0)
    X = np.zeros((4, 3))
    with pytest.raises(ValueError, match="shape"):
        agent.act(np.zeros(3))
    agent.act(X)
    with pytest.raises(ValueError, match="d=2|dimension"):
        agent.act(np.zeros((4, 2)))
    with pytest.raises(ValueError, match="finite"):
        agent.act(np.full((4, 3), np.nan))
    with pytest.raises(ValueError, match="finite"):
        agent.observe(X, 0, float("inf"))
    with pytest.raises(ValueError, match="range"):
        agent.observe(X, 4, 1.0)


def test_bad_hyperparameters_raise():
    with pytest.raises(ValueError, match="link"):
        agents.make("GLM-TSL", link="probit")
    with pytest.raises(ValueError, match="lam"):
        agents.make("GLM-FPL", lam=0)
    with pytest.raises(ValueError, match="m must"):
        agents.make("GLM-ES", m=0)


# --- known answer ---------------------------------------------------------------------------------

def test_randomized_glm_agents_beat_uniform_and_theory_glm_ucb():
    """[S1] §5.1 / Fig. 1: informal GLM-TSL (a=1) and GLM-FPL (a=0.5) have far lower regret than
    uniform play and than GLM-UCB with its theory width. Fixed seeds, margins of 2x or more
    (measured at n = 1000: uniform / GLM-TSL 11, uniform / GLM-FPL 9.0, GLM-UCB / GLM-TSL 6.9,
    GLM-UCB / GLM-FPL 5.5)."""
    n, seeds = 1000, range(2)
    regret = {}
    for name in ["GLM-TSL", "GLM-FPL", "GLM-UCB", "uniform"]:
        total = 0.0
        for s in seeds:
            X, p, rng = logistic_problem(K=50, d=5, seed=100 + s)
            if name == "uniform":
                total += n * (p.max() - p.mean())
            else:
                kwargs = {"alpha": "theory"} if name == "GLM-UCB" else {}
                total += play(agents.make(name, seed=s, **kwargs), X, p, rng, n)[0]
        regret[name] = total / len(seeds)
    assert regret["GLM-TSL"] < regret["uniform"] / 5 and regret["GLM-FPL"] < regret["uniform"] / 5
    assert regret["GLM-TSL"] < regret["GLM-UCB"] / 2 and regret["GLM-FPL"] < regret["GLM-UCB"] / 2


def test_glm_es_learns_after_its_warmup():
    X, p, rng = logistic_problem(K=20, d=5, seed=8)
    es = agents.make("GLM-ES", warmup=100, seed=0)
    play(es, X, p, rng, 100)
    after = play(es, X, p, rng, 1000)[0]
    assert after < 1000 * (p.max() - p.mean()) / 4


# --- batched over N instances (every GLM agent) ---------------------------------------------------

S1_VARIANTS = [("GLM-TSL", {}), ("GLM-TSL", {"a": "theory", "horizon": 50_000}),
               ("GLM-FPL", {}), ("GLM-FPL", {"a": "theory", "horizon": 50_000}),
               ("GLM-UCB", {"horizon": 50_000}), ("GLM-UCB", {"alpha": 0.5}),
               ("UCB-GLM", {}), ("UCB-GLM", {"alpha": 0.5})]


def _lockstep(name, kw, seeds, rounds, obs, step):
    """Drive one batched agent and len(seeds) single agents on the same data from obs (N, K, d);
    assert that they act the same. `step(t, actions)` gives the next obs and the rewards (N,)."""
    batch = agents.make(name, seed=seeds, **kw)
    singles = [agents.make(name, seed=s, **kw) for s in seeds]
    for t in range(rounds):
        a = batch.act(obs)
        assert a.shape == (len(seeds),) and a.tolist() == [s.act(obs[i]) for i, s in enumerate(singles)], t
        nxt, r = step(t, a)
        batch.observe(obs, a, r)
        for i, s in enumerate(singles):
            s.observe(obs[i], int(a[i]), float(r[i]))
        obs = nxt
    return batch, singles


@pytest.mark.parametrize("name,kw", S1_VARIANTS)
def test_batched_equals_single_agents_on_the_s1_env(name, kw):
    """A batched agent seeded [s_1..s_N] acts exactly as N single agents seeded s_i on [S1]'s env
    (K = 100 fixed arms, d = 5, Bernoulli rewards), and its estimates are theirs bit for bit."""
    gym = pytest.importorskip("gymnasium")
    import gym_ctxbandits  # noqa: F401

    envs = gym.make_vec("CtxBandit/BernoulliLogistic-v0", num_envs=3, vectorization_mode="vector_entry_point", dim=5)
    obs, _ = envs.reset(seed=[0, 1, 2])
    batch, singles = _lockstep(name, kw, [4, 11, 4], 300, obs, lambda t, a: envs.step(a)[:2])
    np.testing.assert_array_equal(batch.theta_, np.stack([s.theta_ for s in singles]))
    assert batch.rank_.tolist() == [5, 5, 5] and batch.t_ == 300


@pytest.mark.parametrize("name,kw", [(n, {}) for n in ["GLM-TSL", "GLM-FPL", "GLM-UCB", "UCB-GLM", "Logistic-UCB-1",
                                                       "ada-OFU-ECOLog"]] + [("GLM-ES", {"warmup": 20, "m": 3})])
def test_batched_equals_single_agents_when_arm_sets_change(name, kw):
    """The general path: each round shows 5 arms of a per-instance pool of 150, so the tables grow
    past one block (64 rows), by different amounts in different instances."""
    rng = np.random.default_rng(9)
    T, rows = 150, np.arange(3)
    pools = rng.normal(size=(3, 150, 3)) / np.sqrt(3)
    obs = pools[rows[None, :, None], rng.integers(150, size=(T + 1, 3, 5))]      # (T + 1, 3, 5, 3)
    p = expit(obs @ rng.normal(size=(3, 3, 1))[None])[..., 0]                    # (T + 1, 3, 5)
    u = rng.random((T, 3))
    batch, singles = _lockstep(name, kw, [1, 2, 3], T, obs[0],
                               lambda t, a: (obs[t + 1], (u[t] < p[t, rows, a]).astype(float)))
    assert batch._stats.rows.max() > 64 and len(set(batch._stats.rows.tolist())) > 1
    for i, s in enumerate(singles):
        mine, theirs = batch.stats_[i], s.stats_
        np.testing.assert_array_equal(mine.X, theirs.X)
        np.testing.assert_array_equal(mine.N, theirs.N)
        np.testing.assert_array_equal(mine.S, theirs.S)
        assert mine.N.sum() == T and len({x.tobytes() for x in mine.X}) == mine.n   # one row per distinct arm
    np.testing.assert_array_equal(batch.theta_, np.stack([s.theta_ for s in singles]))


def test_batched_run_loop_equals_plain_loop_for_glm_agents():
    """gym_ctxbandits.run with batch > 1 takes the batched path (vector env + one agent) for the
    GLM agents (the doubling-trick wrapper included) and gives the plain loop's numbers."""
    pytest.importorskip("gymnasium")
    pd = pytest.importorskip("pandas")
    import gym_ctxbandits
    from gym_ctxbandits.experiment import AgentSpec, EnvSpec, Job, batchable

    env = EnvSpec("CtxBandit/BernoulliLogistic-v0", {"dim": 5})
    specs = [AgentSpec("GLM-TSL"), AgentSpec("GLM-FPL", {"a": "theory", "horizon": 1000}, "FPL-theory"),
             AgentSpec("GLM-UCB", {"alpha": 0.5}), AgentSpec("UCB-GLM"), AgentSpec("GLM-ES", {"warmup": 20}),
             AgentSpec("GLM-ES-DT", {"T0": 20, "warmup": 10}), AgentSpec("Logistic-UCB-1"), AgentSpec("ada-OFU-ECOLog")]
    assert all(batchable(Job(env, a, 0, 10)) for a in specs)
    kwargs = dict(seeds=[0, 5, 9], horizon=80, log_every=9)
    plain = gym_ctxbandits.run(env, specs, batch=1, **kwargs)
    batched = gym_ctxbandits.run(env, specs, batch=2, **kwargs)
    cols = ["env", "agent", "seed", "round", "reward", "regret", "cum_reward", "cum_regret"]
    pd.testing.assert_frame_equal(plain[cols], batched[cols])


@pytest.mark.parametrize("name,kw", [("GLM-ES", {"warmup": 40}), ("GLM-ES-DT", {"T0": 20, "warmup": 20}),
                                     ("Logistic-UCB-1", {}), ("ada-OFU-ECOLog", {})])
def test_batched_equals_single_agents_on_the_s0_env(name, kw):
    """GLM-ES (and its doubling trick) and the [S2] baselines seeded [s_1..s_N] act exactly as N
    single agents seeded s_i on [S0]'s logistic bandit (K = 50 fixed arms; d = 5, so that Alg. 3's
    floor keeps GLM-ES's warm-up short), GLM-ES through the warm-up and the ensemble sampling after
    it (and three restarts), with every estimate theirs bit for bit."""
    gym = pytest.importorskip("gymnasium")
    import gym_ctxbandits  # noqa: F401

    envs = gym.make_vec("CtxBandit/Logistic-v0", num_envs=3, vectorization_mode="vector_entry_point", dim=5)
    obs, _ = envs.reset(seed=[0, 1, 2])
    batch, singles = _lockstep(name, kw, [4, 11, 4], 250, obs, lambda t, a: envs.step(a)[:2])
    if name == "GLM-ES-DT":
        assert batch.epoch_ == 3
        batch, singles = batch.agent_, [s.agent_ for s in singles]
    if name.startswith("GLM-ES"):
        assert (batch.t_ > batch.warmup_end_).all()
    np.testing.assert_array_equal(batch.theta_, np.stack([s.theta_ for s in singles]))
    assert (batch.theta_ != 0).all()


def test_batched_statistics_match_closed_form_per_instance():
    X, p, rng = logistic_problem(K=30, d=4, seed=3)
    obs = np.stack([X, X[::-1]])
    ucb = agents.make("UCB-GLM", seed=[0, 1])
    pulls = [[], []]
    for _ in range(200):
        a = ucb.act(obs)
        y = (rng.random(2) < np.array([p[a[0]], p[::-1][a[1]]])).astype(float)
        ucb.observe(obs, a, y)
        for i in range(2):
            pulls[i].append((obs[i, a[i]], y[i]))
    for i in range(2):
        A = np.array([x for x, _ in pulls[i]])
        y = np.array([r for _, r in pulls[i]])
        np.testing.assert_allclose(ucb.V_inv_[i], np.linalg.inv(ucb.lam * np.eye(4) + A.T @ A), rtol=1e-7, atol=1e-12)
        ref = minimize(raw_loss, np.zeros(4), args=(A, y, ucb.lam), method="BFGS", options={"gtol": 1e-10}).x
        np.testing.assert_allclose(ucb.theta_[i], ref, atol=1e-5)


def test_batched_newton_reaches_the_perturbed_optimum_of_theory_glm_fpl():
    """[S1]'s theory GLM-FPL perturbation (a = 6.67 at d = 20) pushes the reward sums far outside
    [0, N_x]; only the ridge bounds the loss and the minimiser is huge. The Newton solver with its
    line search converges there (gradient certificate: L - L* <= ||grad||^2 / (2 lam) by
    lam-strong convexity), where Armijo backtracking stopped at 100 steps far from the optimum."""
    from agents.glm_batch import fit_glm_batched

    rng = np.random.default_rng(5)
    lam, n, K, d = 1e-3, 4, 100, 20
    X = rng.uniform(-1, 1, (n, 1, K, d))
    N = rng.integers(1, 40, (n, 1, K)).astype(float)
    S = rng.binomial(N.astype(int), 0.4) + theory_a("GLM-FPL", d, 50_000) * np.sqrt(N) * rng.standard_normal((n, 1, K))
    theta, H = fit_glm_batched(np.zeros((n, d)), X, N, S, lam, "logistic")
    for i in range(n):
        Xi, Ni, Si = X[i, 0], N[i, 0], S[i, 0][:, None]
        s = Xi @ theta[i]
        grad = lam * theta[i] + (Ni * expit(s) - Si[:, 0]) @ Xi
        certified_gap = grad @ grad / (2 * lam)
        assert np.abs(theta[i]).max() > 1e3 and certified_gap < 1e-3
        w = Ni * expit(s) * (1 - expit(s))
        np.testing.assert_allclose(H[i], (Xi * w[:, None]).T @ Xi + lam * np.eye(d), rtol=1e-10, atol=1e-12)
        old, _ = fit_glm(np.zeros((1, d)), Xi, Ni, Si, lam)
        assert glm_loss(theta[i][None], Xi, Ni, Si, lam)[0] <= glm_loss(old, Xi, Ni, Si, lam)[0] + 1e-6
    # Each instance's solution is the one it gets alone, bit for bit.
    for i in range(n):
        alone, _ = fit_glm_batched(np.zeros((1, d)), X[i:i + 1], N[i:i + 1], S[i:i + 1], lam, "logistic")
        np.testing.assert_array_equal(alone[0], theta[i])


def _ensemble_problem(seed, n=6, m=4, K=50, d=5):
    """n instances' tables (one block) with m perturbed reward-sum columns each, as GLM-ES keeps them."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (n, 1, K, d)) / np.sqrt(d)
    N = rng.integers(1, 40, (n, 1, K)).astype(float)
    S = rng.binomial(N.astype(int), 0.4)[..., None] + 0.1 * np.sqrt(N)[..., None] * rng.standard_normal((n, 1, K, m))
    return X, N, S


def _exact_members(X, N, S, lam):
    """Every member's MLE by the robust Newton solver from 0 (the reference)."""
    from agents.glm_batch import fit_glm_batched
    n, m = S.shape[0], S.shape[-1]
    theta = fit_glm_batched(np.zeros((n * m, X.shape[-1])), np.repeat(X, m, axis=0), np.repeat(N, m, axis=0),
                            np.moveaxis(S, -1, 1).reshape(n * m, *N.shape[1:]), lam, "logistic")[0]
    return theta.reshape(n, m, -1)


def test_chord_newton_reaches_every_members_mle_and_keeps_hessians(monkeypatch):
    """`fit_glm_ensemble` (GLM-ES's solver): with no kept Hessian it solves by the robust Newton and
    returns H^-1 at the optimum; after one more pull each, warm-started with that H^-1, it reaches
    the new optimum (the certificate ||grad||^2 <= lam tol) without forming one Hessian; a kept
    H^-1 that is far off (100 x too small) is replaced, and the result is still the optimum."""
    from agents.glm_batch import fit_glm_ensemble

    X, N, S = _ensemble_problem(7)
    n, m, d, lam = S.shape[0], S.shape[-1], X.shape[-1], 1.0
    theta, H_inv = fit_glm_ensemble(np.zeros((n, m, d)), np.full((n, m, d, d), np.nan), X, N, S, lam, "logistic")
    np.testing.assert_allclose(theta, _exact_members(X, N, S, lam), atol=1e-9)
    w = N[:, 0, :, None] * (lambda p: p * (1 - p))(1 / (1 + np.exp(-np.einsum("nkd,nmd->nkm", X[:, 0], theta))))
    H = np.einsum("nkd,nkm,nke->nmde", X[:, 0], w, X[:, 0]) + lam * np.eye(d)
    np.testing.assert_allclose(H_inv, np.linalg.inv(H), rtol=1e-8)
    N2, S2 = N.copy(), S.copy()
    N2[:, 0, 3] += 1
    S2[:, 0, 3] += 1.0 + 0.1 * np.arange(m)
    exact = _exact_members(X, N2, S2, lam)
    invs = []
    inv = np.linalg.inv
    monkeypatch.setattr(np.linalg, "inv", lambda a: invs.append(len(a)) or inv(a))
    warm, _ = fit_glm_ensemble(theta, H_inv.copy(), X, N2, S2, lam, "logistic")   # H_inv is updated in place
    assert invs == []                                     # chord steps only: no Hessian formed
    np.testing.assert_allclose(warm, exact, atol=1e-6)      # ||theta - theta*|| <= ||grad|| / lam <= 1e-6
    grad = lam * warm + np.einsum("nkd,nkm->nmd", X[:, 0], N2[:, 0, :, None] / (1 + np.exp(
        -np.einsum("nkd,nmd->nkm", X[:, 0], warm))) - S2[:, 0])
    assert ((grad ** 2).sum(axis=-1) <= lam * 1e-12).all()
    off, _ = fit_glm_ensemble(theta, H_inv / 100, X, N2, S2, lam, "logistic")
    assert invs                                           # the bad H^-1 was refreshed
    np.testing.assert_allclose(off, exact, atol=1e-6)


def test_chord_newton_instances_are_independent():
    """A batch of instances computes bit for bit what each instance computes alone, whichever path
    (chord, refresh, robust) each one takes."""
    from agents.glm_batch import fit_glm_ensemble

    X, N, S = _ensemble_problem(8)
    n, m, d = S.shape[0], S.shape[-1], X.shape[-1]
    theta, H_inv = fit_glm_ensemble(np.zeros((n, m, d)), np.full((n, m, d, d), np.nan), X, N, S, 1.0, "logistic")
    N[:, 0, 0] += 1
    S[:, 0, 0] += 1.0
    H_inv[1] /= 100                                       # instance 1 refreshes, instance 2 starts cold
    H_inv[2] = np.nan
    theta[2] = 0.0
    both = fit_glm_ensemble(theta, H_inv.copy(), X, N, S, 1.0, "logistic")     # H_inv is updated in place
    for i in range(n):
        alone = fit_glm_ensemble(theta[i:i + 1], H_inv[i:i + 1].copy(), X[i:i + 1], N[i:i + 1], S[i:i + 1], 1.0,
                                 "logistic")
        np.testing.assert_array_equal(alone[0][0], both[0][i])
        np.testing.assert_array_equal(alone[1][0], both[1][i])


def test_batched_agent_validates_seeds_and_shapes():
    agent = agents.make("GLM-TSL", seed=[1, 2])
    with pytest.raises(ValueError, match="2 seeds"):
        agent.act(np.zeros((3, 4, 2)))
    agent = agents.make("GLM-UCB", seed=0)
    X = np.random.default_rng(0).normal(size=(2, 4, 3))
    a = agent.act(X)
    with pytest.raises(ValueError, match="shape"):
        agent.act(X[0])                           # mode fixed by the first obs
    with pytest.raises(ValueError, match="actions"):
        agent.observe(X, a.astype(float), np.zeros(2))
    with pytest.raises(ValueError, match="finite"):
        agent.observe(X, a, np.array([0.0, np.nan]))
    with pytest.raises(ValueError, match="seed"):
        agents.make("GLM-FPL", seed=[1.5])
