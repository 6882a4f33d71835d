"""List the layers whose NPU cycles or MACs differ most from Vela 5.2.0 legacy's reference outputs.

Usage: python bench/layer_diff.py [--scenario NAME] [--model STEM ...] [--top N] [--ref /work/vela-ref]

Reads Vela's per-layer CSV and --verbose-schedule text from the reference directory (no Vela run),
plans with npuplan, and prints per layer: ours vs Vela NPU cycles, MACs, block config, weight buffering.
Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import csv
import re
from pathlib import Path

import npuplan
from npuplan.report import build_report

from scenarios import SCENARIOS  # noqa: E402
from vela_layers import TOLERANCE, relative_error  # noqa: E402


def vela_schedule(path: Path) -> dict[str, dict[str, str]]:
    """Per OFM name: Vela's block config and weight-buffer lines from --verbose-schedule."""
    found: dict[str, dict[str, str]] = {}
    current: dict[str, str] | None = None
    if not path.exists():
        return found
    for line in path.read_text().splitlines():
        m = re.match(r"\s*\d+: Operation (.*?)\s+- OFM", line)
        if m:
            current = found.setdefault(m.group(1), {})
            continue
        if current is None:
            continue
        s = line.strip()
        for key in ("Block Config", "Weight buffer1", "Weight buffer2", "Depth slices", "Encoded Weights"):
            if s.startswith(key):
                current[key] = s.split("=", 1)[1].strip()
    return found


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--scenario", default="u55_128_highend_shared_perf")
    parser.add_argument("--model", action="append", default=None)
    parser.add_argument("--top", type=int, default=15)
    parser.add_argument("--ref", default="/work/vela-ref")
    parser.add_argument("--zoo", default="/work/shared/models")
    args = parser.parse_args()
    models = sorted(Path(args.zoo).glob("*.tflite"))
    if args.model:
        models = [m for m in models if m.stem in args.model]
    for model in models:
        ref = Path(args.ref) / args.scenario / model.stem
        vela_csv = ref / f"{model.stem}_per-layer.csv"
        if not vela_csv.exists():
            continue
        report = build_report(npuplan.plan(model, **SCENARIOS[args.scenario]))
        ours = {layer.name: layer for layer in report.layers}
        sched = vela_schedule(ref / "schedule.txt")
        rows = []
        for row in csv.DictReader(open(vela_csv)):
            if row.get("NPU") in (None, "", "NPU") or row["Name"] not in ours:
                continue
            layer, theirs = ours[row["Name"]], float(row["NPU"])
            err = relative_error(layer.npu_cycles, theirs)
            v = sched.get(row["Name"], {})
            wb = v.get("Weight buffer1", "-") + ("+" + v["Weight buffer2"] if "Weight buffer2" in v else "")
            rows.append((abs(err), err, row["NNG Operator"], layer.npu_cycles, theirs, layer.macs, int(row["MAC Count"]),
                         layer.block_config, v.get("Block Config", "-"), layer.weight_buffering, wb,
                         v.get("Depth slices", ""), row["Name"][:50]))
        hits = sum(r[0] <= TOLERANCE for r in rows)
        print(f"\n== {model.stem}: {hits}/{len(rows)} within 10%")
        for r in sorted(rows, reverse=True)[: args.top]:
            print(f"{r[1]*100:7.1f}% {r[2]:20} ours {r[3]:9.0f} vela {r[4]:9.0f} macs {r[5]:>9}/{r[6]:<9} "
                  f"blk {r[7]} / {r[8]}  wb {r[9]} / {r[10]} {r[11]}  {r[12]}")


if __name__ == "__main__":
    main()


def input_diffs(model: Path, scenario: str) -> None:
    """Print, per op, the cost inputs that differ between npuplan's final query and Vela's dump."""
    import json

    import npuplan.schedule.pricing.cost_adapter as adapter

    recorded: dict[str, object] = {}
    original = adapter.op_cost

    def recording(query, arch):  # type: ignore[no-untyped-def]
        recorded[query.op.name] = query
        return original(query, arch)

    adapter.op_cost = recording
    try:
        npuplan.plan(model, **SCENARIOS[scenario])
    finally:
        adapter.op_cost = original
    dump = Path("/work/cost-ref") / scenario / f"{model.stem}.json"
    if not dump.exists():
        return
    counts: dict[str, int] = {}
    for rec in json.loads(dump.read_text()):
        q = recorded.get(rec["name"])
        if q is None:
            counts["missing"] = counts.get("missing", 0) + 1
            continue
        diffs = []
        ours = {
            "ifm": [q.ifm.shape.n, q.ifm.shape.h, q.ifm.shape.w, q.ifm.shape.c], "ifm_format": q.ifm.format,
            "ifm_area": q.ifm.area.name if hasattr(q.ifm.area, "name") else str(q.ifm.area),
            "ofm_format": q.ofm.format, "ofm_block": [q.block.ofm_block.height, q.block.ofm_block.width, q.block.ofm_block.depth],
            "ifm2_format": q.ifm2.format if q.ifm2 else None,
            "lut": bool(q.lut), "fetch": str(q.weights.fetch) if q.weights else None,
            "slices": list(q.weights.depth_slices) if q.weights and q.weights.depth_slices else None,
        }
        w = rec.get("weights") or {}
        theirs = {
            "ifm": rec["ifm"], "ifm_format": rec["ifm_format"], "ifm_area": rec["ifm_area"], "ofm_format": rec["ofm_format"],
            "ofm_block": rec["ofm_block"], "ifm2_format": rec["ifm2_format"],
            "lut": bool(rec["lut"] and rec["lut"]["moved"]),
            "fetch": None if not rec.get("weights") else ("buffered" if w.get("buffer_area") else "direct"),
            "slices": rec["depth_slices"] if rec.get("weights") and w.get("buffer_area") else None,
        }
        for key in ours:
            a, b = ours[key], theirs[key]
            if key == "ifm_area":
                a, b = str(a).lower().replace("_", ""), str(b).lower().replace("_", "")
            if key == "fetch" and a and b:
                a = "direct" if a == "direct" else "buffered"
            if key == "slices" and (ours["fetch"] in (None, "direct")):
                a = None
            if a != b:
                diffs.append(f"{key}: {ours[key]} vs {theirs[key]}")
                counts[key] = counts.get(key, 0) + 1
        if diffs:
            print(f"  {rec['op_type']:12} {rec['name'][:40]:40} " + "; ".join(diffs))
    print(f"  differing inputs by field: {counts}")


if __name__ == "__main__" and "--inputs" in __import__("sys").argv:
    pass
