"""What a seat cannot see (``agents.worlds``): the round's public history the engine keeps,
its replay, the uniform and the inference samplers, and the network as the model of the
others' play (``scopa_policy.inference``)."""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from agents.worlds import (
    InferenceSampler,
    PastDecision,
    UniformSampler,
    past_decisions,
    sample_worlds,
)
from scopa_env.game import GameState, apply, new_match
from scopa_env.moves import legal_actions
from scopa_env.observation import InfoSet, info_set
from scopa_env.rules import make_rules
from scopa_policy.agent import PretrainedAgent
from scopa_policy.inference import PolicyMoveModel
from scopa_policy.modes import SearchParams
from scopa_policy.search import RolloutPolicy, SearchAgent

ROOT = Path(__file__).resolve().parents[1]


def played_positions(n: int, seed: int, players: int = 2, **rules_kw
                     ) -> list[tuple[InfoSet, GameState, list[tuple[int, int, int]]]]:
    """(information set, true state, [(seat, hand, table) before each move of the round])
    at random decisions of random games where another seat has moved this round."""
    rng = random.Random(seed)
    rules = make_rules("scopa", players=players, **rules_kw)
    out = []
    while len(out) < n:
        s = new_match(rules, seed=rng.randrange(1 << 30))
        seen: list[tuple[int, int, int]] = []
        for _ in range(rng.randrange(1, 30)):
            if not s.round_moves:
                seen = []
            seen.append((s.to_move, s.hands[s.to_move], s.table))
            if apply(s, rng.choice(s.legal_actions())).hand is not None:
                break
        else:
            if not s.round_moves:
                continue
            info = info_set(s, s.to_move)
            if any(seat != s.to_move for seat, _ in info.round_moves) and info.deck_count:
                out.append((info, s.copy(), seen[:len(info.round_moves)]))
    return out


def test_the_engine_keeps_the_rounds_public_history():
    """``round_moves`` grows by each move of the round, ``round_start`` is the public
    position before its first, both start again at the next deal, and the information
    set carries them."""
    rules = make_rules("scopa")
    s = new_match(rules, seed=3)
    assert s.round_moves == () and s.round_start is None
    table = s.table
    moves = []
    for k in range(rules.players * rules.hand_size):
        moves.append((s.to_move, s.legal_actions()[0]))
        apply(s, moves[-1][1])
        if k == 0:
            assert s.round_start.table == table
            assert s.round_start.piles == (0, 0) and s.round_start.last_capture_team is None
        if k < rules.players * rules.hand_size - 1:
            assert s.round_moves == tuple(moves)
            info = info_set(s, s.to_move)
            assert info.round_moves == s.round_moves and info.round_start == s.round_start
    assert s.round_moves == () and s.round_start is None  # the next round was dealt
    table, first = s.table, (s.to_move, s.legal_actions()[0])
    apply(s, first[1])
    assert s.round_start.table == table and s.round_moves == (first,)


@pytest.mark.parametrize("players, rules_kw", [(2, {}), (4, {}), (2, {"ace_takes_all": True})])
def test_past_decisions_replay_what_each_seat_faced(players, rules_kw):
    """Replayed from the round's start with the true hands, each other seat's decision has
    the table it faced, the hand it held (its hand now plus what it played since), and the
    move it made; its observation is the one the engine gave it."""
    for info, s, seen in played_positions(25, seed=players, players=players, **rules_kw):
        decisions = past_decisions(info, s.hands)
        others = [(k, m) for k, m in enumerate(info.round_moves) if m[0] != info.seat]
        assert len(decisions) == len(others)
        for d, (k, (seat, action)) in zip(decisions, others, strict=True):
            assert isinstance(d, PastDecision)
            assert (d.seat, d.action) == (seat, action)
            assert d.state.table == seen[k][2]
            assert s.hands[seat] | d.later == seen[k][1]
            assert d.state.hands[seat] == seen[k][1]


