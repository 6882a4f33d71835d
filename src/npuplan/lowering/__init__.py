"""Lowering: TFLite graph -> NPU operations and CPU operators (``lower``)."""

from npuplan.lowering.lower import lower, lower_op, rewrite_graph
from npuplan.lowering.support import unsupported_reason

__all__ = ["lower", "lower_op", "rewrite_graph", "unsupported_reason"]
