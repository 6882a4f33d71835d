"""Frozen records: dataclasses whose generated methods are made on first use.

``@record`` is ``@dataclass(frozen=True, slots=True)`` (``@record(eq=False)``, ``@record(slots=False)``
as the flags say) with the same fields, ``dataclasses.fields``/``replace``/``is_dataclass``, the same
``__init__``, ``__eq__`` and ``__hash__`` (the same source text, so the same speed and the same hash
values) and the same ``repr``. What differs is when the methods are made: ``dataclass`` compiles
source text for six methods of every class when its module loads (about 0.7 M instructions each,
two thirds of the program's import, issue 26: start-up), most of them for classes a run never builds
or compares. Here ``__init__`` is compiled when the first instance is built, ``__eq__`` and
``__hash__`` when one is first compared or hashed; ``__repr__``, ``__setattr__``/``__delattr__``
(assigning a field raises ``FrozenInstanceError``) and pickling need no source text at all.
"""

from __future__ import annotations

import dataclasses
import functools
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar, overload

if TYPE_CHECKING:  # the checker targets Python 3.10, whose typing module lacks it
    from typing_extensions import dataclass_transform
elif sys.version_info >= (3, 11):
    from typing import dataclass_transform
else:  # pragma: no cover - exercised only on 3.10

    def dataclass_transform(**_kwargs: Any) -> Callable[[Any], Any]:
        return lambda f: f


_T = TypeVar("_T", bound=type)
_Methods = dict[str, Callable[..., Any]]
_FACTORY = object()  # the __init__ default of a field built by its default_factory
_ORDERINGS = {"__lt__": "<", "__le__": "<=", "__gt__": ">", "__ge__": ">="}


@overload
@dataclass_transform(frozen_default=True, field_specifiers=(dataclasses.field, dataclasses.Field))
def record(cls: _T, /) -> _T: ...


@overload
def record(*, eq: bool = True, order: bool = False, slots: bool = True) -> Callable[[_T], _T]: ...


def record(cls: Any = None, /, *, eq: bool = True, order: bool = False, slots: bool = True) -> Any:
    """A frozen dataclass (``eq``: compared and hashed by its fields; ``order``: ``<`` and the like,
    field by field, as ``dataclass(order=True)``; ``slots``: ``__slots__``)."""
    if cls is None:
        return functools.partial(_make, eq=eq, order=order, slots=slots)
    return _make(cls, eq=eq, order=order, slots=slots)


def _make(cls: Any, *, eq: bool, order: bool, slots: bool) -> Any:
    own = dict(cls.__dict__)
    if "__setattr__" in own or "__delattr__" in own:
        raise TypeError(f"record {cls.__name__} defines __setattr__ or __delattr__")
    if order and (not eq or any(name in own for name in _ORDERINGS)):
        raise TypeError(f"record {cls.__name__}: order needs eq and no ordering method of its own")
    if not own.get("__doc__"):
        cls.__doc__ = f"{cls.__name__}({', '.join(own.get('__annotations__', {}))})"
    cls = dataclasses.dataclass(cls, init=False, repr=False, eq=False, slots=slots)
    setattr(cls, "__dataclass_params__", _params(eq, order, slots))
    fields = dataclasses.fields(cls)
    _check_fields(cls, fields)
    methods: _Methods = {"__repr__": _repr(fields), "__setattr__": _frozen, "__delattr__": _frozen}
    if "__init__" not in own:
        methods["__init__"] = _on_first_call(cls, "__init__", ("__init__",), _init)
    hash_explicit = "__hash__" in own and not (own["__hash__"] is None and "__eq__" in own)
    compared = (("__eq__",) if "__eq__" not in own else ()) + (("__hash__",) if not hash_explicit else ())
    compared = compared if eq else ()
    for name in compared:
        methods[name] = _on_first_call(cls, name, compared, _comparisons)
    if order:
        methods.update((name, _on_first_call(cls, name, tuple(_ORDERINGS), _orderings)) for name in _ORDERINGS)
    if slots:
        methods.update(__getstate__=_getstate, __setstate__=_setstate)
    for name, method in methods.items():
        if name not in own:
            setattr(cls, name, method)
    return cls


@functools.cache
def _params(eq: bool, order: bool, slots: bool) -> Any:
    """What ``dataclass`` records of a frozen class with these flags (read by e.g. pricing's op keys)."""
    return getattr(dataclasses.dataclass(type("Params", (), {}), frozen=True, eq=eq, order=order, slots=slots),
                   "__dataclass_params__")


