"""The [S0], [S1] and [S2] neural agents serve N instances in one object (agents.neural.core):
instance i of an agent seeded [s_1..s_N] makes exactly the choices of a single agent seeded s_i,
and its networks are that agent's networks, bit for bit, in float32 as in float64. The instances see
different problems (fixed arms for some, fresh contexts every round for others), so their
distinct-row tables differ in length and the grouping of the tables by padded length is exercised."""

import numpy as np
import pytest
import torch

import gym_ctxbandits
from agents.neural import LAZY, NAMES
from agents.neural.core import ROW_BLOCK

N, K, D, T = 3, 5, 4, 36
NTK = dict(width=6, depth=3, steps=3, lr=0.05)
VARIANTS = {
    "Neural-ES": dict(m=3, warmup=2, sigma_R=0.3, **NTK),
    "Neural-ES prior": dict(m=2, prior_sd=0.2, **NTK),
    "Neural-ES minibatch+FIFO": dict(m=3, batch_size=4, buffer_size=8, update_every=2, warm_start=False, **NTK),
    "Neural-ES-DT": dict(T0=5, b=2.0, warmup=2, **NTK),                 # restarts after rounds 5, 10, 20
    "NeuralUCB": NTK,
    "NeuralUCB float64": dict(NTK, dtype="float64"),
    "NeuralUCB full Z": dict(diag=False, **NTK),
    "NeuralTS": dict(nu=0.5, **NTK),
    "Neural-PHE": dict(nu=0.3, **NTK),
    "Neural-PHE minibatch+FIFO": dict(batch_size=4, buffer_size=6, **NTK),
    **{name: dict(width=6, steps=3, update_every=4)
       for name in ("NeuralLog-UCB-1", "NeuralLog-UCB-2", "NeuralLog-TS-1", "NeuralLog-TS-2", "NCBF-UCB")},
    "NeuralLog-UCB-2 full theory": dict(width=6, steps=3, update_every=4, diag=False, gradient="initial",
                                        schedule="theory", dtype="float64"),
    "DeepFPL": dict(hidden=8),
    "DeepFPL fixed mse tanh": dict(hidden=8, perturbation="fixed", loss="mse", activation="tanh", steps=2,
                                   batch_size=5),
    "DeepFL": dict(hidden=8),
    "repGLM-FPL": dict(hidden=8, explore_rounds=12),
}


def problem(seed=0):
    """T rounds of (N, K, D) obs: instance 0 keeps its arms, the others draw fresh ones every round."""
    rng = np.random.default_rng(seed)
    fixed = rng.normal(size=(K, D))
    obs = rng.normal(size=(T, N, K, D))
    obs[:, 0] = fixed
    theta = rng.normal(size=(N, D))
    return obs, theta, rng


@pytest.mark.parametrize("label", VARIANTS)
def test_batched_agent_equals_n_single_agents(label):
    name = label.split(" ")[0]
    obs, theta, rng = problem()
    seeds = [3, 11, 4]
    batch = LAZY[name](seed=seeds, **VARIANTS[label])
    singles = [LAZY[name](seed=s, **VARIANTS[label]) for s in seeds]
    for t in range(T):
        actions = batch.act(obs[t])
        assert actions.shape == (N,)
        assert actions.tolist() == [agent.act(obs[t, i]) for i, agent in enumerate(singles)], f"round {t}"
        mean = (obs[t, np.arange(N), actions] * theta).sum(1)
        reward = (rng.random(N) < 1 / (1 + np.exp(-mean))).astype(float)
        batch.observe(obs[t], actions, reward)
        for i, agent in enumerate(singles):
            agent.observe(obs[t, i], int(actions[i]), float(reward[i]))
    if name == "Neural-ES-DT":     # the last epoch's agents
        batch, singles = batch.agent_, [agent.agent_ for agent in singles]
    if hasattr(batch, "params_"):  # the [S1] agents: instance i's network is single agent i's
        for l, W in enumerate(batch.params_):
            assert torch.equal(W, torch.cat([agent.params_[l] for agent in singles])), f"layer {l}"
        return
    if batch.batch_size is None:     # full-history training: tables padded to different lengths, trained apart
        assert len(batch.buffer_.table_groups(ROW_BLOCK)) > 1
    for l, W in enumerate(batch.net_.weights):
        assert torch.equal(W, torch.cat([agent.net_.weights[l] for agent in singles])), f"layer {l}"
        assert W.shape[0] == N * batch.members


def test_every_batched_name_is_covered_and_the_run_loop_batches_them():
    # the [S3] agents' equality is tested in test_ensemble_nn.py and test_gpt_ensemble.py
    s3 = {name for name, (module, _) in NAMES.items() if module in ("ensemble_pp", "epinet", "lmcts", "gpt_ensemble")}
    assert {label.split(" ")[0] for label in VARIANTS} == set(NAMES) - s3
    assert all(LAZY[name].batched and LAZY[name].cls().batched for name in NAMES)
    kwargs = dict(seeds=[0, 5, 9], horizon=40, log_every=5)
    agents = [gym_ctxbandits.AgentSpec("Neural-ES", dict(m=2, warmup=3, width=4, steps=2)),
              gym_ctxbandits.AgentSpec("NeuralLog-TS-1", dict(width=4, steps=2, update_every=10))]
    plain = gym_ctxbandits.run("CtxBandit/Quadratic-v0", agents, batch=1, **kwargs)
    batched = gym_ctxbandits.run("CtxBandit/Quadratic-v0", agents, batch=3, **kwargs)
    cols = ["env", "agent", "seed", "round", "reward", "regret", "cum_reward", "cum_regret"]
    assert len(plain) == 2 * 3 * 8
    np.testing.assert_array_equal(plain["cum_regret"], batched["cum_regret"])
    assert (plain[cols[:4]] == batched[cols[:4]]).all().all()
