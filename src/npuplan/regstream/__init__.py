"""Ethos-U register command streams read back from a deployable file: decode the driver payload and
the command words (``words``), replay the registers into operations (``events``), and check them
over a byte-level memory model (``memory``, ``tflite_file``). Needs no Vela."""

from npuplan.regstream.tflite_file import FileReport, validate_tflite, validate_tflite_file

__all__ = ["FileReport", "validate_tflite", "validate_tflite_file"]
