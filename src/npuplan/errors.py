"""Typed errors. Every user-facing failure is an ``NpuplanError`` whose message is one line."""

from __future__ import annotations


class NpuplanError(Exception):
    """Base of every error npuplan reports to a user (CLI exit status 2)."""

    exit_status = 2


class ModelError(NpuplanError):
    """The model file is missing, corrupt, truncated or not a TFLite flatbuffer."""


class ConfigError(NpuplanError):
    """An option value, accelerator name, system config or .ini file is invalid."""


class InfeasiblePlan(NpuplanError):
    """No plan fits the memory budget.

    ``op`` names the operator, ``needed_bytes`` what it needs, ``budget_bytes`` what it had,
    ``why`` the reason the tensors could not be split and ``hint`` the knob that would help.
    """

    def __init__(self, *, op: str, needed_bytes: int, budget_bytes: int, why: str, hint: str) -> None:
        self.op = op
        self.needed_bytes = needed_bytes
        self.budget_bytes = budget_bytes
        self.why = why
        self.hint = hint
        super().__init__(
            f"cannot fit '{op}': needs {needed_bytes} bytes of SRAM ({why}) but the budget is "
            f"{budget_bytes} bytes; {hint}"
        )


class ValidationError(NpuplanError):
    """A plan's command stream violates a memory invariant (CLI exit status 3)."""

    exit_status = 3
