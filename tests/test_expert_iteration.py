"""Expert iteration (issue 39, item 2): the network's search scores decisions
(``SearchAgent.scores_batch``: NaN where it leaves the call to the network), a checkpoint
searches as ``ckpt:PATH,search=on``, and the suit-distillation stage learns from its own
network's search (``distill.search: self:search=on,...``)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import torch

from scopa_env.observation import info_set
from scopa_env.rules import make_rules
from scopa_policy.agent import load_policy_agent
from scopa_policy.checkpoint import load_checkpoint, policy_checkpoint, save_atomic
from scopa_policy.last_deal_net import LastDealNet
from scopa_policy.modes import SearchParams
from scopa_policy.network import PolicyNet
from scopa_policy.search import SearchAgent
from scopa_policy.specs import CHECKPOINT, parse_checkpoint
from scopa_train import recipe
from scopa_train.config import ConfigError, load_recipe
from scopa_train.search_labels import is_self, search_values, self_spec
from scopa_train.stages.distill import filled, search_regret
from tests.test_network_search import positions

ROOT = Path(__file__).resolve().parent.parent
RECIPE = ROOT / "configs" / "recipe.yaml"
RULES = make_rules("scopa")


def _search(seed: int = 0, **kw) -> SearchAgent:
    agent = load_policy_agent(None, seed=seed, search=SearchParams(**{"worlds": 4, **kw}))
    assert isinstance(agent, SearchAgent)
    return agent


# --- a checkpoint that searches ------------------------------------------------------

@pytest.mark.parametrize(("spec", "want"), [
    ("ckpt:a/b.pt", {"path": "a/b.pt"}),
    ("ckpt:C:/runs/x.pt", {"path": "C:/runs/x.pt"}),
    ("ckpt:a,b/c.pt", {"path": "a,b/c.pt"}),  # a comma without parameters after it
    ("ckpt:a,b.pt,suits=all", {"path": "a,b.pt", "suits": "all"}),
    ("ckpt:x.pt,endgame=exact", {"path": "x.pt", "endgame": "exact"}),
    ("ckpt:x.pt,search=on,worlds=4,gap=inf",
     {"path": "x.pt", "search": SearchParams(worlds=4, gap=math.inf)}),
])
def test_a_checkpoint_spec_takes_pretraineds_parameters(spec, want):
    assert parse_checkpoint(spec) == want


@pytest.mark.parametrize(("spec", "message"), [
    ("ckpt:", "needs a path"),
    ("ckpt:,search=on", "needs a path"),
    ("ckpt:x.pt,worlds=4", "the search settings worlds need search=on"),
    ("ckpt:x.pt,search=on,worlds=z", "search setting worlds takes a whole number"),
    ("ckpt:x.pt,suits=some", "agent 'ckpt' takes the parameters"),
])
def test_bad_checkpoint_parameters_are_refused_in_one_line(spec, message):
    with pytest.raises(ValueError, match=message) as e:
        parse_checkpoint(spec)
    assert "\n" not in str(e.value)


def test_a_checkpoint_searches_as_the_shipped_weights_do(tmp_path: Path) -> None:
    """``ckpt:FILE,search=on`` with the shipped weights' file plays the moves of
    ``pretrained:search=on`` (same seed, same settings)."""
    from scopa_policy.agent import pretrained_path

    file = pretrained_path(RULES)
    mine = CHECKPOINT(seed=3, **parse_checkpoint(f"ckpt:{file},search=on,worlds=4,gap=inf"))
    shipped = _search(seed=3, gap=math.inf)
    assert isinstance(mine, SearchAgent)
    infos = [info_set(s, s.to_move) for s in positions("scopa", 8, seed=41)]
    assert mine.act_batch(infos) == shipped.act_batch(infos)
    assert mine.searched == shipped.searched > 0


# --- the search's scores ---------------------------------------------------------------

def test_scores_are_nan_where_the_network_decides_and_the_choice_is_their_best():
    infos = [info_set(s, s.to_move) for s in positions("scopa", 12, seed=43)]
    infos += [info_set(s, s.to_move) for s in positions("scopa", 40, seed=44, deck=False)
              if not s.deck_count][:4]  # the last deal: the exact solver's
    scorer, player = _search(seed=5), _search(seed=5)
    scores = scorer.scores_batch(infos)
    picks = player.act_batch(infos)
    assert scorer.searched == player.searched > 0
    net = scorer.policy_for(RULES)
    searched = 0
    for info, score, pick in zip(infos, scores, picks, strict=True):
        assert score.shape == (len(info.legal_actions),)
        logits = np.asarray(net.logits(info))
        top2 = np.sort(logits)[-2:]
        if not info.deck_count or top2[1] - top2[0] >= 2.0:
            assert np.isnan(score).all()  # the network's call
            continue
        searched += 1
        assert np.isfinite(score).sum() == min(3, len(score))  # top=3 moves rolled out
        assert np.isfinite(score[int(np.argmax(logits))])
        best = np.flatnonzero(score == np.nanmax(score))
        assert pick == int(info.legal_actions[best[int(np.argmax(logits[best]))]])
    assert searched == scorer.searched
    one = _search(seed=5).scores(infos[0])
    np.testing.assert_array_equal(one, scores[0])


def test_scores_include_the_prior_the_agent_chooses_by():
    info = next(info_set(s, s.to_move) for s in positions("scopa", 20, seed=47)
                if len(s.legal_actions()) >= 3)
    plain = _search(seed=2, gap=math.inf).scores(info)
    prior = _search(seed=2, gap=math.inf, prior=0.5).scores(info)
    logits = np.asarray(_search().policy_for(RULES).logits(info), np.float64)
    logp = logits - logits.max() - np.log(np.exp(logits - logits.max()).sum())
    np.testing.assert_allclose(prior, plain + 0.5 * logp, atol=1e-12)


# --- targets from partly scored decisions -----------------------------------------------

def test_unscored_moves_take_their_decisions_lowest_value_and_unscored_decisions_zero():
    # three decisions: fully scored, partly scored, left to the network
    values = np.array([0.5, -1.0, np.nan, 2.0, 1.5, np.nan, np.nan])
    row = np.array([0, 0, 1, 1, 1, 2, 2])
    np.testing.assert_array_equal(filled(values, row, 3),
                                  [0.5, -1.0, 1.5, 2.0, 1.5, 0.0, 0.0])


def test_the_regret_counts_the_scored_decisions_only():
    values = np.array([0.5, -1.0, np.nan, 2.0, 1.5, np.nan, np.nan])
    row = np.array([0, 0, 1, 1, 1, 2, 2])
    col = np.array([0, 1, 0, 1, 2, 0, 1])
    # choices: move 1 (loses 1.5), the unscored move 0 (counts as the lowest, loses 0.5)
    got = search_regret(values, row, col, 3, 3, np.array([1, 0, 0]))
    np.testing.assert_allclose(got, [1.5, 0.5])


# --- the stage learns from its own network's search ------------------------------------

def _policy_file(tmp_path: Path) -> Path:
    torch.manual_seed(1)
    ck = policy_checkpoint(PolicyNet(), RULES.to_dict(), {}, last_deal=LastDealNet())
    return save_atomic(ck, tmp_path / "base.pt")


def _cfg(tmp_path: Path, *extra: str, base: Path | None = None):
    stages = load_recipe(RECIPE, [f"expert_iteration.{o}" for o in (
        f"run.runs_dir={tmp_path / 'runs'}", f"init_from={base or _policy_file(tmp_path)}",
        "rollouts.num_envs=64", "fit.decisions=1500", "fit.batch=128", "fit.epochs=1",
        "run.torch_threads=1", "evaluation.every_steps=0", "distill.search_workers=1",
        *extra)]).stages
    return next(s for s in stages if s.name == "expert_iteration")


def test_the_recipe_ends_with_expert_iteration():
    stages = load_recipe(RECIPE).stages
    last = stages[-1]
    assert last.name == "expert_iteration" and last.kind == "distill"
    assert is_self(last.distill.search) and last.distill.search_decisions > 0


@pytest.mark.parametrize(("search", "message"), [
    ("self", "gives move values only when it searches"),
    ("self:suits=all", "gives move values only when it searches"),
    ("self:search=on,worlds=0", "search worlds must be at least 1"),
    ("self:search=on,depth=3", "takes the parameters"),
])
def test_bad_self_search_specs_are_refused(search: str, message: str) -> None:
    with pytest.raises(ConfigError, match=f"'distill.search'.*{message}"):
        load_recipe(RECIPE, [f"expert_iteration.distill.search={search}"])


def test_self_spec_names_the_checkpoint_with_the_settings():
    assert self_spec("self:search=on,worlds=64", "/r/t.pt") == "ckpt:/r/t.pt,search=on,worlds=64"
    assert not is_self("pimc:worlds=48") and is_self(" self : search=on")


def test_a_stage_learns_from_its_own_networks_search(tmp_path: Path) -> None:
    lines: list[str] = []
    cfg = _cfg(tmp_path, "distill.search=self:search=on,worlds=2,gap=inf",
               "distill.search_decisions=40")
    out = recipe.start(cfg, progress=False, log=lines.append)
    assert out["finished"]
    run = Path(out["run_dir"])
    teacher = load_checkpoint(run / "search_teacher.pt")  # the starting network, searching
    base = load_checkpoint(tmp_path / "base.pt")
    assert all(torch.equal(v, base["model"][k]) for k, v in teacher["model"].items())
    spec = f"ckpt:{run / 'search_teacher.pt'},search=on,worlds=2,gap=inf"
    assert any(line.startswith(f"scoring 40 decisions with {spec}") for line in lines)
    assert any("search values added (beta 16) to 40 of the 40 decisions" in line
               for line in lines)  # gap=inf: every decision searched
    with np.load(run / "search_values.npz") as f:
        values = f["values"]
    assert np.isfinite(values).sum() > 0
    policy = load_checkpoint(run / "policy.pt")
    assert all(torch.isfinite(v).all() for v in policy["model"].values())
    assert not all(torch.equal(v, base["model"][k]) for k, v in policy["model"].items())


def test_the_search_leaves_its_sure_calls_to_the_network(tmp_path: Path) -> None:
    """With a tiny ``gap`` nearly every decision is a sure call: NaN values, targets
    unchanged there, and the fit stays finite."""
    from scopa_train.stages.distill import add_search_values, collect_decisions

    cfg = _cfg(tmp_path, "distill.search_decisions=60")
    net = PolicyNet()
    net.load_state_dict(load_checkpoint(tmp_path / "base.pt")["model"])
    data, _ = collect_decisions(net.eval(), cfg, True, lambda _: None)
    before = data.target.copy()
    file = save_atomic(policy_checkpoint(net, RULES.to_dict(), {}), tmp_path / "t.pt")
    spec = self_spec("self:search=on,worlds=2,gap=1e-9", file)
    idx = add_search_values(data, cfg, lambda _: None, spec=spec)
    assert idx is not None and len(idx) == 60
    moves, row, _ = data.moves(idx)
    got = search_values(spec, RULES, data.obs[idx], data.count[idx], cfg.seed, 1,
                        lambda _: None)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(data.search[moves]))
    scored = np.zeros(len(idx), bool)
    scored[row[~np.isnan(got)]] = True
    left = ~scored[row]  # the moves of the decisions the search left to the network
    assert left.any()
    np.testing.assert_array_equal(data.target[moves][left], before[moves][left])
    assert np.isfinite(data.target).all()


def test_a_new_run_reuses_its_own_networks_search_values(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The values' key names the settings and the network's weights, not the path of the
    run's ``search_teacher.pt``: another run folder given ``distill.search_values``
    scores nothing again, and fits to the same weights."""
    import scopa_train.search_labels as sl

    extra = ("distill.search=self:search=on,worlds=2,gap=inf", "distill.search_decisions=30")
    base = _policy_file(tmp_path)
    first = recipe.start(_cfg(tmp_path / "a", *extra, base=base), progress=False,
                         log=lambda _: None)
    run = Path(first["run_dir"])
    scored: list[int] = []
    real = sl.label_chunk
    monkeypatch.setattr(sl, "label_chunk", lambda job: scored.append(job.chunk) or real(job))
    again = recipe.start(_cfg(tmp_path / "b", *extra, f"distill.search_values={run}",
                              base=base), progress=False, log=lambda _: None)
    assert again["finished"] and scored == []
    want, got = load_checkpoint(run / "policy.pt"), load_checkpoint(Path(again["policy"]))
    assert all(torch.equal(v, want["model"][k]) for k, v in got["model"].items())


