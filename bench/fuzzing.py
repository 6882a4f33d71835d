"""Fuzzing harness shared by ``bench/fuzz.py`` (long runs) and the bounded run in the test suite.

A *case* is one input (model bytes, plan JSON text or ``.ini`` text) run through the ``npuplan``
command in this process, the way a user runs it. Its outcome records the exit status, any
traceback that escaped (a bug: every failure must be one line and a documented status), whether it
ran over the time limit and whether it left files behind in the output directory after failing.

Mutators are seeded (``random.Random``), so a case is reproduced by its mutator, seed and input.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import random
import signal
import tempfile
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from npuplan.cli import main

if TYPE_CHECKING:
    from npuplan.ir.graph import Graph, Model, Tensor

# Byte values that tend to hit edge cases in flatbuffer offsets, lengths and enum fields.
_INTERESTING = (0x00, 0x01, 0x7F, 0x80, 0xFF, 0xFE, 0x10, 0x40)
TIME_LIMIT_S = 30.0


class _TimedOut(BaseException):
    """Raised in the case's thread by the alarm: the case ran over its time limit."""


@dataclass(frozen=True, slots=True)
class Outcome:
    """How one case ended: exit ``status`` (None when it raised or timed out), the escaped
    ``traceback`` text if any, the wall ``seconds`` and the files left in the output directory."""

    status: int | None
    traceback: str | None
    seconds: float
    timed_out: bool
    leftover_files: tuple[str, ...]
    stderr: str

    @property
    def is_bug(self) -> bool:
        failed = self.status not in (0, None)
        stray = failed and bool(self.leftover_files)
        wordy = failed and sum(1 for line in self.stderr.splitlines() if line.strip()) > 1  # not one line
        return self.traceback is not None or self.timed_out or stray or wordy or self.status not in (0, 1, 2, 3)


@contextlib.contextmanager
def _alarm(seconds: float) -> Iterator[None]:
    def ring(_signum: int, _frame: object) -> None:
        raise _TimedOut()

    previous = signal.signal(signal.SIGALRM, ring)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def run_cli(argv: Sequence[str], *, output_dir: Path, time_limit_s: float = TIME_LIMIT_S) -> Outcome:
    """Run ``npuplan`` with ``argv`` in this process; classify how it ended."""
    err = io.StringIO()
    status: int | None = None
    escaped: str | None = None
    timed_out = False
    started = time.perf_counter()
    try:
        with _alarm(time_limit_s), contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            status = main(list(argv))
    except _TimedOut:
        timed_out = True
    except SystemExit as done:  # argparse exits this way on a bad option
        status = done.code if isinstance(done.code, int) else 2
    except BaseException:  # noqa: BLE001 - anything escaping main is what we hunt
        escaped = traceback.format_exc()
    seconds = time.perf_counter() - started
    leftover = tuple(sorted(p.name for p in output_dir.iterdir())) if output_dir.is_dir() else ()
    if "Traceback (most recent call last)" in err.getvalue():
        escaped = escaped or err.getvalue()
    return Outcome(status, escaped, seconds, timed_out, leftover, err.getvalue()[-500:])


# ---------------------------------------------------------------- mutators
def mutate_bytes(data: bytes, rng: random.Random) -> bytes:
    """A few random edits: byte changes, an interesting value, a truncation or an insertion."""
    buf = bytearray(data)
    kind = rng.random()
    if kind < 0.1 and len(buf) > 8:
        return bytes(buf[: rng.randrange(8, len(buf))])
    if kind < 0.2:
        at = rng.randrange(len(buf) + 1)
        return bytes(buf[:at] + bytes(rng.randrange(256) for _ in range(rng.randint(1, 16))) + buf[at:])
    for _ in range(rng.randint(1, 8)):
        at = rng.randrange(len(buf))
        if rng.random() < 0.5:
            buf[at] = rng.choice(_INTERESTING)
        elif rng.random() < 0.5 and at + 4 <= len(buf):  # a whole 32-bit field: offsets, lengths, dims
            buf[at : at + 4] = rng.choice((0, 1, 0x7FFFFFFF, 0xFFFFFFFF, 0x10000, rng.getrandbits(32))).to_bytes(4, "little")
        else:
            buf[at] = rng.randrange(256)
    return bytes(buf)


