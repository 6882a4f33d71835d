"""``npuplan estimate COMPILED.tflite``: time any compiled Ethos-U file (npuplan's or Vela's) with
npuplan's cost model, from the operations, DMAs and waits its command streams really contain.

``read`` decodes the file (``regstream``), ``queries`` turns each NPU operation into the cost
model's query, ``timeline`` times the stream on the NPU and DMA engines as its waits order them,
``report`` writes the figures as ``npuplan plan`` does.
"""

from npuplan.estimate.run import Estimate, estimate_file

__all__ = ["Estimate", "estimate_file"]
