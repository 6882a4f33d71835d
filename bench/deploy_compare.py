"""Differential check of the deployable file: Vela's output and npuplan's --emit-tflite on the same
model and options, both decoded with npuplan's register-stream decoder and printed side by side.

Usage:
  python bench/deploy_compare.py MODEL.tflite [--scenario NAME] [--vela PATH/TO/vela] [--ops N]
  python bench/deploy_compare.py --all [--models DIR]     # the summary table over every model x scenario

Per run: NPU operations by kind, DMAs and waits, flash / scratch / fast-scratch bytes, file sizes,
whether each file validates (npuplan validate), the operations' output stages (kind with scales,
zero points, activation and precision registers) also found in Vela's stream, the bias/scale records both files hold (10-byte
per-channel entries, each record resolved through the DMA that filled its weight buffer) and how
many of npuplan's are byte-identical to one of Vela's, emit time (npuplan's emit step, after planning, in this process) and
Vela's whole-process wall time. With a model, also the first N operations of each stream side by
side (kind, IFM and OFM box, kernel HxW/stride, OFM block). Which side to trust: Vela's file is the
reference for the layout and the encodings (it has run on hardware); npuplan keeps on the CPU the
operators its emitter cannot express (16-bit LUT activations, LSTMs...), so its NPU operation
counts are lower there by design. A model Vela fails on is a row, not an exception. Prints
figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import collections
import glob
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scenarios import SCENARIOS, cli_flags

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))

from npuplan.api import plan_and_emit  # noqa: E402
from npuplan.errors import NpuplanError  # noqa: E402
from npuplan.regstream.events import OUTPUT_STAGE, DmaEvent, NpuEvent, WaitEvent  # noqa: E402
from npuplan.regstream.tflite_file import FileReport, ethos_u_payloads, validate_tflite  # noqa: E402

VELA = Path("/work/vela-venv/bin/vela")
MODELS = HERE.parent / "tests" / "data"  # the bundled models (--models for others)


@dataclass
class Side:
    """One tool's file, decoded."""

    name: str
    data: bytes | None = None
    seconds: float = 0.0
    error: str = ""
    valid: str = ""
    report: FileReport | None = None
    sizes: dict[str, int] = field(default_factory=dict)
    scales: collections.Counter[bytes] = field(default_factory=collections.Counter)
    stages: set[tuple[object, ...]] = field(default_factory=set)
    notes: tuple[str, ...] = ()


def _tensor_sizes(data: bytes) -> dict[str, int]:
    import tflite

    model = tflite.Model.GetRootAsModel(data, 0)
    sg = model.Subgraphs(0)
    sizes = {"flash": 0, "scratch": 0, "fast": 0, "streams": 0}
    seen: set[int] = set()
    for i in range(sg.OperatorsLength()):
        op = sg.Operators(i)
        if model.OperatorCodes(op.OpcodeIndex()).CustomCode() != b"ethos-u":
            continue
        sizes["streams"] += 1
        inputs = [int(k) for k in op.InputsAsNumpy()]
        for key, tensor in (("flash", inputs[1]), ("scratch", inputs[2]), ("fast", inputs[3])):
            if tensor in seen or (key == "fast" and tensor == inputs[2]):
                continue
            seen.add(tensor)
            shape = sg.Tensors(tensor).ShapeAsNumpy()
            sizes[key] += int(shape[0]) if len(shape) else 0
    return sizes


def _flash_of(data: bytes) -> list[bytes]:
    return [flash for _, flash in ethos_u_payloads(data)]


def scale_entries(data: bytes, report: FileReport) -> collections.Counter[bytes]:
    """Every per-channel bias/scale entry the streams read, once per flash record."""
    entries: collections.Counter[bytes] = collections.Counter()
    for flash, stream in zip(_flash_of(data), report.streams):
        filled: dict[tuple[int, int], int] = {}  # (region, address) -> flash address of the DMA source
        seen: set[int] = set()
        for e in stream.events:
            if isinstance(e, DmaEvent) and e.src.region == 0:
                filled[(e.dst.region, e.dst.address)] = e.src.address
            elif isinstance(e, NpuEvent) and e.scales is not None and e.scales.length:
                r = e.scales
                source = r.address if r.region == 0 else _through_dma(filled, r.region, r.address)
                if source is None or source in seen:
                    continue
                seen.add(source)
                chunk = flash[source:source + 10 * e.ofm.depth]
                entries.update(chunk[k:k + 10] for k in range(0, len(chunk), 10))
    return entries


