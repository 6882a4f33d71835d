"""Differential check of the native register command stream generator (``npuplan.emit.native``)
against Vela's API on the very operations the emitter builds.

For each model x scenario: plan and emit (``plan_and_emit``), capture each NPU partition's
operations and the emitter's block-config probes, then run Vela's
``npu_generate_register_command_stream`` and the native one on the same objects and compare them
command by command (``npuplan.regstream.compare``: the same operations, DMA starts and waits with
their parameters, and at every operation the value of every register Vela has set, the
output-stage registers included), whether the words are identical (also once the output-stage
registers are dropped), and whether they are Vela's word for word when the
native generator is given Vela's output-stage values (``vela_differential.with_vela_output_stage``); compare ``find_block_configs`` with
``npu_find_block_configs`` on every probe and the driver payloads byte for byte. Vela is the
reference (its streams have run on hardware). A model that fails to plan or emit is a row.
Prints per model the operations matching, whether the words are identical, the probes matching,
both generators' CPU seconds and the first mismatch; a summary at the end. Asserts nothing.

Usage:
  python bench/native_stream_compare.py                      # public models, every scenario
  python bench/native_stream_compare.py --zoos               # and the generated zoos
  python bench/native_stream_compare.py --only-zoos          # the generated zoos only
  python bench/native_stream_compare.py MODEL.tflite ... [--scenario NAME ...]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from scenarios import BUDGET_256K, DUAL_CORE, SCENARIOS

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))

from npuplan.emit.native.api import create_driver_payload, find_block_configs  # noqa: E402
from vela_differential import (SET_BY_OUTPUT_STAGE, Partition, Probe, both_streams, captured,  # noqa: E402
                               probing, with_vela_output_stage)
from npuplan.emit.vela import quietly, vela_api  # noqa: E402
from npuplan.errors import NpuplanError  # noqa: E402
from npuplan.regstream.compare import compare  # noqa: E402

MODELS = HERE.parent / "tests" / "data"  # the bundled models (--models for others)
ZOOS = [Path("/work") / name for name in ("zoo", "zoo2", "zoo3", "zoo_random3", "zoo_random5", "zoo_lstm")]
# The smallest accelerator, which the scenario list lacks
U55_32 = {"u55_32_highend_shared_perf": dict(accelerator_config="ethos-u55-32",
                                             system_config="Ethos_U55_High_End_Embedded",
                                             memory_mode="Shared_Sram", optimise="Performance")}
ALL_SCENARIOS = {**SCENARIOS, **BUDGET_256K, **DUAL_CORE, **U55_32}


@dataclass
class Row:
    """One model x scenario: ``counts`` of operations, commands, partitions, probes and payloads
    (each total and matching), both generators' CPU seconds, the first mismatch or the error."""

    model: str
    scenario: str
    counts: Counter[str] = field(default_factory=Counter)
    vela_seconds: float = 0.0
    native_seconds: float = 0.0
    vela_block_seconds: float = 0.0  # npu_find_block_configs over the probes, again (CPU)
    native_block_seconds: float = 0.0
    first_mismatch: str = ""
    error: str = ""


def _probe_mismatch(row: Row, probe: Probe) -> str | None:
    start = time.process_time()
    quietly(vela_api().npu_find_block_configs, probe.operation, probe.accelerator)
    middle = time.process_time()
    mine = find_block_configs(probe.operation, probe.accelerator)
    row.vela_block_seconds += middle - start
    row.native_block_seconds += time.process_time() - middle
    if mine == probe.blocks:
        return None
    extra, missing = sorted(set(mine) - set(probe.blocks)), sorted(set(probe.blocks) - set(mine))
    return (f"block configs of a {probe.operation.op_type.name} probe: {len(mine)} vs Vela's {len(probe.blocks)} "
            f"(extra {extra[:3]}, missing {missing[:3]}{', order differs' if not extra and not missing else ''})")


def _partition(row: Row, index: int, part: Partition) -> None:
    pair = both_streams(part)
    c = compare(pair.vela, pair.native)  # every register, the output stage's (native_outstage's) too
    row.counts.update(partitions=1, operations=c.operations, matching=c.matching_operations, commands=c.commands,
                      matching_commands=c.matching, identical=int(c.identical),
                      outside_stage=int(c.identical_outside_ignored),
                      with_stage=int(with_vela_output_stage(part, pair.vela) == pair.vela))
    row.vela_seconds += pair.vela_seconds
    row.native_seconds += pair.native_seconds
    if c.first_mismatch and not row.first_mismatch:
        row.first_mismatch = f"partition {index}: {c.first_mismatch}"
    vela = bytes(quietly(vela_api().npu_create_driver_payload, pair.vela, part.accelerator))
    row.counts["payloads"] += vela == create_driver_payload(pair.vela, part.accelerator)


