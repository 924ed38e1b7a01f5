"""Watch and play Scopa in the browser.

``scopa_web.html`` turns a game record into one self-contained HTML page (a card
table with step, jump and autoplay controls); ``scopa_web.server`` is a local web
server (Starlette on uvicorn: the ``web`` extra) where a person plays a match
against any agent spec. Both sit above ``agents`` in the layers: the engine
(``scopa_env``) never imports them, and the ``scopa`` command imports them lazily.
"""

from __future__ import annotations

import re
from importlib import resources


def asset(name: str) -> str:
    """The text of a file in ``scopa_web/static`` (CSS, JavaScript, page templates)."""
    return resources.files(__package__).joinpath("static", name).read_text(encoding="utf-8")


def fill(template: str, **parts: str) -> str:
    """Put each ``parts[key]`` where the template says ``{{key}}``, in one pass over the
    template: what is inserted is never read again for placeholders (a player's name
    ``{{data}}`` stays text). No escaping: callers escape what they insert."""
    return re.sub(r"\{\{(\w+)\}\}", lambda m: parts.get(m[1], m[0]), template)
