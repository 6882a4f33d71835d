"""Write shape stress networks as .tflite files: odd widths, depths 1 to 3, the largest strides,
8 and 16 bits, for bench/deploy_zoo.py (and Vela).

Usage: python bench/stress_nets.py --out DIR

For every input height (1, 3, 17) and width (1, 3, 17, 255), with depth 1, 2 or 3 (in turn) and
8 or 16-bit feature maps, three chains of SAME-padded layers (so every shape is valid):
  ``strided``  conv 3x3 s1, conv 5x5 s3, depthwise 3x3 s2, max pool 3x3 s3, conv 1x1
  ``wide``     conv 1x7 s(1,3), depthwise 7x1 s(3,1), average pool 2x2 s2, residual ADD, conv 3x3
  ``large``    conv 1x1 s4 (beyond the hardware's stride 3), average pool 5x5 s1, conv 2x2 s2
Network ``stress_<h>x<w>x<c>_<chain>[_i16]`` is the same file on every run (seeded constants).
Prints the files written.
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent / "src")]

from npuplan.io.tflite_write import write_tflite  # noqa: E402
from npuplan.ir.graph import Graph, Model, Op, Tensor, frozen_options  # noqa: E402
from npuplan.ir.types import DataType, Quantization  # noqa: E402

HEIGHTS, WIDTHS, DEPTHS = (1, 3, 17), (1, 3, 17, 255), (1, 2, 3)


class _Net:
    """The network being written: its ops, a seeded source of constants and quantization."""

    def __init__(self, seed: int, int16: bool) -> None:
        self.rng = random.Random(seed)
        self.np_rng = np.random.default_rng(seed)
        self.int16 = int16
        self.ops: list[Op] = []

    def fm(self, shape: tuple[int, ...]) -> Tensor:
        scale = self.rng.uniform(0.0005, 0.002) if self.int16 else self.rng.uniform(0.02, 0.1)
        zero = 0 if self.int16 else self.rng.randint(-10, 10)
        dtype = DataType.INT16 if self.int16 else DataType.INT8
        return Tensor(f"t{len(self.ops)}_{self.rng.randrange(1 << 16)}", shape, dtype, Quantization((scale,), (zero,)))

    def _const(self, values: np.ndarray, dtype: DataType, quant: Quantization | None) -> Tensor:
        values.flags.writeable = False
        return Tensor(f"c{len(self.ops)}_{self.rng.randrange(1 << 16)}", values.shape, dtype, quant, values)

    def _weights_bias(self, shape: tuple[int, ...], channels: int) -> tuple[Tensor, Tensor]:
        w = self._const(self.np_rng.integers(-127, 128, size=shape).astype(np.int8), DataType.INT8,
                        Quantization((self.rng.uniform(0.002, 0.02),), (0,)))
        bias_type = (np.int64, DataType.INT64) if self.int16 else (np.int32, DataType.INT32)
        b = self._const(self.np_rng.integers(-300, 300, size=channels).astype(bias_type[0]), bias_type[1], None)
        return w, b

    def add(self, kind: str, inputs: list[Tensor], output: Tensor, **options: object) -> Tensor:
        self.ops.append(Op(kind, tuple(inputs), (output,), frozen_options(options), len(self.ops)))
        return output

    def conv(self, x: Tensor, k: tuple[int, int], s: tuple[int, int], cout: int | None = None) -> Tensor:
        _, h, w, c = x.shape
        cout = cout or c
        y = self.fm((1, -(-h // s[0]), -(-w // s[1]), cout))
        return self.add("CONV_2D", [x, *self._weights_bias((cout, *k, c), cout)], y, padding="SAME",
                        stride_h=s[0], stride_w=s[1], dilation_h_factor=1, dilation_w_factor=1,
                        fused_activation_function="RELU")

    def depthwise(self, x: Tensor, k: tuple[int, int], s: tuple[int, int]) -> Tensor:
        _, h, w, c = x.shape
        y = self.fm((1, -(-h // s[0]), -(-w // s[1]), c))
        return self.add("DEPTHWISE_CONV_2D", [x, *self._weights_bias((1, *k, c), c)], y, padding="SAME",
                        stride_h=s[0], stride_w=s[1], depth_multiplier=1, dilation_h_factor=1, dilation_w_factor=1,
                        fused_activation_function="NONE")

    def pool(self, kind: str, x: Tensor, k: int, s: int) -> Tensor:
        _, h, w, c = x.shape
        y = Tensor(f"p{len(self.ops)}", (1, -(-h // s), -(-w // s), c), x.dtype, x.quant)
        return self.add(kind, [x], y, padding="SAME", stride_h=s, stride_w=s, filter_height=k, filter_width=k,
                        fused_activation_function="NONE")


def _strided(n: _Net, x: Tensor) -> Tensor:
    y = n.conv(n.conv(x, (3, 3), (1, 1), 8), (5, 5), (3, 3))
    return n.conv(n.pool("MAX_POOL_2D", n.depthwise(y, (3, 3), (2, 2)), 3, 3), (1, 1), (1, 1), 5)


def _wide(n: _Net, x: Tensor) -> Tensor:
    y = n.pool("AVERAGE_POOL_2D", n.depthwise(n.conv(x, (1, 7), (1, 3), 12), (7, 1), (3, 1)), 2, 2)
    z = n.add("ADD", [y, n.conv(y, (1, 1), (1, 1))], n.fm(y.shape), fused_activation_function="NONE")
    return n.conv(z, (3, 3), (1, 1), 3)


def _large(n: _Net, x: Tensor) -> Tensor:
    y = n.pool("AVERAGE_POOL_2D", n.conv(x, (1, 1), (4, 4), 16), 5, 1)
    return n.conv(y, (2, 2), (2, 2), 7)


CHAINS = {"strided": _strided, "wide": _wide, "large": _large}


def stress_networks() -> list[Model]:
    """Every stress network, in a fixed order (seeded by its position)."""
    found = []
    for h in HEIGHTS:
        for w in WIDTHS:
            for chain, build in CHAINS.items():
                for int16 in (False, True):
                    c = DEPTHS[len(found) % len(DEPTHS)]
                    net = _Net(len(found), int16)
                    x = net.fm((1, h, w, c))
                    y = build(net, x)
                    name = f"stress_{h}x{w}x{c}_{chain}{'_i16' if int16 else ''}"
                    found.append(Model(name, (Graph("main", tuple(net.ops), (x,), (y,)),)))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    for model in stress_networks():
        path = args.out / f"{model.name}.tflite"
        path.write_bytes(write_tflite(model))
        print(path)


if __name__ == "__main__":
    main()
