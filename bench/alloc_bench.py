"""Tensor allocators against the live-bytes lower bound and Vela 5.2.0's legacy core.

Usage:
  python bench/alloc_bench.py [MODEL_DIR]                    # u55-128 Shared_Sram Performance table
  python bench/alloc_bench.py --all-scenarios --validate [MODEL_DIR]
  python bench/alloc_bench.py --random 200                   # seeded random live ranges

The table plans every model with HillClimb (the default) and allocates that plan's live ranges with
each allocator, so the three peaks are for the same buffers. ``lower`` is the most bytes live at
once, ``vela`` the legacy core's ``sram_memory_used``; ``alloc s`` is the HillClimb allocator's own
time and ``compile s`` the whole ``npuplan.plan`` call. ``--all-scenarios --validate`` plans every
model in the three public scenarios and replays each command stream, in memory and again from the
written plan JSON. ``--random N`` allocates N
seeded random instances (5-120 ranges) with HillClimb from the greedy start only and with restarts.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import npuplan
from npuplan.commands import validate_plan
from npuplan.commands.addresses import allocate_schedule_buffers, graph_lifetimes
from npuplan.commands.layout import buffer_specs
from npuplan.commands.plan_file import validate_plan_file
from npuplan.errors import NpuplanError
from npuplan.hw.memory import MemArea
from npuplan.memory import HillClimbSettings, allocate
from npuplan.options import TensorAllocator
from scenarios import SCENARIOS
from npuplan.report import write_reports

REFERENCE = Path(__file__).resolve().parent / "reference"
MAIN_SCENARIO = "u55_128_highend_shared_perf"


def scenarios() -> dict[str, dict[str, str]]:
    """The public scenarios as plan kwargs."""
    return dict(SCENARIOS)


def vela_sram_kib(scenario: str) -> dict[str, float]:
    """Legacy core's ``sram_memory_used`` (KiB) per model."""
    found: dict[str, float] = {}
    path = REFERENCE / "vela_5.2.0_public.jsonl"
    if not path.exists():
        return found
    for line in path.read_text().splitlines():
        row = json.loads(line)
        if row.get("core") == "legacy" and row.get("scenario") == scenario and row.get("rc") == 0:
            found[row["model"]] = float(row["summary"]["sram_memory_used"])
    return found


def allocator_peaks(plan: Any) -> dict[TensorAllocator, int]:
    """SRAM peak of each allocator on the plan's own buffers and live ranges (bytes)."""
    specs = buffer_specs(plan.schedule, plan.lowered, plan.arch)[0]
    lifetimes = graph_lifetimes(plan.commands, plan.lowered)
    return {a: allocate_schedule_buffers(plan.schedule, plan.lowered, specs, lifetimes, allocator=a,
                                         cpu_tensor_alignment=plan.options.cpu_tensor_alignment_bytes)
            .peak_bytes(MemArea.SRAM) for a in TensorAllocator}


