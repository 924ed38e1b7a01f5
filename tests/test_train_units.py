"""Training kit pieces that need no rollouts: config validation, the network's action
masking and features, checkpoint errors, the learned agent."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
import torch

from scopa_env.cards import card_id, mask_of
from scopa_env.game import apply, new_match
from scopa_env.moves import ACE_ALL_BASE, action_id
from scopa_env.observation import OBS_DIM, TABLE, info_set
from scopa_policy.checkpoint import (
    CheckpointError,
    build_model,
    load_checkpoint,
    policy_checkpoint,
    save_atomic,
)
from scopa_policy.features import ACTION_DIM, action_inputs
from scopa_policy.network import NetConfig, PolicyNet
from scopa_train.config import PREVIOUS, ConfigError, StageConfig, load_config, load_recipe
from scopa_train.device import threads, torch_device

CONFIGS = Path(__file__).resolve().parent.parent / "configs"
TINY = NetConfig(hidden_size=16, hidden_layers=1, action_hidden=8)


# -- config -----------------------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(p.stem for p in CONFIGS.glob("*.yaml")))
def test_shipped_configs_load(name: str) -> None:
    recipe = load_recipe(CONFIGS / f"{name}.yaml")
    assert recipe.run.name == name
    for stage in recipe.stages:
        stage.make_rules()
        assert stage.run.max_minutes == 0 or name == "quick"  # shipped recipes: no limit


def test_the_shipped_recipe_lists_six_stages_each_from_the_one_before() -> None:
    recipe = load_recipe(CONFIGS / "recipe.yaml")
    assert [(s.name, s.kind) for s in recipe.stages] == [
        ("ppo", "ppo"), ("finetune", "ppo"), ("last_deal", "last_deal"),
        ("suit_distill", "distill"), ("search_distill", "distill"),
        ("expert_iteration", "distill")]
    first, *rest = recipe.stages
    assert first.init_from == "" and all(s.init_from == PREVIOUS for s in rest)
    # sections merge key by key over the shared ones; opponents are replaced whole
    finetune, last_deal = rest[0], rest[1]
    assert finetune.ppo.learning_rate == 2e-4 and finetune.ppo.num_minibatches == 16
    assert finetune.ppo.endgame_coef == 1.0 and first.ppo.endgame_coef == 0.0
    assert last_deal.opponents == {"self": 0.5, "greedy": 0.25, "expert": 0.25}
    assert last_deal.run.seed == 3 and last_deal.run.device == "cpu"
    assert last_deal.evaluation.hands == 200 and last_deal.evaluation.best_metric == "pimc"


def test_a_stage_kind_is_declared_once_and_its_earlier_name_still_read(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The kinds, the sections each reads and the validation come from one registry
    (``scopa_train.stages``: one line a kind, the kind's module declares the rest); a
    config or checkpoint naming a kind by its earlier name (``suit_distill``) is read as
    the kind it became, said in one line, and is still the same config (its digest finds
    the run it started)."""
    from scopa_train.config import config_digest, section_kinds, sections
    from scopa_train.stages import BUILTIN, RENAMED, StageKind, kinds

    assert list(kinds()) == list(BUILTIN) == ["ppo", "dmc", "last_deal", "distill"]
    assert RENAMED == {"suit_distill": "distill"}
    assert section_kinds()["fit"] == ("last_deal", "distill")
    assert section_kinds()["checkpoints"] == ("ppo", "dmc")
    assert list(sections()) == ["run", "rules", "rollouts", "network", "ppo", "dmc", "fit",
                                "last_deal", "distill", "evaluation", "checkpoints"]
    for name, kind in kinds().items():  # each kind's module holds its sections and stage
        assert isinstance(kind, StageKind) and kind.name == name
        assert BUILTIN[name] == f"scopa_train.stages.{name}:KIND"
        assert all(c.__module__.startswith("scopa_train.stages.") for c in kind.sections.values())
    text = (CONFIGS / "expert_iteration.yaml").read_text()
    assert "kind: distill" in text
    old = tmp_path / "old.yaml"
    old.write_text(text.replace("kind: distill", "kind: suit_distill"))
    capsys.readouterr()
    recipe = load_recipe(old)
    lines = capsys.readouterr().err.splitlines()
    assert [s.kind for s in recipe.stages] == ["distill"] and len(lines) == 1
    assert "'suit_distill' is the earlier name of 'distill'" in lines[0]
    assert recipe.digest() == load_recipe(CONFIGS / "expert_iteration.yaml").digest()
    assert config_digest({"kind": "distill"}) == config_digest({"kind": "suit_distill"})


