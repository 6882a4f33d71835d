"""Choose which competing feature maps go to fast storage: a knapsack over time-varying usage.

Each candidate is a live range (time steps ``start..end`` inclusive) with a size in bytes and a
score (NPU cycles saved by holding it in fast storage). Candidates are split into groups of
overlapping live ranges; a group of at most ``MAX_EXACT_MEMBERS`` is solved exactly (branch and
bound over keep/evict), a larger one greedily by score per byte-step. Usage never exceeds the limit.
"""

from __future__ import annotations


from npuplan.records import record

MAX_EXACT_MEMBERS = 20


@record
class Candidate:
    """A feature map competing for fast storage."""

    name: str
    start: int
    end: int
    size_bytes: int
    score_cycles: int


def groups(candidates: list[Candidate]) -> list[list[Candidate]]:
    """Connected runs of overlapping live ranges, in time order."""
    ordered = sorted(candidates, key=lambda c: (c.start, c.end, c.size_bytes, c.name))
    found: list[list[Candidate]] = []
    end = -1
    for c in ordered:
        if found and c.start <= end:
            found[-1].append(c)
            end = max(end, c.end)
        else:
            found.append([c])
            end = c.end
    return found


def _fits(usage: list[int], c: Candidate, limit_bytes: int) -> bool:
    return max(usage[c.start:c.end + 1]) + c.size_bytes <= limit_bytes


def _add(usage: list[int], c: Candidate, sign: int) -> None:
    for t in range(c.start, c.end + 1):
        usage[t] += sign * c.size_bytes


def solve_exact(members: list[Candidate], usage: list[int], limit_bytes: int) -> frozenset[str]:
    """The highest-scoring subset of ``members`` that fits on top of ``usage`` (not modified)."""
    base = list(usage)
    best: list[object] = [-1, frozenset()]
    suffix = [0] * (len(members) + 1)
    for k in range(len(members) - 1, -1, -1):
        suffix[k] = suffix[k + 1] + max(members[k].score_cycles, 0)
    chosen: list[str] = []

    def visit(k: int, score: int) -> None:
        if score + suffix[k] <= best[0]:  # type: ignore[operator]
            return
        if k == len(members):
            best[0], best[1] = score, frozenset(chosen)
            return
        c = members[k]
        if _fits(base, c, limit_bytes):
            _add(base, c, 1)
            chosen.append(c.name)
            visit(k + 1, score + max(c.score_cycles, 0))
            chosen.pop()
            _add(base, c, -1)
        visit(k + 1, score)

    visit(0, 0)
    return best[1]  # type: ignore[return-value]


def solve_greedy(members: list[Candidate], usage: list[int], limit_bytes: int) -> frozenset[str]:
    """Take members by score per byte-step, each if it still fits (``usage`` is not modified)."""
    base = list(usage)
    kept: list[str] = []
    density = sorted(members, key=lambda c: (-c.score_cycles / max(c.size_bytes * (c.end - c.start + 1), 1), c.name))
    for c in density:
        if c.score_cycles > 0 and _fits(base, c, limit_bytes):
            _add(base, c, 1)
            kept.append(c.name)
    return frozenset(kept)


def partition(
    candidates: list[Candidate], usage: list[int], limit_bytes: int,
) -> tuple[list[Candidate], list[Candidate]]:
    """``(kept, competing)``: the candidates that fit even when all the others are in, and those that
    fit alone but not then (candidates that can never fit are in neither). Reads no score, so a
    caller may cost only the competing candidates and hand both lists to ``choose_partitioned``."""
    possible = [c for c in candidates if c.size_bytes > 0 and _fits(usage, c, limit_bytes)]
    everything = list(usage)
    for c in possible:
        _add(everything, c, 1)
    kept: list[Candidate] = []
    competing: list[Candidate] = []
    for c in possible:
        (kept if max(everything[c.start:c.end + 1]) <= limit_bytes else competing).append(c)
    return kept, competing


def choose(candidates: list[Candidate], usage: list[int], limit_bytes: int) -> frozenset[str]:
    """Names of the candidates to hold in fast storage on top of ``usage`` within ``limit_bytes``.

    Candidates that fit even when all the others are in are kept; candidates that can never fit
    are evicted; the rest compete group by group.
    """
    kept, competing = partition(candidates, usage, limit_bytes)
    return choose_partitioned(kept, competing, usage, limit_bytes)


def choose_partitioned(
    kept: list[Candidate], competing: list[Candidate], usage: list[int], limit_bytes: int,
) -> frozenset[str]:
    """``choose`` given ``partition``'s lists (only the ``competing`` candidates' scores are read)."""
    base = list(usage)
    for c in kept:
        _add(base, c, 1)
    names = {c.name for c in kept}
    for group in groups(competing):
        solve = solve_exact if len(group) <= MAX_EXACT_MEMBERS else solve_greedy
        picked = solve(group, base, limit_bytes)
        for c in group:
            if c.name in picked:
                _add(base, c, 1)
        names |= picked
    return frozenset(names)
