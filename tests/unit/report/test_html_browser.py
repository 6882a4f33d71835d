"""The HTML report in a real browser: headless Chromium draws every chart, offline, with no
console message (a script error, a refused request or a failed chart would log one), the
markup-named tensors stay text, and the op table sorts on a header click."""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from npuplan.cli import main

from .plans import SCENARIO, hostile_model

pytest.importorskip("plotly")

CHROMIUM = "/usr/bin/chromium"
TARGET = ["--system-config", SCENARIO["system_config"], "--memory-mode", SCENARIO["memory_mode"]]


def _dump_dom(page: Path, profile: Path) -> tuple[str, str]:
    """The page's DOM after its scripts ran, and Chromium's log."""
    if not Path(CHROMIUM).exists() or shutil.which(CHROMIUM) is None:
        pytest.skip("chromium not installed: apt-get install chromium")
    done = subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         f"--user-data-dir={profile}", "--enable-logging=stderr", "--v=0", "--virtual-time-budget=10000",
         "--dump-dom", page.resolve().as_uri()],
        capture_output=True, text=True, timeout=180, check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout, done.stderr


def _check_rendered(page: Path, profile: Path) -> str:
    source = page.read_text(encoding="utf-8")
    charts = len(re.findall(r'<div class="chart" id="', source))
    dom, log = _dump_dom(page, profile)
    console = [line for line in log.splitlines() if "CONSOLE" in line]
    assert not console, console[:5]
    assert charts >= 2 and dom.count('class="plot-container plotly"') == charts
    assert dom.count("main-svg") >= charts and "\">chart failed" not in dom
    return dom


# Appended to a copy of a page: records each chart's hover texts as plotly holds them after drawing
# (and whether any "hoverlines" was left unjoined) in an attribute the dumped DOM shows.
PROBE = b"""<script>document.querySelectorAll('.chart').forEach(function (box) {
  var seen = [];
  box.data.forEach(function (t) { if (t.hoverlines !== undefined) { seen.push('UNJOINED'); }
    if (t.hovertext) { seen.push(t.hovertext[0]); } });
  box.setAttribute('data-hover', JSON.stringify(seen));
});
var heads = Array.prototype.slice.call(document.querySelectorAll('table.sortable th'));
var cycles = heads.filter(function (th) { return th.textContent === 'cycles'; })[0];
cycles.click();
var column = Array.prototype.indexOf.call(cycles.parentNode.children, cycles);
var rows = Array.prototype.slice.call(cycles.closest('table').tBodies[0].rows);
document.body.setAttribute('data-sorted', JSON.stringify(rows.map(function (row) {
  return row.cells[column].dataset.sort === undefined ? null : parseFloat(row.cells[column].dataset.sort); })));
</script>"""


def test_chromium_draws_every_chart_of_a_report_and_a_comparison(tmp_path, ds_cnn: Path) -> None:
    model = hostile_model(ds_cnn, tmp_path / "hostile.tflite")
    plans = []
    for name, accelerator in (("a", "ethos-u55-128"), ("b", "ethos-u65-256")):
        out = tmp_path / name
        memory = ["--memory-mode", "Dedicated_Sram", "--system-config", "Ethos_U65_High_End"] if name == "b" else TARGET
        assert main(["plan", str(model), "--accelerator-config", accelerator, *memory, "--output-dir", str(out),
                     "--quiet", "--html"]) == 0
        plans.append(out / "hostile_plan.json")
    page = tmp_path / "a" / "hostile_report.html"
    probed = tmp_path / "probed.html"
    probed.write_bytes(page.read_bytes().replace(b"</body>", PROBE + b"</body>"))
    dom = _check_rendered(probed, tmp_path / "profile")
    assert "&lt;img src=x onerror=alert(1)&gt;" in dom and '<img src="x"' not in dom
    hovers = re.findall(r'data-hover="([^"]*)"', dom)
    assert len(hovers) == dom.count('class="plot-container plotly"') and not any("UNJOINED" in h for h in hovers)
    # plotly holds the names HTML-escaped (it shows &lt; as <), the lines joined with <br>
    assert all("br" in h for h in hovers) and any("&amp;lt;img src=x onerror=alert(1)&amp;gt;" in h for h in hovers)
    # a click on the op table's "cycles" header sorts its rows by cycles
    cycles = [v for v in json.loads(html.unescape(re.search(r'data-sorted="([^"]*)"', dom).group(1))) if v is not None]
    assert len(cycles) > 10 and cycles == sorted(cycles) and cycles[0] < cycles[-1]
    assert main(["report", *map(str, plans), "-o", str(tmp_path / "diff.html")]) == 0
    _check_rendered(tmp_path / "diff.html", tmp_path / "profile")
