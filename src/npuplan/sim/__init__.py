"""A bit-exact functional model of the Ethos-U55/U65 NPU.

Two layers: the machine (``machine``, ``feature_maps``, ``weights``, ``dma``) replays the register
command stream and does every memory access; the datapath (``datapath`` and its modules) is pure
integer arithmetic on the arrays the machine hands it.
"""

from __future__ import annotations

import numpy as np

__all__ = ["execute_stream"]


def execute_stream(payload: bytes, regions: dict[int, np.ndarray]) -> None:
    """Run one ethos-u operator's driver payload (the bytes of its input 0: 'COP1', CONFIG,
    CMD_STREAM ...) over its regions: region index -> 1-D uint8 array, written in place.
    Region numbering as the TFLite Micro ethos-u kernel gives the driver (and as
    npuplan.regstream.tflite_file documents): 0 = the operator's input 1 (flash/weights),
    1 = input 2 (scratch arena), 2 = input 3 (fast scratch; may be the SAME array object as
    region 1), 3.. = further inputs then outputs. Raises npuplan.errors.ValidationError
    (one line) for a stream it cannot execute (unknown command, access out of a region)."""
    from npuplan.sim.machine import execute_payload

    execute_payload(payload, regions)
