"""The package version, in one place (the package, the reports and the sweep read it)."""

__version__ = "0.1.0"
