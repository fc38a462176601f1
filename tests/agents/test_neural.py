"""The neural agents of [S0] (agents.neural): conformance with tiny networks, NeuralUCB/NeuralTS
widths against explicit gradients (diagonal and full Z), Neural-ES's members and eq. 4.4,
Neural-PHE's fresh perturbations, the doubling wrapper, bad input, the lazy registry, a
known-answer run and the benchmark's smoke run."""

import importlib
import math
import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
from agents.checks import check_agent  # noqa: E402
from agents.neural import LAZY, NAMES, TOKENS  # noqa: E402
from agents.neural.es import NeuralES, NeuralESDT  # noqa: E402
from agents.neural.phe import NeuralPHE  # noqa: E402
from agents.neural.ucb_ts import NeuralTS, NeuralUCB  # noqa: E402

ROOT = Path(__file__).parents[2]
K, D = 4, 3


pytestmark = pytest.mark.usefixtures("one_torch_thread")


def history(rounds=12, seed=0, k=K, d=D):
    """Random (obs, action, reward) rounds."""
    rng = np.random.default_rng(seed)
    return [(rng.normal(size=(k, d)), int(rng.integers(k)), float(rng.normal())) for _ in range(rounds)]


def feed(agent, rounds):
    for obs, a, r in rounds:
        agent.observe(obs, a, r)
    return agent


def reference_f(weights, x):
    """f(x) = sqrt(N) W_L relu(... relu(W_1 x)) of one network given its (in, out) weights."""
    h = x
    for W in weights[:-1]:
        h = torch.relu(h @ W)
    return math.sqrt(weights[0].shape[-1]) * (h @ weights[-1])[..., 0]


def autograd_g(agent, x_in, member=0):
    """g(x; theta) = grad_theta f(x; theta) of one member, flattened layer by layer: (p,)."""
    ws = [W[member].detach().clone().requires_grad_() for W in agent.net_.weights]
    reference_f(ws, x_in).backward()
    return torch.cat([W.grad.flatten() for W in ws]), reference_f([W.detach() for W in ws], x_in).item()


def net_input(agent, X):
    return torch.from_numpy(agent._input(np.asarray(X)))


# -- conformance with tiny networks (tests/agents/test_checks.py runs the registry at defaults) ----
TINY = dict(width=4, steps=2)
VARIANTS = {
    "Neural-ES": dict(m=3, warmup=4),
    "Neural-ES-DT": dict(T0=6, b=2.0, warmup=2),
    "NeuralUCB": {},
    "NeuralTS": {},
    "Neural-PHE": {},
    "Neural-ES minibatch+FIFO": dict(m=3, warmup=2, batch_size=5, buffer_size=10, update_every=2, warm_start=False),
    "NeuralUCB full Z": dict(diag=False, dtype="float64"),
    "NeuralTS full Z": dict(diag=False),
    "Neural-PHE minibatch+FIFO": dict(batch_size=5, buffer_size=7),
}


@pytest.mark.parametrize("label", VARIANTS)
def test_conformance_suite_with_tiny_networks(label):
    name = label.split(" ")[0]
    kwargs = {**TINY, **VARIANTS[label]}

    def factory(**kw):
        return LAZY[name](**kwargs, **kw)

    factory.__name__ = label
    check_agent(factory)


# -- NeuralUCB / NeuralTS: Z and the widths against explicit gradients ---------------------------
@pytest.mark.parametrize("diag", [True, False])
def test_neural_ucb_and_ts_widths_equal_the_explicit_formula(diag):
    """Z_t = lam I + sum_s g_s g_s^T / N with g_s = g(x_s; theta_{s-1}) (autograd); U = f + nu sqrt(g^T Z^-1 g / N)."""
    lam, nu, N = 0.7, 0.3, 6
    agent = NeuralUCB(nu=nu, lam=lam, diag=diag, width=N, depth=3, steps=3, lr=0.05, dtype="float64", seed=1)
    p = None
    Z = None
    for obs, a, r in history(10, seed=2):
        agent.act(obs)                                     # builds the network on the first round
        g, _ = autograd_g(agent, net_input(agent, obs)[a])   # at theta_{t-1}: before this round's training
        if Z is None:
            p = g.numel()
            Z = lam * torch.eye(p, dtype=torch.float64)
        Z += torch.outer(g, g) / N
        agent.observe(obs, a, r)
    X = np.random.default_rng(3).normal(size=(K, D))
    gs, fs = zip(*(autograd_g(agent, x) for x in net_input(agent, X)))
    G, f = torch.stack(gs), torch.tensor(fs, dtype=torch.float64)
    if diag:
        stored = torch.cat([Zl.flatten() for Zl in agent.Z_])
        torch.testing.assert_close(stored, torch.diagonal(Z))
        var = (G * G / torch.diagonal(Z)).sum(1) / N       # diagonal approximation of Z
    else:
        torch.testing.assert_close(agent.Zinv_[0], torch.linalg.inv(Z))     # Sherman-Morrison == explicit inverse
        var = torch.einsum("kp,pq,kq->k", G, torch.linalg.inv(Z), G) / N
    with torch.no_grad():
        torch.testing.assert_close(agent._scores(net_input(agent, X)[None])[0], f + nu * var.sqrt())
        mean, variance = agent._mean_and_variance(net_input(agent, X)[None])
    torch.testing.assert_close(mean[0], f)
    torch.testing.assert_close(variance[0], var)
    assert p == agent.net_.num_params


