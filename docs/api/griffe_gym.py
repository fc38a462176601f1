"""Griffe extension: Gymnasium's one-line docstring fields as their own paragraphs on the site.

The env classes document themselves as Gymnasium's do, one field a line ("Action Space: Discrete(K).",
"Rewards: ...", "Episode End: ..."). Markdown would run those lines into one paragraph; this puts each
on its own, its name in bold. The docstrings themselves are unchanged (help() shows them as written).
"""

from __future__ import annotations

import re

import griffe

FIELDS = ("Action Space", "Observation Space", "Starting State", "Rewards", "Reward", "Observation", "Info",
          "Episode End", "Arguments")
LINE = re.compile(rf"^({'|'.join(FIELDS)}): (?=\S)", re.M)


class GymFields(griffe.Extension):
    def on_instance(self, *, obj: griffe.Object, **kwargs) -> None:
        if obj.docstring is not None:
            obj.docstring.value = LINE.sub(lambda m: f"\n**{m[1]}:** ", obj.docstring.value)
