"""The Python API: ``npuplan.plan(path, **options) -> Plan``. The CLI is a thin layer over it."""

from __future__ import annotations

import logging
import time
from dataclasses import fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, NamedTuple

from npuplan.collector import collector_paused
from npuplan.commands.addresses import AddressPlan, drafted_stream
from npuplan.commands.stream import readdressed
from npuplan.commands.types import Command
from npuplan.cost.weights import WeightEncodings
from npuplan.form_price import change_cycles, cheapest_sources
from npuplan.errors import ConfigError, EmitError, InfeasiblePlan, UsageError
from npuplan.hw import build_architecture
from npuplan.hw.memory import Architecture, MemArea
from npuplan.hw.accelerator import Accelerator
from npuplan.io.tflite import parse_tflite, read_tflite
from npuplan.ir.graph import Model
from npuplan.ir.model_checks import check_model, model_warnings
from npuplan.ir.lowered import LoweredGraph
from npuplan.lowering import LoweredOps, lowered_ops, placed
from npuplan.lowering.activations import fuses_lut
from npuplan.lowering.lower import OtherForms, form_choices, may_take_vela_forms, stageable_sources
from npuplan.lowering.deployable import gather_split_writes
from npuplan.lowering.memory_ops import is_slice_copy
from npuplan.lowering.mul_max import FOLDED_REASON
from npuplan.lowering.mean import sums_in_one_position
from npuplan.lowering.reduce_max import has_depth_reduction
from npuplan.lowering.slices import reads_slices_in_place
from npuplan.options import Optimise, PlanOptions, Search, TensorAllocator
from npuplan.result import Plan
from npuplan.schedule import plan_schedule
from npuplan.schedule.model.network import build_network
from npuplan.schedule.pricing.cost_adapter import default_oracle
from npuplan.schedule.model.limits import Limits
from npuplan.schedule.pricing.oracle import CostOracle
from npuplan.units import ALIGN_BYTES, round_up
from npuplan.schedule.moves.order import OrderMemo, least_peak_order, reordered
from npuplan.schedule.search.planner import packs_unaligned
from npuplan.schedule.model.types import Schedule

if TYPE_CHECKING:
    from npuplan.emit.backend import EmitBackend
    from npuplan.emit.emitter import Emitted

log = logging.getLogger(__name__)


_ALIASES = {
    "config": "config_files",
    "arena_cache_size": "arena_cache_size_bytes",
    "cpu_tensor_alignment": "cpu_tensor_alignment_bytes",
}


def make_options(**options: Any) -> PlanOptions:
    """Build ``PlanOptions`` from Vela-style keyword names, validating every value."""
    known = {f.name for f in fields(PlanOptions)}
    values: dict[str, Any] = {}
    for key, value in options.items():
        if value is None:
            continue
        name = _ALIASES.get(key, key)
        if name not in known:
            raise ConfigError(f"unknown option '{key}'")
        values[name] = value
    values = _coerce(values)
    return PlanOptions(**values)


def _enum_value(enum: Any, value: Any, option: str) -> Any:
    for member in enum:
        if str(value).lower() == member.value.lower():
            return member
    valid = ", ".join(m.value for m in enum)
    raise UsageError(f"invalid value '{value}' for --{option} (valid: {valid})")


def _coerce(values: dict[str, Any]) -> dict[str, Any]:
    if "optimise" in values:
        values["optimise"] = _enum_value(Optimise, values["optimise"], "optimise")
    if "tensor_allocator" in values:
        values["tensor_allocator"] = _enum_value(TensorAllocator, values["tensor_allocator"], "tensor-allocator")
    if "search" in values:
        values["search"] = _enum_value(Search, values["search"], "search")
    if "config_files" in values:
        files = values["config_files"]
        values["config_files"] = (files,) if isinstance(files, (str, Path)) else tuple(str(f) for f in files)
    for key, option in (("arena_cache_size_bytes", "arena-cache-size"), ("cpu_tensor_alignment_bytes", "cpu-tensor-alignment")):
        if key in values:
            values[key] = _non_negative_int(values[key], option)
    alignment = values.get("cpu_tensor_alignment_bytes", 16)
    if alignment < 16 or alignment & (alignment - 1):
        raise UsageError(f"invalid value '{alignment}' for --cpu-tensor-alignment: must be a power of 2 "
                          "of at least 16 bytes, as in Vela")
    return values


def _non_negative_int(value: Any, option: str) -> int:
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise UsageError(f"invalid value '{value}' for --{option}: expected a whole number of bytes") from None
    if number < 0:
        raise UsageError(f"invalid value '{value}' for --{option}: must not be negative")
    return number


