"""One model read and checked once, with its lowerings, weight encodings, cost oracles and
operator-order searches memoised: what every plan of the same model shares (``PreparedModel``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, NamedTuple

from npuplan.cost.weights import WeightEncodings
from npuplan.hw.accelerator import Accelerator
from npuplan.hw.memory import Architecture
from npuplan.io.tflite import parse_tflite, read_tflite
from npuplan.ir.graph import Model
from npuplan.ir.lowered import LoweredGraph
from npuplan.ir.model_checks import check_model, model_warnings
from npuplan.lowering import LoweredOps, lowered_ops, placed
from npuplan.lowering.activations import fuses_lut
from npuplan.lowering.lower import OtherForms, form_choices, may_take_vela_forms, stageable_sources
from npuplan.lowering.mean import sums_in_one_position
from npuplan.lowering.memory_ops import is_slice_copy
from npuplan.lowering.mul_max import FOLDED_REASON
from npuplan.lowering.reduce_max import has_depth_reduction
from npuplan.lowering.slices import reads_slices_in_place
from npuplan.options import Optimise
from npuplan.schedule.moves.order import OrderMemo
from npuplan.schedule.pricing.cost_adapter import default_oracle
from npuplan.schedule.pricing.oracle import CostOracle


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
          other form, and ``plan_forms`` keeps the cheapest form of each op among all of them
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
                      if all(changed_ops(f, other) for other in found)]
        return found

    def _vela_forms(self, accel: Accelerator, base: LoweredGraph, key: _LoweringKey) -> list[LoweredGraph]:
        """``forms`` of ``base`` (made with ``key``'s options) but the tables left fused: its LUTs
        as pools; those and its elementwise ops over 16-deep views; all that and its copying pools
        over 16-deep views (each where it differs from those before)."""
        found: list[LoweredGraph] = []
        for flat, pools in ((False, False), (True, False), (True, True)):
            form = self.lowered(accel, **key.options(vela_forms=True, flat_elementwise=flat, flat_pools=pools))
            if all(changed_ops(form, other) for other in (base, *found)):
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


def changed_ops(a: LoweredGraph, b: LoweredGraph) -> set[str]:
    """The NPU operations (by name) one lowering of a model runs in another form (operation type
    or OFM view, or another OFM type: a SUM's convolution writing its output, not int32 sums) than
    another lowering of the same ops (empty: the same)."""
    def form(o: Any) -> tuple[Any, ...]:
        return (o.op_type, o.ofm_shape, o.activation, o.ofm.dtype)

    forms = {o.name: form(o) for o in b.npu_ops}
    return {o.name for o in a.npu_ops if forms.get(o.name, form(o)) != form(o)}


