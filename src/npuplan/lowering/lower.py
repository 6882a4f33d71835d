"""The lowering driver: ``lower(model, accelerator) -> LoweredGraph``.

Graph-level passes run first (each a pure ``Graph -> Graph`` function that also reports the ops it
removed), then every remaining op is either converted to NPU operations or kept for the CPU with
the reason from the support checks. Only the main (first) subgraph is lowered; later subgraphs
(called by control-flow ops) are ignored.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from functools import partial
from typing import NamedTuple

from npuplan.errors import NpuplanError, EmitError, mark_op
from npuplan.hw.accelerator import Accelerator
from npuplan.ir.graph import Graph, Model, Op, Signature, Tensor
from npuplan.ir.lowered import CpuOp, LoweredGraph, LoweredOp, NpuOp
from npuplan.lowering.activations import fuse_activations, standalone_lut, standalone_luts_as_pools, with_fused_lut
from npuplan.lowering.argmax import convert_argmax
from npuplan.lowering.batch_matmul import convert_batch_matmul
from npuplan.lowering.batches import split_batches
from npuplan.lowering.broadcasts import materialise_broadcast_constants
from npuplan.lowering.constants import fold_constants
from npuplan.lowering.convert import (
    Converter,
    convert_binary_elementwise,
    convert_conv,
    convert_phased,
    convert_depthwise,
    convert_fully_connected,
    convert_pool,
    convert_reduce_max,
    convert_reduce_min,
    convert_requantize,
    convert_standalone_activation,
    convert_unary_elementwise,
)
from npuplan.lowering.decompose import (
    convert_leaky_relu_16,
    convert_prelu,
    convert_squared_difference,
    is_decomposed_leaky_relu,
)
from npuplan.lowering.deployable import (
    FUSABLE_STANDALONE,
    deployable as deployable_ops,
    folded_inputs_only,
    gather_split_writes,
    reshape_invariant,
)
from npuplan.lowering.dilation import fold_dilated_convolutions
from npuplan.lowering.dynamic_shapes import resolve_dynamic_shapes
from npuplan.lowering.edge_copies import fuse_edge_copies
from npuplan.lowering.lstm import LSTM, convert_lstm
from npuplan.lowering.mean import convert_mean, drop_noop_means, rescaled_sums, rescales_sums
from npuplan.lowering.memory_ops import (convert_concat, convert_mirror_pad, convert_pad, convert_reshape_copy,
                                        fuse_concat_writes, fuse_reshape_reads, pads_columns)
from npuplan.lowering.mul_max import fold_mul_max
from npuplan.lowering.reduce_max import reduce_max_trees
from npuplan.lowering.ofm_views import flat_elementwise_views, flattens, kernel_ofm_views
from npuplan.lowering.operands import primary_input_first
from npuplan.lowering.order import vela_order, vela_pass_order
from npuplan.lowering.pads import fold_pads
from npuplan.lowering.patch_rows import split_patch_rows
from npuplan.lowering.reshapes import drop_noop_reshapes, fold_pack_reshapes
from npuplan.lowering.dilation_phases import splits_in_phases
from npuplan.lowering.transposes import (StepForm, convert_transpose, fold_transpose_views, has_convolution_form,
                                        has_steps)
from npuplan.lowering.resize import convert_resize, convert_transpose_conv, has_depthwise_form
from npuplan.lowering.shape_ops import fold_shape_ops
from npuplan.lowering.slices import convert_pack, convert_slice, convert_split, fuse_slice_reads
from npuplan.lowering.softmax import convert_softmax
from npuplan.lowering.staged_writes import staged_output, writes_in_short_runs
from npuplan.lowering.support import ACTIVATION_TYPES, BINARY_ELEMENTWISE, MEMORY_TYPES, unsupported_reason
from npuplan.lowering.tiles import convert_tile
from npuplan.lowering.unread import drop_unread_writes
from npuplan.lowering.upsampling import fold_upsampling
from npuplan.records import record

logger = logging.getLogger(__name__)

_CONVERTERS: dict[str, Converter] = {
    "CONV_2D": convert_conv,
    "DEPTHWISE_CONV_2D": convert_depthwise,
    "FULLY_CONNECTED": convert_fully_connected,
    "AVERAGE_POOL_2D": convert_pool,
    "MAX_POOL_2D": convert_pool,
    "MEAN": convert_mean,
    "SOFTMAX": convert_softmax,
    "PAD": convert_pad,
    "PADV2": convert_pad,
    "CONCATENATION": convert_concat,
    **{t: convert_reshape_copy for t in MEMORY_TYPES},
    "RESIZE_NEAREST_NEIGHBOR": convert_resize,
    "RESIZE_BILINEAR": convert_resize,
    "TRANSPOSE_CONV": convert_transpose_conv,
    "ABS": convert_unary_elementwise,
    "PRELU": convert_prelu,
    "SQUARED_DIFFERENCE": convert_squared_difference,
    "SLICE": convert_slice,
    "STRIDED_SLICE": convert_slice,
    "SPLIT": convert_split,
    "SPLIT_V": convert_split,
    "UNPACK": convert_split,
    "PACK": convert_pack,
    "TRANSPOSE": convert_transpose,
    "MIRROR_PAD": convert_mirror_pad,
    "QUANTIZE": convert_requantize,
    "ARG_MAX": convert_argmax,
    "SUM": convert_mean,
    "REDUCE_MAX": convert_reduce_max,
    LSTM: convert_lstm,
    "REDUCE_MIN": convert_reduce_min,
    "BATCH_MATMUL": convert_batch_matmul,
    "TILE": convert_tile,
    **{t: convert_binary_elementwise for t in BINARY_ELEMENTWISE},
    **{t: convert_standalone_activation for t in ACTIVATION_TYPES},
    "LEAKY_RELU": lambda op: (convert_leaky_relu_16(op) if is_decomposed_leaky_relu(op)
                              else convert_standalone_activation(op)),
}


class Form(NamedTuple):
    """One form of a TFLite operator's NPU operations: ``name`` one of its type's other forms
    (``_OTHER_FORMS``; "" its plain conversion); ``staged``: its output written through an
    intermediate map, then copied in whole rows (``staged_writes``)."""

    name: str = ""
    staged: bool = False


OtherForms = frozenset[tuple[int, Form]]  # ``lower``'s ``other_forms``: (TFLite operator index, its form)


def lower_op(op: Op, *, parallel_means: bool = False, form: Form = Form()) -> tuple[LoweredOp, ...]:
    """The NPU operations of one TFLite op in ``form``, or a ``CpuOp`` with the reason it stays on
    the CPU (``parallel_means``: see ``lower``). A form the op does not have is its plain one."""
    reason = unsupported_reason(op)
    if reason is None and op.type not in _CONVERTERS:
        reason = f"{op.type} is not lowered by npuplan"
    if reason is not None:
        return (CpuOp(op, reason),)
    if parallel_means and op.type == "MEAN":
        return with_fused_lut(op, convert_mean(op, parallel=True))
    lowered = with_fused_lut(op, _converted(op, form.name))
    staged = staged_output(op, lowered) if form.staged else None
    return lowered if staged is None else staged


def _converted(op: Op, name: str) -> tuple[LoweredOp, ...]:
    """``op`` converted in its type's other form ``name`` (``_OTHER_FORMS``) where it has it, else
    plainly (``_CONVERTERS``)."""
    found = next((f for f in _OTHER_FORMS.get(op.type, ()) if f[0] == name), None) if name else None
    other = found[2](op) if found is not None and found[1](op) else None
    return other if other is not None else _CONVERTERS[op.type](op)


# Per operator type, its other forms: each a name, whether an op has it (cheaper than lowering to
# find out), and that form. The staged form of each (``staged_writes``) is not listed: any op
# writing its output in short runs has it.
_OTHER_FORMS: dict[str, tuple[tuple[str, Callable[[Op], bool], Callable[[Op], tuple[NpuOp, ...] | None]], ...]] = {
    "CONV_2D": (("phased", splits_in_phases, convert_phased),),
    "DEPTHWISE_CONV_2D": (("phased", splits_in_phases, convert_phased),),
    "TRANSPOSE": (
        ("convolutions", has_convolution_form, lambda op: convert_transpose(op, convolutions=True)),
        ("other_order", lambda op: has_steps(op, StepForm.OTHER_ORDER),
         lambda op: convert_transpose(op, steps=StepForm.OTHER_ORDER)),
        ("other_order_convolutions", lambda op: has_convolution_form(op, StepForm.OTHER_ORDER),
         lambda op: convert_transpose(op, convolutions=True, steps=StepForm.OTHER_ORDER)),
        *((f"{split.value}_convolutions", partial(has_convolution_form, steps=split),
           partial(convert_transpose, convolutions=True, steps=split))
          for split in (StepForm.SPLIT_MATRIX_3, StepForm.SPLIT_MATRIX_2)),
    ),
    "MIRROR_PAD": (("through_rows", pads_columns, lambda op: convert_mirror_pad(op, through_rows=True)),),
    **{kind: (("depthwise", has_depthwise_form, partial(convert_resize, depthwise=True)),)
       for kind in ("RESIZE_NEAREST_NEIGHBOR", "RESIZE_BILINEAR")},
}


def op_forms(op: Op, *, stageable: bool) -> tuple[Form, ...]:
    """The other forms ``lower``'s ``other_forms`` may give a TFLite op (of the rewritten graph),
    cheaper than lowering to find out: a convolution of a dilation the hardware does not run in
    phases (``splits_in_phases``), a TRANSPOSE with a step a convolution may do
    (``has_convolution_form``) or two steps in the other order or a matrix split in three steps
    (``has_steps``; each of those with tile convolutions too), a
    MIRROR_PAD of left or right padding through rows (``pads_columns``), a resize copying by
    depthwise convolutions (``has_depthwise_form``); with ``stageable`` (its
    plain operations write in short runs, ``staged_writes.writes_in_short_runs``) each of those
    and the plain form staged too."""
    named = [name for name, applies, _ in _OTHER_FORMS.get(op.type, ()) if applies(op)]
    staged = [Form("", True), *(Form(name, True) for name in named)] if stageable else []
    return (*(Form(name) for name in named), *staged)


def form_choices(ops: Sequence[Op], stageable: frozenset[int]) -> tuple[OtherForms, ...]:
    """The ``other_forms`` that together offer every other form of ``ops`` (``op_forms``; the
    indices in ``stageable`` stageable): the ``k``-th gives each op its ``k``-th other form."""
    forms = {op.index: op_forms(op, stageable=op.index in stageable) for op in ops}
    count = max((len(f) for f in forms.values()), default=0)
    return tuple(frozenset((i, f[k]) for i, f in forms.items() if len(f) > k) for k in range(count))


def stageable_sources(lowered: LoweredGraph) -> frozenset[int]:
    """The TFLite operators (by index) some of whose NPU operations in ``lowered`` write in short
    runs (``writes_in_short_runs``): those a staged form may change."""
    return frozenset(o.source_index for o in lowered.npu_ops if writes_in_short_runs(o))


def rewrite_graph(graph: Graph, accelerator: Accelerator, *, deployable: bool = False,
                  fold_leaky: bool = True, fuse_luts: bool = True,
                  unfolded: frozenset[int] = frozenset()) -> tuple[Graph, tuple[tuple[str, str], ...]]:
    """Run the graph-level passes in order; return the graph and every op they removed.
    ``deployable`` fuses only the activations the emitter can express (``lowering.deployable``).
    ``unfolded``: indices of TRANSPOSEs left as declared, with their reshapes (the emitter refused
    their steps: as declared they can stay on the CPU).
    ``fold_leaky``: ``max(x, x * alpha)`` becomes one LEAKY_RELU table (``mul_max``); without it the
    MUL and MAXIMUM stay two elementwise ops (which is faster depends on the accelerator: the planner
    prices both, ``api.PreparedModel.variants``). Without ``fuse_luts`` table activations stay
    standalone ops (``fuse_activations``' ``luts``)."""
    removed: tuple[tuple[str, str], ...] = ()
    graph, gone = fold_shape_ops(graph)
    removed += gone
    graph, gone = fold_constants(graph)
    removed += gone
    graph, gone = fold_upsampling(graph, repeats=not deployable)
    removed += gone
    graph, gone = fold_dilated_convolutions(graph)
    removed += gone
    graph, gone = fold_pack_reshapes(graph)
    removed += gone
    graph, gone = fold_transpose_views(graph, deployable=deployable, skip=unfolded)
    removed += gone
    if fold_leaky:
        graph, gone = fold_mul_max(graph)
        removed += gone
    graph, gone = drop_noop_reshapes(graph)
    removed += gone
    graph, gone = drop_noop_means(graph)
    removed += gone
    graph, gone = fold_pads(graph)
    removed += gone
    graph, gone = materialise_broadcast_constants(graph)
    removed += gone
    graph, gone = fuse_activations(graph, accelerator, only=FUSABLE_STANDALONE if deployable else None,
                                   emitted=deployable, luts=fuse_luts)
    removed += gone
    graph, _ = split_patch_rows(graph)  # a batch of rows of patches, which split_batches splits
    graph, batched = split_batches(graph)
    if batched:  # the batch elements' row views meet: the reshapes between them cancel
        graph, gone = drop_noop_reshapes(graph)
        removed += gone
    return vela_order(graph), removed


def _placed(ops: tuple[LoweredOp, ...], outputs: tuple[Tensor, ...], concat_writes: bool,
            framed_writes: bool = True, vector_slice_reads: bool = True, framed_reads: bool = True,
            ) -> tuple[LoweredOp, ...]:
    """Kernel ops in their own OFM views; slices read where they lie (by fully-connected layers too
    with ``vector_slice_reads``); with ``concat_writes``, concatenated slices written in place; an
    edge-padded op's input written in bricks by its producer where it can (``fuse_edge_copies``)."""
    ops = fuse_reshape_reads(ops, outputs, framed_writes=framed_writes, framed_reads=framed_reads)
    ops = fuse_slice_reads(kernel_ofm_views(ops), outputs, vector_products=vector_slice_reads)
    return fuse_edge_copies(fuse_concat_writes(ops, outputs) if concat_writes else ops, outputs)


def lower(model: Model, accelerator: Accelerator, *, concat_writes: bool = False,
          deployable: bool = False, cpu_ops: frozenset[int] = frozenset(), fold_leaky: bool = True,
          max_trees: bool = False, parallel_means: bool = False, vela_forms: bool = False,
          flat_elementwise: bool = True, flat_pools: bool = True, fuse_luts: bool = True,
          other_forms: OtherForms = frozenset(), vector_slice_reads: bool = True,
          framed_reads: bool = True) -> LoweredGraph:
    """Lower the main subgraph of ``model`` for ``accelerator``. With ``concat_writes`` the
    producers of concatenated inputs write their slices directly where they can
    (``memory_ops.fuse_concat_writes``): no copy, but those producers cannot be cascaded, so
    whether it pays is the planner's choice. With ``deployable`` only what the emitter can express
    runs on the NPU (``lowering.deployable``); an op the graph passes rewrote cannot fall back to the
    CPU there (its TFLite form is gone), so that raises ``EmitError``. ``cpu_ops`` are TFLite operator
    indices a deployable plan also keeps on the CPU (the emitter refused them). ``fold_leaky``, ``fuse_luts``: see
    ``rewrite_graph``. ``max_trees``: each REDUCE_MAX over depth alone runs as a tree of MAXIMUMs
    rather than one pool (``lowering.reduce_max``). ``parallel_means``: a MEAN of a whole map
    sums its rows in parallel (``mean.parallel_rows``). With ``vela_forms`` some operations take
    the forms Vela's default core gives them: standalone LUT activations run as 1x1 average pools
    where the accelerator allows it (``activations.standalone_luts_as_pools``), a SUM over depth is
    one convolution writing its output (``mean.rescaled_sums``) and elementwise ops
    of a depth that fills no brick run over a 16-deep view (``ofm_views.flat_elementwise_views``,
    unless not ``flat_elementwise``; pools copying element for element too unless not ``flat_pools``): fewer cycles for the op, but not always for the plan (the
    forms cascade, overlap and store their maps differently), so that too is the planner's choice.
    ``other_forms``: the operators of these indices (of the rewritten graph, ``NpuOp.source_index``)
    take these forms (``op_forms``), the planner pricing each per op: a convolution of a
    dilation above 2 runs one operation per phase over strided views (``dilation_phases``: their
    own taps, but several smaller operations, whole and in no cascade) rather than one over a
    kernel spread with zero taps; a TRANSPOSE transposes its matrix steps by tile convolutions
    rather than 1x1 pools (``transposes``: eight channels a micro-block rather than one, but a
    kernel of several rows reading one-channel maps, written in short runs), or runs its two steps
    in their other order (another matrix, another swap depth); a MIRROR_PAD pads its
    rows in an intermediate map first (``memory_ops.convert_mirror_pad``'s ``through_rows``: one
    more copy, but only three touch the output); an op writing its output in short runs (a
    TRANSPOSE's steps, a half-pixel RESIZE_BILINEAR's phases) writes an intermediate map, then
    one copy writes the output in whole rows (``staged_writes``: one more copy, but the output's
    memory sees long bursts only).
    ``vector_slice_reads``: fully-connected layers read slices, splits and unpacks where they lie
    (no copy; the source lives until the last of them), else through copies. ``framed_reads``: an
    op reading rows of a reshape that keeps the rows reads them in the reshape's input
    (``memory_ops.fuse_reshape_reads``: no copy, but the input's format and bursts), else the copy."""
    stage = lowered_ops(model, accelerator, deployable=deployable, cpu_ops=cpu_ops, fold_leaky=fold_leaky,
                        max_trees=max_trees, parallel_means=parallel_means, fuse_luts=fuse_luts,
                        other_forms=other_forms)
    return placed(stage, accelerator, concat_writes=concat_writes, vela_forms=vela_forms,
                  flat_elementwise=flat_elementwise, flat_pools=flat_pools, vector_slice_reads=vector_slice_reads,
                  framed_reads=framed_reads)


@record(eq=False)
class LoweredOps:
    """``lower``'s work before it places the ops' reads and writes, the same whether or not
    concatenated slices are then written in place: the lowerings a plan compares share it."""

    source: Graph
    graph: Graph
    removed: tuple[tuple[str, str], ...]
    ops: tuple[LoweredOp, ...]
    deployable: bool
    subgraphs: tuple[Graph, ...]
    signatures: tuple[Signature, ...] = ()


def lowered_ops(model: Model, accelerator: Accelerator, *, deployable: bool = False,
                cpu_ops: frozenset[int] = frozenset(), fold_leaky: bool = True, max_trees: bool = False,
                parallel_means: bool = False, fuse_luts: bool = True,
                other_forms: OtherForms = frozenset()) -> LoweredOps:
    """The first part of ``lower``: the graph passes and each op's NPU operations (the options
    as ``lower``'s)."""
    if len(model.subgraphs) > 1:
        logger.warning("only the main subgraph is lowered; %d other subgraph(s) are not planned (an emitted file "
                       "keeps them as they are, for the CPU)", len(model.subgraphs) - 1)
    source, _ = resolve_dynamic_shapes(model.main)  # a dynamic batch planned as 1: every shape is known
    graph, removed = rewrite_graph(source, accelerator, deployable=deployable, fold_leaky=fold_leaky,
                                   fuse_luts=fuse_luts, unfolded=cpu_ops if deployable else frozenset())
    originals = {id(op) for op in source.ops}
    forms = dict(other_forms)
    ops: list[LoweredOp] = []
    for op in graph.ops:
        try:
            lowered = _form_lowered(op, forms.get(op.index, Form()), parallel_means, deployable)
            if deployable:
                if op.index in cpu_ops:
                    lowered = (CpuOp(op, "kept on the CPU for deployment: the emitter refused its NPU operations"),)
                cpu_safe = id(op) in originals or reshape_invariant(op, source) or folded_inputs_only(op, source)
                lowered = _deployable(op, lowered, cpu_safe)
            ops.extend(primary_input_first(o) if isinstance(o, NpuOp) else o for o in lowered)
        except NpuplanError:
            raise
        except Exception as error:
            mark_op(error, op.name)
            raise
    if max_trees:
        ops = list(reduce_max_trees(tuple(ops)))
    return LoweredOps(source, graph, removed, tuple(ops), deployable, tuple(model.subgraphs[1:]), model.signatures)


def placed(stage: LoweredOps, accelerator: Accelerator, *, concat_writes: bool = False, vela_forms: bool = False,
           flat_elementwise: bool = True, flat_pools: bool = True, vector_slice_reads: bool = True,
           framed_reads: bool = True) -> LoweredGraph:
    """The second part of ``lower``: ``stage``'s ops in the forms asked for, placed (``_placed``)
    and ordered (the options as ``lower``'s)."""
    ops, graph, deployable = stage.ops, stage.graph, stage.deployable
    variables = _variables(ops)
    outputs = graph.outputs + tuple(t for t in variables if t not in graph.outputs)
    ops = drop_unread_writes(ops, outputs)
    formed = rescaled_sums(standalone_luts_as_pools(ops, accelerator)) if vela_forms else ops
    formed = flat_elementwise_views(formed, pools=flat_pools) if vela_forms and flat_elementwise else formed
    placed_ops = _placed(formed, outputs, concat_writes, framed_writes=not deployable,
                         vector_slice_reads=vector_slice_reads, framed_reads=framed_reads)
    return LoweredGraph(
        name=stage.source.name,
        ops=gather_split_writes(placed_ops) if deployable else vela_pass_order(placed_ops, outputs),
        inputs=graph.inputs + tuple(t for t in variables if t not in graph.inputs),
        outputs=outputs,
        tflite_op_count=len(stage.source.ops),
        removed=stage.removed,
        subgraphs=stage.subgraphs,
        signatures=stage.signatures,
    )


def may_take_vela_forms(lowered: LoweredGraph, accelerator: Accelerator) -> bool:
    """Whether ``lower``'s ``vela_forms`` may change any operation of ``lowered`` (a lowering
    without them): a standalone LUT where the accelerator runs it as a pool, an elementwise op to
    flatten. Cheaper than lowering again to find out."""
    luts = accelerator.shram_reserved_unused_banks > 0
    return any(flattens(o) or (luts and standalone_lut(o)) for o in lowered.npu_ops) or rescales_sums(lowered.ops)


def _variables(ops: Sequence[LoweredOp]) -> tuple[Tensor, ...]:
    """The variable tensors the ops read (an LSTM's or SVDF's state, on the NPU or the CPU), in
    order of first use. They hold data from before the inference and must keep it after, in bytes
    nothing else uses between invocations: as TensorFlow Lite Micro gives them the whole
    invocation's lifetime (and Vela's live ranges do), they are planned as inputs that are also outputs."""
    read = (t for o in ops for t in ((o.ifm, o.ifm2) if isinstance(o, NpuOp) else o.op.inputs))
    return tuple(dict.fromkeys(t for t in read if t is not None and t.is_variable))


def _form_lowered(op: Op, form: Form, parallel_means: bool, deployable: bool) -> tuple[LoweredOp, ...]:
    """``lower_op`` of ``op`` in ``form``; in a ``deployable`` lowering, its plain form where the
    emitter cannot write some operation of that form (a form is a choice the planner prices, never
    a reason to leave an operator to the CPU)."""
    lowered = lower_op(op, parallel_means=parallel_means, form=form)
    if deployable and form != Form() and any(isinstance(o, CpuOp) for o in deployable_ops(op, lowered)):
        return lower_op(op, parallel_means=parallel_means)
    return lowered


def _deployable(op: Op, lowered: tuple[LoweredOp, ...], original: bool) -> tuple[LoweredOp, ...]:
    """``deployable_ops`` of ``op``; an op rewritten by the graph passes cannot go back to the CPU."""
    kept = deployable_ops(op, lowered)
    if not original and any(isinstance(o, CpuOp) for o in kept):
        reason = next(o.reason for o in kept if isinstance(o, CpuOp))
        raise EmitError(op.name, f"rewritten by lowering, so it cannot stay on the CPU, and {reason}")
    return kept
