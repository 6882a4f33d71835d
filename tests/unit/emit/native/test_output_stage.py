"""The native output stage against Vela's register command stream generator (the oracle): the
bundled models' operations as the emitter builds them, and synthetic operations of every kind,
data type, activation and rounding. Skipped without the deploy extra (Vela's API)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from npuplan.emit.native.output_stage import output_stage_registers
from npuplan.emit.native.scaling import Scale, add_sub_scales, averaging_scale, q31_scale
from tests.unit.emit.conftest import U55_128, U65_DEDICATED
from bench.outstage_differential import captured_partitions, kick_snapshots, output_stage_mismatches

DATA = Path(__file__).resolve().parents[3] / "data"


@pytest.fixture(scope="module")
def api():
    from npuplan.emit.vela import vela_api
    from npuplan.errors import EmitError

    try:
        return vela_api()
    except EmitError as error:
        pytest.skip(f"the deploy extra (Vela's API) is not installed: {error}")


@pytest.mark.parametrize("model, options", [
    ("ds_cnn_kws", U55_128), ("mobilenet_v1_025_96", U65_DEDICATED), ("resnet8_cifar", U55_128),
    ("autoencoder_ad", U55_128), ("tiny_yolo_160", U55_128), ("unet_transpose_64", U65_DEDICATED),
])
def test_bundled_models_match_vela(api, model, options):
    partitions = captured_partitions(DATA / f"{model}.tflite", **options)
    assert partitions
    total = 0
    for partition in partitions:
        count, mismatches = output_stage_mismatches(partition)
        total += count
        assert not mismatches, [str(m) for m in mismatches[:5]]
    assert total > 0


# ------------------------------------------------------------------------ synthetic operations
@dataclass(frozen=True)
class Fm:
    """A feature map of a synthetic operation: type, (scale, zero point) or None, NHCWB16 or not."""

    dtype: str = "INT8"
    quant: tuple[float | None, int] | None = (0.05, 3)
    nhcwb16: bool = False
    shape: tuple[int, int, int] = (4, 4, 16)


_BYTES = {"INT8": 1, "UINT8": 1, "INT16": 2, "INT32": 4}


def _feature_map(api: Any, spec: Fm, address: int) -> Any:
    h, w, c = spec.shape
    fm = api.NpuFeatureMap()
    fm.data_type = getattr(api.NpuDataType, spec.dtype)
    fm.region = 1
    fm.shape = api.NpuShape3D(height=h, width=w, depth=c)
    fm.tiles = api.NpuTileBox(height_0=h, height_1=h, width_0=w, addresses=[address, 0, 0, 0])
    fm.quantization = None if spec.quant is None else api.NpuQuantization(scale_f32=spec.quant[0],
                                                                          zero_point=spec.quant[1])
    fm.layout = api.NpuLayout.NHCWB16 if spec.nhcwb16 else api.NpuLayout.NHWC
    fm.name = f"fm{address}"
    return fm


@dataclass(frozen=True)
class Case:
    """A synthetic operation: kind ("conv", "depthwise", a pooling or elementwise op's name),
    feature maps, kernel, activation (op name, min, max, table slot) and options."""

    kind: str
    ifm: Fm = Fm()
    ofm: Fm = Fm(quant=(0.1, -5))
    ifm2: Fm | None = None
    kernel: int = 1
    padding: int = 0
    activation: tuple[str, float | None, float | None, int] | None = None
    rounding: str = "TFL"
    fused_quantize: bool = False
    rescale: Any = None
    reversed_operands: bool = False
    scalar: float | None = None


_POOLS = {"AVERAGE", "MAX", "REDUCE_SUM"}


def _operation(api: Any, case: Case) -> Any:
    if case.kind == "conv":
        op = api.NpuConv2DOperation()
        op.block_traversal = api.NpuBlockTraversal.DEPTH_FIRST
    elif case.kind == "depthwise":
        op = api.NpuConvDepthWiseOperation()
    elif case.kind in _POOLS:
        op = api.NpuPoolingOperation(getattr(api.NpuPoolingOp, case.kind))
    else:
        op = api.NpuElementWiseOperation(getattr(api.NpuElementWiseOp, case.kind))
        op.reversed_operands = case.reversed_operands
    op.name = case.kind
    op.ifm = _feature_map(api, case.ifm, 0)
    if case.ifm2 is not None:
        op.ifm2 = _feature_map(api, case.ifm2, 0x4000)
        op.ifm2_scalar = case.scalar
    op.ofm = _feature_map(api, case.ofm, 0x8000)
    op.kernel = api.NpuKernel(case.kernel, case.kernel, 1, 1, 1, 1)
    p = case.padding
    op.padding = api.NpuPadding(top=p, left=p, bottom=p, right=p)
    if case.activation is not None:
        name, low, high, slot = case.activation
        op.activation = api.NpuActivation(getattr(api.NpuActivationOp, name))
        op.activation.min, op.activation.max, op.activation.lookup_table_index = low, high, slot
    op.rounding_mode = getattr(api.NpuRoundingMode, case.rounding)
    op.fused_quantize = case.fused_quantize
    if case.rescale is not None:
        op.rescale = case.rescale
    if case.kind in ("conv", "depthwise"):
        op.weights = [api.NpuAddressRange(region=0, address=0, length=256)]
        op.biases = [api.NpuAddressRange(region=0, address=256, length=160)]
    return op


def _vela_registers(api: Any, op: Any, accelerator: str) -> dict[str, int]:
    acc = getattr(api.NpuAccelerator, accelerator)
    op.block_config = api.npu_find_block_configs(op, acc)[0]
    return kick_snapshots(api.npu_generate_register_command_stream([op], acc))[0]


I8, U8, I16, I32 = Fm(), Fm("UINT8", (0.02, 128)), Fm("INT16", (0.001, 0)), Fm("INT32", None)
CASES = {
    "conv int8 relu": Case("conv", activation=("NONE_OR_RELU", 0.0, None, 0)),
    "conv int8 relu6 nhcwb16": Case("conv", ofm=Fm(quant=(0.03, -128), nhcwb16=True),
                                    activation=("NONE_OR_RELU", 0.0, 6.0, 0)),
    "conv uint8 relu_n1_to_1": Case("conv", ifm=U8, ofm=Fm("UINT8", (0.01, 120)),
                                    activation=("NONE_OR_RELU", -1.0, 1.0, 0)),
    "conv int16 natural": Case("conv", ifm=I16, ofm=Fm("INT16", (0.002, 0)), rounding="NATURAL"),
    "conv int8 to int32": Case("conv", ofm=I32),
    "conv truncate clamp past int16": Case("conv", ifm=I16, ofm=Fm("INT16", (1e-6, 0)), rounding="TRUNCATE",
                                           activation=("NONE_OR_RELU", -1.0, 1.0, 0)),
    "conv clamp just below a half": Case("conv", ofm=Fm(quant=(1.0, 0)),  # float32 0.49999997 + 0.5 is 1.0
                                         activation=("NONE_OR_RELU", 0.49999997, None, 0)),
    "depthwise int8 table": Case("depthwise", activation=("TABLE_LOOKUP", None, None, 3)),
    "depthwise int8 to int32 table": Case("depthwise", ofm=I32, activation=("TABLE_LOOKUP", None, None, 7)),
    "average 3x3": Case("AVERAGE", kernel=3),
    "average 3x3 padded": Case("AVERAGE", kernel=3, padding=1),
    "average 1x1 up": Case("AVERAGE", ifm=Fm(quant=(0.7, 0)), ofm=Fm(quant=(0.1, 1))),
    "average 1x1 down": Case("AVERAGE", ifm=Fm(quant=(0.01, 0)), ofm=Fm(quant=(0.3, 1))),
    "average 1x1 same natural": Case("AVERAGE", ofm=Fm(), rounding="NATURAL"),
    "average int32 without scales": Case("AVERAGE", ifm=Fm("INT32", (None, 0)), ofm=Fm("INT32", (None, 0))),
    "average fused quantize": Case("AVERAGE", ofm=Fm("UINT8", (0.07, 100)), fused_quantize=True),
    "average resize rescale": Case("AVERAGE", kernel=2, rescale=2.5),
    "average sigmoid int8": Case("AVERAGE", ofm=Fm(quant=(1 / 256, -128)), activation=("SIGMOID", 0.0, 1.0, 0)),
    "average tanh int16 2^-12": Case("AVERAGE", ifm=Fm("INT16", (2 ** -12, 0)), ofm=Fm("INT16", (2 ** -15, 0)),
                                     activation=("TANH", -1.0, 1.0, 0)),
    "average tanh int16 2^-11": Case("AVERAGE", ifm=Fm("INT16", (2 ** -11, 0)), ofm=Fm("INT16", (2 ** -15, 0)),
                                     activation=("TANH", -1.0, 1.0, 0)),
    "average sigmoid int16 2^-12": Case("AVERAGE", ifm=Fm("INT16", (2 ** -12, 0)), ofm=Fm("INT16", (2 ** -15, 0)),
                                        activation=("SIGMOID", 0.0, 1.0, 0)),
    "average sigmoid int16 other": Case("AVERAGE", ifm=Fm("INT16", (0.0003, 0)), ofm=Fm("INT16", (2 ** -15, 0)),
                                        activation=("SIGMOID", 0.0, 1.0, 0)),
    "max pool int8": Case("MAX", kernel=2, activation=("NONE_OR_RELU", 0.0, None, 0)),
    "reduce sum int8 to int32": Case("REDUCE_SUM", ofm=Fm("INT32", (None, 0))),
    "add int8 same scale": Case("ADD", ifm2=Fm(), ofm=Fm(quant=(0.1, 0))),
    "add int8 same scale exact": Case("ADD", ifm=Fm(quant=(0.25, 0)), ifm2=Fm(quant=(0.25, 0)),
                                      ofm=Fm(quant=(0.5, 0))),
    "add int8 scales differ": Case("ADD", ifm2=Fm(quant=(0.11, -1)), ofm=Fm(quant=(0.2, 2))),
    "add int8 reversed": Case("ADD", ifm2=Fm(quant=(0.11, -1), shape=(1, 1, 16)), reversed_operands=True),
    "add uint8 nhcwb16": Case("ADD", ifm=U8, ifm2=Fm("UINT8", (0.03, 120), nhcwb16=True),
                              ofm=Fm("UINT8", (0.04, 128), nhcwb16=True)),
    "add int16 same scale": Case("ADD", ifm=I16, ifm2=I16, ofm=Fm("INT16", (0.003, 0))),
    "add int16 scales differ": Case("ADD", ifm=I16, ifm2=Fm("INT16", (0.004, 0)), ofm=Fm("INT16", (0.003, 0))),
    "add int32 unquantized": Case("ADD", ifm=I32, ifm2=I32, ofm=I32),
    "add explicit rescale": Case("ADD", ifm=I32, ifm2=I32, ofm=Fm(quant=(0.1, 0)), rescale=(1, 0)),
    "sub int8 scalar": Case("SUB", ifm2=Fm(quant=(0.5, 0), shape=(1, 1, 1)), scalar=2.0),
    "sub int16 tanh": Case("SUB", ifm=I16, ifm2=Fm("INT16", (0.002, 0)), ofm=Fm("INT16", (2 ** -15, 0)),
                           activation=("TANH", -1.0, 1.0, 0)),
    "mul int8": Case("MUL", ifm2=Fm(quant=(0.2, 7)), activation=("NONE_OR_RELU", 0.0, 6.0, 0)),
    "mul int16 sigmoid": Case("MUL", ifm=I16, ifm2=I16, ofm=Fm("INT16", (2 ** -15, 0)),
                              activation=("SIGMOID", 0.0, 1.0, 0)),
    "mul explicit rescale": Case("MUL", ifm=I32, ifm2=Fm(), ofm=Fm(), rescale=(1, 37)),
    "mul int32 unquantized": Case("MUL", ifm=I32, ifm2=I32, ofm=I32),
    "minimum int8": Case("MIN", ifm2=Fm()),
    "maximum natural": Case("MAX", ifm2=Fm(), rounding="NATURAL"),
    "abs int8": Case("ABS", ofm=Fm(quant=(0.5, -3))),
    "abs int16": Case("ABS", ifm=I16, ofm=Fm("INT16", (1.25, 0))),
    "abs scale rounding up to 2**31": Case("ABS", ofm=Fm(quant=(1 - 2 ** -40, 0))),
    "abs scale past the shift range": Case("ABS", ofm=Fm(quant=(2.0 ** 40, 0))),
    "lrelu int8": Case("LRELU", ofm=Fm(quant=(0.8, 0))),
    "clz int32": Case("CLZ", ifm=I32, ofm=I32),
    "shl int32": Case("SHL", ifm=I32, ifm2=I32, ofm=I32),
    "shr int32 to int8": Case("SHR", ifm=I32, ifm2=I32, ofm=Fm(quant=None), rounding="NATURAL"),
    "add table lookup": Case("ADD", ifm2=Fm(), activation=("TABLE_LOOKUP", None, None, 1)),
}


@pytest.mark.parametrize("accelerator", ["Ethos_U55_128", "Ethos_U65_256"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_synthetic_operation_matches_vela(api, name, accelerator):
    op = _operation(api, CASES[name])
    ours = output_stage_registers(op, accelerator)
    vela = _vela_registers(api, op, accelerator)
    assert ours == {register: vela.get(register) for register in ours}


def test_registers_set_per_kind(api):
    conv = output_stage_registers(_operation(api, CASES["conv int8 relu"]), "Ethos_U55_128")
    assert "OFM_SCALE" not in conv and "IFM2_PRECISION" not in conv
    padded = output_stage_registers(_operation(api, CASES["average 3x3 padded"]), "Ethos_U55_128")
    assert "OFM_SCALE" not in padded and not padded["OFM_PRECISION"] & (1 << 8)
    add = output_stage_registers(_operation(api, CASES["add int8 scales differ"]), "Ethos_U55_128")
    assert {"OFM_SCALE", "OPA_SCALE", "OPB_SCALE", "IFM2_ZERO_POINT", "IFM2_PRECISION"} <= set(add)
    abs_ = output_stage_registers(_operation(api, CASES["abs int8"]), "Ethos_U55_128")
    assert "IFM2_PRECISION" not in abs_ and "OPA_SCALE" not in abs_


# ------------------------------------------------------------------------ without Vela
class _Explicit:
    """An explicit scaling record (Vela's internal one, duck-typed)."""

    def __init__(self, per_channel: bool) -> None:
        self.per_channel, self.multiplier, self.shift = per_channel, [1234567], [40]


@pytest.mark.parametrize("per_channel", [False, True])
def test_pooling_explicit_scaling(api, per_channel):
    op = _operation(api, Case("AVERAGE", kernel=3, padding=1))
    op.rescale = _Explicit(per_channel)
    registers = output_stage_registers(op, "Ethos_U55_128")
    assert registers.get("OFM_SCALE") == (None if per_channel else 1234567 | (40 << 32))
    assert bool(registers["OFM_PRECISION"] & (1 << 8)) is not per_channel


def test_scale_arithmetic():
    assert q31_scale(0.5) == Scale(1 << 30, 31)
    assert q31_scale(0.0) == Scale(0, 31)
    assert q31_scale(2.0 ** 40) == Scale(0, 16)  # a shift outside 0..63
    assert Scale(-1, 3).register == 0xFFFF_FFFF | (3 << 32)
    average = averaging_scale(9, 1.0, 0)  # x / 9 with 2**35 / 9 ~ 3817748708 (shift 35)
    assert average.shift == 35 and abs(average.multiplier / 2 ** 35 - 1 / 9) < 1e-9
    same = add_sub_scales(0.25, 0.25, 0.5, ifm_bits=8, reversed_operands=False)
    assert (same.opa.multiplier, same.op_to_scale) == (1 << 15, 0)
    differ = add_sub_scales(0.1, 0.2, 0.3, ifm_bits=8, reversed_operands=True)
    assert differ.op_to_scale == 2  # OPA scaled (the smaller IFM scale), swapped by the reversal


def test_oracle_reports_a_wrong_register(api, monkeypatch):
    from bench import outstage_differential as _oracle

    partitions = captured_partitions(DATA / "ds_cnn_kws.tflite", **U55_128)
    real = _oracle.output_stage_registers

    def off_by_one(operation: Any, accelerator: str) -> dict[str, int]:
        registers = real(operation, accelerator)
        return {**registers, "OFM_ZERO_POINT": (registers["OFM_ZERO_POINT"] + 1) & 0xFFFF}

    monkeypatch.setattr(_oracle, "output_stage_registers", off_by_one)
    count, mismatches = output_stage_mismatches(partitions[0])
    assert count > 0 and len(mismatches) == count
    assert {m.register for m in mismatches} == {"OFM_ZERO_POINT"}
