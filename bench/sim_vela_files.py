"""The NPU simulator (``npuplan.sim.execute_stream``) on Vela's compiled public models, against LiteRT.

For each public scenario (``scenarios.SCENARIOS``, and the dual-core ``DUAL_CORE``) and public model:
compile the model with the Vela CLI beside this interpreter (Vela's default core), run every
``ethos-u`` operator of the compiled file through the simulator (files that keep operators on the
CPU are listed, not run: ``npuplan run`` executes those), run the original through LiteRT, and
print per seed the largest difference and how many output elements differ (each output against
the nearer of LiteRT's reference and optimised kernels, which differ by one on some fully
connected layers; the reference kernels abort on some models, then the optimised ones alone),
the simulator's seconds (seed 0: the first inference, which decodes the weights; later seeds reuse
them) and the machine layer's own seconds on a first inference (the same run with a datapath that
returns zeros). Prints figures; asserts nothing.

Usage: python bench/sim_vela_files.py [--models DIR] [--scenario NAME ...] [--model NAME ...] [--seeds N]
"""

from __future__ import annotations

import argparse
import multiprocessing
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from scenarios import DUAL_CORE, SCENARIOS

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))
sys.path.insert(0, str(HERE.parent))

import npuplan.sim.datapath as datapath  # noqa: E402
from npuplan.sim import weights  # noqa: E402
from bench.vela_files import ethos_u_only, litert_outputs, run_compiled, seeded_inputs  # noqa: E402

FLAGS = {"accelerator_config": "--accelerator-config", "system_config": "--system-config",
         "memory_mode": "--memory-mode", "optimise": "--optimise"}


def compile_file(vela: str, model: Path, options: dict[str, str], out: Path) -> bytes | str:
    """Vela's compiled file, or its last output line when it fails."""
    flags = [a for key, value in options.items() for a in (FLAGS[key], value)]
    run = subprocess.run([vela, str(model), "--output-dir", str(out), *flags], capture_output=True, text=True,
                         timeout=1800)
    compiled = out / f"{model.stem}_vela.tflite"
    if run.returncode or not compiled.exists():
        return (run.stdout + run.stderr).strip().splitlines()[-1]
    return compiled.read_bytes()


def _zeros(op: str, param: int, regs: dict[str, int], ifm: np.ndarray, ifm2: np.ndarray | None = None,
           **_: object) -> np.ndarray:
    return np.zeros((regs["OFM_HEIGHT_M1"] + 1, regs["OFM_WIDTH_M1"] + 1, regs["OFM_DEPTH_M1"] + 1), dtype=np.int64)


def machine_seconds(compiled: bytes, inputs: list[np.ndarray]) -> float:
    """The machine layer's seconds on a first inference (no weights decoded before)."""
    real = datapath.compute
    datapath.compute = _zeros  # type: ignore[assignment]
    weights._VOLUMES.volumes.clear()
    weights._VOLUMES.held = 0
    try:
        start = time.perf_counter()
        run_compiled(compiled, inputs)
        return time.perf_counter() - start
    finally:
        datapath.compute = real


def _oracle(original: bytes, inputs: list[np.ndarray], optimised: bool) -> list[np.ndarray] | None:
    """LiteRT's outputs in a child process (its reference kernels abort on some public models):
    None when the child dies."""
    context = multiprocessing.get_context("fork")
    receive, send = context.Pipe(duplex=False)
    child = context.Process(target=lambda: send.send(litert_outputs(original, inputs, optimised=optimised)))
    child.start()
    found = None
    while found is None and (child.is_alive() or receive.poll()):
        if receive.poll(1):
            found = receive.recv()
    child.join()
    return found if child.exitcode == 0 else None


def differences(compiled: bytes, original: bytes, inputs: list[np.ndarray]) -> tuple[int, int, int, float]:
    """Largest difference, differing elements, elements and the simulator's seconds."""
    start = time.perf_counter()
    got = run_compiled(compiled, inputs)
    seconds = time.perf_counter() - start
    oracles = [found for found in (_oracle(original, inputs, False), _oracle(original, inputs, True)) if found]
    largest = differing = total = 0
    for k, out in enumerate(got):
        values = out.astype(np.int64)
        best = min((np.abs(values - found[k].reshape(out.shape).astype(np.int64)) for found in oracles),
                   key=lambda d: (int(d.max()), int((d > 0).sum())))
        largest, differing, total = max(largest, int(best.max())), differing + int((best > 0).sum()), total + best.size
    return largest, differing, total, seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", type=Path, default=Path("/work/shared/models"))
    parser.add_argument("--scenario", action="append")
    parser.add_argument("--model", action="append")
    parser.add_argument("--seeds", type=int, default=2)
    args = parser.parse_args()
    vela = str(Path(sys.executable).parent / "vela")
    scenarios = {**SCENARIOS, **DUAL_CORE}
    models = sorted(p for p in args.models.glob("*.tflite") if not args.model or p.stem in args.model)
    print("scenario model seed largest_difference differing/elements sim_s machine_s")
    for name, options in scenarios.items():
        if args.scenario and name not in args.scenario:
            continue
        for model in models:
            with tempfile.TemporaryDirectory() as tmp:
                compiled = compile_file(vela, model, options, Path(tmp))
            if isinstance(compiled, str):
                print(f"{name} {model.stem} vela failed: {compiled}", flush=True)
                continue
            if not ethos_u_only(compiled):
                print(f"{name} {model.stem} has CPU operators: not run here (npuplan run executes them)", flush=True)
                continue
            original = model.read_bytes()
            weights._VOLUMES.volumes.clear()  # each file's first inference decodes its weights
            weights._VOLUMES.held = 0
            for seed in range(args.seeds):
                inputs = seeded_inputs(original, seed)
                largest, differing, total, seconds = differences(compiled, original, inputs)
                machine = machine_seconds(compiled, inputs) if seed == 0 else float("nan")
                print(f"{name} {model.stem} {seed} {largest} {differing}/{total} {seconds:.2f} {machine:.2f}",
                      flush=True)


if __name__ == "__main__":
    main()