def test_overrides_are_typed() -> None:
    cfg = load_config(CONFIGS / "smoke.yaml", ["ppo.learning_rate=1e-3", "rollouts.num_envs=8",
                                               "opponents.greedy=0.5", "ppo.clip_vloss=false",
                                               "evaluation.opponents=[random, greedy]",
                                               "run.name=123"])
    assert cfg.ppo.learning_rate == 1e-3 and cfg.rollouts.num_envs == 8
    assert cfg.ppo.clip_vloss is False and cfg.run.name == "123"
    assert cfg.opponents["greedy"] == 0.5 and cfg.evaluation.opponents == ["random", "greedy"]


def test_overrides_reach_one_stage_of_a_recipe() -> None:
    recipe = load_recipe(CONFIGS / "recipe.yaml", ["finetune.ppo.gamma=0.5",
                                                   "evaluation.hands=100"])
    by_name = {s.name: s for s in recipe.stages}
    assert by_name["finetune"].ppo.gamma == 0.5 and by_name["ppo"].ppo.gamma == 1.0
    assert all(s.evaluation.hands == 100 for s in recipe.stages)
    # a top-level override is under each stage's own settings; one that no stage would
    # see is refused
    with pytest.raises(ConfigError, match=r"--set fit.epochs=2 changes no stage: every "
                       r"stage that uses it \(last_deal, suit_distill, search_distill, "
                       r"expert_iteration\) "
                       r"sets fit.epochs itself; give STAGE.fit.epochs=VALUE"):
        load_recipe(CONFIGS / "recipe.yaml", ["fit.epochs=2"])
    # a stage named like a section: SECTION.KEY is the section, STAGE.SECTION.KEY the stage
    recipe = load_recipe(CONFIGS / "recipe.yaml", ["ppo.ppo.gamma=0.5", "ppo.vf_coef=0.25",
                                                   "last_deal.regret_coef=0.5",
                                                   "last_deal.last_deal.heads=8"])
    by_name = {s.name: s for s in recipe.stages}
    assert by_name["ppo"].ppo.gamma == 0.5 and by_name["finetune"].ppo.gamma == 1.0
    assert all(s.ppo.vf_coef == 0.25 for s in recipe.stages)
    assert by_name["last_deal"].last_deal.regret_coef == 0.5
    assert by_name["last_deal"].last_deal.heads == 8 and by_name["ppo"].last_deal.heads == 4
    assert load_config(CONFIGS / "recipe.yaml", stage="finetune").ppo.endgame_coef == 1.0
    with pytest.raises(ConfigError, match="has no stage 'nope'; its stages: ppo, finetune"):
        load_config(CONFIGS / "recipe.yaml", stage="nope")