def test_neural_ts_samples_around_f_with_variance_nu2_lam_sigma2():
    agent = feed(NeuralTS(nu=0.8, lam=0.5, width=6, steps=2, dtype="float64", seed=0), history(8))
    X = net_input(agent, np.random.default_rng(1).normal(size=(K, D)))[None]
    with torch.no_grad():
        f, var = (v[0] for v in agent._mean_and_variance(X))
        draws = torch.stack([agent._scores(X)[0] for _ in range(4000)])
    torch.testing.assert_close(draws.mean(0), f, atol=0.05 * (0.8**2 * 0.5 * var).sqrt().max().item(), rtol=0)
    torch.testing.assert_close(draws.var(0), 0.8**2 * 0.5 * var, rtol=0.1, atol=0)


# -- Neural-ES ----------------------------------------------------------------------------------------
def test_neural_es_members_are_identical_without_perturbations():
    """sigma_R = 0: the m members (same theta_0, same data) stay equal and act like the m = 1 greedy network."""
    kwargs = dict(sigma_R=0.0, width=6, steps=4, lr=0.05, warmup=3, seed=4)
    ens, greedy = NeuralES(m=4, **kwargs), NeuralES(m=1, **kwargs)
    for obs, _, r in history(15, seed=5):
        a = ens.act(obs)
        assert a == greedy.act(obs)
        ens.observe(obs, a, r)
        greedy.observe(obs, a, r)
    for W, Wg in zip(ens.net_.weights, greedy.net_.weights):
        for j in range(4):
            assert torch.equal(W[j], W[0])
        torch.testing.assert_close(W[:1], Wg)


def test_each_member_is_a_network_trained_on_its_own_perturbed_targets():
    """Member j of Neural-ES == one network (same theta_0) fed the rewards Y_l + Z^j_l."""
    rounds = history(14, seed=6)
    kwargs = dict(width=6, steps=5, lr=0.05, warmup=3, dtype="float64", seed=7)
    ens = feed(NeuralES(m=3, sigma_R=0.4, **kwargs), rounds)
    Z = ens.buffer_.obs_z[0, :, : len(rounds)]               # Z^j_l, drawn once, kept
    assert Z.std().item() == pytest.approx(0.4, rel=0.5)
    for j in range(3):
        single = NeuralES(m=1, sigma_R=0.0, **kwargs)
        feed(single, [(obs, a, r + Z[j, i].item()) for i, (obs, a, r) in enumerate(rounds)])
        for W, Ws in zip(ens.net_.weights, single.net_.weights):
            torch.testing.assert_close(W[j], Ws[0])
    assert not torch.allclose(ens.net_.weights[0][0], ens.net_.weights[0][1])


@pytest.mark.parametrize("mean_loss", [True, False])
def test_neural_es_update_is_gradient_descent_on_eq_4_4(mean_loss):
    """One update = theta^j - lr grad L(theta^j),
    L = 1/2 sum_l (f(X_l) - Y_l - Z^j_l)^2 + 1/2 lam N ||theta - theta_0||^2 ([S0] eq. 4.4)
    (divided by the n observations when mean_loss), by autograd over the raw history."""
    lam, lr, N, m = 0.8, 0.02, 6, 2
    rounds = history(9, seed=8)
    agent = feed(NeuralES(m=m, sigma_R=0.3, lam=lam, lr=lr, width=N, steps=1, warmup=2, mean_loss=mean_loss,
                          dtype="float64", seed=9), rounds[:-1])
    before = [W.clone() for W in agent.net_.weights]
    theta0 = [A[0] for A in agent.net_.anchor]
    agent.observe(*rounds[-1])
    n = len(rounds)
    x = torch.stack([net_input(agent, obs)[a] for obs, a, _ in rounds])
    y = torch.tensor([r for *_, r in rounds], dtype=torch.float64)
    Z = agent.buffer_.obs_z[0, :, :n]
    for j in range(m):
        ws = [W[j].clone().requires_grad_() for W in before]
        loss = 0.5 * ((reference_f(ws, x) - y - Z[j]) ** 2).sum()
        loss = loss + 0.5 * lam * N * sum(((W - A) ** 2).sum() for W, A in zip(ws, theta0))
        (loss / n if mean_loss else loss).backward()
        for W, Wb in zip(agent.net_.weights, ws):
            torch.testing.assert_close(W[j], Wb.detach() - lr * Wb.grad)


