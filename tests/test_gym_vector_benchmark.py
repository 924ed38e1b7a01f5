"""benchmarks/gym_vector_throughput.py runs every row at a tiny size and computes the two
targets' ratios from the same run (the figures themselves are BENCHMARKS.md's)."""

from __future__ import annotations

from tests.helpers import import_benchmark

bench = import_benchmark("gym_vector_throughput")


def test_the_benchmark_measures_every_row_and_the_ratios(capsys) -> None:
    res = bench.main(["--num-envs", "8", "--seconds", "0.05", "--json"])
    rows = res["rows"]
    assert list(rows) == ["raw vector env", "make_vec, random", "make_vec, greedy",
                          "make_vec, self-play", "make_vec, moves=legal, greedy",
                          "single env, greedy"]
    for r in rows.values():
        assert r["agent_steps"] > 0 and r["agent_steps_per_cpu_s"] > 0
    assert rows["raw vector env"]["vs_raw"] == 1.0
    t = res["targets"]
    assert t["random_vs_raw"] == rows["make_vec, random"]["vs_raw"]
    assert t["greedy_vs_single_met"] == (t["greedy_vs_single"] >= 100)
    assert '"targets"' in capsys.readouterr().out
