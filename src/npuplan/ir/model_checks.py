"""The model verifier: what a model must satisfy before any pass trusts it.

``check_model(model)`` runs between the reader and lowering. A model read from a file is untrusted
input: a converter bug, a damaged download or a hostile file can declare anything. Each check
raises ``ModelError`` with one line naming the subgraph, the tensor or op and what is wrong; a model
that passes can be lowered and planned without an internal error. The limits (``LIMITS``) bound the
work a valid but absurd model can cause, and are stated in the README.
"""

from __future__ import annotations

import logging
import math

from npuplan.errors import ModelError
from npuplan.ir.graph import Graph, Model, Op, Tensor
from npuplan.ir.types import DataType
from npuplan.records import record

log = logging.getLogger(__name__)


@record
class Limits:
    """What npuplan accepts in a model (beyond them, a one-line error, not an hour of search).

    ``max_ops`` operators per subgraph, ``max_tensors`` tensors per subgraph, ``max_rank``
    dimensions per tensor, ``max_tensor_bytes`` bytes per tensor, ``max_dim`` per dimension.
    """

    max_ops: int = 10_000
    max_tensors: int = 100_000
    max_rank: int = 8
    max_tensor_bytes: int = 1 << 31
    max_dim: int = 1 << 24


LIMITS = Limits()

_MANY = 1 << 16
_UNARY = ("RELU", "RELU6", "RELU_N1_TO_1", "RELU_0_TO_1", "TANH", "LOGISTIC", "HARD_SWISH", "ABS", "EXP", "LOG",
          "RSQRT", "SQRT", "NEG", "QUANTIZE", "DEQUANTIZE", "LEAKY_RELU", "SOFTMAX", "GELU", "SQUEEZE", "SHAPE",
          "CAST", "AVERAGE_POOL_2D", "MAX_POOL_2D", "L2_POOL_2D", "SPACE_TO_DEPTH", "DEPTH_TO_SPACE",
          "LOG_SOFTMAX", "FLOOR", "ZEROS_LIKE")
_BINARY = ("ADD", "SUB", "MUL", "DIV", "MAXIMUM", "MINIMUM", "SQUARED_DIFFERENCE", "POW", "PRELU", "MEAN", "SUM",
           "REDUCE_MAX", "REDUCE_MIN", "REDUCE_PROD", "PAD", "MIRROR_PAD", "EXPAND_DIMS", "TRANSPOSE",
           "RESIZE_BILINEAR", "RESIZE_NEAREST_NEIGHBOR", "ARG_MAX", "ARG_MIN", "GATHER", "BATCH_MATMUL", "TILE",
           "BROADCAST_TO")
# TFLite's operand counts: builtin type -> ((fewest, most) inputs, (fewest, most) outputs); the
# fewest inputs must all be present. A model breaking them is not a valid TFLite model.
OPERAND_COUNTS: dict[str, tuple[tuple[int, int], tuple[int, int]]] = {
    **{t: ((1, 1), (1, 1)) for t in _UNARY},
    **{t: ((2, 2), (1, 1)) for t in _BINARY},
    "CONV_2D": ((2, 3), (1, 1)), "DEPTHWISE_CONV_2D": ((2, 3), (1, 1)), "FULLY_CONNECTED": ((2, 3), (1, 1)),
    "TRANSPOSE_CONV": ((3, 4), (1, 1)), "PADV2": ((2, 3), (1, 1)), "CONCATENATION": ((1, _MANY), (1, 1)),
    "PACK": ((1, _MANY), (1, 1)), "UNPACK": ((1, 1), (1, _MANY)), "SPLIT": ((2, 2), (1, _MANY)),
    "SPLIT_V": ((3, 3), (1, _MANY)), "RESHAPE": ((1, 2), (1, 1)), "STRIDED_SLICE": ((4, 4), (1, 1)),
    "SLICE": ((3, 3), (1, 1)), "SPACE_TO_BATCH_ND": ((3, 3), (1, 1)), "BATCH_TO_SPACE_ND": ((3, 3), (1, 1)),
    "CALL_ONCE": ((0, 0), (0, 0)), "VAR_HANDLE": ((0, 0), (1, 1)), "READ_VARIABLE": ((1, 1), (1, 1)),
    "ASSIGN_VARIABLE": ((2, 2), (0, 0)),
}


# TFLite operators that write no tensor: their effect is on a resource variable (ASSIGN_VARIABLE
# stores into one, CALL_ONCE runs the subgraph that initialises them on the first invocation).
NO_OUTPUTS = frozenset({"ASSIGN_VARIABLE", "CALL_ONCE"})


