"""npuplan.records: the same behaviour as a frozen dataclass, its methods made on first use."""

from __future__ import annotations

import copy
import dataclasses
import pickle
from dataclasses import field

import pytest

from npuplan.records import record


@record
class Point:
    """A point."""

    x: int
    y: int = 2
    tags: tuple[str, ...] = field(default_factory=tuple)
    note: str = field(default="", compare=False, repr=False)


@dataclasses.dataclass(frozen=True, slots=True)
class PointDataclass:
    x: int
    y: int = 2
    tags: tuple[str, ...] = field(default_factory=tuple)
    note: str = field(default="", compare=False, repr=False)


@record(eq=False)
class Identity:
    value: int


@record(slots=False)
class Checked:
    low: int
    high: int
    seen: list[int] = field(init=False, default_factory=list, compare=False)

    def __post_init__(self) -> None:
        if self.low > self.high:
            raise ValueError("low > high")


def test_the_same_values_as_a_frozen_dataclass() -> None:
    for args, kwargs in (((1,), {}), ((1, 5), {}), ((1,), {"tags": ("a",), "note": "n"})):
        mine, theirs = Point(*args, **kwargs), PointDataclass(*args, **kwargs)
        assert dataclasses.astuple(mine) == dataclasses.astuple(theirs)
        assert hash(mine) == hash(theirs)
        assert repr(mine) == repr(theirs).replace("PointDataclass", "Point")
    assert Point(1, note="a") == Point(1, note="b") and Point(1) != Point(2)
    assert Point(1).__eq__(PointDataclass(1)) is NotImplemented
    assert Point.__doc__ == "A point."


def test_methods_are_made_on_first_use() -> None:
    @record
    class Fresh:
        a: int

    stand_ins = {name: Fresh.__dict__[name] for name in ("__init__", "__eq__", "__hash__")}
    fresh = Fresh(1)
    assert Fresh.__dict__["__init__"] is not stand_ins["__init__"]
    assert Fresh.__dict__["__eq__"] is stand_ins["__eq__"]
    assert hash(fresh) == hash((1,))
    assert Fresh.__dict__["__eq__"] is not stand_ins["__eq__"]  # made with __hash__
    assert Fresh.__init__.__qualname__.endswith("Fresh.__init__")


