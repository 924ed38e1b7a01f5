"""Sphinx configuration of the documentation site (``make docs``: docs/README.md).

Pages are MyST Markdown; the notebooks render with their stored outputs (myst-nb, no
execution); the API reference, the config keys, the agent spec families and the
command-line help are generated from the code at each build (``_ext/scopa_docs.py``).
The build is strict: ``-W --keep-going -n`` turns a broken link, a missing name or a page
outside the navigation into an error.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "_ext"))

from scopa_env import __version__  # noqa: E402

project = "scopa"
author = "The scopa developers"
copyright = "The scopa developers, MIT License"
version = release = __version__

extensions = [
    "myst_nb",  # MyST Markdown pages and the notebooks (it loads myst_parser)
    "sphinx.ext.autodoc",
    "sphinx.ext.viewcode",
    "scopa_docs",
]

root_doc = "index"
# a ladder's notes.md is a person's notes that `scopa ladder` appends to its README.md
exclude_patterns = ["_build", "_ext", "_generated", "**/.ipynb_checkpoints", "ladder/notes.md",
                    "ladder/*/notes.md"]
# the stored outputs render as they are: the build never runs a notebook
nb_execution_mode = "off"
myst_enable_extensions = ["colon_fence", "deflist"]
myst_heading_anchors = 4

html_theme = "furo"
html_title = f"scopa {release}"
html_static_path: list[str] = []
html_show_sourcelink = False

# a reference to a missing name is an error (with -W); names of the libraries the kit
# uses but does not document are not missing
nitpicky = True
nitpick_ignore_regex = [
    (r"py:.*", r"(np|numpy|torch|gymnasium|gym|pettingzoo|pyspiel|open_spiel|ray|starlette|uvicorn"
               r"|stable_baselines3|sb3_contrib|torchrl|tensordict|yaml|tqdm|concurrent"
               r"|collections|typing|pathlib|argparse|dataclasses|sqlite3|asyncio|threading"
               r"|multiprocessing|subprocess|io|os|enum|abc|types|random)(\..*)?"),
    # private bases, and annotations autodoc could not evaluate (kept as text)
    (r"py:.*", r".*\._[A-Za-z]\w*|'.*|string"),
]

# the optional extras' libraries that a module imports at its top: mocked where they are
# not installed, so that `make docs` needs only the `train` and `docs` extras
OPTIONAL = ("pyspiel", "open_spiel", "sb3_contrib", "stable_baselines3", "ray", "torchrl",
            "tensordict", "starlette", "uvicorn")
autodoc_mock_imports = [m for m in OPTIONAL if importlib.util.find_spec(m) is None]
autodoc_member_order = "bysource"
autodoc_typehints = "none"
autodoc_default_options = {"members": True, "show-inheritance": True,
                           "ignore-module-all": True}
