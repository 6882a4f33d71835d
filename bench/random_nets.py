"""Write seeded random networks (bench/random_graphs.py) as .tflite files, e.g. to run Vela on them.

Usage: python bench/random_nets.py --out DIR [--seed 0] [--count 20] [--generation 2]

Network ``random_<seed + i>`` is the same file for the same seed and generation (1: the sets
written before generation 2 added the remaining operator types and stress shapes, e.g. seeds 0,
100 and 300 in bench/results; 2: seeds 500 on); compare it with
``bench/zoo_vela.py --zoo DIR`` and ``bench/zoo_compare.py --zoo DIR``. Prints the files written.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent / "src"), str(HERE.parent)]

from bench.random_graphs import network_bytes  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--count", type=int, default=20)
    parser.add_argument("--generation", type=int, default=2, choices=(1, 2))
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    for i in range(args.count):
        path = args.out / f"random_{args.seed + i}.tflite"
        path.write_bytes(network_bytes(args.seed + i, generation=args.generation))
        print(path)


if __name__ == "__main__":
    main()
