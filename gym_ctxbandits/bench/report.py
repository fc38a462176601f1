"""The scorecard of a `ctxbandits bench run` folder: every agent in it, and the shipped reference
results of the zoo (references.py) on the report track, against every other, per cell, per tag and
overall, as JSON (for machines), Markdown (for a paper's appendix) and one HTML page (html.py).
The folder's own agents are the "new" ones; the references' agents not run in the folder are the
zoo. Both play the same report seeds, so every comparison is paired by seed.

Per cell: final regret over Random's (paired bootstrap CI), the bsuite-style score, the rank among
the agents present, and each pair's win, tie or loss by the Wilcoxon signed-rank test. Per tag and
overall: the IQM of the per-seed scores with a stratified bootstrap CI, and the Bake-off's
wins-minus-losses matrix. On the replay cell, reward (clicks) replaces regret: higher is better.
A cell the suite marks `unscored` (the replay: too few clicks to tell agents apart) keeps its
row, interval and tests but stays out of the IQM scores, profiles and probabilities of improvement.
Each agent's numbers are labelled with their track: "defaults", or "tuned (budget B)" for an agent
a `bench run --tuned` folder played with its tuned configuration (tune.py) and for the agents of
the tuned track's references, the zoo a tuned folder is reported beside.

On a suite whose cells all play the Contextual Bandit Bake-off's protocol (`preset="cb-bakeoff"`:
rewards 1/0, so a round's loss is 1 - reward; pmlb-v1), the card adds the Bake-off's own metric and
rule beside the signed-rank tests (`bakeoff`): each agent's progressive-validation loss per cell (the
error rate of its pass, 1 - final cum_reward / T, the mean over the seeds) and the wins minus losses
of every pair of the chosen agents by the Bake-off's z-test (stats.wins_losses), n = T.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from scipy.stats import rankdata

from gym_ctxbandits.bench import html, stats
from gym_ctxbandits.bench import references as refs
from gym_ctxbandits.bench.run import BASELINE, read_manifest, slug, suite_of
from gym_ctxbandits.bench.suite import TAGS, base_track, is_tuned
from gym_ctxbandits.experiment import is_replay

ALPHA = 0.05


def results(out: Path, agent: str, cell_id: str):
    """An agent's logged rows (seed, round, cumulative regret and reward) of a cell in folder `out`."""
    from gym_ctxbandits.results import load_results

    try:
        return load_results(Path(out) / slug(agent) / cell_id)[["seed", "round", "cum_regret", "cum_reward"]]
    except FileNotFoundError:
        raise FileNotFoundError(f"{agent} has no finished results for cell {cell_id!r} in {out}: run `ctxbandits bench "
                                f"run --agents {agent} --out {out}` (with the same --suite and --quick) to finish "
                                "it") from None


def _finals(rows, seeds) -> dict[str, np.ndarray]:
    """Each seed's row at its last round, in `seeds` order (numpy: a leaderboard takes ~1,000)."""
    seed, rnd = rows["seed"].to_numpy(), rows["round"].to_numpy()
    order = np.lexsort((rnd, seed))                                      # by seed, then round
    ends = order[np.r_[seed[order][1:] != seed[order][:-1], True]]       # each seed's last round
    where = dict(zip(seed[ends].tolist(), ends.tolist()))
    try:
        pick = [where[s] for s in seeds]
    except KeyError as missing:
        raise KeyError(f"no rows of seed {missing.args[0]}") from None
    return {"regret": rows["cum_regret"].to_numpy()[pick], "reward": rows["cum_reward"].to_numpy()[pick],
            "round": rnd[pick]}


def finals(out: Path, agent: str, cell_id: str, seeds: list[int]) -> dict[str, np.ndarray]:
    """An agent's final cumulative regret and reward per seed (in `seeds` order) on a cell."""
    return _finals(results(out, agent, cell_id), seeds)