def mutate_text(text: str, rng: random.Random) -> str:
    """Edits of a text file: a line dropped or duplicated, characters changed, numbers replaced."""
    lines = text.splitlines()
    if not lines:
        return text
    kind = rng.random()
    at = rng.randrange(len(lines))
    if kind < 0.2:
        del lines[at]
    elif kind < 0.35:
        lines.insert(at, lines[rng.randrange(len(lines))])
    elif kind < 0.7:
        line = lines[at]
        digits = [i for i, ch in enumerate(line) if ch.isdigit()]
        if digits:
            i = rng.choice(digits)
            value = rng.choice(("-1", "0", "1e400", "nan", "99999999999999999999", "", "x", "2.5"))
            lines[at] = line[:i] + value + line[i + 1 :]
    else:
        line = lines[at]
        if line:
            i = rng.randrange(len(line))
            lines[at] = line[:i] + rng.choice("=[]{}\",:\\\x00é ") + line[i + 1 :]
    return "\n".join(lines) + "\n"


def mutate_json(text: str, rng: random.Random) -> str:
    """A structural edit of a JSON document (a value replaced, a key dropped), else a text edit."""
    try:
        doc = json.loads(text)
    except ValueError:
        return mutate_text(text, rng)
    paths: list[tuple[object, object]] = []

    def walk(node: object) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                paths.append((node, key))
                walk(value)
        elif isinstance(node, list):
            for i, value in enumerate(node):
                paths.append((node, i))
                walk(value)

    walk(doc)
    if not paths or rng.random() < 0.2:
        return mutate_text(text, rng)
    for _ in range(rng.randint(1, 3)):
        parent, key = rng.choice(paths)
        replacement = rng.choice((None, -1, 0, 2**40, 1.5, "x", [], {}, True, "<b>", -(2**63)))
        try:
            if isinstance(parent, dict) and rng.random() < 0.3:
                del parent[key]  # type: ignore[arg-type]
            else:
                parent[key] = replacement  # type: ignore[index]
        except (KeyError, IndexError, TypeError):
            pass
    return json.dumps(doc)


# ---------------------------------------------------------------- campaigns
@dataclass(frozen=True, slots=True)
class Case:
    """One input to run: its kind (``model``, ``plan_json``, ``ini``), a label and the bytes."""

    kind: str
    label: str
    payload: bytes


PLAN_ARGS = ("--accelerator-config", "ethos-u55-64", "--optimise", "Size")


def run_case(case: Case, workdir: Path, *, time_limit_s: float = TIME_LIMIT_S,
             model_for_ini: Path | None = None, extra_args: Sequence[str] = ()) -> Outcome:
    """Write ``case`` into ``workdir`` and run the matching ``npuplan`` command on it;
    ``extra_args``: more ``plan`` flags for model and ini cases (e.g. ``--emit-tflite``)."""
    out = workdir / "out"
    if out.exists():
        for p in out.iterdir():
            p.unlink()
        out.rmdir()
    if case.kind == "model":
        path = workdir / "case.tflite"
        path.write_bytes(case.payload)
        argv = ["plan", str(path), *PLAN_ARGS, *extra_args, "--output-dir", str(out), "--quiet"]
    elif case.kind == "plan_json":
        path = workdir / "case_plan.json"
        path.write_bytes(case.payload)
        argv = ["validate", str(path)]
    elif case.kind == "ini":
        assert model_for_ini is not None
        path = workdir / "case.ini"
        path.write_bytes(case.payload)
        argv = ["plan", str(model_for_ini), "--config", str(path), "--system-config", "Fuzz_System",
                "--memory-mode", "Fuzz_Mode", *extra_args, "--output-dir", str(out), "--quiet"]
    else:
        raise ValueError(case.kind)
    return run_cli(argv, output_dir=out, time_limit_s=time_limit_s)


def byte_cases(seeds: Sequence[Path], count: int, seed: int) -> Iterator[Case]:
    """``count`` byte-level mutants of the seed models, round robin."""
    rng = random.Random(seed)
    blobs = [(p.stem, p.read_bytes()) for p in seeds]
    for i in range(count):
        name, data = blobs[i % len(blobs)]
        yield Case("model", f"bytes:{name}:{seed}:{i}", mutate_bytes(data, rng))


def text_cases(kind: str, text: str, count: int, seed: int,
               mutate: Callable[[str, random.Random], str]) -> Iterator[Case]:
    rng = random.Random(seed)
    for i in range(count):
        yield Case(kind, f"{kind}:{seed}:{i}", mutate(text, rng).encode("utf-8", errors="surrogateescape"))


def scratch_dir() -> tempfile.TemporaryDirectory[str]:
    return tempfile.TemporaryDirectory(prefix="npuplan-fuzz-")


def environment_ok() -> bool:
    """SIGALRM is what bounds a case's time; it exists on POSIX only."""
    return hasattr(signal, "setitimer") and os.name == "posix"