# How many times a schedule is re-planned under a tighter budget when its allocated SRAM peak
# (fragmentation) overshoots the budget, before giving up.
MAX_TIGHTENINGS = 8


@collector_paused
def plan(path: str | Path, *, on_step: Callable[[str], None] | None = None, **options: Any) -> Plan:
    """Plan the TFLite network at ``path`` with Vela-style options.

    Keyword names follow Vela's command line with underscores: ``accelerator_config``,
    ``config`` (one or more .ini paths), ``system_config``, ``memory_mode``, ``optimise``
    (``"Performance"``/``"Size"``), ``arena_cache_size`` (bytes), ``tensor_allocator``,
    ``cpu_tensor_alignment``, ``search``. ``on_step`` is called with each name in ``result.STEPS`` as
    that step starts (for progress displays). Raises ``NpuplanError`` subclasses on bad input.
    """
    step = on_step or (lambda _name: None)
    started = time.perf_counter()
    step("options")
    plan_options = make_options(**options)
    arch = build_architecture(plan_options)
    step("read")
    model = PreparedModel.read(path)
    return plan_prepared(model, plan_options, arch=arch, on_step=step, started=started)


class _LoweringKey(NamedTuple):
    """The options of one of ``PreparedModel.lowered``'s lowerings (as its arguments)."""

    accel_name: str
    concat_writes: bool
    deployable: bool
    cpu_ops: frozenset[int]
    fold_leaky: bool
    max_trees: bool
    parallel_means: bool
    vela_forms: bool
    flat_elementwise: bool
    flat_pools: bool
    fuse_luts: bool
    other_forms: OtherForms
    vector_slice_reads: bool
    framed_reads: bool

    def options(self, **changes: Any) -> dict[str, Any]:
        """``lowered``'s keyword arguments for these options with ``changes``."""
        found: dict[str, Any] = {k: v for k, v in self._asdict().items() if k != "accel_name"}
        return {**found, **changes}


