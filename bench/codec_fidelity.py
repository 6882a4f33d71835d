"""How close the cost model's weight-stream sizes are to the real codec (Vela 5.2.0's encoder).

Two measurements, both printing est/real (our estimate over ``npu_encode_weights``' bytes):

1. A seeded sweep of weight volumes: shapes (OFM 1-512, IFM depth 1-512, kernels 1x1, 3x3, 5x5,
   1xk, depthwise, dilation 2), value distributions (normal of several widths, uniform, sparse,
   heavy-tailed "trained-like" per-channel scaled, zero points left in), OFM block depths,
   traversals (depth-first, part-kernel-first), 8/16-bit IFMs and the accelerators U55-32/64/128/
   256 and U65-256/512 (U65-512 per core: channels ``core::2``, block depth halved, as Vela does).
   Per band of stream size (weights before padding): median, p10, p90, min and max of est/real.
2. The real models: every weighted op of each ``*.tflite`` as npuplan lowers and plans it (one
   scenario per accelerator), each slice the plan cut it in encoded with the block depth and
   traversal the planner chose (as ``emit.weights`` calls the API), totals per model.

The real codec is the reference (it is what the hardware reads). ``--src DIR`` measures another
tree's estimate (e.g. main's, before a change); trees without ``EncodingOrder`` are measured with
their histogram estimate (the block config ignored). Prints figures; asserts nothing.

Usage: python bench/codec_fidelity.py [--cases N] [--seed S] [--src DIR] [--zoo DIR ...]
                                      [--scenario NAME ...] [--no-sweep] [--no-models]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
BANDS = ((0, 256), (256, 1024), (1024, 4096), (4096, 65536), (65536, 1 << 40))
ACCELERATORS = ("ethos-u55-32", "ethos-u55-64", "ethos-u55-128", "ethos-u55-256", "ethos-u65-256", "ethos-u65-512")
MODEL_SCENARIOS = ("u55_128_highend_shared_perf", "u55_64_deep_shared_size", "u65_256_highend_dedicated384k_perf")


def _vela_accelerator(api, name: str):
    return getattr(api.NpuAccelerator, "Ethos_" + name.removeprefix("ethos-").replace("-", "_").upper())


def _values(rng: np.random.Generator, shape: tuple[int, ...], kind: str) -> np.ndarray:
    """Signed weights (zero point removed) of one distribution, clipped to what the codec takes."""
    if kind.startswith("normal"):
        v = rng.normal(0, float(kind[6:]), size=shape)
    elif kind == "uniform":
        v = rng.integers(-127, 128, size=shape)
    elif kind == "sparse":
        v = rng.normal(0, 20, size=shape) * (rng.random(shape) < rng.choice([0.1, 0.3, 0.5]))
    elif kind == "trained":  # per output channel scale, heavy tails
        scale = np.exp(rng.normal(np.log(20), 0.6, size=(shape[0],) + (1,) * (len(shape) - 1)))
        v = rng.standard_t(3, size=shape) * scale
    elif kind == "zero_point":  # uint8 weights less a zero point far from their mean
        zp = int(rng.integers(90, 170))
        v = np.clip(np.round(rng.normal(128, 25, size=shape)), 0, 255) - zp
    else:
        raise ValueError(kind)
    return np.clip(np.round(v), -255 if kind == "zero_point" else -127, 127).astype(np.int16)


def sweep_cases(rng: np.random.Generator, n: int):
    """Seeded weight volumes with their encoding parameters."""
    kinds = ("normal2", "normal6", "normal15", "normal40", "uniform", "sparse", "trained", "zero_point")
    kernels = ((1, 1), (1, 1), (3, 3), (3, 3), (5, 5), (1, 3), (1, 5), (1, 9), (7, 7))
    for _ in range(n):
        accel = ACCELERATORS[int(rng.integers(len(ACCELERATORS)))]
        depthwise = rng.random() < 0.2
        ofm = int(np.exp(rng.uniform(0, np.log(512))))
        ifm = 1 if depthwise else int(np.exp(rng.uniform(0, np.log(512))))
        kh, kw = kernels[int(rng.integers(len(kernels)))]
        if ofm * kh * kw * ifm > 600_000:
            kh = kw = 1
        dilation = (2, 2) if rng.random() < 0.1 else (1, 1)
        part_kernel = (not depthwise) and rng.random() < 0.4
        ifm_bits = 16 if rng.random() < 0.2 else 8
        block_depth = int(rng.choice([8, 16, 16, 32, 32, 64, 128]))
        kind = kinds[int(rng.integers(len(kinds)))]
        yield dict(accel=accel, values=_values(rng, (ofm, kh, kw, ifm), kind), dilation=dilation,
                   part_kernel=part_kernel, ifm_bits=ifm_bits, block_depth=block_depth, depthwise=depthwise, kind=kind)


def _estimator(weights_module) -> Callable[..., int]:
    """est bytes of one core's volume, with the tree's estimate (new API or the old histogram one)."""
    if hasattr(weights_module, "EncodingOrder"):
        from npuplan.hw.accelerator import accelerator

        def new(case, volume, block_depth):
            order = weights_module.EncodingOrder(block_depth, case["part_kernel"])
            return weights_module.estimate_volume_bytes(
                volume, accelerator(case["accel"]), order=order, ifm_bits=case["ifm_bits"],
                depthwise=case["depthwise"], dilation_xy=case["dilation"])
        return new

    def old(case, volume, block_depth):
        del case, block_depth
        bits = weights_module.compressed_bits_of_counts(
            weights_module._zigzag_histograms(volume.astype(np.int64).reshape(1, -1))[0])
        return -(-(bits // 8 + weights_module.STREAM_HEADER_BYTES) // 16) * 16
    return old


def _real(api, case, volume, block_depth) -> int:
    traversal = api.NpuBlockTraversal.PART_KERNEL_FIRST if case["part_kernel"] else api.NpuBlockTraversal.DEPTH_FIRST
    encoded = api.npu_encode_weights(_vela_accelerator(api, case["accel"]), np.ascontiguousarray(volume),
                                     case["dilation"], case["ifm_bits"], block_depth, case["depthwise"], traversal)
    return -(-len(encoded) // 16) * 16


def _per_core(case) -> list[tuple[np.ndarray, int]]:
    cores = 2 if case["accel"] == "ethos-u65-512" else 1
    out = []
    for core in range(min(cores, case["values"].shape[0])):
        depth = (case["block_depth"] + cores - 1 - core) // cores
        if depth:
            out.append((case["values"][core::cores], depth))
    return out


def _band_table(rows: list[tuple[int, float]], title: str) -> None:
    print(f"\n{title}")
    print(f"{'weights':>16} {'cases':>6} {'median':>7} {'p10':>7} {'p90':>7} {'min':>7} {'max':>7}")
    for lo, hi in BANDS:
        r = np.array([ratio for size, ratio in rows if lo <= size < hi])
        if r.size:
            label = f"[{lo}, {hi if hi < 1 << 40 else 'inf'})"
            print(f"{label:>16} {r.size:>6} {np.median(r):7.3f} {np.percentile(r, 10):7.3f} "
                  f"{np.percentile(r, 90):7.3f} {r.min():7.3f} {r.max():7.3f}")
    r = np.array([ratio for _, ratio in rows])
    print(f"{'all':>16} {r.size:>6} {np.median(r):7.3f} {np.percentile(r, 10):7.3f} "
          f"{np.percentile(r, 90):7.3f} {r.min():7.3f} {r.max():7.3f}")


def run_sweep(api, estimate, cases: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    rows: list[tuple[int, float]] = []
    by_kind: dict[str, list[tuple[int, float]]] = {}
    est_seconds = 0.0
    for case in sweep_cases(rng, cases):
        real = est = 0
        for volume, depth in _per_core(case):
            real += _real(api, case, volume, depth)
            started = time.perf_counter()
            est += estimate(case, volume, depth)
            est_seconds += time.perf_counter() - started
        row = (int(case["values"].size), est / real)
        rows.append(row)
        by_kind.setdefault(case["kind"] + (" dw" if case["depthwise"] else " pk" if case["part_kernel"] else ""),
                           []).append(row)
    _band_table(rows, f"sweep: {cases} volumes, seed {seed}: est/real by weights per volume")
    print("\nby distribution/traversal (median, p10, p90):")
    for kind in sorted(by_kind):
        r = np.array([x for _, x in by_kind[kind]])
        print(f"  {kind:16} {r.size:4}  {np.median(r):.3f} {np.percentile(r, 10):.3f} {np.percentile(r, 90):.3f}")
    print(f"estimate time: {1000 * est_seconds / max(cases, 1):.2f} ms per volume")


def _model_ops(model: Path, options: dict[str, str]):
    """(op, [(start, end)], block depth, part-kernel) of each weighted op of the plan."""
    from npuplan.api import plan
    from npuplan.ir.lowered import BlockType

    result = plan(model, **options)
    seen = set()
    for sop in result.schedule.ops:
        op = sop.op
        if op.weights is None or id(op) in seen:
            continue
        seen.add(id(op))
        depth = op.ofm_shape.c
        bounds = sop.weight_depth_slices or (0, depth)
        if not sop.weight_depth_slices and sop.weight_depth_slice and 0 < sop.weight_depth_slice < depth:
            bounds = (*range(0, depth, sop.weight_depth_slice), depth)
        part_kernel = op.block_type is BlockType.CONV and bool(sop.block_config.is_partkernel)
        yield result, sop, op, tuple(zip(bounds, bounds[1:])), int(sop.block_config.ofm_block.depth), part_kernel


def _op_real(api, acc, op, ranges, block_depth: int, part_kernel: bool, cores: int) -> int | None:
    """The real codec's bytes for ``op``'s slices (per core as Vela splits them), or None when the
    encoder rejects them (or the op has no quantised weights to emit)."""
    from npuplan.emit.weights import _ohwi
    from npuplan.ir.lowered import BlockType

    try:
        weights = _ohwi(op).astype(np.int16)
    except AssertionError:
        return None
    traversal = api.NpuBlockTraversal.PART_KERNEL_FIRST if part_kernel else api.NpuBlockTraversal.DEPTH_FIRST
    depthwise = op.block_type is BlockType.DEPTHWISE
    dilation = (op.kernel.dilation_x, op.kernel.dilation_y)
    total = 0
    for lo, hi in ranges:
        for core in range(min(cores, hi - lo)):
            core_depth = (block_depth + cores - 1 - core) // cores
            if core_depth == 0:
                continue
            volume = np.ascontiguousarray(weights[lo + core:hi:cores])
            try:
                encoded = api.npu_encode_weights(acc, volume, dilation, op.ifm.dtype.bits, core_depth, depthwise,
                                                 traversal)
            except (AssertionError, ValueError):
                return None
            total += -(-len(encoded) // 16) * 16
    return total


def run_models(api, weights_module, zoos: list[Path], scenarios: list[str]) -> None:
    sys.path.insert(0, str(HERE))
    from scenarios import SCENARIOS

    from npuplan.errors import NpuplanError

    new_api = hasattr(weights_module, "EncodingOrder")
    for name in scenarios:
        options = SCENARIOS[name]
        accel_name = options["accelerator_config"]
        acc = _vela_accelerator(api, accel_name)
        print(f"\nmodels, {name}: encoded weight bytes (no scales) per model, as planned")
        print(f"{'model':28} {'ops':>4} {'real':>10} {'est':>10} {'est/real':>8}  {'worst op (est/real, real B)'}")
        ratios = []
        for zoo in zoos:
            for model in sorted(zoo.glob("*.tflite")):
                try:
                    ops = list(_model_ops(model, options))
                except NpuplanError as exc:
                    print(f"{model.stem:28} error: {str(exc)[:60]}")
                    continue
                real_total = est_total = skipped = 0
                worst = (1.0, 0, "")
                for result, sop, op, ranges, block_depth, part_kernel in ops:
                    encodings = result.weight_encodings or weights_module.WeightEncodings(result.arch.accelerator)
                    op_real = _op_real(api, acc, op, ranges, block_depth, part_kernel, result.arch.accelerator.cores)
                    if op_real is None:
                        skipped += 1
                        continue
                    op_est = 0
                    for lo, hi in ranges:
                        if new_api:
                            order = weights_module.EncodingOrder(block_depth, part_kernel)
                            parts = encodings.slice_parts(op, lo, hi, order)
                        else:
                            parts = encodings.slice_parts(op, lo, hi)
                        op_est += sum(p.weight_bytes for p in parts)
                    real_total += op_real
                    est_total += op_est
                    if op_real and abs(op_est / op_real - 1) > abs(worst[0] - 1):
                        worst = (op_est / op_real, op_real, op.name[-30:])
                if real_total:
                    ratios.append(est_total / real_total)
                    print(f"{model.stem:28} {len(ops) - skipped:>4} {real_total:>10} {est_total:>10} "
                          f"{est_total / real_total:8.4f}  {worst[2]} ({worst[0]:.3f}, {worst[1]} B)", flush=True)
        if ratios:
            r = np.array(ratios)
            print(f"{name}: {r.size} models, est/real median {np.median(r):.4f}, min {r.min():.4f}, "
                  f"max {r.max():.4f}, within 2%: {int((np.abs(r - 1) <= 0.02).sum())}/{r.size}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=1500)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--src", type=Path, default=HERE.parent / "src")
    parser.add_argument("--zoo", type=Path, action="append")
    parser.add_argument("--scenario", action="append", choices=MODEL_SCENARIOS)
    parser.add_argument("--no-sweep", action="store_true")
    parser.add_argument("--no-models", action="store_true")
    args = parser.parse_args()
    sys.path.insert(0, str(args.src.resolve()))
    from ethosu.vela import api

    import npuplan.cost.weights as weights_module

    from importlib.metadata import version

    print(f"npuplan estimate from {args.src.resolve()}; real codec: ethos-u-vela {version('ethos-u-vela')}")
    if not args.no_sweep:
        run_sweep(api, _estimator(weights_module), args.cases, args.seed)
    if not args.no_models:
        zoos = args.zoo or [HERE.parent / "tests" / "data", Path("/work/zoo")]
        run_models(api, weights_module, zoos, args.scenario or list(MODEL_SCENARIOS))


if __name__ == "__main__":
    main()
