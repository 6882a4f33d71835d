"""Vela 5.2's command line, option for option: ``npuplan MODEL.tflite [any Vela option]``.

Every option of ``vela --help`` (5.2.0) is here, with Vela's name, type, choices and default. Each is
one of: *used* with Vela's meaning; *deprecated* in Vela too (accepted, Vela's warning printed,
no effect, as in Vela); *no equivalent* (a debug dump of Vela's internals: accepted, one note on
stderr says npuplan has nothing to print for it); or *refused* in one line saying why it has no
meaning for npuplan (status 2, a command-line error). ``REFUSED`` and ``NO_EQUIVALENT`` are the
one place those reasons live; ``docs/vela-compatibility.md`` lists them.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any, NoReturn

from npuplan.cli_options import size_bytes
from npuplan.hw.accelerator import ACCELERATORS
from npuplan.options import DEFAULT_CONFIG, Optimise, TensorAllocator

VELA_DEFAULT_ACCELERATOR = "ethos-u55-256"
U85_CONFIGS = ("ethos-u85-128", "ethos-u85-256", "ethos-u85-512", "ethos-u85-1024", "ethos-u85-2048")
ACCELERATOR_CHOICES = (*ACCELERATORS, *U85_CONFIGS)
DEFAULT_SOFTMAX_INT16_RANGE = 10.0

# Vela's debug dumps of its own internal structures: npuplan has no such structure to print.
NO_EQUIVALENT = {
    "verbose_config": "npuplan prints the system config it used in the summary",
    "verbose_graph": "npuplan has no graph-optimiser trace (--show-cpu-operations lists each op's placement)",
    "verbose_quantization": "npuplan has no quantization trace",
    "verbose_tensor_format": "npuplan has no tensor-format trace (npuplan plan writes the formats in <network>_plan.json)",
    "verbose_schedule": "npuplan has no schedule trace (npuplan plan writes the schedule in <network>_plan.json)",
    "verbose_allocation": "npuplan has no allocation trace (npuplan plan writes every address in <network>_plan.json)",
    "verbose_high_level_command_stream": "npuplan plan writes the command stream in <network>_plan.json",
    "verbose_register_command_stream": "npuplan validate FILE_vela.tflite replays the register command streams",
    "debug_force_legacy_core": "npuplan has one planner, not Vela's two cores",
}
# Options npuplan refuses: (option, when) -> why it has no meaning for npuplan.
REFUSED = {
    "api_version": "--api-version: npuplan has no Vela external API version (npuplan --version gives its version)",
    "enable_debug_db": "--enable-debug-db: npuplan has no Vela debug database; npuplan plan MODEL.tflite writes "
                       "<network>_plan.json, every op, buffer and command of the plan",
    "force_symmetric_int_weights": "--force-symmetric-int-weights: npuplan keeps the weights' own zero points "
                                   "and does not rewrite a model's quantization",
    "cop_format": "--cop-format COP2: npuplan writes COP1 driver actions only",
    "separate_io_regions": "--separate-io-regions: npuplan writes COP1 driver actions only, with inputs and "
                           "outputs in the arena region (COP2 would be needed)",
    "softmax_range": "--experimental-softmax-int16-neg-exp-range: npuplan's int16 SOFTMAX uses the fixed "
                     f"range {DEFAULT_SOFTMAX_INT16_RANGE} only",
    "u85": "Ethos-U85 is not supported yet: npuplan plans Ethos-U55 and Ethos-U65 (ethos-u55-32/64/128/256, "
           "ethos-u65-256/512)",
}
DEPRECATED_FLAGS = ("verbose_packing", "verbose_tensor_purpose", "verbose_operators", "verbose_progress", "timing",
                    "show_subgraph_io_summary", "debug_force_regor", "disable_chaining", "disable_fwd",
                    "disable_cascading", "disable_buffering", "disable_ifm_reuse")


class VelaUsageError(Exception):
    """A command line Vela would refuse (status 2): the message is one line."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message}\n")