class PreparedModel:
    """One model read and checked once, then lowered once per accelerator and given one weight-encoding
    memo per accelerator: what every plan of the same model shares (a sweep's points, a fit's budgets).

    Sharing is safe because a lowering depends only on the model and the accelerator, and a
    ``WeightEncodings`` memo only on the accelerator's core count and what the encoder reads of an
    op (its weights by value, so the equal ops of the lowerings share); neither depends on the system config,
    memory mode, budget or optimise goal. The operator-order memo (``orders``) is keyed by all a
    search reads, so it serves any lowering and scenario. Nothing here is changed by planning but the memos.
    """

    def __init__(self, model: Model, path: str | Path) -> None:
        self.model = model
        self.path = str(path)
        self.warnings = model_warnings(model)  # what the model verifier accepted with a warning
        # by ``lowered``'s options (``_LoweringKey``)
        self._lowered: dict[_LoweringKey, LoweredGraph] = {}
        # the lowerings' first part, shared by those differing only in how ops are placed
        self._stages: dict[tuple[str, bool, frozenset[int], bool, bool, bool, bool, OtherForms], LoweredOps] = {}
        self._encodings: dict[str, WeightEncodings] = {}
        self._oracles: dict[tuple[str, str, str, Optimise], CostOracle] = {}
        self.orders = OrderMemo()  # the operator-order searches of its lowerings

    @classmethod
    def read(cls, path: str | Path) -> "PreparedModel":
        """The model file at ``path`` read and checked (``ModelError`` on a bad file)."""
        return cls(check_model(read_tflite(path)), path)

    @classmethod
    def parse(cls, data: bytes, path: str | Path) -> "PreparedModel":
        """The model file's bytes ``data`` (read from ``path`` elsewhere) parsed and checked."""
        return cls(check_model(parse_tflite(data, name=Path(path).stem, label=str(path))), path)

    @property
    def network(self) -> str:
        """The network's name in reports: the model file's name without its suffix."""
        return Path(self.path).stem

    def lowered(self, accel: Accelerator, *, concat_writes: bool = False, deployable: bool = False,
                cpu_ops: frozenset[int] = frozenset(), fold_leaky: bool = True, max_trees: bool = False,
                parallel_means: bool = False, vela_forms: bool = False, flat_elementwise: bool = True,
                flat_pools: bool = True, fuse_luts: bool = True,
                other_forms: OtherForms = frozenset(), vector_slice_reads: bool = True,
                framed_reads: bool = True) -> LoweredGraph:
        """``lower(model, accel, ...)`` with these options, computed on the first request."""
        key = _LoweringKey(accel.name, concat_writes, deployable, cpu_ops, fold_leaky, max_trees, parallel_means,
                           vela_forms, flat_elementwise, flat_pools, fuse_luts, other_forms, vector_slice_reads,
                           framed_reads)
        found = self._lowered.get(key)
        if found is None:
            stage = self._stage(accel, deployable=deployable, cpu_ops=cpu_ops, fold_leaky=fold_leaky,
                                max_trees=max_trees, parallel_means=parallel_means, fuse_luts=fuse_luts,
                                other_forms=other_forms)
            found = self._lowered[key] = placed(stage, accel, concat_writes=concat_writes, vela_forms=vela_forms,
                                                flat_elementwise=flat_elementwise, flat_pools=flat_pools,
                                                vector_slice_reads=vector_slice_reads, framed_reads=framed_reads)
        return found

    def _stage(self, accel: Accelerator, *, deployable: bool, cpu_ops: frozenset[int], fold_leaky: bool = True,
               max_trees: bool = False, parallel_means: bool = False, fuse_luts: bool = True,
               other_forms: OtherForms = frozenset()) -> LoweredOps:
        """``lowered_ops(model, accel, ...)`` with these options, computed on the first request."""
        stage_key = (accel.name, deployable, cpu_ops, fold_leaky, max_trees, parallel_means, fuse_luts, other_forms)
        stage = self._stages.get(stage_key)
        if stage is None:
            stage = self._stages[stage_key] = lowered_ops(
                self.model, accel, deployable=deployable, cpu_ops=cpu_ops, fold_leaky=fold_leaky,
                max_trees=max_trees, parallel_means=parallel_means, fuse_luts=fuse_luts,
                other_forms=other_forms)
        return stage

    def _key_of(self, lowering: LoweredGraph) -> _LoweringKey:
        """The options ``lowered`` made ``lowering`` with (the lowering itself, not an equal one)."""
        found = next((key for key, made in self._lowered.items() if made is lowering), None)
        if found is None:
            raise ValueError(f"{self.network}: a lowering this model did not make")  # a caller's bug
        return found

    def variants(self, accel: Accelerator, *, concat_in_place: bool, deployable: bool = False,
                 cpu_ops: frozenset[int] = frozenset(), staged_forms: bool = True) -> list[LoweredGraph]:
        """The lowerings a plan compares: the plain one; those choosing the other form of an op
        whose fastest form depends on the accelerator and the map (``_alternative_forms``); and the
        one whose producers write concatenated (or padded) slices in place when ``concat_in_place``
        and it differs (a deployable plan's too: the emitter writes a producer's OFM as a box of the
        concatenation, as Vela's default core does); so too for the one taking other forms (a
        MIRROR_PAD padding its rows through an intermediate map, whose producer may write that
        map's middle; a resize by depthwise copies writing a concatenated slice) and for the one
        reading rows of reshapes through copies (``framed_reads``). Without ``staged_forms`` no op
        takes a staged form (``form_choices``)."""
        plain = self.lowered(accel, deployable=deployable, cpu_ops=cpu_ops)
        found = [plain, *self._alternative_forms(accel, plain, deployable=deployable, cpu_ops=cpu_ops,
                                                 staged_forms=staged_forms)]
        if not concat_in_place or not any(is_slice_copy(op) for op in plain.ops):
            return found  # (without slice copies, writing them in place changes nothing)
        pairs = [(v, self.lowered(accel, **self._key_of(v).options(concat_writes=True))) for v in found
                 if v is plain or not self._key_of(v).framed_reads or self._key_of(v).other_forms]
        return [*found, *(fused for v, fused in pairs if len(fused.ops) != len(v.ops))]

    def _alternative_forms(self, accel: Accelerator, plain: LoweredGraph, *, deployable: bool,
                           cpu_ops: frozenset[int], staged_forms: bool) -> list[LoweredGraph]:
        """``plain`` lowered with the other form of each choice it met, one choice at a time and all
        together, for the planner to price rather than a rule to choose:
        - ``max(x, x * alpha)`` kept as MUL and MAXIMUM rather than folded into one LEAKY_RELU table
          (a table fused into its producer costs U65's output stage a cycle per element);
        - a REDUCE_MAX over depth as a tree of MAXIMUMs rather than one pool (``lowering.reduce_max``);
        - a MEAN of a whole map summed in parallel rows rather than by one kernel (``mean.parallel_rows``);
        - every operator with another form (``lower``'s ``other_forms``) in it: a convolution of a
          dilation above 2 run in phases over strided views rather than over a kernel spread with
          zero taps, a TRANSPOSE's matrix steps by tile convolutions rather than 1x1 pools or its
          two steps in their other order, a MIRROR_PAD padding its rows in an intermediate map
          rather than in its output (one more copy, but none reads the output:
          ``memory_ops.convert_mirror_pad``), an operator writing its output in short runs (a
          TRANSPOSE's steps, a half-pixel RESIZE_BILINEAR's phases) writing an intermediate map
          then copying it in whole rows (``staged_writes``); this lowering gives each op its first
          other form, and ``plan_prepared`` keeps the cheapest form of each op among all of them
          (``form_choices``, ``_other_forms_where_cheaper``);
        - fully-connected layers reading slices through copies rather than where they lie (a copy
          per slice, but the source dies early: less memory for a recurrent network's steps);
        - rows of a reshape that keeps the rows (a patchify stem's rows of patches) read through a
          copy rather than in the reshape's input (a copy, but one the planner may place and
          format for its readers: long bursts from a brick-format copy in the arena).
        """
        choices: list[dict[str, Any]] = []
        if any(reason.startswith(FOLDED_REASON) for _, reason in plain.removed):
            choices.append({"fold_leaky": False})
        if has_depth_reduction(plain.ops):
            choices.append({"max_trees": True})
        if any(sums_in_one_position(op) for op in plain.ops):
            choices.append({"parallel_means": True})
        others = self.form_choices(accel, deployable=deployable, cpu_ops=cpu_ops, staged=staged_forms)
        if others:
            choices.append({"other_forms": others[0]})
        if reads_slices_in_place(plain.ops):
            choices.append({"vector_slice_reads": False})
        if any(op.ifm_frame is not None for op in plain.npu_ops):
            choices.append({"framed_reads": False})
        if len(choices) > 1:
            choices.append({k: v for choice in choices for k, v in choice.items()})
        return [self.lowered(accel, deployable=deployable, cpu_ops=cpu_ops, **choice) for choice in choices]

    def form_choices(self, accel: Accelerator, *, deployable: bool = False, cpu_ops: frozenset[int] = frozenset(),
                     staged: bool = True) -> tuple[OtherForms, ...]:
        """The ``other_forms`` offering every other form of the operators of the plain lowering
        (``lower.form_choices``; with ``staged``, staged forms where its operations write in short
        runs: worth pricing only where the arena is slower than fast storage)."""
        source_ops = self._stage(accel, deployable=deployable, cpu_ops=cpu_ops).graph.ops
        plain = self.lowered(accel, deployable=deployable, cpu_ops=cpu_ops)
        return form_choices(source_ops, stageable_sources(plain) if staged else frozenset())

    def forms(self, accel: Accelerator, base: LoweredGraph, *, deployable: bool = False,
              cpu_ops: frozenset[int] = frozenset()) -> list[LoweredGraph]:
        """``base`` (one of ``variants``) with some operations in the forms of Vela's default core
        (``lower``'s ``vela_forms``: standalone LUTs as pools, elementwise ops over a 16-deep view)
        where that differs, and with only its LUTs so where that differs again (a flat elementwise
        op is not cascaded); and, where ``base`` fuses a table activation into its producer, with
        each table its own op in those forms (a table fused into a convolution costs U65's output
        stage a cycle per element, and the producer writes the map the pool reads in long bursts)."""
        key = self._key_of(base)
        found = self._vela_forms(accel, base, key) if may_take_vela_forms(base, accel) else []
        if key.fuse_luts and any(fuses_lut(o) for o in base.npu_ops):
            apart = self.lowered(accel, **key.options(fuse_luts=False))
            found += [f for f in self._vela_forms(accel, apart, key._replace(fuse_luts=False))
                      if all(_changed(f, other) for other in found)]
        return found

    def _vela_forms(self, accel: Accelerator, base: LoweredGraph, key: _LoweringKey) -> list[LoweredGraph]:
        """``forms`` of ``base`` (made with ``key``'s options) but the tables left fused: its LUTs
        as pools; those and its elementwise ops over 16-deep views; all that and its copying pools
        over 16-deep views (each where it differs from those before)."""
        found: list[LoweredGraph] = []
        for flat, pools in ((False, False), (True, False), (True, True)):
            form = self.lowered(accel, **key.options(vela_forms=True, flat_elementwise=flat, flat_pools=pools))
            if all(_changed(form, other) for other in (base, *found)):
                found.append(form)
        return found[::-1]

    def oracle(self, arch: Architecture, optimise: Optimise = Optimise.PERFORMANCE) -> CostOracle:
        """The cost oracle (and its memos) of ``arch``'s accelerator, system config and memory mode
        and of the goal ``optimise`` (``default_oracle``: only Performance prices cut blocks),
        shared by every budget planned on them (costs do not depend on it)."""
        key = (repr(arch.accelerator), repr(arch.system), repr(arch.mode), optimise)  # by value (they hold dicts)
        found = self._oracles.get(key)
        if found is None:
            found = self._oracles[key] = default_oracle(arch, encodings=self.encodings(arch.accelerator),
                                                        optimise=optimise)
        return found

    def encodings(self, accel: Accelerator) -> WeightEncodings:
        """The weight-encoding memo of ``accel``'s lowerings (each op's weights encoded once)."""
        found = self._encodings.get(accel.name)
        if found is None:
            found = self._encodings[accel.name] = WeightEncodings(accel)
        return found


