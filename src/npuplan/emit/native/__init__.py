"""The native emitting backend: npuplan's own implementation of the parts of Vela's external API
the emitter uses, so that emitting needs no Vela (``npuplan.emit.vela`` stays the test oracle).

- ``generate_register_command_stream(operations, accelerator) -> list[int]``
- ``find_block_configs(operation, accelerator) -> list[(height, width, depth)]``
- ``create_driver_payload(words, accelerator) -> bytes``

Differences from Vela's functions, on purpose: ``find_block_configs`` returns an empty list where
``npu_find_block_configs`` fails an assertion (no block fits); the generator raises ``EmitError``
(one line) where Vela raises its own errors (misaligned or out-of-range addresses), and
``AssertionError`` as Vela does for a block config that does not fit.

Operations and accelerators are read by attribute (enums by ``.name``): Vela's API objects work,
and so do any with the same attributes. Nothing here imports Vela.
"""

from npuplan.emit.native.blocks import find_block_configs
from npuplan.emit.native.generator import generate_register_command_stream
from npuplan.emit.native.payload import create_driver_payload

__all__ = ["create_driver_payload", "find_block_configs", "generate_register_command_stream"]
