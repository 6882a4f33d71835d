"""Run compiled TFLite files on the PC: ``CompiledModel`` (ethos-u operators through the NPU
simulator, CPU operators through LiteRT, the ``run`` extra), ``ReferenceModel`` (a whole model
through LiteRT) and ``check_model`` (plan, emit, and compare the compiled file with the original)."""

from npuplan.run.check import CheckResult, check_model, compare_runs
from npuplan.run.compare import OutputDiff, output_diffs, random_inputs
from npuplan.run.litert import ReferenceModel
from npuplan.run.runner import CompiledModel

__all__ = ["CheckResult", "CompiledModel", "OutputDiff", "ReferenceModel", "check_model", "compare_runs",
           "output_diffs", "random_inputs"]
