"""The leaderboard of a shipped suite: the scorecard of the zoo's reference results alone.

Every agent of the suite's references is scored as `bench report` scores it (report.py: the IQM of
the per-seed scores over the cells with its stratified bootstrap interval, per tag and overall, and
wins, ties and losses by the paired signed-rank test against every other agent), and the table is
ranked by the overall IQM. docs/benchmark.md shows it between `<!-- leaderboard:begin -->` and
`<!-- leaderboard:end -->` (the defaults track), and the tuned track's between `<!--
leaderboard-tuned:begin -->` and `<!-- leaderboard-tuned:end -->`, written by `python
scripts/make_tables.py`; a test keeps them equal, so a reference rebuilt or added moves the page
with it. A named track's references (the GLM, bounded and neural tracks') make a leaderboard of their
own, between `<!-- leaderboard-NAME:begin -->` and its end marker: other cells and horizons, so its
scores are never compared with the report track's. Another shipped suite version's leaderboard
(bakeoff-v2's, `<!-- v2-leaderboard:begin -->`) is made the same way, and `compare_versions` sets
the agents a new version plays differently beside their rows on the former one; `tuning_gains`
sets each tuned agent's standing on the tuned track beside its defaults'.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from gym_ctxbandits.bench import references as refs
from gym_ctxbandits.bench import report, stats
from gym_ctxbandits.bench.run import BASELINE
from gym_ctxbandits.bench.suite import Suite, is_tuned


def card(suite: Suite, where: Path | None = None, resamples: int = stats.RESAMPLES, track: str = "report") -> dict:
    """The scorecard (report.py's dict) of every agent of the references in `where` (default: the
    package's of `suite` and `track`: "report", "tuned", a named track or its tuned twin), Random the baseline they
    are normalised by."""
    package = refs.folder(suite, track)
    where = package if where is None else Path(where)
    shipped = refs.read(where, suite, track=track)
    if BASELINE not in shipped["agents"]:
        raise refs.ReferenceMismatch(f"the references in {where} lack {BASELINE}, which every score is normalised by")
    tables = {}
    for agent in shipped["agents"]:
        table = refs.table(where, shipped, agent)
        tables[agent] = {c.id: table[table["cell"] == c.id] for c in suite.track(track)[0]}
    manifest = {"suite": suite.name, "version": suite.version, "track": track}
    summary = {"folder": f"package: references/{package.name}" if where == package else str(where),
               "agents": sorted(a for a in shipped["agents"] if a != BASELINE),
               **({"budget": shipped["budget"]} if is_tuned(track) else {})}
    cpu = {a: dict(entry.get("cpu_seconds", {})) for a, entry in shipped["agents"].items()}
    return report._card(manifest, [BASELINE], tables, summary, report.ALPHA, resamples, suite=suite, cpu=cpu)


def markdown(board: dict) -> str:
    """The leaderboard as a Markdown table: rank, agent, overall IQM score [95% CI], wins / ties /
    losses over all cells and agents, and the IQM of each tag; best overall IQM first."""
    overall = board["aggregates"]["overall"]
    tags = [t for t in board["aggregates"] if t != "overall"]
    order = ranked({a: overall["iqm"][a][0] for a in board["agents"]})
    lines = [f"| rank | agent | IQM score [95% CI] | W / T / L | {' | '.join(tags)} |",
             "|---" * (len(tags) + 4) + "|"]
    for rank, agent in enumerate(order, 1):
        by_tag = " | ".join(_point(board["aggregates"][t]["iqm"][agent][0]) for t in tags)
        lines.append(f"| {rank} | {agent} | {report._interval(*overall['iqm'][agent])} | "
                     f"{' / '.join(map(str, overall['wins_ties_losses'][agent]))} | {by_tag} |")
    return "\n".join(lines)


def ranked(iqm: dict[str, float]) -> list[str]:
    """The agents by overall IQM score, best first (ties by name, NaN last)."""
    return sorted(iqm, key=lambda a: (-np.nan_to_num(iqm[a], nan=-np.inf), a))


def overall_iqm(suite: Suite, track: str = "report") -> dict[str, float]:
    """Each agent's overall IQM score on the package's references of `suite`'s `track`: the point of
    `card`'s overall interval, without the card's intervals and tests (a tenth of its time)."""
    where = refs.folder(suite, track)
    shipped = refs.read(where, suite, verify=False, track=track)
    tables = {a: refs.table(where, shipped, a) for a in shipped["agents"]}
    cells, seeds = suite.track(track)
    per_seed: dict[str, list] = {a: [] for a in tables}
    for cell in (c for c in cells if not c.unscored):               # the suite leaves it out of the IQM
        column, lower = report.measure(cell)
        values = {a: report._finals(t[t["cell"] == cell.id], seeds)[column] for a, t in tables.items()}
        if np.isnan(stats.scores(values[BASELINE], values[BASELINE], lower)).any():
            continue                                   # Random has nothing to divide by: unscored, as in `card`
        for a in tables:
            per_seed[a].append(stats.scores(values[a], values[BASELINE], lower))
    return {a: stats.iqm(np.concatenate(s)) for a, s in per_seed.items()}


def _point(x: float) -> str:
    return f"{x:.2f}" if np.isfinite(x) else "n/a"


def standing(suite: Suite, track: str = "report") -> dict[str, tuple[float, int]]:
    """Each agent's overall IQM score on `suite`'s `track` and its rank there (1: the best)."""
    iqm = overall_iqm(suite, track)
    return {a: (iqm[a], rank) for rank, a in enumerate(ranked(iqm), 1)}


def _pair(boards: tuple[dict, dict], agent: str) -> str:
    """"IQM (rank of N) → IQM (rank of N)" of `agent` on two standings ("n/a" where it is not on one;
    "" where it is on neither)."""
    pair = [f"{s[agent][0]:.2f} ({s[agent][1]} of {len(s)})" if agent in s else "n/a" for s in boards]
    return " → ".join(pair) if any(agent in s for s in boards) else ""


def compare_versions(old: Suite, new: Suite, agents: list[str], tracks: list[str]) -> str:
    """How `agents` stand on two versions of a suite, per track whose references both have: the
    overall IQM score and rank on `old`, then on `new`, as a Markdown table (docs/bench_versions.md,
    the agents the new protocol changes)."""
    shown = [t for t in tracks if all((refs.folder(s, t) / refs.MANIFEST).exists() for s in (old, new))]
    boards = {t: (standing(old, t), standing(new, t)) for t in shown}
    lines = [f"| agent | {' | '.join(f'{t}: {old.key} → {new.key}' for t in shown)} |", "|---" * (len(shown) + 1) + "|"]
    lines += [f"| {agent} | {' | '.join(_pair(boards[t], agent) for t in shown)} |" for agent in agents]
    return "\n".join(lines)


def tuning_gains(suite: Suite) -> str:
    """Every agent of the tuned track's references beside its defaults: overall IQM score and rank on
    the report track, then on the tuned track, the change, best tuned first, as a Markdown table
    (docs/tuning.md: generated, so a study shipped moves every rank with it)."""
    boards = standing(suite), standing(suite, "tuned")
    order = sorted((a for a in boards[1] if a != BASELINE), key=lambda a: boards[1][a][1])
    lines = ["| agent | defaults → tuned: IQM score (rank) | change |", "|---|---|---|"]
    lines += [f"| {a} | {_pair(boards, a)} | {round(boards[1][a][0] - boards[0][a][0], 2) + 0:+.2f} |" for a in order]
    return "\n".join(lines)