def check(model: Path, scenario: str) -> Row:
    """The comparison of one model in one scenario."""
    row = Row(model.stem, scenario)
    probes: list[Probe] = []
    try:
        with probing(probes):
            parts = captured(model, **ALL_SCENARIOS[scenario])
    except (NpuplanError, ValueError, AssertionError) as error:
        row.error = f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"[:160]
        return row
    for index, part in enumerate(parts):
        try:
            _partition(row, index, part)
        except Exception as error:  # noqa: BLE001 - a generator that crashes is a row
            row.first_mismatch = row.first_mismatch or f"partition {index}: {type(error).__name__}: {error}"[:200]
    row.counts["probes"] = len(probes)
    for probe in probes:
        why = _probe_mismatch(row, probe)
        row.counts["matching_probes"] += why is None
        if why and not row.first_mismatch:
            row.first_mismatch = why
    return row


def _figures(n: Counter[str]) -> str:
    return (f"ops {n['matching']:5}/{n['operations']:<5} cmds {n['matching_commands']:5}/{n['commands']:<5} "
            f"identical {n['identical']}/{n['partitions']} (outside the output stage {n['outside_stage']}, "
            f"given Vela's output stage {n['with_stage']}) "
            f"probes {n['matching_probes']:3}/{n['probes']:<3} payloads {n['payloads']}/{n['partitions']} identical")


def _print_row(r: Row) -> None:
    if r.error:
        print(f"{r.model:32} {r.scenario:36} not emitted: {r.error}", flush=True)
        return
    speed = r.vela_seconds / r.native_seconds if r.native_seconds else float("nan")
    print(f"{r.model:32} {r.scenario:36} {_figures(r.counts)} vela {r.vela_seconds:6.3f}s native "
          f"{r.native_seconds:6.3f}s ({speed:4.1f}x) blocks vela {r.vela_block_seconds:6.3f}s native "
          f"{r.native_block_seconds:6.3f}s{'  FIRST MISMATCH: ' + r.first_mismatch if r.first_mismatch else ''}",
          flush=True)


def _summary(rows: list[Row], seconds: float) -> None:
    done = [r for r in rows if not r.error]
    total: Counter[str] = sum((r.counts for r in done), Counter())
    clean = sum(1 for r in done if not r.first_mismatch and r.counts["matching"] == r.counts["operations"])
    vela, native = sum(r.vela_seconds for r in done), sum(r.native_seconds for r in done)
    print(f"\n{len(rows)} runs, {len(rows) - len(done)} not emitted; {clean}/{len(done)} runs fully matching; "
          f"{_figures(total)}")
    vb, nb = sum(r.vela_block_seconds for r in done), sum(r.native_block_seconds for r in done)
    print(f"generator CPU seconds: Vela {vela:.2f}, native {native:.2f} ({vela / native if native else 0:.1f}x faster); "
          f"block configs: Vela {vb:.2f}, native {nb:.2f} ({vb / nb if nb else 0:.1f}x faster); wall {seconds:.0f}s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("models", nargs="*", type=Path)
    parser.add_argument("--scenario", action="append", choices=sorted(ALL_SCENARIOS))
    parser.add_argument("--zoos", action="store_true", help="also every model of the generated zoos")
    parser.add_argument("--only-zoos", action="store_true", help="the zoos without the public models")
    parser.add_argument("--zoo-scenarios", action="append", choices=sorted(ALL_SCENARIOS),
                        help="scenarios for the zoo models (default: all)")
    args = parser.parse_args()
    vela_api()
    runs: list[tuple[Path, list[str]]] = []
    scenarios = args.scenario or list(ALL_SCENARIOS)
    if not args.only_zoos:
        runs += [(model, scenarios) for model in args.models or sorted(MODELS.glob("*.tflite"))]
    if args.zoos or args.only_zoos:
        for zoo in ZOOS:
            runs += [(m, args.zoo_scenarios or scenarios) for m in sorted(zoo.glob("*.tflite"))]
    started = time.perf_counter()
    rows = []
    for model, names in runs:
        for name in names:
            rows.append(check(model, name))
            _print_row(rows[-1])
    _summary(rows, time.perf_counter() - started)


if __name__ == "__main__":
    main()