@pytest.mark.parametrize("overrides, words", [
    (["lr=0.1"], ["unknown config key 'lr'", "sections:", "ppo"]),
    (["ppo.lr=0.1"], ["unknown config key 'ppo.lr'", "learning_rate"]),
    (["rollouts.num_envs=many"], ["'rollouts.num_envs'", "integer"]),
    (["rollouts.num_envs=2.5"], ["'rollouts.num_envs'", "integer"]),
    (["ppo.learning_rate=0"], ["'ppo.learning_rate'", "out of range", "(0, 1]"]),
    (["ppo.gamma=1.5"], ["'ppo.gamma'", "out of range", "[0, 1]"]),
    (["rollouts.episode=forever"], ["'rollouts.episode'", "'hand'", "'match'"]),
    (["rules.players=3"], ["'rules.players'", "2, 4"]),
    (["opponents.wizard=1"], ["'opponents'", "wizard", "self"]),
    (["opponents={self: 0}"], ["'opponents'", "positive"]),
    (["rules.name=scopone"], ["rules", "4 players only"]),
    (["rules.options={deck: 52}"], ["'rules.options'", "deck"]),
    (["ppo.clip_vloss=maybe"], ["'ppo.clip_vloss'", "true or false"]),
    (["evaluation.best_metric=pimc"], ["'evaluation.best_metric'", "evaluation.opponents"]),
    (["kind=magic"], ["'kind'", "'ppo'", "'last_deal'"]),
    (["kind=last_deal"], ["'last_deal'", "init_from"]),
    (["ppo"], ["key=value"]),
    (["ppo=3"], ["ppo.KEY=VALUE"]),
    (["oops"], ["key=value"]),
])
def test_bad_overrides_name_the_key(overrides: list[str], words: list[str]) -> None:
    with pytest.raises(ConfigError) as e:
        load_config(CONFIGS / "smoke.yaml", overrides)
    for w in words:
        assert w in str(e.value), (w, str(e.value))


def test_old_flat_keys_get_their_new_place(tmp_path: Path) -> None:
    p = tmp_path / "old.yaml"
    p.write_text("learning_rate: 0.001\nnum_envs: 8\nrun: {seed: 3}\nalgo: ppo\n"
                 "eval_workers: 2\n")
    with pytest.raises(ConfigError) as e:
        load_config(p)
    lines = str(e.value).splitlines()
    assert len(lines) == 4, lines
    assert all(line.startswith(f"{p}: config key ") for line in lines)
    assert "'learning_rate' is from the old flat layout; it is now 'ppo.learning_rate'" \
        in lines[0]
    assert "'rollouts.num_envs'" in lines[1] and "'kind'" in lines[2]
    assert "removed" in lines[3]
    p.write_text("rules: scopa\nname: mine\n")
    with pytest.raises(ConfigError) as e:
        load_config(p)
    assert str(e.value).splitlines() == [
        f"{p}: config key 'rules' is from the old flat layout; it is now 'rules.name'",
        f"{p}: config key 'name' is from the old flat layout; it is now 'run.name'"]
    with pytest.raises(ConfigError, match="'total_env_steps' is from the old flat layout; it "
                                          "is now 'ppo.total_env_steps'"):
        load_config(CONFIGS / "smoke.yaml", ["total_env_steps=5"])


def test_bad_recipes(tmp_path: Path) -> None:
    p = tmp_path / "r.yaml"
    for text, match in [
        ("stages: []\n", "non-empty list"),
        ("stages: [{kind: ppo}]\n", "'name' and 'kind'"),
        ("stages: [{name: a, kind: ppo}, {name: a, kind: ppo}]\n", "two stages have this name"),
        ("kind: ppo\nstages: [{name: a, kind: ppo}]\n", "belongs to each stage"),
        ("stages: [{name: a, kind: ppo, ppo: {gamma: 2}}]\n",
         r"stage 'a': config key 'ppo.gamma' = 2.0 is out of range"),
        ("stages: [{name: a, kind: last_deal}]\n", r"stage 'a'.*needs 'init_from'"),
        ("stages: [{name: ../x, kind: ppo}]\n", "plain folder name"),
        ("init_from: 3\n", "config key 'init_from' must be a string, got 3"),
    ]:
        p.write_text(text)
        with pytest.raises(ConfigError, match=match):
            load_recipe(p)
    p.write_text("stages: [{name: a, kind: ppo}]\n")
    with pytest.raises(ConfigError, match="lists stages; this command trains one stage"):
        load_config(p)
    p.write_text("ppo: 3\n")
    with pytest.raises(ConfigError, match="config section 'ppo' must be a mapping, got 3"):
        load_config(p, ["ppo.gamma=0.5"])


