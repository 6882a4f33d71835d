"""Ethos-U65-512 (two cores): each weight slice holds, core by core, the scale stream and the weight
stream of every other output channel (Vela's deinterleave); the operation reads both cores' streams."""

from __future__ import annotations

import numpy as np

from npuplan.ir.graph import Graph, Op, Tensor, frozen_options
from npuplan.ir.types import DataType, Quantization
from tests.unit.emit._stream import command_words
from tests.unit.emit.conftest import emit_graph
from tests.unit.emit.test_emit import _buffer, _ops

U65_512 = {"accelerator_config": "ethos-u65-512", "system_config": "Ethos_U65_High_End",
           "memory_mode": "Dedicated_Sram_384KB"}


def test_a_convolution_on_two_cores(vela_api, tmp_path):
    from npuplan.emit.weights import channel_scales

    q = Quantization((0.05,), (-3,))
    x, y = Tensor("x", (1, 8, 8, 8), DataType.INT8, q), Tensor("y", (1, 8, 8, 16), DataType.INT8, q)
    wq = Quantization(tuple(0.01 * (1 + k) for k in range(16)), (0,) * 16, axis=0)
    w = np.arange(16 * 8, dtype=np.int8).reshape(16, 1, 1, 8) % 5 - 2
    b = np.arange(16, dtype=np.int32) * 7
    w.flags.writeable = b.flags.writeable = False
    conv = Op("CONV_2D", (x, Tensor("w", w.shape, DataType.INT8, wq, w), Tensor("b", b.shape, DataType.INT32, None, b)),
              (y,), frozen_options({"padding": "SAME", "stride_h": 1, "stride_w": 1, "dilation_h_factor": 1,
                                    "dilation_w_factor": 1, "fused_activation_function": "NONE"}), 0)
    planned, emitted, _ = emit_graph(tmp_path, Graph("dual", (conv,), (x,), (y,)), U65_512)
    regs: dict[str, int] = {}
    for word in command_words(emitted.data):
        if word.name == "NPU_OP_CONV":
            break
        regs[word.name] = word.value
    assert regs["WEIGHT1_LENGTH"] > 0 and regs["SCALE1_LENGTH"] > 0
    model, ops = _ops(emitted.data)
    flash = _buffer(model, int(ops[0][1].InputsAsNumpy()[1]))
    assert regs.get("SCALE_REGION", 0) == 0  # read in place from the flash: core 1 holds the odd channels
    core1 = flash[regs["SCALE1_BASE"]:regs["SCALE1_BASE"] + 80]
    scales = channel_scales(planned.lowered.npu_ops[0])
    odd = b"".join(bytes(vela_api.npu_encode_bias(np.int64(b[k]), *scales[k])) for k in range(1, 16, 2))
    assert core1 == odd
