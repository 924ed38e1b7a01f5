"""benchmarks/close_calls.py: the close-call cut's share of decisions and agreement."""

from __future__ import annotations

import pytest

from tests.helpers import import_benchmark


def test_no_cut_is_one_view_and_an_endless_cut_is_averaging_everything() -> None:
    res = import_benchmark("close_calls").measure(hands=3, seed=5, opponent="greedy",
                                                  gaps=[0.0, 1.0, 1e9])
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
        import_benchmark("close_calls").main(argv)
    assert e.value.code == 2
    assert message in capsys.readouterr().err
