"""The deployable file: one ethos-u operator per NPU partition, laid out as Vela's output."""

from __future__ import annotations

import numpy as np
import pytest
import tflite

from npuplan.api import plan
from npuplan.emit.model import CUSTOM_OPTIONS
from npuplan.ir.lowered import Placement
from tests.tflite_builder import ADD, INT8, elementwise_model
from tests.unit.emit.conftest import DATA, U55_128, U65_DEDICATED


def _ops(data: bytes) -> tuple[tflite.Model, list[tuple[str, tflite.Operator]]]:
    model = tflite.Model.GetRootAsModel(data, 0)
    sg = model.Subgraphs(0)
    out = []
    for i in range(sg.OperatorsLength()):
        op = sg.Operators(i)
        code = model.OperatorCodes(op.OpcodeIndex())
        name = code.CustomCode().decode() if code.CustomCode() else str(code.BuiltinCode())
        out.append((name, op))
    return model, out


def _buffer(model: tflite.Model, tensor_index: int) -> bytes:
    tensor = model.Subgraphs(0).Tensors(tensor_index)
    return bytes(model.Buffers(tensor.Buffer()).DataAsNumpy())


def _check_layout(data: bytes, npu_partitions: int) -> tflite.Model:
    model, ops = _ops(data)
    sg = model.Subgraphs(0)
    custom = [op for name, op in ops if name == "ethos-u"]
    assert len(custom) == npu_partitions
    for op in custom:
        inputs = list(op.InputsAsNumpy())
        assert sg.Tensors(inputs[0]).Name() .decode().startswith("ethos_u_command_stream")
        assert sg.Tensors(inputs[1]).Name() == b"read_only"
        assert sg.Tensors(inputs[2]).Name() == b"scratch"
        assert _buffer(model, inputs[0])[:4] == b"COP1"
        assert bytes(op.CustomOptionsAsNumpy()) == CUSTOM_OPTIONS
    return model


def test_ds_cnn_emits_one_operator_per_npu_partition(ds_cnn_plan, ds_cnn_emitted):
    parts = [p for p in ds_cnn_plan.lowered.partitions() if p.placement is Placement.NPU]
    model = _check_layout(ds_cnn_emitted.data, len(parts))
    _, ops = _ops(ds_cnn_emitted.data)
    assert [name for name, _ in ops] == ["ethos-u"]  # its SOFTMAX runs on the NPU too
    assert ds_cnn_emitted.dma_operations > 0  # its weights are streamed by DMA
    flash = _buffer(model, list(ops[0][1].InputsAsNumpy())[1])
    assert len(flash) == ds_cnn_emitted.flash_bytes


def test_offline_allocation_places_inputs_and_outputs_at_their_planned_offsets(ds_cnn_plan, ds_cnn_emitted):
    model, _ = _ops(ds_cnn_emitted.data)
    meta = {model.Metadata(i).Name(): model.Metadata(i).Buffer() for i in range(model.MetadataLength())}
    offsets = np.frombuffer(bytes(model.Buffers(meta[b"OfflineMemoryAllocation"]).DataAsNumpy()), dtype="<i4")
    sg = model.Subgraphs(0)
    assert offsets[2] == sg.TensorsLength()
    net_input = sg.Tensors(int(sg.InputsAsNumpy()[0]))
    index = int(sg.InputsAsNumpy()[0])
    assert ds_cnn_plan.allocation is not None
    assert offsets[3 + index] == ds_cnn_plan.allocation.addresses[net_input.Name().decode()].offset


def test_tiny_int8_add(tmp_path):
    from npuplan.emit import emit_tflite

    path = tmp_path / "add.tflite"
    path.write_bytes(elementwise_model(opcode=ADD, dtype=INT8))
    emitted = emit_tflite(plan(path, deployable=True, **U55_128))
    _check_layout(emitted.data, 1)
    assert emitted.npu_operations >= 1 and emitted.flash_bytes == 0


def test_dedicated_sram_has_a_fast_scratch_tensor():
    from npuplan.emit import emit_tflite

    emitted = emit_tflite(plan(DATA / "autoencoder_ad.tflite", deployable=True, **U65_DEDICATED))
    model = _check_layout(emitted.data, 1)
    _, ops = _ops(emitted.data)
    fast = model.Subgraphs(0).Tensors(int(ops[0][1].InputsAsNumpy()[3]))
    assert fast.Name() == b"scratch_fast" and emitted.fast_scratch_bytes > 0


