"""A stand-in for ``npuplan.sim.datapath`` while the machine is tested alone: float arithmetic
that is right to within one unit of the OFM for convolutions, depthwise convolutions and MAX
pooling (enough to prove addressing, weight order and core splits; any error of those is gross),
and nothing else. It follows the datapath's interface (``compute``, ``ChannelScales``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True, slots=True)
class ChannelScales:
    bias: np.ndarray
    scale: np.ndarray
    shift: np.ndarray


def _signed16(value: int) -> int:
    return value - (1 << 16) if value & 0x8000 else value


def _padded(regs: Mapping[str, int], ifm: np.ndarray, fill: float) -> np.ndarray:
    pads = [regs.get(f"IFM_PAD_{s}", 0) for s in ("TOP", "BOTTOM", "LEFT", "RIGHT")]
    return np.pad(ifm.astype(np.float64), ((pads[0], pads[1]), (pads[2], pads[3]), (0, 0)), constant_values=fill)


def _kernel(regs: Mapping[str, int]) -> tuple[int, int, int, int, int, int]:
    stride = regs.get("KERNEL_STRIDE", 0)
    sx = (stride & 1) + ((stride >> 6) & 0x7) * 2 + 1
    sy = ((stride >> 1) & 1) + ((stride >> 9) & 0x7) * 2 + 1
    dx, dy = ((stride >> 3) & 1) + 1, ((stride >> 4) & 1) + 1
    kh = (regs.get("KERNEL_HEIGHT_M1", 0)) // dy + 1
    kw = (regs.get("KERNEL_WIDTH_M1", 0)) // dx + 1
    return kh, kw, sy, sx, dy, dx


def _clamp(regs: Mapping[str, int], values: np.ndarray) -> np.ndarray:
    low, high = _signed16(regs.get("ACTIVATION_MIN", 0)), _signed16(regs.get("ACTIVATION_MAX", 0))
    return np.clip(values, low, high).astype(np.int64)


def compute(op: str, param: int, regs: Mapping[str, int], ifm: np.ndarray, ifm2: np.ndarray | None = None, *,
            weights: np.ndarray | None = None, scales: ChannelScales | None = None,
            lut: np.ndarray | None = None) -> np.ndarray:
    oh, ow, od = regs["OFM_HEIGHT_M1"] + 1, regs["OFM_WIDTH_M1"] + 1, regs["OFM_DEPTH_M1"] + 1
    kh, kw, sy, sx, dy, dx = _kernel(regs)
    if op == "NPU_OP_POOL" and param == 0:  # MAX
        x = _padded(regs, ifm, -np.inf)
        out = np.full((oh, ow, od), -np.inf)
        for ky in range(kh):
            for kx in range(kw):
                out = np.maximum(out, x[ky:ky + (oh - 1) * sy + 1:sy, kx:kx + (ow - 1) * sx + 1:sx, :od])
        return _clamp(regs, out)
    if op not in ("NPU_OP_CONV", "NPU_OP_DEPTHWISE") or weights is None or scales is None:
        raise NotImplementedError(f"the stub datapath has no {op} {param}")
    zp = _signed16(regs.get("IFM_ZERO_POINT", 0))
    x = _padded(regs, ifm - zp, 0.0)
    acc = np.zeros((oh, ow, od))
    for ky in range(kh):
        for kx in range(kw):
            window = x[ky * dy:ky * dy + (oh - 1) * sy + 1:sy, kx * dx:kx * dx + (ow - 1) * sx + 1:sx, :]
            if op == "NPU_OP_CONV":
                acc += window @ weights[:, ky, kx, :].T.astype(np.float64)
            else:
                acc += window[:, :, :od] * weights[:, ky, kx, 0]
    acc += scales.bias
    out = np.round(acc * scales.scale / np.exp2(scales.shift.astype(np.float64)))
    return _clamp(regs, out + _signed16(regs.get("OFM_ZERO_POINT", 0)))
