"""The notebook tour runs top to bottom against the current API."""

import contextlib
import io
import json
from pathlib import Path

NOTEBOOK = Path(__file__).resolve().parent.parent / "notebooks" / "tour.ipynb"


def test_tour_notebook_runs():
    cells = json.loads(NOTEBOOK.read_text())["cells"]
    code = ["".join(c["source"]) for c in cells if c["cell_type"] == "code"]
    assert len(code) >= 5
    namespace: dict = {}
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        for src in code:
            exec(compile(src, str(NOTEBOOK), "exec"), namespace)
    text = out.getvalue()
    assert "16204" in text and "match score" in text
    assert namespace["result"]["b"] == "greedy"
