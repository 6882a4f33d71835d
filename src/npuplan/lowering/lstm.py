"""UNIDIRECTIONAL_SEQUENCE_LSTM, unrolled into its gate operations the way Vela 5.2.0's legacy
core runs it (its default core keeps the op on the CPU).

Per time step (and per batch when the sequence is batch-major; a time-major sequence runs all its
batches at once), with TFLite's integer LSTM scales:

- each gate ``g`` of input, forget, cell and output: two fully connected ops, the step's input
  feature times the input weights (with the gate's bias) and the output state times the recurrent
  weights, each into int16 at scale 2^-12; their int16 ADD at Q0.15 with the gate's activation in
  the output stage (sigmoid, tanh for the cell gate);
- the cell state: ``cell * forget`` and ``cell_gate * input`` (int16 MULs), added (clipped to
  ``cell_clip`` when set);
- the output state: tanh of the cell state (a 1x1 pool with the activation) times the output gate,
  in the sequence's type;
- the output state copied into the step's row of the OFM (a 1x1 pool writing its box).

The step's feature is read where it lies in the input, and the states where they lie in the
variable state tensors (a batch's row of them when batch-major), which each step's new states
are written over, as Vela does. Layer names are Vela's
(``input_gate#0.3:x_feature#0.3_fc``...), so the per-layer reports compare by name.
"""

from __future__ import annotations

from npuplan.ir.graph import Op, Tensor
from npuplan.ir.lowered import Activation, BlockType, NpuOp, PoolKind
from npuplan.ir.shape import Shape4D
from npuplan.ir.types import DataType, Quantization

LSTM = "UNIDIRECTIONAL_SEQUENCE_LSTM"
_INPUTS, _INTERMEDIATES = 24, 5
_OUTPUT_STATE, _CELL_STATE = 18, 19
# gate: (input weights, recurrent weights, bias) input indices and the activation of its sum
_GATES = {"input_gate": (1, 5, 12, Activation.SIGMOID), "forget_gate": (2, 6, 13, Activation.SIGMOID),
          "cell_gate": (3, 7, 14, Activation.TANH), "output_gate": (4, 8, 15, Activation.SIGMOID)}
_FC_QUANT = Quantization((2.0**-12,), (0,))
_Q0_15 = Quantization((2.0**-15,), (0,))


def lstm_reason(op: Op) -> str | None:
    """Why an LSTM stays on the CPU, or None (Vela 5.2.0's semantic and NPU constraints)."""
    ins = op.inputs
    if len(ins) != _INPUTS:
        return f"Must have {_INPUTS} input tensors (it has {len(ins)})"
    if len(op.intermediates) != _INTERMEDIATES:
        return f"Must have {_INTERMEDIATES} intermediate tensors (it has {len(op.intermediates)})"
    ifm, ofm = ins[0], op.outputs[0]
    assert ifm is not None
    if len(ifm.shape) != 3 or len(ofm.shape) != 3:
        return f"IFM and OFM must have 3D shape (they are {list(ifm.shape)} and {list(ofm.shape)})"
    if ifm.dtype not in (DataType.INT8, DataType.INT16):
        return f"IFM must be signed, int8 or int16 (it is {ifm.dtype})"
    if ifm.dtype != ofm.dtype:
        return f"IFM and OFM data types must match ({ifm.dtype} and {ofm.dtype})"
    if ins[1] is None and ins[5] is None:
        return "Must not use CIFG (coupled input and forget gates)"
    if any(t is not None for t in ins[9:12]):
        return "Must not use peephole connections"
    if any(t is not None for t in ins[16:18]):
        return "Must not use a projection"
    if any(t is not None for t in ins[20:24]):
        return "Must not use layer normalisation"
    if any(t is None or not t.is_constant for t in ins[1:9]):
        return "All input and recurrent weights must be available as constants"
    if any(len(t.shape) != 2 for t in ins[1:9] if t is not None):
        return "All input and recurrent weights must be 2D"
    states = [t for t in ins[_OUTPUT_STATE:_CELL_STATE + 1] if t is not None]
    if len(states) != 2 or not all(t.is_variable for t in states):
        return "The output and cell state tensors must be variable tensors"
    return _shape_reason(op)


