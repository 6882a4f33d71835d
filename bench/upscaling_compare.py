"""npuplan against Vela 5.2.0's legacy core on the upscaling zoo (bench/upscaling_zoo.py), per model:
CPU operators, total cycles and per-layer NPU cycles (u55-128 High_End_Embedded Shared_Sram), and the
Size-mode SRAM (u55-64 Deep_Embedded Shared_Sram). Every npuplan plan is validated.

Usage: python bench/upscaling_compare.py ZOO_DIR --vela PATH/TO/vela [--search cascade] [--model NAME ...]

Layers are matched by Vela's name (the half-pixel bilinear phases, which Vela names without their
resize, by their suffix). Vela is trusted as the reference for the cost of a layer; where the two
schedules differ (npuplan cascades, or reads a first op's weights in place where Vela buffers them)
per-layer figures differ by design. A model Vela fails on is a row saying so. Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import csv
import re
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))

from scenarios import SCENARIOS, cli_flags  # noqa: E402

import npuplan  # noqa: E402
from npuplan.commands import validate_plan  # noqa: E402
from npuplan.errors import NpuplanError  # noqa: E402
from npuplan.report import build_report  # noqa: E402

PERF, SIZE = SCENARIOS["u55_128_highend_shared_perf"], SCENARIOS["u55_64_deep_shared_size"]


def _key(name: str) -> str:
    return re.sub(r"^.*_(rb_init_avgpool|depthwise_conv_\d)$", r"\1", name)


def vela(vela_bin: str, model: Path, options: dict[str, str], out: Path) -> tuple[dict[str, str], list[dict[str, str]], str]:
    """Vela legacy's summary row, per-layer rows and CPU-operator count (empty on failure)."""
    run = subprocess.run([vela_bin, str(model), "--debug-force-legacy-core", *cli_flags(options),
                          "--verbose-performance", "--output-dir", str(out)], capture_output=True, text=True)
    summary = next(out.glob("*_summary_*.csv"), None)
    layers = next(out.glob("*_per-layer.csv"), None)
    if run.returncode != 0 or summary is None:
        return {}, [], run.stderr.strip().splitlines()[-1] if run.stderr.strip() else f"exit {run.returncode}"
    cpu = re.search(r"CPU operators = (\d+)", run.stdout)
    with open(summary) as f:
        row = next(csv.DictReader(f))
    rows: list[dict[str, str]] = []
    if layers is not None:
        with open(layers) as f:
            rows = [r for r in csv.DictReader(f) if r["NPU"] != "NPU"]
    return row, rows, cpu.group(1) if cpu else "?"


def compare(model: Path, vela_bin: str, search: str | None, tmp: Path) -> tuple[int, int]:
    """Print one model's rows; return (layers within 10%, layers matched)."""
    extra = {"search": search} if search else {}
    try:
        ours = npuplan.plan(model, **PERF, **extra)
        validate_plan(ours)
        size = npuplan.plan(model, **SIZE)
        validate_plan(size)
    except NpuplanError as exc:
        print(f"{model.stem}: npuplan failed: {exc}")
        return 0, 0
    v_row, v_layers, v_cpu = vela(vela_bin, model, PERF, tmp / model.stem / "perf")
    v_size, _, _ = vela(vela_bin, model, SIZE, tmp / model.stem / "size")
    report = build_report(ours)
    mine = {_key(layer.name): layer for layer in report.layers}
    v_total = v_row.get("cycles_total", "failed")
    print(f"{model.stem}: CPU ops ours {len(ours.lowered.cpu_ops)} legacy {v_cpu}; total cycles ours "
          f"{report.cycles_total:.0f} legacy {v_total}; Size SRAM KiB ours {size.sram_memory_used_bytes / 1024:.2f} "
          f"legacy {v_size.get('sram_memory_used', 'failed')}")
    within = matched = 0
    for row in v_layers:
        layer = mine.get(row["Name"])
        if layer is None:
            print(f"    {row['Name'][-44:]:44} legacy {float(row['NPU']):9.0f}  ours: no layer of that name")
            continue
        a, b = float(layer.npu_cycles), float(row["NPU"])
        ok = abs(a - b) <= 0.1 * b
        within, matched = within + ok, matched + 1
        print(f"    {row['Name'][-44:]:44} legacy {b:9.0f} ours {a:9.0f} {a / b if b else 0:6.3f}{'' if ok else '  > 10%'}")
    return within, matched


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("zoo", type=Path)
    parser.add_argument("--vela", required=True)
    parser.add_argument("--search", choices=("auto", "cascade", "pareto"))
    parser.add_argument("--model", action="append")
    args = parser.parse_args()
    models = sorted(args.zoo.glob("*.tflite"))
    if args.model:
        models = [m for m in models if m.stem in args.model]
    within = matched = 0
    with tempfile.TemporaryDirectory() as tmp:
        for model in models:
            w, m = compare(model, args.vela, args.search, Path(tmp))
            within, matched = within + w, matched + m
    print(f"per-layer NPU cycles within 10% of Vela legacy: {within}/{matched} matched layers")


if __name__ == "__main__":
    main()
