"""What a tiny recipe of every kit stage kind writes, as the kinds stood before each kind
became one module (issue 65): the config digests, each stage's resolved config and its
``config.yaml``, the parts of its checkpoints and policy files (names, tensor shapes and
types), its TensorBoard tags (with how many points each) and its evaluations' fields.
``tests/data/frozen-stages.json`` holds them; ``tests/test_frozen_stages.py`` compares.

Regenerate (only when a change of what runs write is meant): ``python -m tests.frozen_stages``.
"""

from __future__ import annotations

import json
import re
import tempfile
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parent / "data" / "frozen-stages.json"
RECIPE = """
run: {name: tiny, seed: 7, runs_dir: RUNS}
rollouts: {num_envs: 16, rollout_steps: 36}
opponents: {self: 0.5, past: 0.2, random: 0.3}
network: {hidden_size: 32, hidden_layers: 1, action_hidden: 16}
evaluation: {every_steps: 1152, hands: 2, opponents: [random, greedy], best_metric: greedy}
checkpoints: {every_steps: 1152}
stages:
  - name: ppo
    kind: ppo
    ppo: {total_env_steps: 2304, update_epochs: 1, num_minibatches: 2, past_snapshot_every: 1}
  - name: dmc
    kind: dmc
    dmc: {total_env_steps: 2304, update_epochs: 1, num_minibatches: 2, past_snapshot_every: 1}
  - name: scorer
    kind: last_deal
    fit: {decisions: 200, epochs: 2, batch: 64}
    last_deal: {width: 16, layers: 1, heads: 2}
  - name: distill
    kind: suit_distill
    fit: {decisions: 200, epochs: 1, batch: 64}
"""
STAGES = ("ppo", "dmc", "scorer", "distill")


def shape(obj: Any) -> Any:
    """The structure of a checkpoint's contents: tensors as their shape and type, other
    leaves as their type (values that vary by machine or clock are left out)."""
    import torch

    if isinstance(obj, torch.Tensor):
        return f"tensor{tuple(obj.shape)}:{str(obj.dtype).removeprefix('torch.')}"
    if isinstance(obj, dict):
        return {str(k): shape(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [shape(v) for v in obj]
    return type(obj).__name__


def _tags(folder: Path) -> dict[str, int]:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    acc = EventAccumulator(str(folder / "tensorboard"), size_guidance={"scalars": 0})
    acc.Reload()
    return {t: len(acc.Scalars(t)) for t in sorted(acc.Tags()["scalars"])}


def outputs() -> dict[str, Any]:
    """The tiny recipe's digests, then what each of its stages writes."""
    import torch
    import yaml

    from scopa_train import recipe
    from scopa_train.config import recipe_from_dict

    fixed = RECIPE.replace("RUNS", "runs")
    out: dict[str, Any] = {
        "digest": recipe_from_dict(yaml.safe_load(fixed)).digest(),
        "digest_new_name": recipe_from_dict(yaml.safe_load(
            fixed.replace("suit_distill", "distill"))).digest(),
        "digest_one_stage": recipe_from_dict({**yaml.safe_load(fixed.split("stages:")[0]),
                                              "kind": "dmc"}).digest()}
    with tempfile.TemporaryDirectory() as tmp:
        rec = recipe_from_dict(yaml.safe_load(RECIPE.replace("RUNS", tmp)))
        res = recipe.run_recipe(rec, progress=False, log=lambda _: None)
        run = Path(res["run_dir"])

        def local(text: str) -> str:
            return re.sub(r"tiny-\d{8}-\d{6}(-\d+)?", "RUN", text.replace(tmp, "TMP"))

        for stage in STAGES:
            folder = run / stage
            d: dict[str, Any] = {
                "to_dict": json.loads(local(json.dumps(
                    next(s for s in rec.stages if s.name == stage).to_dict()))),
                "config.yaml": local((folder / "config.yaml").read_text()),
                "files": sorted(str(p.relative_to(folder)) for p in folder.rglob("*")
                                if p.is_file() and "tensorboard" not in p.parts),
                "tensorboard": _tags(folder),
                "evaluations": [sorted(json.loads(line)) for line in
                                (folder / "evaluations.jsonl").read_text().splitlines()]}
            for name in ("checkpoints/final.pt", "policy.pt"):
                d[name] = shape(torch.load(folder / name, weights_only=True))
            out[stage] = d
    return out


if __name__ == "__main__":
    DATA.write_text(json.dumps(outputs(), indent=1, sort_keys=True) + "\n")
    print(f"wrote {DATA}")
