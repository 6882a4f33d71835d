"""How sound and how tight ``costing.least_cycles`` is, and what it would let the searches skip (issue 26).

``least_cycles`` bounds a costing from below without pricing it in full: the least of its blocks'
screens plus the weight DMA it waits for. For each network and scenario this bench plans as
``npuplan plan`` does and, before every costing the plan makes (every ``cost_op`` memo miss),
works out that bound, then compares it with the costing's cycles:

  violations  costings below their bound (a bound that is not one: must be 0)
  tight       costings within 1% of their bound
  screen s    CPU seconds the bounds took (their screens are shared with the costings after them)
  priced s    CPU seconds of the costings themselves (screens and full pricing)

and what a search asking the bound first could leave uncosted, by the costings' own figures:

  weight plans   of the candidates ``weights._ranked`` costs, those costing no less than reading
                 the weights in place (never chosen); ``_ranked`` already leaves uncosted those
                 whose bound says so (as ``cascades._single`` does for single ops' plans)
  segments       of the cascades ``cascade_split`` costs for one limit (Performance), those
                 whose fewest cycles are no fewer than their ops' alone (never chosen)

Prints figures; asserts nothing.

Usage: python bench/plan_bounds.py [--scenario NAME ...] MODEL.tflite ...
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent / "src")]

from scenarios import SCENARIOS  # noqa: E402

from npuplan import api  # noqa: E402
from npuplan.schedule.moves import cascade_split, weights  # noqa: E402
from npuplan.schedule.pricing import costing  # noqa: E402

DEFAULT = ("u55_128_highend_shared_perf", "u55_64_deep_shared_size")


def _instrument(counts: Counter[str], seconds: Counter[str]) -> None:
    """Wrap the costing, the weight ranking and the cascade split to count into ``counts``."""
    priced, ranked, split = costing._cost, weights._ranked, cascade_split._split_decisions

    def cost(net, arch, oracle, op, key):  # type: ignore[no-untyped-def]
        start = time.process_time()
        query, screens = costing._screens(net, arch, oracle, op, key)
        least = [s[0] for s in screens if s is not None]
        bound = min(least) + oracle.weight_wait_cycles(query) - 1 if least else 0
        middle = time.process_time()
        found = priced(net, arch, oracle, op, key)
        seconds["bound"] += middle - start
        seconds["priced"] += time.process_time() - middle
        counts["costings"] += 1
        counts["violations"] += found.cycles < bound
        counts["tight"] += found.cycles <= bound * 1.01 + 1
        return found

    def rank(net, dec, arch, oracle, i, prev_slack, memo):  # type: ignore[no-untyped-def]
        found = ranked(net, dec, arch, oracle, i, prev_slack, memo)
        base = next(s[0] for k, s in found if k == 0)
        counts["weight plans"] += len(found) - 1
        counts["weight plans never chosen"] += sum(1 for k, s in found if k and s[0] >= base)
        return found

    def split_decisions(dec, options, limit):  # type: ignore[no-untyped-def]
        for opts in options.values():
            for segs in opts.values():
                for seg in segs[1:]:
                    alone = [opts[k][0] for k in range(seg.start, seg.end + 1)]
                    counts["segments"] += 1
                    counts["segments never chosen"] += (all(s.peak_bytes <= limit for s in alone)
                                                        and seg.fewest_cycles() >= sum(s.cycles_within(limit)
                                                                                       for s in alone))
        return split(dec, options, limit)

    costing._cost, weights._ranked = cost, rank  # type: ignore[assignment]
    cascade_split._split_decisions = split_decisions  # type: ignore[assignment]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("models", nargs="+", type=Path)
    parser.add_argument("--scenario", action="append", choices=sorted(SCENARIOS))
    args = parser.parse_args()
    counts: Counter[str] = Counter()
    seconds: Counter[str] = Counter()
    _instrument(counts, seconds)
    print(f"{'network':28} {'scenario':30} {'costings':>8} {'violations':>10} {'tight':>6} {'bound s':>7} "
          f"{'priced s':>8} {'weight plans never chosen':>26} {'segments never chosen':>22}")
    for scenario in args.scenario or DEFAULT:
        for model in args.models:
            counts.clear()
            seconds.clear()
            api.plan(model, **SCENARIOS[scenario])
            plans = f"{counts['weight plans never chosen']}/{counts['weight plans']}"
            segs = f"{counts['segments never chosen']}/{counts['segments']}"
            print(f"{model.stem:28} {scenario:30} {counts['costings']:8} {counts['violations']:10} "
                  f"{counts['tight'] / max(counts['costings'], 1):6.0%} {seconds['bound']:7.2f} "
                  f"{seconds['priced']:8.2f} {plans:>26} {segs:>22}", flush=True)


if __name__ == "__main__":
    main()
