"""``fit``: the smallest arena cache size at which a model reaches an inference rate.

Speed is not proven monotone in the budget (the searches are heuristics, and a plan's allocated
peak may differ from its schedule's), so the search does
not trust one bisection: it plans a ladder of budgets halving from the memory's size, bisects
between the smallest ladder budget that reaches the rate and the one below it (on multiples of
``granularity_bytes``), then tries the SRAM the found plan really uses, rounded up, and bisects
again below it when that reaches the rate too. The answer is always a budget that was planned and
reached the rate, and the budget one granule below it was planned and did not.
"""

from __future__ import annotations

from dataclasses import replace

from npuplan.api import Plan, PreparedModel, plan_prepared
from npuplan.errors import ConfigError, InfeasiblePlan, UsageError
from npuplan.hw import build_architecture
from npuplan.options import PlanOptions
from npuplan.records import record
from npuplan.report import build_report
from npuplan.units import round_up

GRANULARITY_BYTES = 16  # the allocators' alignment: budgets between two multiples plan the same
MAX_REFINEMENTS = 4


@record
class Trial:
    """One budget planned: the rate it reached (0 when nothing fits) and its plan (None then)."""

    budget_bytes: int
    inferences_per_second: float
    plan: Plan | None


@record(slots=False)
class FitResult:
    """The fit of one accelerator: ``answer`` is the smallest budget found reaching the target
    (``None`` when no budget up to ``max_budget_bytes`` does), ``best`` the fastest trial, and
    ``below`` the trial one granule under the answer (the verification that it is the smallest)."""

    accelerator: str
    target_fps: float
    max_budget_bytes: int
    answer: Trial | None
    best: Trial
    below: Trial | None
    plans: int


class _Trials:
    """Budgets planned so far (each once), for one model and options."""

    def __init__(self, model: PreparedModel, options: PlanOptions, target_fps: float) -> None:
        self.model, self.options, self.target_fps = model, options, target_fps
        self.done: dict[int, Trial] = {}

    def at(self, budget: int) -> Trial:
        found = self.done.get(budget)
        if found is None:
            found = self.done[budget] = self._plan(budget)
        return found

    def reaches(self, budget: int) -> bool:
        return self.at(budget).inferences_per_second >= self.target_fps

    def _plan(self, budget: int) -> Trial:
        options = replace(self.options, arena_cache_size_bytes=budget)
        try:
            result = plan_prepared(self.model, options)
        except InfeasiblePlan:
            return Trial(budget, 0.0, None)
        return Trial(budget, build_report(result).inferences_per_second, result)

    def largest_failing_below(self, budget: int) -> int:
        return max((b for b, t in self.done.items() if b < budget and t.inferences_per_second < self.target_fps),
                   default=0)


def fit_budget(model: PreparedModel, options: PlanOptions, target_fps: float, *,
               granularity_bytes: int = GRANULARITY_BYTES) -> FitResult:
    """The smallest multiple of ``granularity_bytes`` that, as ``--arena-cache-size``, plans
    ``model`` at ``target_fps`` inferences per second or more, for ``options.accelerator_config``.

    The largest budget tried is the memory mode's arena cache size (or the accelerator's address
    space). Raises ``ConfigError`` for a bad granularity or rate.
    """
    check_fit_values(target_fps, granularity_bytes)
    top = largest_budget(options)
    trials = _Trials(model, options, target_fps)
    passing = _ladder(trials, top, granularity_bytes)
    answer = None
    if passing is not None:
        answer = _bisect(trials, trials.largest_failing_below(passing), passing, granularity_bytes)
        answer = _refine(trials, answer, granularity_bytes)
    below = trials.at(answer - granularity_bytes) if answer is not None and answer > granularity_bytes else None
    best = max(trials.done.values(), key=lambda t: (t.inferences_per_second, -t.budget_bytes))
    return FitResult(
        accelerator=options.accelerator_config, target_fps=target_fps, max_budget_bytes=top,
        answer=None if answer is None else trials.at(answer), best=best, below=below, plans=len(trials.done))


def check_fit_values(target_fps: float, granularity_bytes: int) -> None:
    """Raise ``ConfigError`` (one line) for a rate that is not positive or a granularity that is
    not a multiple of 16 bytes."""
    if granularity_bytes < 16 or granularity_bytes % 16:
        raise UsageError(f"invalid value '{granularity_bytes}' for --granularity: must be a multiple of 16 bytes")
    if not target_fps > 0:
        raise UsageError(f"invalid value '{target_fps}' for --fps: must be a positive number of inferences/s")


def largest_budget(options: PlanOptions) -> int:
    """The largest budget a fit tries: the memory mode's arena cache size, else the accelerator's
    address space (``ConfigError`` for options that cannot be planned)."""
    return build_architecture(replace(options, arena_cache_size_bytes=None)).arena_cache_size_bytes


def _ladder(trials: _Trials, top: int, granule: int) -> int | None:
    """Plan ``top``, then halve (rounded up to ``granule``) until a budget fails to fit; the
    smallest budget that reaches the rate, or ``None``. A rung whose plan uses less than half its
    budget is followed by the SRAM that plan uses (the rungs between would plan the same)."""
    budget, passing = top, None
    while budget >= granule:
        trial = trials.at(budget)
        if trial.plan is None:
            break
        if trial.inferences_per_second >= trials.target_fps:
            passing = budget
        used = round_up(trial.plan.sram_memory_used_bytes, granule)
        half = round_up(budget // 2, granule)
        budget = 0 if budget <= granule else (used if granule <= used < half else half)
    return passing


def _bisect(trials: _Trials, failing: int, passing: int, granule: int) -> int:
    """The smallest multiple of ``granule`` in ``(failing, passing]`` that reaches the rate,
    assuming the rate rises with the budget there; ``passing`` must reach it."""
    low, high = failing // granule, passing // granule if passing % granule == 0 else None
    if high is None:  # the memory's size is not a multiple of the granule: keep it as the upper end
        high_budget = passing
        high = round_up(passing, granule) // granule
    else:
        high_budget = high * granule
    while high - low > 1:
        middle = (low + high) // 2
        if trials.reaches(middle * granule):
            high, high_budget = middle, middle * granule
        else:
            low = middle
    return high_budget


def _refine(trials: _Trials, answer: int, granule: int) -> int:
    """Try the SRAM the answer's plan really uses (rounded up): when that smaller budget reaches
    the rate too, bisect again below it."""
    for _ in range(MAX_REFINEMENTS):
        plan = trials.at(answer).plan
        assert plan is not None
        used = round_up(max(plan.sram_memory_used_bytes, granule), granule)
        if used >= answer or not trials.reaches(used):
            break
        answer = _bisect(trials, trials.largest_failing_below(used), used, granule)
    return answer
