"""The native emitting backend against Vela's API, file by file (issue 12's emit time).

Per model and scenario: one deployable plan (the one Vela's API can express: ``plan_and_emit`` with
the Vela backend, which keeps on the CPU an operator whose operations it cannot carry), emitted
by both backends; both files are replayed by ``npuplan validate``'s decoder and compared:

- ``ops``: the streams' operations and DMAs, paired in order, every decoded field equal (kind,
  feature-map regions, tile bases, shapes and strides, kernel, block, output-stage registers,
  DMA ranges, wait counts) except what the weight encodings decide by design: the weight and
  scale ranges, the DMAs that move them, and addresses in the flash (constants and tables come
  after the weight records there);
  ``but for addresses``: equal with every address blanked (where a buffer moved);
- ``waits``: streams whose waits (their outstanding counts, in order) are the same; where the
  layouts differ (a buffer re-allocated for the real weight sizes), the dependencies differ too;
- ``weights``: each operation's weight stream, decoded by npuplan's decoder from both files
  (through the DMA that filled its buffer when it reads one), equal value for value;
- ``scales``: each operation's bias/scale records, byte-identical;
- flash bytes of each, and each backend's emit CPU seconds (``Emitted.emit_seconds`` is wall
  time; the step clock's CPU seconds are summed).

Prints one row per run and the totals; asserts nothing. The Vela side needs the deploy extra.

Usage: python bench/native_vs_vela.py [--models DIR ...] [--scenario NAME ...] [--limit N]
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from scenarios import SCENARIOS

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))

from npuplan.emit import emit_tflite, plan_and_emit  # noqa: E402
from npuplan.emit.backend import EmitBackend  # noqa: E402
from npuplan.errors import NpuplanError  # noqa: E402
from npuplan.regstream import validate_tflite  # noqa: E402
from npuplan.regstream.events import INTERNAL_REGION, DmaEvent, NpuEvent, Range, WaitEvent  # noqa: E402
from npuplan.regstream.tflite_file import ethos_u_payloads  # noqa: E402

MODELS = HERE.parent / "tests" / "data"


@dataclass
class Tally:
    runs: int = 0
    errors: int = 0
    ops: int = 0
    ops_equal: int = 0
    weights: int = 0
    weights_equal: int = 0
    scales_equal: int = 0
    placeless: int = 0
    waits: int = 0
    waits_equal: int = 0
    flash: list[tuple[int, int]] | None = None


def _flash(data: bytes) -> list[bytes]:
    """Each ethos-u operator's flash tensor bytes (its input 1), in operator order."""
    return [flash for _, flash in ethos_u_payloads(data)]


def _source(events: list[Any], index: int, r: Range) -> Range:
    """Where the bytes an operation reads at ``r`` came from: the flash range of the last DMA that
    wrote them before operation ``index``, else ``r`` itself."""
    found = r
    for e in events[:index]:
        if isinstance(e, DmaEvent) and e.dst.region == r.region and e.dst.address <= r.address < e.dst.address + e.dst.length:
            found = Range(e.src.region, e.src.address + r.address - e.dst.address, r.length)
    return found


def _neutral(e: Any) -> Any:
    """An event with what the weight encoding decides blanked: the weight and scale ranges (both cores'), the
    flash addresses (records, constants and tables follow the weight streams, whose sizes differ)
    and the weight DMAs' ranges (their buffer slots follow the record sizes)."""
    blank = Range(0, 0, 0)
    if isinstance(e, NpuEvent):
        flash = {"ifm": e.ifm, "ifm2": e.ifm2}
        fms = {k: replace(fm, bases=(0, 0, 0, 0)) for k, fm in flash.items() if fm is not None and fm.region == 0}
        ranges = {k: None if r is None else replace(blank, region=r.region)
                  for k, r in (("weights", e.weights), ("scales", e.scales), ("weights1", e.weights1),
                               ("scales1", e.scales1))}
        return replace(e, **ranges, **fms)
    if isinstance(e, DmaEvent) and e.src.region == 0:
        if e.dst.region == INTERNAL_REGION:  # a lookup table
            return replace(e, src=replace(e.src, address=0))
        return replace(e, src=replace(blank, region=0), dst=replace(blank, region=e.dst.region))
    return e


def _placeless(e: Any) -> Any:
    """``_neutral(e)`` with every address blanked too (what remains: kinds, regions, shapes,
    strides, kernels, blocks, output stages, DMA lengths of feature maps and tables)."""
    e = _neutral(e)
    if isinstance(e, NpuEvent):
        fms = {k: replace(fm, bases=(0, 0, 0, 0)) for k, fm in (("ifm", e.ifm), ("ifm2", e.ifm2), ("ofm", e.ofm))
               if fm is not None}
        return replace(e, **fms)
    if isinstance(e, DmaEvent):
        return replace(e, src=replace(e.src, address=0), dst=replace(e.dst, address=0))
    return e


