"""Write the small SOFTMAX-only networks bench/softmax_compare.py checks beside the zoos: int8,
uint8 and int16, one row to a thousand, batches, maps less than 8 deep (run by Vela on blocks of
their values), betas other than 1.

Usage: python bench/softmax_models.py OUT_DIR     (then: python bench/softmax_compare.py OUT_DIR/*.tflite)
Prints the files written.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))

from npuplan.io.tflite_write import write_tflite  # noqa: E402
from npuplan.ir.graph import Graph, Model, Op, Tensor, frozen_options  # noqa: E402
from npuplan.ir.types import DataType, Quantization  # noqa: E402

I8, U8, I16 = DataType.INT8, DataType.UINT8, DataType.INT16
_OUT = {I8: (1 / 256, -128), U8: (1 / 256, 0), I16: (1 / 32768, 0)}  # TFLite's softmax output quantization
# name: (type, shape, input scale, input zero point, beta)
CASES: dict[str, tuple[DataType, tuple[int, ...], float, int, float]] = {
    "sm_i8_1x10": (I8, (1, 10), 0.1, 3, 1.0),
    "sm_i8_4x5x33": (I8, (1, 4, 5, 33), 0.05, -20, 0.7),
    "sm_i8_b2": (I8, (2, 3, 17), 0.2, 0, 2.0),
    "sm_i8_b3": (I8, (3, 50, 4), 0.09, 7, 1.0),
    "sm_i8_tiny": (I8, (1, 100), 0.002, 10, 1.0),
    "sm_i8_wide": (I8, (1, 1, 1, 1000), 0.125, -5, 1.0),
    "sm_u8_1x16": (U8, (1, 16), 0.08, 128, 1.0),
    "sm_u8_3x7x9": (U8, (1, 3, 7, 9), 0.3, 100, 0.5),
    "sm_u8_rows100": (U8, (100, 5), 0.06, 120, 1.0),
    "sm_i16_1x20": (I16, (1, 20), 0.001, 0, 1.0),
    "sm_i16_2x9x12": (I16, (1, 2, 9, 12), 0.0005, 0, 1.5),
    "sm_i16_rows40": (I16, (1, 40, 6), 0.002, 0, 1.0),
    "sm_i16_wide": (I16, (1, 1000), 0.0003, 0, 0.5),
    "sm_i16_map": (I16, (1, 7, 5, 3), 0.004, 0, 2.0),
}
# int8 in, int16 out (TFLite's output quantization for it: scale 1/65536, zero point -32768)
WIDENING: dict[str, tuple[tuple[int, ...], float, int, float]] = {
    "sm_i8_to_i16_1x10": ((1, 10), 0.1, 3, 1.0),
    "sm_i8_to_i16_4x5x33": ((1, 4, 5, 33), 0.05, -20, 0.7),
    "sm_i8_to_i16_b2": ((2, 3, 17), 0.2, 0, 2.0),
}


def softmax_model(name: str, dtype: DataType, shape: tuple[int, ...], scale: float, zero_point: int,
                  beta: float, *, output: DataType | None = None) -> bytes:
    """A network of one SOFTMAX (``output``: its output's type, when not the input's)."""
    x = Tensor("x", shape, dtype, Quantization((scale,), (zero_point,)))
    out = (1 / 65536, -32768) if output is not None and output != dtype else _OUT[dtype]
    y = Tensor("y", shape, output or dtype, Quantization((out[0],), (out[1],)))
    graph = Graph(name, (Op("SOFTMAX", (x,), (y,), frozen_options({"beta": beta}), 0),), (x,), (y,))
    return write_tflite(Model(name, (graph,)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    for name, case in CASES.items():
        path = args.out / f"{name}.tflite"
        path.write_bytes(softmax_model(name, *case))
        print(path)
    for name, (shape, scale, zero_point, beta) in WIDENING.items():
        path = args.out / f"{name}.tflite"
        path.write_bytes(softmax_model(name, I8, shape, scale, zero_point, beta, output=DataType.INT16))
        print(path)


if __name__ == "__main__":
    main()
