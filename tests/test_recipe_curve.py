"""``report recipe-curve``: each stage's policy at the recipe's minute, results reused."""

from __future__ import annotations

import json
import shutil

import pytest

from scopa_policy import agent as learned
from scopa_policy.checkpoint import load_checkpoint, save_atomic
from scopa_train import report

pytestmark = pytest.mark.skipif(not learned.PRETRAINED.is_file(),
                                reason="no shipped weights in this checkout")


@pytest.fixture
def stages(tmp_path):
    """Two 'stages': the shipped weights with 60 and 30 seconds on their clocks."""
    paths = []
    for k, seconds in enumerate((60.0, 30.0)):
        ck = load_checkpoint(learned.PRETRAINED)
        ck.pop("path", None)
        ck["counters"] = {**ck.get("counters", {}), "wall_seconds": seconds}
        ck["config"] = {**ck.get("config", {}), "name": f"stage{k + 1}"}
        paths.append(save_atomic(ck, tmp_path / f"stage{k + 1}.pt"))
    return paths


def test_stages_at_their_cumulative_minute_and_reused(stages, tmp_path, monkeypatch):
    out = tmp_path / "curve" / "recipe.png"
    lines: list[str] = []
    report.recipe_curve(stages, out, ["random"], hands=4, seed=3, log=lines.append)
    doc = json.loads(out.with_suffix(".json").read_text())
    assert out.stat().st_size > 0
    assert [s["name"] for s in doc["stages"]] == ["stage1", "stage2"]
    assert [s["minute"] for s in doc["stages"]] == pytest.approx([1.0, 1.5])
    first = doc["stages"][0]["results"]["random"]
    assert first["hands"] == 4 and first["low"] <= first["margin"] <= first["high"]
    assert first["margin"] > 0  # the shipped network beats random
    assert len(lines) == 2 and "minute 1.5" in lines[1]

    import agents.evaluation.evaluate

    def no_games(*a, **k):
        raise AssertionError("a cached stage was played again")

    monkeypatch.setattr(agents.evaluation.evaluate, "evaluate", no_games)
    report.recipe_curve(stages, out, ["random"], hands=4, seed=3, log=lambda _: None)
    assert json.loads(out.with_suffix(".json").read_text()) == doc


def test_bad_input_is_one_line(stages, tmp_path, capsys):
    out = tmp_path / "r.png"
    with pytest.raises(SystemExit) as e:
        report.main(["recipe-curve", str(tmp_path / "nope.pt"), "--out", str(out)])
    assert e.value.code == 2 and "no such policy file" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        report.main(["recipe-curve", str(stages[0]), "--out", str(out), "--against", "nobody"])
    assert "unknown agent 'nobody'" in capsys.readouterr().err
    junk = tmp_path / "junk.pt"
    shutil.copy(__file__, junk)
    with pytest.raises(SystemExit):
        report.main(["recipe-curve", str(junk), "--out", str(out), "--against", "random"])
    assert str(junk) in capsys.readouterr().err
    assert not out.exists()


def test_a_stop_keeps_the_results_already_played(stages, tmp_path, monkeypatch):
    """An evaluation that fails (or a Ctrl-C) part-way leaves the finished points in the
    .json, and the next run plays only what is missing."""
    import agents.evaluation.evaluate

    real = agents.evaluation.evaluate.evaluate
    calls: list[str] = []

    def second_fails(a, b, **k):
        calls.append(a)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(a, b, **k)

    monkeypatch.setattr(agents.evaluation.evaluate, "evaluate", second_fails)
    out = tmp_path / "r.png"
    with pytest.raises(KeyboardInterrupt):
        report.recipe_curve(stages, out, ["random"], hands=4, seed=3, log=lambda _: None)
    kept = json.loads(out.with_suffix(".json").read_text())["stages"]
    assert [s["name"] for s in kept] == ["stage1"] and "random" in kept[0]["results"]
    assert not list(tmp_path.glob(".*.tmp"))

    calls.clear()
    monkeypatch.setattr(agents.evaluation.evaluate, "evaluate",
                        lambda a, b, **k: calls.append(a) or real(a, b, **k))
    report.recipe_curve(stages, out, ["random"], hands=4, seed=3, log=lambda _: None)
    assert calls == [f"ckpt:{stages[1]}"]  # only the missing stage is played


@pytest.mark.parametrize("argv", [
    ["strength", "{tmp}/nope.pt", "--hands", "2"],
    ["curve", "{tmp}/no_run", "{tmp}/c.png"],
    ["throughput", "{tmp}/no_run"],
])
def test_every_report_command_names_a_bad_file_in_one_line(argv, tmp_path, capsys):
    junk = tmp_path / "junk.pt"
    shutil.copy(__file__, junk)
    with pytest.raises(SystemExit) as e:
        report.main([a.format(tmp=tmp_path, junk=junk) for a in argv])
    err = capsys.readouterr().err
    assert e.value.code == 2 and "Traceback" not in err
    assert err.strip().splitlines()[-1].startswith("python -m scopa_train.report: error: ")
    assert not (tmp_path / "out.pt").exists()


@pytest.mark.parametrize("source", ["{tmp}/nope.pt", "{junk}"])
def test_export_names_a_bad_file_in_one_line(source, tmp_path, capsys):
    from scopa_train import export

    junk = tmp_path / "junk.pt"
    shutil.copy(__file__, junk)
    with pytest.raises(SystemExit) as e:
        export.main([source.format(tmp=tmp_path, junk=junk), str(tmp_path / "out.pt")])
    err = capsys.readouterr().err
    assert e.value.code == 2 and "Traceback" not in err
    assert err.strip().splitlines()[-1].startswith("python -m scopa_train.export: error: ")
    assert not (tmp_path / "out.pt").exists()
