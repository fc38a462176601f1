"""The repository stands alone: it cites only the papers and its own docs/papers.md.

- no file cites the planning document outside the repository that the project started from;
- every choice or claim id cited anywhere ("docs/papers.md, S0-A5") is defined in docs/papers.md;
- the README points to docs/papers.md, and the relative links of the docs resolve.
"""

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAPERS = ROOT / "docs" / "papers.md"
SKIP_DIRS = {".git", ".venv", "venv", "__pycache__", ".pytest_cache", "results", "build", "dist"}
# Built from parts so that this file does not match itself.
EXTERNAL = re.compile("CATA" + "LOG|cata" + "log", re.IGNORECASE)
ID = re.compile(r"\bS[0-4]-[AC]\d+\b")
DEFINED = re.compile(r"^- \*\*(S[0-4]-[AC]\d+)\*\*", re.MULTILINE)


def repo_files() -> list[Path]:
    """Tracked files and untracked ones git does not ignore; every file when git is not there."""
    try:
        out = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                             capture_output=True, check=True).stdout
        paths = [ROOT / p for p in out.decode().split("\0") if p]
    except (OSError, subprocess.CalledProcessError):
        paths = [p for p in ROOT.rglob("*") if not SKIP_DIRS & set(p.relative_to(ROOT).parts)
                 and not any(part.endswith(".egg-info") for part in p.parts)]
    return [p for p in paths if p.is_file()]


def text_files() -> dict[Path, str]:
    texts = {}
    for path in repo_files():
        data = path.read_bytes()
        if b"\0" in data[:4096]:
            continue  # binary (figures)
        texts[path] = data.decode("utf-8", errors="replace")
    return texts


@pytest.fixture(scope="module")
def texts():
    return text_files()


def test_no_file_cites_the_external_planning_document(texts):
    hits = [f"{path.relative_to(ROOT)}:{text.count(chr(10), 0, m.start()) + 1}"
            for path, text in texts.items() for m in EXTERNAL.finditer(text)]
    assert not hits, "cite the papers or docs/papers.md instead: " + ", ".join(hits)


def test_papers_md_defines_each_id_once():
    defined = DEFINED.findall(PAPERS.read_text())
    assert len(defined) > 50
    duplicates = sorted({i for i in defined if defined.count(i) > 1})
    assert not duplicates, f"ids defined twice in docs/papers.md: {duplicates}"
    for paper in range(5):  # every paper has choices and claims
        assert f"S{paper}-A1" in defined and f"S{paper}-C1" in defined


def test_every_cited_id_is_defined(texts):
    defined = set(DEFINED.findall(PAPERS.read_text()))
    missing = sorted({f"{i} ({path.relative_to(ROOT)})" for path, text in texts.items()
                      for i in ID.findall(text) if i not in defined})
    assert not missing, f"ids cited but not defined in docs/papers.md: {missing}"


def test_code_cites_papers_md():
    cited = [p for p in (ROOT / "gym_ctxbandits").rglob("*.py") if "docs/papers.md" in p.read_text()]
    assert cited, "the environments' docstrings point to docs/papers.md"


def test_readme_points_to_papers_md():
    assert "(docs/papers.md)" in (ROOT / "README.md").read_text()


def test_relative_links_in_the_docs_resolve():
    broken = []
    for md in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for target in re.findall(r"\]\(([^)\s]+)\)", md.read_text()):
            if re.match(r"[a-z]+:", target) or target.startswith("#"):
                continue
            if not (md.parent / target.split("#")[0]).exists():
                broken.append(f"{md.relative_to(ROOT)}: {target}")
    assert not broken, broken