def _shape_reason(op: Op) -> str | None:
    """Why the LSTM's tensors do not fit together (a model TFLite itself would reject), or None."""
    ins = op.inputs
    ifm, ofm, output_state, cell_state = ins[0], op.outputs[0], ins[_OUTPUT_STATE], ins[_CELL_STATE]
    assert ifm is not None and output_state is not None and cell_state is not None
    time_major = bool(op.options.get("time_major", False))
    batches, features = (ifm.shape[1] if time_major else ifm.shape[0]), ifm.shape[2]
    cells = ins[1].shape[0] if ins[1] is not None else 0
    expected: dict[str, tuple[tuple[int, ...], list[Tensor | None]]] = {
        "input weights": ((cells, features), [ins[k] for k in range(1, 5)]),
        "recurrent weights": ((cells, cells), [ins[k] for k in range(5, 9)]),
        "biases": ((cells,), [ins[k] for k in range(12, 16)]),
        "output state": ((batches, cells), [output_state]),
        "cell state": ((batches, cells), [cell_state]),
        "output": ((*ifm.shape[:2], cells), [ofm]),
    }
    for what, (shape, tensors) in expected.items():
        bad = [t for t in tensors if t is not None and tuple(t.shape) != shape]
        if bad or (what == "biases" and any(t is None for t in tensors)):
            found = list(bad[0].shape) if bad else "missing"
            return f"The {what} must have the shape {list(shape)} for this input and cell count (found {found})"
    return None


