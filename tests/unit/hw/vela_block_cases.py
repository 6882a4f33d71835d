"""Extract block-config cases from Vela ``--verbose-schedule`` output (a developer tool, not a test).

    python3 tests/unit/hw/vela_block_cases.py /work/vela-ref OUT.json [model ...]

Each case: scenario, model, op name, Vela op type, kernel, IFM/IFM2/OFM stripe and Vela's block
config ``[ofm_h, ofm_w, ifm_c, ofm_c]``. Element types are not printed by Vela; the comparison
assumes int8 feature maps and no LUT; ops Vela names ``*_lut_hardswish`` (hard-swish lowered to an
elementwise add with a scalar and a LUT) get ``lut_banks=2`` and ``uses_scalar=True``.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

ACCEL = {
    "u55_128_highend_shared_perf": "ethos-u55-128",
    "u55_64_deep_shared_size": "ethos-u55-64",
    "u65_256_highend_dedicated384k_perf": "ethos-u65-256",
}
_OP = re.compile(r"^\t(\d+): Operation (.*?)  - OFM")
_SHAPE = re.compile(r"\[([\d, ]+)\]")


def _shape(line: str) -> list[int] | None:
    m = _SHAPE.search(line)
    return [int(v) for v in m.group(1).split(",")] if m else None


def parse_schedule(text: str) -> list[dict]:
    cases: list[dict] = []
    cur: dict | None = None
    for line in text.splitlines():
        m = _OP.match(line)
        if m:
            cur = {"name": m.group(2)[-48:]}
            cases.append(cur)
            continue
        if cur is None:
            continue
        s = line.strip()
        if s.startswith("Type:"):
            cur["type"] = s.split(":", 1)[1].strip()
        elif s.startswith("Kernel:"):
            k = re.match(r"Kernel: w=(\d+), h=(\d+), stride=\((\d+), (\d+)\), dilation=\((\d+), (\d+)\)", s)
            assert k, s
            w, h, sx, sy, dx, dy = (int(v) for v in k.groups())
            cur["kernel"] = [h, w, sy, sx, dy, dx]
        elif s.startswith("Block Config ="):
            cur["vela"] = _shape(s)
        elif s.startswith("IFM Stripe"):
            cur["ifm"] = _shape(s)
        elif s.startswith("IFM2 Stripe"):
            cur["ifm2"] = _shape(s)
        elif s.startswith("OFM Stripe"):
            cur["ofm"] = _shape(s)
    return [c for c in cases if "vela" in c]


def main(ref: str, out: str, models: list[str]) -> None:
    result = []
    for scenario, accel in ACCEL.items():
        for sched in sorted(Path(ref, scenario).glob("*/schedule.txt")):
            model = sched.parent.name
            if models and model not in models:
                continue
            for case in parse_schedule(sched.read_text()):
                if case["name"].endswith("lut_hardswish"):
                    case.update(lut_banks=2, uses_scalar=True)
                result.append({"scenario": scenario, "accel": accel, "model": model, **case})
    Path(out).write_text(json.dumps(result, separators=(",", ":")).replace("},{", "},\n{"))
    print(f"{len(result)} cases -> {out}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3:])
