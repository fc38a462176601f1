"""GPT-Ensemble++ and GPT-Greedy ([S3] App. G.4): features, loss, gradient routing, fine-tuning
modes, errors, and a run on the token-level moderation env, with a tiny GPT-2 (offline)."""

import copy
import os
import pickle
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
import agents  # noqa: E402
from agents.neural import backbone  # noqa: E402
from agents.neural.backbone import trainable_parameters  # noqa: E402

VOCAB = 100
GPT2_BPE = Path(os.environ.get("CTXBANDITS_DATA", "../shared/data")) / "models" / "gpt2.tiktoken"


@pytest.fixture(scope="module")
def tiny_gpt2(tmp_path_factory):
    """A randomly initialised 2-block GPT-2 (GPT-2's weights are not obtainable offline)."""
    path = tmp_path_factory.mktemp("gpt2")
    torch.manual_seed(0)
    config = transformers.GPT2Config(n_layer=2, n_embd=16, n_head=2, n_positions=32, vocab_size=VOCAB,
                                     bos_token_id=0, eos_token_id=0)
    transformers.GPT2Model(config).save_pretrained(path)
    return str(path)


@pytest.fixture(scope="module")
def tiny_bert(tmp_path_factory):
    """A randomly initialised 2-block BERT (the default all-MiniLM-L6-v2's architecture)."""
    path = tmp_path_factory.mktemp("bert")
    torch.manual_seed(1)
    config = transformers.BertConfig(num_hidden_layers=2, hidden_size=16, num_attention_heads=2, intermediate_size=32,
                                     vocab_size=VOCAB, max_position_embeddings=32)
    transformers.BertModel(config).save_pretrained(path)
    return str(path)


def posts(rng, n, width=10):
    """n token rows, right-padded with -1, each with 1..width tokens."""
    out = np.full((n, width), -1)
    for row in out:
        k = rng.integers(1, width + 1)
        row[:k] = rng.integers(0, VOCAB, k)
    return out


def run(agent, rounds, seed=0):
    rng, actions = np.random.default_rng(seed), []
    for row in posts(rng, rounds):
        obs = np.stack([row, row])
        a = agent.act(obs)
        agent.observe(obs, a, 1.0 if a == 0 else 0.5)
        actions.append(a)
    return actions


def test_features_are_the_masked_mean_of_the_last_hidden_states(tiny_gpt2):
    agent = agents.make("GPT-Ensemble++", model=tiny_gpt2, seed=0)
    rows = np.array([[5, 7, 9, -1, -1], [3, -1, -1, -1, -1]])
    agent.act(np.stack([rows[0], rows[0]]))
    with torch.no_grad():
        phi = agent._features(rows).numpy()
        net = transformers.AutoModel.from_pretrained(tiny_gpt2).eval()
        for row, f in zip(rows, phi):
            h = net(input_ids=torch.as_tensor(row[row >= 0])[None]).last_hidden_state[0].mean(0).numpy()
            np.testing.assert_allclose(f, np.r_[h / np.linalg.norm(h), 1.0], rtol=1e-5, atol=1e-6)


def test_a_frozen_backbone_buffers_the_features(tiny_gpt2):
    """finetune="none": the buffer holds phi of the played row (computed once), and the loss reads it."""
    agent = agents.make("GPT-Ensemble++", model=tiny_gpt2, finetune="none", seed=0)
    row = np.array([4, 8, 15, 16, -1])
    a = agent.act(np.stack([row, row]))
    agent.observe(np.stack([row, row]), a, 1.0)
    with torch.no_grad():
        phi = agent._features(row[None])[0].numpy()
    np.testing.assert_allclose(agent._minibatch(np.array([0]))[0][0].numpy(), phi, rtol=1e-6)
    assert (agent.runs_[0].buffer.d, agent.runs_[0].buffer.capacity) == (17, 10_000)
    assert not any(p.requires_grad for p in agent.runs_[0].net.parameters())


