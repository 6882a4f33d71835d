"""Per-operation differential check of SOFTMAX: every NPU operation of each softmax in Vela's file
and in npuplan's (--emit-tflite), register by register, with the lookup tables' bytes.

Usage:
  python bench/softmax_compare.py MODEL.tflite [MODEL ...] [--scenario NAME] [--vela PATH] [--dump]

Both files are decoded with npuplan's register-stream decoder. A softmax is found in each stream as
a max pooling followed by a subtraction writing 32-bit values (the start of Vela's decomposition);
its operations are then compared in order: kind and elementwise function, IFM/IFM2/OFM shapes,
precisions (without the layout bit), zero points, scales, activation and clamp, IFM2 broadcast
and scalar, pooling kernel, and the bytes of the lookup table a TABLE_LOOKUP activation reads
(the bytes the last DMA into the NPU's internal memory copied from the flash tensor). Which side
is trusted: Vela's (its decomposition is what runs on hardware); a differing register is printed
with both values. When the two plans stripe or cascade the softmax differently (the order and
heights of the operations differ), the distinct output stages (registers but shapes and the
height broadcast bit, with tables) of both are compared as sets. Prints figures; asserts
nothing; a model Vela fails on is a row. The small networks: bench/softmax_models.py.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path

from deploy_compare import run_npuplan, run_vela, tool_arguments
from scenarios import SCENARIOS

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))

from npuplan.regstream.tflite_file import ethos_u_payloads  # noqa: E402
from npuplan.regstream.words import decode_words, payload_words  # noqa: E402

_KINDS = {"NPU_OP_CONV": "Conv2D", "NPU_OP_DEPTHWISE": "DepthWise", "NPU_OP_POOL": "Pooling",
          "NPU_OP_ELEMENTWISE": "ElementWise"}
_ELEMENTWISE = {0: "MUL", 1: "ADD", 2: "SUB", 3: "MIN", 4: "MAX", 5: "LRELU", 6: "ABS", 7: "CLZ", 8: "SHR", 9: "SHL"}
_POOL = {0: "MAX", 1: "AVERAGE", 2: "REDUCE_SUM"}
_SHAPE = ("IFM_DEPTH_M1", "OFM_WIDTH_M1", "OFM_HEIGHT_M1", "OFM_DEPTH_M1")
_STAGE = ("IFM_PRECISION", "OFM_PRECISION", "IFM_ZERO_POINT", "OFM_ZERO_POINT", "OFM_SCALE", "ACTIVATION",
          "ACTIVATION_MIN", "ACTIVATION_MAX")
_ELEMENTWISE_STAGE = ("IFM2_PRECISION", "IFM2_ZERO_POINT", "IFM2_BROADCAST", "OPA_SCALE", "OPB_SCALE")
_POOL_STAGE = ("KERNEL_WIDTH_M1", "KERNEL_HEIGHT_M1", "KERNEL_STRIDE")
_LAYOUT_BIT = ~(1 << 6)  # NHCWB16 or NHWC is a placement choice, not a value the op computes
_SCALAR_BIT = 1 << 7  # IFM2_BROADCAST: the second operand is IFM2_SCALAR
_TABLE = 16  # ACTIVATION function codes 16..23: table lookup in slot 0..7


@dataclass(frozen=True)
class Operation:
    """One decoded NPU operation: its kind and the registers deciding what it computes."""

    kind: str
    registers: tuple[tuple[str, int], ...]
    lut: bytes | None

    @property
    def values(self) -> dict[str, int]:
        return dict(self.registers)


def _operation(name: str, param: int, regs: dict[str, int], lut: bytes | None) -> Operation:
    kind = _KINDS[name]
    if kind == "ElementWise":
        kind += ":" + _ELEMENTWISE.get(param, str(param))
    elif kind == "Pooling":
        kind += ":" + _POOL.get(param, str(param))
    names = _SHAPE + _STAGE
    if kind.startswith("ElementWise") and kind != "ElementWise:CLZ":  # CLZ has one operand
        names += _ELEMENTWISE_STAGE
        if regs.get("IFM2_BROADCAST", 0) & _SCALAR_BIT:
            names += ("IFM2_SCALAR",)
    elif kind.startswith("Pooling"):
        names += _POOL_STAGE
    values = {n: regs.get(n, 0) for n in names}
    for n in ("IFM_PRECISION", "OFM_PRECISION", "IFM2_PRECISION"):
        if n in values:
            values[n] &= _LAYOUT_BIT
    table = regs.get("ACTIVATION", 0) & 0x1F
    return Operation(kind, tuple(values.items()), lut if table >= _TABLE else None)


def operations(data: bytes) -> list[Operation]:
    """Every NPU operation of every ethos-u operator of a file, in order."""
    out: list[Operation] = []
    for stream, flash in ethos_u_payloads(data):
        regs: dict[str, int] = {}
        lut: bytes | None = None
        for w in decode_words(payload_words(stream).words):
            if w.name in _KINDS:
                out.append(_operation(w.name, w.param, regs, lut))
            elif w.name == "NPU_OP_DMA_START" and regs.get("DMA0_DST_REGION", 0) & (1 << 8):
                src, length = regs.get("DMA0_SRC", 0), regs.get("DMA0_LEN", 0)
                lut = flash[src:src + length]
            elif not w.name.startswith("NPU_OP_"):
                regs[w.name] = w.value
    return out


def softmax_starts(ops: list[Operation]) -> list[int]:
    """Where each softmax decomposition starts: a max pooling, then a SUB writing 32-bit values."""
    return [k for k in range(len(ops) - 1)
            if ops[k].kind == "Pooling:MAX" and ops[k + 1].kind == "ElementWise:SUB"
            and (ops[k + 1].values["OFM_PRECISION"] >> 1) & 3 == 2]


def softmax_length(ops: list[Operation], start: int) -> int:
    """28 operations for 8 bits, 15 for 16 bits (the IFM precision of the max pooling)."""
    return 15 if (ops[start].values["IFM_PRECISION"] >> 2) & 3 == 1 else 28


def softmax_span(ops: list[Operation], start: int) -> list[Operation]:
    """The operations of the softmax starting at ``start``, however striped: up to the last row
    stripe of its final shift (the first SHR writing 8 or 16 bits)."""
    end = start + 1
    while end < len(ops) and not (ops[end].kind == "ElementWise:SHR" and (ops[end].values["OFM_PRECISION"] >> 1) & 3 != 2):
        end += 1
    while end + 1 < len(ops) and ops[end + 1].kind != "Pooling:MAX" and end + 1 - start < 4 * 28:
        if ops[end + 1].kind == "ElementWise:SHR" and (ops[end + 1].values["OFM_PRECISION"] >> 1) & 3 != 2:
            end += 1  # another row stripe of the final shift (a cascade interleaves the last steps)
        else:
            break
    return ops[start:end + 1]


_SHAPES = ("IFM_DEPTH_M1", "OFM_WIDTH_M1", "OFM_HEIGHT_M1", "OFM_DEPTH_M1")


def stage_signatures(ops: list[Operation]) -> set[tuple[object, ...]]:
    """Each operation's kind, registers but its shape, and table: what it computes per value. The
    height broadcast bit of IFM2_BROADCAST is left out too: a one-row stripe needs none."""
    return {(o.kind, tuple((n, v & ~1 if n == "IFM2_BROADCAST" else v) for n, v in o.registers if n not in _SHAPES),
             o.lut) for o in ops}


def _fmt(value: int) -> str:
    return str(value) if -1024 < value < 1024 else hex(value)


def compare_softmax(vela: list[Operation], ours: list[Operation], *, dump: bool) -> tuple[int, int, list[str]]:
    """(operations equal, operations compared, differences) over the first softmax of each side."""
    sv, so = softmax_starts(vela), softmax_starts(ours)
    if dump and sv:
        for k, a in enumerate(vela[sv[0]:sv[0] + softmax_length(vela, sv[0])]):
            print(f"    {k:2} {a.kind:18} " + " ".join(f"{name}={_fmt(v)}" for name, v in a.registers)
                  + (f" lut={len(a.lut)}B" if a.lut else ""))
    if not sv or not so:
        return 0, 0, [f"softmax not found (Vela {len(sv)}, npuplan {len(so)})"]
    diffs: list[str] = []
    n = softmax_length(vela, sv[0])
    equal = 0
    for k in range(min(n, len(vela) - sv[0])):
        a = vela[sv[0] + k]
        b = ours[so[0] + k] if so[0] + k < len(ours) else None
        if b is None:
            diffs.append(f"op {k}: missing in npuplan's stream")
            continue
        here = [] if a.kind == b.kind else [f"kind {a.kind} / {b.kind}"]
        va, vb = a.values, b.values
        here += [f"{name} {_fmt(va.get(name, 0))} / {_fmt(vb.get(name, 0))}"
                 for name in dict.fromkeys((*va, *vb)) if va.get(name, 0) != vb.get(name, 0)]
        if a.lut != b.lut:
            here.append(f"LUT {len(a.lut or b'')} bytes / {len(b.lut or b'')} bytes, "
                        f"{'same length, different bytes' if a.lut and b.lut and len(a.lut) == len(b.lut) else ''}")
        if here:
            diffs.append(f"op {k} {a.kind}: " + "; ".join(here))
        else:
            equal += 1
    return equal, n, diffs


def run(model: Path, scenario: str, vela_path: Path, *, dump: bool) -> None:
    options = SCENARIOS[scenario]
    vela, ours = run_vela(model, options, vela_path), run_npuplan(model, options)
    for side in (vela, ours):
        if side.data is None:
            print(f"{model.stem} / {scenario}: {side.name} failed: {side.error}")
            if dump and vela.data is not None:
                compare_softmax(operations(vela.data), [], dump=True)
            return
    assert vela.data is not None and ours.data is not None
    equal, n, diffs = compare_softmax(operations(vela.data), operations(ours.data), dump=dump)
    print(f"{model.stem} / {scenario}: softmax operations equal to Vela's {equal}/{n}")
    if equal == n:
        return
    vela_ops, our_ops = operations(vela.data), operations(ours.data)
    sv, so = softmax_starts(vela_ops), softmax_starts(our_ops)
    if sv and so:  # striped or cascaded otherwise: what the operations compute, whatever their order
        a, b = stage_signatures(softmax_span(vela_ops, sv[0])), stage_signatures(softmax_span(our_ops, so[0]))
        print(f"    distinct output stages (registers but shapes and height broadcast, tables): npuplan {len(b)}, "
              f"of which in Vela's "
              f"{len(a & b)} (Vela {len(a)})")
    for d in diffs:
        print(f"    {d}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="+", type=Path)
    tool_arguments(parser)
    parser.add_argument("--dump", action="store_true", help="print Vela's registers of each softmax operation")
    args = parser.parse_args()
    for model in args.models:
        run(model, args.scenario, args.vela, dump=args.dump)


if __name__ == "__main__":
    main()
