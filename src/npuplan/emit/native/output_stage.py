"""Stub: the output-stage registers come from branch ``native-outstage`` (replaced at merge)."""

from __future__ import annotations

from typing import Any


def output_stage_registers(operation: Any, accelerator_name: str) -> dict[str, int]:
    """Register name -> value of the output-stage registers ``operation`` sets (none in this stub)."""
    return {}
