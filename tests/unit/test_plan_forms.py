"""``plan_forms._apart_may_win``: which tables-apart forms are planned in full. Checks the rule's
logic against prices it is handed (npuplan's own cost model is stubbed out): consistency, not
the prices' truth (``bench/form_price.py`` measures those against full plans)."""

from __future__ import annotations

from typing import Any

import pytest

import npuplan.plan_forms as plan_forms
from npuplan.hw.build import build_architecture
from npuplan.options import PlanOptions

U55_SHARED = PlanOptions(accelerator_config="ethos-u55-128", system_config="Ethos_U55_High_End_Embedded",
                         memory_mode="Shared_Sram")
U65_DEDICATED = PlanOptions(accelerator_config="ethos-u65-256", system_config="Ethos_U65_High_End",
                            memory_mode="Dedicated_Sram_384KB")


def _may_win(monkeypatch: pytest.MonkeyPatch, options: PlanOptions, prices: list[int],
             ends_prices: dict[str, int]) -> tuple[bool, list[str]]:
    """``_apart_may_win`` of forms named by ``ends_prices``' keys priced ``prices`` (fast storage)
    against a chosen plan of 1000 cycles, each priced ``ends_prices[name]`` with its ends in the
    arena; with the forms whose ends-in-the-arena price it asked for."""
    asked: list[str] = []

    def change_cycles(base: Any, form: str, *_args: Any, arena_ends: bool = False, **_kwargs: Any) -> int:
        assert arena_ends, "the fast-storage prices are the caller's"
        asked.append(form)
        return ends_prices[form]

    monkeypatch.setattr(plan_forms, "change_cycles", change_cycles)
    arch = build_architecture(options)
    found = plan_forms._apart_may_win("base", list(ends_prices), prices, 1000, arch, None, False)  # type: ignore[arg-type]
    return found, asked


def test_a_form_priced_within_the_margin_is_planned_without_another_price(monkeypatch) -> None:
    limit = int(1000 * plan_forms._APART_PRICE_MARGIN)
    assert _may_win(monkeypatch, U65_DEDICATED, [limit + 50, limit], {"a": 0, "b": 0}) == (True, [])


def test_where_the_arena_is_fast_storage_a_form_priced_above_the_margin_is_not_planned(monkeypatch) -> None:
    """Shared_Sram: the arena is fast storage, so the price with the ends in the arena is the same."""
    limit = int(1000 * plan_forms._APART_PRICE_MARGIN)
    assert _may_win(monkeypatch, U55_SHARED, [limit + 1], {"a": -500}) == (False, [])


@pytest.mark.parametrize("ends_price, planned", [(-300, True), (400, False)])
def test_where_the_arena_is_slow_the_ends_in_the_arena_price_may_plan_a_form(monkeypatch, ends_price, planned) -> None:
    """Dedicated_Sram: a form priced above the margin with every map in fast storage is still planned
    where its price with the network's inputs and outputs in the arena is within it (op_exp_tokens
    on U65: +7.9% one way, -30.9% the other, planned -30.6%)."""
    limit = int(1000 * plan_forms._APART_PRICE_MARGIN)
    found, asked = _may_win(monkeypatch, U65_DEDICATED, [limit + 1, limit + 2], {"a": 999, "b": ends_price})
    assert found is planned and asked == ["a", "b"]
