"""Frozen records: dataclasses made without ``dataclass``'s class processing, their generated methods
made on first use.

``@record`` is ``@dataclass(frozen=True, slots=True)`` (``@record(eq=False)``, ``@record(slots=False)``
as the flags say) with the same fields, ``dataclasses.fields``/``replace``/``is_dataclass``, the same
``__init__``, ``__eq__`` and ``__hash__`` (the same bytecode, so the same speed and the same hash
values) and the same ``repr``. What differs is the cost of making a class (issue 26: start-up, a
3-op plan makes ~100 of them): ``dataclass`` compiles source text for six methods of every class
when its module loads (about 0.7 M instructions each), most of them for classes a run never builds
or compares, and finds its fields through regular-expression checks of every annotation. Here the
fields are read as ``dataclass`` reads them, minus the pseudo-fields records refuse (``ClassVar``,
``InitVar``, ``KW_ONLY``); ``__init__`` is made when the first instance is built, ``__eq__`` and
``__hash__`` when one is first compared or hashed, from source text compiled once per shape
(``npuplan.record_methods``); ``__repr__``, ``__setattr__``/``__delattr__`` (assigning a field raises
``FrozenInstanceError``) and pickling need no source text at all.
"""

from __future__ import annotations

import abc
import dataclasses
import functools
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar, overload

from npuplan.record_methods import ORDERINGS, comparisons, init, orderings

if TYPE_CHECKING:  # the checker targets Python 3.10, whose typing module lacks it
    from typing_extensions import dataclass_transform
elif sys.version_info >= (3, 11):
    from typing import dataclass_transform
else:  # pragma: no cover - exercised only on 3.10

    def dataclass_transform(**_kwargs: Any) -> Callable[[Any], Any]:
        return lambda f: f


_T = TypeVar("_T", bound=type)
_Methods = dict[str, Callable[..., Any]]
_FIELD = getattr(dataclasses, "_FIELD")  # what dataclasses.fields() keeps: a field, not a pseudo-field
_PSEUDO_FIELDS = frozenset({"ClassVar", "InitVar", "KW_ONLY"})


@overload
@dataclass_transform(frozen_default=True, field_specifiers=(dataclasses.field, dataclasses.Field))
def record(cls: _T, /) -> _T: ...


@overload
def record(*, eq: bool = True, order: bool = False, slots: bool = True, frozen: bool = True,
           ) -> Callable[[_T], _T]: ...


def record(cls: Any = None, /, *, eq: bool = True, order: bool = False, slots: bool = True, frozen: bool = True,
           ) -> Any:
    """A frozen dataclass (``eq``: compared and hashed by its fields; ``order``: ``<`` and the like,
    field by field, as ``dataclass(order=True)``; ``slots``: ``__slots__``). ``frozen=False`` (with
    ``eq=False``) makes the mutable, compared-by-identity records that code fills in field by field
    (the emitter's hand-off to its backend), as ``dataclass(eq=False)`` would."""
    if cls is None:
        return functools.partial(_make, eq=eq, order=order, slots=slots, frozen=frozen)
    return _make(cls, eq=eq, order=order, slots=slots, frozen=frozen)


def _make(cls: Any, *, eq: bool, order: bool, slots: bool, frozen: bool = True) -> Any:
    own = dict(cls.__dict__)
    if "__setattr__" in own or "__delattr__" in own:
        raise TypeError(f"record {cls.__name__} defines __setattr__ or __delattr__")
    if order and (not eq or any(name in own for name in ORDERINGS)):
        raise TypeError(f"record {cls.__name__}: order needs eq and no ordering method of its own")
    if eq and not frozen:
        raise TypeError(f"record {cls.__name__}: a mutable record compares by identity (eq=False)")
    if not own.get("__doc__"):
        cls.__doc__ = f"{cls.__name__}({', '.join(own.get('__annotations__', {}))})"
    fields = _fields(cls, frozen)
    _check_fields(cls, tuple(fields.values()))
    cls = _slotted(cls, fields) if slots else _unslotted(cls, fields)
    cls.__dataclass_params__ = _params(eq, order, slots, frozen)
    methods: _Methods = {"__repr__": _repr(tuple(fields.values()))}
    if frozen:
        methods.update(__setattr__=_frozen, __delattr__=_frozen)
    if "__init__" not in own:
        methods["__init__"] = _on_first_call(cls, "__init__", ("__init__",), init)
    hash_explicit = "__hash__" in own and not (own["__hash__"] is None and "__eq__" in own)
    compared = (("__eq__",) if "__eq__" not in own else ()) + (("__hash__",) if not hash_explicit else ())
    compared = compared if eq else ()
    for name in compared:
        methods[name] = _on_first_call(cls, name, compared, comparisons)
    if order:
        methods.update((name, _on_first_call(cls, name, tuple(ORDERINGS), orderings)) for name in ORDERINGS)
    if slots:
        methods.update(__getstate__=_getstate, __setstate__=_setstate)
    for name, method in methods.items():
        if name not in own:
            setattr(cls, name, method)
    abc.update_abstractmethods(cls)
    return cls


