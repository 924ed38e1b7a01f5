"""The suit-distillation stage (kind: distill): its targets are the agent's
suit-averaged scores, a run fits, carries the last-deal scorer, resumes where it stopped
to the same weights, and bad configs are refused."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import numpy as np
import pytest
import torch

from scopa_env.rules import make_rules
from scopa_policy.checkpoint import (
    CheckpointError,
    build_last_deal,
    build_model,
    load_checkpoint,
    policy_checkpoint,
    save_atomic,
)
from scopa_policy.last_deal_net import LastDealNet
from scopa_policy.network import PolicyNet
from scopa_policy.symmetry import SuitAveraged
from scopa_train import recipe
from scopa_train.config import ConfigError, StageConfig, load_recipe
from scopa_train.framework import init_path
from scopa_train.stages.distill import DistillStage, averaged_logits, view_inputs

ROOT = Path(__file__).resolve().parent.parent
RECIPE = ROOT / "configs" / "recipe.yaml"
RULES = make_rules("scopa")


def _quiet(_: str) -> None:
    pass


def _policy_file(tmp_path: Path) -> Path:
    torch.manual_seed(1)
    ck = policy_checkpoint(PolicyNet(), RULES.to_dict(), {}, last_deal=LastDealNet())
    return save_atomic(ck, tmp_path / "base.pt")


def _stage(*overrides: str) -> StageConfig:
    """The suit_distill stage of the shipped recipe, with ``overrides``
    (``SECTION.KEY=VALUE``, ``init_from=...``) set on that stage."""
    stages = load_recipe(RECIPE, [f"suit_distill.{o}" for o in overrides]).stages
    return next(s for s in stages if s.name == "suit_distill")


def _cfg(tmp_path: Path, *extra: str, base: Path | None = None) -> StageConfig:
    return _stage(f"run.runs_dir={tmp_path / 'runs'}",
                  f"init_from={base or _policy_file(tmp_path)}", "rollouts.num_envs=64",
                  "fit.decisions=1500", "fit.batch=128", "run.torch_threads=1",
                  "evaluation.every_steps=0", *extra)


def _collected(tmp_path: Path):
    cfg = _cfg(tmp_path)
    from scopa_train.stages.distill import collect_decisions

    net = build_model(load_checkpoint(init_path(cfg)))
    data, steps = collect_decisions(net.eval(), cfg, True, _quiet)
    return net, data, steps


def test_targets_are_the_agents_suit_averaged_scores(tmp_path: Path) -> None:
    net, data, steps = _collected(tmp_path)
    assert len(data) >= 1500 and steps > 0 and (data.count > 1).all()
    assert (data.obs[:, 204] > 0).all()  # the last deal is left to the last-deal scorer
    idx = np.arange(40)
    moves, row, _ = data.moves(idx)
    scorer = net.numpy_scorer()
    want = SuitAveraged(scorer).scores(data.obs[idx].astype(np.float64),
                                       data.feats[moves], row)
    assert np.allclose(data.target[moves], want, atol=1e-4)
    # a view's inputs are the mapped decision's
    obs, cand, got = view_inputs(data, data.feats, idx, np.full(40, 3))
    assert (got == moves).all()
    assert np.allclose(averaged_logits(net, data, data.feats)[moves], data.target[moves],
                       atol=1e-6)
    assert cand.feats.shape == (len(moves), data.feats.shape[1])


def test_a_run_fits_carries_the_scorer_and_resumes_to_the_same_weights(
        tmp_path: Path) -> None:
    base_file = _policy_file(tmp_path)  # one file: weights drawn with other thread counts differ
    whole = recipe.start(_cfg(tmp_path / "a", "fit.epochs=2", base=base_file),
                         progress=False, log=_quiet)
    run = Path(whole["run_dir"])
    assert whole["finished"]
    evals = (run / "evaluations.jsonl").read_text().splitlines()
    assert len(evals) == 2 and '"heldout_teacher_agreement"' in evals[0]
    base = load_checkpoint(base_file)
    policy = load_checkpoint(run / "policy.pt")
    assert "teacher" not in policy
    # the last-deal scorer is carried over unchanged; the network has moved
    assert all(torch.equal(v, base["last_deal"]["model"][k])
               for k, v in policy["last_deal"]["model"].items())
    assert not torch.equal(policy["model"]["encoder.0.weight"],
                           base["model"]["encoder.0.weight"])
    assert build_last_deal(policy) is not None

    steps: list[int] = []
    real = DistillStage.step

    def step_then_stop(self, data, idx):  # noqa: ANN001, ANN202
        steps.append(len(idx))
        if len(steps) == 5:
            os.kill(os.getpid(), signal.SIGTERM)
        return real(self, data, idx)

    DistillStage.step = step_then_stop
    try:
        out = recipe.start(_cfg(tmp_path / "b", "fit.epochs=2", base=base_file),
                           progress=False, log=_quiet)
    finally:
        DistillStage.step = real
    stopped = Path(out["run_dir"])
    assert not out["finished"] and "SIGTERM" in out["reason"]
    ck = load_checkpoint(stopped / "checkpoints" / "latest.pt", kind="training")
    assert (ck["counters"]["epoch"], ck["counters"]["step"]) == (0, 5) and "teacher" in ck
    assert recipe.resume(stopped, progress=False, log=_quiet)["finished"]
    again = load_checkpoint(stopped / "policy.pt")
    assert all(torch.equal(v, policy["model"][k]) for k, v in again["model"].items())


@pytest.mark.parametrize(("extra", "message"), [
    (["init_from="], "needs 'init_from'"),
    (["rollouts.backend=ray"], "runs with rollouts.backend: local"),
    (["fit.lr=0"], "'fit.lr' = 0.0 is out of range"),
])
def test_bad_suit_distill_configs_are_refused(extra: list[str], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        _stage(*extra)


def test_a_training_checkpoint_without_its_teacher_is_refused(tmp_path: Path) -> None:
    out = recipe.start(_cfg(tmp_path, "fit.epochs=1"), progress=False, log=_quiet)
    final = Path(out["run_dir"]) / "checkpoints" / "final.pt"
    ck = load_checkpoint(final, kind="training")
    del ck["teacher"], ck["path"]
    save_atomic(ck, final)
    with pytest.raises(CheckpointError, match=r"final\.pt.*damaged.*teacher network"):
        recipe.resume(final, progress=False, log=_quiet)


def test_search_values_join_the_targets_of_the_drawn_decisions(tmp_path: Path) -> None:
    from scopa_train.search_labels import search_values
    from scopa_train.stages.distill import add_search_values

    _, data, _ = _collected(tmp_path)
    before = data.target.copy()
    cfg = _cfg(tmp_path, "distill.search=pimc:worlds=2,depth=2",
               "distill.search_decisions=40", "distill.search_beta=3",
               "distill.search_workers=1")
    lines: list[str] = []
    idx = add_search_values(data, cfg, lines.append)
    assert len(idx) == 40 and len(set(idx.tolist())) == 40
    moves, _, _ = data.moves(idx)
    values = search_values(cfg.distill.search, RULES, data.obs[idx], data.count[idx],
                           cfg.seed, 1, _quiet)
    assert np.allclose(data.target[moves], before[moves] + 3 * values, atol=1e-5)
    others = np.setdiff1d(np.arange(len(data.target)), moves)
    assert np.array_equal(data.target[others], before[others])
    assert any("the target's best move changed in" in line for line in lines)


def test_a_run_with_a_search_teacher_scores_its_decisions(tmp_path: Path) -> None:
    lines: list[str] = []
    out = recipe.start(_cfg(tmp_path, "fit.epochs=1",
                            "distill.search=pimc:worlds=1,depth=1",
                            "distill.search_decisions=30", "distill.search_workers=1"),
                       progress=False, log=lines.append)
    assert out["finished"]
    assert any(line.startswith("scoring 30 decisions with pimc:worlds=1,depth=1")
               for line in lines)


def test_the_held_out_share_is_scored_by_the_search_values(tmp_path: Path) -> None:
    from scopa_train.stages.distill import add_search_values

    net, data, _ = _collected(tmp_path)
    cfg = _cfg(tmp_path, "distill.search=pimc:worlds=2,depth=2",
               f"distill.search_decisions={len(data)}", "distill.search_workers=1")
    idx = add_search_values(data, cfg, _quiet)
    assert idx is not None and len(idx) == len(data) and not np.isnan(data.search).any()
    stage = DistillStage(cfg, tmp_path / "run", net, None, log=_quiet)
    held = np.arange(len(data) - 50, len(data))
    got = stage._figures(net.eval(), data, held)["search_regret"]
    # by hand: the search's best value minus that of the network's choice, one view
    obs, cand, moves = view_inputs(data, data.feats, held, np.zeros(50, np.int64))
    with torch.no_grad():
        choice = net.forward_moves(obs, cand)[0].argmax(1).numpy()
    lost = [data.search[moves][cand.row.numpy() == r].max()
            - data.search[moves][cand.row.numpy() == r][choice[r]] for r in range(50)]
    assert got == pytest.approx(float(np.mean(lost)), abs=1e-6) and got >= 0
    # only scored decisions count; with none scored there is no such figure
    data.search[:] = np.nan
    assert "search_regret" not in stage._figures(net, data, held)


def test_a_run_stopped_while_scoring_keeps_its_values_and_resumes_to_the_same_weights(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import scopa_train.search_labels as sl

    base = _policy_file(tmp_path)
    extra = ("fit.epochs=1", "distill.search=pimc:worlds=1,depth=1",
             "distill.search_decisions=600", "distill.search_workers=1")
    monkeypatch.setattr(sl, "CHUNK", 100)
    monkeypatch.setattr(sl, "SAVE_EVERY", 100)  # the stop itself must write the cache
    whole = recipe.start(_cfg(tmp_path / "a", *extra, base=base), progress=False, log=_quiet)
    assert whole["finished"]
    want = load_checkpoint(Path(whole["run_dir"]) / "policy.pt")
    evals = (Path(whole["run_dir"]) / "evaluations.jsonl").read_text()
    assert '"heldout_search_regret"' in evals

    scored: list[int] = []
    real = sl.label_chunk

    def label_then_stop(job):  # noqa: ANN001, ANN202
        scored.append(job.chunk)
        if len(scored) == 2:
            os.kill(os.getpid(), signal.SIGTERM)
        return real(job)

    monkeypatch.setattr(sl, "label_chunk", label_then_stop)
    out = recipe.start(_cfg(tmp_path / "b", *extra, base=base), progress=False, log=_quiet)
    run = Path(out["run_dir"])
    assert not out["finished"] and "SIGTERM" in out["reason"] and scored == [0, 1]
    assert (run / "search_values.npz").exists()
    lines: list[str] = []
    assert recipe.resume(run, progress=False, log=lines.append)["finished"]
    assert scored == [0, 1, 2, 3, 4, 5]  # the resumed run scored only the other chunks
    assert any("2 of 6 chunks already scored" in line for line in lines)
    again = load_checkpoint(run / "policy.pt")
    assert all(torch.equal(v, want["model"][k]) for k, v in again["model"].items())


def test_a_run_reuses_an_earlier_runs_search_values(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import scopa_train.search_labels as sl

    base = _policy_file(tmp_path)
    extra = ("fit.epochs=1", "distill.search=pimc:worlds=1,depth=1",
             "distill.search_decisions=300", "distill.search_workers=1")
    first = Path(recipe.start(_cfg(tmp_path / "a", *extra, base=base), progress=False,
                              log=_quiet)["run_dir"])
    scored: list[int] = []
    real = sl.label_chunk
    monkeypatch.setattr(sl, "label_chunk", lambda job: scored.append(job.chunk) or real(job))
    lines: list[str] = []
    out = recipe.start(_cfg(tmp_path / "b", *extra, f"distill.search_values={first}",
                            base=base), progress=False, log=lines.append)
    assert out["finished"] and scored == []  # nothing scored again
    assert any(f"starting from {first / 'search_values.npz'}" in line for line in lines)
    want, got = load_checkpoint(first / "policy.pt"), load_checkpoint(Path(out["policy"]))
    assert all(torch.equal(v, want["model"][k]) for k, v in got["model"].items())
    # values of other decisions (another seed) are set aside and everything is scored
    lines.clear()
    recipe.start(_cfg(tmp_path / "c", *extra, "run.seed=9", f"distill.search_values={first}",
                      base=base), progress=False, log=lines.append)
    assert any("holds values of other decisions: scoring afresh" in line for line in lines)
    assert scored == [0, 1]


@pytest.mark.parametrize(("extra", "message"), [
    (["distill.search=pimc", "distill.search_decisions=10",
      "distill.search_values=/no/such/run"],
     "'distill.search_values': no file /no/such/run"),
    (["distill.search=pimc", "distill.search_values=x.npz"],
     "'distill.search_values' is set but 'distill.search_decisions' is 0"),
])
def test_bad_search_values_configs_are_refused(extra: list[str], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        _stage("init_from=pretrained", *extra)


def test_a_collection_too_big_for_memory_is_refused_after_its_first_rollout(
        tmp_path: Path, monkeypatch) -> None:
    """The first rollout's decisions give the size of one; ``fit.decisions`` that would
    not fit in the memory free is refused in one line naming the key and a count that
    fits, before the machine runs out (4-player scopone scientifico: 2 M decisions were
    more than 24 GB)."""
    from scopa_train.stages import distill, fitting

    monkeypatch.setattr(fitting, "available_memory", lambda: 50 * 2**20)  # 50 MB free
    cfg = _cfg(tmp_path, "fit.decisions=1000000")
    net = build_model(load_checkpoint(init_path(cfg)))
    with pytest.raises(ConfigError, match=r"config key 'fit.decisions' \(1,000,000\) needs "
                                          r"about .* GB of memory under these rules .* lower "
                                          r"stage 'suit_distill''s fit.decisions, to "):
        distill.collect_decisions(net.eval(), cfg, True, _quiet)
    monkeypatch.setattr(fitting, "available_memory", lambda: 64 * 2**30)
    data, _ = distill.collect_decisions(net.eval(), _cfg(tmp_path), True, _quiet)
    assert len(data) >= 1500


def test_joining_the_collected_parts_equals_concatenating_them() -> None:
    from scopa_train.stages.fitting import join

    rng = np.random.default_rng(0)
    parts = [rng.normal(size=(n, 3)).astype(np.float32) for n in (5, 0, 7, 1)]
    want = np.concatenate(parts)
    got = join(parts)
    assert got.dtype == want.dtype and np.array_equal(got, want)
    assert parts == []  # each part is let go once copied
