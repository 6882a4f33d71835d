"""Emit and validate seeded random networks (bench/random_graphs.py) in the three public scenarios.

Usage: python bench/deploy_fuzz.py [--seed 0] [--count 150] [--scenario NAME ...]

Each network is planned deployably, emitted (``npuplan.emit.plan_and_emit``) and replayed by
``npuplan validate``'s checker. A one-line refusal (``EmitError``) is a result, printed with its
seed; a validation failure or any other exception is a bug, printed with the seed that reproduces
it. Prints the counts; asserts nothing.
"""

from __future__ import annotations

import argparse
import collections
import sys
import tempfile
from pathlib import Path

from scenarios import SCENARIOS

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent / "src"), str(HERE.parent)]

from npuplan.api import plan_and_emit  # noqa: E402
from npuplan.errors import EmitError, NpuplanError  # noqa: E402
from npuplan.regstream import validate_tflite  # noqa: E402
from bench.random_graphs import network_bytes  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--count", type=int, default=150)
    parser.add_argument("--scenario", action="append", choices=sorted(SCENARIOS))
    parser.add_argument("--generation", type=int, default=1, help="of bench/random_graphs.py (the figures in "
                        "bench/results are of generation 1)")
    args = parser.parse_args()
    counts: collections.Counter[str] = collections.Counter()
    with tempfile.TemporaryDirectory() as tmp:
        for seed in range(args.seed, args.seed + args.count):
            path = Path(tmp) / f"random_{seed}.tflite"
            path.write_bytes(network_bytes(seed, generation=args.generation))
            for name in args.scenario or list(SCENARIOS):
                try:
                    _, emitted = plan_and_emit(path, **SCENARIOS[name])
                    validate_tflite(emitted.data)
                    counts["emitted and valid"] += 1
                except EmitError as error:
                    counts["refused"] += 1
                    print(f"seed {seed} {name}: refused: {error}")
                except NpuplanError as error:
                    counts[type(error).__name__] += 1
                    print(f"seed {seed} {name}: BUG {type(error).__name__}: {error}")
                except Exception as error:  # noqa: BLE001 - a crash is a finding, with its seed
                    counts["crash"] += 1
                    print(f"seed {seed} {name}: BUG crash {type(error).__name__}: {error}")
    print(dict(counts))


if __name__ == "__main__":
    main()