def gather(out, references: str | Path | None = "auto") -> dict:
    """Everything a report reads, read once: the folder's bench.json ("manifest"), the suite it pins
    ("suite") and that track's "cells" and "seeds", the folder's agents ("own"), {agent: {cell id:
    rows}} of every agent ("rows"), the references' summary ("summary") and each agent's CPU seconds
    per cell as its manifest records them ("cpu": the folder's bench.json, the references' manifest).

    `references`: "auto" takes the package's references of the folder's suite and track (the
    report track, the tuned track, a named one, e.g. glm, or its tuned twin) of a shipped suite
    (none on the quick track, or on a suite file of one's own); a folder takes those (a
    ReferenceMismatch unless they are of this suite's track, report seeds and cells; on a tuned
    folder, references of its tuned track at the same budget, or of the track it tunes, labelled
    "defaults"); None takes none. An
    agent run in the folder is taken from the folder, not from the references. A tuned folder
    whose tune seeds include a report seed is refused."""
    manifest = read_manifest(out)
    suite = suite_of(manifest)
    cells, seeds = suite.track(manifest["track"])
    if shared := sorted(set(manifest.get("tuned", {}).get("tune_seeds", ())) & set(seeds)):
        raise ValueError(f"{out}'s agents were tuned on seeds {shared[:5]}, which are its report seeds: a tuned agent "
                         "is never reported on a seed it was tuned on; tune on the suite's tune_seeds, run again")
    own = [BASELINE, *sorted(a for a in manifest["wall_seconds"] if a != BASELINE)]
    rows = {a: {c.id: results(out, a, c.id) for c in cells} for a in own}
    if references == "auto":
        shipped = manifest["track"] != "quick" and "file" not in manifest
        package = refs.folder(suite, manifest["track"])
        references = package if shipped and (package / refs.MANIFEST).exists() else None
    summary, zoo = {"folder": None, "agents": []}, {"agents": {}}
    if references is not None:
        if manifest["track"] == "quick":
            raise refs.ReferenceMismatch("reference results are of the report track; this folder holds the quick "
                                         "track: report it without references")
        track = manifest["track"]
        if is_tuned(track):                   # the tuned zoo, or the zoo at its defaults
            track = track if refs.track_of(references) == track else base_track(track)
        zoo = refs.read(references, suite, track=track)
        if is_tuned(track) and zoo["budget"] != manifest["budget"]:
            raise refs.ReferenceMismatch(f"the tuned references in {references} are of budget {zoo['budget']}, this "
                                         f"folder's agents of budget {manifest['budget']}: one budget for every agent")
        package = refs.folder(suite, track)
        name = f"package: references/{package.name}" if Path(references) == package else str(references)
        summary = {"folder": name, "agents": [a for a in zoo["agents"] if a not in own],
                   **({"budget": zoo["budget"]} if is_tuned(track) else {})}
        for agent in summary["agents"]:
            table = refs.table(references, zoo, agent)
            rows[agent] = {c.id: table[table["cell"] == c.id] for c in cells}
    cpu = {a: dict(manifest.get("cpu_seconds", {}).get(a, {})) for a in own}
    cpu.update({a: dict(zoo["agents"][a].get("cpu_seconds", {})) for a in summary["agents"]})
    return {"manifest": manifest, "suite": suite, "cells": cells, "seeds": seeds, "own": own, "rows": rows,
            "summary": summary, "cpu": cpu}


def sources(out, references: str | Path | None = "auto") -> tuple[dict, list[str], dict, dict]:
    """(bench.json, the folder's agents, {agent: {cell id: rows}} of every agent, references' summary):
    `gather`'s, `references` as there."""
    found = gather(out, references)
    return found["manifest"], found["own"], found["rows"], found["summary"]


def scorecard(out, alpha: float = ALPHA, resamples: int = stats.RESAMPLES, references="auto",
              baseline: str | None = None, highlight=(), bakeoff_agents=None) -> dict:
    """The scorecard of folder `out` as a JSON-ready dict (what `write` renders); `references` as
    for `sources`; `baseline`, `highlight` and `bakeoff_agents` as for `_card`."""
    return card_of(gather(out, references), alpha, resamples, baseline, highlight, bakeoff_agents)


