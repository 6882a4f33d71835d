"""npuplan's plans against the physical floor: every MAC at the array's peak, every weight byte once.

Usage: python bench/physical_floor.py [--models DIR] [--scenario NAME] [--model NAME ...]

The floor of a network, per NPU op of npuplan's plan: ``max(MACs / peak MACs per cycle, encoded
weight bytes / bytes per cycle of the memory the weights are stored in)``, summed over the ops.
What is counted, exactly:
  MACs         the cost model's ``nn_macs`` of the op (convolutions, depthwise, fully connected,
               matmul, pooling as the cost model counts them; elementwise ops count 0)
  peak         ``macs_per_cycle x cores`` of the accelerator (u55-128: 128 per cycle)
  weight bytes the op's whole encoded stream once (weights and scales, with the stream's
               alignment: ``cost.weights.encoded_weight_size(...).stream_bytes``), over
               ``arch.bytes_per_cycle(arch.const_area)`` (u55 High_End_Embedded Shared_Sram: the
               off-chip flash)
  not counted  feature-map traffic, the pipeline's fill and drain, CPU operators, the DMA's
               latencies
npuplan's figure is its plan's ``cycles_total`` (the summary CSV's); Vela's is the better of its two
cores' ``cycles_total`` from ``bench/reference/vela_5.2.0_public.jsonl`` (same scenario), over the
same floor. Prints per model the floor, the two plans and their ratios, then the geomeans.
Asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

from scenarios import SCENARIOS

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))

from npuplan.api import plan  # noqa: E402
from npuplan.cost.weights import encoded_weight_size  # noqa: E402
from npuplan.report import build_report  # noqa: E402
from npuplan.report.summary import summary_row  # noqa: E402

REFERENCE = HERE / "reference" / "vela_5.2.0_public.jsonl"


def floor_cycles(result) -> tuple[float, int, int]:  # type: ignore[no-untyped-def]
    """``(floor cycles, MACs, encoded weight bytes)`` of a plan's NPU ops."""
    arch = result.arch
    peak = arch.accelerator.macs_per_cycle * arch.accelerator.cores
    weight_rate = arch.bytes_per_cycle(arch.const_area)
    total, macs_all, bytes_all = 0.0, 0, 0
    for scheduled in result.schedule.ops:
        macs = int(getattr(scheduled.cost, "nn_macs", 0) or 0)
        weight_bytes = encoded_weight_size(scheduled.op, arch.accelerator).stream_bytes
        total += max(macs / peak, weight_bytes / weight_rate)
        macs_all, bytes_all = macs_all + macs, bytes_all + weight_bytes
    return total, macs_all, bytes_all


def vela_best(scenario: str) -> dict[str, float]:
    """model -> the better Vela core's cycles_total in ``scenario``."""
    best: dict[str, float] = {}
    for line in REFERENCE.read_text().splitlines():
        rec = json.loads(line)
        if rec["scenario"] == scenario and rec.get("rc") == 0 and "summary" in rec:
            cycles = float(rec["summary"]["cycles_total"])
            best[rec["model"]] = min(best.get(rec["model"], cycles), cycles)
    return best


def geomean(values: list[float]) -> float:
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", type=Path, default=Path("/work/shared/models"))
    parser.add_argument("--scenario", default="u55_128_highend_shared_perf", choices=list(SCENARIOS))
    parser.add_argument("--model", nargs="*")
    args = parser.parse_args()
    vela = vela_best(args.scenario)
    print(f"{'model':<24} {'MACs':>12} {'weight B':>10} {'floor cyc':>12} {'ours cyc':>12} {'ours/floor':>10} "
          f"{'vela cyc':>12} {'vela/floor':>10}")
    ours_ratios, vela_ratios = [], []
    for model in sorted(args.models.glob("*.tflite")):
        if args.model and model.stem not in args.model:
            continue
        result = plan(model, **SCENARIOS[args.scenario])
        floor, macs, weight_bytes = floor_cycles(result)
        cycles = float(summary_row(build_report(result))["cycles_total"])
        theirs = vela.get(model.stem)
        ours_ratios.append(cycles / floor)
        vela_text = ratio_text = "x"
        if theirs:
            vela_ratios.append(theirs / floor)
            vela_text, ratio_text = f"{theirs:.0f}", f"{theirs / floor:.3f}"
        print(f"{model.stem:<24} {macs:>12} {weight_bytes:>10} {floor:>12.0f} {cycles:>12.0f} {cycles / floor:>10.3f} "
              f"{vela_text:>12} {ratio_text:>10}", flush=True)
    print(f"\n{args.scenario}: geomean over the floor: npuplan {geomean(ours_ratios):.3f}x "
          f"({len(ours_ratios)} models), better Vela core {geomean(vela_ratios):.3f}x ({len(vela_ratios)} models)")


if __name__ == "__main__":
    main()