def test_worlds_are_consistent_with_the_information_set_and_seeded():
    model = _Prefers(card=None)
    for info, _, _ in played_positions(20, seed=5):
        a = InferenceSampler(model).sample(info, 16, random.Random(1), depth=6)
        b = InferenceSampler(model).sample(info, 16, random.Random(1), depth=6)
        assert [(w.hands, w.deck, k) for w, k in a] == [(w.hands, w.deck, k) for w, k in b]
        assert sum(k for _, k in a) == 16
        for w, _ in a:
            assert w.hands[info.seat] == info.hand and w.table == info.table
            others = [w.hands[p] for p in range(info.players) if p != info.seat]
            assert [h.bit_count() for h in others] == [
                info.hand_sizes[p] for p in range(info.players) if p != info.seat]
            held = 0
            for h in others:
                assert not held & h
                held |= h
            rest = set(w.deck[40 - info.deck_count:])
            assert held | sum(1 << c for c in rest) == info.unseen
            assert info_set(w, info.seat) == info  # the same information set


def test_without_the_others_moves_the_worlds_are_the_uniform_samplers():
    s = new_match(make_rules("scopa"), seed=8)
    info = info_set(s, s.to_move)
    assert not info.round_moves
    got = InferenceSampler(_Prefers(card=None)).sample(info, 12, random.Random(4))
    want = UniformSampler().sample(info, 12, random.Random(4))
    assert [(w.hands, w.deck, k) for w, k in got] == [(w.hands, w.deck, k) for w, k in want]


class _Prefers:
    """A model under which the others' moves are likely only where the first other seat
    holds ``card`` (``None``: every deal alike)."""

    def __init__(self, card: int | None) -> None:
        self.card = card

    def log_likelihood(self, decisions, hands):
        if self.card is None:
            return np.zeros(len(hands))
        seat = decisions[0].seat
        holds = (hands[:, seat] >> np.uint64(self.card)) & np.uint64(1)
        return np.where(holds == 1, 0.0, -50.0)


def test_worlds_follow_the_models_likelihood():
    """With a model that all but rules out the deals where the opponent lacks one unseen
    card, every world deals it that card."""
    for info, _, _ in played_positions(10, seed=9):
        opp = next(seat for seat, _ in info.round_moves if seat != info.seat)
        if not info.hand_sizes[opp]:
            continue  # it played its last card of the round: nothing to deal it
        card = (info.unseen & -info.unseen).bit_length() - 1
        worlds = InferenceSampler(_Prefers(card), candidates=8).sample(
            info, 32, random.Random(2))
        assert all(w.hands[opp] >> card & 1 for w, _ in worlds)


def test_the_policy_model_is_the_networks_softmax_on_the_replayed_information_set():
    """``PolicyMoveModel`` (patched observations, float32, distinct hands) gives each past
    decision the log-probability the network agent's own logits give it on that seat's
    information set, rebuilt with the candidate hand."""
    rules = make_rules("scopa")
    agent = PretrainedAgent(seed=0, suits="none").policy(rules)
    model = PolicyMoveModel(RolloutPolicy(agent.net, 0.25), temperature=1.0, floor=0.0)
    rng = random.Random(3)
    checked = 0
    for info, s, _ in played_positions(12, seed=13):
        for d in past_decisions(info, s.hands):
            if not d.state.deck_count:
                continue
            cands = [s.hands[d.seat]]
            for _ in range(3):
                w, _ = sample_worlds(info, 1, rng)[0]
                cands.append(w.hands[d.seat])
            held = np.array([h | d.later for h in cands], np.uint64)
            got = model.decision_log_probs(d, held)
            for h, g in zip(held.tolist(), got.tolist(), strict=True):
                st = d.state.copy()
                st.hands[d.seat] = int(h)
                seat_info = info_set(st, d.seat)
                z = agent.logits(seat_info)
                want = z[seat_info.legal_actions.index(d.action)] - np.logaddexp.reduce(z)
                assert g == pytest.approx(want, abs=1e-4)
                checked += 1
    assert checked >= 20