def _fields(cls: type, frozen: bool) -> dict[str, dataclasses.Field[Any]]:
    """``cls``'s fields, by name, as ``dataclass`` finds them: its dataclass bases' first, then one
    per annotation of its own body (``dataclasses.field(...)`` or a plain default as the value)."""
    fields: dict[str, dataclasses.Field[Any]] = {}
    for base in cls.__mro__[-1:0:-1]:
        inherited = getattr(base, "__dataclass_fields__", None)
        if inherited is not None:
            if base.__dataclass_params__.frozen != frozen:  # type: ignore[attr-defined]
                raise TypeError("cannot inherit frozen dataclass from a non-frozen one" if frozen else
                                "cannot inherit non-frozen dataclass from a frozen one")
            fields.update(inherited)
    annotations = cls.__dict__.get("__annotations__", {})
    for name, value in cls.__dict__.items():
        if isinstance(value, dataclasses.Field) and name not in annotations:
            raise TypeError(f"{name!r} is a field but has no type annotation")
    for name, annotation in annotations.items():
        if _pseudo_field(annotation if isinstance(annotation, str) else _written(annotation)):
            raise TypeError(f"record {cls.__name__}: ClassVar, InitVar and KW_ONLY fields are not supported")
        default = cls.__dict__.get(name, dataclasses.MISSING)
        f = default if isinstance(default, dataclasses.Field) else dataclasses.field(default=default)
        f.name, f.type, f._field_type = name, annotation, _FIELD  # type: ignore[union-attr]
        if f.kw_only is dataclasses.MISSING:
            f.kw_only = False
        if f.default.__class__.__hash__ is None:  # a list, dict or set: shared by every instance
            raise ValueError(f"mutable default {type(f.default)} for field {name} is not allowed: use default_factory")
        fields[name] = f
    return fields


def _pseudo_field(annotation: str) -> bool:
    """Whether an annotation, as written, names a pseudo-field (``ClassVar[int]``, ``typing.ClassVar``,
    ``dataclasses.InitVar[int]``, ``KW_ONLY``). String methods, not a regular expression: compiling
    one costs more than every record's check (~0.6 M instructions)."""
    return annotation.split("[", 1)[0].rsplit(".", 1)[-1].strip() in _PSEUDO_FIELDS


def _written(annotation: Any) -> str:
    """An annotation that is not a string (a module without postponed annotations), as written."""
    if annotation is dataclasses.KW_ONLY:
        return "KW_ONLY"
    return repr(annotation).removeprefix("<class '").removesuffix("'>")


def _slotted(cls: type, fields: dict[str, dataclasses.Field[Any]]) -> Any:
    """``cls`` remade with ``__slots__`` for its fields (those its bases have no slot for), as
    ``dataclass(slots=True)`` remakes it; defaults then live in the fields only."""
    body = dict(cls.__dict__)
    if "__slots__" in body:
        raise TypeError(f"{cls.__name__} already specifies __slots__")
    inherited: set[str] = set()
    for base in cls.__mro__[1:-1]:
        declared = base.__dict__.get("__slots__", ())
        inherited.update((declared,) if isinstance(declared, str) else declared)
    for name in (*fields, "__dict__", "__weakref__"):
        body.pop(name, None)
    body.update(__slots__=tuple(name for name in fields if name not in inherited), **_dataclass_attributes(body, fields))
    remade = type(cls)(cls.__name__, cls.__bases__, body)
    remade.__qualname__ = cls.__qualname__
    return remade


def _unslotted(cls: type, fields: dict[str, dataclasses.Field[Any]]) -> Any:
    """``cls`` as ``dataclass`` leaves a class without slots: a field's default as a class attribute."""
    for name in cls.__dict__.get("__annotations__", {}):
        if isinstance(cls.__dict__.get(name), dataclasses.Field):
            if fields[name].default is dataclasses.MISSING:
                delattr(cls, name)
            else:
                setattr(cls, name, fields[name].default)
    for name, value in _dataclass_attributes(dict(cls.__dict__), fields).items():
        setattr(cls, name, value)
    return cls


def _dataclass_attributes(body: dict[str, Any], fields: dict[str, dataclasses.Field[Any]]) -> dict[str, Any]:
    """The attributes ``dataclass`` gives every class: its fields and ``__match_args__``."""
    made: dict[str, Any] = {"__dataclass_fields__": fields}
    if "__match_args__" not in body:
        made["__match_args__"] = tuple(name for name, f in fields.items() if f.init)
    return made


@functools.cache
def _params(eq: bool, order: bool, slots: bool, frozen: bool) -> Any:
    """What ``dataclass`` records of a class with these flags (read by e.g. pricing's op keys): those
    of a bare dataclass, whose making compiles no method, set to the record's flags."""
    params = getattr(dataclasses.dataclass(type("Params", (), {"__doc__": "flags"}), init=False, repr=False, eq=False),
                     "__dataclass_params__")
    for name, value in (("init", True), ("repr", True), ("eq", eq), ("order", order), ("frozen", frozen),
                        ("slots", slots)):
        if hasattr(params, name):  # slots: Python 3.12 on
            setattr(params, name, value)
    return params


def _check_fields(cls: type, fields: tuple[dataclasses.Field[Any], ...]) -> None:
    """The field orders ``dataclass`` refuses (it checks only when it writes ``__init__``)."""
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
