"""`schedlab report` opened in headless Chromium (Debian's `chromium`; `.ci/run` installs
it): the page renders without console errors and every plot has data. The screenshot it
takes is the one docs/analysis.md shows (docs/img/report.png, refreshed by running this
file with SCHEDLAB_SCREENSHOT=docs/img/report.png)."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import schedlab

CORPUS = Path(__file__).parent / "rtapp-corpus"

# Collects script errors and, once the page has loaded, each plot's points per trace.
PROBE = """<script>
window.__errors = [];
window.addEventListener('error', e => window.__errors.push(String(e.message)));
const _error = console.error;
console.error = (...a) => { window.__errors.push(a.join(' ')); _error(...a); };
window.addEventListener('load', () => setTimeout(() => {
  const plots = [...document.querySelectorAll('.js-plotly-plot')];
  const out = document.createElement('pre');
  out.id = 'probe';
  out.textContent = JSON.stringify({
    errors: window.__errors,
    titles: plots.map(p => p.layout.title.text),
    points: plots.map(p => p._fullData.map(t => t._length || 0)),
    svgs: plots.map(p => p.querySelectorAll('.main-svg').length)});
  document.body.appendChild(out);
}, 500));
</script>"""


def chromium(*args) -> subprocess.CompletedProcess:
    path = shutil.which("chromium")
    assert path, "Debian's chromium is needed: apt-get install chromium (.ci/run installs it)"
    return subprocess.run([path, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                           "--virtual-time-budget=30000", *args], capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    out = tmp_path_factory.mktemp("report") / "report.html"
    r = subprocess.run([sys.executable, "-m", "schedlab", "report", CORPUS / "video-short.json", "--platform",
                        "hikey960", "--governor", "schedutil", "--duration", "3s", "-o", out],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return out


def probe(page: Path, tmp_path: Path) -> dict:
    """What Chromium found rendering `page`: script errors, and each plot's title, points
    per trace and SVG layers."""
    text = page.read_text()
    # Self-contained: plotly's script is inline (once), nothing is fetched.
    assert "<script src=" not in text and text.count("window.PlotlyConfig") == 1
    probed = tmp_path / "probed.html"
    probed.write_text(text.replace("<head>", "<head>" + PROBE, 1))
    dom = chromium("--dump-dom", probed.as_uri()).stdout
    start = dom.index('<pre id="probe">') + len('<pre id="probe">')
    return json.loads(dom[start:dom.index("</pre>", start)].replace("&quot;", '"').replace("&amp;", "&"))


def test_report_renders_every_plot_with_data(report, tmp_path):
    found = probe(report, tmp_path)
    assert found["errors"] == []
    titles = found["titles"]
    # video-short on hikey960 with rt-app logs and no deadline task: every plot but the
    # deadline one.
    assert len(titles) == 10, titles
    assert any(t.startswith("Wakeup latency") for t in titles) and any("slack" in t for t in titles)
    for title, points, svgs in zip(titles, found["points"], found["svgs"]):
        assert points and all(n > 0 for n in points), title
        assert svgs > 0, title


def test_report_screenshot(report, tmp_path):
    shot = Path(os.environ.get("SCHEDLAB_SCREENSHOT", tmp_path / "report.png"))
    chromium("--window-size=1280,2400", f"--screenshot={shot.resolve()}", report.as_uri())
    png = shot.read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 50_000


def test_report_output_errors(cli, tmp_path):
    r = cli("report", CORPUS / "video-short.json", "--duration", "10ms", "-o", tmp_path / "no" / "r.html")
    assert r.returncode == 2 and b"r.html: cannot write" in r.stderr
    r = cli("report", tmp_path / "missing.json", "-o", tmp_path / "r.html")
    assert r.returncode == 2 and b"missing.json" in r.stderr
    assert list(tmp_path.iterdir()) == []


def test_report_on_a_saved_summary(cli, tmp_path):
    """A saved summary keeps no events: its report has the tables and the energy plot."""
    summary, out = tmp_path / "run.json", tmp_path / "saved.html"
    assert cli("run", CORPUS / "video-short.json", "--platform", "hikey960", "--duration", "500ms", "-q",
               "--summary", summary).returncode == 0
    r = cli("report", "--result", summary, "-o", out)
    assert r.returncode == 0, r.stderr
    text = out.read_text()
    assert "surfaceflinger-0" in text and text.count('class="plotly-graph-div"') == 1


def test_reproduce_report(cli, tmp_path):
    """`reproduce --report`: each experiment's figures beside the source's, and its plots
    (the figures as bars per unit, and the experiment's own: frequency ramps, util ramps)."""
    out = tmp_path / "reproduce.html"
    r = cli("reproduce", "schedutil-ramp", "pelt-invariance", "pelt-response", "--report", out)
    assert r.returncode == 0, r.stderr
    found = probe(out, tmp_path)
    assert found["errors"] == []
    titles = found["titles"]
    assert "Frequency per policy" in titles and any(t.startswith("task-0") for t in titles)
    assert sum("the source and schedlab" in t for t in titles) >= 3, titles
    for title, points in zip(titles, found["points"]):
        assert points and all(n > 0 for n in points), title
    text = out.read_text()
    assert "121 ms" in text and "223 ms" in text  # the seed's values beside schedlab's


def test_the_configuration_names_the_governors_the_policies_ran(tmp_path):
    from schedlab.report import configuration

    w = {"tasks": {"t": {"run": 1000, "sleep": 1000}}}
    # Chosen by --set (as the CLI passes --governor) or per policy: what the run reports.
    by_set = schedlab.run(w, "hikey960", sets=["cpufreq.governor=schedutil"], duration_ns="20ms", frames=False)
    assert configuration(by_set)["governors"] == "schedutil"
    mixed = schedlab.run(w, "hikey960", governors=["a53=powersave"], duration_ns="20ms", frames=False)
    assert configuration(mixed)["governors"] == "a53: powersave, a73: performance"
