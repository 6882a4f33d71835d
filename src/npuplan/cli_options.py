"""Command-line options every planning command shares (``plan``, ``sweep``, ``fit``): the ones a
sweep does not vary. Imports nothing heavy: the program imports it at start-up."""

from __future__ import annotations

import argparse
import functools
import re
from typing import Any

from npuplan.errors import UsageError
from npuplan.options import Search, TensorAllocator

_UNITS = {"": 1, "k": 1024, "m": 1024 * 1024}
SIZE_FORMAT = "bytes with an optional k or M suffix (128k = 131072)"


def parse_size_bytes(text: str, option: str = "arena-cache-size") -> int:
    """A size in bytes from ``128k`` (131072), ``1M`` or ``4096``: the one rule for every command's
    ``--arena-cache-size``. Raises ``UsageError`` (one line) on anything else."""
    match = _size_pattern().match(str(text))
    if match is None:
        raise UsageError(f"invalid value '{text}' for --{option}: expected {SIZE_FORMAT}")
    return int(match.group(1)) * _UNITS[match.group(2).lower()]


@functools.cache
def _size_pattern() -> re.Pattern[str]:
    """Compiled when a size is given (~0.6 M instructions, paid by every start-up at import)."""
    return re.compile(r"^\s*(\d+)\s*([kKmM]?)\s*$")


def size_bytes(text: str) -> int:
    """``parse_size_bytes`` as an argparse ``type``: a bad size is a command-line error (status 2)."""
    try:
        return parse_size_bytes(text)
    except UsageError:
        raise argparse.ArgumentTypeError(f"invalid size '{text}': expected {SIZE_FORMAT}") from None


def add_fixed_options(p: argparse.ArgumentParser) -> None:
    """Add ``--tensor-allocator``, ``--cpu-tensor-alignment``, ``--search``, ``--no-fm-staging``,
    ``--no-concat-in-place``, ``--buffer-weights`` and ``--no-reorder`` to ``p``."""
    p.add_argument("--tensor-allocator", default=TensorAllocator.HILLCLIMB.value, type=_any_case(TensorAllocator),
                   choices=[a.value for a in TensorAllocator], help="address allocator")
    p.add_argument("--cpu-tensor-alignment", default=16, metavar="BYTES",
                   help="alignment of CPU tensors (a power of 2, at least 16)")
    p.add_argument("--search", default=Search.AUTO.value, type=_any_case(Search), choices=[s.value for s in Search],
                   help="scheduler search")
    p.add_argument("--no-fm-staging", action="store_true",
                   help="never DMA arena feature maps into the cache before their reader (Vela-comparable plans)")
    p.add_argument("--no-concat-in-place", action="store_true",
                   help="always copy concatenated inputs into place (Vela-comparable plans)")
    p.add_argument("--buffer-weights", action="store_true",
                   help="copy every op's weights into SRAM where they fit, even where reading them in place is "
                        "faster (as Vela; Vela-comparable plans)")
    p.add_argument("--no-reorder", action="store_true",
                   help="run the operators in the file's order, never in the order of least memory (as Vela)")


def _any_case(enum: Any) -> Any:
    """An argparse ``type`` giving the member value of ``enum`` whatever the case (``greedy``)."""

    def value(text: str) -> str:
        return next((m.value for m in enum if m.value.lower() == text.lower()), text)

    return value


def fixed_options(args: argparse.Namespace) -> dict[str, Any]:
    """The ``npuplan.plan`` keywords of the options ``add_fixed_options`` added (and ``--config``)."""
    return dict(
        config=tuple(args.config),
        tensor_allocator=args.tensor_allocator,
        cpu_tensor_alignment=args.cpu_tensor_alignment,
        search=args.search,
        fm_staging=not args.no_fm_staging,
        concat_in_place=not args.no_concat_in_place,
        buffer_weights=args.buffer_weights,
        reorder=not args.no_reorder,
    )
