"""Run a compiled TFLite file (npuplan's ``*_npuplan.tflite`` or Vela's ``*_vela.tflite``) on the PC.

``CompiledModel.load(path)`` lays out the file's memory (``run.layout``); ``invoke(inputs)`` writes
the inputs where the file keeps them, runs the operators in the subgraph's order, each ``ethos-u``
operator's command stream through the NPU simulator (``npuplan.sim.execute_stream``) over its
regions as the TensorFlow Lite Micro ethos-u kernel gives them to the driver (0 flash, 1 scratch,
2 fast scratch, 3.. further inputs then outputs), each run of CPU operators through LiteRT
(``run.cpu``), each operator on a resource variable itself (``run.variables``), and returns the
outputs. The memory and the resource variables persist between invocations, as the device's do, so
variable tensors and TensorFlow's resource variables keep their state.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from npuplan.errors import InputError, ModelError, ValidationError
from npuplan.ir.types import DataType
import npuplan.run.litert as litert
from npuplan.run.cpu import CpuModel, cpu_model
from npuplan.run.layout import NUMPY_DTYPES, CpuStep, FileLayout, NpuStep, VariableStep, read_layout
from npuplan.run.variables import ResourceVariables

NpuExecutor = Callable[[bytes, dict[int, np.ndarray]], None]


def _simulator() -> NpuExecutor:
    """The NPU simulator's entry (imported when a file is loaded: ``import npuplan.run`` stays light)."""
    from npuplan.sim import execute_stream

    return execute_stream


def _no_npu(payload: bytes, regions: dict[int, np.ndarray]) -> None:
    raise AssertionError("a file without ethos-u operators ran one")


class CompiledModel:
    """A loaded compiled file: ``invoke(inputs) -> outputs`` (numpy arrays, in the order of the
    model's inputs and outputs); ``reset()`` sets the variable tensors back to their start.
    ``npu``: what executes an ethos-u operator (default the simulator); ``reference_kernels``: the
    CPU operators on TFLite's reference kernels (as TensorFlow Lite Micro) instead of the optimised."""

    def __init__(self, data: bytes, *, label: str = "the file", npu: NpuExecutor | None = None,
                 reference_kernels: bool = False) -> None:
        self.label = label
        self.layout = read_layout(data, label=label)
        has_npu = any(isinstance(step, NpuStep) for step in self.layout.steps)
        self._npu = npu or (_simulator() if has_npu else _no_npu)
        self._arena = np.zeros(self.layout.arena_bytes, dtype=np.uint8)
        self._memory = {i: self._slot_bytes(i) for i in self.layout.slots}
        self._variables = ResourceVariables((self.layout.graph, *self.layout.others), label=label)
        self._cpu: dict[int, tuple[CpuModel, Any]] = {}
        for step in self.layout.steps:
            if isinstance(step, CpuStep):
                sub = cpu_model(self.layout, step)
                self._cpu[step.first] = (sub, litert.interpreter(sub.data, label=f"{label}: {sub.label}",
                                                                 reference_kernels=reference_kernels))
        self.reset()

    @classmethod
    def load(cls, path: str | Path, *, npu: NpuExecutor | None = None,
             reference_kernels: bool = False) -> "CompiledModel":
        try:
            data = Path(path).read_bytes()
        except OSError as error:
            raise ModelError(f"cannot read '{path}': {error.strerror}") from None
        return cls(data, label=f"'{path}'", npu=npu, reference_kernels=reference_kernels)

    # ---- memory
    def _slot_bytes(self, index: int) -> np.ndarray:
        slot = self.layout.slots[index]
        if slot.constant is not None:
            return np.frombuffer(slot.constant, dtype=np.uint8)  # read-only: flash
        if slot.arena_offset is not None:
            return self._arena[slot.arena_offset:slot.arena_offset + slot.size_bytes]
        return np.zeros(slot.size_bytes, dtype=np.uint8)

    def values(self, index: int) -> np.ndarray:
        """A view of tensor ``index``'s bytes as its values (shape and type)."""
        t = self.layout.tensors[index]
        dtype = NUMPY_DTYPES.get(t.dtype)
        if dtype is None:
            raise ModelError(f"{self.label}: tensor '{t.name}' has type {t.dtype}, which npuplan run does not hold")
        return self._memory[index].view(dtype).reshape(t.shape)

    def _tensor_values(self, t: Any) -> np.ndarray:
        return self.values(self.layout.index_of[id(t)])

    def reset(self) -> None:
        """Variable tensors back to TFLite's start: the zero point for int8, else zeros; resource
        variables unassigned and CALL_ONCE's initialiser to run again."""
        self._variables.reset()
        for index, t in self.layout.tensors.items():
            if t.is_variable:
                zero = t.quant.zero_point[0] if t.dtype is DataType.INT8 and t.quant and t.quant.zero_point else 0
                self.values(index)[...] = zero

    # ---- interface
    @property
    def input_specs(self) -> list[tuple[tuple[int, ...], np.dtype]]:
        """``(shape, dtype)`` of each input, in order."""
        tensors = [self.layout.tensors[i] for i in self.layout.inputs]
        return [(tuple(t.shape), np.dtype(NUMPY_DTYPES.get(t.dtype, np.uint8))) for t in tensors]

    def invoke(self, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
        """Run the file on ``inputs``; its outputs (copies). ``InputError`` for a wrong count, shape
        or type; ``ValidationError`` for a command stream the simulator cannot execute."""
        specs = self.input_specs
        if len(inputs) != len(specs):
            raise InputError(f"{self.label} has {len(specs)} input(s), {len(inputs)} given")
        for k, (x, index) in enumerate(zip(inputs, self.layout.inputs)):
            shape, dtype = specs[k]
            if tuple(x.shape) != shape or x.dtype != dtype:
                raise InputError(f"{self.label}: input {k} must be {dtype} {list(shape)}, "
                                 f"not {x.dtype} {list(x.shape)}")
            self.values(index)[...] = x
        for step in self.layout.steps:
            if isinstance(step, NpuStep):
                self._run_npu(step)
            elif isinstance(step, VariableStep):
                self._variables.run(self.layout.graph.ops[step.operator], self._tensor_values)
            else:
                self._run_cpu(step)
        return [self.values(i).copy() for i in self.layout.outputs]

    def _run_npu(self, step: NpuStep) -> None:
        regions = {region: self._memory[tensor] for region, tensor in step.regions}
        try:
            self._npu(step.payload, regions)
        except ValidationError as error:
            raise ValidationError(f"{self.label}: ethos-u operator {step.operator}: {error}") from None
        except ValueError as error:  # numpy refusing a write into a constant: the flash
            if "read-only" not in str(error):
                raise
            raise ValidationError(f"{self.label}: ethos-u operator {step.operator}: the stream writes into a "
                                  f"constant tensor (the flash, region 0): {error}") from None

    def _run_cpu(self, step: CpuStep) -> None:
        sub, found = self._cpu[step.first]
        for sub_index, index in (*sub.inputs, *sub.variables):
            found.set_tensor(sub_index, self.values(index))
        litert.invoke(found, label=f"{self.label}: {sub.label}")
        for sub_index, index in (*sub.outputs, *sub.variables):
            got, place = found.get_tensor(sub_index), self.values(index)
            if got.size != place.size:  # a placeholder shape of a dynamic dimension the file left unfixed
                raise ModelError(f"{self.label}: {sub.label} writes '{self.layout.tensors[index].name}' as "
                                 f"{list(got.shape)} but the file declares {list(place.shape)}")
            place[...] = got.reshape(place.shape)