def card_of(found: dict, alpha: float = ALPHA, resamples: int = stats.RESAMPLES, baseline: str | None = None,
            highlight=(), bakeoff_agents=None) -> dict:
    """The scorecard of what `gather` read (its suite, cells and seeds not read again)."""
    return _card(found["manifest"], found["own"], found["rows"], found["summary"], alpha, resamples,
                 suite=found["suite"], track=(found["cells"], found["seeds"]), cpu=found["cpu"], baseline=baseline,
                 highlight=highlight, bakeoff_agents=bakeoff_agents)


def tracks(manifest: dict, names: list[str], summary: dict | None = None) -> dict[str, str]:
    """Which track each agent's numbers come from: "tuned (budget B)" for an agent a tuned folder
    ran with its tuned configuration, or taken from tuned references (`summary` says their
    budget), "defaults" for the others (Random, which has nothing to tune, and the agents of the
    references of the report track, which ship at their defaults)."""
    tuned = {a: manifest["budget"] for a in manifest.get("tuned", {}).get("configs", {})}
    if (summary or {}).get("budget"):
        tuned.update({a: summary["budget"] for a in summary["agents"] if a != BASELINE})
    return {a: f"tuned (budget {tuned[a]})" if a in tuned else "defaults" for a in names}


def measure(cell) -> tuple[str, bool]:
    """What a cell's agents are scored by, and whether lower is better: the replay's clicks
    ("reward", higher is better), every other cell's regret ("regret", lower is better)."""
    return ("reward", False) if is_replay(cell.env) else ("regret", True)