def test_a_plan_made_without_deployable_is_refused_in_one_line(tmp_path):
    from npuplan.emit import emit_tflite
    from npuplan.errors import EmitError

    from npuplan.io.tflite_write import write_tflite
    from npuplan.ir.graph import Graph, Model, Op, Tensor, frozen_options
    from npuplan.ir.types import DataType, Quantization

    q = Quantization((1e-9,), (0,))  # too small a scale for the softmax's exp table: it has none
    x, y = Tensor("x", (1, 10), DataType.INT8, q), Tensor("y", (1, 10), DataType.INT8, q)
    graph = Graph("soft", (Op("SOFTMAX", (x,), (y,), frozen_options({"beta": 1.0}), 0),), (x,), (y,))
    path = tmp_path / "soft.tflite"
    path.write_bytes(write_tflite(Model("soft", (graph,))))
    with pytest.raises(EmitError, match="cannot emit") as caught:
        emit_tflite(plan(path, **U55_128))  # its SOFTMAX runs on the NPU, but not deployably
    assert "\n" not in str(caught.value)


def test_missing_extra_names_the_install_command(monkeypatch):
    import builtins

    from npuplan.emit.vela import vela_api as load
    from npuplan.errors import EmitError

    real_import = builtins.__import__

    def no_vela(name, *args, **kwargs):
        if name.startswith("ethosu"):
            raise ImportError("No module named 'ethosu'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_vela)
    with pytest.raises(EmitError, match=r'pip install "npuplan\[deploy\]"'):
        load()


def test_import_npuplan_does_not_load_vela():
    import subprocess
    import sys

    code = "import sys, npuplan, npuplan.api, npuplan.emit; print(any(m.startswith('ethosu') for m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_an_op_without_a_valid_block_config_falls_back_to_the_cpu(monkeypatch):
    import npuplan.emit.blocks as blocks
    from npuplan.api import plan_and_emit
    from npuplan.regstream import validate_tflite

    # Vela's API asserting on an op's block configs, as it did on ds_cnn's 25x5 average pool while
    # that strided 25x5 (it strides 1x1 now, one window over the whole IFM, and has blocks)
    quietly = blocks.quietly

    def refuse_pools(find, probe, accelerator):  # type: ignore[no-untyped-def]
        assert type(probe).__name__ != "NpuPoolingOperation"
        return quietly(find, probe, accelerator)

    monkeypatch.setattr(blocks, "quietly", refuse_pools)
    monkeypatch.setattr(blocks, "hardware_accepts", lambda *a, **k: False)  # every block from the listing
    planned, emitted = plan_and_emit(DATA / "ds_cnn_kws.tflite", accelerator_config="ethos-u55-64",
                                     system_config="Ethos_U55_Deep_Embedded", memory_mode="Shared_Sram",
                                     optimise="Size")
    assert any("AvgPool' kept on the CPU" in note for note in emitted.notes)
    assert "AVERAGE_POOL_2D" in {op.tflite_type for op in planned.lowered.cpu_ops}
    parts = [p for p in planned.lowered.partitions() if p.placement is Placement.NPU]
    _check_layout(emitted.data, len(parts))
    validate_tflite(emitted.data)


def test_block_configs_are_ones_the_api_accepts(ds_cnn_plan):
    from npuplan.emit.blocks import nearest_valid

    assert nearest_valid((5, 5, 16), [(4, 4, 16), (6, 6, 16), (8, 8, 32)]) == (6, 6, 16)
    assert nearest_valid((4, 4, 16), [(4, 4, 16), (6, 6, 16)]) == (4, 4, 16)


def test_cli_emit_tflite_writes_a_file_that_validates(tmp_path, capsys):
    from npuplan.cli import main

    args = ["plan", str(DATA / "ds_cnn_kws.tflite"), "--accelerator-config", "ethos-u55-128",
            "--system-config", "Ethos_U55_High_End_Embedded", "--memory-mode", "Shared_Sram",
            "--emit-tflite", "--output-dir", str(tmp_path)]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "Deployable file" in out and "ethos-u operator(s)" in out
    path = tmp_path / "ds_cnn_kws_npuplan.tflite"
    assert path.exists() and (tmp_path / "ds_cnn_kws_plan.json").exists()
    assert main(["validate", str(path)]) == 0


def test_elementwise_operands_the_hardware_cannot_order_stay_on_the_cpu():
    import numpy as np

    from npuplan.ir.graph import Tensor
    from npuplan.ir.lowered import BlockType, NpuOp
    from npuplan.ir.shape import Shape4D
    from npuplan.ir.types import DataType, Quantization
    from npuplan.lowering.deployable import npu_op_reason

    q = Quantization((0.1,), (0,))
    x = Tensor("x", (1, 4, 4, 8), DataType.INT8, q)
    c = Tensor("c", (1, 4, 4, 8), DataType.INT8, q, data=np.zeros((1, 4, 4, 8), np.int8))
    small = Tensor("s", (1, 1, 1, 8), DataType.INT8, q)
    out = Tensor("o", (1, 4, 4, 8), DataType.INT8, q)
    def sub(a, b):
        return NpuOp("o", "SUB", "Sub", BlockType.ELEMENTWISE, a, a.shape4d, out, Shape4D(1, 4, 4, 8), ifm2=b,
                     ifm2_shape=b.shape4d, elementwise="SUB")
    assert npu_op_reason(sub(x, x)) is None
    assert npu_op_reason(sub(c, x)) is None  # SUB(const, x) runs with the operands reversed (flagged)
    assert npu_op_reason(sub(small, x)) is None  # runs with the operands reversed (test_reversed_operands)
    assert "both operands broadcast" in npu_op_reason(sub(small, small))
    # a constant map of the output's shape read from the flash, the feature map broadcast second
    assert npu_op_reason(sub(c, small)) is None
    # a fully-connected layer of constants only (an LSTM's zero state times its weights)
    fc = NpuOp("o", "FULLY_CONNECTED", "FullyConnected", BlockType.VECTOR_PRODUCT, c, Shape4D(1, 1, 1, 128), out,
               Shape4D(1, 1, 1, 8), weights=np.ones((8, 1, 1, 128), np.int8), weight_tensor=c)
    assert "its input feature map is a constant" in npu_op_reason(fc)


def test_striped_reshaped_view_reads_each_stripes_own_rows():
    """ds_cnn's first conv reads its 49x10x1 input as 49x5x2 (stride folded into depth) in cascade
    stripes (Size: the Performance plan runs it whole): each stripe's IFM base must be the first
    row its kernel reads, not row 0."""
    from npuplan.emit import emit_tflite
    from npuplan.regstream import validate_tflite
    from npuplan.regstream.events import NpuEvent

    # (the Ethos-U55-32 in Sram_Only: the smallest plan cascades it; on the U55-128 it need not)
    striped = plan(DATA / "ds_cnn_kws.tflite", deployable=True, optimise="Size",
                   **(U55_128 | {"accelerator_config": "ethos-u55-32", "memory_mode": "Sram_Only"}))
    first = striped.lowered.npu_ops[0]
    assert first.ifm_shape != first.ifm.shape4d  # the folded view
    start = striped.allocation.addresses[first.ifm.name].offset
    row_bytes = first.ifm_shape.w * first.ifm_shape.c
    kicks = [e for e in validate_tflite(emit_tflite(striped).data).streams[0].events
             if isinstance(e, NpuEvent) and (e.ifm.width, e.ifm.depth) == (first.ifm_shape.w, first.ifm_shape.c)
             and start <= e.ifm.bases[0] < start + first.ifm.size_bytes]
    assert len(kicks) > 1
    k = first.kernel
    rows = [sum(e.ofm.height for e in kicks[:n]) for n in range(len(kicks))]
    assert rows[-1] + kicks[-1].ofm.height == first.ofm_shape.h
    assert [e.ifm.bases[0] for e in kicks] == [start + max(a * k.stride_y - k.padding.top, 0) * row_bytes for a in rows]


@pytest.mark.parametrize("backend", ["npuplan", "vela"])
def test_a_generator_rejection_is_one_line(backend, monkeypatch):
    from npuplan.api import plan
    from npuplan.emit import emit_tflite
    from npuplan.emit.backend import EmitBackend, backend_api
    from npuplan.errors import EmitError

    if backend == "vela":
        pytest.importorskip("ethosu.vela.api", reason="the deploy extra (ethos-u-vela) is not installed")

    def reject(*_args):
        raise AssertionError("Illegal Size: 120 Bytes is not a multiple of 16\nmore")

    monkeypatch.setattr(backend_api(EmitBackend(backend)), "npu_generate_register_command_stream", reject)
    with pytest.raises(EmitError, match="rejected NPU partition 0: Illegal Size") as caught:
        emit_tflite(plan(DATA / "autoencoder_ad.tflite", deployable=True, **U55_128), backend=EmitBackend(backend))
    assert "\n" not in str(caught.value)


def test_a_file_its_own_validator_rejects_is_refused_and_not_written(tmp_path, capsys, monkeypatch):
    """The emitter replays the file it built before anyone can deploy it (unet_bilinear_48 and
    keras3_tokens of the zoo once emitted files npuplan validate rejected). That is npuplan's own
    bug, not bad input: exit status 4, as the README's table says of a bug."""
    import npuplan.regstream as regstream
    from npuplan.cli import main
    from npuplan.errors import ValidationError

    def reject(_data: bytes) -> None:
        raise ValidationError("operator 0: output tensor 4 is not completely written by the stream")

    monkeypatch.setattr(regstream, "validate_tflite", reject)
    args = ["plan", str(DATA / "ds_cnn_kws.tflite"), "--emit-tflite", "--output-dir", str(tmp_path / "out")]
    assert main(args) == 4
    err = capsys.readouterr().err
    assert "fails npuplan's own validation" in err and "bug in npuplan" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "out").exists()


