"""SOFTMAX emitted as Vela 5.2.0 runs it: every operation's registers and the exp table's bytes,
against the values Vela's own file holds for the same network (taken from
``bench/softmax_compare.py --dump`` on this model)."""

from __future__ import annotations

import hashlib

import numpy as np

from npuplan.ir.graph import Graph, Op, Tensor, frozen_options
from npuplan.ir.shape import Shape4D
from npuplan.ir.types import DataType, Quantization
from npuplan.lowering.softmax import elementwise_block
from npuplan.regstream.tflite_file import ethos_u_payloads
from tests.unit.emit._stream import command_words
from tests.unit.emit.conftest import emit_graph

_KINDS = {"NPU_OP_POOL": {0: "MAX", 2: "REDUCE_SUM"},
          "NPU_OP_ELEMENTWISE": {0: "MUL", 1: "ADD", 2: "SUB", 7: "CLZ", 8: "SHR", 9: "SHL"}}
_REGISTERS = ("OFM_HEIGHT_M1", "OFM_WIDTH_M1", "OFM_DEPTH_M1", "IFM_PRECISION", "OFM_PRECISION", "IFM_ZERO_POINT",
              "OFM_ZERO_POINT", "OFM_SCALE", "ACTIVATION", "IFM2_BROADCAST")
_LAYOUT_BIT = ~(1 << 6)  # NHCWB16 or NHWC: a placement choice, not a value the op computes
# Vela's registers for a 4x5x6 int8 softmax (scale 0.05, zero point -20, beta 0.7) on Ethos-U55-128:
# the 20 rows and the 120-value maps less than 8 deep run as blocks (1 x 1 x 20, 5 x 1 x 24); the
# constant first operands are read reversed (IFM2_BROADCAST bit 6); OFM_SCALE holds the shift above
# bit 32; OFM_PRECISION bits 14-15 the rounding (2: natural), bit 8 the global scale.
_VELA = (
    ("MAX", (19, 0, 0, 1, 257, 0xffec, 0xffec, 1, 0, 0)),
    ("SUB", (3, 4, 5, 1, 261, 0xffec, 127, 1, 0x3010, 4)),
    ("SHR", (4, 0, 23, 9, 0x8005, 0, 0, 1, 0, 5)),
    ("REDUCE_SUM", (3, 4, 0, 9, 0x8105, 0, 0, 1, 0, 0)),
    ("CLZ", (0, 0, 19, 9, 5, 0, 0, 1, 0, 0)),
    ("SUB", (0, 0, 19, 9, 261, 0, 0, 1, 0, 68)),
    ("SUB", (0, 0, 19, 9, 261, 0, 0, 1, 0, 4)),
    ("SHL", (0, 0, 19, 9, 5, 0, 0, 1, 0, 0)),
    ("MUL", (0, 0, 19, 9, 261, 0, 0, 0x1f40000000, 0, 4)),
    ("ADD", (0, 0, 19, 9, 261, 0, 0, 1, 0, 4)),
    *(step for _ in range(3) for step in (
        ("MUL", (0, 0, 19, 9, 261, 0, 0, 0x1f40000000, 0, 0)),
        ("SUB", (0, 0, 19, 9, 261, 0, 0, 1, 0, 68)),
        ("MUL", (0, 0, 19, 9, 261, 0, 0, 0x1f40000000, 0, 0)),
        ("MUL", (0, 0, 19, 9, 261, 0, 0, 1, 0, 4)),
        ("ADD", (0, 0, 19, 9, 261, 0, 0, 1, 0, 0)),
    )),
    ("MUL", (3, 4, 5, 9, 261, 0, 0, 0x1e40000000, 0, 4)),
    ("ADD", (4, 0, 23, 9, 261, 0, 0, 1, 0, 0)),
    ("SHR", (3, 4, 5, 9, 0x8001, 0, 0xff80, 1, 0, 4)),
)
_VELA_EXP_TABLE_SHA256 = "75b63f471cefc6272f13ed2265b7662a6cb7d866e9df7fb6dfa718d1b9fdf9ac"  # 1024 bytes


def _softmax_graph() -> Graph:
    x = Tensor("x", (1, 4, 5, 6), DataType.INT8, Quantization((0.05,), (-20,)))
    y = Tensor("y", (1, 4, 5, 6), DataType.INT8, Quantization((1 / 256,), (-128,)))
    return Graph("softmax", (Op("SOFTMAX", (x,), (y,), frozen_options({"beta": 0.7}), 0),), (x,), (y,))


def _operations(data: bytes) -> list[tuple[str, tuple[int, ...], bytes | None]]:
    """Each NPU operation's kind, the registers of ``_REGISTERS`` and the table its lookup reads
    (the bytes the last DMA into the NPU's internal memory copied)."""
    ((_, flash),) = ethos_u_payloads(data)
    regs: dict[str, int] = {}
    table: bytes | None = None
    out = []
    for w in command_words(data):
        if w.name in _KINDS:
            kind = _KINDS[w.name][w.param]
            unary = kind in ("MAX", "REDUCE_SUM", "CLZ")  # IFM2_BROADCAST: stale from an earlier operation
            values = tuple(0 if unary and n == "IFM2_BROADCAST" else regs.get(n, 0) & (
                _LAYOUT_BIT if n.endswith("PRECISION") else -1) for n in _REGISTERS)
            lookup = regs.get("ACTIVATION", 0) & 0x1F >= 16
            out.append((kind, values, table if lookup else None))
        elif w.name == "NPU_OP_DMA_START" and regs.get("DMA0_DST_REGION", 0) & (1 << 8):
            table = flash[regs["DMA0_SRC"]:regs["DMA0_SRC"] + regs["DMA0_LEN"]]
        elif not w.name.startswith("NPU_OP_"):
            regs[w.name] = w.value
    return out


