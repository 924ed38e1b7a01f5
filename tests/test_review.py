"""``scopa review``: each decision of a recorded match valued by a reviewing agent
(``agents.evaluation.match_review``): the analysis is the code path the agent plays by, the
reviewer's own moves lose 0, no hidden card changes a decision's review, the JSON lines
and the table, and bad input in one line."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path
from typing import Any

import pytest

from agents import agent_factory, make_agent
from agents.evaluation.match_review import Reviewer, decision_seed, review_decision, review_match
from scopa_cli import main as scopa
from scopa_env.cards import CODES, cards_of
from scopa_env.game import apply, new_match
from scopa_env.observation import info_set
from scopa_env.play import play_match
from scopa_env.records import (
    MatchRecorder,
    append_records,
    read_records,
    record_action,
    replay,
    verify_record,
)
from scopa_env.rules import make_rules

SEARCH = "pretrained:search=on,worlds=16"  # the default reviewer's search, fewer worlds
RULES = make_rules("scopa")


def _decisions(seed: int, n: int, rules: Any = RULES) -> list[Any]:
    """The first ``n`` decisions (more than one legal move) of a match played at random,
    the 2-player last deals included."""
    rng = random.Random(seed)
    s = new_match(rules, seed=seed)
    out = []
    while not s.done and len(out) < n:
        info = info_set(s, s.to_move)
        if len(info.legal_actions) > 1:
            out.append(info)
        apply(s, rng.choice(info.legal_actions))
    return out


@pytest.mark.parametrize("spec", ["pimc", "expert", SEARCH, "pretrained:search=on,gap=inf,top=0,"
                                  "worlds=8,endgame=net", "pretrained", "pretrained:endgame=exact"])
def test_the_analysis_picks_the_move_the_agent_plays(spec: str) -> None:
    make = agent_factory(spec)
    infos = _decisions(11, 40)[::3]
    assert any(not i.deck_count for i in infos)  # last deals too
    hows = set()
    for k, info in enumerate(infos):
        a = make(k).analyse(info)
        assert a.move == make(k).act(info) == make(k).act_batch([info])[0]
        assert a.legal == info.legal_actions
        hows.add(a.how)
        if spec.startswith("pretrained:search=on,gap=inf"):  # searched but in last deals
            assert a.how == ("network" if not info.deck_count else "search")
        if a.values is not None:
            assert len(a.values) == len(info.legal_actions)
            assert a.loss(a.move) == 0.0
    if spec == SEARCH:
        assert {"search", "network", "exact"} <= hows


def test_a_played_move_the_search_leaves_out_is_valued() -> None:
    """A move other than the search's, at a sure call of its network or outside its
    ``top``: the review searches it (``deep``) with the played move among those rolled
    out; its own move needs no search at a sure call."""
    make = agent_factory(SEARCH)
    seen = {"deep": 0, "outside top": 0}
    for k, info in enumerate(_decisions(4, 60)):
        own = make(k).analyse(info)
        for played in info.legal_actions:
            a = make(k).analyse(info, played)
            loss = a.loss(played)
            assert loss is not None and loss >= 0
            if played == own.move:
                assert repr(a) == repr(own)  # NaN where a move is not rolled out
            elif own.how == "network":
                assert a.deep and a.how == "search"
                seen["deep"] += 1
            elif own.how == "search" and math.isnan(own.values[info.legal_actions.index(played)]):
                assert not a.deep and a.values is not None
                seen["outside top"] += 1
    assert seen["deep"] and seen["outside top"], seen


def test_the_network_alone_and_the_rule_based_agents_cannot_review() -> None:
    for spec in ("pretrained", "pretrained:endgame=exact", "greedy", "random", "expert"):
        with pytest.raises(ValueError, match="cannot review: it does not value moves in points"):
            Reviewer(spec)
    assert Reviewer("pimc").spec == "pimc:worlds=12,depth=5"


@pytest.mark.parametrize("spec", ["pimc:worlds=6,depth=3", SEARCH])
def test_the_reviewers_own_moves_lose_nothing(spec: str) -> None:
    reviewer = Reviewer(spec, seed=9)
    rec = play_match(RULES, 21, [reviewer, make_agent("expert", seed=1)], [spec, "expert"])
    review = review_match(rec, Reviewer(spec, seed=9))
    own, other = review.seats
    assert own.decisions and all(d.loss == 0.0 for d in own.decisions)
    assert own.agreed == len(own.decisions) and own.total_loss == 0
    assert other.valued == other.decisions and all(d.loss >= 0 for d in other.decisions)
    assert other.agreed < len(other.decisions) and other.total_loss > 0


def _with_other_hidden_cards(rec: dict[str, Any], move: int, seed: int) -> dict[str, Any]:
    """A record whose first hand deals the cards the seat to move at ``move`` has not
    seen (the other hands, the deck) in another order: its first ``move + 1`` moves
    replayed, the rest played anew by ``greedy`` and ``random``."""
    s = new_match(RULES, seed=rec["seed"], deck=rec["hands"][0]["deck"])
    for m in rec["hands"][0]["moves"][:move]:
        apply(s, record_action(s, m))
    unseen = {CODES[c] for c in cards_of(info_set(s, s.to_move).unseen)}
    deck = list(rec["hands"][0]["deck"])
    at = [k for k, c in enumerate(deck) if c in unseen]
    moved = [deck[k] for k in at]
    random.Random(seed).shuffle(moved)
    for k, c in zip(at, moved, strict=True):
        deck[k] = c
    s = new_match(RULES, seed=rec["seed"], deck=deck)
    recorder = MatchRecorder(s, list(rec["players"]))
    for m in rec["hands"][0]["moves"][:move + 1]:
        recorder.observe(apply(s, record_action(s, m)), s)
    agents = [make_agent("greedy"), make_agent("random", seed=seed)]
    while not s.done:
        recorder.observe(apply(s, agents[s.to_move % 2].act(info_set(s, s.to_move))), s)
    return recorder.record


def _review_of(rec: dict[str, Any], hand: int, move: int, reviewer: Reviewer
               ) -> tuple[int, dict[str, Any]]:
    """(the reviewer's seed for it, the review) of one decision of a record, replayed."""
    st = next(st for st in replay(rec) if (st.hand, st.index) == (hand, move))
    info = info_set(st.state_before, st.state_before.to_move)
    assert len(info.legal_actions) > 1
    return (decision_seed(info, reviewer.seed),
            review_decision(reviewer, info, st.action, hand, move).to_json())


@pytest.mark.parametrize("spec", ["pimc", SEARCH])
def test_no_hidden_card_changes_the_review_of_a_decision(spec: str) -> None:
    rec = play_match(RULES, 33, [make_agent("greedy"), make_agent("random", seed=2)],
                     ["greedy", "random"])
    reviewer = Reviewer(spec, seed=5)
    moves = [j for j in range(6) if len(info_set(
        next(st for st in replay(rec) if (st.hand, st.index) == (0, j)).state_before,
        rec["hands"][0]["moves"][j]["seat"]).legal_actions) > 1][:4]
    assert len(moves) == 4
    for move in moves:
        other = _with_other_hidden_cards(rec, move, seed=move)
        verify_record(other)
        assert other["hands"][0]["deck"] != rec["hands"][0]["deck"]
        assert other["hands"] != rec["hands"]
        assert _review_of(other, 0, move, reviewer) == _review_of(rec, 0, move, reviewer)
    whole = {(d.hand, d.move): d.to_json() for d in review_match(other, reviewer).decisions}
    assert whole[0, moves[-1]] == _review_of(rec, 0, moves[-1], reviewer)[1]


@pytest.fixture(scope="module")
def records(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("review") / "matches.jsonl"
    assert scopa(["record", "--agents", "greedy", "random", "--games", "2", "--seed", "4",
                  "--out", str(path)]) == 0
    return path


def test_scopa_review_prints_a_table_and_writes_json_lines(records: Path, tmp_path: Path,
                                                           capsys) -> None:
    out = tmp_path / "review.jsonl"
    capsys.readouterr()
    assert scopa(["review", str(records), "--agent", "pimc", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert text.count("=== match") == 2 and "mean loss" in text and "costliest" in text
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    heads = [x for x in lines if x["type"] == "review"]
    assert [h["match"] for h in heads] == [1, 2]
    assert heads[0]["format"] == "scopa-review/1"
    assert heads[0]["reviewer"] == "pimc:worlds=12,depth=5"
    decisions = [x for x in lines if x["type"] == "decision"]
    seats = [x for x in lines if x["type"] == "seat"]
    assert len(decisions) == sum(h["decisions"] for h in heads)
    for d in decisions:
        assert 0 <= d["played"] < len(d["moves"]) and 0 <= d["best"] < len(d["moves"])
        assert len(d["moves"]) > 1 and d["how"] == "pimc" and d["loss"] >= 0
        values = [m["value"] for m in d["moves"]]
        assert d["loss"] == pytest.approx(values[d["best"]] - values[d["played"]], abs=2e-4)
        assert max(values) == values[d["best"]]
    for s in seats:
        mine = [d for d in decisions if (d["match"], d["seat"]) == (s["match"], s["seat"])]
        assert s["decisions"] == s["valued"] == len(mine) and s["unvalued"] == 0
        assert s["mean_loss"] == pytest.approx(sum(d["loss"] for d in mine) / len(mine),
                                               abs=1e-3)
        assert s["agreed"] == sum(d["played"] == d["best"] for d in mine)
        assert [c["loss"] for c in s["costliest"]] == sorted(
            (d["loss"] for d in mine if d["loss"] > 0), reverse=True)[:3]
    # one match, the same review again: the review of a decision is a function of its
    # information set and the reviewer seed
    again = tmp_path / "again.jsonl"
    assert scopa(["review", str(records), "--agent", "pimc", "--match", "2",
                  "--out", str(again)]) == 0
    second = [x for x in map(json.loads, again.read_text().splitlines())
              if x["type"] != "review"]
    assert second == [x for x in lines if x["type"] != "review" and x["match"] == 2]


def test_scopa_review_by_default_searches_and_shows_the_network(records: Path,
                                                                 tmp_path: Path) -> None:
    out = tmp_path / "review.jsonl"
    assert scopa(["review", str(records), "--match", "1", "--out", str(out)]) == 0
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    assert lines[0]["reviewer"] == "pretrained:search=on"
    decisions = [x for x in lines if x["type"] == "decision"]
    hows = {d["how"] for d in decisions}
    assert {"search", "network", "exact"} <= hows
    for d in decisions:
        assert d["loss"] is not None and d["loss"] >= 0
        if d["how"] == "network":  # the network's call, played: probabilities, no values
            assert d["played"] == d["best"] and d["loss"] == 0
            assert all(m["value"] is None for m in d["moves"])
            assert sum(m["prob"] for m in d["moves"]) == pytest.approx(1, abs=1e-3)
            assert d["position_value"] is not None
        else:
            assert d["moves"][d["played"]]["value"] is not None


def _bad(tmp_path: Path, records: Path) -> dict[str, Path]:
    broken = tmp_path / "broken.jsonl"
    rec = json.loads(records.read_text().splitlines()[0])
    rec["match_score"] = [0, 0]
    append_records(broken, [rec])
    fewest = tmp_path / "fewest.jsonl"  # no shipped weights play capture_rule=fewest
    append_records(fewest, [play_match(make_rules("scopa", capture_rule="fewest"), 1,
                                       [make_agent("greedy")] * 2)])
    return {"broken": broken, "fewest": fewest}


@pytest.mark.parametrize("args, message", [
    (["{broken}"], "{broken}:1: match_score: recorded [0, 0], engine gives"),
    (["{records}", "--match", "3"], "--match 3 is past the end: {records} holds 2 match(es)"),
    (["{records}", "--match", "0"], "--match 0: matches are numbered from 1"),
    (["{records}", "--agent", "greedy"], "agent 'greedy' cannot review: it does not value "
                                         "moves in points"),
    (["{records}", "--agent", "pretrained"], "agent 'pretrained' cannot review"),
    (["{records}", "--agent", "nobody"], "unknown agent 'nobody'"),
    (["{fewest}"], "reviewer 'pretrained:search=on' cannot play this record's rules: "
                   "'pretrained' has no weights for scopa with 2 players (differs in "
                   "capture_rule='fewest'"),
    (["{records}", "--out", "{tmp}/x.txt"], "write the review as FILE.jsonl (JSON lines) or "
                                            "FILE.html"),
    (["{records}", "--out", "{tmp}/no/x.jsonl"], "no/x.jsonl"),
    (["{tmp}/missing.jsonl"], "missing.jsonl"),
])
def test_bad_input_is_one_line(records: Path, tmp_path: Path, capsys, args: list[str],
                               message: str) -> None:
    paths = {**_bad(tmp_path, records), "records": records, "tmp": tmp_path}
    capsys.readouterr()
    assert scopa(["review", *(a.format(**paths) for a in args)]) != 0
    out = capsys.readouterr()
    assert out.err.count("\n") == 1 and out.err.startswith("scopa review: error: "), out.err
    assert message.format(**paths) in out.err
    assert "Traceback" not in out.err + out.out


def test_the_review_page_embeds_the_review(records: Path, tmp_path: Path) -> None:
    page = tmp_path / "review.html"
    assert scopa(["review", str(records), "--agent", "pimc:worlds=4,depth=2", "--out",
                  str(page)]) == 0
    text = page.read_text()
    assert "const REVIEW = {" in text and "function reviewRender" in text
    players = json.loads(records.read_text().splitlines()[0])["players"]
    assert f"Scopa review: {' vs '.join(players)} (match 1 of matches.jsonl)" in text
    assert "<script src" not in text and "http" not in text.split("<body")[1].replace(
        "http://www.w3.org/2000/svg", "")


def test_a_record_downloaded_from_scopa_serve_is_reviewed(tmp_path: Path, capsys,
                                                          monkeypatch: pytest.MonkeyPatch
                                                          ) -> None:
    import threading

    from scopa_web.server import make_server
    from tests.test_web import Client, _play_out

    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))  # the server's store
    srv = make_server(RULES, "greedy", port=0, seed=1)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    try:
        client = Client(srv.server_address[1])
        _, new = client.call("POST", "/api/new", {"seed": 12})
        _play_out(client, new["game"], new["view"])
        status, text = client.call("GET", f"/api/game/{new['game']}/record")
    finally:
        srv.shutdown()
        srv.server_close()
        thread.join(timeout=10)
    assert status == 200
    path = tmp_path / "served.jsonl"
    path.write_text(text)
    out = tmp_path / "served.review.jsonl"
    capsys.readouterr()
    assert scopa(["review", str(path), "--agent", "pimc:worlds=4,depth=3", "--out",
                  str(out)]) == 0
    assert "human" in capsys.readouterr().out
    seats = [x for x in map(json.loads, out.read_text().splitlines()) if x["type"] == "seat"]
    assert [s["player"] for s in seats] == ["human", "greedy"]
    assert all(s["decisions"] > 0 and s["unvalued"] == 0 for s in seats)


def test_the_ordering_benchmark_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                     capsys) -> None:
    from tests.helpers import import_benchmark

    bench = import_benchmark("review_ordering")
    monkeypatch.setattr("sys.argv", [
        "review_ordering.py", "--agents", "random", "expert", "--reviewer",
        "pimc:worlds=3,depth=2", "--dir", str(tmp_path / "records"), "--json",
        "--ladder", str(Path(__file__).resolve().parents[1] / "docs/ladder/ratings.json")])
    capsys.readouterr()
    bench.main()
    text = capsys.readouterr().out  # scopa record's lines, then the JSON
    out = json.loads(text[text.index("\n{") + 1:])
    assert [r["agent"] for r in out["rows"]] == ["random", "expert"]
    assert all(r["decisions"] > 0 and r["mean_loss"] >= 0 for r in out["rows"])
    assert out["matches"] == 2 and len(out["pairs"]) == 1 and out["pairs"][0]["ladder_apart"]
    assert [o["total_loss"] for o in out["own"]] == [0.0, 0.0]
    assert all(o["agreed"] == o["decisions"] > 0 for o in out["own"])


def test_records_kept_by_eval_and_the_ladder_are_reviewed(tmp_path: Path, capsys) -> None:
    kept = tmp_path / "eval.jsonl"
    assert scopa(["eval", "greedy", "random", "--hands", "8", "--matches", "2",
                  "--records", str(kept)]) == 0
    recs = list(read_records(kept))
    assert [r["players"] for r in recs] == [["greedy", "random"], ["random", "greedy"]] * 2
    for r in recs:
        verify_record(r)
    out = tmp_path / "lad"
    args = ["ladder", "random", "greedy", "--hands", "8", "--matches", "1", "--out", str(out)]
    assert scopa([*args, "--records"]) == 0
    pair = out / "pairs" / "00-random__01-greedy.records.jsonl"
    assert len(list(read_records(pair))) == 2
    capsys.readouterr()
    assert scopa([*args, "--records"]) == 0  # the pair and its records are reused
    assert "reusing" in capsys.readouterr().err and len(list(read_records(pair))) == 2
    assert scopa(["review", str(pair), "--agent", "pimc:worlds=4,depth=2", "--match", "2"]) == 0
    assert "=== match 2 of" in capsys.readouterr().out


def test_a_four_player_match_is_reviewed_seat_by_seat(tmp_path: Path) -> None:
    rules = make_rules("scopone_scientifico")
    rec = play_match(rules, 8, [make_agent("greedy"), make_agent("random", seed=1)] * 2,
                     ["greedy", "random", "greedy", "random"])
    review = review_match(rec, Reviewer("pimc:worlds=3,depth=2", seed=1))
    assert [s.player for s in review.seats] == ["greedy", "random", "greedy", "random"]
    for s in review.seats:
        assert s.decisions and all(d.seat == s.seat and d.loss is not None and d.loss >= 0
                                   for d in s.decisions)
    assert len(review.decisions) == sum(
        1 for st in replay(rec)
        if len(info_set(st.state_before, st.state_before.to_move).legal_actions) > 1)