def _card(manifest: dict, own: list[str], tables: dict, summary: dict, alpha: float, resamples: int, *,
          suite=None, track=None, cpu: dict | None = None, baseline: str | None = None, highlight=(),
          bakeoff_agents=None) -> dict:
    """The scorecard of `tables` ({agent: {cell id: rows}}) on the track `manifest` names: `suite`
    when given (else the manifest's, loaded again) and `track`, its (cells, seeds), when given (else
    asked of the suite); `cpu`: {agent: {cell id: CPU seconds of the
    cell, all seeds}} for the cost per 1,000 rounds; `baseline`: an agent every other is set against
    pair by pair (wins, ties and losses per cell, Holm-corrected, and the probability of
    improvement); `highlight`: the agents the HTML page's radar draws beside the new ones;
    `bakeoff_agents`: the agents of the Bake-off's wins-minus-losses table (default all; only on a
    suite of the Bake-off's protocol, `is_bakeoff`)."""
    suite = suite_of(manifest) if suite is None else suite
    cells, seeds = suite.track(manifest["track"]) if track is None else track
    names = [*own, *sorted(summary["agents"])]
    if unknown := [a for a in [*([baseline] if baseline else []), *highlight, *(bakeoff_agents or ())]
                   if a not in names]:
        raise ValueError(f"{', '.join(unknown)}: not on this scorecard; its agents are {', '.join(names)}")
    if bakeoff_agents and not is_bakeoff(cells):
        raise ValueError(f"--bakeoff-agents: suite {suite.key}'s cells do not all play the Bake-off's protocol "
                         "(preset='cb-bakeoff'), so it has no PV loss to test; drop the option")
    card = {"suite": suite.key, "track": manifest["track"], "seeds": seeds, "agents": names, "new": own[1:],
            "tracks": tracks(manifest, names, summary), "references": summary, "alpha": alpha,
            "test": "Wilcoxon signed-rank, two-sided, paired by seed; no multiplicity correction",
            "interval": f"{stats.LEVEL:.0%} percentile bootstrap, {resamples} resamples", "cells": {}}
    per_seed = {}                                   # (cell, agent) -> per-seed scores
    outcomes = {}                                   # (cell, agent, other) -> +1 / 0 / -1
    p_values = {}                                   # (cell, agent, other) -> the signed-rank test's p
    rounds = {}                                     # (cell, agent) -> rounds played, all seeds
    pv = {}                                         # cell -> {agent: PV loss, the mean over seeds}
    for cell in cells:
        column, lower = measure(cell)
        ends = {a: _finals(tables[a][cell.id], seeds) for a in names}
        values = {a: ends[a][column] for a in names}
        means = np.array([values[a].mean() for a in names])
        random = values[BASELINE].mean()
        ranks = rankdata(means if lower else -means)
        matrix, p = stats.pairwise([values[a] for a in names], lower, alpha)   # every pair's test at once
        rows = {}
        for i, a in enumerate(names):
            ratio, low, high = stats.ratio_ci(values[a], values[BASELINE], resamples=resamples)
            per_seed[cell.id, a] = stats.scores(values[a], values[BASELINE], lower)
            rounds[cell.id, a] = int(ends[a]["round"].sum())
            outcomes.update({(cell.id, a, b): int(matrix[i, j]) for j, b in enumerate(names) if j != i})
            p_values.update({(cell.id, a, b): float(p[i, j]) for j, b in enumerate(names) if j != i})
            rows[a] = {column: float(means[i]), "ratio": ratio, "ratio_ci": [low, high],
                       "score": float(stats.scores(means[i], random, lower)), "rank": float(ranks[i]),
                       "outcomes": {b: outcomes[cell.id, a, b] for b in names if b != a}}
        pv[cell.id] = {a: float(np.mean(1 - ends[a]["reward"] / ends[a]["round"])) for a in names}
        card["cells"][cell.id] = {"env": cell.env, "kwargs": cell.kwargs, "horizon": cell.horizon,
                                  "tags": list(cell.tags), "measure": column, "agents": rows,
                                  **({"unscored": cell.unscored} if cell.unscored else {})}
    groups = {"overall": list(cells), **{t: [c for c in cells if t in c.tags] for t in TAGS}}
    card["aggregates"] = {}
    for group, members in groups.items():
        if not members:
            continue
        scored = [c for c in members if not c.unscored                     # the suite keeps it out (the replay)
                  and not np.isnan(per_seed[c.id, BASELINE]).any()]           # Random has a value to divide by
        iqm = {a: stats.iqm_ci([per_seed[c.id, a] for c in scored], resamples=resamples) if scored
               else (np.nan, np.nan, np.nan) for a in names}
        wml = {a: {b: sum(outcomes[c.id, a, b] for c in members) for b in names if b != a} for a in names}
        wtl = {a: [sum(outcomes[c.id, a, b] == k for c in members for b in names if b != a) for k in (1, 0, -1)]
               for a in names}
        card["aggregates"][group] = {"cells": [c.id for c in members], "scored": [c.id for c in scored], "iqm": iqm,
                                     "wins_minus_losses": wml, "wins_ties_losses": wtl}
    overall = card["aggregates"]["overall"]
    scored = [c.id for c in cells if c.id in overall["scored"]]
    card["rank"] = _ranks({a: overall["iqm"][a][0] for a in names})
    card["cost"] = costs(names, [c.id for c in cells], cpu or {}, rounds)
    card["profiles"] = {"taus": stats.TAUS.tolist(), "fraction_above": {
        a: stats.performance_profile([per_seed[c, a] for c in scored]).tolist() for a in names}}
    card["probability_of_improvement"] = {a: {b: stats.probability_of_improvement(
        [per_seed[c, a] for c in scored], [per_seed[c, b] for c in scored]) if scored else np.nan
        for b in names if b != a} for a in names}
    card["multiplicity"] = _multiplicity(p_values, outcomes, alpha, len(seeds))
    card["baseline"] = baseline
    if baseline:
        card["against"] = _against(baseline, names, [c.id for c in cells], scored, per_seed, p_values, outcomes,
                                   alpha, resamples)
    if is_bakeoff(cells):
        card["bakeoff"] = bakeoff(pv, {c.id: c.horizon for c in cells}, list(bakeoff_agents or names), names,
                                  outcomes, alpha)
    new = card["new"]
    card["highlight"] = list(dict.fromkeys([*new, *highlight, *([baseline] if baseline else [])])) or \
        [a for a in sorted(names, key=card["rank"].get) if a != BASELINE][:3]
    return card


