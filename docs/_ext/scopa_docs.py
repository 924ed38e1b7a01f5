"""The site's pages that the code already holds, generated at each build.

Written before Sphinx reads the sources (``builder-inited``), only where the text
changed, so the two cannot drift:

- ``api/``: one page per public module of every layer (autodoc), and its index;
- ``notebooks/``: the notebooks, copied as they are (rendered with their stored outputs);
- ``_generated/``: Markdown included by the pages: every config key by section
  (``scopa_train.config.sections``), the stage kinds, the old flat keys, the agent spec
  families (``agents.known_specs``) and each subcommand's ``--help``.

The docstrings are Markdown (single backticks, tables, fenced code): ``md-docstring``
renders them with MyST inside autodoc's output.
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib
import io
import os
import pkgutil
import re
import shutil
from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective

LAYERS = (
    ("scopa_env", "The engine and the environments (no torch)"),
    ("agents", "Agents, baselines, evaluation, the ladder and the bridges"),
    ("scopa_policy", "The learned policies (the inference layer)"),
    ("scopa_train", "Training: the config, the stage kinds, the recipe"),
    ("scopa_web", "The browser: replay pages and scopa serve"),
    ("scopa_cli", "The scopa command"),
)
"""The public packages, from the bottom layer up, with their one-line summary."""

def write(path: Path, text: str) -> None:
    """``text`` into ``path``, left untouched when it holds it already (no rebuild)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")


def cell(text: Any) -> str:
    """Text for one cell of a Markdown table."""
    return " ".join(str(text).split()).replace("|", "\\|")


def code(value: Any) -> str:
    """``value`` as inline code in a table cell."""
    text = repr(value) if not isinstance(value, str) else (value or "''")
    return "``" + cell(text) + "``"


def table(head: tuple[str, ...], rows: list[tuple[str, ...]]) -> str:
    """A Markdown table."""
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


# -- the API reference --------------------------------------------------------------------

def public_modules(package: str) -> list[str]:
    """``package`` and its modules, none with a part that starts with ``_``."""
    root = importlib.import_module(package)
    names = [package]
    if hasattr(root, "__path__"):
        for info in pkgutil.walk_packages(root.__path__, package + "."):
            if not any(part.startswith("_") for part in info.name.split(".")):
                names.append(info.name)
    return sorted(names)


def api_pages(out: Path) -> None:
    """``out/MODULE.rst`` per public module and ``out/index.md`` listing them by layer."""
    index = ["# API reference\n",
             "Generated from the docstrings at each build, one page per public module, the",
             "layers from the bottom up (each imports only those above it in this list).\n"]
    keep = {"index.md"}
    for package, summary in LAYERS:
        modules = public_modules(package)
        index += [f"## `{package}`\n", f"{summary}.\n", "```{toctree}", ":maxdepth: 1\n"]
        for name in modules:
            keep.add(f"{name}.rst")
            index.append(name)
            title = f"``{name}``"
            write(out / f"{name}.rst", f"{title}\n{'=' * len(title)}\n\n"
                  f".. automodule:: {name}\n")
        index.append("```\n")
    write(out / "index.md", "\n".join(index))
    for stale in out.glob("*.rst"):
        if stale.name not in keep:
            stale.unlink()


def render_markdown(directive: SphinxDirective, text: str) -> list[nodes.Node]:
    """``text`` (MyST Markdown) as nodes, where ``directive`` stands."""
    from myst_parser.mdit_to_docutils.sphinx_ import SphinxRenderer
    from myst_parser.parsers.mdit import create_md_parser

    # reStructuredText's "text::" before an indented block: in Markdown the block is code
    # already, and the colons one
    text = re.sub(r"(?m)(\S)::$", r"\1:", re.sub(r"(?m)^[ \t]*::$", "", text))
    holder = nodes.container()
    parser = create_md_parser(directive.env.myst_config, SphinxRenderer)
    md_env: dict[str, Any] = {}
    tokens = parser.parse(text, md_env)
    renderer = parser.renderer
    # the render's middle only: its start and end are the page's (metadata, the word
    # count's substitutions), which a page of many docstrings would repeat
    renderer.setup_render({**parser.options, "document": directive.state.document,
                           "current_node": holder}, md_env)
    renderer._render_tokens(tokens)
    return list(holder.children)


