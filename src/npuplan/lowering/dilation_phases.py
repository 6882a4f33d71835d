"""The phases of a dilated convolution: its real taps only, over strided views of its maps.

The NPU dilates a kernel by 1 or 2 only (``convert.hardware_dilation`` spreads a larger rate into
a bigger kernel of zero taps: a 3x3 at rate 3 runs 7x7 = 49 taps for 9 real ones). Split instead
along each axis: with ``rate = step * hw_dilation`` (``hw_dilation`` 2 for even rates, else 1),
the OFM positions ``y = step * i + p`` of phase ``p`` read only IFM positions congruent modulo
``step``, so phase ``p`` is the layer's kernel at dilation ``hw_dilation`` and the layer's stride
over the IFM view ``in_start + step * j`` (``j < in_count``), written to the OFM view
``p + step * i`` (``i < out_count``), with its own padding. Per output element it runs the
kernel's own taps (times the hardware dilation's none).

Derivation (one axis; stride ``s``, padding before ``pad``, tap ``k``): OFM ``y = step * i + p``
reads IFM ``s * y - pad + rate * k = step * (s * i + hw_dilation * k + a) + b`` where
``s * p - pad = step * a + b``, ``0 <= b < step``: view position ``s * i + hw_dilation * k + a``
of the view from ``b``. A negative ``a`` is padding before the view; a positive one moves its
start. Pure geometry, in elements; ``tests/unit/test_dilation_phases.py`` checks it against a
direct dilated convolution.
"""

from __future__ import annotations

from dataclasses import replace

from npuplan.ir.graph import Op
from npuplan.ir.lowered import Kernel, NpuOp, Padding
from npuplan.ir.shape import Shape4D
from npuplan.records import record


@record
class AxisPhase:
    """One phase of one axis, in elements: OFM positions ``out_start + step * i`` for
    ``i < out_count`` from IFM positions ``in_start + step * j`` for ``j < in_count``, padded by
    ``pad_before`` / ``pad_after`` view positions."""

    out_start: int
    out_count: int
    in_start: int
    in_count: int
    pad_before: int
    pad_after: int


@record
class AxisSplit:
    """How one axis of a dilated kernel splits: the view step, the dilation each phase runs at,
    and the phases (none empty)."""

    step: int
    hw_dilation: int
    phases: tuple[AxisPhase, ...]


def hardware_rate(rate: int) -> int:
    """The dilation the NPU runs for ``rate``: 2 for even rates, else 1."""
    return 2 if rate % 2 == 0 else 1


def split_axis(*, in_size: int, out_size: int, kernel: int, stride: int, rate: int, pad_before: int) -> AxisSplit | None:
    """The phases of one axis of a kernel of ``kernel`` taps at dilation ``rate`` (``step`` 1 when
    the hardware runs the rate itself); None when a phase would read no IFM position at all."""
    hw = hardware_rate(rate) if rate > 1 else 1
    step = rate // hw
    phases = []
    for p in range(step):
        count = (out_size - p + step - 1) // step
        if count <= 0:
            continue
        a, b = divmod(stride * p - pad_before, step)
        start, before = b + step * max(a, 0), max(-a, 0)
        available = (in_size - start + step - 1) // step if start < in_size else 0
        needed = stride * (count - 1) + hw * (kernel - 1) + 1 - before  # view positions read
        read = min(available, needed)
        if read < 1:
            return None
        phases.append(AxisPhase(p, count, start, read, before, needed - read))
    return AxisSplit(step, hw, tuple(phases))


def split_phases(op: NpuOp) -> tuple[NpuOp, ...] | None:
    """``op`` (a convolution or depthwise convolution with its own weights and kernel, its dilation
    as the layer's) as one operation per phase, each over a strided IFM view written to a strided
    OFM view (``NpuOp.ifm_step``); None when the hardware runs its dilation itself (1 or 2 on both
    axes) or a phase would read padding only."""
    k = op.kernel
    if k.dilation_y <= 2 and k.dilation_x <= 2:
        return None
    ys = split_axis(in_size=op.ifm_shape.h, out_size=op.ofm_shape.h, kernel=k.height, stride=k.stride_y,
                    rate=k.dilation_y, pad_before=k.padding.top)
    xs = split_axis(in_size=op.ifm_shape.w, out_size=op.ofm_shape.w, kernel=k.width, stride=k.stride_x,
                    rate=k.dilation_x, pad_before=k.padding.left)
    if ys is None or xs is None:
        return None
    step = (ys.step, xs.step)
    n, c, depth = op.ifm_shape.n, op.ifm_shape.c, op.ofm_shape.c
    return tuple(
        replace(op, name=f"{op.name}_phase_{py.out_start}_{px.out_start}",
                ifm_shape=Shape4D(n, py.in_count, px.in_count, c), ifm_read_offset=Shape4D(0, py.in_start, px.in_start, 0),
                ifm_step=step, ofm_shape=Shape4D(n, py.out_count, px.out_count, depth),
                ofm_write_offset=Shape4D(0, py.out_start, px.out_start, 0), ofm_step=step,
                kernel=Kernel(k.height, k.width, k.stride_y, k.stride_x, ys.hw_dilation, xs.hw_dilation,
                              Padding(py.pad_before, px.pad_before, py.pad_after, px.pad_after)))
        for py in ys.phases for px in xs.phases)


def splits_in_phases(op: Op) -> bool:
    """Whether a TFLite op is a convolution whose dilation the hardware does not run (above 2), so
    that ``lower``'s ``dilation_phases`` may split it (cheaper than lowering to find out)."""
    dilations = (int(op.options.get("dilation_h_factor", 1)), int(op.options.get("dilation_w_factor", 1)))
    return op.type in ("CONV_2D", "DEPTHWISE_CONV_2D") and max(dilations) > 2
