"""Cost-model fidelity against Vela 5.2.0: per-layer NPU cycles, nn_macs, encoded weight totals.

Reads per-op queries dumped from an instrumented Vela run (``/work/cost-ref/<scenario>/<model>.json``,
made by ``dump_vela_queries.py`` outside the repo: Vela's block configs, stripes, formats and
placements) and Vela's per-layer tables (``/work/vela-ref/<scenario>/<model>/stdout.txt``), runs
npuplan's ``op_cost`` on the same inputs and prints the figures side by side.

    python bench/cost_fidelity.py [--scenario u55_128_highend_shared_perf] [--verbose]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
from scenarios import SCENARIOS
from vela_layers import agrees

from npuplan.api import make_options
from npuplan.cost import BlockChoice, CostQuery, LutAccess, Operand, WeightAccess, WeightFetch, op_cost
from npuplan.hw import build_architecture
from npuplan.hw.accelerator import Block
from npuplan.hw.memory import Architecture, MemArea
from npuplan.ir.graph import Tensor
from npuplan.ir.lowered import Activation, BlockType, Kernel, NpuOp, PoolKind
from npuplan.ir.shape import Shape4D
from npuplan.ir.types import DataType

COST_REF = Path("/work/cost-ref")
VELA_REF = Path("/work/vela-ref")
MODELS = (
    "autoencoder_ad ds_cnn_kws resnet8_cifar mobilenet_v1_025_96 mobilenet_v2_035_128 mobilenet_v3_small_224 "
    "mobilenet_v1_100_224 mobilenet_v2_100_224 resnet50_224"
).split()
_BLOCK_TYPES = {b.name: b for b in BlockType} | {
    "ConvolutionMxN": BlockType.CONV, "ConvolutionDepthWise": BlockType.DEPTHWISE,
    "VectorProduct": BlockType.VECTOR_PRODUCT, "Pooling": BlockType.POOLING,
    "ElementWise": BlockType.ELEMENTWISE, "ReduceSum": BlockType.REDUCE_SUM,
}
_ACTIVATIONS = {
    "Relu": Activation.RELU, "Relu6": Activation.RELU6, "ReluN1To1": Activation.RELU_N1_TO_1,
    "Relu0To1": Activation.RELU, "Sigmoid": Activation.SIGMOID, "Tanh": Activation.TANH, "LUT": Activation.LUT,
}
_AREAS = {"Sram": MemArea.SRAM, "Dram": MemArea.DRAM, "OnChipFlash": MemArea.ON_CHIP_FLASH, "OffChipFlash": MemArea.OFF_CHIP_FLASH}
_DTYPES = {8: DataType.INT8, 16: DataType.INT16, 32: DataType.INT32}


def _shape(dims: list[int]) -> Shape4D:
    return Shape4D(*dims)


def _tensor(name: str, dims: list[int], bits: int) -> Tensor:
    return Tensor(name, tuple(dims), _DTYPES.get(bits, DataType.INT8))


def _operand(rec: dict, key: str) -> Operand | None:
    if rec.get(key) is None:
        return None
    fmt = "NHCWB16" if rec[f"{key}_format"] == "NHCWB16" else "NHWC"
    return Operand(_shape(rec[key]), _AREAS[rec[f"{key}_area"]], fmt, rec[f"{key}_bits"])


def _op(rec: dict) -> NpuOp:
    kh, kw, sy, sx, dy, dx = rec["kernel"]
    op_type = rec["op_type"].split(".")[-1]
    ew = {"Add": "ADD", "Sub": "SUB", "Mul": "MUL", "Minimum": "MINIMUM", "Maximum": "MAXIMUM"}.get(op_type, op_type.upper())
    pool = PoolKind.MAX if op_type in ("MaxPool", "ReduceMax") else PoolKind.AVERAGE if op_type == "AvgPool" else PoolKind.NONE
    act = (rec["activation"] or "").split(".")[-1]
    n = rec["orig_weight_elements"]
    return NpuOp(
        name=rec["name"], tflite_type="", op_type=op_type, block_type=_BLOCK_TYPES[rec["block_type"]],
        ifm=_tensor("ifm", rec["ifm"], rec["ifm_bits"]), ifm_shape=_shape(rec["ifm"]),
        ofm=_tensor("ofm", rec["ofm"], rec["ofm_bits"]), ofm_shape=_shape(rec["ofm"]),
        ifm2_shape=_shape(rec["ifm2"]) if rec["ifm2"] else None,
        weights=np.zeros(n, np.int8) if n else None,
        kernel=Kernel(kh, kw, sy, sx, dy, dx), activation=_ACTIVATIONS.get(act, Activation.NONE), pool=pool,
        elementwise=ew if rec["block_type"] == "ElementWise" else None,
    )


def _full_stream_bytes(rec: dict, arch: Architecture) -> int | None:
    """The unsliced stream size, recovered from Vela's full-transfer cycles (not in the dump)."""
    w = rec["weights"]
    if not rec["full_transfer"] or not w["buffer_area"] or len(rec["depth_slices"] or ()) <= 2:
        return None
    src = _AREAS[w["area"]]
    return round((rec["full_transfer"] - arch.timing(src).read_latency_cycles) * arch.bytes_per_cycle(src))