def test_warmup_is_round_robin_then_one_member_acts():
    agent = NeuralES(m=3, width=4, steps=1, warmup=6, seed=0)
    obs = np.random.default_rng(0).normal(size=(K, D))
    actions = []
    for _ in range(6):
        actions.append(agent.act(obs))
        agent.observe(obs, actions[-1], 0.0)
    assert actions == [0, 1, 2, 3, 0, 1]
    assert agent.buffer_.size == 6 and agent.buffer_.n_rows == [K]      # the warm-up data are kept


def test_prior_sd_perturbs_the_anchors_not_the_start():
    agent = NeuralES(m=3, prior_sd=0.5, width=4, steps=1, warmup=1, seed=0)
    agent.act(np.ones((K, D)))
    A = agent.net_.anchor[0]
    assert A.shape[0] == 3 and not torch.allclose(A[0], A[1])
    assert torch.equal(agent.net_.weights[0][0], agent.net_.weights[0][1])   # all start at theta_0


# -- Neural-PHE ---------------------------------------------------------------------------------------
def test_neural_phe_redraws_the_whole_history_perturbation_each_update():
    """Full batch: a row pulled n_u times gets target sum_l r_l + N(0, n_u nu^2), fresh every call."""
    agent = NeuralPHE(nu=0.5, width=4, steps=1, dtype="float64", seed=0)
    obs = np.random.default_rng(1).normal(size=(K, D))
    for t in range(40):
        agent.observe(obs, t % 3, 1.0)
    _, count, y_sum, z_sum = agent.buffer_.full()
    draws = torch.stack([agent._targets(y_sum, z_sum, count)[0, 0] for _ in range(3000)])
    torch.testing.assert_close(draws.mean(0), y_sum[0], atol=0.3, rtol=0)
    torch.testing.assert_close(draws.var(0), count[0] * 0.25, rtol=0.1, atol=0)


# -- the doubling wrapper -----------------------------------------------------------------------------
def test_neural_es_dt_restarts_with_log_scaled_members_and_perturbation():
    dt = NeuralESDT(T0=5, b=2.0, width=4, steps=1, warmup=2, lr=0.03, seed=0)
    obs = np.random.default_rng(0).normal(size=(K, D))
    seen = {}
    for _ in range(21):
        seen[dt.epoch_] = (dt.tau_, dt.agent_)
        dt.observe(obs, dt.act(obs), 1.0)
    assert [tau for tau, _ in seen.values()] == [5, 5, 10, 20]        # T_i = 5, 10, 20, 40
    for tau, agent in seen.values():
        assert isinstance(agent, NeuralES)
        assert agent.m == max(1, round(2 * math.log(tau))) and agent.sigma_R == pytest.approx(0.02 * math.log(tau))
        assert (agent.width, agent.steps, agent.warmup, agent.lr) == (4, 1, 2, 0.03)
    assert dt.agent_.t_ == 1                                           # restarted from scratch after round 20


# -- bad input ----------------------------------------------------------------------------------------
def test_bad_hyperparameters_and_inputs_raise_clear_errors():
    with pytest.raises(ValueError, match="even"):
        NeuralES(width=5)
    with pytest.raises(ValueError, match="dtype"):
        NeuralUCB(dtype="float16")
    with pytest.raises(ValueError, match="lam"):
        NeuralTS(lam=0.0)
    with pytest.raises(ValueError, match="m must"):
        NeuralES(m=0)
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="cuda"):
            NeuralES(device="cuda")
    assert NeuralES(device="auto")._dev.type in ("cpu", "cuda")
    with pytest.raises(ValueError, match="odd"):
        NeuralPHE(duplicate_input=False).act(np.ones((K, 3)))
    NeuralPHE(duplicate_input=False, width=4, steps=1, seed=0).act(np.ones((K, 4)))