class MarkdownDocstring(SphinxDirective):
    """A docstring, written in Markdown, rendered by MyST where autodoc puts it."""

    has_content = True

    def run(self) -> list[nodes.Node]:
        return render_markdown(self, "\n".join(self.content))


class ModuleDocstring(SphinxDirective):
    """A module's docstring as part of a page (``{module-docstring} scopa_env.env``): the
    environments' tables of spaces, options and rewards are written there, once."""

    required_arguments = 1

    def run(self) -> list[nodes.Node]:
        import inspect

        module = importlib.import_module(self.arguments[0])
        return render_markdown(self, inspect.getdoc(module) or "")


def markdown_docstring(app: Sphinx, what: str, name: str, obj: Any, options: Any,
                       lines: list[str]) -> None:
    """Hand a docstring to ``md-docstring`` (autodoc would read it as reStructuredText)."""
    if any(line.strip() for line in lines):
        lines[:] = [".. md-docstring::", ""] + [("   " + line).rstrip() for line in lines] + [""]


# -- training: config keys, stage kinds, old keys -----------------------------------------

def config_pages(out: Path) -> None:
    """The stage kinds, the top-level keys, every section's keys and the old flat keys."""
    from scopa_train.config import (
        DEFAULT_OPPONENTS,
        INIT_FROM_HELP,
        OPPONENTS_HELP,
        section_kinds,
        sections,
    )
    from scopa_train.old_layout import OLD_KEYS
    from scopa_train.settings import type_of, value_range
    from scopa_train.stages import RENAMED, kinds

    ks = kinds()
    rows = [(code(name), cell(k.help), ", ".join(code(s) for s in k.sections) or "none",
             ", ".join(code(s) for s in k.reads) or "none",
             "yes" if k.from_policy else "no", "yes" if k.ray else "no")
            for name, k in ks.items()]
    text = table(("kind", "what it trains", "its sections", "also reads", "needs init_from",
                  "rollouts on Ray"), rows)
    text += "".join(f"\n`{old}` is read as `{new}` (its earlier name).\n"
                    for old, new in RENAMED.items())
    write(out / "stage_kinds_table.md", text)

    top = [(code("kind"), "str", code("ppo"), " / ".join(code(k) for k in ks),
            "what the stage trains (the table of stage kinds)"),
           (code("init_from"), "str", code(""), "a file, a run folder, `pretrained`",
            cell(INIT_FROM_HELP)),
           (code("opponents"), "mapping", code(DEFAULT_OPPONENTS), "weights >= 0",
            cell(OPPONENTS_HELP)),
           (code("stages"), "list", "", "stages",
            "a recipe: each stage a mapping with `name`, `kind`, optional `init_from` and "
            "any sections to change"),
           (code("name"), "str", "", "", "a stage's name (in `stages:`)")]
    parts = ["### Top-level keys\n",
             "A config's own keys (a recipe's stages have the same, besides `stages`).\n",
             table(("key", "type", "default", "allowed", "what"), top)]
    readers = section_kinds()
    for name, cls in sections().items():
        defaults = cls()
        rows = []
        for f in dataclasses.fields(cls):
            m = f.metadata
            allowed = (" / ".join(code(c) for c in m["choices"]) if m["choices"] else
                       code(value_range(m)) if m["lo"] is not None or m["hi"] is not None
                       else "")
            rows.append((code(f"{name}.{f.name}"), type_of(f).__name__,
                         code(getattr(defaults, f.name)), allowed, cell(m["help"])))
        who = (f"Read by the stage kinds {', '.join(code(k) for k in readers[name])}; "
               f"declared in `{cls.__module__}`." if name in readers else
               f"Every stage kind reads it; declared in `{cls.__module__}`.")
        parts += [f"### `{name}`\n", who + "\n",
                  table(("key", "type", "default", "allowed", "what"), rows)]
    write(out / "config_keys.md", "\n".join(parts))
    write(out / "old_keys.md", table(("old key", "now"),
                                     [(code(k), code(v) if not v.startswith("(") else cell(v))
                                      for k, v in OLD_KEYS.items()]))