def _check_fields(cls: type, fields: tuple[dataclasses.Field[Any], ...]) -> None:
    """The field orders ``dataclass`` refuses (it checks only when it writes ``__init__``)."""
    pseudo = set(getattr(cls, "__dataclass_fields__")) - {f.name for f in fields}
    if any("InitVar" in str(cls.__annotations__.get(name, "")) for name in pseudo):
        raise TypeError(f"record {cls.__name__}: InitVar fields are not supported")
    defaulted = False
    for f in fields:
        if f.init and f.kw_only is True:
            raise TypeError(f"record {cls.__name__}: keyword-only field {f.name!r} is not supported")
        has_default = f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING
        if f.init and defaulted and not has_default:
            raise TypeError(f"non-default argument {f.name!r} follows default argument")
        defaulted = defaulted or (f.init and has_default)


def _on_first_call(cls: type, name: str, family: tuple[str, ...],
                   build: Callable[[type, tuple[str, ...]], _Methods]) -> Callable[..., Any]:
    """A stand-in for ``cls.<name>`` that makes ``family`` with ``build``, installs it and calls it."""

    def first_call(self: Any, *args: Any, **kwargs: Any) -> Any:
        made = build(cls, family)
        for made_name, method in made.items():
            setattr(cls, made_name, method)
        return made[name](self, *args, **kwargs)

    first_call.__name__ = name
    first_call.__qualname__ = f"{cls.__qualname__}.{name}"
    return first_call


def _compiled(cls: type, source: str, namespace: dict[str, Any]) -> _Methods:
    """The functions ``source`` defines, named as methods of ``cls``."""
    made: dict[str, Any] = {}
    exec(source, namespace, made)  # noqa: S102 - source text built above from field names only
    for name, method in made.items():
        method.__qualname__ = f"{cls.__qualname__}.{name}"
        method.__module__ = cls.__module__
    return made


def _init(cls: type, _family: tuple[str, ...]) -> _Methods:
    """``__init__`` as ``dataclass`` writes it for a frozen class."""
    namespace: dict[str, Any] = {"__r_set": object.__setattr__, "__r_factory": _FACTORY}
    params, lines = [], []
    for f in dataclasses.fields(cls):
        default, factory = f"__r_default_{f.name}", f"__r_factory_{f.name}"
        namespace[default], namespace[factory] = f.default, f.default_factory
        if f.default_factory is not dataclasses.MISSING:
            value = f"{factory}() if {f.name} is __r_factory else {f.name}" if f.init else f"{factory}()"
        else:
            value = f.name if f.init else (default if f.default is not dataclasses.MISSING else "")
        if f.init:
            params.append(f.name if f.default is f.default_factory is dataclasses.MISSING else
                          f"{f.name}={default if f.default_factory is dataclasses.MISSING else '__r_factory'}")
        if value:
            lines.append(f"    __r_set(self, {f.name!r}, {value})")
    if hasattr(cls, "__post_init__"):
        lines.append("    self.__post_init__()")
    body = "\n".join(lines) or "    pass"
    return _compiled(cls, f"def __init__(self, {', '.join(params)}):\n{body}\n", namespace)


def _comparisons(cls: type, family: tuple[str, ...]) -> _Methods:
    """``__eq__`` and ``__hash__`` as ``dataclass`` writes them for a frozen class (those in ``family``)."""
    fields = dataclasses.fields(cls)
    compared = "".join(f"self.{f.name}," for f in fields if f.compare)
    other = "".join(f"other.{f.name}," for f in fields if f.compare)
    hashed = "".join(f"self.{f.name}," for f in fields if (f.compare if f.hash is None else f.hash))
    source = {"__eq__": "def __eq__(self, other):\n    if other.__class__ is self.__class__:\n"
                        f"        return ({compared}) == ({other})\n    return NotImplemented\n",
              "__hash__": f"def __hash__(self):\n    return hash(({hashed}))\n"}
    return _compiled(cls, "".join(source[name] for name in family), {})


def _orderings(cls: type, family: tuple[str, ...]) -> _Methods:
    """``<``, ``<=``, ``>``, ``>=`` as ``dataclass(order=True)`` writes them: the compared fields as tuples."""
    fields = [f.name for f in dataclasses.fields(cls) if f.compare]
    mine, other = "".join(f"self.{name}," for name in fields), "".join(f"other.{name}," for name in fields)
    return _compiled(cls, "".join(
        f"def {name}(self, other):\n    if other.__class__ is self.__class__:\n"
        f"        return ({mine}) {_ORDERINGS[name]} ({other})\n    return NotImplemented\n" for name in family), {})


def _repr(fields: tuple[dataclasses.Field[Any], ...]) -> Callable[[Any], str]:
    names = tuple(f.name for f in fields if f.repr)

    def __repr__(self: Any) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in names)
        return f"{type(self).__qualname__}({shown})"

    return __repr__


def _frozen(self: Any, name: str, *_value: Any) -> None:
    raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")


def _getstate(self: Any) -> list[Any]:
    return [getattr(self, f.name) for f in dataclasses.fields(self)]


def _setstate(self: Any, state: list[Any]) -> None:
    for f, value in zip(dataclasses.fields(self), state):
        object.__setattr__(self, f.name, value)


__all__ = ["record"]