def _changed(a: LoweredGraph, b: LoweredGraph) -> set[str]:
    """The NPU operations (by name) one lowering of a model runs in another form (operation type
    or OFM view, or another OFM type: a SUM's convolution writing its output, not int32 sums) than
    another lowering of the same ops (empty: the same)."""
    def form(o: Any) -> tuple[Any, ...]:
        return (o.op_type, o.ofm_shape, o.activation, o.ofm.dtype)

    forms = {o.name: form(o) for o in b.npu_ops}
    return {o.name for o in a.npu_ops if forms.get(o.name, form(o)) != form(o)}


# The share of a plan's NPU cycles the operations another form rewrites must take for that form to
# be planned too: a form can save at most what those operations cost (and planning it costs a plan).
_FORMS_MIN_SHARE = 0.02


def _forms_may_pay(chosen: tuple[LoweredGraph, Schedule, AddressPlan, tuple[Command, ...]],
                   forms: list[LoweredGraph]) -> bool:
    lowered, schedule = chosen[0], chosen[1]
    rewritten = set().union(*(_changed(f, lowered) for f in forms)) if forms else set()
    cycles = sum(s.npu_cycles for s in schedule.ops if s.name in rewritten)
    return cycles >= _FORMS_MIN_SHARE * max(1, schedule.total_npu_cycles)


