"""npuplan's own implementation of the Ethos-U operation interface the emitter uses: the same
records (``types``) and the four calls ``emit`` makes, backed by npuplan's weight codec
(``codec.encode``), block-config rules (``blocks``), register command stream generator
(``generator``) and driver payload (``payload``). The bias/scale records are not a backend call:
both backends take them from ``codec.encode.encode_biases`` (``emit.weights``). ``emit.backend`` hands this module to the
emitter in place of Vela's ``ethosu.vela.api``; nothing here imports Vela.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from npuplan.emit.native.blocks import find_block_configs
from npuplan.emit.native.generator import generate_register_command_stream
from npuplan.emit.native.payload import create_driver_payload
from npuplan.emit.native.types import (ExplicitScaling, NpuAccelerator, NpuActivation, NpuActivationOp, NpuAddressRange,
                                       NpuBlockOperation, NpuBlockTraversal, NpuConv2DOperation,
                                       NpuConvDepthWiseOperation, NpuDataType, NpuDmaOperation, NpuElementWiseOp,
                                       NpuElementWiseOperation, NpuFeatureMap, NpuKernel, NpuLayout, NpuPadding,
                                       NpuPoolingOp, NpuPoolingOperation, NpuQuantization, NpuResamplingMode,
                                       NpuRoundingMode, NpuShape3D, NpuTileBox)
from npuplan.emit.native.hardware import arch_of

__all__ = [
    "ExplicitScaling", "NpuAccelerator", "NpuActivation", "NpuActivationOp", "NpuAddressRange", "NpuBlockOperation", "NpuBlockTraversal",
    "NpuConv2DOperation", "NpuConvDepthWiseOperation", "NpuDataType", "NpuDmaOperation", "NpuElementWiseOp",
    "NpuElementWiseOperation", "NpuFeatureMap", "NpuKernel", "NpuLayout", "NpuPadding", "NpuPoolingOp",
    "NpuPoolingOperation", "NpuQuantization", "NpuResamplingMode", "NpuRoundingMode", "NpuShape3D", "NpuTileBox",
    "npu_create_driver_payload", "npu_encode_weights",
    "npu_find_block_configs", "npu_generate_register_command_stream",
]


def npu_encode_weights(accelerator: NpuAccelerator, weights_volume: np.ndarray, dilation_xy: tuple[int, int],
                       ifm_bitdepth: int, ofm_block_depth: int, is_depthwise: bool,
                       block_traversal: NpuBlockTraversal) -> bytes:
    """The weight stream of ``weights_volume`` (OHWI, zero point removed) on ``accelerator``."""
    from npuplan.codec.encode import encode_weights  # loaded by the first op with weights, not by every emit

    preset = arch_of(accelerator).accelerator
    return encode_weights(weights_volume, ofm_ublock_depth=preset.ofm_ublock.depth,
                          ifm_ublock_depth=preset.ifm_ublock.depth, dilation_xy=dilation_xy, ifm_bits=ifm_bitdepth,
                          ofm_block_depth=ofm_block_depth, depthwise=is_depthwise,
                          part_kernel_first=block_traversal is NpuBlockTraversal.PART_KERNEL_FIRST)


def npu_find_block_configs(npu_op: Any, accelerator: NpuAccelerator) -> list[NpuShape3D]:
    """The OFM block configs the hardware accepts for ``npu_op``."""
    return [NpuShape3D(h, w, d) for h, w, d in find_block_configs(npu_op, accelerator)]


def npu_generate_register_command_stream(npu_op_list: list[Any], accelerator: NpuAccelerator) -> list[int]:
    """The register command stream of one NPU partition's operations."""
    return generate_register_command_stream(npu_op_list, accelerator)


def npu_create_driver_payload(register_command_stream: list[int], accelerator: NpuAccelerator) -> bytes:
    """The driver payload (``COP1`` header, configuration, command stream) of a stream."""
    return create_driver_payload(register_command_stream, accelerator)