def test_random_streams_stay_on_the_cpu_whatever_the_device(monkeypatch):
    """The torch generators live on the CPU for every device (a CUDA generator seeded alike draws
    other numbers), also after a pickle round trip, so a run's draws do not depend on the device.
    CUDA is faked: the agents are built for it and seeded, and no tensor reaches the device."""
    from agents.neural.fpl import DeepFPL

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    for agent in (NeuralES(device="cuda"), NeuralPHE(device="cuda:0"), DeepFPL(device="auto")):
        agent._seed([np.random.SeedSequence(0), np.random.SeedSequence(1)])
        twin = pickle.loads(pickle.dumps(agent))
        assert agent._dev.type == "cuda"
        assert [g.device.type for g in agent.gens_ + twin.gens_] == ["cpu"] * 4
        assert all(torch.equal(a.get_state(), b.get_state()) for a, b in zip(agent.gens_, twin.gens_))


def test_mps_is_checked_and_has_no_float64(monkeypatch):
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: False)
    with pytest.raises(ValueError, match="MPS is not available on this machine"):
        NeuralES(device="mps")
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: True)
    assert NeuralES(device="mps")._dev.type == "mps"
    with pytest.raises(ValueError, match="dtype='float64' is not available on device 'mps'"):
        NeuralES(device="mps", dtype="float64")


def test_nan_scores_raise_a_clear_error():
    agent = feed(NeuralUCB(width=4, steps=1, seed=0), history(3))
    agent.net_.weights[1].fill_(float("nan"))
    with pytest.raises(FloatingPointError, match="NaN"):
        agent.act(np.ones((K, D)))


# -- registry -----------------------------------------------------------------------------------------
def test_lazy_registry_entries_build_the_agents(monkeypatch):
    import agents.base

    monkeypatch.setattr(agents.base, "REGISTRY", {})            # register into a fresh registry
    loaded = "agents.neural.registry" in sys.modules
    registry = importlib.import_module("agents.neural.registry")
    if loaded:
        importlib.reload(registry)
    assert set(agents.base.REGISTRY) == set(NAMES)
    assert all(agents.REGISTRY[name] is LAZY[name] for name in NAMES)     # what `import agents` registered
    expected = {"Neural-ES": NeuralES, "Neural-ES-DT": NeuralESDT, "NeuralUCB": NeuralUCB, "NeuralTS": NeuralTS,
                "Neural-PHE": NeuralPHE}
    for name, cls in expected.items():
        assert type(agents.base.make(name, seed=0)) is cls and LAZY[name].cls() is cls
        assert agents.base.REGISTRY[name].batched is cls.batched is True


def test_import_agents_needs_no_torch():
    """`import agents` registers every agent, the torch ones lazily: torch is not imported."""
    code = "import sys, agents; assert len(agents.REGISTRY) >= 40; assert 'torch' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