def test_loss_is_eq14_on_each_samples_own_action():
    """model=None: phi = the obs row; the loss by hand on a 2-sample minibatch."""
    agent = agents.make("GPT-Ensemble++", model=None, M=3, sigma_z=0.5, prior_scale=2.0, seed=1)
    rng = np.random.default_rng(0)
    agent.act(rng.normal(size=(2, 4)))
    x, a, y, z = rng.normal(size=(2, 4)).astype(np.float32), np.array([1, 0]), np.array([1.0, -0.5], np.float32), \
        rng.normal(size=(2, 3)).astype(np.float32)
    b, A, A0 = (v.detach().numpy() for v in (agent.runs_[0].b, agent.runs_[0].A, agent.runs_[0].A0))
    expected = 0.0
    for s in range(2):
        base = 0.5 * (y[s] - x[s] @ b[a[s]]) ** 2
        heads = 0.5 * np.mean((0.5 * z[s] - 2.0 * A0[a[s]] @ x[s] - A[a[s]] @ x[s]) ** 2)
        expected += (base + heads) / 2
    assert agent.loss(x, a, y, z).item() == pytest.approx(expected, rel=1e-5)


def test_gradients_are_routed_as_in_eqs_15_to_17(tiny_gpt2):
    """b and the backbone get only the base regression's gradient, A only the heads'."""
    agent = agents.make("GPT-Ensemble++", model=tiny_gpt2, finetune="full", seed=0)
    rng = np.random.default_rng(1)
    x = posts(rng, 4)
    agent.act(np.stack([x[0], x[0]]))
    a, y, z = np.array([0, 1, 1, 0]), np.array([1.0, 0.5, 0.5, -0.5], np.float32), rng.normal(size=(4, 8)).astype(np.float32)

    def grads(loss):
        params = [agent.runs_[0].b, agent.runs_[0].A, *agent.runs_[0].net.parameters()]
        return [g if g is not None else torch.zeros_like(p)
                for g, p in zip(torch.autograd.grad(loss, params, allow_unused=True), params)]

    full = grads(agent.loss(x, a, y, z))
    phi = agent._features(x)
    base = grads((0.5 * (torch.tensor(y) - (phi * agent.runs_[0].b[torch.tensor(a)]).sum(1)) ** 2).mean())
    assert full[1].abs().sum() > 0 and base[1].abs().sum() == 0            # A: heads only
    for g_full, g_base in zip([full[0], *full[2:]], [base[0], *base[2:]]):  # b and backbone: base only
        torch.testing.assert_close(g_full, g_base)


def adam_step(p, g, state, lr, betas=(0.9, 0.999), eps=1e-8):
    """One step of Adam (Kingma & Ba, no weight decay) from the optimiser's state, by hand, in float64."""
    t = int(state["step"]) + 1
    m = betas[0] * state["exp_avg"].double() + (1 - betas[0]) * g.double()
    v = betas[1] * state["exp_avg_sq"].double() + (1 - betas[1]) * g.double() ** 2
    return p.double() - lr * (m / (1 - betas[0] ** t)) / ((v / (1 - betas[1] ** t)).sqrt() + eps)


