"""Game records: the golden matches, round trips, replay equality, malformed input."""

import json
from pathlib import Path

import pytest

from scopa_cli import main as scopa
from scopa_env.records import (
    RecordError,
    append_records,
    load_and_verify,
    read_records,
    replay,
    verify_record,
)

GOLDEN = Path(__file__).parent / "data" / "golden-records.jsonl"


def golden():
    return list(read_records(GOLDEN))


def test_every_golden_match_replays_exactly():
    records = golden()
    assert len(records) == 56
    names = {r["rules"]["name"] for r in records}
    assert names == {"scopa", "scopone_scientifico", "scopone", "asso_piglia_tutto"}
    for rec in records:
        verify_record(rec)


def test_golden_tampering_is_caught():
    rec = golden()[0]
    bad = json.loads(json.dumps(rec))
    bad["hands"][0]["moves"][0]["scopa"] = not bad["hands"][0]["moves"][0]["scopa"]
    with pytest.raises(RecordError, match=r"hands\[0\]\.moves\[0\]: scopa recorded"):
        verify_record(bad)
    bad = json.loads(json.dumps(rec))
    bad["hands"][0]["score"][0]["points"]["total"] += 1
    with pytest.raises(RecordError, match=r"hands\[0\]\.score"):
        verify_record(bad)
    bad = json.loads(json.dumps(rec))
    bad["match_score"][0] += 1
    with pytest.raises(RecordError, match="match_score"):
        verify_record(bad)
    bad = json.loads(json.dumps(rec))
    m = bad["hands"][0]["moves"][0]
    m["capture"] = []  # a capture turned into a place (or vice versa) is illegal
    m2 = bad["hands"][0]["moves"][1]
    m2["card"], m["card"] = m["card"], m2["card"]
    with pytest.raises(RecordError, match=r"hands\[0\]\.moves\[0\]"):
        verify_record(bad)


@pytest.mark.parametrize("args", [
    ["--agents", "random", "random"],
    ["--agents", "random", "random", "random", "random", "--rules", "scopone_scientifico"],
    ["--agents", "random", "random", "random", "random", "--players", "4",
     "--option", "capture_rule=fewest", "--option", "target_score=16"],
    ["--agents", "random", "random", "--rules", "asso_piglia_tutto",
     "--option", "last_play_scopa=true"],
])
def test_record_command_round_trip(tmp_path, args):
    out = tmp_path / "m.jsonl"
    assert scopa(["record", *args, "--games", "3", "--seed", "7", "--out", str(out)]) == 0
    assert scopa(["record", *args, "--games", "2", "--seed", "8", "--out", str(out)]) == 0
    records = list(read_records(out))
    assert len(records) == 5  # appended, not overwritten
    assert load_and_verify(out) == 5
    # the same seed gives the same records
    out2 = tmp_path / "again.jsonl"
    scopa(["record", *args, "--games", "3", "--seed", "7", "--out", str(out2)])
    assert list(read_records(out2)) == records[:3]
    # written, read back and re-serialised: identical
    append_records(tmp_path / "copy.jsonl", records)
    assert (tmp_path / "copy.jsonl").read_text() == out.read_text()


def test_replay_reproduces_the_recorded_moves(tmp_path, capsys):
    rec = golden()[3]
    steps = list(replay(rec))
    assert len(steps) == sum(len(h["moves"]) for h in rec["hands"])
    assert steps[-1].result.match_over
    out = tmp_path / "one.jsonl"
    append_records(out, [rec])
    assert scopa(["replay", str(out)]) == 0
    text = capsys.readouterr().out
    assert "match 1" in text and f"match score {rec['match_score'][0]}-" in text


@pytest.mark.parametrize("line, problem", [
    ("{not json", r":2: not valid JSON"),
    ('{"format": "scopa-record/0"}', r":2: format is"),
    ("[1, 2]", r":2: a record must be a JSON object"),
])
def test_malformed_records_name_line_and_problem(tmp_path, line, problem):
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(golden()[0]) + "\n" + line + "\n")
    with pytest.raises(RecordError, match=problem):
        list(read_records(path))


def test_unknown_card_code_and_missing_field_in_record(tmp_path):
    rec = golden()[0]
    bad = json.loads(json.dumps(rec))
    bad["hands"][0]["deck"][5] = "11d"
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(bad) + "\n")
    with pytest.raises(RecordError, match=r":1: hands\[0\]\.deck: unknown card code '11d'"):
        list(read_records(path))
    bad = json.loads(json.dumps(rec))
    del bad["rules"]["napola"]
    path.write_text(json.dumps(bad) + "\n")
    with pytest.raises(RecordError, match="rules lacks option"):
        list(read_records(path))
    assert scopa(["verify", str(path)]) == 2


def test_cli_errors_are_clear(tmp_path, capsys):
    out = str(tmp_path / "x.jsonl")
    assert scopa(["record", "--agents", "random", "random", "--option", "colour=red",
                  "--out", out]) == 2
    assert "unknown rules option 'colour'" in capsys.readouterr().err
    assert scopa(["record", "--agents", "random", "nobody", "--out", out]) == 2
    assert "unknown agent" in capsys.readouterr().err