@collector_paused
def plan_prepared(
    model: PreparedModel, options: PlanOptions, *, arch: Architecture | None = None,
    on_step: Callable[[str], None] | None = None, started: float | None = None,
) -> Plan:
    """Plan ``model`` with ``options`` (already validated), reusing its lowerings and encodings.

    ``arch`` is ``build_architecture(options)`` when given; ``started`` the ``perf_counter`` time the
    compile started (for ``compile_seconds``), else now. Gives the same plan as ``plan()``.
    """
    step = on_step or (lambda _name: None)
    started = time.perf_counter() if started is None else started
    arch = build_architecture(options) if arch is None else arch
    step("lower")
    variants = model.variants(arch.accelerator, concat_in_place=options.concat_in_place,
                              deployable=options.deployable, cpu_ops=frozenset(options.deploy_cpu_ops),
                              staged_forms=_slow_arena(arch))
    variants = _other_forms_where_cheaper(model, variants, arch, options)
    reorders = [(r, v) for v in (variants if options.reorder else [])
                for r in [_least_peak_variant(v, options, arch, model.orders)] if r is not None]
    variants = variants + [r for r, _ in reorders]
    bases = {id(r): v for r, v in reorders}
    step("schedule")
    encodings = model.encodings(arch.accelerator)
    oracle = model.oracle(arch, options.optimise)
    planned = _planned_by_price(variants, arch, options, encodings, oracle, step)
    planned += _planned_forms(model, _better(planned, options), bases, arch, options, step)
    lowered, schedule, allocation, drafted = _better(planned, options)
    commands = readdressed(drafted, allocation.addresses)  # only the kept plan's stream is addressed
    if id(lowered) in bases:
        schedule = replace(schedule, notes=(*schedule.notes, _order_note(bases[id(lowered)], lowered)))
    if model.warnings:
        schedule = replace(schedule, notes=(*(f"warning: {w}" for w in model.warnings), *schedule.notes))
    elapsed = time.perf_counter() - started
    log.info("planned %s in %.3f s", model.model.name, elapsed)
    return Plan(
        network=model.network,
        model_path=model.path,
        options=options,
        arch=arch,
        lowered=lowered,
        schedule=schedule,
        compile_seconds=elapsed,
        allocation=allocation,
        commands=commands,
        weight_encodings=encodings,
    )