@pytest.mark.parametrize("name, backbone", [("GPT-Ensemble++", False), ("GPT-Greedy", False), ("GPT-Ensemble++", True)])
def test_an_update_is_adam_on_the_mean_loss_plus_ridge_penalty_over_n(name, backbone, request):
    """Weight decay as in agents.neural.ensemble_pp (the authors' code's): an update is one plain Adam step
    on the minibatch mean loss + lambda / (2 n) ||(b, A)||^2, n the points held; a fine-tuned backbone
    is trained but not penalised. Replayed by hand; the old AdamW form (decoupled decay) is far off."""
    lr, wd, rng = 1e-2, 0.3, np.random.default_rng(8)
    if backbone:
        agent = agents.make(name, model=request.getfixturevalue("tiny_gpt2"), finetune=1, lr=lr, weight_decay=wd,
                            batch_size=4, seed=7)
        run(agent, 5)
        row = posts(rng, 1)[0]
        obs = np.stack([row, row])
    else:
        agent = agents.make(name, model=None, lr=lr, weight_decay=wd, batch_size=4, seed=7)
        for _ in range(5):
            obs = rng.normal(size=(2, 4))
            agent.observe(obs, agent.act(obs), rng.normal())
        obs = rng.normal(size=(2, 4))
    a = agent.act(obs)
    twin = copy.deepcopy(agent)                                       # the agent before the update
    agent.observe(obs, a, 0.7)
    n = 6
    assert agent.runs_[0].buffer.size == n
    twin.rngs_[0].standard_normal(twin.M)                              # the stored z's draw
    idx = twin.rngs_[0].integers(n, size=4)                            # the minibatch's draw

    def trained(ag):
        heads = [ag.runs_[0].b, ag.runs_[0].A] if ag.ensemble else [ag.runs_[0].b]
        return heads, [p for p in ag.runs_[0].net.parameters() if p.requires_grad] if backbone else []

    heads, body = trained(twin)
    assert len(body) == (14 if backbone else 0)                       # GPT-2's h.1 (12 tensors) and ln_f (2)
    loss = twin.loss(*agent._minibatch(idx))
    penalty = wd / (2 * n) * sum((p ** 2).sum() for p in heads)
    grads = torch.autograd.grad(loss + penalty, heads + body)
    expected = [adam_step(p, g, twin.runs_[0].opt.state[p], lr) for p, g in zip(heads + body, grads)]
    actual = [p.detach().double() for p in sum(trained(agent), [])]
    for p, q in zip(actual, expected):
        torch.testing.assert_close(p, q, rtol=0, atol=1e-6)
    if not agent.ensemble:
        assert agent.runs_[0].A.abs().sum() == 0
    # The old form, AdamW (theta <- (1 - lr lambda) theta, then Adam on the bare loss), or no decay
    # at all, lands far from the agent's parameters: the check above tells the forms apart.
    bare = torch.autograd.grad(twin.loss(*agent._minibatch(idx)), heads)
    no_decay = [adam_step(p, g, twin.runs_[0].opt.state[p], lr) for p, g in zip(heads, bare)]
    adamw = [adam_step((1 - lr * wd) * p.detach(), g, twin.runs_[0].opt.state[p], lr) for p, g in zip(heads, bare)]
    for other in (no_decay, adamw):
        assert max((p - q).abs().max().item() for p, q in zip(actual, other)) > 1e-4


@pytest.mark.parametrize("finetune, blocks", [("none", set()), (1, {"h.1", "ln_f"}), ("full", {"h.0", "h.1", "ln_f", "wte", "wpe"})])
def test_finetune_trains_only_the_chosen_part(tiny_gpt2, finetune, blocks):
    agent = agents.make("GPT-Ensemble++", model=tiny_gpt2, finetune=finetune, lr=1e-2, batch_size=4, seed=0)
    run(agent, 5)
    before = dict(transformers.AutoModel.from_pretrained(tiny_gpt2).named_parameters())
    changed = {name.rsplit(".", 2)[0] if name.startswith("h.") else name.split(".")[0]
               for name, p in agent.runs_[0].net.named_parameters() if not torch.equal(p.detach(), before[name].detach())}
    changed = {c.split(".attn")[0].split(".mlp")[0].split(".ln")[0] for c in changed}
    assert changed == blocks
    assert {id(p) for p in trainable_parameters(agent.runs_[0].net, finetune)} == {
        id(p) for p in agent.runs_[0].net.parameters() if p.requires_grad}


def test_greedy_has_no_ensemble_factor(tiny_gpt2):
    greedy = agents.make("GPT-Greedy", model=tiny_gpt2, batch_size=4, seed=0)
    run(greedy, 6)
    assert greedy.runs_[0].A.abs().sum() == 0 and greedy.runs_[0].A0.abs().sum() == 0
    x = posts(np.random.default_rng(2), 3)
    with torch.no_grad():
        phi = greedy._features(x)
        expected = 0.5 * ((torch.tensor([1.0, 0.5, 0.5]) - (phi * greedy.runs_[0].b[[0, 1, 1]]).sum(1)) ** 2).mean()
    assert greedy.loss(x, np.array([0, 1, 1]), np.array([1.0, 0.5, 0.5], np.float32),
                       np.zeros((3, 8), np.float32)).item() == pytest.approx(expected.item(), rel=1e-6)