def is_bakeoff(cells) -> bool:
    """Whether every cell plays the Contextual Bandit Bake-off's protocol (`preset="cb-bakeoff"`, no
    other `cost_encoding`: rewards 1 for the true class, 0 otherwise), so 1 - reward is its loss."""
    return bool(cells) and all(c.kwargs.get("preset") == "cb-bakeoff" and c.kwargs.get("cost_encoding", "-1/0")
                               == "-1/0" for c in cells)


def bakeoff(pv: dict, n: dict, agents: list[str], names: list[str], outcomes: dict, alpha: float) -> dict:
    """The Bake-off's metric and rule: `pv` {cell: {agent: PV loss}}, `n` {cell: examples (T)}; for
    `agents`, the wins minus losses of each against each by the z-test (stats.wins_losses) and, beside
    it, the signed-rank wins minus losses (`outcomes`) over the same cells."""
    cells = list(pv)
    losses = np.array([[pv[c][a] for c in cells] for a in agents])
    table = stats.wins_losses(losses, [n[c] for c in cells], alpha)
    signed = {a: {b: sum(outcomes[c, a, b] for c in cells) for b in agents if b != a} for a in agents}
    mean = {a: float(np.mean([pv[c][a] for c in cells])) for a in names}
    return {"rule": f"z-test of the PV losses (error rates), n = T, two-sided at {alpha} (Bietti et al. 2021)",
            "agents": agents, "pv_loss": pv, "n": n, "mean_pv_loss": mean,
            "wins_minus_losses": {a: {b: int(table[i, j]) for j, b in enumerate(agents) if j != i}
                                  for i, a in enumerate(agents)},
            "signed_rank_wins_minus_losses": signed}


def _ranks(iqm: dict[str, float]) -> dict[str, int]:
    """Each agent's rank by overall IQM score, best 1 (ties share the best rank; no score: last)."""
    x = np.array([-v if v is not None and np.isfinite(v) else np.inf for v in iqm.values()])
    return dict(zip(iqm, rankdata(x, method="min").astype(int).tolist()))


def costs(names, cells, cpu: dict, rounds: dict) -> dict:
    """Each agent's compute cost: its CPU seconds per 1,000 rounds, the CPU seconds its manifest
    records for the cells (each the whole cell, all seeds: bench.json's for the folder's agents, the
    references' manifest for theirs) over the rounds those cells played (their seeds' last logged
    round), and on how many cells it was measured; None where no cell records any."""
    out = {}
    for a in names:
        timed = [c for c in cells if (cpu.get(a) or {}).get(c) is not None]
        seconds, played = sum(cpu[a][c] for c in timed), sum(rounds[c, a] for c in timed)
        out[a] = {"cpu_seconds": round(seconds, 2) if timed else None,
                  "cpu_seconds_per_1k_rounds": 1000 * seconds / played if timed and played else None,
                  "cells_timed": len(timed)}
    return out


def _multiplicity(p_values: dict, outcomes: dict, alpha: float, seeds: int | None = None) -> dict:
    """The family of every pair's signed-rank test on every cell (each unordered pair once): how
    many tests, how many wins or losses they call at `alpha` uncorrected, how many of those Holm's
    step-down correction keeps at family-wise error `alpha`, and how many calls pure chance would make
    were no agent different from any other (`alpha` times the tests). With `seeds` (at most
    `stats.EXACT_MAX`), the test's smallest possible p-value, 2 / 2^seeds (every difference of one
    sign), and so the largest family in which Holm's correction can keep anything: its first step
    needs p < alpha / tests."""
    keys = [k for k in p_values if k[1] < k[2]]
    p = np.array([p_values[k] for k in keys], float)
    kept = stats.holm(p) < alpha
    decided = [outcomes[k] != 0 for k in keys]
    smallest = 2 / 2 ** seeds if seeds and seeds <= stats.EXACT_MAX else None
    return {"tests": int(np.isfinite(p).sum()), "decided": int(sum(decided)),
            "holm": int(sum(d and h for d, h in zip(decided, kept))), "by_chance": float(alpha * np.isfinite(p).sum()),
            "seeds": seeds, "smallest_p": smallest, "largest_family": int(np.ceil(alpha / smallest) - 1) if smallest else None}


