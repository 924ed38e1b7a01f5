"""benchmarks/last_deal_designs.py: saved positions, the designs, and their fits."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from scopa_policy.features import action_inputs_np
from scopa_policy.last_deal_net import LastDealConfig, LastDealNet, tokens
from scopa_policy.network import count_parameters
from tests.helpers import import_benchmark
from tests.test_last_deal import _decisions


@pytest.fixture(scope="module")
def bench():
    return import_benchmark("last_deal_designs")


@pytest.fixture(scope="module")
def positions(bench, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("positions") / "pos.npz"
    assert bench.main(["collect", "--decisions", "150", "--num-envs", "16", "--seed", "3",
                       "--out", str(out)]) == 0
    return out


def test_collected_positions_load_back_whole(bench, positions: Path) -> None:
    data, last = bench.load_positions([positions])
    assert last == len(data) >= 150
    assert (data.count > 1).all()  # decisions with a choice only
    assert (data.start == np.cumsum(data.count) - data.count).all()
    assert len(data.ids) == len(data.values) == len(data.own) == data.count.sum()
    two, last2 = bench.load_positions([positions, positions])
    assert last2 == last and len(two) == 2 * len(data)
    assert (two.values[data.count.sum():] == data.values).all()


@pytest.mark.parametrize("design", ["after_states", "move_queries"])
def test_a_designs_move_scores_do_not_depend_on_the_other_decisions(bench, design) -> None:
    torch.manual_seed(1)
    net = bench.DESIGNS[design](LastDealConfig(width=16, heads=2, ff_hidden=32,
                                               move_hidden=32)).eval()
    obs, ids, row, _ = _decisions(12, seed=4)
    feats = action_inputs_np(obs, ids, row)

    def scores(o: np.ndarray, f: np.ndarray, r: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            return net.scores(torch.from_numpy(o), torch.from_numpy(f),
                              torch.from_numpy(r), tokens(o, f, r)).numpy()

    batch = scores(obs, feats, row)
    assert batch.shape == (len(ids),) and np.isfinite(batch).all()
    for i in range(len(obs)):
        mine = row == i
        alone = scores(obs[i:i + 1], feats[mine], np.zeros(mine.sum(), np.int64))
        assert np.allclose(alone, batch[mine], atol=1e-5)


def test_each_design_fits_and_is_scored_on_the_last_files_tail(bench, positions) -> None:
    data, last = bench.load_positions([positions])
    for design in sorted(bench.DESIGNS):
        res = bench.fit(design, 1, [positions], seed=2, threads=1)
        assert res["design"] == design and res["decisions"] == len(data)
        assert res["held_out"] == max(1, int(last * bench.HELD_OUT))
        (epoch,) = res["epochs"]
        assert epoch["epoch"] == 1 and epoch["minutes"] > 0
        assert 0 <= epoch["best_move_rate"] <= 1 and epoch["points_lost_per_decision"] >= 0
        if design == "shipped":
            assert res["parameters"] == count_parameters(LastDealNet(LastDealConfig()))
        else:
            assert res["parameters"] > count_parameters(LastDealNet(LastDealConfig()))


def test_the_ownership_loss_fits_beside_the_shipped_design(bench, positions) -> None:
    res = bench.fit("shipped", 1, [positions], seed=2, threads=1, ownership=0.5, buckets=4)
    assert res["ownership"] == 0.5  # the head is the stage's, not the scorer's
    assert res["buckets"] == 4
    assert res["parameters"] == count_parameters(LastDealNet(LastDealConfig()))
    assert 0 <= res["epochs"][0]["best_move_rate"] <= 1


def test_a_file_without_outcomes_is_refused_by_name(bench, positions, tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]
                                                     ) -> None:
    old = tmp_path / "old.npz"
    with np.load(positions) as f:
        np.savez(old, **{k: f[k] for k in f.files if k != "own"})
    with pytest.raises(SystemExit) as e:
        bench.main(["fit", "--data", str(old)])
    assert e.value.code == 2
    assert f"{old} lacks own: collect it again with this version" in capsys.readouterr().err


@pytest.mark.parametrize(("argv", "message"), [
    (["fit", "--data", "nowhere.npz"], "no such --data file: nowhere.npz"),
    (["fit", "--data", "x.npz", "--epochs", "0"], "--epochs and --threads must be at least 1"),
    (["fit", "--data", "x.npz", "--design", "deep"], "invalid choice: 'deep'"),
    (["fit", "--data", "x.npz", "--design", "after_states", "--ownership", "1"],
     "is for --design shipped only"),
    (["fit", "--data", "x.npz", "--ownership", "-1"], "--ownership must be in [0, 100]"),
    (["fit", "--data", "x.npz", "--buckets", "-1"], "--buckets at least 0"),
    (["collect", "--decisions", "0", "--out", "x.npz"], "--decisions must be at least 1, got 0"),
])
def test_bad_arguments_get_one_line(bench, argv: list[str], message: str,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as e:
        bench.main(argv)
    assert e.value.code == 2
    assert message in capsys.readouterr().err
