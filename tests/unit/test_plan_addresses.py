"""The plan carries its allocation and command stream; options change addresses; SRAM stays in budget."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

import npuplan
from npuplan.cli import main
from npuplan.commands import DmaCommand, NpuStripeCommand, validate_plan
from npuplan.commands.addresses import drafted_stream
from npuplan.commands.layout import buffer_specs, weight_buffer_name
from npuplan.commands.stream import build_command_stream, readdressed
from npuplan.errors import ConfigError, InfeasiblePlan
from npuplan.hw.memory import MemArea
from npuplan.options import TensorAllocator

SHARED = {"accelerator_config": "ethos-u55-128", "system_config": "Ethos_U55_High_End_Embedded",
          "memory_mode": "Shared_Sram"}


def test_plan_carries_every_tensor_address_and_the_command_stream(ds_cnn: Path) -> None:
    plan = npuplan.plan(ds_cnn, **SHARED)
    assert plan.allocation is not None and plan.commands
    addresses = plan.allocation.addresses
    for name, placement in plan.schedule.placements.items():
        assert addresses[name].area == placement.area
    sram = {n: a for n, a in addresses.items() if a.area == MemArea.SRAM}
    assert plan.sram_memory_used_bytes == max(a.offset + a.size_bytes for a in sram.values())
    assert plan.sram_memory_used_bytes >= plan.allocation.lower_bound_bytes(MemArea.SRAM) > 0
    assert any(isinstance(c, DmaCommand) for c in plan.commands)
    validate_plan(plan)


def test_the_stream_moved_to_the_plan_s_addresses_is_the_stream_built_there(data_dir: Path) -> None:
    plan = npuplan.plan(data_dir / "mobilenet_v1_025_96.tflite", **SHARED)
    assert plan.allocation is not None
    addresses = plan.allocation.addresses
    drafted = build_command_stream(plan.schedule, plan.lowered, plan.arch,
                                   {name: a._replace(offset=0) for name, a in addresses.items()})
    assert drafted != plan.commands
    assert readdressed(drafted, addresses) == plan.commands
    assert plan.commands == build_command_stream(plan.schedule, plan.lowered, plan.arch, addresses)
    with pytest.raises(ValueError, match="no address"):
        readdressed(drafted, {})
    # what the planner keeps of each lowering's plan: the allocation and the stream before it
    allocation, kept = drafted_stream(plan.schedule, plan.lowered, plan.arch,
                                      allocator=plan.options.tensor_allocator)
    assert kept == drafted and readdressed(kept, allocation.addresses) == plan.commands


def test_stream_weight_buffers_are_exactly_the_schedule_s(data_dir: Path) -> None:
    plan = npuplan.plan(data_dir / "mobilenet_v1_025_96.tflite", **SHARED)
    buffered = [s for s in plan.schedule.ops if s.weight_buffer_bytes]
    assert buffered, "expected weight buffering in fast storage"
    specs = buffer_specs(plan.schedule, plan.lowered, plan.arch)[0]
    for s in buffered:
        assert s.weight_depth_slices and len(s.weight_slice_bytes) == len(s.weight_depth_slices) - 1
        assert specs[weight_buffer_name(s.name)].size_bytes == -(-s.weight_buffer_bytes // 16) * 16


def test_summary_sram_memory_used_is_the_allocated_peak_of_the_chosen_allocator(tmp_path: Path, ds_cnn: Path) -> None:
    used = {}
    for allocator in ("HillClimb", "LinearAlloc"):
        out = tmp_path / allocator
        assert main(["plan", str(ds_cnn), "--output-dir", str(out), "--quiet", "--tensor-allocator", allocator,
                     *[f"--{k.replace('_', '-')}={v}" for k, v in SHARED.items()]]) == 0
        row = next(csv.DictReader((out / "ds_cnn_kws_summary_Ethos_U55_High_End_Embedded.csv").open()))
        document = json.loads((out / "ds_cnn_kws_plan.json").read_text())
        peak = document["allocation"]["areas"]["Sram"]["peak_bytes"]
        assert float(row["sram_memory_used"]) == pytest.approx(peak / 1024)
        used[allocator] = peak
    assert used["LinearAlloc"] > used["HillClimb"]


def test_tensor_allocator_changes_addresses_and_each_allocation_is_sound(ds_cnn: Path) -> None:
    found = {}
    for allocator in TensorAllocator:
        plan = npuplan.plan(ds_cnn, tensor_allocator=allocator.value, **SHARED)
        assert plan.allocation is not None and plan.allocation.allocator is allocator
        validate_plan(plan)
        found[allocator] = {n: a.offset for n, a in plan.allocation.addresses.items() if a.area == MemArea.SRAM}
    assert found[TensorAllocator.LINEAR] != found[TensorAllocator.HILLCLIMB]


def test_cpu_tensor_alignment_aligns_cpu_tensors_only(ds_cnn: Path) -> None:
    plan = npuplan.plan(ds_cnn, cpu_tensor_alignment=256, **SHARED)
    assert plan.allocation is not None
    cpu = npuplan.commands.cpu_tensor_names(plan.lowered)
    placed = [n for n in cpu if n in plan.allocation.addresses and plan.allocation.addresses[n].area == MemArea.SRAM]
    assert placed, "ds_cnn has a CPU op and a network input in SRAM"
    assert all(plan.allocation.addresses[n].offset % 256 == 0 for n in placed)
    assert any(a.offset % 256 for n, a in plan.allocation.addresses.items() if n not in cpu and a.area == MemArea.SRAM)
    validate_plan(plan)


@pytest.mark.parametrize("value", ["0", "8", "24", "48", "-16", "abc"])
def test_bad_cpu_tensor_alignment_is_a_one_line_error(tmp_path: Path, capsys, ds_cnn: Path, value: str) -> None:
    with pytest.raises(ConfigError):
        npuplan.plan(ds_cnn, cpu_tensor_alignment=value)
    status = main(["plan", str(ds_cnn), "--output-dir", str(tmp_path / "out"), "--quiet",
                   f"--cpu-tensor-alignment={value}"])
    err = capsys.readouterr().err
    assert status == 2 and len(err.strip().splitlines()) == 1 and "--cpu-tensor-alignment" in err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("allocator", ["HillClimb", "Greedy", "LinearAlloc"])
@pytest.mark.parametrize("budget", [40_000, 65_536, 200_000])
def test_allocated_sram_peak_never_exceeds_the_budget(data_dir: Path, allocator: str, budget: int) -> None:
    try:
        plan = npuplan.plan(data_dir / "mobilenet_v1_025_96.tflite", arena_cache_size=budget,
                            tensor_allocator=allocator, **SHARED)
    except InfeasiblePlan as error:
        assert error.budget_bytes == budget
        return
    assert plan.sram_memory_used_bytes <= budget
    assert all(a.offset + a.size_bytes <= budget for a in plan.allocation.addresses.values() if a.area == MemArea.SRAM)
    validate_plan(plan)


def test_overshooting_allocation_replans_under_a_tighter_budget(monkeypatch, data_dir: Path) -> None:
    import npuplan.fitting as fitting

    real = fitting.drafted_stream
    calls = []

    def pessimistic(schedule, *args, **kwargs):
        calls.append(schedule)
        found, commands = real(schedule, *args, **kwargs)
        if len(calls) > 1:
            return found, commands
        inflated = dict(found.allocations)
        inflated[MemArea.SRAM] = type(inflated[MemArea.SRAM])(
            found.allocations[MemArea.SRAM].offsets, 65_536 + 100, 0, found.allocator)
        return type(found)(found.addresses, inflated, found.allocator), commands

    monkeypatch.setattr(fitting, "drafted_stream", pessimistic)
    plan = npuplan.plan(data_dir / "mobilenet_v1_025_96.tflite", arena_cache_size=65_536, **SHARED)
    assert len(calls) == 2 and plan.sram_memory_used_bytes <= 65_536


def test_stripe_commands_name_their_block_config_and_boxes(ds_cnn: Path) -> None:
    plan = npuplan.plan(ds_cnn, **SHARED)
    stripes = [c for c in plan.commands if isinstance(c, NpuStripeCommand)]
    assert stripes and all(c.block_config and not c.ofm.box.is_empty() for c in stripes)
