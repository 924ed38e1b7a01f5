"""benchmarks/serve_load.py: simulated players play whole matches against a real
``scopa serve`` process; a short run with a few players, no request failed."""

from __future__ import annotations

import json
from pathlib import Path

from tests.helpers import import_benchmark


def test_serve_load_plays_whole_matches_without_failures(tmp_path: Path) -> None:
    bench = import_benchmark("serve_load")
    out = tmp_path / "serve.json"
    assert bench.main(["--players", "4", "--seconds", "4", "--think", "0", "--ramp", "0",
                       "--json", str(out)]) == 0
    res = json.loads(out.read_text())
    assert res["failed_requests"] == 0 and res["players"] == 4
    assert res["moves"] > 0 and res["matches"] >= 1  # a match is ~60 requests
    assert res["requests"] >= res["moves"] + res["matches"]
    m = res["move_ms"]
    assert 0 < m["p50"] <= m["p95"] <= m["p99"] <= m["max"]
