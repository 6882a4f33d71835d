"""The NPU's machine layer: replays one driver payload's register command stream over its regions.

Registers keep their values between operations (a stream sets only what changes). Each kick
(``NPU_OP_CONV``, ``NPU_OP_DEPTHWISE``, ``NPU_OP_POOL``, ``NPU_OP_ELEMENTWISE``) reads its IFM box
(and IFM2), decodes its weights and scales, hands them to the datapath (``sim.datapath.compute``)
with the register file, and stores the OFM it returns. ``NPU_OP_DMA_START`` copies bytes at once;
waits, IRQs and PMU commands do nothing in a sequential model; ``NPU_OP_STOP`` ends the stream.

The geometry of each operation (IFM box extent from the OFM, kernel, strides, padding and
upscaling; broadcast IFM2 extents; weight streams per core) is ``regstream.events``' replay of the
same registers, so the simulator and ``npuplan validate`` agree on what an operation touches.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from npuplan.errors import ValidationError
from npuplan.hw.accelerator import Accelerator
from npuplan.hw.lut_window import lut_window
from npuplan.regstream.events import KINDS, NpuEvent, npu_event
from npuplan.regstream.weight_streams import accelerator_of_config
from npuplan.regstream.words import decoded, payload_words, register_value
from npuplan.sim.dma import run_dma
from npuplan.sim.feature_maps import layout_of, read_box, write_box
from npuplan.sim.lut_memory import LutMemory
from npuplan.sim.weights import WeightDecoder

LUT_ACTIVATION = 16  # ACTIVATION bits 0-4: 16 + k looks up table slot k
LUT_SLOT_BYTES = 256
LUT_ENTRIES_8_BIT = 256
_IGNORED = frozenset({"NPU_OP_DMA_WAIT", "NPU_OP_KERNEL_WAIT", "NPU_OP_IRQ", "NPU_OP_PMU_MASK"})


def lut_base(accelerator: Accelerator) -> int:
    """The SHRAM address of the lookup tables (``sim.lut_memory``)."""
    return lut_window(accelerator).base


def lut_entries(lut: LutMemory, regs: Mapping[str, int]) -> np.ndarray | None:
    """The table an operation's ACTIVATION looks up (int64), None without one: a 16-bit IFM or OFM
    looks up the whole memory as 512 32-bit words (base and slope: Vela's int16 softmax reads an
    int32 IFM through an int16 OFM's interpolated table); otherwise 256 entries of the OFM's element
    size and signedness from its slot."""
    function = regs.get("ACTIVATION", 0) & 0x1F
    if function < LUT_ACTIVATION:
        return None
    ifm, ofm = layout_of(regs, "IFM"), layout_of(regs, "OFM")
    what = f"ACTIVATION {function}"
    if 2 in (ifm.element_bytes, ofm.element_bytes):
        return lut.table(0, lut.window.size_bytes, what).view("<i4").astype(np.int64)
    start = (function - LUT_ACTIVATION) * LUT_SLOT_BYTES
    size = LUT_ENTRIES_8_BIT * ofm.element_bytes
    if start + size > lut.window.size_bytes:
        raise ValidationError(f"{what}: a table of {size} bytes from slot {function - LUT_ACTIVATION} "
                              f"runs past the {lut.window.size_bytes}-byte lookup-table memory")
    dtype = {1: "i1", 2: "<i2", 4: "<i4"}[ofm.element_bytes]
    if not ofm.signed and ofm.element_bytes < 4:
        dtype = dtype.replace("i", "u")
    return lut.table(start, size, what).view(dtype).astype(np.int64)


class Machine:
    """One command stream's execution state: registers, the lookup-table memory, decoded weights."""

    def __init__(self, regions: Mapping[int, np.ndarray], accelerator: Accelerator) -> None:
        self.regions = regions
        self.accelerator = accelerator
        self.registers: dict[str, int] = {}
        self.lut = LutMemory(lut_window(accelerator))
        self.weights = WeightDecoder(accelerator)
        self.kicks = 0

    def run(self, words: list[int]) -> None:
        """Executes the command words up to ``NPU_OP_STOP`` (or their end)."""
        regs = self.registers
        for name, param, payload, offset in decoded(words):
            if payload is not None:
                regs[name] = register_value(name, param, payload)
            elif not name.startswith("NPU_OP_"):
                regs[name] = param
            elif name in KINDS:
                try:
                    self.operation(name, param)
                except ValidationError as error:
                    raise ValidationError(f"command word {offset}, NPU op {self.kicks} ({name}): {error}") from None
                self.kicks += 1
            elif name == "NPU_OP_DMA_START":
                try:
                    run_dma(self.regions, self.lut, regs)
                except ValidationError as error:
                    raise ValidationError(f"command word {offset}: {error}") from None
            elif name == "NPU_OP_STOP":
                return
            elif name not in _IGNORED:
                raise ValidationError(f"command word {offset}: {name} is not executable")

    def operation(self, name: str, param: int) -> None:
        """Runs one kick: reads, computes through the datapath, writes."""
        import npuplan.sim.datapath as datapath

        regs = self.registers
        e = npu_event(self.kicks, name, regs, param if name == "NPU_OP_ELEMENTWISE" else 0)
        ifm = read_box(self.regions, layout_of(regs, "IFM"), (e.ifm.height, e.ifm.width, e.ifm.depth), label="IFM")
        ifm2 = None
        if e.ifm2 is not None:
            ifm2 = read_box(self.regions, layout_of(regs, "IFM2"), (e.ifm2.height, e.ifm2.width, e.ifm2.depth),
                            label="IFM2")
        kwargs: dict[str, Any] = {"lut": lut_entries(self.lut, regs)}
        self.lut.after_operation(name, regs, uses_table=kwargs["lut"] is not None)
        if e.weights is not None:
            kwargs["weights"], kwargs["scales"] = self.weights.operation(self.regions, e)
        try:
            out = datapath.compute(name, param, dict(regs), ifm, ifm2, **kwargs)
        except ValueError as error:  # registers the datapath cannot compute with (a LUT activation with no table...)
            raise ValidationError(str(error).splitlines()[0] if str(error) else type(error).__name__) from None
        _store(self.regions, regs, e, out)


def _store(regions: Mapping[int, np.ndarray], regs: Mapping[str, int], e: NpuEvent, out: np.ndarray) -> None:
    shape = (e.ofm.height, e.ofm.width, e.ofm.depth)
    if tuple(out.shape) != shape:
        raise ValidationError(f"the datapath returned an OFM of shape {tuple(out.shape)}, the registers say {shape}")
    write_box(regions, layout_of(regs, "OFM"), out, label="OFM")


def execute_payload(payload: bytes, regions: Mapping[int, np.ndarray]) -> None:
    """Runs a driver payload over ``regions`` (see ``npuplan.sim.execute_stream``)."""
    stream = payload_words(payload)
    accelerator = accelerator_of_config(stream.config)
    Machine(regions, accelerator).run(stream.words)
