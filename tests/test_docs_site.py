"""The documentation site (docs/README.md): its strict build fails on a broken internal
link, a reference to a missing name and a page in no table of contents, each named; and
what the code holds (every config key, agent spec family, subcommand, public module) is on
the built site.

`make test` builds the site first (strict) and points ``SCOPA_DOCS_SITE`` at it; without
it the tests build it themselves. They need the `docs` extra (make test installs it)."""

from __future__ import annotations

import dataclasses
import html
import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"

pytestmark = pytest.mark.skipif(
    any(importlib.util.find_spec(m) is None for m in ("sphinx", "furo", "myst_nb")),
    reason="the `docs` extra is not installed (pip install -e .[docs]; make test installs it)")


def build(src: Path, out: Path) -> subprocess.CompletedProcess:
    """The site's strict build of ``src`` into ``out``, as `make docs` runs it."""
    return subprocess.run(
        [sys.executable, "-m", "sphinx", "-q", "-W", "--keep-going", "-n", "-b", "html",
         "-d", str(out / ".doctrees"), str(src), str(out)],
        capture_output=True, text=True, timeout=1200, cwd=src)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The built site: `make test`'s (``SCOPA_DOCS_SITE``), else built here."""
    built = os.environ.get("SCOPA_DOCS_SITE")
    if built:
        path = ROOT / built
        assert (path / "index.html").is_file(), f"SCOPA_DOCS_SITE={built}: no site there"
        return path
    out = tmp_path_factory.mktemp("site")
    proc = build(DOCS, out)
    assert proc.returncode == 0, proc.stderr
    return out


def text(page: Path) -> str:
    """A built page's text, tags dropped, whitespace collapsed."""
    raw = re.sub(r"<[^>]+>", " ", page.read_text(encoding="utf-8"))
    return " ".join(html.unescape(raw).split())


def test_a_broken_link_a_missing_name_and_a_page_out_of_the_navigation_fail_the_build(
        tmp_path: Path) -> None:
    """A copy of the sources with one of each: the build fails and names each page."""
    src = tmp_path / "docs"
    shutil.copytree(DOCS, src, ignore=shutil.ignore_patterns(
        "_build", "_generated", "api", "notebooks", "__pycache__"))
    for name in ("BENCHMARKS.md", "notebooks", "examples"):  # what the pages include or link
        path = ROOT / name
        (shutil.copytree if path.is_dir() else shutil.copyfile)(path, tmp_path / name)
    page = src / "quickstart.md"
    page.write_text(page.read_text() + "\nSee [the page that is gone](no_such_page.md).\n")
    page = src / "contributing.md"
    page.write_text(page.read_text() + "\nAnd {py:func}`scopa_env.game.no_such_function`.\n")
    (src / "left_out.md").write_text("# A page in no table of contents\n")
    proc = build(src, tmp_path / "site")
    assert proc.returncode != 0
    lines = proc.stderr.splitlines()
    assert any("quickstart.md" in ln and "no_such_page" in ln for ln in lines), proc.stderr
    assert any("contributing.md" in ln and "scopa_env.game.no_such_function" in ln
               for ln in lines), proc.stderr
    assert any("left_out.md" in ln and "toctree" in ln for ln in lines), proc.stderr


def test_every_config_key_and_stage_kind_is_on_the_site(site: Path) -> None:
    from scopa_train.config import sections
    from scopa_train.stages import kinds

    page = text(site / "config.html")
    missing = [f"{name}.{f.name}" for name, cls in sections().items()
               for f in dataclasses.fields(cls) if f"{name}.{f.name}" not in page]
    missing += [kind for kind in kinds() if kind not in page]
    assert not missing, f"not on config.html: {missing}"


def test_every_agent_spec_family_is_on_the_site(site: Path) -> None:
    from agents import known_specs

    page = text(site / "specs.html")
    forms = [" ".join(line.partition("  (")[0].split()) for line in known_specs()]
    assert len(forms) >= 10 and not [f for f in forms if f not in page]


def test_every_subcommand_and_its_help_is_on_the_site(site: Path) -> None:
    import argparse

    import scopa_cli

    parser = scopa_cli.build_parser()
    subs = [name for action in parser._actions
            if isinstance(action, argparse._SubParsersAction) for name in action.choices]
    page = text(site / "cli.html")
    assert "train" in subs and "serve" in subs
    for sub in subs:
        assert f"$ scopa {sub} --help" in page and f"usage: scopa {sub}" in page, sub


def test_every_public_module_has_its_api_page_and_the_notebooks_their_outputs(
        site: Path) -> None:
    import pkgutil

    import scopa_env

    names = [m.name for m in pkgutil.walk_packages(scopa_env.__path__, "scopa_env.")
             if not any(p.startswith("_") for p in m.name.split("."))]
    assert "scopa_env.vector" in names
    assert not [n for n in names if not (site / "api" / f"{n}.html").is_file()]
    for package in ("agents", "scopa_policy", "scopa_train", "scopa_web", "scopa_cli"):
        assert (site / "api" / f"{package}.html").is_file(), package
    env_page = (site / "api" / "scopa_env.vector.html").read_text(encoding="utf-8")
    assert 'id="scopa_env.vector.VectorScopaEnv"' in env_page
    for nb in sorted((ROOT / "notebooks").glob("*.ipynb")):
        assert "cell_output" in (site / "notebooks" / f"{nb.stem}.html").read_text(), nb.name
