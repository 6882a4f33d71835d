"""Files as other converters write them, made from a model by rewriting it with npuplan's own
TFLite writer: what TensorFlow Lite Micro runs and Vela compiles, so npuplan must plan too.

- ``bias_axis3``: every convolution's 1-D bias declares its per-channel quantization along axis 3
  (the filter's ``quantized_dimension`` of a depthwise convolution), as an older converter wrote
  a MobileNet. npuplan plans it with a warning.

Usage: python bench/zoo/converter_quirks.py MODEL.tflite [--out DIR]   (writes DIR/<model>_bias_axis3.tflite)
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "src"))

from npuplan.io.tflite import read_tflite  # noqa: E402
from npuplan.io.tflite_write import write_tflite  # noqa: E402
from npuplan.ir.graph import Model, Tensor  # noqa: E402

CONVOLUTIONS = ("CONV_2D", "DEPTHWISE_CONV_2D", "TRANSPOSE_CONV", "FULLY_CONNECTED")


def bias_axis(model: Model, axis: int = 3) -> Model:
    """``model`` with each per-channel 1-D bias of a convolution declaring ``axis``."""
    swapped: dict[int, Tensor] = {}
    for op in model.main.ops:
        bias = op.inputs[2] if op.type in CONVOLUTIONS[:2] + CONVOLUTIONS[3:] and len(op.inputs) > 2 else None
        if bias is not None and bias.quant is not None and len(bias.quant.scale) > 1 and len(bias.shape) == 1:
            swapped[id(bias)] = replace(bias, quant=replace(bias.quant, axis=axis))

    def swap(ts: tuple) -> tuple:  # type: ignore[type-arg]
        return tuple(swapped.get(id(t), t) if t is not None else None for t in ts)

    main = model.main
    ops = tuple(replace(o, inputs=swap(o.inputs)) for o in main.ops)
    return replace(model, subgraphs=(replace(main, ops=ops, inputs=swap(main.inputs)), *model.subgraphs[1:]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", type=Path)
    parser.add_argument("--out", type=Path, default=Path("/work/zoo_quirks"))
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / f"{args.model.stem}_bias_axis3.tflite"
    path.write_bytes(write_tflite(bias_axis(read_tflite(args.model))))
    print(path)


if __name__ == "__main__":
    main()
