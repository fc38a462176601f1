"""Position-based click models fitted on real search logs (KDD Cup 2012, Yandex), and GRAB's simulated "std".

    from gym_ctxbandits.datasets.ranking import load_pbm, pbm_queries
    params = load_pbm("kdd", query=0)        # PBMParams: attractions (L,), kappas (K,), query id, source
    pbm_queries("yandex")                    # the 60 query ids, in file order (GRAB's numbering 0..59)

The files are `param_KDD.json` and `param_Yandex.json` (or their original names `param_KDD.txt`,
`param_Yandex.txt`) of the public repository gaudel/ranking_bandits (MIT licence; the code of Gauthier,
Gaudel, Fromont, Lompo, "Parametric Graph for Unimodal Ranking Bandit", ICML 2021, GRAB), folder `data/`.
Each maps a query id to a PBM fitted on the log: `thetas`, each item's attraction probability, and
`kappas`, each position's examination probability. They are looked for in `path` (a file or a folder),
then in the data home's `ranking/` folder ($CTXBANDITS_DATA/ranking/, or `data_home`); there is no
automatic download: a missing file is one `DatasetNotFound` naming it and where to get and put it.

As GRAB's `param.py` uses them: KDD as is (3 positions, 5 to 11 items a query); Yandex keeps each query's
10 most attractive items and 5 most examined positions, both in decreasing order. "std" is GRAB's purely
simulated setting (no file). Two Yandex queries (46 and 58 in file order, ids 7435209 and 8354851) have
one item fitted with theta above 1 (1.07 and 2.51, an artefact of the fit: the PBM's theta and kappa are
known up to a factor); a probability cannot exceed 1, so values above 1 are clipped to 1 (GRAB's
simulation clicks such an item with probability min(1, kappa_k theta), which is 1 at the top position).
Queries are numbered in file order as in GRAB (`query=0` is the first);
a string is a query id of the log.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from gym_ctxbandits.datasets._files import DatasetNotFound, Source, candidates, corrupt, data_home as home_of, locate

PAGE = "https://github.com/gaudel/ranking_bandits (files data/param_KDD.txt and data/param_Yandex.txt)"
SOURCE = Source("ranking", "ranking", {"kdd": ("param_KDD.json", "param_KDD.txt"),
                                       "yandex": ("param_Yandex.json", "param_Yandex.txt")}, page=PAGE)
# GRAB's purely simulated "std" setting (param.py, set_env_std).
STD_KAPPAS = (1.0, 0.75, 0.6, 0.3, 0.1)
STD_THETAS = (0.3, 0.2, 0.15, 0.15, 0.15, 0.10, 0.05, 0.05, 0.01, 0.01)
YANDEX_ITEMS, YANDEX_POSITIONS = 10, 5
SETTINGS = ("kdd", "yandex", "std")


@dataclass(frozen=True)
class PBMParams:
    """One PBM: a click at position k on item e has probability kappas[k] * attractions[e]."""

    attractions: np.ndarray   # (L,) theta_e, GRAB's thetas
    kappas: np.ndarray        # (K,) kappa_k, GRAB's kappas
    query: str                # the log's query id ("std" for the simulated setting)
    source: str               # the file read, or "GRAB param.py" for "std"


def _read(setting: str, path, data_home) -> tuple[dict, str]:
    try:
        paths, _ = locate(SOURCE, [setting], path, data_home, download=False)
    except DatasetNotFound:
        names = " or ".join(SOURCE.files[setting])
        searched = ", ".join(str(d) for d in dict.fromkeys(candidates(SOURCE, path, data_home)))
        raise DatasetNotFound(
            f"{names} not found (searched {searched}): download data/{SOURCE.files[setting][1]} from "
            f"https://github.com/gaudel/ranking_bandits and put it in {home_of(data_home) / SOURCE.folder} "
            "(the data home is $CTXBANDITS_DATA), or pass data_path= to it") from None
    file = paths[setting]
    try:
        table = json.loads(file.read_text())
    except (ValueError, OSError) as err:
        raise corrupt(file, f"is not the JSON of query -> {{thetas, kappas}} ({err})") from None
    if not isinstance(table, dict) or not table:
        raise corrupt(file, "holds no query (expected a JSON object: query id -> {thetas, kappas})")
    return table, str(file)


def pbm_queries(setting: str, *, path=None, data_home=None) -> list[str]:
    """The query ids of `setting` ("kdd" or "yandex") in file order: query i of `load_pbm` is the i-th."""
    _check_setting(setting, files_only=True)
    return list(_read(setting, path, data_home)[0])


def _check_setting(setting: str, files_only: bool = False) -> None:
    allowed = SETTINGS[:2] if files_only else SETTINGS
    if setting not in allowed:
        raise ValueError(f"unknown PBM setting {setting!r}; choose one of {allowed}")


def _probabilities(file: str, query: str, name: str, values) -> np.ndarray:
    """`values` as probabilities: finite and >= 0, fitted values above 1 clipped to 1 (see the module docstring)."""
    try:
        out = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        out = np.array([np.nan])
    if out.ndim != 1 or len(out) == 0 or not np.all(np.isfinite(out) & (out >= 0)):
        raise corrupt(Path(file), f"query {query}'s {name} are not probabilities (finite, >= 0)")
    return np.minimum(out, 1.0)


def load_pbm(setting: str, query: int | str = 0, *, path=None, data_home=None) -> PBMParams:
    """The PBM of `setting` ("kdd", "yandex" or "std") for `query` (an index in file order, or a query id)."""
    _check_setting(setting)
    if setting == "std":
        return PBMParams(np.array(STD_THETAS), np.array(STD_KAPPAS), "std", "GRAB param.py (set_env_std)")
    table, file = _read(setting, path, data_home)
    ids = list(table)
    if isinstance(query, str):
        if query not in table:
            raise ValueError(f"{setting}: no query {query!r} in {file}; its queries are {ids}")
        name = query
    elif isinstance(query, (int, np.integer)) and not isinstance(query, bool) and 0 <= query < len(ids):
        name = ids[int(query)]
    else:
        raise ValueError(f"{setting}: query must be an index in [0, {len(ids)}) (file order, as GRAB numbers them) "
                         f"or a query id of {file}, got {query!r}")
    entry = table[name]
    if not isinstance(entry, dict) or not {"thetas", "kappas"} <= set(entry):
        raise corrupt(Path(file), f"query {name} lacks 'thetas' or 'kappas'")
    thetas = _probabilities(file, name, "thetas", entry["thetas"])
    kappas = _probabilities(file, name, "kappas", entry["kappas"])
    if setting == "yandex":  # GRAB: the 10 most attractive items, the 5 most examined positions
        thetas = np.sort(thetas)[::-1][:YANDEX_ITEMS]
        kappas = np.sort(kappas)[::-1][:YANDEX_POSITIONS]
    if len(kappas) > len(thetas):
        raise corrupt(Path(file), f"query {name} has more positions ({len(kappas)}) than "
                      f"items ({len(thetas)})")
    return PBMParams(thetas, kappas, name, file)