class _Unroller:
    """Builds the NPU operations of one LSTM, step by step."""

    def __init__(self, op: Op) -> None:
        self.op = op
        ins = op.inputs
        ifm, output_state, cell_state = ins[0], ins[_OUTPUT_STATE], ins[_CELL_STATE]
        assert ifm is not None and output_state is not None and cell_state is not None
        self.ifm: Tensor = ifm
        self.ofm: Tensor = op.outputs[0]
        self.output_state: Tensor = output_state
        self.cell_state: Tensor = cell_state
        self.time_major = bool(op.options.get("time_major", False))
        shape = self.ifm.shape
        self.n_time, self.n_batch = (shape[0], shape[1]) if self.time_major else (shape[1], shape[0])
        self.n_feature, self.n_output = shape[2], self.output_state.shape[-1]
        self.rows = self.n_batch if self.time_major else 1  # the batches one step computes at once
        self.hidden = op.intermediates[4].quant or self.output_state.quant
        clip = float(op.options.get("cell_clip", 0.0) or 0.0)
        self.cell_activation = Activation.CLAMP if clip > 0 else Activation.NONE
        self.ops: list[NpuOp] = []

    # ---- pieces
    def fm(self, name: str, dtype: DataType, quant: Quantization | None, depth: int) -> Tensor:
        return Tensor(name, (self.rows, depth), dtype, quant)

    def vector(self, depth: int) -> Shape4D:
        return Shape4D(1, 1, self.rows, depth)

    def add_op(self, op: NpuOp) -> Tensor:
        self.ops.append(op)
        return op.ofm

    def fully_connected(self, name: str, source: Tensor, source_name: str, at: Shape4D | None, weights: Tensor,
                        bias: Tensor | None) -> Tensor:
        assert weights.data is not None
        cells, depth = weights.shape
        op_name = f"{name}:{source_name}_fc"
        return self.add_op(NpuOp(
            name=op_name, tflite_type=LSTM, op_type="FullyConnected", block_type=BlockType.VECTOR_PRODUCT,
            ifm=source, ifm_shape=self.vector(depth), ifm_read_offset=at,
            ofm=self.fm(f"{op_name}_tens0", DataType.INT16, _FC_QUANT, cells), ofm_shape=self.vector(cells),
            weights=weights.data.reshape(cells, 1, 1, depth), weight_tensor=weights,
            bias=None if bias is None else bias.data, bias_tensor=bias, source_index=self.op.index,
        ))

    def elementwise(self, name: str, kind: str, a: Tensor, b: Tensor, dtype: DataType, quant: Quantization | None,
                    activation: Activation = Activation.NONE, *, a_at: Shape4D | None = None,
                    into: Tensor | None = None, at: Shape4D | None = None) -> Tensor:
        """``a kind b`` into a new tensor, or into the box of ``into`` at ``at`` (a state update)."""
        box = self.vector(b.shape[-1])
        ofm = into if into is not None else self.fm(f"{name}_tens0", dtype, quant, box.c)
        return self.add_op(NpuOp(
            name=name, tflite_type=LSTM, op_type=kind.capitalize(), block_type=BlockType.ELEMENTWISE,
            ifm=a, ifm_shape=box, ifm_read_offset=a_at, ifm2=b, ifm2_shape=box, ofm=ofm,
            ofm_shape=ofm.shape4d if at is not None else box, ofm_write_offset=at,
            ofm_write_shape=box if at is not None else None, activation=activation, elementwise=kind,
            source_index=self.op.index,
        ))

    # ---- one step
    def step(self, batch: int, time: int, state_name: str) -> str:
        """The operations of step ``time`` (of batch ``batch`` when batch-major) reading the output
        state named ``state_name``; returns the name of the output state it writes."""
        ins = self.op.inputs
        tag = f"#{batch}.{time}"
        feature_at = Shape4D(0, time, 0, 0) if self.time_major else Shape4D(0, batch, time, 0)
        feature_name = f"{self.ifm.name}_feature{tag}"
        state_at = None if self.time_major else Shape4D(0, 0, batch, 0)  # this batch's row of the states

        def gate(kind: str) -> Tensor:
            w_in, w_rec, bias, activation = _GATES[kind]
            name = f"{kind}{tag}"
            input_weights, recurrent_weights = ins[w_in], ins[w_rec]
            assert input_weights is not None and recurrent_weights is not None
            from_input = self.fully_connected(name, self.ifm, feature_name, feature_at, input_weights, ins[bias])
            from_state = self.fully_connected(name, self.output_state, state_name, state_at, recurrent_weights, None)
            return self.elementwise(f"{name}_add", "ADD", from_input, from_state, DataType.INT16, _Q0_15, activation)

        # Vela's order: each gate's product as soon as its operands exist, so few gates are live at once
        output_gate, input_gate, cell_gate = gate("output_gate"), gate("input_gate"), gate("cell_gate")
        cell_quant = self.cell_state.quant
        added = self.elementwise(f"cell_state{tag}_ci_mul", "MUL", cell_gate, input_gate, DataType.INT16, cell_quant)
        kept = self.elementwise(f"cell_state{tag}_cf_mul", "MUL", self.cell_state, gate("forget_gate"),
                                DataType.INT16, cell_quant, a_at=state_at)
        # the new states are written over the old ones in the variable tensors, as Vela does
        self.elementwise(f"cell_state{tag}_add", "ADD", kept, added, DataType.INT16, cell_quant,
                         self.cell_activation, into=self.cell_state, at=state_at)
        depth = self.cell_state.shape[-1]
        tanh = self.add_op(NpuOp(
            name=f"output_state{tag}_tanh", tflite_type=LSTM, op_type="AvgPool", block_type=BlockType.POOLING,
            ifm=self.cell_state, ifm_shape=self.vector(depth), ifm_read_offset=state_at,
            ofm=self.fm(f"output_state{tag}_tanh_tens0", DataType.INT16, _Q0_15, depth),
            ofm_shape=self.vector(depth), activation=Activation.TANH, pool=PoolKind.AVERAGE,
            source_index=self.op.index,
        ))
        self.elementwise(f"output_state{tag}_mul", "MUL", tanh, output_gate, self.ifm.dtype, self.hidden,
                         into=self.output_state, at=state_at)
        self.add_op(NpuOp(
            name=f"{self.ofm.name}{tag}", tflite_type=LSTM, op_type="AvgPool", block_type=BlockType.POOLING,
            ifm=self.output_state, ifm_shape=self.vector(self.n_output), ifm_read_offset=state_at, ofm=self.ofm,
            ofm_shape=self.ofm.shape4d, pool=PoolKind.AVERAGE, ofm_write_offset=feature_at,
            ofm_write_shape=self.vector(self.n_output), source_index=self.op.index,
        ))
        return f"output_state{tag}_mul_tens0"  # Vela's name of the state it wrote

    def unroll(self) -> tuple[NpuOp, ...]:
        for batch in range(1 if self.time_major else self.n_batch):
            state_name = self.output_state.name + ("" if self.time_major else f"_state#{batch}")
            for time in range(self.n_time):
                state_name = self.step(batch, time, state_name)
        return tuple(self.ops)


def convert_lstm(op: Op) -> tuple[NpuOp, ...]:
    """UNIDIRECTIONAL_SEQUENCE_LSTM -> its gate operations, step by step (see the module docstring)."""
    return _Unroller(op).unroll()