def test_the_floor_and_temperature_shape_the_likelihood():
    rules = make_rules("scopa")
    policy = RolloutPolicy(PretrainedAgent(seed=0).policy(rules).net, 0.25)
    info, s, _ = played_positions(1, seed=21)[0]
    d = past_decisions(info, s.hands)[0]
    held = np.array([s.hands[d.seat] | d.later], np.uint64)
    sharp = PolicyMoveModel(policy, 1.0, 0.0).decision_log_probs(d, held)[0]
    floored = PolicyMoveModel(policy, 1.0, 0.5).decision_log_probs(d, held)[0]
    n = len(legal_actions(int(held[0]), d.state.table, rules))
    assert np.exp(floored) == pytest.approx(0.5 * np.exp(sharp) + 0.5 / n, rel=1e-6)
    cold = PolicyMoveModel(policy, 0.25, 0.0).decision_log_probs(d, held)[0]
    assert cold != pytest.approx(sharp)
    with pytest.raises(ValueError, match="sampler temperature must be more than 0"):
        PolicyMoveModel(policy, 0.0, 0.1)
    with pytest.raises(ValueError, match=r"sampler floor must be in \[0, 1\)"):
        PolicyMoveModel(policy, 1.0, 1.0)
    with pytest.raises(ValueError, match="sampler candidates must be at least 1"):
        InferenceSampler(PolicyMoveModel(policy), candidates=0)


def test_the_search_reads_the_table_from_its_information_set_alone():
    """``sampler=policy``: legal moves, the same for the same seed, and the same in a world
    that shares the seat's information set (round history included)."""
    from scopa_policy.agent import load_policy_agent

    def agent(seed: int) -> SearchAgent:
        a = load_policy_agent(None, seed=seed, search=SearchParams(
            worlds=4, gap=float("inf"), sampler="policy"))
        assert isinstance(a, SearchAgent)
        return a

    rng = random.Random(17)
    for info, _, _ in played_positions(5, seed=17):
        twin_state, _ = sample_worlds(info, 1, rng)[0]
        twin = info_set(twin_state, info.seat)
        assert twin.round_moves == info.round_moves
        a = agent(3).act(info)
        assert a in info.legal_actions
        assert agent(3).act(twin) == a


