"""LiteRT (TFLite's reference interpreter, the ``run`` extra): the only module that imports it, and
only inside the function that needs it."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import numpy as np

from npuplan.errors import InputError, ModelError, NpuplanError
from npuplan.io.tflite import parse_tflite
from npuplan.run.compare import index_bounds

MISSING = 'running CPU operators and the original model needs LiteRT: pip install "npuplan[run]"'


def interpreter(model: bytes, *, label: str, reference_kernels: bool = False, isolated: bool = True) -> Any:
    """A LiteRT interpreter of TFLite bytes with TFLite's built-in kernels and no default delegate
    (``reference_kernels``: TFLite's reference kernels, the ones TensorFlow Lite Micro runs; the
    optimised ones round some fully connected layers and 1x1 convolutions differently, by one),
    tensors allocated; ``NpuplanError`` (one line) when LiteRT is missing or refuses the model.
    The reference kernels run in a child process (``run.isolated``; ``isolated=False`` is the
    child's own): they can kill the process that runs them, which becomes ``LiteRTCrash``."""
    if reference_kernels and isolated:
        from npuplan.run.isolated import IsolatedInterpreter

        return IsolatedInterpreter(model, label=label, build=_reference_in_process)
    try:
        from ai_edge_litert.interpreter import Interpreter, OpResolverType
    except ImportError:
        raise NpuplanError(MISSING) from None
    try:
        kernels = OpResolverType.BUILTIN_REF if reference_kernels else OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES
        found = Interpreter(model_content=model, num_threads=1, experimental_op_resolver_type=kernels)
        found.allocate_tensors()
    except (ValueError, RuntimeError) as error:
        raise ModelError(f"{label}: LiteRT cannot run it ({_first_line(error)})") from None
    return found


def _reference_in_process(model: bytes, label: str) -> Any:
    """The reference-kernel interpreter in this process (what the child of ``run.isolated`` runs)."""
    return interpreter(model, label=label, reference_kernels=True, isolated=False)


def invoke(found: Any, *, label: str) -> None:
    """Run an interpreter; ``ModelError`` (one line) when a kernel fails."""
    try:
        found.invoke()
    except (ValueError, RuntimeError) as error:
        raise ModelError(f"{label}: LiteRT failed to run it ({_first_line(error)})") from None


def _first_line(error: BaseException) -> str:
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    return lines[0] if lines else type(error).__name__


class ReferenceModel:
    """A TFLite model run by LiteRT as a whole (the functional reference): ``invoke(inputs) ->
    outputs`` in the order of the model's inputs and outputs; variable tensors persist between calls."""

    def __init__(self, data: bytes, *, label: str = "the model", reference_kernels: bool = False) -> None:
        self.label = label
        self._data = data
        self._interpreter = interpreter(data, label=label, reference_kernels=reference_kernels)
        self.input_details = self._interpreter.get_input_details()
        self.output_details = self._interpreter.get_output_details()

    @property
    def input_specs(self) -> list[tuple[tuple[int, ...], np.dtype]]:
        """``(shape, dtype)`` of each input, in order."""
        return [(tuple(int(d) for d in x["shape"]), np.dtype(x["dtype"])) for x in self.input_details]

    @functools.cached_property
    def index_bounds(self) -> dict[int, int]:
        """``{input position: size}`` of the inputs holding indices (``compare.index_bounds``)."""
        return index_bounds(parse_tflite(self._data, label=self.label).main)

    def invoke(self, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
        specs = self.input_specs
        if len(inputs) != len(specs):
            raise InputError(f"{self.label} has {len(specs)} input(s), {len(inputs)} given")
        for k, (x, detail) in enumerate(zip(inputs, self.input_details)):
            if (tuple(x.shape), x.dtype) != specs[k]:
                raise InputError(f"{self.label}: input {k} must be {specs[k][1]} {list(specs[k][0])}, "
                                 f"not {x.dtype} {list(x.shape)}")
            self._interpreter.set_tensor(detail["index"], x)
        invoke(self._interpreter, label=self.label)
        return [self._interpreter.get_tensor(d["index"]).copy() for d in self.output_details]
