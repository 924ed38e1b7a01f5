"""``need()`` of the baselines protocol (benchmarks/algorithms/protocol.py): a library
counts as installed when it imports, not when its files are there. ``ray.rllib`` ships
inside the ``ray`` extra's package while only the ``rllib`` extra installs what it
imports: such a script stops with one line naming the ``rllib`` extra."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _need(site: Path, module: str, extra: str) -> subprocess.CompletedProcess[str]:
    code = (f"import sys; sys.path[:0] = [{str(site)!r}, 'benchmarks/algorithms']; "
            f"from protocol import need; need({module!r}, {extra!r}, 'algo'); print('went on')")
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=60)


def test_a_package_whose_dependencies_are_missing_names_its_extra(tmp_path: Path) -> None:
    (tmp_path / "fakeray").mkdir()
    (tmp_path / "fakeray" / "__init__.py").write_text("")
    (tmp_path / "fakeray" / "rllib.py").write_text("import tree_not_installed_here\n")
    out = _need(tmp_path, "fakeray.rllib", "rllib")
    assert out.returncode == 3 and out.stdout == ""  # MISSING, before anything runs
    assert out.stderr == ("algo: needs fakeray.rllib, which is not installed (importing it "
                          "fails: No module named 'tree_not_installed_here'): pip install -e "
                          ".[rllib]\n")


def test_an_absent_package_and_a_present_one(tmp_path: Path) -> None:
    out = _need(tmp_path, "no_such_package.sub", "sb3")
    assert out.returncode == 3
    assert out.stderr == "algo: needs no_such_package.sub, which is not installed: pip " \
                         "install -e .[sb3]\n"
    out = _need(tmp_path, "json.decoder", "none")
    assert out.returncode == 0 and out.stdout == "went on\n"


def test_a_smoke_run_takes_an_overrun_update_and_a_real_budget_does_not() -> None:
    """``refuse_overrun``: no update at all, or a first update past a real budget, stops
    the script in one line; with ``--smoke`` one finished update is enough (a busy machine
    may overrun a budget of seconds)."""
    code = ("import sys, types; sys.path[:0] = ['benchmarks/algorithms']; "
            "from protocol import refuse_overrun; "
            "a = types.SimpleNamespace(minutes=0.1, smoke=sys.argv[1] == 'smoke'); "
            "refuse_overrun('algo', a, 6.0, None if sys.argv[2] == 'none' else 29.3); "
            "print('went on')")
    root = Path(__file__).resolve().parents[1]

    def run(mode: str, first: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-c", code, mode, first], capture_output=True,
                              text=True, cwd=root, timeout=60)

    assert run("smoke", "late").stdout.strip() == "went on"
    for mode, first in (("real", "late"), ("smoke", "none")):
        out = run(mode, first)
        assert out.returncode != 0 and "went on" not in out.stdout
        text = (out.stdout + out.stderr).strip()
        assert "algo: --minutes 0.1 is too small to finish one update" in text, text
        assert "Traceback" not in text