def test_without_torch_import_agents_works_and_make_says_what_to_install():
    code = ("import sys; sys.modules['torch'] = None\n"
            "import agents\n"
            "assert 'Neural-ES' in agents.REGISTRY\n"
            "try:\n    agents.make('Neural-ES', seed=0)\nexcept ImportError as e:\n    print('ImportError:', e)\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert 'ImportError:' in proc.stdout and 'pip install -e ".[neural]"' in proc.stdout


# -- known answer -------------------------------------------------------------------------------------
def test_neural_es_beats_the_greedy_network_on_a_quadratic_bandit():
    """Known answer, wide margin: [S0]'s quadratic bandit at d = 5, K = 10, noise sd 0.1, T = 1000, seeds 0-3:
    Neural-ES (m = 10, sigma_R = 0.1) has well under the regret of the same network without perturbations
    (m = 1, sigma_R = 0; measured 10 vs 25). The four seeds run as one batched agent (the conformance
    suite holds it to four single agents, action for action)."""
    import gymnasium as gym

    import gym_ctxbandits  # noqa: F401

    def regret(m, sigma_R, seeds=range(4)):
        envs = [gym.make("CtxBandit/Quadratic-v0", num_arms=10, dim=5, noise_std=0.1, max_episode_steps=1000)
                for _ in seeds]
        agent = NeuralES(m=m, sigma_R=sigma_R, width=10, steps=10, lr=0.1, warmup=10, seed=list(seeds))
        obs = np.stack([env.reset(seed=s)[0] for env, s in zip(envs, seeds)])
        total = 0.0
        for _ in range(1000):
            actions = agent.act(obs)
            steps = [env.step(int(a)) for env, a in zip(envs, actions)]
            agent.observe(obs, actions, np.array([step[1] for step in steps]))
            obs, total = np.stack([step[0] for step in steps]), total + sum(step[4]["regret"] for step in steps)
        return total / len(seeds)

    es, greedy = regret(10, 0.1), regret(1, 0.0)
    assert es < 0.6 * greedy, (es, greedy)


# -- benchmark ----------------------------------------------------------------------------------------
def bench_neural(monkeypatch, run_script, capsys, *args) -> str:
    """`python scripts/bench_neural.py --quick ARGS` run in this process (`run_script`, a fresh
    interpreter would add 2-3 s of imports), its torch thread count and graphs.CUDA_GRAPHS put back
    after; its stdout."""
    from agents.neural import graphs

    monkeypatch.setattr(graphs, "CUDA_GRAPHS", graphs.CUDA_GRAPHS)
    monkeypatch.chdir(ROOT)
    threads = torch.get_num_threads()
    try:
        assert run_script(ROOT / "scripts" / "bench_neural.py", "--quick", *args) == 0
    finally:
        torch.set_num_threads(threads)
    return capsys.readouterr().out


def test_benchmark_quick_mode_runs_every_agent_and_the_update_table(monkeypatch, run_script, capsys):
    """Smoke run of parts 1 and 2 (the speed-up and the batched table: the slow test below)."""
    out = bench_neural(monkeypatch, run_script, capsys, "--parts", "12")
    for name in set(NAMES) - TOKENS:          # the GPT agents need a language model: tests/agents/test_gpt_ensemble.py
        assert f"| {name} |" in out
    assert out.count("| loop over m ") == 2


@pytest.mark.slow
def test_benchmark_quick_mode_runs(monkeypatch, run_script, capsys):
    out = bench_neural(monkeypatch, run_script, capsys, "--parts", "1234", "--profile", "Ensemble++")
    for name in set(NAMES) - TOKENS:          # the GPT agents need a language model: tests/agents/test_gpt_ensemble.py
        assert f"| {name} |" in out
    speedup = [line for line in out.splitlines() if line.startswith("| loop over m single networks")]
    assert speedup and float(speedup[0].split("|")[3].strip().rstrip("x")) > 1.0
    assert "Profile of Ensemble++" in out and "matrix products" in out


def test_benchmark_counts_matrix_products_in_closed_form():
    """Part 4's FLOP count: the fused GD step's 2 m B (2 (d N + N^2 + N) + N^2) per step (forward,
    weight gradients, backward through the hidden layer; the read-out's backward is a broadcast
    product, elementwise), and the Cholesky and triangular-solve formulas FlopCounterMode lacks."""
    from torch.utils.flop_counter import FlopCounterMode
    from agents.neural.nets import NTKEnsemble
    spec = importlib.util.spec_from_file_location("bench_neural", ROOT / "scripts" / "bench_neural.py")
    bench = sys.modules["bench_neural"] = importlib.util.module_from_spec(spec)    # (its dataclass needs it there)
    spec.loader.exec_module(bench)
    m, d, N, B, steps = 3, 8, 6, 5, 4
    net = NTKEnsemble.symmetric(m, d, N, 3, torch.Generator().manual_seed(0))
    x, count, target = torch.randn(B, d), torch.ones(B), torch.randn(m, B)
    counter = FlopCounterMode(display=False, custom_mapping=bench.EXTRA_FLOPS)
    with counter:
        net.gd_steps(x, count, target, steps=steps, lr=0.01, alpha=0.1, beta=0.1)
    assert counter.get_total_flops() == 2 * steps * m * B * (2 * (d * N + N * N + N) + N * N)
    A = torch.eye(4).expand(2, 4, 4) * 3 + 0.1
    counter = FlopCounterMode(display=False, custom_mapping=bench.EXTRA_FLOPS)
    with counter:
        torch.linalg.solve_triangular(torch.linalg.cholesky_ex(A).L, torch.ones(2, 4, 3), upper=False)
    assert counter.get_total_flops() == 2 * 2 * 4**3 // 3 + 2 * 4**2 * 3


def test_benchmark_quick_mode_prints_the_peak_table(monkeypatch, run_script, capsys):
    out = bench_neural(monkeypatch, run_script, capsys, "--parts", "4", "--agents", "Neural-ES")
    row = next(line.split("|") for line in out.splitlines() if line.startswith("| Neural-ES |"))
    gflop, ms, rate, peak, share = (float(c.strip().rstrip("%")) for c in row[2:7])
    assert gflop > 0 and ms > 0 and peak > 0
    assert math.isclose(rate, 1e3 * gflop / ms, rel_tol=0.05)
    # share is printed to 0.1 percentage points (a loaded machine's 0.66% prints as 0.7%)
    assert math.isclose(share, 100 * rate / peak, rel_tol=0.05, abs_tol=0.051)
