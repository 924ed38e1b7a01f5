"""Nothing changed: the per-game engine with every baseline, the vector env with the
batched baselines and the AEC env produce, for fixed seeds and every named rule set,
exactly the bytes written before the rules were gathered into ``scopa_env.rules``
(``tests/data/frozen-*.jsonl``, made by ``python -m tests.frozen_outputs``)."""

from __future__ import annotations

import json

import pytest

from tests import frozen_outputs as frozen


@pytest.mark.parametrize("kind", sorted(frozen.MAKERS))
def test_outputs_are_the_frozen_bytes(kind: str) -> None:
    want = frozen.path(kind).read_bytes()
    got = frozen.render(kind)
    if got != want:  # name the first rule set and line that differ
        for i, (a, b) in enumerate(zip(got.splitlines(), want.splitlines(), strict=False)):
            assert a == b, f"{frozen.path(kind).name} line {i + 1} differs: {a[:200]!r}"
    assert got == want


def test_the_frozen_files_cover_every_named_rule_set() -> None:
    from scopa_env.rules import NAMED_RULES

    for kind in frozen.MAKERS:
        lines = frozen.path(kind).read_text().splitlines()
        covered = {json.loads(x)["rules"] for x in lines if x.startswith('{"rules"')}
        assert set(NAMED_RULES) <= covered, kind