# ---------------------------------------------------------------- structure-aware mutation
_OP_SWAPS = ("CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "ADD", "MUL", "SUB", "MAXIMUM", "AVERAGE_POOL_2D",
             "MAX_POOL_2D", "MEAN", "PAD", "CONCATENATION", "SOFTMAX", "RESHAPE", "RELU", "HARD_SWISH", "LOGISTIC",
             "TANH", "SQUEEZE", "EXPAND_DIMS", "STRIDED_SLICE", "TRANSPOSE_CONV", "LEAKY_RELU", "QUANTIZE")
_ODD_DIMS = (0, 1, 2, 3, 65535, 65536, 1 << 20, (1 << 31) - 1, -1, -7)
_ODD_SCALES = (0.0, -1.0, float("nan"), float("inf"), 1e-45, 1e38)
_ODD_ZERO_POINTS = (-129, 128, 256, -(2**31), 2**40, 32768)
_ODD_OPTION_VALUES = (0, -1, 1, 2, 3, 4, 7, 65536, 2**31 - 1, "SAME", "VALID", "RELU", "TANH", "SIGN_BIT", ())


def mutate_model(model: "Model", rng: random.Random) -> "Model":
    """``model`` with one to three odd but well-formed edits (see ``_STRUCT_EDITS``)."""
    from dataclasses import replace

    graph = model.main
    for _ in range(rng.randint(1, 3)):
        edit = rng.choice(_STRUCT_EDITS)
        try:
            graph = edit(graph, rng)
        except (IndexError, ValueError):
            continue
    return replace(model, subgraphs=(graph, *model.subgraphs[1:]))


def _swap_tensor(graph: "Graph", old: "Tensor", new: "Tensor") -> "Graph":
    from npuplan.lowering._util import replace_tensor

    return replace_tensor(graph, old, new)


def _pick_tensor(graph: "Graph", rng: random.Random) -> "Tensor":
    return rng.choice(graph.tensors())


def _edit_dims(graph: "Graph", rng: random.Random) -> "Graph":
    from dataclasses import replace

    t = _pick_tensor(graph, rng)
    shape = list(t.shape)
    if shape and rng.random() < 0.8:
        shape[rng.randrange(len(shape))] = rng.choice(_ODD_DIMS)
    else:
        shape = shape + [1] * rng.randint(1, 6) if rng.random() < 0.5 else shape[:-1]
    return _swap_tensor(graph, t, replace(t, shape=tuple(shape)))


def _edit_quant(graph: "Graph", rng: random.Random) -> "Graph":
    from dataclasses import replace

    from npuplan.ir.types import Quantization

    t = _pick_tensor(graph, rng)
    q = t.quant or Quantization((0.1,), (0,))
    kind = rng.randrange(4)
    if kind == 0:
        q = replace(q, scale=tuple(rng.choice(_ODD_SCALES) for _ in q.scale))
    elif kind == 1:
        q = replace(q, zero_point=tuple(rng.choice(_ODD_ZERO_POINTS) for _ in q.zero_point))
    elif kind == 2:
        n = rng.choice((2, 3, 1000))
        q = replace(q, scale=(0.5,) * n, zero_point=(0,) * rng.choice((n, 1, n + 1)))
    else:
        q = replace(q, axis=rng.choice((-1, 5, 1, 3)))
    return _swap_tensor(graph, t, replace(t, quant=q))


def _edit_dtype(graph: "Graph", rng: random.Random) -> "Graph":
    from dataclasses import replace

    from npuplan.ir.types import DataType

    t = _pick_tensor(graph, rng)
    dtype = rng.choice((DataType.INT16, DataType.INT32, DataType.UINT8, DataType.FLOAT32, DataType.BOOL,
                        DataType.INT64, DataType.INT8))
    data = t.data
    if data is not None and rng.random() < 0.5:  # reinterpret the bytes, as a converter bug would
        raw = data.tobytes()
        raw = raw[: len(raw) - len(raw) % dtype.size_bytes]
        import numpy as np

        data = np.frombuffer(raw, dtype={1: np.int8, 2: np.int16, 4: np.int32, 8: np.int64}[dtype.size_bytes])
    return _swap_tensor(graph, t, replace(t, dtype=dtype, data=data))


def _alias_buffer(graph: "Graph", rng: random.Random) -> "Graph":
    from dataclasses import replace

    constants = [t for t in graph.tensors() if t.data is not None]
    source, target = rng.choice(constants), _pick_tensor(graph, rng)
    return _swap_tensor(graph, target, replace(target, data=source.data))