def test_an_int8_softmax_runs_every_operation_as_vela_does(tmp_path):
    _, emitted, _ = emit_graph(tmp_path, _softmax_graph())
    ops = _operations(emitted.data)
    assert [(kind, values) for kind, values, _ in ops] == list(_VELA)
    tables = [t for _, _, t in ops if t is not None]
    assert len(tables) == 1 and hashlib.sha256(tables[0]).hexdigest() == _VELA_EXP_TABLE_SHA256
    assert np.frombuffer(tables[0], dtype="<i4")[-1] == 2**31 - 1  # exp(0) in Q0.31


def test_npuplan_validate_accepts_the_softmax_file(tmp_path):
    from npuplan.cli import main

    _, emitted, _ = emit_graph(tmp_path, _softmax_graph())
    path = tmp_path / "softmax_npuplan.tflite"
    path.write_bytes(emitted.data)
    assert main(["validate", str(path)]) == 0


def test_vela_s_block_of_an_elementwise_map():
    blocks = {(1, 1, 20, 4): (5, 1, 16), (1, 42, 7, 4): (7, 7, 24), (1, 1, 7275, 1): (97, 1, 75),
              (1, 1, 9000, 1): (25, 15, 24), (1, 32, 7, 4): (14, 4, 16), (1, 1, 20000, 1): (50, 25, 16), (1, 1, 17, 1): (1, 1, 17), (1, 1, 20, 8): None, (1, 4, 4, 1): None}
    for shape, expected in blocks.items():
        block = elementwise_block(Shape4D(*shape))
        assert (None if block is None else (block.h, block.w, block.c)) == expected, shape


def test_the_16_bit_tables_are_vela_s():
    from npuplan.lowering.softmax_tables import exp_table_16bit, reciprocal_table_16bit

    # sha256 of the 2048 bytes Vela 5.2.0's file loads for a 16-bit softmax's Add (exp) and Sub (1/(1+x))
    vela = {"exp": "04272530043fa6114afe1547878387e3a70cd9cfc574f5fcf1918ced9afcbdec",
            "reciprocal": "a09a4bcfbd0bc8366d087a2542404dde3d07c1d122bdc3756d319a65408ef3ad"}
    for name, table in (("exp", exp_table_16bit()), ("reciprocal", reciprocal_table_16bit())):
        assert hashlib.sha256(table.astype("<u4").tobytes()).hexdigest() == vela[name], name


def test_an_int16_softmax_runs_on_the_npu_with_its_two_tables(tmp_path):
    q = Quantization((0.0005,), (0,))
    x = Tensor("x", (1, 2, 9, 12), DataType.INT16, q)
    y = Tensor("y", (1, 2, 9, 12), DataType.INT16, Quantization((1 / 32768,), (0,)))
    graph = Graph("softmax16", (Op("SOFTMAX", (x,), (y,), frozen_options({"beta": 1.5}), 0),), (x,), (y,))
    _, emitted, _ = emit_graph(tmp_path, graph)
    ops = _operations(emitted.data)
    assert len(ops) == 15 and [len(t) for _, _, t in ops if t is not None] == [2048, 2048]
    # the beta scaling's output stage: 0.0005 x 1.5 / (10 / 65535) in float32, shift 28 above bit 32
    assert ops[2][0] == "MUL" and ops[2][1][_REGISTERS.index("OFM_SCALE")] == 0x1c4ea45a00


def test_an_int8_softmax_writing_int16_runs_on_the_npu_keeping_16_bits(tmp_path):
    """TFLite lets an int8 softmax write int16 (scale 1/65536, zero point -32768) and Vela's default
    core runs it on the NPU. The decomposition is the 8-bit one but for its last shift (by
    27 - headroom, not 35 - headroom) and an int16 output stage with the output's zero point: Vela's
    file shifts, adds zeros and adds -32768 explicitly (29 operations), the same values."""
    x = Tensor("x", (1, 4, 5, 6), DataType.INT8, Quantization((0.05,), (-20,)))
    y = Tensor("y", (1, 4, 5, 6), DataType.INT16, Quantization((1 / 65536,), (-32768,)))
    graph = Graph("softmax8to16", (Op("SOFTMAX", (x,), (y,), frozen_options({"beta": 0.7}), 0),), (x,), (y,))
    planned, emitted, _ = emit_graph(tmp_path, graph)
    shift = next(o for o in planned.lowered.npu_ops if o.name.endswith("_sub5"))
    assert shift.ifm.data is not None and int(shift.ifm.data.reshape(-1)[0]) == 12 + 31 - 16
    ops = _operations(emitted.data)
    assert [(kind, values) for kind, values, _ in ops[:26]] == list(_VELA[:26])  # the 8-bit computation
    kind, values, _ = ops[-1]
    registers = dict(zip(_REGISTERS, values))
    assert kind == "SHR" and registers["OFM_PRECISION"] == 0x8003  # int16, natural rounding
    assert registers["OFM_ZERO_POINT"] == 0x8000  # -32768


def test_an_int16_input_softmax_writing_int8_stays_on_the_cpu():
    from npuplan.lowering.support import unsupported_reason

    x = Tensor("x", (1, 10), DataType.INT16, Quantization((0.001,), (0,)))
    y = Tensor("y", (1, 10), DataType.INT8, Quantization((1 / 256,), (-128,)))
    reason = unsupported_reason(Op("SOFTMAX", (x,), (y,), frozen_options({"beta": 1.0}), 0))
    assert reason is not None and "must match" in reason