def test_bad_yaml_files(tmp_path: Path) -> None:
    p = tmp_path / "c.yaml"
    p.write_text("rollouts: {num_envs: 4}\nwarp_speed: 9\n")
    with pytest.raises(ConfigError, match="unknown config key.*'warp_speed'"):
        load_config(p)
    p.write_text("rollouts: {num_envs: 4, warp: 9}\n")
    with pytest.raises(ConfigError, match="unknown config key.*rollouts.warp.*num_envs"):
        load_config(p)
    p.write_text("rollouts: 4\n")
    with pytest.raises(ConfigError, match="section 'rollouts' must be a mapping"):
        load_config(p)
    p.write_text("- a\n- b\n")
    with pytest.raises(ConfigError, match="mapping"):
        load_config(p)
    p.write_text("rollouts: [1\n")
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_config(p)
    with pytest.raises(ConfigError, match="does not exist"):
        load_config(tmp_path / "missing.yaml")
    with pytest.raises(ConfigError, match="'ppo.total_env_steps'.*out of range"):
        StageConfig(ppo={"total_env_steps": -1})


def test_cli_reports_config_errors(capsys: pytest.CaptureFixture[str]) -> None:
    import train

    assert train.main(["--config", str(CONFIGS / "smoke.yaml"), "--set", "ppo.ent_coef=-1"]) == 2
    err = capsys.readouterr().err
    assert "train: error:" in err and "'ppo.ent_coef'" in err and "out of range" in err
    assert train.main(["--help-config"]) == 0
    out = capsys.readouterr().out
    for section in ("run:", "rules:", "rollouts:", "ppo:", "fit:", "last_deal:", "distill:",
                    "evaluation:", "checkpoints:"):
        assert f"\n{section}\n" in out, section
    assert "  learning_rate (float, default 0.0003;" in out


# -- network ----------------------------------------------------------------------------
def _ids_batch() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, list[list[int]]]:
    legal = []
    obs = []
    for seed in range(6):
        s = new_match("scopa", seed=seed)
        for _ in range(seed * 3):
            apply(s, s.legal_actions()[0])
        info = info_set(s, s.to_move)
        from scopa_env.observation import encode_info

        obs.append(encode_info(info))
        legal.append(list(info.legal_actions))
    width = max(map(len, legal)) + 2  # extra padding columns
    ids = torch.zeros((len(legal), width), dtype=torch.int64)
    valid = torch.zeros((len(legal), width), dtype=torch.bool)
    for r, row in enumerate(legal):
        ids[r, :len(row)] = torch.tensor(row)
        valid[r, :len(row)] = True
    return torch.from_numpy(np.stack(obs)), ids, valid, legal


def test_policy_is_a_softmax_over_legal_ids_only() -> None:
    torch.manual_seed(0)
    net = PolicyNet(TINY)
    obs, ids, valid, legal = _ids_batch()
    logits, value = net(obs, ids, valid)
    assert logits.shape == ids.shape and value.shape == (len(legal),)
    probs = torch.softmax(logits, -1)
    assert torch.all(probs[~valid] == 0)
    assert torch.allclose(probs.sum(-1), torch.ones(len(legal)))
    # padding content does not change the legal logits
    ids2 = ids.clone()
    ids2[~valid] = 12345
    logits2, _ = net(obs, ids2, valid)
    assert torch.allclose(logits[valid], logits2[valid])