class _Deprecated(argparse.Action):
    """Vela's deprecated options: its warning (on stdout, as Vela prints it), then stored."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        print(f"Warning: Option {option_string} is deprecated and will be removed in a future release.")
        setattr(namespace, self.dest, True if self.nargs == 0 else values)


def _deprecated_flag(p: argparse.ArgumentParser, flag: str, text: str = "[DEPRECATED]") -> None:
    p.add_argument(flag, action=_Deprecated, nargs=0, default=False, help=text)


def vela_parser(prog: str = "npuplan") -> argparse.ArgumentParser:
    """The parser of ``npuplan MODEL.tflite [Vela options]``: Vela 5.2.0's options and defaults."""
    p = _Parser(prog=prog, formatter_class=argparse.ArgumentDefaultsHelpFormatter,
                description="Compile a TFLite network for Arm Ethos-U55/U65 as Vela 5.2 does: the same options, "
                            "defaults, output files and console summary (npuplan's own figures after Vela's). "
                            "npuplan plan MODEL.tflite gives npuplan's richer reports.")
    p.add_argument("--version", action="store_true", help="print npuplan's version and exit")
    p.add_argument("--api-version", action="store_true", help="refused: npuplan has no Vela external API")
    p.add_argument("--supported-ops-report", action="store_true",
                   help="write SUPPORTED_OPS.md (from npuplan's own lowering rules) in the current directory and exit")
    p.add_argument("--list-config-files", action="store_true",
                   help="list the config files npuplan ships (use one with --config) and exit")
    p.add_argument("--list-configs", metavar="CONFIG_FILE", default=None,
                   help="list the sections of a config file (a path, or one --list-config-files names) and exit")
    p.add_argument("network", metavar="NETWORK", nargs="?", default=None, help="the input network (.tflite)")
    p.add_argument("--output-dir", default="output", help="where the output files are written")
    p.add_argument("--output-format", choices=("tflite", "raw"), default="tflite",
                   help="tflite: <network>_vela.tflite; raw: <network>_vela.npz (one NPU partition)")
    p.add_argument("--enable-debug-db", action="store_true", help="refused: npuplan has no Vela debug database")
    p.add_argument("--config", action="append", default=None, metavar="CONFIG",
                   help="Vela configuration file(s) (.ini); Arm/vela.ini is the one npuplan ships")
    p.add_argument("--verbose-all", action="store_true", help="every verbose option")
    for flag in ("config", "graph", "quantization"):
        p.add_argument(f"--verbose-{flag}", action="store_true", help="accepted; no npuplan equivalent (a note says so)")
    _deprecated_flag(p, "--verbose-packing")
    _deprecated_flag(p, "--verbose-tensor-purpose")
    for flag in ("tensor-format", "schedule", "allocation", "high-level-command-stream", "register-command-stream"):
        p.add_argument(f"--verbose-{flag}", action="store_true", help="accepted; no npuplan equivalent (a note says so)")
    _deprecated_flag(p, "--verbose-operators")
    p.add_argument("--verbose-weights", action="store_true", help="print the original and encoded weight sizes")
    p.add_argument("--verbose-cycle-estimate", action="store_true", help="print the cycle estimates")
    p.add_argument("--verbose-performance", action="store_true",
                   help="print the per-layer table and write <network>_per-layer.csv")
    _deprecated_flag(p, "--verbose-progress")
    p.add_argument("--show-cpu-operations", action="store_true", help="list the operators on the CPU and the NPU")
    p.add_argument("--ignore-ops", action="append", metavar="OP[,OP...]", default=None,
                   help="TFLite operator types to keep on the CPU")
    _deprecated_flag(p, "--timing")
    p.add_argument("--force-symmetric-int-weights", action="store_true", help="refused: npuplan keeps zero points")
    p.add_argument("--accelerator-config", choices=ACCELERATOR_CHOICES, default=VELA_DEFAULT_ACCELERATOR,
                   metavar="{" + ",".join(ACCELERATOR_CHOICES) + "}", help="accelerator (Ethos-U85: not supported yet)")
    p.add_argument("--system-config", default=DEFAULT_CONFIG, help="system config section of the config file")
    p.add_argument("--memory-mode", default=DEFAULT_CONFIG, help="memory mode section of the config file")
    p.add_argument("--tensor-allocator", choices=[a.value for a in TensorAllocator], default=TensorAllocator.HILLCLIMB.value,
                   help="address allocator")
    _deprecated_flag(p, "--show-subgraph-io-summary")
    p.add_argument("--max-block-dependency", action=_Deprecated, type=int, choices=range(4), default=3,
                   help="[DEPRECATED] no effect")
    p.add_argument("--optimise", choices=[o.value for o in Optimise], default=Optimise.PERFORMANCE.value,
                   help="what to optimise for")
    p.add_argument("--arena-cache-size", type=size_bytes, default=None, metavar="BYTES",
                   help="arena cache size in bytes (k and M suffixes accepted); default: the memory mode's")
    p.add_argument("--cpu-tensor-alignment", type=int, default=16, metavar="BYTES",
                   help="alignment of CPU tensors (a power of 2, at least 16)")
    p.add_argument("--recursion-limit", action=_Deprecated, type=int, default=1000, help="[DEPRECATED] no effect")
    p.add_argument("--hillclimb-max-iterations", action=_Deprecated, type=int, default=99999,
                   help="[DEPRECATED] no effect")
    p.add_argument("--cop-format", choices=("COP1", "COP2"), default="COP1", help="driver actions format (COP1 only)")
    p.add_argument("--separate-io-regions", action="store_true", help="refused: needs COP2")
    p.add_argument("--experimental-softmax-int16-neg-exp-range", type=float, default=DEFAULT_SOFTMAX_INT16_RANGE,
                   metavar="RANGE", help="int16 SOFTMAX range (the default only)")
    p.add_argument("--debug-force-legacy-core", action="store_true", help="accepted; npuplan has one planner")
    _deprecated_flag(p, "--debug-force-regor")
    for flag in ("chaining", "fwd", "cascading", "buffering", "ifm-reuse"):
        _deprecated_flag(p, f"--disable-{flag}")
    p.add_argument("--debug", action="store_true", help="(npuplan) on an internal error, print the traceback")
    return p


