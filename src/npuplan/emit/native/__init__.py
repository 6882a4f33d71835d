"""npuplan's own implementation of the part of Vela's API the emitter uses (no Vela imports here)."""