def test_action_features_against_the_table() -> None:
    obs = torch.zeros((1, OBS_DIM))
    table = [card_id(c) for c in ("3c", "4b", "5s")]
    obs[0, TABLE.start + torch.tensor(table)] = 1
    place = action_id(card_id("9d"))
    take7 = action_id(card_id("7d"), mask_of([card_id("3c"), card_id("4b")]))
    ace_all = ACE_ALL_BASE + 0  # ace of coins takes the whole table
    f = action_inputs(obs, torch.tensor([[place, take7, ace_all]]))[0]
    assert f.shape == (3, ACTION_DIM)
    capt, after = f[:, 40:80], f[:, 80:120]
    assert capt[0].sum() == 0 and after[0].sum() == 4  # placed: 4 cards left
    assert capt[1].sum() == 2 and after[1].sum() == 1  # 5s left
    assert capt[2].sum() == 3 and after[2].sum() == 0  # ace takes all: capture = table
    is_cap, scopa, takes_all = f[:, 120], f[:, 121], f[:, 122]
    assert is_cap.tolist() == [0, 1, 1] and takes_all.tolist() == [0, 0, 1]
    assert scopa.tolist() == [0, 0, 0]  # ace-takes-all is never a scopa
    settebello = f[:, 125]
    assert settebello.tolist() == [0, 1, 0]
    reply = f[:, -41:]  # what a card of each rank could do on the table left
    assert reply[0, :10].tolist() == [0, 0, 1, 1, 1, 0, 1, 1, 1, 0]  # 3+4+5 left: 3,4,5,7,8,9 (+12)
    assert reply[2].sum() == 0  # empty table: no reply captures


# -- checkpoints ------------------------------------------------------------------------
def _policy_file(tmp_path: Path) -> Path:
    torch.manual_seed(0)
    net = PolicyNet(TINY)
    return save_atomic(policy_checkpoint(net, {"name": "scopa"}, {"counters": {}}),
                       tmp_path / "p.pt")


def test_checkpoint_round_trip_weights_only(tmp_path: Path) -> None:
    path = _policy_file(tmp_path)
    raw = torch.load(path, weights_only=True)
    assert raw["format"] == "scopa-ppo" and raw["kind"] == "policy"
    net = build_model(load_checkpoint(path))
    assert net.cfg == TINY
    assert not list(tmp_path.glob("*.tmp"))  # the temp file was renamed


def test_corrupt_and_incompatible_checkpoints(tmp_path: Path) -> None:
    good = _policy_file(tmp_path)
    junk = tmp_path / "junk.pt"
    junk.write_bytes(os.urandom(2000))
    with pytest.raises(CheckpointError, match="corrupt or not a torch checkpoint"):
        load_checkpoint(junk)
    cut = tmp_path / "cut.pt"
    cut.write_bytes(good.read_bytes()[:1500])
    with pytest.raises(CheckpointError, match="corrupt"):
        load_checkpoint(cut)
    other = tmp_path / "other.pt"
    torch.save({"state_dict": {}}, other)
    with pytest.raises(CheckpointError, match="not a scopa PPO checkpoint"):
        load_checkpoint(other)
    ck = torch.load(good, weights_only=True)
    ck["version"] = 99
    torch.save(ck, tmp_path / "future.pt")
    with pytest.raises(CheckpointError, match="version 99"):
        load_checkpoint(tmp_path / "future.pt")
    ck["version"] = 1
    ck["net"] = {"hidden_size": 32, "hidden_layers": 1, "action_hidden": 8}
    torch.save(ck, tmp_path / "shape.pt")
    with pytest.raises(CheckpointError, match="does not fit this network: size mismatch"):
        build_model(load_checkpoint(tmp_path / "shape.pt"))
    ck["net"] = {**TINY.to_dict(), "action_dim": 163}
    torch.save(ck, tmp_path / "features.pt")
    with pytest.raises(CheckpointError, match="trained with 163 move features"):
        build_model(load_checkpoint(tmp_path / "features.pt"))
    with pytest.raises(CheckpointError, match="cannot resume training"):
        load_checkpoint(good, kind="training")
    with pytest.raises(CheckpointError, match="does not exist"):
        load_checkpoint(tmp_path / "nope.pt")