def test_seeded_reset_copy_and_pickle_with_a_backbone(tiny_gpt2):
    agent = agents.make("GPT-Ensemble++", model=tiny_gpt2, batch_size=4, lr=1e-2, seed=3)
    first = run(agent, 12)
    agent.reset()
    assert run(agent, 12) == first                       # reset restores the pretrained backbone too
    assert run(agents.make("GPT-Ensemble++", model=tiny_gpt2, batch_size=4, lr=1e-2, seed=3), 12) == first
    clones = [copy.deepcopy(agent), pickle.loads(pickle.dumps(agent))]
    expected = run(agent, 8, seed=5)
    for clone in clones:
        assert run(clone, 8, seed=5) == expected


def test_bad_inputs_name_the_problem(tiny_gpt2):
    agent = agents.make("GPT-Ensemble++", model=tiny_gpt2, seed=0)
    row = np.array([1, 2, -1])
    with pytest.raises(ValueError, match="token ids"):
        agent.act(np.ones((2, 3)))                        # float features with a backbone
    agent.act(np.stack([row, row]))
    with pytest.raises(ValueError, match=r"\[-1, 100\)"):
        agent.act(np.array([[1, VOCAB, -1], [1, 2, -1]]))
    with pytest.raises(ValueError, match="at least one token"):
        agent.act(np.array([[-1, -1, -1], [1, 2, -1]]))
    with pytest.raises(ValueError, match="finetune"):
        agents.make("GPT-Ensemble++", finetune="half")
    with pytest.raises(ValueError, match="exceeds the backbone's 2 blocks"):
        agents.make("GPT-Ensemble++", model=tiny_gpt2, finetune=3).act(np.stack([row, row]))
    with pytest.raises(OSError, match="local folder"):
        agents.make("GPT-Ensemble++", model="/nonexistent/model").act(np.stack([row, row]))


@pytest.mark.parametrize("name", ["GPT-Ensemble++", "GPT-Greedy"])
def test_learns_a_linear_moderation_problem(name):
    """Known answer (model=None, disjoint-block features [x, 1]): publishing pays 0.5 + <x, w> plus
    N(0, 0.1^2) noise, blocking pays 0.5. Over 1,000 rounds the regret is a small fraction of
    either fixed policy's, and the last 300 rounds are nearly free of regret."""
    rng = np.random.default_rng(0)
    w = rng.normal(size=5)
    w /= np.linalg.norm(w)
    agent = agents.make(name, model=None, lr=1e-2, batch_size=32, seed=0)
    regret, publish, block = [], 0.0, 0.0
    for t in range(1000):
        x = np.r_[rng.normal(size=5) / np.sqrt(5), 1.0]
        mean = 0.5 + x[:5] @ w
        obs = np.stack([np.r_[x, 0 * x], np.r_[0 * x, x]])
        a = agent.act(obs)
        agent.observe(obs, a, 0.5 if a == 1 else mean + 0.1 * rng.normal())
        regret.append(max(mean, 0.5) - (0.5 if a == 1 else mean))
        publish, block = publish + max(0.5 - mean, 0.0), block + max(mean - 0.5, 0.0)
    assert sum(regret) < 0.25 * min(publish, block), (sum(regret), publish, block)
    assert np.mean(regret[700:]) < 0.01


