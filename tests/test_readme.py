"""The README's test command is CI's. (Every block of the README runs in tests/test_docs_blocks.py.)"""

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_commands_match_ci():
    text = README.read_text()
    ci = (README.parent / ".ci" / "run").read_text()
    test_cmd = re.findall(r"```bash\n(.*?)\n```", text, flags=re.S)[1]
    assert test_cmd.endswith("python -m pytest")
    assert test_cmd.replace("pip install ", "pip install -q ") in ci


@pytest.mark.slow
def test_readme_first_command_shows_learning(tmp_path):
    """The README's first command, as written (less its install step, with its own --out): Random
    in the table, the best agent at most 0.3x Random's final regret, within 60 s."""
    import shlex
    import subprocess
    import sys
    import time

    import pandas as pd

    first = re.findall(r"```bash\n(.*?)\n```", README.read_text(), flags=re.S)[0]
    run = shlex.split(first.split("&&")[-1])
    assert run[:2] == ["ctxbandits", "run"] and "Random" in run[run.index("--agents") + 1].split(",")
    run[run.index("--out") + 1] = str(tmp_path / "out")
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "gym_ctxbandits.cli", *run[1:]], check=True, capture_output=True)
    seconds = time.perf_counter() - start
    table = pd.concat(pd.read_parquet(p) for p in (tmp_path / "out").glob("*.parquet"))
    final = table[table["round"] == table["round"].max()].groupby("agent")["cum_regret"].mean()
    assert final.drop("Random").min() <= 0.3 * final["Random"], final
    assert seconds <= 60, f"the first command took {seconds:.0f} s"
