"""The kit as a user installs it, without a clone: ``python -m build`` makes the sdist
and the wheel, twine passes them, the wheel holds every package of the tree (found, not
listed) and nothing else; installed in a fresh venv outside the checkout, the env alone
works without torch, and with the ``train`` extra every ``scopa`` subcommand does.

The fresh-venv tests (marker ``install``) install numpy, gymnasium, pettingzoo and, for
the second half, torch 2.13.0 (the CPU wheel, pinned as in the Makefile) and the train
extra: about a minute, with a network (a package index). ``pytest -m "not install"``
skips them."""

from __future__ import annotations

import email.parser
import os
import re
import shutil
import signal
import subprocess
import sys
import tarfile
import urllib.request
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

import scopa_env

ROOT = Path(__file__).resolve().parent.parent
# what the checkout holds at the top that is not the kit: the test suite, and the script
# `python train.py` (`scopa train` in an install)
NOT_SHIPPED = {"tests", "train"}
# every `scopa` subcommand, each run below from the installed wheel: a new one must be added
SMOKED = {"record", "replay", "review", "verify", "play", "serve", "eval", "ladder",
          "exploit", "train"}
TORCH = "torch==2.13.0"  # the Makefile's pin: the CPU wheel here, never a CUDA download


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The sdist and the wheel, built as a release would be (the wheel from the sdist)."""
    out = tmp_path_factory.mktemp("dist")
    done = subprocess.run([sys.executable, "-m", "build", "--no-isolation", "--outdir",
                           str(out), str(ROOT)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return {"wheel": next(out.glob("*.whl")), "sdist": next(out.glob("*.tar.gz"))}


def tree_files() -> set[str]:
    """What the wheel must hold: every file of each top-level package of the checkout
    (a folder with an ``__init__.py``), its subpackages and data folders included (the
    configs through their link), and each top-level module; caches and what
    ``NOT_SHIPPED`` names left out."""
    files = set()
    for top in sorted(ROOT.iterdir()):
        if top.stem in NOT_SHIPPED:
            continue
        if top.is_dir() and (top / "__init__.py").is_file():
            for folder, subfolders, names in os.walk(top, followlinks=True):
                subfolders[:] = [d for d in subfolders if d != "__pycache__"]
                rel = Path(folder).relative_to(ROOT)
                files.update((rel / name).as_posix() for name in names)
        elif top.suffix == ".py" and top.is_file():
            files.add(top.name)
    return files


def wheel_files(wheel: Path) -> set[str]:
    with zipfile.ZipFile(wheel) as z:
        return {n for n in z.namelist() if ".dist-info/" not in n and not n.endswith("/")}


def test_the_wheel_holds_every_package_of_the_tree_and_nothing_else(dist) -> None:
    """A new subpackage, module or data file of the kit is in the wheel without anyone
    listing it; tests, runs and caches never are."""
    tree, wheel = tree_files(), wheel_files(dist["wheel"])
    assert sorted(tree - wheel) == [], "in the checkout's packages but not in the wheel"
    assert sorted(wheel - tree) == [], "in the wheel but not in the checkout's packages"
    for needed in ("scopa_train/stages/__init__.py", "scopa_policy/pretrained/default.pt",
                   "scopa_web/static/play.html", "scopa_train/configs/quick.yaml",
                   "scopa_train/configs/recipe.yaml", "scopa_cli.py"):
        assert needed in wheel


def test_the_sdist_holds_the_kit_and_no_tests_runs_or_caches(dist) -> None:
    with tarfile.open(dist["sdist"]) as t:
        members = {m.name.partition("/")[2]: m for m in t.getmembers()}
    assert not [n for n in members if re.match(r"(tests|runs|wip|dist|build)/", n)
                or "__pycache__" in n or n.endswith(".pyc")]
    for name in ("pyproject.toml", "README.md", "LICENSE", "scopa_train/configs/quick.yaml"):
        assert members[name].isfile(), name  # the configs as files, not the link


def test_twine_passes_the_sdist_and_the_wheel(dist) -> None:
    done = subprocess.run([sys.executable, "-m", "twine", "check", "--strict",
                           str(dist["sdist"]), str(dist["wheel"])],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_metadata_is_complete_and_the_version_written_once(dist) -> None:
    tomllib = pytest.importorskip("tomllib")
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert "version" not in project and project["dynamic"] == ["version"]
    with zipfile.ZipFile(dist["wheel"]) as z:
        meta_name = next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))
        meta = email.parser.Parser().parsestr(z.read(meta_name).decode("utf-8"))
    assert meta["Name"] == "scopa-rl"
    assert meta["Version"] == scopa_env.__version__
    assert meta["License-Expression"] == "MIT" and meta["License-File"] == "LICENSE"
    assert meta["Requires-Python"] == ">=3.10"
    assert meta["Description-Content-Type"] == "text/markdown"
    assert meta.get_payload().startswith("# scopa")  # the README, as the long description
    assert len(meta.get_all("Classifier")) >= 5
    assert set(meta.get_all("Provides-Extra")) == set(project["optional-dependencies"])
    plain = [r for r in meta.get_all("Requires-Dist") if "extra ==" not in r]
    assert not [r for r in plain if re.match(r"(torch|tensorboard|matplotlib)\b", r)], \
        "the env alone installs without torch, TensorBoard and matplotlib"


# -- installed in a fresh venv, used from a folder outside the checkout ------------------

@dataclass
class User:
    """A fresh venv with the wheel installed, and a working folder outside the repo."""

    venv: Path
    home: Path

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items()
               if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
        env["PATH"] = f"{self.venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
        return env

    def run(self, *argv: str, status: int = 0, timeout: float = 300, typed: str = ""
            ) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(list(argv), cwd=self.home, env=self.env(), capture_output=True,
                              text=True, timeout=timeout, input=typed)
        assert done.returncode == status, (f"{' '.join(argv)}: status {done.returncode}\n"
                                           f"{done.stdout[-3000:]}{done.stderr[-3000:]}")
        return done

    def scopa(self, *args: str, status: int = 0, typed: str = ""
              ) -> subprocess.CompletedProcess[str]:
        return self.run(str(self.venv / "bin" / "scopa"), *args, status=status, typed=typed)

    def python(self, code: str) -> str:
        return self.run(str(self.venv / "bin" / "python"), "-c", code).stdout.strip()

    def pip(self, *args: str) -> None:
        self.run(str(self.venv / "bin" / "python"), "-m", "pip", "install", "-q", *args,
                 timeout=900)


def one_line_error(done: subprocess.CompletedProcess[str]) -> str:
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    return lines[0]


@pytest.fixture(scope="module")
def user(dist, tmp_path_factory: pytest.TempPathFactory) -> Iterator[User]:
    """The wheel alone (the env without torch) in a venv without system site packages
    (removed afterwards: with torch it is over a GB)."""
    base = tmp_path_factory.mktemp("user")
    assert ROOT not in base.parents
    u = User(base / "venv", base / "work")
    u.home.mkdir()
    u.run(sys.executable, "-m", "venv", str(u.venv), timeout=300)
    try:
        u.pip(str(dist["wheel"]))
        yield u
    finally:
        shutil.rmtree(u.venv, ignore_errors=True)


@pytest.fixture(scope="module")
def trainer(user: User, dist) -> User:
    """The same venv with the train extra (torch first, pinned)."""
    user.pip(TORCH)
    user.pip(f"{dist['wheel']}[train]")
    return user


@pytest.mark.install
def test_the_env_alone_works_without_torch(user: User) -> None:
    """`pip install scopa-rl`: the engine, the PettingZoo env (PettingZoo's api_test),
    the Gymnasium env and the baselines, without torch; a learned agent or training is
    one line that names the train extra."""
    out = user.python(
        "import importlib.util, gymnasium, scopa_env, agents\n"
        "from pettingzoo.test import api_test\n"
        "print(scopa_env.__file__.startswith(__import__('sys').prefix))\n"
        "print([m for m in ('torch', 'tensorboard', 'matplotlib')\n"
        "       if importlib.util.find_spec(m) is not None])\n"
        "api_test(scopa_env.env(), num_cycles=300)\n"
        "env = gymnasium.make('scopa/Scopa-v0', opponent='greedy')\n"
        "obs, info = env.reset(seed=1)\n"
        "obs, reward, done, cut, info = env.step(int(info['action_mask'].argmax()))\n"
        "print(type(env.unwrapped).__name__, obs.shape)\n")
    lines = out.splitlines()
    assert lines[:2] == ["True", "[]"] and lines[-1] == "ScopaGymEnv (216,)"
    assert "Passed API test" in out
    user.scopa("eval", "greedy", "random", "--hands", "4")
    for args in (["eval", "pretrained", "greedy", "--hands", "2"],
                 ["train", "--config", "quick"], ["exploit", "greedy"]):
        line = one_line_error(user.scopa(*args, status=2))
        assert "torch is not installed" in line and "scopa-rl[train]" in line, line
    line = one_line_error(user.scopa("serve", "--port", "0", status=2))
    assert "is not installed" in line and "scopa-rl[web]" in line, line
    done = user.scopa("ladder", "random", "greedy", "--hands", "2", "--out", "bare")
    assert "no ladder.png: matplotlib is not installed" in done.stderr
    assert (user.home / "bare" / "ratings.csv").is_file()
    assert not (user.home / "bare" / "ladder.png").exists()


@pytest.mark.install
def test_record_replay_verify_play_and_review_from_the_installed_command(trainer: User) -> None:
    assert trainer.scopa("--version").stdout.strip() == f"scopa {scopa_env.__version__}"
    trainer.scopa("record", "--agents", "random", "greedy", "--games", "2", "--out", "m.jsonl")
    assert trainer.scopa("verify", "m.jsonl").stdout.strip() == "m.jsonl: 2 record(s) verified"
    assert trainer.scopa("replay", "m.jsonl", "--match", "2").stdout.startswith("=== match 2")
    trainer.scopa("replay", "m.jsonl", "--html", "m.html")
    assert "<html" in (trainer.home / "m.html").read_text(encoding="utf-8")
    out = trainer.scopa("play", "--opponent", "pretrained", "--seed", "3", typed="0\nq\n").stdout
    assert out.count("your move") == 2  # one move played, then quit
    trainer.scopa("review", "m.jsonl", "--match", "1", "--agent", "pimc:worlds=2,depth=2",
                  "--out", "review.html")
    assert "<html" in (trainer.home / "review.html").read_text(encoding="utf-8")


@pytest.mark.install
def test_every_subcommand_is_smoked_here(trainer: User) -> None:
    usage = trainer.scopa("--help").stdout
    listed = re.search(r"\{([a-z,]+)\}", usage).group(1).split(",")
    assert set(listed) == SMOKED, "a subcommand without a smoke run from the wheel"


@pytest.mark.install
def test_eval_ladder_and_exploit_from_the_installed_command(trainer: User) -> None:
    out = trainer.scopa("eval", "pretrained", "greedy", "--hands", "2").stdout
    assert "points per hand, pretrained - greedy" in out
    trainer.scopa("ladder", "random", "greedy", "--hands", "2", "--out", "lad")
    assert (trainer.home / "lad" / "ladder.png").stat().st_size > 0
    out = trainer.scopa("exploit", "greedy", "--minutes", "0.05", "--hands", "2",
                        "--no-progress", "--set", "rollouts.num_envs=16",
                        "--set", "ppo.total_env_steps=1152").stdout
    assert "approximate exploitability of greedy:" in out


@pytest.mark.install
def test_train_finds_the_bundled_configs_by_name(trainer: User) -> None:
    listing = trainer.scopa("train", "--list-configs").stdout
    for name in ("quick", "recipe", "scopone", "team4"):
        assert re.search(rf"^{name} +\S", listing, re.M), listing
    line = one_line_error(trainer.scopa("train", "--config", "nosuch", status=2))
    assert "'nosuch' is neither a file nor a bundled config" in line and "quick" in line
    trainer.scopa("train", "--config", "quick", "--no-progress",
                  "--set", "rollouts.num_envs=16", "--set", "ppo.total_env_steps=1152",
                  "--set", "evaluation.hands=4", "--set", "evaluation.every_steps=1152")
    run = next((trainer.home / "runs").glob("quick-*"))
    assert (run / "policy.pt").is_file() and (run / "recipe.yaml").is_file()
    trainer.scopa("eval", f"ckpt:{run}", "greedy", "--hands", "2")
    (trainer.home / "quick").write_text("not: [yaml\n", encoding="utf-8")
    line = one_line_error(trainer.scopa("train", "--config", "quick", status=2))
    assert "'quick' is not valid YAML" in line  # a file of that name wins


@pytest.mark.install
def test_serve_answers_from_the_installed_command(trainer: User, dist) -> None:
    trainer.pip(f"{dist['wheel']}[web]")  # Starlette and uvicorn: the web extra
    proc = subprocess.Popen([str(trainer.venv / "bin" / "scopa"), "serve", "--port", "0",
                             "--opponent", "greedy", "--seed", "1"], cwd=trainer.home,
                            env=trainer.env(), stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        url = re.search(r"http://\S+/", proc.stdout.readline()).group(0)
        with urllib.request.urlopen(url, timeout=30) as page:
            assert page.status == 200 and "<html" in page.read().decode("utf-8").lower()
    finally:
        proc.send_signal(signal.SIGINT)
        status = proc.wait(timeout=30)
    assert status == 0


@pytest.mark.install
def test_every_extra_installs_from_the_wheel(dist) -> None:
    """pip resolves the wheel with all its extras together (a dry run: nothing installed),
    in the tests' own environment, which holds most of them already."""
    tomllib = pytest.importorskip("tomllib")
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))[
        "project"]["optional-dependencies"]
    done = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--dry-run",
                           f"{dist['wheel']}[{','.join(sorted(extras))}]"],
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
