"""Which TFLite operator types each Vela 5.2.0 core keeps off the CPU on the zoo, from the cache
``bench/zoo_vela.py`` writes (no Vela run).

Usage: python bench/zoo_npu_types.py [--zoo /work/zoo] [--vela-results bench/reference/zoo_vela_5.2.0.jsonl]
                                     [--scenario u55_128_highend_shared_perf]

An operator is on the CPU when Vela's ``--show-cpu-operations`` names its output; every other
operator of a model Vela compiled ran on the NPU or was removed (a reshape, or shape arithmetic
folded at compile time). Per core: each operator type with at least one operator off the CPU, and
in how many models, then the types that stayed on the CPU wherever they occur. Needs the
``tflite`` package (system Python). Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "zoo"))

from op_census import operators  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--zoo", type=Path, default=Path("/work/zoo"))
    parser.add_argument("--vela-results", type=Path, default=HERE / "reference" / "zoo_vela_5.2.0.jsonl")
    parser.add_argument("--scenario", default="u55_128_highend_shared_perf")
    args = parser.parse_args()
    off_cpu: dict[str, Counter[str]] = {}
    seen: dict[str, Counter[str]] = {}
    for line in args.vela_results.read_text().splitlines():
        rec = json.loads(line)
        path = args.zoo / f"{rec['model']}.tflite"
        if rec["scenario"] != args.scenario or rec["rc"] != 0 or not path.exists():
            continue
        on_cpu = {name for _, name in rec.get("cpu_ops", [])}
        ops = operators(path)
        seen.setdefault(rec["core"], Counter()).update({t for t, _ in ops})
        off_cpu.setdefault(rec["core"], Counter()).update({t for t, outputs in ops if not on_cpu & set(outputs)})
    for core in sorted(seen):
        npu = off_cpu.get(core, Counter())
        print(f"{core}: off the CPU ({len(npu)} types, models): "
              + ", ".join(f"{t} {n}" for t, n in sorted(npu.items())))
        print(f"{core}: always on the CPU: " + ", ".join(sorted(set(seen[core]) - set(npu))))


if __name__ == "__main__":
    main()
