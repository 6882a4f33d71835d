"""Print npuplan's schedule figures next to Vela 5.2.0 legacy core's, per model and scenario.

Usage: python bench/schedule_compare.py [MODEL_DIR]  (reads /work/shared only if present)
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path

from npuplan.api import make_options
from npuplan.errors import NpuplanError
from npuplan.hw import build_architecture
from npuplan.io.tflite import read_tflite
from npuplan.lowering import lower
from npuplan.schedule import plan_schedule
from scenarios import BUDGET_256K
from scenarios import SCENARIOS as PUBLIC

SCENARIOS = {**PUBLIC, **BUDGET_256K}
REFERENCE = Path("/work/shared/bench/vela_5.2.0_public.jsonl")


def vela_figures() -> dict[tuple[str, str], dict[str, float]]:
    found: dict[tuple[str, str], dict[str, float]] = {}
    if not REFERENCE.exists():
        return found
    for line in REFERENCE.read_text().splitlines():
        row = json.loads(line)
        if row.get("core") != "legacy" or row.get("rc") != 0:
            continue
        s = row["summary"]
        found[(row["scenario"], row["model"])] = {
            "cycles": float(s.get("cycles_total", s.get("inference_time", 0))),
            "sram": float(s["sram_memory_used"]) * 1024,
        }
    return found


def main() -> None:
    model_dir = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("/work/shared/models")
    if not model_dir.exists():
        model_dir = Path("tests/data")
    vela = vela_figures()
    for scenario, kwargs in SCENARIOS.items():
        options = make_options(**kwargs)
        arch = build_architecture(options)
        ratios = []
        print(f"\n== {scenario}")
        print(f"{'model':24} {'cycles':>10} {'vela':>10} {'ratio':>6} {'sram':>9} {'vela':>9} {'secs':>6}")
        for path in sorted(model_dir.glob("*.tflite")):
            lowered = lower(read_tflite(str(path)), arch.accelerator)
            start = time.perf_counter()
            try:
                sched = plan_schedule(lowered, arch, options)
            except NpuplanError as exc:
                print(f"{path.stem:24} infeasible: {exc}")
                continue
            secs = time.perf_counter() - start
            cycles = sum(float(o.cost.total_cycles) for o in sched.ops if o.cost is not None)
            ref = vela.get((scenario, path.stem), {})
            ratio = cycles / ref["cycles"] if ref.get("cycles") else float("nan")
            if ref.get("cycles"):
                ratios.append(abs(ratio - 1))
            print(f"{path.stem:24} {cycles:10.0f} {ref.get('cycles', 0):10.0f} {ratio:6.3f} "
                  f"{sched.sram_peak_bytes:9d} {ref.get('sram', 0):9.0f} {secs:6.2f}")
        if ratios:
            print(f"median |cycles error| {statistics.median(ratios):.3f}, max {max(ratios):.3f}")


if __name__ == "__main__":
    main()
