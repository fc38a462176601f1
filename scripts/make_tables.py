"""Write the README's environment table from the registry, so that it lists every id there is.

The table sits between `<!-- envs:begin -->` and `<!-- envs:end -->` in README.md. Its rows come
from the Gymnasium registry (every `CtxBandit/` id in registration order, T = `max_episode_steps`)
and from `gym_ctxbandits.registration.TABLE_ROWS` (paper section and reward model, next to the
registrations); consecutive ids with the same entry share a row. tests/test_docs_blocks.py fails
when the committed table differs from this output.

    python scripts/make_tables.py           # rewrite the table in README.md
    python scripts/make_tables.py --check   # exit 1, saying so, if README.md's table is not this output
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import gymnasium as gym

import gym_ctxbandits  # noqa: F401  (registers the ids)
from gym_ctxbandits.registration import TABLE_ROWS

README = Path(__file__).resolve().parents[1] / "README.md"
BEGIN, END = "<!-- envs:begin -->", "<!-- envs:end -->"


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
    """`text` (README.md) with the table between the markers replaced by `env_table()`."""
    head, begin, rest = text.partition(BEGIN)
    _, end, tail = rest.partition(END)
    if not (begin and end):
        raise ValueError(f"README.md needs the markers {BEGIN} and {END} around the environment table")
    return f"{head}{BEGIN}\n{env_table()}\n{END}{tail}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="compare only; exit 1 if README.md is out of date")
    args = parser.parse_args(argv)
    text = README.read_text()
    new = rewritten(text)
    if args.check:
        if new != text:
            print("README.md's environment table is not the registry's: run `python scripts/make_tables.py`",
                  file=sys.stderr)
            return 1
        return 0
    if new != text:
        README.write_text(new)
        print(f"rewrote the environment table of {README}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
