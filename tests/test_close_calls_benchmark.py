"""benchmarks/close_calls.py: the close-call cut's share of decisions and agreement."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

_PATH = Path(__file__).resolve().parents[1] / "benchmarks" / "close_calls.py"


def _module():
    spec = importlib.util.spec_from_file_location("close_calls_benchmark", _PATH)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_no_cut_is_one_view_and_an_endless_cut_is_averaging_everything() -> None:
    res = _module().measure(hands=3, seed=5, opponent="greedy", gaps=[0.0, 1.0, 1e9])
    assert res["decisions"] > 20
    none, one, every = res["cuts"]
    assert none["averaged_share"] == 0.0
    assert none["agreement"] == res["one_view_agreement"]
    assert every["averaged_share"] == 1.0 and every["agreement"] == 1.0
    assert 0.0 <= one["averaged_share"] <= 1.0
    assert one["agreement"] >= res["one_view_agreement"] - 1e-12


@pytest.mark.parametrize(("argv", "message"), [
    (["--gaps", "-1"], "--gaps must not be negative"),
    (["--hands", "0"], "--hands must be at least 1, got 0"),
])
def test_bad_arguments_get_one_line(argv: list[str], message: str,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as e:
        _module().main(argv)
    assert e.value.code == 2
    assert message in capsys.readouterr().err