def _other_forms_where_cheaper(model: PreparedModel, variants: list[LoweredGraph], arch: Architecture,
                               options: PlanOptions) -> list[LoweredGraph]:
    """``variants`` with each lowering taking operators' other forms (``lower``'s ``other_forms``:
    dilated convolutions in phases, transposes by tile convolutions or in the other order of their
    steps, mirror pads through rows, outputs written in short runs staged) replaced by the one
    giving each operator the form of least local price (``form_price.cheapest_sources`` over every
    choice of ``PreparedModel.form_choices``, network inputs and outputs in the arena), or left out
    when its plain form is the cheapest everywhere: the cheapest form per op and scenario."""
    found: list[LoweredGraph] = []
    for lowering in variants:
        key = model._key_of(lowering)
        if not key.other_forms:
            found.append(lowering)
            continue
        plain = model.lowered(arch.accelerator, **key.options(other_forms=frozenset()))
        choices = model.form_choices(arch.accelerator, deployable=key.deployable, cpu_ops=key.cpu_ops,
                                     staged=_slow_arena(arch))
        forms = [model.lowered(arch.accelerator, **key.options(other_forms=c)) for c in choices]
        cheapest = cheapest_sources(plain, forms, arch, model.oracle(arch, options.optimise),
                                    pack_unaligned=packs_unaligned(arch, options))
        chosen_forms = frozenset(pair for c, won in zip(choices, cheapest) for pair in c if pair[0] in won)
        chosen = model.lowered(arch.accelerator, **key.options(other_forms=chosen_forms)) if chosen_forms else plain
        if all(chosen is not other for other in found):
            found.append(chosen)
    return found


def _slow_arena(arch: Architecture) -> bool:
    """Whether the arena lies in another memory than fast storage (Dedicated_Sram: DRAM beside an
    SRAM cache), where a staged output may pay; elsewhere staging only adds a copy."""
    return arch.arena_area != arch.fast_area


# How far above the best full plan so far a lowering's local estimate (``form_price``) may be and
# the lowering still be planned in full (Performance). bench/form_price.py over the public models and
# zoo, zoo2, zoo3 (u55-128 and u65-256, deployable): a winning form's estimate is at most 1.46x its
# full plan's cycles (a 3-op network; 12 of 144 above 1.05x); planning the lowest estimate first, a
# 0.05 margin would skip 1 winner, 0.2 none.
_FORM_PRICE_MARGIN = 0.2


def _planned_by_price(lowerings: list[LoweredGraph], arch: Architecture, options: PlanOptions,
                      encodings: WeightEncodings, oracle: CostOracle, step: Callable[[str], None]) -> list[Any]:
    """The full plans of those of ``lowerings`` (``lowerings[0]`` the plain one) that may be the best,
    in their order. Performance plans the lowering of least local price first (``form_price``, the
    network's inputs and outputs priced in the arena), then each other one only when its estimate
    (that plan's cycles, moved by the two lowerings' local prices) is within ``_FORM_PRICE_MARGIN``
    of the best plan so far; Size plans every one (a local price gives no SRAM peak)."""
    if options.optimise is not Optimise.PERFORMANCE or len(lowerings) < 2:
        return [_planned(v, arch, options, encodings, oracle, step) for v in lowerings]
    pack = packs_unaligned(arch, options)
    changes = [0] + [change_cycles(lowerings[0], v, arch, oracle, pack_unaligned=pack, arena_ends=True)
               for v in lowerings[1:]]
    found: dict[int, Any] = {}
    reference: tuple[int, int] | None = None  # (index, cycles) of the first feasible plan
    best_cycles = 0  # of the feasible plans so far (none while ``reference`` is None)
    for i in sorted(range(len(lowerings)), key=lambda i: (changes[i], i)):
        if reference is not None:
            estimate = reference[1] + changes[i] - changes[reference[0]]
            if estimate > best_cycles * (1 + _FORM_PRICE_MARGIN):
                continue
        found[i] = result = _planned(lowerings[i], arch, options, encodings, oracle, step)
        if not isinstance(result, Exception):
            cycles = result[1].total_npu_cycles
            best_cycles = cycles if reference is None else min(best_cycles, cycles)
            reference = reference or (i, cycles)
    return [found[i] for i in sorted(found)]


