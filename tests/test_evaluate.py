"""The evaluator (duplicate deals), its statistics, the CLI and the ladder."""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest

from agents import make_agent
from agents.evaluation.evaluate import UnitJob, deal_seed, evaluate, main, play_unit
from agents.evaluation.ladder import main as ladder_main
from agents.evaluation.results import EvalResult
from agents.evaluation.stats import additive_ratings, bradley_terry, mean_ci, wilson
from scopa_env.rules import make_rules

WORKER_DEPENDENT = ("timing", "elapsed_s", "workers")


def _stable(res: dict) -> dict:
    return {k: v for k, v in res.items() if k not in WORKER_DEPENDENT}


def test_null_check_random_against_itself():
    res = evaluate("random", "random", hands=300, seed=11, matches=0)
    p = res.points_per_hand
    assert p.ci95[0] < 0 < p.ci95[1]
    assert p.half_width < 0.5


def test_deterministic_agent_against_itself_is_exactly_even():
    res = evaluate("greedy", "greedy", hands=24, seed=1, matches=4)
    assert res.points_per_hand.margin == 0.0
    assert res.matches.win_rate == 0.5


def test_results_identical_for_1_and_2_workers():
    kw = dict(hands=20, seed=5, matches=9)
    one = evaluate("random", "expert", workers=1, **kw).to_json()
    two = evaluate("random", "expert", workers=2, **kw).to_json()
    assert _stable(one) == _stable(two)
    assert one["workers"] == 1 and two["workers"] == 2
    again = evaluate("random", "expert", workers=1, **kw).to_json()
    assert _stable(again) == _stable(one)


def test_report_fields_and_strength_order():
    typed = evaluate("greedy", "random", hands=60, seed=2, matches=6)
    res = typed.to_json()
    json.dumps(res)  # JSON-able
    assert EvalResult.from_json(json.loads(json.dumps(res))) == typed
    assert res["a"] == "greedy" and res["b"] == "random" and res["hand_games"] == 120
    p = res["points_per_hand"]
    assert p["ci95"][0] > 0 and p["margin"] == pytest.approx(p["a"] - p["b"])
    cats = res["categories"]
    assert set(cats) == {"carte", "denari", "settebello", "primiera", "scope"}
    assert sum(c["margin"] for c in cats.values()) == pytest.approx(p["margin"])
    m = res["matches"]
    assert m["played"] == 12 and 0 <= m["ci95"][0] <= m["win_rate"] <= m["ci95"][1] <= 1
    for side in ("a", "b"):
        t = res["timing"][side]
        assert t["moves"] > 0 and 0 <= t["median_ms"] <= t["p95_ms"]


def test_four_players_and_options():
    res = evaluate("expert", "random", hands=8, seed=3, players=4, matches=1,
                   options={"re_bello": True})
    assert res.players == 4 and res.rules.re_bello is True
    assert "re_bello" in res.categories
    res = evaluate("random", "greedy", hands=4, seed=3, rules="scopone_scientifico",
                   players=4, matches=0)
    assert res.rules.hand_size == 10


def test_each_deal_is_played_in_both_seatings(monkeypatch):
    import agents.evaluation.evaluate as ev

    rules = make_rules("scopa")
    dealt = []  # (seed, first deck) of every game the unit starts

    def new_match(rules, seed):
        state = ev_new_match(rules, seed=seed)
        dealt.append((seed, state.deck))
        return state

    ev_new_match = ev.new_match
    monkeypatch.setattr(ev, "new_match", new_match)
    out = play_unit(UnitJob("random", "greedy", rules, seed=7, kind="hand", unit=0, count=3))
    assert out.index == [0, 0, 1, 1, 2, 2] and out.a_team == [0, 1] * 3
    # both seatings of a deal are dealt the same deck, and each deal its own
    assert [s for s, _ in dealt] == [deal_seed(7, i) for i in (0, 0, 1, 1, 2, 2)]
    decks = [d for _, d in dealt]
    assert decks[0::2] == decks[1::2] and len(set(decks[0::2])) == 3


def test_agent_objects_and_factories():
    agent = make_agent("greedy")
    res = evaluate(agent, "random", hands=4, seed=0, matches=0)
    assert res.a == "greedy"
    res = evaluate(lambda seed: make_agent("random", seed=seed), "greedy", hands=4, seed=0,
                   matches=0)
    assert res.points_per_hand.margin < 0
    with pytest.raises(ValueError, match="cannot be shared"):
        evaluate(agent, "random", hands=4, seed=0, workers=2)


def test_batched_agents_get_one_call_per_step():
    calls = []

    class Batched:
        spec = "first-legal"

        def act(self, info):
            return info.legal_actions[0]

        def act_batch(self, infos):
            calls.append(len(infos))
            return [i.legal_actions[0] for i in infos]

    evaluate(Batched(), "random", hands=8, seed=0, matches=0)
    assert max(calls) > 1


def test_illegal_agent_is_caught():
    class Cheater:
        spec = "cheater"

        def act(self, info):
            return 16199

    with pytest.raises(ValueError, match="cheater"):
        evaluate(Cheater(), "random", hands=1, seed=0, matches=0)


