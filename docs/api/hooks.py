"""MkDocs hook: links from docs/ to files of the repository outside it (scripts/, examples/, README.md).

Such a file is not a page of the site, so MkDocs reports the link as broken. The pages are read on
GitHub too, where the links work, so they stay as written; on the site the hook shows the file's
path instead of the link when the file exists, and warns (which fails `mkdocs build --strict`)
when it does not.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path

log = logging.getLogger("mkdocs.hooks.repository_links")

LINK = re.compile(r"(?<!!)\[([^\]]*)\]\(([^)\s#]+)(#[^)\s]*)?\)")


def on_page_markdown(markdown, page, config, files):
    docs = Path(config["docs_dir"]).resolve()
    root = docs.parent
    here = (docs / page.file.src_uri).parent

    def replace(match: re.Match) -> str:
        text, target = match[1], match[2]
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):        # a URL (https:, mailto:, ...)
            return match[0]
        path = (here / target).resolve()
        if path.is_relative_to(docs) or not path.is_relative_to(root):
            return match[0]                                  # a page of the site: MkDocs checks it
        relative = path.relative_to(root).as_posix()
        if not path.exists():
            log.warning(f"{page.file.src_uri} links to {target}, which the repository does not have")
            return match[0]
        if relative not in text:
            return f"{text} (`{relative}`)"
        return text if "`" in text else text.replace(relative, f"`{relative}`")

    return LINK.sub(replace, markdown)
