"""``PreparedModel``: plans sharing one reading, lowering and weight-encoding memo equal fresh plans."""

from __future__ import annotations

import pytest

from npuplan.api import PreparedModel, make_options, plan, plan_prepared
from npuplan.report import build_report
from npuplan.report.summary import summary_row

POINTS = (
    dict(accelerator_config="ethos-u55-64", optimise="Size"),
    dict(accelerator_config="ethos-u65-256", optimise="Performance", arena_cache_size=96 * 1024),
    dict(accelerator_config="ethos-u55-64", optimise="Performance", arena_cache_size=160 * 1024),
    dict(accelerator_config="ethos-u65-256", optimise="Size", system_config="Ethos_U65_High_End",
         memory_mode="Dedicated_Sram_384KB"),
)


def _row(result: object) -> dict[str, object]:
    return summary_row(build_report(result))  # type: ignore[arg-type]


@pytest.mark.parametrize("name", ["ds_cnn_kws.tflite", "tiny_yolo_160.tflite"])
def test_shared_plans_equal_fresh_plans(data_dir, name):
    path = data_dir / name
    prepared = PreparedModel.read(path)
    shared = [_row(plan_prepared(prepared, make_options(**point))) for point in POINTS]
    fresh = [_row(plan(path, **point)) for point in POINTS]
    assert shared == fresh
    # one lowering (and its concat-in-place variant) and one encoding memo per accelerator
    assert sorted(prepared._encodings) == ["ethos-u55-64", "ethos-u65-256"]
    assert {key[0] for key in prepared._lowered} == {"ethos-u55-64", "ethos-u65-256"}


def test_prepared_model_lowers_once_per_accelerator(data_dir):
    prepared = PreparedModel.read(data_dir / "ds_cnn_kws.tflite")
    first = plan_prepared(prepared, make_options(accelerator_config="ethos-u55-64"))
    second = plan_prepared(prepared, make_options(accelerator_config="ethos-u55-64", optimise="Size"))
    assert first.lowered is second.lowered
    assert first.weight_encodings is second.weight_encodings
    assert first.network == "ds_cnn_kws" and first.model_path == str(data_dir / "ds_cnn_kws.tflite")


def _leaky_model():
    from npuplan.ir.types import DataType, Quantization
    from tests.unit.lowering._build import conv, const, fm, graph, model, op

    x, y, p, z = fm("x", (1, 16, 16, 8)), fm("y", (1, 16, 16, 8)), fm("p", (1, 16, 16, 8)), fm("z", (1, 16, 16, 8))
    alpha = const("alpha", 30, DataType.INT8, Quantization((0.01,), (0,)))
    ops = [conv(x, y), op("MUL", [y, alpha], [p], 1, fused_activation_function="NONE"),
           op("MAXIMUM", [y, p], [z], 2)]
    return model(graph(ops, [x], [z]))


@pytest.mark.parametrize("deployable", [False, True])
def test_leaky_table_or_mul_and_maximum_is_priced_per_accelerator(deployable):
    """``max(x, x * alpha)``: a table fused into the convolution costs the U65-256 output stage a
    cycle per element (four times its plain rate), more than a MUL and a MAXIMUM; on U55-128 the
    table is cheaper. Both lowerings are planned and the cheaper one kept."""
    prepared = PreparedModel(_leaky_model(), "leaky.tflite")
    chosen = {}
    for accel, system, mode in (("ethos-u55-128", "Ethos_U55_High_End_Embedded", "Shared_Sram"),
                                ("ethos-u65-256", "Ethos_U65_High_End", "Dedicated_Sram_384KB")):
        options = make_options(accelerator_config=accel, system_config=system, memory_mode=mode, deployable=deployable)
        result = plan_prepared(prepared, options)
        chosen[accel] = [o.op_type for o in result.lowered.npu_ops]
        assert len(prepared.variants(result.arch.accelerator, concat_in_place=True, deployable=deployable)) >= 2
    assert chosen["ethos-u55-128"] == ["Conv2DBias"]
    assert chosen["ethos-u65-256"] == ["Conv2DBias", "Mul", "Maximum"]


def test_forms_follow_the_lowering_they_are_asked_of():
    """``forms`` lowers again with the options the lowering was made with (a standalone LUT as
    Vela's pool), found by the lowering itself: an equal copy the model did not make is refused."""
    from dataclasses import replace

    from npuplan.hw import build_architecture
    from tests.unit.lowering._build import fm, graph, model, op

    x, y = fm("x", (1, 8, 8, 16)), fm("y", (1, 8, 8, 16))
    prepared = PreparedModel(model(graph([op("LOGISTIC", [x], [y], 0)], [x], [y])), "lut.tflite")
    accel = build_architecture(make_options(accelerator_config="ethos-u55-128")).accelerator
    for deployable in (False, True):
        base = prepared.lowered(accel, deployable=deployable)
        (form,) = prepared.forms(accel, base, deployable=deployable)
        assert [o.op_type for o in form.npu_ops] == ["AvgPool"] != [o.op_type for o in base.npu_ops]
        assert form is prepared.lowered(accel, deployable=deployable, vela_forms=True, flat_elementwise=False,
                                        flat_pools=False)
    with pytest.raises(ValueError, match="did not make"):
        prepared.forms(accel, replace(base))


