"""Compare two register command streams operation by operation (a differential check).

Each stream is replayed into its commands: every NPU_OP_* (operations, DMA starts, waits, STOP)
with its parameter and the registers set when it runs. Two streams agree when they run the same
commands with the same parameters and, at every operation and DMA start, the second holds the
first's value of every register the first has set (``ignore`` names registers left out).
"""

from __future__ import annotations

from collections.abc import Collection

from npuplan.records import record
from npuplan.regstream.words import decode_words

Command = tuple[str, int, dict[str, int]]  # name, parameter, registers when it runs
_NO_REGISTERS = frozenset({"NPU_OP_DMA_WAIT", "NPU_OP_KERNEL_WAIT", "NPU_OP_STOP"})


def commands(words: list[int]) -> list[Command]:
    """The NPU_OP_* commands of a stream with the registers they see (operations and DMA starts;
    waits and STOP with none)."""
    registers: dict[str, int] = {}
    out: list[Command] = []
    for w in decode_words(words):
        if not w.name.startswith("NPU_OP_"):
            registers[w.name] = w.value
        elif w.name in _NO_REGISTERS:
            out.append((w.name, w.param, {}))
        else:
            out.append((w.name, w.param, dict(registers)))
    return out


@record
class Comparison:
    """How far two streams agree: commands compared and matching (operations, DMAs, waits),
    whether the words are identical, and the first difference (None if none)."""

    commands: int
    matching: int
    operations: int  # NPU operations and DMA starts among ``commands``
    matching_operations: int
    identical: bool
    identical_outside_ignored: bool  # the same words once the ignored registers' are dropped
    first_mismatch: str | None

    @property
    def ok(self) -> bool:
        return self.first_mismatch is None


def _difference(index: int, want: Command, got: Command, ignore: Collection[str]) -> str | None:
    if (want[0], want[1]) != (got[0], got[1]):
        return f"command {index}: expected {want[0]}({want[1]}), got {got[0]}({got[1]})"
    for name, value in want[2].items():
        if name not in ignore and got[2].get(name) != value:
            return (f"command {index} {want[0]}: register {name} expected {value:#x}, got "
                    f"{'unset' if got[2].get(name) is None else hex(got[2][name])}")
    return None


def compare(expected: list[int], actual: list[int], *, ignore: Collection[str] = ()) -> Comparison:
    """``actual``'s agreement with ``expected`` (the reference)."""
    want, got = commands(expected), commands(actual)
    matching = operations = matching_operations = 0
    first: str | None = None
    for index, (a, b) in enumerate(zip(want, got)):
        is_op = a[0] not in _NO_REGISTERS
        operations += is_op
        why = _difference(index, a, b, ignore)
        if why is None:
            matching += 1
            matching_operations += is_op
        elif first is None:
            first = why
    if len(want) != len(got) and first is None:
        first = f"expected {len(want)} commands, got {len(got)}"
    operations += sum(1 for a in want[len(got):] if a[0] not in _NO_REGISTERS)
    return Comparison(len(want), matching, operations, matching_operations, expected == actual,
                      _kept(expected, ignore) == _kept(actual, ignore), first)


def _kept(words: list[int], ignore: Collection[str]) -> list[tuple[str, int, int | None]]:
    return [(w.name, w.param, w.payload) for w in decode_words(words) if w.name not in ignore]