def test_a_network_with_nothing_on_the_npu_is_written_for_the_cpu_naming_why(tmp_path, capsys):
    """A float network: every operator stays on the CPU, so there is no command stream; the file
    keeps every operator for the CPU, as Vela writes such a network (an LSTM alone too), and says why."""
    import tflite

    from npuplan.cli import main
    from npuplan.regstream import validate_tflite

    path = tmp_path / "float_add.tflite"
    path.write_bytes(elementwise_model())
    assert main(["plan", str(path), "--emit-tflite", "--output-dir", str(tmp_path / "out")]) == 0
    out = capsys.readouterr().out
    assert "no operator runs on the NPU" in out and "'out'" in out
    data = (tmp_path / "out" / "float_add_npuplan.tflite").read_bytes()
    model = tflite.Model.GetRootAsModel(data, 0)
    sg = model.Subgraphs(0)
    assert sg.OperatorsLength() == 1 and model.OperatorCodes(sg.Operators(0).OpcodeIndex()).CustomCode() is None
    assert validate_tflite(data).streams == ()


def test_a_dynamic_batch_network_is_emitted_at_its_planned_static_shapes(tmp_path):
    """Keras's Dense on [batch, 16, 32] tokens declares its flattened rows as one ([1, 32], signature
    [-1, 32]); the file runs and declares all 16, with no -1 left in any signature."""
    from npuplan.api import plan_and_emit
    from npuplan.io.tflite_write import write_tflite
    from npuplan.ir.graph import Model
    from npuplan.regstream import validate_tflite
    from tests.unit.lowering._build import graph
    from tests.unit.lowering.test_dynamic_shapes import _tokens_dense

    ops, x, y = _tokens_dense()
    path = tmp_path / "tokens.tflite"
    path.write_bytes(write_tflite(Model("tokens", (graph(ops, [x], [y]),))))
    planned, emitted = plan_and_emit(path, **U55_128)
    assert not planned.lowered.cpu_ops
    validate_tflite(emitted.data)
    model, _ = _ops(emitted.data)
    sg = model.Subgraphs(0)
    tensors = [sg.Tensors(i) for i in range(sg.TensorsLength())]
    shapes = {t.Name().decode(): t.ShapeAsNumpy().tolist() for t in tensors}
    assert shapes["x"] == [1, 16, 32] and shapes["y"] == [1, 16, 24]
    assert all(t.ShapeSignatureLength() == 0 for t in tensors)
    assert any("dynamic dimensions" in n and "[-1, 16, 32] as [1, 16, 32]" in n for n in emitted.notes)
