"""Lowering: TFLite graph -> NPU operations and CPU operators (``lower``)."""

from npuplan.lowering.lower import LoweredOps, lower, lower_op, lowered_ops, placed, rewrite_graph
from npuplan.lowering.support import unsupported_reason

__all__ = ["LoweredOps", "lower", "lower_op", "lowered_ops", "placed", "rewrite_graph", "unsupported_reason"]
