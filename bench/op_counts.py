"""Print npuplan's NPU/CPU operator counts next to Vela 5.2.0 legacy core's, per model and scenario.

Usage: python bench/op_counts.py [models_dir] [vela_jsonl]
Reads /work/shared (models and Vela figures) only if present.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from npuplan.hw.accelerator import accelerator
from npuplan.io.tflite import read_tflite
from npuplan.lowering import lower
from scenarios import SCENARIOS



def main() -> int:
    models = Path(sys.argv[1] if len(sys.argv) > 1 else "/work/shared/models")
    jsonl = Path(sys.argv[2] if len(sys.argv) > 2 else "/work/shared/bench/vela_5.2.0_public.jsonl")
    if not models.is_dir():
        print(f"no models at {models}")
        return 0
    vela: dict[tuple[str, str], tuple[int, int]] = {}
    if jsonl.is_file():
        for line in jsonl.read_text().splitlines():
            row = json.loads(line)
            if row.get("core") != "legacy":
                continue
            s = row
            vela[(row["model"], row["scenario"])] = (
                int(str(s.get("NPU operators", "-1")).split()[0]),
                int(str(s.get("CPU operators", "-1")).split()[0]),
            )
    print(f"{'model':26} {'scenario':36} {'NPU ours':>8} {'NPU vela':>8} {'CPU ours':>8} {'CPU vela':>8}")
    mismatches = 0
    for path in sorted(models.glob("*.tflite")):
        model = read_tflite(path)
        for scenario, options in SCENARIOS.items():
            lowered = lower(model, accelerator(options["accelerator_config"]))
            npu, cpu = len(lowered.npu_ops), len(lowered.cpu_ops)
            ref = vela.get((path.stem, scenario), (-1, -1))
            flag = "" if (npu, cpu) == ref else "  <-- differs"
            mismatches += bool(flag)
            print(f"{path.stem:26} {scenario:36} {npu:8} {ref[0]:8} {cpu:8} {ref[1]:8}{flag}")
    print(f"{mismatches} mismatching rows")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
