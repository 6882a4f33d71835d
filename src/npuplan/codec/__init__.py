"""The NPU's weight format, owned here and shared by the cost model and the emitter: the order the
NPU reads a core's weights in (``brick_order``; ``weight_order`` for the encoder's walk and padding
as the size model counts it), the coded symbols (``symbols``), the chunked bit layout
(``chunks``, ``bits``), the encoder (``encode``), the decoder (``decode``) and the size of a stream
from a histogram of its values (``size``)."""