def parse_vela_args(argv: Sequence[str]) -> argparse.Namespace:
    """Parse and check a Vela command line as Vela 5.2 does; raises ``VelaUsageError`` for what
    Vela refuses on its command line and for what npuplan refuses (``REFUSED``)."""
    args = vela_parser().parse_args(list(argv))
    for error in _vela_checks(args):
        raise VelaUsageError(error)
    if args.verbose_all:
        for name in vars(args):
            if name.startswith("verbose_") and name not in DEPRECATED_FLAGS:
                setattr(args, name, True)
    return args


def _vela_checks(args: argparse.Namespace) -> list[str]:
    """The command-line errors Vela reports (status 2), then npuplan's refusals, first first."""
    errors = []
    wanted = args.supported_ops_report or args.list_config_files or args.list_configs or args.version
    if args.network is None and not wanted and not args.api_version:
        errors.append("the following argument is required: NETWORK")
    if args.cop_format == "COP1" and args.separate_io_regions:
        errors.append("Driver actions format 'COP2' is required for --separate-io-regions")
    if not 0 < args.experimental_softmax_int16_neg_exp_range < 65535:
        errors.append(f"Invalid argument to --experimental-softmax-int16-neg-exp-range = "
                      f"{args.experimental_softmax_int16_neg_exp_range}, valid range: (0, 65535)")
    alignment = args.cpu_tensor_alignment
    if alignment < 16 or alignment & (alignment - 1):
        errors.append(f"Invalid argument to --cpu-tensor-alignment = {alignment} (must be greater than or equal "
                      "to 16 and a power of 2)")
    if args.debug_force_legacy_core and args.debug_force_regor:
        errors.append("Cannot force the use of both the deprecated legacy Python compilation core and the Regor C++ "
                      "compilation core at the same time. Please choose only one of these options.")
    errors += [REFUSED[key] for key in _refusals(args)]
    return errors


def _refusals(args: argparse.Namespace) -> list[str]:
    keys = [k for k in ("api_version", "enable_debug_db", "force_symmetric_int_weights", "separate_io_regions")
            if getattr(args, k)]
    if args.cop_format == "COP2" and not args.separate_io_regions:
        keys.append("cop_format")
    if args.experimental_softmax_int16_neg_exp_range != DEFAULT_SOFTMAX_INT16_RANGE:
        keys.append("softmax_range")
    if args.accelerator_config in U85_CONFIGS and args.network is not None:
        keys.append("u85")
    return keys


def no_equivalent_notes(args: argparse.Namespace) -> list[str]:
    """One note per accepted option that has nothing to print in npuplan (one for ``--verbose-all``)."""
    names = [name for name in NO_EQUIVALENT if getattr(args, name, False)]
    if args.verbose_all:
        dumps = ", ".join(f"--{n.replace('_', '-')}" for n in names if n.startswith("verbose_"))
        rest = [n for n in names if not n.startswith("verbose_")]
        return [f"--verbose-all: Vela's debug dumps ({dumps}) have no npuplan equivalent; npuplan plan writes the "
                "schedule, addresses and command stream in <network>_plan.json",
                *(f"--{n.replace('_', '-')} has no npuplan equivalent: {NO_EQUIVALENT[n]}" for n in rest)]
    return [f"--{name.replace('_', '-')} has no npuplan equivalent: {NO_EQUIVALENT[name]}" for name in names]


def ignored_op_types(args: argparse.Namespace) -> frozenset[str]:
    """The TFLite operator types ``--ignore-ops`` keeps on the CPU (Vela's spelling ``ARGMAX`` too)."""
    text = ",".join(args.ignore_ops or ())
    if any(not (c.isalnum() or c in "_,") for c in text):
        raise VelaUsageError("Invalid argument to --ignore-ops: only A-Z, 0-9, '_' and ',' are accepted")
    names = {n.strip().upper() for n in text.split(",") if n.strip()}
    return frozenset("ARG_MAX" if n == "ARGMAX" else n for n in names)
