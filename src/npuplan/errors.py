"""Typed errors. Every user-facing failure is an ``NpuplanError`` whose message is one line."""

from __future__ import annotations


class NpuplanError(Exception):
    """Base of every error npuplan reports to a user: the input cannot be compiled as asked (CLI exit
    status 1, as Vela's; a command-line error is 2, a violation 3, a bug 4: the README's table)."""

    exit_status = 1


class ModelError(NpuplanError):
    """The model file is missing, corrupt, truncated or not a TFLite flatbuffer."""


class ConfigError(NpuplanError):
    """An option value, accelerator name, system config or .ini file is invalid."""


class UsageError(ConfigError):
    """An option value of the wrong form or outside its choices: a command-line error (CLI exit
    status 2, as argparse's own)."""

    exit_status = 2


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


class EmitError(NpuplanError):
    """A plan cannot be emitted as a deployable TFLite file (an operator or feature the emitter
    cannot express, or the deploy extra is not installed)."""

    def __init__(self, op: str | None, reason: str, *, cpu_fallback: int | None = None) -> None:
        self.op = op
        self.reason = reason
        self.cpu_fallback = cpu_fallback  # TFLite operator index a deployable plan may keep on the CPU instead
        super().__init__(f"cannot emit '{op}': {reason}" if op else f"cannot emit: {reason}")


class SelfCheckError(EmitError):
    """A file npuplan emitted fails npuplan's own validation: a bug in npuplan (CLI exit status 4)."""

    exit_status = 4


class ValidationError(NpuplanError):
    """A plan's command stream violates a memory invariant (CLI exit status 3)."""

    exit_status = 3


class LiteRTCrash(NpuplanError):
    """LiteRT died inside its own native kernels (TFLite's reference kernels abort or fault on some
    models): a fault of the reference, not of the compiled file (CLI exit status 5)."""

    exit_status = 5


class InternalError(NpuplanError):
    """An unexpected exception inside the pipeline: a bug in npuplan (CLI exit status 4).

    ``stage`` is what npuplan was doing, ``op`` the operator it was working on when known.
    """

    exit_status = 4

    def __init__(self, *, stage: str, op: str | None, cause: BaseException) -> None:
        self.stage = stage
        self.op = op
        where = f" on op '{op}'" if op else ""
        detail = str(cause).splitlines()[0] if str(cause) else ""
        super().__init__(
            f"internal error while {stage}{where}: {type(cause).__name__}{': ' + detail if detail else ''}. "
            "This is a bug in npuplan; rerun with --debug for the traceback"
        )


def mark_op(error: BaseException, op_name: str) -> None:
    """Record on ``error`` the operator being worked on (the innermost mark is kept)."""
    if getattr(error, "_npuplan_op", None) is None:
        error._npuplan_op = op_name  # type: ignore[attr-defined]


def marked_op(error: BaseException) -> str | None:
    """The operator ``mark_op`` recorded on ``error``, if any."""
    return getattr(error, "_npuplan_op", None)


class InputError(NpuplanError):
    """An input array given to run a model has the wrong count, shape or dtype, or cannot be read
    (CLI exit status 1)."""
