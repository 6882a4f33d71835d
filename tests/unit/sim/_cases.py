"""One-operator models for the LiteRT oracle tests, and the simulation of Vela's compiled file for
each with the datapath alone (the operation's box is the whole tensor: one NPU operation)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from npuplan.ir.graph import Op, Tensor, frozen_options
from npuplan.ir.types import DataType, Quantization
from npuplan.lowering.fixedpoint import quantise_scale, reduced_quantise_scale
from npuplan.sim.datapath import ChannelScales, compute
from npuplan.sim.elementwise import REVERSED_BIT, SCALAR_BIT
from tests.unit.sim import _oracle

INT8, INT16, INT32 = DataType.INT8, DataType.INT16, DataType.INT32


def q(scale: float, zero_point: int = 0) -> Quantization:
    return Quantization((scale,), (zero_point,))


def fm(name: str, shape: Sequence[int], quant: Quantization | None, dtype: DataType = INT8) -> Tensor:
    return Tensor(name, tuple(shape), dtype, quant)


def const(name: str, values: np.ndarray, dtype: DataType, quant: Quantization | None) -> Tensor:
    data = np.ascontiguousarray(values).astype(np.dtype(dtype.value))
    data.flags.writeable = False
    return Tensor(name, tuple(data.shape), dtype, quant, data)


@dataclass(frozen=True)
class Case:
    """A one-op model: its op, inputs fed at run time, output, and the operation's constants."""

    name: str
    op: Op

    @property
    def inputs(self) -> list[Tensor]:
        return [t for t in self.op.inputs if t is not None and not t.is_constant]

    def data(self) -> bytes:
        return _oracle.model_bytes([self.op], self.inputs, list(self.op.outputs))


def op(kind: str, inputs: Sequence[Tensor | None], output: Tensor, **options: object) -> Op:
    return Op(kind, tuple(inputs), (output,), frozen_options(options), 0)


def random_inputs(case: Case, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    out = []
    for t in case.inputs:
        info = np.iinfo(np.dtype(t.dtype.value))
        low, high = (info.min, info.max) if t.dtype != INT32 else (-(1 << 20), 1 << 20)
        out.append(rng.integers(low, high, size=t.shape, endpoint=True).astype(np.dtype(t.dtype.value)))
    return out


def _hwc(values: np.ndarray) -> np.ndarray:
    v = np.asarray(values, dtype=np.int64)
    while v.ndim < 4:
        v = v[np.newaxis]
    return v.reshape(v.shape[-3:]) if v.ndim == 4 else v


def _conv_constants(case: Case) -> tuple[np.ndarray, ChannelScales]:
    """The zero-point-free weights (ofm_depth, kh, kw, ifm_depth / 1) and the per-channel bias and
    scale Vela derives from the model (``quantise_scale`` of ifm * weight / ofm scale, doubles)."""
    operands = list(case.op.inputs) + [None]
    if case.op.type == "TRANSPOSE_CONV":  # output shape, weights, input, bias
        w, x, b = operands[1], operands[2], operands[3]
    else:
        x, w, b = operands[:3]
    y = case.op.outputs[0]
    assert x is not None and w is not None and w.data is not None and w.quant is not None
    weights = w.data.astype(np.int64) - int(w.quant.zero_point[0])
    if case.op.type == "DEPTHWISE_CONV_2D":
        weights = np.transpose(weights, (3, 1, 2, 0))
    elif case.op.type == "TRANSPOSE_CONV":  # a convolution of the zero-upscaled IFM by the rotated kernel
        weights = weights[:, ::-1, ::-1, :]
    elif case.op.type == "FULLY_CONNECTED":
        weights = weights.reshape(weights.shape[0], 1, 1, -1)
    depth = weights.shape[0]
    w_scales = np.broadcast_to(np.asarray(w.quant.scale, dtype=np.float64), (depth,))
    assert x.quant is not None and y.quant is not None
    rule = reduced_quantise_scale if x.dtype == INT16 else quantise_scale  # 16-bit IFMs: TFLite's 64-bit form
    pairs = [rule(float(np.float64(x.quant.scale[0]) * s / np.float64(y.quant.scale[0]))) for s in w_scales]
    bias = np.zeros(depth, np.int64) if b is None or b.data is None else b.data.astype(np.int64)
    return weights, ChannelScales(bias, np.asarray([m for m, _ in pairs], np.int64),
                                  np.asarray([s for _, s in pairs], np.int64))


def simulate(case: Case, compiled: bytes, inputs: Sequence[np.ndarray]) -> np.ndarray:
    """Vela's single NPU operation run by the datapath on the model's inputs."""
    kicks = _oracle.kicks(compiled)
    assert len(kicks) == 1, f"{case.name}: Vela wrote {len(kicks)} NPU operations, the test runs one"
    name, param, regs, table = kicks[0]
    values = [_hwc(v) for v in inputs]
    weights = scales = None
    ifm2 = None
    if name in ("NPU_OP_CONV", "NPU_OP_DEPTHWISE"):
        weights, scales = _conv_constants(case)
    ifm = values[0]
    if name == "NPU_OP_ELEMENTWISE" and len(case.op.inputs) > 1 and case.op.inputs[1] is not None:
        second = case.op.inputs[1]
        other = _hwc(second.data) if second.data is not None else values[1]
        broadcast = regs.get("IFM2_BROADCAST", 0)
        if broadcast & REVERSED_BIT:
            ifm, other = other, ifm
        ifm2 = None if broadcast & SCALAR_BIT else other
    if name == "NPU_OP_CONV" and case.op.type == "FULLY_CONNECTED":
        ifm = np.asarray(inputs[0], dtype=np.int64).reshape(1, 1, -1)
    return compute(name, param, regs, ifm, ifm2, weights=weights, scales=scales, lut=table)


def compare(case: Case, seeds: Sequence[int] = (0, 1), *, extra: Sequence[str] = ()) -> tuple[int, int, int]:
    """(largest difference, elements that differ, elements) of the datapath on Vela's registers
    against LiteRT's output of the original model."""
    data = case.data()
    compiled = _oracle.compile_with_vela(data, extra=extra)
    assert not _oracle.cpu_operators(compiled), f"{case.name}: Vela left {_oracle.cpu_operators(compiled)} on the CPU"
    worst = differ = total = 0
    for seed in seeds:
        inputs = random_inputs(case, seed)
        ref = _oracle.run_litert(data, inputs)[0]
        got = simulate(case, compiled, inputs).reshape(ref.shape)
        diff = np.abs(got - ref.astype(np.int64))
        worst, differ, total = max(worst, int(diff.max())), differ + int((diff != 0).sum()), total + diff.size
    return worst, differ, total
