"""The one clock on common work (``bench/common_work.py``): npuplan's cycles on the operators the
other file leaves to the CPU come off its total, and nothing else does. The "other file" here is
npuplan's own file of the same network with one operator kept on the CPU, so the operator each side
leaves to the CPU is known."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from bench.common_work import CommonWork, compare
from npuplan.estimate import estimate_file
from npuplan.io.tflite import read_tflite
from npuplan.options import PlanOptions

DATA = Path(__file__).resolve().parents[2] / "data"
MODEL = DATA / "ds_cnn_kws.tflite"
SCENARIO = "u55_128_highend_shared_perf"
TARGET = dict(accelerator_config="ethos-u55-128", system_config="Ethos_U55_High_End_Embedded",
              memory_mode="Shared_Sram")


def _emit(directory: Path, name: str, cpu_ops: tuple[int, ...] = ()) -> Path:
    from npuplan.api import plan
    from npuplan.emit import emit_tflite, write_emitted

    planned = plan(MODEL, deployable=True, deploy_cpu_ops=cpu_ops, optimise="Performance", **TARGET)
    path, _ = write_emitted(planned, directory, emit_tflite(planned))
    return path.rename(directory / name)


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path, int]:
    """(work, own_root, source model, the operator the "Vela" file keeps on the CPU)."""
    work = tmp_path_factory.mktemp("work")
    own = work / "own" / SCENARIO / "data"
    vela = work / "default" / SCENARIO
    own.mkdir(parents=True)
    vela.mkdir(parents=True)
    kept = next(k for k, op in enumerate(read_tflite(MODEL).subgraphs[0].ops) if op.type == "DEPTHWISE_CONV_2D")
    _emit(own, "ds_cnn_kws_npuplan.tflite")
    _emit(vela, "ds_cnn_kws_vela.tflite", (kept,))
    shutil.copy(own / "ds_cnn_kws_npuplan.tflite", vela / "same_vela.tflite")
    shutil.copy(own / "ds_cnn_kws_npuplan.tflite", own / "same_npuplan.tflite")
    return work, work / "own", MODEL, kept


def _compare(model: str, vela_file: Path, own_file: Path) -> CommonWork:
    options = PlanOptions(**TARGET)
    files = {"vela-default": vela_file, "npuplan": own_file}
    estimates = {side: estimate_file(path, options).report.cycles_total for side, path in files.items()}
    return compare(SCENARIO, model, estimates, MODEL, lambda scenario, name, side: files.get(side), options)


def test_the_same_split_keeps_the_ratio_on_all_work(files: tuple[Path, Path, Path, int]) -> None:
    work, own_root, _, _ = files
    found = _compare("same", work / "default" / SCENARIO / "same_vela.tflite",
                     own_root / SCENARIO / "data" / "same_npuplan.tflite")
    assert (found.vela_only, found.npuplan_only, found.on_vela_cpu_cycles, found.left_out) == ((), (), 0.0, "")
    assert found.common_ratio == found.ratio == 1.0


def test_cycles_on_the_other_files_cpu_operator_come_off(files: tuple[Path, Path, Path, int]) -> None:
    work, own_root, _, kept = files
    own_file = own_root / SCENARIO / "data" / "ds_cnn_kws_npuplan.tflite"
    found = _compare("ds_cnn_kws", work / "default" / SCENARIO / "ds_cnn_kws_vela.tflite", own_file)
    by_source = estimate_file(own_file, PlanOptions(**TARGET)).cycles_by_source()
    assert by_source is not None and by_source[kept] > 0
    assert found.vela_only == ("DEPTHWISE_CONV_2D",) and found.npuplan_only == () and not found.left_out
    assert found.on_vela_cpu_cycles == pytest.approx(by_source[kept])
    assert found.common_ratio == pytest.approx((found.npuplan_cycles - by_source[kept]) / found.vela_cycles)
    assert found.common_ratio < found.ratio


def test_the_other_way_round_is_left_out(files: tuple[Path, Path, Path, int]) -> None:
    # npuplan's file keeps an operator on the CPU that the other runs on the NPU: the other file's
    # cycles on it are not attributable (Vela's files record no sources), so no ratio
    work, own_root, _, _ = files
    found = _compare("ds_cnn_kws", own_root / SCENARIO / "data" / "ds_cnn_kws_npuplan.tflite",
                     work / "default" / SCENARIO / "ds_cnn_kws_vela.tflite")
    assert found.npuplan_only == ("DEPTHWISE_CONV_2D",) and found.common_ratio is None
    assert found.left_out == "npuplan's CPU operators"


def test_a_file_declaring_another_shape_than_the_source_runs_is_found(files: tuple[Path, Path, Path, int],
                                                                      tmp_path: Path) -> None:
    # the comparison sets aside a file whose ethos-u operators read or write a tensor with another
    # shape than the source network gives it (Vela legacy's dynamic batch planned as 1): here a
    # "source" whose output has the compiled file's output name and another shape
    from bench.common_work import npu_shape_changes
    from npuplan.io.tflite_write import write_tflite
    from npuplan.ir.graph import Graph, Model, Op, Tensor, frozen_options
    from npuplan.ir.types import DataType, Quantization

    _, own_root, model, _ = files
    own_file = own_root / SCENARIO / "data" / "ds_cnn_kws_npuplan.tflite"
    assert npu_shape_changes(own_file, model) == []
    name = read_tflite(model).subgraphs[0].outputs[0].name
    q = Quantization((0.1,), (0,))
    x, y = Tensor("x", (1, 3), DataType.INT8, q), Tensor(name, (1, 3), DataType.INT8, q)
    other = tmp_path / "other.tflite"
    other.write_bytes(write_tflite(Model("other", (Graph("main", (Op("ADD", (x, x), (y,), frozen_options({}), 0),),
                                                         (x,), (y,)),))))
    [changed] = npu_shape_changes(own_file, other)
    assert changed.startswith(name) and changed.endswith("(runs as [1, 3])")