def _against(baseline: str, names, cells, scored, per_seed, p_values, outcomes, alpha, resamples) -> dict:
    """Each agent against `baseline`: wins, ties and losses over the cells (signed-rank, uncorrected),
    the same after Holm's correction over the family of every agent's test against the baseline on
    every cell, and rliable's probability of improvement P(agent > baseline) over the scored cells
    with its stratified bootstrap interval."""
    others = [a for a in names if a != baseline]
    keys = [(c, a, baseline) for a in others for c in cells]
    adjusted = dict(zip(keys, stats.holm([p_values[k] for k in keys])))
    out = {}
    for a in others:
        calls = [outcomes[c, a, baseline] for c in cells]
        held = [o if adjusted[c, a, baseline] < alpha else 0 for c, o in zip(cells, calls)]
        poi = stats.probability_of_improvement_ci([per_seed[c, a] for c in scored],
                                                  [per_seed[c, baseline] for c in scored], resamples=resamples) \
            if scored else (np.nan, np.nan, np.nan)
        out[a] = {"wins_ties_losses": [calls.count(k) for k in (1, 0, -1)],
                  "holm_wins_ties_losses": [held.count(k) for k in (1, 0, -1)],
                  "probability_of_improvement": list(poi),
                  "wins": [c for c, o in zip(cells, calls) if o == 1],
                  "losses": [c for c, o in zip(cells, calls) if o == -1]}
    return out


def _interval(x: float, low: float, high: float) -> str:
    if not np.isfinite(x):
        return "n/a"
    return f"{x:.2f} [{low:.2f}, {high:.2f}]" if np.isfinite(low) else f"{x:.2f}"


