"""Model readers."""

from npuplan.io.tflite import parse_tflite, read_tflite

__all__ = ["parse_tflite", "read_tflite"]