def _planned_forms(model: PreparedModel, chosen: tuple[LoweredGraph, Schedule, AddressPlan, tuple[Command, ...]],
                   bases: dict[int, LoweredGraph], arch: Architecture, options: PlanOptions,
                   step: Callable[[str], None]) -> list[Any]:
    """The plans of the chosen lowering's Vela forms (``PreparedModel.forms``; of the lowering it
    reorders, for a reordered one), when the operations they rewrite take enough of its cycles."""
    base = bases.get(id(chosen[0]), chosen[0])
    forms = model.forms(arch.accelerator, base, deployable=options.deployable,
                        cpu_ops=frozenset(options.deploy_cpu_ops))
    encodings, oracle = model.encodings(arch.accelerator), model.oracle(arch, options.optimise)
    fused = [f for f in forms if sum(map(fuses_lut, f.npu_ops)) == sum(map(fuses_lut, base.npu_ops))]
    apart = [f for f in forms if all(f is not g for g in fused)]
    chosen_forms = fused if fused and _forms_may_pay(chosen, fused) else []
    if apart and _forms_may_pay(chosen, apart):
        # of the forms with their tables apart, the one of least local price, planned (Performance)
        # when that price may win
        pack = packs_unaligned(arch, options)
        prices = [(change_cycles(base, f, arch, oracle, pack_unaligned=pack), i) for i, f in enumerate(apart)]
        price, best = min(prices)
        if options.optimise is not Optimise.PERFORMANCE or price <= chosen[1].total_npu_cycles * _FORM_PRICE_MARGIN:
            chosen_forms.append(apart[best])
    return [_planned(f, arch, options, encodings, oracle, step) for f in chosen_forms]


def _least_peak_variant(lowered: LoweredGraph, options: PlanOptions, arch: Architecture,
                        memo: OrderMemo) -> LoweredGraph | None:
    """``lowered`` with its ops in the order of least whole-feature-map peak, or None when that is
    the file's order (``schedule.order``); ``memo`` the model's searches."""
    # Each map as the allocator stores it (its bytes rounded up to the address alignment): many
    # small maps live at once (an unstacked sequence) cost their alignment too.
    sizes = {name: round_up(fm.size_bytes, ALIGN_BYTES) for name, fm in
             build_network(lowered, pack_unaligned=packs_unaligned(arch, options)).fms.items()}
    order = least_peak_order(lowered, sizes, memo=memo)
    if order == tuple(range(len(lowered.ops))):
        return None
    variant = reordered(lowered, order)
    return replace(variant, ops=gather_split_writes(variant.ops)) if options.deployable else variant


def _order_note(base: LoweredGraph, chosen: LoweredGraph) -> str:
    moved = sum(a is not b for a, b in zip(base.ops, chosen.ops))
    return (f"operators reordered for the least memory: {moved} of {len(base.ops)} ops run at another "
            "position than in the file")


def _planned(lowered: LoweredGraph, arch: Architecture, options: PlanOptions, encodings: WeightEncodings,
             oracle: CostOracle, step: Callable[[str], None],
             ) -> tuple[LoweredGraph, Schedule, AddressPlan, tuple[Command, ...]] | Exception:
    """``lowered`` planned and allocated, or the ``InfeasiblePlan`` it met; its command stream
    drafted (``drafted_stream``: ``readdressed`` with the allocation's addresses, it is the stream)."""
    try:
        schedule = plan_schedule(lowered, arch, options, oracle=oracle)
        step("allocate")
        schedule, allocation, drafted = _fitted_draft(schedule, lowered, arch, options, encodings=encodings,
                                                      oracle=oracle)
    except InfeasiblePlan as error:
        return error
    return lowered, schedule, allocation, drafted


def _better(planned: list[Any], options: PlanOptions) -> tuple[LoweredGraph, Schedule, AddressPlan, tuple[Command, ...]]:
    """The better of the lowerings' plans: Performance the fewer cycles, Size the smaller SRAM
    peak (then cycles). Raises the first lowering's ``InfeasiblePlan`` when none fits."""
    fits = [p for p in planned if not isinstance(p, Exception)]
    if not fits:
        raise planned[0]
    def key(p: Any) -> tuple[int, int]:
        cycles, peak = p[1].total_npu_cycles, p[2].peak_bytes(MemArea.SRAM)
        return (peak, cycles) if options.optimise is Optimise.SIZE else (cycles, peak)
    return min(fits, key=key)


def fit_allocation(
    schedule: Schedule, lowered: LoweredGraph, arch: Architecture, options: PlanOptions,
) -> tuple[Schedule, AddressPlan]:
    """The schedule and allocation of ``fit_addressed_stream`` (without the command stream)."""
    fitted, allocation, _ = _fitted_draft(schedule, lowered, arch, options)
    return fitted, allocation


