"""docs/example.ipynb executed as Jupyter would (nbclient, an IPython kernel): a run, its plots
and a comparison show themselves as HTML, not as pages of text."""

from pathlib import Path

import nbformat
from nbclient import NotebookClient

DOCS = Path(__file__).parent.parent / "docs"


def test_the_example_notebook_shows_html(tmp_path):
    nb = nbformat.read(DOCS / "example.ipynb", as_version=4)
    NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(DOCS)}}).execute()
    outputs = [c.outputs for c in nb.cells if c.cell_type == "code"]
    assert not [o for out in outputs for o in out if o.output_type == "error"]
    results = [next(o for o in out if o.output_type == "execute_result") for out in outputs]
    run, util, frequency, comparison, frame = (r.data for r in results)
    assert "<table" in run["text/html"] and run["text/plain"].startswith("<RunResult hikey960")
    for fig, title in ((util, "CPU utilization and capacity"), (frequency, "Frequency per policy")):
        assert "plotly" in fig["text/html"] and fig["text/plain"].startswith(f"<Figure '{title}'")
        assert len(fig["text/plain"]) < 100
    assert "<h2>Totals</h2>" in comparison["text/html"] and len(comparison["text/plain"]) < 200
    assert "<table" in frame["text/html"]