# -- the rules ---------------------------------------------------------------------------

def rules_page(out: Path) -> None:
    """Every rule option with its default, and the named rule sets
    (``scopa_env.rules``: ``Rules``, ``NAMED_RULES``)."""
    from scopa_env.rules import NAMED_RULES, Rules

    named = ", ".join(f"`{n}`" for n in NAMED_RULES)
    rows = [(code(f.name), type(getattr(Rules(), f.name)).__name__,
             code(getattr(Rules(), f.name)),
             ", ".join(f"`{n}`: {code(v[f.name])}" for n, v in NAMED_RULES.items()
                       if f.name in v))
            for f in dataclasses.fields(Rules) if f.name != "name"]
    write(out / "rules_options.md",
          f"The named rule sets are {named}; each is `scopa`'s defaults with the changes "
          f"in the last column.\n\n"
          + table(("option", "type", "default (`scopa`)", "named sets that change it"), rows))


# -- agent specs, the command line --------------------------------------------------------

def agent_specs_page(out: Path) -> None:
    """Every agent spec family (``agents.known_specs``): its form and what it plays."""
    from agents import known_specs

    rows = []
    for line in known_specs():
        form, _, what = line.partition("  (")
        rows.append((code(form.strip()), cell(what.rstrip(")"))))
    write(out / "agent_specs.md", table(("spec", "what it is"), rows))


def help_text(command: str) -> str:
    """What ``scopa COMMAND --help`` prints (88 columns)."""
    import scopa_cli

    buf = io.StringIO()
    old = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = "88"
    try:
        with contextlib.redirect_stdout(buf), contextlib.suppress(SystemExit):
            scopa_cli.main([command, "--help"] if command else ["--help"])
    finally:
        if old is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = old
    return buf.getvalue().rstrip()


def subcommands() -> list[str]:
    """The subcommands of ``scopa``, in its own order, from its parser."""
    import argparse

    import scopa_cli

    parser = scopa_cli.build_parser()
    return [name for action in parser._actions  # argparse lists its subparsers only here
            if isinstance(action, argparse._SubParsersAction) for name in action.choices]


def cli_page(out: Path) -> None:
    """``scopa --help`` and each subcommand's ``--help``, as the command prints them."""
    parts = ["```text", "$ scopa --help", help_text(""), "```\n"]
    for sub in subcommands():
        parts += [f"## `scopa {sub}`\n", "```text", f"$ scopa {sub} --help", help_text(sub),
                  "```\n"]
    write(out / "cli_help.md", "\n".join(parts))


# -- the build ---------------------------------------------------------------------------

def copy_notebooks(src: Path, out: Path) -> None:
    """The repository's notebooks into the site's sources, byte for byte."""
    out.mkdir(parents=True, exist_ok=True)
    for nb in sorted(src.glob("*.ipynb")):
        target = out / nb.name
        if not target.exists() or target.read_bytes() != nb.read_bytes():
            shutil.copyfile(nb, target)


def generate(app: Sphinx) -> None:
    """Every generated page, before Sphinx reads the sources."""
    src = Path(app.srcdir)
    # myst-nb writes the notebooks' images beside the output folder (site/../): into the
    # build's cache instead, where nothing of the checkout is
    config = getattr(app.env, "mystnb_config", None)
    if config is not None:
        app.env.mystnb_config = config.copy(
            output_folder=str(Path(app.doctreedir).resolve() / "jupyter_execute"))
    api_pages(src / "api")
    copy_notebooks(src.parent / "notebooks", src / "notebooks")
    gen = src / "_generated"
    config_pages(gen)
    agent_specs_page(gen)
    rules_page(gen)
    cli_page(gen)


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_directive("md-docstring", MarkdownDocstring)
    app.add_directive("module-docstring", ModuleDocstring)
    app.connect("builder-inited", generate)
    app.connect("autodoc-process-docstring", markdown_docstring)
    # env_version: raise it when what the pages render to changes, so that an existing
    # build reads every page again
    return {"parallel_read_safe": True, "parallel_write_safe": True, "env_version": 1}
