"""What runs of the kit's stage kinds write is what it was before each kind became one
module (issue 65): config digests, resolved configs and ``config.yaml``, the parts of
checkpoints and policy files, TensorBoard tags and evaluation fields
(``tests/frozen_stages.py``, reference ``tests/data/frozen-stages.json``)."""

from __future__ import annotations

import json

from tests.frozen_stages import DATA, STAGES, outputs


def test_the_kit_kinds_write_what_they_wrote() -> None:
    frozen = json.loads(DATA.read_text())
    now = json.loads(json.dumps(outputs(), sort_keys=True))
    for key in ("digest", "digest_new_name", "digest_one_stage"):
        assert now[key] == frozen[key], key
    for stage in STAGES:
        for part, want in frozen[stage].items():
            assert now[stage][part] == want, (stage, part)
    assert now == frozen