_LAYOUT_BIT = ~(1 << 6)  # NHCWB16 or NHWC is a planning choice, not a value the op computes


def output_stages(report: FileReport) -> set[tuple[object, ...]]:
    """Each operation's kind with its output-stage registers (scales, zero points, activation,
    precision without the layout bit); IFM2 registers only for elementwise ops, the per-tensor
    scales only for pooling and elementwise ops (convolutions scale per channel)."""
    out = set()
    for s in report.streams:
        for e in s.events:
            if not isinstance(e, NpuEvent):
                continue
            names = OUTPUT_STAGE if e.kind in ("Pooling", "ElementWise") else OUTPUT_STAGE[3:]
            regs = dict(zip(names, e.output_stage))
            for name in ("IFM_PRECISION", "IFM2_PRECISION", "OFM_PRECISION"):
                if name in regs:
                    regs[name] &= _LAYOUT_BIT
            if e.kind != "ElementWise":
                for name in ("OPB_SCALE", "IFM2_ZERO_POINT", "IFM2_PRECISION", "IFM2_BROADCAST"):
                    regs.pop(name, None)
            out.add((e.kind, tuple(sorted(regs.items()))))
    return out


def _through_dma(filled: dict[tuple[int, int], int], region: int, address: int) -> int | None:
    """The flash address a weight-buffer address was filled from (the DMA covering it)."""
    best = None
    for (r, dst), src in filled.items():
        if r == region and dst <= address and (best is None or dst > best[0]):
            best = (dst, src)
    return None if best is None else best[1] + address - best[0]


def run_vela(model: Path, options: dict[str, str], vela: Path) -> Side:
    side = Side("vela")
    with tempfile.TemporaryDirectory() as out:
        started = time.perf_counter()
        proc = subprocess.run([str(vela), str(model), *cli_flags(options), "--output-dir", out],
                              capture_output=True, text=True)
        side.seconds = time.perf_counter() - started
        files = glob.glob(f"{out}/*_vela.tflite")
        if proc.returncode != 0 or not files:
            side.error = (proc.stderr.strip().splitlines() or ["no output"])[-1][:100]
            return side
        side.data = Path(files[0]).read_bytes()
    return side


def run_npuplan(model: Path, options: dict[str, str]) -> Side:
    side = Side("npuplan")
    try:
        _, emitted = plan_and_emit(model, **options)
        side.data = emitted.data
        side.seconds = emitted.emit_seconds
        side.notes = emitted.notes
    except NpuplanError as error:
        side.error = str(error)[:100]
    return side


def decode(side: Side) -> None:
    if side.data is None:
        return
    side.sizes = _tensor_sizes(side.data)
    try:
        side.report = validate_tflite(side.data)
        side.valid = "valid"
    except NpuplanError as error:
        side.valid = f"INVALID: {error}"[:100]
        return
    side.scales = scale_entries(side.data, side.report)
    side.stages = output_stages(side.report)


def _kinds(report: FileReport | None) -> str:
    if report is None:
        return "-"
    kinds = collections.Counter(e.kind for s in report.streams for e in s.events if isinstance(e, NpuEvent))
    return " ".join(f"{k}:{v}" for k, v in sorted(kinds.items()))


def _op_line(e: Any) -> str:
    if isinstance(e, NpuEvent):
        i, o = e.ifm, e.ofm
        return (f"{e.kind[:5]:5} {i.height}x{i.width}x{i.depth}->{o.height}x{o.width}x{o.depth} "
                f"k{e.kernel[0]}x{e.kernel[1]}/{e.kernel[2]} b{e.block[0]}x{e.block[1]}x{e.block[2]}")
    if isinstance(e, DmaEvent):
        return f"DMA   r{e.src.region}->r{e.dst.region} {e.src.length} B"
    if isinstance(e, WaitEvent):
        return f"WAIT  {e.kind} <= {e.outstanding}"
    return ""


def compare(model: Path, scenario: str, vela_path: Path) -> tuple[Side, Side]:
    options = SCENARIOS[scenario]
    vela, ours = run_vela(model, options, vela_path), run_npuplan(model, options)
    decode(vela)
    decode(ours)
    return vela, ours


