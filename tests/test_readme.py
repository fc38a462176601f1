"""The README's Python examples run as written (the plain loop, the vector env, Stable-Baselines3)."""

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)


def test_readme_has_examples():
    assert len(BLOCKS) >= 3


@pytest.mark.parametrize("code", BLOCKS, ids=[f"block{i}" for i in range(len(BLOCKS))])
def test_readme_example_runs(code, capsys):
    exec(compile(code, str(README), "exec"), {})
    out = capsys.readouterr().out
    if "PPO" in code:
        assert "PPO plays arm 0" in out


def test_readme_commands_match_ci():
    text = README.read_text()
    ci = (README.parent / ".ci" / "run").read_text()
    test_cmd = re.findall(r"```bash\n(.*?)\n```", text, flags=re.S)[1]
    assert test_cmd.endswith("python -m pytest")
    assert test_cmd.replace("pip install ", "pip install -q ") in ci
