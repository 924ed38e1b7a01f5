"""The notebooks run top to bottom against the current API (nbclient, a real kernel, at
small sizes), and the committed ones carry their outputs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

nbformat = pytest.importorskip(
    "nbformat", reason="nbformat is not installed (pip install -e .[test]): notebooks not run")
nbclient = pytest.importorskip(
    "nbclient", reason="nbclient is not installed (pip install -e .[test]): notebooks not run")

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"


def execute(name: str, params: dict[str, Any] | None = None) -> Any:
    """The notebook executed in notebooks/ (as Jupyter runs it), with ``params`` set in a
    cell after the one tagged ``parameters`` (papermill's convention)."""
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    if params:
        at = next(i for i, c in enumerate(nb.cells) if "parameters" in c.metadata.get("tags", []))
        src = "\n".join(f"{k} = {v!r}" for k, v in params.items())
        nb.cells.insert(at + 1, nbformat.v4.new_code_cell(src))
    client = nbclient.NotebookClient(nb, timeout=600, kernel_name="python3",
                                     resources={"metadata": {"path": str(NOTEBOOKS)}})
    client.execute()
    return nb


def text_of(nb: Any) -> str:
    out = []
    for cell in nb.cells:
        for o in cell.get("outputs", []):
            out.append(o.get("text", "") + o.get("data", {}).get("text/markdown", "")
                       + o.get("data", {}).get("text/plain", ""))
    return "\n".join(out)


def images(nb: Any) -> int:
    return sum("image/png" in o.get("data", {}) for c in nb.cells for o in c.get("outputs", []))


def test_tour_notebook_runs() -> None:
    nb = execute("tour.ipynb")
    text = text_of(nb)
    assert "16204" in text and "match score" in text
    assert "greedy" in text and "points per hand" in text.lower()


def test_train_and_watch_notebook_runs(tmp_path: Path) -> None:
    nb = execute("train_and_watch.ipynb", {
        "OVERRIDES": ["ppo.total_env_steps=1152", "evaluation.every_steps=576",
                      "evaluation.hands=4", "evaluation.opponents=[random, greedy]",
                      "evaluation.best_metric=greedy"],
        "EVAL_HANDS": 8, "RUNS_DIR": str(tmp_path)})
    text = text_of(nb)
    assert "trained 1,152 env steps" in text
    assert "eval/margin_vs_greedy" in text and "eval/margin_vs_random" in text
    for opponent in ("random", "greedy", "expert"):
        assert f"vs {opponent}" in text
    assert images(nb) == 1
    runs = list(tmp_path.iterdir())
    assert len(runs) == 1 and (runs[0] / "checkpoints" / "best.pt").is_file()


def test_benchmark_notebook_runs(tmp_path: Path) -> None:
    nb = execute("benchmark.ipynb", {"AGENTS": ["random", "greedy", "expert"], "HANDS": 10,
                                     "OUT": str(tmp_path / "ladder")})
    text = text_of(nb)
    assert "3 pairs x 10 paired hands" in text
    assert "| `expert` | `greedy` |" in text or "| `greedy` | `expert` |" in text
    assert "settebello" in text and "scope" in text
    assert images(nb) == 2  # the per-category chart and the ladder's own
    assert (tmp_path / "ladder" / "ratings.json").is_file()


@pytest.mark.parametrize("name", ["tour.ipynb", "train_and_watch.ipynb", "benchmark.ipynb"])
def test_committed_notebooks_carry_their_outputs(name: str) -> None:
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    nbformat.validate(nb)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code and all(c.execution_count is not None for c in code), \
        f"{name}: run it and save it with its outputs"
    assert all(c.outputs for c in code if "parameters" not in c.metadata.get("tags", []))
    assert [c.execution_count for c in code] == list(range(1, len(code) + 1))
    assert not any(o.output_type == "error" for c in code for o in c.outputs)
