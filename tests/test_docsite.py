"""The documentation site (mkdocs.yml, docs/index.md, docs/api/): every reference in it resolves.

Fast checks, in the default suite: every page of docs/ is in the nav and every nav entry is a page;
every `:::` reference of the API reference names a module or object of this checkout (read
statically by griffe, as mkdocstrings reads it); every module of an env or agent family is on an
API page; the hook that handles links to repository files outside docs/ keeps them honest.

The full build (`test_site_builds_in_strict_mode`) runs the README's documented command, `mkdocs
build --strict`, into a temp folder: it fails on any warning (a broken link or anchor, a docstring
griffe cannot parse). It takes about 7 CPU-seconds (25 s of wall time on 2 loaded cores), so it is
marked slow and .ci/run runs it as its own step after the default suite.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shlex
import subprocess
import sys
import types
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
API = DOCS / "api"
REFERENCE = re.compile(r"^::: ([\w.]+)$", re.M)
MEMBERS = re.compile(r"^::: ([\w.]+)\n(?:[ ]{4}.*\n)*?[ ]{6}members: \[([^\]]*)\]", re.M)
# Family modules that need no API page of their own, and why.
NOT_ON_A_PAGE = {
    "gym_ctxbandits.envs.vector": "the generated vector classes; CtxBanditVectorEnv documents them",
    "agents.neural.registry": "only registers the lazy entries of agents.neural",
}


def config() -> dict:
    yaml = pytest.importorskip("yaml")
    return yaml.safe_load((ROOT / "mkdocs.yml").read_text())


def nav_pages(entries) -> list[str]:
    """The page files of a nav (nested lists of `title: file` dicts and bare files)."""
    pages = []
    for entry in entries:
        for value in entry.values() if isinstance(entry, dict) else [entry]:
            pages += nav_pages(value) if isinstance(value, list) else [value]
    return pages


def api_pages() -> dict[Path, str]:
    return {page: page.read_text() for page in sorted(API.rglob("*.md"))}


def test_every_page_is_in_the_nav_and_every_nav_entry_is_a_page():
    nav = nav_pages(config()["nav"])
    pages = {p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md")}
    assert len(nav) == len(set(nav)), f"pages twice in the nav of mkdocs.yml: {sorted({p for p in nav if nav.count(p) > 1})}"
    assert not pages - set(nav), f"add these pages of docs/ to the nav of mkdocs.yml: {sorted(pages - set(nav))}"
    assert not set(nav) - pages, f"the nav of mkdocs.yml names pages docs/ does not have: {sorted(set(nav) - pages)}"


@pytest.fixture(scope="module")
def loader():
    griffe = pytest.importorskip("griffe", reason='the docs extra: pip install -e ".[docs]"')
    loader = griffe.GriffeLoader(search_paths=[str(ROOT)])
    for package in ("gym_ctxbandits", "agents"):
        loader.load(package)
    return loader


def found(loader, name: str) -> bool:
    try:
        loader.modules_collection[name]
        return True
    except KeyError:
        return False


def test_every_api_reference_names_an_object(loader):
    """What mkdocstrings would fail on: a `:::` line or a `members:` entry naming nothing."""
    references = {page: REFERENCE.findall(text) for page, text in api_pages().items()}
    assert sum(map(len, references.values())) >= 30, references
    missing = [f"{page.relative_to(ROOT)}: {name}" for page, names in references.items() for name in names
               if not found(loader, name)]
    for page, text in api_pages().items():
        for name, members in MEMBERS.findall(text):
            missing += [f"{page.relative_to(ROOT)}: {name}.{m}" for m in re.findall(r"[\w.]+", members)
                        if not found(loader, f"{name}.{m}")]
    assert not missing, f"API references to nothing (renamed or moved? fix docs/api/): {missing}"


def test_every_family_module_is_on_an_api_page():
    """One page per env family and agent family: a new module of envs/ or agents/ gets a `:::` line."""
    referenced = {name for text in api_pages().values() for name in REFERENCE.findall(text)}
    modules = [*(ROOT / "gym_ctxbandits" / "envs").glob("*.py"), *(ROOT / "agents").rglob("*.py")]
    names = {".".join(p.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__") for p in modules}
    names = {n for n in names if not n.rpartition(".")[2].startswith("_") and n not in ("agents", "gym_ctxbandits.envs")}
    assert set(NOT_ON_A_PAGE) <= names, "NOT_ON_A_PAGE names a module that is gone"
    absent = sorted(n for n in names - set(NOT_ON_A_PAGE) if not any(r == n or r.startswith(n + ".") for r in referenced))
    assert not absent, f"modules on no page of docs/api/ (add a `::: module` line, and the page to the nav): {absent}"


def hooks():
    spec = importlib.util.spec_from_file_location("docsite_hooks", API / "hooks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_links_to_repository_files_show_their_path_or_fail(caplog):
    page = types.SimpleNamespace(file=types.SimpleNamespace(src_uri="offpolicy.md"))
    markdown = ("[scripts/make_tables.py](../scripts/make_tables.py), [the script](../scripts/make_tables.py#L1), "
                "[`examples/`](../examples/), [agents](agents.md#speed), [web](https://example.org/a.md), "
                "[gone](../scripts/no_such_script.py)")
    out = hooks().on_page_markdown(markdown, page, {"docs_dir": str(DOCS)}, None)
    assert out == ("`scripts/make_tables.py`, the script (`scripts/make_tables.py`), `examples/`, "
                   "[agents](agents.md#speed), [web](https://example.org/a.md), [gone](../scripts/no_such_script.py)")
    assert [r.levelname for r in caplog.records] == ["WARNING"] and "no_such_script.py" in caplog.text


def documented_command() -> str:
    """The build command the README's Documentation section gives (docs/index.md gives the same)."""
    section = (ROOT / "README.md").read_text().partition("\n## Documentation\n")[2].partition("\n## ")[0]
    commands = re.findall(r"`(mkdocs build[^`]*)`", section)
    assert commands, "README.md's Documentation section gives the build command (`mkdocs build ...`)"
    assert f"`{commands[0]}`" in (DOCS / "index.md").read_text(), "docs/index.md gives the README's build command"
    return commands[0]


@pytest.mark.slow
def test_site_builds_in_strict_mode(tmp_path):
    pytest.importorskip("mkdocs", reason='the docs extra: pip install -e ".[docs]"')
    command = shlex.split(documented_command())
    assert "--strict" in command
    site = tmp_path / "site"
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1",
               PYTHONPATH=os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]))
    proc = subprocess.run([sys.executable, "-m", *command, "--site-dir", str(site)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, f"{' '.join(command)} failed:\n{proc.stderr[-4000:]}"
    # every reference rendered as an object of its page (mkdocstrings' anchors are the full paths)
    for page, text in api_pages().items():
        path = page.relative_to(DOCS)
        html = (site / (path.parent if path.name == "index.md" else path.with_suffix("")) / "index.html").read_text()
        for name in REFERENCE.findall(text):
            assert f'id="{name}"' in html, f"{page.relative_to(ROOT)}: {name} is not on its built page"
    synthetic = (site / "api" / "envs" / "synthetic" / "index.html").read_text()
    assert "<strong>Action Space:</strong>" in synthetic, "Gymnasium's docstring fields get a paragraph each"
    assert (site / "offpolicy" / "index.html").exists() and (site / "search" / "search_index.json").exists()
