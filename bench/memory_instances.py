"""Seeded random live ranges (the same generator as bench/alloc_bench.py --random)."""

from __future__ import annotations

import random

from npuplan.memory import LiveRange


def random_instances(count: int, seed: int = 0) -> list[list[LiveRange]]:
    """``count`` instances of 5-120 ranges over 5-60 steps, small and large sizes mixed."""
    rng = random.Random(seed)
    found = []
    for _ in range(count):
        n, steps = rng.randint(5, 120), rng.randint(5, 60)
        ranges = []
        for i in range(n):
            start = rng.randint(0, steps - 1)
            end = min(steps - 1, start + int(rng.expovariate(1 / 4)))
            ranges.append(LiveRange(f"r{i}", start, end, rng.choice([rng.randint(1, 64) * 16, rng.randint(1, 4096) * 16])))
        found.append(ranges)
    return found
