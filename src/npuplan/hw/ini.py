"""Reading Vela-format ``.ini`` files into plain sections, with ``inherit=`` resolution.

Semantics follow Vela's use of ``configparser``: section names are case-sensitive, keys are not;
within one file a repeated section or key is an error; across files read together, a later file's
keys override an earlier file's keys of the same section. A section's own keys override the keys
it inherits (``inherit=Memory_Mode.Dedicated_Sram``); inheritance may chain but must not loop.

Bundled sections (``hw/vela.ini``) form a lower layer: a section that a user file defines
replaces the bundled section of the same name entirely, so a user file means what it would mean
to Vela given that file alone.
"""

from __future__ import annotations

import configparser
from collections.abc import Iterable, Mapping
from pathlib import Path

from npuplan.errors import ConfigError
from npuplan.records import record

BUNDLED_NAME = "vela.ini"
# Vela resolves ``--config Arm/vela.ini`` to its own shipped file; ours is the same content.
BUNDLED_ALIASES = ("Arm/vela.ini",)


@record
class IniSection:
    """One section: its name, the file it came from and its keys (lower-case) to raw values."""

    name: str
    source: str
    values: Mapping[str, str]


@record(eq=False)
class IniDatabase:
    """All sections visible to a build, by exact section name."""

    sections: Mapping[str, IniSection]

    def has(self, name: str) -> bool:
        return name in self.sections

    def resolve(self, name: str) -> dict[str, str]:
        """Keys of section ``name`` with its ``inherit=`` chain applied (own keys win).

        Raises ``ConfigError`` for a missing section, a missing parent or an inheritance loop.
        """
        chain = self._chain(name)
        merged: dict[str, str] = {}
        for section in reversed(chain):
            merged.update(section.values)
        merged.pop("inherit", None)
        return merged

    def source_of(self, name: str, key: str) -> str:
        """The file that supplies ``key`` to section ``name`` (after inheritance)."""
        for section in self._chain(name):
            if key in section.values:
                return section.source
        return self.sections[name].source

    def _chain(self, name: str) -> list[IniSection]:
        if name not in self.sections:
            raise ConfigError(f"section [{name}] not found in the config file(s)")
        chain: list[IniSection] = []
        seen: list[str] = []
        current = name
        while True:
            section = self.sections[current]
            chain.append(section)
            seen.append(current)
            parent = section.values.get("inherit")
            if parent is None:
                return chain
            parent = parent.strip()
            if parent in seen:
                loop = " -> ".join([*seen, parent])
                raise ConfigError(f"{section.source}: [{current}] inherit={parent} forms a loop ({loop})")
            if parent not in self.sections:
                raise ConfigError(f"{section.source}: [{current}] inherit={parent}: no such section")
            current = parent


def bundled_text() -> str:
    """The text of the bundled ``vela.ini``.

    Read beside this module rather than through ``importlib.resources``, whose readers import
    ``zipfile`` on every start-up; npuplan installs as plain files (setuptools package-data)."""
    return (Path(__file__).resolve().parent / BUNDLED_NAME).read_text(encoding="utf-8")


def parse_ini(text: str, source: str) -> dict[str, IniSection]:
    """Parse one file's text; ``ConfigError`` naming ``source`` on any syntax error."""
    parser = configparser.ConfigParser(interpolation=None, strict=True)
    try:
        parser.read_string(text, source=source)
    except configparser.Error as exc:
        first_line = " ".join(str(exc).split())
        raise ConfigError(f"{source}: invalid .ini syntax: {first_line}") from None
    return {
        name: IniSection(name, source, {k: v for k, v in parser.items(name, raw=True)})
        for name in parser.sections()
    }


def _read_user_file(path_text: str) -> tuple[str, str]:
    """(source label, text) of a user ``--config`` file."""
    if path_text.replace("\\", "/") in BUNDLED_ALIASES and not Path(path_text).is_file():
        return path_text, bundled_text()
    path = Path(path_text)
    if path.suffix != ".ini":
        raise ConfigError(f"{path_text}: configuration files must use the .ini extension")
    try:
        return path_text, path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else type(exc).__name__
        raise ConfigError(f"{path_text}: cannot read config file ({reason})") from None


def merge_user_sections(files: Iterable[tuple[str, str]]) -> dict[str, IniSection]:
    """Sections of several user files read as one group (later keys override earlier keys)."""
    merged: dict[str, IniSection] = {}
    for source, text in files:
        for name, section in parse_ini(text, source).items():
            if name in merged:
                values = {**merged[name].values, **section.values}
                merged[name] = IniSection(name, section.source, values)
            else:
                merged[name] = section
    return merged


def load_database(config_files: Iterable[str] = ()) -> IniDatabase:
    """The bundled sections overlaid with the sections of ``config_files`` (in order)."""
    sections = dict(parse_ini(bundled_text(), f"<bundled {BUNDLED_NAME}>"))
    user = merge_user_sections(_read_user_file(p) for p in config_files)
    sections.update(user)
    return IniDatabase(sections)
