"""``form_price.cheapest_sources``: per operator, the form of least local price among several, only
where it is cheaper than the plain form (the first of equal forms). Priced by npuplan's own cost
model: a consistency check of the choice, not of the prices."""

from __future__ import annotations

from npuplan.prepared import PreparedModel
from npuplan.form_price import cheapest_sources
from npuplan.hw.build import build_architecture
from npuplan.io.tflite_write import write_tflite
from npuplan.ir.graph import Graph, Model
from npuplan.ir.types import DataType
from npuplan.lowering.lower import Form
from npuplan.options import Optimise, PlanOptions
from tests.unit.lowering._build import const, fm, op

U55_128 = PlanOptions(accelerator_config="ethos-u55-128", system_config="Ethos_U55_High_End_Embedded",
                      memory_mode="Shared_Sram")


def test_the_cheapest_form_of_each_operator_wins_and_only_where_it_beats_the_plain_one(tmp_path) -> None:
    x, y = fm("x", (1, 1, 25, 48)), fm("y", (1, 48, 1, 25))  # pt_audio1d_49's NHWC -> NCHW
    graph = Graph("nchw", (op("TRANSPOSE", [x, const("perm", [0, 3, 1, 2], DataType.INT32, None)], [y], 0),),
                  (x,), (y,))
    path = tmp_path / "nchw.tflite"
    path.write_bytes(write_tflite(Model("nchw", (graph,))))
    model, arch = PreparedModel.read(path), build_architecture(U55_128)
    plain = model.lowered(arch.accelerator)
    split = model.lowered(arch.accelerator, other_forms=frozenset({(0, Form("split_matrix_2_convolutions"))}))
    staged = model.lowered(arch.accelerator, other_forms=frozenset({(0, Form(staged=True))}))  # one copy more
    oracle = model.oracle(arch, Optimise.PERFORMANCE)
    won = cheapest_sources(plain, [staged, split, split], arch, oracle, pack_unaligned=False)
    assert won == (frozenset(), frozenset({0}), frozenset())  # staged costs more on SRAM; the first of equals
    assert cheapest_sources(plain, [staged], arch, oracle, pack_unaligned=False) == (frozenset(),)
