"""benchmarks/baselines.py: the smoke mode trains each installed algorithm for seconds,
evaluates its final agent and snapshots and writes the table, curves and JSON; the same
command again reuses the finished runs; an unknown algorithm, a missing library and a
budget too small for one update are one line each."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from tests.helpers import import_benchmark

baselines = import_benchmark("baselines")


def _installed(module: str) -> bool:
    return importlib.util.find_spec(module.split(".")[0]) is not None and \
        importlib.util.find_spec(module) is not None


def _smoke(tmp_path: Path, names: list[str], *more: str) -> tuple[list[str], dict]:
    argv = ["--smoke", "--seeds", "1", "--work", str(tmp_path / "work"), "--out",
            str(tmp_path / "docs"), *more, "--algorithms", *names]
    assert baselines.main(argv) == 0
    doc = json.loads((tmp_path / "docs" / "baselines.json").read_text())
    assert [r["algorithm"] for r in doc["runs"]] == names
    for r in doc["runs"]:
        assert r["env_steps"] > 0 and r["updates"] >= 1 and r["train_seconds"] > 0
        assert set(r["margins"]) == {"random", "greedy", "expert", "pimc"}
        low, high = r["margins"]["greedy"]["ci95"]
        assert low <= r["margins"]["greedy"]["margin"] <= high
        # snapshots in order, within the run's own training time (a busy machine may let
        # the last update overrun the budget: no bound on the clock here)
        minutes = [p["minutes"] for p in r["curve"]]
        assert minutes and minutes == sorted(minutes)
        assert minutes[-1] <= r["train_seconds"] / 60 + 1e-6
        assert r["curve"][-1]["env_steps"] == r["env_steps"]  # the last point: the final agent
    assert (tmp_path / "docs" / "curves.png").read_bytes()[:4] == b"\x89PNG"
    return argv, doc


def test_smoke_trains_the_kits_stages_writes_and_resumes(tmp_path: Path, capsys) -> None:
    argv, _ = _smoke(tmp_path, ["ppo", "dmc"], "--minutes", "0.05")
    readme = (tmp_path / "docs" / "README.md").read_text()
    assert "smoke mode" in readme and "| dmc | scopa (this kit), kind: dmc | 1 |" in readme
    capsys.readouterr()
    # the same command again: every run is reused, nothing trains or plays again
    results = sorted((tmp_path / "work").rglob("result.json"))
    stamps = [p.stat().st_mtime_ns for p in results + [r.with_name("evaluations.json")
                                                        for r in results]]
    assert baselines.main(argv) == 0
    out = capsys.readouterr().out
    assert out.count(": done (") == 2 and "training" not in out
    assert [p.stat().st_mtime_ns for p in results + [r.with_name("evaluations.json")
                                                      for r in results]] == stamps


def test_smoke_trains_each_installed_library(tmp_path: Path) -> None:
    names = [n for n, m in (("sb3_maskable_ppo", "sb3_contrib"), ("rllib_ppo", "ray.rllib"),
                            ("openspiel_dqn", "open_spiel.python.pytorch")) if _installed(m)]
    if not names:
        pytest.skip("none of the extras sb3, rllib, openspiel is installed")
    _, doc = _smoke(tmp_path, names)
    prefix = {"sb3_maskable_ppo": "sb3:", "rllib_ppo": "rllib:", "openspiel_dqn": "py:"}
    for r in doc["runs"]:  # each an agent spec of its library's bridge
        assert r["spec"].startswith(prefix[r["algorithm"]]), r["spec"]


def test_smoke_trains_the_batched_env_rows(tmp_path: Path) -> None:
    """The rows on the batched Gymnasium env: the CleanRL-style script always, SB3 (both
    move interfaces) and RLlib through make_vec where installed; each saves an agent spec
    the evaluator plays (a legal-move model mapped back to catalogue ids)."""
    names = ["cleanrl_ppo"] + [n for n, m in (
        ("sb3_batched_legal", "sb3_contrib"), ("sb3_batched_catalogue", "sb3_contrib"),
        ("rllib_batched", "ray.rllib")) if _installed(m)]
    _, doc = _smoke(tmp_path, names)
    prefix = {"cleanrl_ppo": "py:examples/cleanrl_ppo.py:agent,path=",
              "sb3_batched_legal": "sb3:", "sb3_batched_catalogue": "sb3:",
              "rllib_batched": "rllib:"}
    for r in doc["runs"]:
        assert r["spec"].startswith(prefix[r["algorithm"]]), r["spec"]


def test_runs_the_table_holds_are_kept_where_their_folders_are_gone(tmp_path: Path,
                                                                     capsys) -> None:
    """A fresh clone has the table's baselines.json but not its run folders: those runs
    are kept as measured (with their date), not trained again; --retrain would."""
    docs = tmp_path / "docs"
    docs.mkdir()
    run = {"algorithm": "dmc", "seed": 1, "env_steps": 5, "train_seconds": 1200.0,
           "updates": 3, "spec": "ckpt:gone", "snapshots": [],
           "margins": {o: {"margin": 0.25, "ci95": [0.2, 0.3]} for o in baselines.OPPONENTS},
           "curve": [{"minutes": 20.0, "env_steps": 5, "margin": 0.25, "ci95": [0.2, 0.3]}],
           "trained": {"date": "2026-12-06 22:12 UTC", "load_average": [1.0, 1.0, 1.0]}}
    (docs / "baselines.json").write_text(json.dumps(
        {"minutes": 20.0, "hands": 1000, "eval_seed": 2026, "curve_hands": 1000,
         "runs": [run]}))
    argv = ["--minutes", "20", "--seeds", "1", "--work", str(tmp_path / "work"), "--out",
            str(docs), "--algorithms", "dmc"]
    assert baselines.main(argv) == 0
    assert "dmc seed 1: kept from the table (trained 2026-12-06 22:12 UTC" in \
        capsys.readouterr().out
    assert not (tmp_path / "work").exists()  # nothing trained
    assert json.loads((docs / "baselines.json").read_text())["runs"] == [run]
    assert "| dmc | scopa (this kit), kind: dmc | 1 | 5 |" in (docs / "README.md").read_text()


def test_retrain_names_the_kept_runs_to_train_again(tmp_path: Path) -> None:
    (tmp_path / "baselines.json").write_text(json.dumps(
        {"minutes": 20.0, "hands": 1000, "eval_seed": 2026, "curve_hands": 1000,
         "runs": [{"algorithm": a, "seed": 1} for a in ("ppo", "dmc", "cleanrl_ppo")]}))
    base = ["--minutes", "20", "--out", str(tmp_path)]
    kept = {argv: sorted(a for a, _ in baselines.kept_runs(baselines.parse([*base, *argv])))
            for argv in ((), ("--retrain", "cleanrl_ppo"), ("--retrain",))}
    assert kept == {(): ["cleanrl_ppo", "dmc", "ppo"], ("--retrain", "cleanrl_ppo"):
                    ["dmc", "ppo"], ("--retrain",): []}
    # another budget or evaluation is another table: nothing of it is kept
    assert baselines.kept_runs(baselines.parse(base + ["--hands", "500"])) == {}


def test_the_table_goes_between_the_marks_of_an_existing_readme(tmp_path: Path) -> None:
    doc = {"minutes": 3, "smoke": False, "date": "2026-12-06 20:00 UTC",
           "machine": {"cores": 2, "cpu": "x", "python": "3.11", "torch": "2"},
           "command": "python benchmarks/baselines.py --minutes 3", "hands": 1000,
           "curve_hands": 200, "eval_seed": 2026, "opponents": list(baselines.OPPONENTS),
           "seeds": 2, "other_seeds": 1,
           "runs": [{"algorithm": "dmc", "seed": s, "env_steps": 1000 * s,
                     "train_seconds": 180.0, "updates": 10,
                     "margins": {o: {"margin": 0.1 * s, "ci95": [0.0, 0.2 * s]}
                                 for o in baselines.OPPONENTS},
                     "curve": [{"minutes": 1.0, "margin": 0.1}],
                     "trained": {"date": f"2026-12-06 1{s}:00 UTC",
                                 "load_average": [2.0 * s, 1.0, 1.0]}} for s in (1, 2)]}
    readme = tmp_path / "README.md"
    readme.write_text("# Guide\n\nbefore\n\n<!-- table -->\nold\n<!-- /table -->\n\nafter\n")
    baselines.write(doc, tmp_path, lambda _: None)
    text = readme.read_text()
    assert text.startswith("# Guide\n\nbefore\n") and text.endswith("\n\nafter\n")
    assert "old" not in text and "+0.150 (seeds +0.100 .. +0.200)" in text
    assert "**A preview, not the table the protocol asks for** (20 minutes" in text
    assert "| dmc | 2 | 2,000 | 10 |" in text  # each seed's row
    assert ("trained 2026-12-06 11:00 UTC to 2026-12-06 12:00 UTC (1-minute load average 2 "
            "to 4 at their starts)") in text


def _one_line(capsys) -> str:
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "Traceback" not in err, err
    return err


def test_an_unknown_algorithm_is_one_line(tmp_path: Path, capsys) -> None:
    assert baselines.main(["--smoke", "--work", str(tmp_path), "--algorithms", "a2c"]) == 2
    assert _one_line(capsys).startswith("unknown algorithm 'a2c'; known: ppo, dmc,")
    assert not list(tmp_path.iterdir())


def test_a_missing_library_is_one_line(tmp_path: Path, capsys, monkeypatch) -> None:
    real = importlib.util.find_spec

    def find_spec(name: str, *a, **k):  # noqa: ANN202 - as if sb3-contrib were absent
        return None if name.startswith("sb3_contrib") else real(name, *a, **k)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)
    argv = ["--smoke", "--work", str(tmp_path), "--algorithms", "ppo", "sb3_maskable_ppo"]
    assert baselines.main(argv) == 2
    assert _one_line(capsys) == ("sb3_maskable_ppo: needs sb3_contrib (sb3-contrib "
                                 "MaskablePPO, one env per game), which is not installed: "
                                 "pip install -e .[sb3]")
    assert not list(tmp_path.iterdir())  # refused before anything trains


def test_an_algorithm_not_yet_wired_in_is_one_line(tmp_path: Path, capsys,
                                                   monkeypatch) -> None:
    slot = baselines.ALGORITHMS["openspiel_dqn"]
    monkeypatch.setitem(baselines.ALGORITHMS, "openspiel_dqn",
                        baselines.Algorithm(slot.name, slot.library, "no_such_script.py"))
    assert baselines.main(["--smoke", "--work", str(tmp_path), "--algorithms",
                           "openspiel_dqn"]) == 2
    assert _one_line(capsys).startswith("openspiel_dqn: not wired in yet")


def test_a_budget_too_small_for_one_update_is_one_line(tmp_path: Path, capsys) -> None:
    argv = ["--smoke", "--minutes", "0.00001", "--seeds", "1", "--work", str(tmp_path),
            "--out", str(tmp_path / "docs"), "--algorithms", "dmc"]
    assert baselines.main(argv) == 2
    line = _one_line(capsys)
    # (the first update, or the start of the stage, ends after the budget)
    assert line.startswith("dmc: --minutes 1e-05 is too small to finish one update ("), line
    assert not (tmp_path / "docs").exists()


@pytest.mark.parametrize("argv, message", [
    (["--minutes", "0"], "--minutes must be above 0"),
    (["--hands", "-1"], "--hands must be above 0"),
])
def test_bad_numbers_are_one_line(argv: list[str], message: str, capsys) -> None:
    with pytest.raises(SystemExit) as e:
        baselines.main(argv)
    assert e.value.code == 2 and message in capsys.readouterr().err