def test_the_quality_benchmark_compares_the_two_samplers():
    out = subprocess.run([sys.executable, "benchmarks/world_inference.py", "--hands", "3",
                          "--floor", "0", "0.1"], capture_output=True, text=True, cwd=ROOT,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    assert "positions from 3 hands against pretrained" in out.stdout
    assert out.stdout.count("loglik gain") == 2
    assert "uniform_median_cpu_ms" in out.stdout and "policy_median_cpu_ms" in out.stdout


def test_pimc_deals_its_worlds_by_the_named_sampler():
    """``pimc:sampler=policy`` reads the table through the ``scopa.samplers`` entry point;
    the uniform default keeps its spec and its moves."""
    from agents import make_agent

    assert make_agent("pimc:worlds=6,depth=3").spec == "pimc:worlds=6,depth=3"
    assert make_agent("pimc:worlds=6,depth=3,sampler=uniform").spec == "pimc:worlds=6,depth=3"
    reading = make_agent("pimc:worlds=6,depth=3,sampler=policy", seed=4)
    assert reading.spec == "pimc:worlds=6,depth=3,sampler=policy"
    for info, _, _ in played_positions(6, seed=31):
        assert reading.act(info) in info.legal_actions
        uniform = make_agent("pimc:worlds=6,depth=3", seed=4)
        before = make_agent("pimc:worlds=6,depth=3", seed=4)
        # the same worlds as the sampler the search had before samplers were named
        worlds = sample_worlds(info, 6, random.Random(9), 3)
        assert [w.hands for w, _ in UniformSampler().sample(info, 6, random.Random(9), 3)] \
            == [w.hands for w, _ in worlds]
        assert uniform.act(info) == before.act(info)


def test_an_unknown_or_broken_sampler_is_one_clear_line(monkeypatch):
    import importlib.metadata

    from agents import make_agent
    from agents.worlds import make_sampler

    out = subprocess.run([sys.executable, "-c",
                          "import sys; from scopa_cli import main; sys.exit(main(sys.argv[1:]))",
                          "eval", "pimc:sampler=nope", "greedy", "--hands", "2"],
                         capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert out.returncode != 0 and "Traceback" not in out.stderr
    assert "unknown world sampler 'nope'; known: uniform, policy" in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1, out.stderr
    with pytest.raises(ValueError, match="unknown world sampler 'x'"):
        make_agent("pimc:sampler=x")
    broken = importlib.metadata.EntryPoint("policy", "no_such_module_here:f", "scopa.samplers")
    monkeypatch.setattr(importlib.metadata, "entry_points",
                        lambda group=None: [broken] if group == "scopa.samplers" else [])
    with pytest.raises(ValueError, match=r"world sampler 'policy' \(no_such_module_here:f\) "
                                         r"cannot be built: ModuleNotFoundError"):
        make_sampler("policy", make_rules("scopa"))


def test_a_round_history_that_does_not_lead_to_the_table_is_refused():
    import dataclasses

    info, s, _ = played_positions(1, seed=41)[0]
    start = info.round_start._replace(table=info.round_start.table ^ (info.unseen & -info.unseen))
    bad = dataclasses.replace(info, round_start=start)
    with pytest.raises(ValueError, match="information set is inconsistent: its round's moves "
                                         "do not lead to its table"):
        past_decisions(bad, s.hands)


@pytest.mark.parametrize("rules_name", ["scopa", "scopone_scientifico"])
def test_a_decision_kept_apart_from_its_game_reads_the_same_moves(rules_name):
    """A training decision kept as its observation and round row (what the expert
    iteration's search is given, numbered from the dealer) replays the same past
    decisions as the game's own information set: the same seats relative to the dealer,
    the same moves, and the same observations of what each seat faced."""
    from dataclasses import replace

    from scopa_env.observation import decode_info, encode
    from scopa_env.vector import VectorScopaEnv
    from scopa_env.vector_states import round_history_of

    rules = make_rules(rules_name)
    p = rules.players
    env = VectorScopaEnv(16, rules=rules, seed=3, records=False)
    rng = np.random.default_rng(3)
    read = 0
    for _ in range(60):
        obs, rows = env.observe(), env.round_rows(np.arange(env.num_envs))
        for i in range(env.num_envs):
            whole = env.info_set(i)
            d = int(env.dealer[i])
            kept = replace(decode_info(obs[i], rules, whole.legal_actions),
                           **round_history_of(rows[i], p))
            assert kept.round_moves == tuple(((s - d) % p, a) for s, a in whole.round_moves)
            if whole.round_start is None:
                assert kept.round_start is None
                continue
            hands = env.hands[i].tolist()
            turned = [hands[(s + d) % p] for s in range(p)]  # seat s from the dealer
            a, b = past_decisions(whole, hands), past_decisions(kept, turned)
            assert [(x.seat - d) % p for x in a] == [y.seat for y in b]
            assert [x.action for x in a] == [y.action for y in b]
            assert [x.later for x in a] == [y.later for y in b]
            for x, y in zip(a, b, strict=True):
                assert np.array_equal(encode(x.state, x.seat), encode(y.state, y.seat))
            read += len(a)
        legal = [env.legal_ids[i, :env.legal_valid[i].sum()] for i in range(env.num_envs)]
        env.step(np.array([rng.choice(m) for m in legal]))
    assert read > 100, f"only {read} past decisions compared"