def test_a_form_priced_far_above_the_best_plan_is_not_planned_in_full(monkeypatch):
    """Performance plans another lowering in full only when its local price (``form_price``) says it
    may win: on U55-128 MUL+MAX costs far more than the table fused into the convolution, so only
    the table is planned; on U65-256 both are (and MUL+MAX wins, so its 16-deep elementwise form is
    planned too); Size plans both everywhere."""
    import npuplan.plan_forms as plan_forms

    planned: list[int] = []
    real = plan_forms._planned
    monkeypatch.setattr(plan_forms, "_planned", lambda low, *a, **k: (planned.append(len(low.npu_ops)), real(low, *a, **k))[1])
    runs = {}
    for accel, system, mode in (("ethos-u55-128", "Ethos_U55_High_End_Embedded", "Shared_Sram"),
                                ("ethos-u65-256", "Ethos_U65_High_End", "Dedicated_Sram_384KB")):
        for goal in ("Performance", "Size"):
            planned.clear()
            prepared = PreparedModel(_leaky_model(), "leaky.tflite")
            plan_prepared(prepared, make_options(accelerator_config=accel, system_config=system, memory_mode=mode,
                                                 optimise=goal))
            runs[accel, goal] = sorted(planned)
    # Size also plans the table apart from the convolution, as a pool: 2 ops
    assert runs == {("ethos-u55-128", "Performance"): [1], ("ethos-u55-128", "Size"): [1, 2, 3],
                    ("ethos-u65-256", "Performance"): [1, 3, 3], ("ethos-u65-256", "Size"): [1, 2, 3]}


@pytest.mark.parametrize("deployable", [False, True])
def test_a_table_is_planned_apart_from_its_convolution_where_that_is_faster(deployable):
    """A 1x1 convolution writing a 3-deep 15x7 map and a LEAKY_RELU table (op_leaky_relu_odd): on
    U65-512 the table fused into the convolution costs the output stage a cycle per element, so the
    table runs as its own pool (as Vela's default core runs it); on U55-128 fused is cheaper."""
    from tests.unit.lowering._build import conv, fm, graph, model, op

    x, y, z = fm("x", (1, 15, 7, 3)), fm("y", (1, 15, 7, 3)), fm("z", (1, 15, 7, 3))
    prepared = PreparedModel(model(graph([conv(x, y, 1, padding="VALID"), op("LEAKY_RELU", [y], [z], 1, alpha=0.05)],
                                         [x], [z])), "leaky_odd.tflite")
    chosen = {}
    for accel, system, mode in (("ethos-u55-128", "Ethos_U55_High_End_Embedded", "Shared_Sram"),
                                ("ethos-u65-512", "Ethos_U65_High_End", "Dedicated_Sram")):
        options = make_options(accelerator_config=accel, system_config=system, memory_mode=mode, deployable=deployable)
        chosen[accel] = [o.op_type for o in plan_prepared(prepared, options).lowered.npu_ops]
    assert chosen == {"ethos-u55-128": ["Conv2DBias"], "ethos-u65-512": ["Conv2DBias", "AvgPool"]}


def test_a_mirror_pad_is_planned_in_its_output_or_through_rows_in_fast_storage():
    """A convolution then a MIRROR_PAD writing the network output. Shared SRAM: the convolution
    writes the output's middle and four copies reflect its bands there. U65 Dedicated_Sram, where
    the output lies in the slow arena: the rows are padded in a fast intermediate the convolution
    writes into, and three copies write the output (five copies), as the cheaper plan. The rows are
    the MIRROR_PAD's other form (``lower``'s ``other_forms``), kept where its local price, the network
    output in the arena as plans leave it (``form_price.cheaper_sources``), is the lower one."""
    from tests.unit.lowering._build import conv, fm, graph, i32, model, op

    x, y, z = fm("x", (1, 10, 10, 8)), fm("y", (1, 10, 10, 8)), fm("z", (1, 14, 12, 8))
    mirror = op("MIRROR_PAD", [y, i32("pads", [[0, 0], [2, 2], [1, 1], [0, 0]])], [z], 1, mode=1)
    prepared = PreparedModel(model(graph([conv(x, y), mirror], [x], [z])), "mirror.tflite")
    found = {}
    for accel, system, mode in (("ethos-u55-128", "Ethos_U55_High_End_Embedded", "Shared_Sram"),
                                ("ethos-u65-512", "Ethos_U65_High_End", "Dedicated_Sram")):
        result = plan_prepared(prepared, make_options(accelerator_config=accel, system_config=system,
                                                      memory_mode=mode, deployable=True))
        found[accel] = [o.name.removeprefix("z_") for o in result.lowered.npu_ops]
    assert found["ethos-u55-128"] == ["y", "pad_top", "pad_bottom", "pad_left", "pad_right"]
    assert found["ethos-u65-512"] == ["y", "pad_top", "pad_bottom", "pad_left", "pad_right", "rows_copy"]