def operand_count_problem(op: Op) -> str | None:
    """Why ``op`` has the wrong number of operands for its type, or ``None`` (also for types
    without a known count)."""
    counts = OPERAND_COUNTS.get(op.type)
    if counts is None:
        return None
    (fewest, most), (fewest_out, most_out) = counts
    if not fewest <= len(op.inputs) <= most or any(t is None for t in op.inputs[:fewest]):
        expected = f"{fewest}" if fewest == most else f"{fewest} to {most}"
        return f"{op.type} takes {expected} input tensors (this one has {sum(t is not None for t in op.inputs)})"
    if not fewest_out <= len(op.outputs) <= most_out:
        expected = f"{fewest_out}" if fewest_out == most_out else f"at least {fewest_out}"
        return f"{op.type} writes {expected} output tensors (this one has {len(op.outputs)})"
    return None

_ZERO_POINT_RANGE = {
    DataType.INT8: (-128, 127),
    DataType.UINT8: (0, 255),
    DataType.INT16: (-32768, 32767),
}


def check_model(model: Model, limits: Limits = LIMITS) -> Model:
    """Return ``model`` unchanged if every check passes; raise ``ModelError`` naming the first
    failure otherwise. Only the main subgraph is planned, but every subgraph is checked."""
    for graph in model.subgraphs:
        _check_graph(graph, limits)
        _check_calls(graph, model)
    for warning in model_warnings(model):
        log.warning("%s", warning)
    return model


def _check_graph(graph: Graph, limits: Limits) -> None:
    where = f"subgraph '{graph.name}'"
    if len(graph.ops) > limits.max_ops:
        raise ModelError(f"{where} has {len(graph.ops)} operators; npuplan plans at most {limits.max_ops}")
    tensors = graph.tensors()
    if len(tensors) > limits.max_tensors:
        raise ModelError(f"{where} has {len(tensors)} tensors; npuplan plans at most {limits.max_tensors}")
    for tensor in tensors:
        _check_tensor(tensor, limits)
    _check_dataflow(graph)


def _check_calls(graph: Graph, model: Model) -> None:
    """A CALL_ONCE names another subgraph of the model (its resource variables' initialiser)."""
    for op in graph.ops:
        if op.type != "CALL_ONCE":
            continue
        index = op.options.get("init_subgraph_index")
        if not isinstance(index, int) or not 0 <= index < len(model.subgraphs) or model.subgraphs[index] is graph:
            raise ModelError(f"subgraph '{graph.name}': op {op.index} (CALL_ONCE) calls subgraph {index}, which is "
                             f"not another of the model's {len(model.subgraphs)} subgraphs")


def _check_tensor(t: Tensor, limits: Limits) -> None:
    what = f"tensor '{t.name}'"
    if len(t.shape) > limits.max_rank:
        raise ModelError(f"{what} has {len(t.shape)} dimensions; npuplan accepts at most {limits.max_rank}")
    if any(d < 0 for d in t.shape):
        raise ModelError(f"{what} has a negative dimension {list(t.shape)}")
    if any(d > limits.max_dim for d in t.shape):
        raise ModelError(f"{what} has a dimension over {limits.max_dim} {list(t.shape)}")
    size = math.prod(t.shape) * t.dtype.size_bytes
    if size > limits.max_tensor_bytes:
        raise ModelError(f"{what} {list(t.shape)} {t.dtype} needs {size} bytes; npuplan accepts tensors "
                         f"of at most {limits.max_tensor_bytes} bytes")
    if t.data is not None and t.dtype not in (DataType.STRING, DataType.UNKNOWN):
        declared = math.prod(t.shape)
        if t.data.size != declared:
            raise ModelError(f"{what}: its buffer holds {t.data.size} {t.dtype} values but its shape "
                             f"{list(t.shape)} needs {declared}")
    _check_quantization(t)


