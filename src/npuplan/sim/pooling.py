"""NPU_OP_POOL: MAX (0), AVERAGE (1), REDUCE_SUM (2) over the kernel window (the operation's
parameter), before the output stage.

Padding never counts: MAX takes the largest value the window holds in the IFM, AVERAGE sums the
zero-point-corrected values the window holds and, without a global scale (OFM_PRECISION bit 8),
divides by how many it holds; REDUCE_SUM sums the window and the IFM's depth into one channel.
A global scale (OFM_SCALE) rescales the sum (AVERAGE, REDUCE_SUM) or the value (MAX).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from npuplan.sim.convolution import Kernel, padded
from npuplan.sim.output_stage import OutputStage, zero_point
from npuplan.sim.rounding import RoundingMode

MAX, AVERAGE, REDUCE_SUM = 0, 1, 2
_MISSING = np.iinfo(np.int64).min // 4  # a padded position's marker (no IFM value reads as it)


def _windows(values: np.ndarray, kernel: Kernel, fill: int) -> list[np.ndarray]:
    image = padded(values, kernel, fill)
    return [kernel.tap(image, y, x) for y, x in kernel.positions]


def _divided(total: np.ndarray, count: np.ndarray, rounding: RoundingMode) -> np.ndarray:
    """``total / count`` rounded half away from zero (TFLite's average pool)."""
    magnitude = (np.abs(total) + count // 2) // count
    return np.where(total < 0, -magnitude, magnitude)


def compute(mode: int, regs: Mapping[str, int], ifm: np.ndarray, stage: OutputStage) -> np.ndarray:
    kernel = Kernel.of(regs)
    values = ifm - zero_point(regs, "IFM")
    if mode == MAX:
        result = np.max(np.stack(_windows(values, kernel, _MISSING)), axis=0)
        return stage.rescaled(result) if stage.global_scale else result
    windows = _windows(values, kernel, 0)
    total = np.sum(np.stack(windows), axis=0)
    if mode == REDUCE_SUM:
        total = np.sum(total, axis=2, keepdims=True)
        return stage.rescaled(total) if stage.global_scale else total
    if mode != AVERAGE:
        raise ValueError(f"unknown pooling mode {mode}")
    if kernel.pad_top or kernel.pad_bottom or kernel.pad_left or kernel.pad_right or not stage.global_scale:
        present = np.sum(np.stack(_windows(np.ones(values.shape[:2] + (1,), dtype=np.int64), kernel, 0)), axis=0)
        total = _divided(total, present, stage.rounding)
    return stage.rescaled(total) if stage.global_scale else total