@pytest.mark.skipif(not GPT2_BPE.exists(), reason=f"GPT-2's BPE file not at {GPT2_BPE} (set CTXBANDITS_DATA)")
def test_runs_on_the_token_moderation_env(tiny_gpt2, monkeypatch, tmp_path):
    """The run loop with CtxBandit/HateSpeechTokens-v0 (GPT-2's real tokenizer) and the tiny backbone."""
    import pandas as pd

    import gym_ctxbandits
    from gym_ctxbandits import datasets

    texts = ["you are great", "I hate all of them", "nice day", "go away you idiots"] * 5
    frame = pd.DataFrame({"text": texts, "hate_score": [0.0, 2.0, -1.0, 1.0] * 5})
    monkeypatch.setattr(datasets, "load_hate_speech", lambda **kw: frame)
    big = transformers.GPT2Config(n_layer=1, n_embd=16, n_head=2, n_positions=32)
    transformers.GPT2Model(big).save_pretrained(tmp_path / "gpt2")
    env = dict(model=str(tmp_path / "gpt2"), tokenizer_file=str(GPT2_BPE), max_length=8, corpus="davidson")
    from gym_ctxbandits.experiment import AgentSpec, EnvSpec

    table = gym_ctxbandits.run(EnvSpec("CtxBandit/HateSpeechTokens-v0", env),
                               AgentSpec("GPT-Ensemble++", dict(model=str(tmp_path / "gpt2"), batch_size=4)),
                               horizon=15, seeds=[0])
    assert len(table) == 15 and table["reward"].isin([1.0, -0.5, 0.5]).all()


# -- the cached frozen prefix (agents.neural.backbone) -------------------------------------------
@pytest.mark.parametrize("finetune", [1, 2])
@pytest.mark.parametrize("arch, trained", [("tiny_gpt2", ("h.", "ln_f.")), ("tiny_bert", ("encoder.layer.",))])
def test_cached_prefix_gives_the_full_forwards_features_and_gradients(arch, trained, finetune, request):
    """Features from the cached prefix states through the trained blocks (posts grouped by length,
    each distinct one once) equal the whole model's (to float rounding), after the trained blocks
    have moved; the loss's gradient reaches exactly the
    trained blocks and final norm (not BERT's pooler, which phi does not use), with the whole model's values."""
    agent = agents.make("GPT-Ensemble++", model=request.getfixturevalue(arch), finetune=finetune, lr=1e-2,
                        batch_size=4, seed=0)
    run(agent, 6)
    assert agent.start_ == 2 - finetune and len(agent._pretrained.prefix) == 6
    whole = copy.deepcopy(agent)
    whole.start_ = None                                   # the full forward
    rng = np.random.default_rng(3)
    x = posts(rng, 40)                                    # posts not seen yet, of 1 to 10 tokens: 3 chunks
    x[33:] = x[:7]                                        # and repeated ones
    a, y, z = rng.integers(2, size=40), rng.normal(size=40).astype(np.float32), np.ones((40, 8), np.float32)

    def forward(ag):
        net = ag.runs_[0].net
        for p in [*net.parameters(), *ag.runs_[0].heads]:
            p.grad = None
        phi = ag._features(x)
        ag.loss(x, a, y, z).backward()
        return phi.detach(), {name: p.grad for name, p in net.named_parameters() if p.grad is not None}

    phi, grads = forward(agent)
    phi_full, grads_full = forward(whole)
    torch.testing.assert_close(phi, phi_full, rtol=0, atol=1e-5)
    blocks = tuple(f"{prefix}{k}." if prefix.endswith("layer.") or prefix == "h." else prefix
                   for prefix in trained for k in range(2 - finetune, 2))
    expected = {name for name, _ in agent.runs_[0].net.named_parameters() if name.startswith(blocks)}
    assert set(grads) == set(grads_full) == expected
    for name in expected:
        torch.testing.assert_close(grads[name], grads_full[name], rtol=1e-4, atol=1e-6)