def test_frozen_and_dataclass_api() -> None:
    point = Point(1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        point.x = 3  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        del point.x  # type: ignore[misc]
    assert dataclasses.replace(point, y=7) == Point(1, 7)
    assert [f.name for f in dataclasses.fields(Point)] == ["x", "y", "tags", "note"]
    assert Point.__dataclass_params__.frozen and Point.__dataclass_params__.eq  # type: ignore[attr-defined]
    assert repr(Point.__dataclass_params__) == repr(PointDataclass.__dataclass_params__)  # type: ignore[attr-defined]
    assert pickle.loads(pickle.dumps(point)) == point and copy.deepcopy(point) == point
    assert "__slots__" in Point.__dict__ and "__slots__" not in Checked.__dict__


def test_identity_records_and_post_init() -> None:
    assert Identity.__eq__ is object.__eq__ and Identity.__hash__ is object.__hash__
    assert not Identity.__dataclass_params__.eq  # type: ignore[attr-defined]
    assert Identity(1) != Identity(1)
    checked = Checked(1, 2)
    assert checked.seen == [] and checked == Checked(1, 2)
    with pytest.raises(ValueError):
        Checked(3, 2)
    with pytest.raises(TypeError):
        Checked(1, 2, [])  # type: ignore[call-arg]


def test_refuses_what_dataclass_refuses() -> None:
    with pytest.raises(TypeError, match="follows default"):
        @record
        class Bad:
            a: int = 0
            b: int  # type: ignore[misc]

    with pytest.raises(TypeError, match="__setattr__"):
        @record
        class Settable:
            a: int

            def __setattr__(self, name: str, value: object) -> None: ...


def test_order_as_dataclass_order() -> None:
    @record(order=True)
    class Pair:
        a: int
        b: int

    pairs = [Pair(2, 1), Pair(1, 3), Pair(1, 2)]
    assert sorted(pairs) == [Pair(1, 2), Pair(1, 3), Pair(2, 1)]
    assert Pair(1, 2) <= Pair(1, 2) < Pair(1, 3) and Pair(2, 0) > Pair(1, 9) >= Pair(1, 9)
    assert Pair.__lt__(Pair(1, 2), (1, 3)) is NotImplemented
    assert Pair.__dataclass_params__.order  # type: ignore[attr-defined]
    with pytest.raises(TypeError, match="order"):
        record(order=True, eq=False)(type("Unordered", (), {"__annotations__": {"a": "int"}}))


def test_classes_of_one_shape_share_a_template_under_their_own_names() -> None:
    @record
    class Left:
        a: int
        b: tuple[int, ...] = ()

    @record
    class Right:
        width: int
        tags: tuple[int, ...] = (7,)

    assert Left(1) == Left(a=1, b=()) and Right(width=2).tags == (7,) and Right(2, (3,)).tags == (3,)
    assert Left(1).__eq__(Right(1)) is NotImplemented and hash(Right(2)) == hash((2, (7,)))
    assert Left.__init__.__code__.co_code == Right.__init__.__code__.co_code  # one shape, compiled once
    assert Right.__init__.__code__.co_varnames[:3] == ("self", "width", "tags")
    with pytest.raises(TypeError, match="width"):
        Right()  # type: ignore[call-arg]


def test_fields_as_dataclass_finds_them() -> None:
    @record
    class Base:
        a: int

    @record
    class Child(Base):
        b: int = 3

    child = Child(1)
    assert [f.name for f in dataclasses.fields(Child)] == ["a", "b"] and (child.a, child.b) == (1, 3)
    assert Child.__slots__ == ("b",) and Child.__match_args__ == ("a", "b")  # type: ignore[attr-defined]
    assert dataclasses.asdict(child) == {"a": 1, "b": 3} and dataclasses.replace(child, b=4) == Child(1, 4)

    @record(slots=False)
    class Open:
        a: int = 1
        b: int = field(default=2, compare=False)
        c: list[int] = field(default_factory=list)

    assert (Open.a, Open.b, "c" in Open.__dict__) == (1, 2, False)  # as dataclass leaves a class without slots


def test_refuses_pseudo_fields_and_mutable_defaults() -> None:
    with pytest.raises(TypeError, match="ClassVar"):
        @record
        class Counted:
            count: ClassVar[int] = 0  # noqa: F821 - the annotation is a string, never evaluated

    with pytest.raises(ValueError, match="mutable default"):
        @record
        class Shared:
            items: list[int] = []  # noqa: RUF012 - the mistake refused

    with pytest.raises(TypeError, match="no type annotation"):
        record(type("Unannotated", (), {"__annotations__": {}, "a": field(default=1)}))


def test_mutable_records_as_dataclass_eq_false() -> None:
    @record(eq=False, frozen=False, slots=False)
    class Operation:
        kind: str
        weights: list[int] = field(default_factory=list)
        name: str | None = None

    @record(eq=False, frozen=False, slots=False)
    class Pooling(Operation):
        kind: str = "pool"
        rescale: float | None = None

    pool = Pooling()
    pool.name, pool.extra = "p", 1  # type: ignore[attr-defined]  # a __dict__, as the dataclass has
    assert (pool.kind, pool.weights, pool.name, pool.rescale) == ("pool", [], "p", None)
    assert [f.name for f in dataclasses.fields(Pooling)] == ["kind", "weights", "name", "rescale"]
    assert pool != Pooling() and pool == pool and not Pooling.__dataclass_params__.frozen  # type: ignore[attr-defined]
    assert repr(Operation("conv")) == "test_mutable_records_as_dataclass_eq_false.<locals>.Operation(kind='conv', weights=[], name=None)"
    with pytest.raises(TypeError, match="identity"):
        record(frozen=False)(type("Compared", (), {"__annotations__": {"a": "int"}}))
    with pytest.raises(TypeError, match="non-frozen"):
        @record(eq=False, frozen=False)
        class Thawed(Point):
            z: int = 0