def _check_quantization(t: Tensor) -> None:
    q = t.quant
    if q is None:
        return
    what = f"tensor '{t.name}'"
    if not all(math.isfinite(s) and s >= 0 for s in q.scale):
        bad = next(s for s in q.scale if not (math.isfinite(s) and s >= 0))
        raise ModelError(f"{what} has an invalid quantization scale {bad} (must be finite and not negative)")
    if len(q.zero_point) != len(q.scale):
        raise ModelError(f"{what} has {len(q.scale)} quantization scales but {len(q.zero_point)} zero points")
    low, high = _ZERO_POINT_RANGE.get(t.dtype, (-(2**63), 2**63 - 1))
    if not all(low <= z <= high for z in q.zero_point):
        bad_zp = next(z for z in q.zero_point if not low <= z <= high)
        raise ModelError(f"{what} has zero point {bad_zp}, outside the {t.dtype} range [{low}, {high}]")
    if len(q.scale) > 1 and _stray_axis(t) is None:
        if not 0 <= q.axis < max(len(t.shape), 1):
            raise ModelError(f"{what} is quantized per channel along axis {q.axis} but has {len(t.shape)} dimensions")
        if t.shape and t.shape[q.axis] != len(q.scale):
            raise ModelError(f"{what} has {len(q.scale)} per-channel scales but {t.shape[q.axis]} channels "
                             f"along axis {q.axis}")


def _stray_axis(t: Tensor) -> int | None:
    """The axis a 1-D tensor with one scale per element declares its per-channel quantization along
    when it does not have it (converters write a convolution's bias with its filter's
    ``quantized_dimension``, 3 for a depthwise one), else None. TensorFlow Lite Micro and Vela run
    such a file: a bias's scales are the input's times the filter's, whatever the bias declares, and
    its only axis is the channel axis. Nothing in npuplan reads the declared axis."""
    q = t.quant
    if q is None or len(q.scale) <= 1 or len(t.shape) != 1 or q.axis == 0 or t.shape[0] != len(q.scale):
        return None
    return q.axis


def model_warnings(model: Model) -> tuple[str, ...]:
    """What ``check_model`` accepts but a user should know, one line per kind: 1-D tensors that
    declare per-channel quantization along an axis they lack (``_stray_axis``)."""
    stray: dict[str, int] = {}
    for graph in model.subgraphs:
        for t in graph.tensors():
            axis = _stray_axis(t)
            if axis is not None:
                stray.setdefault(t.name, axis)
    if not stray:
        return ()
    first, axes = next(iter(stray)), sorted(set(stray.values()))
    return (f"{len(stray)} 1-D tensor(s) ('{first}'{', ...' if len(stray) > 1 else ''}: one scale per value, "
            f"biases as converters write them) declare per-channel quantization along axis "
            f"{'/'.join(map(str, axes))}, which they do not have; planned with the scales along their only axis, "
            "as TensorFlow Lite Micro and Vela run them",)


def _check_dataflow(graph: Graph) -> None:
    """Every op has an output and, for the types TFLite defines counts of, the right number of
    operands; every tensor is written once, by an op that runs before its readers
    (TFLite stores operators in execution order, so a read before the write is a cycle or a
    corrupt order); graph inputs and constants are never written."""
    where = f"subgraph '{graph.name}'"
    producer: dict[int, Op] = {}
    for op in graph.ops:
        if not op.outputs and op.type not in NO_OUTPUTS:
            raise ModelError(f"{where}: op {op.index} ({op.type}) has no outputs")
        problem = operand_count_problem(op)
        if problem is not None:
            raise ModelError(f"{where}: op {op.index} ('{op.name}'): {problem}")
        for t in op.outputs:
            if id(t) in producer:
                raise ModelError(f"{where}: tensor '{t.name}' is written by two ops "
                                 f"({producer[id(t)].index} and {op.index})")
            if t.is_constant:
                raise ModelError(f"{where}: op {op.index} ({op.type}) writes constant tensor '{t.name}'")
            producer[id(t)] = op
    inputs = {id(t) for t in graph.inputs}
    for t in graph.inputs:
        if id(t) in producer:
            raise ModelError(f"{where}: graph input '{t.name}' is written by op {producer[id(t)].index}")
    done: set[int] = set(inputs)
    for op in graph.ops:
        for read in op.inputs:
            if read is None or read.is_constant or read.is_variable or id(read) in done:
                continue
            if id(read) in producer:
                raise ModelError(f"{where}: op {op.index} ({op.type}) reads '{read.name}' before op "
                                 f"{producer[id(read)].index} writes it (a cycle or operators out of order)")
            raise ModelError(f"{where}: op {op.index} ({op.type}) reads '{read.name}', which is neither a graph "
                             "input, a constant nor written by any op")
        done.update(id(t) for t in op.outputs)
    for t in graph.outputs:
        if id(t) not in done and not t.is_constant:
            raise ModelError(f"{where}: graph output '{t.name}' is never written")