def fit_addressed_stream(
    schedule: Schedule, lowered: LoweredGraph, arch: Architecture, options: PlanOptions, *,
    encodings: WeightEncodings | None = None, oracle: CostOracle | None = None,
) -> tuple[Schedule, AddressPlan, tuple[Command, ...]]:
    """Allocate the plan's buffers with the chosen allocator and build the command stream that uses
    them; keep the allocated SRAM peak within the budget.

    The scheduler already checks its own allocated peak against the budget; the command stream
    allocates at a finer grain and aligns CPU tensors, so if its SRAM peak still overshoots, the
    schedule is re-planned under a budget tightened by the overshoot. Raises ``InfeasiblePlan`` when
    no tightening fits. ``encodings`` is the plan's weight-encoding memo, shared with re-planning.
    """
    fitted, allocation, drafted = _fitted_draft(schedule, lowered, arch, options, encodings=encodings, oracle=oracle)
    return fitted, allocation, readdressed(drafted, allocation.addresses)


def _fitted_draft(
    schedule: Schedule, lowered: LoweredGraph, arch: Architecture, options: PlanOptions, *,
    encodings: WeightEncodings | None = None, oracle: CostOracle | None = None,
) -> tuple[Schedule, AddressPlan, tuple[Command, ...]]:
    """``fit_addressed_stream`` with the command stream drafted (``drafted_stream``), not addressed."""
    encodings = encodings or WeightEncodings(arch.accelerator)
    limits = Limits.of(arch)
    tighter = limits
    for _ in range(MAX_TIGHTENINGS + 1):
        allocation, drafted = drafted_stream(schedule, lowered, arch, allocator=options.tensor_allocator,
                                             cpu_tensor_alignment=options.cpu_tensor_alignment_bytes,
                                             encodings=encodings,
                                             placements=oracle.placements if oracle is not None else None)
        peak = allocation.peak_bytes(MemArea.SRAM)
        if limits.fits(peak):
            if tighter != limits:
                note = (f"re-planned within {tighter.sram_budget_bytes} bytes: "
                        f"the {options.tensor_allocator} allocation overshot")
                schedule = replace(schedule, notes=(*schedule.notes, note))
            return schedule, allocation, drafted
        tighter_bytes = tighter.sram_budget_bytes
        tighter_bytes -= max(peak - limits.sram_budget_bytes, tighter_bytes // 64, 16)
        if tighter_bytes <= 0:
            break
        tighter = limits.tightened(tighter_bytes)
        log.info("allocated SRAM peak %d > budget %d: re-planning within %d bytes", peak, limits.sram_budget_bytes,
                 tighter_bytes)
        try:
            schedule = plan_schedule(lowered, arch, options, limits=tighter,
                                     oracle=oracle or default_oracle(arch, encodings=encodings))
        except InfeasiblePlan:
            break
    raise InfeasiblePlan(
        op=lowered.name, needed_bytes=peak, budget_bytes=limits.sram_budget_bytes,
        why=f"the {options.tensor_allocator} allocator fragments SRAM", hint="try --tensor-allocator HillClimb "
        "or a larger --arena-cache-size")


MAX_CPU_FALLBACKS = 16


def plan_and_emit(path: str | Path, *, first: Plan | None = None, backend: EmitBackend | None = None,
                  **options: Any) -> tuple[Plan, Emitted]:
    """Plan ``path`` deployably and emit it; an operator the emitter refuses for a reason the CPU
    avoids (no valid block config) is kept on the CPU and the network planned again, at most
    ``MAX_CPU_FALLBACKS`` times. Raises the ``EmitError`` it cannot avoid. ``first``: the plan of
    ``path`` with ``deployable=True`` and ``options``, when the caller has made it already;
    ``backend``: see ``emit_tflite`` (None: npuplan's own). The emitter is imported here, so that
    planning alone never loads it."""
    from npuplan.emit.backend import EmitBackend
    from npuplan.emit.emitter import EmitMemo, emit_tflite

    backend = backend or EmitBackend.NPUPLAN

    cpu_ops: tuple[int, ...] = ()
    refused: list[str] = []
    memo = EmitMemo()
    while True:
        try:
            planned = (first if first is not None and not cpu_ops
                       else plan(path, deployable=True, deploy_cpu_ops=cpu_ops, **options))
        except EmitError as error:  # the refused op cannot go back to the CPU: say why it was refused
            raise EmitError(error.op, f"{error.reason}; refused by the emitter: {refused[-1]}") if refused else error
        try:
            emitted = emit_tflite(planned, memo=memo, backend=backend)
        except EmitError as error:
            if error.cpu_fallback is None or error.cpu_fallback in cpu_ops or len(cpu_ops) >= MAX_CPU_FALLBACKS:
                raise
            cpu_ops += (error.cpu_fallback,)
            refused.append(f"'{error.op}' kept on the CPU ({error.reason})")
            continue
        return planned, replace(emitted, notes=(*emitted.notes, *refused))
