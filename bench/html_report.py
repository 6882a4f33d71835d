"""The HTML report's size and generation time against planning time, per model and scenario.

Usage:
  python bench/html_report.py [MODEL_DIR] [--scenario NAME ...] [--chromium] [--keep DIR]

For each model and scenario (the three public ones of bench/scenarios.py and u65-256 with the
whole Dedicated_Sram; default all) it plans the model
(``plan s``: the whole ``npuplan.plan`` call, least of ``--repeat`` runs), then makes the HTML report the way ``--html`` does:
the plan JSON text read back, the report model, the page (``html s``; ``%`` is html s over plan s,
the target being under 20%). ``MB`` is the page's size. ``--chromium`` renders each page in
headless Chromium and prints whether every chart was drawn with no console message.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import npuplan
from npuplan.report import build_report
from npuplan.report.html import report_html
from npuplan.report.html_page import plotly_js
from npuplan.report.plan_json import plan_json

sys.path.insert(0, str(Path(__file__).resolve().parent))
from scenarios import SCENARIOS as PUBLIC  # noqa: E402

# The public scenarios and the u65-256 with the whole Dedicated_Sram cache.
SCENARIOS = {**PUBLIC, "u65_256_highend_dedicated_perf": dict(
    accelerator_config="ethos-u65-256", system_config="Ethos_U65_High_End", memory_mode="Dedicated_Sram",
    optimise="Performance")}

CHROMIUM = ["/usr/bin/chromium", "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync",
            "--enable-logging=stderr", "--v=0", "--virtual-time-budget=10000", "--dump-dom"]


def rendered(page: Path, profile: Path) -> str:
    """``ok`` when Chromium drew every chart with no console message, else what went wrong."""
    done = subprocess.run([*CHROMIUM, f"--user-data-dir={profile}", page.resolve().as_uri()],
                          capture_output=True, text=True, timeout=300, check=False)
    charts = len(re.findall(r'<div class="chart" id="', page.read_text(encoding="utf-8")))
    drawn = done.stdout.count('class="plot-container plotly"')
    console = [line for line in done.stderr.splitlines() if "CONSOLE" in line]
    if done.returncode or console or drawn != charts:
        return f"FAIL {drawn}/{charts} charts, {len(console)} console lines {console[:1]}"
    return f"ok {drawn}/{charts} charts"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="?", default=str(Path(__file__).resolve().parent.parent / "tests" / "data"))
    parser.add_argument("--scenario", action="append", choices=sorted(SCENARIOS))
    parser.add_argument("--chromium", action="store_true")
    parser.add_argument("--keep", metavar="DIR", help="keep the pages in DIR")
    parser.add_argument("--repeat", type=int, default=3, help="runs per case; the least time of each is shown")
    args = parser.parse_args()
    out = Path(args.keep or tempfile.mkdtemp(prefix="html_bench_"))
    out.mkdir(parents=True, exist_ok=True)
    print(f"{'model':<28} {'scenario':<36} {'plan s':>7} {'html s':>7} {'%':>5} {'MB':>5}  chromium")
    for model in sorted(Path(args.models).glob("*.tflite")):
        for name in args.scenario or list(SCENARIOS):
            plan_s = html_s = float("inf")
            for _ in range(args.repeat):
                started = time.perf_counter()
                plan = npuplan.plan(model, **SCENARIOS[name])
                plan_s = min(plan_s, time.perf_counter() - started)
                text = plan_json(plan, build_report(plan))
                plotly_js.cache_clear()  # as a single `npuplan plan --html` run reads it
                started = time.perf_counter()
                page = report_html(json.loads(text), model)
                html_s = min(html_s, time.perf_counter() - started)
            path = out / f"{model.stem}_{name}.html"
            path.write_bytes(page)
            browser = rendered(path, out / "profile") if args.chromium else "-"
            print(f"{model.stem:<28} {name:<36} {plan_s:7.2f} {html_s:7.3f} {100 * html_s / plan_s:5.1f} "
                  f"{len(page) / 1e6:5.2f}  {browser}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
