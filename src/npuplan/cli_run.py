"""The ``npuplan run`` and ``npuplan check`` commands (registered by ``cli.py``).

``run COMPILED.tflite --input X.npy ... --output-dir D`` executes a compiled file (npuplan's or
Vela's) and writes ``D/output_0.npy`` ... in the order of the model's outputs. ``check MODEL.tflite
[plan options]`` plans and emits the model, runs the compiled file and the original (LiteRT) on the
same seeded inputs and prints per output the largest difference and how many elements differ;
exit status 0 when they agree, 3 when they do not (the compiled file computes something else).
"""

from __future__ import annotations

import argparse
import io
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Protocol

from npuplan.cli_options import add_fixed_options, fixed_options
from npuplan.errors import InputError, NpuplanError, UsageError

if TYPE_CHECKING:
    import numpy as np

COMMANDS = ("run", "check")
_REFERENCE_KERNELS = ("run the CPU operators (and check's original model) on TFLite's reference kernels, as TensorFlow "
                      "Lite Micro does, not LiteRT's optimised ones (they differ by one on some fully connected layers "
                      "and 1x1 convolutions)")
MISMATCH_STATUS = 3  # as a violation found by `npuplan validate`: the compiled file is wrong


# The options of `npuplan plan` that decide the plan (with add_fixed_options'), which check takes as plan takes them.
PLAN_OPTIONS = ("config", "accelerator_config", "system_config", "memory_mode", "optimise", "arena_cache_size")


def add_run_parsers(commands: Any, *, plan: argparse.ArgumentParser) -> None:
    """Add the ``run`` and ``check`` subcommands to ``commands`` (the program's subparsers); ``check``
    shares the plan-deciding options of ``plan`` (the ``plan`` subparser), so the two never drift."""
    r = commands.add_parser("run", help="execute a compiled .tflite (npuplan's or Vela's) on the PC: ethos-u "
                                        "operators on the NPU simulator, the rest on LiteRT")
    r.add_argument("compiled", metavar="COMPILED.tflite", help="a *_npuplan.tflite or *_vela.tflite file")
    r.add_argument("--input", action="append", default=[], metavar="X.npy",
                   help="one .npy array per model input, in the order of the model's inputs")
    r.add_argument("--output-dir", required=True, help="where output_0.npy, output_1.npy ... are written")
    r.add_argument("--reference-kernels", action="store_true", help=_REFERENCE_KERNELS)
    r.add_argument("--debug", action="store_true", help="on an internal error, print the traceback")

    c = commands.add_parser("check", help="plan and emit a model, then run the compiled file and the original "
                                          "(LiteRT) on the same seeded inputs and compare their outputs")
    c.add_argument("network", metavar="MODEL.tflite", help="quantized TFLite model")
    for action in plan._actions:  # the same option objects, as argparse's parents= shares them
        if action.dest in PLAN_OPTIONS:
            c._add_action(action)
    add_fixed_options(c)
    c.add_argument("--samples", type=int, default=5, help="how many seeded random inputs (default: 5)")
    c.add_argument("--seed", type=int, default=0, help="seed of the random inputs (default: 0)")
    c.add_argument("--emit-backend", choices=("npuplan", "vela"), default="npuplan",
                   help="what writes the register command streams (as plan --emit-backend)")
    c.add_argument("--output-dir", default=None, help="also write the checked <network>_npuplan.tflite there")
    c.add_argument("--reference-kernels", action="store_true", help=_REFERENCE_KERNELS)
    c.add_argument("--debug", action="store_true", help="on an internal error, print the traceback")


class Stage(Protocol):
    """What the program is doing, for its one-line report of an internal error."""

    def step(self, name: str) -> None: ...


def run_command(args: argparse.Namespace, stage: Stage) -> int:
    """Run ``args.command`` (``run`` or ``check``); its exit status."""
    if args.command == "run":
        return _run(args, stage.step)
    return _check(args, stage.step)


def _load_input(path: str) -> np.ndarray:
    import numpy as np  # the program imports this module at start-up, before it sets numpy's threads

    try:
        return np.load(path, allow_pickle=False)
    except (OSError, ValueError, EOFError) as error:
        detail = getattr(error, "strerror", None) or next(iter(str(error).splitlines()), type(error).__name__)
        raise InputError(f"cannot read input '{path}' as a .npy array ({detail})") from None


def _write_outputs(outputs: list[np.ndarray], output_dir: str) -> list[Path]:
    """Write every output, each into a temporary file renamed into place once all are written."""
    import numpy as np

    directory = Path(output_dir)
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for k, array in enumerate(outputs):
        buffer = io.BytesIO()
        np.save(buffer, array, allow_pickle=False)
        temporary = directory / f".output_{k}.npy.tmp"
        temporary.write_bytes(buffer.getvalue())
        written.append(temporary)
    final = [directory / f"output_{k}.npy" for k in range(len(outputs))]
    for temporary, path in zip(written, final):
        temporary.replace(path)
    return final


def _run(args: argparse.Namespace, step: Callable[[str], None]) -> int:
    from npuplan.run import CompiledModel

    step("reading the inputs")
    inputs = [_load_input(path) for path in args.input]
    step("loading the compiled file")
    model = CompiledModel.load(args.compiled, reference_kernels=args.reference_kernels)
    step("running the compiled file")
    outputs = model.invoke(inputs)
    step("writing the outputs")
    written = _write_outputs(outputs, args.output_dir)
    for path, array in zip(written, outputs):
        print(f"{path}: {array.dtype} {list(array.shape)}")
    return 0


def _check(args: argparse.Namespace, step: Callable[[str], None]) -> int:
    from npuplan.run import check_model
    from npuplan.run.compare import format_diff

    if args.samples < 1:
        raise UsageError(f"--samples must be at least 1, not {args.samples}")
    step("planning, emitting and running")
    result = check_model(
        args.network, samples=args.samples, seed=args.seed, backend=args.emit_backend,
        reference_kernels=args.reference_kernels,
        accelerator_config=args.accelerator_config, system_config=args.system_config,
        memory_mode=args.memory_mode, optimise=args.optimise, arena_cache_size=args.arena_cache_size,
        **fixed_options(args),
    )
    if args.output_dir is not None:
        from npuplan.emit import write_emitted

        step("writing the compiled file")
        path, _ = write_emitted(result.plan, args.output_dir, result.emitted)
        print(f"Wrote {path}")
    for d in result.diffs:
        verdict = "agrees" if d.agrees else "DIFFERS"
        print(f"output {d.output}: {verdict}: {format_diff(d)} over {result.samples} sample(s) (seed {args.seed})")
    if result.agrees:
        print(f"{args.network}: the compiled file reproduces LiteRT's outputs bit for bit")
        return 0
    print(f"{args.network}: the compiled file differs from LiteRT's outputs")
    return MISMATCH_STATUS

