"""The Python examples of docs/agents.md run as written (the worked example of a new agent included)."""

import re
import sys
import types
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[1] / "docs" / "agents.md"
BLOCKS = re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.S)


@pytest.mark.parametrize("code", BLOCKS, ids=[f"block{i}" for i in range(len(BLOCKS))])
def test_agents_doc_example_runs(code, monkeypatch):
    # A module of its own, as a user's file would be (the conformance suite pickles the agent).
    module = types.ModuleType("docs_agents_example")
    monkeypatch.setitem(sys.modules, module.__name__, module)
    exec(compile(code, str(DOC), "exec"), module.__dict__)


def test_new_agent_example_is_short():
    """The worked example of a new algorithm stays under 60 lines (issue: adding an agent is one small module)."""
    example = next(b for b in BLOCKS if "class DiscountedLinUCB" in b)
    assert len(example.strip().splitlines()) < 60