def markdown(card: dict) -> str:
    """The scorecard as Markdown: overall and per-tag IQM, the wins-minus-losses matrix, the cells."""
    names, overall = card["agents"], card["aggregates"]["overall"]
    intro = (f"{len(card['cells'])} cells, seeds {card['seeds'][0]}..{card['seeds'][-1]} ({len(card['seeds'])}). "
             "Score: 1 - regret / Random's, clipped to [0, 1] (replay: clicks / Random's - 1, clipped). "
             f"Intervals: {card['interval']}. Wins, ties, losses: {card['test']} (a win at p < {card['alpha']}).")
    if card.get("references", {}).get("agents"):
        intro += (f" Run in this folder: {', '.join(names[:len(names) - len(card['references']['agents'])])}; "
                  f"from the shipped references: {', '.join(card['references']['agents'])}.")
    tracks = card.get("tracks", {})
    intro += " Track of each agent's numbers: " + "; ".join(f"{a}: {tracks.get(a, 'defaults')}" for a in names) + "."
    rank = card.get("rank") or _ranks({a: overall["iqm"][a][0] for a in names})
    order = sorted(names, key=lambda a: (rank[a], names.index(a)))
    cost = card.get("cost", {})
    lines = [f"# Scorecard: suite {card['suite']}, {card['track']} track", "", intro, "",
             "## Overall", "", "Best overall IQM score first. CPU-s / 1k rounds: the CPU seconds its runs' manifest "
             "records for the cells (bench.json for this folder's agents, the references' manifest for theirs), "
             "per 1,000 rounds played; the machine and its load differ between the two sources.", "",
             "| rank | agent | track | IQM score [95% CI] | wins / ties / losses (cells x agents) | CPU-s / 1k rounds |",
             "|---|---|---|---|---|---|"]
    lines += [f"| {rank[a]} | {a} | {tracks.get(a, 'defaults')} | {_interval(*overall['iqm'][a])} | "
              f"{' / '.join(map(str, overall['wins_ties_losses'][a]))} | {_cost(cost.get(a))} |" for a in order]
    for c, cell in card["cells"].items():
        if cell.get("unscored"):
            lines += ["", f"Not in the IQM: {c} ({cell['unscored']}; its {cell['measure']} per seed and interval are "
                          "in the cells' table below)."]
    if many := card.get("multiplicity"):
        lines += ["", f"Multiple testing: the wins and losses are {many['tests']:,} signed-rank tests (every pair of "
                      f"agents on every cell) at {card['alpha']} with no correction; were no agent different from "
                      f"another, about {many['by_chance']:.0f} would still be called by chance. They call "
                      f"{many['decided']:,}; Holm's step-down correction over the family (family-wise error "
                      f"{card['alpha']}) keeps {many['holm']:,} of them." + _floor(many)]
    if card.get("baseline"):
        base, against = card["baseline"], card["against"]
        lines += ["", f"## Against {base}", "",
                  f"Per agent, its cells won, tied and lost against {base} (signed-rank, paired by seed, at "
                  f"{card['alpha']}); the same after Holm's correction over the {len(against) * len(card['cells'])} "
                  f"tests against {base}; and rliable's probability of improvement P(agent > {base}): the mean over "
                  "the scored cells of the chance that a seed's score beats one of "
                  f"{base}'s (ties count half), with its stratified bootstrap interval.", "",
                  f"| rank | agent | W / T / L vs {base} | W / T / L after Holm | P(agent > {base}) [95% CI] |",
                  "|---|---|---|---|---|"]
        lines += [f"| {rank[a]} | {a} | {' / '.join(map(str, against[a]['wins_ties_losses']))} | "
                  f"{' / '.join(map(str, against[a]['holm_wins_ties_losses']))} | "
                  f"{_interval(*against[a]['probability_of_improvement'])} |" for a in order if a != base]
    if profiles := card.get("profiles"):
        taus = [0.25, 0.5, 0.75, 0.9]
        at = [int(np.argmin(np.abs(np.array(profiles["taus"]) - t))) for t in taus]
        lines += ["", "## Performance profiles", "", "The fraction of (cell, seed) runs whose score is above tau, "
                  "over the scored cells (rliable's score distribution; the whole curve is in scorecard.json and "
                  "the HTML page).", "", "| agent | " + " | ".join(f"tau = {t:g}" for t in taus) + " |",
                  "|---" * (len(taus) + 1) + "|"]
        lines += [f"| {a} | " + " | ".join(f"{profiles['fraction_above'][a][i]:.2f}" for i in at) + " |"
                  for a in order]
    tags = [t for t in card["aggregates"] if t != "overall"]
    lines += ["", "## IQM score by tag", "", f"| agent | {' | '.join(tags)} |", "|---" * (len(tags) + 1) + "|"]
    lines += [f"| {a} | " + " | ".join(_interval(*card["aggregates"][t]["iqm"][a]) for t in tags) + " |" for a in names]
    lines += ["", "## Wins minus losses (row against column, over all cells)", "",
              f"| | {' | '.join(names)} |", "|---" * (len(names) + 1) + "|"]
    lines += [f"| {a} | " + " | ".join("" if a == b else str(overall["wins_minus_losses"][a][b]) for b in names) + " |"
              for a in names]
    if card.get("bakeoff"):
        lines += _bakeoff_markdown(card["bakeoff"], names)
    header = "| cell | tags | agent | final regret (reward) | / Random [95% CI] | score | rank | W / T / L |"
    lines += ["", "## Cells", "", header, "|---" * 8 + "|"]
    for cell_id, cell in card["cells"].items():
        for a in names:
            row = cell["agents"][a]
            wtl = [sum(v == k for v in row["outcomes"].values()) for k in (1, 0, -1)]
            value = f"{row[cell['measure']]:.1f}" + (" (reward)" if cell["measure"] == "reward" else "")
            lines.append(f"| {cell_id} | {', '.join(cell['tags'])} | {a} | {value} | "
                         f"{_interval(row['ratio'], *row['ratio_ci'])} | {_interval(row['score'], np.nan, np.nan)} | {row['rank']:g} | "
                         f"{' / '.join(map(str, wtl))} |")
    return "\n".join(lines) + "\n"


