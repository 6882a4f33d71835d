"""``--list-config-files`` and ``--list-configs``: the config files npuplan ships and their sections,
printed as Vela 5.2 prints its own (``Arm/vela.ini`` is npuplan's bundled copy of Vela's file)."""

from __future__ import annotations

from pathlib import Path

from npuplan.errors import ConfigError
from npuplan.hw.ini import BUNDLED_ALIASES, bundled_text, parse_ini


def config_files_lines() -> list[str]:
    """``--list-config-files``: the names ``--config`` accepts without a path."""
    return ["Available config files:", *BUNDLED_ALIASES]


def configs_lines(name: str) -> list[str]:
    """``--list-configs NAME``: every section of the config file ``NAME`` (a path, or a name
    ``--list-config-files`` lists). ``ConfigError`` when it is not found or not an ``.ini`` file."""
    path = Path(name)
    if path.is_file():
        if path.suffix != ".ini":
            raise ConfigError(f"Specified file {name} is not a Vela config file")
        try:
            text, where = path.read_text(encoding="utf-8"), name
        except (OSError, UnicodeDecodeError) as error:
            raise ConfigError(f"cannot read config file {name}: {error}") from None
    elif name.replace("\\", "/") in BUNDLED_ALIASES:
        text, where = bundled_text(), name
    else:
        raise ConfigError(f"Cannot find config file {name}")
    return [f"Configurations defined in {where}:", *(f"   {section}" for section in parse_ini(text, where))]