def table(model_dir: Path) -> None:
    kwargs = scenarios()[MAIN_SCENARIO]
    vela = vela_sram_kib(MAIN_SCENARIO)
    header = (f"{'model':24} {'HillClimb':>10} {'Greedy':>10} {'Linear':>10} {'lower':>10} {'above%':>7} "
              f"{'vela':>10} {'alloc s':>8} {'compile s':>9} {'share%':>7}")
    print(f"== {MAIN_SCENARIO} (KiB)\n{header}")
    models = sorted(model_dir.glob("*.tflite"))
    at_most_vela = near_bound = 0
    alloc_total = compile_total = 0.0
    for path in models:
        plan = npuplan.plan(path, **kwargs)
        compile_s = plan.compile_seconds
        assert plan.allocation is not None
        alloc_s = plan.allocation.allocation_seconds
        peaks = allocator_peaks(plan)
        hill = plan.sram_memory_used_bytes
        lower = plan.allocation.lower_bound_bytes(MemArea.SRAM)
        above = 100.0 * (hill / lower - 1) if lower else 0.0
        ref = vela.get(path.stem)
        at_most_vela += ref is not None and hill / 1024 <= ref
        near_bound += above <= 2.0
        alloc_total += alloc_s
        compile_total += compile_s
        print(f"{path.stem:24} {hill / 1024:10.2f} {peaks[TensorAllocator.GREEDY] / 1024:10.2f} "
              f"{peaks[TensorAllocator.LINEAR] / 1024:10.2f} {lower / 1024:10.2f} {above:7.2f} "
              f"{ref if ref is not None else float('nan'):10.2f} {alloc_s:8.3f} {compile_s:9.3f} "
              f"{100 * alloc_s / compile_s:7.2f}")
    n = len(models)
    print(f"HillClimb <= Vela legacy on {at_most_vela}/{n}")
    print(f"within 2% of lower bound on {near_bound}/{n}")
    print(f"allocation time {alloc_total:.3f} s of {compile_total:.3f} s compile "
          f"({100 * alloc_total / max(compile_total, 1e-9):.2f}%)")


def _validate_written(plan: Any) -> None:
    """Write the plan's reports and replay the plan JSON alone (``npuplan validate PLAN.json``)."""
    with tempfile.TemporaryDirectory() as out:
        write_reports(plan, out)
        validate_plan_file(Path(out) / f"{plan.network}_plan.json")


def all_scenarios(model_dir: Path, *, validate: bool) -> None:
    passed = total = 0
    for scenario, kwargs in scenarios().items():
        for path in sorted(model_dir.glob("*.tflite")):
            total += 1
            started = time.perf_counter()
            try:
                plan = npuplan.plan(path, **kwargs)
                if validate:
                    validate_plan(plan)
                    _validate_written(plan)
            except NpuplanError as error:
                print(f"FAIL {scenario:36} {path.stem:24} {error}")
                continue
            passed += 1
            assert plan.allocation is not None
            lower = plan.allocation.lower_bound_bytes(MemArea.SRAM)
            above = 100.0 * (plan.sram_memory_used_bytes / lower - 1) if lower else 0.0
            print(f"ok   {scenario:36} {path.stem:24} sram {plan.sram_memory_used_bytes / 1024:9.2f} KiB "
                  f"({above:5.2f}% above {lower / 1024:9.2f}) {len(plan.commands):5d} commands "
                  f"{time.perf_counter() - started:6.2f} s")
    what = "planned and validated" if validate else "planned"
    print(f"{what}: {passed}/{total}")


def random_suite(count: int) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from bench.memory_instances import random_instances

    instances = random_instances(count)
    for label, settings in (("greedy start only", HillClimbSettings(restarts=0)), ("with restarts", HillClimbSettings())):
        started = time.perf_counter()
        above = [allocate(r, allocator=TensorAllocator.HILLCLIMB, hillclimb=settings).overhead_fraction for r in instances]
        print(f"HillClimb {label:18}: mean {100 * sum(above) / count:.3f}% above the bound, max {100 * max(above):.2f}%, "
              f"within 2% on {sum(a <= 0.02 for a in above)}/{count}, {time.perf_counter() - started:.2f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model_dir", nargs="?", default=str(Path(__file__).resolve().parent.parent / "tests" / "data"))
    parser.add_argument("--all-scenarios", action="store_true", help="plan every model in every public scenario")
    parser.add_argument("--validate", action="store_true", help="with --all-scenarios: replay every plan")
    parser.add_argument("--random", type=int, default=0, metavar="N", help="allocate N random instances instead")
    args = parser.parse_args()
    if args.random:
        random_suite(args.random)
        return
    model_dir = Path(args.model_dir)
    if not model_dir.exists():
        model_dir = Path(__file__).resolve().parents[1] / "tests" / "data"
    if args.all_scenarios:
        all_scenarios(model_dir, validate=args.validate)
    else:
        table(model_dir)


if __name__ == "__main__":
    main()
