"""Watch and play Scopa in the browser.

``scopa_web.html`` turns a game record into one self-contained HTML page (a card
table with step, jump and autoplay controls); ``scopa_web.server`` is a local web
server (the standard library's ``http.server``) where a person plays a match
against any agent spec. Both sit above ``agents`` in the layers: the engine
(``scopa_env``) never imports them, and the ``scopa`` command imports them lazily.
"""

from __future__ import annotations

from importlib import resources


def asset(name: str) -> str:
    """The text of a file in ``scopa_web/static`` (CSS, JavaScript, page templates)."""
    return resources.files(__package__).joinpath("static", name).read_text(encoding="utf-8")


def fill(template: str, **parts: str) -> str:
    """Put each ``parts[key]`` where the template says ``{{key}}`` (one pass, no escaping:
    callers escape what they insert)."""
    out = template
    for key, value in parts.items():
        out = out.replace("{{" + key + "}}", value)
    return out