def print_pair(model: Path, scenario: str, vela: Side, ours: Side, ops: int) -> None:
    print(f"{model.stem} / {scenario}")
    rows = [
        ("status", vela.error or vela.valid, ours.error or ours.valid),
        ("ethos-u operators", vela.sizes.get("streams", "-"), ours.sizes.get("streams", "-")),
        ("NPU ops by kind", _kinds(vela.report), _kinds(ours.report)),
        ("NPU ops", vela.report.npu_operations if vela.report else "-", ours.report.npu_operations if ours.report else "-"),
        ("DMAs", vela.report.dma_operations if vela.report else "-", ours.report.dma_operations if ours.report else "-"),
        ("waits", vela.report.waits if vela.report else "-", ours.report.waits if ours.report else "-"),
        ("flash bytes", vela.sizes.get("flash", "-"), ours.sizes.get("flash", "-")),
        ("scratch bytes", vela.sizes.get("scratch", "-"), ours.sizes.get("scratch", "-")),
        ("fast scratch bytes", vela.sizes.get("fast", "-"), ours.sizes.get("fast", "-")),
        ("file bytes", len(vela.data) if vela.data else "-", len(ours.data) if ours.data else "-"),
        ("seconds (Vela: process; npuplan: emit)", f"{vela.seconds:.2f}", f"{ours.seconds:.2f}"),
    ]
    for label, a, b in rows:
        print(f"  {label:40} {str(a):>42}   {str(b):>42}")
    for note in ours.notes:
        print(f"  npuplan note: {note}")
    print(f"  bias/scale entries: npuplan {sum(ours.scales.values())}, of which identical to one of Vela's "
          f"{sum((ours.scales & vela.scales).values())} (Vela {sum(vela.scales.values())})")
    print(f"  output stages (kind, scales, zero points, activation, precision): npuplan {len(ours.stages)} distinct, "
          f"{len(ours.stages & vela.stages)} also in Vela's stream (Vela {len(vela.stages)})")
    if ops and vela.report and ours.report:
        left = [e for s in vela.report.streams for e in s.events]
        right = [e for s in ours.report.streams for e in s.events]
        print(f"  {'Vela':54} | npuplan")
        for k in range(min(ops, max(len(left), len(right)))):
            a = _op_line(left[k]) if k < len(left) else ""
            b = _op_line(right[k]) if k < len(right) else ""
            print(f"  {a:54} | {b}")


def summary(models: list[Path], vela_path: Path) -> None:
    print(f"{'model':26} {'scenario':36} {'emits':>6} {'valid':>6} {'emit s':>7} {'ours B':>10} {'Vela B':>10} "
          f"{'ratio':>6} {'Vela ok':>8} {'scales same':>12} {'stages in Vela':>14}")
    for model in models:
        for scenario in SCENARIOS:
            vela, ours = compare(model, scenario, vela_path)
            size = len(ours.data) if ours.data else 0
            vsize = len(vela.data) if vela.data else 0
            ratio = f"{size / vsize:.3f}" if size and vsize else "-"
            same = f"{sum((ours.scales & vela.scales).values())}/{sum(ours.scales.values())}"
            stages = f"{len(ours.stages & vela.stages)}/{len(ours.stages)}"
            print(f"{model.stem:26} {scenario:36} {'yes' if ours.data else 'NO':>6} "
                  f"{'yes' if ours.valid == 'valid' else 'NO':>6} {ours.seconds:7.2f} {size:10d} {vsize:10d} "
                  f"{ratio:>6} {'yes' if vela.valid == 'valid' else (vela.error or vela.valid)[:8]:>8} {same:>12} "
                  f"{stages:>14}",
                  flush=True)
            if ours.error or (ours.valid and ours.valid != "valid"):
                print(f"    npuplan: {ours.error or ours.valid}")


def tool_arguments(parser: argparse.ArgumentParser) -> None:
    """The options every Vela comparison takes: the scenario, and which Vela to run."""
    parser.add_argument("--scenario", default="u55_128_highend_shared_perf", choices=sorted(SCENARIOS))
    parser.add_argument("--vela", type=Path, default=VELA)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", nargs="?", type=Path)
    tool_arguments(parser)
    parser.add_argument("--ops", type=int, default=30, help="operations listed side by side (0: none)")
    parser.add_argument("--all", action="store_true", help="summary over every model in --models x scenario")
    parser.add_argument("--models", type=Path, default=MODELS)
    args = parser.parse_args()
    if args.all:
        models = sorted(args.models.glob("*.tflite"))
        if not models:
            parser.error(f"no .tflite models in {args.models}")
        summary(models, args.vela)
        return
    if args.model is None:
        parser.error("give a model or --all")
    vela, ours = compare(args.model, args.scenario, args.vela)
    print_pair(args.model, args.scenario, vela, ours, args.ops)


if __name__ == "__main__":
    main()