def query_from_record(rec: dict, prev_slack: float, arch: Architecture) -> CostQuery:
    """A ``CostQuery`` with exactly Vela's block config, stripes, formats and placements."""
    w = rec["weights"]
    weights = None
    if w is not None:
        fetch = WeightFetch.DIRECT
        if w["buffer_area"]:
            fetch = WeightFetch.DOUBLE_BUFFERED if w["double"] else WeightFetch.BUFFERED
        weights = WeightAccess(
            stream_bytes=w["stream_bytes"], source_area=_AREAS[w["area"]], fetch=fetch,
            buffer_area=_AREAS[w["buffer_area"]] if w["buffer_area"] else None,
            first_slice_bytes=w["first_slice"], depth_slices=tuple(rec["depth_slices"] or ()),
            charge_full_transfer=rec["cascade"] == 0, full_stream_bytes=_full_stream_bytes(rec, arch),
            slack_npu_cycles=rec["slack"],
        )
    lut = rec["lut"]
    return CostQuery(
        op=_op(rec),
        block=BlockChoice(Block(*rec["ofm_block"]), Block(*rec["ifm_block"]), rec["acc_type"] == "7", rec["part_kernel"]),
        ifm=_operand(rec, "ifm"), ofm=_operand(rec, "ofm"), ifm2=_operand(rec, "ifm2"), weights=weights,
        lut=LutAccess(lut["size"], _AREAS[lut["src_area"]]) if lut and lut["moved"] else None,
        prev_slack_npu_cycles=prev_slack,
    )


def vela_layer_npu(scenario: str, model: str) -> dict[str, float]:
    """Vela's per-layer NPU column by layer name (last occurrence wins)."""
    path = VELA_REF / scenario / model / "stdout.txt"
    out: dict[str, float] = {}
    if not path.exists():
        return out
    for line in path.read_text().splitlines():
        parts = line.split()
        if len(parts) > 14 and parts[2].isdigit() and parts[6].isdigit():
            out[" ".join(parts[14:])] = float(parts[6])
    return out


def run(scenario: str, verbose: bool) -> tuple[int, int]:
    arch = build_architecture(make_options(**SCENARIOS[scenario]))
    within = total = 0
    print(f"\n== {scenario}")
    print(f"{'model':24s} {'layers':>6s} {'<=10%':>6s} {'nn_macs ours':>14s} {'vela':>14s} {'err%':>6s}")
    for model in MODELS:
        path = COST_REF / scenario / f"{model}.json"
        if not path.exists():
            continue
        try:
            records = json.loads(path.read_text())
        except json.JSONDecodeError:
            continue
        table = vela_layer_npu(scenario, model)
        macs_ours = macs_vela = 0
        m_within = m_total = 0
        prev_slack = 0.0
        prev_sg_first = True
        for rec in records:
            cost = op_cost(query_from_record(rec, rec["prev_slack"], arch), arch)
            macs_ours += cost.nn_macs
            macs_vela += rec["macs"]
            ref = table.get(rec["name"], rec["cycles"][0])
            ok = agrees(cost.npu_cycles, ref, slack_cycles=2)
            m_within += ok
            m_total += 1
            if verbose and not ok:
                print(f"   {rec['op_type']:28s} ours={cost.npu_cycles:10.0f} vela={ref:10.0f} {rec['name'][:60]}")
        within += m_within
        total += m_total
        err_macs = 100.0 * (macs_ours - macs_vela) / max(macs_vela, 1)
        print(f"{model:24s} {m_total:6d} {m_within:6d} {macs_ours:14d} {macs_vela:14d} {err_macs:6.2f}")
    if total:
        print(f"layers within 10%: {within}/{total} = {100.0 * within / total:.1f}%")
    return within, total


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenario", action="append", choices=sorted(SCENARIOS))
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args(argv)
    if not COST_REF.exists():
        print(f"no reference dumps in {COST_REF}; nothing to compare")
        return 0
    for scenario in args.scenario or ["u55_128_highend_shared_perf"]:
        run(scenario, args.verbose)
    return 0


if __name__ == "__main__":
    sys.exit(main())
