"""The NPU's datapath: the integer arithmetic of one operation, from the register file at its
kick and the IFM values it reads, to the OFM values it writes (saturated to the OFM precision).

The machine layer (``npuplan.sim.machine``) reads the feature maps, weights and scales and calls
``compute`` once per NPU_OP_CONV, NPU_OP_DEPTHWISE, NPU_OP_POOL and NPU_OP_ELEMENTWISE.

Where the public register descriptions stop short of the arithmetic, the rules here were measured:
Vela 5.2.0's registers for single-operator models, run by this datapath, reproduce LiteRT's
reference kernels bit for bit (tests/unit/sim/test_datapath_oracle.py) only with them: the TFL
rounding's two steps, ADD/SUB's operand headroom, AVERAGE's division over a padded window, the
32-bit MUL's shift without multiplier, TANH/SIGMOID as TFLite's int16 table, the table after the
clamp. Each module's docstring says which.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from npuplan.errors import ValidationError
import npuplan.sim.convolution as convolution
import npuplan.sim.elementwise as elementwise
import npuplan.sim.pooling as pooling
from npuplan.sim.scales import ChannelScales
from npuplan.sim.output_stage import OutputStage



OPERATIONS = ("NPU_OP_CONV", "NPU_OP_DEPTHWISE", "NPU_OP_POOL", "NPU_OP_ELEMENTWISE")


def compute(op: str, param: int, regs: Mapping[str, int], ifm: np.ndarray, ifm2: np.ndarray | None = None, *,
            weights: np.ndarray | None = None, scales: ChannelScales | None = None,
            lut: np.ndarray | None = None) -> np.ndarray:
    """The OFM values (int64, ``(ofm_h, ofm_w, ofm_depth)``, saturated to the OFM precision) of
    operation ``op`` with parameter ``param`` (pooling mode / elementwise function) under the
    registers ``regs`` (name -> value as ``npuplan.regstream.events`` keeps them).

    ``ifm``: the stored IFM values of the box the operation reads, padding not included (the
    datapath applies IFM_PAD_*); elementwise: the OFM's extent but broadcast axes (extent 1).
    ``ifm2``: elementwise only, or None for a scalar. ``weights``: CONV ``(ofm_depth, kh, kw,
    ifm_depth)``, DEPTHWISE ``(depth, kh, kw, 1)``, zero-point free. ``scales``: convolutions' scale
    stream. ``lut``: the table when ACTIVATION selects one. Raises ``ValidationError`` (one line)
    for an operation, function or table it cannot compute."""
    stage = OutputStage.of(regs)
    values = np.asarray(ifm, dtype=np.int64)
    if op in ("NPU_OP_CONV", "NPU_OP_DEPTHWISE"):
        if weights is None or scales is None:
            raise ValidationError(f"{op} needs its weights and its scale stream")
        result = convolution.compute(regs, values, np.asarray(weights, dtype=np.int64), scales, stage,
                                     depthwise=op == "NPU_OP_DEPTHWISE")
    elif op == "NPU_OP_POOL":
        result = pooling.compute(param, regs, values, stage)
    elif op == "NPU_OP_ELEMENTWISE":
        result = elementwise.compute(param, regs, values, ifm2, stage)
    else:
        raise ValidationError(f"{op} is not an operation of the datapath (one of {', '.join(OPERATIONS)})")
    return stage.finish(result, None if lut is None else np.asarray(lut, dtype=np.int64))
