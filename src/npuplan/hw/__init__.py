"""Hardware: accelerator presets, system configs and memory modes (Vela .ini format), block configs."""

from npuplan.hw.build import build_architecture

__all__ = ["build_architecture"]