def _bakeoff_markdown(b: dict, names: list[str]) -> list[str]:
    """The Markdown of the Bake-off's section: its wins - losses table beside the signed-rank one,
    and the PV loss of every agent on every cell."""
    agents, wml, signed = b["agents"], b["wins_minus_losses"], b["signed_rank_wins_minus_losses"]
    lines = ["", "## The Bake-off's rule: wins minus losses (row against column)", "",
             f"The Contextual Bandit Bake-off's metric and rule beside the signed-rank tests above: each cell's "
             f"progressive-validation (PV) loss, the error rate of the pass (1 - final reward / T; in the Bake-off's "
             f"-1/0 cost encoding, this minus 1), the mean over the seeds; a win of row over column on a cell when "
             f"the {b['rule']}. Each entry: the z-test's wins - losses (the signed-rank tests' over the seeds).", "",
             f"| | {' | '.join(agents)} |", "|---" * (len(agents) + 1) + "|"]
    lines += [f"| {a} | " + " | ".join("" if a == c else f"{wml[a][c]} ({signed[a][c]})" for c in agents) + " |"
              for a in agents]
    lines += ["", "Mean PV loss over the cells: " + "; ".join(f"{a} {b['mean_pv_loss'][a]:.3f}" for a in names) + ".",
              "", "| cell | T | " + " | ".join(names) + " |", "|---" * (len(names) + 2) + "|"]
    lines += [f"| {c} | {b['n'][c]:,} | " + " | ".join(f"{b['pv_loss'][c][a]:.3f}" for a in names) + " |"
              for c in b["pv_loss"]]
    return lines


def _floor(many: dict) -> str:
    """Why Holm's correction may keep nothing: the test's smallest p-value at this many seeds."""
    if not many.get("smallest_p"):
        return ""
    return (f" With {many['seeds']} seeds the test's smallest p-value is "
            f"{many['smallest_p']:.3g} (every seed's difference of one sign), so Holm's correction over more than "
            f"{many['largest_family']} tests keeps nothing, however large the differences: more seeds, or a smaller "
            "family (one baseline, a few cells), are what would.")


def _cost(entry: dict | None) -> str:
    x = (entry or {}).get("cpu_seconds_per_1k_rounds")
    return "n/a" if x is None else f"{x:,.0f}" if x >= 100 else f"{x:.3g}"


def _finite(x):
    """`x` with NaN as None (JSON's null), so strict JSON readers take the file."""
    if isinstance(x, dict):
        return {k: _finite(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_finite(v) for v in x]
    return None if isinstance(x, float) and not np.isfinite(x) else x


def curves(card: dict, rows: dict, spread: bool = False) -> dict:
    """Per cell and agent, the mean over seeds of the cumulative regret (the replay: reward) at
    each logged round every seed reached: (rounds, means) for the HTML page; with `spread`,
    (rounds, means, standard deviations over the seeds) (ddof 1; 0 with one seed)."""
    out = {}
    for cell_id, cell in card["cells"].items():
        column = "cum_" + cell["measure"]
        out[cell_id] = {}
        for a in card["agents"]:
            table = rows[a][cell_id]
            mean = table.groupby("round")[column].agg(["mean", "size", "std"])
            mean = mean[mean["size"] == table["seed"].nunique()]
            line = (mean.index.to_numpy(), mean["mean"].to_numpy())
            out[cell_id][a] = (*line, np.nan_to_num(mean["std"].to_numpy())) if spread else line
    return out


def write(out, alpha: float = ALPHA, resamples: int = stats.RESAMPLES, references="auto", baseline: str | None = None,
          highlight=(), bakeoff_agents=None) -> tuple[Path, ...]:
    """Write scorecard.json, scorecard.md and scorecard.html into `out`; return their paths.
    `references` as for `sources`, `baseline` and `highlight` as for `_card`. The folder, its suite
    and the references are read once (`gather`), scored once, then rendered three ways."""
    found = gather(out, references)
    card = card_of(found, alpha, resamples, baseline, highlight, bakeoff_agents)
    out = Path(out)
    (out / "scorecard.json").write_text(json.dumps(_finite(card), indent=1, allow_nan=False) + "\n")
    (out / "scorecard.md").write_text(markdown(card))
    (out / "scorecard.html").write_text(html.page(card, curves(card, found["rows"], spread=True)))
    return out / "scorecard.json", out / "scorecard.md", out / "scorecard.html"
