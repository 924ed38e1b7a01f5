"""The last-deal scorer (scopa_policy.last_deal_net) and its training stage (kind:
last_deal): tokens, the numpy path equal to the network, the loss, the recorded labels,
a run end to end with resume and export, and the agent playing the last deal with it."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import torch

from agents.baselines.endgame import EndgameSolver, position_from_obs
from scopa_env.cards import N_CARDS, mask_of
from scopa_env.files import FileProblem
from scopa_env.game import apply, new_match
from scopa_env.observation import HAND, TABLE, UNSEEN, encode_info, info_set
from scopa_env.rules import make_rules
from scopa_env.suit_maps import ACTION_MAPS, permute_mask, permute_obs_rows
from scopa_policy.agent import PolicyAgent, load_policy_agent
from scopa_policy.checkpoint import (
    CheckpointError,
    build_last_deal,
    load_checkpoint,
    policy_checkpoint,
    save_atomic,
)
from scopa_policy.features import COLUMNS, action_inputs_np
from scopa_policy.last_deal_net import LastDealConfig, LastDealNet, _softmax, cards_in_play, tokens
from scopa_policy.network import PolicyNet
from scopa_policy.symmetry import SuitAveraged
from scopa_train import recipe
from scopa_train.config import ConfigError, StageConfig, load_recipe
from scopa_train.export import export
from scopa_train.stages import last_deal as last_deal_kind
from scopa_train.stages.fitting import length_buckets
from scopa_train.stages.last_deal import (
    OwnershipHead,
    Positions,
    RecordingTeacher,
    _batch,
    best_set_loss,
    ownership_loss,
)
from tests.test_endgame import VARIANTS, last_deal_states

ROOT = Path(__file__).resolve().parent.parent
RECIPE = ROOT / "configs" / "recipe.yaml"
RULES = make_rules("scopa")


def _quiet(_: str) -> None:
    pass


def _decisions(n: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, list]:
    """Observations (n, 216), flat legal ids, their decision rows, and the states, of
    random last-deal decisions with a choice."""
    states = [s for s in last_deal_states({}, 3 * n, seed) if len(s.legal_actions()) > 1][:n]
    obs = np.stack([encode_info(info_set(s, s.to_move)) for s in states])
    ids = [np.asarray(s.legal_actions(), np.int64) for s in states]
    row = np.repeat(np.arange(len(ids)), [len(i) for i in ids])
    return obs, np.concatenate(ids), row, states


def test_tokens_name_the_cards_in_play_and_each_moves_cards() -> None:
    obs, ids, row, _ = _decisions(40, seed=1)
    feats = action_inputs_np(obs, ids, row)
    tok = tokens(obs, feats, row)
    inplay = (obs[:, HAND] + obs[:, UNSEEN] + obs[:, TABLE]) > 0.5
    assert (tok.mask.sum(1) == inplay.sum(1) + 1).all()  # + the global token
    assert (tok.cards[:, 0] == 0).all()
    card_of = tok.cards[..., :N_CARDS].argmax(-1)  # each slot's card (one-hot first)
    played = feats[:, COLUMNS["card"]].argmax(1)
    assert (card_of[row, tok.played] == played).all()
    assert (tok.cards[row, tok.played, -3] == 1).all()  # the played card is in hand
    captured = np.zeros((len(ids), N_CARDS))
    captured[tok.captured_move, card_of[row[tok.captured_move], tok.captured_slot]] = 1
    assert (captured == feats[:, COLUMNS["capture"]]).all()
    assert (tok.cards[row[tok.captured_move], tok.captured_slot, -1] == 1).all()  # table


def test_numpy_scorer_equals_the_network_batched_and_alone() -> None:
    torch.manual_seed(0)
    net = LastDealNet(LastDealConfig(width=32, layers=2, heads=4, ff_hidden=48,
                                     move_hidden=40)).eval()
    obs, ids, row, _ = _decisions(60, seed=2)
    feats = action_inputs_np(obs, ids, row)
    with torch.no_grad():
        want = net.scores(torch.from_numpy(obs), torch.from_numpy(feats),
                          torch.from_numpy(row), tokens(obs, feats, row)).numpy()
    scorer = net.numpy_scorer()
    got = scorer.scores(obs, feats, row)
    assert np.abs(got - want).max() < 1e-4
    alone = np.concatenate([
        scorer.scores(obs[b:b + 1], feats[row == b], np.zeros((row == b).sum(), np.int64))
        for b in range(len(obs))])
    assert np.abs(alone - got).max() < 1e-12


def test_best_set_loss_leaves_ties_free_and_adds_the_expected_regret() -> None:
    scores = torch.tensor([1.0, 1.0, 0.0, 2.0, -1.0])
    row = torch.tensor([0, 0, 0, 1, 1])
    col = torch.tensor([0, 1, 2, 0, 1])
    regret = torch.tensor([0.0, 0.0, 2.0, 1.0, 0.0])  # best: moves 0, 1 and 4
    loss = best_set_loss(scores, regret, row, 2, 3, col)
    p0 = 2 * math.e / (2 * math.e + 1)  # two best moves share the mass
    p1 = math.exp(-1) / (math.exp(2) + math.exp(-1))
    assert float(loss) == pytest.approx(-(math.log(p0) + math.log(p1)) / 2, rel=1e-6)
    # expected regret: (2 p(move 2) + p(move 3)) / 2
    q0 = 1 / (2 * math.e + 1)
    q1 = math.exp(2) / (math.exp(2) + math.exp(-1))
    with_regret = best_set_loss(scores, regret, row, 2, 3, col, 0.5)
    assert float(with_regret - loss) == pytest.approx(0.5 * (2 * q0 + q1) / 2, rel=1e-6)


def test_recording_teacher_keeps_exactly_the_decisions_it_labels() -> None:
    obs, ids, row, states = _decisions(12, seed=3)
    # one padded batch, its first decision from the first deal (not labelled)
    first = new_match(RULES, seed=4)
    legal = np.asarray(first.legal_actions(), np.int64)
    obs = np.concatenate([encode_info(info_set(first, first.to_move))[None], obs])
    ids, row = np.concatenate([legal, ids]), np.concatenate([np.zeros(len(legal), int),
                                                             row + 1])
    count = np.bincount(row)
    width = int(count.max())
    pad = np.zeros((len(obs), width), np.int64)
    valid = np.arange(width)[None] < count[:, None]
    pad[valid] = ids
    solver = EndgameSolver(RULES)
    plain = RecordingTeacher(EndgameSolver(RULES))
    plain.label_moves(obs, pad, valid)
    assert plain.positions().own is None  # outcomes only when asked for
    teacher = RecordingTeacher(EndgameSolver(RULES), outcomes=True)
    out = teacher.label_moves(obs, pad, valid)
    assert np.isnan(out[:len(legal)]).all() and not np.isnan(out[len(legal):]).any()
    data = teacher.positions()
    obs, ids, count = obs[1:], ids[len(legal):], count[1:]
    assert len(data) == len(obs) == teacher.decisions and (data.count == count).all()
    assert (data.ids == ids).all() and np.allclose(out[len(legal):], data.values)
    assert (data.obs == obs).all()
    for b, s in enumerate(states):
        want = solver.move_values(position_from_obs(obs[b]), list(s.legal_actions()))
        got = data.values[data.start[b]:data.start[b] + data.count[b]]
        assert np.allclose(got, want)
        outcomes = solver.move_outcomes(position_from_obs(obs[b]), list(s.legal_actions()))
        assert data.own[data.start[b]:data.start[b] + data.count[b]].tolist() == outcomes


def test_a_suit_view_of_a_batch_is_the_renamed_decisions_with_the_same_values() -> None:
    """``last_deal.suit_augment``: each decision seen under its own suit permutation has
    the renamed observation and moves, the same exact values, and the exact values of
    the renamed position are those values (the solver agrees)."""
    obs, ids, row, states = _decisions(12, seed=4)
    solver = EndgameSolver(RULES)
    count = np.bincount(row)
    values = np.concatenate([solver.move_values(position_from_obs(obs[b]),
                                                list(s.legal_actions()))
                             for b, s in enumerate(states)]).astype(np.float32)
    own = np.concatenate([solver.move_outcomes(position_from_obs(obs[b]),
                                               list(s.legal_actions()))
                          for b, s in enumerate(states)])
    data = Positions(obs=obs.astype(np.float32), ids=ids, values=values, own=own,
                     start=np.cumsum(count) - count, count=count)
    idx = np.arange(len(states))
    suits = np.arange(len(states)) % 6
    plain = _batch(data, idx)
    seen = _batch(data, idx, suits)
    assert (seen[2] == plain[2]).all() and (seen[4] == plain[4]).all()  # rows, regrets
    assert (seen[0] == permute_obs_rows(plain[0], suits)).all()
    assert (seen[1] == action_inputs_np(seen[0], ACTION_MAPS[suits[row], ids], row)).all()
    assert [mask_of(np.flatnonzero(r).tolist()) for r in plain[6]] == own.tolist()
    for m, b in enumerate(row):  # a renamed move's outcome is the original's, renamed
        assert mask_of(np.flatnonzero(seen[6][m]).tolist()) == permute_mask(int(own[m]),
                                                                            int(suits[b]))
    for b in idx:  # the renamed position's exact values are the original's
        mine = row == b
        got = solver.move_values(position_from_obs(seen[0][b]),
                                 ACTION_MAPS[suits[b], ids[mine]].tolist())
        assert np.allclose(got, values[mine])


def test_batches_mark_the_best_moves() -> None:
    data = Positions(obs=np.zeros((2, 216), np.float32), ids=np.array([0, 1, 2, 3, 4]),
                     values=np.array([1.0, 3.0, 3.0, -2.0, 0.0], np.float32),
                     own=np.zeros(5, np.int64), start=np.array([0, 3]), count=np.array([3, 2]))
    _, _, row, col, regret, width, _ = _batch(data, np.array([1, 0]))
    assert width == 3
    assert row.tolist() == [0, 0, 1, 1, 1] and col.tolist() == [0, 1, 0, 1, 2]
    assert regret.tolist() == [2.0, 0.0, 2.0, 0.0, 0.0]


def _policy_file(tmp_path: Path) -> Path:
    torch.manual_seed(1)
    net = PolicyNet()
    return save_atomic(policy_checkpoint(net, RULES.to_dict(), {}), tmp_path / "base.pt")


def _stage(*overrides: str) -> StageConfig:
    """The last_deal stage of the shipped recipe, with ``overrides`` (``SECTION.KEY=VALUE``,
    ``init_from=...``) set on that stage."""
    stages = load_recipe(RECIPE, [f"last_deal.{o}" for o in overrides]).stages
    return next(s for s in stages if s.name == "last_deal")


def _cfg(tmp_path: Path, *extra: str) -> StageConfig:
    return _stage(f"run.runs_dir={tmp_path / 'runs'}", f"init_from={_policy_file(tmp_path)}",
                  "rollouts.num_envs=64", "fit.decisions=1500", "fit.batch=128",
                  "last_deal.width=16", "last_deal.layers=1", "last_deal.heads=2",
                  "run.torch_threads=1", "evaluation.every_steps=0", *extra)


def test_a_run_fits_resumes_exports_and_plays_the_last_deal(tmp_path: Path) -> None:
    out = recipe.start(_cfg(tmp_path, "fit.epochs=1", "last_deal.regret_coef=0.5"),
                       progress=False, log=_quiet)
    run = Path(out["run_dir"])
    assert out["finished"] and (run / "checkpoints" / "final.pt").is_file()
    evals = (run / "evaluations.jsonl").read_text().splitlines()
    assert len(evals) == 1 and '"heldout_best_move_rate"' in evals[0]
    assert list((run / "tensorboard").iterdir())
    # one more epoch: resumed where the first ended, from its weights
    first = load_checkpoint(run / "checkpoints" / "final.pt")
    out = recipe.resume(run, ["fit.epochs=2"], progress=False, log=_quiet)
    ck = load_checkpoint(run / "checkpoints" / "final.pt", kind="training")
    assert out["finished"] and ck["counters"]["epoch"] == 2
    for where in (run, run / "checkpoints" / "final.pt"):  # the run, or its checkpoint
        with pytest.raises(ConfigError, match="'kind' cannot"):
            recipe.resume(where, ["kind=ppo"], progress=False, log=_quiet)
    lines: list[str] = []  # resuming a finished run does nothing, collects nothing
    assert recipe.resume(run, progress=False, log=lines.append)["finished"]
    assert not any(line.startswith("collect") for line in lines)
    assert ck["counters"]["wall_seconds"] > first["counters"]["wall_seconds"]
    assert not torch.equal(ck["last_deal"]["model"]["card_in.weight"],
                           first["last_deal"]["model"]["card_in.weight"])
    # the PPO network is the one it started from
    base = load_checkpoint(tmp_path / "base.pt")
    assert all(torch.equal(v, base["model"][k]) for k, v in ck["model"].items())
    shipped = export(run / "checkpoints" / "final.pt", tmp_path / "shipped.pt")
    agent = load_policy_agent(shipped)
    assert isinstance(agent, PolicyAgent) and agent.last_deal is not None
    scorer = build_last_deal(load_checkpoint(shipped)).numpy_scorer()
    one_view = load_policy_agent(shipped, suits="none")
    played = 0
    for s in last_deal_states({}, 30, seed=5):
        info = info_set(s, s.to_move)
        legal = np.asarray(info.legal_actions, np.int64)
        if len(legal) < 2:
            continue
        obs = encode_info(info)
        feats = action_inputs_np(obs, legal)
        zero = np.zeros(len(legal), np.int64)
        want = legal[np.argmax(scorer.scores(obs[None], feats, zero))]
        assert one_view.act(info) == want == one_view.act_batch([info])[0]
        # by default the scores are averaged over the 6 suit views
        want = legal[np.argmax(SuitAveraged(scorer).logits_flat(obs[None], legal, zero))]
        assert agent.act(info) == want == agent.act_batch([info])[0]
        played += 1
    assert played > 10
    # elsewhere the policy network plays, as without a scorer
    plain = load_policy_agent(tmp_path / "base.pt")
    s = new_match(RULES, seed=3)
    for _ in range(6):
        info = info_set(s, s.to_move)
        assert agent.act(info) == plain.act(info)
        apply(s, agent.act(info))


def test_the_ownership_head_trains_resumes_and_stays_out_of_the_policy(tmp_path: Path
                                                                       ) -> None:
    out = recipe.start(_cfg(tmp_path, "fit.epochs=1", "last_deal.ownership_coef=0.5"),
                       progress=False, log=_quiet)
    run = Path(out["run_dir"])
    first = load_checkpoint(run / "checkpoints" / "final.pt", kind="training")
    head = OwnershipHead(LastDealConfig()).state_dict()
    assert first["ownership_head"].keys() == head.keys()
    assert "ownership_head" not in load_checkpoint(out["policy"])
    off = ["fit.epochs=2", "last_deal.ownership_coef=0"]
    with pytest.raises(ConfigError, match="ownership_coef"):
        recipe.resume(run, off, progress=False, log=_quiet)
    with pytest.raises(ConfigError, match="cannot be turned off on --resume"):
        recipe.resume(run / "checkpoints" / "final.pt", off, progress=False, log=_quiet)
    out = recipe.resume(run, ["fit.epochs=2"], progress=False, log=_quiet)
    ck = load_checkpoint(run / "checkpoints" / "final.pt", kind="training")
    assert out["finished"] and ck["counters"]["epoch"] == 2
    assert not torch.equal(ck["ownership_head"]["card.weight"],
                           first["ownership_head"]["card.weight"])
    plain = recipe.start(_cfg(tmp_path, "fit.epochs=1", "last_deal.ownership_coef=0"),
                         progress=False, log=_quiet)
    assert "ownership_head" not in load_checkpoint(Path(plain["run_dir"]) / "checkpoints"
                                                   / "final.pt", kind="training")
    plain_run = Path(plain["run_dir"])
    with pytest.raises(ConfigError, match="ownership_coef"):
        recipe.resume(plain_run, ["last_deal.ownership_coef=1"], progress=False, log=_quiet)
    with pytest.raises(ConfigError, match="cannot be turned on on --resume"):
        recipe.resume(plain_run / "checkpoints" / "final.pt", ["last_deal.ownership_coef=1"],
                      progress=False, log=_quiet)


def test_move_outcomes_are_the_piles_the_engine_ends_with_on_the_best_line() -> None:
    """After each legal move, the engine plays on with the first best move of the
    solver's values for whoever is to move (read from that seat's observation); the
    mover's pile when the hand ends is the move's outcome."""
    for rules_options in VARIANTS[:3]:
        states = [s for s in last_deal_states(rules_options, 60, seed=8)
                  if len(s.legal_actions()) > 1]
        solver = EndgameSolver(states[0].rules)
        for s in states:
            mover = s.to_move
            legal = s.legal_actions()
            outcomes = solver.move_outcomes(
                position_from_obs(encode_info(info_set(s, mover))), legal)
            for a, outcome in zip(legal, outcomes, strict=True):
                t = s.copy()
                over = apply(t, a, deal_next=False).hand is not None
                while not over:
                    moves = t.legal_actions()
                    values = solver.move_values(
                        position_from_obs(encode_info(info_set(t, t.to_move))), moves)
                    over = apply(t, moves[int(np.argmax(values))],
                                 deal_next=False).hand is not None
                assert t.piles[mover % 2] == outcome


def test_the_ownership_loss_reads_each_card_in_plays_outcome() -> None:
    """Logits that are +20 exactly where a move's outcome gives the mover the card (and
    -20 elsewhere) cost almost nothing; flipped, they cost about 20 a card."""
    obs, ids, row, _ = _decisions(10, seed=3)
    feats = action_inputs_np(obs, ids, row)
    tok = tokens(obs, feats, row)
    rng = np.random.default_rng(0)
    own = rng.integers(0, 2, (len(ids), N_CARDS)).astype(np.float32)
    card = tok.card[row]
    right = np.where(card >= 0, own[np.arange(len(ids))[:, None], card] * 40 - 20, 0)
    assert float(ownership_loss(torch.tensor(right), own, row, tok)) < 1e-6
    assert float(ownership_loss(torch.tensor(-right), own, row, tok)) == pytest.approx(20,
                                                                                   abs=1e-3)


def test_a_stopped_run_resumes_at_its_minibatch(tmp_path: Path) -> None:
    cfg = _cfg(tmp_path, "fit.epochs=2")
    steps: list[int] = []
    real = last_deal_kind.LastDealStage.step

    def step_then_stop(self, data, idx):  # noqa: ANN001, ANN202
        steps.append(len(idx))
        if len(steps) == 3:
            import os
            import signal

            os.kill(os.getpid(), signal.SIGTERM)
        return real(self, data, idx)

    last_deal_kind.LastDealStage.step = step_then_stop
    try:
        out = recipe.start(cfg, progress=False, log=_quiet)
    finally:
        last_deal_kind.LastDealStage.step = real
    run = Path(out["run_dir"])
    assert not out["finished"] and "SIGTERM" in out["reason"]
    ck = load_checkpoint(run / "checkpoints" / "latest.pt", kind="training")
    assert (ck["counters"]["epoch"], ck["counters"]["step"]) == (0, 3)
    out = recipe.resume(run, progress=False, log=_quiet)
    assert out["finished"]
    assert load_checkpoint(run / "checkpoints" / "final.pt")["counters"]["epoch"] == 2


def test_the_attention_softmax_is_torchs_with_masked_slots_at_zero() -> None:
    x = torch.randn(6, 2, 5, 5, dtype=torch.float64)
    x[:, :, :, 3:] = float("-inf")  # padding slots, as the blocks mask them
    a = x.clone().requires_grad_()
    b = x.clone().requires_grad_()
    torch.testing.assert_close(_softmax(a), b.softmax(-1), rtol=0, atol=1e-12)
    assert float(_softmax(a).detach()[..., 3:].abs().max()) == 0.0
    w = torch.randn(6, 2, 5, 5, dtype=torch.float64)
    (_softmax(a) * w).sum().backward()
    (b.softmax(-1) * w).sum().backward()
    torch.testing.assert_close(a.grad, b.grad, rtol=0, atol=1e-12)


def test_length_buckets_hold_every_decision_once_and_pad_less() -> None:
    rng = np.random.default_rng(0)
    lengths = rng.integers(4, 16, 1000)
    order = rng.permutation(1000)
    batches = length_buckets(order, lengths[order], 64, 4, np.random.default_rng(1))
    assert len(batches) == math.ceil(1000 / 64)
    assert sorted(np.concatenate(batches).tolist()) == list(range(1000))
    plain = [order[a:a + 64] for a in range(0, 1000, 64)]
    pad = [sum(int(lengths[b].max() - lengths[b].sum() / len(b)) for b in bs)
           for bs in (batches, plain)]
    assert pad[0] < pad[1] / 2
    again = length_buckets(order, lengths[order], 64, 4, np.random.default_rng(1))
    assert all(np.array_equal(a, b) for a, b in zip(batches, again, strict=True))


def test_cards_in_play_counts_the_tokens_of_each_decision() -> None:
    obs, ids, row, _ = _decisions(20, 4)
    tok = tokens(obs, action_inputs_np(obs, ids, row), row)
    assert cards_in_play(obs).tolist() == (tok.card >= 0).sum(1).tolist()


def test_a_bucketed_run_stopped_and_resumed_equals_a_straight_one(tmp_path: Path) -> None:
    extra = ("fit.epochs=2", "last_deal.buckets=3")
    straight = recipe.start(_cfg(tmp_path / "a", *extra), progress=False, log=_quiet)
    seen: list[np.ndarray] = []
    real = last_deal_kind.LastDealStage.step

    def step_then_stop(self, data, idx):  # noqa: ANN001, ANN202
        seen.append(cards_in_play(data.obs[idx]))
        if len(seen) == 4:
            import os
            import signal

            os.kill(os.getpid(), signal.SIGTERM)
        return real(self, data, idx)

    last_deal_kind.LastDealStage.step = step_then_stop
    try:
        out = recipe.start(_cfg(tmp_path / "b", *extra), progress=False, log=_quiet)
    finally:
        last_deal_kind.LastDealStage.step = real
    assert not out["finished"]
    assert np.mean([s.max() - s.mean() for s in seen]) < 1.5  # little padding
    out = recipe.resume(Path(out["run_dir"]), progress=False, log=_quiet)
    assert out["finished"]
    a = load_checkpoint(Path(straight["policy"]))["last_deal"]["model"]
    b = load_checkpoint(Path(out["policy"]))["last_deal"]["model"]
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


@pytest.mark.parametrize(("extra", "message"), [
    (["rules.players=4"], "needs rules.players: 2"),
    (["init_from="], "needs 'init_from'"),
    (["last_deal.width=30"], "multiple of 'last_deal.heads'"),
    (["rollouts.backend=ray"], "runs with rollouts.backend: local"),
    (["last_deal.regret_coef=-1"], "'last_deal.regret_coef' = -1.0 is out of range"),
    (["last_deal.ownership_coef=-1"], "'last_deal.ownership_coef' = -1.0 is out of range"),
    (["last_deal.buckets=-1"], "'last_deal.buckets' = -1 is out of range"),
])
def test_bad_last_deal_configs_are_refused(extra: list[str], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        _stage(*extra)


def test_a_damaged_scorer_is_refused_with_the_file_named(tmp_path: Path) -> None:
    torch.manual_seed(2)
    ck = policy_checkpoint(PolicyNet(), RULES.to_dict(), {}, last_deal=LastDealNet())
    ck["last_deal"]["model"]["card_in.weight"] = torch.zeros(3, 3)
    path = save_atomic(ck, tmp_path / "bad.pt")
    with pytest.raises(CheckpointError, match=r"bad\.pt.*last-deal scorer.*size mismatch"):
        load_policy_agent(path)


def test_max_minutes_stops_and_saves(tmp_path: Path) -> None:
    out = recipe.start(_cfg(tmp_path, "run.max_minutes=0.00001"), progress=False, log=_quiet)
    assert not out["finished"] and out["reason"].startswith("run.max_minutes")
    run = Path(out["run_dir"])
    ck = load_checkpoint(run / "checkpoints" / "latest.pt", kind="training")
    assert ck["counters"]["epoch"] == 0 and "last_deal" in ck
    # stopped before a minibatch: the policy file holds no untrained scorer
    assert "last_deal" not in load_checkpoint(run / "policy.pt")
    assert not (run / "collected.npz").exists()  # stopped while collecting: nothing kept


def test_a_stop_while_fitting_keeps_the_solved_decisions_for_the_resume(tmp_path: Path
                                                                        ) -> None:
    cfg = _cfg(tmp_path, "fit.epochs=2")
    out = recipe.start(cfg, progress=False, log=_quiet, stop_after_updates=3)
    run = Path(out["run_dir"])
    kept = run / "collected.npz"
    assert not out["finished"] and kept.is_file()
    # what is kept is what collecting again gives (the collection is seeded)
    policy = load_policy_agent(tmp_path / "base.pt").net
    again, steps = last_deal_kind.collect_positions(policy, cfg, _quiet)
    with np.load(kept) as f:
        assert int(f["env_steps"]) == steps
        for name in ("obs", "start", "count", "ids", "values", "own"):
            assert np.array_equal(f[name], getattr(again, name)), name
    lines: list[str] = []
    out = recipe.resume(run, progress=False, log=lines.append)
    assert out["finished"] and not kept.exists()  # the fit is done: the file goes
    assert any(line.startswith("read back the kept collection") for line in lines)
    assert not any(line.startswith("collecting") for line in lines)
    ck = load_checkpoint(run / "checkpoints" / "final.pt", kind="training")
    assert ck["counters"]["epoch"] == 2 and ck["counters"]["env_steps"] == steps


def test_a_collection_that_cannot_be_kept_is_said_and_the_fit_goes_on(tmp_path: Path,
                                                                      monkeypatch) -> None:
    def full(*_: object, **__: object) -> None:
        raise FileProblem("no space left on device")
    monkeypatch.setattr("scopa_train.stages.fitting.write_atomic", full)
    lines: list[str] = []
    out = recipe.start(_cfg(tmp_path, "fit.epochs=1"), progress=False, log=lines.append)
    assert out["finished"] and not (Path(out["run_dir"]) / "collected.npz").exists()
    assert any(line.startswith("could not keep the collection (no space left")
               for line in lines)


def test_a_damaged_kept_collection_is_collected_again(tmp_path: Path) -> None:
    out = recipe.start(_cfg(tmp_path, "fit.epochs=1"), progress=False, log=_quiet,
                       stop_after_updates=2)
    run = Path(out["run_dir"])
    (run / "collected.npz").write_bytes(b"not a zip file")
    lines: list[str] = []
    assert recipe.resume(run, progress=False, log=lines.append)["finished"]
    assert any(line.startswith("cannot read the kept collection") for line in lines)
    assert any(line.startswith("collecting") for line in lines)


def test_agents_share_loaded_weights_until_the_file_changes(tmp_path: Path) -> None:
    path = _policy_file(tmp_path)
    a, b = load_policy_agent(path), load_policy_agent(path)
    assert a.net is b.net and a is not b  # fresh agents, one copy of the weights
    torch.manual_seed(9)
    save_atomic(policy_checkpoint(PolicyNet(), RULES.to_dict(), {}), path)
    c = load_policy_agent(path)
    assert c.net is not a.net
    assert not torch.equal(c.net.state_dict()["value_head.weight"],
                           a.net.state_dict()["value_head.weight"])


def test_a_missing_init_from_is_refused_before_the_run_exists(tmp_path: Path) -> None:
    cfg = _stage(f"run.runs_dir={tmp_path / 'runs'}", f"init_from={tmp_path / 'nope.pt'}")
    with pytest.raises(CheckpointError, match=r"nope\.pt' does not exist"):
        recipe.start(cfg, progress=False, log=_quiet)
    assert not (tmp_path / "runs").exists()