def _edit_arity(graph: "Graph", rng: random.Random) -> "Graph":
    from dataclasses import replace

    from npuplan.lowering._util import replace_op

    op = rng.choice(graph.ops)
    inputs = list(op.inputs)
    kind = rng.randrange(4)
    if kind == 0 and inputs:
        del inputs[rng.randrange(len(inputs))]
    elif kind == 1:
        inputs.append(_pick_tensor(graph, rng))
    elif kind == 2 and inputs:
        inputs[rng.randrange(len(inputs))] = None
    else:
        return replace_op(graph, op, replace(op, outputs=op.outputs + (_pick_tensor(graph, rng),)))
    return replace_op(graph, op, replace(op, inputs=tuple(inputs)))


def _edit_options(graph: "Graph", rng: random.Random) -> "Graph":
    from npuplan.lowering._util import replace_op, with_options

    op = rng.choice(graph.ops)
    keys = list(op.options) or ["stride_h", "axis", "padding"]
    return replace_op(graph, op, with_options(op, **{rng.choice(keys): rng.choice(_ODD_OPTION_VALUES)}))


def _edit_type(graph: "Graph", rng: random.Random) -> "Graph":
    from dataclasses import replace

    from npuplan.lowering._util import replace_op

    op = rng.choice(graph.ops)
    return replace_op(graph, op, replace(op, type=rng.choice(_OP_SWAPS)))


def _edit_order(graph: "Graph", rng: random.Random) -> "Graph":
    from dataclasses import replace

    ops = list(graph.ops)
    i, j = rng.randrange(len(ops)), rng.randrange(len(ops))
    if rng.random() < 0.5:
        ops[i], ops[j] = ops[j], ops[i]
    else:
        ops.insert(j, ops[i])  # the same op twice: its outputs written twice
    outputs = graph.outputs if rng.random() < 0.8 else (_pick_tensor(graph, rng),)
    return replace(graph, ops=tuple(ops), outputs=outputs)


_STRUCT_EDITS = (_edit_dims, _edit_quant, _edit_dtype, _alias_buffer, _edit_arity, _edit_options, _edit_type,
                 _edit_order)


def struct_cases(seeds: Sequence[Path], count: int, seed: int) -> Iterator[Case]:
    """``count`` structure-aware mutants of the seed models (valid flatbuffers, odd content)."""
    from npuplan.io.tflite import read_tflite
    from npuplan.io.tflite_write import write_tflite

    rng = random.Random(seed)
    models = [read_tflite(p) for p in seeds]
    for i in range(count):
        base = models[i % len(models)]
        mutant = mutate_model(base, rng)
        try:
            payload = write_tflite(mutant)
        except Exception:  # noqa: BLE001 - an edit the writer cannot express: fall back to the seed
            payload = write_tflite(base)
        yield Case("model", f"struct:{base.name}:{seed}:{i}", payload)


def seed_plan_json(model: Path, work: Path) -> str:
    """A plan JSON written by ``npuplan plan`` for ``model`` (the seed of the JSON mutations)."""
    out = work / "seed-plan"
    status = main(["plan", str(model), "--output-dir", str(out), "--quiet"])
    assert status == 0, f"cannot plan seed model {model}"
    return next(out.glob("*_plan.json")).read_text()


def seed_ini() -> str:
    """A config file defining ``Fuzz_System`` and ``Fuzz_Mode`` (the seed of the .ini mutations)."""
    return (
        "[System_Config.Fuzz_System]\ncore_clock=500e6\naxi0_port=Sram\naxi1_port=OffChipFlash\n"
        "Sram_clock_scale=1.0\nSram_burst_length=32\nSram_read_latency=32\nSram_write_latency=32\n"
        "Sram_max_reads=4\nSram_max_writes=4\nOffChipFlash_clock_scale=0.125\nOffChipFlash_burst_length=128\n"
        "OffChipFlash_read_latency=64\nOffChipFlash_write_latency=0\nOffChipFlash_max_reads=2\n"
        "OffChipFlash_max_writes=0\n\n[Memory_Mode.Fuzz_Mode]\nconst_mem_area=Axi1\narena_mem_area=Axi0\n"
        "cache_mem_area=Axi0\narena_cache_size=393216\n"
    )


def campaign(models: Sequence[Path], kinds: Sequence[str], *, seed: int, work: Path) -> Iterator[Case]:
    """An endless round robin over the requested kinds of cases, deterministic for ``seed``."""
    small = sorted(models, key=lambda p: p.stat().st_size)
    streams: list[Iterator[Case]] = []
    block = 1 << 30
    if "bytes" in kinds:
        streams.append(byte_cases(models, block, seed))
    if "struct" in kinds:
        streams.append(struct_cases(small[:5], block, seed))
    if "json" in kinds:
        streams.append(text_cases("plan_json", seed_plan_json(small[0], work), block, seed, mutate_json))
    if "ini" in kinds:
        streams.append(text_cases("ini", seed_ini(), block, seed, mutate_text))
    while streams:
        for stream in streams:
            yield next(stream)
