"""Lookup tables: npuplan's (TFLite Micro's reference kernels, ``lowering.lut_tables``) against the
ones in Vela's output for the same model, entry by entry.

Usage: python bench/lut_compare.py MODEL.tflite [...]   (runs /work/vela-venv/bin/vela, u55-128)

For each activation operator of the model, compares npuplan's table with the tables Vela's file
DMAs (each table with the one of Vela's it agrees with most: Vela's stream does not name the
operator a table belongs to, and loads a table once for all the operators sharing it): how many
entries are equal, and the differing ones (input value, Vela's entry, npuplan's). Vela computes tanh/logistic in double precision with round-half-away, npuplan
as TFLM's integer kernels do; the differences are those of the two computations. Asserts nothing.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent / "src"), str(HERE)]

from deploy_compare import VELA, _flash_of  # noqa: E402
from npuplan.io.tflite import read_tflite  # noqa: E402
from npuplan.lowering.lut_tables import activation_table  # noqa: E402
from npuplan.regstream import validate_tflite  # noqa: E402
from npuplan.regstream.events import INTERNAL_REGION, DmaEvent  # noqa: E402
from scenarios import SCENARIOS, cli_flags  # noqa: E402

LUT_TYPES = ("TANH", "LOGISTIC", "LEAKY_RELU", "HARD_SWISH", "EXP", "LOG", "RSQRT", "GELU")


def vela_tables(model: Path) -> list[np.ndarray]:
    """The 256-byte tables Vela's file DMAs into the NPU's internal memory, in stream order."""
    with tempfile.TemporaryDirectory() as out:
        subprocess.run([str(VELA), str(model), *cli_flags(SCENARIOS["u55_128_highend_shared_perf"]),
                        "--output-dir", out], check=True, capture_output=True)
        data = (Path(out) / f"{model.stem}_vela.tflite").read_bytes()
    flashes = _flash_of(data)
    tables = []
    for flash, stream in zip(flashes, validate_tflite(data).streams):
        for e in stream.events:
            if isinstance(e, DmaEvent) and e.dst.region == INTERNAL_REGION and e.src.region == 0:
                tables.append(np.frombuffer(flash[e.src.address:e.src.address + 256], dtype=np.int8))
    return tables


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="+", type=Path)
    args = parser.parse_args()
    for path in args.models:
        graph = read_tflite(path).main
        acts = [o for o in graph.ops if o.type in LUT_TYPES]
        theirs = vela_tables(path)
        for op in acts:
            ifm, ofm = op.inputs[0], op.outputs[0]
            assert ifm is not None and ifm.quant is not None and ofm.quant is not None
            ours = activation_table(op.type, ifm.dtype, ifm.quant, ofm.quant, dict(op.options))
            if ours is None:
                print(f"{path.stem} {op.type}: no npuplan table")
                continue
            ours = ours.view(np.int8)
            if not theirs:
                print(f"{path.stem} {op.type} '{op.name}': Vela's file has no table")
                continue
            k, vela = max(enumerate(theirs), key=lambda kv: int(np.sum(kv[1] == ours)))
            diff = [(x - 128, int(vela[x]), int(ours[x])) for x in range(256) if vela[x] != ours[x]]
            print(f"{path.stem} {op.type} '{op.name}': {256 - len(diff)}/256 entries equal to Vela's table {k}"
                  + (f"; differing (input, vela, npuplan): {diff}" if diff else ""))
        print(f"{path.stem}: {len(acts)} activation ops, {len(theirs)} tables DMA'd in Vela's file")


if __name__ == "__main__":
    main()