def test_resume_cli_reports_a_corrupt_checkpoint(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    import train

    junk = tmp_path / "junk.pt"
    junk.write_bytes(b"not a checkpoint")
    assert train.main(["--resume", str(junk)]) == 2
    assert "corrupt" in capsys.readouterr().err


# -- the learned agent ------------------------------------------------------------------
def test_policy_agent_plays_legal_moves(tmp_path: Path) -> None:
    from scopa_policy.agent import load_policy_agent

    agent = load_policy_agent(_policy_file(tmp_path), seed=0)
    sampler = load_policy_agent(tmp_path / "p.pt", seed=0, sample=True)
    for rules, players in (("scopa", 2), ("scopa", 4), ("asso_piglia_tutto", 2)):
        s = new_match(rules, seed=3, players=players)
        infos = []
        while not s.done and len(infos) < 60:
            info = info_set(s, s.to_move)
            infos.append(info)
            a = agent.act(info)
            assert a in info.legal_actions
            assert sampler.act(info) in info.legal_actions
            apply(s, a)
        assert agent.act_batch(infos) == [agent.act(i) for i in infos]


# -- flat move batches and GAE ------------------------------------------------------------
def test_flat_moves_score_like_the_padded_forward() -> None:
    """``forward_moves`` on a rollout's flat store (any subset of decisions, gathered by
    ``Candidates.gather``) gives the padded forward's logits and values."""
    from scopa_policy.features import Candidates

    torch.manual_seed(0)
    net = PolicyNet(TINY)
    obs, ids, valid, legal = _ids_batch()
    padded_logits, padded_value = net(obs, ids, valid)
    flat = Candidates.from_padded(obs.numpy(), ids.numpy(), valid.numpy())
    count = valid.sum(1)
    start = torch.cumsum(count, 0) - count
    pick = torch.tensor([4, 0, 2])
    cand = Candidates.gather(flat.feats, start[pick], count[pick])
    logits, value = net.forward_moves(obs[pick], cand)
    assert torch.allclose(value, padded_value[pick])
    for r, b in enumerate(pick.tolist()):
        n = len(legal[b])
        assert torch.allclose(logits[r, :n], padded_logits[b, :n], atol=1e-6)
        assert (logits[r, n:] <= -1e8).all()


def _gae_reference(rewards, dones, nxt, next_value, values, gamma, lam):
    adv = np.zeros(len(values))
    for i in range(len(values) - 1, -1, -1):  # a transition by transition loop
        nonterminal = 0.0 if dones[i] else 1.0
        delta = rewards[i] + gamma * nonterminal * next_value[i] - values[i]
        later = adv[nxt[i]] if nxt[i] >= 0 else 0.0
        adv[i] = delta + gamma * lam * nonterminal * later
    return adv


def test_vectorised_gae_equals_the_transition_loop() -> None:
    from scopa_policy.features import Candidates
    from scopa_train.rollout import _Store

    rng = np.random.default_rng(3)
    per_step, steps = 6, 9
    store = _Store(per_step * steps, 4)
    for _ in range(steps):
        k = int(rng.integers(1, per_step + 1))
        cand = Candidates(torch.zeros((k, 2)), torch.arange(k), torch.zeros(k, dtype=torch.long),
                          1)
        store.add(rng.random((k, 4)).astype(np.float32), cand, np.zeros(k, np.int64),
                  np.zeros(k, np.float32), rng.normal(size=k).astype(np.float32))
        store.end_step()
    n = store.n
    ends = np.array(store.step_ends)
    step_of = np.searchsorted(ends, np.arange(n), side="right")
    for i in range(n):  # a successor at a later step, or none
        later = np.flatnonzero(step_of > step_of[i])
        if len(later) and rng.random() < 0.7:
            store.next_idx[i] = int(rng.choice(later))
    store.rewards[:n] = rng.normal(size=n)
    store.dones[:n] = rng.random(n) < 0.2
    store.next_value[:n] = rng.normal(size=n)
    for gamma, lam in ((1.0, 0.95), (0.9, 1.0), (0.99, 0.0)):
        batch = store.finish(gamma, lam)
        ref = _gae_reference(store.rewards[:n], store.dones[:n], store.next_idx[:n],
                             store.next_value[:n], store.values[:n].astype(np.float64),
                             gamma, lam)
        assert np.allclose(batch.advantages.numpy(), ref, atol=1e-5)
        assert np.allclose(batch.returns.numpy(), ref + store.values[:n], atol=1e-5)


# -- device ---------------------------------------------------------------------------------
def test_device_auto_is_the_cpu_without_a_gpu(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert torch_device(load_config(CONFIGS / "smoke.yaml")) == torch.device("cpu")
    cfg = load_config(CONFIGS / "smoke.yaml", ["run.device=cpu"])
    assert torch_device(cfg) == torch.device("cpu")


def test_device_cuda_without_a_gpu_is_a_config_error(monkeypatch: pytest.MonkeyPatch,
                                                      tmp_path: Path, capsys) -> None:
    from scopa_train.cli import main

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    cfg = load_config(CONFIGS / "smoke.yaml", ["run.device=cuda"])
    with pytest.raises(ConfigError, match="'run.device' is 'cuda' but torch sees no CUDA GPU"):
        torch_device(cfg)
    code = main(["--config", str(CONFIGS / "smoke.yaml"), "--set", "run.device=cuda",
                 "--set", f"run.runs_dir={tmp_path}", "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2 and "device" in err and "Traceback" not in err
    assert not list(tmp_path.iterdir())  # no empty run directory left behind
    with pytest.raises(ConfigError, match="'run.device' must be one of"):
        load_config(CONFIGS / "smoke.yaml", ["run.device=tpu"])


def test_ray_missing_is_reported_after_the_configs_own_contradictions(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A config that cannot run with Ray at all says so whether Ray is installed or not;
    a config that could says what to install."""
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "ray" else real(name, *a))
    with pytest.raises(ConfigError, match="'distill' runs with rollouts.backend: local"):
        load_recipe(CONFIGS / "recipe.yaml", ["suit_distill.rollouts.backend=ray"])
    with pytest.raises(ConfigError, match=r"Ray is not installed: pip install -e \.\[ray\]"):
        load_config(CONFIGS / "smoke.yaml", ["rollouts.backend=ray", "rollouts.ray_workers=2"])


def test_torch_threads_zero_means_every_core() -> None:
    cfg = load_config(CONFIGS / "smoke.yaml", ["run.torch_threads=0"])
    assert threads(cfg) == len(os.sched_getaffinity(0))
    assert threads(load_config(CONFIGS / "smoke.yaml", ["run.torch_threads=3"])) == 3


@pytest.mark.parametrize("user, policy, spin", [
    ({}, "PASSIVE", "10000"),  # the commands' default: a short spin, then sleep
    ({"OMP_WAIT_POLICY": "ACTIVE"}, "ACTIVE", None),  # the user's choice is left alone
    ({"GOMP_SPINCOUNT": "500"}, "PASSIVE", "500"),
])
@pytest.mark.parametrize("entry", ["scopa_cli.main(['verify', 'no-such-file.jsonl'])",
                                   "scopa_train.cli.main(['--list-configs'])"])
def test_thread_wait_policy_set_where_a_process_starts(user: dict[str, str], policy: str,
                                                       spin: str | None, entry: str) -> None:
    """Importing the kit's packages sets no environment variable; the commands set the
    thread wait policy when they start, before torch loads."""
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k not in (
        "OMP_WAIT_POLICY", "GOMP_SPINCOUNT", "PYGAME_HIDE_SUPPORT_PROMPT", "SDL_AUDIODRIVER")}
    code = ("import os, sys, gymnasium, pettingzoo; "  # these two set PYGAME_* and SDL_* themselves
            "before = dict(os.environ); "
            "import scopa_env, agents, scopa_policy, scopa_train, scopa_train.cli, scopa_web, "
            "scopa_cli; "
            "assert dict(os.environ) == before, 'importing the kit set the environment'; "
            f"assert 'torch' not in sys.modules; {entry}; "
            "print(os.environ.get('OMP_WAIT_POLICY'), os.environ.get('GOMP_SPINCOUNT'))")
    out = subprocess.run([sys.executable, "-c", code], env={**env, **user}, text=True,
                         capture_output=True, check=True,
                         cwd=Path(__file__).resolve().parent.parent)
    assert out.stdout.split()[-2:] == [policy, str(spin)]


def test_loading_skips_the_initialisation_it_overwrites(tmp_path: Path) -> None:
    """``build_model`` makes the network without initialising it (the weights are
    loaded next): the same weights, and torch's RNG is not drawn from."""
    torch.manual_seed(0)
    net = PolicyNet(TINY)
    path = save_atomic(policy_checkpoint(net, {}, {}), tmp_path / "p.pt")
    state = torch.get_rng_state()
    loaded = build_model(load_checkpoint(path))
    assert torch.equal(state, torch.get_rng_state())
    for k, v in net.state_dict().items():
        assert torch.equal(v, loaded.state_dict()[k]), k


def test_the_learners_fast_paths_give_the_same_weights_bit_for_bit(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The PPO update's rows copied by numpy (``take_rows``) and the stage's multi-tensor
    Adam leave exactly the weights that torch's indexing and its per-tensor Adam leave."""
    import copy

    from scopa_policy import features
    from scopa_train.framework import make_run_dir
    from scopa_train.stages import ppo
    from scopa_train.stages.ppo import PPOStage

    cfg = load_config(CONFIGS / "smoke.yaml", [f"run.runs_dir={tmp_path}"])
    stage = PPOStage(cfg, make_run_dir(cfg), progress=False, log=lambda _: None)
    n = cfg.rollouts.num_envs
    batch, _ = stage.collector.collect(stage.net, None, ["self"] * n, np.arange(n) % 2,
                                       stage.steps_per_rollout, reset_seed=1, agent_seed=1,
                                       gamma=1.0, lam=0.95)
    start = copy.deepcopy(stage.net.state_dict())
    p = cfg.ppo

    def update(optimizer: torch.optim.Optimizer) -> dict[str, torch.Tensor]:
        ppo.ppo_update(stage.net, optimizer, batch, np.random.default_rng(0), epochs=2,
                       num_minibatches=2, clip_coef=p.clip_coef, clip_vloss=p.clip_vloss,
                       ent_coef=p.ent_coef, vf_coef=p.vf_coef, max_grad_norm=p.max_grad_norm,
                       norm_adv=p.norm_adv, target_kl=0.0)
        return copy.deepcopy(stage.net.state_dict())

    fast = update(stage.optimizer)
    assert stage.optimizer.defaults["foreach"] is True
    stage.net.load_state_dict(start)
    monkeypatch.setattr(ppo, "take_rows", lambda t, idx: t[idx])
    monkeypatch.setattr(features, "take_rows", lambda t, idx: t[idx])
    reference = update(torch.optim.Adam(stage.net.parameters(), lr=p.learning_rate, eps=1e-5,
                                        foreach=False))
    assert fast.keys() == reference.keys()
    assert all(torch.equal(fast[k], reference[k]) for k in fast)
    assert not torch.equal(fast["value_head.weight"], start["value_head.weight"])


def test_the_progress_bar_is_named_for_the_stage_and_times_a_fit_from_its_start(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The bar carries the stage's name (``search_distill``, not its class's tag), and a
    fitting stage's time left counts from its first epoch, not from the start of the
    collection before it (which made it say ten hours for a minute's fit)."""
    import io

    from tqdm import tqdm

    from scopa_train.framework import make_run_dir
    from scopa_train.stages.ppo import PPOStage

    cfg = load_config(CONFIGS / "smoke.yaml", [f"run.runs_dir={tmp_path}",
                                               "run.name=my_stage"])
    stage = PPOStage(cfg, make_run_dir(cfg), progress=True, log=print)
    stage.train()
    assert "my_stage: 100%" in capsys.readouterr().err

    stage.bar = tqdm(total=10, initial=4, file=io.StringIO(), smoothing=0.0)
    stage.bar.start_t -= 600.0  # ten minutes of collecting
    stage.restart_progress(40)
    stage.bar.update(6)
    meter = stage.bar.format_dict
    assert (meter["n"], meter["total"], meter["initial"]) == (10, 40, 4)
    assert meter["elapsed"] < 600.0  # the collection's minutes are not in the fit's rate
    stage.bar.close()
