"""Command-line options every planning command shares (``plan``, ``sweep``, ``fit``): the ones a
sweep does not vary. Imports nothing heavy: the program imports it at start-up."""

from __future__ import annotations

import argparse
from typing import Any

from npuplan.options import Search, TensorAllocator


def add_fixed_options(p: argparse.ArgumentParser) -> None:
    """Add ``--tensor-allocator``, ``--cpu-tensor-alignment``, ``--search``, ``--no-fm-staging``,
    ``--no-concat-in-place``, ``--buffer-weights`` and ``--no-reorder`` to ``p``."""
    p.add_argument("--tensor-allocator", default=TensorAllocator.HILLCLIMB.value, help="Greedy, LinearAlloc or HillClimb")
    p.add_argument("--cpu-tensor-alignment", default=16, metavar="BYTES", help="alignment of CPU tensors (multiple of 16)")
    p.add_argument("--search", default=Search.AUTO.value, help="scheduler search: auto, cascade or pareto")
    p.add_argument("--no-fm-staging", action="store_true",
                   help="never DMA arena feature maps into the cache before their reader (Vela-comparable plans)")
    p.add_argument("--no-concat-in-place", action="store_true",
                   help="always copy concatenated inputs into place (Vela-comparable plans)")
    p.add_argument("--buffer-weights", action="store_true",
                   help="copy every op's weights into SRAM where they fit, even where reading them in place is "
                        "faster (as Vela; Vela-comparable plans)")
    p.add_argument("--no-reorder", action="store_true",
                   help="run the operators in the file's order, never in the order of least memory (as Vela)")


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
