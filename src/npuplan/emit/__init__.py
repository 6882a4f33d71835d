"""Deployable output: ``emit_tflite(plan) -> Emitted``, the plan as a TFLite file that runs on the
Ethos-U through TensorFlow Lite Micro's ethos-u operator, as Vela's output does.

Only this package uses Vela, and only its external API (``ethosu.vela.api``, the ``deploy``
extra), for the hardware weight encoding, the register command stream and the driver payload.
Every decision (which operations, in which order, which stripes, where each buffer lives, when
weights move) comes from the plan.
"""

from npuplan.emit.emitter import Emitted, emit_tflite, write_emitted

__all__ = ["Emitted", "emit_tflite", "write_emitted"]
