"""Valid deep chains of small layers, for the planning-scaling bench (issue 26: 10,000 ops).

Network ``chain_<n>`` is ``n`` NPU ops on an 8x8x16 int8 feature map: blocks of a 1x1 conv, a 3x3
depthwise conv and a residual ADD of the block's input (so every third op joins a short branch),
each block seeded by its position, so the same ``n`` writes the same file. Built with npuplan's own
TFLite writer (``stress_nets._Net``), no TensorFlow.

Usage: python bench/chain_nets.py [--out /tmp/npuplan_chains] [--ops 1000 3000 10000]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent / "src"), str(HERE)]

from stress_nets import _Net  # noqa: E402

from npuplan.io.tflite_write import write_tflite  # noqa: E402
from npuplan.ir.graph import Graph, Model  # noqa: E402

SHAPE = (1, 8, 8, 16)


def chain_model(ops: int) -> Model:
    """A chain of ``ops`` ops (1x1 conv, 3x3 depthwise, residual ADD, repeated; cut at ``ops``)."""
    net = _Net(ops, int16=False)
    x = net.fm(SHAPE)
    y = x
    while len(net.ops) < ops:
        block_in = y
        y = net.conv(y, (1, 1), (1, 1))
        if len(net.ops) < ops:
            y = net.depthwise(y, (3, 3), (1, 1))
        if len(net.ops) < ops:
            y = net.add("ADD", [block_in, y], net.fm(SHAPE), fused_activation_function="NONE")
    return Model(f"chain_{ops}", (Graph("main", tuple(net.ops), (x,), (y,)),))


def write_chain(out: Path, ops: int) -> Path:
    """``chain_<ops>.tflite`` under ``out`` (written once; the file is the same on every run)."""
    path = out / f"chain_{ops}.tflite"
    if not path.exists():
        out.mkdir(parents=True, exist_ok=True)
        path.write_bytes(write_tflite(chain_model(ops)))
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=Path("/tmp/npuplan_chains"))
    parser.add_argument("--ops", type=int, nargs="+", default=[1000, 3000, 10000])
    args = parser.parse_args()
    for ops in args.ops:
        print(write_chain(args.out, ops))


if __name__ == "__main__":
    main()