def compare(model: Path, options: dict[str, Any], tally: Tally) -> str:
    from npuplan.codec.decode import decode_weights

    tally.runs += 1
    try:
        # the plan Vela's API can express (an op it cannot carry goes to the CPU), emitted by both
        planned, ref = plan_and_emit(model, backend=EmitBackend.VELA, **options)
        ours = emit_tflite(planned, backend=EmitBackend.NPUPLAN)
    except NpuplanError as error:
        tally.errors += 1
        return f"error: {error}"
    a, b = validate_tflite(ours.data), validate_tflite(ref.data)
    flash_a, flash_b = _flash(ours.data), _flash(ref.data)
    ops = equal = placeless = weights = weights_equal = scales_equal = waits = waits_equal = 0
    for sa, sb, fa, fb in zip(a.streams, b.streams, flash_a, flash_b):
        ea, eb = list(sa.events), list(sb.events)
        # operations and DMAs paired in order; the waits apart (their places follow the addresses)
        for kind in (NpuEvent, DmaEvent):
            xa = [(i, e) for i, e in enumerate(ea) if isinstance(e, kind)]
            xb = [(i, e) for i, e in enumerate(eb) if isinstance(e, kind)]
            ops += max(len(xa), len(xb))
            equal += sum(_neutral(x) == _neutral(y) for (_, x), (_, y) in zip(xa, xb))
            placeless += sum(_placeless(x) == _placeless(y) for (_, x), (_, y) in zip(xa, xb))
        wa = [e.outstanding for e in ea if isinstance(e, WaitEvent)]
        wb = [e.outstanding for e in eb if isinstance(e, WaitEvent)]
        waits, waits_equal = waits + 1, waits_equal + (wa == wb)
        npu_a = [(i, e) for i, e in enumerate(ea) if isinstance(e, NpuEvent)]
        npu_b = [(i, e) for i, e in enumerate(eb) if isinstance(e, NpuEvent)]
        for (i, x), (j, y) in zip(npu_a, npu_b):
            if not (x.weights and y.weights and x.scales and y.scales):
                continue
            weights += 1
            wa_, wb_ = _source(ea, i, x.weights), _source(eb, j, y.weights)
            sca, scb = _source(ea, i, x.scales), _source(eb, j, y.scales)
            va = decode_weights(fa[wa_.address:wa_.address + wa_.length])
            vb = decode_weights(fb[wb_.address:wb_.address + wb_.length])
            weights_equal += va.shape == vb.shape and bool((va == vb).all())
            scales_equal += fa[sca.address:sca.address + sca.length] == fb[scb.address:scb.address + scb.length]
    tally.ops += ops
    tally.ops_equal += equal
    tally.weights += weights
    tally.weights_equal += weights_equal
    tally.scales_equal += scales_equal
    cpu_a, cpu_b = sum(ours.step_cpu_seconds.values()), sum(ref.step_cpu_seconds.values())
    tally.waits += waits
    tally.waits_equal += waits_equal
    tally.placeless += placeless
    return (f"ops {equal}/{ops} (but for addresses {placeless})  waits {waits_equal}/{waits}  weights {weights_equal}/{weights}  scales {scales_equal}/{weights}  "
            f"flash {ours.flash_bytes}/{ref.flash_bytes} ({ours.flash_bytes / max(ref.flash_bytes, 1):.3f})  "
            f"emit CPU s {cpu_a:.3f} vs {cpu_b:.3f}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--models", action="append", default=None)
    parser.add_argument("--scenario", action="append", choices=list(SCENARIOS))
    parser.add_argument("--limit", type=int, default=0, help="at most N models per directory")
    args = parser.parse_args()
    tally = Tally()
    for directory in args.models or [str(MODELS)]:
        models = sorted(Path(directory).glob("*.tflite"))
        models = models[:args.limit] if args.limit else models
        for scenario in args.scenario or list(SCENARIOS):
            for model in models:
                print(f"{model.stem:32} {scenario:34} {compare(model, SCENARIOS[scenario], tally)}", flush=True)
    print(f"\n{tally.runs} runs, {tally.errors} errors; operations and DMAs equal {tally.ops_equal}/{tally.ops} (but for "
          f"addresses {tally.placeless}); "
          f"streams with the same waits {tally.waits_equal}/{tally.waits}; weight "
          f"streams decoding equal {tally.weights_equal}/{tally.weights}; scale records equal "
          f"{tally.scales_equal}/{tally.weights}")


if __name__ == "__main__":
    main()
