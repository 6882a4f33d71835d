"""The per-channel scales a convolution's scale stream holds, as the datapath consumes them."""

from __future__ import annotations


import numpy as np

from npuplan.records import record


@record
class ChannelScales:
    """The decoded scale stream: per OFM channel the 40-bit signed bias, the 32-bit multiplier
    (unsigned field) and the 6-bit right shift."""

    bias: np.ndarray
    scale: np.ndarray
    shift: np.ndarray
