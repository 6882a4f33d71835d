"""Operator order on the differential zoo: npuplan's SRAM with the file's order (``--no-reorder``)
and with the order search, against both Vela 5.2.0 cores, side by side in one run.

Usage:
  python bench/order_compare.py [--zoo /work/zoo] [--scenario u55_64_deep_shared_size ...]
                                [--vela-results bench/reference/zoo_vela_5.2.0.jsonl] [--model NAME ...]

Per model and scenario: sram_memory_used (KiB) with the file order and with the search, Vela
legacy's and default's, the ratio ours / the better Vela core, the cycles ratio search / file
order, and the compile seconds of both plans (same process, one after the other). In the 256 KiB
scenario a model that does not fit is ``-``. Summary: geomean ours / better Vela over the models
every side planned, models above the better Vela core, and how many fit 256 KiB. Vela's figures
come from ``bench/zoo_vela.py``'s cache. Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

from scenarios import BUDGET_256K, SCENARIOS
from zoo_compare import load_vela, vela_figure

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))

from npuplan.api import plan  # noqa: E402
from npuplan.errors import NpuplanError  # noqa: E402

OPTIONS = {**SCENARIOS, **BUDGET_256K}


def _plan(path: Path, options: dict[str, str], *, reorder: bool) -> tuple[float | None, int, float]:
    """(SRAM KiB or None when it does not plan, cycles, seconds)."""
    started = time.perf_counter()
    try:
        result = plan(path, **options, reorder=reorder)
    except NpuplanError:
        return None, 0, time.perf_counter() - started
    return result.sram_memory_used_bytes / 1024, result.schedule.total_npu_cycles, time.perf_counter() - started


def _kib(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--zoo", type=Path, default=Path("/work/zoo"))
    parser.add_argument("--scenario", nargs="*", default=["u55_64_deep_shared_size"], choices=sorted(OPTIONS))
    parser.add_argument("--vela-results", type=Path, default=HERE / "reference" / "zoo_vela_5.2.0.jsonl")
    parser.add_argument("--model", nargs="*")
    args = parser.parse_args()
    vela = load_vela(args.vela_results) if args.vela_results.exists() else {}
    models = sorted(args.zoo.glob("*.tflite"))
    if args.model:
        models = [m for m in models if m.stem in args.model]
    for scenario in args.scenario:
        print(f"== {scenario}")
        print(f"{'model':28s} {'file':>8s} {'search':>8s} {'legacy':>8s} {'default':>8s} {'ours/vela':>9s} "
              f"{'cyc':>6s} {'t file':>7s} {'t search':>8s}")
        ratios, above, fits = [], [], [0, 0, 0, 0]
        for path in models:
            before, cycles_before, t_before = _plan(path, OPTIONS[scenario], reorder=False)
            after, cycles_after, t_after = _plan(path, OPTIONS[scenario], reorder=True)
            cores = [vela_figure(vela.get((path.stem, scenario, c)), "sram_memory_used") for c in ("legacy", "default")]
            best = min((c for c in cores if c is not None), default=None)
            ratio = None if after is None or best is None else after / best
            if ratio is not None:
                ratios.append(ratio)
                if ratio > 1.0001:
                    above.append(path.stem)
            for k, value in enumerate((before, after, *cores)):
                fits[k] += value is not None and value * 1024 <= 262144
            cyc = f"{cycles_after / cycles_before:.3f}" if cycles_before and cycles_after else "-"
            print(f"{path.stem:28s} {_kib(before):>8s} {_kib(after):>8s} {_kib(cores[0]):>8s} {_kib(cores[1]):>8s} "
                  f"{'-' if ratio is None else f'{ratio:.3f}':>9s} {cyc:>6s} {t_before:7.2f} {t_after:8.2f}", flush=True)
        if ratios:
            geomean = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
            print(f"geomean ours (search) / better Vela: {geomean:.3f} over {len(ratios)} models; "
                  f"above it on {len(above)}: {' '.join(above)}")
        print(f"within 256 KiB: file order {fits[0]}, search {fits[1]}, Vela legacy {fits[2]}, default {fits[3]}")


if __name__ == "__main__":
    main()
