"""Cascades: chains of ops run stripe by stripe with rolling buffers."""

from __future__ import annotations

from npuplan.hw.memory import Architecture
from npuplan.options import Optimise
from npuplan.schedule.decisions import Decisions
from npuplan.schedule.network import Network
from npuplan.schedule.oracle import CostOracle


def build_cascades(
    net: Network, dec: Decisions, arch: Architecture, oracle: CostOracle, budget: int, optimise: Optimise,
) -> Decisions:
    return dec