def test_the_teacher_reads_the_others_moves_of_each_decision(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The stage keeps each decision's round (``Decisions.rounds``) and its search gets
    them: a sampler reading the table deals other worlds with them than without, the
    uniform one the same."""
    from scopa_train.stages import distill

    given: list[np.ndarray | None] = []
    real = distill.search_values

    def spy(*args, **kw):
        given.append(kw.get("rounds"))
        return real(*args, **kw)

    monkeypatch.setattr(distill, "search_values", spy)
    cfg = _cfg(tmp_path, "distill.search=self:search=on,worlds=2,gap=inf",
               "distill.search_decisions=40")
    assert recipe.start(cfg, progress=False, log=lambda _: None)["finished"]
    assert len(given) == 1 and given[0] is not None and len(given[0]) == 40
    assert (given[0][:, 0] > 0).mean() > 0.5  # most decisions follow another seat's move

    net = PolicyNet()
    net.load_state_dict(load_checkpoint(tmp_path / "base.pt")["model"])
    data, _ = distill.collect_decisions(net.eval(), cfg, True, lambda _: None,
                                        keep_rounds=True)
    assert data.rounds is not None and len(data.rounds) == len(data)
    idx = np.flatnonzero(data.rounds[:, 0] > 0)[:30]  # after another seat's move
    file = save_atomic(policy_checkpoint(net, RULES.to_dict(), {}), tmp_path / "t.pt")

    def values(sampler: str, rounds: np.ndarray | None) -> np.ndarray:
        spec = self_spec(f"self:search=on,worlds=4,gap=inf,sampler={sampler}", file)
        return real(spec, RULES, data.obs[idx], data.count[idx], 3, 1, lambda _: None,
                    rounds=rounds)

    rows = data.rounds[idx]
    np.testing.assert_array_equal(values("uniform", rows), values("uniform", None))
    assert not np.array_equal(values("policy", rows), values("policy", None), equal_nan=True)
