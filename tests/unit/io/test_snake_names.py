"""io.tflite's snake-case keys of the schema's option fields: the rule the regular expression
``(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])`` states, written by hand."""

import importlib
import importlib.util
import pkgutil
import random
import re

from npuplan.io.tflite import _snake

_RULE = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


def _expected(name: str) -> str:
    return _RULE.sub("_", name).lower()


def test_the_schema_s_accessors_as_the_rule_cuts_them() -> None:
    names = set()
    spec = importlib.util.find_spec("tflite")
    assert spec is not None and spec.submodule_search_locations is not None
    for module in pkgutil.iter_modules(spec.submodule_search_locations):
        if module.name.endswith("Options"):
            cls = getattr(importlib.import_module(f"tflite.{module.name}"), module.name, None)
            names.update(n for n in dir(cls) if n[:1].isupper())
    assert len(names) > 100
    assert [_snake(n) for n in sorted(names)] == [_expected(n) for n in sorted(names)]
    assert _snake("FusedActivationFunction") == "fused_activation_function" and _snake("ABCDef") == "abc_def"


def test_random_names_as_the_rule_cuts_them() -> None:
    rng = random.Random(26)
    for _ in range(2000):
        name = "".join(rng.choice("aZ0bY_Ä") for _ in range(rng.randrange(0, 9)))
        assert _snake(name) == _expected(name), name
