"""The methods ``@record`` generates (``__init__``, ``__eq__``/``__hash__``, orderings), as ``dataclass``
writes them, each source text compiled once per shape rather than once per class.

The source ``dataclass`` writes for a method differs between classes in names only: the field
names (parameters, attributes, the strings ``__init__`` passes to ``object.__setattr__``) and the
globals holding defaults and factories. Here a source is written with placeholder names (field
``i`` is ``_rf_i``; its default and factory are the globals ``__r_default_i``, ``__r_factory_i``),
compiled once per shape (what each field is: a parameter with or without a default, a factory, not
in ``__init__``; which fields are compared), and its code objects renamed for each class with
``CodeType.replace``: the same bytecode as that class's own source compiles to, so the same speed
and the same hash values, without compiling source text for every class (~0.7 M instructions a
method, issue 26: start-up; a 3-op plan made ~110 of them in ~60 shapes).
"""

from __future__ import annotations

import builtins
import dataclasses
import types
from collections.abc import Callable
from typing import Any

_Methods = dict[str, Callable[..., Any]]
FACTORY = object()  # the __init__ default of a field built by its default_factory
ORDERINGS = {"__lt__": "<", "__le__": "<=", "__gt__": ">", "__ge__": ">="}
_PREFIX = "_rf_"  # placeholder field names: _rf_0, _rf_1, ...
_templates: dict[tuple[object, ...], dict[str, types.CodeType]] = {}


def init(cls: type, _family: tuple[str, ...]) -> _Methods:
    """``__init__`` as ``dataclass`` writes it for a frozen class."""
    fields = dataclasses.fields(cls)
    namespace: dict[str, Any] = {"__builtins__": builtins, "__r_set": object.__setattr__, "__r_factory": FACTORY}
    kinds, defaults = [], []
    for i, f in enumerate(fields):
        has_factory = f.default_factory is not dataclasses.MISSING
        has_default = f.default is not dataclasses.MISSING
        namespace[f"__r_default_{i}"], namespace[f"__r_factory_{i}"] = f.default, f.default_factory
        kinds.append(("f" if has_factory else "d" if has_default else "p") + ("" if f.init else "-"))
        if f.init and (has_factory or has_default):
            defaults.append(FACTORY if has_factory else f.default)
    shape = ("__init__", tuple(kinds), hasattr(cls, "__post_init__"))
    return _renamed(cls, shape, _init_source, fields, namespace, tuple(defaults) or None)


def comparisons(cls: type, family: tuple[str, ...]) -> _Methods:
    """``__eq__`` and ``__hash__`` as ``dataclass`` writes them for a frozen class (those in ``family``)."""
    fields = dataclasses.fields(cls)
    compared = tuple(i for i, f in enumerate(fields) if f.compare)
    hashed = tuple(i for i, f in enumerate(fields) if (f.compare if f.hash is None else f.hash))
    return _renamed(cls, (family, compared, hashed), _comparisons_source, fields, {"__builtins__": builtins})


def orderings(cls: type, family: tuple[str, ...]) -> _Methods:
    """``<``, ``<=``, ``>``, ``>=`` as ``dataclass(order=True)`` writes them: the compared fields as tuples."""
    fields = dataclasses.fields(cls)
    compared = tuple(i for i, f in enumerate(fields) if f.compare)
    return _renamed(cls, ("order", family, compared), _orderings_source, fields, {"__builtins__": builtins})


def _renamed(cls: type, shape: tuple[Any, ...], source: Callable[..., str],
             fields: tuple[dataclasses.Field[Any], ...], namespace: dict[str, Any],
             defaults: tuple[Any, ...] | None = None) -> _Methods:
    """The functions of ``shape``'s template, their placeholders renamed to ``fields``' names,
    bound to ``namespace`` and named as methods of ``cls``."""
    template = _templates.get(shape)
    if template is None:
        made: dict[str, Any] = {}
        exec(source(*shape), {"__r_factory": FACTORY}, made)  # noqa: S102 - text built from placeholders only
        template = _templates[shape] = {name: method.__code__ for name, method in made.items()}
    names = {f"{_PREFIX}{i}": f.name for i, f in enumerate(fields)}
    methods: _Methods = {}
    for name, code in template.items():
        code = code.replace(co_varnames=tuple(names.get(n, n) for n in code.co_varnames),
                            co_names=tuple(names.get(n, n) for n in code.co_names),
                            co_consts=tuple(names.get(c, c) if type(c) is str else c for c in code.co_consts))
        method = types.FunctionType(code, namespace, name, defaults if name == "__init__" else None)
        method.__qualname__ = f"{cls.__qualname__}.{name}"
        method.__module__ = cls.__module__
        methods[name] = method
    return methods


def _init_source(_name: str, kinds: tuple[str, ...], post_init: bool) -> str:
    params, lines = [], []
    for i, kind in enumerate(kinds):
        name, in_init = f"{_PREFIX}{i}", not kind.endswith("-")
        if kind[0] == "f":
            value = f"__r_factory_{i}() if {name} is __r_factory else {name}" if in_init else f"__r_factory_{i}()"
        else:
            value = name if in_init else (f"__r_default_{i}" if kind[0] == "d" else "")
        if in_init:
            params.append(name if kind[0] == "p" else f"{name}=__r_factory")
        if value:
            lines.append(f"    __r_set(self, {name!r}, {value})")
    if post_init:
        lines.append("    self.__post_init__()")
    body = "\n".join(lines) or "    pass"
    return f"def __init__(self, {', '.join(params)}):\n{body}\n"


def _attributes(owner: str, indices: tuple[int, ...]) -> str:
    return "".join(f"{owner}.{_PREFIX}{i}," for i in indices)


def _comparisons_source(family: tuple[str, ...], compared: tuple[int, ...], hashed: tuple[int, ...]) -> str:
    source = {"__eq__": "def __eq__(self, other):\n    if other.__class__ is self.__class__:\n"
                        f"        return ({_attributes('self', compared)}) == ({_attributes('other', compared)})\n"
                        "    return NotImplemented\n",
              "__hash__": f"def __hash__(self):\n    return hash(({_attributes('self', hashed)}))\n"}
    return "".join(source[name] for name in family)


def _orderings_source(_kind: str, family: tuple[str, ...], compared: tuple[int, ...]) -> str:
    mine, other = _attributes("self", compared), _attributes("other", compared)
    return "".join(f"def {name}(self, other):\n    if other.__class__ is self.__class__:\n"
                   f"        return ({mine}) {ORDERINGS[name]} ({other})\n    return NotImplemented\n" for name in family)
