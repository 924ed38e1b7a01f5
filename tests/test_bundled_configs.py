"""The configs that ship with the kit: ``scopa train --config NAME`` finds a bundled config
by name when no file of that name exists, a path wins, ``--list-configs`` shows them; an
install without torch says which extra a command needs, in one line."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from agents.commands import missing_extra, run
from agents.evaluation.ladder import ladder
from scopa_cli import main as scopa
from scopa_train import bundled
from scopa_train.config import ConfigError, read_config_file

ROOT = Path(__file__).resolve().parent.parent


def test_the_package_holds_the_checkouts_configs_one_source() -> None:
    """scopa_train/configs is the top-level configs/ folder (a link), every file in it."""
    assert bundled.CONFIG_DIR.resolve() == (ROOT / "configs").resolve()
    assert list(bundled.bundled_configs()) == sorted(p.stem for p in
                                                     (ROOT / "configs").glob("*.yaml"))


def test_a_name_finds_the_bundled_config_and_a_path_wins(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    quick = bundled.CONFIG_DIR / "quick.yaml"
    assert bundled.config_path("quick") == quick
    assert bundled.config_path("quick.yaml") == quick
    (tmp_path / "quick").write_text("run: {name: mine}\n", encoding="utf-8")
    assert bundled.config_path("quick") == Path("quick")  # the file in the folder wins
    assert read_config_file(bundled.config_path("quick")) == {"run": {"name": "mine"}}
    mine = tmp_path / "sub" / "recipe.yaml"
    with pytest.raises(ConfigError, match="'sub/recipe.yaml' is neither a file nor a bundled"):
        bundled.config_path("sub/recipe.yaml")  # a path that does not exist is no name
    mine.parent.mkdir()
    mine.write_text("{}\n", encoding="utf-8")
    assert bundled.config_path("sub/recipe.yaml") == Path("sub/recipe.yaml")


def test_an_unknown_name_is_one_line_listing_the_bundled_names(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    for argv in (["train", "--config", "nosuch"], ["exploit", "greedy", "--config", "nosuch"]):
        assert scopa(argv) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1, err
        assert "config 'nosuch' is neither a file nor a bundled config" in err[0]
        assert ", ".join(bundled.bundled_configs()) in err[0]


def test_list_configs_shows_each_with_its_first_comment_line(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert scopa(["train", "--list-configs"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("bundled configs (")
    rows = {line.split()[0]: line.split(None, 1)[1] for line in out[1:]}
    assert list(rows) == list(bundled.bundled_configs())
    first = (ROOT / "configs" / "recipe.yaml").read_text(encoding="utf-8").splitlines()[0]
    assert rows["recipe"] == first.lstrip("# ")


def test_train_py_names_a_config_path_that_does_not_exist(
        capsys: pytest.CaptureFixture[str]) -> None:
    from scopa_train.cli import main as train
    assert train(["--config", str(ROOT / "configs" / "nosuch.yaml")]) == 2
    assert "nosuch.yaml' is neither a file" in capsys.readouterr().err


# -- without the train extra --------------------------------------------------------------

def test_a_missing_train_extra_module_is_one_line_naming_the_extra(
        capsys: pytest.CaptureFixture[str]) -> None:
    gone = ModuleNotFoundError("No module named 'torch'", name="torch")
    assert "pip install 'scopa-rl[train]'" in missing_extra(gone)
    assert missing_extra(ModuleNotFoundError("No module named 'x'", name="x")) is None
    assert missing_extra(ImportError("cannot import name 'y'", name="torch")) is None

    def needs_torch() -> int:
        raise gone

    assert run("scopa train", needs_torch) == 2
    assert capsys.readouterr().err == ("scopa train: error: torch is not installed: this "
                                       "needs the kit's train extra, pip install "
                                       "'scopa-rl[train]' (in a checkout: make install)\n")

    def broken() -> int:
        raise ModuleNotFoundError("No module named 'x'", name="x")

    with pytest.raises(ModuleNotFoundError):  # not an install problem: a real error
        run("scopa", broken)


def test_a_learned_spec_without_torch_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    from agents import make_agent
    monkeypatch.setitem(sys.modules, "torch", None)
    monkeypatch.delitem(sys.modules, "scopa_policy.agent", raising=False)
    import scopa_policy
    monkeypatch.delattr(scopa_policy, "agent", raising=False)
    with pytest.raises(ValueError, match=r"^agent spec 'pretrained': torch is not installed: "
                       r"this needs the kit's train extra"):
        make_agent("pretrained")


def test_a_ladder_without_matplotlib_writes_all_but_the_chart(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    log = tmp_path / "log.txt"
    with open(log, "w", encoding="utf-8") as f:
        res = ladder(["random", "greedy"], hands=2, seed=1, out=tmp_path / "lad", log=f)
    assert res["chart"] is False
    assert "no ladder.png: matplotlib is not installed" in log.read_text(encoding="utf-8")
    assert sorted(p.name for p in (tmp_path / "lad").iterdir() if p.is_file()) == [
        "README.md", "ladder.md", "ratings.csv", "ratings.json"]
