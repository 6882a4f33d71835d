"""The native emitting backend: npuplan's own implementation of the parts of the Ethos-U operation
interface (Vela's external API, ``ethosu.vela.api``) the emitter uses, so that emitting needs no
Vela; ``npuplan.emit.vela`` stays the reference it is compared with. ``api`` is the module the emitter is handed
(``emit.backend``); behind it:

- ``types``: the operation records, with the interface's names;
- ``npuplan.codec.encode``: ``encode_weights`` (brick order and the weight compression format,
  owned by ``npuplan.codec``), ``encode_biases``; ``npuplan.codec.decode.decode_weights``;
- ``blocks.find_block_configs(operation, accelerator) -> [(height, width, depth)]``;
- ``generator.generate_register_command_stream(operations, accelerator) -> [word]``, with
  ``output_stage`` (scales, zero points, activation, precision) and ``dependencies`` (waits,
  BLOCKDEP);
- ``payload.create_driver_payload(words, accelerator) -> bytes``.

Differences from Vela's functions, on purpose: the weight streams are not Vela's bit for bit (Vela
searches its coding parameters along the stream; these decode to the same values);
``find_block_configs`` returns an empty list where ``npu_find_block_configs`` fails an assertion
(no block fits); the generator raises ``EmitError`` (one line) where Vela raises its own errors
(misaligned or out-of-range addresses), and ``AssertionError`` as Vela does for a block config that
does not fit.

Operations and accelerators are read by attribute (enums by ``.name``): Vela's API objects work,
and so do any with the same attributes. Nothing here imports Vela.
"""
