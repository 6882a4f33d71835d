"""Sweeps and fits: many plans of the same models, sharing each model's reading, lowering and
weight encodings (``npuplan.api.PreparedModel``).

``points`` expands the command line's option lists into points, ``runner`` plans them (in this
process, in worker processes, or as Ray tasks through ``ray_backend``, the one module that imports
``ray``), ``table`` keeps the sweep CSV (atomic writes, resume by key), ``fit`` searches the
smallest arena cache size reaching an inference rate, and ``command`` is their command line.
"""