def test_an_unknown_architecture_runs_the_whole_model_and_chooses_alike(tiny_gpt2, monkeypatch):
    """Without a suffix for its class the backbone runs whole every time (nothing cached); a run's
    choices are those of the cached path, and its features after 16 Adam steps agree to float rounding
    (the parameters differ more: Adam moves a weight with a near-zero gradient by about lr, either way)."""
    kwargs, x = dict(model=tiny_gpt2, lr=1e-2, batch_size=4, seed=3), posts(np.random.default_rng(9), 6)
    cached = agents.make("GPT-Ensemble++", **kwargs)
    first = run(cached, 16)
    assert cached.start_ == 1
    with torch.no_grad():
        phi = cached._features(x)
    monkeypatch.setattr(backbone, "SUFFIXES", {})
    whole = agents.make("GPT-Ensemble++", **kwargs)
    assert run(whole, 16) == first
    assert whole.start_ is None and not whole._pretrained.prefix
    with torch.no_grad():
        torch.testing.assert_close(phi, whole._features(x), rtol=0, atol=1e-5)   # 6e-7 here


# -- batched mode and propensities ----------------------------------------------------------------
@pytest.mark.parametrize("name", ["GPT-Ensemble++", "GPT-Greedy"])
def test_batched_agent_equals_single_agents_with_a_backbone(name, tiny_gpt2):
    """Seeded [3, 11, 4] on obs (3, K, L), instance i chooses as the single agent seeded s_i and ends
    with its parameters bit for bit; the instances share one prefix cache (each distinct post once)
    and train their own copies of the backbone."""
    seeds, kwargs, rng = [3, 11, 4], dict(model=tiny_gpt2, lr=1e-2, batch_size=4), np.random.default_rng(0)
    batch, singles = agents.make(name, seed=seeds, **kwargs), [agents.make(name, seed=s, **kwargs) for s in seeds]
    seen = set()
    for t in range(10):
        rows = posts(rng, 3)
        if t % 3 == 0:
            rows[1] = rows[0]                            # two instances see the same post
        obs = np.stack([np.stack([r, r]) for r in rows])  # (3, 2, 10)
        seen |= {tuple(r[r >= 0]) for r in rows}
        actions = batch.act(obs)
        assert actions.tolist() == [agent.act(obs[i]) for i, agent in enumerate(singles)], f"round {t}"
        rewards = np.where(actions == 0, 1.0, 0.5)
        batch.observe(obs, actions, rewards)
        for i, agent in enumerate(singles):
            agent.observe(obs[i], int(actions[i]), float(rewards[i]))
    for instance, agent in zip(batch.runs_, singles):
        assert all(torch.equal(p, q) for p, q in zip(instance.trained, agent.runs_[0].trained))
    assert len(batch._pretrained.prefix) == len(seen)
    assert batch.runs_[0].net is not batch.runs_[1].net
    assert not torch.equal(batch.runs_[0].trained[-1], batch.runs_[1].trained[-1])


def test_greedy_action_probs_are_exact_single_and_batched(tiny_gpt2):
    """GPT-Greedy's action_probs is the closed form: all mass on act's choice, and an even split of a
    tie (instance 1's two heads made equal), which act breaks at random."""
    rng = np.random.default_rng(4)
    greedy = agents.make("GPT-Greedy", model=tiny_gpt2, lr=1e-2, batch_size=4, seed=[0, 1])
    for _ in range(5):
        obs = np.stack([np.stack([r, r]) for r in posts(rng, 2)])
        greedy.observe(obs, greedy.act(obs), np.array([1.0, 0.5]))
    obs = np.stack([np.stack([r, r]) for r in posts(rng, 2)])
    chosen = copy.deepcopy(greedy).act(obs)
    np.testing.assert_array_equal(greedy.action_probs(obs), np.eye(2)[chosen])
    with torch.no_grad():
        greedy.runs_[1].b[1] = greedy.runs_[1].b[0]
    probs = greedy.action_probs(obs)
    np.testing.assert_array_equal(probs, [np.eye(2)[chosen[0]], [0.5, 0.5]])
    share = greedy._sampled_probs(obs, 40)                # act on 40 reseeded copies
    assert share[0, chosen[0]] == 1.0 and 0.2 < share[1, 0] < 0.8
    single = agents.make("GPT-Greedy", model=tiny_gpt2, seed=0)
    np.testing.assert_array_equal(single.action_probs(obs[0]), np.eye(2)[copy.deepcopy(single).act(obs[0])])
