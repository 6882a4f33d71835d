"""CPU operators of a compiled file, each maximal run cut into a TFLite model of its own (written
with npuplan's own writer) that LiteRT runs with TFLite's built-in kernels.

The small model's inputs are the feature maps the run reads and does not write; its outputs every
tensor the run writes; a variable tensor (LSTM/SVDF state) stays a variable tensor of the small
model, its bytes copied in from the compiled file's memory before each run and back after, so
the state lives where the compiled file keeps it.
"""

from __future__ import annotations


from npuplan.errors import ModelError
from npuplan.io.tflite_write import write_tflite
from npuplan.ir.graph import Graph, Model, Tensor
from npuplan.records import record
from npuplan.run.layout import CpuStep, FileLayout


@record(slots=False)
class CpuModel:
    """A run of CPU operators as a TFLite model: its bytes, and for its inputs, variable tensors
    and outputs the pairs (the small model's tensor index, the compiled file's tensor index)."""

    data: bytes
    label: str
    inputs: tuple[tuple[int, int], ...]
    variables: tuple[tuple[int, int], ...]
    outputs: tuple[tuple[int, int], ...]


def cpu_model(layout: FileLayout, step: CpuStep) -> CpuModel:
    """The TFLite model of the CPU operators ``step`` covers."""
    ops = layout.graph.ops[step.first:step.last + 1]
    label = (f"CPU operator {step.first} ({ops[0].type})" if len(ops) == 1
             else f"CPU operators {step.first}-{step.last}")
    for op in ops:  # a custom operator runs if LiteRT's resolver has it (TFLite_Detection_PostProcess)
        if op.type.startswith("UNKNOWN"):
            raise ModelError(f"{label}: operator {op.type} has no TFLite built-in kernel to run it")
    produced: dict[int, Tensor] = {id(t): t for op in ops for t in op.outputs}
    inputs: dict[int, Tensor] = {}
    variables: dict[int, Tensor] = {}
    for op in ops:
        for t in op.inputs:
            if t is None or t.is_constant or id(t) in produced:
                continue
            (variables if t.is_variable else inputs).setdefault(id(t), t)
    outputs = tuple(t for t in produced.values() if not t.is_variable)
    graph = Graph(f"cpu_{step.first}", ops, tuple(inputs.values()), outputs)
    sub_index = {id(t): i for i, t in enumerate(graph.tensors())}

    def pairs(tensors: tuple[Tensor, ...] | list[Tensor]) -> tuple[tuple[int, int], ...]:
        return tuple((sub_index[id(t)], layout.index_of[id(t)]) for t in tensors)

    data = write_tflite(Model(graph.name, (graph, *layout.others)))  # other subgraphs keep their indices
    return CpuModel(data, label, pairs(graph.inputs), pairs(list(variables.values())), pairs(outputs))
