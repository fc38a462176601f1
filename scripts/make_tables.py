"""Write the docs' generated tables: README's environments, the bake-off's suite, references,
search spaces and leaderboards (docs/benchmark.md, the bench_*.md reference pages, docs/tuning.md),
so that each mirrors the registry or the shipped files.

The table sits between `<!-- envs:begin -->` and `<!-- envs:end -->` in README.md. Its rows come
from the Gymnasium registry (every `CtxBandit/` id in registration order, T = `max_episode_steps`)
and from `gym_ctxbandits.registration.TABLE_ROWS` (paper section and reward model, next to the
registrations); consecutive ids with the same entry share a row. The bake-off's tables sit
between `<!-- NAME:begin -->` and `<!-- NAME:end -->` (`bench_tables`), each in the one page of
PAGES (every page of docs/) that holds its markers, so a table moves with them (`shown(NAME)`
finds it): the default suite's cells, every agent's search space and the leaderboard of each
track's references (the report track's, the tuned track's, every named track's of the suite file
and each named track's tuned twin whose references are built, e.g. `leaderboard-glm-tuned`); the cost tables of bakeoff-v1's references,
where they were run (e.g. `references-glm-tuned`); and bakeoff-v1's report-track leaderboard and
its agents that read a horizon against bakeoff-v2 (`v1-leaderboard`, `versions`); pmlb-v1's references and
leaderboard (`references-pmlb-v1`, `leaderboard-pmlb-v1`, docs/bench_pmlb.md); nonstationary-v1's
(`references-nonstationary-v1`, `leaderboard-nonstationary-v1`, docs/bench_nonstationary.md); ranking-v1's, of
its report and PBM tracks (`references-ranking-v1`, `leaderboard-ranking-v1-pbm`, ..., docs/bench_ranking.md). Tests fail
when a committed table differs from this output (tests/test_docs_blocks.py, tests/test_bench.py,
tests/test_bench_tune.py).

    python scripts/make_tables.py           # rewrite the tables in README.md and the pages of docs/ that hold them
    python scripts/make_tables.py --check   # exit 1, naming the stale pages, if a table is not this output
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import gymnasium as gym

import gym_ctxbandits  # noqa: F401  (registers the ids)
from gym_ctxbandits.bench import run
from gym_ctxbandits.jobs import AgentSpec
from gym_ctxbandits.registration import TABLE_ROWS

README = Path(__file__).resolve().parents[1] / "README.md"
PAGES = tuple(sorted((README.parent / "docs").glob("*.md")))   # the bake-off's tables are in some of them
BEGIN, END = "<!-- envs:begin -->", "<!-- envs:end -->"


def bench_tables() -> dict:
    """The bake-off's generated tables, by marker name: the default suite's (bakeoff-v2) cells,
    search spaces and leaderboards; the reference tables of bakeoff-v1, where every agent's rows were
    run and their cost measured (bakeoff-v2 copies them but for the agents that read a horizon); and
    bakeoff-v1's report-track leaderboard with the versions table."""
    from gym_ctxbandits.bench import leaderboard, references, suite, tune

    shipped, built = suite.load(suite.DEFAULT), suite.load("bakeoff-v1")
    return {"suite": suite.markdown_table(shipped),
            "references": references.markdown_table(references.read(references.folder(built), built)),
            "references-tuned": references.markdown_table(
                references.read(references.folder(built, "tuned"), built, track="tuned")),
            **{f"references-{name}": references.markdown_table(
                references.read(references.folder(built, name), built, track=name))
               for name in references.built_twins(built)},       # a named track's tuned twin, if built
            "spaces": tune.markdown_spaces(shipped),
            **{f"leaderboard-{name}" if name != "report" else "leaderboard":
               leaderboard.markdown(leaderboard.card(shipped, track=name))
               for name in ("report", *shipped.tracks, "tuned", *references.built_twins(shipped))},
            "tuning-gains": leaderboard.tuning_gains(shipped),
            **v1_tables(), **pmlb_tables(), **nonstationary_tables(), **ranking_tables()}


def suite_tables(key: str, tracks: tuple[str, ...] = ("report",)) -> dict:
    """A shipped suite's own page's tables: each of `tracks`' references' cost table and leaderboard
    (`references-KEY` and `leaderboard-KEY` for the report track, `references-KEY-TRACK` and
    `leaderboard-KEY-TRACK` for a named one)."""
    from gym_ctxbandits.bench import leaderboard, references, suite

    shipped = suite.load(key)
    tables = {}
    for track in tracks:
        name = key if track == "report" else f"{key}-{track}"
        manifest = references.read(references.folder(shipped, track), shipped, track=track)
        tables[f"references-{name}"] = references.markdown_table(manifest)
        tables[f"leaderboard-{name}"] = leaderboard.markdown(leaderboard.card(shipped, track=track))
    return tables