def test_bad_arguments():
    with pytest.raises(ValueError, match="unknown agent"):
        evaluate("nosuch", "random", hands=4, seed=0)
    with pytest.raises(ValueError, match="hands"):
        evaluate("random", "random", hands=0, seed=0)


# ----------------------------------------------------------------- CLI


def test_cli_json_and_text(capsys):
    assert main(["random", "greedy", "--hands", "10", "--seed", "1", "--matches", "2",
                 "--json"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert res["a"] == "random" and res["hands"] == 10 and res["matches"]["played"] == 4
    assert main(["random", "greedy", "--hands", "10", "--seed", "1", "--matches", "2"]) == 0
    text = capsys.readouterr().out
    assert "points per hand" in text and "match win rate" in text and "carte" in text
    assert main(["random", "pimc:width=2", "--hands", "2"]) == 2
    assert "no parameter 'width'" in capsys.readouterr().err


def test_scopa_cli_dispatches_eval(capsys):
    from scopa_cli import main as scopa
    assert scopa(["eval", "random", "random", "--hands", "4", "--matches", "0", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["hands"] == 4


def test_ladder_outputs(tmp_path, capsys):
    out = tmp_path / "ladder"
    assert ladder_main(["random", "greedy", "expert", "--hands", "16", "--matches", "4",
                        "--seed", "3", "--out", str(out)]) == 0
    for name in ("ratings.csv", "ratings.json", "ladder.md", "ladder.png"):
        assert (out / name).stat().st_size > 0
    doc = json.loads((out / "ratings.json").read_text())
    ratings = {r["agent"]: r for r in doc["ratings"]}
    assert ratings["random"]["elo"] == 0 and ratings["random"]["points_per_hand"] == 0
    assert ratings["greedy"]["points_per_hand"] > 0 and len(doc["pairs"]) == 3
    rows = list(csv.DictReader(open(out / "ratings.csv")))
    assert {r["agent"] for r in rows} == {"random", "greedy", "expert"}
    assert "| rank | agent |" in (out / "ladder.md").read_text()
    # a re-run reuses the pairs already played
    assert ladder_main(["random", "greedy", "expert", "--hands", "16", "--matches", "4",
                        "--seed", "3", "--out", str(out)]) == 0
    assert "reusing" in capsys.readouterr().err


# ----------------------------------------------------------------- statistics


def test_wilson_and_mean_ci():
    lo, hi = wilson(50, 100)
    assert lo == pytest.approx(0.4038, abs=1e-3) and hi == pytest.approx(0.5962, abs=1e-3)
    assert wilson(0, 10)[0] == 0.0 and wilson(10, 10)[1] == pytest.approx(1.0)
    m = mean_ci([1.0, 2.0, 3.0, 4.0])
    assert m["mean"] == 2.5 and m["half_width"] == pytest.approx(1.96 * 1.2910 / 2, abs=1e-3)


def test_bradley_terry_and_additive_ratings():
    wins = np.array([[0, 25, 10], [75, 0, 25], [90, 75, 0]], dtype=float)
    elo, se = bradley_terry(3, wins, anchor=0)
    assert elo[0] == 0 and se[0] == 0 and 0 < elo[1] < elo[2]
    assert elo[1] == pytest.approx(400 * np.log10(3), abs=60)
    r, se = additive_ratings(3, [(1, 0, 1.0, 0.1), (2, 1, 0.5, 0.1), (2, 0, 1.5, 0.1)])
    assert r == pytest.approx([0.0, 1.0, 1.5]) and se[0] == 0


def test_bradley_terry_against_fixed_ratings():
    # one player against an opponent held at Elo 200: the smoothed share's logit above it
    elo, se = bradley_terry(2, np.array([[0, 30], [10, 0]], dtype=float), fixed={1: 200.0})
    assert elo[1] == pytest.approx(200) and se[1] == 0 and se[0] > 0
    assert elo[0] == pytest.approx(200 + 400 * np.log10(30.5 / 10.5), abs=1e-6)


def test_ladder_replays_a_pair_whose_weights_changed(tmp_path, capsys):
    """A cached pair of a learned agent is reused while its weights are the same and
    played again once the file under the same spec holds other weights."""
    import torch

    from scopa_policy.checkpoint import policy_checkpoint, save_atomic
    from scopa_policy.network import NetConfig, PolicyNet

    ck = tmp_path / "net.pt"

    def write(seed: int) -> None:
        torch.manual_seed(seed)
        save_atomic(policy_checkpoint(PolicyNet(NetConfig(16, 1, 8)),
                                      {"name": "scopa", "players": 2}, {}), ck)

    args = ["random", f"ckpt:{ck}", "--hands", "8", "--matches", "0", "--seed", "3",
            "--out", str(tmp_path / "ladder")]
    write(1)
    assert ladder_main(args) == 0
    capsys.readouterr()
    assert ladder_main(args) == 0
    assert "reusing" in capsys.readouterr().err
    write(2)
    assert ladder_main(args) == 0
    assert "reusing" not in capsys.readouterr().err
