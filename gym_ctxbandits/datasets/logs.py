"""Logged interactions and labelled text: the Open Bandit Dataset and the hate-speech corpora."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gym_ctxbandits.datasets import manifest
from gym_ctxbandits.datasets._files import DatasetNotFound, corrupt, locate, offline, parse_checked

OBD_EVENT_COLUMNS = ("item_id", "position", "click", "propensity_score")


@dataclass(frozen=True)
class OpenBanditData:
    """One campaign of one logging policy of the Open Bandit Dataset."""

    events: "object"   # pandas DataFrame: all.csv (item_id, position, click, propensity_score, user_feature_*, user-item_affinity_*)
    items: "object"    # pandas DataFrame: item_context.csv (item_id, item_feature_*)
    source: str


def load_open_bandit(*, behavior: str = "random", campaign: str = "all", path=None, data_home=None,
                     download: bool = True, check_size: bool = True) -> OpenBanditData:
    """The Open Bandit Dataset's `behavior` ("random" or "bts") logs of `campaign` ("all", "men", "women").

    Files whose SHA-256 the manifest lists are checked against it; `check_size=False` accepts a
    copy made deliberately (e.g. a cut of the log).

    Looks in `path`, the data home (obd/<behavior>/<campaign>/), then the 10,000-event sample that
    the PyPI package obp ships. The full dataset (about 26 million events) is a manual download
    from ZOZO's page (it asks you to accept its terms), so there is no automatic download.
    """
    if behavior not in ("random", "bts") or campaign not in ("all", "men", "women"):
        raise ValueError(f"behavior must be 'random' or 'bts' and campaign 'all', 'men' or 'women'; "
                         f"got {behavior!r}, {campaign!r}")
    source = manifest.source("open-bandit", behavior=behavior, campaign=campaign)
    paths, fresh = locate(source, ["events", "items"], path, data_home, download)

    def parse(p):
        import pandas as pd

        try:
            events = pd.read_csv(p["events"], index_col=0)
            items = pd.read_csv(p["items"], index_col=0)
        except (ValueError, OSError) as err:
            raise corrupt(p["events"], f"cannot be parsed as CSV ({err})") from None
        missing = [c for c in OBD_EVENT_COLUMNS if c not in events.columns]
        if missing or "item_id" not in items.columns:
            raise corrupt(p["events"], f"lacks the columns {missing or ['item_id (item_context.csv)']}")
        n_items = len(items)
        affinity = [f"user-item_affinity_{i}" for i in range(n_items)]
        if [c for c in affinity if c not in events.columns]:
            raise corrupt(p["events"], f"lacks user-item affinity columns for the {n_items} items of item_context.csv")
        if events[list(OBD_EVENT_COLUMNS) + affinity].isna().to_numpy().any():
            raise corrupt(p["events"], "has empty values (truncated?)")
        if not events["item_id"].between(0, n_items - 1).all() or not events["click"].isin([0, 1]).all():
            raise corrupt(p["events"], "has item ids outside item_context.csv or clicks other than 0/1")
        return OpenBanditData(events.reset_index(drop=True), items, str(p["events"].parent))

    return parse_checked(paths, fresh, parse, "open-bandit" if check_size else None)


HF_CORPUS = manifest.entry("measuring-hate-speech")["hub"]  # the Hugging Face Hub dataset


def load_hate_speech(*, corpus: str = "measuring", path=None, data_home=None, download: bool = True,
                     check_size: bool = True):
    """Posts with a hate score: a pandas DataFrame with columns `text` and `hate_score` (hateful: > 0.5).

    - "measuring": Kennedy et al.'s measuring-hate-speech corpus on the Hugging Face Hub, [S3]
      App. G's data: about 136k annotations of about 40k comments, each with an IRT
      `hate_speech_score`; the score of a comment is the mean over its annotations. A local
      parquet/CSV copy (`measuring_hate_speech.parquet` or `.csv`) is read from `path` or the data
      home (hate/measuring/); otherwise `datasets.load_dataset` fetches it (cached by `datasets`).
    - "davidson": Davidson et al.'s 24,783 labelled tweets (`labeled_data.csv`, the offline
      stand-in): hate_score = the share of annotators who called the tweet hate speech, so
      "> 0.5" means a majority did. Its file is checked against the manifest's SHA-256 unless
      `check_size=False` (a copy made deliberately).
    """
    import pandas as pd

    if corpus == "davidson":
        source = manifest.source("davidson")
        paths, fresh = locate(source, ["data"], path, data_home, download)

        def parse(p):
            try:
                table = pd.read_csv(p["data"])
            except (ValueError, OSError) as err:
                raise corrupt(p["data"], f"cannot be parsed as CSV ({err})") from None
            if not {"tweet", "count", "hate_speech"} <= set(table.columns):
                raise corrupt(p["data"], "lacks the columns tweet, count, hate_speech")
            if table[["tweet", "count", "hate_speech"]].isna().to_numpy().any() or (table["count"] <= 0).any():
                raise corrupt(p["data"], "has empty rows or zero annotator counts (truncated?)")
            return pd.DataFrame({"text": table["tweet"].astype(str), "hate_score": table["hate_speech"] / table["count"]})

        return parse_checked(paths, fresh, parse, "davidson" if check_size else None)
    if corpus != "measuring":
        raise ValueError(f"corpus must be 'measuring' or 'davidson', got {corpus!r}")
    source = manifest.source("measuring-hate-speech")
    try:
        paths, _ = locate(source, ["data"], path, data_home, download=False)
        p = paths["data"]
        table = pd.read_parquet(p) if p.suffix == ".parquet" else pd.read_csv(p)
    except DatasetNotFound as err:
        if not download or offline():
            raise
        try:
            import datasets as hf  # Hugging Face `datasets`, the [data] extra
            table = hf.load_dataset(HF_CORPUS, split="train").to_pandas()
            p = HF_CORPUS
        except Exception as hub_err:  # offline, not installed, or the Hub refused
            raise DatasetNotFound(
                f"measuring-hate-speech: no local copy and the Hugging Face download of {HF_CORPUS} failed "
                f"({type(hub_err).__name__}: {hub_err}).\n" + str(err).split("\n", 1)[1]) from None
    if not {"comment_id", "text", "hate_speech_score"} <= set(table.columns):
        raise corrupt(p if not isinstance(p, str) else data_home(data_home), "lacks comment_id, text, hate_speech_score")
    grouped = table.groupby("comment_id", sort=True).agg(text=("text", "first"), hate_score=("hate_speech_score", "mean"))
    return grouped.reset_index(drop=True).assign(hate_score=lambda t: t["hate_score"].astype(np.float64))
