"""CPU time and size of npuplan's native weight codec against Vela's, side by side.

Per public model: the weight volumes the emitter encodes for it (one scenario; each distinct volume
once, as the emitter's memo does), captured from a real ``plan_and_emit`` run, then encoded one
after the other by Vela's ``npu_encode_weights`` (its C codec: brick order + compression) and by
``npuplan.codec.encode.encode_weights``, one run each, CPU seconds
(``time.process_time``) after one warm-up call each. Sizes: total stream bytes of each, and the
planner's size model (``cost.weights.estimate_volume_bytes``) for the same volumes. Vela's stream
is the reference for size (the hardware reads it); our stream must decode to the same values
(``tests/unit/emit/native``).

Prints one row per model and a total; asserts nothing.

Usage: python bench/codec_speed.py [--models DIR] [--model NAME ...] [--scenario NAME]
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
from scenarios import DUAL_CORE, SCENARIOS

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))

from npuplan.codec.weight_order import EncodingOrder  # noqa: E402
from npuplan.cost.weights import estimate_volume_bytes  # noqa: E402
from npuplan.api import plan_and_emit  # noqa: E402
from npuplan.emit import weights as emit_weights  # noqa: E402
from npuplan.codec.encode import encode_weights  # noqa: E402
from npuplan.emit.vela import quietly, vela_api  # noqa: E402
from npuplan.hw.accelerator import ACCELERATORS, accelerator  # noqa: E402

Call = tuple[Any, ...]  # Vela's npu_encode_weights arguments


def capture(model: Path, options: dict[str, str]) -> list[Call]:
    """The distinct ``npu_encode_weights`` argument tuples the emitter passes for ``model``."""
    calls: dict[tuple[object, ...], Call] = {}
    original = emit_weights.SliceMemo.encode

    def recording(self: emit_weights.SliceMemo, api: Any, args: Call) -> bytes:
        acc, volume, *rest = args
        key = (acc, volume.shape, hashlib.blake2b(volume.data, digest_size=16).digest(), *rest)
        calls.setdefault(key, (acc, volume.copy(), *rest))
        return original(self, api, args)

    emit_weights.SliceMemo.encode = recording  # type: ignore[method-assign]
    try:
        quietly(lambda: plan_and_emit(model, **options))
    finally:
        emit_weights.SliceMemo.encode = original  # type: ignore[method-assign]
    return list(calls.values())


def _ours(call: Call) -> bytes:
    acc, volume, dilation, bits, block_depth, depthwise, traversal = call
    arch = accelerator(_npuplan_name(acc))
    return encode_weights(volume, ofm_ublock_depth=arch.ofm_ublock.depth, ifm_ublock_depth=arch.ifm_ublock.depth,
                          dilation_xy=dilation, ifm_bits=bits, ofm_block_depth=block_depth, depthwise=depthwise,
                          part_kernel_first=traversal.name == "PART_KERNEL_FIRST")


def _npuplan_name(acc: Any) -> str:
    return next(a.name for a in ACCELERATORS.values() if a.vela_name == acc.name)


def _estimate(call: Call) -> int:
    acc, volume, dilation, bits, block_depth, depthwise, traversal = call
    order = EncodingOrder(block_depth, traversal.name == "PART_KERNEL_FIRST")
    return estimate_volume_bytes(volume, accelerator(_npuplan_name(acc)), order=order, ifm_bits=bits,
                                 depthwise=depthwise, dilation_xy=dilation)


def _timed(encode: Any, calls: list[Call]) -> tuple[float, int]:
    started = time.process_time()
    total = sum(len(encode(call)) for call in calls)
    return time.process_time() - started, total


def measure(calls: list[Call], api: Any) -> dict[str, float]:
    """CPU seconds and bytes of both codecs over ``calls``, and the size model's bytes."""
    warm = (calls[0][0], np.ones((8, 1, 1, 8), dtype=np.int16), *calls[0][2:5], False, api.NpuBlockTraversal.DEPTH_FIRST)
    api.npu_encode_weights(*warm)
    _ours(warm)
    vela_s, vela_b = _timed(lambda c: api.npu_encode_weights(*c), calls)
    ours_s, ours_b = _timed(_ours, calls)
    return dict(volumes=len(calls), values=sum(c[1].size for c in calls), vela_s=vela_s, ours_s=ours_s,
                vela_b=vela_b, ours_b=ours_b, est_b=sum(_estimate(c) for c in calls))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", type=Path, default=HERE.parent / "tests" / "data")
    parser.add_argument("--model", action="append", default=[])
    parser.add_argument("--scenario", default="u55_128_highend_shared_perf", choices=[*SCENARIOS, *DUAL_CORE])
    args = parser.parse_args()
    api = vela_api()
    options = {**SCENARIOS, **DUAL_CORE}[args.scenario]
    paths = sorted(args.models.glob("*.tflite"))
    if args.model:
        paths = [p for p in paths if p.stem in args.model]
    print(f"scenario {args.scenario}; CPU seconds of one run over each model's distinct weight volumes")
    header = (f"{'model':28s} {'volumes':>7s} {'values':>10s} {'vela s':>7s} {'ours s':>7s} {'speedup':>7s} "
              f"{'vela B':>9s} {'ours B':>9s} {'ours/vela':>9s} {'model B':>9s} {'ours/model':>10s}")
    print(header)
    totals: dict[str, float] = {}
    for path in paths:
        try:
            row = measure(capture(path, options), api)
        except Exception as error:  # a model the emitter refuses is a row, not a crash
            print(f"{path.stem:28s} not measured: {type(error).__name__}: {error}")
            continue
        for key, value in row.items():
            totals[key] = totals.get(key, 0) + value
        _print_row(path.stem, row)
    if totals:
        _print_row("total", totals)


def _print_row(name: str, r: dict[str, float]) -> None:
    print(f"{name:28s} {int(r['volumes']):7d} {int(r['values']):10d} {r['vela_s']:7.3f} {r['ours_s']:7.3f} "
          f"{r['vela_s'] / max(r['ours_s'], 1e-9):6.2f}x {int(r['vela_b']):9d} {int(r['ours_b']):9d} "
          f"{r['ours_b'] / max(r['vela_b'], 1):9.4f} {int(r['est_b']):9d} {r['ours_b'] / max(r['est_b'], 1):10.4f}")


if __name__ == "__main__":
    main()