def pmlb_tables() -> dict:
    """pmlb-v1's (the Bake-off's track, docs/bench_pmlb.md): its references' cost table and leaderboard."""
    return suite_tables("pmlb-v1")


def nonstationary_tables() -> dict:
    """nonstationary-v1's (issue 51, docs/bench_nonstationary.md): its references' cost table and leaderboard."""
    return suite_tables("nonstationary-v1")


def ranking_tables() -> dict:
    """ranking-v1's (issue 50, docs/bench_ranking.md): the report track's and the PBM track's references'
    cost tables and leaderboards."""
    return suite_tables("ranking-v1", ("report", "pbm"))


def v1_tables() -> dict:
    """bakeoff-v1's report-track leaderboard, and how the agents bakeoff-v2 gives the cell's horizon
    stand on v1 and v2, on the report, tuned and each named track and tuned twin."""
    from gym_ctxbandits.bench import leaderboard, references, suite

    one, two = suite.load("bakeoff-v1"), suite.load("bakeoff-v2")
    tracks = [t for t in ("report", "tuned", *two.tracks, *references.built_twins(two))
              if (references.folder(two, t) / references.MANIFEST).exists()]
    takers = sorted({a for t in tracks for a in references.read(references.folder(two, t), two, verify=False,
                                                                 track=t)["agents"]
                     if run.for_cell(AgentSpec(a, {}), two.cells[0], two).kwargs})
    return {"v1-leaderboard": leaderboard.markdown(leaderboard.card(one)),
            "versions": leaderboard.compare_versions(one, two, takers, tracks)}


def replaced(text: str, name: str, table: str) -> str:
    """`text` with the block between `<!-- name:begin -->` and `<!-- name:end -->` replaced by `table`."""
    begin, end = f"<!-- {name}:begin -->", f"<!-- {name}:end -->"
    head, found, rest = text.partition(begin)
    _, found_end, tail = rest.partition(end)
    if not (found and found_end):
        raise ValueError(f"the page needs the markers {begin} and {end} around the {name} table")
    return f"{head}{begin}\n{table}\n{end}{tail}"


def holder(name: str, texts: dict[Path, str]) -> Path:
    """The one page of `texts` (page -> its text) that holds the markers of table `name`."""
    pages = [page for page, text in texts.items() if f"<!-- {name}:begin -->\n" in text]
    if len(pages) != 1:
        raise ValueError(f"{len(pages)} of {', '.join(p.name for p in texts)} hold the markers of the {name} table: "
                         "put them in one")
    return pages[0]


def shown(name: str) -> tuple[Path, str]:
    """The page of PAGES that holds the markers of table `name`, and the table it shows there."""
    page = holder(name, texts := {p: p.read_text() for p in PAGES})
    return page, texts[page].partition(f"<!-- {name}:begin -->\n")[2].partition(f"\n<!-- {name}:end -->")[0]


def env_table() -> str:
    """The markdown table of every registered `CtxBandit/` id: id, paper section, reward model, T."""
    rows: list[tuple[list[str], str, str, str]] = []
    for env_id, spec in gym.registry.items():
        if not env_id.startswith("CtxBandit/"):
            continue
        name = env_id.removeprefix("CtxBandit/").removesuffix("-v0")
        if name not in TABLE_ROWS:
            raise KeyError(f"{env_id} has no entry in gym_ctxbandits.registration.TABLE_ROWS (paper section, reward "
                           "model): add one")
        section, model = TABLE_ROWS[name]
        horizon = "accepted events" if spec.max_episode_steps is None else f"{spec.max_episode_steps:,}"
        if rows and rows[-1][1:] == (section, model, horizon):
            rows[-1][0].append(env_id)
        else:
            rows.append(([env_id], section, model, horizon))
    lines = ["| id | paper, section | reward model | T |", "|---|---|---|---|"]
    lines += [f"| {', '.join(f'`{i}`' for i in ids)} | {section} | {model} | {horizon} |"
              for ids, section, model, horizon in rows]
    return "\n".join(lines)


def rewritten(text: str) -> str:
    """`text` (README.md) with the table between the markers BEGIN and END replaced by `env_table()`."""
    return replaced(text, "envs", env_table())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="compare only; exit 1 if a table is out of date")
    args = parser.parse_args(argv)
    pages = {page: page.read_text() for page in PAGES}
    written = {README: rewritten(README.read_text()), **pages}
    for name, table in bench_tables().items():
        page = holder(name, pages)
        written[page] = replaced(written[page], name, table)
    stale = [(path, text, written[path]) for path, text in [(README, README.read_text()), *pages.items()]
             if written[path] != text]
    if args.check:
        for path, *_ in stale:
            print(f"{path.name}'s generated tables are stale: run `python scripts/make_tables.py`", file=sys.stderr)
        return 1 if stale else 0
    for path, _, new in stale:
        path.write_text(new)
        print(f"rewrote the generated tables of {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
